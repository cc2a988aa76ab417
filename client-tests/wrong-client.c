/* SPDX-License-Identifier: MIT */
/*
 * The caller of a model whose compat table is wrong (tests/abicheck/
 * wrong-model.c): WRONG_INFO serves x86_64 programs; an i386 program's
 * WRONG_INFO has another number (its struct is 12 bytes there), which
 * the row marked compatible never serves: ENOTTY, and the daemon's log
 * says why. WRONG_RIGHT, rightly marked compatible, serves both. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../tests/abicheck/wrong.h"
#include "tap.h"

int main(int argc, char **argv)
{
	struct wrong_info info = { 0 };
	__u32 v = 0;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s NODE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		bail(argv[1]);
	if (sizeof(long) == 8) {
		if (expect_ret("WRONG_INFO serves a 64-bit caller",
			       ioctl(fd, WRONG_INFO, &info), 0))
			report(info.serial == WRONG_SERIAL,
			       "WRONG_INFO's serial is right",
			       "serial %llx", (unsigned long long)info.serial);
	} else {
		expect_errno("WRONG_INFO fails with ENOTTY for an i386 caller",
			     ioctl(fd, WRONG_INFO, &info), ENOTTY);
		expect_errno("and again (the log says it once)",
			     ioctl(fd, WRONG_INFO, &info), ENOTTY);
	}
	if (expect_ret("WRONG_RIGHT serves this caller",
		       ioctl(fd, WRONG_RIGHT, &v), 0))
		report(v == 7, "WRONG_RIGHT answers 7", "got %u", v);
	close(fd);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
