/* SPDX-License-Identifier: MIT */
/*
 * The model API of <cusemu/device.h> that is not user memory and the call
 * (call.c) or locks and sleeping (lock.c, sched.c): a device's parameters,
 * events, wake-ups and methods. A model host has its own of these
 * (host/sdk.c), which ask the daemon.
 */
#define G_LOG_DOMAIN "cusemu-model"

#include <elf.h>
#include <stdarg.h>
#include <string.h>

#include <glib.h>

#include "call.h"
#include "cusemu/device.h"
#include "instance.h"
#include "proc.h"
#include "request.h"
#include "stats.h"

void cusemu_device_wake_up(struct cusemu_device *dev)
{
	if (cusemu_instance(dev)->serving.wake_up)
		cusemu_instance(dev)->serving.wake_up(cusemu_instance(dev)->serving.wake_up_data);
}

void cusemu_device_count_event(struct cusemu_device *dev, const char *event)
{
	cusemu_stats_count_event(cusemu_instance(dev)->stats, event);
}

/* How many times a model said it lost what clients gave it: the
 * process's count, for its exit status, which outlives any device. */
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
