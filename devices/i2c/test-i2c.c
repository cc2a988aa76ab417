/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the i2c model against the fake kernel (no CUSE): i2c-dev's
 * ioctls, read and write from native and i386 callers, the SMBus
 * transactions on the EEPROM and the LM75, PEC, round trips and limits.
 */
#include <string.h>
#include <sys/stat.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "config.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"

#define NATIVE_BASE UINT64_C(0x7f0000000000)
#define COMPAT_BASE UINT64_C(0x08000000)
#define CLIENT_SIZE (512u * 1024u)
/* Client memory: the ioctl's struct, SMBus data, messages, buffers. */
#define AT_ARG 0x100
#define AT_DATA 0x200
#define AT_MSGS 0x400
#define AT_BUF 0x1000
/* Never mapped in the fake client: every access to it faults. */
#define BAD_ADDR 8
/* Prefill, so that bytes the device did not write can be told apart. */
#define FILL 0xAA

#define FUNCS                                                           \
	(I2C_FUNC_I2C | I2C_FUNC_10BIT_ADDR | I2C_FUNC_NOSTART |        \
	 I2C_FUNC_SMBUS_EMUL_ALL)

#define EEPROM 0x50
#define LM75 0x48

/* What i386 callers pass, from the kernel's compat_i2cdev_ioctl(). */
struct i2c_msg32 {
	uint16_t addr, flags, len;
	uint32_t buf;
};

struct i2c_rdwr_ioctl_data32 {
	uint32_t msgs, nmsgs;
};

struct i2c_smbus_ioctl_data32 {
	uint8_t read_write, command;
	uint32_t size, data;
};

struct fixture {
	struct cusemu_device *dev;
	struct cusemu_file file[2];
	bool open[2];
	struct fake_client client;
};

/* One test in one ABI: the device description and the caller. */
struct run {
	const char *device;
	bool compat;
};

/* A message as a test writes it, its buffer an address of the client. */
struct tmsg {
	uint16_t addr, flags, len;
	cusemu_uptr_t buf;
};

static void open_file(struct fixture *f, unsigned int i)
{
	f->file[i] = (struct cusemu_file){ .dev = f->dev };
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file[i]), ==, 0);
	f->open[i] = true;
}

static void close_file(struct fixture *f, unsigned int i)
{
	f->dev->model->release(f->dev, &f->file[i]);
	f->open[i] = false;
}

static void setup_device(struct fixture *f, const char *device, bool compat)
{
	f->dev = fake_device_new(device);
	f->client.compat = compat;
	f->client.base = compat ? COMPAT_BASE : NATIVE_BASE;
	f->client.size = CLIENT_SIZE;
	f->client.mem = g_malloc0(CLIENT_SIZE);
	open_file(f, 0);
	open_file(f, 1);
}

static void setup(struct fixture *f, gconstpointer data)
{
	const struct run *r = data;

	setup_device(f, r->device, r->compat);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	for (unsigned int i = 0; i < 2; i++)
		if (f->open[i])
			close_file(f, i);
	fake_device_free(f->dev);
	g_free(f->client.mem);
}

static cusemu_uptr_t at(struct fixture *f, size_t off)
{
	return f->client.base + off;
}

static uint8_t *mem(struct fixture *f, size_t off)
{
	return f->client.mem + off;
}

static long ioctl_on(struct fixture *f, unsigned int fi, unsigned int cmd,
		     cusemu_uptr_t arg, unsigned int *rt)
{
	unsigned int dummy;

	return fake_ioctl(&f->client, f->dev, &f->file[fi], cmd, arg,
			  rt ? rt : &dummy);
}

static long slave(struct fixture *f, unsigned int fi, unsigned long addr)
{
	unsigned int rt;
	long ret = ioctl_on(f, fi, I2C_SLAVE, addr, &rt);

	/* A value: no round trip. */
	g_assert_cmpuint(rt, ==, 0);
	return ret;
}

/* I2C_RDWR with the struct at AT_ARG naming msgs and nmsgs as they are. */
static long rdwr_raw(struct fixture *f, cusemu_uptr_t msgs, uint32_t nmsgs,
		     unsigned int *rt)
{
	if (f->client.compat) {
		struct i2c_rdwr_ioctl_data32 a = { (uint32_t)msgs, nmsgs };

		memcpy(mem(f, AT_ARG), &a, sizeof(a));
	} else {
		struct i2c_rdwr_ioctl_data a = {
			(struct i2c_msg *)(uintptr_t)msgs, nmsgs };

		memcpy(mem(f, AT_ARG), &a, sizeof(a));
	}
	return ioctl_on(f, 0, I2C_RDWR, at(f, AT_ARG), rt);
}

/* I2C_RDWR of n messages, laid out in the caller's ABI at AT_MSGS. */
static long rdwr(struct fixture *f, const struct tmsg *m, unsigned int n,
		 unsigned int *rt)
{
	for (unsigned int i = 0; i < n; i++) {
		if (f->client.compat) {
			struct i2c_msg32 u = { m[i].addr, m[i].flags,
					       m[i].len, (uint32_t)m[i].buf };

			memcpy(mem(f, AT_MSGS + i * sizeof(u)), &u, sizeof(u));
		} else {
			struct i2c_msg u = {
				m[i].addr, m[i].flags, m[i].len,
				(uint8_t *)(uintptr_t)m[i].buf };

			memcpy(mem(f, AT_MSGS + i * sizeof(u)), &u, sizeof(u));
		}
	}
	return rdwr_raw(f, at(f, AT_MSGS), n, rt);
}

/* I2C_SMBUS; data (NULL: none) goes in at AT_DATA and comes back. */
static long smbus_on(struct fixture *f, unsigned int fi, uint8_t rw,
		     uint8_t cmd, uint32_t size, union i2c_smbus_data *data,
		     unsigned int *rt)
{
	cusemu_uptr_t d = data ? at(f, AT_DATA) : 0;
	long ret;

	if (data)
		memcpy(mem(f, AT_DATA), data, sizeof(*data));
	if (f->client.compat) {
		struct i2c_smbus_ioctl_data32 a = { rw, cmd, size,
						    (uint32_t)d };

		memcpy(mem(f, AT_ARG), &a, sizeof(a));
	} else {
		struct i2c_smbus_ioctl_data a = {
			rw, cmd, size, (union i2c_smbus_data *)(uintptr_t)d };

		memcpy(mem(f, AT_ARG), &a, sizeof(a));
	}
	ret = ioctl_on(f, fi, I2C_SMBUS, at(f, AT_ARG), rt);
	if (data)
		memcpy(data, mem(f, AT_DATA), sizeof(*data));
	return ret;
}

static long smbus(struct fixture *f, uint8_t rw, uint8_t cmd, uint32_t size,
		  union i2c_smbus_data *data)
{
	unsigned int rt;
	long ret = smbus_on(f, 0, rw, cmd, size, data, &rt);

	/* The struct, then the data in both directions at once. */
	g_assert_cmpuint(rt, ==, data ? 2 : 1);
	return ret;
}

static int read_byte_data(struct fixture *f, uint8_t cmd)
{
	union i2c_smbus_data d = { .byte = FILL };
	long ret = smbus(f, I2C_SMBUS_READ, cmd, I2C_SMBUS_BYTE_DATA, &d);

	return ret ? (int)ret : d.byte;
}

static long write_byte_data(struct fixture *f, uint8_t cmd, uint8_t v)
{
	union i2c_smbus_data d = { .byte = v };

	return smbus(f, I2C_SMBUS_WRITE, cmd, I2C_SMBUS_BYTE_DATA, &d);
}

static int read_word_data(struct fixture *f, uint8_t cmd)
{
	union i2c_smbus_data d = { .word = 0xAAAA };
	long ret = smbus(f, I2C_SMBUS_READ, cmd, I2C_SMBUS_WORD_DATA, &d);

	return ret ? (int)ret : d.word;
}

static long write_word_data(struct fixture *f, uint8_t cmd, uint16_t v)
{
	union i2c_smbus_data d = { .word = v };

	return smbus(f, I2C_SMBUS_WRITE, cmd, I2C_SMBUS_WORD_DATA, &d);
}

/* The EEPROM's bytes through I2C_RDWR: offset, repeated start, read. */
static void eeprom_get(struct fixture *f, uint8_t off, uint8_t *out,
		       uint16_t n)
{
	struct tmsg m[2] = {
		{ EEPROM, 0, 1, at(f, AT_BUF) },
		{ EEPROM, I2C_M_RD, n, at(f, AT_BUF + 0x100) },
	};

	*mem(f, AT_BUF) = off;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	memcpy(out, mem(f, AT_BUF + 0x100), n);
}

/* A page write of up to 8 bytes. */
static void eeprom_put(struct fixture *f, uint8_t off, const uint8_t *in,
		       uint16_t n)
{
	struct tmsg m = { EEPROM, 0, (uint16_t)(n + 1), at(f, AT_BUF) };

	*mem(f, AT_BUF) = off;
	memcpy(mem(f, AT_BUF + 1), in, n);
	g_assert_cmpint(rdwr(f, &m, 1, NULL), ==, 1);
}

static uint8_t eeprom_byte(struct fixture *f, uint8_t off)
{
	uint8_t b;

	eeprom_get(f, off, &b, 1);
	return b;
}

/* i2c_smbus_pec() as the test's own reference. */
static uint8_t crc8(uint8_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int data = (unsigned int)(crc ^ p[i]) << 8;

		for (unsigned int b = 0; b < 8; b++) {
			if (data & 0x8000)
				data ^= 0x1070u << 3;
			data <<= 1;
		}
		crc = (uint8_t)(data >> 8);
	}
	return crc;
}

/* ---- the adapter */

static void test_funcs(struct fixture *f, gconstpointer data)
{
	unsigned int rt;
	uint64_t v = 0;

	memset(mem(f, AT_ARG), FILL, 16);
	g_assert_cmpint(ioctl_on(f, 0, I2C_FUNCS, at(f, AT_ARG), &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 1);
	if (f->client.compat) {
		/* A compat_ulong_t: 4 bytes, nothing past them. */
		memcpy(&v, mem(f, AT_ARG), 4);
		for (unsigned int i = 4; i < 8; i++)
			g_assert_cmphex(*mem(f, AT_ARG + i), ==, FILL);
	} else {
		memcpy(&v, mem(f, AT_ARG), 8);
		g_assert_cmphex(*mem(f, AT_ARG + 8), ==, FILL);
	}
	g_assert_cmphex(v, ==, FUNCS);
	g_assert_cmphex(v, ==, 0x0fff801b);
	g_assert_cmpint(ioctl_on(f, 0, I2C_FUNCS, BAD_ADDR, NULL), ==,
			-EFAULT);
}

static void test_values(struct fixture *f, gconstpointer data)
{
	unsigned int rt;

	g_assert_cmpint(ioctl_on(f, 0, I2C_RETRIES, 5, &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 0);
	g_assert_cmpint(ioctl_on(f, 0, I2C_TIMEOUT, 200, &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 0);
	g_assert_cmpint(ioctl_on(f, 0, I2C_TENBIT, 1, NULL), ==, 0);
	g_assert_cmpint(ioctl_on(f, 0, I2C_TENBIT, 0, NULL), ==, 0);
	g_assert_cmpint(ioctl_on(f, 0, I2C_PEC, 1, NULL), ==, 0);
	g_assert_cmpint(ioctl_on(f, 0, I2C_PEC, 0, NULL), ==, 0);
	if (!f->client.compat) {
		/* Above INT_MAX; an i386 caller cannot pass these. */
		g_assert_cmpint(ioctl_on(f, 0, I2C_RETRIES, 1ul << 31, NULL),
				==, -EINVAL);
		g_assert_cmpint(ioctl_on(f, 0, I2C_TIMEOUT, 1ul << 40, NULL),
				==, -EINVAL);
	}
	g_assert_cmpint(ioctl_on(f, 0, 0x0709, 0, NULL), ==, -ENOTTY);
}

/* Addresses as i2cdev_ioctl() checks them; 10-bit only with I2C_TENBIT. */
static void test_slave_addresses(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(slave(f, 0, 0x00), ==, 0);
	g_assert_cmpint(slave(f, 0, 0x7f), ==, 0);
	g_assert_cmpint(slave(f, 0, 0x80), ==, -EINVAL);
	g_assert_cmpint(ioctl_on(f, 0, I2C_SLAVE_FORCE, 0x80, NULL), ==,
			-EINVAL);
	g_assert_cmpint(ioctl_on(f, 0, I2C_TENBIT, 1, NULL), ==, 0);
	g_assert_cmpint(slave(f, 0, 0x80), ==, 0);
	g_assert_cmpint(slave(f, 0, 0x3ff), ==, 0);
	g_assert_cmpint(slave(f, 0, 0x400), ==, -EINVAL);
	/* The 7-bit chips do not answer 10-bit addressing. */
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK, NULL),
			==, -ENXIO);
}

/*
 * As i2cdev_check(): open files share addresses; only a chip a kernel
 * driver is bound to (here the LM75) is busy for I2C_SLAVE, and
 * I2C_SLAVE_FORCE reaches it anyway.
 */
static void test_slave_busy(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(slave(f, 1, EEPROM), ==, 0);
	g_assert_cmpint(smbus_on(f, 1, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK,
				 NULL, NULL), ==, 0);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK, NULL),
			==, 0);
	g_assert_cmpint(slave(f, 0, LM75), ==, -EBUSY);
	g_assert_cmpint(slave(f, 1, LM75), ==, -EBUSY);
	/* The failed I2C_SLAVE left the file at its address. */
	g_assert_cmpint(smbus_on(f, 1, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK,
				 NULL, NULL), ==, 0);
	g_assert_cmpint(ioctl_on(f, 1, I2C_SLAVE_FORCE, LM75, NULL), ==, 0);
	g_assert_cmpint(smbus_on(f, 1, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK,
				 NULL, NULL), ==, 0);
	/* A 10-bit 0x048 is another address than the bound 7-bit 0x48. */
	g_assert_cmpint(ioctl_on(f, 0, I2C_TENBIT, 1, NULL), ==, 0);
	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
}

/* Absent addresses are not acknowledged: ENXIO, as i2cdetect expects. */
static void test_nak(struct fixture *f, gconstpointer data)
{
	union i2c_smbus_data d = { 0 };
	struct tmsg m = { 0x61, I2C_M_RD, 1, at(f, AT_BUF) };
	unsigned int rt;

	g_assert_cmpint(slave(f, 0, 0x60), ==, 0);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK, NULL),
			==, -ENXIO);
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0, I2C_SMBUS_BYTE, &d), ==,
			-ENXIO);
	g_assert_cmpint(rdwr(f, &m, 1, &rt), ==, -ENXIO);
	g_assert_cmpuint(rt, ==, 3);
	/* The file's address is 0 until I2C_SLAVE: nobody answers. */
	g_assert_cmpint(smbus_on(f, 1, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK,
				 NULL, NULL), ==, -ENXIO);
	/* Both probes i2cdetect uses find the chips. */
	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK, NULL),
			==, 0);
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0, I2C_SMBUS_BYTE, &d), ==,
			0);
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0, I2C_SMBUS_QUICK, NULL),
			==, 0);
}

/* ---- SMBus on the EEPROM */

static void test_smbus_eeprom(struct fixture *f, gconstpointer data)
{
	union i2c_smbus_data d;
	uint8_t b[8];

	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	/* Erased. */
	g_assert_cmpint(read_byte_data(f, 0x10), ==, 0xff);
	g_assert_cmpint(write_byte_data(f, 0x10, 0xab), ==, 0);
	g_assert_cmpint(read_byte_data(f, 0x10), ==, 0xab);

	/* Send byte sets the address counter, receive byte reads on. */
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x10, I2C_SMBUS_BYTE, NULL),
			==, 0);
	d.byte = 0;
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0, I2C_SMBUS_BYTE, &d), ==,
			0);
	g_assert_cmphex(d.byte, ==, 0xab);
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0, I2C_SMBUS_BYTE, &d), ==,
			0);
	g_assert_cmphex(d.byte, ==, 0xff);

	/* Words are little-endian in SMBus. */
	g_assert_cmpint(write_word_data(f, 0x20, 0x1234), ==, 0);
	eeprom_get(f, 0x20, b, 2);
	g_assert_cmphex(b[0], ==, 0x34);
	g_assert_cmphex(b[1], ==, 0x12);
	g_assert_cmpint(read_word_data(f, 0x20), ==, 0x1234);

	/*
	 * A process call: the write is cut by the repeated start, so the
	 * EEPROM keeps its bytes and reads on from where the counter got.
	 */
	eeprom_put(f, 0x22, (const uint8_t[]){ 0xcd, 0xef }, 2);
	d.word = 0x5678;
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x20, I2C_SMBUS_PROC_CALL,
			      &d), ==, 0);
	g_assert_cmphex(d.word, ==, 0xefcd);
	g_assert_cmpint(read_word_data(f, 0x20), ==, 0x1234);

	/* I2C block write and read, and the old numbering of the read. */
	memset(&d, 0, sizeof(d));
	d.block[0] = 5;
	memcpy(d.block + 1, "\x01\x02\x03\x04\x05", 5);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x40,
			      I2C_SMBUS_I2C_BLOCK_DATA, &d), ==, 0);
	memset(&d, 0, sizeof(d));
	d.block[0] = 5;
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x40,
			      I2C_SMBUS_I2C_BLOCK_DATA, &d), ==, 0);
	g_assert_cmpmem(d.block, 6, "\x05\x01\x02\x03\x04\x05", 6);
	memset(&d, 0, sizeof(d));
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x40,
			      I2C_SMBUS_I2C_BLOCK_BROKEN, &d), ==, 0);
	g_assert_cmpuint(d.block[0], ==, I2C_SMBUS_BLOCK_MAX);
	g_assert_cmpmem(d.block + 1, 6, "\x01\x02\x03\x04\x05\xff", 6);

	/* SMBus block write: the count goes on the wire, then the bytes. */
	memset(&d, 0, sizeof(d));
	memcpy(d.block, "\x03\xa1\xa2\xa3", 4);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x60, I2C_SMBUS_BLOCK_DATA,
			      &d), ==, 0);
	eeprom_get(f, 0x60, b, 4);
	g_assert_cmpmem(b, 4, "\x03\xa1\xa2\xa3", 4);
	/* The block read takes the stored count as the block length. */
	memset(&d, 0, sizeof(d));
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x60, I2C_SMBUS_BLOCK_DATA,
			      &d), ==, 0);
	g_assert_cmpmem(d.block, 5, "\x03\xa1\xa2\xa3\x00", 5);
	/* An erased byte is no valid length. */
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x90, I2C_SMBUS_BLOCK_DATA,
			      &d), ==, -EPROTO);

	/* Block process call: the aborted write leaves the counter at 0x6b. */
	eeprom_put(f, 0x6b, (const uint8_t[]){ 2, 0x77, 0x88 }, 3);
	memset(&d, 0, sizeof(d));
	memcpy(d.block, "\x02\x11\x22", 3);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x68,
			      I2C_SMBUS_BLOCK_PROC_CALL, &d), ==, 0);
	g_assert_cmpmem(d.block, 3, "\x02\x77\x88", 3);
	g_assert_cmphex(eeprom_byte(f, 0x68), ==, 0xff);

	/* Blocks of more than 32 bytes are refused before the bus. */
	memset(&d, 0, sizeof(d));
	d.block[0] = 33;
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x80, I2C_SMBUS_BLOCK_DATA,
			      &d), ==, -EINVAL);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x80,
			      I2C_SMBUS_I2C_BLOCK_DATA, &d), ==, -EINVAL);
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x80,
			      I2C_SMBUS_I2C_BLOCK_DATA, &d), ==, -EINVAL);
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x80,
			      I2C_SMBUS_BLOCK_PROC_CALL, &d), ==, -EINVAL);
	g_assert_cmphex(eeprom_byte(f, 0x80), ==, 0xff);
}

/* i2cdev_ioctl_smbus()'s own checks, before any data is fetched. */
static void test_smbus_bad(struct fixture *f, gconstpointer data)
{
	union i2c_smbus_data d = { 0 };
	unsigned int rt;

	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(smbus_on(f, 0, I2C_SMBUS_READ, 0, 9, &d, &rt), ==,
			-EINVAL);
	g_assert_cmpuint(rt, ==, 1);
	g_assert_cmpint(smbus_on(f, 0, 2, 0, I2C_SMBUS_BYTE_DATA, &d, &rt),
			==, -EINVAL);
	g_assert_cmpuint(rt, ==, 1);
	g_assert_cmpint(smbus_on(f, 0, I2C_SMBUS_READ, 0, I2C_SMBUS_BYTE_DATA,
				 NULL, &rt), ==, -EINVAL);
	g_assert_cmpuint(rt, ==, 1);
	g_assert_cmpint(ioctl_on(f, 0, I2C_SMBUS, BAD_ADDR, NULL), ==,
			-EFAULT);

	/* Data at a bad address: nothing was written before the fault. */
	if (f->client.compat) {
		struct i2c_smbus_ioctl_data32 a = { I2C_SMBUS_WRITE, 0x30,
						    I2C_SMBUS_BYTE_DATA,
						    BAD_ADDR };

		memcpy(mem(f, AT_ARG), &a, sizeof(a));
	} else {
		struct i2c_smbus_ioctl_data a = {
			I2C_SMBUS_WRITE, 0x30, I2C_SMBUS_BYTE_DATA,
			(union i2c_smbus_data *)BAD_ADDR };

		memcpy(mem(f, AT_ARG), &a, sizeof(a));
	}
	g_assert_cmpint(ioctl_on(f, 0, I2C_SMBUS, at(f, AT_ARG), NULL), ==,
			-EFAULT);
	g_assert_cmpint(read_byte_data(f, 0x30), ==, 0xff);
}

/* ---- the LM75 */

static void test_lm75(struct fixture *f, gconstpointer data)
{
	union i2c_smbus_data d;

	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
	/* Big-endian on the wire: 25.0 C is 0x1900, SMBus reads 0x0019. */
	g_assert_cmpint(read_word_data(f, 0x00), ==, 0x0019);
	g_assert_cmpint(read_byte_data(f, 0x01), ==, 0x00);
	g_assert_cmpint(read_word_data(f, 0x02), ==, 0x004b);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0050);

	g_assert_cmpint(write_byte_data(f, 0x01, 0x02), ==, 0);
	g_assert_cmpint(read_byte_data(f, 0x01), ==, 0x02);
	/* Reserved configuration bits read as 0. */
	g_assert_cmpint(write_byte_data(f, 0x01, 0xff), ==, 0);
	g_assert_cmpint(read_byte_data(f, 0x01), ==, 0x1f);

	/* 85 C into Tos; below 0.5 degree nothing is kept. */
	g_assert_cmpint(write_word_data(f, 0x03, 0x0055), ==, 0);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0055);
	g_assert_cmpint(write_word_data(f, 0x03, 0xff55), ==, 0);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x8055);
	/* The temperature is read-only. */
	g_assert_cmpint(write_word_data(f, 0x00, 0x0030), ==, 0);
	g_assert_cmpint(read_word_data(f, 0x00), ==, 0x0019);

	/* The pointer stays: receive byte reads the register it names. */
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0x03, I2C_SMBUS_BYTE, NULL),
			==, 0);
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0, I2C_SMBUS_BYTE, &d), ==,
			0);
	g_assert_cmphex(d.byte, ==, 0x55);

	/* An LM75A: unused registers 0xff, its ID in 7, repeats every 8. */
	g_assert_cmpint(read_byte_data(f, 0x04), ==, 0xff);
	g_assert_cmpint(read_byte_data(f, 0x06), ==, 0xff);
	g_assert_cmpint(read_byte_data(f, 0x07), ==, 0xa1);
	g_assert_cmpint(read_byte_data(f, 0x09), ==, 0x1f);
	g_assert_cmpint(read_byte_data(f, 0xfb), ==, 0x55);
	/* Past a register's bytes a read repeats them. */
	memset(&d, 0, sizeof(d));
	d.block[0] = 4;
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x02,
			      I2C_SMBUS_I2C_BLOCK_DATA, &d), ==, 0);
	g_assert_cmpmem(d.block, 5, "\x04\x4b\x00\x4b\x00", 5);
}

static void test_lm75_temp(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
	/* -5.5 C: 0xfa80 on the wire. */
	g_assert_cmpint(read_word_data(f, 0x00), ==, 0x80fa);
	g_assert_cmpint(slave(f, 0, 0x49), ==, 0);
	/* Its own temp=: 100.25 C rounds to 100.5 C, 0x6480. */
	g_assert_cmpint(read_word_data(f, 0x00), ==, 0x8064);
}

/* ---- PEC */

static void test_pec(struct fixture *f, gconstpointer data)
{
	uint8_t frame[5] = { LM75 << 1, 0x03, 0x50, 0x00 };
	struct tmsg m = { LM75, 0, 4, at(f, AT_BUF) };
	union i2c_smbus_data d = { 0 };
	uint8_t b[2];

	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
	g_assert_cmpint(ioctl_on(f, 0, I2C_PEC, 1, NULL), ==, 0);
	/* The chip's CRC of the whole transaction checks out. */
	g_assert_cmpint(read_word_data(f, 0x00), ==, 0x0019);
	g_assert_cmpint(read_byte_data(f, 0x01), ==, 0x00);
	g_assert_cmpint(write_word_data(f, 0x03, 0x0055), ==, 0);
	g_assert_cmpint(write_byte_data(f, 0x01, 0x04), ==, 0);
	g_assert_cmpint(ioctl_on(f, 0, I2C_PEC, 0, NULL), ==, 0);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0055);
	g_assert_cmpint(read_byte_data(f, 0x01), ==, 0x04);
	/* A PEC chip takes a write only with its PEC. */
	g_assert_cmpint(write_word_data(f, 0x03, 0x0060), ==, 0);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0055);

	/* A wrong PEC byte is not acknowledged, and nothing changes. */
	memcpy(mem(f, AT_BUF), frame + 1, 3);
	*mem(f, AT_BUF + 3) = (uint8_t)(crc8(0, frame, 4) ^ 1);
	g_assert_cmpint(rdwr(f, &m, 1, NULL), ==, -EIO);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0055);
	*mem(f, AT_BUF + 3) = crc8(0, frame, 4);
	g_assert_cmpint(rdwr(f, &m, 1, NULL), ==, 1);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0050);

	/*
	 * The 24C02 knows no PEC: a read's PEC byte is just its next byte,
	 * and the check fails; a write's lands in the next cell.
	 */
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	eeprom_put(f, 0x30, (const uint8_t[]){ 0x11, 0x22 }, 2);
	g_assert_cmpint(ioctl_on(f, 0, I2C_PEC, 1, NULL), ==, 0);
	d.byte = 0;
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x30, I2C_SMBUS_BYTE_DATA,
			      &d), ==, -EBADMSG);
	g_assert_cmpint(write_byte_data(f, 0x38, 0x5a), ==, 0);
	eeprom_get(f, 0x38, b, 2);
	g_assert_cmphex(b[0], ==, 0x5a);
	g_assert_cmphex(b[1], ==,
			crc8(0, (const uint8_t[]){ EEPROM << 1, 0x38, 0x5a },
			     3));
	/* No PEC for quick commands and I2C block transfers. */
	g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK, NULL),
			==, 0);
	memset(&d, 0, sizeof(d));
	d.block[0] = 2;
	g_assert_cmpint(smbus(f, I2C_SMBUS_READ, 0x30,
			      I2C_SMBUS_I2C_BLOCK_DATA, &d), ==, 0);
	g_assert_cmpmem(d.block, 3, "\x02\x11\x22", 3);
}

/* ---- I2C_RDWR */

/* A write, then a random read in one call: the same 3 round trips. */
static void test_rdwr(struct fixture *f, gconstpointer data)
{
	struct tmsg w = { EEPROM, 0, 5, at(f, AT_BUF) };
	struct tmsg rd[2] = {
		{ EEPROM, 0, 1, at(f, AT_BUF + 0x10) },
		{ EEPROM, I2C_M_RD, 4, at(f, AT_BUF + 0x20) },
	};
	unsigned int rt;

	memcpy(mem(f, AT_BUF), "\x20\x01\x02\x03\x04", 5);
	g_assert_cmpint(rdwr(f, &w, 1, &rt), ==, 1);
	g_assert_cmpuint(rt, ==, 3);
	*mem(f, AT_BUF + 0x10) = 0x20;
	memset(mem(f, AT_BUF + 0x20), FILL, 8);
	g_assert_cmpint(rdwr(f, rd, 2, &rt), ==, 2);
	g_assert_cmpuint(rt, ==, 3);
	g_assert_cmpmem(mem(f, AT_BUF + 0x20), 5, "\x01\x02\x03\x04\xaa", 5);
	/* The write buffer is left as it was. */
	g_assert_cmphex(*mem(f, AT_BUF + 0x10), ==, 0x20);
}

/* The 24C02's own rules: pages wrap, reads wrap at 256, STOP writes. */
static void test_eeprom_wire(struct fixture *f, gconstpointer data)
{
	struct tmsg m[2] = {
		{ EEPROM, 0, 11, at(f, AT_BUF) },
		{ EEPROM, I2C_M_RD, 1, at(f, AT_BUF + 0x20) },
	};
	uint8_t b[8];

	/* 10 bytes from 0x05: past 0x07 they wrap to 0x00 and overwrite. */
	memcpy(mem(f, AT_BUF), "\x05\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9",
	       11);
	g_assert_cmpint(rdwr(f, m, 1, NULL), ==, 1);
	eeprom_get(f, 0x00, b, 8);
	g_assert_cmpmem(b, 8, "\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xd2", 8);
	g_assert_cmphex(eeprom_byte(f, 0x08), ==, 0xff);

	/* Current-address reads wrap from 0xff to 0x00. */
	eeprom_put(f, 0xff, (const uint8_t[]){ 0x42 }, 1);
	eeprom_get(f, 0xfe, b, 3);
	g_assert_cmpmem(b, 3, "\xff\x42\xd3", 3);

	/* A repeated start instead of a STOP: the write is lost. */
	memcpy(mem(f, AT_BUF), "\x10\x99", 2);
	m[0].len = 2;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	g_assert_cmphex(*mem(f, AT_BUF + 0x20), ==, 0xff);
	g_assert_cmphex(eeprom_byte(f, 0x10), ==, 0xff);

	/* I2C_M_NOSTART goes on with the same chip: one page write. */
	memcpy(mem(f, AT_BUF), "\x18\x01", 2);
	memcpy(mem(f, AT_BUF + 0x20), "\x02\x03", 2);
	m[1] = (struct tmsg){ EEPROM, I2C_M_NOSTART, 2, at(f, AT_BUF + 0x20) };
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	eeprom_get(f, 0x18, b, 4);
	g_assert_cmpmem(b, 4, "\x01\x02\x03\xff", 4);
	/* With no chip addressed, nobody acknowledges the bytes. */
	g_assert_cmpint(rdwr(f, &m[1], 1, NULL), ==, -EIO);
}

/* 42 messages cost the round trips of one: every buffer in one retry. */
static void test_rdwr_42(struct fixture *f, gconstpointer data)
{
	struct tmsg m[I2C_RDWR_IOCTL_MAX_MSGS];
	struct tmsg one = { EEPROM, I2C_M_RD, 1, at(f, AT_BUF + 0x800) };
	unsigned int rt1, rt42;

	for (unsigned int i = 0; i < 5; i++) {
		uint8_t page[8];

		for (unsigned int j = 0; j < 8; j++)
			page[j] = (uint8_t)(0x80 + i * 8 + j);
		eeprom_put(f, (uint8_t)(i * 8), page, 8);
	}
	g_assert_cmpint(rdwr(f, &one, 1, &rt1), ==, 1);

	/* Set the counter, then 42 current-address reads of one byte. */
	eeprom_put(f, 0x01, (const uint8_t[]){ 0 }, 0);
	memset(mem(f, AT_BUF), FILL, 64);
	for (unsigned int i = 0; i < G_N_ELEMENTS(m); i++)
		m[i] = (struct tmsg){ EEPROM, I2C_M_RD, 1, at(f, AT_BUF + i) };
	g_assert_cmpint(rdwr(f, m, G_N_ELEMENTS(m), &rt42), ==, 42);
	for (unsigned int i = 0; i < 39; i++)
		g_assert_cmphex(*mem(f, AT_BUF + i), ==, 0x81 + i);
	g_assert_cmpmem(mem(f, AT_BUF + 39), 4, "\xff\xff\xff\xaa", 4);
	g_assert_cmpuint(rt1, ==, 3);
	g_assert_cmpuint(rt42, ==, rt1);
}

/* i2c-dev's checks of the call, in its order, and nothing done. */
static void test_rdwr_bad(struct fixture *f, gconstpointer data)
{
	struct tmsg m[I2C_RDWR_IOCTL_MAX_MSGS + 1];
	unsigned int rt;

	for (unsigned int i = 0; i < G_N_ELEMENTS(m); i++)
		m[i] = (struct tmsg){ EEPROM, I2C_M_RD, 1, at(f, AT_BUF + i) };
	g_assert_cmpint(rdwr(f, m, 43, &rt), ==, -EINVAL);
	g_assert_cmpuint(rt, ==, 1);
	g_assert_cmpint(rdwr(f, m, 0, &rt), ==, -EINVAL);
	g_assert_cmpuint(rt, ==, 1);
	/* Since Linux 5.3 (and 5.17 for i386 callers): EINVAL, not EFAULT. */
	g_assert_cmpint(rdwr_raw(f, 0, 1, &rt), ==, -EINVAL);
	g_assert_cmpuint(rt, ==, 1);
	g_assert_cmpint(rdwr_raw(f, BAD_ADDR, 1, &rt), ==, -EFAULT);
	g_assert_cmpint(ioctl_on(f, 0, I2C_RDWR, BAD_ADDR, &rt), ==, -EFAULT);
	g_assert_cmpuint(rt, ==, 1);

	/*
	 * A write to the LM75 (it takes a write even when a repeated start
	 * follows), then a message too long: neither reaches the bus.
	 */
	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
	m[0] = (struct tmsg){ LM75, 0, 3, at(f, AT_BUF + 0x100) };
	memcpy(mem(f, AT_BUF + 0x100), "\x03\x60\x00", 3);
	m[1] = (struct tmsg){ EEPROM, I2C_M_RD, 8193, at(f, AT_BUF + 0x200) };
	g_assert_cmpint(rdwr(f, m, 2, &rt), ==, -EINVAL);
	g_assert_cmpuint(rt, ==, 3);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0050);

	/* A buffer at a bad address, write or read: EFAULT, bus untouched. */
	m[1] = (struct tmsg){ EEPROM, 0, 2, BAD_ADDR };
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EFAULT);
	m[1] = (struct tmsg){ EEPROM, I2C_M_RD, 2, BAD_ADDR };
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EFAULT);
	m[1] = (struct tmsg){ EEPROM, I2C_M_RD, 2,
			      f->client.base + CLIENT_SIZE - 1 };
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EFAULT);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0050);

	/* 8192 is fine: a read that wraps around the EEPROM 32 times. */
	m[1] = (struct tmsg){ EEPROM, I2C_M_RD, 8192, at(f, AT_BUF + 0x200) };
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0060);
	/* A NULL buffer of no bytes is none. */
	m[0].buf = at(f, AT_BUF + 0x100);
	memcpy(mem(f, AT_BUF + 0x100), "\x03\x61\x00", 3);
	m[1] = (struct tmsg){ EEPROM, I2C_M_RD, 0, 0 };
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	g_assert_cmpint(read_word_data(f, 0x03), ==, 0x0061);
}

/*
 * More than one call moves (128 KiB each way): ENOMEM as the transport
 * fails it, before any message reaches the bus.
 */
static void test_rdwr_too_much(struct fixture *f, gconstpointer data)
{
	struct tmsg m[I2C_RDWR_IOCTL_MAX_MSGS];
	unsigned int rt;

	for (unsigned int i = 0; i < G_N_ELEMENTS(m); i++) {
		size_t off = AT_BUF + i * 8192;

		m[i] = (struct tmsg){ EEPROM, 0, 8192, at(f, off) };
		memset(mem(f, off), 0x11, 8192);
		*mem(f, off) = (uint8_t)(i * 8);
	}
	g_assert_cmpint(rdwr(f, m, G_N_ELEMENTS(m), &rt), ==, -ENOMEM);
	g_assert_cmpuint(rt, ==, 2);
	eeprom_get(f, 0, mem(f, AT_BUF), 256);
	for (unsigned int i = 0; i < 256; i++)
		g_assert_cmphex(*mem(f, AT_BUF + i), ==, 0xff);

	/* 15 reads of 8 KiB fit: in and out, with the struct and array. */
	for (unsigned int i = 0; i < 15; i++)
		m[i].flags = I2C_M_RD;
	g_assert_cmpint(rdwr(f, m, 15, &rt), ==, 15);
	g_assert_cmpuint(rt, ==, 3);
	g_assert_cmphex(*mem(f, AT_BUF + 14 * 8192 + 8191), ==, 0xff);
	g_assert_cmpint(rdwr(f, m, 16, &rt), ==, -ENOMEM);
}

/* The length byte comes from the chip; the caller made room for 32 more. */
static void test_recv_len(struct fixture *f, gconstpointer data)
{
	struct tmsg m[2] = {
		{ EEPROM, 0, 1, at(f, AT_BUF) },
		{ EEPROM, I2C_M_RD | I2C_M_RECV_LEN, 40,
		  at(f, AT_BUF + 0x100) },
	};
	uint8_t *buf = mem(f, AT_BUF + 0x100);

	eeprom_put(f, 0x70, (const uint8_t[]){ 3, 0xb1, 0xb2, 0xb3, 0xb4 },
		   5);
	*mem(f, AT_BUF) = 0x70;
	memset(buf, FILL, 40);
	buf[0] = 1;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	g_assert_cmpmem(buf, 5, "\x03\xb1\xb2\xb3\xaa", 5);
	/* buf[0] = 2: one more byte, as for a PEC. */
	memset(buf, FILL, 40);
	buf[0] = 2;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	g_assert_cmpmem(buf, 6, "\x03\xb1\xb2\xb3\xb4\xaa", 6);

	/* What i2c-dev refuses: no room, no length byte, not a read. */
	buf[0] = 2;
	m[1].len = 33;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EINVAL);
	buf[0] = 1;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	m[1].len = 32;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EINVAL);
	m[1].len = 40;
	buf[0] = 0;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EINVAL);
	buf[0] = 1;
	m[1].flags = I2C_M_RECV_LEN;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EINVAL);
	/* A length the chip gives that is no block length. */
	m[1].flags = I2C_M_RD | I2C_M_RECV_LEN;
	*mem(f, AT_BUF) = 0x75;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, -EPROTO);
}

/* ---- read() and write() */

static void test_read_write(struct fixture *f, gconstpointer data)
{
	const struct cusemu_device_model *m = f->dev->model;
	struct cusemu_file *file = &f->file[0];
	g_autofree char *big = g_malloc0(10000);
	char buf[4];

	g_assert_cmpint(m->write(f->dev, file, "\x30\x11\x22", 3), ==,
			-ENXIO);
	g_assert_cmpint(m->read(f->dev, file, buf, 2), ==, -ENXIO);
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(m->write(f->dev, file, "\x30\x11\x22", 3), ==, 3);
	g_assert_cmpint(m->write(f->dev, file, "\x30", 1), ==, 1);
	g_assert_cmpint(m->read(f->dev, file, buf, 2), ==, 2);
	g_assert_cmpmem(buf, 2, "\x11\x22", 2);
	/* At most 8192 bytes a call, as i2c-dev cuts them. */
	g_assert_cmpint(m->read(f->dev, file, big, 10000), ==, 8192);
	g_assert_cmpint(m->write(f->dev, file, big, 10000), ==, 8192);
	/* The file's 10-bit setting goes with it. */
	g_assert_cmpint(ioctl_on(f, 0, I2C_TENBIT, 1, NULL), ==, 0);
	g_assert_cmpint(m->read(f->dev, file, buf, 1), ==, -ENXIO);
}

/* ---- 10-bit chips, an empty bus */

static void test_tenbit(struct fixture *f, gconstpointer data)
{
	struct tmsg m[2] = {
		{ 0x123, I2C_M_TEN, 2, at(f, AT_BUF) },
		{ 0x123, I2C_M_TEN | I2C_M_RD, 1, at(f, AT_BUF + 0x10) },
	};

	memcpy(mem(f, AT_BUF), "\x07\x5e", 2);
	g_assert_cmpint(rdwr(f, m, 1, NULL), ==, 1);
	m[0].len = 1;
	g_assert_cmpint(rdwr(f, m, 2, NULL), ==, 2);
	g_assert_cmphex(*mem(f, AT_BUF + 0x10), ==, 0x5e);
	/* 0x123 without I2C_M_TEN is the 7-bit 0x23: nobody. */
	m[0].flags = 0;
	g_assert_cmpint(rdwr(f, m, 1, NULL), ==, -ENXIO);

	g_assert_cmpint(ioctl_on(f, 0, I2C_TENBIT, 1, NULL), ==, 0);
	g_assert_cmpint(slave(f, 0, 0x123), ==, 0);
	g_assert_cmpint(read_byte_data(f, 0x07), ==, 0x5e);
	/* The 7-bit LM75 stays at 0x48 beside it. */
	g_assert_cmpint(ioctl_on(f, 0, I2C_TENBIT, 0, NULL), ==, 0);
	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
	g_assert_cmpint(read_word_data(f, 0x00), ==, 0x0019);
}

static void test_empty_bus(struct fixture *f, gconstpointer data)
{
	for (unsigned int addr = 0x03; addr <= 0x77; addr++) {
		g_assert_cmpint(slave(f, 0, addr), ==, 0);
		g_assert_cmpint(smbus(f, I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK,
				      NULL), ==, -ENXIO);
	}
}

/* ---- the EEPROM file */

static char *read_file(const char *path, gsize *len)
{
	char *data = NULL;

	g_assert_true(g_file_get_contents(path, &data, len, NULL));
	return data;
}

static void test_eeprom_file(void)
{
	g_autofree char *dir = g_dir_make_tmp("cusemu-i2c-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "eeprom.bin", NULL);
	g_autofree char *arg = g_strdup_printf("i2c:eeprom_file=%s", path);
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *data = NULL;
	uint8_t bytes[256];
	gsize len;

	/* Missing: the EEPROM starts erased; its file is made once the
	 * start has succeeded (->sandboxed), not before. */
	setup_device(f, arg, false);
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
	{
		char *why = NULL;

		g_assert_cmpint(f->dev->model->sandboxed(f->dev, &why), ==, 0);
		g_assert_null(why);
	}
	data = read_file(path, &len);
	g_assert_cmpuint(len, ==, 256);
	for (unsigned int i = 0; i < len; i++)
		g_assert_cmphex((uint8_t)data[i], ==, 0xff);
	g_clear_pointer(&data, g_free);

	/* Saved after the write, not only at the end. */
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(write_byte_data(f, 0x42, 0x5a), ==, 0);
	data = read_file(path, &len);
	g_assert_cmphex((uint8_t)data[0x42], ==, 0x5a);
	g_clear_pointer(&data, g_free);
	g_assert_cmpint(write_byte_data(f, 0x43, 0xa5), ==, 0);
	teardown(f, NULL);
	data = read_file(path, &len);
	g_assert_cmpuint(len, ==, 256);
	g_assert_cmphex((uint8_t)data[0x43], ==, 0xa5);
	g_clear_pointer(&data, g_free);

	/* Loaded at the next start; nothing but the two bytes changed. */
	for (unsigned int i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)i;
	bytes[0x42] = 0x5a;
	g_assert_true(g_file_set_contents(path, (const char *)bytes,
					  sizeof(bytes), NULL));
	memset(&fx, 0, sizeof(fx));
	setup_device(f, arg, true);
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(read_byte_data(f, 0x42), ==, 0x5a);
	g_assert_cmpint(read_byte_data(f, 0x99), ==, 0x99);
	teardown(f, NULL);
	data = read_file(path, &len);
	g_assert_cmpmem(data, len, bytes, sizeof(bytes));

	g_assert_cmpint(g_unlink(path), ==, 0);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/*
 * A save that fails for good (here its directory is gone; a full disk does
 * the same): the daemon's log names the file and the bytes lost, and the
 * daemon will exit with status 1.
 */
static void test_eeprom_lost(void)
{
	g_autofree char *dir = g_dir_make_tmp("cusemu-i2c-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "eeprom.bin", NULL);
	g_autofree char *arg = g_strdup_printf("i2c:eeprom_file=%s", path);
	g_autofree char *lost = NULL;
	struct fixture fx = { 0 }, *f = &fx;
	unsigned int before = cusemu_device_lost_count();

	setup_device(f, arg, false);
	{
		char *why = NULL;

		/* The start's save makes the file. */
		g_assert_cmpint(f->dev->model->sandboxed(f->dev, &why), ==, 0);
	}
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(g_unlink(path), ==, 0);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
	g_test_expect_message("cusemu-i2c", G_LOG_LEVEL_WARNING,
			      "eeprom@0x50: cannot save its contents*");
	g_assert_cmpint(write_byte_data(f, 0x10, 0x01), ==, 0);
	g_test_expect_message("cusemu-i2c", G_LOG_LEVEL_WARNING,
			      "eeprom@0x50: cannot save its contents*");
	g_assert_cmpint(write_byte_data(f, 0x11, 0x02), ==, 0);
	g_test_assert_expected_messages();
	lost = g_strdup_printf("/dev/i2c-0 (i2c) lost data: eeprom@0x50: 2 bytes "
			       "written since its last save are not in %s: *",
			       path);
	g_test_expect_message("cusemu-model", G_LOG_LEVEL_CRITICAL, lost);
	teardown(f, NULL);
	g_test_assert_expected_messages();
	g_assert_cmpuint(cusemu_device_lost_count(), ==, before + 1);
}

static void expect_refused(const char *arg, const char *why);

/*
 * eeprom_file is the file itself: not a symbolic link's target, not a
 * FIFO (which would hang the start) nor a device (/dev/zero would never
 * end); a file's mode outlives its saves.
 */
static void test_eeprom_file_kinds(void)
{
	g_autofree char *dir = g_dir_make_tmp("cusemu-i2c-XXXXXX", NULL);
	g_autofree char *secret = g_build_filename(dir, "secret", NULL);
	g_autofree char *link = g_build_filename(dir, "link", NULL);
	g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
	g_autofree char *arg = NULL;
	uint8_t bytes[256] = { 0x11 };
	struct fixture fx = { 0 }, *f = &fx;
	struct stat st;

	g_assert_true(g_file_set_contents(secret, (const char *)bytes,
					  sizeof(bytes), NULL));
	g_assert_cmpint(chmod(secret, 0600), ==, 0);
	g_assert_cmpint(symlink(secret, link), ==, 0);
	g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
	arg = g_strdup_printf("i2c:eeprom_file=%s", link);
	expect_refused(arg, "is a symbolic link");
	g_free(arg);
	arg = g_strdup_printf("i2c:eeprom_file=%s", fifo);
	expect_refused(arg, "is not a regular file");
	expect_refused("i2c:eeprom_file=/dev/zero", "is not a regular file");
	g_free(arg);

	/* A save keeps the file's 0600. */
	arg = g_strdup_printf("i2c:eeprom_file=%s", secret);
	setup_device(f, arg, false);
	g_assert_cmpint(slave(f, 0, EEPROM), ==, 0);
	g_assert_cmpint(write_byte_data(f, 0x20, 0x22), ==, 0);
	teardown(f, NULL);
	g_assert_cmpint(stat(secret, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 07777, ==, 0600);
	g_assert_cmpint(lstat(link, &st), ==, 0);
	g_assert_true(S_ISLNK(st.st_mode));
	g_assert_cmpint(g_unlink(fifo), ==, 0);
	g_assert_cmpint(g_unlink(link), ==, 0);
	g_assert_cmpint(g_unlink(secret), ==, 0);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void expect_refused(const char *arg, const char *why)
{
	g_autoptr(GError) error = NULL;

	g_assert_null(fake_device_try(NULL, arg, &error));
	g_assert_nonnull(error);
	g_test_message("%s: %s", arg, error->message);
	g_assert_nonnull(strstr(error->message, why));
}

static void test_bad_config(void)
{
	g_autofree char *dir = g_dir_make_tmp("cusemu-i2c-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "short.bin", NULL);
	g_autofree char *arg = g_strdup_printf("i2c:eeprom_file=%s", path);
	g_autofree char *dup = g_build_filename(dir, "dup.bin", NULL);
	g_autofree char *arg2 =
		g_strdup_printf("i2c:chips=eeprom@0x50:file=%s+eeprom@0x51:"
				"file=%s", dup, dup);

	g_assert_true(g_file_set_contents(path, "0123", 4, NULL));
	expect_refused(arg, "holds 4 bytes, a 24C02 holds 256");
	expect_refused(arg2, "two EEPROMs in the file");
	expect_refused("i2c:chips=rom@0x50", "unknown chip type 'rom'");
	expect_refused("i2c:chips=eeprom", "write TYPE@ADDRESS");
	/* Empty entries: a '+' too many, at either end or doubled. */
	expect_refused("i2c:chips=eeprom@0x50+", "has an empty entry");
	expect_refused("i2c:chips=+eeprom@0x50", "has an empty entry");
	expect_refused("i2c:chips=eeprom@0x50++lm75@0x48", "has an empty entry");
	expect_refused("i2c:chips=eeprom@0x00", "bad address '0x00'");
	expect_refused("i2c:chips=eeprom@0x80", "bad address");
	expect_refused("i2c:chips=eeprom@0xa400", "bad address");
	expect_refused("i2c:chips=eeprom@50x", "bad address");
	expect_refused("i2c:chips=eeprom@0x50+lm75@0x50",
		       "two chips at address 0x50");
	expect_refused("i2c:chips=eeprom@0xa050+lm75@0xa050",
		       "two chips at address 0xa050");
	expect_refused("i2c:chips=eeprom@0x50:pec", "unknown option 'pec'");
	expect_refused("i2c:chips=lm75@0x48:temp=200000", "temp=200000");
	expect_refused("i2c:lm75_temp=hot", "lm75_temp 'hot'");
	expect_refused("i2c:lm75_temp=-60000", "lm75_temp");
	expect_refused("i2c:chips=lm75@0x48,eeprom_file=/nonexistent/x",
		       "chips has no eeprom");
	expect_refused("i2c:chips=eeprom@0x50:file=", "file= needs a path");
	/* A file that cannot be made stops the start at its last step, once
	 * the daemon runs with the rights it keeps (->sandboxed). */
	{
		g_autoptr(GError) error = NULL;
		struct cusemu_device *dev = fake_device_try(
			NULL, "i2c:eeprom_file=/nonexistent-dir/e.bin", &error);
		char *why = NULL;

		g_assert_no_error(error);
		g_assert_cmpint(dev->model->sandboxed(dev, &why), ==, -EACCES);
		g_assert_nonnull(strstr(why, "/nonexistent-dir/e.bin"));
		g_free(why);
		fake_device_free(dev);
	}

	g_assert_cmpint(g_unlink(path), ==, 0);
	g_unlink(dup);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/* Under the global ioctl32 table, the compat rows serve i386 callers. */
static void test_old_kernel(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	struct tmsg m = { EEPROM, I2C_M_RD, 1, 0 };
	uint32_t v[2];

	setup_device(f, "i2c:kernel=2.6.10", true);
	memset(mem(f, AT_ARG), FILL, 8);
	g_assert_cmpint(ioctl_on(f, 0, I2C_FUNCS, at(f, AT_ARG), NULL), ==, 0);
	memcpy(v, mem(f, AT_ARG), 8);
	g_assert_cmphex(v[0], ==, FUNCS);
	g_assert_cmphex(v[1], ==, 0xaaaaaaaa);
	m.buf = at(f, AT_BUF);
	g_assert_cmpint(rdwr(f, &m, 1, NULL), ==, 1);
	g_assert_cmpint(slave(f, 0, LM75), ==, 0);
	g_assert_cmpint(read_word_data(f, 0x00), ==, 0x0019);
	teardown(f, NULL);
}

#define DEV "i2c"

static const struct {
	const char *name;
	const char *device;
	void (*fn)(struct fixture *, gconstpointer);
} cases[] = {
	{ "funcs", DEV, test_funcs },
	{ "values", DEV, test_values },
	{ "slave-addresses", DEV, test_slave_addresses },
	{ "slave-busy", "i2c:chips=eeprom@0x50+lm75@0x48:bound",
	  test_slave_busy },
	{ "nak", DEV, test_nak },
	{ "smbus-eeprom", DEV, test_smbus_eeprom },
	{ "smbus-bad", DEV, test_smbus_bad },
	{ "lm75", DEV, test_lm75 },
	{ "lm75-temp",
	  "i2c:chips=lm75@0x48+lm75@0x49:temp=100250,lm75_temp=-5500",
	  test_lm75_temp },
	{ "pec", "i2c:chips=eeprom@0x50+lm75@0x48:pec", test_pec },
	{ "rdwr", DEV, test_rdwr },
	{ "eeprom-wire", DEV, test_eeprom_wire },
	{ "rdwr-42", DEV, test_rdwr_42 },
	{ "rdwr-bad", DEV, test_rdwr_bad },
	{ "rdwr-too-much", DEV, test_rdwr_too_much },
	{ "recv-len", DEV, test_recv_len },
	{ "read-write", DEV, test_read_write },
	{ "tenbit", "i2c:chips=eeprom@0xa123+lm75@0x48", test_tenbit },
	{ "empty-bus", "i2c:chips=none", test_empty_bus },
};

int main(int argc, char **argv)
{
	static struct run runs[2 * G_N_ELEMENTS(cases)];

	g_test_init(&argc, &argv, NULL);
	/* Every case in both ABIs, as a pair. */
	for (unsigned int i = 0; i < G_N_ELEMENTS(cases); i++) {
		for (unsigned int abi = 0; abi < 2; abi++) {
			struct run *r = &runs[2 * i + abi];
			g_autofree char *name = g_strdup_printf(
				"/i2c/%s/%s", abi ? "compat" : "native",
				cases[i].name);

			*r = (struct run){ cases[i].device, abi == 1 };
			g_test_add(name, struct fixture, r, setup,
				   cases[i].fn, teardown);
		}
	}
	g_test_add_func("/i2c/eeprom-file", test_eeprom_file);
	g_test_add_func("/i2c/eeprom-lost", test_eeprom_lost);
	g_test_add_func("/i2c/eeprom-file-kinds", test_eeprom_file_kinds);
	g_test_add_func("/i2c/bad-config", test_bad_config);
	g_test_add_func("/i2c/old-kernel", test_old_kernel);
	return g_test_run();
}
