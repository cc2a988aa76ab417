/* SPDX-License-Identifier: MIT */
/*
 * The model API of <cusemu/device.h> and <cusemu/sched.h> as the model host
 * gives it: what the daemon keeps (the big lock, the dispatcher's locks
 * over a sleep, a process's ABI) is asked of the daemon thread that waits
 * for the call; wake-ups, events and lost data go to the daemon on the
 * control socket. User memory, the fetch helpers, parameters and sleeping
 * itself are the daemon's own code (runtime/call.c, params.c, sched.c,
 * request.c).
 */
#define G_LOG_DOMAIN "cusemu-host"

#include <stdarg.h>
#include <string.h>

#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "host.h"

static void send_event(uint32_t type, const struct cusemu_device *dev,
		       const char *event)
{
	struct host_event_msg m = { type, 0, host_dev_of(dev)->id, "" };

	if (event)
		g_strlcpy(m.event, event, sizeof(m.event));
	host_send(&m, sizeof(m));
}

void cusemu_device_wake_up(struct cusemu_device *dev)
{
	send_event(HOST_MSG_WAKE_UP, dev, NULL);
}

void cusemu_device_count_event(struct cusemu_device *dev, const char *event)
{
	send_event(HOST_MSG_EVENT, dev, event);
}

const char *cusemu_device_kernel_model(const struct cusemu_device *dev)
{
	return host_dev_of(dev)->kernel;
}

unsigned int cusemu_device_kernel_version(const struct cusemu_device *dev)
{
	return host_dev_of(dev)->kernel_version;
}

void cusemu_device_lost(struct cusemu_device *dev, const char *format, ...)
{
	struct host_text_msg m = { HOST_MSG_LOST, 0, host_dev_of(dev)->id, "" };
	va_list ap;

	va_start(ap, format);
	g_vsnprintf(m.text, sizeof(m.text), format, ap);
	va_end(ap);
	host_send(&m, sizeof(m));
}

/* Outside ->probe the daemon does not hear of it: as in the daemon, where
 * it changes what the next bind offers. */
void cusemu_device_set_methods(struct cusemu_device *dev, unsigned int methods)
{
	struct host_dev *d = host_dev_of(dev);

	d->methods_set = true;
	d->methods = methods & CUSEMU_METHODS_ALL;
}

/* The daemon checks it again when it applies it after the probe. */
int cusemu_device_default_name(struct cusemu_device *dev, const char *name)
{
	struct host_dev *d = host_dev_of(dev);

	if (!*name || strlen(name) > 64 || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	for (const char *c = name; *c; c++)
		if (!g_ascii_isalnum(*c) && !strchr("-_.", *c))
			return -EINVAL;
	g_free(d->default_name);
	d->default_name = g_strdup(name);
	return 0;
}

bool cusemu_process_is_32bit(pid_t pid)
{
	return host_current_channel() &&
	       host_ask(HOST_ASK_IS_32BIT, pid) == 1;
}

/*
 * The big lock is the daemon's: the daemon thread that waits for this call
 * takes it. A thread of the model's own (outside any call) has none to
 * take, as it would hold it alone.
 */
/* Per thread: such a thread has no channel to keep its depth in. */
static __thread unsigned int own_depth;

void cusemu_lock_kernel(void)
{
	struct host_channel *ch = host_current_channel();

	if (!ch) {
		own_depth++;
		return;
	}
	if (host_ask(HOST_ASK_LOCK_KERNEL, 0) == 0)
		ch->lock_depth++;
}

void cusemu_unlock_kernel(void)
{
	struct host_channel *ch = host_current_channel();

	if (!ch) {
		own_depth -= own_depth > 0;
		return;
	}
	if (ch->lock_depth && host_ask(HOST_ASK_UNLOCK_KERNEL, 0) == 0)
		ch->lock_depth--;
}

unsigned int cusemu_kernel_lock_depth(void)
{
	struct host_channel *ch = host_current_channel();

	return ch ? ch->lock_depth : own_depth;
}

/* The daemon lets go of the dispatcher's locks only if the call has any. */
static bool holds_locks(const struct host_channel *ch)
{
	return ch && (ch->shm->locks_held || ch->lock_depth);
}

static void waiting_on(GCond *cond, GMutex *mutex)
{
	struct cusemu_wait_ctx *ctx = cusemu_request_wait();

	if (ctx)
		cusemu_wait_ctx_waiting_on(ctx, cond, mutex);
}

gboolean cusemu_cond_wait_until(GCond *cond, GMutex *mutex, gint64 end_time)
{
	struct host_channel *ch = host_current_channel();
	bool locks = holds_locks(ch);
	gboolean signalled;

	if (cusemu_signal_pending())
		return FALSE;
	waiting_on(cond, mutex);
	if (locks)
		host_ask(HOST_ASK_SLEEP_BEGIN, 0);
	if (ch)
		__atomic_add_fetch(&ch->shm->sleeps, 1, __ATOMIC_RELAXED);
	signalled = !cusemu_signal_pending() &&
		    g_cond_wait_until(cond, mutex, end_time) &&
		    !cusemu_signal_pending();
	if (ch)
		__atomic_add_fetch(&ch->shm->sleeps, 1, __ATOMIC_RELAXED);
	waiting_on(NULL, NULL);
	if (locks) {
		/* Dispatcher locks come before the model's mutex. */
		g_mutex_unlock(mutex);
		host_ask(HOST_ASK_SLEEP_END, 0);
		g_mutex_lock(mutex);
	}
	return signalled;
}
