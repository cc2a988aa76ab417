/* SPDX-License-Identifier: MIT */
/*
 * sensorhub: the model of a sensor hub (sensorhub.h), built out of cusemu's
 * tree against its SDK and loaded with cusemud --plugin. A timer scans
 * every channel at the configured rate into a bounded queue; ioctls read
 * the queue, the rate and the hub's identity; poll reports samples.
 *
 * It uses the SDK's portable surface alone (the headers of <cusemu/...>, and of libc the
 * string functions the kernel has too), so the same file builds as a
 * kernel module with cusemu-kmod: no glib, no threads of its own.
 *
 * Compatibility, in the kernel's terms: struct sensorhub_info holds a
 * __u64 after a __u32, so i386 lays it out in 36 bytes against 40 and
 * SENSORHUB_IOC_INFO has another number there; the compat table translates
 * that one command, with the struct and conversion that cusemu-abicheck
 * generates from the header at build time. Every other payload has one layout on both ABIs (the
 * samples pointer travels as a __u64), so compat_ptr_ioctl serves them.
 */
#include <poll.h>
#include <string.h>

#include <cusemu/device.h>
#include <cusemu/lock.h>
#include <cusemu/memory.h>
#include <cusemu/plugin.h>
#include <cusemu/sched.h>
#include <cusemu/uaccess.h>

#include "sensorhub.h"

/* The hub's serial number, as SENSORHUB_IOC_INFO reports it. */
#define SENSORHUB_SERIAL 0x5e45012345678901ull
#define QUEUE_LEN 1024		/* samples kept; the oldest go first */
#define NS_PER_S 1000000000ull

/* From cusemu-abicheck --emit-compat: struct compat_sensorhub_info, the
 * i386 layout, SENSORHUB_IOC_INFO32 and the conversions. */
#include "sensorhub-compat.h"

struct hub {
	struct cusemu_device *dev;
	struct cusemu_timer *timer;	/* the next scan */
	struct cusemu_mutex lock;	/* everything below */
	uint64_t next_ns;		/* when the next scan is due */
	unsigned int channels;
	unsigned int rate_hz, default_rate;
	unsigned int opened;		/* open files */
	struct sensorhub_sample queue[QUEUE_LEN];
	unsigned int head, len;		/* oldest sample, samples queued */
	uint64_t scans;
};

/* One scan: a sawtooth per channel, each a quarter period apart. */
static void hub_scan(struct hub *h, uint64_t t)
{
	for (unsigned int c = 0; c < h->channels; c++) {
		struct sensorhub_sample *s;

		if (h->len == QUEUE_LEN) {
			h->head = (h->head + 1) % QUEUE_LEN;
			h->len--;
		}
		s = &h->queue[(h->head + h->len++) % QUEUE_LEN];
		*s = (struct sensorhub_sample){
			.timestamp_ns = t,
			.value = (int32_t)((h->scans + c * 25) % 100) - 50,
			.channel = c,
		};
	}
	h->scans++;
}

/* The timer's function: a scan, and the next one due a period after this
 * one was (or now, when the scans fell behind), at the rate of now. */
static void hub_tick(void *data)
{
	struct hub *h = data;
	uint64_t now = cusemu_time_ns();

	cusemu_mutex_lock(&h->lock);
	hub_scan(h, now);
	h->next_ns += NS_PER_S / h->rate_hz;
	if (h->next_ns < now)
		h->next_ns = now;
	cusemu_mutex_unlock(&h->lock);
	cusemu_device_wake_up(h->dev);
	cusemu_timer_start(h->timer, h->next_ns - now);
}

static void info_fill(struct hub *h, struct sensorhub_info *info)
{
	memset(info, 0, sizeof(*info));
	info->version = SENSORHUB_VERSION;
	info->serial = SENSORHUB_SERIAL;
	cusemu_mutex_lock(&h->lock);
	info->channels = h->channels;
	info->rate_hz = h->rate_hz;
	cusemu_mutex_unlock(&h->lock);
	cusemu_strscpy(info->name, "sensorhub", sizeof(info->name));
}

static long hub_info(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	struct sensorhub_info info;

	info_fill(dev->priv, &info);
	return cusemu_copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/* The i386 layout: the same fields, the serial at offset 4. */
static long hub_info32(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct sensorhub_info info;
	struct compat_sensorhub_info info32;

	info_fill(dev->priv, &info);
	if (sensorhub_info_to_compat(&info32, &info))
		return -EOVERFLOW;
	return cusemu_copy_to_user(arg, &info32, sizeof(info32)) ? -EFAULT : 0;
}

/*
 * The fetch step of SENSORHUB_IOC_READ: the argument (named by its _IOC
 * bits), then the samples it points to, in the next round trip. Their
 * room is named for reading too, though the handler only writes it: a
 * range named for writing alone is reached after the handler returns, so
 * a bad pointer would fail the call only once the samples had left the
 * queue. Read first, it fails the call before, as the kernel's copy fails
 * in the handler before the queue moves.
 */
static int hub_read_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	struct sensorhub_read r;
	int err = cusemu_fetch_ioc(dev, file, cmd, arg);

	if (err || cusemu_copy_from_user(&r, arg, sizeof(r)))
		return err ? err : -EFAULT;
	if (r.count > SENSORHUB_READ_MAX)
		return -EINVAL;
	return cusemu_fetch_range(r.samples,
				  r.count * sizeof(struct sensorhub_sample),
				  r.count * sizeof(struct sensorhub_sample));
}

/*
 * Runs once, with the samples' room fetched: the queue moves out, copied
 * straight from it (at most two stretches, where it wraps), so that no
 * copy of 4 KiB sits on the stack, which a kernel's is too small for. The
 * samples leave the queue only once they reached the caller.
 */
static long hub_read(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	struct hub *h = dev->priv;
	const size_t size = sizeof(struct sensorhub_sample);
	struct sensorhub_read r;
	unsigned int n, first;

	if (cusemu_copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	cusemu_mutex_lock(&h->lock);
	/* The fetch step refused more; say it twice, as it bounds the copy. */
	n = r.count < h->len ? r.count : h->len;
	if (n > SENSORHUB_READ_MAX)
		n = SENSORHUB_READ_MAX;
	first = QUEUE_LEN - h->head < n ? QUEUE_LEN - h->head : n;
	if ((first && cusemu_copy_to_user(r.samples, &h->queue[h->head],
					  first * size)) ||
	    (n > first && cusemu_copy_to_user(r.samples + first * size,
					      h->queue, (n - first) * size))) {
		cusemu_mutex_unlock(&h->lock);
		return -EFAULT;
	}
	h->head = (h->head + n) % QUEUE_LEN;
	h->len -= n;
	cusemu_mutex_unlock(&h->lock);
	r.returned = n;
	return cusemu_copy_to_user(arg, &r, sizeof(r)) ? -EFAULT : 0;
}

static long hub_set_rate(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	struct hub *h = dev->priv;
	__u32 rate;

	if (cusemu_get_user(rate, arg))
		return -EFAULT;
	if (rate < SENSORHUB_RATE_MIN || rate > SENSORHUB_RATE_MAX)
		return -EINVAL;
	cusemu_mutex_lock(&h->lock);
	h->rate_hz = rate;
	cusemu_mutex_unlock(&h->lock);
	return 0;
}

static long hub_get_rate(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	struct hub *h = dev->priv;
	__u32 rate;

	cusemu_mutex_lock(&h->lock);
	rate = h->rate_hz;
	cusemu_mutex_unlock(&h->lock);
	return cusemu_put_user(rate, arg);
}

static unsigned int hub_poll(struct cusemu_device *dev,
			     struct cusemu_file *file)
{
	struct hub *h = dev->priv;
	unsigned int ready;

	cusemu_mutex_lock(&h->lock);
	ready = h->len ? POLLIN | POLLRDNORM : 0;
	cusemu_mutex_unlock(&h->lock);
	return ready;
}

static int hub_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct hub *h = dev->priv;

	cusemu_mutex_lock(&h->lock);
	h->opened++;
	cusemu_mutex_unlock(&h->lock);
	return 0;
}

/* The last close puts the rate back, as the header says. */
static void hub_release(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct hub *h = dev->priv;

	cusemu_mutex_lock(&h->lock);
	if (!--h->opened)
		h->rate_hz = h->default_rate;
	cusemu_mutex_unlock(&h->lock);
}

static int hub_probe(struct cusemu_device *dev, char **why)
{
	struct hub *h = cusemu_new0(struct hub);

	if (!h)
		return -ENOMEM;
	h->timer = cusemu_timer_new(hub_tick, h);
	if (!h->timer) {
		cusemu_free(h);
		return -ENOMEM;
	}
	h->dev = dev;
	cusemu_mutex_init(&h->lock);
	h->channels = (unsigned int)cusemu_device_param_u64(dev, "channels");
	h->default_rate = (unsigned int)cusemu_device_param_u64(dev, "rate");
	h->rate_hz = h->default_rate;
	dev->priv = h;
	h->next_ns = cusemu_time_ns();
	cusemu_timer_start(h->timer, 0);
	return 0;
}

static void hub_remove(struct cusemu_device *dev)
{
	struct hub *h = dev->priv;

	cusemu_timer_free(h->timer);
	cusemu_mutex_destroy(&h->lock);
	cusemu_free(h);
}

static const struct cusemu_ioctl hub_native[] = {
	CUSEMU_IOCTL_IOC(SENSORHUB_IOC_INFO, hub_info),
	CUSEMU_IOCTL_USER(SENSORHUB_IOC_READ, hub_read_fetch, hub_read),
	CUSEMU_IOCTL_IOC(SENSORHUB_IOC_SET_RATE, hub_set_rate),
	CUSEMU_IOCTL_IOC(SENSORHUB_IOC_GET_RATE, hub_get_rate),
	CUSEMU_IOCTL_END
};

/* What translates for i386; compat_ptr_ioctl serves the rest. */
static const struct cusemu_ioctl hub_compat[] = {
	CUSEMU_IOCTL_IOC(SENSORHUB_IOC_INFO32, hub_info32),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param hub_params[] = {
	{ .key = "channels", .type = CUSEMU_PARAM_UINT, .default_value = "4",
	  .help = "channels sampled", .min = 1, .max = 8 },
	{ .key = "rate", .type = CUSEMU_PARAM_UINT, .default_value = "100",
	  .help = "sampling rate at start and after the last close, in Hz",
	  .min = SENSORHUB_RATE_MIN, .max = SENSORHUB_RATE_MAX },
	CUSEMU_PARAM_END
};

static const struct cusemu_device_model sensorhub_model = {
	.name = "sensorhub",
	.summary = "a sensor hub: samples in a queue, read by ioctl "
		   "(SENSORHUB_IOC_*)",
	.node_prefix = "hub",
	.params = hub_params,
	.probe = hub_probe,
	.remove = hub_remove,
	.open = hub_open,
	.release = hub_release,
	.poll = hub_poll,
	.native_table = hub_native,
	.compat_table = hub_compat,
	.compat_ptr_ioctl = true,
};

CUSEMU_PLUGIN(&sensorhub_model);
