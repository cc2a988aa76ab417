/* SPDX-License-Identifier: MIT */
/*
 * The dispatcher: a device's methods, lock and global-table entries bound,
 * and each call led down its kernel model's path to the handler.
 */
#ifndef CUSEMU_DISPATCH_H
#define CUSEMU_DISPATCH_H

#include <stdbool.h>

#include "call.h"
#include "handler.h"
#include "kmodel.h"

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

/* The kernel name of cmd if the VFS answers it itself, for a regular
 * file (a FUSE mount's) or for every file; else NULL. */
const char *cusemu_vfs_command(unsigned int cmd, bool regular_file);

/* Serve one call: the result, or anything with call->pending set. */
long cusemu_dispatch(struct cusemu_call *call);

#endif
