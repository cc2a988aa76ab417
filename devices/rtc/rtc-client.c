/* SPDX-License-Identifier: MIT */
/*
 * A self-checking client of the rtc device node: the <linux/rtc.h> ioctls,
 * read() and poll() of interrupts, in the ABI it is built for (-m64 or
 * -m32), reported as TAP. It covers what hwclock does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/rtc.h>

#include "tap.h"

#define DEFAULT_MAX_FREQ 8192
/* How far the host clock may move while the checks set the RTC's. */
#define HOST_SLACK_S 5
/* A wait the device should end within a second takes at most this. */
#define TICK_SLACK_S 1.6
#define NO_IRQ 0xdeadbeefu

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- struct rtc_time */

static struct rtc_time make_tm(int year, int mon, int mday, int hour, int min,
			       int sec)
{
	return (struct rtc_time){
		.tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = mday,
		.tm_hour = hour, .tm_min = min, .tm_sec = sec,
	};
}

/* Seconds since 1970, in 64 bits whatever this ABI's time_t is. */
static int64_t tm_secs(const struct rtc_time *tm)
{
	int64_t y = tm->tm_year + 1900, m = tm->tm_mon + 1;

	if (m <= 2) {
		m += 12;
		y--;
	}
	return ((((y / 4 - y / 100 + y / 400 + 367 * (m - 2) / 12 +
		   tm->tm_mday + y * 365 - 719499) * 24 + tm->tm_hour) * 60 +
		 tm->tm_min) * 60 + tm->tm_sec);
}

static struct rtc_time secs_tm(int64_t t)
{
	time_t tt = (time_t)t;	/* the dates used fit before 2038 */
	struct tm g;

	gmtime_r(&tt, &g);
	return (struct rtc_time){
		.tm_sec = g.tm_sec, .tm_min = g.tm_min, .tm_hour = g.tm_hour,
		.tm_mday = g.tm_mday, .tm_mon = g.tm_mon, .tm_year = g.tm_year,
		.tm_wday = g.tm_wday, .tm_yday = g.tm_yday,
	};
}

static const char *show_tm(const struct rtc_time *tm)
{
	static char buf[2][96];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]),
		 "%04d-%02d-%02d %02d:%02d:%02d (wday %d yday %d isdst %d)",
		 tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday, tm->tm_hour,
		 tm->tm_min, tm->tm_sec, tm->tm_wday, tm->tm_yday,
		 tm->tm_isdst);
	return buf[i];
}

static bool rd_time(int fd, struct rtc_time *tm, const char *desc)
{
	long ret;

	memset(tm, 0xAA, sizeof(*tm));
	ret = ioctl(fd, RTC_RD_TIME, tm);
	return ret == 0 || report(false, desc, "RTC_RD_TIME: %s",
				  show_ret(ret, errno));
}

/* The time read is want, or at most slack seconds later. */
static bool expect_time(int fd, const char *desc, const struct rtc_time *want,
			int slack)
{
	struct rtc_time got;
	int64_t d;

	if (!rd_time(fd, &got, desc))
		return false;
	d = tm_secs(&got) - tm_secs(want);
	return report(d >= 0 && d <= slack, desc, "expected %s (+%ds), got %s",
		      show_tm(want), slack, show_tm(&got));
}

/* ---- the checks */

static void check_exclusive(const char *node)
{
	int fd = open(node, O_RDONLY);

	expect_errno("a second open fails with EBUSY (one opener, as dev.c)",
		     fd, EBUSY);
	if (fd >= 0)
		close(fd);
}

static void quiet(int fd)
{
	expect_ret("RTC_AIE_OFF returns 0", ioctl(fd, RTC_AIE_OFF, 0), 0);
	expect_ret("RTC_UIE_OFF returns 0", ioctl(fd, RTC_UIE_OFF, 0), 0);
	expect_ret("RTC_PIE_OFF returns 0", ioctl(fd, RTC_PIE_OFF, 0), 0);
}

/* Whatever interrupts came in, they are read and gone. */
static void drain(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	unsigned long data;

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		bail("cannot set O_NONBLOCK");
	while (read(fd, &data, sizeof(data)) > 0)
		;
	if (fcntl(fd, F_SETFL, flags))
		bail("cannot clear O_NONBLOCK");
}

static void check_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	uint32_t data;

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		bail("cannot set O_NONBLOCK");
	expect_errno("O_NONBLOCK read with nothing pending fails with EAGAIN",
		     read(fd, &data, sizeof(data)), EAGAIN);
	if (fcntl(fd, F_SETFL, flags))
		bail("cannot clear O_NONBLOCK");
}

static void check_first_read(int fd)
{
	struct rtc_time tm;

	if (!rd_time(fd, &tm, "RTC_RD_TIME returns 0"))
		return;
	report(tm.tm_year >= 70 && (unsigned int)tm.tm_mon < 12 &&
	       tm.tm_mday >= 1 && tm.tm_mday <= 31 &&
	       (unsigned int)tm.tm_hour < 24 && (unsigned int)tm.tm_min < 60 &&
	       (unsigned int)tm.tm_sec < 60,
	       "RTC_RD_TIME gives a valid time", "got %s", show_tm(&tm));
}

static const struct rtc_time *t0(void)
{
	static struct rtc_time tm;

	tm = make_tm(2031, 5, 6, 7, 8, 9);
	return &tm;
}

static void check_set_time(int fd)
{
	struct rtc_time want = secs_tm(tm_secs(t0())), got;
	time_t before = time(NULL), after;

	expect_ret("RTC_SET_TIME 2031-05-06 07:08:09 returns 0",
		   ioctl(fd, RTC_SET_TIME, t0()), 0);
	expect_time(fd, "RTC_RD_TIME gives 2031-05-06 07:08:09 back", &want,
		    1);
	if (rd_time(fd, &got, "RTC_RD_TIME fills in the week and year day"))
		report(got.tm_wday == want.tm_wday &&
		       got.tm_yday == want.tm_yday && got.tm_isdst == 0,
		       "RTC_RD_TIME fills in the week and year day",
		       "expected wday %d yday %d isdst 0, got %s",
		       want.tm_wday, want.tm_yday, show_tm(&got));
	after = time(NULL);
	report(after >= before && after - before <= HOST_SLACK_S,
	       "the host clock is untouched by RTC_SET_TIME",
	       "time() moved by %lld s", (long long)(after - before));
}

static void expect_bad_time(int fd, const char *desc, struct rtc_time tm,
			    int err)
{
	expect_errno(desc, ioctl(fd, RTC_SET_TIME, &tm), err);
}

static void check_bad_time(int fd)
{
	struct rtc_time leap = make_tm(2032, 2, 29, 12, 0, 0);

	expect_bad_time(fd, "RTC_SET_TIME with month 12 fails with EINVAL",
			make_tm(2031, 13, 1, 0, 0, 0), EINVAL);
	expect_bad_time(fd, "RTC_SET_TIME with day 0 fails with EINVAL",
			make_tm(2031, 5, 0, 0, 0, 0), EINVAL);
	expect_bad_time(fd, "RTC_SET_TIME 2031-02-29 fails with EINVAL",
			make_tm(2031, 2, 29, 0, 0, 0), EINVAL);
	expect_bad_time(fd, "RTC_SET_TIME with hour 24 fails with EINVAL",
			make_tm(2031, 5, 6, 24, 0, 0), EINVAL);
	expect_bad_time(fd, "RTC_SET_TIME with minute 60 fails with EINVAL",
			make_tm(2031, 5, 6, 7, 60, 0), EINVAL);
	expect_bad_time(fd, "RTC_SET_TIME with second 60 fails with EINVAL",
			make_tm(2031, 5, 6, 7, 8, 60), EINVAL);
	expect_bad_time(fd, "RTC_SET_TIME in 1969 fails with EINVAL",
			make_tm(1969, 12, 31, 23, 59, 59), EINVAL);
	expect_bad_time(fd, "RTC_SET_TIME in the year 10000 fails with ERANGE",
			make_tm(10000, 1, 1, 0, 0, 0), ERANGE);
	expect_time(fd, "the refused sets leave the time alone", t0(), 3);

	expect_ret("RTC_SET_TIME 2032-02-29 (a leap day) returns 0",
		   ioctl(fd, RTC_SET_TIME, &leap), 0);
	expect_time(fd, "RTC_RD_TIME gives 2032-02-29 back", &leap, 1);
	expect_ret("RTC_SET_TIME back to 2031-05-06 07:08:09 returns 0",
		   ioctl(fd, RTC_SET_TIME, t0()), 0);
}

static bool expect_alarm(int fd, const char *desc, const struct rtc_time *want,
			 int enabled)
{
	struct rtc_wkalrm a;
	long ret;

	memset(&a, 0xAA, sizeof(a));
	ret = ioctl(fd, RTC_WKALM_RD, &a);
	if (ret)
		return report(false, desc, "RTC_WKALM_RD: %s",
			      show_ret(ret, errno));
	return report(a.enabled == enabled && a.pending == 0 &&
		      tm_secs(&a.time) == tm_secs(want),
		      desc, "expected %s enabled %d pending 0, got %s enabled "
		      "%d pending %d", show_tm(want), enabled, show_tm(&a.time),
		      a.enabled, a.pending);
}

static bool expect_alm_read(int fd, const char *desc,
			    const struct rtc_time *want)
{
	struct rtc_time got;
	long ret;

	memset(&got, 0xAA, sizeof(got));
	ret = ioctl(fd, RTC_ALM_READ, &got);
	if (ret)
		return report(false, desc, "RTC_ALM_READ: %s",
			      show_ret(ret, errno));
	return report(tm_secs(&got) == tm_secs(want), desc,
		      "expected %s, got %s", show_tm(want), show_tm(&got));
}

/* RTC_ALM_SET takes a time of day within the next 24 hours (dev.c). */
static void check_alm(int fd)
{
	struct rtc_time later = make_tm(2031, 5, 6, 7, 30, 0);
	struct rtc_time passed = make_tm(2031, 5, 6, 6, 0, 0);
	struct rtc_time tomorrow = make_tm(2031, 5, 7, 6, 0, 0);
	struct rtc_time odd_date = make_tm(1900, 14, 0, 7, 45, 0);
	struct rtc_time odd_want = make_tm(2031, 5, 6, 7, 45, 0);
	struct rtc_time armed = make_tm(2031, 5, 6, 9, 0, 0);
	struct rtc_time bad = make_tm(2031, 5, 6, 24, 0, 0);

	expect_ret("RTC_ALM_SET 07:30:00 returns 0",
		   ioctl(fd, RTC_ALM_SET, &later), 0);
	expect_alm_read(fd, "RTC_ALM_READ gives today 07:30:00", &later);
	expect_alarm(fd, "RTC_WKALM_RD: the alarm is set but not armed",
		     &later, 0);
	expect_ret("RTC_ALM_SET 06:00:00 (passed today) returns 0",
		   ioctl(fd, RTC_ALM_SET, &passed), 0);
	expect_alm_read(fd, "RTC_ALM_READ gives tomorrow 06:00:00", &tomorrow);
	expect_ret("RTC_ALM_SET ignores the date fields",
		   ioctl(fd, RTC_ALM_SET, &odd_date), 0);
	expect_alm_read(fd, "RTC_ALM_READ gives today 07:45:00", &odd_want);
	expect_errno("RTC_ALM_SET with hour 24 fails with EINVAL",
		     ioctl(fd, RTC_ALM_SET, &bad), EINVAL);
	expect_alm_read(fd, "the refused RTC_ALM_SET leaves the alarm alone",
			&odd_want);

	expect_ret("RTC_AIE_ON arms it", ioctl(fd, RTC_AIE_ON, 0), 0);
	expect_alarm(fd, "RTC_WKALM_RD: armed", &odd_want, 1);
	expect_ret("RTC_ALM_SET 09:00:00 returns 0",
		   ioctl(fd, RTC_ALM_SET, &armed), 0);
	expect_alarm(fd, "RTC_ALM_SET disarms the alarm, as dev.c does",
		     &armed, 0);
}

static void check_wkalm(int fd)
{
	struct rtc_wkalrm a = { .enabled = 1,
				.time = make_tm(2031, 5, 6, 9, 0, 0) };
	struct rtc_wkalrm off = { .enabled = 0,
				  .time = make_tm(2031, 6, 1, 0, 0, 0) };
	struct rtc_wkalrm bad = { .enabled = 1,
				  .time = make_tm(2031, 4, 31, 0, 0, 0) };
	struct rtc_wkalrm far = { .enabled = 1,
				  .time = make_tm(10000, 1, 1, 0, 0, 0) };

	expect_ret("RTC_WKALM_SET enabled 2031-05-06 09:00:00 returns 0",
		   ioctl(fd, RTC_WKALM_SET, &a), 0);
	expect_alarm(fd, "RTC_WKALM_RD gives it back, armed", &a.time, 1);
	expect_ret("RTC_WKALM_SET disabled 2031-06-01 00:00:00 returns 0",
		   ioctl(fd, RTC_WKALM_SET, &off), 0);
	expect_alarm(fd, "RTC_WKALM_RD gives it back, disarmed", &off.time, 0);
	expect_alm_read(fd, "RTC_ALM_READ gives the same full date", &off.time);
	expect_errno("RTC_WKALM_SET 2031-04-31 fails with EINVAL",
		     ioctl(fd, RTC_WKALM_SET, &bad), EINVAL);
	expect_errno("RTC_WKALM_SET in the year 10000 fails with ERANGE",
		     ioctl(fd, RTC_WKALM_SET, &far), ERANGE);
	expect_alarm(fd, "the refused sets leave the alarm alone", &off.time,
		     0);
}

/* One read of size bytes: the interrupt word, or NO_IRQ. */
static uint64_t read_irq(int fd, size_t size, long *ret)
{
	unsigned char buf[16];
	uint32_t v32;
	uint64_t v64;

	memset(buf, 0, sizeof(buf));
	*ret = read(fd, buf, size);
	if (*ret == 4) {
		memcpy(&v32, buf, 4);
		return v32;
	}
	if (*ret == 8) {
		memcpy(&v64, buf, 8);
		return v64;
	}
	return NO_IRQ;
}

static bool expect_irq(const char *desc, uint64_t data, long ret, size_t want,
		       unsigned int kind)
{
	int err = errno;

	if (ret != (long)want)
		return report(false, desc, "read returned %s, expected %zu",
			      show_ret(ret, err), want);
	return report((data & RTC_IRQF) && (data & kind) && (data >> 8) >= 1,
		      desc, "expected RTC_IRQF|0x%02x and a count, got 0x%llx",
		      kind, (unsigned long long)data);
}

static void check_aie_poll(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct rtc_time now, at;
	uint64_t data;
	double t;
	long ret;
	int n;

	if (!rd_time(fd, &now, "read the time before the alarm"))
		return;
	at = secs_tm(tm_secs(&now) + 2);
	expect_ret("RTC_ALM_SET 2 s ahead returns 0",
		   ioctl(fd, RTC_ALM_SET, &at), 0);
	expect_ret("RTC_AIE_ON returns 0", ioctl(fd, RTC_AIE_ON, 0), 0);
	expect_ret("poll() at once: nothing pending yet", poll(&pfd, 1, 0), 0);
	t = now_s();
	n = poll(&pfd, 1, 4000);
	t = now_s() - t;
	report(n == 1 && (pfd.revents & POLLIN),
	       "poll() wakes with POLLIN when the alarm fires",
	       "poll returned %s, revents 0x%x", show_ret(n, errno),
	       pfd.revents);
	report(t >= 0.5 && t <= 3.0, "... within 0.5 to 3 s",
	       "it took %.2f s", t);
	data = read_irq(fd, 4, &ret);
	expect_irq("read() reports RTC_AF", data, ret, 4, RTC_AF);
	expect_alarm(fd, "a fired alarm is disarmed", &at, 0);
	expect_ret("RTC_AIE_OFF returns 0", ioctl(fd, RTC_AIE_OFF, 0), 0);
}

static void check_uie_read(int fd)
{
	struct rtc_time before, after;
	uint64_t data;
	double t;
	long ret;

	if (!rd_time(fd, &before, "read the time before RTC_UIE_ON"))
		return;
	expect_ret("RTC_UIE_ON returns 0", ioctl(fd, RTC_UIE_ON, 0), 0);
	t = now_s();
	data = read_irq(fd, 4, &ret);
	t = now_s() - t;
	expect_irq("a blocking read() reports RTC_UF", data, ret, 4, RTC_UF);
	if (rd_time(fd, &after, "the read returns when the second changes"))
		report(tm_secs(&after) > tm_secs(&before) &&
		       t <= TICK_SLACK_S,
		       "the read returns when the second changes",
		       "%s -> %s in %.2f s", show_tm(&before), show_tm(&after),
		       t);
	data = read_irq(fd, sizeof(long), &ret);
	expect_irq("a read of sizeof(long) reports the next RTC_UF", data, ret,
		   sizeof(long), RTC_UF);
	expect_ret("RTC_UIE_OFF returns 0", ioctl(fd, RTC_UIE_OFF, 0), 0);
	drain(fd);
}

struct reader {
	int fd;
	long ret;
	uint64_t data;
	double took;
};

static void *reader_thread(void *data)
{
	struct reader *r = data;
	double t = now_s();

	r->data = read_irq(r->fd, 4, &r->ret);
	r->took = now_s() - t;
	return NULL;
}

/* Each request has its own thread in the daemon: one that waits holds none
 * of the others up. */
static void check_blocked_read(int fd, const char *node)
{
	struct reader r = { .fd = fd };
	struct rtc_time tm;
	pthread_t thread;
	double t;
	int fd2;

	if (pthread_create(&thread, NULL, reader_thread, &r))
		bail("cannot start a reader thread");
	usleep(300 * 1000);
	t = now_s();
	rd_time(fd, &tm, "RTC_RD_TIME while a read blocks");
	fd2 = open(node, O_RDONLY);
	t = now_s() - t;
	report(t < 0.5, "RTC_RD_TIME and an open are served while a read "
	       "blocks", "they took %.2f s", t);
	expect_errno("... the open fails with EBUSY", fd2, EBUSY);
	if (fd2 >= 0)
		close(fd2);
	expect_ret("RTC_UIE_ON returns 0", ioctl(fd, RTC_UIE_ON, 0), 0);
	pthread_join(thread, NULL);
	expect_irq("the blocked read then reports RTC_UF", r.data, r.ret, 4,
		   RTC_UF);
	report(r.took >= 0.3, "... after blocking", "it took %.2f s", r.took);
	expect_ret("RTC_UIE_OFF returns 0", ioctl(fd, RTC_UIE_OFF, 0), 0);
	drain(fd);
}

/* dev.c on a 64-bit kernel: 4 bytes, or sizeof(unsigned long) or more. */
static void check_read_sizes(int fd)
{
	unsigned char buf[16];
	uint64_t data;
	long ret;

	expect_errno("a read of 2 bytes fails with EINVAL", read(fd, buf, 2),
		     EINVAL);
	if (sizeof(long) == 8)
		expect_errno("a read of 6 bytes fails with EINVAL",
			     read(fd, buf, 6), EINVAL);
	expect_ret("RTC_IRQP_SET 64 returns 0", ioctl(fd, RTC_IRQP_SET, 64ul),
		   0);
	expect_ret("RTC_PIE_ON returns 0", ioctl(fd, RTC_PIE_ON, 0), 0);
	data = read_irq(fd, 4, &ret);
	expect_irq("a read of 4 bytes gives a u32 with RTC_PF", data, ret, 4,
		   RTC_PF);
	data = read_irq(fd, 8, &ret);
	expect_irq("a read of 8 bytes gives 8 with RTC_PF", data, ret, 8,
		   RTC_PF);
	if (sizeof(long) == 8) {
		data = read_irq(fd, 16, &ret);
		expect_irq("a read of 16 bytes gives 8", data, ret, 8, RTC_PF);
	}
	expect_ret("RTC_PIE_OFF returns 0", ioctl(fd, RTC_PIE_OFF, 0), 0);
	drain(fd);
}

static void check_pie(int fd)
{
	unsigned long freq = 0;
	uint64_t data, count = 0;
	bool kinds = true;
	double end;
	long ret;

	expect_ret("RTC_IRQP_SET 8 returns 0", ioctl(fd, RTC_IRQP_SET, 8ul), 0);
	ret = ioctl(fd, RTC_IRQP_READ, &freq);
	report(ret == 0 && freq == 8, "RTC_IRQP_READ gives 8",
	       "got %s, rate %lu", show_ret(ret, errno), freq);
	expect_ret("RTC_PIE_ON returns 0", ioctl(fd, RTC_PIE_ON, 0), 0);
	end = now_s() + 1.0;
	while (now_s() < end) {
		data = read_irq(fd, 4, &ret);
		if (ret != 4)
			break;
		kinds = kinds && (data & RTC_PF) && (data & RTC_IRQF);
		count += data >> 8;
	}
	expect_ret("RTC_PIE_OFF returns 0", ioctl(fd, RTC_PIE_OFF, 0), 0);
	report(ret == 4 && kinds, "every read reports RTC_PF",
	       "the last read returned %s", show_ret(ret, errno));
	report(count >= 4 && count <= 16,
	       "about 8 periodic interrupts in a second",
	       "counted %llu", (unsigned long long)count);
	drain(fd);
}

static void check_irqp_errors(int fd, unsigned long max_freq)
{
	unsigned long freq = 0;
	long ret;

	/* Today's rtc_irq_set_freq(): 1 to the chip's highest, no other rule. */
	expect_errno("RTC_IRQP_SET 0 fails with EINVAL",
		     ioctl(fd, RTC_IRQP_SET, 0ul), EINVAL);
	expect_errno("RTC_IRQP_SET max_freq + 1 fails with EINVAL",
		     ioctl(fd, RTC_IRQP_SET, max_freq + 1), EINVAL);
	expect_errno("RTC_IRQP_SET -1 fails with EINVAL",
		     ioctl(fd, RTC_IRQP_SET, -1l), EINVAL);
	ret = ioctl(fd, RTC_IRQP_READ, &freq);
	report(ret == 0 && freq == 8, "RTC_IRQP_READ still gives 8",
	       "got %s, rate %lu", show_ret(ret, errno), freq);
	expect_ret("RTC_IRQP_SET 3 (not a power of two) returns 0",
		   ioctl(fd, RTC_IRQP_SET, 3ul), 0);
	expect_ret("RTC_IRQP_SET 1 returns 0", ioctl(fd, RTC_IRQP_SET, 1ul), 0);
	expect_ret("RTC_IRQP_SET max_freq returns 0",
		   ioctl(fd, RTC_IRQP_SET, max_freq), 0);
	ret = ioctl(fd, RTC_IRQP_READ, &freq);
	report(ret == 0 && freq == max_freq, "RTC_IRQP_READ gives max_freq",
	       "got %s, rate %lu", show_ret(ret, errno), freq);
	expect_ret("RTC_IRQP_SET 64 returns 0", ioctl(fd, RTC_IRQP_SET, 64ul), 0);
}

/* Today's x86 rtc-dev has no epoch: the modern kernel model's ENOTTY. */
static void check_epoch(int fd)
{
	unsigned long epoch = 0;

	expect_errno("RTC_EPOCH_READ fails with ENOTTY, as on today's x86",
		     ioctl(fd, RTC_EPOCH_READ, &epoch), ENOTTY);
	expect_errno("RTC_EPOCH_SET fails with ENOTTY, as on today's x86",
		     ioctl(fd, RTC_EPOCH_SET, 2000ul), ENOTTY);
}

static long param(int fd, unsigned long cmd, uint64_t which, uint32_t index,
		  struct rtc_param *p)
{
	*p = (struct rtc_param){ .param = which, .index = index };
	return ioctl(fd, cmd, p);
}

static void check_params(int fd)
{
	uint64_t want = 1u << RTC_FEATURE_ALARM |
			1u << RTC_FEATURE_UPDATE_INTERRUPT;
	struct rtc_param p;
	long ret;

	ret = param(fd, RTC_PARAM_GET, RTC_PARAM_FEATURES, 0, &p);
	report(ret == 0 && p.uvalue == want,
	       "RTC_PARAM_GET RTC_PARAM_FEATURES: alarm and update interrupt",
	       "got %s, features 0x%llx", show_ret(ret, errno),
	       (unsigned long long)p.uvalue);
	expect_errno("RTC_PARAM_GET RTC_PARAM_FEATURES index 1 fails with "
		     "EINVAL", param(fd, RTC_PARAM_GET, RTC_PARAM_FEATURES, 1,
				     &p), EINVAL);
	expect_errno("RTC_PARAM_GET RTC_PARAM_CORRECTION fails with EINVAL",
		     param(fd, RTC_PARAM_GET, RTC_PARAM_CORRECTION, 0, &p),
		     EINVAL);
	expect_errno("RTC_PARAM_GET RTC_PARAM_BACKUP_SWITCH_MODE fails with "
		     "EINVAL", param(fd, RTC_PARAM_GET,
				     RTC_PARAM_BACKUP_SWITCH_MODE, 0, &p),
		     EINVAL);
	expect_errno("RTC_PARAM_GET of an unknown parameter fails with EINVAL",
		     param(fd, RTC_PARAM_GET, 99, 0, &p), EINVAL);
	expect_errno("RTC_PARAM_SET RTC_PARAM_FEATURES fails with EINVAL",
		     param(fd, RTC_PARAM_SET, RTC_PARAM_FEATURES, 0, &p),
		     EINVAL);
	expect_errno("RTC_PARAM_SET RTC_PARAM_CORRECTION fails with EINVAL",
		     param(fd, RTC_PARAM_SET, RTC_PARAM_CORRECTION, 0, &p),
		     EINVAL);
}

static void check_unknown(int fd)
{
	struct rtc_pll_info pll;
	unsigned int vl;

	expect_errno("unknown command _IO('p', 0x7f) fails with ENOTTY",
		     ioctl(fd, _IO('p', 0x7f)), ENOTTY);
	expect_errno("RTC_VL_READ (a driver's own) fails with ENOTTY",
		     ioctl(fd, RTC_VL_READ, &vl), ENOTTY);
	expect_errno("RTC_PLL_GET fails with ENOTTY",
		     ioctl(fd, RTC_PLL_GET, &pll), ENOTTY);
	expect_errno("RTC_WIE_ON fails with ENOTTY", ioctl(fd, RTC_WIE_ON, 0),
		     ENOTTY);
}

static void check_bad_pointers(int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *bad = (void *)8;
	void *p;

	expect_errno("RTC_RD_TIME to address 8 fails with EFAULT",
		     ioctl(fd, RTC_RD_TIME, bad), EFAULT);
	expect_errno("RTC_SET_TIME from address 8 fails with EFAULT",
		     ioctl(fd, RTC_SET_TIME, bad), EFAULT);
	expect_errno("RTC_ALM_READ to address 8 fails with EFAULT",
		     ioctl(fd, RTC_ALM_READ, bad), EFAULT);
	expect_errno("RTC_WKALM_RD to address 8 fails with EFAULT",
		     ioctl(fd, RTC_WKALM_RD, bad), EFAULT);
	expect_errno("RTC_IRQP_READ to address 8 fails with EFAULT",
		     ioctl(fd, RTC_IRQP_READ, bad), EFAULT);
	expect_errno("RTC_PARAM_GET at address 8 fails with EFAULT",
		     ioctl(fd, RTC_PARAM_GET, bad), EFAULT);

	p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p, page, PROT_NONE))
		bail("cannot make a PROT_NONE page");
	expect_errno("RTC_RD_TIME into a PROT_NONE page fails with EFAULT",
		     ioctl(fd, RTC_RD_TIME, p), EFAULT);
	munmap(p, page);
	expect_time(fd, "the device serves on after the bad pointers", t0(),
		    120);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal ends a blocked read with EINTR: the daemon hears the kernel's
 * FUSE_INTERRUPT and lets go. */
static void check_interrupted_read(int fd)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	uint32_t data;
	double t;
	long ret;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, &old))
		bail("cannot catch SIGALRM");
	alarm(1);
	t = now_s();
	ret = read(fd, &data, sizeof(data));
	t = now_s() - t;
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	expect_errno("a blocked read interrupted by a signal fails with EINTR",
		     ret, EINTR);
	report(t >= 0.5 && t <= 3.0, "... about when the signal came",
	       "it took %.2f s", t);
	expect_time(fd, "the device serves on after the interrupted read",
		    t0(), 120);
}

/* Leave the clock near the host's for whoever opens the node next. */
static void restore_time(int fd)
{
	time_t now = time(NULL);
	struct rtc_time tm = secs_tm(now);

	expect_ret("RTC_SET_TIME to the host's time returns 0",
		   ioctl(fd, RTC_SET_TIME, &tm), 0);
}

static void usage(void)
{
	fprintf(stderr, "usage: rtc-client [--max-freq HZ] NODE\n");
	exit(2);
}

static const char *parse_args(int argc, char **argv, unsigned long *max_freq)
{
	static const struct option options[] = {
		{ "max-freq", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (c != 'm')
			usage();
		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (errno || end == optarg || *end || v < 64 ||
		    v > RTC_MAX_FREQ) {
			fprintf(stderr, "rtc-client: --max-freq takes 64 to "
					"%d\n", RTC_MAX_FREQ);
			usage();
		}
		*max_freq = v;
	}
	if (optind != argc - 1)
		usage();
	return argv[optind];
}

int main(int argc, char **argv)
{
	unsigned long max_freq = DEFAULT_MAX_FREQ;
	const char *node = parse_args(argc, argv, &max_freq);
	int fd;

	/* A hang in the daemon should still show how far the checks got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# rtc-client: ABI %s\n",
	       sizeof(long) == 4 ? "i386" : "x86_64");
	fd = expect_open(node, O_RDWR, "open the node read-write");
	if (fd < 0) {
		printf("1..%d\n", ntests);
		return 1;
	}
	check_exclusive(node);
	quiet(fd);
	drain(fd);
	check_nonblock(fd);
	check_first_read(fd);
	check_set_time(fd);
	check_bad_time(fd);
	check_alm(fd);
	check_wkalm(fd);
	check_aie_poll(fd);
	check_uie_read(fd);
	check_blocked_read(fd, node);
	check_read_sizes(fd);
	check_pie(fd);
	check_irqp_errors(fd, max_freq);
	check_epoch(fd);
	check_params(fd);
	check_unknown(fd);
	check_bad_pointers(fd);
	check_interrupted_read(fd);
	restore_time(fd);
	expect_ret("close the node", close(fd), 0);
	fd = expect_open(node, O_RDWR, "after close the node opens again");
	if (fd >= 0)
		close(fd);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
