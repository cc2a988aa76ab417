/* SPDX-License-Identifier: MIT */
/*
 * What both ends of the model host's sockets do alike (proto.h): messages
 * with descriptors, a channel's state word, and a call's ranges of user
 * memory in shared memory.
 */
#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

ssize_t host_recv_fds(int sock, void *buf, size_t len, int *fds, int n_fds,
		      int flags)
{
	char control[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control,
			      .msg_controllen = sizeof(control) };
	struct cmsghdr *c;
	ssize_t got;

	for (int i = 0; i < n_fds; i++)
		fds[i] = -1;
	do
		got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags);
	while (got < 0 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&msg); got >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (int i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (i < n_fds)
				fds[i] = fd;
			else
				close(fd);
		}
	}
	return got;
}

bool host_send_fds(int sock, const void *buf, size_t len, const int *fds,
		   int n_fds)
{
	char control[CMSG_SPACE(sizeof(int) * 2)] = { 0 };
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (n_fds > 2)
		return false;
	if (n_fds) {
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

/*
 * Not FUTEX_PRIVATE_FLAG: the word is in a MAP_SHARED mapping of a memfd
 * that two processes map, each at its own address; a shared futex is keyed
 * by the page and offset, so a wake reaches the other process's waiter.
 */
static void futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void futex_wait(uint32_t *word, uint32_t val, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	syscall(SYS_futex, word, FUTEX_WAIT, val, ms < 0 ? NULL : &ts, NULL,
		0);
}

uint64_t host_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

uint32_t host_chan_post(uint32_t *word, uint32_t state)
{
	uint32_t old = __atomic_exchange_n(word, state, __ATOMIC_SEQ_CST);

	if (old & HOST_CHAN_WAITS)
		futex_wake(word);
	return old;
}

bool host_chan_move(uint32_t *word, uint32_t from, uint32_t state)
{
	if (!__atomic_compare_exchange_n(word, &from, state, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return false;
	if (from & HOST_CHAN_WAITS)
		futex_wake(word);
	return true;
}

void host_chan_wake(uint32_t *word)
{
	futex_wake(word);
}

bool host_chan_take(uint32_t *word, uint32_t from, uint32_t state)
{
	state |= from & HOST_CHAN_DAEMON_WAITS;
	return __atomic_compare_exchange_n(word, &from, state, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* In a state of set: a word whose state is past 31 is in none. */
static bool in(uint32_t word, uint32_t set)
{
	uint32_t state = HOST_CHAN_STATE(word);

	return state < 32 && (set & HOST_CHAN_BIT(state));
}

/* Spun for nothing: the next waits sleep at once. */
static void spin_failed(struct host_spin *spin)
{
	if (!spin)
		return;
	spin->backoff = spin->backoff ? MIN(spin->backoff * 2, 64) : 1;
	spin->skip = spin->backoff;
}

uint32_t host_chan_wait(uint32_t *word, uint32_t want, uint32_t spin_in,
			uint64_t spin_ns, uint32_t mine, int ms,
			struct host_spin *spin)
{
	uint32_t v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
	uint64_t end;

	/* A word in no state at all: the caller sees it at once. */
	if (in(v, want) || !HOST_CHAN_VALID(v))
		return v;
	if (spin && spin->skip) {
		spin->skip--;
		spin_ns = 0;
	}
	/* The other side runs: its answer may come sooner than a sleep and
	 * a wake-up would take. The clock is read every 16 turns. */
	if (spin_ns && in(v, spin_in)) {
		end = host_now_ns() + spin_ns;
		for (unsigned int i = 1;; i++) {
			cpu_relax();
			v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
			if (in(v, want)) {
				if (spin)
					spin->backoff = 0;
				return v;
			}
			if (!in(v, spin_in) || !HOST_CHAN_VALID(v))
				return v;
			if (!(i % 16) && host_now_ns() >= end) {
				spin_failed(spin);
				break;
			}
		}
	}
	if (!(v & mine) &&
	    !__atomic_compare_exchange_n(word, &v, v | mine, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return v;	/* it changed meanwhile: the caller looks */
	futex_wait(word, v | mine, ms);
	return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

void host_ranges_put(struct host_range *to,
		     const struct cusemu_user_ranges *from)
{
	for (unsigned int i = 0; i < from->count; i++)
		to[i] = (struct host_range){ from->r[i].addr, from->r[i].len,
					     from->r[i].off };
}

void host_ranges_get(struct cusemu_user_ranges *to,
		     const struct host_range *from, unsigned int count)
{
	to->count = count;
	for (unsigned int i = 0; i < count; i++)
		to->r[i] = (struct cusemu_user_range){ from[i].addr,
						       from[i].len,
						       from[i].off };
}
