/* SPDX-License-Identifier: MIT */
/*
 * The request context of the current thread, and how an interrupt or the
 * session's end wakes its waits (see request.h).
 */
#include <stdbool.h>

#include <glib.h>

#include "request.h"

/* A handler holds the ioctl32 table at most once; nesting is for safety. */
#define MAX_HOLDS 4

/*
 * This thread's request, found through __thread as the kernel finds
 * current: the model API's calls carry no request (cusemu_device_sleep()
 * takes a device). Its sleeps so far, which another thread may read
 * (cusemu_request_sleeps()), and the global locks its handler holds.
 */
static __thread struct {
	struct cusemu_request *current;
	unsigned long sleeps;
	struct {
		void (*release)(void *data);
		void *data;
	} holds[MAX_HOLDS];
	unsigned int n_holds;
} self;

void cusemu_request_init(struct cusemu_request *req,
			 struct cusemu_waiters *waiters,
			 struct cusemu_call *call)
{
	cusemu_wait_ctx_init(&req->wait, waiters);
	req->call = call;
}

void cusemu_request_clear(struct cusemu_request *req)
{
	cusemu_wait_ctx_clear(&req->wait);
}

void cusemu_request_set_current(struct cusemu_request *req)
{
	self.current = req;
}

struct cusemu_request *cusemu_request_current(void)
{
	return self.current;
}

void cusemu_request_sleep_begin(void)
{
	__atomic_store_n(&self.sleeps, self.sleeps + 1, __ATOMIC_RELAXED);
}

void cusemu_request_sleep_end(void)
{
	__atomic_store_n(&self.sleeps, self.sleeps + 1, __ATOMIC_RELAXED);
}

const unsigned long *cusemu_request_sleeps(void)
{
	return &self.sleeps;
}

/* What the worker pool does before a thread waits, set once at start-up
 * for the process: the pool sits above the runtime. */
static void (*will_wait_hook)(void);

void cusemu_request_set_will_wait(void (*will_wait)(void))
{
	g_atomic_pointer_set(&will_wait_hook, will_wait);
}

void cusemu_request_will_wait(void)
{
	void (*fn)(void) = g_atomic_pointer_get(&will_wait_hook);

	if (fn)
		fn();
}

void cusemu_request_hold(void (*release)(void *data), void *data)
{
	g_return_if_fail(self.n_holds < MAX_HOLDS);
	self.holds[self.n_holds].release = release;
	self.holds[self.n_holds].data = data;
	self.n_holds++;
}

void cusemu_request_unhold(void)
{
	g_return_if_fail(self.n_holds > 0);
	self.n_holds--;
}

unsigned int cusemu_request_holds(void)
{
	return self.n_holds;
}

void cusemu_request_release_holds(unsigned int mark)
{
	while (self.n_holds > mark) {
		self.n_holds--;
		self.holds[self.n_holds].release(self.holds[self.n_holds].data);
	}
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
		/* Linked only while its cond is set, which outlives us;
		 * the waiter unlinks under our lock before clearing it. */
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

static void wait_ctx_set(struct cusemu_wait_ctx *ctx, GCond *cond,
			 GMutex *mutex)
{
	g_mutex_lock(&ctx->lock);
	ctx->cond = cond;
	ctx->mutex = mutex;
	g_mutex_unlock(&ctx->lock);
}

/*
 * What ctx's thread now waits on (NULL when done); set before the waiter
 * checks for a signal, cleared after its wait. A waiter is in the
 * session's list only while its cond is set: linked after the cond is
 * set, unlinked before it is cleared. Readers of one node share a cond,
 * so one broadcast of the session's end wakes them all while it walks on
 * to the next of them.
 */
void cusemu_wait_ctx_waiting_on(struct cusemu_wait_ctx *ctx, GCond *cond,
				GMutex *mutex)
{
	if (cond) {
		wait_ctx_set(ctx, cond, mutex);
		waiters_link(ctx, true);
	} else {
		waiters_link(ctx, false);
		wait_ctx_set(ctx, NULL, NULL);
	}
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
