/* SPDX-License-Identifier: MIT */
/*
 * A client of the sensor hub, built twice (sensorhub-client-64 and -32): the
 * checks a user of the API would make, in TAP. Usage: sensorhub-client NODE
 *
 * Before each check's line, a comment "# = ..." gives the answers it
 * judged: each call's result and errno, and the values read. Two servers
 * of the API (cusemud and the kernel module, say) answered alike when
 * those lines are the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sensorhub.h"

/* The model's serial number: it must survive the i386 translation. */
#define SENSORHUB_SERIAL 0x5e45012345678901ull

static int checks, failures;

/* "# = what: result, errno" of a call, and its values if any. */
static int answer(const char *what, int ret, const char *values)
{
	int err = ret < 0 ? errno : 0;

	printf("# = %s: %d, %s%s%s\n", what, ret, err ? strerror(err) : "no error",
	       values ? ", " : "", values ? values : "");
	errno = err;
	return ret;
}

static void check(int ok, const char *what)
{
	checks++;
	if (!ok)
		failures++;
	printf("%sok %d - %s\n", ok ? "" : "not ", checks, what);
}

static void check_errno(int ret, int want, const char *what)
{
	int got = ret < 0 ? errno : 0;

	check(ret < 0 && got == want, what);
	if (!(ret < 0 && got == want))
		printf("# got %d (%s), wanted %s\n", ret, strerror(got),
		       strerror(want));
}

static void check_info(int fd)
{
	struct sensorhub_info info;
	int ret;

	char values[160];

	memset(&info, 0xee, sizeof(info));
	ret = ioctl(fd, SENSORHUB_IOC_INFO, &info);
	snprintf(values, sizeof(values),
		 "version %#x, serial %#llx, channels %u, rate %u, name %.16s",
		 info.version, (unsigned long long)info.serial, info.channels,
		 info.rate_hz, ret ? "" : info.name);
	answer("SENSORHUB_IOC_INFO", ret, values);
	check(ret == 0, "SENSORHUB_IOC_INFO answers");
	printf("# SENSORHUB_IOC_INFO is %#lx, %zu bytes\n",
	       (unsigned long)SENSORHUB_IOC_INFO, sizeof(info));
	check(info.version == SENSORHUB_VERSION, "the version is SENSORHUB_VERSION");
	check(info.serial == SENSORHUB_SERIAL,
	      "the serial number arrives whole (its __u64 follows a __u32)");
	check(info.channels == 3, "the hub has the 3 channels configured");
	check(info.rate_hz == 100, "the rate is the default, 100 Hz");
	check(!strcmp(info.name, "sensorhub"), "the name is 'sensorhub'");
}

static int get_rate(int fd, __u32 *rate)
{
	char values[32];
	int ret;

	*rate = 0;
	ret = ioctl(fd, SENSORHUB_IOC_GET_RATE, rate);
	snprintf(values, sizeof(values), "rate %u", *rate);
	return answer("SENSORHUB_IOC_GET_RATE", ret, values);
}

static int set_rate(int fd, __u32 rate)
{
	char what[48];

	snprintf(what, sizeof(what), "SENSORHUB_IOC_SET_RATE %u", rate);
	return answer(what, ioctl(fd, SENSORHUB_IOC_SET_RATE, &rate), NULL);
}

static void check_rate(int fd)
{
	__u32 rate;

	check(get_rate(fd, &rate) == 0 && rate == 100,
	      "SENSORHUB_IOC_GET_RATE says 100 Hz");
	check_errno(set_rate(fd, 0), EINVAL, "a rate of 0 Hz fails with EINVAL");
	check_errno(set_rate(fd, SENSORHUB_RATE_MAX + 1), EINVAL,
		    "a rate of 1001 Hz fails with EINVAL");
	check(set_rate(fd, 500) == 0, "SENSORHUB_IOC_SET_RATE takes 500 Hz");
	check(get_rate(fd, &rate) == 0 && rate == 500,
	      "and SENSORHUB_IOC_GET_RATE says 500 Hz");
}

/* The count of samples returned varies with time: the answer says only
 * whether it is within what was asked. */
static int hub_read(int fd, struct sensorhub_sample *s, __u32 count,
		    struct sensorhub_read *r)
{
	char what[64], values[48];
	int ret;

	*r = (struct sensorhub_read){ .samples = (__u64)(uintptr_t)s,
				      .count = count,
				      .returned = 0xdeadbeef };
	ret = ioctl(fd, SENSORHUB_IOC_READ, r);
	snprintf(what, sizeof(what), "SENSORHUB_IOC_READ of %u into %s", count,
		 (uintptr_t)s < 4096 ? "a bad pointer" : "a buffer");
	snprintf(values, sizeof(values), "returned %s",
		 r->returned == 0xdeadbeef ? "untouched" :
		 r->returned == 0 ? "0" :
		 r->returned <= count ? "1 to count" : "more than count");
	return answer(what, ret, values);
}

static void check_read(int fd)
{
	struct sensorhub_sample s[SENSORHUB_READ_MAX + 1];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct sensorhub_read r;
	int ok = 1;

	char values[32];
	int ret = poll(&pfd, 1, 2000);

	snprintf(values, sizeof(values), "revents %#x", ret == 1 ? pfd.revents : 0);
	answer("poll for POLLIN", ret, values);
	check(ret == 1 && (pfd.revents & POLLIN),
	      "poll reports POLLIN once samples are queued");
	memset(s, 0, sizeof(s));
	check(hub_read(fd, s, 8, &r) == 0 && r.returned >= 1 && r.returned <= 8,
	      "SENSORHUB_IOC_READ of 8 returns 1 to 8 samples");
	for (__u32 i = 0; i < r.returned && i < 8; i++) {
		if (s[i].channel >= 3 ||
		    (i && s[i].timestamp_ns < s[i - 1].timestamp_ns))
			ok = 0;
	}
	check(ok, "the samples name channels 0 to 2, oldest first");
	check(r.returned == 8 || s[r.returned].timestamp_ns == 0,
	      "nothing is written past the samples returned");
	check(hub_read(fd, s, 0, &r) == 0 && r.returned == 0,
	      "a READ of 0 samples returns none");
	check_errno(hub_read(fd, s, SENSORHUB_READ_MAX + 1, &r), EINVAL,
		    "a READ of 257 samples fails with EINVAL");
	usleep(20000);	/* samples queue at 500 Hz */
	check_errno(hub_read(fd, (struct sensorhub_sample *)8, 8, &r), EFAULT,
		    "a READ into a bad pointer fails with EFAULT");
	check_errno(answer("SENSORHUB_IOC_READ of a bad pointer",
			   ioctl(fd, SENSORHUB_IOC_READ, (void *)8), NULL),
		    EFAULT,
		    "a READ whose argument is a bad pointer fails with EFAULT");
}

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s NODE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		printf("Bail out! cannot open %s: %s\n", argv[1],
		       strerror(errno));
		return 1;
	}
	printf("# sensorhub-client: ABI %s\n", sizeof(long) == 8 ? "x86_64" : "i386");
	check_info(fd);
	check_rate(fd);
	check_read(fd);
	check_errno(answer("_IO(SENSORHUB_IOC_TYPE, 0x7f)",
			   ioctl(fd, _IO(SENSORHUB_IOC_TYPE, 0x7f)), NULL),
		    ENOTTY, "an unknown command fails with ENOTTY");
	close(fd);
	printf("1..%d\n", checks);
	return failures ? 1 : 0;
}
