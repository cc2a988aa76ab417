/* SPDX-License-Identifier: MIT */
/*
 * How a handler runs: its row in the model's tables, the fetch and run
 * steps of the handler contract, and the lock held around them. Kernel
 * models (kmodel.h) choose the method; this runs it.
 */
#ifndef CUSEMU_HANDLER_H
#define CUSEMU_HANDLER_H

#include <stdbool.h>

#include <glib.h>

#include "call.h"

/*
 * Where a row's handler is, for a warning: appended to out as " symbol+
 * 0x0/0xsize [module] file:line". The daemon's own rows are found by
 * their handler's address; a locator set here finds those whose handler
 * runs elsewhere (a model host's), and returns false for the others.
 * row is NULL for a model written by hand: where its methods are.
 */
typedef bool (*cusemu_row_locator)(const struct cusemu_device_model *m,
				   const struct cusemu_ioctl *row,
				   GString *out);
void cusemu_handler_set_locator(cusemu_row_locator locate);

/* The model gives methods by hand instead of tables. */
bool cusemu_model_by_hand(const struct cusemu_device_model *m);
/* Say (g_critical) where the model's tables break their rules. */
void cusemu_table_check(const struct cusemu_device_model *m);

/*
 * True when every command of the model is correctly _IOC-encoded with no
 * pointer inside, so that the kernel can copy its payloads (CUSE's
 * restricted ioctls: one request per ioctl instead of two). Derived from
 * the tables; a model with hand-written methods never is.
 */
bool cusemu_dispatch_restricted(const struct cusemu_device_model *m);

/*
 * Whether the user memory of a row is all that its command's _IOC bits
 * describe, so that the kernel can copy it.
 */
bool cusemu_row_restricted(const struct cusemu_ioctl *row);

/* --lock: who is serialised around handlers. */
enum cusemu_lock_mode {
	CUSEMU_LOCK_MODEL,	/* what the kernel model prescribes */
	CUSEMU_LOCK_GLOBAL,	/* one lock around every handler */
	CUSEMU_LOCK_DEVICE,	/* one lock per device */
	CUSEMU_LOCK_NONE,
};

bool cusemu_lock_mode_parse(const char *s, enum cusemu_lock_mode *mode);
const char *cusemu_lock_mode_name(enum cusemu_lock_mode mode);

/* Whether method how serves 32-bit callers (reads the compat table). */
static inline bool cusemu_method_compat(enum cusemu_method how)
{
	return how & (CUSEMU_METHOD_COMPAT_IOCTL | CUSEMU_METHOD_IOCTL_COMPAT);
}

/*
 * Run the call's method how with the lock the kernel model prescribes
 * (big_lock) or --lock imposes: fn, one written by hand, with the model's
 * fetch step first; row, one row of the tables (the ioctl32 table's);
 * with neither, the method built from the tables, which runs the row of
 * the call's command (a compatible compat row, or compat_ptr_ioctl, runs
 * the native row with a widened pointer), its fetch step first, and
 * returns -ENOIOCTLCMD for a command without a row.
 */
long cusemu_handler_run(struct cusemu_call *call, cusemu_ioctl_fn fn,
			const struct cusemu_ioctl *row, enum cusemu_method how,
			bool big_lock);

#endif
