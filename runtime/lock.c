/* SPDX-License-Identifier: MIT */
/*
 * Recursive locks that sleeping lets go of, as the BKL was released over
 * schedule(): each thread keeps the stack of locks it holds, so the sleep
 * helpers can drop them all and take them back in the same order. The big
 * lock and cusemu_cond_wait_until() of <cusemu/sched.h>, as the daemon
 * runs them.
 */
#define G_LOG_DOMAIN "cusemu-lock"

#include "call.h"
#include "cusemu/sched.h"
#include "lock.h"
#include "request.h"

#define MAX_HELD CUSEMU_LOCK_MAX_HELD

struct cusemu_lock cusemu_big_lock;

/* The locks this thread holds, innermost last, as the kernel kept the
 * big lock's depth per task: what a sleep drops and takes again
 * (cusemu_lock_drop_all()), and what an oops of the handler releases
 * (cusemu_lock_release_held()); the calls carry no thread. */
static __thread struct {
	struct cusemu_lock *lock[MAX_HELD];
	unsigned int n;
} held;

void cusemu_lock_init(struct cusemu_lock *lock)
{
	g_mutex_init(&lock->mutex);
	lock->owner = NULL;
	lock->depth = 0;
	lock->model_ip = NULL;
}

void cusemu_lock_clear(struct cusemu_lock *lock)
{
	g_mutex_clear(&lock->mutex);
}

unsigned int cusemu_lock_depth(const struct cusemu_lock *lock)
{
	return g_atomic_pointer_get((gpointer *)&lock->owner) == g_thread_self()
		       ? lock->depth
		       : 0;
}

void cusemu_lock_acquire(struct cusemu_lock *lock)
{
	struct cusemu_call *call = cusemu_call_current();
	gint64 start, now;

	if (cusemu_lock_depth(lock)) {
		lock->depth++;
		return;
	}
	g_return_if_fail(held.n < MAX_HELD);
	start = g_get_monotonic_time();
	if (!g_mutex_trylock(&lock->mutex)) {
		if (call)
			call->stats.lock_contended++;
		cusemu_request_will_wait();
		cusemu_request_sleep_begin();
		g_mutex_lock(&lock->mutex);
		cusemu_request_sleep_end();
	}
	now = g_get_monotonic_time();
	g_atomic_pointer_set(&lock->owner, g_thread_self());
	lock->depth = 1;
	lock->taken_at = now;
	held.lock[held.n++] = lock;
	if (call) {
		call->stats.lock_acquisitions++;
		call->stats.lock_wait_ns += (uint64_t)(now - start) * 1000;
	}
}

void cusemu_lock_release(struct cusemu_lock *lock)
{
	struct cusemu_call *call = cusemu_call_current();

	g_return_if_fail(cusemu_lock_depth(lock) > 0);
	if (--lock->depth)
		return;
	if (call)
		call->stats.lock_hold_ns +=
			(uint64_t)(g_get_monotonic_time() - lock->taken_at) * 1000;
	/* Locks are let go in the reverse order of taking, sleeps aside. */
	for (unsigned int i = held.n; i-- > 0;) {
		if (held.lock[i] == lock) {
			held.lock[i] = held.lock[--held.n];
			break;
		}
	}
	lock->model_ip = NULL;
	g_atomic_pointer_set(&lock->owner, NULL);
	g_mutex_unlock(&lock->mutex);
}

unsigned int cusemu_lock_held(void)
{
	return held.n;
}

void cusemu_lock_release_held(unsigned int mark)
{
	while (held.n > mark) {
		struct cusemu_lock *lock = held.lock[held.n - 1];

		lock->depth = 1;
		cusemu_lock_release(lock);
	}
}

unsigned int cusemu_lock_holds(void)
{
	unsigned int holds = 0;

	for (unsigned int i = 0; i < held.n; i++)
		holds += held.lock[i]->depth;
	return holds;
}

unsigned int cusemu_lock_restore(unsigned int mark, unsigned int holds)
{
	unsigned int now = cusemu_lock_holds(), let_go = 0;

	while (now > holds && held.n) {
		struct cusemu_lock *lock = held.lock[held.n - 1];
		unsigned int excess;

		if (held.n <= mark) {
			/* Taken before the call: it keeps a hold of it. */
			excess = MIN(now - holds, lock->depth - 1);
			if (!excess)
				break;
			lock->depth -= excess;
		} else {
			excess = lock->depth;
			lock->depth = 1;
			cusemu_lock_release(lock);
		}
		now -= excess;
		let_go += excess;
	}
	return let_go;
}

void cusemu_lock_drop_all(struct cusemu_lock_dropped *d)
{
	d->n = held.n;
	for (unsigned int i = held.n; i-- > 0;) {
		d->lock[i] = held.lock[i];
		d->depth[i] = held.lock[i]->depth;
		d->model_ip[i] = held.lock[i]->model_ip;
		held.lock[i]->depth = 1;
		cusemu_lock_release(held.lock[i]);
	}
}

void cusemu_lock_retake_all(const struct cusemu_lock_dropped *d)
{
	for (unsigned int i = 0; i < d->n; i++) {
		cusemu_lock_acquire(d->lock[i]);
		d->lock[i]->depth = d->depth[i];
		d->lock[i]->model_ip = d->model_ip[i];
	}
}

void cusemu_lock_kernel(void)
{
	cusemu_lock_acquire(&cusemu_big_lock);
	cusemu_big_lock.model_ip = __builtin_return_address(0);
}

void cusemu_unlock_kernel(void)
{
	cusemu_lock_release(&cusemu_big_lock);
}

unsigned int cusemu_kernel_lock_depth(void)
{
	return cusemu_lock_depth(&cusemu_big_lock);
}

/* Set before the waiter checks for a signal, cleared after its wait. */
static void waiting_on(GCond *cond, GMutex *mutex)
{
	struct cusemu_wait_ctx *ctx = cusemu_request_wait();

	if (ctx)
		cusemu_wait_ctx_waiting_on(ctx, cond, mutex);
}

gboolean cusemu_cond_wait_until(GCond *cond, GMutex *mutex, gint64 end_time)
{
	struct cusemu_lock_dropped d;
	gboolean signalled;

	if (cusemu_signal_pending())
		return FALSE;
	waiting_on(cond, mutex);
	cusemu_lock_drop_all(&d);
	cusemu_request_will_wait();
	/* An interrupt wakes the wait too: that is not the model's signal. */
	cusemu_request_sleep_begin();
	signalled = !cusemu_signal_pending() &&
		    g_cond_wait_until(cond, mutex, end_time) &&
		    !cusemu_signal_pending();
	cusemu_request_sleep_end();
	waiting_on(NULL, NULL);
	if (d.n) {
		/* Dispatcher locks come before the model's mutex. */
		g_mutex_unlock(mutex);
		cusemu_lock_retake_all(&d);
		g_mutex_lock(mutex);
	}
	return signalled;
}
