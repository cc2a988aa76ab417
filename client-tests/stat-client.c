/* SPDX-License-Identifier: MIT */
/*
 * stat-client NODE MAJOR MINOR: every stat system call of this ABI on a
 * node, each expected to say "a character device numbered MAJOR:MINOR",
 * as the kernel says of a real node: stat, lstat, fstat, fstatat (by path,
 * and on the descriptor with AT_EMPTY_PATH) and statx. Made as raw system
 * calls, so that each of the kernel's entries is checked whatever the C
 * library prefers: x86-64's stat, lstat, fstat, newfstatat; i386's stat64,
 * lstat64, fstat64, fstatat64; statx in both. Prints TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tap.h"

#if defined(__i386__)
typedef struct stat64 kstat;	/* the kernel's struct stat64 */
#define NR_STAT SYS_stat64
#define NR_LSTAT SYS_lstat64
#define NR_FSTAT SYS_fstat64
#define NR_FSTATAT SYS_fstatat64
#else
typedef struct stat kstat;
#define NR_STAT SYS_stat
#define NR_LSTAT SYS_lstat
#define NR_FSTAT SYS_fstat
#define NR_FSTATAT SYS_newfstatat
#endif

static unsigned int want_major, want_minor;

static void check(const char *call, long ret, const kstat *st)
{
	char desc[128];

	snprintf(desc, sizeof(desc), "%s: a character device %u:%u", call,
		 want_major, want_minor);
	report(ret == 0 && S_ISCHR(st->st_mode) &&
		       major(st->st_rdev) == want_major &&
		       minor(st->st_rdev) == want_minor,
	       desc, "got %s, mode 0%o, rdev %u:%u", show_ret(ret, errno),
	       (unsigned int)st->st_mode, major(st->st_rdev),
	       minor(st->st_rdev));
}

int main(int argc, char **argv)
{
	struct statx sx;
	kstat st;
	long ret;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: stat-client NODE MAJOR MINOR\n");
		return 2;
	}
	want_major = (unsigned int)strtoul(argv[2], NULL, 0);
	want_minor = (unsigned int)strtoul(argv[3], NULL, 0);
	printf("# ABI %s\n", sizeof(long) == 8 ? "x86_64" : "i386");

	memset(&st, 0, sizeof(st));
	check("stat", syscall(NR_STAT, argv[1], &st), &st);
	memset(&st, 0, sizeof(st));
	check("lstat", syscall(NR_LSTAT, argv[1], &st), &st);
	memset(&st, 0, sizeof(st));
	check("fstatat", syscall(NR_FSTATAT, AT_FDCWD, argv[1], &st, 0), &st);
	fd = expect_open(argv[1], O_RDONLY | O_NONBLOCK, "open the node");
	if (fd >= 0) {
		memset(&st, 0, sizeof(st));
		check("fstat", syscall(NR_FSTAT, fd, &st), &st);
		memset(&st, 0, sizeof(st));
		check("fstatat(fd, \"\", AT_EMPTY_PATH)",
		      syscall(NR_FSTATAT, fd, "", &st, AT_EMPTY_PATH), &st);
		close(fd);
	}
	memset(&sx, 0, sizeof(sx));
	ret = syscall(SYS_statx, AT_FDCWD, argv[1], 0, STATX_BASIC_STATS, &sx);
	report(ret == 0 && S_ISCHR(sx.stx_mode) &&
		       sx.stx_rdev_major == want_major &&
		       sx.stx_rdev_minor == want_minor,
	       "statx: a character device", "got %s, mode 0%o, rdev %u:%u",
	       show_ret(ret, errno), (unsigned int)sx.stx_mode,
	       sx.stx_rdev_major, sx.stx_rdev_minor);
	ret = syscall(NR_STAT, "/dev/null", &st);
	report(ret == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
		       minor(st.st_rdev) == 3,
	       "stat of another file goes on to the kernel: /dev/null is 1:3",
	       "got %s", show_ret(ret, errno));
	ret = syscall(NR_STAT, (char *)8, &st);
	expect_errno("stat of a bad path pointer fails with EFAULT", ret,
		     EFAULT);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
