/* SPDX-License-Identifier: MIT */
/*
 * buggy-client: one call on a node of the "buggy" test model
 * (tests/plugins/buggy.h), and what it returned, e.g. "null: -1 EIO" or
 * "info: 0 version=2 calls=1". With "hold", the node is opened first and
 * the call waits for a line on standard input (a file opened before a
 * reload). Built -m64 and -m32.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../tests/plugins/buggy.h"

static void usage(void)
{
	fprintf(stderr, "usage: buggy-client NODE [hold] OP [N]\n"
			"OP: info, null, abort, div N, spin MS, locked-null, "
			"locked-return, log N, close-all, return N, read\n");
	exit(2);
}

static void result(const char *op, long ret)
{
	if (ret < 0)
		printf("%s: -1 %s\n", op,
		       errno == EIO ? "EIO" : errno == ENODEV ? "ENODEV" :
		       errno == ENOTTY ? "ENOTTY" : errno == EINTR ? "EINTR" :
		       strerror(errno));
	else
		printf("%s: %ld", op, ret);
}

int main(int argc, char **argv)
{
	struct buggy_info info = { 0 };
	const char *op;
	__u32 n = 0;
	long ret;
	int fd, i = 2;
	char line[16], buf[64];

	if (argc < 3)
		usage();
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		printf("open: -1 %s\n", errno == EIO ? "EIO" : strerror(errno));
		return 1;
	}
	if (!strcmp(argv[i], "hold")) {
		printf("opened\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		i++;
	}
	if (i >= argc)
		usage();
	op = argv[i];
	if (i + 1 < argc)
		n = (__u32)strtoul(argv[i + 1], NULL, 0);
	if (!strcmp(op, "info")) {
		ret = ioctl(fd, BUGGY_IOC_INFO, &info);
		result(op, ret);
		if (ret >= 0)
			printf(" version=%u calls=%u", info.version, info.calls);
	} else if (!strcmp(op, "null")) {
		result(op, ioctl(fd, BUGGY_IOC_NULL));
	} else if (!strcmp(op, "abort")) {
		result(op, ioctl(fd, BUGGY_IOC_ABORT));
	} else if (!strcmp(op, "div")) {
		result(op, ioctl(fd, BUGGY_IOC_DIV, &n));
	} else if (!strcmp(op, "spin")) {
		result(op, ioctl(fd, BUGGY_IOC_SPIN, &n));
	} else if (!strcmp(op, "return")) {
		__s32 v = (__s32)n;

		result(op, ioctl(fd, BUGGY_IOC_RETURN, &v));
	} else if (!strcmp(op, "locked-null")) {
		result(op, ioctl(fd, BUGGY_IOC_LOCKED_NULL));
	} else if (!strcmp(op, "log")) {
		result(op, ioctl(fd, BUGGY_IOC_LOG, &n));
	} else if (!strcmp(op, "close-all")) {
		result(op, ioctl(fd, BUGGY_IOC_CLOSE_ALL));
	} else if (!strcmp(op, "locked-return")) {
		result(op, ioctl(fd, BUGGY_IOC_LOCKED_RETURN));
	} else if (!strcmp(op, "read")) {
		result(op, read(fd, buf, sizeof(buf)));
	} else {
		usage();
	}
	printf("\n");
	close(fd);
	return 0;
}
