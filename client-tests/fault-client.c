/* SPDX-License-Identifier: MIT */
/*
 * fault-client: one call that the fault tests interrupt, kill, or cut off
 * by stopping the daemon; it prints what the call returned, e.g.
 * "read: -1 (EINTR/Interrupted system call)". Built -m64 and -m32.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/input.h>

#include "tap.h"
#include "cusemu/abi/slow.h"

/* Any command the daemon sees: no device knows it. */
#define UNKNOWN_CMD _IO('Z', 0x7f)

static void usage(void)
{
	fprintf(stderr,
		"usage: fault-client OP NODE [MICROSECONDS]\n"
		"OP: open        open and close the node\n"
		"    read        block in read() (rtc, evdev)\n"
		"    grab        EVIOCGRAB 1, then let go\n"
		"    grab-read   EVIOCGRAB 1, then block in read()\n"
		"    hold-us     SLOW_HOLD_US of MICROSECONDS\n"
		"    hold-loop   SLOW_HOLD_US of MICROSECONDS again and "
		"again, until one fails\n"
		"    hold        keep the node open until SIGUSR1, then call it\n");
	exit(2);
}

static void print_ret(const char *what, long ret)
{
	int err = errno;

	printf("%s: %s\n", what, show_ret(ret, err));
}

static int open_node(const char *node)
{
	int fd = open(node, O_RDWR);

	if (fd < 0) {
		print_ret("open", fd);
		exit(1);
	}
	return fd;
}

/* One event in this ABI's layout, which is also room for an rtc read. */
static void block_in_read(int fd)
{
	struct input_event ev;

	printf("reading\n");
	print_ret("read", read(fd, &ev, sizeof(ev)));
}

static void grab(int fd)
{
	print_ret("grab", ioctl(fd, EVIOCGRAB, 1));
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* Holds the file until told, then tries it: after the daemon is gone. */
static void hold(int fd)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t block, old;
	char c;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	if (sigaction(SIGUSR1, &sa, NULL) ||
	    sigprocmask(SIG_BLOCK, &block, &old))
		bail("cannot wait for SIGUSR1");
	printf("holding\n");
	sigsuspend(&old);
	print_ret("read", read(fd, &c, 1));
	print_ret("ioctl", ioctl(fd, UNKNOWN_CMD));
}

int main(int argc, char **argv)
{
	const char *op, *node;
	__u32 us;
	long ret;
	int fd;

	if (argc < 3)
		usage();
	op = argv[1];
	node = argv[2];
	/* The tests wait for these lines while the call blocks. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# fault-client: ABI %s\n",
	       sizeof(long) == 4 ? "i386" : "x86_64");
	if (argc == 4 && !strcmp(op, "hold-us")) {
		us = (__u32)strtoul(argv[3], NULL, 10);
		fd = open_node(node);
		print_ret("hold-us", ioctl(fd, SLOW_HOLD_US, &us));
		return 0;
	}
	/* Whenever the test strikes, the client is in the middle of one. */
	if (argc == 4 && !strcmp(op, "hold-loop")) {
		us = (__u32)strtoul(argv[3], NULL, 10);
		fd = open_node(node);
		while (!(ret = ioctl(fd, SLOW_HOLD_US, &us)))
			;
		print_ret("hold-us", ret);
		return 0;
	}
	if (argc != 3)
		usage();
	if (!strcmp(op, "open")) {
		fd = open(node, O_RDWR);
		print_ret("open", fd >= 0 ? 0 : -1);
		return fd >= 0 ? 0 : 1;
	}
	fd = open_node(node);
	if (!strcmp(op, "read")) {
		block_in_read(fd);
	} else if (!strcmp(op, "grab")) {
		grab(fd);
	} else if (!strcmp(op, "grab-read")) {
		grab(fd);
		block_in_read(fd);
	} else if (!strcmp(op, "hold")) {
		hold(fd);
	} else {
		usage();
	}
	return 0;
}
