/* SPDX-License-Identifier: MIT */
/*
 * watchdog: the ABI of <linux/watchdog.h> with the semantics of the kernel's
 * drivers/watchdog/watchdog_dev.c. Nothing reboots: an expiry is an emulated
 * reset, kept in the boot status, the statistics and the log.
 *
 * It uses the SDK's portable surface alone: cusemu-kmod builds this file,
 * unchanged, as a kernel module (docs/kernel-module.md).
 */
#include <stdint.h>
#include <string.h>

#include <linux/watchdog.h>

#include "cusemu/device.h"
#include "cusemu/lock.h"
#include "cusemu/log.h"
#include "cusemu/memory.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"

/* The kernel refuses timeouts it cannot count in milliseconds. */
#define WD_TIMEOUT_LIMIT (UINT32_MAX / 1000)

#define USEC_PER_S 1000000
#define WD_NEVER INT64_MAX

/*
 * CARDRESET too: the emulated reset shows in the boot status, and wdctl
 * shows only the flags a device claims in its options.
 */
#define WD_OPTIONS                                                     \
	(WDIOF_SETTIMEOUT | WDIOF_KEEPALIVEPING | WDIOF_MAGICCLOSE |   \
	 WDIOF_PRETIMEOUT | WDIOF_CARDRESET)

/* The boot status bits watchdog_get_status() passes on to GETSTATUS. */
#define WD_BOOTSTATUS_BITS                                             \
	(WDIOF_CARDRESET | WDIOF_OVERHEAT | WDIOF_FANFAULT |           \
	 WDIOF_EXTERN1 | WDIOF_EXTERN2 | WDIOF_POWERUNDER |            \
	 WDIOF_POWEROVER)

struct wd {
	struct cusemu_device *dev;
	struct cusemu_mutex lock;
	struct cusemu_timer *timer;	/* the next deadline */

	/* From the configuration; a reset brings the timeouts back. */
	struct watchdog_info info;
	unsigned int min_timeout, max_timeout;
	unsigned int boot_timeout, boot_pretimeout;
	unsigned int temp;	/* 0: no thermometer */
	bool nowayout;

	/* What the kernel keeps in watchdog_device and watchdog_core_data. */
	unsigned int timeout, pretimeout;
	unsigned int bootstatus;
	bool dev_open;		/* _WDOG_DEV_OPEN: one opener at a time */
	bool active;		/* WDOG_ACTIVE: counting down */
	bool allow_release;	/* _WDOG_ALLOW_RELEASE: a 'V' was written */
	bool keepalive;		/* _WDOG_KEEPALIVE: pinged since GETSTATUS */
	bool pretimeout_done;	/* reported for this period already */
	int64_t last_keepalive;	/* monotonic, microseconds */
	unsigned int resets;
};

/* Monotonic time in microseconds. */
static int64_t wd_now(void)
{
	return (int64_t)(cusemu_time_ns() / 1000);
}

static int64_t wd_expiry(const struct wd *w)
{
	return w->last_keepalive + (int64_t)w->timeout * USEC_PER_S;
}

/* The pretimeout point of this period, however it was reported. */
static int64_t wd_pretimeout_point(const struct wd *w)
{
	if (!w->pretimeout)
		return WD_NEVER;
	return w->last_keepalive +
	       (int64_t)(w->timeout - w->pretimeout) * USEC_PER_S;
}

/* When the timer has something to do next; WD_NEVER: never. */
static int64_t wd_next_event(const struct wd *w)
{
	int64_t expiry = wd_expiry(w), pre = wd_pretimeout_point(w);

	if (!w->active)
		return WD_NEVER;
	if (w->pretimeout_done || expiry < pre)
		return expiry;
	return pre;
}

/*
 * What a reboot would leave behind: a stopped watchdog with its configured
 * timeouts, and the reason in the boot status.
 */
static void wd_reset(struct cusemu_device *dev, struct wd *w)
{
	w->active = false;
	w->allow_release = false;
	w->keepalive = false;
	w->timeout = w->boot_timeout;
	w->pretimeout = w->boot_pretimeout;
	w->bootstatus |= WDIOF_CARDRESET;
	w->resets++;
	cusemu_dev_info(dev, "timeout expired: emulated reset (%u so far), "
			"nothing reboots", w->resets);
	cusemu_device_count_event(dev, "expired");
}

/*
 * Act on every deadline that has passed. Handlers call it too, so that what
 * a client sees does not depend on when the timer thread got to run.
 */
static void wd_catch_up(struct cusemu_device *dev, struct wd *w, int64_t now)
{
	if (!w->active)
		return;
	if (!w->pretimeout_done && now >= wd_pretimeout_point(w)) {
		w->pretimeout_done = true;
		/* What the kernel's noop pretimeout governor says. */
		cusemu_dev_info(dev, "pretimeout event");
		cusemu_device_count_event(dev, "pretimeout");
	}
	if (now >= wd_expiry(w))
		wd_reset(dev, w);
}

/*
 * The timer at the next deadline, if any; w->lock held, so that the
 * deadline set last is the one of the state as it is (the timer's
 * function takes w->lock, never the other way round).
 */
static void wd_arm(struct wd *w, int64_t now)
{
	int64_t next = wd_next_event(w);

	if (next != WD_NEVER)
		cusemu_timer_start(w->timer,
				   next > now ? (uint64_t)(next - now) * 1000 : 0);
}

/* The timer's function: the deadlines that passed, and the next one. */
static void wd_tick(void *data)
{
	struct wd *w = data;
	int64_t now = wd_now();

	cusemu_mutex_lock(&w->lock);
	wd_catch_up(w->dev, w, now);
	wd_arm(w, now);
	cusemu_mutex_unlock(&w->lock);
}

/* The device, locked, with the deadlines that passed acted on. */
static struct wd *wd_get(struct cusemu_device *dev)
{
	struct wd *w = dev->priv;

	cusemu_mutex_lock(&w->lock);
	wd_catch_up(dev, w, wd_now());
	return w;
}

/* Unlocked, the timer set for what changed. */
static void wd_put(struct wd *w)
{
	wd_arm(w, wd_now());
	cusemu_mutex_unlock(&w->lock);
}

static void wd_restart_period(struct wd *w)
{
	w->keepalive = true;
	w->last_keepalive = wd_now();
	w->pretimeout_done = false;
}

/* watchdog_ping(): a stopped watchdog ignores pings. */
static void wd_ping(struct wd *w)
{
	if (w->active)
		wd_restart_period(w);
}

static void wd_start(struct wd *w)
{
	if (w->active)
		return;
	w->active = true;
	wd_restart_period(w);
}

static long wd_stop(struct cusemu_device *dev, struct wd *w)
{
	if (!w->active)
		return 0;
	if (w->nowayout) {
		cusemu_dev_info(dev, "nowayout prevents watchdog being stopped!");
		return -EBUSY;
	}
	w->active = false;
	return 0;
}

/* Whole seconds to the expiry, rounded up: a fresh period shows all of it. */
static unsigned int wd_timeleft(const struct wd *w)
{
	int64_t left;

	if (!w->active)
		return 0;
	left = wd_expiry(w) - wd_now();
	if (left <= 0)
		return 0;
	return (unsigned int)((left + USEC_PER_S - 1) / USEC_PER_S);
}

static long wd_get_support(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	struct wd *w = dev->priv;

	/* info does not change after probe: no lock. */
	if (cusemu_copy_to_user(arg, &w->info, sizeof(w->info)))
		return -EFAULT;
	return 0;
}

/* WDIOC_GETSTATUS's answer, and the status file's; w->lock held. */
static unsigned int wd_status(struct wd *w)
{
	unsigned int status = w->bootstatus & WD_BOOTSTATUS_BITS;

	if (w->allow_release)
		status |= WDIOF_MAGICCLOSE;
	/* Reading the bit clears it, as test_and_clear_bit() does. */
	if (w->keepalive)
		status |= WDIOF_KEEPALIVEPING;
	w->keepalive = false;
	/* As kernels with CONFIG_WATCHDOG_HRTIMER_PRETIMEOUT (Debian's). */
	status |= WDIOF_PRETIMEOUT;
	return status;
}

static long wd_get_status(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct wd *w = wd_get(dev);
	unsigned int status = wd_status(w);

	wd_put(w);
	return cusemu_put_user(status, arg);
}

static long wd_get_bootstatus(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct wd *w = wd_get(dev);
	unsigned int status = w->bootstatus;

	wd_put(w);
	return cusemu_put_user(status, arg);
}

/*
 * The framework has no GETTEMP: a driver with a thermometer answers it
 * from its own ioctl hook, any other says "not mine". Support is decided
 * before the argument is touched, so a USER row.
 */
static int wd_get_temp_fetch(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct wd *w = dev->priv;

	if (!w->temp)
		return -ENOIOCTLCMD;
	return cusemu_fetch_range(arg, 0, sizeof(int));
}

static long wd_get_temp(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct wd *w = dev->priv;

	return cusemu_put_user((int)w->temp, arg);
}

/*
 * Stop, then start, as watchdog_ioctl() does. With neither bit its error
 * is still the "not mine" of the driver's hook, and that is what callers
 * get (ENOTTY from Linux 6.1 with softdog); legacy drivers said EINVAL.
 */
static long wd_apply_options(struct cusemu_device *dev, struct wd *w,
			     unsigned int val)
{
	long ret = -ENOIOCTLCMD;

	if (val & WDIOS_DISABLECARD) {
		ret = wd_stop(dev, w);
		if (ret < 0)
			return ret;
	}
	if (val & WDIOS_ENABLECARD) {
		wd_start(w);
		ret = 0;
	}
	return ret;
}

/*
 * Commands whose _IOC bits say more than the kernel does: WDIOC_SETOPTIONS
 * is _IOR, yet reads its int; WDIOC_SETPRETIMEOUT is _IOWR, yet writes
 * nothing back. The row names the int to read, and nothing to write.
 */
static int wd_read_int_fetch(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	return cusemu_fetch_range(arg, sizeof(unsigned int), 0);
}

static long wd_set_options(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	unsigned int val;
	struct wd *w;
	long ret;

	if (cusemu_get_user(val, arg))
		return -EFAULT;
	w = wd_get(dev);
	ret = wd_apply_options(dev, w, val);
	wd_put(w);
	return ret;
}

/* _IOR, yet the argument is ignored. */
static long wd_keepalive(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	struct wd *w = wd_get(dev);

	wd_ping(w);
	wd_put(w);
	return 0;
}

/* watchdog_timeout_invalid() with a max_timeout always set. */
static bool wd_timeout_invalid(const struct wd *w, unsigned int t)
{
	return t > WD_TIMEOUT_LIMIT || t < w->min_timeout ||
	       t > w->max_timeout;
}

/* Set, ping, and write back the timeout in effect, as the kernel does. */
static long wd_set_timeout(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	unsigned int val;
	struct wd *w;

	if (cusemu_get_user(val, arg))
		return -EFAULT;
	w = wd_get(dev);
	if (wd_timeout_invalid(w, val)) {
		wd_put(w);
		return -EINVAL;
	}
	w->timeout = val;
	/* A pretimeout that no longer fits is turned off. */
	if (w->pretimeout >= w->timeout)
		w->pretimeout = 0;
	wd_ping(w);
	val = w->timeout;
	wd_put(w);
	return cusemu_put_user(val, arg);
}

static long wd_get_timeout(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	struct wd *w = wd_get(dev);
	unsigned int val = w->timeout;

	wd_put(w);
	return cusemu_put_user(val, arg);
}

/*
 * The new pretimeout counts from the last ping. One whose point has passed
 * already waits for the next period: it can no longer warn ahead.
 */
static long wd_set_pretimeout(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	unsigned int val;
	struct wd *w;

	if (cusemu_get_user(val, arg))
		return -EFAULT;
	w = wd_get(dev);
	if (val && val >= w->timeout) {
		wd_put(w);
		return -EINVAL;
	}
	w->pretimeout = val;
	w->pretimeout_done = wd_now() >= wd_pretimeout_point(w);
	wd_put(w);
	return 0;
}

static long wd_get_pretimeout(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct wd *w = wd_get(dev);
	unsigned int val = w->pretimeout;

	wd_put(w);
	return cusemu_put_user(val, arg);
}

static long wd_get_timeleft(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct wd *w = wd_get(dev);
	unsigned int val = wd_timeleft(w);

	wd_put(w);
	return cusemu_put_user(val, arg);
}

/* Opening /dev/watchdog starts the watchdog; it is single open. */
static int wd_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct wd *w = wd_get(dev);
	int ret = 0;

	if (w->dev_open) {
		ret = -EBUSY;
	} else {
		w->dev_open = true;
		wd_start(w);
	}
	wd_put(w);
	return ret;
}

/*
 * Only a magic close stops the watchdog; otherwise it keeps running, pinged
 * once more, and the log says so as the kernel does.
 */
static void wd_release(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct wd *w = wd_get(dev);
	long err = 0;

	if (w->active) {
		err = w->allow_release ? wd_stop(dev, w) : -EBUSY;
		w->allow_release = false;
	}
	if (err < 0) {
		cusemu_dev_info(dev, "watchdog did not stop!");
		wd_ping(w);
	}
	w->dev_open = false;
	wd_put(w);
}

/* Any write pings; a 'V' anywhere in it allows the next close to stop. */
static ssize_t wd_write(struct cusemu_device *dev, struct cusemu_file *file,
			const char *buf, size_t size)
{
	struct wd *w;

	if (!size)
		return 0;
	w = wd_get(dev);
	w->allow_release = memchr(buf, 'V', size) != NULL;
	wd_ping(w);
	wd_put(w);
	return (ssize_t)size;
}

static int wd_check_params(struct cusemu_device *dev, char **why)
{
	const char *identity = cusemu_device_param_str(dev, "identity");
	uint64_t timeout = cusemu_device_param_u64(dev, "timeout");
	uint64_t min = cusemu_device_param_u64(dev, "min_timeout");
	uint64_t max = cusemu_device_param_u64(dev, "max_timeout");
	uint64_t pre = cusemu_device_param_u64(dev, "pretimeout");

	if (strlen(identity) >= sizeof(((struct watchdog_info *)0)->identity))
		*why = cusemu_strdup_printf("identity '%s' is longer than 31 "
					    "characters", identity);
	else if (min > max)
		*why = cusemu_strdup_printf("min_timeout %llu is above "
					    "max_timeout %llu",
					    (unsigned long long)min,
					    (unsigned long long)max);
	else if (timeout < min || timeout > max)
		*why = cusemu_strdup_printf("timeout %llu is outside "
					    "min_timeout..max_timeout "
					    "(%llu..%llu)",
					    (unsigned long long)timeout,
					    (unsigned long long)min,
					    (unsigned long long)max);
	else if (pre && pre >= timeout)
		*why = cusemu_strdup_printf("pretimeout %llu is not below "
					    "timeout %llu",
					    (unsigned long long)pre,
					    (unsigned long long)timeout);
	else
		return 0;
	return -EINVAL;
}

static int wd_probe(struct cusemu_device *dev, char **why)
{
	const char *identity = cusemu_device_param_str(dev, "identity");
	struct wd *w;
	int ret;

	ret = wd_check_params(dev, why);
	if (ret)
		return ret;
	w = cusemu_new0(struct wd);
	if (!w)
		return -ENOMEM;
	w->timer = cusemu_timer_new(wd_tick, w);
	if (!w->timer) {
		cusemu_free(w);
		return -ENOMEM;
	}
	w->dev = dev;
	cusemu_mutex_init(&w->lock);
	w->temp = cusemu_device_param_u64(dev, "temp");
	w->info.options = WD_OPTIONS | (w->temp ? WDIOF_OVERHEAT : 0);
	w->info.firmware_version =
		cusemu_device_param_u64(dev, "firmware_version");
	memcpy(w->info.identity, identity, strlen(identity));
	w->min_timeout = cusemu_device_param_u64(dev, "min_timeout");
	w->max_timeout = cusemu_device_param_u64(dev, "max_timeout");
	w->boot_timeout = cusemu_device_param_u64(dev, "timeout");
	w->boot_pretimeout = cusemu_device_param_u64(dev, "pretimeout");
	w->timeout = w->boot_timeout;
	w->pretimeout = w->boot_pretimeout;
	w->nowayout = cusemu_device_param_bool(dev, "nowayout");
	dev->priv = w;
	return 0;
}

static void wd_remove(struct cusemu_device *dev)
{
	struct wd *w = dev->priv;

	cusemu_timer_free(w->timer);
	cusemu_mutex_destroy(&w->lock);
	cusemu_free(w);
}

static const struct cusemu_ioctl wd_native[] = {
	CUSEMU_IOCTL_IOC(WDIOC_GETSUPPORT, wd_get_support),
	CUSEMU_IOCTL_IOC(WDIOC_GETSTATUS, wd_get_status),
	CUSEMU_IOCTL_IOC(WDIOC_GETBOOTSTATUS, wd_get_bootstatus),
	CUSEMU_IOCTL_USER(WDIOC_GETTEMP, wd_get_temp_fetch, wd_get_temp),
	CUSEMU_IOCTL_USER(WDIOC_SETOPTIONS, wd_read_int_fetch, wd_set_options),
	CUSEMU_IOCTL_NONE(WDIOC_KEEPALIVE, wd_keepalive),
	CUSEMU_IOCTL_IOC(WDIOC_SETTIMEOUT, wd_set_timeout),
	CUSEMU_IOCTL_IOC(WDIOC_GETTIMEOUT, wd_get_timeout),
	CUSEMU_IOCTL_USER(WDIOC_SETPRETIMEOUT, wd_read_int_fetch,
			  wd_set_pretimeout),
	CUSEMU_IOCTL_IOC(WDIOC_GETPRETIMEOUT, wd_get_pretimeout),
	CUSEMU_IOCTL_IOC(WDIOC_GETTIMELEFT, wd_get_timeleft),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param wd_params[] = {
	{ .key = "identity", .type = CUSEMU_PARAM_STRING,
	  .default_value = "cusemu watchdog",
	  .help = "what WDIOC_GETSUPPORT names the card (at most 31 "
		  "characters)" },
	{ .key = "timeout", .type = CUSEMU_PARAM_UINT, .default_value = "60",
	  .help = "seconds without a ping before the emulated reset",
	  .min = 1, .max = WD_TIMEOUT_LIMIT },
	{ .key = "min_timeout", .type = CUSEMU_PARAM_UINT,
	  .default_value = "1",
	  .help = "smallest timeout WDIOC_SETTIMEOUT takes",
	  .min = 1, .max = WD_TIMEOUT_LIMIT },
	{ .key = "max_timeout", .type = CUSEMU_PARAM_UINT,
	  .default_value = "3600",
	  .help = "largest timeout WDIOC_SETTIMEOUT takes",
	  .min = 1, .max = WD_TIMEOUT_LIMIT },
	{ .key = "pretimeout", .type = CUSEMU_PARAM_UINT,
	  .default_value = "0",
	  .help = "seconds before the expiry to report a pretimeout event "
		  "(0: none)",
	  .min = 0, .max = WD_TIMEOUT_LIMIT },
	{ .key = "nowayout", .type = CUSEMU_PARAM_BOOL,
	  .default_value = "false",
	  .help = "once started, the watchdog cannot be stopped" },
	{ .key = "temp", .type = CUSEMU_PARAM_UINT, .default_value = "0",
	  .help = "what WDIOC_GETTEMP reports, in degrees Fahrenheit "
		  "(0: no thermometer, ENOTTY)",
	  .min = 0, .max = 1000 },
	{ .key = "firmware_version", .type = CUSEMU_PARAM_UINT,
	  .default_value = "0",
	  .help = "firmware version WDIOC_GETSUPPORT reports",
	  .min = 0, .max = UINT32_MAX },
	CUSEMU_PARAM_END
};

/*
 * The watchdog class's files (drivers/watchdog/watchdog_dev.c), each as
 * the framework prints it; status clears the keepalive bit as
 * WDIOC_GETSTATUS does.
 */
enum wd_attr {
	WD_ATTR_IDENTITY, WD_ATTR_STATE, WD_ATTR_STATUS, WD_ATTR_BOOTSTATUS, WD_ATTR_TIMEOUT,
	WD_ATTR_MIN_TIMEOUT, WD_ATTR_MAX_TIMEOUT, WD_ATTR_PRETIMEOUT, WD_ATTR_TIMELEFT,
	WD_ATTR_NOWAYOUT, WD_ATTR_OPTIONS, WD_ATTR_FW_VERSION,
};

static ssize_t wd_show(struct cusemu_device *dev, enum wd_attr which,
		       char *buf, size_t size)
{
	struct wd *w = wd_get(dev);
	const char *text = NULL;
	bool hex = false;
	long long v = 0;
	ssize_t n;

	switch (which) {
	case WD_ATTR_IDENTITY:
		text = (const char *)w->info.identity;
		break;
	case WD_ATTR_STATE:
		text = w->active ? "active" : "inactive";
		break;
	case WD_ATTR_STATUS:
		hex = true;
		v = wd_status(w);
		break;
	case WD_ATTR_OPTIONS:
		hex = true;
		v = w->info.options;
		break;
	case WD_ATTR_NOWAYOUT:
		v = w->nowayout;
		break;
	case WD_ATTR_FW_VERSION:
		v = (int)w->info.firmware_version;	/* "%d" */
		break;
	case WD_ATTR_BOOTSTATUS:
		v = w->bootstatus;
		break;
	case WD_ATTR_TIMEOUT:
		v = w->timeout;
		break;
	case WD_ATTR_MIN_TIMEOUT:
		v = w->min_timeout;
		break;
	case WD_ATTR_MAX_TIMEOUT:
		v = w->max_timeout;
		break;
	case WD_ATTR_PRETIMEOUT:
		v = w->pretimeout;
		break;
	case WD_ATTR_TIMELEFT:
		v = wd_timeleft(w);
		break;
	}
	if (text)
		n = cusemu_snprintf(buf, size, "%s\n", text);
	else if (hex)
		n = cusemu_snprintf(buf, size, "0x%llx\n", v);
	else
		n = cusemu_snprintf(buf, size, "%lld\n", v);
	wd_put(w);
	return n;
}

#define WD_SHOW(name, which)                                               \
	static ssize_t wd_show_##name(struct cusemu_device *dev, char *buf, \
				      size_t size)                          \
	{                                                                  \
		return wd_show(dev, which, buf, size);                      \
	}
WD_SHOW(identity, WD_ATTR_IDENTITY)
WD_SHOW(state, WD_ATTR_STATE)
WD_SHOW(status, WD_ATTR_STATUS)
WD_SHOW(bootstatus, WD_ATTR_BOOTSTATUS)
WD_SHOW(timeout, WD_ATTR_TIMEOUT)
WD_SHOW(min_timeout, WD_ATTR_MIN_TIMEOUT)
WD_SHOW(max_timeout, WD_ATTR_MAX_TIMEOUT)
WD_SHOW(pretimeout, WD_ATTR_PRETIMEOUT)
WD_SHOW(timeleft, WD_ATTR_TIMELEFT)
WD_SHOW(nowayout, WD_ATTR_NOWAYOUT)
WD_SHOW(options, WD_ATTR_OPTIONS)
WD_SHOW(fw_version, WD_ATTR_FW_VERSION)

static const struct cusemu_attr wd_attrs[] = {
	{ "identity", wd_show_identity },
	{ "state", wd_show_state },
	{ "status", wd_show_status },
	{ "bootstatus", wd_show_bootstatus },
	{ "timeout", wd_show_timeout },
	{ "min_timeout", wd_show_min_timeout },
	{ "max_timeout", wd_show_max_timeout },
	{ "pretimeout", wd_show_pretimeout },
	{ "timeleft", wd_show_timeleft },
	{ "nowayout", wd_show_nowayout },
	{ "options", wd_show_options },
	{ "fw_version", wd_show_fw_version },
	CUSEMU_ATTR_END
};

const struct cusemu_device_model cusemu_model_watchdog = {
	.name = "watchdog",
	.summary = "a watchdog timer (WDIOC_*) whose expiry is an emulated "
		   "reset",
	.node_prefix = "watchdog",
	.params = wd_params,
	.probe = wd_probe,
	.remove = wd_remove,
	.open = wd_open,
	.release = wd_release,
	.write = wd_write,
	.native_table = wd_native,
	/* An int or a struct watchdog_info: one layout on both ABIs. */
	.compat_ptr_ioctl = true,
	.sysfs_class = "watchdog",
	.attrs = wd_attrs,
};
