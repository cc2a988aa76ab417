/* SPDX-License-Identifier: MIT */
/*
 * nap-client NODE MS: PLUGTEST_NAP on a plugnap node (the test plugin's),
 * then "ok" or the errno's name. Built -m64 and -m32: an i386 call goes
 * through the global ioctl32 table under the kernel models that have one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tests/plugins/plugtest.h"

int main(int argc, char **argv)
{
	__u32 ms;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s NODE MS\n", argv[0]);
		return 2;
	}
	ms = (__u32)strtoul(argv[2], NULL, 10);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (ioctl(fd, PLUGTEST_NAP, &ms) < 0) {
		printf("%s\n", errno == ENODEV	  ? "ENODEV"
			       : errno == EINVAL  ? "EINVAL"
			       : errno == ENOTCONN ? "ENOTCONN"
						   : strerror(errno));
		return 1;
	}
	printf("ok\n");
	return 0;
}
