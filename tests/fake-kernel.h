/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the kernel's side of a CUSE ioctl, for unit tests: client
 * memory is a byte array, and FUSE_IOCTL_RETRY is followed the way
 * fs/fuse/ioctl.c does, without any kernel.
 */
#ifndef CUSEMU_FAKE_KERNEL_H
#define CUSEMU_FAKE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "call.h"

/* The calling process's memory: [base, base + size). */
struct fake_client {
	cusemu_uptr_t base;
	uint8_t *mem;
	size_t size;
	bool compat;		/* an i386 process */
};

/* Where a local buffer of the fake client sits in its address space. */
cusemu_uptr_t fake_addr(const struct fake_client *c, const void *p);

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
 * ioctl(2) as the client sees it: the result or -errno. *round_trips counts
 * the requests the daemon answered with a retry.
 */
long fake_ioctl(struct fake_client *c, struct cusemu_device *dev,
		struct cusemu_file *file, unsigned int cmd, cusemu_uptr_t arg,
		unsigned int *round_trips);

#endif
