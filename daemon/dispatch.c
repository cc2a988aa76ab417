/* SPDX-License-Identifier: MIT */
/*
 * Kernel models, the lock stage and the table-driven methods. A kernel model
 * is one function that picks a method and maps "not mine" to an errno, as
 * fs/ioctl.c and fs/compat_ioctl.c of its generation did.
 */
#define G_LOG_DOMAIN "cusemu-dispatch"

#include <string.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "device.h"
#include "dispatch.h"

struct cusemu_lock {
	GRecMutex mutex;
};

static struct cusemu_lock global_lock;

const struct cusemu_ioctl *cusemu_ioctl_lookup(const struct cusemu_ioctl *table,
					       unsigned int cmd)
{
	for (const struct cusemu_ioctl *row = table; row && row->name; row++)
		if (row->cmd == cmd)
			return row;
	return NULL;
}

/* Ask for the payload the _IOC bits describe: one round trip for both. */
static void fetch_ioc_payload(unsigned int cmd, cusemu_uptr_t arg)
{
	size_t size = _IOC_SIZE(cmd);

	if (_IOC_DIR(cmd) & _IOC_WRITE)
		cusemu_user_want_read(arg, size);
	if (_IOC_DIR(cmd) & _IOC_READ)
		cusemu_user_want_write(arg, size);
}

static long run_row(struct cusemu_device *dev, struct cusemu_file *file,
		    const struct cusemu_ioctl *row, unsigned int cmd,
		    unsigned long arg)
{
	if (row->payload == CUSEMU_PAYLOAD_IOC) {
		fetch_ioc_payload(cmd, arg);
		if (cusemu_user_pending())
			return 0;	/* the retry brings the payload */
	}
	return row->handler(dev, file, cmd, arg);
}

static long table_native_ioctl(struct cusemu_device *dev,
			       struct cusemu_file *file, unsigned int cmd,
			       unsigned long arg)
{
	const struct cusemu_ioctl *row;

	row = cusemu_ioctl_lookup(dev->model->native_table, cmd);
	if (!row)
		return -ENOIOCTLCMD;
	return run_row(dev, file, row, cmd, arg);
}

static long table_compat_ioctl(struct cusemu_device *dev,
			       struct cusemu_file *file, unsigned int cmd,
			       unsigned long arg)
{
	const struct cusemu_ioctl *row;

	row = cusemu_ioctl_lookup(dev->model->compat_table, cmd);
	if (!row)
		return -ENOIOCTLCMD;
	if (row->handler)
		return run_row(dev, file, row, cmd, arg);
	/* Compatible layout: the native handler, with a widened pointer. */
	row = cusemu_ioctl_lookup(dev->model->native_table, cmd);
	if (!row)
		return -ENOIOCTLCMD;
	return run_row(dev, file, row, cmd,
		       cusemu_compat_ptr((uint32_t)arg));
}

static void check_tables(const struct cusemu_device_model *m)
{
	for (const struct cusemu_ioctl *row = m->compat_table; row && row->name;
	     row++) {
		if (!row->handler &&
		    !cusemu_ioctl_lookup(m->native_table, row->cmd))
			g_critical("device model %s: compat row %s is marked "
				   "compatible but has no native row",
				   m->name, row->name);
	}
}

void cusemu_dispatch_bind(struct cusemu_device *dev,
			  enum cusemu_lock_mode mode)
{
	const struct cusemu_device_model *m = dev->model;
	struct cusemu_device_private *dp = dev->dp;
	cusemu_ioctl_fn native = m->native_table ? table_native_ioctl : NULL;
	cusemu_ioctl_fn compat = m->compat_table ? table_compat_ioctl : NULL;

	check_tables(m);
	dp->ioctl = m->ioctl ? m->ioctl : native;
	dp->unlocked_ioctl = m->unlocked_ioctl ? m->unlocked_ioctl : native;
	dp->ioctl_native = m->ioctl_native ? m->ioctl_native : native;
	dp->compat_ioctl = m->compat_ioctl ? m->compat_ioctl : compat;
	dp->ioctl_compat = m->ioctl_compat ? m->ioctl_compat : compat;

	switch (mode) {
	case CUSEMU_LOCK_GLOBAL:
		dp->lock = &global_lock;
		break;
	case CUSEMU_LOCK_DEVICE:
		dp->lock = g_new0(struct cusemu_lock, 1);
		g_rec_mutex_init(&dp->lock->mutex);
		break;
	case CUSEMU_LOCK_MODEL:	/* no model so far prescribes one */
	case CUSEMU_LOCK_NONE:
		dp->lock = NULL;
		break;
	}
}

void cusemu_dispatch_unbind(struct cusemu_device *dev)
{
	struct cusemu_device_private *dp = dev->dp;

	if (dp->lock && dp->lock != &global_lock) {
		g_rec_mutex_clear(&dp->lock->mutex);
		g_free(dp->lock);
	}
	dp->lock = NULL;
}

bool cusemu_lock_mode_parse(const char *s, enum cusemu_lock_mode *mode)
{
	static const char *const names[] = {
		[CUSEMU_LOCK_MODEL] = "model",
		[CUSEMU_LOCK_GLOBAL] = "global",
		[CUSEMU_LOCK_DEVICE] = "device",
		[CUSEMU_LOCK_NONE] = "none",
	};

	for (unsigned int i = 0; i < G_N_ELEMENTS(names); i++) {
		if (!strcmp(s, names[i])) {
			*mode = i;
			return true;
		}
	}
	return false;
}

/* The lock stage: whatever --lock put around this device's handlers. */
static long call_method(struct cusemu_call *call, cusemu_ioctl_fn fn)
{
	struct cusemu_lock *lock = call->dev->dp->lock;
	long ret;

	if (lock)
		g_rec_mutex_lock(&lock->mutex);
	ret = fn(call->dev, call->file, call->cmd, call->arg);
	if (lock)
		g_rec_mutex_unlock(&lock->mutex);
	return ret;
}

/*
 * Today's kernels: unlocked_ioctl for native callers, compat_ioctl for
 * 32-bit ones, no global table, no big lock; "not mine" is -ENOTTY.
 */
static long modern_dispatch(struct cusemu_call *call)
{
	struct cusemu_device_private *dp = call->dev->dp;
	cusemu_ioctl_fn fn = call->compat ? dp->compat_ioctl
					  : dp->unlocked_ioctl;
	long ret = fn ? call_method(call, fn) : -ENOTTY;

	return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
}

static const struct cusemu_kernel_model modern = {
	.name = "modern",
	.summary = "unlocked_ioctl and compat_ioctl, no global table, no big "
		   "lock; unknown commands: ENOTTY",
	.dispatch = modern_dispatch,
};

const struct cusemu_kernel_model *const cusemu_kernel_models[] = {
	&modern,
	NULL,
};

const struct cusemu_kernel_model *cusemu_kernel_model_find(const char *name)
{
	for (unsigned int i = 0; cusemu_kernel_models[i]; i++)
		if (!strcmp(cusemu_kernel_models[i]->name, name))
			return cusemu_kernel_models[i];
	return NULL;
}

long cusemu_dispatch(struct cusemu_call *call)
{
	long ret;

	cusemu_call_set_current(call);
	ret = call->dev->dp->kmodel->dispatch(call);
	cusemu_call_set_current(NULL);
	return ret;
}
