/* SPDX-License-Identifier: MIT */
/*
 * The dispatcher: a device bound to its methods, its lock and the global
 * ioctl32 table, and each call led down the path its kernel model
 * (kmodel.h, a descriptor of models/) describes to the handler
 * (handler.c).
 */
#define G_LOG_DOMAIN "cusemu-dispatch"

#include <sys/ioctl.h>

#include <linux/fiemap.h>
#include <linux/fs.h>

#include <glib.h>

#include "device.h"
#include "dispatch.h"
#include "ioctl32.h"
#include "lock.h"
#include "request.h"

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

/* The method for bit written by hand, if the instance has it. */
static cusemu_ioctl_fn method(const struct cusemu_device *dev,
			      enum cusemu_method bit, cusemu_ioctl_fn by_hand)
{
	if (!(cusemu_instance(dev)->dispatch.methods & bit))
		return NULL;
	return by_hand;
}

/*
 * A model written by hand has the methods it gives; one built from its
 * tables has those its tables make (has_method()), which the
 * dispatcher runs without a function of their own: the slots stay NULL.
 */
static void bind_methods(struct cusemu_device *dev, enum cusemu_lock_mode mode)
{
	const struct cusemu_device_model *m = dev->model;
	struct cusemu_instance *dp = cusemu_instance(dev);
	struct cusemu_dispatch_part *d = &dp->dispatch;

	cusemu_table_check(m);
	d->ioctl = method(dev, CUSEMU_METHOD_IOCTL, m->ioctl);
	d->unlocked_ioctl = method(dev, CUSEMU_METHOD_UNLOCKED_IOCTL,
				   m->unlocked_ioctl);
	d->compat_ioctl = method(dev, CUSEMU_METHOD_COMPAT_IOCTL,
				 m->compat_ioctl);
	d->ioctl_native = method(dev, CUSEMU_METHOD_IOCTL_NATIVE,
				 m->ioctl_native);
	d->ioctl_compat = method(dev, CUSEMU_METHOD_IOCTL_COMPAT,
				 m->ioctl_compat);

	dp->dispatch.restricted = cusemu_dispatch_restricted(m);
	d->lock_mode = mode;
	d->lock = NULL;
	if (mode == CUSEMU_LOCK_DEVICE) {
		d->lock = g_new0(struct cusemu_lock, 1);
		cusemu_lock_init(d->lock);
	}
}

void cusemu_dispatch_bind(struct cusemu_device *dev,
			  enum cusemu_lock_mode mode)
{
	bind_methods(dev, mode);
	if (cusemu_instance(dev)->dispatch.kmodel->global_table)
		cusemu_ioctl32_register_device(dev);
}

static void unbind_lock(struct cusemu_device *dev)
{
	struct cusemu_instance *dp = cusemu_instance(dev);

	if (dp->dispatch.lock) {
		cusemu_lock_clear(dp->dispatch.lock);
		g_free(dp->dispatch.lock);
	}
	dp->dispatch.lock = NULL;
}

gboolean cusemu_dispatch_bind_added(struct cusemu_device *dev,
				    enum cusemu_lock_mode mode, GError **error)
{
	bind_methods(dev, mode);
	if (!cusemu_instance(dev)->dispatch.kmodel->global_table ||
	    cusemu_ioctl32_add_device(dev, error))
		return TRUE;
	unbind_lock(dev);
	return FALSE;
}

void cusemu_dispatch_unplug(struct cusemu_device *dev)
{
	if (cusemu_instance(dev)->dispatch.kmodel->global_table)
		cusemu_ioctl32_remove_device(dev);
}

void cusemu_dispatch_unbind(struct cusemu_device *dev)
{
	struct cusemu_instance *dp = cusemu_instance(dev);

	if (dp->dispatch.kmodel->global_table)
		cusemu_ioctl32_unregister_device(dev);
	unbind_lock(dev);
}

/* "Not mine" from a method becomes what the generation returned. */
static long not_mine(long ret, long err)
{
	return ret == -ENOIOCTLCMD ? err : ret;
}

/*
 * Whether the call's device has method bit: one written by hand, returned
 * in *fn, or one its tables make (*fn NULL): a native method when it has
 * a native table, a compat one when it has a compat table or
 * compat_ptr_ioctl.
 */
static bool has_method(const struct cusemu_call *call, enum cusemu_method bit,
		       cusemu_ioctl_fn *fn)
{
	const struct cusemu_device_model *m = call->dev->model;
	const struct cusemu_dispatch_part *d =
		&cusemu_instance(call->dev)->dispatch;

	*fn = NULL;
	if (cusemu_model_by_hand(m)) {
		switch (bit) {
		case CUSEMU_METHOD_IOCTL:
			*fn = d->ioctl;
			break;
		case CUSEMU_METHOD_UNLOCKED_IOCTL:
			*fn = d->unlocked_ioctl;
			break;
		case CUSEMU_METHOD_COMPAT_IOCTL:
			*fn = d->compat_ioctl;
			break;
		case CUSEMU_METHOD_IOCTL_NATIVE:
			*fn = d->ioctl_native;
			break;
		case CUSEMU_METHOD_IOCTL_COMPAT:
			*fn = d->ioctl_compat;
			break;
		case CUSEMU_METHOD_IOCTL32_HANDLER:
			break;
		}
		return *fn;
	}
	if (!bit || !(d->methods & bit))
		return false;
	if (cusemu_method_compat(bit))
		return m->compat_table || m->compat_ptr_ioctl;
	return m->native_table;
}

/* A native caller's step: the first method of the model's list the device
 * has, or NULL. */
static const struct cusemu_kernel_step *
native_step(const struct cusemu_call *call, cusemu_ioctl_fn *fn)
{
	const struct cusemu_kernel_model *km =
		cusemu_instance(call->dev)->dispatch.kmodel;

	for (unsigned int i = 0; i < G_N_ELEMENTS(km->native); i++)
		if (has_method(call, km->native[i].method, fn))
			return &km->native[i];
	return NULL;
}

/*
 * A native caller: the method native_step() chose; "not mine" becomes
 * what the generation returned. The global ioctl32 table's compatible
 * commands come here; cusemu_dispatch() does the same in its own body.
 */
static long native_path(struct cusemu_call *call)
{
	const struct cusemu_kernel_step *s;
	cusemu_ioctl_fn fn;

	s = native_step(call, &fn);
	if (!s)
		return -ENOTTY;
	return not_mine(cusemu_handler_run(call, fn, NULL, s->method,
					   s->big_lock),
			-cusemu_instance(call->dev)->dispatch.kmodel->native_not_mine);
}

/*
 * A 32-bit caller's command that no compat row serves, while a native row
 * has its type, number and direction with another size. If the number is
 * that command's i386 one, the payload's layout differs between the ABIs
 * (a long, a pointer, a __u64 that i386 aligns to 4) and the model lacks
 * the translation, or marked the command compatible. The daemon has no
 * header to tell, so the hint says it as a condition, and only for a size
 * an i386 layout of that payload can have: more than none and less than
 * x86_64's (i386 makes no member larger, nor aligns one further), and
 * while no compat row has that command already (its i386 number is then
 * that row's, and the caller's is made up). The caller only sees ENOTTY
 * or EINVAL; the log says why, once per model and command, for the first
 * HINTS_MAX of them (a client can make up sizes without end).
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
	if (!same || !_IOC_SIZE(cmd) || _IOC_SIZE(cmd) >= _IOC_SIZE(same->cmd))
		return;
	for (row = m->compat_table; row && row->name; row++)
		if (_IOC_TYPE(row->cmd) == _IOC_TYPE(cmd) &&
		    _IOC_NR(row->cmd) == _IOC_NR(cmd) &&
		    _IOC_DIR(row->cmd) == _IOC_DIR(cmd) &&
		    _IOC_SIZE(row->cmd) != _IOC_SIZE(same->cmd))
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
	origin = cusemu_model_origin(m);
	g_message("/dev/%s (%s): a 32-bit caller's %08x has no compat "
		  "row, but native %s (%08x) has its type, number and "
		  "direction with %u bytes against the caller's %u: if that "
		  "is %s's i386 number, its payload's layout differs between "
		  "the ABIs and the model lacks the translation (or marked "
		  "the command compatible); run cusemu-abicheck --model %s "
		  "on the model's header, which tells",
		  call->dev->name, m->name, cmd, same->name, same->cmd,
		  _IOC_SIZE(same->cmd), _IOC_SIZE(cmd), same->name,
		  origin ? origin : m->name);
}

/*
 * Each path in this body, not in functions of its own: from here the
 * method is one call away and its handler two (docs/README.md, "The path
 * of an ioctl").
 */
long cusemu_dispatch(struct cusemu_call *call)
{
	const struct cusemu_kernel_model *km =
		cusemu_instance(call->dev)->dispatch.kmodel;
	const struct cusemu_kernel_step *s;
	cusemu_ioctl_fn fn;
	long ret;

	/* The transport made it the current request's call. */
	g_return_val_if_fail(cusemu_call_current() == call, -EIO);
	if (!call->compat) {
		s = native_step(call, &fn);
		if (!s)
			return -ENOTTY;
		return not_mine(cusemu_handler_run(call, fn, NULL, s->method,
						   s->big_lock),
				-km->native_not_mine);
	}
	/* A 32-bit caller: the compat method, then the global table if any. */
	s = &km->compat;
	ret = -ENOIOCTLCMD;
	if (has_method(call, s->method, &fn))
		ret = cusemu_handler_run(call, fn, NULL, s->method,
					 s->big_lock);
	if (ret == -ENOIOCTLCMD)
		ret = km->global_table
			      ? not_mine(cusemu_ioctl32_dispatch(call, native_path,
								 true),
					 -EINVAL)
			      : -ENOTTY;
	if (ret == -ENOTTY || ret == -EINVAL)
		compat_size_hint(call);
	return ret;
}
