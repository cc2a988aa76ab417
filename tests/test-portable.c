/* SPDX-License-Identifier: MIT */
/*
 * The portable surface as cusemud gives it (runtime/portable.c): timers,
 * wait queues, strings, memory. The same calls in a module are put through
 * the VM's section 45-kmod with the clients of a model built on them.
 */
#include <string.h>

#include <glib.h>

#include "cusemu/lock.h"
#include "cusemu/memory.h"
#include "cusemu/sched.h"

struct ticks {
	struct cusemu_mutex lock;
	struct cusemu_waitq changed;
	struct cusemu_timer *timer;
	unsigned int runs, again;	/* runs so far; runs still to start */
	uint64_t at[8];
	unsigned int sleep_ms;		/* each run sleeps this long */
};

static void tick(void *data)
{
	struct ticks *t = data;

	cusemu_mutex_lock(&t->lock);
	if (t->runs < G_N_ELEMENTS(t->at))
		t->at[t->runs] = cusemu_time_ns();
	t->runs++;
	cusemu_wake_up(&t->changed);
	cusemu_mutex_unlock(&t->lock);
	if (t->sleep_ms)
		g_usleep(t->sleep_ms * 1000);
	if (t->again) {
		t->again--;
		cusemu_timer_start(t->timer, 1000000);
	}
}

/* Waits (up to 2 s) until the timer ran n times; returns the runs. */
static unsigned int wait_runs(struct ticks *t, unsigned int n)
{
	uint64_t end = cusemu_time_ns() + 2000000000ull;
	unsigned int runs;

	cusemu_mutex_lock(&t->lock);
	while (t->runs < n && cusemu_time_ns() < end)
		cusemu_wait_timeout(&t->changed, &t->lock, 100);
	runs = t->runs;
	cusemu_mutex_unlock(&t->lock);
	return runs;
}

static struct ticks *ticks_new(void)
{
	struct ticks *t = cusemu_new0(struct ticks);

	g_assert_nonnull(t);
	cusemu_mutex_init(&t->lock);
	cusemu_waitq_init(&t->changed);
	t->timer = cusemu_timer_new(tick, t);
	g_assert_nonnull(t->timer);
	return t;
}

static void ticks_free(struct ticks *t)
{
	cusemu_timer_free(t->timer);
	cusemu_mutex_destroy(&t->lock);
	cusemu_free(t);
}

static void test_timer_runs_after_delay(void)
{
	struct ticks *t = ticks_new();
	uint64_t start = cusemu_time_ns();

	cusemu_timer_start(t->timer, 20000000);
	g_assert_cmpuint(wait_runs(t, 1), ==, 1);
	g_assert_cmpuint(t->at[0] - start, >=, 20000000);
	/* Once per start. */
	g_usleep(50000);
	g_assert_cmpuint(t->runs, ==, 1);
	ticks_free(t);
}

static void test_timer_restarts_itself(void)
{
	struct ticks *t = ticks_new();

	t->again = 3;
	cusemu_timer_start(t->timer, 0);
	g_assert_cmpuint(wait_runs(t, 4), ==, 4);
	g_usleep(20000);
	g_assert_cmpuint(t->runs, ==, 4);
	ticks_free(t);
}

static void test_timer_start_replaces(void)
{
	struct ticks *t = ticks_new();

	cusemu_timer_start(t->timer, 10000000000ull);
	cusemu_timer_start(t->timer, 1000000);
	g_assert_cmpuint(wait_runs(t, 1), ==, 1);
	ticks_free(t);
}

static void test_timer_stop(void)
{
	struct ticks *t = ticks_new();

	/* A run to come is cancelled. */
	cusemu_timer_start(t->timer, 30000000);
	cusemu_timer_stop(t->timer);
	g_usleep(60000);
	g_assert_cmpuint(t->runs, ==, 0);
	/* A run under way is waited for, and what it starts is dropped. */
	t->sleep_ms = 50;
	t->again = 1;
	cusemu_timer_start(t->timer, 0);
	g_assert_cmpuint(wait_runs(t, 1), ==, 1);
	cusemu_timer_stop(t->timer);
	g_assert_cmpuint(t->again, ==, 0);
	g_usleep(20000);
	g_assert_cmpuint(t->runs, ==, 1);
	/* It starts again after. */
	t->sleep_ms = 0;
	cusemu_timer_start(t->timer, 0);
	g_assert_cmpuint(wait_runs(t, 2), ==, 2);
	ticks_free(t);
	/* A timer never started frees. */
	cusemu_timer_free(cusemu_timer_new(tick, NULL));
	cusemu_timer_free(NULL);
}

static void test_wait_timeout(void)
{
	struct ticks *t = ticks_new();
	uint64_t start = cusemu_time_ns();

	cusemu_mutex_lock(&t->lock);
	g_assert_cmpint(cusemu_wait_timeout(&t->changed, &t->lock, 30), ==, 0);
	cusemu_mutex_unlock(&t->lock);
	g_assert_cmpuint(cusemu_time_ns() - start, >=, 30000000);
	/* Woken by the timer's run: 1. */
	cusemu_timer_start(t->timer, 5000000);
	cusemu_mutex_lock(&t->lock);
	while (!t->runs)
		g_assert_cmpint(cusemu_wait_timeout(&t->changed, &t->lock, 5000),
				==, 1);
	cusemu_mutex_unlock(&t->lock);
	ticks_free(t);
}

static void test_strscpy(void)
{
	char buf[6];

	g_assert_cmpint(cusemu_strscpy(buf, "hub", sizeof(buf)), ==, 3);
	g_assert_cmpstr(buf, ==, "hub");
	g_assert_cmpint(cusemu_strscpy(buf, "sensor", sizeof(buf)), ==, -E2BIG);
	g_assert_cmpstr(buf, ==, "senso");
	g_assert_cmpint(cusemu_strscpy(buf, "hello", sizeof(buf)), ==, 5);
	g_assert_cmpint(cusemu_strscpy(buf, "x", 0), ==, -E2BIG);
	g_assert_cmpstr(buf, ==, "hello");
}

static void test_zalloc(void)
{
	unsigned char *p = cusemu_zalloc(4096);

	g_assert_nonnull(p);
	for (int i = 0; i < 4096; i++)
		g_assert_cmpuint(p[i], ==, 0);
	cusemu_free(p);
	cusemu_free(NULL);
	p = cusemu_zalloc(0);
	g_assert_nonnull(p);
	cusemu_free(p);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/portable/timer-runs-after-delay", test_timer_runs_after_delay);
	g_test_add_func("/portable/timer-restarts-itself", test_timer_restarts_itself);
	g_test_add_func("/portable/timer-start-replaces", test_timer_start_replaces);
	g_test_add_func("/portable/timer-stop", test_timer_stop);
	g_test_add_func("/portable/wait-timeout", test_wait_timeout);
	g_test_add_func("/portable/strscpy", test_strscpy);
	g_test_add_func("/portable/zalloc", test_zalloc);
	return g_test_run();
}
