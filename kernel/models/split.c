/* SPDX-License-Identifier: MIT */
/*
 * The article's proposal: ioctl_native and ioctl_compat, no lock;
 * a device without them is served as by 2.6.10. Michael Tsirkin's
 * patch against 2.6.10's release candidates; never merged as such.
 */
#include <errno.h>

#include "kmodel.h"

const struct cusemu_kernel_model cusemu_kernel_model_split = {
	.name = "split",
	.version = KERNEL_VERSION(2, 6, 10),
	.summary = "ioctl_native and ioctl_compat, no lock; the global "
		   "table only as a fallback",
	.native = { UNLOCKED(IOCTL_NATIVE), LOCKED(IOCTL) },
	.native_not_mine = ENOTTY,
	.compat = UNLOCKED(IOCTL_COMPAT),
	.global_table = true,
};
