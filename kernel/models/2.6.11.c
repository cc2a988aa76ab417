/* SPDX-License-Identifier: MIT */
/* What was merged: unlocked_ioctl or ioctl; compat_ioctl, then the
 * table. */
#include <errno.h>

#include "kmodel.h"

const struct cusemu_kernel_model cusemu_kernel_model_2_6_11 = {
	.name = "2.6.11",
	.version = KERNEL_VERSION(2, 6, 11),
	.summary = "unlocked_ioctl or ioctl (locked), not mine: EINVAL; "
		   "compat_ioctl, then the global table",
	.native = { UNLOCKED(UNLOCKED_IOCTL), LOCKED(IOCTL) },
	.native_not_mine = EINVAL,
	.compat = UNLOCKED(COMPAT_IOCTL),
	.global_table = true,
};
