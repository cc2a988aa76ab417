/* SPDX-License-Identifier: MIT */
/*
 * A generation no kernel was, for the tests alone (test_kernel_models):
 * 2.6.11's native methods, but "not mine" is EOPNOTSUPP, an errno no
 * other model gives; compat_ioctl under the big lock, which no other
 * model takes for it; no global table, so a command compat_ioctl does
 * not take is ENOTTY. A call shows which model served it by each of the
 * three. Today's version: what a device model asks of it is modern's.
 */
#include <errno.h>

#include "kmodel.h"

const struct cusemu_kernel_model cusemu_kernel_model_test_locked_compat = {
	.name = "test-locked-compat",
	.version = KERNEL_VERSION(5, 5, 0),
	.summary = "for tests: unlocked_ioctl or ioctl (locked), not "
		   "mine: EOPNOTSUPP; compat_ioctl under the big lock, no "
		   "global table",
	.native = { UNLOCKED(UNLOCKED_IOCTL), LOCKED(IOCTL) },
	.native_not_mine = EOPNOTSUPP,
	.compat = LOCKED(COMPAT_IOCTL),
};
