/* SPDX-License-Identifier: MIT */
/*
 * Mike Werner's patch of December 2004: unlocked_ioctl without the
 * lock if the driver has it. It reached 2.6.10-rc3-mm1 only, which
 * said 2.6.10; no release had unlocked_ioctl without compat_ioctl.
 */
#include <errno.h>

#include "kmodel.h"

const struct cusemu_kernel_model cusemu_kernel_model_unlocked = {
	.name = "unlocked",
	.version = KERNEL_VERSION(2, 6, 10),
	.summary = "the unlocked_ioctl patch: unlocked_ioctl without "
		   "the lock, else ioctl under it; 32-bit as 2.6.10",
	.native = { UNLOCKED(UNLOCKED_IOCTL), LOCKED(IOCTL) },
	.native_not_mine = ENOTTY,
	.global_table = true,
};
