/* SPDX-License-Identifier: MIT */
/*
 * i2c: the i2c-dev ABI of <linux/i2c-dev.h> on an emulated adapter, with the
 * semantics of the kernel's drivers/i2c/i2c-dev.c and SMBus emulated over
 * I2C transfers as i2c-core-smbus.c does. The chips are in i2c-chips.c.
 */
#define G_LOG_DOMAIN "cusemu-i2c"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "cusemu/device.h"
#include "cusemu/uaccess.h"
#include "i2c-chips.h"

/* The kernel's own client flag (include/linux/i2c.h), not in the uapi. */
#define I2C_CLIENT_PEC 0x04

/* The most one I2C_RDWR message or one read()/write() moves in i2c-dev. */
#define I2C_DEV_MSG_MAX 8192

/*
 * An I2C master like the kernel's bit-banging algorithm (i2c-algo-bit), less
 * the protocol mangling flags: every SMBus transaction can be emulated, and
 * I2C_M_RECV_LEN, I2C_M_TEN and I2C_M_NOSTART are carried out.
 */
#define I2C_ADAPTER_FUNCS                                               \
	(I2C_FUNC_I2C | I2C_FUNC_10BIT_ADDR | I2C_FUNC_NOSTART |        \
	 I2C_FUNC_SMBUS_EMUL_ALL)

/* Layouts of i386 callers, from compat_i2cdev_ioctl(). */
struct i2c_msg32 {
	uint16_t addr;
	uint16_t flags;
	uint16_t len;
	uint32_t buf;
};

struct i2c_rdwr_ioctl_data32 {
	uint32_t msgs;
	uint32_t nmsgs;
};

struct i2c_smbus_ioctl_data32 {
	uint8_t read_write;
	uint8_t command;
	uint32_t size;
	uint32_t data;
};

G_STATIC_ASSERT(sizeof(struct i2c_msg32) == 12);
G_STATIC_ASSERT(sizeof(struct i2c_rdwr_ioctl_data32) == 8);
G_STATIC_ASSERT(sizeof(struct i2c_smbus_ioctl_data32) == 12);
G_STATIC_ASSERT(sizeof(union i2c_smbus_data) == 34);

struct i2c_bus {
	/*
	 * i2c_lock_bus(): one transfer at a time on the wire. It also
	 * guards the clients, which threads sharing a file may change.
	 */
	GMutex lock;
	struct cusemu_device *dev;
	GPtrArray *chips;
	GPtrArray *clients;		/* one per open file */
	/*
	 * Kept as the adapter keeps them; nothing here loses arbitration
	 * or waits, so they change nothing.
	 */
	unsigned int retries;
	unsigned int timeout_ms;
};

/* What i2c-dev's anonymous i2c_client holds for an open file. */
struct i2c_client {
	uint16_t addr;
	uint16_t flags;			/* I2C_M_TEN, I2C_CLIENT_PEC */
};

/* ---- the wire */

/* i2c_smbus_pec(): CRC-8, polynomial x^8 + x^2 + x + 1. */
static uint8_t pec_add(uint8_t crc, uint8_t byte)
{
	unsigned int data = (unsigned int)(crc ^ byte) << 8;

	for (unsigned int i = 0; i < 8; i++) {
		if (data & 0x8000)
			data ^= 0x1070u << 3;
		data <<= 1;
	}
	return (uint8_t)(data >> 8);
}

/*
 * The address byte as i2c_smbus_msg_pec() counts it: the 7-bit form, even
 * for 10-bit messages.
 */
static uint8_t addr_byte(const struct i2c_msg *m)
{
	return (uint8_t)((m->addr << 1) | (m->flags & I2C_M_RD));
}

/* i2c_smbus_msg_pec(): the address byte, then the data. */
static uint8_t pec_msg(uint8_t crc, const struct i2c_msg *m)
{
	crc = pec_add(crc, addr_byte(m));
	for (unsigned int i = 0; i < m->len; i++)
		crc = pec_add(crc, m->buf[i]);
	return crc;
}

/* Only the bits a bit-banging master puts on the wire count. */
static struct i2c_chip *bus_find(struct i2c_bus *bus, const struct i2c_msg *m)
{
	bool ten = m->flags & I2C_M_TEN;
	uint16_t addr = m->addr & (ten ? 0x3ff : 0x7f);

	for (guint i = 0; i < bus->chips->len; i++) {
		struct i2c_chip *chip = bus->chips->pdata[i];

		if (chip->addr == addr && chip->ten == ten)
			return chip;
	}
	return NULL;
}

/* Nobody drives the bus without a chip: writes go unacknowledged. */
static int bus_send(struct i2c_chip *chip, const struct i2c_msg *m,
		    uint8_t *crc)
{
	for (unsigned int i = 0; i < m->len; i++) {
		bool ack = chip && chip->ops->write(chip, m->buf[i], *crc);

		*crc = pec_add(*crc, m->buf[i]);
		if (!ack)
			return -EIO;	/* algo-bit's "NAK bailout" */
	}
	return 0;
}

/*
 * With I2C_M_RECV_LEN the first byte is a block length the message grows
 * by; the caller made room for I2C_SMBUS_BLOCK_MAX more. An idle bus reads
 * as 0xff.
 */
static int bus_recv(struct i2c_chip *chip, struct i2c_msg *m, uint8_t *crc)
{
	unsigned int count = m->len;

	for (unsigned int i = 0; i < count; i++) {
		uint8_t byte = chip ? chip->ops->read(chip, *crc) : 0xff;

		m->buf[i] = byte;
		*crc = pec_add(*crc, byte);
		if (i == 0 && (m->flags & I2C_M_RECV_LEN)) {
			if (byte == 0 || byte > I2C_SMBUS_BLOCK_MAX)
				return -EPROTO;
			count += byte;
			m->len += byte;
		}
	}
	return 0;
}

/*
 * master_xfer of a bit-banging adapter: a START and address per message
 * (I2C_M_NOSTART: none, the bytes go on), one STOP at the end or at the
 * first failure. An address nobody acknowledges is ENXIO. Returns the
 * number of messages; called with the bus lock held.
 */
static int bus_transfer(struct i2c_bus *bus, struct i2c_msg *msgs,
			unsigned int n)
{
	struct i2c_chip *chip = NULL;
	uint8_t crc = 0;
	int ret = (int)n;

	for (unsigned int i = 0; i < n; i++) {
		struct i2c_msg *m = &msgs[i];
		bool rd = m->flags & I2C_M_RD;

		if (!(m->flags & I2C_M_NOSTART)) {
			if (chip)
				chip->ops->end(chip, false);
			chip = bus_find(bus, m);
			crc = pec_add(crc, addr_byte(m));
			if (!chip) {
				cusemu_device_count_event(bus->dev, "nak");
				ret = -ENXIO;
				break;
			}
			chip->ops->start(chip, rd);
		}
		ret = rd ? bus_recv(chip, m, &crc) : bus_send(chip, m, &crc);
		if (ret < 0)
			break;
		ret = (int)n;
	}
	if (chip)
		chip->ops->end(chip, true);
	/* What a chip keeps in a file is saved before the call returns. */
	for (guint i = 0; i < bus->chips->len; i++) {
		struct i2c_chip *c = bus->chips->pdata[i];

		if (c->ops->sync)
			c->ops->sync(c);
	}
	return ret;
}

/* ---- SMBus over I2C: i2c_smbus_xfer_emulated() */

static bool smbus_size_valid(uint32_t size)
{
	switch (size) {
	case I2C_SMBUS_QUICK:
	case I2C_SMBUS_BYTE:
	case I2C_SMBUS_BYTE_DATA:
	case I2C_SMBUS_WORD_DATA:
	case I2C_SMBUS_PROC_CALL:
	case I2C_SMBUS_BLOCK_DATA:
	case I2C_SMBUS_I2C_BLOCK_BROKEN:
	case I2C_SMBUS_I2C_BLOCK_DATA:
	case I2C_SMBUS_BLOCK_PROC_CALL:
		return true;
	}
	return false;
}

/* Builds the messages of a transaction; false for a bad block size. */
static bool smbus_msgs(struct i2c_msg *msg, unsigned int *num,
		       uint8_t *read_write, uint32_t size,
		       const union i2c_smbus_data *data)
{
	uint8_t *buf0 = msg[0].buf;

	switch (size) {
	case I2C_SMBUS_QUICK:
		/* The read/write bit is the data. */
		msg[0].len = 0;
		if (*read_write == I2C_SMBUS_READ)
			msg[0].flags |= I2C_M_RD;
		*num = 1;
		break;
	case I2C_SMBUS_BYTE:
		if (*read_write == I2C_SMBUS_READ) {
			msg[0].flags |= I2C_M_RD;
			*num = 1;
		}
		break;
	case I2C_SMBUS_BYTE_DATA:
		if (*read_write == I2C_SMBUS_READ) {
			msg[1].len = 1;
		} else {
			msg[0].len = 2;
			buf0[1] = data->byte;
		}
		break;
	case I2C_SMBUS_WORD_DATA:
		if (*read_write == I2C_SMBUS_READ) {
			msg[1].len = 2;
		} else {
			msg[0].len = 3;
			buf0[1] = data->word & 0xff;
			buf0[2] = data->word >> 8;
		}
		break;
	case I2C_SMBUS_PROC_CALL:
		*num = 2;
		*read_write = I2C_SMBUS_READ;
		msg[0].len = 3;
		msg[1].len = 2;
		buf0[1] = data->word & 0xff;
		buf0[2] = data->word >> 8;
		break;
	case I2C_SMBUS_BLOCK_DATA:
		if (*read_write == I2C_SMBUS_READ) {
			/* The chip's first byte says how many follow. */
			msg[1].flags |= I2C_M_RECV_LEN;
			msg[1].len = 1;
			break;
		}
		if (data->block[0] > I2C_SMBUS_BLOCK_MAX)
			return false;
		msg[0].len = data->block[0] + 2;
		memcpy(buf0 + 1, data->block, msg[0].len - 1);
		break;
	case I2C_SMBUS_BLOCK_PROC_CALL:
		*num = 2;
		*read_write = I2C_SMBUS_READ;
		if (data->block[0] > I2C_SMBUS_BLOCK_MAX)
			return false;
		msg[0].len = data->block[0] + 2;
		memcpy(buf0 + 1, data->block, msg[0].len - 1);
		msg[1].flags |= I2C_M_RECV_LEN;
		msg[1].len = 1;
		break;
	case I2C_SMBUS_I2C_BLOCK_DATA:
		if (data->block[0] > I2C_SMBUS_BLOCK_MAX)
			return false;
		if (*read_write == I2C_SMBUS_READ) {
			msg[1].len = data->block[0];
		} else {
			msg[0].len = data->block[0] + 1;
			memcpy(buf0 + 1, data->block + 1, data->block[0]);
		}
		break;
	}
	return true;
}

/* One SMBus transaction; called with the bus lock held. */
static int smbus_xfer(struct i2c_bus *bus, uint16_t addr, uint16_t flags,
		      uint8_t read_write, uint8_t command, uint32_t size,
		      union i2c_smbus_data *data)
{
	uint8_t buf0[I2C_SMBUS_BLOCK_MAX + 3];
	uint8_t buf1[I2C_SMBUS_BLOCK_MAX + 2];
	unsigned int num = read_write == I2C_SMBUS_READ ? 2 : 1;
	uint16_t mflags = flags & I2C_M_TEN;
	struct i2c_msg msg[2] = {
		{ .addr = addr, .flags = mflags, .len = 1, .buf = buf0 },
		{ .addr = addr, .flags = mflags | I2C_M_RD, .buf = buf1 },
	};
	bool pec = (flags & I2C_CLIENT_PEC) && size != I2C_SMBUS_QUICK &&
		   size != I2C_SMBUS_I2C_BLOCK_DATA;
	struct i2c_msg *last;
	uint8_t partial = 0;
	int ret;

	buf0[0] = command;
	if (!smbus_msgs(msg, &num, &read_write, size, data))
		return -EINVAL;
	last = &msg[num - 1];
	if (pec) {
		/* The PEC of a write goes with it; a read's comes back. */
		if (!(msg[0].flags & I2C_M_RD)) {
			if (num == 1) {
				buf0[msg[0].len] = pec_msg(0, &msg[0]);
				msg[0].len++;
			} else {
				partial = pec_msg(0, &msg[0]);
			}
		}
		if (last->flags & I2C_M_RD)
			last->len++;
	}
	ret = bus_transfer(bus, msg, num);
	if (ret < 0)
		return ret;
	if (pec && (last->flags & I2C_M_RD)) {
		uint8_t got = last->buf[--last->len];

		if (got != pec_msg(partial, last))
			return -EBADMSG;
	}
	if (read_write != I2C_SMBUS_READ)
		return 0;
	switch (size) {
	case I2C_SMBUS_BYTE:
		data->byte = buf0[0];
		break;
	case I2C_SMBUS_BYTE_DATA:
		data->byte = buf1[0];
		break;
	case I2C_SMBUS_WORD_DATA:
	case I2C_SMBUS_PROC_CALL:
		data->word = (uint16_t)(buf1[0] | buf1[1] << 8);
		break;
	case I2C_SMBUS_I2C_BLOCK_DATA:
		memcpy(data->block + 1, buf1, data->block[0]);
		break;
	case I2C_SMBUS_BLOCK_DATA:
	case I2C_SMBUS_BLOCK_PROC_CALL:
		memcpy(data->block, buf1, buf1[0] + 1);
		break;
	}
	return 0;
}

/* ---- ioctls */

static struct i2c_client *client_of(struct cusemu_file *file)
{
	return file->private_data;
}

/*
 * i2cdev_check(): an address is busy where a kernel driver is bound to a
 * chip. Other open files of the bus are anonymous clients, bound to no
 * driver: any number of them may use one address.
 */
static bool bound_at(struct i2c_bus *bus, uint16_t addr, bool ten)
{
	for (guint i = 0; i < bus->chips->len; i++) {
		const struct i2c_chip *chip = bus->chips->pdata[i];

		if (chip->bound && chip->addr == addr && chip->ten == ten)
			return true;
	}
	return false;
}

/* I2C_SLAVE and I2C_SLAVE_FORCE: arg is the address. */
static long i2c_set_slave(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct i2c_bus *bus = dev->priv;
	struct i2c_client *c = client_of(file);
	bool ten;

	g_mutex_lock(&bus->lock);
	ten = c->flags & I2C_M_TEN;
	if (arg > 0x3ff || (!ten && arg > 0x7f)) {
		g_mutex_unlock(&bus->lock);
		return -EINVAL;
	}
	if (cmd == I2C_SLAVE && bound_at(bus, (uint16_t)arg, ten)) {
		g_mutex_unlock(&bus->lock);
		return -EBUSY;
	}
	c->addr = (uint16_t)arg;
	g_mutex_unlock(&bus->lock);
	return 0;
}

/* I2C_TENBIT and I2C_PEC: a flag of the file's client. */
static long i2c_set_flag(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	struct i2c_bus *bus = dev->priv;
	struct i2c_client *c = client_of(file);
	uint16_t flag = cmd == I2C_TENBIT ? I2C_M_TEN : I2C_CLIENT_PEC;

	g_mutex_lock(&bus->lock);
	if (arg)
		c->flags |= flag;
	else
		c->flags &= ~flag;
	g_mutex_unlock(&bus->lock);
	return 0;
}

/* I2C_RETRIES, and I2C_TIMEOUT in units of 10 ms: the adapter's. */
static long i2c_set_adapter(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct i2c_bus *bus = dev->priv;

	if (arg > INT_MAX)
		return -EINVAL;
	g_mutex_lock(&bus->lock);
	if (cmd == I2C_RETRIES)
		bus->retries = (unsigned int)arg;
	else
		bus->timeout_ms = (unsigned int)MIN(arg * 10, UINT_MAX);
	g_mutex_unlock(&bus->lock);
	return 0;
}

/* I2C_FUNCS writes an unsigned long: 8 bytes for native callers... */
static int i2c_funcs_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	return cusemu_fetch_range(arg, 0, sizeof(uint64_t));
}

static long i2c_funcs(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user((uint64_t)I2C_ADAPTER_FUNCS, arg);
}

/* ...a compat_ulong_t, 4, for i386 ones. */
static int i2c_funcs_fetch32(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	return cusemu_fetch_range(arg, 0, sizeof(uint32_t));
}

static long i2c_funcs32(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user((uint32_t)I2C_ADAPTER_FUNCS, arg);
}

/* struct i2c_smbus_ioctl_data of either ABI, the data pointer widened. */
struct smbus_req {
	uint8_t read_write;
	uint8_t command;
	uint32_t size;
	cusemu_uptr_t data;
	/* From the checks of i2cdev_ioctl_smbus(): */
	size_t datasize;	/* 0: the transfer moves no data */
	bool in, out;		/* data read from and written to the caller */
};

static int smbus_args(unsigned long arg, bool abi32, struct smbus_req *r)
{
	struct i2c_smbus_ioctl_data a;
	struct i2c_smbus_ioctl_data32 a32;

	memset(r, 0, sizeof(*r));
	if (abi32) {
		if (cusemu_copy_from_user(&a32, arg, sizeof(a32)))
			return -EFAULT;
		r->read_write = a32.read_write;
		r->command = a32.command;
		r->size = a32.size;
		r->data = cusemu_compat_ptr(a32.data);
	} else {
		if (cusemu_copy_from_user(&a, arg, sizeof(a)))
			return -EFAULT;
		r->read_write = a.read_write;
		r->command = a.command;
		r->size = a.size;
		r->data = (uintptr_t)a.data;
	}
	if (!smbus_size_valid(r->size))
		return -EINVAL;
	if (r->read_write != I2C_SMBUS_READ &&
	    r->read_write != I2C_SMBUS_WRITE)
		return -EINVAL;
	if (r->size == I2C_SMBUS_QUICK ||
	    (r->size == I2C_SMBUS_BYTE && r->read_write == I2C_SMBUS_WRITE))
		return 0;	/* these use no data */
	if (!r->data)
		return -EINVAL;
	if (r->size == I2C_SMBUS_BYTE_DATA || r->size == I2C_SMBUS_BYTE)
		r->datasize = sizeof(((union i2c_smbus_data *)0)->byte);
	else if (r->size == I2C_SMBUS_WORD_DATA ||
		 r->size == I2C_SMBUS_PROC_CALL)
		r->datasize = sizeof(((union i2c_smbus_data *)0)->word);
	else
		r->datasize = sizeof(((union i2c_smbus_data *)0)->block);
	r->in = r->size == I2C_SMBUS_PROC_CALL ||
		r->size == I2C_SMBUS_BLOCK_PROC_CALL ||
		r->size == I2C_SMBUS_I2C_BLOCK_DATA ||
		r->read_write == I2C_SMBUS_WRITE;
	r->out = r->size == I2C_SMBUS_PROC_CALL ||
		 r->size == I2C_SMBUS_BLOCK_PROC_CALL ||
		 r->read_write == I2C_SMBUS_READ;
	return 0;
}

/* Both directions of the data in one round trip, before the bus. */
static int smbus_fetch_abi(unsigned long arg, bool abi32)
{
	struct smbus_req r;
	int err = smbus_args(arg, abi32, &r);

	if (err)
		return err;
	return cusemu_fetch_range(r.data, r.in ? r.datasize : 0,
				  r.out ? r.datasize : 0);
}

/* i2cdev_ioctl_smbus(), everything fetched. */
static long smbus_abi(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned long arg, bool abi32)
{
	struct i2c_bus *bus = dev->priv;
	struct i2c_client *c = client_of(file);
	union i2c_smbus_data temp = { 0 };
	struct smbus_req r;
	long ret;

	ret = smbus_args(arg, abi32, &r);
	if (ret)
		return ret;
	if (r.in && cusemu_copy_from_user(&temp, r.data, r.datasize))
		return -EFAULT;
	if (r.size == I2C_SMBUS_I2C_BLOCK_BROKEN) {
		/* The old I2C block numbering, as i2c-dev converts it. */
		r.size = I2C_SMBUS_I2C_BLOCK_DATA;
		if (r.read_write == I2C_SMBUS_READ)
			temp.block[0] = I2C_SMBUS_BLOCK_MAX;
	}
	g_mutex_lock(&bus->lock);
	ret = smbus_xfer(bus, c->addr, c->flags, r.read_write, r.command,
			 r.size, r.datasize ? &temp : NULL);
	g_mutex_unlock(&bus->lock);
	if (!ret && r.out && cusemu_copy_to_user(r.data, &temp, r.datasize))
		return -EFAULT;
	return ret;
}

static int i2c_smbus_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	return smbus_fetch_abi(arg, false);
}

static int i2c_smbus_fetch32(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	return smbus_fetch_abi(arg, true);
}

static long i2c_smbus_ioctl(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	return smbus_abi(dev, file, arg, false);
}

static long i2c_smbus_ioctl32(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	return smbus_abi(dev, file, arg, true);
}

/* An I2C_RDWR message of either ABI, its buffer still in the caller. */
struct rdwr_msg {
	uint16_t addr;
	uint16_t flags;
	uint16_t len;
	cusemu_uptr_t buf;
};

/*
 * The I2C_M_RECV_LEN checks that need no data: the buffer must be read
 * into and have room for a length byte and I2C_SMBUS_BLOCK_MAX more.
 */
static bool recv_len_bad_shape(const struct rdwr_msg *m)
{
	return (m->flags & I2C_M_RECV_LEN) &&
	       (!(m->flags & I2C_M_RD) || m->len < 1 + I2C_SMBUS_BLOCK_MAX);
}

static bool rdwr_count_bad(uint64_t msgs, uint32_t nmsgs)
{
	return !msgs || !nmsgs || nmsgs > I2C_RDWR_IOCTL_MAX_MSGS;
}

/*
 * The messages of struct i2c_rdwr_ioctl_data in either ABI: two levels of
 * pointers, the array and then each buffer. Returns their count, or -errno.
 */
static long rdwr_args(unsigned long arg, bool abi32, struct rdwr_msg *m)
{
	struct i2c_rdwr_ioctl_data a;
	struct i2c_rdwr_ioctl_data32 a32;
	struct i2c_msg um[I2C_RDWR_IOCTL_MAX_MSGS];
	struct i2c_msg32 um32[I2C_RDWR_IOCTL_MAX_MSGS];
	uint32_t n;

	if (abi32) {
		if (cusemu_copy_from_user(&a32, arg, sizeof(a32)))
			return -EFAULT;
		if (rdwr_count_bad(a32.msgs, a32.nmsgs))
			return -EINVAL;
		n = a32.nmsgs;
		if (cusemu_copy_from_user(um32, cusemu_compat_ptr(a32.msgs),
					  n * sizeof(um32[0])))
			return -EFAULT;
		for (unsigned int i = 0; i < n; i++)
			m[i] = (struct rdwr_msg){
				um32[i].addr, um32[i].flags, um32[i].len,
				cusemu_compat_ptr(um32[i].buf) };
		return n;
	}
	if (cusemu_copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (rdwr_count_bad((uintptr_t)a.msgs, a.nmsgs))
		return -EINVAL;
	n = a.nmsgs;
	if (cusemu_copy_from_user(um, (uintptr_t)a.msgs, n * sizeof(um[0])))
		return -EFAULT;
	for (unsigned int i = 0; i < n; i++)
		m[i] = (struct rdwr_msg){ um[i].addr, um[i].flags, um[i].len,
					  (uintptr_t)um[i].buf };
	return n;
}

/*
 * The fetch step: the buffers of every message in one round trip, reads
 * too: i2c-dev copies each buffer in (memdup_user) before the transfer, so
 * a bad one fails before anything reaches the bus. Stops where i2c-dev
 * stops checking, with the -errno of the first message that fails.
 */
static int rdwr_fetch_abi(unsigned long arg, bool abi32)
{
	struct rdwr_msg m[I2C_RDWR_IOCTL_MAX_MSGS];
	long n = rdwr_args(arg, abi32, m);
	int err;

	for (long i = 0; i < n; i++) {
		if (m[i].len > I2C_DEV_MSG_MAX)
			return -EINVAL;
		err = cusemu_fetch_range(m[i].buf, m[i].len,
					 m[i].flags & I2C_M_RD ? m[i].len : 0);
		if (err)
			return err;
		if (recv_len_bad_shape(&m[i]))
			return -EINVAL;
	}
	return n < 0 ? (int)n : 0;
}

/* i2cdev_ioctl_rdwr(), every buffer fetched. */
static long rdwr_abi(struct cusemu_device *dev, unsigned long arg, bool abi32)
{
	struct i2c_bus *bus = dev->priv;
	struct rdwr_msg um[I2C_RDWR_IOCTL_MAX_MSGS];
	struct i2c_msg msgs[I2C_RDWR_IOCTL_MAX_MSGS];
	g_autofree uint8_t *data = NULL;
	size_t total = 0, off = 0;
	long ret, n = rdwr_args(arg, abi32, um);

	if (n < 0)
		return n;
	for (long i = 0; i < n; i++)
		total += um[i].len;
	data = g_malloc(total ? total : 1);
	for (long i = 0; i < n; i++) {
		struct i2c_msg *m = &msgs[i];

		*m = (struct i2c_msg){
			.addr = um[i].addr,
			.flags = um[i].flags,
			.len = um[i].len,
			.buf = data + off,
		};
		off += m->len;
		if (cusemu_copy_from_user(m->buf, um[i].buf, m->len))
			return -EFAULT;
		/*
		 * buf[0]: the bytes the length byte comes with (1, or 2
		 * with a PEC byte); the block length is added to it.
		 */
		if (m->flags & I2C_M_RECV_LEN) {
			if (m->buf[0] < 1 ||
			    m->len < m->buf[0] + I2C_SMBUS_BLOCK_MAX)
				return -EINVAL;
			m->len = m->buf[0];
		}
	}

	g_mutex_lock(&bus->lock);
	ret = bus_transfer(bus, msgs, (unsigned int)n);
	g_mutex_unlock(&bus->lock);

	/* What was read goes back, last message first as i2c-dev does. */
	for (long i = n; ret >= 0 && i-- > 0;) {
		if ((msgs[i].flags & I2C_M_RD) &&
		    cusemu_copy_to_user(um[i].buf, msgs[i].buf, msgs[i].len))
			ret = -EFAULT;
	}
	return ret;
}

static int i2c_rdwr_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	return rdwr_fetch_abi(arg, false);
}

static int i2c_rdwr_fetch32(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	return rdwr_fetch_abi(arg, true);
}

static long i2c_rdwr_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	return rdwr_abi(dev, arg, false);
}

static long i2c_rdwr_ioctl32(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	return rdwr_abi(dev, arg, true);
}

/* ---- files */

/*
 * read(2) and write(2): i2c_master_recv() and i2c_master_send() to the
 * file's address, at most 8192 bytes, the rest left for another call.
 */
static ssize_t i2c_read(struct cusemu_device *dev, struct cusemu_file *file,
			char *buf, size_t size)
{
	struct i2c_bus *bus = dev->priv;
	struct i2c_client *c = client_of(file);
	uint16_t count = (uint16_t)MIN(size, I2C_DEV_MSG_MAX);
	struct i2c_msg msg = { .len = count, .buf = (uint8_t *)buf };
	int ret;

	g_mutex_lock(&bus->lock);
	msg.addr = c->addr;
	msg.flags = (c->flags & I2C_M_TEN) | I2C_M_RD;
	ret = bus_transfer(bus, &msg, 1);
	g_mutex_unlock(&bus->lock);
	return ret == 1 ? count : ret;
}

static ssize_t i2c_write(struct cusemu_device *dev, struct cusemu_file *file,
			 const char *buf, size_t size)
{
	struct i2c_bus *bus = dev->priv;
	struct i2c_client *c = client_of(file);
	uint16_t count = (uint16_t)MIN(size, I2C_DEV_MSG_MAX);
	g_autofree uint8_t *data = g_memdup2(buf, count);
	struct i2c_msg msg = { .len = count, .buf = data };
	int ret;

	g_mutex_lock(&bus->lock);
	msg.addr = c->addr;
	msg.flags = c->flags & I2C_M_TEN;
	ret = bus_transfer(bus, &msg, 1);
	g_mutex_unlock(&bus->lock);
	return ret == 1 ? count : ret;
}

/* Every open file gets its own client, at address 0 until I2C_SLAVE. */
static int i2c_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct i2c_bus *bus = dev->priv;
	struct i2c_client *c = g_new0(struct i2c_client, 1);

	g_mutex_lock(&bus->lock);
	g_ptr_array_add(bus->clients, c);
	g_mutex_unlock(&bus->lock);
	file->private_data = c;
	return 0;
}

static void i2c_release(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct i2c_bus *bus = dev->priv;
	struct i2c_client *c = client_of(file);

	g_mutex_lock(&bus->lock);
	g_ptr_array_remove_fast(bus->clients, c);
	g_mutex_unlock(&bus->lock);
	g_free(c);
	file->private_data = NULL;
}

/* ---- instance */

static int i2c_probe(struct cusemu_device *dev, char **why)
{
	const char *temp = cusemu_device_param_str(dev, "lm75_temp");
	struct i2c_chip_defaults defaults = {
		.dev = dev,
		.eeprom_file = cusemu_device_param_str(dev, "eeprom_file"),
	};
	struct i2c_bus *bus;
	GPtrArray *chips;

	if (!i2c_lm75_parse_temp(temp, &defaults.lm75_temp)) {
		*why = g_strdup_printf("lm75_temp '%s': write millidegrees "
				       "Celsius from -55000 to 125000, e.g. "
				       "25000", temp);
		return -EINVAL;
	}
	chips = i2c_chips_new(cusemu_device_param_str(dev, "chips"),
			      &defaults, why);
	if (!chips)
		return -EINVAL;
	bus = g_new0(struct i2c_bus, 1);
	g_mutex_init(&bus->lock);
	bus->dev = dev;
	bus->chips = chips;
	bus->clients = g_ptr_array_new();
	/* The adapter defaults: no retries, a second of timeout. */
	bus->timeout_ms = 1000;
	dev->priv = bus;
	return 0;
}

/* After the last release; a last save of every EEPROM file. */
static void i2c_remove(struct cusemu_device *dev)
{
	struct i2c_bus *bus = dev->priv;
	g_autofree char *why = NULL;

	if (!i2c_chips_flush(bus->chips, &why))
		cusemu_device_lost(dev, "%s", why);
	i2c_chips_free(bus->chips);
	g_ptr_array_unref(bus->clients);
	g_mutex_clear(&bus->lock);
	g_free(bus);
}

/*
 * With the rights the daemon keeps after start-up (another user, no
 * capability): an EEPROM file that could not be saved from now on stops
 * the start, rather than the first write.
 */
static int i2c_sandboxed(struct cusemu_device *dev, char **why)
{
	struct i2c_bus *bus = dev->priv;
	g_autofree char *inner = NULL;
	bool saved;

	g_mutex_lock(&bus->lock);
	saved = i2c_chips_save(bus->chips, &inner);
	g_mutex_unlock(&bus->lock);
	if (saved)
		return 0;
	*why = g_strdup_printf("%s; after start-up the daemon saves it "
			       "without capabilities, as the --user if one "
			       "is given: that user must be able to create "
			       "files in the file's directory",
			       inner);
	return -EACCES;
}

static const struct cusemu_ioctl i2c_native[] = {
	CUSEMU_IOCTL_NONE(I2C_RETRIES, i2c_set_adapter),
	CUSEMU_IOCTL_NONE(I2C_TIMEOUT, i2c_set_adapter),
	CUSEMU_IOCTL_NONE(I2C_SLAVE, i2c_set_slave),
	CUSEMU_IOCTL_NONE(I2C_SLAVE_FORCE, i2c_set_slave),
	CUSEMU_IOCTL_NONE(I2C_TENBIT, i2c_set_flag),
	CUSEMU_IOCTL_NONE(I2C_PEC, i2c_set_flag),
	CUSEMU_IOCTL_USER(I2C_FUNCS, i2c_funcs_fetch, i2c_funcs),
	CUSEMU_IOCTL_USER(I2C_RDWR, i2c_rdwr_fetch, i2c_rdwr_ioctl),
	CUSEMU_IOCTL_USER(I2C_SMBUS, i2c_smbus_fetch, i2c_smbus_ioctl),
	CUSEMU_IOCTL_END
};

/*
 * What compat_i2cdev_ioctl() translates: the unsigned long and the structs
 * with pointers. The numbers are plain, the same on both ABIs, and the
 * commands that take values are served by their native rows.
 */
static const struct cusemu_ioctl i2c_compat[] = {
	CUSEMU_IOCTL_USER(I2C_FUNCS, i2c_funcs_fetch32, i2c_funcs32),
	CUSEMU_IOCTL_USER(I2C_RDWR, i2c_rdwr_fetch32, i2c_rdwr_ioctl32),
	CUSEMU_IOCTL_USER(I2C_SMBUS, i2c_smbus_fetch32, i2c_smbus_ioctl32),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param i2c_params[] = {
	{ .key = "chips", .type = CUSEMU_PARAM_PATHS,
	  .default_value = I2C_CHIPS_DEFAULT, .help = I2C_CHIPS_HELP },
	{ .key = "eeprom_file", .type = CUSEMU_PARAM_FILE,
	  .default_value = "",
	  .help = "file of the first EEPROM: 256 bytes, loaded at start, "
		  "created erased if missing, saved (temp file and rename) "
		  "after every write and at shutdown; empty: memory only" },
	{ .key = "lm75_temp", .type = CUSEMU_PARAM_STRING,
	  .default_value = "25000",
	  .help = "the temperature every LM75 reads without its own temp=, "
		  "in millidegrees Celsius (-55000 to 125000, 0.5 degree "
		  "steps)" },
	CUSEMU_PARAM_END
};

/* i2c-dev's one file of its own (drivers/i2c/i2c-dev.c): the adapter's
 * name, which i2cdetect -l lists. */
static ssize_t i2c_show_name(struct cusemu_device *dev, char *buf,
			     size_t size)
{
	return snprintf(buf, size, "cusemu I2C adapter\n");
}

static const struct cusemu_attr i2c_attrs[] = {
	{ "name", i2c_show_name },
	{ "device/name", i2c_show_name },
	CUSEMU_ATTR_END
};

const struct cusemu_device_model cusemu_model_i2c = {
	.name = "i2c",
	.summary = "an I2C bus adapter (i2c-dev: I2C_RDWR, I2C_SMBUS, read, "
		   "write) with simulated chips",
	.node_prefix = "i2c-",
	.params = i2c_params,
	.probe = i2c_probe,
	.remove = i2c_remove,
	.open = i2c_open,
	.release = i2c_release,
	.read = i2c_read,
	.write = i2c_write,
	.native_table = i2c_native,
	.compat_ptr_ioctl = true,
	.compat_table = i2c_compat,
	.sandboxed = i2c_sandboxed,
	.sysfs_class = "i2c-dev",
	/* i2c-dev's major; its minor is the bus number. */
	.major = 89,
	.attrs = i2c_attrs,
	/* i2c-dev's node belongs to its adapter, a device of the i2c bus:
	 * /sys/devices/i2c-0/i2c-dev/i2c-0, /sys/bus/i2c/devices/i2c-0. */
	.sysfs_parent = "i2c-%u",
	.sysfs_bus = "i2c",
};
