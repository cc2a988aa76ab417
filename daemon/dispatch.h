/* SPDX-License-Identifier: MIT */
/*
 * The dispatcher: a kernel model picks the method and the table for a call,
 * and the lock stage decides what is held around the handler.
 */
#ifndef CUSEMU_DISPATCH_H
#define CUSEMU_DISPATCH_H

#include <stdbool.h>

#include "call.h"

struct cusemu_kernel_model {
	const char *name;
	const char *summary;
	/* Run the call through the device's methods; returns the result. */
	long (*dispatch)(struct cusemu_call *call);
	/* Devices register their compat rows in the global ioctl32 table. */
	bool global_table;
};

#define CUSEMU_DEFAULT_KERNEL_MODEL "modern"

extern const struct cusemu_kernel_model *const cusemu_kernel_models[];
const struct cusemu_kernel_model *cusemu_kernel_model_find(const char *name);

/* --lock: who is serialised around handlers. */
enum cusemu_lock_mode {
	CUSEMU_LOCK_MODEL,	/* what the kernel model prescribes */
	CUSEMU_LOCK_GLOBAL,	/* one lock around every handler */
	CUSEMU_LOCK_DEVICE,	/* one lock per device */
	CUSEMU_LOCK_NONE,
};

bool cusemu_lock_mode_parse(const char *s, enum cusemu_lock_mode *mode);
const char *cusemu_lock_mode_name(enum cusemu_lock_mode mode);

/* Give a device its methods (from its tables where the model left them
 * NULL) and its lock under the given mode. */
void cusemu_dispatch_bind(struct cusemu_device *dev,
			  enum cusemu_lock_mode mode);
void cusemu_dispatch_unbind(struct cusemu_device *dev);
/*
 * The same for a device added at run time (cusemuctl add): its entries in
 * the global ioctl32 table all or none (FALSE, and nothing bound, when one
 * is another model's).
 */
gboolean cusemu_dispatch_bind_added(struct cusemu_device *dev,
				    enum cusemu_lock_mode mode, GError **error);
/*
 * First step of a removal at run time (cusemuctl remove), while the node
 * still serves: the device's entries leave the global ioctl32 table with
 * 2.6.11's semantics, once the 32-bit calls running through it are done.
 * cusemu_dispatch_unbind() follows once no request is inside the device.
 */
void cusemu_dispatch_unplug(struct cusemu_device *dev);

/*
 * True when every command of the model is correctly _IOC-encoded with no
 * pointer inside, so that the kernel can copy its payloads (CUSE's
 * restricted ioctls: one request per ioctl instead of two). Derived from
 * the tables; a model with hand-written methods never is.
 */
bool cusemu_dispatch_restricted(const struct cusemu_device_model *m);

/*
 * The commands of m that need more than their _IOC payload, so cannot
 * serve on a FUSE file: their names appended to names (", " between),
 * and their count; -1 for hand-written methods, which tables do not tell.
 */
int cusemu_dispatch_fuse_gaps(const struct cusemu_device_model *m,
			      GString *names);

/* The kernel name of cmd if the VFS answers it itself, for a regular
 * file (a FUSE mount's) or for every file; else NULL. */
const char *cusemu_vfs_command(unsigned int cmd, bool regular_file);

/* Serve one call: the result, or anything with call->pending set. */
long cusemu_dispatch(struct cusemu_call *call);

/* Run a table row (fetching an _IOC payload) with the lock the model
 * prescribes (big_lock) or --lock imposes; for the ioctl32 table. */
long cusemu_dispatch_run_row(struct cusemu_call *call,
			     const struct cusemu_ioctl *row,
			     enum cusemu_method how, bool big_lock);

/* The table row for cmd, or NULL. */
const struct cusemu_ioctl *cusemu_ioctl_lookup(const struct cusemu_ioctl *table,
					       unsigned int cmd);

/*
 * The name of the call's command: the row the dispatcher ran
 * (call->stats.name), else the row of the caller's table, else of the
 * other one; NULL when no table has it.
 */
const char *cusemu_call_command_name(const struct cusemu_call *call);

#endif
