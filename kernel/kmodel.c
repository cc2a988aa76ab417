/* SPDX-License-Identifier: MIT */
/*
 * The kernel models, one descriptor per generation, as fs/ioctl.c and
 * fs/compat_ioctl.c of each served ioctls. A new generation is one more
 * descriptor here.
 */
#include <errno.h>
#include <string.h>

#include "kmodel.h"

#define LOCKED(m) { CUSEMU_METHOD_##m, true }
#define UNLOCKED(m) { CUSEMU_METHOD_##m, false }

const struct cusemu_kernel_model *const cusemu_kernel_models[] = {
	/* 2.6.10's sys_ioctl: the legacy method under the big lock. */
	&(const struct cusemu_kernel_model){
		.name = "2.6.10",
		.version = KERNEL_VERSION(2, 6, 10),
		.summary = "legacy ioctl under the big lock; 32-bit: the "
			   "global ioctl32 table, unknown commands EINVAL",
		.native = { LOCKED(IOCTL) },
		.native_not_mine = ENOTTY,
		.global_table = true,
	},
	/*
	 * Mike Werner's patch of December 2004: unlocked_ioctl without the
	 * lock if the driver has it. It reached 2.6.10-rc3-mm1 only, which
	 * said 2.6.10; no release had unlocked_ioctl without compat_ioctl.
	 */
	&(const struct cusemu_kernel_model){
		.name = "unlocked",
		.version = KERNEL_VERSION(2, 6, 10),
		.summary = "the unlocked_ioctl patch: unlocked_ioctl without "
			   "the lock, else ioctl under it; 32-bit as 2.6.10",
		.native = { UNLOCKED(UNLOCKED_IOCTL), LOCKED(IOCTL) },
		.native_not_mine = ENOTTY,
		.global_table = true,
	},
	/*
	 * The article's proposal: ioctl_native and ioctl_compat, no lock;
	 * a device without them is served as by 2.6.10. Michael Tsirkin's
	 * patch against 2.6.10's release candidates; never merged as such.
	 */
	&(const struct cusemu_kernel_model){
		.name = "split",
		.version = KERNEL_VERSION(2, 6, 10),
		.summary = "ioctl_native and ioctl_compat, no lock; the global "
			   "table only as a fallback",
		.native = { UNLOCKED(IOCTL_NATIVE), LOCKED(IOCTL) },
		.native_not_mine = ENOTTY,
		.compat = UNLOCKED(IOCTL_COMPAT),
		.global_table = true,
	},
	/* What was merged: unlocked_ioctl or ioctl; compat_ioctl, then the
	 * table. */
	&(const struct cusemu_kernel_model){
		.name = "2.6.11",
		.version = KERNEL_VERSION(2, 6, 11),
		.summary = "unlocked_ioctl or ioctl (locked), not mine: EINVAL; "
			   "compat_ioctl, then the global table",
		.native = { UNLOCKED(UNLOCKED_IOCTL), LOCKED(IOCTL) },
		.native_not_mine = EINVAL,
		.compat = UNLOCKED(COMPAT_IOCTL),
		.global_table = true,
	},
	/*
	 * Today's kernels: no global table, no big lock. The first release
	 * to serve ioctls so is 5.5, which dropped fs/compat_ioctl.c's table
	 * (a command no compat_ioctl takes is ENOTTY) and added
	 * compat_ptr_ioctl(); the legacy ->ioctl and its big lock went in
	 * 2.6.36.
	 */
	&(const struct cusemu_kernel_model){
		.name = "modern",
		.version = KERNEL_VERSION(5, 5, 0),
		.summary = "unlocked_ioctl and compat_ioctl, no global table, "
			   "no big lock; unknown commands: ENOTTY",
		.native = { UNLOCKED(UNLOCKED_IOCTL) },
		.native_not_mine = ENOTTY,
		.compat = UNLOCKED(COMPAT_IOCTL),
	},
	NULL,
};

const struct cusemu_kernel_model *cusemu_kernel_model_find(const char *name)
{
	for (unsigned int i = 0; cusemu_kernel_models[i]; i++)
		if (!strcmp(cusemu_kernel_models[i]->name, name))
			return cusemu_kernel_models[i];
	return NULL;
}
