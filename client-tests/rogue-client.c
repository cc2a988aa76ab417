/* SPDX-License-Identifier: MIT */
/*
 * rogue-client: one call on a node of the "rogue" test model
 * (tests/plugins/rogue.h), and what it returned, e.g. "size: 0 4096",
 * "null: -1 EIO". OP is size, pair N, null, double-free, heap, spin,
 * deadlock, block, exit, leak, fork, stack, scribble, forget, wait MS,
 * path ro|rw PATH (PATH opened in the model host), truncate MS, read, write
 * or poll. With -t first, a second line gives the time OP took
 * and when it ended on CLOCK_MONOTONIC, both in ms ("took: 12 ms, ended:
 * 35127"), to compare with another caller's end. Built -m64 and -m32.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../tests/plugins/rogue.h"

static const struct {
	const char *op;
	unsigned long cmd;
} bugs[] = {
	{ "null", ROGUE_IOC_NULL },
	{ "double-free", ROGUE_IOC_DOUBLE_FREE },
	{ "heap", ROGUE_IOC_HEAP },
	{ "spin", ROGUE_IOC_SPIN },
	{ "deadlock", ROGUE_IOC_DEADLOCK },
	{ "block", ROGUE_IOC_BLOCK },
	{ "exit", ROGUE_IOC_EXIT },
	{ "leak", ROGUE_IOC_LEAK },
	{ "fork", ROGUE_IOC_FORK },
	{ "stack", ROGUE_IOC_STACK },
	{ "scribble", ROGUE_IOC_SCRIBBLE },
};

static int result(const char *op, long ret)
{
	if (ret < 0)
		printf("%s: -1 %s\n", op,
		       errno == EIO ? "EIO" : errno == EINTR ? "EINTR" :
		       errno == ENODEV ? "ENODEV" : strerror(errno));
	else
		printf("%s: %ld\n", op, ret);
	return ret < 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int run(int fd, const char *op, int argc, char **argv)
{
	if (!strcmp(op, "size")) {
		__u64 size = 0;
		long ret = ioctl(fd, ROGUE_IOC_GET_SIZE, &size);

		if (ret < 0)
			return result(op, ret);
		printf("size: %ld %llu\n", ret, (unsigned long long)size);
		return 0;
	}
	if (!strcmp(op, "pair")) {
		struct rogue_pair p = { argc > 3 ? (__u32)atoi(argv[3]) : 1,
					0 };
		long ret = ioctl(fd, ROGUE_IOC_PAIR, &p);

		if (ret < 0)
			return result(op, ret);
		printf("pair: %ld %u %u\n", ret, p.in, p.out);
		return 0;
	}
	if (!strcmp(op, "forget")) {
		/* What the buffer held: the handler writes nothing. */
		__u64 v = 0x5a5a5a5a5a5a5a5aull;
		long ret = ioctl(fd, ROGUE_IOC_FORGET, &v);

		if (ret < 0)
			return result(op, ret);
		printf("forget: %ld %llx\n", ret, (unsigned long long)v);
		return 0;
	}
	if (!strcmp(op, "wait"))
		return result(op, ioctl(fd, ROGUE_IOC_WAIT,
					argc > 3 ? strtoul(argv[3], NULL, 10)
						 : 1000ul));
	if (!strcmp(op, "path")) {
		struct rogue_open o = { 0 };

		if (argc < 5) {
			fprintf(stderr, "usage: rogue-client NODE path ro|rw PATH\n");
			return 2;
		}
		o.flags = strcmp(argv[3], "rw") ? O_RDONLY : O_RDWR;
		snprintf(o.path, sizeof(o.path), "%s", argv[4]);
		return result(op, ioctl(fd, ROGUE_IOC_OPEN, &o));
	}
	if (!strcmp(op, "truncate"))
		return result(op, ioctl(fd, ROGUE_IOC_TRUNCATE,
					argc > 3 ? strtoul(argv[3], NULL, 10)
						 : 10000ul));
	if (!strcmp(op, "read")) {
		char buf[64] = "";
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n < 0)
			return result(op, n);
		printf("read: %zd %s", n, buf);
		return 0;
	}
	if (!strcmp(op, "write"))
		return result(op, write(fd, "0123456789", 10));
	if (!strcmp(op, "poll")) {
		struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
		int n = poll(&p, 1, 1000);

		if (n < 0)
			return result(op, n);
		printf("poll: %d%s%s\n", n, p.revents & POLLIN ? " in" : "",
		       p.revents & POLLOUT ? " out" : "");
		return 0;
	}
	for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++)
		if (!strcmp(op, bugs[i].op))
			return result(op, ioctl(fd, bugs[i].cmd));
	fprintf(stderr, "rogue-client: unknown OP %s\n", op);
	return 2;
}

int main(int argc, char **argv)
{
	long long t0, t1;
	bool timed = argc > 1 && !strcmp(argv[1], "-t");
	int fd, status;

	if (timed) {
		argc--;
		argv++;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: rogue-client [-t] NODE OP [N]\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return result("open", -1);
	t0 = now_ms();
	status = run(fd, argv[2], argc, argv);
	t1 = now_ms();
	if (timed)
		printf("took: %lld ms, ended: %lld\n", t1 - t0, t1);
	return status;
}
