/* SPDX-License-Identifier: MIT */
/*
 * Calls whose answers depend on what a driver copies in and out, on one
 * node, in the ABI it is built for (-m64 or -m32): one line per call, its
 * result and what it left in memory, so that the lines printed on a real
 * node and on a passthrough in front of it can be compared
 * (suite/98-passthrough.sh). Buffers that end early end where an
 * inaccessible page begins.
 *
 *   ptcalls-client evdev|i2c|rtc NODE
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/input.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"

#define FILL 0xa5
#define PAGE 4096u
/* The command no driver here knows: _IOWR('T', 0x7f) of 16383 bytes. */
#define FOREIGN _IOC(_IOC_READ | _IOC_WRITE, 'T', 0x7f, 16383)

/* An accessible area of 8 pages, and an inaccessible page after it. */
static uint8_t *area, *hole;

static void map_area(void)
{
	area = mmap(NULL, 9 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		bail("mmap");
	hole = area + 8 * PAGE;
	if (mprotect(hole, PAGE, PROT_NONE))
		bail("mprotect");
}

/* n bytes that end where the hole begins. */
static uint8_t *ending(size_t n)
{
	return hole - n;
}

static void show(const char *what, long ret, int err, const char *more)
{
	if (ret < 0)
		printf("%s: -1 %s%s\n", what, errno_name(err), more);
	else
		printf("%s: %ld%s\n", what, ret, more);
}

/* Bytes of buf[from, to) that are no longer FILL. */
static size_t changed(const uint8_t *buf, size_t from, size_t to)
{
	size_t n = 0;

	for (size_t i = from; i < to; i++)
		n += buf[i] != FILL;
	return n;
}

/* A read of size bytes into a buffer of FILL: its result, and how many
 * bytes past the result's count changed. */
static long read_sized(int fd, const char *what, unsigned int cmd,
		       size_t size)
{
	uint8_t *buf = area;
	char more[64];
	long ret;
	int err;

	memset(buf, FILL, size);
	ret = ioctl(fd, cmd, buf);
	err = errno;
	snprintf(more, sizeof(more), "; changed past it: %zu",
		 ret >= 0 ? changed(buf, (size_t)ret, size) : 0);
	show(what, ret, err, more);
	return ret;
}

static void foreign(int fd)
{
	long ret = ioctl(fd, FOREIGN, ending(64));

	show("_IOWR('T', 0x7f, 16383) 64 bytes before a hole", ret, errno, "");
}

static void evdev_calls(int fd)
{
	struct input_mask mask = { .type = EV_KEY };
	char what[80];
	long len, ret;

	len = read_sized(fd, "EVIOCGNAME(256)", EVIOCGNAME(256), 256);
	read_sized(fd, "EVIOCGBIT(EV_KEY, 16383)", EVIOCGBIT(EV_KEY, 16383),
		   16383);
	read_sized(fd, "EVIOCGBIT(0, 4096)", EVIOCGBIT(0, 4096), 4096);
	read_sized(fd, "EVIOCGKEY(16383)", EVIOCGKEY(16383), 16383);
	read_sized(fd, "EVIOCGLED(512)", EVIOCGLED(512), 512);
	read_sized(fd, "EVIOCGPROP(300)", EVIOCGPROP(300), 300);
	if (len > 0) {
		/* The name fits before the hole; the size runs past it. */
		ret = ioctl(fd, EVIOCGNAME(16383), ending((size_t)len + 8));
		snprintf(what, sizeof(what),
			 "EVIOCGNAME(16383) %ld bytes before a hole", len + 8);
		show(what, ret, errno, "");
	}
	ret = ioctl(fd, EVIOCGNAME(16383), ending(16));
	show("EVIOCGNAME(16383) 16 bytes before a hole", ret, errno, "");

	mask.codes_size = 10;
	mask.codes_ptr = (uintptr_t)hole;
	ret = ioctl(fd, EVIOCSMASK, &mask);
	show("EVIOCSMASK(EV_KEY) codes_size 10, codes in the hole", ret,
	     errno, "");
	/* All bits set: nothing is filtered. */
	memset(ending(96), 0xff, 96);
	mask.codes_size = 4096;
	mask.codes_ptr = (uintptr_t)ending(96);
	ret = ioctl(fd, EVIOCSMASK, &mask);
	show("EVIOCSMASK(EV_KEY) codes_size 4096, 96 bytes before a hole",
	     ret, errno, "");
	mask.type = EV_CNT - 1;
	mask.codes_ptr = (uintptr_t)hole;
	ret = ioctl(fd, EVIOCSMASK, &mask);
	show("EVIOCSMASK(type 31, no mask) codes in the hole", ret, errno,
	     "");
	foreign(fd);
}

/* n messages reading at 0x50 into the buffers at bufs, len[i % nbuf]. */
static long rdwr(int fd, uint8_t **bufs, const uint16_t *len,
		 unsigned int nbuf, unsigned int n)
{
	struct i2c_msg msgs[16];
	struct i2c_rdwr_ioctl_data d = { msgs, n };

	for (unsigned int i = 0; i < n; i++)
		msgs[i] = (struct i2c_msg){ 0x50, I2C_M_RD, len[i / nbuf],
					    bufs[i % nbuf] };
	return ioctl(fd, I2C_RDWR, &d);
}

static void i2c_calls(int fd)
{
	uint8_t *bufs[4];
	const uint16_t lens[4] = { 8189, 8190, 8191, 8192 };
	const uint16_t four[2] = { 4, 4 };
	char more[64];
	long ret;
	int err;

	for (unsigned int k = 0; k < 4; k++)
		bufs[k] = area + k * 2 * PAGE;
	memset(area, FILL, 8 * PAGE);
	ret = rdwr(fd, bufs, lens, 4, 16);
	err = errno;
	snprintf(more, sizeof(more), "; changed: %zu",
		 changed(area, 0, 8 * PAGE));
	show("I2C_RDWR 16 reads of 8189..8192 bytes into 4 buffers", ret,
	     err, more);
	memset(area, FILL, 8);
	ret = rdwr(fd, bufs, four, 1, 2);
	err = errno;
	snprintf(more, sizeof(more), "; first bytes %02x %02x %02x %02x",
		 area[0], area[1], area[2], area[3]);
	show("I2C_RDWR 2 reads of 4 bytes into 1 buffer", ret, err, more);
	foreign(fd);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s evdev|i2c|rtc NODE\n", argv[0]);
		return 2;
	}
	fd = open(argv[2], O_RDWR);
	if (fd < 0 && errno == EACCES)
		fd = open(argv[2], O_RDONLY);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	map_area();
	if (!strcmp(argv[1], "evdev"))
		evdev_calls(fd);
	else if (!strcmp(argv[1], "i2c"))
		i2c_calls(fd);
	else
		foreign(fd);
	close(fd);
	return 0;
}
