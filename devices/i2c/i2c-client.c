/* SPDX-License-Identifier: MIT */
/*
 * A self-checking client of an i2c node with the default chips: what
 * i2c-tools cannot send (bad pointers, bad message counts and sizes, 42
 * messages at once, a second opener) and read()/write(), in the ABI it is
 * built for (-m64 or -m32), reported as TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "tap.h"

/* What the model's adapter claims: an I2C master that emulates SMBus. */
#define FUNCS                                                           \
	(I2C_FUNC_I2C | I2C_FUNC_10BIT_ADDR | I2C_FUNC_NOSTART |        \
	 I2C_FUNC_SMBUS_EMUL_ALL)
/* An address no chip of the default bus answers. */
#define ABSENT 0x61
#define MSG_MAX 8192
#define FILL 0xAA

static unsigned int eeprom = 0x50;

static void *xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		bail("cannot allocate a test buffer");
	return p;
}

/* A page that was mapped and is no more: any access to it faults. */
static void *unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p, 4096))
		bail("cannot make an unmapped page");
	return p;
}

static long smbus(int fd, uint8_t rw, uint8_t cmd, uint32_t size,
		  union i2c_smbus_data *data)
{
	struct i2c_smbus_ioctl_data a = { rw, cmd, size, data };

	return ioctl(fd, I2C_SMBUS, &a);
}

static long rdwr(int fd, struct i2c_msg *msgs, uint32_t n)
{
	struct i2c_rdwr_ioctl_data a = { msgs, n };

	return ioctl(fd, I2C_RDWR, &a);
}

/* The EEPROM holds 0x40 + offset at 0x00..0x2f once check_setup ran. */
static uint8_t pattern(unsigned int off)
{
	return (uint8_t)(0x40 + off);
}

/* An SMBus byte read of a known EEPROM byte: the daemon still serves. */
static bool still_serves(int fd, const char *after)
{
	union i2c_smbus_data d = { .byte = 0 };
	long ret = smbus(fd, I2C_SMBUS_READ, 0x05, I2C_SMBUS_BYTE_DATA, &d);
	int err = errno;
	char desc[200];

	snprintf(desc, sizeof(desc), "after %s, an I2C_SMBUS byte read still "
		 "gives 0x%02x", after, pattern(5));
	if (ret)
		return report(false, desc, "got %s", show_ret(ret, err));
	return report(d.byte == pattern(5), desc, "got 0x%02x", d.byte);
}

static bool expect_bytes(const char *desc, const uint8_t *got,
			 const uint8_t *want, size_t n)
{
	size_t i;

	for (i = 0; i < n && got[i] == want[i]; i++)
		;
	return report(i == n, desc, "expected 0x%02x at byte %zu, got 0x%02x",
		      i < n ? want[i] : 0, i, i < n ? got[i] : 0);
}

static void check_funcs(int fd)
{
	unsigned char buf[8];
	unsigned long funcs = 0;
	size_t width = sizeof(long);

	expect_ret("I2C_FUNCS returns 0", ioctl(fd, I2C_FUNCS, &funcs), 0);
	report(funcs == FUNCS, "I2C_FUNCS: I2C, 10-bit, NOSTART, every SMBus "
	       "transaction emulated", "expected 0x%lx, got 0x%lx",
	       (unsigned long)FUNCS, funcs);
	/* An unsigned long: 4 bytes for i386, 8 for x86_64. */
	memset(buf, FILL, sizeof(buf));
	ioctl(fd, I2C_FUNCS, buf);
	report(width == 8 || (buf[4] == FILL && buf[7] == FILL),
	       "I2C_FUNCS writes 4 bytes for an i386 caller, nothing past them",
	       "byte 4 is 0x%02x", buf[4]);
	report(width == 4 || (buf[4] == 0 && buf[7] == 0),
	       "I2C_FUNCS writes all 8 bytes for an x86_64 caller",
	       "byte 4 is 0x%02x", buf[4]);
}

/* Six 8-byte pages through SMBus I2C block writes. */
static void check_setup(int fd)
{
	union i2c_smbus_data d;
	long ret = 0;
	int err = 0;

	expect_ret("I2C_SLAVE to the EEPROM returns 0",
		   ioctl(fd, I2C_SLAVE, eeprom), 0);
	for (unsigned int page = 0; page < 6 && !ret; page++) {
		d.block[0] = 8;
		for (unsigned int i = 0; i < 8; i++)
			d.block[1 + i] = pattern(page * 8 + i);
		ret = smbus(fd, I2C_SMBUS_WRITE, (uint8_t)(page * 8),
			    I2C_SMBUS_I2C_BLOCK_DATA, &d);
		err = errno;
	}
	report(!ret, "six I2C block writes of a page fill 0x00..0x2f",
	       "got %s", show_ret(ret, err));
	still_serves(fd, "the page writes");
}

/*
 * I2C_SLAVE: two descriptors share an address, as i2c-dev's anonymous
 * clients do (only a chip bound to a kernel driver is busy), and FORCE
 * goes through too.
 */
static void check_busy(const char *node, int fd)
{
	union i2c_smbus_data d = { .byte = 0 };
	int fd2 = expect_open(node, O_RDWR, "open a second descriptor");

	if (fd2 < 0)
		return;
	expect_ret("I2C_SLAVE to the address the first descriptor has "
		   "returns 0 (open files share it)",
		   ioctl(fd2, I2C_SLAVE, eeprom), 0);
	expect_ret("I2C_SLAVE_FORCE to it returns 0",
		   ioctl(fd2, I2C_SLAVE_FORCE, eeprom), 0);
	expect_ret("... and an SMBus byte read from the second descriptor "
		   "returns 0",
		   smbus(fd2, I2C_SMBUS_READ, 0x07, I2C_SMBUS_BYTE_DATA, &d),
		   0);
	report(d.byte == pattern(7), "... and gives the EEPROM's byte",
	       "got 0x%02x", d.byte);
	expect_errno("I2C_SLAVE 0x80 without I2C_TENBIT fails with EINVAL",
		     ioctl(fd2, I2C_SLAVE, 0x80), EINVAL);
	close(fd2);
	still_serves(fd, "the second descriptor");
}

/* i2c-dev's checks of I2C_RDWR itself, before any message. */
static void check_rdwr_counts(int fd)
{
	static struct i2c_msg msgs[I2C_RDWR_IOCTL_MAX_MSGS + 1];
	static uint8_t bytes[I2C_RDWR_IOCTL_MAX_MSGS + 1];
	void *bad = unmapped_page();

	for (unsigned int i = 0; i < I2C_RDWR_IOCTL_MAX_MSGS + 1; i++)
		msgs[i] = (struct i2c_msg){ eeprom, I2C_M_RD, 1, &bytes[i] };
	/* Linux 5.3 (5.17 for i386 callers) made this EINVAL, was EFAULT. */
	expect_errno("I2C_RDWR with msgs NULL fails with EINVAL",
		     rdwr(fd, NULL, 1), EINVAL);
	still_serves(fd, "msgs NULL");
	expect_errno("I2C_RDWR of 0 messages fails with EINVAL",
		     rdwr(fd, msgs, 0), EINVAL);
	still_serves(fd, "0 messages");
	expect_errno("I2C_RDWR of 43 messages fails with EINVAL",
		     rdwr(fd, msgs, I2C_RDWR_IOCTL_MAX_MSGS + 1), EINVAL);
	still_serves(fd, "43 messages");
	expect_errno("I2C_RDWR with its argument unmapped fails with EFAULT",
		     ioctl(fd, I2C_RDWR, bad), EFAULT);
	still_serves(fd, "an unmapped argument");
	expect_errno("I2C_RDWR with the messages unmapped fails with EFAULT",
		     rdwr(fd, bad, 2), EFAULT);
	still_serves(fd, "unmapped messages");
}

/*
 * Bad messages around a page write that would reach the EEPROM if the
 * call went through: a NOSTART message continues it, and a read before it
 * does not cut it.
 */
static void check_rdwr_messages(int fd)
{
	uint8_t w[2] = { 0x08, 0x99 }, r[2];
	uint8_t *big = xmalloc(MSG_MAX + 1);
	struct i2c_msg msgs[2] = {
		{ eeprom, 0, 2, w },
		{ eeprom, I2C_M_NOSTART, MSG_MAX + 1, big },
	};
	union i2c_smbus_data d = { .byte = 0 };
	void *bad = unmapped_page();

	memset(big, 0x99, MSG_MAX + 1);
	expect_errno("I2C_RDWR with a message of 8193 bytes fails with "
		     "EINVAL", rdwr(fd, msgs, 2), EINVAL);
	still_serves(fd, "an 8193-byte message");
	msgs[1] = (struct i2c_msg){ eeprom, I2C_M_NOSTART, 1, bad };
	expect_errno("I2C_RDWR writing from an unmapped page fails with "
		     "EFAULT", rdwr(fd, msgs, 2), EFAULT);
	still_serves(fd, "a write from an unmapped page");
	msgs[1] = msgs[0];
	msgs[0] = (struct i2c_msg){ eeprom, I2C_M_RD, 2, bad };
	expect_errno("I2C_RDWR reading into an unmapped page fails with "
		     "EFAULT", rdwr(fd, msgs, 2), EFAULT);
	still_serves(fd, "a read into an unmapped page");
	smbus(fd, I2C_SMBUS_READ, 0x08, I2C_SMBUS_BYTE_DATA, &d);
	report(d.byte == pattern(8), "none of those calls wrote the EEPROM",
	       "byte 0x08 is 0x%02x", d.byte);
	msgs[0] = (struct i2c_msg){ eeprom, I2C_M_RD, MSG_MAX, big };
	expect_ret("I2C_RDWR reading 8192 bytes in one message returns 1",
		   rdwr(fd, msgs, 1), 1);
	msgs[0] = (struct i2c_msg){ eeprom, I2C_M_RD, 2, r };
	expect_ret("I2C_RDWR reading 2 bytes, then the page write, returns 2",
		   rdwr(fd, msgs, 2), 2);
	smbus(fd, I2C_SMBUS_READ, 0x08, I2C_SMBUS_BYTE_DATA, &d);
	report(d.byte == 0x99, "... and that call wrote the EEPROM",
	       "byte 0x08 is 0x%02x", d.byte);
	w[1] = pattern(8);
	expect_ret("I2C_RDWR writing the byte back returns 1",
		   rdwr(fd, msgs + 1, 1), 1);
	free(big);
}

/*
 * Message lengths at the edges: none, one, a page less one, a page and
 * one, each read from the EEPROM into a buffer of which no byte past the
 * length may change; and the most a __u16 len holds (4 GiB cannot be
 * said), over i2c-dev's 8192.
 */
static void check_rdwr_lengths(int fd)
{
	static const uint16_t lens[] = { 0, 1, 4095, 4097 };
	/* The tail no read may reach, and a byte the message may show. */
	uint8_t *buf = xmalloc(4097 + 17);
	struct i2c_msg msg = { eeprom, I2C_M_RD, 0, buf };
	char desc[96];
	size_t n;

	for (size_t i = 0; i < sizeof(lens) / sizeof(*lens); i++) {
		msg.len = lens[i];
		memset(buf, FILL, 4097 + 16);
		snprintf(desc, sizeof(desc), "I2C_RDWR reading %u bytes in one "
			 "message returns 1", lens[i]);
		expect_ret(desc, rdwr(fd, &msg, 1), 1);
		for (n = lens[i]; n < 4097u + 16 && buf[n] == FILL; n++)
			;
		snprintf(desc, sizeof(desc), "... and writes no byte past "
			 "those %u", lens[i]);
		report(n == 4097 + 16, desc, "byte %zu is 0x%02x", n, buf[n]);
	}
	msg = (struct i2c_msg){ eeprom, 0, 0, buf };
	expect_ret("I2C_RDWR writing a message of 0 bytes (the address alone) "
		   "returns 1", rdwr(fd, &msg, 1), 1);
	msg = (struct i2c_msg){ eeprom, I2C_M_RD, UINT16_MAX, buf };
	expect_errno("I2C_RDWR reading 65535 bytes in one message fails with "
		     "EINVAL", rdwr(fd, &msg, 1), EINVAL);
	still_serves(fd, "the edge lengths");
	free(buf);
}

/* 42 messages of 8 KiB move more than one call can: nothing happens. */
static void check_rdwr_too_much(int fd)
{
	static struct i2c_msg msgs[I2C_RDWR_IOCTL_MAX_MSGS];
	uint8_t *data = xmalloc(I2C_RDWR_IOCTL_MAX_MSGS * MSG_MAX);
	union i2c_smbus_data d = { .byte = 0 };

	memset(data, 0x11, I2C_RDWR_IOCTL_MAX_MSGS * MSG_MAX);
	for (unsigned int i = 0; i < I2C_RDWR_IOCTL_MAX_MSGS; i++) {
		msgs[i] = (struct i2c_msg){ eeprom, 0, MSG_MAX,
					    data + i * MSG_MAX };
		data[i * MSG_MAX] = 0x00;	/* the offset */
	}
	expect_errno("I2C_RDWR of 42 messages of 8192 bytes (more than a "
		     "CUSE call moves) fails with ENOMEM",
		     rdwr(fd, msgs, I2C_RDWR_IOCTL_MAX_MSGS), ENOMEM);
	still_serves(fd, "42 x 8192 bytes");
	smbus(fd, I2C_SMBUS_READ, 0x00, I2C_SMBUS_BYTE_DATA, &d);
	report(d.byte == pattern(0), "... and none of its messages was sent",
	       "byte 0x00 is 0x%02x", d.byte);
	free(data);
}

static void check_rdwr_reads(int fd)
{
	static struct i2c_msg msgs[I2C_RDWR_IOCTL_MAX_MSGS];
	uint8_t off = 0x10, got[I2C_RDWR_IOCTL_MAX_MSGS], want[42];
	struct i2c_msg random[2] = {
		{ eeprom, 0, 1, &off },
		{ eeprom, I2C_M_RD, 4, got },
	};

	memset(got, FILL, sizeof(got));
	expect_ret("I2C_RDWR: the offset 0x10, a repeated start, 4 bytes read "
		   "returns 2", rdwr(fd, random, 2), 2);
	for (unsigned int i = 0; i < 4; i++)
		want[i] = pattern(0x10 + i);
	expect_bytes("... and reads 0x10..0x13", got, want, 4);

	/* The counter at 0x03, then 42 current-address reads of a byte. */
	off = 0x03;
	expect_ret("I2C_RDWR writing the offset 0x03 alone returns 1",
		   rdwr(fd, random, 1), 1);
	memset(got, FILL, sizeof(got));
	for (unsigned int i = 0; i < I2C_RDWR_IOCTL_MAX_MSGS; i++) {
		msgs[i] = (struct i2c_msg){ eeprom, I2C_M_RD, 1, &got[i] };
		want[i] = pattern(0x03 + i);
	}
	expect_ret("I2C_RDWR of 42 one-byte reads returns 42",
		   rdwr(fd, msgs, I2C_RDWR_IOCTL_MAX_MSGS), 42);
	expect_bytes("... and reads the 42 bytes from 0x03 on", got, want, 42);
	still_serves(fd, "42 messages");
}

/* The length comes from the chip: the EEPROM's byte at the offset. */
static void check_recv_len(int fd)
{
	uint8_t w[5] = { 0x30, 3, 0xc1, 0xc2, 0xc3 }, buf[40];
	struct i2c_msg msgs[2] = {
		{ eeprom, 0, 5, w },
		{ eeprom, I2C_M_RD | I2C_M_RECV_LEN, sizeof(buf), buf },
	};

	expect_ret("I2C_RDWR writes a length and 3 bytes at 0x30",
		   rdwr(fd, msgs, 1), 1);
	msgs[0].len = 1;
	memset(buf, FILL, sizeof(buf));
	buf[0] = 1;
	expect_ret("I2C_RDWR with I2C_M_RECV_LEN returns 2",
		   rdwr(fd, msgs, 2), 2);
	expect_bytes("... and reads the length and 3 bytes, no more", buf,
		     (const uint8_t[]){ 3, 0xc1, 0xc2, 0xc3, FILL }, 5);
	msgs[1].len = 32;
	buf[0] = 1;
	expect_errno("I2C_M_RECV_LEN with room for fewer than 32 bytes fails "
		     "with EINVAL", rdwr(fd, msgs, 2), EINVAL);
	still_serves(fd, "a short I2C_M_RECV_LEN buffer");
}

static void check_read_write(int fd)
{
	uint8_t buf[4] = { 0 };
	uint8_t *big = xmalloc(10000);

	expect_ret("write() of the offset 0x20 and a byte returns 2",
		   write(fd, "\x20\x99", 2), 2);
	expect_ret("write() of the offset 0x20 alone returns 1",
		   write(fd, "\x20", 1), 1);
	expect_ret("read() of 1 byte returns 1", read(fd, buf, 1), 1);
	report(buf[0] == 0x99, "... and gives the byte written",
	       "got 0x%02x", buf[0]);
	expect_ret("read() of 10000 bytes returns the 8192 of one transfer",
		   read(fd, big, 10000), MSG_MAX);
	expect_ret("I2C_SLAVE_FORCE to an absent address returns 0",
		   ioctl(fd, I2C_SLAVE_FORCE, ABSENT), 0);
	expect_errno("read() from it fails with ENXIO", read(fd, buf, 1),
		     ENXIO);
	expect_errno("write() to it fails with ENXIO", write(fd, "\x00", 1),
		     ENXIO);
	expect_errno("an SMBus quick write to it fails with ENXIO",
		     smbus(fd, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK, NULL),
		     ENXIO);
	expect_ret("I2C_SLAVE back to the EEPROM returns 0",
		   ioctl(fd, I2C_SLAVE, eeprom), 0);
	still_serves(fd, "read() and write()");
	free(big);
}

/* i2c_smbus_pec(): CRC-8, polynomial x^8 + x^2 + x + 1. */
static uint8_t crc8(const uint8_t *p, size_t n)
{
	unsigned int crc = 0;

	for (size_t i = 0; i < n; i++) {
		crc = (crc ^ p[i]) << 8;
		for (int b = 0; b < 8; b++)
			crc = (crc & 0x8000 ? crc ^ (0x1070u << 3) : crc) << 1;
		crc = (crc >> 8) & 0xff;
	}
	return (uint8_t)crc;
}

/* A 24C02 knows no PEC: the byte after the data is no CRC. */
static void check_pec(int fd)
{
	uint8_t frame[4] = { (uint8_t)(eeprom << 1), 0x05,
			     (uint8_t)(eeprom << 1 | 1), pattern(5) };
	union i2c_smbus_data d = { .byte = 0 };
	bool lucky = crc8(frame, 4) == pattern(6);

	expect_ret("I2C_PEC 1 returns 0", ioctl(fd, I2C_PEC, 1), 0);
	if (lucky)
		expect_ret("an SMBus byte read with PEC returns 0",
			   smbus(fd, I2C_SMBUS_READ, 0x05,
				 I2C_SMBUS_BYTE_DATA, &d), 0);
	else
		expect_errno("an SMBus byte read with PEC from the EEPROM "
			     "fails the check: EBADMSG",
			     smbus(fd, I2C_SMBUS_READ, 0x05,
				   I2C_SMBUS_BYTE_DATA, &d), EBADMSG);
	expect_ret("I2C_PEC 0 returns 0", ioctl(fd, I2C_PEC, 0), 0);
	expect_errno("I2C_SMBUS of size 9 fails with EINVAL",
		     smbus(fd, I2C_SMBUS_READ, 0, 9, &d), EINVAL);
	still_serves(fd, "PEC");
}

static void usage(void)
{
	fprintf(stderr, "usage: i2c-client [--eeprom ADDRESS] NODE\n");
	exit(2);
}

static const char *parse_args(int argc, char **argv)
{
	static const struct option options[] = {
		{ "eeprom", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (c != 'e')
			usage();
		errno = 0;
		v = strtoul(optarg, &end, 0);
		if (errno || end == optarg || *end || v < 0x03 || v > 0x77) {
			fprintf(stderr, "i2c-client: --eeprom takes a 7-bit "
				"address, 0x03 to 0x77\n");
			usage();
		}
		eeprom = (unsigned int)v;
	}
	if (optind != argc - 1)
		usage();
	return argv[optind];
}

int main(int argc, char **argv)
{
	const char *node = parse_args(argc, argv);
	int fd;

	/* A hang in the daemon should still show how far the checks got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* What the caller's ABI decides: the width of long and pointers. */
	printf("# i2c-client: ABI %s\n",
	       sizeof(long) == 4 ? "i386" : "x86_64");
	fd = expect_open(node, O_RDWR, "open the node read-write");
	if (fd < 0) {
		printf("1..%d\n", ntests);
		return 1;
	}
	check_funcs(fd);
	check_setup(fd);
	check_busy(node, fd);
	check_rdwr_counts(fd);
	check_rdwr_messages(fd);
	check_rdwr_lengths(fd);
	check_rdwr_too_much(fd);
	check_rdwr_reads(fd);
	check_recv_len(fd);
	check_read_write(fd);
	check_pec(fd);
	close(fd);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
