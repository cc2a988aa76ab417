/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the kernel's side of a CUSE ioctl, for unit tests: client
 * memory is a byte array, and FUSE_IOCTL_RETRY is followed the way
 * fs/fuse/ioctl.c does, without any kernel.
 */
#ifndef CUSEMU_FAKE_KERNEL_H
#define CUSEMU_FAKE_KERNEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "call.h"

/*
 * What a call of the fakes returns when the kernel refused the daemon's
 * reply (fuse_dev_do_write() takes errors 1 to 511 only): the client would
 * wait for ever.
 */
#define FAKE_UNANSWERED INT_MIN

/* The calling process's memory: [base, base + size). */
struct fake_client {
	cusemu_uptr_t base;
	uint8_t *mem;
	size_t size;
	bool compat;		/* an i386 process */
};

/* Where a local buffer of the fake client sits in its address space. */
/* Where a client's memory starts, as its ABI's processes have it. */
#define FAKE_NATIVE_BASE UINT64_C(0x7f0000000000)
#define FAKE_COMPAT_BASE UINT64_C(0x08000000)

/* A client of either ABI with size bytes of zeroed memory at its base;
 * g_free(c->mem) ends it. */
void fake_client_init(struct fake_client *c, bool compat, size_t size);

cusemu_uptr_t fake_addr(const struct fake_client *c, const void *p);

/* What fuse_verify_ioctl_iov() and the compat checks refuse: -EIO, or 0. */
int fake_check_ranges(const struct fake_client *c,
		      const struct cusemu_user_ranges *set);
/* Copy the client's bytes of the ranges into buf, at their offsets. */
int fake_gather(struct fake_client *c, const struct cusemu_user_ranges *in,
		uint8_t *buf);
/* Copy buf[0, used) back to the client's ranges; -EFAULT where unmapped. */
int fake_scatter(struct fake_client *c, const struct cusemu_user_ranges *out,
		 const uint8_t *buf, uint32_t used);

/*
 * A device from a --device argument ("fioc:max_size=4K"), of model m or of
 * the model the argument names when m is NULL, bound for dispatch with the
 * model's locking. NULL, with error set, when the description is refused.
 */
struct cusemu_device *fake_device_try(const struct cusemu_device_model *m,
				      const char *arg, GError **error);
/* The same, failing the test when the description is refused. */
struct cusemu_device *fake_device_new(const char *arg);
void fake_device_free(struct cusemu_device *dev);

/*
 * ioctl(2) as the client sees it: the result (an int in the reply) or
 * -errno, or FAKE_UNANSWERED. *round_trips counts
 * the requests the daemon answered with a retry.
 */
long fake_ioctl(struct fake_client *c, struct cusemu_device *dev,
		struct cusemu_file *file, unsigned int cmd, cusemu_uptr_t arg,
		unsigned int *round_trips);

#endif
