/* SPDX-License-Identifier: MIT */
/*
 * A self-checking client of the evdev device node: the <linux/input.h>
 * ioctls and the read() rules, in the ABI it is built for (-m64 or -m32),
 * reported as TAP. Events themselves are injected and read elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/input.h>

#include "tap.h"

static void check_identity(int fd)
{
	char name[256], head[8];
	struct input_id id;
	int version = 0;
	long ret, len;

	if (expect_ret("EVIOCGVERSION", ioctl(fd, EVIOCGVERSION, &version), 0))
		report(version == EV_VERSION, "EVIOCGVERSION is EV_VERSION",
		       "got %#x", version);
	memset(&id, 0, sizeof(id));
	if (expect_ret("EVIOCGID", ioctl(fd, EVIOCGID, &id), 0))
		printf("# bustype %#x vendor %#x product %#x version %#x\n",
		       id.bustype, id.vendor, id.product, id.version);

	memset(name, 0, sizeof(name));
	len = ioctl(fd, EVIOCGNAME(sizeof(name)), name);
	report(len > 0 && len == (long)strlen(name) + 1,
	       "EVIOCGNAME gives the name and its NUL",
	       "returned %s for '%s'", show_ret(len, errno), name);
	printf("# name '%s'\n", name);

	/* str_to_user(): clipped to the buffer, the length copied. */
	memset(head, 'x', sizeof(head));
	ret = ioctl(fd, EVIOCGNAME(4), head);
	if (expect_ret("EVIOCGNAME(4) returns 4", ret, len < 4 ? len : 4))
		report(!memcmp(head, name, 4) && head[4] == 'x',
		       "EVIOCGNAME(4) writes 4 bytes and no more",
		       "got '%.8s'", head);
}

/*
 * EVIOCGNAME's length is the _IOC size of the command: 0, 1, a page less
 * one, a page and one, and the most its 14 bits hold (4 GiB cannot be
 * said). str_to_user() copies the name and its NUL clipped to it.
 */
static void check_name_lengths(int fd)
{
	static const unsigned int lens[] = { 0, 1, 4095, 4097, _IOC_SIZEMASK };
	/* The tail the name must not reach, and a byte the message may show. */
	char name[256] = "", *buf = malloc(_IOC_SIZEMASK + 17);
	long full = ioctl(fd, EVIOCGNAME(sizeof(name)), name);
	char desc[96];

	if (!buf)
		bail("cannot allocate a test buffer");
	for (size_t i = 0; full > 0 && i < sizeof(lens) / sizeof(*lens); i++) {
		long len = lens[i], want = full < len ? full : len, n = want;

		memset(buf, 'x', len + 16);
		snprintf(desc, sizeof(desc), "EVIOCGNAME(%ld) returns %ld", len,
			 want);
		if (!expect_ret(desc, ioctl(fd, EVIOCGNAME(len), buf), want))
			continue;
		while (n < len + 16 && buf[n] == 'x')
			n++;
		snprintf(desc, sizeof(desc),
			 "EVIOCGNAME(%ld) writes %ld bytes of the name, no more",
			 len, want);
		report(!memcmp(buf, name, want) && n == len + 16, desc,
		       "got '%.*s', byte %ld is 0x%02x", (int)want, buf, n,
		       (unsigned char)buf[n]);
	}
	free(buf);
}

/* A client's bad pointer fails its own call; the device serves on. */
static void check_bad_pointers(int fd)
{
	/* Kept from the compiler, which would refuse the read() into it. */
	void *volatile bad = (void *)8;
	long page = sysconf(_SC_PAGESIZE);
	void *none = mmap(NULL, page, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int version = 0;

	if (none == MAP_FAILED)
		bail("cannot make a PROT_NONE page");
	expect_errno("EVIOCGNAME(256) into address 8 is EFAULT",
		     ioctl(fd, EVIOCGNAME(256), bad), EFAULT);
	expect_errno("EVIOCGID into a PROT_NONE page is EFAULT",
		     ioctl(fd, EVIOCGID, none), EFAULT);
	expect_errno("EVIOCGBIT(0) into a PROT_NONE page is EFAULT",
		     ioctl(fd, EVIOCGBIT(0, 8), none), EFAULT);
	expect_errno("EVIOCSCLOCKID from address 8 is EFAULT",
		     ioctl(fd, EVIOCSCLOCKID, bad), EFAULT);
	expect_errno("read() into address 8 is EFAULT",
		     read(fd, bad, sizeof(struct input_event)), EFAULT);
	munmap(none, page);
	expect_ret("EVIOCGVERSION still answers after them",
		   ioctl(fd, EVIOCGVERSION, &version), 0);
}

static void check_bits(int fd)
{
	unsigned long ev[4] = { 0 };
	long ret = ioctl(fd, EVIOCGBIT(0, sizeof(ev)), ev);

	/* bits_to_user(): EV_MAX bits in this ABI's longs. */
	expect_ret("EVIOCGBIT(0) fills one long", ret, sizeof(long));
	report(ev[0] & (1ul << EV_SYN), "EVIOCGBIT(0) has EV_SYN",
	       "got %#lx", ev[0]);
	expect_errno("EVIOCGBIT(EV_REP) is EINVAL",
		     ioctl(fd, EVIOCGBIT(EV_REP, sizeof(ev)), ev), EINVAL);
	expect_errno("an unknown 'E' command is EINVAL",
		     ioctl(fd, _IOR('E', 0x99, int), ev), EINVAL);
}

/*
 * EVIOCGMASK and EVIOCSMASK: the codes travel behind a pointer, in this
 * ABI's longs. The mask is the file's own; closing the file drops it.
 */
#define NLONGS (128 / sizeof(long))

static bool long_bit(const unsigned long *words, unsigned int nr)
{
	unsigned int bits = 8 * sizeof(long);

	return words[nr / bits] >> (nr % bits) & 1;
}

static void check_masks(int fd, const char *node)
{
	unsigned long codes[NLONGS];
	struct input_mask m = {
		.type = EV_KEY,
		.codes_size = sizeof(codes),
		.codes_ptr = (uintptr_t)codes,
	};
	long page = sysconf(_SC_PAGESIZE);
	void *none = mmap(NULL, page, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned int all_ones = 0, zeroes = 0, set;
	int other;

	if (none == MAP_FAILED)
		bail("cannot make a PROT_NONE page");
	memset(codes, 0x5a, sizeof(codes));
	expect_ret("EVIOCGMASK(EV_KEY) without a mask",
		   ioctl(fd, EVIOCGMASK, &m), 0);
	/* KEY_CNT bits, then zeroes to the end of the buffer. */
	for (unsigned int i = 0; i < sizeof(codes); i++) {
		uint8_t b = ((uint8_t *)codes)[i];

		all_ones += i < KEY_CNT / 8 && b == 0xff;
		zeroes += i >= KEY_CNT / 8 && b == 0;
	}
	report(all_ones == KEY_CNT / 8 && zeroes == sizeof(codes) - KEY_CNT / 8,
	       "... is all ones (KEY_CNT bits), the rest of the buffer zeroed",
	       "%u bytes of ff, %u of 00", all_ones, zeroes);

	memset(codes, 0, sizeof(codes));
	codes[KEY_A / (8 * sizeof(long))] = 1ul << KEY_A % (8 * sizeof(long));
	expect_ret("EVIOCSMASK(EV_KEY) to KEY_A alone",
		   ioctl(fd, EVIOCSMASK, &m), 0);
	memset(codes, 0x5a, sizeof(codes));
	expect_ret("EVIOCGMASK(EV_KEY) reads it back",
		   ioctl(fd, EVIOCGMASK, &m), 0);
	set = 0;
	for (unsigned int i = 0; i < KEY_CNT; i++)
		set += long_bit(codes, i);
	report(long_bit(codes, KEY_A) && set == 1 && codes[NLONGS - 1] == 0,
	       "... with KEY_A set and every other bit clear",
	       "%u bits set, KEY_A %s", set,
	       long_bit(codes, KEY_A) ? "set" : "clear");

	other = expect_open(node, O_RDONLY, "open the node again for its mask");
	if (other >= 0) {
		memset(codes, 0, sizeof(codes));
		expect_ret("EVIOCGMASK(EV_KEY) on the other file",
			   ioctl(other, EVIOCGMASK, &m), 0);
		report(codes[0] == ~0ul, "another file has no mask",
		       "first word %#lx", codes[0]);
		close(other);
	}

	m.type = EV_REP;
	expect_errno("EVIOCSMASK(EV_REP) is EINVAL: no mask for that type",
		     ioctl(fd, EVIOCSMASK, &m), EINVAL);
	m.type = EV_KEY;
	m.codes_size = sizeof(long) + 1;
	expect_errno("EVIOCSMASK of a length that is not whole longs is EINVAL",
		     ioctl(fd, EVIOCSMASK, &m), EINVAL);
	m.codes_size = sizeof(codes);
	m.codes_ptr = (uintptr_t)none;
	expect_errno("EVIOCSMASK with the codes in a PROT_NONE page is EFAULT",
		     ioctl(fd, EVIOCSMASK, &m), EFAULT);
	expect_errno("EVIOCGMASK with the codes in a PROT_NONE page is EFAULT",
		     ioctl(fd, EVIOCGMASK, &m), EFAULT);
	munmap(none, page);
}

static void check_clock(int fd)
{
	int clk = 99;

	expect_errno("EVIOCSCLOCKID of an unknown clock is EINVAL",
		     ioctl(fd, EVIOCSCLOCKID, &clk), EINVAL);
	clk = -1;
	expect_errno("EVIOCSCLOCKID of clock -1 is EINVAL",
		     ioctl(fd, EVIOCSCLOCKID, &clk), EINVAL);
	clk = CLOCK_MONOTONIC;
	expect_ret("EVIOCSCLOCKID(CLOCK_MONOTONIC)",
		   ioctl(fd, EVIOCSCLOCKID, &clk), 0);
	clk = CLOCK_REALTIME;
	expect_ret("EVIOCSCLOCKID(CLOCK_REALTIME)",
		   ioctl(fd, EVIOCSCLOCKID, &clk), 0);
}

/* The node learnt this ABI's event size: 24 bytes, or 16 for i386. */
static void check_read(const char *node)
{
	struct input_event ev[2];
	struct pollfd pfd;
	int fd = expect_open(node, O_RDONLY | O_NONBLOCK,
			   "open the node O_NONBLOCK");

	if (fd < 0)
		return;
	printf("# struct input_event is %zu bytes\n", sizeof(ev[0]));
	expect_errno("read of 1 byte is EINVAL", read(fd, ev, 1), EINVAL);
	expect_errno("read of one event less a byte is EINVAL",
		     read(fd, ev, sizeof(ev[0]) - 1), EINVAL);
	expect_errno("O_NONBLOCK read of one event is EAGAIN",
		     read(fd, ev, sizeof(ev[0])), EAGAIN);
	expect_errno("O_NONBLOCK read of two events is EAGAIN",
		     read(fd, ev, sizeof(ev)), EAGAIN);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	expect_ret("poll sees nothing queued", poll(&pfd, 1, 0), 0);
	close(fd);
}

static void check_grab(int fd, const char *node)
{
	int other = expect_open(node, O_RDONLY, "open the node a second time");

	if (other < 0)
		return;
	expect_ret("EVIOCGRAB 1 grabs", ioctl(fd, EVIOCGRAB, 1), 0);
	expect_errno("EVIOCGRAB 1 from another file is EBUSY",
		     ioctl(other, EVIOCGRAB, 1), EBUSY);
	expect_errno("EVIOCGRAB 0 from a non-holder is EINVAL",
		     ioctl(other, EVIOCGRAB, 0), EINVAL);
	expect_ret("EVIOCGRAB 0 releases", ioctl(fd, EVIOCGRAB, 0), 0);
	expect_ret("then the other file grabs", ioctl(other, EVIOCGRAB, 1), 0);
	close(other);
	/* Closing the holder let the grab go. */
	expect_ret("after its close the grab is free",
		   ioctl(fd, EVIOCGRAB, 1), 0);
	expect_ret("and released again", ioctl(fd, EVIOCGRAB, 0), 0);
}

/*
 * The keyboard's keymap, atkbd's behind the i8042's translation (the
 * profile's default): indexed by the XT scancodes a PC keyboard yields.
 */
static void check_keymap(int fd)
{
	static const unsigned int want[][2] = {
		{ 0x1e, KEY_A }, { 0x1c, KEY_ENTER }, { 0x3a, KEY_CAPSLOCK },
	};
	unsigned int pair[2];
	struct input_keymap_entry ke = {
		.flags = INPUT_KEYMAP_BY_INDEX, .index = 0x80 | 0x48,
	};

	for (unsigned int i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char desc[64];

		pair[0] = want[i][0];
		pair[1] = 0;
		snprintf(desc, sizeof(desc),
			 "EVIOCGKEYCODE of scancode %#x returns 0", pair[0]);
		if (!expect_ret(desc, ioctl(fd, EVIOCGKEYCODE, pair), 0))
			continue;
		snprintf(desc, sizeof(desc), "... and gives keycode %u",
			 want[i][1]);
		report(pair[1] == want[i][1], desc, "got %u", pair[1]);
	}
	if (expect_ret("EVIOCGKEYCODE_V2 of index 0xc8 returns 0",
		       ioctl(fd, EVIOCGKEYCODE_V2, &ke), 0))
		report(ke.keycode == KEY_UP && ke.len == 4,
		       "... and gives KEY_UP with a 4-byte scancode",
		       "got %u, len %u", ke.keycode, ke.len);
	pair[0] = 0x60;
	pair[1] = KEY_F20;
	expect_ret("EVIOCSKEYCODE maps scancode 0x60 to KEY_F20",
		   ioctl(fd, EVIOCSKEYCODE, pair), 0);
	pair[1] = 0;
	if (expect_ret("EVIOCGKEYCODE of 0x60 returns 0",
		       ioctl(fd, EVIOCGKEYCODE, pair), 0))
		report(pair[1] == KEY_F20, "... and gives KEY_F20", "got %u",
		       pair[1]);
	pair[1] = KEY_RESERVED;
	expect_ret("EVIOCSKEYCODE maps it back to KEY_RESERVED",
		   ioctl(fd, EVIOCSKEYCODE, pair), 0);
	pair[0] = 512;
	expect_errno("EVIOCGKEYCODE of scancode 512 is EINVAL",
		     ioctl(fd, EVIOCGKEYCODE, pair), EINVAL);
	expect_errno("EVIOCSFF without force feedback is ENOTTY (the "
		     "kernel's ENOSYS, through FUSE)",
		     ioctl(fd, EVIOCSFF, &(struct ff_effect){ .type = FF_RUMBLE }),
		     ENOTTY);
}

/*
 * EVIOCSREP injects EV_REP REP_DELAY and REP_PERIOD: readers get the
 * values asked with the next packet, and atkbd rounds the rates to the
 * keyboard's own (300/40 to 500/42). A written autorepeat of a key that
 * is not held is that packet here.
 */
static void check_rep(const char *node)
{
	int rep[2] = { 300, 40 };
	struct input_event in[2] = {
		{ .type = EV_KEY, .code = KEY_A, .value = 2 },
		{ .type = EV_SYN, .code = SYN_REPORT },
	};
	struct input_event out[8];
	struct pollfd pfd;
	ssize_t n;
	int fd = expect_open(node, O_RDWR | O_NONBLOCK,
			   "open a file for EVIOCSREP");

	if (fd < 0)
		return;
	expect_ret("EVIOCSREP 300/40 returns 0", ioctl(fd, EVIOCSREP, rep), 0);
	if (expect_ret("EVIOCGREP returns 0", ioctl(fd, EVIOCGREP, rep), 0))
		report(rep[0] == 500 && rep[1] == 42,
		       "... atkbd's rates: 500/42", "got %d/%d", rep[0],
		       rep[1]);
	expect_errno("no packet yet: read is EAGAIN",
		     read(fd, out, sizeof(out)), EAGAIN);
	expect_ret("write of KEY_A 2 (not held) and SYN_REPORT",
		   write(fd, in, sizeof(in)), sizeof(in));
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	poll(&pfd, 1, 2000);
	n = read(fd, out, sizeof(out));
	report(n == 4 * (ssize_t)sizeof(out[0]) && out[0].type == EV_REP &&
		       out[0].code == REP_DELAY && out[0].value == 300 &&
		       out[1].type == EV_REP && out[1].code == REP_PERIOD &&
		       out[1].value == 40 && out[2].type == EV_KEY &&
		       out[2].code == KEY_A && out[2].value == 2 &&
		       out[3].type == EV_SYN,
	       "read: EV_REP 300, EV_REP 40, KEY_A 2, SYN_REPORT",
	       "read %s", show_ret(n, errno));
	close(fd);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s NODE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# evdev-client: ABI %s\n",
	       sizeof(long) == 4 ? "i386" : "x86_64");
	/* First, before any ioctl could tell the node this ABI. */
	check_read(argv[1]);
	fd = expect_open(argv[1], O_RDWR, "open the node read-write");
	if (fd < 0) {
		printf("1..%d\n", ntests);
		return 1;
	}
	check_identity(fd);
	check_name_lengths(fd);
	check_bits(fd);
	check_clock(fd);
	check_masks(fd, argv[1]);
	check_grab(fd, argv[1]);
	check_keymap(fd);
	check_rep(argv[1]);
	check_bad_pointers(fd);
	expect_ret("close the node", close(fd), 0);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
