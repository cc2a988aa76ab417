/* SPDX-License-Identifier: MIT */
/*
 * probe: a device whose handlers report how each ioctl reached them, to
 * replay the 2004 designs. Its `methods` key narrows the methods it offers,
 * so one model plays a legacy driver (methods=ioctl) or a modern one.
 */
#define G_LOG_DOMAIN "cusemu-probe"

#include <string.h>

#include <glib.h>

#include "cusemu/abi/probe.h"
#include "cusemu/device.h"
#include "cusemu/report.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"

static long probe_report(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	return cusemu_put_report(arg);
}

static uint32_t packed_report(void)
{
	struct cusemu_ioctl_report r = cusemu_report_current();

	return r.method | r.big_lock_depth << 8 | r.compat << 16;
}

static long probe_who(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user((unsigned long)packed_report(), arg);
}

static long probe_who32(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user(packed_report(), arg);
}

static long probe_claim(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	return packed_report();
}

static const struct {
	const char *name;
	enum cusemu_method bit;
} method_names[] = {
	{ "ioctl", CUSEMU_METHOD_IOCTL },
	{ "unlocked_ioctl", CUSEMU_METHOD_UNLOCKED_IOCTL },
	{ "compat_ioctl", CUSEMU_METHOD_COMPAT_IOCTL },
	{ "ioctl_native", CUSEMU_METHOD_IOCTL_NATIVE },
	{ "ioctl_compat", CUSEMU_METHOD_IOCTL_COMPAT },
};

static int parse_methods(const char *list, unsigned int *mask, char **why)
{
	g_auto(GStrv) names = g_strsplit(list, "+", -1);

	if (!strcmp(list, "all")) {
		*mask = CUSEMU_METHODS_ALL;
		return 0;
	}
	*mask = 0;
	for (unsigned int i = 0; names[i]; i++) {
		unsigned int j;

		for (j = 0; j < G_N_ELEMENTS(method_names); j++)
			if (!strcmp(names[i], method_names[j].name))
				break;
		if (j == G_N_ELEMENTS(method_names)) {
			*why = g_strdup_printf(
				"unknown method '%s' in methods=; use all, or "
				"names joined by '+' from ioctl, unlocked_ioctl, "
				"compat_ioctl, ioctl_native, ioctl_compat",
				names[i]);
			return -EINVAL;
		}
		*mask |= method_names[j].bit;
	}
	return 0;
}

static int probe_probe(struct cusemu_device *dev, char **why)
{
	unsigned int methods;
	int err = parse_methods(cusemu_device_param_str(dev, "methods"),
				&methods, why);

	if (!err)
		cusemu_device_set_methods(dev, methods);
	return err;
}

static const struct cusemu_ioctl probe_native[] = {
	CUSEMU_IOCTL_IOC(PROBE_REPORT, probe_report),
	CUSEMU_IOCTL_IOC(PROBE_WHO, probe_who),
	CUSEMU_IOCTL_IOC(PROBE_NATIVE_ONLY, probe_report),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl probe_compat[] = {
	CUSEMU_COMPAT_SAME(PROBE_REPORT),
	CUSEMU_IOCTL_IOC(PROBE_WHO32, probe_who32),
	CUSEMU_IOCTL_NONE(PROBE_CLAIM_FIOC_READ, probe_claim),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param probe_params[] = {
	{ .key = "methods", .type = CUSEMU_PARAM_STRING, .default_value = "all",
	  .help = "methods offered: all, or e.g. ioctl or "
		  "unlocked_ioctl+compat_ioctl" },
	CUSEMU_PARAM_END
};

const struct cusemu_device_model cusemu_model_probe = {
	.name = "probe",
	.summary = "reports the method and lock each ioctl reached it through",
	.node_prefix = "probe",
	.params = probe_params,
	.probe = probe_probe,
	.native_table = probe_native,
	.compat_table = probe_compat,
};
