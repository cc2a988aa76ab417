/* SPDX-License-Identifier: MIT */
/*
 * Client facts from /proc, read here or asked of the /proc helper: one
 * request and one answer per query on a SOCK_SEQPACKET socket pair, under
 * a lock, since worker threads ask at once. The helper only ever reads
 * /proc/PID/exe and /proc/PID/fd of the pid it is given, and, where the
 * daemon allowed it before its sandbox (a root daemon over FUSE), the
 * memory of a process while one of its threads is blocked in an ioctl on
 * the daemon's mount.
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
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "cusemu/device.h"
#include "proc.h"
#include "request.h"

enum proc_op {
	PROC_SEAL,
	PROC_ELF_CLASS,
	PROC_FD_OF,
	PROC_ALLOW_REACH,
	PROC_VM_READ,
	PROC_VM_WRITE,
};

/* The most of a caller's memory one query moves, in how many ranges. */
#define PROC_VM_CHUNK (16 * 1024)
#define PROC_VM_RANGES 64

/* One range of a caller's memory. */
struct proc_range {
	uint64_t addr;
	uint64_t len;
};

struct proc_request {
	uint32_t op;
	int32_t pid;
	uint32_t arg;		/* PROC_SEAL's; PROC_VM_*: the bytes in all */
	uint32_t seq;		/* echoed in the answer */
	uint64_t addr;		/* PROC_ALLOW_REACH: the device */
	uint32_t ranges;	/* PROC_VM_*: how many */
	uint32_t unused;
	/*
	 * PROC_FD_OF: a node or a file of a FUSE mount, any path the kernel
	 * gives; sent up to its NUL. PROC_VM_*: the ranges (struct
	 * proc_range), and for PROC_VM_WRITE arg bytes of data after them.
	 * The other ops send neither.
	 */
	char path[PATH_MAX];
};

G_STATIC_ASSERT(PROC_VM_RANGES * sizeof(struct proc_range) <= PATH_MAX);

/* The bytes of rq that are sent before the path or the data. */
#define PROC_REQUEST_HEAD offsetof(struct proc_request, path)

struct proc_answer {
	uint32_t seq;
	int32_t value;		/* the result, or -errno */
	/* PROC_VM_READ, on success: the bytes read follow. */
};

/* How long a caller waits for the helper before "unknown": long enough
 * for a helper that a loaded machine (a guest on TCG beside other work)
 * runs late, short enough that a stalled file system costs one caller
 * this once, not every caller (the next ones are "unknown" at once). */
#define PROC_DEADLINE_MS 2000

/* The /proc helper of this process, which every worker asks: one, as the
 * sandbox forks one before it closes /proc. */
static struct {
	int sock;
	GMutex lock;	/* guards the socket and the two below */
	uint32_t seq;
	bool stalled;	/* an answer is late: ask nothing now */
	bool reaches;	/* PROC_ALLOW_REACH was granted */
} helper = { .sock = -1 };

/* The helper's own side: what the daemon let it reach before the seal. */
static struct {
	bool sealed;
	bool allowed;
	dev_t dev;
} serving;

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
static int receive(uint32_t seq, gint64 deadline, int32_t *value,
		   void *data, size_t len)
{
	struct proc_answer a;
	struct iovec iov[2] = { { &a, sizeof(a) }, { data, len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = data ? 2 : 1 };

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
		n = recvmsg(helper.sock, &msg, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(a))
			return -EIO;
		if (a.seq == seq) {
			/* Data comes whole, with a success, or not at all. */
			if (data && a.value == 0 &&
			    n != (ssize_t)(sizeof(a) + len))
				return -EIO;
			*value = a.value;
			return 0;
		}
		/* An answer whose asker stopped waiting. */
	}
}

/*
 * One query to the helper, with PROC_VM_WRITE's bytes from wdata, and
 * PROC_VM_READ's from its answer into rdata; -EIO once it is gone (never
 * /proc here).
 */
static int ask_data(struct proc_request *rq, int deadline_ms, void *rdata,
		    const void *wdata)
{
	struct iovec iov[2] = {
		{ rq, PROC_REQUEST_HEAD +
			      (rq->op == PROC_FD_OF
				       ? strlen(rq->path) + 1
				       : rq->ranges * sizeof(struct proc_range)) },
		{ (void *)wdata, wdata ? rq->arg : 0 },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t len = iov[0].iov_len + iov[1].iov_len;
	int32_t answer = -EIO;
	int err;

	g_mutex_lock(&helper.lock);
	if (helper.stalled) {
		/* The late answer may be in by now: then the helper is back. */
		err = receive(helper.seq, g_get_monotonic_time(), &answer,
			      NULL, 0);
		if (err == -ETIMEDOUT) {
			g_mutex_unlock(&helper.lock);
			return -EAGAIN;
		}
		helper.stalled = false;
	}
	rq->seq = ++helper.seq;
	if (sendmsg(helper.sock, &msg, MSG_NOSIGNAL) != (ssize_t)len) {
		g_mutex_unlock(&helper.lock);
		return -EIO;
	}
	err = receive(rq->seq, deadline_ms < 0 ? G_MAXINT64
					      : g_get_monotonic_time() +
						deadline_ms * G_TIME_SPAN_MILLISECOND,
		      &answer, rdata, rdata ? rq->arg : 0);
	if (err == -ETIMEDOUT) {
		helper.stalled = true;
		g_message("/proc helper: no answer about pid %d within %d ms "
			  "(a stalled file system?); taken as unknown",
			  (int)rq->pid, deadline_ms);
	}
	g_mutex_unlock(&helper.lock);
	return err ? err : answer;
}

static int ask(struct proc_request *rq, int deadline_ms)
{
	return ask_data(rq, deadline_ms, NULL, NULL);
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

int cusemu_proc_state(pid_t pid)
{
	char path[32], buf[512];
	const char *end;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	/* "PID (COMM) S ...": the name may hold any byte, ')' too. */
	end = strrchr(buf, ')');
	if (!end || end[1] != ' ' || !end[2])
		return -ENODATA;
	return (unsigned char)end[2];
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

int cusemu_proc_allow_reach(dev_t dev)
{
	struct proc_request rq = { .op = PROC_ALLOW_REACH, .addr = dev };
	int err;

	if (helper.sock < 0)
		return -ENOTCONN;
	err = ask(&rq, -1);
	helper.reaches = !err;
	return err;
}

bool cusemu_proc_reaches(void)
{
	return helper.reaches;
}

int cusemu_proc_reach(pid_t tid, const struct iovec *remote,
		      unsigned int count, void *buf, size_t len, bool write)
{
	struct proc_request *rq;
	unsigned int i = 0;
	size_t off = 0;		/* into remote[i] */
	int err = 0;

	if (!helper.reaches)
		return -EPERM;
	/*
	 * The helper first checks that the caller waits in an ioctl on the
	 * daemon's mount, with a stat() of its file there: a request of that
	 * mount, which a worker must read while this one waits. Without
	 * this, when this worker was the mount's only reader, the helper
	 * waited for it, and it for the helper, until the deadline.
	 */
	cusemu_request_will_wait();
	rq = g_new(struct proc_request, 1);
	/* As many ranges, or parts of one, as a query takes, in turn. */
	for (size_t done = 0; !err && done < len;) {
		struct proc_range *r = (struct proc_range *)rq->path;
		uint8_t *at = (uint8_t *)buf + done;
		size_t n = 0;

		*rq = (struct proc_request){
			.op = write ? PROC_VM_WRITE : PROC_VM_READ,
			.pid = tid,
		};
		while (done + n < len && n < PROC_VM_CHUNK && i < count &&
		       rq->ranges < PROC_VM_RANGES) {
			size_t part = MIN(MIN(remote[i].iov_len - off,
					      PROC_VM_CHUNK - n),
					  len - done - n);

			r[rq->ranges++] = (struct proc_range){
				(uint64_t)(uintptr_t)remote[i].iov_base + off,
				part
			};
			n += part;
			off += part;
			if (off == remote[i].iov_len) {
				i++;
				off = 0;
			}
		}
		if (!n)
			break;	/* the ranges hold less than len */
		rq->arg = (uint32_t)n;
		err = ask_data(rq, PROC_DEADLINE_MS, write ? NULL : at,
			       write ? at : NULL);
		done += n;
	}
	g_free(rq);
	return err;
}

int cusemu_proc_vm(pid_t pid, void *buf, size_t len,
		   const struct iovec *remote, unsigned int count, bool write)
{
	struct iovec local = { buf, len };
	ssize_t n;

	if (!len)
		return 0;
	n = write ? process_vm_writev(pid, &local, 1, remote, count, 0)
		  : process_vm_readv(pid, &local, 1, remote, count, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 && errno != EFAULT && errno != ENOMEM ? -errno : -EFAULT;
}

/*
 * /proc/TID/syscall into text: "NR 0xARG..." while the thread waits in a
 * system call. Right after its request reaches the daemon the caller may
 * not have gone to sleep yet ("running"): asked again, every 50 us, for
 * up to 20 ms. Its length, or -1.
 */
static ssize_t read_syscall(pid_t tid, char *text, size_t size)
{
	const struct timespec pause = { .tv_nsec = 50 * 1000 };
	char path[64];
	ssize_t n = -1;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	for (int tries = 0; tries < 400; tries++) {
		int f = open(path, O_RDONLY | O_CLOEXEC);

		if (f < 0)
			return -1;
		n = read(f, text, size - 1);
		close(f);
		if (n <= 0)
			return -1;
		text[n] = '\0';
		if (strncmp(text, "running", strlen("running")))
			return n;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, NULL);
	}
	return n;
}

/*
 * Whether thread tid is blocked in ioctl(2) (x86-64's 16, or i386's 54)
 * on a file of the device the daemon named: its caller's call, pending
 * on the daemon's mount. 0, or -EPERM.
 */
static int blocked_in_ioctl(pid_t tid)
{
	char path[64], text[256];
	unsigned long fd;
	struct stat st;
	long nr;

	if (tid <= 0 || read_syscall(tid, text, sizeof(text)) <= 0)
		return -EPERM;
	if (sscanf(text, "%ld 0x%lx", &nr, &fd) != 2 || (nr != 16 && nr != 54))
		return -EPERM;
	snprintf(path, sizeof(path), "/proc/%d/fd/%lu", (int)tid, fd);
	if (stat(path, &st) || st.st_dev != serving.dev)
		return -EPERM;
	return 0;
}

/* The helper's side of PROC_VM_*: the caller's memory at the request's
 * ranges, into or from buf. */
static int vm_access(const struct proc_request *rq, uint8_t *buf, bool write)
{
	const struct proc_range *r = (const struct proc_range *)rq->path;
	struct iovec remote[PROC_VM_RANGES];
	uint64_t total = 0;

	if (!serving.allowed || rq->ranges > PROC_VM_RANGES ||
	    rq->arg > PROC_VM_CHUNK)
		return -EPERM;
	for (uint32_t i = 0; i < rq->ranges; i++) {
		remote[i] = (struct iovec){ (void *)(uintptr_t)r[i].addr,
					    r[i].len };
		total += r[i].len;
	}
	if (total != rq->arg)
		return -EINVAL;
	if (blocked_in_ioctl(rq->pid))
		return -EPERM;
	return cusemu_proc_vm(rq->pid, buf, rq->arg, remote, rq->ranges, write);
}

void cusemu_proc_serve(int sock, int (*seal)(uint32_t arg))
{
	/* A request, or a head and PROC_VM_WRITE's data. */
	static union {
		struct proc_request rq;
		uint8_t raw[PROC_REQUEST_HEAD +
			    PROC_VM_RANGES * sizeof(struct proc_range) +
			    PROC_VM_CHUNK];
	} in;
	struct proc_request *const rq = &in.rq;
	static uint8_t data[PROC_VM_CHUNK];
	struct proc_answer out;
	struct iovec iov[2] = { { &out, sizeof(out) }, { data, 0 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	int32_t answer;
	ssize_t n;

	for (;;) {
		iov[1].iov_len = 0;
		n = recv(sock, &in, sizeof(in), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);	/* the daemon is gone */
		if (n < (ssize_t)PROC_REQUEST_HEAD) {
			answer = -EINVAL;
		} else if (rq->op == PROC_SEAL) {
			answer = seal(rq->arg);
			serving.sealed = serving.sealed || !answer;
		} else if (rq->op == PROC_ALLOW_REACH) {
			/* Only the daemon before its sandbox may say. */
			answer = serving.sealed ? -EPERM : 0;
			if (!answer) {
				serving.allowed = true;
				serving.dev = (dev_t)rq->addr;
			}
		} else if (rq->op == PROC_VM_READ || rq->op == PROC_VM_WRITE) {
			bool write = rq->op == PROC_VM_WRITE;
			/* The ranges, then what is written. */
			size_t head = PROC_REQUEST_HEAD +
				      MIN(rq->ranges, (uint32_t)PROC_VM_RANGES) *
					      sizeof(struct proc_range);

			answer = n == (ssize_t)(head + (write ? rq->arg : 0))
					 ? vm_access(rq, write ? in.raw + head : data,
						     write)
					 : -EINVAL;
			if (!answer && !write)
				iov[1].iov_len = rq->arg;
		} else if (rq->op == PROC_ELF_CLASS) {
			answer = read_elf_class(rq->pid);
		} else if (rq->op == PROC_FD_OF) {
			/* A path, NUL and all, or nothing. */
			if (n == (ssize_t)PROC_REQUEST_HEAD ||
			    n > (ssize_t)sizeof(*rq) ||
			    rq->path[n - PROC_REQUEST_HEAD - 1] != '\0')
				answer = -EINVAL;
			else
				answer = read_fd_of(rq->pid, rq->path);
		} else {
			answer = -EINVAL;
		}
		out = (struct proc_answer){ .seq = rq->seq, .value = answer };
		if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
			_exit(0);
	}
}
