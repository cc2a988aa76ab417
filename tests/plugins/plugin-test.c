/* SPDX-License-Identifier: MIT */
/*
 * Plugins for test-cli's refusals, one source built several ways: a good
 * one (models "plugtest" and "plugnap"), one without the entry symbol, one
 * built for another API version, one whose model takes a built-in's
 * name, and one with two models of one name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cusemu/plugin.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"
#include "plugtest.h"

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

/* The naps under way, for "cusemuctl device plugnapN status". */
static gint napping;

/* The dispatcher fetched the payload (an _IOC row): the nap happens once. */
static long plugnap_nap(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	__u32 ms;

	if (cusemu_get_user(ms, arg))
		return -EFAULT;
	if (ms > PLUGTEST_NAP_MAX_MS)
		return -EINVAL;
	g_atomic_int_inc(&napping);
	cusemu_msleep(ms);
	g_atomic_int_add(&napping, -1);
	return 0;
}

/*
 * "status": how many calls nap now, so a test knows one is inside.
 * "kernel": the kernel model and version the device sees, as a model in
 * a host asks them.
 */
static int plugnap_control(struct cusemu_device *dev, char **argv,
			   GString *out)
{
	unsigned int v = cusemu_device_kernel_version(dev);

	if (argv[0] && !strcmp(argv[0], "kernel") && !argv[1]) {
		g_string_append_printf(out, "kernel: %s %u.%u.%u\n",
				       cusemu_device_kernel_model(dev), v >> 16,
				       (v >> 8) & 0xff, v & 0xff);
		return 0;
	}
	if (!argv[0] || strcmp(argv[0], "status") || argv[1]) {
		g_string_append(out, "the requests are status and kernel");
		return -EINVAL;
	}
	g_string_append_printf(out, "napping: %d\n",
			       g_atomic_int_get(&napping));
	return 0;
}

/* A driver of 2.6.11's time: ->ioctl only, its 32-bit command in the
 * global ioctl32 table with a handler of its own. */
static long plugnap_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	if (cmd != PLUGTEST_NAP)
		return -ENOTTY;
	return plugnap_nap(dev, file, cmd, arg);
}

static const struct cusemu_ioctl plugnap_compat[] = {
	CUSEMU_IOCTL_IOC(PLUGTEST_NAP, plugnap_nap),
	CUSEMU_IOCTL_END
};

/* In every variant; the good one serves it. */
__attribute__((unused)) static const struct cusemu_device_model plugnap_model = {
#ifdef PLUGTEST_TWICE
	.name = "plugtest",
#else
	.name = "plugnap",
#endif
	.summary = "a 2.6.11-era model from a plugin whose 32-bit command "
		   "sleeps in the global ioctl32 table, for the tests",
	.node_prefix = "plugnap",
	.ioctl = plugnap_ioctl,
	.compat_table = plugnap_compat,
	.control = plugnap_control,
};

/* Says so each time the loader runs the plugin's constructors, if asked. */
__attribute__((constructor)) static void plugtest_constructor(void)
{
	if (getenv("PLUGTEST_SAY_LOADED"))
		fputs("plugtest: constructor run\n", stderr);
}

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
CUSEMU_PLUGIN(&plugtest_model, &plugnap_model);
#endif
