/* SPDX-License-Identifier: MIT */
/*
 * The model API of <cusemu/device.h> and <cusemu/report.h> that is not user
 * memory (call.c) or locks and sleeping (lock.c): a device's parameters,
 * events, wake-ups and methods, the fetch helpers, the report of a call.
 */
#define G_LOG_DOMAIN "cusemu-model"

#include <elf.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "call.h"
#include "cusemu/device.h"
#include "cusemu/report.h"
#include "cusemu/sched.h"
#include "device.h"
#include "kmodel.h"
#include "proc.h"
#include "request.h"
#include "stats.h"

static const char *param_value(const struct cusemu_device *dev,
			       const char *key)
{
	const char *v = g_hash_table_lookup(cusemu_instance(dev)->params, key);

	if (!v)
		g_error("device model %s reads key '%s' it does not declare "
			"or that has no default",
			dev->model->name, key);
	return v;
}

uint64_t cusemu_device_param_u64(const struct cusemu_device *dev,
				 const char *key)
{
	return g_ascii_strtoull(param_value(dev, key), NULL, 10);
}

bool cusemu_device_param_bool(const struct cusemu_device *dev,
			      const char *key)
{
	return !strcmp(param_value(dev, key), "true");
}

const char *cusemu_device_param_str(const struct cusemu_device *dev,
				    const char *key)
{
	return param_value(dev, key);
}

void cusemu_device_wake_up(struct cusemu_device *dev)
{
	if (cusemu_instance(dev)->wake_up)
		cusemu_instance(dev)->wake_up(cusemu_instance(dev)->wake_up_data);
}

void cusemu_device_count_event(struct cusemu_device *dev, const char *event)
{
	cusemu_stats_count_event(cusemu_instance(dev)->stats, event);
}

const char *cusemu_device_kernel_model(const struct cusemu_device *dev)
{
	return cusemu_instance(dev)->kmodel->name;
}

/* How many times a model said it lost what clients gave it. */
static gint lost;

void cusemu_device_lost(struct cusemu_device *dev, const char *format, ...)
{
	g_autofree char *what = NULL;
	va_list ap;

	va_start(ap, format);
	what = g_strdup_vprintf(format, ap);
	va_end(ap);
	g_critical("/dev/%s (%s) lost data: %s", dev->name, dev->model->name,
		   what);
	g_atomic_int_inc(&lost);
}

bool cusemu_device_ratelimit(struct cusemu_device *dev, char *note)
{
	return cusemu_ratelimit(&cusemu_instance(dev)->model_said, note);
}

unsigned int cusemu_device_lost_count(void)
{
	return (unsigned int)g_atomic_int_get(&lost);
}

void cusemu_device_set_methods(struct cusemu_device *dev, unsigned int methods)
{
	cusemu_instance(dev)->dispatch.methods = methods & CUSEMU_METHODS_ALL;
}

bool cusemu_process_is_32bit(pid_t pid)
{
	return cusemu_proc_elf_class(pid) == ELFCLASS32;
}

int cusemu_fetch_range(uint64_t addr, size_t read_len, size_t write_len)
{
	int err = cusemu_user_want_read(addr, read_len);

	if (!err || err == -EAGAIN)
		err = cusemu_user_want_write(addr, write_len);
	return err == -EAGAIN ? 0 : err;
}

int cusemu_fetch_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	size_t size = _IOC_SIZE(cmd);

	return cusemu_fetch_range(arg, _IOC_DIR(cmd) & _IOC_WRITE ? size : 0,
				  _IOC_DIR(cmd) & _IOC_READ ? size : 0);
}

enum cusemu_method cusemu_current_method(void)
{
	struct cusemu_call *call = cusemu_call_current();

	return call ? call->method : 0;
}

/* Clients read the method through <cusemu/abi/report.h>: same values. */
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL == (int)CUSEMU_METHOD_IOCTL);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_UNLOCKED_IOCTL == (int)CUSEMU_METHOD_UNLOCKED_IOCTL);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_COMPAT_IOCTL == (int)CUSEMU_METHOD_COMPAT_IOCTL);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL_NATIVE == (int)CUSEMU_METHOD_IOCTL_NATIVE);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL_COMPAT == (int)CUSEMU_METHOD_IOCTL_COMPAT);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL32_HANDLER == (int)CUSEMU_METHOD_IOCTL32_HANDLER);

struct cusemu_ioctl_report cusemu_report_current(void)
{
	return (struct cusemu_ioctl_report){
		.method = cusemu_current_method(),
		.big_lock_depth = cusemu_kernel_lock_depth(),
		.compat = cusemu_in_compat_syscall(),
	};
}

long cusemu_put_report(cusemu_uptr_t uptr)
{
	struct cusemu_ioctl_report r = cusemu_report_current();

	return cusemu_copy_to_user(uptr, &r, sizeof(r)) ? -EFAULT : 0;
}

const char *cusemu_method_name(enum cusemu_method how)
{
	const char *name = cusemu_report_method_name(how);

	return name ? name : "none";
}
