/* SPDX-License-Identifier: MIT */
/* 2.6.10's sys_ioctl: the legacy method under the big lock. */
#include <errno.h>

#include "kmodel.h"

const struct cusemu_kernel_model cusemu_kernel_model_2_6_10 = {
	.name = "2.6.10",
	.version = KERNEL_VERSION(2, 6, 10),
	.summary = "legacy ioctl under the big lock; 32-bit: the "
		   "global ioctl32 table, unknown commands EINVAL",
	.native = { LOCKED(IOCTL) },
	.native_not_mine = ENOTTY,
	.global_table = true,
};
