/* SPDX-License-Identifier: MIT */
/*
 * slow: a driver whose ioctl holds the CPU or sleeps for a set time, to show
 * one slow driver under the big lock delaying every other device.
 */
#define G_LOG_DOMAIN "cusemu-slow"

#include <string.h>

#include <glib.h>

#include "cusemu/abi/slow.h"
#include "cusemu/device.h"
#include "cusemu/report.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"

/* SLOW_SLEEP_REPORT's nap: long enough to be a real sleep. */
#define SLOW_REPORT_SLEEP_US 1000u

struct slow {
	unsigned int hold_us;
	/*
	 * hold=sleep: cusemu_usleep(), which lets go of the big lock like a
	 * driver calling schedule(); hold=busy keeps it, and the CPU.
	 */
	bool sleep;
};

/* A sleep ends early when the client gives up; a busy hold does not. */
static long slow_hold(const struct slow *s, unsigned int us)
{
	gint64 end;

	if (s->sleep) {
		cusemu_usleep(us);
		return cusemu_signal_pending() ? -EINTR : 0;
	}
	end = g_get_monotonic_time() + us;
	while (g_get_monotonic_time() < end)
		;
	return 0;
}

static long slow_hold_default(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct slow *s = dev->priv;

	return slow_hold(s, s->hold_us);
}

static long slow_hold_us(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	__u32 us;

	if (cusemu_get_user(us, arg))
		return -EFAULT;
	if (us > SLOW_HOLD_MAX_US)
		return -EINVAL;
	return slow_hold(dev->priv, us);
}

static long slow_report(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	return cusemu_put_report(arg);
}

/*
 * The dispatcher fetched the out range before this runs (an _IOC row), so
 * the sleep happens once, not again on a retry.
 */
static long slow_sleep_report(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	cusemu_usleep(SLOW_REPORT_SLEEP_US);
	return cusemu_put_report(arg);
}

static int slow_probe(struct cusemu_device *dev, char **why)
{
	const char *hold = cusemu_device_param_str(dev, "hold");
	struct slow *s;

	if (strcmp(hold, "busy") && strcmp(hold, "sleep")) {
		*why = g_strdup_printf("hold is busy or sleep, not '%s'", hold);
		return -EINVAL;
	}
	s = g_new0(struct slow, 1);
	s->hold_us = cusemu_device_param_u64(dev, "hold_us");
	s->sleep = !strcmp(hold, "sleep");
	dev->priv = s;
	return 0;
}

static void slow_remove(struct cusemu_device *dev)
{
	g_free(dev->priv);
}

static const struct cusemu_ioctl slow_native[] = {
	CUSEMU_IOCTL_NONE(SLOW_HOLD, slow_hold_default),
	CUSEMU_IOCTL_IOC(SLOW_HOLD_US, slow_hold_us),
	CUSEMU_IOCTL_IOC(SLOW_REPORT, slow_report),
	CUSEMU_IOCTL_IOC(SLOW_SLEEP_REPORT, slow_sleep_report),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param slow_params[] = {
	{ .key = "hold_us", .type = CUSEMU_PARAM_UINT, .default_value = "1000",
	  .help = "microseconds SLOW_HOLD takes",
	  .min = 0, .max = SLOW_HOLD_MAX_US },
	{ .key = "hold", .type = CUSEMU_PARAM_STRING, .default_value = "busy",
	  .help = "busy (spin, keeping the big lock) or sleep (let it go)" },
	CUSEMU_PARAM_END
};

const struct cusemu_device_model cusemu_model_slow = {
	.name = "slow",
	.summary = "an ioctl that spins or sleeps for a set time (SLOW_*)",
	.node_prefix = "slow",
	.params = slow_params,
	.probe = slow_probe,
	.remove = slow_remove,
	.native_table = slow_native,
	/* Every layout is the same on both ABIs. */
	.compat_ptr_ioctl = true,
};
