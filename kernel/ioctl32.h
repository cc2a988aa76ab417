/* SPDX-License-Identifier: MIT */
/*
 * The global ioctl32 conversion table of Linux up to 2.6.11: one command
 * space for every device, filled with register_ioctl32_conversion(). Its
 * flaws are kept visible: duplicates are refused at start-up and a 32-bit
 * command nobody registered fails with EINVAL and a log line.
 */
#ifndef CUSEMU_IOCTL32_H
#define CUSEMU_IOCTL32_H

#include <glib.h>

#include "call.h"

/*
 * register_ioctl32_conversion() of a compat table row: -EINVAL, with the
 * kernel's log line, when its command is taken. A row without handler is
 * "compatible": the native path serves it.
 */
int cusemu_ioctl32_register(const struct cusemu_ioctl *row,
			    const struct cusemu_device *owner);
/* unregister_ioctl32_conversion(): -EINVAL and a log line when unknown. */
int cusemu_ioctl32_unregister(unsigned int cmd,
			      const struct cusemu_device *owner);

/*
 * Register the compat table of dev's model, once per model: the first
 * instance registers, later ones only take a reference. A command another
 * model holds is lost, and the log says which device lost it to which.
 */
void cusemu_ioctl32_register_device(struct cusemu_device *dev);
void cusemu_ioctl32_unregister_device(struct cusemu_device *dev);

/*
 * At run time (cusemuctl add): dev's entries, all or none, as a module
 * whose init fails: a command another model holds refuses the add, with
 * the kernel's log line and an error naming the device that holds it.
 */
gboolean cusemu_ioctl32_add_device(struct cusemu_device *dev, GError **error);
/*
 * At run time (cusemuctl remove), once dev's model has no other device:
 * unregister_ioctl32_conversion() of each of its entries, waiting for the
 * 32-bit calls running through the table (ioctl32_sem); an entry the model
 * does not hold (lost at start-up) is -EINVAL with the kernel's log line.
 * Returns how many were unknown. A device removed here is not unregistered
 * again by cusemu_ioctl32_unregister_device().
 */
unsigned int cusemu_ioctl32_remove_device(struct cusemu_device *dev);

/*
 * Serve a 32-bit call from the table as compat_sys_ioctl() did: a handler
 * runs under the table's read lock and the big lock; an entry without one
 * goes down native_path; no entry gives -EINVAL and the kernel's log line.
 */
long cusemu_ioctl32_dispatch(struct cusemu_call *call,
			     long (*native_path)(struct cusemu_call *call),
			     bool big_lock);

#endif
