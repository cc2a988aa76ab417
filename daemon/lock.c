/* SPDX-License-Identifier: MIT */
/*
 * Recursive locks that sleeping lets go of, as the BKL was released over
 * schedule(): each thread keeps the stack of locks it holds, so the sleep
 * helpers can drop them all and take them back in the same order.
 */
#define G_LOG_DOMAIN "cusemu-lock"

#include "call.h"
#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "lock.h"
#include "pool.h"
#include "request.h"

/* A handler holds at most the big lock and one device lock, or nests them. */
#define MAX_HELD 8

struct cusemu_lock cusemu_big_lock;

static __thread struct cusemu_lock *held[MAX_HELD];
static __thread unsigned int n_held;

void cusemu_lock_init(struct cusemu_lock *lock)
{
	g_mutex_init(&lock->mutex);
	lock->owner = NULL;
	lock->depth = 0;
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
	g_return_if_fail(n_held < MAX_HELD);
	start = g_get_monotonic_time();
	if (!g_mutex_trylock(&lock->mutex)) {
		if (call)
			call->stats.lock_contended++;
		cusemu_pool_will_wait();
		cusemu_request_sleep_begin();
		g_mutex_lock(&lock->mutex);
		cusemu_request_sleep_end();
	}
	now = g_get_monotonic_time();
	g_atomic_pointer_set(&lock->owner, g_thread_self());
	lock->depth = 1;
	lock->taken_at = now;
	held[n_held++] = lock;
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
	for (unsigned int i = n_held; i-- > 0;) {
		if (held[i] == lock) {
			held[i] = held[--n_held];
			break;
		}
	}
	g_atomic_pointer_set(&lock->owner, NULL);
	g_mutex_unlock(&lock->mutex);
}

unsigned int cusemu_lock_held(void)
{
	return n_held;
}

void cusemu_lock_release_held(unsigned int mark)
{
	while (n_held > mark) {
		struct cusemu_lock *lock = held[n_held - 1];

		lock->depth = 1;
		cusemu_lock_release(lock);
	}
}

/* The locks the thread held before a sleep, and how deep. */
struct dropped {
	unsigned int n;
	struct cusemu_lock *lock[MAX_HELD];
	unsigned int depth[MAX_HELD];
};

static void drop_all(struct dropped *d)
{
	d->n = n_held;
	for (unsigned int i = n_held; i-- > 0;) {
		d->lock[i] = held[i];
		d->depth[i] = held[i]->depth;
		held[i]->depth = 1;
		cusemu_lock_release(held[i]);
	}
}

static void retake_all(const struct dropped *d)
{
	for (unsigned int i = 0; i < d->n; i++) {
		cusemu_lock_acquire(d->lock[i]);
		d->lock[i]->depth = d->depth[i];
	}
}

void cusemu_lock_kernel(void)
{
	cusemu_lock_acquire(&cusemu_big_lock);
}

void cusemu_unlock_kernel(void)
{
	cusemu_lock_release(&cusemu_big_lock);
}

unsigned int cusemu_kernel_lock_depth(void)
{
	return cusemu_lock_depth(&cusemu_big_lock);
}

/* What sleepers wait on; only an interrupt or the session's end wakes it. */
static GMutex sleep_lock;
static GCond sleep_cond;

/*
 * A timed wait, not g_usleep(): a client that gives up (killed, or a signal
 * while it waits in an ioctl) ends the sleep at once, as it ends a
 * schedule_timeout_interruptible() in the kernel. Without that, the kernel
 * would keep the killed client waiting for the whole sleep.
 */
void cusemu_usleep(unsigned int us)
{
	gint64 end = g_get_monotonic_time() + us;

	g_mutex_lock(&sleep_lock);
	while (!cusemu_signal_pending() && g_get_monotonic_time() < end)
		cusemu_cond_wait_until(&sleep_cond, &sleep_lock, end);
	g_mutex_unlock(&sleep_lock);
}

void cusemu_msleep(unsigned int ms)
{
	cusemu_usleep(ms * 1000u);
}

void cusemu_wait_ctx_init(struct cusemu_wait_ctx *ctx,
			  struct cusemu_waiters *waiters)
{
	ctx->interrupted = 0;
	g_mutex_init(&ctx->lock);
	ctx->cond = NULL;
	ctx->mutex = NULL;
	ctx->waiters = waiters;
	ctx->prev = ctx->next = NULL;
}

void cusemu_wait_ctx_clear(struct cusemu_wait_ctx *ctx)
{
	g_mutex_clear(&ctx->lock);
}

void cusemu_waiters_init(struct cusemu_waiters *waiters)
{
	g_mutex_init(&waiters->lock);
	waiters->head = NULL;
	waiters->ending = 0;
}

void cusemu_waiters_clear(struct cusemu_waiters *waiters)
{
	g_mutex_clear(&waiters->lock);
}

void cusemu_waiters_end(struct cusemu_waiters *waiters)
{
	g_atomic_int_set(&waiters->ending, 1);
	g_mutex_lock(&waiters->lock);
	for (struct cusemu_wait_ctx *ctx = waiters->head; ctx; ctx = ctx->next) {
		g_atomic_int_set(&ctx->interrupted, 1);
		/* Linked only while waiting: cond is set and outlives us. */
		g_cond_broadcast(ctx->cond);
	}
	g_mutex_unlock(&waiters->lock);
}

/* Linked while waiting, so that the session's end finds the waiter. */
static void waiters_link(struct cusemu_wait_ctx *ctx, bool waiting)
{
	struct cusemu_waiters *w = ctx->waiters;

	if (!w)
		return;
	g_mutex_lock(&w->lock);
	if (waiting) {
		ctx->prev = NULL;
		ctx->next = w->head;
		if (w->head)
			w->head->prev = ctx;
		w->head = ctx;
	} else {
		if (ctx->prev)
			ctx->prev->next = ctx->next;
		else
			w->head = ctx->next;
		if (ctx->next)
			ctx->next->prev = ctx->prev;
		ctx->prev = ctx->next = NULL;
	}
	g_mutex_unlock(&w->lock);
}

/* What the request the current thread serves waits on, if any. */
static struct cusemu_wait_ctx *current_wait(void)
{
	struct cusemu_request *req = cusemu_request_current();

	return req ? &req->wait : NULL;
}

/*
 * The waiter holds its mutex from the check of the flag until the wait
 * lets go of it, and the flag is set before we take that mutex: no wake-up
 * is lost. The models' mutexes live as long as their devices.
 */
void cusemu_wait_ctx_interrupt(struct cusemu_wait_ctx *ctx)
{
	GCond *cond;
	GMutex *mutex;

	g_atomic_int_set(&ctx->interrupted, 1);
	g_mutex_lock(&ctx->lock);
	cond = ctx->cond;
	mutex = ctx->mutex;
	g_mutex_unlock(&ctx->lock);
	if (!cond)
		return;
	g_mutex_lock(mutex);
	g_cond_broadcast(cond);
	g_mutex_unlock(mutex);
}

bool cusemu_signal_pending(void)
{
	const struct cusemu_wait_ctx *ctx = current_wait();

	return ctx && (g_atomic_int_get(&ctx->interrupted) ||
		       (ctx->waiters && g_atomic_int_get(&ctx->waiters->ending)));
}

/* Set before the waiter checks for a signal, cleared after its wait. */
static void waiting_on(GCond *cond, GMutex *mutex)
{
	struct cusemu_wait_ctx *ctx = current_wait();

	if (!ctx)
		return;
	g_mutex_lock(&ctx->lock);
	ctx->cond = cond;
	ctx->mutex = mutex;
	g_mutex_unlock(&ctx->lock);
	waiters_link(ctx, cond != NULL);
}

gboolean cusemu_cond_wait_until(GCond *cond, GMutex *mutex, gint64 end_time)
{
	struct dropped d;
	gboolean signalled;

	if (cusemu_signal_pending())
		return FALSE;
	waiting_on(cond, mutex);
	drop_all(&d);
	cusemu_pool_will_wait();
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
		retake_all(&d);
		g_mutex_lock(mutex);
	}
	return signalled;
}
