/* SPDX-License-Identifier: MIT */
/*
 * fioc: the buffer device of libfuse's CUSE example, served to native and
 * i386 callers. FIOC_READ/FIOC_WRITE carry a pointer inside their argument,
 * so they chase it themselves; GET/SET_SIZE are _IOC-encoded and differ in
 * number between the ABIs, since size_t does.
 *
 * It uses the SDK's portable surface alone: cusemu-kmod builds this file,
 * unchanged, as a kernel module (docs/kernel-module.md).
 */
#include <string.h>

#include "cusemu/abi/fioc.h"
#include "cusemu/device.h"
#include "cusemu/lock.h"
#include "cusemu/memory.h"
#include "cusemu/uaccess.h"

struct fioc {
	struct cusemu_mutex lock;	/* no big lock under modern kernels */
	uint8_t *buf;
	size_t size;
	size_t max_size;
};

/* struct fioc_rw_arg in either ABI, with the addresses of its out fields. */
struct fioc_rw {
	int64_t offset;
	cusemu_uptr_t buf;
	uint64_t size;
	cusemu_uptr_t prev_size_at, new_size_at;
	unsigned int width;	/* sizeof(size_t) of the caller */
	size_t arg_size;	/* sizeof its struct fioc_rw_arg */
};

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* The new bytes are zero; -ENOMEM leaves the buffer as it was. */
static int fioc_resize(struct fioc *f, size_t new_size)
{
	uint8_t *buf;

	if (new_size > f->max_size)
		return -EINVAL;
	if (new_size == f->size)
		return 0;
	buf = cusemu_zalloc(new_size);
	if (!buf)
		return -ENOMEM;
	if (f->size)
		memcpy(buf, f->buf, min_size(f->size, new_size));
	cusemu_free(f->buf);
	f->buf = buf;
	f->size = new_size;
	return 0;
}

static long fioc_get_size(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct fioc *f = dev->priv;
	size_t size;

	cusemu_mutex_lock(&f->lock);
	size = f->size;
	cusemu_mutex_unlock(&f->lock);
	return cusemu_put_user(size, arg);
}

static long fioc_get_size32(struct cusemu_device *dev, struct cusemu_file *file,
			    unsigned int cmd, unsigned long arg)
{
	struct fioc *f = dev->priv;
	uint32_t size;

	cusemu_mutex_lock(&f->lock);
	size = (uint32_t)f->size;	/* max_size keeps it below 4 GiB */
	cusemu_mutex_unlock(&f->lock);
	return cusemu_put_user(size, arg);
}

static long fioc_set(struct fioc *f, size_t size)
{
	long ret;

	cusemu_mutex_lock(&f->lock);
	ret = fioc_resize(f, size);
	cusemu_mutex_unlock(&f->lock);
	return ret;
}

static long fioc_set_size(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	size_t size;

	if (cusemu_get_user(size, arg))
		return -EFAULT;
	return fioc_set(dev->priv, size);
}

static long fioc_set_size32(struct cusemu_device *dev, struct cusemu_file *file,
			    unsigned int cmd, unsigned long arg)
{
	uint32_t size;

	if (cusemu_get_user(size, arg))
		return -EFAULT;
	return fioc_set(dev->priv, size);
}

static int put_size(cusemu_uptr_t at, size_t size, unsigned int width)
{
	if (width == sizeof(uint32_t))
		return cusemu_put_user((uint32_t)size, at);
	return cusemu_put_user((uint64_t)size, at);
}

/* One call moves what fits in one CUSE transfer; the rest is short. */
static size_t fioc_room(unsigned int cmd, const struct fioc_rw *rw)
{
	size_t room = CUSEMU_USER_MAX_BYTES -
		      (cmd == FIOC_READ ? 2 * rw->width : rw->arg_size);

	return min_size(rw->size, room);
}

/*
 * The offset and size of a call, checked by the fetch step before it names
 * memory and by the handler before it acts, each on the struct it read: a
 * write ends within max_size, so that offset + n cannot wrap, whatever
 * the caller wrote into its struct between the two readings.
 */
static int fioc_rw_check(const struct fioc *f, unsigned int cmd,
			 const struct fioc_rw *rw)
{
	if (rw->offset < 0)
		return -EINVAL;
	if (cmd == FIOC_WRITE && ((uint64_t)rw->offset > f->max_size ||
				  rw->size > f->max_size - (uint64_t)rw->offset))
		return -EINVAL;
	return 0;
}

/*
 * The fetch step: both sizes out first, so a short read leaves the rest of
 * buf alone, and the whole of buf that the call may move. A read names
 * what was asked for, not what the buffer holds now: its size may change
 * before the handler runs, and only the bytes written go back.
 */
static int fioc_rw_want(const struct fioc *f, unsigned int cmd,
			const struct fioc_rw *rw)
{
	size_t n = fioc_room(cmd, rw);
	int err = fioc_rw_check(f, cmd, rw);

	if (err)
		return err;
	cusemu_user_want_write(rw->prev_size_at, rw->width);
	cusemu_user_want_write(rw->new_size_at, rw->width);
	err = cmd == FIOC_READ ? cusemu_user_want_write(rw->buf, n)
			       : cusemu_user_want_read(rw->buf, n);
	return err == -EAGAIN ? 0 : err;
}

/*
 * Copies go straight between the client's memory and the device, under the
 * device's mutex: a handler that allocates nothing per call.
 */
static long fioc_do_read(struct fioc *f, const struct fioc_rw *rw)
{
	size_t n = 0;
	long ret;

	cusemu_mutex_lock(&f->lock);
	if ((uint64_t)rw->offset < f->size)
		n = min_size(fioc_room(FIOC_READ, rw), f->size - rw->offset);
	if (put_size(rw->prev_size_at, f->size, rw->width) ||
	    put_size(rw->new_size_at, f->size, rw->width) ||
	    (n && cusemu_copy_to_user(rw->buf, f->buf + rw->offset, n)))
		ret = -EFAULT;
	else
		ret = (long)n;
	cusemu_mutex_unlock(&f->lock);
	return ret;
}

/* rw passed fioc_rw_check(): offset + n is at most max_size. */
static long fioc_do_write(struct fioc *f, const struct fioc_rw *rw)
{
	size_t n = fioc_room(FIOC_WRITE, rw);
	size_t end = (size_t)rw->offset + n;
	size_t prev, next;
	long ret;

	cusemu_mutex_lock(&f->lock);
	prev = f->size;
	ret = fioc_resize(f, max_size(f->size, end));
	/* In cusemud the fetch step named the range and this copy cannot
	 * fail; in a kernel module it fails on a bad pointer, and the buffer
	 * goes back to its size, as in cusemud, where the call failed before.
	 * Nothing to copy may mean no buffer at all. */
	if (!ret && n && cusemu_copy_from_user(f->buf + rw->offset, rw->buf, n)) {
		fioc_resize(f, prev);
		ret = -EFAULT;
	}
	next = f->size;
	cusemu_mutex_unlock(&f->lock);
	if (ret)
		return ret;
	if (put_size(rw->prev_size_at, prev, rw->width) ||
	    put_size(rw->new_size_at, next, rw->width))
		return -EFAULT;
	return (long)n;
}

/* struct fioc_rw_arg of the caller's ABI, as the ABI's row says. */
static int fioc_rw_args(unsigned long arg, bool abi32, struct fioc_rw *rw)
{
	struct fioc_rw_arg a;
	struct fioc_rw_arg32 a32;

	if (abi32) {
		if (cusemu_copy_from_user(&a32, arg, sizeof(a32)))
			return -EFAULT;
		*rw = (struct fioc_rw){
			.offset = a32.offset,
			.buf = cusemu_compat_ptr(a32.buf),
			.size = a32.size,
			.prev_size_at = arg + offsetof(struct fioc_rw_arg32,
						       prev_size),
			.new_size_at = arg + offsetof(struct fioc_rw_arg32,
						      new_size),
			.width = sizeof(uint32_t),
			.arg_size = sizeof(a32),
		};
		return 0;
	}
	if (cusemu_copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	*rw = (struct fioc_rw){
		.offset = a.offset,
		.buf = (uintptr_t)a.buf,
		.size = a.size,
		.prev_size_at = arg + offsetof(struct fioc_rw_arg, prev_size),
		.new_size_at = arg + offsetof(struct fioc_rw_arg, new_size),
		.width = sizeof(size_t),
		.arg_size = sizeof(a),
	};
	return 0;
}

static int fioc_rw_fetch_abi(struct cusemu_device *dev, unsigned int cmd,
			     unsigned long arg, bool abi32)
{
	struct fioc_rw rw;

	return fioc_rw_args(arg, abi32, &rw) ?: fioc_rw_want(dev->priv, cmd,
							     &rw);
}

static long fioc_rw_abi(struct cusemu_device *dev, unsigned int cmd,
			unsigned long arg, bool abi32)
{
	struct fioc_rw rw;
	int err = fioc_rw_args(arg, abi32, &rw) ?: fioc_rw_check(dev->priv,
								cmd, &rw);

	if (err)
		return err;
	return cmd == FIOC_READ ? fioc_do_read(dev->priv, &rw)
				: fioc_do_write(dev->priv, &rw);
}

static int fioc_rw_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	return fioc_rw_fetch_abi(dev, cmd, arg, false);
}

static int fioc_rw_fetch32(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	return fioc_rw_fetch_abi(dev, cmd, arg, true);
}

static long fioc_rw(struct cusemu_device *dev, struct cusemu_file *file,
		    unsigned int cmd, unsigned long arg)
{
	return fioc_rw_abi(dev, cmd, arg, false);
}

static long fioc_rw32(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	return fioc_rw_abi(dev, cmd, arg, true);
}

/* read(2)/write(2): a stream over the same buffer, one position per file. */
static ssize_t fioc_read(struct cusemu_device *dev, struct cusemu_file *file,
			 char *buf, size_t size)
{
	struct fioc *f = dev->priv;
	size_t n = 0;

	cusemu_mutex_lock(&f->lock);
	if ((size_t)file->pos < f->size) {
		n = min_size(size, f->size - file->pos);
		memcpy(buf, f->buf + file->pos, n);
		file->pos += n;
	}
	cusemu_mutex_unlock(&f->lock);
	return (ssize_t)n;
}

static ssize_t fioc_write(struct cusemu_device *dev, struct cusemu_file *file,
			  const char *buf, size_t size)
{
	struct fioc *f = dev->priv;
	size_t n;

	cusemu_mutex_lock(&f->lock);
	if ((size_t)file->pos >= f->max_size) {
		cusemu_mutex_unlock(&f->lock);
		return size ? -ENOSPC : 0;
	}
	n = min_size(size, f->max_size - file->pos);
	if (fioc_resize(f, max_size(f->size, file->pos + n))) {
		cusemu_mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	memcpy(f->buf + file->pos, buf, n);
	file->pos += n;
	cusemu_mutex_unlock(&f->lock);
	return (ssize_t)n;
}

static int fioc_probe(struct cusemu_device *dev, char **why)
{
	struct fioc *f = cusemu_new0(struct fioc);

	if (!f)
		return -ENOMEM;
	cusemu_mutex_init(&f->lock);
	f->max_size = cusemu_device_param_u64(dev, "max_size");
	dev->priv = f;
	return 0;
}

static void fioc_remove(struct cusemu_device *dev)
{
	struct fioc *f = dev->priv;

	cusemu_mutex_destroy(&f->lock);
	cusemu_free(f->buf);
	cusemu_free(f);
}

static const struct cusemu_ioctl fioc_native[] = {
	CUSEMU_IOCTL_IOC(FIOC_GET_SIZE, fioc_get_size),
	CUSEMU_IOCTL_IOC(FIOC_SET_SIZE, fioc_set_size),
	CUSEMU_IOCTL_USER(FIOC_READ, fioc_rw_fetch, fioc_rw),
	CUSEMU_IOCTL_USER(FIOC_WRITE, fioc_rw_fetch, fioc_rw),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl fioc_compat[] = {
	CUSEMU_IOCTL_IOC(FIOC_GET_SIZE32, fioc_get_size32),
	CUSEMU_IOCTL_IOC(FIOC_SET_SIZE32, fioc_set_size32),
	CUSEMU_IOCTL_USER(FIOC_READ, fioc_rw_fetch32, fioc_rw32),
	CUSEMU_IOCTL_USER(FIOC_WRITE, fioc_rw_fetch32, fioc_rw32),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param fioc_params[] = {
	{ .key = "max_size", .type = CUSEMU_PARAM_SIZE, .default_value = "1M",
	  .help = "largest buffer size in bytes", .min = 0, .max = 256u << 20 },
	CUSEMU_PARAM_END
};

const struct cusemu_device_model cusemu_model_fioc = {
	.name = "fioc",
	.summary = "the buffer device of libfuse's CUSE example (FIOC_*)",
	.node_prefix = "fioc",
	.params = fioc_params,
	.probe = fioc_probe,
	.remove = fioc_remove,
	.read = fioc_read,
	.write = fioc_write,
	.native_table = fioc_native,
	.compat_table = fioc_compat,
};
