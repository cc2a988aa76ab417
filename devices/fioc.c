/* SPDX-License-Identifier: MIT */
/*
 * fioc: the buffer device of libfuse's CUSE example, served to native and
 * i386 callers. FIOC_READ/FIOC_WRITE carry a pointer inside their argument,
 * so they chase it themselves; GET/SET_SIZE are _IOC-encoded and differ in
 * number between the ABIs, since size_t does.
 */
#define G_LOG_DOMAIN "cusemu-fioc"

#include <string.h>

#include <glib.h>

#include "cusemu/abi/fioc.h"
#include "cusemu/device.h"
#include "cusemu/uaccess.h"

struct fioc {
	GMutex lock;		/* no big lock under modern kernels */
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

static int fioc_resize(struct fioc *f, size_t new_size)
{
	if (new_size > f->max_size)
		return -EINVAL;
	if (new_size == f->size)
		return 0;
	f->buf = g_realloc(f->buf, new_size);
	if (new_size > f->size)
		memset(f->buf + f->size, 0, new_size - f->size);
	f->size = new_size;
	return 0;
}

static long fioc_get_size(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct fioc *f = dev->priv;
	size_t size;

	g_mutex_lock(&f->lock);
	size = f->size;
	g_mutex_unlock(&f->lock);
	return cusemu_put_user(size, arg);
}

static long fioc_get_size32(struct cusemu_device *dev, struct cusemu_file *file,
			    unsigned int cmd, unsigned long arg)
{
	struct fioc *f = dev->priv;
	uint32_t size;

	g_mutex_lock(&f->lock);
	size = (uint32_t)f->size;	/* max_size keeps it below 4 GiB */
	g_mutex_unlock(&f->lock);
	return cusemu_put_user(size, arg);
}

static long fioc_set(struct fioc *f, size_t size)
{
	long ret;

	g_mutex_lock(&f->lock);
	ret = fioc_resize(f, size);
	g_mutex_unlock(&f->lock);
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

/* Both sizes out first, so a short read leaves the rest of buf alone. */
static void want_sizes(const struct fioc_rw *rw)
{
	cusemu_user_want_write(rw->prev_size_at, rw->width);
	cusemu_user_want_write(rw->new_size_at, rw->width);
}

/*
 * Copies go straight between the client's memory and the device, under the
 * device's mutex: a handler that allocates nothing per call. If the size
 * changes between the first pass and the retry, the range asked for no
 * longer fits and the call simply retries once more.
 */
static long fioc_do_read(struct fioc *f, const struct fioc_rw *rw)
{
	/* One call moves what fits in one CUSE transfer; the rest is short. */
	size_t room = CUSEMU_USER_MAX_BYTES - 2 * rw->width;
	size_t n = 0;
	long ret = 0;

	g_mutex_lock(&f->lock);
	if ((uint64_t)rw->offset < f->size)
		n = MIN(MIN(rw->size, room), f->size - rw->offset);
	want_sizes(rw);
	cusemu_user_want_write(rw->buf, n);
	if (!cusemu_user_pending()) {
		if (put_size(rw->prev_size_at, f->size, rw->width) ||
		    put_size(rw->new_size_at, f->size, rw->width) ||
		    (n && cusemu_copy_to_user(rw->buf, f->buf + rw->offset, n)))
			ret = -EFAULT;
		else
			ret = (long)n;
	}
	g_mutex_unlock(&f->lock);
	return ret;
}

static long fioc_do_write(struct fioc *f, const struct fioc_rw *rw)
{
	size_t room = CUSEMU_USER_MAX_BYTES - rw->arg_size;
	size_t n = MIN(rw->size, room);
	size_t prev, next;
	long ret;

	if ((uint64_t)rw->offset > f->max_size ||
	    rw->size > f->max_size - rw->offset)
		return -EINVAL;
	want_sizes(rw);
	ret = cusemu_user_want_read(rw->buf, n);
	if (ret == -EFAULT || ret == -ENOMEM)
		return ret;
	if (cusemu_user_pending())
		return 0;

	g_mutex_lock(&f->lock);
	prev = f->size;
	ret = fioc_resize(f, MAX(f->size, rw->offset + n));
	/* The range was fetched above: this copy cannot fail. Nothing to
	 * copy may mean no buffer at all. */
	if (!ret && n && cusemu_copy_from_user(f->buf + rw->offset, rw->buf, n))
		ret = -EFAULT;
	next = f->size;
	g_mutex_unlock(&f->lock);
	if (ret)
		return ret;
	if (put_size(rw->prev_size_at, prev, rw->width) ||
	    put_size(rw->new_size_at, next, rw->width))
		return -EFAULT;
	return (long)n;
}

static long fioc_do_rw(struct fioc *f, unsigned int cmd,
		       const struct fioc_rw *rw)
{
	if (rw->offset < 0)
		return -EINVAL;
	return cmd == FIOC_READ ? fioc_do_read(f, rw) : fioc_do_write(f, rw);
}

static long fioc_rw(struct cusemu_device *dev, struct cusemu_file *file,
		    unsigned int cmd, unsigned long arg)
{
	struct fioc_rw_arg a;
	struct fioc_rw rw;

	if (cusemu_copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	rw = (struct fioc_rw){
		.offset = a.offset,
		.buf = (uintptr_t)a.buf,
		.size = a.size,
		.prev_size_at = arg + offsetof(struct fioc_rw_arg, prev_size),
		.new_size_at = arg + offsetof(struct fioc_rw_arg, new_size),
		.width = sizeof(size_t),
		.arg_size = sizeof(a),
	};
	return fioc_do_rw(dev->priv, cmd, &rw);
}

static long fioc_rw32(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	struct fioc_rw_arg32 a;
	struct fioc_rw rw;

	if (cusemu_copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	rw = (struct fioc_rw){
		.offset = a.offset,
		.buf = cusemu_compat_ptr(a.buf),
		.size = a.size,
		.prev_size_at = arg + offsetof(struct fioc_rw_arg32, prev_size),
		.new_size_at = arg + offsetof(struct fioc_rw_arg32, new_size),
		.width = sizeof(uint32_t),
		.arg_size = sizeof(a),
	};
	return fioc_do_rw(dev->priv, cmd, &rw);
}

/* read(2)/write(2): a stream over the same buffer, one position per file. */
static ssize_t fioc_read(struct cusemu_device *dev, struct cusemu_file *file,
			 char *buf, size_t size)
{
	struct fioc *f = dev->priv;
	size_t n = 0;

	g_mutex_lock(&f->lock);
	if ((size_t)file->pos < f->size) {
		n = MIN(size, f->size - file->pos);
		memcpy(buf, f->buf + file->pos, n);
		file->pos += n;
	}
	g_mutex_unlock(&f->lock);
	return (ssize_t)n;
}

static ssize_t fioc_write(struct cusemu_device *dev, struct cusemu_file *file,
			  const char *buf, size_t size)
{
	struct fioc *f = dev->priv;
	size_t n;

	g_mutex_lock(&f->lock);
	if ((size_t)file->pos >= f->max_size) {
		g_mutex_unlock(&f->lock);
		return size ? -ENOSPC : 0;
	}
	n = MIN(size, f->max_size - file->pos);
	fioc_resize(f, MAX(f->size, file->pos + n));
	memcpy(f->buf + file->pos, buf, n);
	file->pos += n;
	g_mutex_unlock(&f->lock);
	return (ssize_t)n;
}

static int fioc_probe(struct cusemu_device *dev, char **why)
{
	struct fioc *f = g_new0(struct fioc, 1);

	g_mutex_init(&f->lock);
	f->max_size = cusemu_device_param_u64(dev, "max_size");
	dev->priv = f;
	return 0;
}

static void fioc_remove(struct cusemu_device *dev)
{
	struct fioc *f = dev->priv;

	g_mutex_clear(&f->lock);
	g_free(f->buf);
	g_free(f);
}

static const struct cusemu_ioctl fioc_native[] = {
	CUSEMU_IOCTL_IOC(FIOC_GET_SIZE, fioc_get_size),
	CUSEMU_IOCTL_IOC(FIOC_SET_SIZE, fioc_set_size),
	CUSEMU_IOCTL_USER(FIOC_READ, fioc_rw),
	CUSEMU_IOCTL_USER(FIOC_WRITE, fioc_rw),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl fioc_compat[] = {
	CUSEMU_IOCTL_IOC(FIOC_GET_SIZE32, fioc_get_size32),
	CUSEMU_IOCTL_IOC(FIOC_SET_SIZE32, fioc_set_size32),
	CUSEMU_IOCTL_USER(FIOC_READ, fioc_rw32),
	CUSEMU_IOCTL_USER(FIOC_WRITE, fioc_rw32),
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
