/* SPDX-License-Identifier: MIT */
/*
 * The worker pool (transport/pool.c) on pipes, without CUSE: every source is
 * served, by a few threads; a source's requests go to its readers, at most
 * two, one after the other, until one shares it; a handler that waits gets
 * a worker added so that the other sources go on; a removed source is not
 * served; a stop ends every worker, also one waiting in a handler or in a
 * read; a worker in a long call is made to yield until the call ends,
 * or until it could not take the signal each period; a long call handed
 * over runs on a thread of its own while its worker reads on.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
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

/* One byte, waited for as pool.h says: true if one came. */
static bool take_byte(struct cusemu_pool_source *src)
{
	char c;
	ssize_t n;

	cusemu_pool_read_begin();
	n = read(src->fd, &c, 1);
	cusemu_pool_read_end();
	return n == 1;
}

static int pipe_take(struct cusemu_pool_source *src)
{
	struct pipe_source *p = (struct pipe_source *)src;

	if (!take_byte(src))
		return 0;
	g_atomic_int_inc(&p->served);
	if (!p->blocks)
		return 1;
	cusemu_pool_will_wait();
	g_mutex_lock(&lock);
	g_atomic_int_inc(&blocked);
	while (!released)
		g_cond_wait(&cond, &lock);
	g_mutex_unlock(&lock);
	return 1;
}

static void pipe_open(struct pipe_source *p)
{
	int fds[2];

	g_assert_cmpint(pipe2(fds, O_CLOEXEC), ==, 0);
	*p = (struct pipe_source){ .src = { .fd = fds[0], .take = pipe_take },
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

static bool served_twice(gpointer data)
{
	return g_atomic_int_get(&((struct pipe_source *)data)->served) >= 2;
}

static bool served_three(gpointer data)
{
	return g_atomic_int_get(&((struct pipe_source *)data)->served) >= 3;
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

static int row_take(struct cusemu_pool_source *src)
{
	struct row_source *r = (struct row_source *)src;

	if (!take_byte(src))
		return 0;
	g_mutex_lock(&r->lock);
	g_hash_table_add(r->threads, g_thread_self());
	g_mutex_unlock(&r->lock);
	if (r->share)
		cusemu_pool_share();
	g_usleep(2000);		/* not a wait the pool hears of */
	g_atomic_int_inc(&r->p.served);
	return 1;
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
	r.p.src.take = row_take;
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
 * While its readers serve one request each, the source's others wake
 * nobody else: at most two workers serve them all, in turn. Once each
 * reader shares the source before its request, other workers serve them
 * meanwhile: all four.
 */
static void test_readers(void)
{
	g_assert_cmpuint(serve_in_a_row(false), <=, 2);
	g_assert_cmpuint(serve_in_a_row(true), >=, 3);
}

/*
 * One worker: once it reads a source, the other source waits for it to
 * leave, which it does when no request has come for a few milliseconds
 * (a timer signal ends its read), not when the source next has one.
 */
static void test_reader_leaves(void)
{
	struct pipe_source a, b;
	gint64 start;

	g_assert_true(cusemu_pool_start(1, NULL));
	pipe_open(&a);
	pipe_open(&b);
	poke(&a);
	g_assert_true(wait_for(served_once, &a));
	start = g_get_monotonic_time();
	poke(&b);
	g_assert_true(wait_for(served_once, &b));
	g_assert_cmpint(g_get_monotonic_time() - start, <, G_TIME_SPAN_SECOND);
	g_assert_cmpuint(cusemu_pool_threads(), ==, 1);
	poke(&a);
	g_assert_true(wait_for(served_twice, &a));
	g_assert_true(cusemu_pool_stop(NULL, NULL));
	g_assert_cmpuint(cusemu_pool_threads(), ==, 0);
	g_assert_cmpint(g_atomic_int_get(&a.served), ==, 2);
	g_assert_cmpint(g_atomic_int_get(&b.served), ==, 1);
	pipe_close(&a);
	pipe_close(&b);
}

/*
 * What a long call's handler saw of the yield signal, which it keeps
 * blocked to look: pending while the call holds the CPU; none coming
 * once the handler took one late (periods missed); none after the call.
 */
static gint pending_during = -1, pending_late = -1, pending_after = -1;

/* Whether the yield signal came within ms, taken without its handler. */
static int yield_came(long ms)
{
	sigset_t set;
	struct timespec wait = { .tv_sec = ms / 1000,
				 .tv_nsec = ms % 1000 * 1000 * 1000 };

	sigemptyset(&set);
	sigaddset(&set, CUSEMU_POOL_YIELD_SIGNAL);
	return sigtimedwait(&set, NULL, &wait) == CUSEMU_POOL_YIELD_SIGNAL;
}

static int long_take(struct cusemu_pool_source *src)
{
	gint last = -1;
	sigset_t yield;

	if (!take_byte(src))
		return 0;
	sigemptyset(&yield);
	sigaddset(&yield, CUSEMU_POOL_YIELD_SIGNAL);
	/* A call that takes the signal each period: it comes. */
	pthread_sigmask(SIG_BLOCK, &yield, NULL);
	cusemu_pool_hold_cpu(&last);
	g_atomic_int_set(&pending_during, yield_came(1000));
	/* Blocked 5 ms, 100 periods: taken late, its handler stops them. */
	g_usleep(5000);
	pthread_sigmask(SIG_UNBLOCK, &yield, NULL);
	pthread_sigmask(SIG_BLOCK, &yield, NULL);
	yield_came(0);
	g_atomic_int_set(&pending_late, yield_came(20));
	cusemu_pool_release_cpu();
	/* The next long call yields again, until it ends. */
	cusemu_pool_hold_cpu(&last);
	g_atomic_int_set(&pending_during,
			 g_atomic_int_get(&pending_during) && yield_came(1000));
	cusemu_pool_release_cpu();
	yield_came(0);
	g_atomic_int_set(&pending_after, yield_came(20));
	pthread_sigmask(SIG_UNBLOCK, &yield, NULL);
	g_atomic_int_inc(&((struct pipe_source *)src)->served);
	return 1;
}

/*
 * A handler between cusemu_pool_hold_cpu() and cusemu_pool_release_cpu()
 * gets the yield signal; once it takes one late, no more come in that
 * call; the next call gets them again; none come after a call.
 */
static void test_long_call_yields(void)
{
	struct pipe_source p;

	g_assert_true(cusemu_pool_start(1, NULL));
	pipe_open(&p);
	p.src.take = long_take;
	poke(&p);
	g_assert_true(wait_for(served_once, &p));
	g_assert_cmpint(g_atomic_int_get(&pending_during), ==, 1);
	g_assert_cmpint(g_atomic_int_get(&pending_late), ==, 0);
	g_assert_cmpint(g_atomic_int_get(&pending_after), ==, 0);
	g_assert_true(cusemu_pool_stop(NULL, NULL));
	pipe_close(&p);
}

static void release(void *data)
{
	(void)data;
	g_mutex_lock(&lock);
	released = true;
	g_cond_broadcast(&cond);
	g_mutex_unlock(&lock);
}

/* A long call handed over, and what it saw on its thread. */
static struct {
	struct cusemu_pool_job job;
	GThread *reader;	/* the worker that handed it over */
	GThread *thread;	/* the one it ran on */
	gint cpus;		/* the CPUs that thread may run on */
	gint yields;		/* whether the yield signal came */
	gint yields_waiting;	/* whether it came once the call waits */
	gint done;
	gint again;		/* a second reservation meanwhile: 1, 0 */
} handed = { .again = -1 };

static void handed_run(struct cusemu_pool_job *job)
{
	cpu_set_t set;
	sigset_t yield;

	(void)job;
	if (!sched_getaffinity(0, sizeof(set), &set))
		g_atomic_int_set(&handed.cpus, CPU_COUNT(&set));
	sigemptyset(&yield);
	sigaddset(&yield, CUSEMU_POOL_YIELD_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &yield, NULL);
	g_atomic_int_set(&handed.yields, yield_came(1000));
	/* It waits from now on: no yields, and no worker added for it. */
	cusemu_pool_will_wait();
	yield_came(0);
	g_atomic_int_set(&handed.yields_waiting, yield_came(20));
	pthread_sigmask(SIG_UNBLOCK, &yield, NULL);
	g_atomic_pointer_set(&handed.thread, g_thread_self());
	g_mutex_lock(&lock);
	while (!released)
		g_cond_wait(&cond, &lock);
	g_mutex_unlock(&lock);
	g_atomic_int_set(&handed.done, 1);
}

/* The first request is handed over; the next ones try again, and are
 * served by their reader. */
static int hand_take(struct cusemu_pool_source *src)
{
	struct pipe_source *p = (struct pipe_source *)src;
	bool again;

	if (!take_byte(src))
		return 0;
	if (g_atomic_int_get(&p->served) == 0) {
		handed.reader = g_thread_self();
		if (cusemu_pool_long_reserve()) {
			handed.job.work = handed_run;
			cusemu_pool_long_run(&handed.job);
		}
	} else {
		again = cusemu_pool_long_reserve();
		if (again)
			cusemu_pool_long_cancel();
		g_atomic_int_set(&handed.again, again);
	}
	g_atomic_int_inc(&p->served);
	return 1;
}

static bool handed_running(gpointer data)
{
	(void)data;
	return g_atomic_pointer_get(&handed.thread) != NULL;
}

static bool handed_done(gpointer data)
{
	(void)data;
	return g_atomic_int_get(&handed.done);
}

/*
 * One worker hands a long call over: it runs on a thread of its own,
 * pinned to one CPU and yielding until it waits, while the worker reads
 * on and serves the source's next request; no second call is taken meanwhile (two CPUs:
 * one long-call thread); the source counts the call active until it ends;
 * the stop ends that thread too.
 */
static void test_long_call_thread(void)
{
	struct pipe_source p;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) != 2) {
		g_test_skip("the check counts long-call threads for 2 CPUs");
		return;
	}
	released = false;
	g_assert_true(cusemu_pool_start(1, NULL));
	pipe_open(&p);
	p.src.take = hand_take;
	poke(&p);
	g_assert_true(wait_for(handed_running, NULL));
	g_assert_true(handed.thread != handed.reader);
	g_assert_cmpint(g_atomic_int_get(&handed.cpus), ==, 1);
	g_assert_cmpint(g_atomic_int_get(&handed.yields), ==, 1);
	g_assert_cmpint(g_atomic_int_get(&handed.yields_waiting), ==, 0);
	g_assert_cmpuint(cusemu_pool_threads(), ==, 2);
	poke(&p);
	g_assert_true(wait_for(served_twice, &p));
	g_assert_cmpint(g_atomic_int_get(&handed.again), ==, 0);
	g_assert_cmpint(g_atomic_int_get(&handed.done), ==, 0);
	g_assert_cmpint(g_atomic_int_get(&p.src.active), >=, 1);
	release(NULL);
	g_assert_true(wait_for(handed_done, NULL));
	poke(&p);
	g_assert_true(wait_for(served_three, &p));
	g_assert_cmpint(g_atomic_int_get(&handed.again), ==, 1);
	g_assert_true(cusemu_pool_stop(NULL, NULL));
	g_assert_cmpuint(cusemu_pool_threads(), ==, 0);
	pipe_close(&p);
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
	g_test_add_func("/pool/readers", test_readers);
	g_test_add_func("/pool/reader-leaves", test_reader_leaves);
	g_test_add_func("/pool/waiting-handler", test_waiting_handler);
	g_test_add_func("/pool/long-call-yields", test_long_call_yields);
	g_test_add_func("/pool/long-call-thread", test_long_call_thread);
	return g_test_run();
}
