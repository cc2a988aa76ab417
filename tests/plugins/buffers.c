/* SPDX-License-Identifier: MIT */
/*
 * bufs: a model of tests/abicheck/buffers.h as a prototyper writes one,
 * every fetch step and copy from the header cusemu-abicheck --emit-compat
 * generates at build time (buffers-compat.h), used as it is: one fetch
 * step and one handler per command serve both ABIs. A queue of samples,
 * filled by BUFS_WRITE and emptied by BUFS_READ and BUFS_READ_PTR, and
 * BUFS_LEVELS. For test-buffers.
 */
#include <string.h>

#include <glib.h>

#include "buffers-compat.h"
#include "cusemu/plugin.h"

#define CHANNELS 8

struct bufs {
	GMutex lock;
	struct bufs_sample queue[BUFS_MAX];
	unsigned int len;
};

/* Up to room queued samples, oldest first, into out: how many. */
static unsigned int take(struct bufs *b, struct bufs_sample *out, size_t room)
{
	unsigned int n;

	g_mutex_lock(&b->lock);
	n = MIN(MIN(room, b->len), BUFS_MAX);
	memcpy(out, b->queue, n * sizeof(*out));
	memmove(b->queue, b->queue + n, (b->len - n) * sizeof(*out));
	b->len -= n;
	g_mutex_unlock(&b->lock);
	return n;
}

static int read_fetch(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	struct bufs_read p;

	return bufs_read_fetch(arg, &p, BUFS_MAX);
}

static long read_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct bufs_sample buf[BUFS_MAX];
	struct bufs_read p;
	int err = bufs_read_from_user(&p, arg);

	if (err)
		return err;
	p.count = take(dev->priv, buf, p.count);
	err = bufs_read_buf_to_user(&p, buf, p.count);
	return err ? err : bufs_read_to_user(arg, &p);
}

static int read_ptr_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct bufs_read_ptr p;

	return bufs_read_ptr_fetch(arg, &p, BUFS_MAX);
}

static long read_ptr_ioctl(struct cusemu_device *dev,
			   struct cusemu_file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct bufs_sample buf[BUFS_MAX];
	struct bufs_read_ptr p;
	int err = bufs_read_ptr_from_user(&p, arg);

	if (err)
		return err;
	p.len = take(dev->priv, buf, p.len);
	err = bufs_read_ptr_buf_to_user(&p, buf, p.len);
	return err ? err : bufs_read_ptr_to_user(arg, &p);
}

/* The room left is the driver's to check, under its lock: the fetch step
 * bounds only what one call moves (ENOMEM past it). */
static int write_fetch(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct bufs_write p;

	return bufs_write_fetch(arg, &p, 0);
}

static long write_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct bufs *b = dev->priv;
	struct bufs_sample in[BUFS_MAX];
	struct bufs_write p;
	int err = bufs_write_from_user(&p, arg);

	if (err)
		return err;
	if (p.len > BUFS_MAX)
		return -EINVAL;
	err = bufs_write_buf_from_user(in, &p, p.len);
	if (err)
		return err;
	g_mutex_lock(&b->lock);
	if (p.len > BUFS_MAX - b->len) {
		err = -EINVAL;
	} else {
		memcpy(b->queue + b->len, in, p.len * sizeof(in[0]));
		b->len += p.len;
	}
	g_mutex_unlock(&b->lock);
	return err;
}

static int levels_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct bufs_levels p;

	return bufs_levels_fetch(arg, &p, CHANNELS);
}

static long levels_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	long levels[CHANNELS];
	struct bufs_levels p;
	int err = bufs_levels_from_user(&p, arg);

	if (err)
		return err;
	for (unsigned int i = 0; i < CHANNELS; i++)
		levels[i] = i == CHANNELS - 1 ? 1L << 33 : (long)i * -1000;
	err = bufs_levels_levels_to_user(&p, levels, MIN(p.n, CHANNELS));
	return err ? err : bufs_levels_to_user(arg, &p);
}

static int bufs_probe(struct cusemu_device *dev, char **why)
{
	struct bufs *b = g_new0(struct bufs, 1);

	g_mutex_init(&b->lock);
	dev->priv = b;
	return 0;
}

static void bufs_remove(struct cusemu_device *dev)
{
	struct bufs *b = dev->priv;

	g_mutex_clear(&b->lock);
	g_free(b);
}

static const struct cusemu_ioctl bufs_native[] = {
	CUSEMU_IOCTL_USER(BUFS_READ, read_fetch, read_ioctl),
	CUSEMU_IOCTL_USER(BUFS_READ_PTR, read_ptr_fetch, read_ptr_ioctl),
	CUSEMU_IOCTL_USER(BUFS_WRITE, write_fetch, write_ioctl),
	CUSEMU_IOCTL_USER(BUFS_LEVELS, levels_fetch, levels_ioctl),
	CUSEMU_IOCTL_END
};

/* The same functions under the numbers i386's layouts give; BUFS_LEVELS,
 * laid out alike, keeps its number (compat_ptr_ioctl). */
static const struct cusemu_ioctl bufs_compat[] = {
	CUSEMU_IOCTL_USER(BUFS_READ32, read_fetch, read_ioctl),
	CUSEMU_IOCTL_USER(BUFS_READ_PTR32, read_ptr_fetch, read_ptr_ioctl),
	CUSEMU_IOCTL_USER(BUFS_WRITE32, write_fetch, write_ioctl),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model bufs_model = {
	.name = "bufs",
	.summary = "samples through a pointer and a count, for the tests",
	.node_prefix = "bufs",
	.probe = bufs_probe,
	.remove = bufs_remove,
	.native_table = bufs_native,
	.compat_table = bufs_compat,
	.compat_ptr_ioctl = true,
};

CUSEMU_PLUGIN(&bufs_model);
