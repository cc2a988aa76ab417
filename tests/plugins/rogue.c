/* SPDX-License-Identifier: MIT */
/*
 * rogue: a model whose commands do what no model host may let reach the
 * daemon (a NULL dereference, a double free, a corrupted heap, a spin, a
 * deadlock, a wait never woken, exit(), a leak, fork(), a stack
 * overflow, garbage over its host's call channels, a truncated channel,
 * an open of what a host must not reach, a library named by a path that is
 * no file), beside ordinary ones (an _IOR size, an _IOWR, read, write and
 * poll) and ones the daemon reports without ending the host (an _IOR that
 * writes nothing, a long wait). Loaded as a plugin by the model host
 * tests.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cusemu/plugin.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"
#include "rogue.h"

struct rogue {
	GMutex lock;
	GCond never;
	uint64_t size;
	size_t written;
};

/* The bugs are the point: not for the sanitizers to stop first. */
#define BUG __attribute__((noinline, no_sanitize("undefined", "address")))

static long rogue_get_size(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	struct rogue *r = dev->priv;
	__u64 size = r->size;

	return cusemu_copy_to_user(arg, &size, sizeof(size)) ? -EFAULT : 0;
}

static long rogue_pair(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct rogue_pair p;

	if (cusemu_copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	p.out = p.in * 2 + 1;
	return cusemu_copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

BUG static int rogue_null_deref(void)
{
	volatile int *nothing = NULL;

	return *nothing;
}

static long rogue_null(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	return rogue_null_deref();
}

BUG static long rogue_double_free(struct cusemu_device *dev,
				  struct cusemu_file *file, unsigned int cmd,
				  unsigned long arg)
{
	char *volatile chunk = malloc(2000);

	memset(chunk, 1, 2000);
	free(chunk);
	free(chunk);
	return 0;
}

/* A write past the end of a chunk, over the next one's header: glibc
 * finds it at the free and aborts, inside malloc. */
BUG static long rogue_heap(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	char *volatile chunk = malloc(64);
	char *volatile next = malloc(64);

	memset(chunk, 0xff, 64 + 16);
	free(next);
	free(chunk);
	return rogue_null_deref();
}

static long rogue_spin(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
	return 0;
}

static long rogue_deadlock(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	struct rogue *r = dev->priv;

	g_mutex_lock(&r->lock);
	g_mutex_lock(&r->lock);
	return 0;
}

/* A wait queue nothing wakes: only the client's giving up ends it. */
static long rogue_block(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct rogue *r = dev->priv;

	g_mutex_lock(&r->lock);
	while (!cusemu_signal_pending())
		cusemu_cond_wait_until(&r->never, &r->lock, G_MAXINT64);
	g_mutex_unlock(&r->lock);
	return -EINTR;
}

static long rogue_exit(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	exit(0);
}

static long rogue_leak(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	for (unsigned int i = 0; i < 1024; i++)
		memset(g_malloc(1 << 20), i, 1 << 20);
	return 0;
}

/* Unbounded, as far as the compiler can tell. */
static volatile unsigned long rogue_depth_end = ~0ul;

BUG static unsigned long rogue_recurse(unsigned long depth)
{
	volatile char frame[64];

	frame[0] = (char)depth;
	if (depth == rogue_depth_end)
		return 0;
	return rogue_recurse(depth + 1) + (unsigned long)frame[0];
}

/* Not a tail call: its frame stays below the recursion's. */
BUG static long rogue_stack(struct cusemu_device *dev, struct cusemu_file *file,
			    unsigned int cmd, unsigned long arg)
{
	return (long)rogue_recurse(0) - 1;
}

static long rogue_forget(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	return 0;	/* where cusemu_copy_to_user() should have been */
}

static long rogue_wait(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	cusemu_msleep((unsigned int)MIN(arg, 60000ul));
	return cusemu_signal_pending() ? -EINTR : 0;
}

static long rogue_fork(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	return pid < 0 ? -errno : 0;
}

/*
 * A model shares its process with the host's call channels: it may write
 * anything over them (found by their name in its maps), and the daemon,
 * which reads them, must not be fooled. Then it waits, as the call's end
 * would set their state right again.
 */
static long rogue_scribble(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;

	if (!maps)
		return -errno;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "memfd:cusemu-call") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			memset((void *)lo, 0xa5, 64);
	fclose(maps);
	while (!cusemu_signal_pending())
		cusemu_msleep(100);
	return -EINTR;
}

static long rogue_open(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct rogue_open o;
	int fd;

	if (cusemu_copy_from_user(&o, arg, sizeof(o)))
		return -EFAULT;
	o.path[sizeof(o.path) - 1] = '\0';
	fd = open(o.path, (o.flags == O_RDWR ? O_RDWR : O_RDONLY) |
				  O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * The host's main thread takes the channels the daemon sends on the
 * control socket (descriptor 3). Parked in a signal handler, it leaves the
 * next message to rogue_truncate(), which peeks at it: the peek gives it
 * copies of the descriptors and leaves the message for the main thread.
 */
static int rogue_parked, rogue_release;

static void rogue_park(int sig)
{
	__atomic_store_n(&rogue_parked, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&rogue_release, __ATOMIC_SEQ_CST))
		poll(NULL, 0, 5);
	__atomic_store_n(&rogue_parked, 0, __ATOMIC_SEQ_CST);
}

static bool rogue_park_main(bool park)
{
	__atomic_store_n(&rogue_release, !park, __ATOMIC_SEQ_CST);
	if (park)
		syscall(SYS_tgkill, getpid(), getpid(), SIGUSR2);
	for (int i = 0; i < 400; i++) {
		if (__atomic_load_n(&rogue_parked, __ATOMIC_SEQ_CST) == park)
			return true;
		poll(NULL, 0, 5);
	}
	return false;
}

/* Each memfd among the descriptors of the next message truncated: 0,
 * -errno, or 1 when the message brought none. */
static long rogue_truncate_next(void)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} u;
	char data[4096];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	long ret = 1;

	if (recvmsg(3, &mh, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c;
	     c = CMSG_NXTHDR(&mh, c)) {
		const int *fds = (const int *)CMSG_DATA(c);
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < n; i++) {
			struct stat st;

			if (!fstat(fds[i], &st) && S_ISREG(st.st_mode))
				ret = ftruncate(fds[i], 0) ? -errno : 0;
			close(fds[i]);
		}
	}
	return ret;
}

static long rogue_truncate(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	struct sigaction sa = { .sa_handler = rogue_park,
				.sa_flags = SA_RESTART };
	gint64 end = g_get_monotonic_time() + (gint64)MIN(arg, 60000ul) * 1000;
	long ret = -ETIMEDOUT;

	sigaction(SIGUSR2, &sa, NULL);
	if (!rogue_park_main(true))
		return -EAGAIN;
	while (ret == -ETIMEDOUT && !cusemu_signal_pending()) {
		struct pollfd p = { 3, POLLIN, 0 };
		gint64 left = end - g_get_monotonic_time();

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)MIN(left / 1000 + 1, 100)) <= 0)
			continue;
		ret = rogue_truncate_next();
		if (ret == 1) {
			/* Not a channel: the main thread takes it. */
			ret = -ETIMEDOUT;
			if (!rogue_park_main(false) || !rogue_park_main(true))
				return -EAGAIN;
		}
	}
	rogue_park_main(false);
	return ret;
}

/*
 * With ROGUE_LINK_NAME set, the object loaded last before the plugin in a
 * model host is named by that path in the host's link map, which the host
 * sends the daemon for its reports.
 */
static char rogue_link_name[256];

__attribute__((constructor)) static void rogue_rename_object(void)
{
	const char *path = getenv("ROGUE_LINK_NAME");
	struct link_map *map = NULL;

	if (!path || !*path ||
	    strncmp(program_invocation_short_name, "cusemu-host", 11) ||
	    !dladdr1((void *)rogue_rename_object, &(Dl_info){ 0 },
		     (void **)&map, RTLD_DL_LINKMAP) ||
	    !map)
		return;
	for (struct link_map *l = map->l_prev; l; l = l->l_prev)
		if (l->l_name && l->l_name[0] == '/') {
			g_strlcpy(rogue_link_name, path,
				  sizeof(rogue_link_name));
			l->l_name = rogue_link_name;
			return;
		}
}

static const struct cusemu_ioctl rogue_native[] = {
	CUSEMU_IOCTL_IOC(ROGUE_IOC_GET_SIZE, rogue_get_size),
	CUSEMU_IOCTL_IOC(ROGUE_IOC_PAIR, rogue_pair),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_NULL, rogue_null),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_DOUBLE_FREE, rogue_double_free),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_HEAP, rogue_heap),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_SPIN, rogue_spin),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_DEADLOCK, rogue_deadlock),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_BLOCK, rogue_block),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_EXIT, rogue_exit),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_LEAK, rogue_leak),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_FORK, rogue_fork),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_STACK, rogue_stack),
	CUSEMU_IOCTL_IOC(ROGUE_IOC_FORGET, rogue_forget),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_WAIT, rogue_wait),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_SCRIBBLE, rogue_scribble),
	CUSEMU_IOCTL_IOC(ROGUE_IOC_OPEN, rogue_open),
	CUSEMU_IOCTL_NONE(ROGUE_IOC_TRUNCATE, rogue_truncate),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param rogue_params[] = {
	{ .key = "size", .type = CUSEMU_PARAM_SIZE, .default_value = "4096",
	  .help = "what ROGUE_IOC_GET_SIZE answers" },
	CUSEMU_PARAM_END
};

static int rogue_probe(struct cusemu_device *dev, char **why)
{
	struct rogue *r = g_new0(struct rogue, 1);

	g_mutex_init(&r->lock);
	g_cond_init(&r->never);
	r->size = cusemu_device_param_u64(dev, "size");
	dev->priv = r;
	return 0;
}

static void rogue_remove(struct cusemu_device *dev)
{
	g_free(dev->priv);
}

static ssize_t rogue_read(struct cusemu_device *dev, struct cusemu_file *file,
			  char *buf, size_t size)
{
	static const char text[] = "rogue\n";

	size = MIN(size, sizeof(text) - 1);
	memcpy(buf, text, size);
	return (ssize_t)size;
}

static ssize_t rogue_write(struct cusemu_device *dev, struct cusemu_file *file,
			   const char *buf, size_t size)
{
	struct rogue *r = dev->priv;

	r->written += size;
	return (ssize_t)size;
}

static unsigned int rogue_poll(struct cusemu_device *dev,
			       struct cusemu_file *file)
{
	return POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM;
}

static const struct cusemu_device_model rogue_model = {
	.name = "rogue",
	.summary = "a model with the bugs a model host contains, for tests",
	.node_prefix = "rogue",
	.params = rogue_params,
	.probe = rogue_probe,
	.remove = rogue_remove,
	.read = rogue_read,
	.write = rogue_write,
	.poll = rogue_poll,
	.native_table = rogue_native,
	.compat_ptr_ioctl = true,
};

CUSEMU_PLUGIN(&rogue_model);
