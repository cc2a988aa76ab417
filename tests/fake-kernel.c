/* SPDX-License-Identifier: MIT */
/* The fake kernel of fake-kernel.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "config.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"
#include "request.h"

/* The kernel gives up on a server that keeps asking; so do we. */
#define MAX_ROUNDS 16

void fake_client_init(struct fake_client *c, bool compat, size_t size)
{
	c->compat = compat;
	c->base = compat ? FAKE_COMPAT_BASE : FAKE_NATIVE_BASE;
	c->size = size;
	c->mem = g_malloc0(size);
}

cusemu_uptr_t fake_addr(const struct fake_client *c, const void *p)
{
	return c->base + (cusemu_uptr_t)((const uint8_t *)p - c->mem);
}

static uint8_t *client_bytes(struct fake_client *c, cusemu_uptr_t addr,
			     size_t len)
{
	if (addr < c->base || len > c->size ||
	    addr - c->base > c->size - len)
		return NULL;
	return c->mem + (addr - c->base);
}

int fake_check_ranges(const struct fake_client *c,
			const struct cusemu_user_ranges *set)
{
	for (unsigned int i = 0; i < set->count; i++)
		if (c->compat && (set->r[i].addr > UINT32_MAX))
			return -EIO;
	return 0;
}

int fake_gather(struct fake_client *c, const struct cusemu_user_ranges *in,
		uint8_t *buf)
{
	for (unsigned int i = 0; i < in->count; i++) {
		uint8_t *p = client_bytes(c, in->r[i].addr, in->r[i].len);

		if (!p)
			return -EFAULT;
		memcpy(buf + in->r[i].off, p, in->r[i].len);
	}
	return 0;
}

int fake_scatter(struct fake_client *c, const struct cusemu_user_ranges *out,
		 const uint8_t *buf, uint32_t used)
{
	for (unsigned int i = 0; i < out->count && out->r[i].off < used; i++) {
		uint32_t n = MIN(out->r[i].len, used - out->r[i].off);
		uint8_t *p = client_bytes(c, out->r[i].addr, n);

		if (!p)
			return -EFAULT;
		memcpy(p, buf + out->r[i].off, n);
	}
	return 0;
}

long fake_ioctl(struct fake_client *c, struct cusemu_device *dev,
		struct cusemu_file *file, unsigned int cmd, cusemu_uptr_t arg,
		unsigned int *round_trips)
{
	static uint8_t in_buf[CUSEMU_USER_MAX_BYTES];
	static uint8_t out_buf[CUSEMU_USER_MAX_BYTES];
	struct cusemu_user_ranges *in = g_new0(struct cusemu_user_ranges, 1);
	struct cusemu_user_ranges *out = g_new0(struct cusemu_user_ranges, 1);
	struct cusemu_request req;
	struct cusemu_call call;
	long ret = -EIO;
	int err;

	*round_trips = 0;
	for (unsigned int round = 0; round < MAX_ROUNDS; round++) {
		cusemu_call_init(&call, dev, file, cmd, arg, c->compat, getpid());
		if (round) {
			err = fake_gather(c, in, in_buf);
			if (err) {
				ret = err;
				break;
			}
			cusemu_call_set_data(&call, in, out, in_buf, in->bytes,
					     out_buf, out->bytes);
		}
		cusemu_request_init(&req, NULL, &call);
		cusemu_request_set_current(&req);
		ret = cusemu_dispatch(&call);
		cusemu_request_set_current(NULL);
		cusemu_request_clear(&req);
		switch (cusemu_call_outcome(&call, &ret)) {
		case CUSEMU_CALL_RETRY:
			++*round_trips;
			cusemu_user_ranges_copy(in, &call.in);
			cusemu_user_ranges_copy(out, &call.out);
			ret = fake_check_ranges(c, in) ?: fake_check_ranges(c, out);
			if (ret)
				goto done;
			continue;
		case CUSEMU_CALL_ERROR:
			if (ret < -511)
				ret = FAKE_UNANSWERED;
			goto done;
		case CUSEMU_CALL_REPLY:
			err = fake_scatter(c, &call.out, out_buf, call.out_used);
			ret = err ? err : (int)ret;
			goto done;
		}
	}
done:
	g_free(in);
	g_free(out);
	return ret;
}

struct cusemu_device *fake_device_try(const struct cusemu_device_model *m,
				      const char *arg, GError **error)
{
	struct cusemu_config *config = cusemu_config_new();
	const struct cusemu_kernel_model *modern =
		cusemu_kernel_model_find("modern");
	struct cusemu_device *dev = NULL;

	if (cusemu_config_add_device_arg(config, arg, error))
		dev = m ? cusemu_device_create(m, config->devices->pdata[0], 0,
					       modern, error)
			: cusemu_device_new(config->devices->pdata[0], 0,
					    modern, error);
	if (dev)
		cusemu_dispatch_bind(dev, CUSEMU_LOCK_MODEL);
	cusemu_config_free(config);
	return dev;
}

struct cusemu_device *fake_device_new(const char *arg)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev = fake_device_try(NULL, arg, &error);

	g_assert_no_error(error);
	return dev;
}

void fake_device_free(struct cusemu_device *dev)
{
	cusemu_dispatch_unbind(dev);
	cusemu_device_free(dev);
}
