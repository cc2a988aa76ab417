/* SPDX-License-Identifier: MIT */
/*
 * The sleeps of <cusemu/sched.h> and cusemu_signal_pending(): they end when
 * the client gives up on the request. Shared by the daemon and the model
 * host; each has its own cusemu_cond_wait_until(), which lets go of the
 * dispatcher's locks (lock.c here, a request to the daemon there).
 */
#define G_LOG_DOMAIN "cusemu-lock"

#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "request.h"

/* What sleepers of every device wait on (a request's interrupt does not
 * know the device it wakes); only an interrupt or the session's end wakes
 * it. */
static struct {
	GMutex lock;
	GCond cond;
} sleepers;

/*
 * A timed wait, not g_usleep(): a client that gives up (killed, or a signal
 * while it waits in an ioctl) ends the sleep at once, as it ends a
 * schedule_timeout_interruptible() in the kernel. Without that, the kernel
 * would keep the killed client waiting for the whole sleep.
 */
void cusemu_usleep(unsigned int us)
{
	gint64 end = g_get_monotonic_time() + us;

	g_mutex_lock(&sleepers.lock);
	while (!cusemu_signal_pending() && g_get_monotonic_time() < end)
		cusemu_cond_wait_until(&sleepers.cond, &sleepers.lock, end);
	g_mutex_unlock(&sleepers.lock);
}

void cusemu_msleep(unsigned int ms)
{
	cusemu_usleep(ms * 1000u);
}

bool cusemu_signal_pending(void)
{
	const struct cusemu_wait_ctx *ctx = cusemu_request_wait();

	return ctx && (g_atomic_int_get(&ctx->interrupted) ||
		       (ctx->waiters && g_atomic_int_get(&ctx->waiters->ending)));
}
