/* SPDX-License-Identifier: MIT */
/*
 * Kernel models, the lock stage and the table-driven methods. A kernel model
 * is one function that picks a method and maps "not mine" to an errno, as
 * fs/ioctl.c and fs/compat_ioctl.c of its generation did.
 */
#define G_LOG_DOMAIN "cusemu-dispatch"

#include <string.h>
#include <sys/ioctl.h>

#include <linux/fiemap.h>
#include <linux/fs.h>

#include <glib.h>

#include "cusemu/report.h"
#include "cusemu/sched.h"
#include "device.h"
#include "dispatch.h"
#include "ioctl32.h"
#include "lock.h"
#include "plugin.h"
#include "request.h"

const struct cusemu_ioctl *cusemu_ioctl_lookup(const struct cusemu_ioctl *table,
					       unsigned int cmd)
{
	for (const struct cusemu_ioctl *row = table; row && row->name; row++)
		if (row->cmd == cmd)
			return row;
	return NULL;
}

const char *cusemu_call_command_name(const struct cusemu_call *call)
{
	const struct cusemu_device_model *m = call->dev->model;
	const struct cusemu_ioctl *row;

	if (call->stats.name)
		return call->stats.name;
	row = cusemu_ioctl_lookup(call->compat ? m->compat_table
					       : m->native_table,
				  call->cmd);
	if (!row)
		row = cusemu_ioctl_lookup(call->compat ? m->native_table
						       : m->compat_table,
					  call->cmd);
	return row ? row->name : NULL;
}

/*
 * The handler contract, once for every path: the fetch step until it names
 * nothing new, then the handler, once. A call still waiting for memory
 * returns 0 with call->pending set and the transport retries it.
 */
static long run_steps(struct cusemu_device *dev, struct cusemu_file *file,
		      const char *name, cusemu_fetch_fn fetch,
		      cusemu_ioctl_fn handler, unsigned int cmd,
		      unsigned long arg)
{
	struct cusemu_call *call = cusemu_call_current();
	long ret;

	if (call) {
		call->step = name;
		if (name)
			call->stats.name = name;
		call->phase = CUSEMU_PHASE_FETCH;
	}
	ret = fetch ? fetch(dev, file, cmd, arg) : 0;
	if (call) {
		if (call->error)
			return call->error;
		if (call->pending)
			return 0;	/* the retry brings the memory */
	}
	if (ret < 0)
		return ret;
	if (call)
		call->phase = CUSEMU_PHASE_RUN;
	return handler(dev, file, cmd, arg);
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

static long run_row(struct cusemu_device *dev, struct cusemu_file *file,
		    const struct cusemu_ioctl *row, unsigned int cmd,
		    unsigned long arg)
{
	return run_steps(dev, file, row->name, row_fetch(row), row->handler,
			 cmd, arg);
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
	if (!row && !dev->model->compat_ptr_ioctl)
		return -ENOIOCTLCMD;
	if (row && row->handler)
		return run_row(dev, file, row, cmd, arg);
	/* Compatible layout: the native handler, with a widened pointer. */
	row = cusemu_ioctl_lookup(dev->model->native_table, cmd);
	if (!row)
		return -ENOIOCTLCMD;
	return run_row(dev, file, row, cmd,
		       cusemu_compat_ptr((uint32_t)arg));
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

static void check_tables(const struct cusemu_device_model *m)
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

static bool has_hand_methods(const struct cusemu_device_model *m)
{
	return m->ioctl || m->unlocked_ioctl || m->compat_ioctl ||
	       m->ioctl_native || m->ioctl_compat;
}

/*
 * Can the kernel copy every payload by the _IOC bits alone? Rows whose
 * handler chases pointers cannot, nor rows that take arg as a value while
 * their command says "pointer to data" (RTC_IRQP_SET's kind).
 */
static bool row_restricted(const struct cusemu_ioctl *row)
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
	if (has_hand_methods(m) || !m->native_table)
		return false;
	for (const struct cusemu_ioctl *row = m->native_table; row->name; row++)
		if (!row_restricted(row))
			return false;
	/* A compatible row's native row was checked above. */
	for (const struct cusemu_ioctl *row = m->compat_table; row && row->name;
	     row++)
		if (row->handler && !row_restricted(row))
			return false;
	return true;
}

/*
 * On a FUSE file the kernel copies what the _IOC bits describe, whatever
 * the row says: a row that takes arg as a value is served too unless the
 * kernel would read from it as an address first (_IOC_WRITE).
 */
static bool row_fits_fuse(const struct cusemu_ioctl *row)
{
	if (row->payload == CUSEMU_PAYLOAD_NONE)
		return !(_IOC_DIR(row->cmd) & _IOC_WRITE) ||
		       !_IOC_SIZE(row->cmd);
	return row_restricted(row);
}

int cusemu_dispatch_fuse_gaps(const struct cusemu_device_model *m,
			      GString *names)
{
	int gaps = 0;

	if (has_hand_methods(m))
		return -1;
	for (const struct cusemu_ioctl *row = m->native_table; row && row->name;
	     row++) {
		if (row_fits_fuse(row))
			continue;
		g_string_append_printf(names, "%s%s", gaps++ ? ", " : "",
				       row->name);
	}
	for (const struct cusemu_ioctl *row = m->compat_table; row && row->name;
	     row++) {
		if (!row->handler || row_fits_fuse(row))
			continue;
		g_string_append_printf(names, "%s%s (32-bit)",
				       gaps++ ? ", " : "", row->name);
	}
	return gaps;
}

/*
 * What the kernel's VFS answers itself for a regular file (fs/ioctl.c:
 * do_vfs_ioctl, file_ioctl, and compat_sys_ioctl for 32-bit callers),
 * as of Linux 6.18. Five of them it answers for device nodes too.
 */
static const struct {
	unsigned int cmd;
	const char *name;
	bool any_file;
} vfs_commands[] = {
	{ FIOCLEX, "FIOCLEX", true },
	{ FIONCLEX, "FIONCLEX", true },
	{ FIONBIO, "FIONBIO", true },
	{ FIOASYNC, "FIOASYNC", true },
	{ FIOQSIZE, "FIOQSIZE", true },
	{ FIONREAD, "FIONREAD", false },
	{ FIBMAP, "FIBMAP", false },
	{ FIGETBSZ, "FIGETBSZ", false },
	{ FIFREEZE, "FIFREEZE", false },
	{ FITHAW, "FITHAW", false },
	{ FICLONE, "FICLONE", false },
	{ FICLONERANGE, "FICLONERANGE", false },
	{ FIDEDUPERANGE, "FIDEDUPERANGE", false },
	{ FS_IOC_FIEMAP, "FS_IOC_FIEMAP", false },
	{ FS_IOC_GETFLAGS, "FS_IOC_GETFLAGS", false },
	{ FS_IOC_SETFLAGS, "FS_IOC_SETFLAGS", false },
	{ _IOR('f', 1, int), "FS_IOC32_GETFLAGS", false },
	{ _IOW('f', 2, int), "FS_IOC32_SETFLAGS", false },
	{ FS_IOC_FSGETXATTR, "FS_IOC_FSGETXATTR", false },
	{ FS_IOC_FSSETXATTR, "FS_IOC_FSSETXATTR", false },
	/* struct space_resv: 48 bytes, 44 packed for i386 callers */
	{ _IOC(_IOC_WRITE, 'X', 40, 48), "FS_IOC_RESVSP", false },
	{ _IOC(_IOC_WRITE, 'X', 42, 48), "FS_IOC_RESVSP64", false },
	{ _IOC(_IOC_WRITE, 'X', 41, 48), "FS_IOC_UNRESVSP", false },
	{ _IOC(_IOC_WRITE, 'X', 43, 48), "FS_IOC_UNRESVSP64", false },
	{ _IOC(_IOC_WRITE, 'X', 57, 48), "FS_IOC_ZERO_RANGE", false },
	{ _IOC(_IOC_WRITE, 'X', 40, 44), "FS_IOC_RESVSP_32", false },
	{ _IOC(_IOC_WRITE, 'X', 42, 44), "FS_IOC_RESVSP64_32", false },
	{ _IOC(_IOC_WRITE, 'X', 41, 44), "FS_IOC_UNRESVSP_32", false },
	{ _IOC(_IOC_WRITE, 'X', 43, 44), "FS_IOC_UNRESVSP64_32", false },
	{ _IOC(_IOC_WRITE, 'X', 57, 44), "FS_IOC_ZERO_RANGE_32", false },
	/* struct fsuuid2 (17 bytes), struct fs_sysfs_path (129) */
	{ _IOC(_IOC_READ, 0x15, 0, 17), "FS_IOC_GETFSUUID", false },
	{ _IOC(_IOC_READ, 0x15, 1, 129), "FS_IOC_GETFSSYSFSPATH", false },
};

const char *cusemu_vfs_command(unsigned int cmd, bool regular_file)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(vfs_commands); i++)
		if (vfs_commands[i].cmd == cmd &&
		    (regular_file || vfs_commands[i].any_file))
			return vfs_commands[i].name;
	return NULL;
}

/* The method for bit, by hand or from the tables, if the instance has it. */
static cusemu_ioctl_fn method(const struct cusemu_device *dev,
			      enum cusemu_method bit, cusemu_ioctl_fn by_hand,
			      cusemu_ioctl_fn from_table)
{
	if (!(cusemu_instance(dev)->methods & bit))
		return NULL;
	return has_hand_methods(dev->model) ? by_hand : from_table;
}

static void bind_methods(struct cusemu_device *dev, enum cusemu_lock_mode mode)
{
	const struct cusemu_device_model *m = dev->model;
	struct cusemu_instance *dp = cusemu_instance(dev);
	cusemu_ioctl_fn native = m->native_table ? table_native_ioctl : NULL;
	cusemu_ioctl_fn compat = m->compat_table || m->compat_ptr_ioctl
					 ? table_compat_ioctl
					 : NULL;

	check_tables(m);
	dp->ioctl = method(dev, CUSEMU_METHOD_IOCTL, m->ioctl, native);
	dp->unlocked_ioctl = method(dev, CUSEMU_METHOD_UNLOCKED_IOCTL,
				    m->unlocked_ioctl, native);
	dp->compat_ioctl = method(dev, CUSEMU_METHOD_COMPAT_IOCTL,
				  m->compat_ioctl, compat);
	dp->ioctl_native = method(dev, CUSEMU_METHOD_IOCTL_NATIVE,
				  m->ioctl_native, native);
	dp->ioctl_compat = method(dev, CUSEMU_METHOD_IOCTL_COMPAT,
				  m->ioctl_compat, compat);

	dp->restricted = cusemu_dispatch_restricted(m);
	dp->lock_mode = mode;
	dp->lock = NULL;
	if (mode == CUSEMU_LOCK_DEVICE) {
		dp->lock = g_new0(struct cusemu_lock, 1);
		cusemu_lock_init(dp->lock);
	}
}

void cusemu_dispatch_bind(struct cusemu_device *dev,
			  enum cusemu_lock_mode mode)
{
	bind_methods(dev, mode);
	if (cusemu_instance(dev)->kmodel->global_table)
		cusemu_ioctl32_register_device(dev);
}

static void unbind_lock(struct cusemu_device *dev)
{
	struct cusemu_instance *dp = cusemu_instance(dev);

	if (dp->lock) {
		cusemu_lock_clear(dp->lock);
		g_free(dp->lock);
	}
	dp->lock = NULL;
}

gboolean cusemu_dispatch_bind_added(struct cusemu_device *dev,
				    enum cusemu_lock_mode mode, GError **error)
{
	bind_methods(dev, mode);
	if (!cusemu_instance(dev)->kmodel->global_table ||
	    cusemu_ioctl32_add_device(dev, error))
		return TRUE;
	unbind_lock(dev);
	return FALSE;
}

void cusemu_dispatch_unplug(struct cusemu_device *dev)
{
	if (cusemu_instance(dev)->kmodel->global_table)
		cusemu_ioctl32_remove_device(dev);
}

void cusemu_dispatch_unbind(struct cusemu_device *dev)
{
	struct cusemu_instance *dp = cusemu_instance(dev);

	if (dp->kmodel->global_table)
		cusemu_ioctl32_unregister_device(dev);
	unbind_lock(dev);
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

	switch (dp->lock_mode) {
	case CUSEMU_LOCK_MODEL:
		return big_lock ? &cusemu_big_lock : NULL;
	case CUSEMU_LOCK_GLOBAL:
		return &cusemu_big_lock;
	case CUSEMU_LOCK_DEVICE:
		return dp->lock;
	case CUSEMU_LOCK_NONE:
		break;
	}
	return NULL;
}

static long call_method(struct cusemu_call *call, cusemu_ioctl_fn fn,
			enum cusemu_method how, bool big_lock)
{
	struct cusemu_lock *lock = lock_for(call, big_lock);
	long ret;

	call->method = how;
	if (lock)
		cusemu_lock_acquire(lock);
	if (has_hand_methods(call->dev->model))
		ret = run_steps(call->dev, call->file, NULL,
				call->dev->model->ioctl_fetch ?: cusemu_fetch_ioc,
				fn, call->cmd, call->arg);
	else	/* built from the tables: the rows have their steps */
		ret = fn(call->dev, call->file, call->cmd, call->arg);
	if (lock)
		cusemu_lock_release(lock);
	return ret;
}

long cusemu_dispatch_run_row(struct cusemu_call *call,
			     const struct cusemu_ioctl *row,
			     enum cusemu_method how, bool big_lock)
{
	struct cusemu_lock *lock = lock_for(call, big_lock);
	long ret;

	call->method = how;
	if (lock)
		cusemu_lock_acquire(lock);
	ret = run_row(call->dev, call->file, row, call->cmd, call->arg);
	if (lock)
		cusemu_lock_release(lock);
	return ret;
}

/* "Not mine" from a method becomes what the generation returned. */
static long not_mine(long ret, long err)
{
	return ret == -ENOIOCTLCMD ? err : ret;
}

/* 2.6.10's sys_ioctl: the legacy method under the big lock. */
static long legacy_native(struct cusemu_call *call)
{
	cusemu_ioctl_fn fn = cusemu_instance(call->dev)->ioctl;

	if (!fn)
		return -ENOTTY;
	return not_mine(call_method(call, fn, CUSEMU_METHOD_IOCTL, true),
			-ENOTTY);
}

static long k2610_dispatch(struct cusemu_call *call)
{
	if (!call->compat)
		return legacy_native(call);
	return not_mine(cusemu_ioctl32_dispatch(call, legacy_native, true),
			-EINVAL);
}

/* The patch in seeds/: unlocked_ioctl without the lock when there is one. */
static long unlocked_native(struct cusemu_call *call)
{
	cusemu_ioctl_fn fn = cusemu_instance(call->dev)->unlocked_ioctl;

	if (!fn)
		return legacy_native(call);
	return not_mine(call_method(call, fn, CUSEMU_METHOD_UNLOCKED_IOCTL,
				    false),
			-ENOTTY);
}

static long unlocked_dispatch(struct cusemu_call *call)
{
	if (!call->compat)
		return unlocked_native(call);
	return not_mine(cusemu_ioctl32_dispatch(call, unlocked_native, true),
			-EINVAL);
}

/*
 * The article's proposal: ioctl_native and ioctl_compat, no lock, no table;
 * a device without them is served as by 2.6.10.
 */
static long split_native(struct cusemu_call *call)
{
	cusemu_ioctl_fn fn = cusemu_instance(call->dev)->ioctl_native;

	if (!fn)
		return legacy_native(call);
	return not_mine(call_method(call, fn, CUSEMU_METHOD_IOCTL_NATIVE,
				    false),
			-ENOTTY);
}

static long split_dispatch(struct cusemu_call *call)
{
	cusemu_ioctl_fn fn = cusemu_instance(call->dev)->ioctl_compat;
	long ret;

	if (!call->compat)
		return split_native(call);
	if (fn) {
		ret = call_method(call, fn, CUSEMU_METHOD_IOCTL_COMPAT, false);
		if (ret != -ENOIOCTLCMD)
			return ret;
	}
	return not_mine(cusemu_ioctl32_dispatch(call, split_native, true),
			-EINVAL);
}

/* What was merged: unlocked_ioctl or ioctl; compat_ioctl, then the table. */
static long k2611_native(struct cusemu_call *call)
{
	struct cusemu_instance *dp = cusemu_instance(call->dev);
	long ret = -ENOTTY;

	if (dp->unlocked_ioctl)
		ret = call_method(call, dp->unlocked_ioctl,
				  CUSEMU_METHOD_UNLOCKED_IOCTL, false);
	else if (dp->ioctl)
		ret = call_method(call, dp->ioctl, CUSEMU_METHOD_IOCTL, true);
	return not_mine(ret, -EINVAL);
}

static long k2611_dispatch(struct cusemu_call *call)
{
	cusemu_ioctl_fn fn = cusemu_instance(call->dev)->compat_ioctl;
	long ret;

	if (!call->compat)
		return k2611_native(call);
	if (fn) {
		ret = call_method(call, fn, CUSEMU_METHOD_COMPAT_IOCTL, false);
		if (ret != -ENOIOCTLCMD)
			return ret;
	}
	return not_mine(cusemu_ioctl32_dispatch(call, k2611_native, true),
			-EINVAL);
}

/*
 * Today's kernels: unlocked_ioctl for native callers, compat_ioctl for
 * 32-bit ones, no global table, no big lock; "not mine" is -ENOTTY.
 */
static long modern_dispatch(struct cusemu_call *call)
{
	struct cusemu_instance *dp = cusemu_instance(call->dev);
	cusemu_ioctl_fn fn = call->compat ? dp->compat_ioctl
					  : dp->unlocked_ioctl;
	enum cusemu_method how = call->compat ? CUSEMU_METHOD_COMPAT_IOCTL
					      : CUSEMU_METHOD_UNLOCKED_IOCTL;

	if (!fn)
		return -ENOTTY;
	return not_mine(call_method(call, fn, how, false), -ENOTTY);
}

static const struct cusemu_kernel_model models[] = {
	{
		.name = "2.6.10",
		.summary = "legacy ioctl under the big lock; 32-bit: the "
			   "global ioctl32 table, unknown commands EINVAL",
		.dispatch = k2610_dispatch,
		.global_table = true,
	},
	{
		.name = "unlocked",
		.summary = "the unlocked_ioctl patch: unlocked_ioctl without "
			   "the lock, else ioctl under it; 32-bit as 2.6.10",
		.dispatch = unlocked_dispatch,
		.global_table = true,
	},
	{
		.name = "split",
		.summary = "ioctl_native and ioctl_compat, no lock; the global "
			   "table only as a fallback",
		.dispatch = split_dispatch,
		.global_table = true,
	},
	{
		.name = "2.6.11",
		.summary = "unlocked_ioctl or ioctl (locked), not mine: EINVAL; "
			   "compat_ioctl, then the global table",
		.dispatch = k2611_dispatch,
		.global_table = true,
	},
	{
		.name = "modern",
		.summary = "unlocked_ioctl and compat_ioctl, no global table, "
			   "no big lock; unknown commands: ENOTTY",
		.dispatch = modern_dispatch,
	},
};

const struct cusemu_kernel_model *const cusemu_kernel_models[] = {
	&models[0], &models[1], &models[2], &models[3], &models[4], NULL,
};

const struct cusemu_kernel_model *cusemu_kernel_model_find(const char *name)
{
	for (unsigned int i = 0; cusemu_kernel_models[i]; i++)
		if (!strcmp(cusemu_kernel_models[i]->name, name))
			return cusemu_kernel_models[i];
	return NULL;
}

/*
 * A 32-bit caller's command that no compat row serves, while a native row
 * has its type, number and direction with another size: the payload's
 * layout differs between the ABIs (a long, a pointer, a __u64 that i386
 * aligns to 4) and the model lacks the translation, or marked the command
 * compatible. The caller only sees ENOTTY or EINVAL; the log says why,
 * once per model and command, for the first HINTS_MAX of them (a client
 * can make up sizes without end).
 */
#define HINTS_MAX 256

static void compat_size_hint(const struct cusemu_call *call)
{
	static GMutex lock;
	static GHashTable *said;
	const struct cusemu_device_model *m = call->dev->model;
	const struct cusemu_ioctl *row, *same = NULL;
	unsigned int cmd = call->cmd;
	const char *origin;
	char *key;
	bool first;

	row = cusemu_ioctl_lookup(m->compat_table, cmd);
	if ((row && row->handler) ||
	    ((row || m->compat_ptr_ioctl) &&
	     cusemu_ioctl_lookup(m->native_table, cmd)))
		return;		/* served: the answer is the handler's */
	for (row = m->native_table; row && row->name && !same; row++)
		if (_IOC_TYPE(row->cmd) == _IOC_TYPE(cmd) &&
		    _IOC_NR(row->cmd) == _IOC_NR(cmd) &&
		    _IOC_DIR(row->cmd) == _IOC_DIR(cmd) &&
		    _IOC_SIZE(row->cmd) != _IOC_SIZE(cmd))
			same = row;
	if (!same)
		return;
	key = g_strdup_printf("%s/%08x", m->name, cmd);
	g_mutex_lock(&lock);
	if (!said)
		said = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					     NULL);
	if (g_hash_table_size(said) < HINTS_MAX) {
		first = g_hash_table_add(said, key);	/* takes key */
	} else {
		first = false;
		g_free(key);
	}
	g_mutex_unlock(&lock);
	if (!first)
		return;
	/* --model takes a plugin's model by its file, a built-in by name. */
	origin = cusemu_plugin_origin(m);
	g_message("/dev/%s (%s): a 32-bit caller's %08x has no compat "
		  "row, but native %s (%08x) has its type, number and "
		  "direction with %u bytes against the caller's %u: the "
		  "payload's layout differs between the ABIs; run "
		  "cusemu-abicheck --model %s on the model's header",
		  call->dev->name, m->name, cmd, same->name, same->cmd,
		  _IOC_SIZE(same->cmd), _IOC_SIZE(cmd),
		  origin ? origin : m->name);
}

long cusemu_dispatch(struct cusemu_call *call)
{
	long ret;

	/* The transport made it the current request's call. */
	g_return_val_if_fail(cusemu_call_current() == call, -EIO);
	ret = cusemu_instance(call->dev)->kmodel->dispatch(call);
	if (call->compat && (ret == -ENOTTY || ret == -EINVAL))
		compat_size_hint(call);
	return ret;
}
