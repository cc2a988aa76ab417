/* SPDX-License-Identifier: MIT */
/*
 * The big lock: recursive per thread, let go while its holder sleeps in the
 * daemon's helpers and taken back afterwards, as the BKL over schedule().
 */
#include <glib.h>

#include "call.h"
#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "lock.h"
#include "request.h"

static void test_recursion(void)
{
	g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 0);
	cusemu_lock_kernel();
	cusemu_lock_kernel();
	g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 2);
	cusemu_unlock_kernel();
	g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 1);
	cusemu_unlock_kernel();
	g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 0);
}

struct sleeper {
	GMutex mutex;
	GCond cond;
	bool holding, sleeping, done;
	unsigned int depth_after;
};

/* Takes the big lock twice, then sleeps 300 ms in the daemon's helper. */
static gpointer sleeper_thread(gpointer data)
{
	struct sleeper *s = data;

	cusemu_lock_kernel();
	cusemu_lock_kernel();
	g_mutex_lock(&s->mutex);
	s->holding = true;
	g_cond_signal(&s->cond);
	g_mutex_unlock(&s->mutex);
	cusemu_msleep(300);
	s->depth_after = cusemu_kernel_lock_depth();
	cusemu_unlock_kernel();
	cusemu_unlock_kernel();
	return NULL;
}

static void test_released_across_sleep(void)
{
	struct sleeper s = { 0 };
	GThread *t;
	gint64 start, waited;

	g_mutex_init(&s.mutex);
	g_cond_init(&s.cond);
	t = g_thread_new("sleeper", sleeper_thread, &s);
	g_mutex_lock(&s.mutex);
	while (!s.holding)
		g_cond_wait(&s.cond, &s.mutex);
	g_mutex_unlock(&s.mutex);

	/*
	 * The sleeper holds the lock twice but sleeps: we get it long before
	 * its 300 ms are up (a generous bound, not a timing assertion on a
	 * fast path: without the release this waits the whole sleep).
	 */
	start = g_get_monotonic_time();
	cusemu_lock_kernel();
	waited = g_get_monotonic_time() - start;
	cusemu_unlock_kernel();
	g_thread_join(t);
	g_assert_cmpint(waited, <, 250 * 1000);
	/* And it had the lock back, as deep as before, when it woke. */
	g_assert_cmpuint(s.depth_after, ==, 2);
	g_mutex_clear(&s.mutex);
	g_cond_clear(&s.cond);
}

static gpointer signal_later(gpointer data)
{
	struct sleeper *s = data;

	/* Only possible because the waiter let go of the big lock. */
	cusemu_lock_kernel();
	g_mutex_lock(&s->mutex);
	s->done = true;
	g_cond_signal(&s->cond);
	g_mutex_unlock(&s->mutex);
	cusemu_unlock_kernel();
	return NULL;
}

static void test_cond_wait_releases(void)
{
	struct sleeper s = { 0 };
	GThread *t;

	g_mutex_init(&s.mutex);
	g_cond_init(&s.cond);
	cusemu_lock_kernel();
	g_mutex_lock(&s.mutex);
	t = g_thread_new("signaller", signal_later, &s);
	while (!s.done)
		g_assert_true(cusemu_cond_wait_until(
			&s.cond, &s.mutex,
			g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND));
	g_mutex_unlock(&s.mutex);
	g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 1);
	cusemu_unlock_kernel();
	g_thread_join(t);
	g_mutex_clear(&s.mutex);
	g_cond_clear(&s.cond);
}

static void test_contention_counted(void)
{
	struct cusemu_request req;
	struct cusemu_call call = { 0 };
	struct sleeper s = { 0 };
	GThread *t;

	g_mutex_init(&s.mutex);
	g_cond_init(&s.cond);
	t = g_thread_new("sleeper", sleeper_thread, &s);
	g_mutex_lock(&s.mutex);
	while (!s.holding)
		g_cond_wait(&s.cond, &s.mutex);
	g_mutex_unlock(&s.mutex);
	/* The sleeper holds it for a moment more: this one waits. */
	cusemu_request_init(&req, NULL, &call);
	cusemu_request_set_current(&req);
	cusemu_lock_acquire(&cusemu_big_lock);
	cusemu_lock_release(&cusemu_big_lock);
	cusemu_request_set_current(NULL);
	cusemu_request_clear(&req);
	g_thread_join(t);
	g_assert_cmpuint(call.stats.lock_acquisitions, ==, 1);
	/* The sleeper let go while sleeping: whether we met it is luck. */
	g_assert_cmpuint(call.stats.lock_contended, <=, 1);
	g_mutex_clear(&s.mutex);
	g_cond_clear(&s.cond);
}

struct interrupted_wait {
	struct cusemu_request req;
	GMutex mutex;
	GCond cond;
	bool waiting;
	gboolean woke_by_signal;
	bool pending_after;
};

/* Waits without end, as a blocking read with nothing to read would. */
static gpointer waiter_thread(gpointer data)
{
	struct interrupted_wait *w = data;

	cusemu_request_set_current(&w->req);
	g_mutex_lock(&w->mutex);
	w->waiting = true;
	w->woke_by_signal = cusemu_cond_wait_until(
		&w->cond, &w->mutex,
		g_get_monotonic_time() + 60 * G_TIME_SPAN_SECOND);
	w->pending_after = cusemu_signal_pending();
	g_mutex_unlock(&w->mutex);
	cusemu_request_set_current(NULL);
	return NULL;
}

static void test_interrupt_wakes_waiter(void)
{
	struct interrupted_wait w = { 0 };
	GThread *t;

	cusemu_request_init(&w.req, NULL, NULL);
	g_mutex_init(&w.mutex);
	g_cond_init(&w.cond);
	t = g_thread_new("waiter", waiter_thread, &w);
	/* Interrupt at any point: before, during or after it starts waiting. */
	cusemu_wait_ctx_interrupt(&w.req.wait);
	g_thread_join(t);
	g_assert_false(w.woke_by_signal);
	g_assert_true(w.pending_after);
	cusemu_request_clear(&w.req);
	g_mutex_clear(&w.mutex);
	g_cond_clear(&w.cond);
}

struct interrupted_sleep {
	struct cusemu_request req;
	gint64 slept;
	bool pending_after;
	unsigned int depth_after;
};

/* A minute's sleep under the big lock, as slow's SLOW_HOLD_US may ask. */
static gpointer long_sleeper_thread(gpointer data)
{
	struct interrupted_sleep *w = data;
	gint64 start;

	cusemu_request_set_current(&w->req);
	cusemu_lock_kernel();
	start = g_get_monotonic_time();
	cusemu_msleep(60 * 1000);
	w->slept = g_get_monotonic_time() - start;
	w->pending_after = cusemu_signal_pending();
	w->depth_after = cusemu_kernel_lock_depth();
	cusemu_unlock_kernel();
	cusemu_request_set_current(NULL);
	return NULL;
}

/*
 * The client gives up: the sleep ends at once (a bound far below the
 * minute, not a timing assertion), the handler can tell, and it has the
 * big lock back.
 */
static void test_interrupt_ends_sleep(void)
{
	struct interrupted_sleep w = { 0 };
	GThread *t;

	cusemu_request_init(&w.req, NULL, NULL);
	t = g_thread_new("sleeper", long_sleeper_thread, &w);
	cusemu_wait_ctx_interrupt(&w.req.wait);
	g_thread_join(t);
	g_assert_cmpint(w.slept, <, 10 * G_TIME_SPAN_SECOND);
	g_assert_true(w.pending_after);
	g_assert_cmpuint(w.depth_after, ==, 1);
	cusemu_request_clear(&w.req);
}

/*
 * What a call leaves held is let go down to what it began with: a lock
 * taken before it keeps its holds, one it took goes.
 */
static void test_restore(void)
{
	struct cusemu_lock mine;
	unsigned int mark, holds;

	cusemu_lock_init(&mine);
	cusemu_lock_acquire(&mine);
	mark = cusemu_lock_held();
	holds = cusemu_lock_holds();
	g_assert_cmpuint(cusemu_lock_restore(mark, holds), ==, 0);
	cusemu_lock_acquire(&mine);
	cusemu_lock_kernel();
	cusemu_lock_kernel();
	g_assert_cmpuint(cusemu_lock_holds(), ==, holds + 3);
	g_assert_cmpuint(cusemu_lock_restore(mark, holds), ==, 3);
	g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 0);
	g_assert_cmpuint(cusemu_lock_depth(&mine), ==, 1);
	g_assert_cmpuint(cusemu_lock_held(), ==, mark);
	cusemu_lock_release(&mine);
	g_assert_cmpuint(cusemu_lock_held(), ==, 0);
	cusemu_lock_clear(&mine);
}

struct racing_waiter {
	struct cusemu_waiters *waiters;
	GMutex *mutex;
	GCond *cond;
	gint *stop;
};

/*
 * Starts and ends waits as fast as it can, as readers of one node woken
 * together by one broadcast do, each clearing what it waits on.
 */
static gpointer racing_waiter_thread(gpointer data)
{
	struct racing_waiter *r = data;
	struct cusemu_request req;

	cusemu_request_init(&req, r->waiters, NULL);
	while (!g_atomic_int_get(r->stop)) {
		cusemu_wait_ctx_waiting_on(&req.wait, r->cond, r->mutex);
		cusemu_wait_ctx_waiting_on(&req.wait, NULL, NULL);
	}
	cusemu_request_clear(&req);
	return NULL;
}

#define RACING_WAITERS 4

static void session_end_races_waits(void)
{
	struct cusemu_waiters waiters;
	struct racing_waiter r;
	GThread *t[RACING_WAITERS];
	GMutex mutex;
	GCond cond;
	gint stop = 0;
	gint64 end = g_get_monotonic_time() + G_TIME_SPAN_SECOND;

	cusemu_waiters_init(&waiters);
	g_mutex_init(&mutex);
	g_cond_init(&cond);
	r = (struct racing_waiter){ &waiters, &mutex, &cond, &stop };
	for (unsigned int i = 0; i < RACING_WAITERS; i++)
		t[i] = g_thread_new("waiter", racing_waiter_thread, &r);
	while (g_get_monotonic_time() < end)
		cusemu_waiters_end(&waiters);
	g_atomic_int_set(&stop, 1);
	for (unsigned int i = 0; i < RACING_WAITERS; i++)
		g_thread_join(t[i]);
	g_assert_null(waiters.head);
	cusemu_waiters_clear(&waiters);
	g_mutex_clear(&mutex);
	g_cond_clear(&cond);
}

/*
 * The session's end walks its waiters while they wake and leave (SIGTERM
 * with readers blocked on a node): every waiter it finds has something to
 * wake. Run apart, as a failure is a crash.
 */
static void test_session_end_races_waits(void)
{
	if (g_test_subprocess()) {
		session_end_races_waits();
		return;
	}
	g_test_trap_subprocess(NULL, 30 * G_TIME_SPAN_SECOND, 0);
	g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/lock/recursion", test_recursion);
	g_test_add_func("/lock/released-across-sleep",
			test_released_across_sleep);
	g_test_add_func("/lock/cond-wait-releases", test_cond_wait_releases);
	g_test_add_func("/lock/contention-counted", test_contention_counted);
	g_test_add_func("/lock/interrupt-wakes-waiter",
			test_interrupt_wakes_waiter);
	g_test_add_func("/lock/interrupt-ends-sleep", test_interrupt_ends_sleep);
	g_test_add_func("/lock/restore", test_restore);
	g_test_add_func("/lock/session-end-races-waits",
			test_session_end_races_waits);
	return g_test_run();
}
