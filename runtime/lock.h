/* SPDX-License-Identifier: MIT */
/*
 * Locks the dispatcher puts around handlers: the big lock, and the
 * per-device locks of --lock=device. Each is recursive per thread and let
 * go while its holder sleeps in the helpers of <cusemu/sched.h>. Their cost
 * is added to the statistics of the call being served.
 */
#ifndef CUSEMU_RUNTIME_LOCK_H
#define CUSEMU_RUNTIME_LOCK_H

#include <stdbool.h>

#include <glib.h>

struct cusemu_lock {
	GMutex mutex;
	gpointer owner;		/* the holding GThread, or NULL */
	unsigned int depth;	/* changed by the owner only */
	gint64 taken_at;	/* monotonic us, for the hold time */
	/* Where a model last took it with cusemu_lock_kernel(), or NULL:
	 * for the report of a lock a call leaves held. By the owner. */
	const void *model_ip;
};

/* The one big lock, like the kernel's BKL. */
extern struct cusemu_lock cusemu_big_lock;

void cusemu_lock_init(struct cusemu_lock *lock);
void cusemu_lock_clear(struct cusemu_lock *lock);
void cusemu_lock_acquire(struct cusemu_lock *lock);
void cusemu_lock_release(struct cusemu_lock *lock);

/* How deep the current thread holds lock; 0 when it does not. */
unsigned int cusemu_lock_depth(const struct cusemu_lock *lock);

/* How many locks the current thread holds, and let go of every one taken
 * after it held mark of them, whatever their depth (an oops). */
unsigned int cusemu_lock_held(void);
void cusemu_lock_release_held(unsigned int mark);

/*
 * How many unlocks the current thread owes: the depths of the locks it
 * holds, summed. A call ends owing what it owed when it began; the holds
 * beyond that (locks taken after it held mark of them, and depth added to
 * those it held already) are let go, innermost first. The number of
 * holds let go.
 */
unsigned int cusemu_lock_holds(void);
unsigned int cusemu_lock_restore(unsigned int mark, unsigned int holds);

/* A handler holds at most the big lock and one device lock, or nests them. */
#define CUSEMU_LOCK_MAX_HELD 8

/* The locks the thread held before a sleep, and how deep. */
struct cusemu_lock_dropped {
	unsigned int n;
	struct cusemu_lock *lock[CUSEMU_LOCK_MAX_HELD];
	unsigned int depth[CUSEMU_LOCK_MAX_HELD];
	const void *model_ip[CUSEMU_LOCK_MAX_HELD];
};

/* Let go of every lock the thread holds, for a sleep; then take them back
 * in the same order and to the same depth. */
void cusemu_lock_drop_all(struct cusemu_lock_dropped *d);
void cusemu_lock_retake_all(const struct cusemu_lock_dropped *d);

#endif
