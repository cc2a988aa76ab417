/* SPDX-License-Identifier: MIT */
/*
 * Time, sleeping, waiting and timers for device models.
 *
 * The portable surface (time, sleeps, wait queues, timers) builds in cusemud
 * and in a kernel module that cusemu-kmod(1) writes. In cusemud a wait lets
 * go of every lock the dispatcher holds for the thread (the big lock, or
 * what --lock puts around a handler) and takes them back after, as
 * schedule() let go of the BKL; while a handler waits, the node's next
 * requests go to other workers. A handler that waits any other way keeps
 * them waiting until it returns. Every wait ends early when the client
 * gives up on the request (killed, or a signal): the handler then returns
 * -EINTR, as a driver's interruptible wait does.
 *
 * The big lock, and waits on glib's own types, are the daemon's alone.
 */
#ifndef CUSEMU_SCHED_H
#define CUSEMU_SCHED_H

#include "cusemu/lock.h"

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/wait.h>

struct cusemu_waitq {
	wait_queue_head_t head;
};
#else
#include <stdint.h>

#include <glib.h>

struct cusemu_waitq {
	GCond cond;
};
#endif

/* CLOCK_MONOTONIC, in nanoseconds: ktime_get_ns() in the kernel. */
uint64_t cusemu_time_ns(void);

/* Sleep; returns early when the client gives up on the request being
 * served: the handler then sees cusemu_signal_pending() and returns
 * -EINTR. */
void cusemu_msleep(unsigned int ms);
void cusemu_usleep(unsigned int us);

/*
 * A wait queue, as the kernel's wait_queue_head_t used with a mutex: a
 * thread waits on it for a change of the state its mutex keeps, and the
 * thread that makes the change (holding that mutex) wakes it.
 */
void cusemu_waitq_init(struct cusemu_waitq *q);

/* Wake every thread waiting on q. */
void cusemu_wake_up(struct cusemu_waitq *q);

/*
 * With lock held: let go of it and wait on q until woken, timeout_ms has
 * passed, or the client gives up on the request being served; take lock
 * back. Returns 1 when woken (look at the state again: another thread may
 * have been first), 0 when the time is up, -EINTR when the client gave
 * up. Waits only while serving a request of a client, or in a timer's
 * function; the daemon's other threads (a model's own) use glib's.
 */
int cusemu_wait_timeout(struct cusemu_waitq *q, struct cusemu_mutex *lock,
			unsigned int timeout_ms);

/*
 * A timer, as the kernel's delayed work: its function runs once per
 * cusemu_timer_start(), after the delay, on a thread of its own where it
 * may sleep and take the model's mutex (a work item in the kernel). One
 * call of the function at a time; it may start its timer again. No
 * client is being served there: user memory cannot be reached, and
 * waits do not end early.
 */
struct cusemu_timer;
typedef void (*cusemu_timer_fn)(void *data);

/* A timer that calls fn(data), stopped; NULL when out of memory (or,
 * in cusemud, out of threads: each timer has one, named cusemu-timer). */
struct cusemu_timer *cusemu_timer_new(cusemu_timer_fn fn, void *data);

/* Run the function once, delay_ns from now: instead of any run that is
 * still to come; a run under way goes on. */
void cusemu_timer_start(struct cusemu_timer *timer, uint64_t delay_ns);

/*
 * No run to come, and none under way when it returns (unless called from
 * the function itself, which then only cancels what is to come). Starts
 * made meanwhile, from the function, are dropped.
 */
void cusemu_timer_stop(struct cusemu_timer *timer);

/* Stop it (as above) and free it; NULL is ignored. */
void cusemu_timer_free(struct cusemu_timer *timer);

#ifndef __KERNEL__
/* lock_kernel()/unlock_kernel(): for drivers that take the big lock
 * themselves. Like the kernel's BKL, it is recursive per thread. A call
 * that returns still holding it is reported and the lock let go. The
 * kernel has had no big lock since 2.6.39: not portable. */
void cusemu_lock_kernel(void);
void cusemu_unlock_kernel(void);

/* How deep the current thread holds the big lock: 0 when it does not. */
unsigned int cusemu_kernel_lock_depth(void);

/*
 * g_cond_wait_until() on the model's own mutex (held by the caller), with
 * the dispatcher's locks let go for the wait; the model's mutex is taken
 * back before them, so lock order stays dispatcher lock, then model mutex.
 * Returns FALSE when end_time (monotonic) passed. cusemu_wait_timeout() is
 * the portable form.
 */
gboolean cusemu_cond_wait_until(GCond *cond, GMutex *mutex, gint64 end_time);
#endif

#endif
