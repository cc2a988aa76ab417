/* SPDX-License-Identifier: MIT */
/*
 * kfixed: a model on the portable surface alone that builds only with the
 * define its plugin's build gives it (-DKFIXED), as a model whose fix is
 * behind a define: test-kmod builds it as a module with cusemu-kmod, which
 * must give the module's build the same define.
 */
#include "cusemu/device.h"
#include "cusemu/plugin.h"

#ifndef KFIXED
#error "kfixed built without its plugin's -DKFIXED"
#endif

static const struct cusemu_ioctl kfixed_native[] = {
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model kfixed_model = {
	.name = "kfixed",
	.summary = "a model that builds only with its plugin's define",
	.node_prefix = "kfixed",
	.native_table = kfixed_native,
};

CUSEMU_PLUGIN(&kfixed_model);
