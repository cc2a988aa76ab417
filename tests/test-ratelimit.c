/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the rate limit of log lines (runtime/ratelimit.c): the
 * burst, the lines held back and the note that counts them, the next
 * interval, and threads that share one limit.
 */
#include <string.h>

#include <glib.h>

#include "ratelimit.h"

#define SECOND G_TIME_SPAN_SECOND

/* 10 lines at once, then none until 5 s have passed; the first line after
 * says how many were held back, the next ones nothing. */
static void test_burst(void)
{
	struct cusemu_ratelimit rs;
	char note[CUSEMU_RATELIMIT_NOTE];
	unsigned int passed = 0;

	cusemu_ratelimit_init(&rs);
	for (unsigned int i = 0; i < 100000; i++) {
		if (cusemu_ratelimit_at(&rs, 1 + i, note)) {
			g_assert_cmpstr(note, ==, "");
			passed++;
		}
	}
	g_assert_cmpuint(passed, ==, CUSEMU_RATELIMIT_BURST);
	g_assert_false(cusemu_ratelimit_at(&rs, 1 + 5 * SECOND - 1, note));
	g_assert_true(cusemu_ratelimit_at(&rs, 1 + 5 * SECOND, note));
	g_assert_cmpstr(note, ==, "; 99991 lines like this suppressed");
	g_assert_true(cusemu_ratelimit_at(&rs, 1 + 5 * SECOND, note));
	g_assert_cmpstr(note, ==, "");
	cusemu_ratelimit_clear(&rs);
}

/* A static limit needs no init. */
static void test_static(void)
{
	static struct cusemu_ratelimit rs;
	char note[CUSEMU_RATELIMIT_NOTE];

	g_assert_true(cusemu_ratelimit(&rs, note));
	g_assert_cmpstr(note, ==, "");
}

struct shared {
	struct cusemu_ratelimit rs;
	gint passed;
};

static gpointer hammer(gpointer data)
{
	struct shared *s = data;
	char note[CUSEMU_RATELIMIT_NOTE];

	for (unsigned int i = 0; i < 20000; i++)
		if (cusemu_ratelimit(&s->rs, note))
			g_atomic_int_inc(&s->passed);
	return NULL;
}

/* Handlers run on worker threads: 4 of them share one burst. */
static void test_threads(void)
{
	struct shared s = { .passed = 0 };
	GThread *t[4];
	gint64 start = g_get_monotonic_time();

	cusemu_ratelimit_init(&s.rs);
	for (unsigned int i = 0; i < G_N_ELEMENTS(t); i++)
		t[i] = g_thread_new("hammer", hammer, &s);
	for (unsigned int i = 0; i < G_N_ELEMENTS(t); i++)
		g_thread_join(t[i]);
	if (g_get_monotonic_time() - start < CUSEMU_RATELIMIT_INTERVAL)
		g_assert_cmpint(s.passed, ==, CUSEMU_RATELIMIT_BURST);
	cusemu_ratelimit_clear(&s.rs);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/ratelimit/burst", test_burst);
	g_test_add_func("/ratelimit/static", test_static);
	g_test_add_func("/ratelimit/threads", test_threads);
	return g_test_run();
}
