/* SPDX-License-Identifier: MIT */
/*
 * Client facts from /proc, read here or asked of the /proc helper: one
 * request and one answer per query on a SOCK_SEQPACKET socket pair, under
 * a lock, since worker threads ask at once. The helper only ever reads
 * /proc/PID/exe and /proc/PID/fd of the pid it is given.
 *
 * Reading a client's /proc can block (its program on a stalled file
 * system: the helper waits in state D). So each question has a deadline;
 * one that misses it is "unknown" to its caller, and until the helper's
 * late answer comes (told apart by its number), the other questions are
 * "unknown" at once instead of queueing behind it.
 */
#define G_LOG_DOMAIN "cusemu-proc"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "cusemu/device.h"
#include "proc.h"

enum proc_op {
	PROC_SEAL,
	PROC_ELF_CLASS,
	PROC_FD_OF,
};

struct proc_request {
	uint32_t op;
	int32_t pid;
	uint32_t arg;
	uint32_t seq;		/* echoed in the answer */
	/*
	 * PROC_FD_OF: a node or a file of a FUSE mount, any path the kernel
	 * gives; sent up to its NUL, the other ops without it.
	 */
	char path[PATH_MAX];
};

/* The bytes of rq that are sent: the path only as long as it is. */
#define PROC_REQUEST_HEAD offsetof(struct proc_request, path)

struct proc_answer {
	uint32_t seq;
	int32_t value;		/* the result, or -errno */
};

/* How long a caller waits for the helper before "unknown". */
#define PROC_DEADLINE_MS 500

/* The /proc helper of this process, which every worker asks: one, as the
 * sandbox forks one before it closes /proc. */
static struct {
	int sock;
	GMutex lock;	/* guards the socket and the two below */
	uint32_t seq;
	bool stalled;	/* an answer is late: ask nothing now */
} helper = { .sock = -1 };

static int read_elf_class(pid_t pid)
{
	unsigned char ident[EI_NIDENT];
	char path[32];
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, ident, sizeof(ident));
	close(fd);
	if (n != (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	return ident[EI_CLASS];
}

static int read_fd_of(pid_t pid, const char *path)
{
	char dir[32], target[PATH_MAX];
	struct dirent *entry;
	int found = -ENOENT;
	DIR *d;

	if (pid <= 0)
		return -EINVAL;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while (found < 0 && (entry = readdir(d))) {
		ssize_t n;

		if (entry->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), entry->d_name, target,
			       sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, path))
			found = atoi(entry->d_name);
	}
	closedir(d);
	return found;
}

/*
 * The answer numbered seq, waiting until deadline (monotonic µs); a late
 * answer to an earlier question is dropped. -ETIMEDOUT past the deadline,
 * -EIO when the helper is gone.
 */
static int receive(uint32_t seq, gint64 deadline, int32_t *value)
{
	struct proc_answer a;

	for (;;) {
		gint64 left = deadline - g_get_monotonic_time();
		struct pollfd p = { .fd = helper.sock, .events = POLLIN };
		ssize_t n;
		int r;

		if (left < 0)
			left = 0;
		r = poll(&p, 1, (int)((left + 999) / 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -EIO;
		if (r == 0)
			return -ETIMEDOUT;
		n = recv(helper.sock, &a, sizeof(a), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n != (ssize_t)sizeof(a))
			return -EIO;
		if (a.seq == seq) {
			*value = a.value;
			return 0;
		}
		/* An answer whose asker stopped waiting. */
	}
}

/* One query to the helper; -EIO once it is gone (never /proc here). */
static int ask(struct proc_request *rq, int deadline_ms)
{
	size_t len = PROC_REQUEST_HEAD +
		     (rq->op == PROC_FD_OF ? strlen(rq->path) + 1 : 0);
	int32_t answer = -EIO;
	int err;

	g_mutex_lock(&helper.lock);
	if (helper.stalled) {
		/* The late answer may be in by now: then the helper is back. */
		err = receive(helper.seq, g_get_monotonic_time(), &answer);
		if (err == -ETIMEDOUT) {
			g_mutex_unlock(&helper.lock);
			return -EAGAIN;
		}
		helper.stalled = false;
	}
	rq->seq = ++helper.seq;
	if (send(helper.sock, rq, len, MSG_NOSIGNAL) != (ssize_t)len) {
		g_mutex_unlock(&helper.lock);
		return -EIO;
	}
	err = receive(rq->seq, deadline_ms < 0 ? G_MAXINT64
					      : g_get_monotonic_time() +
						deadline_ms * G_TIME_SPAN_MILLISECOND,
		      &answer);
	if (err == -ETIMEDOUT) {
		helper.stalled = true;
		g_message("/proc helper: no answer about pid %d within %d ms "
			  "(a stalled file system?); taken as unknown",
			  (int)rq->pid, deadline_ms);
	}
	g_mutex_unlock(&helper.lock);
	return err ? err : answer;
}

int cusemu_proc_elf_class(pid_t pid)
{
	struct proc_request rq = { .op = PROC_ELF_CLASS, .pid = pid };

	if (helper.sock < 0)
		return read_elf_class(pid);
	return ask(&rq, PROC_DEADLINE_MS);
}

int cusemu_proc_fd_of(pid_t pid, const char *path)
{
	struct proc_request rq = { .op = PROC_FD_OF, .pid = pid };

	if (helper.sock < 0)
		return read_fd_of(pid, path);
	if (strlen(path) >= sizeof(rq.path))
		return -ENAMETOOLONG;
	strcpy(rq.path, path);
	return ask(&rq, PROC_DEADLINE_MS);
}

int cusemu_proc_comm(pid_t pid, char *buf, size_t size)
{
	char path[32];
	ssize_t n;
	int fd;

	if (pid <= 0 || size < 2)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	if (buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return (int)n;
}

int64_t cusemu_proc_thread_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[96];
	ssize_t n;
	int fd;

	if (pid <= 0 || tid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || !g_ascii_isdigit(buf[0]))
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	return (int64_t)MIN(g_ascii_strtoull(buf, NULL, 10),
			    (guint64)G_MAXINT64);
}

void cusemu_proc_use_helper(int sock)
{
	helper.sock = sock;
}

int cusemu_proc_seal(uint32_t arg)
{
	if (helper.sock < 0)
		return -ENOTCONN;
	struct proc_request rq = { .op = PROC_SEAL, .arg = arg };

	/* Sealing waits as long as it takes: it is no client's question. */
	return ask(&rq, -1);
}

void cusemu_proc_serve(int sock, int (*seal)(uint32_t arg))
{
	struct proc_request rq;
	struct proc_answer out;
	int32_t answer;
	ssize_t n;

	for (;;) {
		n = recv(sock, &rq, sizeof(rq), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);	/* the daemon is gone */
		if (n < (ssize_t)PROC_REQUEST_HEAD) {
			answer = -EINVAL;
		} else if (rq.op == PROC_SEAL) {
			answer = seal(rq.arg);
		} else if (rq.op == PROC_ELF_CLASS) {
			answer = read_elf_class(rq.pid);
		} else if (rq.op == PROC_FD_OF) {
			/* A path, NUL and all, or nothing. */
			if (n == (ssize_t)PROC_REQUEST_HEAD ||
			    rq.path[n - PROC_REQUEST_HEAD - 1] != '\0')
				answer = -EINVAL;
			else
				answer = read_fd_of(rq.pid, rq.path);
		} else {
			answer = -EINVAL;
		}
		out = (struct proc_answer){ .seq = rq.seq, .value = answer };
		if (send(sock, &out, sizeof(out), MSG_NOSIGNAL) < 0)
			_exit(0);
	}
}
