/* SPDX-License-Identifier: MIT */
/*
 * Kernel models: how one Linux generation served ioctls, as data. Each is
 * one descriptor in a file of models/, named in a list of meson.build;
 * dispatch.c follows it for every call.
 */
#ifndef CUSEMU_KMODEL_H
#define CUSEMU_KMODEL_H

#include <stdbool.h>

#include "cusemu/device.h"

/* A method a generation tries, and whether it runs under the big lock. */
struct cusemu_kernel_step {
	enum cusemu_method method;	/* 0: none */
	bool big_lock;
};

struct cusemu_kernel_model {
	/* As --model and kernel= take it; its file is models/NAME.c. */
	const char *name;
	/*
	 * KERNEL_VERSION() of the kernel the model plays, as its
	 * LINUX_VERSION_CODE said: what cusemu_device_kernel_version() gives
	 * a device model. Never lower than the model's before it in the
	 * table; the December 2004 patches share 2.6.10's, as the trees they
	 * were written for did (docs/kernel-models.md).
	 */
	unsigned int version;
	const char *summary;
	/* Native callers: the first of these methods the device has; none
	 * of them is -ENOTTY. */
	struct cusemu_kernel_step native[2];
	/* What "not mine" (-ENOIOCTLCMD) from a native method becomes. */
	int native_not_mine;
	/* 32-bit callers: this method first, when the device has it; its
	 * "not mine" goes on to the table, or is -ENOTTY without one. */
	struct cusemu_kernel_step compat;
	/*
	 * The global ioctl32 table serves what the compat method did not
	 * (no entry: -EINVAL), under the big lock, and devices register
	 * their compat rows in it.
	 */
	bool global_table;
};

/* A descriptor's steps: LOCKED(IOCTL) is ->ioctl under the big lock. */
#define LOCKED(m) { CUSEMU_METHOD_##m, true }
#define UNLOCKED(m) { CUSEMU_METHOD_##m, false }

#define CUSEMU_DEFAULT_KERNEL_MODEL "modern"

/*
 * Every model of this program, oldest first, NULL-terminated: generated
 * from the lists of kernel/meson.build, one table per program (cusemud's
 * has the installed models, cusemud-test's the test models too).
 */
extern const struct cusemu_kernel_model *const cusemu_kernel_models[];
const struct cusemu_kernel_model *cusemu_kernel_model_find(const char *name);

#endif
