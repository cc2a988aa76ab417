/* SPDX-License-Identifier: MIT */
/*
 * The worker pool (transport/pool.c) on pipes, without CUSE: every source is
 * served, by a few threads; a source's requests go to the worker that owns
 * it, one after the other, until it shares it; a handler that waits gets
 * a worker added so that the other sources go on; a removed source is not
 * served; a stop ends every worker, also one waiting in a handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <glib.h>

#include "pool.h"

#define SOURCES 64
#define ROUNDS 20

struct pipe_source {
	struct cusemu_pool_source src;	/* first: the pool hands it back */
	int wfd;
	gint served;
	bool blocks;			/* the handler waits until released */
};

static GMutex lock;
static GCond cond;
static bool released;
static gint blocked;

static void pipe_ready(struct cusemu_pool_source *src)
{
	struct pipe_source *p = (struct pipe_source *)src;
	char c;

	/* Non-blocking: another worker may have taken the byte. */
	while (read(src->fd, &c, 1) == 1) {
		g_atomic_int_inc(&p->served);
		if (!p->blocks)
			continue;
		cusemu_pool_will_wait();
		g_mutex_lock(&lock);
		g_atomic_int_inc(&blocked);
		while (!released)
			g_cond_wait(&cond, &lock);
		g_mutex_unlock(&lock);
	}
}

static void pipe_open(struct pipe_source *p)
{
	int fds[2];

	g_assert_cmpint(pipe2(fds, O_NONBLOCK | O_CLOEXEC), ==, 0);
	*p = (struct pipe_source){ .src = { .fd = fds[0], .ready = pipe_ready },
				   .wfd = fds[1] };
	g_assert_true(cusemu_pool_add(&p->src, NULL));
}

static void pipe_close(struct pipe_source *p)
{
	close(p->src.fd);
	close(p->wfd);
}

static void poke(struct pipe_source *p)
{
	g_assert_cmpint(write(p->wfd, "x", 1), ==, 1);
}

/* Until until(data) or 10 s; true if it came. */
static bool wait_for(bool (*until)(gpointer), gpointer data)
{
	gint64 end = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;

	while (!until(data)) {
		if (g_get_monotonic_time() > end)
			return false;
		g_usleep(1000);
	}
	return true;
}

static bool all_served(gpointer data)
{
	struct pipe_source *p = data;

	for (int i = 0; i < SOURCES; i++)
		if (g_atomic_int_get(&p[i].served) < ROUNDS)
			return false;
	return true;
}

static bool served_once(gpointer data)
{
	return g_atomic_int_get(&((struct pipe_source *)data)->served) >= 1;
}

static bool one_blocked(gpointer data)
{
	(void)data;
	return g_atomic_int_get(&blocked) >= 1;
}

/* 64 sources on 2 workers: every byte is served, and by 2 threads. */
static void test_serves_all(void)
{
	struct pipe_source p[SOURCES];

	g_assert_true(cusemu_pool_start(2, NULL));
	g_assert_cmpuint(cusemu_pool_threads(), ==, 2);
	for (int i = 0; i < SOURCES; i++)
		pipe_open(&p[i]);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < SOURCES; i++)
			poke(&p[i]);
	g_assert_true(wait_for(all_served, p));
	for (int i = 0; i < SOURCES; i++)
		g_assert_cmpint(g_atomic_int_get(&p[i].served), ==, ROUNDS);
	g_assert_cmpuint(cusemu_pool_threads(), ==, 2);
	g_assert_true(cusemu_pool_stop(NULL, NULL));
	g_assert_cmpuint(cusemu_pool_threads(), ==, 0);
	for (int i = 0; i < SOURCES; i++)
		pipe_close(&p[i]);
}

/* Requests waiting on a source at once. */
#define IN_A_ROW 20

struct row_source {
	struct pipe_source p;
	bool share;			/* share before each request */
	GMutex lock;
	GHashTable *threads;
};

static void row_ready(struct cusemu_pool_source *src)
{
	struct row_source *r = (struct row_source *)src;
	char c;

	while (read(src->fd, &c, 1) == 1) {
		g_mutex_lock(&r->lock);
		g_hash_table_add(r->threads, g_thread_self());
		g_mutex_unlock(&r->lock);
		if (r->share)
			cusemu_pool_share();
		g_usleep(2000);		/* not a wait the pool hears of */
		g_atomic_int_inc(&r->p.served);
		if (!cusemu_pool_owns())
			return;
	}
}

static bool row_served(gpointer data)
{
	return g_atomic_int_get(&((struct pipe_source *)data)->served) >=
	       IN_A_ROW;
}

/* The threads that served IN_A_ROW requests waiting at once, on 4 workers. */
static guint serve_in_a_row(bool share)
{
	struct row_source r = { .share = share };
	guint threads;

	g_mutex_init(&r.lock);
	r.threads = g_hash_table_new(NULL, NULL);
	g_assert_true(cusemu_pool_start(4, NULL));
	pipe_open(&r.p);
	r.p.src.ready = row_ready;
	for (int i = 0; i < IN_A_ROW; i++)
		poke(&r.p);
	g_assert_true(wait_for(row_served, &r.p));
	g_assert_true(cusemu_pool_stop(NULL, NULL));
	pipe_close(&r.p);
	threads = g_hash_table_size(r.threads);
	g_hash_table_unref(r.threads);
	g_mutex_clear(&r.lock);
	return threads;
}

/*
 * While the owner serves one request, the source's others wake nobody:
 * the owner serves them all, in a row. Once it shares the source before
 * each, other workers serve them meanwhile.
 */
static void test_owner(void)
{
	g_assert_cmpuint(serve_in_a_row(false), ==, 1);
	g_assert_cmpuint(serve_in_a_row(true), >=, 2);
}

static void release(void *data)
{
	(void)data;
	g_mutex_lock(&lock);
	released = true;
	g_cond_broadcast(&cond);
	g_mutex_unlock(&lock);
}

/*
 * One worker, and its handler waits: the pool adds a worker, which serves
 * another source; a removed source gets nothing; the stop lets the
 * waiting handler go and ends both.
 */
static void test_waiting_handler(void)
{
	struct pipe_source waits, other, removed;

	released = false;
	g_atomic_int_set(&blocked, 0);
	g_assert_true(cusemu_pool_start(1, NULL));
	pipe_open(&waits);
	waits.blocks = true;
	pipe_open(&other);
	pipe_open(&removed);
	poke(&waits);
	g_assert_true(wait_for(one_blocked, NULL));
	g_assert_cmpuint(cusemu_pool_threads(), ==, 2);
	poke(&other);
	g_assert_true(wait_for(served_once, &other));
	cusemu_pool_remove(&removed.src);
	poke(&removed);
	poke(&other);
	g_usleep(100 * 1000);
	g_assert_cmpint(g_atomic_int_get(&removed.served), ==, 0);
	g_assert_cmpint(g_atomic_int_get(&other.served), ==, 2);
	g_assert_true(cusemu_pool_stop(release, NULL));
	g_assert_cmpuint(cusemu_pool_threads(), ==, 0);
	g_assert_cmpint(g_atomic_int_get(&waits.served), ==, 1);
	pipe_close(&waits);
	pipe_close(&other);
	pipe_close(&removed);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/pool/serves-all", test_serves_all);
	g_test_add_func("/pool/owner", test_owner);
	g_test_add_func("/pool/waiting-handler", test_waiting_handler);
	return g_test_run();
}
