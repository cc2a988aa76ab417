/* SPDX-License-Identifier: MIT */
/*
 * A self-checking client of a watchdog node: the WDIOC_* ioctls, write(),
 * the magic close and an emulated expiry, in the ABI it is built for (-m64
 * or -m32), reported as TAP. What wdctl shows is left to wdctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/watchdog.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

/*
 * The timeouts the checks set: the device must take 1 to WORK_TIMEOUT
 * (min_timeout=1, as by default) and must not have nowayout.
 */
#define WORK_TIMEOUT 5
/* Long enough for GETTIMELEFT to drop, short of WORK_TIMEOUT. */
#define DRIFT_MS 1500
/* Past an expiry of 1 second, with room for a slow machine. */
#define EXPIRY_WAIT_MS 2500
#define DEFAULT_IDENTITY "cusemu watchdog"
#define WANT_OPTIONS                                                   \
	(WDIOF_SETTIMEOUT | WDIOF_KEEPALIVEPING | WDIOF_MAGICCLOSE |   \
	 WDIOF_PRETIMEOUT)
#define FILL 0xAA

static void pause_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void close_node(int fd, const char *desc)
{
	expect_ret(desc, close(fd), 0);
}

/* An _IOR int command's value, or -1 after a failed check. */
static int get_int(int fd, unsigned long cmd, const char *name)
{
	char desc[80];
	int v = -1;
	long ret;

	snprintf(desc, sizeof(desc), "%s succeeds", name);
	ret = ioctl(fd, cmd, &v);
	if (!expect_ret(desc, ret, 0))
		return -1;
	return v;
}

static bool expect_int(int fd, unsigned long cmd, const char *desc, int want)
{
	int v = -1;
	long ret = ioctl(fd, cmd, &v);

	if (ret)
		return report(false, desc, "expected %d, got %s", want,
			      show_ret(ret, errno));
	return report(v == want, desc, "expected %d, got %d", want, v);
}

static long set_timeout(int fd, int t, int *back)
{
	*back = t;
	return ioctl(fd, WDIOC_SETTIMEOUT, back);
}

static long set_pretimeout(int fd, int t)
{
	return ioctl(fd, WDIOC_SETPRETIMEOUT, &t);
}

static long set_options(int fd, int options)
{
	return ioctl(fd, WDIOC_SETOPTIONS, &options);
}

static void check_support(int fd, const char *identity)
{
	struct watchdog_info info;
	long ret;

	memset(&info, FILL, sizeof(info));
	ret = ioctl(fd, WDIOC_GETSUPPORT, &info);
	if (!expect_ret("GETSUPPORT returns 0", ret, 0))
		return;
	report(!strncmp((char *)info.identity, identity,
			sizeof(info.identity)) &&
	       memchr(info.identity, 0, sizeof(info.identity)),
	       "GETSUPPORT gives the configured identity",
	       "expected \"%s\", got \"%.32s\"", identity,
	       (char *)info.identity);
	report((info.options & WANT_OPTIONS) == WANT_OPTIONS,
	       "GETSUPPORT options have SETTIMEOUT, KEEPALIVEPING, MAGICCLOSE "
	       "and PRETIMEOUT", "expected the bits 0x%x, got 0x%x",
	       WANT_OPTIONS, info.options);
}

static void check_temp(int fd, int temp)
{
	int v = FILL;

	/* Not the framework's command: only a driver with one answers it. */
	if (temp < 0)
		expect_errno("GETTEMP without a thermometer fails with ENOTTY",
			     ioctl(fd, WDIOC_GETTEMP, &v), ENOTTY);
	else
		expect_int(fd, WDIOC_GETTEMP,
			   "GETTEMP gives the configured temperature", temp);
}

static void check_timeout(int fd)
{
	int back;

	expect_ret("SETTIMEOUT 2 returns 0", set_timeout(fd, 2, &back), 0);
	report(back == 2, "SETTIMEOUT 2 writes back 2", "got %d", back);
	expect_int(fd, WDIOC_GETTIMEOUT, "GETTIMEOUT gives 2", 2);
	expect_errno("SETTIMEOUT 0 fails with EINVAL",
		     set_timeout(fd, 0, &back), EINVAL);
	expect_errno("SETTIMEOUT 0x7fffffff fails with EINVAL",
		     set_timeout(fd, 0x7fffffff, &back), EINVAL);
	expect_errno("SETTIMEOUT -1 fails with EINVAL",
		     set_timeout(fd, -1, &back), EINVAL);
	expect_int(fd, WDIOC_GETTIMEOUT,
		   "GETTIMEOUT still gives 2 after the refused ones", 2);
}

static void check_pretimeout(int fd)
{
	expect_errno("SETPRETIMEOUT 2, equal to the timeout, fails with EINVAL",
		     set_pretimeout(fd, 2), EINVAL);
	expect_errno("SETPRETIMEOUT 3, above the timeout, fails with EINVAL",
		     set_pretimeout(fd, 3), EINVAL);
	expect_errno("SETPRETIMEOUT -1 fails with EINVAL",
		     set_pretimeout(fd, -1), EINVAL);
	expect_ret("SETPRETIMEOUT 1 returns 0", set_pretimeout(fd, 1), 0);
	expect_int(fd, WDIOC_GETPRETIMEOUT, "GETPRETIMEOUT gives 1", 1);
	expect_ret("SETPRETIMEOUT 0 returns 0", set_pretimeout(fd, 0), 0);
	expect_int(fd, WDIOC_GETPRETIMEOUT, "GETPRETIMEOUT gives 0", 0);
}

/* Pings, by ioctl and by write, bring the time left back up. */
static void check_pings(int fd)
{
	int back, left, status;

	expect_ret("SETTIMEOUT 5 returns 0",
		   set_timeout(fd, WORK_TIMEOUT, &back), 0);
	expect_ret("KEEPALIVE returns 0", ioctl(fd, WDIOC_KEEPALIVE, 0), 0);
	expect_int(fd, WDIOC_GETTIMELEFT,
		   "GETTIMELEFT right after KEEPALIVE gives 5", WORK_TIMEOUT);
	pause_ms(DRIFT_MS);
	left = get_int(fd, WDIOC_GETTIMELEFT, "GETTIMELEFT 1.5 s later");
	report(left >= 1 && left < WORK_TIMEOUT,
	       "GETTIMELEFT decreases without pings",
	       "expected 1 to %d, got %d", WORK_TIMEOUT - 1, left);
	expect_ret("write of \"ping\" returns 4", write(fd, "ping", 4), 4);
	expect_int(fd, WDIOC_GETTIMELEFT,
		   "GETTIMELEFT after the write gives 5 again", WORK_TIMEOUT);
	status = get_int(fd, WDIOC_GETSTATUS, "GETSTATUS");
	report(status & WDIOF_KEEPALIVEPING,
	       "GETSTATUS shows KEEPALIVEPING after the ping", "bit clear");
	/* What kernels with CONFIG_WATCHDOG_HRTIMER_PRETIMEOUT report. */
	report(status & WDIOF_PRETIMEOUT, "GETSTATUS shows PRETIMEOUT",
	       "bit clear");
	expect_ret("write of \"V\" returns 1", write(fd, "V", 1), 1);
	report(get_int(fd, WDIOC_GETSTATUS, "GETSTATUS") & WDIOF_MAGICCLOSE,
	       "GETSTATUS shows MAGICCLOSE after the 'V'", "bit clear");
	expect_ret("write of \"x\" returns 1", write(fd, "x", 1), 1);
	report(!(get_int(fd, WDIOC_GETSTATUS, "GETSTATUS") & WDIOF_MAGICCLOSE),
	       "GETSTATUS drops MAGICCLOSE after a write without 'V'",
	       "bit set");
}

/*
 * Without DISABLECARD or ENABLECARD, watchdog_dev.c's SETOPTIONS returns
 * its "not mine", which callers see as ENOTTY.
 */
static void check_options(int fd)
{
	expect_errno("SETOPTIONS 0 fails with ENOTTY", set_options(fd, 0),
		     ENOTTY);
	expect_errno("SETOPTIONS 0x100 fails with ENOTTY",
		     set_options(fd, 0x100), ENOTTY);
	expect_ret("SETOPTIONS DISABLECARD returns 0",
		   set_options(fd, WDIOS_DISABLECARD), 0);
	expect_int(fd, WDIOC_GETTIMELEFT,
		   "GETTIMELEFT on the stopped watchdog gives 0", 0);
	expect_ret("KEEPALIVE on the stopped watchdog returns 0",
		   ioctl(fd, WDIOC_KEEPALIVE, 0), 0);
	expect_int(fd, WDIOC_GETTIMELEFT,
		   "... and leaves it stopped (GETTIMELEFT gives 0)", 0);
	expect_ret("SETOPTIONS ENABLECARD returns 0",
		   set_options(fd, WDIOS_ENABLECARD), 0);
	expect_int(fd, WDIOC_GETTIMELEFT,
		   "GETTIMELEFT after ENABLECARD gives 5", WORK_TIMEOUT);
}

/* A client's bad pointer fails its own call, and the device serves on. */
static void check_bad_pointers(int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *bad = (void *)8;
	void *p;

	expect_errno("GETSUPPORT into address 8 fails with EFAULT",
		     ioctl(fd, WDIOC_GETSUPPORT, bad), EFAULT);
	expect_errno("SETTIMEOUT from address 8 fails with EFAULT",
		     ioctl(fd, WDIOC_SETTIMEOUT, bad), EFAULT);
	expect_int(fd, WDIOC_GETTIMEOUT,
		   "GETTIMEOUT still gives 5 after the bad SETTIMEOUT",
		   WORK_TIMEOUT);
	expect_errno("SETOPTIONS from address 8 fails with EFAULT",
		     ioctl(fd, WDIOC_SETOPTIONS, bad), EFAULT);

	p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p, page, PROT_NONE))
		bail("cannot make a PROT_NONE page");
	expect_errno("GETTIMELEFT into a PROT_NONE page fails with EFAULT",
		     ioctl(fd, WDIOC_GETTIMELEFT, p), EFAULT);
	munmap(p, page);
	expect_int(fd, WDIOC_GETTIMELEFT,
		   "GETTIMELEFT gives 5 after the bad pointers (still running)",
		   WORK_TIMEOUT);
}

static void check_unknown(int fd)
{
	int v = 0;

	expect_errno("unknown command _IOR('W', 99, int) fails with ENOTTY",
		     ioctl(fd, _IOR('W', 99, int), &v), ENOTTY);
	expect_errno("unknown command _IO('E', 99) fails with ENOTTY",
		     ioctl(fd, _IO('E', 99)), ENOTTY);
}

/*
 * Whether a close stopped the watchdog shows after a pause: a stopped one
 * starts afresh at the next open (the full timeout left), a running one
 * has less left.
 */
static int reopen_after_pause(const char *node, int *left)
{
	int fd;

	pause_ms(DRIFT_MS);
	fd = expect_open(node, O_RDWR, "reopen the node after 1.5 s");
	*left = fd >= 0 ? get_int(fd, WDIOC_GETTIMELEFT, "GETTIMELEFT") : -1;
	return fd;
}

static int check_magic_close(const char *node, int fd)
{
	int left;

	expect_ret("write of \"V\" returns 1", write(fd, "V", 1), 1);
	close_node(fd, "close after the 'V' (magic close)");
	fd = reopen_after_pause(node, &left);
	report(left == WORK_TIMEOUT,
	       "the magic close stopped it: the reopen starts it afresh",
	       "expected GETTIMELEFT 5, got %d", left);
	return fd;
}

static int check_plain_close(const char *node, int fd)
{
	int left;

	close_node(fd, "close without a 'V'");
	fd = reopen_after_pause(node, &left);
	report(left >= 1 && left < WORK_TIMEOUT,
	       "a close without 'V' leaves it running",
	       "expected GETTIMELEFT 1 to 4, got %d", left);
	return fd;
}

/* Nothing pings it: it expires, and the boot status says so. */
static int check_expiry(const char *node, int fd, int configured)
{
	int back;

	expect_ret("SETTIMEOUT 1 returns 0", set_timeout(fd, 1, &back), 0);
	close_node(fd, "close without a 'V', timeout 1");
	pause_ms(EXPIRY_WAIT_MS);
	fd = expect_open(node, O_RDWR, "reopen the node 2.5 s later");
	if (fd < 0)
		return fd;
	report(get_int(fd, WDIOC_GETBOOTSTATUS, "GETBOOTSTATUS") &
	       WDIOF_CARDRESET, "GETBOOTSTATUS has CARDRESET after the expiry",
	       "bit clear");
	report(get_int(fd, WDIOC_GETSTATUS, "GETSTATUS") & WDIOF_CARDRESET,
	       "GETSTATUS has CARDRESET too", "bit clear");
	expect_int(fd, WDIOC_GETTIMEOUT,
		   "the emulated reset brought back the configured timeout",
		   configured);
	return fd;
}

static void usage(void)
{
	fprintf(stderr, "usage: wd-client [--identity TEXT] [--temp N] NODE\n");
	exit(2);
}

static const char *parse_args(int argc, char **argv, const char **identity,
			      int *temp)
{
	static const struct option options[] = {
		{ "identity", required_argument, NULL, 'i' },
		{ "temp", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			*identity = optarg;
			break;
		case 't':
			*temp = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || *temp <= 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	return argv[optind];
}

int main(int argc, char **argv)
{
	const char *identity = DEFAULT_IDENTITY;
	int temp = -1, fd, fd2, configured;
	const char *node = parse_args(argc, argv, &identity, &temp);

	/* A hang in the daemon should still show how far the checks got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# wd-client: ABI %s\n", sizeof(long) == 4 ? "i386" : "x86_64");
	fd = expect_open(node, O_RDWR, "open the node (starts the watchdog)");
	if (fd < 0) {
		printf("1..%d\n", ntests);
		return 1;
	}
	fd2 = open(node, O_RDWR);
	expect_errno("a second open fails with EBUSY", fd2, EBUSY);
	if (fd2 >= 0)
		close(fd2);
	check_support(fd, identity);
	check_temp(fd, temp);
	configured = get_int(fd, WDIOC_GETTIMEOUT, "GETTIMEOUT");
	check_timeout(fd);
	check_pretimeout(fd);
	check_pings(fd);
	check_options(fd);
	check_bad_pointers(fd);
	check_unknown(fd);
	fd = check_magic_close(node, fd);
	if (fd >= 0)
		fd = check_plain_close(node, fd);
	if (fd >= 0)
		fd = check_expiry(node, fd, configured);
	if (fd >= 0) {
		expect_ret("write of \"V\" returns 1", write(fd, "V", 1), 1);
		close_node(fd, "close after the 'V'");
	}
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
