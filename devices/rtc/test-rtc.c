/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the rtc model against the fake kernel (no CUSE): its ioctls
 * from both ABIs, the translated RTC_IRQP and RTC_EPOCH commands among them,
 * the emulated time, the alarm rules, and interrupts through the model's
 * own read and poll slots.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include <linux/rtc.h>

#include <glib.h>

#include "config.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"
#include "lock.h"
#include "request.h"

/* An i386 caller's numbers for the unsigned long commands. */
#define RTC_IRQP_READ32 _IOR('p', 0x0b, __u32)
#define RTC_IRQP_SET32 _IOW('p', 0x0c, __u32)
#define RTC_EPOCH_READ32 _IOR('p', 0x0d, __u32)
#define RTC_EPOCH_SET32 _IOW('p', 0x0e, __u32)

#define CLIENT_SIZE 4096
#define AT_ARG 0x100
#define FILL 0xAA

/* What a test may wait for an interrupt due within a second. */
#define TICK_WAIT_US (1500 * G_TIME_SPAN_MILLISECOND)

struct fixture {
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client native, compat;
	gint wake_ups;
};

static void count_wake_up(void *data)
{
	g_atomic_int_inc((gint *)data);
}

static void setup(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	f->dev = fake_device_try(NULL, data ? data : "rtc", &error);
	g_assert_no_error(error);
	/* Stands in for the transport's poll notification. */
	cusemu_instance(f->dev)->serving.wake_up = count_wake_up;
	cusemu_instance(f->dev)->serving.wake_up_data = &f->wake_ups;
	f->file = (struct cusemu_file){ .dev = f->dev };
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	fake_client_init(&f->native, false, CLIENT_SIZE);
	fake_client_init(&f->compat, true, CLIENT_SIZE);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	f->dev->model->release(f->dev, &f->file);
	fake_device_free(f->dev);
	g_free(f->native.mem);
	g_free(f->compat.mem);
}

static struct fake_client *client(struct fixture *f, bool compat)
{
	return compat ? &f->compat : &f->native;
}

/* The argument area of the caller, prefilled so untouched bytes show. */
static void *arg_area(struct fixture *f, bool compat, const void *in,
		      size_t len)
{
	uint8_t *p = client(f, compat)->mem + AT_ARG;

	memset(p, FILL, 64);
	if (in)
		memcpy(p, in, len);
	return p;
}

static long call(struct fixture *f, bool compat, unsigned int cmd,
		 cusemu_uptr_t arg, unsigned int *round_trips)
{
	unsigned int rt;

	return fake_ioctl(client(f, compat), f->dev, &f->file, cmd, arg,
			  round_trips ? round_trips : &rt);
}

/* An ioctl whose payload sits at the caller's argument area. */
static long call_at(struct fixture *f, bool compat, unsigned int cmd,
		    unsigned int *round_trips)
{
	return call(f, compat, cmd, client(f, compat)->base + AT_ARG,
		    round_trips);
}

static struct rtc_time make_tm(int year, int mon, int mday, int hour, int min,
			       int sec)
{
	return (struct rtc_time){
		.tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = mday,
		.tm_hour = hour, .tm_min = min, .tm_sec = sec,
	};
}

static gint64 tm_secs(const struct rtc_time *tm)
{
	struct tm t = {
		.tm_year = tm->tm_year, .tm_mon = tm->tm_mon,
		.tm_mday = tm->tm_mday, .tm_hour = tm->tm_hour,
		.tm_min = tm->tm_min, .tm_sec = tm->tm_sec,
	};

	return timegm(&t);
}

static struct rtc_time secs_tm(gint64 secs)
{
	time_t t = secs;
	struct tm g;

	gmtime_r(&t, &g);
	return make_tm(g.tm_year + 1900, g.tm_mon + 1, g.tm_mday, g.tm_hour,
		       g.tm_min, g.tm_sec);
}

static long set_time(struct fixture *f, bool compat, struct rtc_time tm)
{
	arg_area(f, compat, &tm, sizeof(tm));
	return call_at(f, compat, RTC_SET_TIME, NULL);
}

static struct rtc_time rd_time(struct fixture *f, bool compat)
{
	struct rtc_time tm;
	unsigned int rt;

	arg_area(f, compat, NULL, 0);
	g_assert_cmpint(call_at(f, compat, RTC_RD_TIME, &rt), ==, 0);
	/* The dispatcher fetches the _IOR payload: one round trip. */
	g_assert_cmpuint(rt, ==, 1);
	memcpy(&tm, client(f, compat)->mem + AT_ARG, sizeof(tm));
	return tm;
}

/* The device's time is want, or up to slack seconds later. */
static void assert_time(struct fixture *f, bool compat,
			const struct rtc_time *want, int slack)
{
	struct rtc_time got = rd_time(f, compat);

	g_assert_cmpint(tm_secs(&got) - tm_secs(want), >=, 0);
	g_assert_cmpint(tm_secs(&got) - tm_secs(want), <=, slack);
}

static struct rtc_wkalrm wkalm_rd(struct fixture *f, bool compat)
{
	struct rtc_wkalrm a;

	arg_area(f, compat, NULL, 0);
	g_assert_cmpint(call_at(f, compat, RTC_WKALM_RD, NULL), ==, 0);
	memcpy(&a, client(f, compat)->mem + AT_ARG, sizeof(a));
	return a;
}

static long wkalm_set(struct fixture *f, bool compat, int enabled,
		      struct rtc_time tm)
{
	struct rtc_wkalrm a = { .enabled = enabled, .time = tm };

	arg_area(f, compat, &a, sizeof(a));
	return call_at(f, compat, RTC_WKALM_SET, NULL);
}

static long alm_set(struct fixture *f, bool compat, struct rtc_time tm)
{
	arg_area(f, compat, &tm, sizeof(tm));
	return call_at(f, compat, RTC_ALM_SET, NULL);
}

static struct rtc_time alm_read(struct fixture *f, bool compat)
{
	struct rtc_time tm;

	arg_area(f, compat, NULL, 0);
	g_assert_cmpint(call_at(f, compat, RTC_ALM_READ, NULL), ==, 0);
	memcpy(&tm, client(f, compat)->mem + AT_ARG, sizeof(tm));
	return tm;
}

static void assert_same_tm(const struct rtc_time *got,
			   const struct rtc_time *want)
{
	g_assert_cmpint(tm_secs(got), ==, tm_secs(want));
}

/* ---- time */

static void test_time_param(struct fixture *f, gconstpointer data)
{
	struct rtc_time want = make_tm(2030, 1, 2, 3, 4, 5);

	for (int compat = 0; compat < 2; compat++) {
		struct rtc_time got = rd_time(f, compat);

		assert_time(f, compat, &want, 1);
		/* 2030-01-02 is a Wednesday, the year's second day. */
		g_assert_cmpint(got.tm_wday, ==, 3);
		g_assert_cmpint(got.tm_yday, ==, 1);
		g_assert_cmpint(got.tm_isdst, ==, 0);
	}
}

static void test_set_time(struct fixture *f, gconstpointer data)
{
	struct rtc_time a = make_tm(2031, 5, 6, 7, 8, 9);
	struct rtc_time b = make_tm(2032, 2, 29, 23, 59, 30);
	struct rtc_time far = make_tm(9999, 12, 31, 23, 59, 59);
	gint64 host = g_get_real_time();
	unsigned int rt;

	arg_area(f, false, &a, sizeof(a));
	g_assert_cmpint(call_at(f, false, RTC_SET_TIME, &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 1);
	assert_time(f, true, &a, 1);
	g_assert_cmpint(set_time(f, true, b), ==, 0);
	assert_time(f, false, &b, 1);
	/* The chip's whole range, with ns offsets that do not overflow. */
	g_assert_cmpint(set_time(f, false, far), ==, 0);
	assert_time(f, false, &far, 1);
	/* The host's clock is not the device's. */
	g_assert_cmpint(g_get_real_time() - host, <, 5 * G_TIME_SPAN_SECOND);
}

/* max_year=2069, as an MC146818: past it the driver's EINVAL, past 9999
 * still the class's ERANGE; the time stays. */
static void test_max_year(struct fixture *f, gconstpointer data)
{
	struct rtc_time last = make_tm(2069, 12, 31, 23, 59, 59);

	g_assert_cmpint(set_time(f, false, last), ==, 0);
	g_assert_cmpint(set_time(f, true, make_tm(2070, 1, 1, 0, 0, 0)), ==,
			-EINVAL);
	g_assert_cmpint(set_time(f, false, make_tm(10000, 1, 1, 0, 0, 0)), ==,
			-ERANGE);
	assert_time(f, false, &last, 2);
}

static void test_set_time_half_second(struct fixture *f, gconstpointer data)
{
	struct rtc_time a = make_tm(2031, 5, 6, 7, 8, 9);
	struct rtc_time got;

	/* As the MC146818's divider: the next second comes 500 ms on. */
	g_assert_cmpint(set_time(f, false, a), ==, 0);
	g_usleep(300 * G_TIME_SPAN_MILLISECOND);
	got = rd_time(f, false);
	assert_same_tm(&got, &a);
	g_usleep(500 * G_TIME_SPAN_MILLISECOND);
	got = rd_time(f, false);
	g_assert_cmpint(tm_secs(&got), ==, tm_secs(&a) + 1);
}

static void test_bad_time(struct fixture *f, gconstpointer data)
{
	static const struct {
		struct rtc_time tm;
		int err;
	} bad[] = {
		{ { .tm_year = 131, .tm_mon = 12, .tm_mday = 1 }, EINVAL },
		{ { .tm_year = 131, .tm_mon = -1, .tm_mday = 1 }, EINVAL },
		{ { .tm_year = 131, .tm_mon = 4, .tm_mday = 0 }, EINVAL },
		{ { .tm_year = 131, .tm_mon = 1, .tm_mday = 29 }, EINVAL },
		{ { .tm_year = 131, .tm_mon = 3, .tm_mday = 31 }, EINVAL },
		{ { .tm_year = 131, .tm_mon = 4, .tm_mday = 6, .tm_hour = 24 },
		  EINVAL },
		{ { .tm_year = 131, .tm_mon = 4, .tm_mday = 6, .tm_min = 60 },
		  EINVAL },
		{ { .tm_year = 131, .tm_mon = 4, .tm_mday = 6, .tm_sec = 60 },
		  EINVAL },
		{ { .tm_year = 131, .tm_mon = 4, .tm_mday = 6, .tm_sec = -1 },
		  EINVAL },
		{ { .tm_year = 69, .tm_mon = 11, .tm_mday = 31 }, EINVAL },
		{ { .tm_year = 8100, .tm_mon = 0, .tm_mday = 1 }, ERANGE },
		{ { .tm_year = INT_MAX - 1900, .tm_mon = 0, .tm_mday = 1 },
		  ERANGE },
		{ { .tm_year = INT_MAX, .tm_mon = 0, .tm_mday = 1 }, EINVAL },
	};
	struct rtc_time good = make_tm(2031, 5, 6, 7, 8, 9);

	g_assert_cmpint(set_time(f, false, good), ==, 0);
	for (unsigned int i = 0; i < G_N_ELEMENTS(bad); i++) {
		for (int compat = 0; compat < 2; compat++)
			g_assert_cmpint(set_time(f, compat, bad[i].tm), ==,
					-bad[i].err);
	}
	assert_time(f, false, &good, 2);
	/* Leap years by the Gregorian rules. */
	g_assert_cmpint(set_time(f, false, make_tm(2000, 2, 29, 0, 0, 0)), ==,
			0);
	g_assert_cmpint(set_time(f, false, make_tm(2100, 2, 29, 0, 0, 0)), ==,
			-EINVAL);
}

/* ---- alarm */

static void test_alm(struct fixture *f, gconstpointer data)
{
	struct rtc_time now = make_tm(2031, 5, 6, 7, 8, 9);
	struct rtc_time got, want;
	struct rtc_wkalrm a;

	g_assert_cmpint(set_time(f, false, now), ==, 0);
	for (int compat = 0; compat < 2; compat++) {
		/* Later today. */
		g_assert_cmpint(alm_set(f, compat, make_tm(1900, 1, 1, 7, 30,
							   0)), ==, 0);
		got = alm_read(f, !compat);
		want = make_tm(2031, 5, 6, 7, 30, 0);
		assert_same_tm(&got, &want);
		/* Passed today: tomorrow. */
		g_assert_cmpint(alm_set(f, compat, make_tm(2031, 5, 6, 6, 0,
							   0)), ==, 0);
		got = alm_read(f, compat);
		want = make_tm(2031, 5, 7, 6, 0, 0);
		assert_same_tm(&got, &want);
		/* The date fields are not looked at, the time fields are. */
		g_assert_cmpint(alm_set(f, compat, (struct rtc_time){
					.tm_mon = 99, .tm_mday = -5,
					.tm_hour = 8 }), ==, 0);
		g_assert_cmpint(alm_set(f, compat, make_tm(2031, 5, 6, 24, 0,
							   0)), ==, -EINVAL);
		g_assert_cmpint(alm_set(f, compat, make_tm(2031, 5, 6, 7, 0,
							   60)), ==, -EINVAL);
		got = alm_read(f, compat);
		want = make_tm(2031, 5, 6, 8, 0, 0);
		assert_same_tm(&got, &want);
		/* RTC_ALM_SET disarms, RTC_AIE_ON arms. */
		g_assert_cmpint(call(f, compat, RTC_AIE_ON, 0, NULL), ==, 0);
		g_assert_cmpint(wkalm_rd(f, compat).enabled, ==, 1);
		g_assert_cmpint(alm_set(f, compat, make_tm(2031, 5, 6, 9, 0,
							   0)), ==, 0);
		a = wkalm_rd(f, compat);
		g_assert_cmpint(a.enabled, ==, 0);
		g_assert_cmpint(a.pending, ==, 0);
	}
}

static void test_wkalm(struct fixture *f, gconstpointer data)
{
	struct rtc_time when = make_tm(2031, 6, 1, 0, 0, 0);
	struct rtc_wkalrm a;

	g_assert_cmpint(set_time(f, false, make_tm(2031, 5, 31, 7, 8, 9)), ==,
			0);
	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(wkalm_set(f, compat, 1, when), ==, 0);
		a = wkalm_rd(f, !compat);
		g_assert_cmpint(a.enabled, ==, 1);
		assert_same_tm(&a.time, &when);
		g_assert_cmpint(a.time.tm_wday, ==, 0);	/* a Sunday */
		g_assert_cmpint(wkalm_set(f, compat, 0, when), ==, 0);
		g_assert_cmpint(wkalm_rd(f, compat).enabled, ==, 0);
		g_assert_cmpint(wkalm_set(f, compat, 1,
					  make_tm(2031, 4, 31, 0, 0, 0)),
				==, -EINVAL);
		g_assert_cmpint(wkalm_set(f, compat, 1,
					  make_tm(10000, 1, 1, 0, 0, 0)),
				==, -ERANGE);
		a = wkalm_rd(f, compat);
		g_assert_cmpint(a.enabled, ==, 0);
		assert_same_tm(&a.time, &when);
	}
}

static void test_no_alarm(struct fixture *f, gconstpointer data)
{
	struct rtc_time tm = make_tm(2031, 5, 6, 7, 8, 9);

	for (int compat = 0; compat < 2; compat++) {
		arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, RTC_ALM_READ, NULL), ==,
				-EINVAL);
		g_assert_cmpint(call_at(f, compat, RTC_WKALM_RD, NULL), ==,
				-EINVAL);
		g_assert_cmpint(alm_set(f, compat, tm), ==, -EINVAL);
		g_assert_cmpint(wkalm_set(f, compat, 1, tm), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, RTC_AIE_ON, 0, NULL), ==,
				-EINVAL);
		g_assert_cmpint(call(f, compat, RTC_AIE_OFF, 0, NULL), ==,
				-EINVAL);
		/* The update interrupt needs the alarm; what is off stays. */
		g_assert_cmpint(call(f, compat, RTC_UIE_ON, 0, NULL), ==,
				-EINVAL);
		g_assert_cmpint(call(f, compat, RTC_UIE_OFF, 0, NULL), ==, 0);
		/* Time and periodic interrupts are there. */
		g_assert_cmpint(set_time(f, compat, tm), ==, 0);
		g_assert_cmpint(call(f, compat, RTC_PIE_ON, 0, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, RTC_PIE_OFF, 0, NULL), ==, 0);
	}
}

static void test_no_uie(struct fixture *f, gconstpointer data)
{
	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(call(f, compat, RTC_UIE_ON, 0, NULL), ==,
				-EINVAL);
		g_assert_cmpint(call(f, compat, RTC_UIE_OFF, 0, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, RTC_AIE_ON, 0, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, RTC_AIE_OFF, 0, NULL), ==, 0);
	}
}

/* ---- periodic rate, epoch, parameters */

static void test_irqp(struct fixture *f, gconstpointer data)
{
	uint8_t *p;
	unsigned int rt;
	uint64_t v64;
	uint32_t v32;

	/* rtc-cmos's rate before any set. */
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, RTC_IRQP_READ, &rt), ==, 0);
	memcpy(&v64, p, 8);
	g_assert_cmpuint(v64, ==, 1024);

	/* arg is the rate itself: nothing is fetched from the caller. */
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 8, &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 0);
	p = arg_area(f, true, NULL, 0);
	g_assert_cmpint(call_at(f, true, RTC_IRQP_READ32, &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 1);
	memcpy(&v32, p, 4);
	g_assert_cmpuint(v32, ==, 8);
	/* An i386 caller's unsigned long is 4 bytes: nothing past it moves. */
	g_assert_cmphex(p[4], ==, FILL);

	g_assert_cmpint(call(f, true, RTC_IRQP_SET32, 32, &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 0);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, RTC_IRQP_READ, NULL), ==, 0);
	memcpy(&v64, p, 8);
	g_assert_cmpuint(v64, ==, 32);

	for (int compat = 0; compat < 2; compat++) {
		unsigned int set = compat ? RTC_IRQP_SET32 : RTC_IRQP_SET;

		/* Today's rtc_irq_set_freq(): 1 to 8192, no other rule. */
		g_assert_cmpint(call(f, compat, set, 0, NULL), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, set, 8193, NULL), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, set, 1, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, set, 3, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, set, 48, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, set, 8192, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, set, 64, NULL), ==, 0);
	}
	/*
	 * An i386 caller that issues the 64-bit number reaches the native
	 * handler, which writes an unsigned long of 8 bytes, as
	 * rtc_dev_compat_ioctl() hands every other command to rtc_dev_ioctl().
	 */
	memset(client(f, true)->mem + AT_ARG, 0xee, 12);
	g_assert_cmpint(call_at(f, true, RTC_IRQP_READ, NULL), ==, 0);
	memcpy(&v64, client(f, true)->mem + AT_ARG, sizeof(v64));
	g_assert_cmpuint(v64, ==, 64);
	g_assert_cmpuint(client(f, true)->mem[AT_ARG + 8], ==, 0xee);
}

/* 2.6.10's drivers/char/rtc.c: powers of two from 2, up to max_freq; so
 * under every generation whose version is below 2.6.11. */
static void test_irqp_2610(struct fixture *f, gconstpointer data)
{
	for (int compat = 0; compat < 2; compat++) {
		unsigned int set = compat ? RTC_IRQP_SET32 : RTC_IRQP_SET;

		g_assert_cmpint(call(f, compat, set, 0, NULL), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, set, 1, NULL), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, set, 3, NULL), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, set, 48, NULL), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, set, 128, NULL), ==, -EINVAL);
		g_assert_cmpint(call(f, compat, set, 2, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, set, 64, NULL), ==, 0);
	}
}

static void test_max_freq(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 8192, NULL), ==, 0);
	g_assert_cmpint(call(f, true, RTC_IRQP_SET32, 8192, NULL), ==, 0);
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 16384, NULL), ==,
			-EINVAL);
	/* The value is an unsigned long: no truncation to a valid rate. */
	g_assert_cmpint(call(f, false, RTC_IRQP_SET,
			     (UINT64_C(1) << 32) | 8, NULL), ==, -EINVAL);
}

/* Today's x86 rtc-dev has no epoch: ENOTTY in both ABIs. */
static void test_epoch_modern(struct fixture *f, gconstpointer data)
{
	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(call_at(f, compat, compat ? RTC_EPOCH_READ32
							  : RTC_EPOCH_READ,
					NULL), ==, -ENOTTY);
		g_assert_cmpint(call(f, compat, compat ? RTC_EPOCH_SET32
						       : RTC_EPOCH_SET,
				     2000, NULL), ==, -ENOTTY);
	}
}

static void test_epoch(struct fixture *f, gconstpointer data)
{
	uint8_t *p;
	uint64_t v64;
	uint32_t v32;

	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, RTC_EPOCH_READ, NULL), ==, 0);
	memcpy(&v64, p, 8);
	g_assert_cmpuint(v64, ==, 1900);
	g_assert_cmpint(call(f, true, RTC_EPOCH_SET32, 2000, NULL), ==, 0);
	p = arg_area(f, true, NULL, 0);
	g_assert_cmpint(call_at(f, true, RTC_EPOCH_READ32, NULL), ==, 0);
	memcpy(&v32, p, 4);
	g_assert_cmpuint(v32, ==, 2000);
	g_assert_cmphex(p[4], ==, FILL);
	g_assert_cmpint(call(f, false, RTC_EPOCH_SET, 1899, NULL), ==,
			-EINVAL);
	g_assert_cmpint(call(f, true, RTC_EPOCH_SET32, 0, NULL), ==, -EINVAL);
	g_assert_cmpint(call(f, false, RTC_EPOCH_SET, 1970, NULL), ==, 0);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, RTC_EPOCH_READ, NULL), ==, 0);
	memcpy(&v64, p, 8);
	g_assert_cmpuint(v64, ==, 1970);
}

static long param(struct fixture *f, bool compat, unsigned int cmd,
		  uint64_t which, uint32_t index, struct rtc_param *out,
		  unsigned int *rt)
{
	struct rtc_param p = { .param = which, .index = index };
	long ret;

	arg_area(f, compat, &p, sizeof(p));
	ret = call_at(f, compat, cmd, rt);
	memcpy(out, client(f, compat)->mem + AT_ARG, sizeof(*out));
	return ret;
}

static void test_params(struct fixture *f, gconstpointer data)
{
	struct rtc_param p;
	unsigned int rt;

	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(param(f, compat, RTC_PARAM_GET,
				      RTC_PARAM_FEATURES, 0, &p, &rt), ==, 0);
		/* Both directions fetched in one round trip. */
		g_assert_cmpuint(rt, ==, 1);
		g_assert_cmphex(p.uvalue, ==,
				1u << RTC_FEATURE_ALARM |
					1u << RTC_FEATURE_UPDATE_INTERRUPT);
		g_assert_cmpuint(p.param, ==, RTC_PARAM_FEATURES);
		g_assert_cmpint(param(f, compat, RTC_PARAM_GET,
				      RTC_PARAM_FEATURES, 1, &p, NULL), ==,
				-EINVAL);
		g_assert_cmpint(param(f, compat, RTC_PARAM_GET,
				      RTC_PARAM_CORRECTION, 0, &p, NULL), ==,
				-EINVAL);
		g_assert_cmpint(param(f, compat, RTC_PARAM_GET,
				      RTC_PARAM_BACKUP_SWITCH_MODE, 0, &p,
				      NULL), ==, -EINVAL);
		g_assert_cmpint(param(f, compat, RTC_PARAM_GET, 1000, 0, &p,
				      NULL), ==, -EINVAL);
		g_assert_cmpint(param(f, compat, RTC_PARAM_SET,
				      RTC_PARAM_FEATURES, 0, &p, NULL), ==,
				-EINVAL);
		g_assert_cmpint(param(f, compat, RTC_PARAM_SET,
				      RTC_PARAM_CORRECTION, 0, &p, NULL), ==,
				-EINVAL);
	}
}

static void assert_features(const char *arg, unsigned long want)
{
	struct fixture f = { 0 };
	struct rtc_param p;

	setup(&f, arg);
	g_assert_cmpint(param(&f, false, RTC_PARAM_GET, RTC_PARAM_FEATURES, 0,
			      &p, NULL), ==, 0);
	g_assert_cmphex(p.uvalue, ==, want);
	teardown(&f, NULL);
}

static void test_features(void)
{
	assert_features("rtc:alarm=false", 1u << RTC_FEATURE_UPDATE_INTERRUPT);
	assert_features("rtc:uie=false", 1u << RTC_FEATURE_ALARM);
	assert_features("rtc:alarm=false,uie=false", 0);
}

static void test_unknown(struct fixture *f, gconstpointer data)
{
	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(call(f, compat, _IO('p', 0x7f), 0, NULL), ==,
				-ENOTTY);
		g_assert_cmpint(call_at(f, compat, RTC_VL_READ, NULL), ==,
				-ENOTTY);
		g_assert_cmpint(call(f, compat, RTC_WIE_ON, 0, NULL), ==,
				-ENOTTY);
	}
}

static void test_bad_pointer(struct fixture *f, gconstpointer data)
{
	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(call(f, compat, RTC_RD_TIME, 8, NULL), ==,
				-EFAULT);
		g_assert_cmpint(call(f, compat, RTC_SET_TIME, 8, NULL), ==,
				-EFAULT);
		g_assert_cmpint(call(f, compat, RTC_PARAM_GET, 8, NULL), ==,
				-EFAULT);
	}
}

static void assert_refused(const char *arg, const char *message)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev = fake_device_try(NULL, arg, &error);

	g_assert_null(dev);
	g_assert_nonnull(error);
	g_assert_nonnull(strstr(error->message, message));
}

static void test_bad_config(void)
{
	assert_refused("rtc:time=yesterday", "time is 'host' or a UTC time");
	assert_refused("rtc:time=2030-02-30 00:00:00", "not '2030-02-30");
	assert_refused("rtc:time=1969-12-31 23:59:59", "time is");
	assert_refused("rtc:max_freq=0", "out of range");
	assert_refused("rtc:max_freq=16384", "out of range");
	assert_refused("rtc:uie=maybe", "true or false");
	assert_refused("rtc:alarm_reach=week", "not 'week'");
}

/* ---- interrupts, read() and poll() */

static ssize_t rtc_read(struct fixture *f, void *buf, size_t size)
{
	return f->dev->model->read(f->dev, &f->file, buf, size);
}

static unsigned int rtc_poll(struct fixture *f)
{
	return f->dev->model->poll(f->dev, &f->file);
}

/* Poll as a client would, until something is pending or the time is up. */
static bool wait_pending(struct fixture *f, gint64 us)
{
	gint64 end = g_get_monotonic_time() + us;

	while (!rtc_poll(f)) {
		if (g_get_monotonic_time() > end)
			return false;
		g_usleep(5 * G_TIME_SPAN_MILLISECOND);
	}
	return true;
}

/*
 * The timer thread tells pollers after it lets the lock go, so a reader it
 * woke may run first: wait for the wake-up, up to us, instead of expecting
 * it already done.
 */
static bool wait_wake_up(struct fixture *f, gint64 us)
{
	gint64 end = g_get_monotonic_time() + us;

	while (g_atomic_int_get(&f->wake_ups) < 1) {
		if (g_get_monotonic_time() > end)
			return false;
		g_usleep(G_TIME_SPAN_MILLISECOND);
	}
	return true;
}

/* Read what is pending, so that the next wait sees only what comes. */
static void drain(struct fixture *f)
{
	uint32_t v;

	while (rtc_poll(f))
		g_assert_cmpint(rtc_read(f, &v, 4), ==, 4);
}

/*
 * An alarm the chip cannot reach, armed: rtc-cmos's cmos_validate_alarm()
 * refuses it with EINVAL, through RTC_WKALM_SET and RTC_AIE_ON alike, and
 * the refused time stays, disarmed. Each check starts right after a
 * set_time(), half a second before the emulated clock ticks.
 */
static void assert_reach(struct fixture *f, bool compat, struct rtc_time now,
			 struct rtc_time last)
{
	struct rtc_time beyond = secs_tm(tm_secs(&last) + 1);
	struct rtc_wkalrm a;

	g_assert_cmpint(set_time(f, compat, now), ==, 0);
	g_assert_cmpint(wkalm_set(f, compat, 1, last), ==, 0);
	g_assert_cmpint(wkalm_rd(f, compat).enabled, ==, 1);
	g_assert_cmpint(wkalm_set(f, compat, 1, beyond), ==, -EINVAL);
	a = wkalm_rd(f, compat);
	g_assert_cmpint(a.enabled, ==, 0);
	assert_same_tm(&a.time, &beyond);

	g_assert_cmpint(set_time(f, compat, now), ==, 0);
	g_assert_cmpint(wkalm_set(f, compat, 0, beyond), ==, 0);
	g_assert_cmpint(call(f, compat, RTC_AIE_ON, 0, NULL), ==, -EINVAL);
	g_assert_cmpint(wkalm_rd(f, compat).enabled, ==, 0);
	g_assert_cmpint(wkalm_set(f, compat, 0, last), ==, 0);
	g_assert_cmpint(call(f, compat, RTC_AIE_ON, 0, NULL), ==, 0);
	g_assert_cmpint(call(f, compat, RTC_AIE_OFF, 0, NULL), ==, 0);
}

/* The default plays an MC146818 alone: a day less a second. */
static void test_reach_day(struct fixture *f, gconstpointer data)
{
	struct rtc_time now = make_tm(2031, 5, 6, 7, 8, 9);
	struct rtc_time in_two_days = make_tm(2031, 5, 8, 7, 8, 9);

	for (int compat = 0; compat < 2; compat++) {
		assert_reach(f, compat, now, make_tm(2031, 5, 7, 7, 8, 8));
		/* Passed alarms are not the chip's to refuse: they fire. */
		g_assert_cmpint(wkalm_set(f, compat, 1,
					  make_tm(2031, 5, 6, 7, 0, 0)), ==, 0);
		g_assert_true(wait_pending(f, 200 * G_TIME_SPAN_MILLISECOND));
		drain(f);
		/* While the update interrupt runs it is the next timer, and
		 * the chip is not asked. */
		g_assert_cmpint(set_time(f, compat, now), ==, 0);
		g_assert_cmpint(call(f, compat, RTC_UIE_ON, 0, NULL), ==, 0);
		g_assert_cmpint(wkalm_set(f, compat, 1, in_two_days), ==, 0);
		g_assert_cmpint(wkalm_rd(f, compat).enabled, ==, 1);
		g_assert_cmpint(call(f, compat, RTC_UIE_OFF, 0, NULL), ==, 0);
		g_assert_cmpint(call(f, compat, RTC_AIE_OFF, 0, NULL), ==, 0);
		drain(f);
	}
}

/* With the day-of-month register: the same time a month on, the day
 * clamped to the month's last, across the year's end too. */
static void test_reach_month(struct fixture *f, gconstpointer data)
{
	for (int compat = 0; compat < 2; compat++) {
		assert_reach(f, compat, make_tm(2031, 1, 31, 10, 0, 0),
			     make_tm(2031, 2, 28, 9, 59, 59));
		assert_reach(f, compat, make_tm(2031, 12, 15, 0, 0, 0),
			     make_tm(2032, 1, 14, 23, 59, 59));
	}
}

/* With the month register too: the same date a year on. */
static void test_reach_year(struct fixture *f, gconstpointer data)
{
	for (int compat = 0; compat < 2; compat++)
		assert_reach(f, compat, make_tm(2032, 2, 29, 10, 0, 0),
			     make_tm(2033, 2, 28, 9, 59, 59));
}

static void test_reach_any(struct fixture *f, gconstpointer data)
{
	struct rtc_time last = make_tm(9999, 12, 31, 23, 59, 59);

	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(set_time(f, compat, make_tm(1970, 1, 1, 0, 0,
							    0)), ==, 0);
		g_assert_cmpint(wkalm_set(f, compat, 1, last), ==, 0);
		g_assert_cmpint(wkalm_rd(f, compat).enabled, ==, 1);
	}
}

static void test_read_rules(struct fixture *f, gconstpointer data)
{
	uint8_t buf[16];

	g_assert_cmpuint(rtc_poll(f), ==, 0);
	for (size_t size = 0; size < 8; size++) {
		if (size != 4)
			g_assert_cmpint(rtc_read(f, buf, size), ==, -EINVAL);
	}
	f->file.flags = O_RDONLY | O_NONBLOCK;
	g_assert_cmpint(rtc_read(f, buf, 4), ==, -EAGAIN);
	g_assert_cmpint(rtc_read(f, buf, 8), ==, -EAGAIN);
	g_assert_cmpint(rtc_read(f, buf, 16), ==, -EAGAIN);
}

static void test_uie(struct fixture *f, gconstpointer data)
{
	struct rtc_time before, after;
	uint32_t v32;
	uint64_t v64;
	gint64 t;

	before = rd_time(f, false);
	g_assert_cmpint(call(f, true, RTC_UIE_ON, 0, NULL), ==, 0);
	t = g_get_monotonic_time();
	g_assert_cmpint(rtc_read(f, &v32, 4), ==, 4);
	t = g_get_monotonic_time() - t;
	after = rd_time(f, false);
	g_assert_cmpint(t, <=, TICK_WAIT_US);
	g_assert_cmpint(tm_secs(&after), >, tm_secs(&before));
	g_assert_cmphex(v32, ==, 1 << 8 | RTC_IRQF | RTC_UF);
	g_assert_true(wait_wake_up(f, TICK_WAIT_US));

	/* poll() sees the next one; a read of 8 gets an unsigned long. */
	g_assert_true(wait_pending(f, TICK_WAIT_US));
	g_assert_cmpuint(rtc_poll(f), ==, POLLIN | POLLRDNORM);
	g_assert_cmpint(rtc_read(f, &v64, 16), ==, 8);
	g_assert_cmphex(v64 & 0xff, ==, RTC_IRQF | RTC_UF);
	g_assert_cmpuint(v64 >> 8, >=, 1);
	g_assert_cmpuint(rtc_poll(f), ==, 0);
	g_assert_cmpint(call(f, false, RTC_UIE_OFF, 0, NULL), ==, 0);
}

static void test_uie_counts(struct fixture *f, gconstpointer data)
{
	uint64_t v;

	/* Updates nobody read add up, as the kernel's irq_data does. */
	g_assert_cmpint(call(f, false, RTC_UIE_ON, 0, NULL), ==, 0);
	g_usleep(2100 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpint(rtc_read(f, &v, 8), ==, 8);
	g_assert_cmphex(v & 0xff, ==, RTC_IRQF | RTC_UF);
	g_assert_cmpuint(v >> 8, >=, 2);
	g_assert_cmpuint(v >> 8, <=, 3);
}

static void test_pie(struct fixture *f, gconstpointer data)
{
	uint64_t v;

	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 64, NULL), ==, 0);
	g_assert_cmpint(call(f, true, RTC_PIE_ON, 0, NULL), ==, 0);
	g_usleep(500 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpint(call(f, false, RTC_PIE_OFF, 0, NULL), ==, 0);
	g_assert_cmpint(rtc_read(f, &v, 8), ==, 8);
	g_assert_cmphex(v & 0xff, ==, RTC_IRQF | RTC_PF);
	/* 32 due; the thread's scheduling may cost a few, never add. */
	g_assert_cmpuint(v >> 8, >=, 20);
	g_assert_cmpuint(v >> 8, <=, 33);
	/* Off means off. */
	g_usleep(100 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpuint(rtc_poll(f), ==, 0);
}

static void test_pie_rate_change(struct fixture *f, gconstpointer data)
{
	uint64_t v;

	/* At 2 Hz nothing comes in 100 ms; at 64 Hz it does, at once. */
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 2, NULL), ==, 0);
	g_assert_cmpint(call(f, false, RTC_PIE_ON, 0, NULL), ==, 0);
	g_usleep(100 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpuint(rtc_poll(f), ==, 0);
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 64, NULL), ==, 0);
	g_assert_true(wait_pending(f, 100 * G_TIME_SPAN_MILLISECOND));
	g_assert_cmpint(rtc_read(f, &v, 8), ==, 8);
	g_assert_cmphex(v & 0xff, ==, RTC_IRQF | RTC_PF);
}

static void test_aie(struct fixture *f, gconstpointer data)
{
	struct rtc_time now = rd_time(f, false);
	struct rtc_time at = secs_tm(tm_secs(&now) + 1);
	uint32_t v;

	g_assert_cmpint(wkalm_set(f, true, 1, at), ==, 0);
	g_assert_cmpuint(rtc_poll(f), ==, 0);
	g_assert_true(wait_pending(f, 2500 * G_TIME_SPAN_MILLISECOND));
	g_assert_cmpint(rtc_read(f, &v, 4), ==, 4);
	g_assert_cmphex(v, ==, 1 << 8 | RTC_IRQF | RTC_AF);
	/* One shot: it fired and is disarmed. */
	g_assert_cmpint(wkalm_rd(f, false).enabled, ==, 0);
	g_assert_true(wait_wake_up(f, TICK_WAIT_US));
}

static void test_aie_past(struct fixture *f, gconstpointer data)
{
	struct rtc_time now = make_tm(2031, 5, 6, 7, 8, 9);
	uint32_t v;

	/* An alarm armed in the past fires at once. */
	g_assert_cmpint(set_time(f, false, now), ==, 0);
	g_assert_cmpint(wkalm_set(f, false, 1, make_tm(2031, 5, 6, 7, 0, 0)),
			==, 0);
	g_assert_true(wait_pending(f, 200 * G_TIME_SPAN_MILLISECOND));
	g_assert_cmpint(rtc_read(f, &v, 4), ==, 4);
	g_assert_cmphex(v, ==, 1 << 8 | RTC_IRQF | RTC_AF);

	/* Setting the time past an armed alarm fires it. */
	g_assert_cmpint(wkalm_set(f, false, 1, make_tm(2031, 5, 6, 12, 0, 0)),
			==, 0);
	g_usleep(100 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpuint(rtc_poll(f), ==, 0);
	g_assert_cmpint(set_time(f, true, make_tm(2031, 5, 6, 13, 0, 0)), ==,
			0);
	g_assert_true(wait_pending(f, 200 * G_TIME_SPAN_MILLISECOND));
	g_assert_cmpint(rtc_read(f, &v, 4), ==, 4);
	g_assert_cmphex(v, ==, 1 << 8 | RTC_IRQF | RTC_AF);

	/* Disarmed, it stays quiet; RTC_AIE_ON on a passed one fires. */
	g_assert_cmpint(wkalm_set(f, false, 0, make_tm(2031, 5, 6, 7, 0, 0)),
			==, 0);
	g_usleep(100 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpuint(rtc_poll(f), ==, 0);
	g_assert_cmpint(call(f, false, RTC_AIE_ON, 0, NULL), ==, 0);
	g_assert_true(wait_pending(f, 200 * G_TIME_SPAN_MILLISECOND));
}

struct reader {
	struct fixture *f;
	struct cusemu_request *req;
	ssize_t ret;
	uint32_t v;
	/* The reader thread's sleep count: odd while it waits in the read. */
	const unsigned long *sleeps;
};

static gpointer reader_thread(gpointer data)
{
	struct reader *r = data;

	if (r->req)
		cusemu_request_set_current(r->req);
	g_atomic_pointer_set(&r->sleeps, cusemu_request_sleeps());
	r->ret = rtc_read(r->f, &r->v, 4);
	cusemu_request_set_current(NULL);
	return NULL;
}

/* The client gave up (FUSE_INTERRUPT): the blocked read ends with EINTR. */
static void test_read_interrupted(struct fixture *f, gconstpointer data)
{
	struct cusemu_request req;
	struct reader r = { .f = f, .req = &req };
	GThread *thread;
	gint64 t;

	cusemu_request_init(&req, NULL, NULL);
	thread = g_thread_new("reader", reader_thread, &r);
	g_usleep(200 * G_TIME_SPAN_MILLISECOND);
	t = g_get_monotonic_time();
	cusemu_wait_ctx_interrupt(&req.wait);
	g_thread_join(thread);
	t = g_get_monotonic_time() - t;
	g_assert_cmpint(r.ret, ==, -EINTR);
	g_assert_cmpint(t, <, 200 * G_TIME_SPAN_MILLISECOND);
	cusemu_request_clear(&req);
}

/* A read blocked on one device holds no ioctl of it up. */
static void test_read_blocks_alone(struct fixture *f, gconstpointer data)
{
	struct reader r = { .f = f };
	GThread *thread;

	thread = g_thread_new("reader", reader_thread, &r);
	g_usleep(100 * G_TIME_SPAN_MILLISECOND);
	rd_time(f, true);
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 64, NULL), ==, 0);
	g_assert_cmpint(call(f, false, RTC_PIE_ON, 0, NULL), ==, 0);
	g_thread_join(thread);
	g_assert_cmpint(r.ret, ==, 4);
	g_assert_cmphex(r.v & 0xff, ==, RTC_IRQF | RTC_PF);
}

/*
 * A session that could not end a waiting read still frees the device: the
 * read leaves first, and remove() joins the timer thread.
 */
static void test_remove_with_reader(void)
{
	struct fixture f = { 0 };
	struct reader r = { .f = &f };
	const unsigned long *sleeps;
	GThread *thread;

	setup(&f, NULL);
	thread = g_thread_new("reader", reader_thread, &r);
	/*
	 * Until the read waits in the model, however late a loaded machine
	 * runs the thread: a remove before it would free what it reads.
	 */
	while (!(sleeps = g_atomic_pointer_get(&r.sleeps)) ||
	       !(__atomic_load_n(sleeps, __ATOMIC_ACQUIRE) & 1))
		g_usleep(1000);
	fake_device_free(f.dev);
	g_thread_join(thread);
	g_assert_cmpint(r.ret, ==, -ENODEV);
	g_free(f.native.mem);
	g_free(f.compat.mem);
}

static void test_open(struct fixture *f, gconstpointer data)
{
	struct cusemu_file other = { .dev = f->dev };
	uint64_t v;

	/* One opener at a time, as dev.c's RTC_DEV_BUSY. */
	g_assert_cmpint(f->dev->model->open(f->dev, &other), ==, -EBUSY);

	/* Release turns the repeating interrupts off, not the alarm. */
	g_assert_cmpint(call(f, false, RTC_UIE_ON, 0, NULL), ==, 0);
	g_assert_cmpint(call(f, false, RTC_PIE_ON, 0, NULL), ==, 0);
	g_assert_cmpint(wkalm_set(f, false, 1, make_tm(2099, 1, 1, 0, 0, 0)),
			==, 0);
	g_assert_true(wait_pending(f, TICK_WAIT_US));
	f->dev->model->release(f->dev, &f->file);
	g_assert_cmpint(f->dev->model->open(f->dev, &other), ==, 0);
	/* A fresh open starts with nothing pending. */
	g_assert_cmpuint(f->dev->model->poll(f->dev, &other), ==, 0);
	g_usleep(TICK_WAIT_US);
	g_assert_cmpuint(f->dev->model->poll(f->dev, &other), ==, 0);
	g_assert_cmpint(wkalm_rd(f, false).enabled, ==, 1);
	other.flags = O_NONBLOCK;
	g_assert_cmpint(f->dev->model->read(f->dev, &other, (char *)&v, 8), ==,
			-EAGAIN);
	f->dev->model->release(f->dev, &other);
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
}

/* The i386 numbers also reach the device through the global ioctl32 table. */
static void test_global_table(struct fixture *f, gconstpointer data)
{
	uint8_t *p;
	uint32_t v32;

	g_assert_cmpint(call(f, true, RTC_IRQP_SET32, 16, NULL), ==, 0);
	p = arg_area(f, true, NULL, 0);
	g_assert_cmpint(call_at(f, true, RTC_IRQP_READ32, NULL), ==, 0);
	memcpy(&v32, p, 4);
	g_assert_cmpuint(v32, ==, 16);
	rd_time(f, true);
	rd_time(f, false);
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 8193, NULL), ==, -EINVAL);
}

#define ADD(name, arg, fn) \
	g_test_add(name, struct fixture, arg, setup, fn, teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	ADD("/rtc/time/param", "rtc:time=2030-01-02 03:04:05",
	    test_time_param);
	ADD("/rtc/time/param-T", "rtc:time=2030-01-02T03:04:05",
	    test_time_param);
	ADD("/rtc/time/set", NULL, test_set_time);
	ADD("/rtc/time/max-year", "rtc:max_year=2069", test_max_year);
	ADD("/rtc/time/set-half-second", NULL, test_set_time_half_second);
	ADD("/rtc/time/bad", NULL, test_bad_time);
	ADD("/rtc/alarm/alm", NULL, test_alm);
	ADD("/rtc/alarm/wkalm", NULL, test_wkalm);
	ADD("/rtc/alarm/reach/day", NULL, test_reach_day);
	ADD("/rtc/alarm/reach/month", "rtc:alarm_reach=month",
	    test_reach_month);
	ADD("/rtc/alarm/reach/year", "rtc:alarm_reach=year", test_reach_year);
	ADD("/rtc/alarm/reach/any", "rtc:alarm_reach=any", test_reach_any);
	ADD("/rtc/alarm/none", "rtc:alarm=false", test_no_alarm);
	ADD("/rtc/alarm/no-uie", "rtc:uie=false", test_no_uie);
	ADD("/rtc/irqp", NULL, test_irqp);
	ADD("/rtc/irqp/2.6.10", "rtc:kernel=2.6.10,max_freq=64", test_irqp_2610);
	ADD("/rtc/irqp/split", "rtc:kernel=split,max_freq=64", test_irqp_2610);
	ADD("/rtc/irqp/2.6.11", "rtc:kernel=2.6.11", test_irqp);
	ADD("/rtc/irqp/max-freq", "rtc:max_freq=8192", test_max_freq);
	ADD("/rtc/epoch", "rtc:kernel=2.6.11", test_epoch);
	ADD("/rtc/epoch/modern", NULL, test_epoch_modern);
	ADD("/rtc/param", NULL, test_params);
	g_test_add_func("/rtc/param/features", test_features);
	ADD("/rtc/unknown", NULL, test_unknown);
	ADD("/rtc/bad-pointer", NULL, test_bad_pointer);
	g_test_add_func("/rtc/bad-config", test_bad_config);
	ADD("/rtc/read/rules", NULL, test_read_rules);
	ADD("/rtc/read/uie", NULL, test_uie);
	ADD("/rtc/read/uie-counts", NULL, test_uie_counts);
	ADD("/rtc/read/pie", NULL, test_pie);
	ADD("/rtc/read/pie-rate-change", NULL, test_pie_rate_change);
	ADD("/rtc/read/aie", NULL, test_aie);
	ADD("/rtc/read/aie-past", NULL, test_aie_past);
	ADD("/rtc/read/interrupted", NULL, test_read_interrupted);
	ADD("/rtc/read/blocks-alone", NULL, test_read_blocks_alone);
	ADD("/rtc/open", NULL, test_open);
	g_test_add_func("/rtc/remove-with-reader", test_remove_with_reader);
	ADD("/rtc/kernel/2.6.10", "rtc:kernel=2.6.10", test_global_table);
	ADD("/rtc/kernel/2.6.11", "rtc:kernel=2.6.11", test_global_table);
	return g_test_run();
}
