/* SPDX-License-Identifier: MIT */
/*
 * <cusemu/sched.h> and cusemu_signal_pending(): the big lock for models
 * that take it themselves, and sleeps that let go of the dispatcher's locks
 * and end when the client gives up on the request.
 */
#define G_LOG_DOMAIN "cusemu-lock"

#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "lock.h"
#include "pool.h"
#include "request.h"

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

/* What the request the current thread serves waits on, if any. */
static struct cusemu_wait_ctx *current_wait(void)
{
	struct cusemu_request *req = cusemu_request_current();

	return req ? &req->wait : NULL;
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
		cusemu_lock_retake_all(&d);
		g_mutex_lock(mutex);
	}
	return signalled;
}
