/* SPDX-License-Identifier: MIT */
/*
 * How a handler runs: its row in the model's tables, the fetch and run
 * steps of the handler contract, and the lock held around them (the lock
 * stage); whether it wrote what its row named. What the tables say of a
 * model (restricted, FUSE gaps) too.
 */
#define G_LOG_DOMAIN "cusemu-dispatch"

#include <string.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "device.h"
#include "handler.h"
#include "lock.h"
#include "oops.h"
#include "request.h"

/* Set once at start-up by the daemon, which reads plugins' files: the
 * handler path carries no daemon. */
static cusemu_row_locator locate_row;
/* Guards every instance's dispatch.wrote_nothing: one lock, as such a
 * warning is rare and the first one of a row is all that is kept. */
static GMutex warned_lock;

void cusemu_handler_set_locator(cusemu_row_locator locate)
{
	locate_row = locate;
}

static cusemu_fetch_fn row_fetch(const struct cusemu_ioctl *row)
{
	switch (row->payload) {
	case CUSEMU_PAYLOAD_IOC:
		return cusemu_fetch_ioc;
	case CUSEMU_PAYLOAD_USER:
		return row->fetch;
	case CUSEMU_PAYLOAD_NONE:
		break;
	}
	return NULL;
}

/*
 * The first time the command of key (a table row, or the command of a
 * model written by hand) is said to write nothing on the call's device.
 */
static bool first_wrote_nothing(const struct cusemu_call *call,
				const void *key)
{
	GHashTable **set = &cusemu_instance(call->dev)->dispatch.wrote_nothing;
	bool first;

	g_mutex_lock(&warned_lock);
	if (!*set)
		*set = g_hash_table_new(NULL, NULL);
	first = g_hash_table_add(*set, (gpointer)key);
	g_mutex_unlock(&warned_lock);
	return first;
}

/*
 * The forgotten copy_to_user, which the kernel lets pass (the caller reads
 * what its buffer held): an _IOR or _IOWR command whose memory to write
 * was named (by the _IOC bits or by a fetch step), and whose handler
 * returned 0 having written none of it. Said once per device and table
 * row (a compatible compat row is its native row), or per command of a
 * model written by hand (row NULL); fn is the handler that ran, the row's
 * or the method. A command that writes nothing on purpose names nothing
 * to write.
 */
static void check_wrote(const struct cusemu_call *call,
			const struct cusemu_ioctl *row, cusemu_ioctl_fn fn,
			long ret)
{
	unsigned int dir = _IOC_DIR(call->cmd);
	const char *name = row ? row->name : cusemu_call_command_name(call);
	g_autoptr(GString) where = NULL;

	if (ret || call->error || call->pending ||
	    call->phase != CUSEMU_PHASE_RUN || call->out_used ||
	    !call->named_out ||
	    (row && row->payload == CUSEMU_PAYLOAD_NONE) ||
	    !(dir & _IOC_READ) || !_IOC_SIZE(call->cmd) ||
	    !first_wrote_nothing(call, row ? (const void *)row
					   : GUINT_TO_POINTER(call->cmd)))
		return;
	where = g_string_new(NULL);
	if (!locate_row || !locate_row(call->dev->model, row, where))
		cusemu_oops_append_where(where, (const void *)fn);
	g_warning("%s: %s (0x%08x, %s, %u bytes, %s caller) returned 0 and "
		  "wrote nothing to the caller's memory: a forgotten "
		  "copy_to_user? Its handler:%s",
		  call->dev->name, name ? name : "ioctl", call->cmd,
		  dir & _IOC_WRITE ? "_IOWR" : "_IOR", _IOC_SIZE(call->cmd),
		  call->compat ? "i386" : "x86_64", where->str);
}

/*
 * The row of the call's command that a method built from the tables runs:
 * a native one from the native table; a compat one from the compat table,
 * or for a row marked compatible (or compat_ptr_ioctl) the native row,
 * which gets the caller's pointer widened in *arg. NULL: not mine.
 */
static const struct cusemu_ioctl *table_row(const struct cusemu_call *call,
					    bool compat, unsigned long *arg)
{
	const struct cusemu_device_model *m = call->dev->model;
	const struct cusemu_ioctl *row;

	*arg = call->arg;
	if (!compat)
		return cusemu_ioctl_lookup(m->native_table, call->cmd);
	row = cusemu_ioctl_lookup(m->compat_table, call->cmd);
	if (!row && !m->compat_ptr_ioctl)
		return NULL;
	if (row && row->handler)
		return row;
	*arg = cusemu_compat_ptr((uint32_t)call->arg);
	return cusemu_ioctl_lookup(m->native_table, call->cmd);
}

/* A row without a fetch step could never reach memory it chases. */
static void check_fetch_steps(const struct cusemu_device_model *m,
			  const struct cusemu_ioctl *table)
{
	for (const struct cusemu_ioctl *row = table; row && row->name; row++) {
		if (row->payload == CUSEMU_PAYLOAD_USER && !row->fetch) {
			g_critical("device model %s: row %s chases user memory "
				   "but has no fetch step",
				   m->name, row->name);
		}
	}
}

void cusemu_table_check(const struct cusemu_device_model *m)
{
	check_fetch_steps(m, m->native_table);
	check_fetch_steps(m, m->compat_table);
	for (const struct cusemu_ioctl *row = m->compat_table; row && row->name;
	     row++) {
		if (!row->handler &&
		    !cusemu_ioctl_lookup(m->native_table, row->cmd))
			g_critical("device model %s: compat row %s is marked "
				   "compatible but has no native row",
				   m->name, row->name);
	}
}

bool cusemu_model_by_hand(const struct cusemu_device_model *m)
{
	return m->ioctl || m->unlocked_ioctl || m->compat_ioctl ||
	       m->ioctl_native || m->ioctl_compat;
}

/*
 * Can the kernel copy every payload by the _IOC bits alone? Rows whose
 * handler chases pointers cannot, nor rows that take arg as a value while
 * their command says "pointer to data" (RTC_IRQP_SET's kind).
 */
bool cusemu_row_restricted(const struct cusemu_ioctl *row)
{
	switch (row->payload) {
	case CUSEMU_PAYLOAD_IOC:
		return true;
	case CUSEMU_PAYLOAD_NONE:
		return _IOC_DIR(row->cmd) == _IOC_NONE || !_IOC_SIZE(row->cmd);
	case CUSEMU_PAYLOAD_USER:
		break;
	}
	return false;
}

bool cusemu_dispatch_restricted(const struct cusemu_device_model *m)
{
	if (cusemu_model_by_hand(m) || !m->native_table)
		return false;
	for (const struct cusemu_ioctl *row = m->native_table; row->name; row++)
		if (!cusemu_row_restricted(row))
			return false;
	/* A compatible row's native row was checked above. */
	for (const struct cusemu_ioctl *row = m->compat_table; row && row->name;
	     row++)
		if (row->handler && !cusemu_row_restricted(row))
			return false;
	return true;
}

static const char *const lock_mode_names[] = {
	[CUSEMU_LOCK_MODEL] = "model",
	[CUSEMU_LOCK_GLOBAL] = "global",
	[CUSEMU_LOCK_DEVICE] = "device",
	[CUSEMU_LOCK_NONE] = "none",
};

bool cusemu_lock_mode_parse(const char *s, enum cusemu_lock_mode *mode)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(lock_mode_names); i++) {
		if (!strcmp(s, lock_mode_names[i])) {
			*mode = i;
			return true;
		}
	}
	return false;
}

const char *cusemu_lock_mode_name(enum cusemu_lock_mode mode)
{
	return lock_mode_names[mode];
}

/* The lock stage: what the model prescribes, unless --lock says else. */
static struct cusemu_lock *lock_for(const struct cusemu_call *call,
				    bool big_lock)
{
	const struct cusemu_instance *dp = cusemu_instance(call->dev);

	switch (dp->dispatch.lock_mode) {
	case CUSEMU_LOCK_MODEL:
		return big_lock ? &cusemu_big_lock : NULL;
	case CUSEMU_LOCK_GLOBAL:
		return &cusemu_big_lock;
	case CUSEMU_LOCK_DEVICE:
		return dp->dispatch.lock;
	case CUSEMU_LOCK_NONE:
		break;
	}
	return NULL;
}

/* The call reaches its handler as how, holding what lock_for() says. */
static struct cusemu_lock *lock_stage_enter(struct cusemu_call *call,
					    enum cusemu_method how,
					    bool big_lock)
{
	struct cusemu_lock *lock = lock_for(call, big_lock);

	call->method = how;
	if (lock)
		cusemu_lock_acquire(lock);
	return lock;
}

static void lock_stage_leave(struct cusemu_lock *lock)
{
	if (lock)
		cusemu_lock_release(lock);
}

/*
 * The handler contract, once for every path: the fetch step until it names
 * nothing new, then the handler, once. A call still waiting for memory
 * returns 0 with call->pending set and the transport retries it. Its body
 * is the last call before the handler: the path from the transport has
 * no hop to spare (docs/README.md, "The path of an ioctl").
 */
long cusemu_handler_run(struct cusemu_call *call, cusemu_ioctl_fn fn,
			const struct cusemu_ioctl *row, enum cusemu_method how,
			bool big_lock)
{
	struct cusemu_lock *lock = lock_stage_enter(call, how, big_lock);
	struct cusemu_device *dev = call->dev;
	unsigned long arg = call->arg;
	cusemu_fetch_fn fetch;
	long ret;

	if (fn) {
		fetch = dev->model->ioctl_fetch ?: cusemu_fetch_ioc;
	} else {
		if (!row)
			row = table_row(call, cusemu_method_compat(how), &arg);
		if (!row) {
			ret = -ENOIOCTLCMD;
			goto unlock;
		}
		fn = row->handler;
		fetch = row_fetch(row);
		call->stats.name = row->name;
	}
	call->step = row ? row->name : NULL;
	call->phase = CUSEMU_PHASE_FETCH;
	ret = fetch ? fetch(dev, call->file, call->cmd, arg) : 0;
	if (call->error) {
		ret = call->error;
	} else if (call->pending) {
		ret = 0;	/* the retry brings the memory */
	} else if (ret >= 0) {
		call->phase = CUSEMU_PHASE_RUN;
		ret = fn(dev, call->file, call->cmd, arg);
	}
	check_wrote(call, row, fn, ret);
unlock:
	lock_stage_leave(lock);
	return ret;
}
