/* SPDX-License-Identifier: MIT */
/*
 * Plugins for test-cli's refusals, one source built several ways: a good
 * one (model "plugtest"), one without the entry symbol, one built for
 * another API version, and one whose model takes a built-in's name.
 */
#include <sys/ioctl.h>

#include <linux/types.h>

#include "cusemu/plugin.h"
#include "cusemu/uaccess.h"

#define PLUGTEST_GET _IOR('Q', 1, __u32)

static long plugtest_get(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user((__u32)42, arg);
}

static const struct cusemu_ioctl plugtest_native[] = {
	CUSEMU_IOCTL_IOC(PLUGTEST_GET, plugtest_get),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model plugtest_model = {
#ifdef PLUGTEST_CLASH
	.name = "fioc",
#else
	.name = "plugtest",
#endif
	.summary = "a model from a plugin, for the tests",
	.node_prefix = "plugtest",
	.native_table = plugtest_native,
	.compat_ptr_ioctl = true,
};

#if defined(PLUGTEST_NO_SYMBOL)
const struct cusemu_device_model *plugtest_models(void);
const struct cusemu_device_model *plugtest_models(void)
{
	return &plugtest_model;
}
#elif defined(PLUGTEST_API99)
static const struct cusemu_device_model *const models[] = {
	&plugtest_model, NULL
};
__attribute__((visibility("default")))
const struct cusemu_plugin cusemu_plugin = { 99, models };
#else
CUSEMU_PLUGIN(&plugtest_model);
#endif
