/* SPDX-License-Identifier: MIT */
/*
 * rtc: a real-time clock with the ABI of <linux/rtc.h>, served as the
 * kernel's drivers/rtc/dev.c serves it, so that util-linux hwclock works
 * against it. Like a chip with its own oscillator, it keeps its time when
 * the system clock is set: its time is CLOCK_BOOTTIME (which runs on
 * through suspend and never jumps) plus an offset of its own. A timer
 * thread per device raises the update, alarm and periodic interrupts that
 * read() and poll() report.
 */
#define G_LOG_DOMAIN "cusemu-rtc"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <linux/rtc.h>

#include <glib.h>

#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"

/*
 * What an i386 caller sends for the commands whose payload is an unsigned
 * long (fs/compat_ioctl.c, then rtc_dev_compat_ioctl()). The SET forms
 * carry the value itself in arg, on both ABIs.
 */
#define RTC_IRQP_READ32 _IOR('p', 0x0b, __u32)
#define RTC_IRQP_SET32 _IOW('p', 0x0c, __u32)
#define RTC_EPOCH_READ32 _IOR('p', 0x0d, __u32)
#define RTC_EPOCH_SET32 _IOW('p', 0x0e, __u32)

#define NSEC_PER_SEC 1000000000LL
#define SECS_PER_DAY (24 * 60 * 60)
/* How far into its second a clock is when it has just been set. */
#define RTC_SET_PHASE_NS (NSEC_PER_SEC / 2)

/* What the emulated chip can hold: 1970-01-01 to 9999-12-31 23:59:59. */
#define RTC_RANGE_MAX 253402300799LL

/* rtc-cmos's periodic rate at probe, and drivers/char/rtc.c's before it;
 * IRQP_SET changes it. */
#define RTC_DEFAULT_FREQ 1024
/* Drivers with an epoch (drivers/char/rtc.c, alpha) start at 1900. */
#define RTC_DEFAULT_EPOCH 1900

/*
 * How long a blocked read() sleeps before it looks again. Interrupts and
 * the client giving up wake it at once; this only bounds a lost wake-up.
 */
#define RTC_READ_RECHECK_US G_TIME_SPAN_SECOND
/* With nothing armed, the timer thread still wakes now and then. */
#define RTC_IDLE_WAIT_US (60 * G_TIME_SPAN_SECOND)

/*
 * How far ahead the chip's alarm reaches (cmos_validate_alarm()): an
 * MC146818 matches the time of day only; the day-of-month and month alarm
 * registers that ACPI's FADT may name stretch it to a month, then a year.
 */
enum rtc_reach {
	RTC_REACH_DAY,
	RTC_REACH_MONTH,
	RTC_REACH_YEAR,
	RTC_REACH_ANY,
};

static const char *const rtc_reach_names[] = {
	[RTC_REACH_DAY] = "day",
	[RTC_REACH_MONTH] = "month",
	[RTC_REACH_YEAR] = "year",
	[RTC_REACH_ANY] = "any",
};

struct rtc {
	struct cusemu_device *dev;
	/* Set at probe, read-only after. */
	unsigned long features;		/* 1 << RTC_FEATURE_* */
	unsigned long max_freq;
	unsigned long max_year;		/* RTC_SET_TIME past it: EINVAL */
	/* drivers/char/rtc.c of 2.6.10: rates are powers of two, from 2
	 * (every generation before 2.6.11's). */
	bool pow2_rates;
	/* RTC_EPOCH_*: gone from x86's rtc-dev today (ENOTTY): from 5.5,
	 * the modern generation, on. */
	bool has_epoch;
	enum rtc_reach alarm_reach;

	GMutex lock;		/* guards everything below */
	GCond irq_queue;	/* readers wait here for irq_data */
	GCond timer_cond;	/* wakes the timer thread: something changed */
	GThread *timer;
	bool stopping;
	bool busy;		/* open: the node is exclusive, as in dev.c */
	unsigned int readers;	/* reads waiting in irq_queue */

	/*
	 * Emulated time: CLOCK_BOOTTIME plus this, in seconds and ns (0 to
	 * 999999999); ns alone would not reach the year 9999.
	 */
	int64_t offset_sec;
	long offset_nsec;
	unsigned long epoch;

	/*
	 * The kernel's irq_data: the count of interrupts since the last
	 * read in bits 8 and up, RTC_IRQF and the kinds below. One per
	 * device, shared by every reader.
	 */
	uint64_t irq_data;
	bool aie;		/* alarm armed (the kernel's aie_timer) */
	int64_t alarm;		/* in emulated seconds since 1970 */
	bool uie;
	int64_t uie_next;	/* emulated second of the next update */
	bool pie;
	unsigned long irq_freq;
	int64_t pie_next;	/* CLOCK_MONOTONIC ns of the next tick */
};

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The chip's oscillator: setting the system clock does not move it. */
static void rtc_clock(struct timespec *ts)
{
	clock_gettime(CLOCK_BOOTTIME, ts);
}

/* The emulated time at a reading of rtc_clock(). */
static struct timespec rtc_emulated(const struct rtc *r,
				    const struct timespec *real)
{
	struct timespec t = {
		.tv_sec = real->tv_sec + r->offset_sec,
		.tv_nsec = real->tv_nsec + r->offset_nsec,
	};

	if (t.tv_nsec >= NSEC_PER_SEC) {
		t.tv_sec++;
		t.tv_nsec -= NSEC_PER_SEC;
	}
	return t;
}

/* Emulated seconds since 1970, now; r->lock held. */
static int64_t rtc_now(const struct rtc *r)
{
	struct timespec real;

	rtc_clock(&real);
	return rtc_emulated(r, &real).tv_sec;
}

/*
 * Set the time to second t, now; r->lock held. Like the MC146818 once its
 * divider is released, the chip moves on to t + 1 half a second later:
 * hwclock, which cannot tell this node from a CMOS clock, times its
 * RTC_SET_TIME on that (its default --delay of 0.5 s).
 */
static void rtc_set_offset(struct rtc *r, int64_t t)
{
	struct timespec real;

	rtc_clock(&real);
	r->offset_sec = t - real.tv_sec;
	r->offset_nsec = RTC_SET_PHASE_NS - real.tv_nsec;
	if (r->offset_nsec < 0) {
		r->offset_sec--;
		r->offset_nsec += NSEC_PER_SEC;
	}
}

static bool is_leap_year(int64_t year)
{
	return (!(year % 4) && (year % 100)) || !(year % 400);
}

static int month_days(unsigned int mon, int64_t year)
{
	static const unsigned char days[12] = { 31, 28, 31, 30, 31, 30,
						31, 31, 30, 31, 30, 31 };

	return days[mon] + (mon == 1 && is_leap_year(year));
}

/* The kernel's rtc_valid_tm(): -EINVAL for any field out of range. */
static int rtc_valid_tm(const struct rtc_time *tm)
{
	if (tm->tm_year < 70 || tm->tm_year > INT_MAX - 1900 ||
	    (unsigned int)tm->tm_mon >= 12 || tm->tm_mday < 1 ||
	    tm->tm_mday > month_days(tm->tm_mon, (int64_t)tm->tm_year + 1900) ||
	    (unsigned int)tm->tm_hour >= 24 || (unsigned int)tm->tm_min >= 60 ||
	    (unsigned int)tm->tm_sec >= 60)
		return -EINVAL;
	return 0;
}

/* The kernel's mktime64(), on a valid tm. */
static int64_t rtc_tm_to_time64(const struct rtc_time *tm)
{
	int64_t year = (int64_t)tm->tm_year + 1900;
	int64_t mon = tm->tm_mon + 1;

	/* March first: the leap day ends the year. */
	mon -= 2;
	if (mon <= 0) {
		mon += 12;
		year -= 1;
	}
	return (((year / 4 - year / 100 + year / 400 + 367 * mon / 12 +
		  tm->tm_mday + year * 365 - 719499) * 24 + tm->tm_hour) * 60 +
		tm->tm_min) * 60 + tm->tm_sec;
}

static void rtc_time64_to_tm(int64_t t, struct rtc_time *tm)
{
	time_t tt = (time_t)t;
	struct tm g;

	gmtime_r(&tt, &g);
	*tm = (struct rtc_time){
		.tm_sec = g.tm_sec, .tm_min = g.tm_min, .tm_hour = g.tm_hour,
		.tm_mday = g.tm_mday, .tm_mon = g.tm_mon, .tm_year = g.tm_year,
		.tm_wday = g.tm_wday, .tm_yday = g.tm_yday, .tm_isdst = 0,
	};
}

/* rtc_valid_tm(), then the chip's range: rtc_valid_range() says -ERANGE. */
static int rtc_check_tm(const struct rtc_time *tm)
{
	int err = rtc_valid_tm(tm);

	if (err)
		return err;
	return rtc_tm_to_time64(tm) > RTC_RANGE_MAX ? -ERANGE : 0;
}

static bool rtc_has(const struct rtc *r, unsigned int feature)
{
	return r->features & (1ul << feature);
}

/* The timer thread recomputes its deadline; r->lock held. */
static void rtc_rearm(struct rtc *r)
{
	g_cond_signal(&r->timer_cond);
}

static void rtc_start_uie(struct rtc *r)
{
	r->uie_next = rtc_now(r) + 1;
}

static void rtc_start_pie(struct rtc *r)
{
	r->pie_next = monotonic_ns() + NSEC_PER_SEC / r->irq_freq;
}

/* ---- time */

static long rtc_rd_time(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;
	struct rtc_time tm;

	g_mutex_lock(&r->lock);
	rtc_time64_to_tm(rtc_now(r), &tm);
	g_mutex_unlock(&r->lock);
	return cusemu_copy_to_user(arg, &tm, sizeof(tm)) ? -EFAULT : 0;
}

/* The host clock is left alone: only this device's offset changes. */
static long rtc_set_time(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;
	struct rtc_time tm;
	int err;

	if (cusemu_copy_from_user(&tm, arg, sizeof(tm)))
		return -EFAULT;
	err = rtc_check_tm(&tm);
	if (err)
		return err;
	/* The chip's own limit, which its driver's set_time refuses: an
	 * MC146818 (rtc-cmos) holds no year past 2069. */
	if (tm.tm_year + 1900 > (int)r->max_year)
		return -EINVAL;
	g_mutex_lock(&r->lock);
	rtc_set_offset(r, rtc_tm_to_time64(&tm));
	/* rtc_set_time() turns UIE off and on again around the set. */
	if (r->uie)
		rtc_start_uie(r);
	/* An armed alarm the new time has passed fires now. */
	rtc_rearm(r);
	g_mutex_unlock(&r->lock);
	return 0;
}

/* ---- alarm */

/*
 * The last second an alarm set at now may name, as rtc-cmos's
 * cmos_validate_alarm() computes it: a day less a second, or the same
 * time a month or a year on (the day clamped to that month's last).
 */
static int64_t rtc_alarm_limit(const struct rtc *r, int64_t now)
{
	struct rtc_time max;

	rtc_time64_to_tm(now, &max);
	switch (r->alarm_reach) {
	case RTC_REACH_DAY:
		return now + SECS_PER_DAY - 1;
	case RTC_REACH_MONTH:
		if (++max.tm_mon == 12) {
			max.tm_mon = 0;
			max.tm_year++;
		}
		break;
	case RTC_REACH_YEAR:
		max.tm_year++;
		break;
	default:
		return INT64_MAX;
	}
	max.tm_mday = MIN(max.tm_mday,
			  month_days(max.tm_mon, (int64_t)max.tm_year + 1900));
	return rtc_tm_to_time64(&max) - 1;
}

/*
 * rtc_timer_enqueue() of the alarm: the chip's driver is asked, and may
 * refuse with -EINVAL, only when the alarm is the next timer, which it is
 * not while the update interrupt runs; one already past is not asked and
 * fires now (__rtc_set_alarm's -ETIME). r->lock held.
 */
static int rtc_arm_alarm(struct rtc *r)
{
	int64_t now = rtc_now(r);

	if (!r->uie && r->alarm > now && r->alarm > rtc_alarm_limit(r, now))
		return -EINVAL;
	r->aie = true;
	rtc_rearm(r);
	return 0;
}

/*
 * rtc_set_alarm(): the time of an alarm, armed or not. A refused one keeps
 * its time, disarmed, as the kernel's aie_timer does; r->lock held.
 */
static int rtc_do_set_alarm(struct rtc *r, int64_t when, bool enabled)
{
	r->alarm = when;
	r->aie = false;
	rtc_rearm(r);
	return enabled ? rtc_arm_alarm(r) : 0;
}

static long rtc_alarm_to_user(struct rtc *r, cusemu_uptr_t arg, bool wkalrm)
{
	struct rtc_wkalrm alarm = { 0 };

	if (!rtc_has(r, RTC_FEATURE_ALARM))
		return -EINVAL;
	g_mutex_lock(&r->lock);
	alarm.enabled = r->aie;
	rtc_time64_to_tm(r->alarm, &alarm.time);
	g_mutex_unlock(&r->lock);
	if (wkalrm)
		return cusemu_copy_to_user(arg, &alarm, sizeof(alarm)) ? -EFAULT
									: 0;
	return cusemu_copy_to_user(arg, &alarm.time, sizeof(alarm.time))
		       ? -EFAULT
		       : 0;
}

static long rtc_alm_read(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	return rtc_alarm_to_user(dev->priv, arg, false);
}

static long rtc_wkalm_rd(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	return rtc_alarm_to_user(dev->priv, arg, true);
}

/*
 * RTC_ALM_SET gives only a time of day: the date is today's, or
 * tomorrow's when that time has passed, and the alarm is left disarmed
 * until RTC_AIE_ON (dev.c).
 */
static long rtc_alm_set(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;
	struct rtc_time tm, today;
	int64_t now, then;
	int err;

	if (cusemu_copy_from_user(&tm, arg, sizeof(tm)))
		return -EFAULT;
	g_mutex_lock(&r->lock);
	now = rtc_now(r);
	rtc_time64_to_tm(now, &today);
	tm.tm_mday = today.tm_mday;
	tm.tm_mon = today.tm_mon;
	tm.tm_year = today.tm_year;
	err = rtc_valid_tm(&tm);
	if (!err && !rtc_has(r, RTC_FEATURE_ALARM))
		err = -EINVAL;
	if (!err) {
		then = rtc_tm_to_time64(&tm);
		if (then < now)
			then += SECS_PER_DAY;
		rtc_do_set_alarm(r, then, false);
	}
	g_mutex_unlock(&r->lock);
	return err;
}

/* A full date; armed at once when enabled, firing now if it is past. */
static long rtc_wkalm_set(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;
	struct rtc_wkalrm alarm;
	int err;

	if (cusemu_copy_from_user(&alarm, arg, sizeof(alarm)))
		return -EFAULT;
	if (!rtc_has(r, RTC_FEATURE_ALARM))
		return -EINVAL;
	err = rtc_check_tm(&alarm.time);
	if (err)
		return err;
	g_mutex_lock(&r->lock);
	err = rtc_do_set_alarm(r, rtc_tm_to_time64(&alarm.time),
			       alarm.enabled);
	g_mutex_unlock(&r->lock);
	return err;
}

/* ---- interrupt enables */

static long rtc_aie(struct cusemu_device *dev, struct cusemu_file *file,
		    unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;
	int err = 0;

	if (!rtc_has(r, RTC_FEATURE_ALARM))
		return -EINVAL;
	g_mutex_lock(&r->lock);
	if (cmd == RTC_AIE_OFF) {
		r->aie = false;
		rtc_rearm(r);
	} else if (!r->aie) {
		err = rtc_arm_alarm(r);
	}
	g_mutex_unlock(&r->lock);
	return err;
}

/*
 * The update interrupt rides on the alarm hardware: without both features
 * RTC_UIE_ON is -EINVAL, which sends hwclock to its busy-wait fallback.
 * Turning off what is off succeeds, as rtc_update_irq_enable() checks the
 * state first.
 */
static long rtc_uie(struct cusemu_device *dev, struct cusemu_file *file,
		    unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;
	bool on = cmd == RTC_UIE_ON;
	long ret = 0;

	g_mutex_lock(&r->lock);
	if (r->uie == on)
		goto out;
	if (on && (!rtc_has(r, RTC_FEATURE_UPDATE_INTERRUPT) ||
		   !rtc_has(r, RTC_FEATURE_ALARM))) {
		ret = -EINVAL;
		goto out;
	}
	r->uie = on;
	if (on)
		rtc_start_uie(r);
	rtc_rearm(r);
out:
	g_mutex_unlock(&r->lock);
	return ret;
}

/* Periodic interrupts come from a host timer, as the kernel's hrtimer. */
static long rtc_pie(struct cusemu_device *dev, struct cusemu_file *file,
		    unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;

	g_mutex_lock(&r->lock);
	r->pie = cmd == RTC_PIE_ON;
	if (r->pie)
		rtc_start_pie(r);
	rtc_rearm(r);
	g_mutex_unlock(&r->lock);
	return 0;
}

/* ---- periodic rate and epoch: values in arg, unsigned long out */

/*
 * arg is the rate itself, on both ABIs. Today's rtc_irq_set_freq() takes
 * 1 to RTC_MAX_FREQ (here max_freq, the chip's); 2.6.10's drivers/char/
 * rtc.c took powers of two from 2.
 */
static long rtc_irqp_set(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;

	if (arg < (r->pow2_rates ? 2 : 1) || arg > r->max_freq ||
	    (r->pow2_rates && (arg & (arg - 1))))
		return -EINVAL;
	g_mutex_lock(&r->lock);
	r->irq_freq = arg;
	if (r->pie) {
		rtc_start_pie(r);
		rtc_rearm(r);
	}
	g_mutex_unlock(&r->lock);
	return 0;
}

static unsigned long rtc_irq_freq(struct rtc *r)
{
	unsigned long freq;

	g_mutex_lock(&r->lock);
	freq = r->irq_freq;
	g_mutex_unlock(&r->lock);
	return freq;
}

static long rtc_irqp_read(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user(rtc_irq_freq(dev->priv), arg);
}

static long rtc_irqp_read32(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	return cusemu_put_user((__u32)rtc_irq_freq(dev->priv), arg);
}

/* There were no RTCs before 1900 (drivers/char/rtc.c). */
static long rtc_epoch_set(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;

	if (!r->has_epoch)
		return -ENOIOCTLCMD;
	if (arg < 1900)
		return -EINVAL;
	g_mutex_lock(&r->lock);
	r->epoch = arg;
	g_mutex_unlock(&r->lock);
	return 0;
}

static unsigned long rtc_epoch(struct rtc *r)
{
	unsigned long epoch;

	g_mutex_lock(&r->lock);
	epoch = r->epoch;
	g_mutex_unlock(&r->lock);
	return epoch;
}

static long rtc_epoch_read(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;

	if (!r->has_epoch)
		return -ENOIOCTLCMD;
	return cusemu_put_user(rtc_epoch(r), arg);
}

static long rtc_epoch_read32(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct rtc *r = dev->priv;

	if (!r->has_epoch)
		return -ENOIOCTLCMD;
	return cusemu_put_user((__u32)rtc_epoch(r), arg);
}

/* ---- parameters */

/*
 * RTC_PARAM_GET is encoded _IOW but writes the struct back, so the row
 * fetches its own memory: both directions named before the first copy.
 * Only the feature word is known; correction and backup switch-over need
 * driver methods this chip lacks, which dev.c answers with -EINVAL.
 */
static int rtc_param_get_fetch(struct cusemu_device *dev,
			       struct cusemu_file *file, unsigned int cmd,
			       unsigned long arg)
{
	return cusemu_fetch_range(arg, sizeof(struct rtc_param),
				  sizeof(struct rtc_param));
}

static long rtc_param_get(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct rtc *r = dev->priv;
	struct rtc_param p;

	if (cusemu_copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	if (p.param != RTC_PARAM_FEATURES || p.index != 0)
		return -EINVAL;
	p.uvalue = r->features;
	return cusemu_copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

/* Features are read-only; the rest needs methods this chip lacks. */
static long rtc_param_set(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct rtc_param p;

	if (cusemu_copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	return -EINVAL;
}

/* ---- interrupts: the timer thread, read() and poll() */

/* rtc_handle_legacy_irq(): count n more, of kind mode; r->lock held. */
static void rtc_raise(struct rtc *r, uint64_t n, unsigned int mode)
{
	r->irq_data = (r->irq_data + (n << 8)) | RTC_IRQF | mode;
}

/*
 * Raise what is due at these readings of the clocks; returns the kinds
 * raised. Missed updates and ticks are counted, as the kernel's timers
 * count them.
 */
static unsigned int rtc_expire(struct rtc *r, int64_t mono,
			       const struct timespec *emu)
{
	int64_t now = emu->tv_sec;
	int64_t period = NSEC_PER_SEC / r->irq_freq;
	unsigned int fired = 0;

	/* The host's clock, and ours with it, went back: carry on from here. */
	if (r->uie && r->uie_next > now + 1)
		r->uie_next = now + 1;
	if (r->uie && now >= r->uie_next) {
		rtc_raise(r, now - r->uie_next + 1, RTC_UF);
		r->uie_next = now + 1;
		fired |= RTC_UF;
	}
	/* One-shot: the alarm disarms once it fires. */
	if (r->aie && now >= r->alarm) {
		rtc_raise(r, 1, RTC_AF);
		r->aie = false;
		fired |= RTC_AF;
	}
	if (r->pie && mono >= r->pie_next) {
		int64_t n = (mono - r->pie_next) / period + 1;

		rtc_raise(r, n, RTC_PF);
		r->pie_next += n * period;
		fired |= RTC_PF;
	}
	return fired;
}

/* ns from emu until emulated second t starts, at most the idle wait. */
static int64_t rtc_ns_until(const struct timespec *emu, int64_t t)
{
	int64_t secs = t - emu->tv_sec;

	if (secs > RTC_IDLE_WAIT_US / G_TIME_SPAN_SECOND)
		return RTC_IDLE_WAIT_US * 1000;
	return secs * NSEC_PER_SEC - emu->tv_nsec;
}

/* When the next interrupt is due, in g_get_monotonic_time() us. */
static gint64 rtc_next_deadline(const struct rtc *r, int64_t mono,
				const struct timespec *emu)
{
	int64_t next = mono + RTC_IDLE_WAIT_US * 1000;

	if (r->uie)
		next = MIN(next, mono + rtc_ns_until(emu, r->uie_next));
	if (r->aie)
		next = MIN(next, mono + rtc_ns_until(emu, r->alarm));
	if (r->pie)
		next = MIN(next, r->pie_next);
	/* Rounded up: waking early would only loop once more. */
	return (next + 999) / 1000;
}

static void rtc_count_events(struct rtc *r, unsigned int fired)
{
	if (fired & RTC_UF)
		cusemu_device_count_event(r->dev, "update");
	if (fired & RTC_AF)
		cusemu_device_count_event(r->dev, "alarm");
	if (fired & RTC_PF)
		cusemu_device_count_event(r->dev, "periodic");
}

/*
 * Sleeps until the next interrupt is due, or until an ioctl changes what
 * is armed; pollers are told after the lock is let go.
 */
static gpointer rtc_timer_thread(gpointer data)
{
	struct rtc *r = data;
	struct timespec real, emu;
	unsigned int fired;
	int64_t mono;

	g_mutex_lock(&r->lock);
	while (!r->stopping) {
		mono = monotonic_ns();
		rtc_clock(&real);
		emu = rtc_emulated(r, &real);
		fired = rtc_expire(r, mono, &emu);
		if (!fired) {
			g_cond_wait_until(&r->timer_cond, &r->lock,
					  rtc_next_deadline(r, mono, &emu));
			continue;
		}
		g_cond_broadcast(&r->irq_queue);
		g_mutex_unlock(&r->lock);
		rtc_count_events(r, fired);
		cusemu_device_wake_up(r->dev);
		g_mutex_lock(&r->lock);
	}
	g_mutex_unlock(&r->lock);
	return NULL;
}

/*
 * A u32 for a read of 4 bytes, an unsigned long (8 bytes) for 8 or more:
 * dev.c's rule on a 64-bit kernel, which serves both ABIs, since a read
 * carries no compat flag. Blocks until an interrupt, unless O_NONBLOCK.
 */
static ssize_t rtc_read(struct cusemu_device *dev, struct cusemu_file *file,
			char *buf, size_t size)
{
	struct rtc *r = dev->priv;
	uint64_t data;
	ssize_t ret = 0;

	if (size != sizeof(__u32) && size < sizeof(__u64))
		return -EINVAL;
	g_mutex_lock(&r->lock);
	r->readers++;
	for (;;) {
		data = r->irq_data;
		r->irq_data = 0;
		if (data)
			break;
		if (file->flags & O_NONBLOCK) {
			ret = -EAGAIN;
			break;
		}
		if (cusemu_signal_pending()) {
			ret = -EINTR;
			break;
		}
		if (r->stopping) {
			ret = -ENODEV;
			break;
		}
		cusemu_cond_wait_until(&r->irq_queue, &r->lock,
				       g_get_monotonic_time() +
					       RTC_READ_RECHECK_US);
	}
	if (!--r->readers && r->stopping)
		g_cond_broadcast(&r->irq_queue);
	g_mutex_unlock(&r->lock);
	if (ret)
		return ret;
	if (size == sizeof(__u32)) {
		__u32 v = (__u32)data;

		memcpy(buf, &v, sizeof(v));
		return sizeof(v);
	}
	memcpy(buf, &data, sizeof(data));
	return sizeof(data);
}

static unsigned int rtc_poll(struct cusemu_device *dev,
			     struct cusemu_file *file)
{
	struct rtc *r = dev->priv;
	bool pending;

	g_mutex_lock(&r->lock);
	pending = r->irq_data != 0;
	g_mutex_unlock(&r->lock);
	return pending ? POLLIN | POLLRDNORM : 0;
}

/* One opener at a time, and a fresh open sees no stale interrupt. */
static int rtc_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct rtc *r = dev->priv;
	int ret = 0;

	g_mutex_lock(&r->lock);
	if (r->busy) {
		ret = -EBUSY;
	} else {
		r->busy = true;
		r->irq_data = 0;
	}
	g_mutex_unlock(&r->lock);
	return ret;
}

/*
 * Nobody listens to the repeating interrupts any more: update and periodic
 * go off. The alarm stays, as it may be meant to wake the system later.
 */
static void rtc_release(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct rtc *r = dev->priv;

	g_mutex_lock(&r->lock);
	r->uie = false;
	r->pie = false;
	r->busy = false;
	rtc_rearm(r);
	g_mutex_unlock(&r->lock);
}

/* ---- instance */

/* "YYYY-MM-DD HH:MM:SS" (or with a T), UTC; "host" for the host's time. */
static int rtc_parse_time(const char *s, struct rtc_time *tm)
{
	char sep, end;
	int n;

	*tm = (struct rtc_time){ 0 };
	n = sscanf(s, "%d-%d-%d%c%d:%d:%d%c", &tm->tm_year, &tm->tm_mon,
		   &tm->tm_mday, &sep, &tm->tm_hour, &tm->tm_min, &tm->tm_sec,
		   &end);
	if (n != 7 || (sep != ' ' && sep != 'T') || tm->tm_year < 1900)
		return -EINVAL;
	tm->tm_year -= 1900;
	tm->tm_mon -= 1;
	return rtc_check_tm(tm);
}

/* The alarm_reach key's value, or -1. */
static int rtc_parse_reach(const char *s)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(rtc_reach_names); i++)
		if (!strcmp(s, rtc_reach_names[i]))
			return i;
	return -1;
}

static int rtc_probe(struct cusemu_device *dev, char **why)
{
	const char *when = cusemu_device_param_str(dev, "time");
	const char *reach = cusemu_device_param_str(dev, "alarm_reach");
	unsigned int version = cusemu_device_kernel_version(dev);
	struct rtc_time tm;
	struct rtc *r;

	if (rtc_parse_reach(reach) < 0) {
		*why = g_strdup_printf("alarm_reach is day, month, year or "
				       "any, not '%s'", reach);
		return -EINVAL;
	}
	if (strcmp(when, "host") && rtc_parse_time(when, &tm)) {
		*why = g_strdup_printf("time is 'host' or a UTC time from "
				       "1970-01-01 00:00:00 to 9999-12-31 "
				       "23:59:59 as YYYY-MM-DD HH:MM:SS, not "
				       "'%s'", when);
		return -EINVAL;
	}
	r = g_new0(struct rtc, 1);
	r->dev = dev;
	if (cusemu_device_param_bool(dev, "alarm"))
		r->features |= 1ul << RTC_FEATURE_ALARM;
	if (cusemu_device_param_bool(dev, "uie"))
		r->features |= 1ul << RTC_FEATURE_UPDATE_INTERRUPT;
	r->max_freq = cusemu_device_param_u64(dev, "max_freq");
	r->max_year = cusemu_device_param_u64(dev, "max_year");
	r->alarm_reach = rtc_parse_reach(reach);
	r->pow2_rates = version < KERNEL_VERSION(2, 6, 11);
	r->has_epoch = version < KERNEL_VERSION(5, 5, 0);
	g_mutex_init(&r->lock);
	g_cond_init(&r->irq_queue);
	g_cond_init(&r->timer_cond);
	if (strcmp(when, "host")) {
		rtc_set_offset(r, rtc_tm_to_time64(&tm));
	} else {
		/* The host's time now, running on by the chip's clock. */
		struct timespec real, boot;

		clock_gettime(CLOCK_REALTIME, &real);
		rtc_clock(&boot);
		r->offset_sec = real.tv_sec - boot.tv_sec;
		r->offset_nsec = real.tv_nsec - boot.tv_nsec;
		if (r->offset_nsec < 0) {
			r->offset_sec--;
			r->offset_nsec += NSEC_PER_SEC;
		}
	}
	r->irq_freq = MIN(RTC_DEFAULT_FREQ, r->max_freq);
	if (r->pow2_rates && r->max_freq < RTC_DEFAULT_FREQ)
		while (r->irq_freq & (r->irq_freq - 1))
			r->irq_freq &= r->irq_freq - 1;
	r->epoch = RTC_DEFAULT_EPOCH;
	dev->priv = r;
	r->timer = g_thread_new("rtc-timer", rtc_timer_thread, r);
	return 0;
}

static void rtc_remove(struct cusemu_device *dev)
{
	struct rtc *r = dev->priv;

	g_mutex_lock(&r->lock);
	r->stopping = true;
	rtc_rearm(r);
	/*
	 * Files are released by now, unless a session could not end its
	 * workers: a read still waiting here must leave before r goes.
	 */
	g_cond_broadcast(&r->irq_queue);
	while (r->readers)
		g_cond_wait(&r->irq_queue, &r->lock);
	g_mutex_unlock(&r->lock);
	g_thread_join(r->timer);
	g_cond_clear(&r->timer_cond);
	g_cond_clear(&r->irq_queue);
	g_mutex_clear(&r->lock);
	g_free(r);
}

static const struct cusemu_ioctl rtc_native[] = {
	CUSEMU_IOCTL_IOC(RTC_RD_TIME, rtc_rd_time),
	CUSEMU_IOCTL_IOC(RTC_SET_TIME, rtc_set_time),
	CUSEMU_IOCTL_IOC(RTC_ALM_READ, rtc_alm_read),
	CUSEMU_IOCTL_IOC(RTC_ALM_SET, rtc_alm_set),
	CUSEMU_IOCTL_IOC(RTC_WKALM_RD, rtc_wkalm_rd),
	CUSEMU_IOCTL_IOC(RTC_WKALM_SET, rtc_wkalm_set),
	CUSEMU_IOCTL_NONE(RTC_AIE_ON, rtc_aie),
	CUSEMU_IOCTL_NONE(RTC_AIE_OFF, rtc_aie),
	CUSEMU_IOCTL_NONE(RTC_UIE_ON, rtc_uie),
	CUSEMU_IOCTL_NONE(RTC_UIE_OFF, rtc_uie),
	CUSEMU_IOCTL_NONE(RTC_PIE_ON, rtc_pie),
	CUSEMU_IOCTL_NONE(RTC_PIE_OFF, rtc_pie),
	CUSEMU_IOCTL_IOC(RTC_IRQP_READ, rtc_irqp_read),
	/* _IOW-encoded, yet arg is the value: nothing to fetch. */
	CUSEMU_IOCTL_NONE(RTC_IRQP_SET, rtc_irqp_set),
	CUSEMU_IOCTL_IOC(RTC_EPOCH_READ, rtc_epoch_read),
	CUSEMU_IOCTL_NONE(RTC_EPOCH_SET, rtc_epoch_set),
	CUSEMU_IOCTL_USER(RTC_PARAM_GET, rtc_param_get_fetch, rtc_param_get),
	CUSEMU_IOCTL_IOC(RTC_PARAM_SET, rtc_param_set),
	CUSEMU_IOCTL_END
};

/*
 * What rtc_dev_compat_ioctl() translates: the unsigned long commands, with
 * their own numbers for i386. struct rtc_time, rtc_wkalrm and rtc_param
 * have one layout on both ABIs: the native rows serve them.
 */
static const struct cusemu_ioctl rtc_compat[] = {
	CUSEMU_IOCTL_IOC(RTC_IRQP_READ32, rtc_irqp_read32),
	CUSEMU_IOCTL_NONE(RTC_IRQP_SET32, rtc_irqp_set),
	CUSEMU_IOCTL_IOC(RTC_EPOCH_READ32, rtc_epoch_read32),
	CUSEMU_IOCTL_NONE(RTC_EPOCH_SET32, rtc_epoch_set),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param rtc_params[] = {
	{ .key = "alarm", .type = CUSEMU_PARAM_BOOL, .default_value = "true",
	  .help = "whether the chip has an alarm (AIE, ALM_*, WKALM_*)" },
	{ .key = "uie", .type = CUSEMU_PARAM_BOOL, .default_value = "true",
	  .help = "whether it has update interrupts (needs alarm too)" },
	{ .key = "alarm_reach", .type = CUSEMU_PARAM_STRING,
	  .default_value = "day",
	  .help = "how far ahead an alarm may be armed, or RTC_WKALM_SET "
		  "and RTC_AIE_ON are EINVAL: day (24 hours, as rtc-cmos "
		  "without ACPI's day and month alarm registers), month, "
		  "year, or any" },
	{ .key = "max_year", .type = CUSEMU_PARAM_UINT, .default_value = "9999",
	  .help = "the last year the chip holds: RTC_SET_TIME past it is "
		  "EINVAL, as from the chip's driver (2069 plays rtc-cmos); "
		  "past 9999 the rtc class's ERANGE",
	  .min = 1970, .max = 9999 },
	{ .key = "max_freq", .type = CUSEMU_PARAM_UINT, .default_value = "8192",
	  .help = "highest periodic rate RTC_IRQP_SET accepts, in Hz (the "
		  "rate starts at 1024, or this if lower)",
	  .min = 1, .max = RTC_MAX_FREQ },
	{ .key = "time", .type = CUSEMU_PARAM_STRING, .default_value = "host",
	  .help = "initial time, UTC: YYYY-MM-DD HH:MM:SS, or host; from "
		  "then on the clock runs by itself, whatever the system "
		  "clock is set to" },
	CUSEMU_PARAM_END
};

/* The clock's time now, as rtc_read_time() gives the class's files. */
static void rtc_show_tm(struct cusemu_device *dev, struct rtc_time *tm)
{
	struct rtc *r = dev->priv;

	g_mutex_lock(&r->lock);
	rtc_time64_to_tm(rtc_now(r), tm);
	g_mutex_unlock(&r->lock);
}

/*
 * The rtc class's files (drivers/rtc/sysfs.c). name is "DRIVER DEVICE"
 * of the parent, "rtc_cmos 00:01" on a PC: here the driver is cusemu.
 * hctosys is 0: the system clock was not set from this one at boot.
 * max_user_freq is the class's default, which the model does not play.
 * device/power/wakeup says what rtcwake checks before it arms an alarm.
 */
static ssize_t rtc_show_name(struct cusemu_device *dev, char *buf, size_t size)
{
	return snprintf(buf, size, "cusemu %s\n", dev->name);
}

static ssize_t rtc_show_date(struct cusemu_device *dev, char *buf, size_t size)
{
	struct rtc_time tm;

	rtc_show_tm(dev, &tm);
	return snprintf(buf, size, "%04d-%02d-%02d\n", tm.tm_year + 1900,
			tm.tm_mon + 1, tm.tm_mday);
}

static ssize_t rtc_show_time(struct cusemu_device *dev, char *buf, size_t size)
{
	struct rtc_time tm;

	rtc_show_tm(dev, &tm);
	return snprintf(buf, size, "%02d:%02d:%02d\n", tm.tm_hour, tm.tm_min,
			tm.tm_sec);
}

static ssize_t rtc_show_since_epoch(struct cusemu_device *dev, char *buf,
				    size_t size)
{
	struct rtc_time tm;

	rtc_show_tm(dev, &tm);
	return snprintf(buf, size, "%lld\n", (long long)rtc_tm_to_time64(&tm));
}

static ssize_t rtc_show_max_user_freq(struct cusemu_device *dev, char *buf,
				      size_t size)
{
	return snprintf(buf, size, "64\n");
}

static ssize_t rtc_show_hctosys(struct cusemu_device *dev, char *buf,
				size_t size)
{
	return snprintf(buf, size, "0\n");
}

static ssize_t rtc_show_wakeup(struct cusemu_device *dev, char *buf,
			       size_t size)
{
	return snprintf(buf, size, "enabled\n");
}

static const struct cusemu_attr rtc_attrs[] = {
	{ "name", rtc_show_name },
	{ "date", rtc_show_date },
	{ "time", rtc_show_time },
	{ "since_epoch", rtc_show_since_epoch },
	{ "max_user_freq", rtc_show_max_user_freq },
	{ "hctosys", rtc_show_hctosys },
	{ "device/power/wakeup", rtc_show_wakeup },
	CUSEMU_ATTR_END
};

const struct cusemu_device_model cusemu_model_rtc = {
	.name = "rtc",
	.summary = "a real-time clock with its own time (RTC_*, read, poll)",
	.node_prefix = "rtc",
	.params = rtc_params,
	.probe = rtc_probe,
	.remove = rtc_remove,
	.open = rtc_open,
	.release = rtc_release,
	.read = rtc_read,
	.poll = rtc_poll,
	.native_table = rtc_native,
	.compat_ptr_ioctl = true,
	.compat_table = rtc_compat,
	.sysfs_class = "rtc",
	.attrs = rtc_attrs,
};
