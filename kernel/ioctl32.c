/* SPDX-License-Identifier: MIT */
/*
 * The global ioctl32 table, after fs/compat.c of Linux 2.6.11: a hash of
 * commands under a reader-writer lock (ioctl32_sem), so an entry cannot go
 * away under a running handler.
 */
#define G_LOG_DOMAIN "cusemu-ioctl32"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <glib.h>

#include "device.h"
#include "handler.h"
#include "ioctl32.h"
#include "proc.h"
#include "request.h"

struct entry {
	const struct cusemu_ioctl *row;
	bool compatible;		/* no handler: the native path serves */
	const struct cusemu_device_model *model;
	char *owner;			/* node of the device that registered */
};

/* The global table, one per process as the kernel's was one per kernel:
 * its entries under sem (the kernel's ioctl32_sem), and apart, under
 * models_lock, which models' rows are in it, counted by the devices
 * bound. */
static struct {
	GRWLock sem;
	GHashTable *table;		/* cmd -> struct entry */
	GMutex models_lock;
	GHashTable *model_refs;		/* model -> instances bound */
	GHashTable *bound;		/* the devices counted there */
} ioctl32;

static void entry_free(gpointer p)
{
	struct entry *e = p;

	g_free(e->owner);
	g_free(e);
}

static int register_row(const struct cusemu_ioctl *row, bool compatible,
			const struct cusemu_device *owner,
			const struct entry **taken)
{
	struct entry *e;
	int ret = 0;

	g_rw_lock_writer_lock(&ioctl32.sem);
	if (!ioctl32.table)
		ioctl32.table = g_hash_table_new_full(g_direct_hash, g_direct_equal,
					      NULL, entry_free);
	*taken = g_hash_table_lookup(ioctl32.table, GUINT_TO_POINTER(row->cmd));
	if (*taken) {
		g_warning("Trying to register duplicated ioctl32 handler %x",
			  row->cmd);
		ret = -EINVAL;
	} else {
		e = g_new0(struct entry, 1);
		e->row = row;
		e->compatible = compatible;
		e->model = owner->model;
		e->owner = g_strdup(owner->name);
		g_hash_table_insert(ioctl32.table, GUINT_TO_POINTER(row->cmd), e);
	}
	g_rw_lock_writer_unlock(&ioctl32.sem);
	return ret;
}

int cusemu_ioctl32_register(const struct cusemu_ioctl *row,
			    const struct cusemu_device *owner)
{
	const struct entry *taken;

	return register_row(row, !row->handler, owner, &taken);
}

/*
 * down_write(&ioctl32_sem): a 32-bit call running a handler of the table
 * holds it for reading, and a removal waits for it to end, as rmmod did.
 */
static void write_lock_waiting(unsigned int cmd)
{
	if (g_rw_lock_writer_trylock(&ioctl32.sem))
		return;
	g_message("unregister_ioctl32_conversion(%x) waits for the 32-bit "
		  "calls running through the global ioctl32 table "
		  "(ioctl32_sem)",
		  cmd);
	g_rw_lock_writer_lock(&ioctl32.sem);
}

int cusemu_ioctl32_unregister(unsigned int cmd,
			      const struct cusemu_device *owner)
{
	const struct entry *e;
	int ret = 0;

	write_lock_waiting(cmd);
	e = ioctl32.table ? g_hash_table_lookup(ioctl32.table, GUINT_TO_POINTER(cmd)) : NULL;
	if (e && e->model == owner->model) {
		g_hash_table_remove(ioctl32.table, GUINT_TO_POINTER(cmd));
	} else {
		g_warning("Trying to free unknown 32bit ioctl handler %x", cmd);
		ret = -EINVAL;
	}
	g_rw_lock_writer_unlock(&ioctl32.sem);
	return ret;
}

/*
 * Take (+1) or drop (-1) dev's reference on its model; true for the first
 * instance taken and the last dropped. A device drops only what it took,
 * so a removal at run time and the unbind at shutdown count it once.
 */
static bool model_ref(const struct cusemu_device *dev, int delta)
{
	guint refs;

	g_mutex_lock(&ioctl32.models_lock);
	if (!ioctl32.model_refs) {
		ioctl32.model_refs = g_hash_table_new(g_direct_hash, g_direct_equal);
		ioctl32.bound = g_hash_table_new(g_direct_hash, g_direct_equal);
	}
	if (delta > 0 ? !g_hash_table_add(ioctl32.bound, (gpointer)dev)
		      : !g_hash_table_remove(ioctl32.bound, dev)) {
		g_mutex_unlock(&ioctl32.models_lock);
		return false;
	}
	refs = GPOINTER_TO_UINT(g_hash_table_lookup(ioctl32.model_refs, dev->model));
	refs += delta;
	g_hash_table_insert(ioctl32.model_refs, (gpointer)dev->model,
			    GUINT_TO_POINTER(refs));
	g_mutex_unlock(&ioctl32.models_lock);
	return delta > 0 ? refs == 1 : refs == 0;
}

/*
 * What a device registers: its compat rows, and with compat_ptr_ioctl every
 * native row they do not list, as compatible entries (what a driver of the
 * time registered with a NULL handler). fn returns false to stop.
 */
static bool each_entry(struct cusemu_device *dev,
		       bool (*fn)(struct cusemu_device *dev,
				  const struct cusemu_ioctl *row,
				  bool compatible, void *data),
		       void *data)
{
	const struct cusemu_device_model *m = dev->model;

	for (const struct cusemu_ioctl *row = m->compat_table;
	     row && row->name; row++)
		if (!fn(dev, row, !row->handler, data))
			return false;
	if (!m->compat_ptr_ioctl)
		return true;
	for (const struct cusemu_ioctl *row = m->native_table;
	     row && row->name; row++)
		if (!cusemu_ioctl_lookup(m->compat_table, row->cmd) &&
		    !fn(dev, row, true, data))
			return false;
	return true;
}

static bool register_entry(struct cusemu_device *dev,
			   const struct cusemu_ioctl *row, bool compatible,
			   void *data)
{
	const struct entry *taken;

	if (!register_row(row, compatible, dev, &taken))
		return true;
	/* Read without the lock: entries change on the main thread alone,
	 * this one. */
	g_warning("/dev/%s (%s) lost %s (%08x) in the global ioctl32 "
		  "table to /dev/%s (%s), which registered it first",
		  dev->name, dev->model->name, row->name, row->cmd,
		  taken->owner, taken->model->name);
	return true;
}

/* The entry for cmd, if it is model's; on the main thread. */
static bool holds(const struct cusemu_device_model *model, unsigned int cmd)
{
	const struct entry *e;
	bool ours;

	g_rw_lock_reader_lock(&ioctl32.sem);
	e = ioctl32.table ? g_hash_table_lookup(ioctl32.table, GUINT_TO_POINTER(cmd)) : NULL;
	ours = e && e->model == model;
	g_rw_lock_reader_unlock(&ioctl32.sem);
	return ours;
}

static bool unregister_entry(struct cusemu_device *dev,
			     const struct cusemu_ioctl *row, bool compatible,
			     void *data)
{
	/* What another model kept at start-up is not ours to free. */
	if (holds(dev->model, row->cmd))
		cusemu_ioctl32_unregister(row->cmd, dev);
	return true;
}

void cusemu_ioctl32_register_device(struct cusemu_device *dev)
{
	if (model_ref(dev, +1))
		each_entry(dev, register_entry, NULL);
}

void cusemu_ioctl32_unregister_device(struct cusemu_device *dev)
{
	if (model_ref(dev, -1))
		each_entry(dev, unregister_entry, NULL);
}

/* An add under way: the row refused, and what holds its command. */
struct adding {
	const struct cusemu_ioctl *refused;
	char *holder;		/* "/dev/NODE (MODEL)" */
};

static bool add_entry(struct cusemu_device *dev,
		      const struct cusemu_ioctl *row, bool compatible,
		      void *data)
{
	struct adding *a = data;
	const struct entry *taken;

	if (!register_row(row, compatible, dev, &taken))
		return true;
	a->refused = row;
	a->holder = g_strdup_printf("/dev/%s (%s)", taken->owner,
				    taken->model->name);
	return false;
}

/* Undo an add's registrations up to the refused row. */
static bool take_back(struct cusemu_device *dev,
		      const struct cusemu_ioctl *row, bool compatible,
		      void *data)
{
	const struct adding *a = data;

	if (row == a->refused)
		return false;
	cusemu_ioctl32_unregister(row->cmd, dev);
	return true;
}

gboolean cusemu_ioctl32_add_device(struct cusemu_device *dev, GError **error)
{
	struct adding a = { 0 };

	if (!model_ref(dev, +1) || each_entry(dev, add_entry, &a))
		return TRUE;
	each_entry(dev, take_back, &a);
	model_ref(dev, -1);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
		    "%s's 32-bit command %s (%08x) is already in the global "
		    "ioctl32 table, registered by %s: the kernel refuses a "
		    "duplicate (\"Trying to register duplicated ioctl32 "
		    "handler %x\"), and the device is not added; remove %s "
		    "first, or give this device kernel=modern",
		    dev->model->name, a.refused->name, a.refused->cmd, a.holder,
		    a.refused->cmd, a.holder);
	g_free(a.holder);
	return FALSE;
}

static bool remove_entry(struct cusemu_device *dev,
			 const struct cusemu_ioctl *row, bool compatible,
			 void *data)
{
	unsigned int *unknown = data;

	if (cusemu_ioctl32_unregister(row->cmd, dev))
		(*unknown)++;
	return true;
}

unsigned int cusemu_ioctl32_remove_device(struct cusemu_device *dev)
{
	unsigned int unknown = 0;

	if (model_ref(dev, -1))
		each_entry(dev, remove_entry, &unknown);
	return unknown;
}

static void log_unknown(const struct cusemu_call *call)
{
	/* The kernel stopped after 50 of these; so do we. */
	static gint count;
	g_autofree char *node = g_strdup_printf("/dev/%s", call->dev->name);
	unsigned int type = _IOC_TYPE(call->cmd);
	char t[8], comm[32];

	if (g_atomic_int_add(&count, 1) >= 50)
		return;
	if (cusemu_proc_comm(call->tid, comm, sizeof(comm)) < 0)
		g_strlcpy(comm, "?", sizeof(comm));
	if (g_ascii_isprint(type))
		snprintf(t, sizeof(t), "'%c'", type);
	else
		snprintf(t, sizeof(t), "%02x", type);
	g_message("ioctl32(%s:%d): Unknown cmd fd(%d) cmd(%08x){t:%s;sz:%u} "
		  "arg(%08x) on %s",
		  comm, call->tid, MAX(cusemu_proc_fd_of(call->tid, node), -1),
		  call->cmd, t,
		  (unsigned int)_IOC_SIZE(call->cmd), (uint32_t)call->arg, node);
}

static void release_reader(void *data)
{
	g_rw_lock_reader_unlock(data);
}

long cusemu_ioctl32_dispatch(struct cusemu_call *call,
			     long (*native_path)(struct cusemu_call *call),
			     bool big_lock)
{
	const struct entry *e;
	long ret;

	g_rw_lock_reader_lock(&ioctl32.sem);
	e = ioctl32.table ? g_hash_table_lookup(ioctl32.table, GUINT_TO_POINTER(call->cmd))
		  : NULL;
	if (e && !e->compatible && e->model != call->dev->model) {
		/*
		 * The kernel would run another driver's code on this file;
		 * the daemon refuses, and says why.
		 */
		g_message("ioctl32 handler %s (%08x) of %s from /dev/%s not run "
			  "on /dev/%s, a %s device: the global table has one "
			  "entry per command",
			  e->row->name, call->cmd, e->model->name, e->owner,
			  call->dev->name, call->dev->model->name);
		g_rw_lock_reader_unlock(&ioctl32.sem);
		return -EINVAL;
	}
	if (e && !e->compatible) {
		/* Let go of by an oops in the handler too. */
		cusemu_request_hold(release_reader, &ioctl32.sem);
		ret = cusemu_handler_run(call, NULL, e->row,
					 CUSEMU_METHOD_IOCTL32_HANDLER, big_lock);
		cusemu_request_unhold();
		g_rw_lock_reader_unlock(&ioctl32.sem);
		return ret;
	}
	g_rw_lock_reader_unlock(&ioctl32.sem);
	if (e)
		return native_path(call);
	log_unknown(call);
	return -EINVAL;
}
