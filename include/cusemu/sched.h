/* SPDX-License-Identifier: MIT */
/*
 * The big lock and sleeping, for device models. Like the kernel's BKL, the
 * big lock is recursive per thread and let go while its holder sleeps in
 * these helpers (as it was over schedule()), then taken back. So is any
 * other lock --lock puts around a handler. While a handler waits in them,
 * the node's next requests go to other workers; a handler that waits any
 * other way keeps them waiting until it returns.
 */
#ifndef CUSEMU_SCHED_H
#define CUSEMU_SCHED_H

#include <glib.h>

/* lock_kernel()/unlock_kernel(): for drivers that take the big lock
 * themselves. */
void cusemu_lock_kernel(void);
void cusemu_unlock_kernel(void);

/* How deep the current thread holds the big lock: 0 when it does not. */
unsigned int cusemu_kernel_lock_depth(void);

/*
 * Sleep, letting go of every lock the dispatcher holds for this thread.
 * Returns early when the client gives up on the request being served:
 * the handler then sees cusemu_signal_pending() and returns -EINTR.
 */
void cusemu_msleep(unsigned int ms);
void cusemu_usleep(unsigned int us);

/*
 * g_cond_wait_until() on the model's own mutex (held by the caller), with
 * the dispatcher's locks let go for the wait; the model's mutex is taken
 * back before them, so lock order stays dispatcher lock, then model mutex.
 * Returns FALSE when end_time (monotonic) passed.
 */
gboolean cusemu_cond_wait_until(GCond *cond, GMutex *mutex, gint64 end_time);

#endif
