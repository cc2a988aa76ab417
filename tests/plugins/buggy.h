/* SPDX-License-Identifier: MIT */
/*
 * The ABI of "buggy", the model with bugs that the oops tests load as a
 * plugin (tests/plugins/buggy.c), shared with its client
 * (client-tests/buggy-client.c). The same layout on both ABIs.
 */
#ifndef CUSEMU_TEST_BUGGY_H
#define CUSEMU_TEST_BUGGY_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct buggy_info {
	__u32 version;		/* 1 as built, 2 built with BUGGY_FIXED */
	__u32 calls;		/* ioctls served by this instance */
};

#define BUGGY_IOC_INFO _IOR('B', 1, struct buggy_info)
/* Dereferences NULL (returns 0 once fixed). */
#define BUGGY_IOC_NULL _IO('B', 2)
/* A failed assertion: abort(). */
#define BUGGY_IOC_ABORT _IO('B', 3)
/* 1000 divided by the value given: SIGFPE for 0. */
#define BUGGY_IOC_DIV _IOW('B', 4, __u32)
/* Spins that many milliseconds without sleeping. */
#define BUGGY_IOC_SPIN _IOW('B', 5, __u32)
/* Takes the big lock, then dereferences NULL while holding it. */
#define BUGGY_IOC_LOCKED_NULL _IO('B', 6)
/* Returns the value given, as a driver might: -ERESTARTSYS (-512), an
 * errno no reply can carry, anything. */
#define BUGGY_IOC_RETURN _IOW('B', 7, __s32)
/* Takes the big lock and returns 0 still holding it. */
#define BUGGY_IOC_LOCKED_RETURN _IO('B', 8)
/* Logs that many lines (of the device, at info level), then returns 0. */
#define BUGGY_IOC_LOG _IOW('B', 9, __u32)
/* Closes every descriptor of its process, then returns 0. */
#define BUGGY_IOC_CLOSE_ALL _IO('B', 10)

#endif
