/* SPDX-License-Identifier: MIT */
/*
 * Locks the dispatcher puts around handlers: the big lock, and the
 * per-device locks of --lock=device. Each is recursive per thread and let
 * go while its holder sleeps in the helpers of <cusemu/sched.h>. Their cost
 * is added to the statistics of the call being served.
 */
#ifndef CUSEMU_LOCK_H
#define CUSEMU_LOCK_H

#include <stdbool.h>

#include <glib.h>

struct cusemu_lock {
	GMutex mutex;
	gpointer owner;		/* the holding GThread, or NULL */
	unsigned int depth;	/* changed by the owner only */
	gint64 taken_at;	/* monotonic us, for the hold time */
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
 * The requests of one session that wait in cusemu_cond_wait_until(), so
 * that ending the session can wake them. A request joins only while it
 * waits: serving one that does not wait takes no lock for this.
 */
struct cusemu_waiters {
	GMutex lock;			/* guards head */
	struct cusemu_wait_ctx *head;
	gint ending;			/* every wait ends at once */
};

/*
 * What a request's thread waits on, so that an interrupt from the client
 * (FUSE_INTERRUPT) can wake it: the transport makes one per request.
 */
struct cusemu_wait_ctx {
	gint interrupted;
	GMutex lock;		/* guards cond and mutex */
	GCond *cond;		/* what cusemu_cond_wait_until() waits on */
	GMutex *mutex;
	/* The session's waiters, or NULL; the links are under its lock. */
	struct cusemu_waiters *waiters;
	struct cusemu_wait_ctx *prev, *next;
};

/* waiters may be NULL (a thread outside any session). */
void cusemu_wait_ctx_init(struct cusemu_wait_ctx *ctx,
			  struct cusemu_waiters *waiters);
void cusemu_wait_ctx_clear(struct cusemu_wait_ctx *ctx);
/* From another thread: the client gave up; wake the waiter. */
void cusemu_wait_ctx_interrupt(struct cusemu_wait_ctx *ctx);

void cusemu_waiters_init(struct cusemu_waiters *waiters);
void cusemu_waiters_clear(struct cusemu_waiters *waiters);
/*
 * The session ends: every wait, now and later, returns at once. A waiter
 * between its check and its wait may miss this wake-up (the model's mutex
 * is not taken, since waiters hold it while joining): call it again until
 * the requests are done.
 */
void cusemu_waiters_end(struct cusemu_waiters *waiters);

#endif
