/* SPDX-License-Identifier: MIT */
/*
 * Today's kernels: no global table, no big lock. The first release
 * to serve ioctls so is 5.5, which dropped fs/compat_ioctl.c's table
 * (a command no compat_ioctl takes is ENOTTY) and added
 * compat_ptr_ioctl(); the legacy ->ioctl and its big lock went in
 * 2.6.36.
 */
#include <errno.h>

#include "kmodel.h"

const struct cusemu_kernel_model cusemu_kernel_model_modern = {
	.name = "modern",
	.version = KERNEL_VERSION(5, 5, 0),
	.summary = "unlocked_ioctl and compat_ioctl, no global table, "
		   "no big lock; unknown commands: ENOTTY",
	.native = { UNLOCKED(UNLOCKED_IOCTL) },
	.native_not_mine = ENOTTY,
	.compat = UNLOCKED(COMPAT_IOCTL),
};
