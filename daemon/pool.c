/* SPDX-License-Identifier: MIT */
/*
 * The worker pool of pool.h. Accounting is three counters: threads (all
 * workers), idle (those in epoll_wait) and, under the lock, whether the
 * pool is ending. A worker that waits in a handler while none is idle
 * adds one; a worker past the configured size that finds no work for
 * IDLE_RETIRE_MS leaves. Nothing is created or freed per request.
 *
 * The workers wait on up to MAX_SETS epoll sets, each holding every
 * node's descriptor, level-triggered and EPOLLEXCLUSIVE: a new request
 * wakes one worker, in the first set that has one waiting, as libfuse's
 * own threads blocked in read() are woken one per request. Nothing is
 * armed again per request, and a worker that comes back to its set while
 * the node still has requests finds them at once.
 */
#define G_LOG_DOMAIN "cusemu-pool"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "pool.h"

/* An added worker without work for this long leaves. */
#define IDLE_RETIRE_MS 5000
#define STOP_ROUND_MS 20
#define STOP_TIMEOUT_S 10
/* Epoll sets: beyond a few, one per worker gains nothing. */
#define MAX_SETS 16

static struct {
	GMutex lock;		/* guards started, exiting and the cond */
	GCond cond;		/* a worker left */
	bool started;
	gint exiting;
	int epfds[MAX_SETS];
	unsigned int sets;
	int stopfd;		/* readable once the pool ends: wakes every worker */
	unsigned int size;
	gint threads;
	gint idle;
	gint warned;		/* the limit of threads was met once */
} pool = { .stopfd = -1 };

/* The set a worker waits on; -1 in other threads. */
static __thread int worker_set = -1;

static gpointer worker(gpointer data);

/* One more worker on set, unless the pool ends or is at its limit. */
static void spawn(unsigned int set)
{
	g_autoptr(GError) error = NULL;
	GThread *thread;

	g_mutex_lock(&pool.lock);
	if (g_atomic_int_get(&pool.exiting) ||
	    g_atomic_int_get(&pool.threads) >= CUSEMU_POOL_MAX_THREADS) {
		g_mutex_unlock(&pool.lock);
		if (!g_atomic_int_get(&pool.exiting) &&
		    g_atomic_int_compare_and_exchange(&pool.warned, 0, 1))
			g_warning("%d workers, all busy or waiting in handlers: "
				  "requests wait for one to be free",
				  CUSEMU_POOL_MAX_THREADS);
		return;
	}
	g_atomic_int_inc(&pool.threads);
	g_mutex_unlock(&pool.lock);
	thread = g_thread_try_new("cusemu-worker", worker,
				  GUINT_TO_POINTER(set), &error);
	if (thread) {
		g_thread_unref(thread);
		return;
	}
	g_warning("cannot add a worker: %s", error->message);
	g_mutex_lock(&pool.lock);
	g_atomic_int_add(&pool.threads, -1);
	g_cond_broadcast(&pool.cond);
	g_mutex_unlock(&pool.lock);
}

/* Leave, if the pool has more workers than its size: true if so. */
static bool retire(void)
{
	bool leave;

	g_mutex_lock(&pool.lock);
	leave = g_atomic_int_get(&pool.threads) > (gint)pool.size;
	if (leave)
		g_atomic_int_add(&pool.threads, -1);
	g_cond_broadcast(&pool.cond);
	g_mutex_unlock(&pool.lock);
	return leave;
}

static void serve(struct cusemu_pool_source *src)
{
	/* Counted before gone is read: remove() then waits for us. */
	g_atomic_int_inc(&src->active);
	if (!g_atomic_int_get(&src->gone))
		src->ready(src);
	g_atomic_int_add(&src->active, -1);
}

static gpointer worker(gpointer data)
{
	int epfd;

	worker_set = (int)GPOINTER_TO_UINT(data);
	epfd = pool.epfds[worker_set];
	for (;;) {
		struct epoll_event ev;
		int timeout = g_atomic_int_get(&pool.threads) > (gint)pool.size
				      ? IDLE_RETIRE_MS
				      : -1;
		int n;

		g_atomic_int_inc(&pool.idle);
		n = epoll_wait(epfd, &ev, 1, timeout);
		g_atomic_int_add(&pool.idle, -1);
		if (g_atomic_int_get(&pool.exiting))
			break;
		if (n == 0 && retire())
			return NULL;
		if (n == 1 && ev.data.ptr != &pool)
			serve(ev.data.ptr);
	}
	g_mutex_lock(&pool.lock);
	g_atomic_int_add(&pool.threads, -1);
	g_cond_broadcast(&pool.cond);
	g_mutex_unlock(&pool.lock);
	return NULL;
}

static void close_sets(void)
{
	for (unsigned int i = 0; i < pool.sets; i++)
		close(pool.epfds[i]);
	pool.sets = 0;
	if (pool.stopfd >= 0)
		close(pool.stopfd);
	pool.stopfd = -1;
}

/* The sets, each with the stop descriptor (which wakes all): errno or 0. */
static int open_sets(unsigned int sets)
{
	/* Not exclusive: a stop wakes every worker of every set. */
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &pool };

	pool.stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pool.stopfd < 0)
		return errno;
	while (pool.sets < sets) {
		int epfd = epoll_create1(EPOLL_CLOEXEC);

		if (epfd < 0)
			return errno;
		pool.epfds[pool.sets++] = epfd;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, pool.stopfd, &ev))
			return errno;
	}
	return 0;
}

gboolean cusemu_pool_start(unsigned int size, GError **error)
{
	int err;

	g_mutex_lock(&pool.lock);
	if (pool.started) {
		g_mutex_unlock(&pool.lock);
		return TRUE;
	}
	err = open_sets(MIN(size, MAX_SETS));
	if (err) {
		close_sets();
		g_mutex_unlock(&pool.lock);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    "cannot make the workers' event loop: %s",
			    g_strerror(err));
		return FALSE;
	}
	pool.size = size;
	pool.started = true;
	g_atomic_int_set(&pool.exiting, 0);
	g_atomic_int_set(&pool.warned, 0);
	g_mutex_unlock(&pool.lock);
	for (unsigned int i = 0; i < size; i++)
		spawn(i % pool.sets);
	if (!g_atomic_int_get(&pool.threads)) {
		g_set_error(error, G_THREAD_ERROR, G_THREAD_ERROR_AGAIN,
			    "cannot start any worker thread");
		return FALSE;
	}
	return TRUE;
}

bool cusemu_pool_running(void)
{
	bool started;

	g_mutex_lock(&pool.lock);
	started = pool.started;
	g_mutex_unlock(&pool.lock);
	return started;
}

gboolean cusemu_pool_add(struct cusemu_pool_source *src, GError **error)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE,
				  .data.ptr = src };

	g_atomic_int_set(&src->gone, 0);
	for (unsigned int i = 0; i < pool.sets; i++) {
		if (!epoll_ctl(pool.epfds[i], EPOLL_CTL_ADD, src->fd, &ev))
			continue;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot watch descriptor %d: %s", src->fd,
			    g_strerror(errno));
		while (i--)
			epoll_ctl(pool.epfds[i], EPOLL_CTL_DEL, src->fd, NULL);
		return FALSE;
	}
	return TRUE;
}

void cusemu_pool_remove(struct cusemu_pool_source *src)
{
	/* Once only: the descriptor may be closed and its number reused. */
	if (!g_atomic_int_compare_and_exchange(&src->gone, 0, 1))
		return;
	for (unsigned int i = 0; i < pool.sets; i++)
		epoll_ctl(pool.epfds[i], EPOLL_CTL_DEL, src->fd, NULL);
}

bool cusemu_pool_stop(void (*wake)(void *data), void *data)
{
	gint64 deadline = g_get_monotonic_time() +
			  STOP_TIMEOUT_S * G_TIME_SPAN_SECOND;

	g_mutex_lock(&pool.lock);
	if (!pool.started) {
		g_mutex_unlock(&pool.lock);
		return true;
	}
	g_atomic_int_set(&pool.exiting, 1);
	if (eventfd_write(pool.stopfd, 1))
		g_warning("cannot wake the workers: %s", g_strerror(errno));
	while (g_atomic_int_get(&pool.threads)) {
		g_mutex_unlock(&pool.lock);
		if (wake)
			wake(data);
		g_mutex_lock(&pool.lock);
		if (!g_cond_wait_until(&pool.cond, &pool.lock,
				       g_get_monotonic_time() +
					       STOP_ROUND_MS *
						       G_TIME_SPAN_MILLISECOND) &&
		    g_get_monotonic_time() > deadline) {
			g_warning("%d workers do not end; leaving them",
				  g_atomic_int_get(&pool.threads));
			g_mutex_unlock(&pool.lock);
			return false;
		}
	}
	close_sets();
	pool.started = false;
	g_mutex_unlock(&pool.lock);
	return true;
}

unsigned int cusemu_pool_threads(void)
{
	return (unsigned int)g_atomic_int_get(&pool.threads);
}

void cusemu_pool_will_wait(void)
{
	if (worker_set >= 0 && !g_atomic_int_get(&pool.idle))
		spawn((unsigned int)worker_set);
}
