/* SPDX-License-Identifier: MIT */
/*
 * The worker pool of pool.h. Accounting is three counters: threads (all
 * workers), idle (those in epoll_wait) and, under the lock, whether the
 * pool is ending. A worker that waits in a handler while none is idle
 * adds one; a worker past the configured size that finds no work for
 * IDLE_RETIRE_MS leaves. Nothing is created or freed per request.
 *
 * The workers wait on one epoll set that holds every source one-shot: a
 * source's event goes to one worker, which then serves it: it waits for
 * the source's requests in a blocking read of its descriptor and serves
 * them one after the other, until none has come for STAY_US (a timer
 * signal ends the read), or it has served DRAIN_MAX in a row and gives
 * the other sources their turn. The last worker to leave a source arms
 * it again. While a source is served, no other worker is woken for it,
 * but one: a second reader (READERS), invited by arming the source again
 * when its first reader takes a request while workers are idle. That is
 * libfuse's own loop, two threads reading one session in turn, and what
 * the kernel serves fastest: measured on Linux 6.18 over FUSE, a client
 * calling back to back then mostly runs on the CPU of the worker it
 * wakes, about 20 us a call, where one reader costs 80 to 90 us (every
 * call is woken across CPUs), and a worker woken from epoll_wait for
 * each request costs as much (the wake-ups of epoll land on the idle
 * CPU). A reader shares the source (cusemu_pool_share()) when it stops
 * being quick: its handler waits or is known to take long; it then
 * reads no more after this request, and another worker takes its place,
 * so that the source's other requests run meanwhile, as they run in
 * parallel on other CPUs in the kernel.
 *
 * A worker in a long call also takes a short time slice (set_slice()),
 * and yields its CPU every YIELD_US (a second timer signal, whose
 * handler calls sched_yield()): a thread woken on that CPU, a client's
 * or another worker's, runs within that time, where it would wait for
 * the scheduler's tick (1 to 4 ms) behind a handler that spins. The
 * kernel runs a spinning ioctl in its caller's time, beside the
 * caller's other threads on other CPUs; the daemon's threads must not
 * add a wait behind it. The share of CPU time stays as it was: a
 * yield only lets a waiting thread run first, and costs nothing when
 * none waits. Measured on fioc beside a 1 ms spinner (bench/'s sampler
 * and interference), it takes the p99 from 9 to 11 times its p99 alone
 * down to about 2 and 1.3.
 *
 * A long call known in advance (its device's last timed one was) is not
 * run by its reader at all when a long-call thread is free: one per CPU
 * but one, each pinned to its CPU for its life, made on the first such
 * call and gone after IDLE_RETIRE_MS without one. The reader hands the
 * call over and reads on. Run by their readers, long calls made the
 * roles churn: each was read by a reader, which then shared its source
 * and moved to the held CPU, and an idle worker took its place, often
 * the last spinner, still on that CPU, where the next quick request then
 * waited for a yield: two thread moves and an epoll wake-up per long
 * call. Handed over, nothing moves, and fioc's p99 beside a 1 ms spinner
 * fell from about 2.1 to 1.5 times its p99 alone (bench/'s sampler).
 */
#define G_LOG_DOMAIN "cusemu-pool"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool.h"
#include "request.h"

/* An added worker without work for this long leaves. */
#define IDLE_RETIRE_MS 5000
#define STOP_ROUND_MS 20
#define STOP_TIMEOUT_S 10
/* A worker's time slice in a long call: the shortest the kernel takes. */
#define LONG_CALL_SLICE_NS (100 * 1000)
/* A worker in a long call yields its CPU this often, unless this many
 * periods went by before it took the last signal. */
#define YIELD_US 50
#define YIELD_MISSED_MAX 4
/* A reader with no request for this long leaves its source. */
#define STAY_US 5000
/* Requests a reader serves in a row before the other sources' turn. */
#define DRAIN_MAX 64
/* Readers of one source at once, as libfuse's two idle threads. */
#define READERS 2
/* Ends a reader's read: not SA_RESTART. SIGRTMIN and SIGRTMIN + 1 are
 * the sandbox's and the oops watchdog's. */
#define STAY_SIGNAL (SIGRTMIN + 2)
/* Makes a worker in a long call yield: SA_RESTART, as it comes in a
 * model's own code. */
#define YIELD_SIGNAL CUSEMU_POOL_YIELD_SIGNAL
/* Long-call threads at most: one per CPU but one, up to this. */
#define LONG_THREADS_MAX 16

/* What a long-call thread is doing; its slot's state. */
enum long_state {
	LONG_NONE,		/* no thread */
	LONG_IDLE,		/* waiting for a call */
	LONG_RESERVED,		/* a reader is about to hand one over */
	LONG_BUSY,		/* running one */
};

/* A long-call thread (pool.h): written under lock, state read without. */
struct long_slot {
	GMutex lock;
	GCond cond;
	gint state;			/* enum long_state */
	struct cusemu_pool_job *job;	/* handed over, not yet taken */
	int avoid;		/* the CPU of the reader that started it */
};

static struct {
	GMutex lock;		/* guards started, exiting and the cond */
	GCond cond;		/* a worker left */
	bool started;
	gint exiting;
	int epfd;
	int stopfd;		/* readable once the pool ends: wakes every worker */
	unsigned int size;
	gint threads;
	gint idle;
	gint warned;		/* the limit of threads was met once */
	/* The CPUs the workers may run on, and those a long call holds. */
	GMutex cpu_lock;
	cpu_set_t allowed;
	cpu_set_t held;
	int n_allowed;
	struct long_slot longs[LONG_THREADS_MAX];
	int n_longs;
} pool = { .epfd = -1, .stopfd = -1 };

/*
 * This thread, as a worker: the pool's calls from a handler's path
 * (cusemu_pool_hold_cpu(), the lock's will-wait hook) carry no worker.
 * Whether it is one, and a long-call thread; the source it serves, and
 * the one it reads, until it shares it; the long-call thread it reserved;
 * the CPU its long call holds, or -1; whether that call runs with the
 * short slice, and yields; the timers that end its reads and make it
 * yield.
 */
static __thread struct {
	bool is_worker;
	bool is_long;
	struct cusemu_pool_source *serving;
	struct cusemu_pool_source *reading;
	struct long_slot *reserved;
	int held_cpu;
	bool short_slice;
	bool yielding;
	timer_t timer;
	timer_t yield_timer;
} me = { .held_cpu = -1 };

static gpointer worker(gpointer data);
static void wake_longs(void);

/* One worker less; the stop waits for the count to reach 0. */
static void count_out(void)
{
	g_mutex_lock(&pool.lock);
	g_atomic_int_add(&pool.threads, -1);
	g_cond_broadcast(&pool.cond);
	g_mutex_unlock(&pool.lock);
}

/* One more thread running fn(data), counted as a worker, unless the
 * pool ends or is at its limit: true if so. */
static bool spawn_thread(const char *name, GThreadFunc fn, gpointer data)
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
		return false;
	}
	g_atomic_int_inc(&pool.threads);
	g_mutex_unlock(&pool.lock);
	thread = g_thread_try_new(name, fn, data, &error);
	if (thread) {
		g_thread_unref(thread);
		return true;
	}
	g_warning("cannot add a worker: %s", error->message);
	count_out();
	return false;
}

/* One more worker. */
static void spawn(void)
{
	spawn_thread("cusemu-worker", worker, NULL);
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

/* Events for src again: its next request wakes a worker. */
static void arm(struct cusemu_pool_source *src)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
				  .data.ptr = src };

	/* Removed meanwhile: ENOENT, and the descriptor is still open. */
	if (!g_atomic_int_get(&src->gone) &&
	    epoll_ctl(pool.epfd, EPOLL_CTL_MOD, src->fd, &ev) &&
	    errno != ENOENT)
		g_warning("cannot watch descriptor %d again: %s", src->fd,
			  g_strerror(errno));
}

/* One reader less for src: the last one arms it again. */
static void leave(struct cusemu_pool_source *src)
{
	if (g_atomic_int_add(&src->readers, -1) == 1)
		arm(src);
}

/* Read src's requests one after the other, as one of its readers. */
static void read_source(struct cusemu_pool_source *src)
{
	me.reading = src;
	for (unsigned int i = 0; i < DRAIN_MAX; i++) {
		if (g_atomic_int_get(&src->gone) ||
		    g_atomic_int_get(&pool.exiting) ||
		    src->take(src) <= 0)
			break;
		/* A handler that faulted jumped past its release. */
		cusemu_pool_release_cpu();
		if (me.reading != src)
			return;		/* shared: one reader less already */
	}
	me.reading = NULL;
	leave(src);
}

static void serve(struct cusemu_pool_source *src)
{
	/* Counted before gone is read: remove() then waits for us. */
	g_atomic_int_inc(&src->active);
	me.serving = src;
	if (g_atomic_int_add(&src->readers, 1) < READERS)
		read_source(src);
	else
		leave(src);	/* enough read it: the event was for them */
	me.serving = NULL;
	g_atomic_int_add(&src->active, -1);
}

/* struct sched_attr of <linux/sched/types.h>, which glibc's <sched.h>
 * cannot be included with. */
struct slice_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/*
 * The calling thread's time slice: slice_ns, or the kernel's default for
 * 0; its policy and nice value kept. The kernel runs an ioctl in its
 * caller's own time, a worker in its own. The scheduler (EEVDF) lets a
 * running thread finish its slice before a thread woken on its CPU runs,
 * and the default slice (0.75 ms times 1 + log2 of the CPUs) is longer
 * than a handler that spins 1 ms: a client woken on that CPU by its own
 * timer waited for the whole spin. A short slice changes no share of CPU
 * time, only when the thread is preempted; quick calls keep the default,
 * which lets a worker serve a client's calls back to back with fewer
 * preemptions. Since Linux 6.12 (sched_runtime of a normal thread); older
 * kernels take the call and keep their slice.
 */
static bool set_slice(uint64_t slice_ns)
{
	struct slice_attr a = { 0 };

	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0))
		return false;
	if (a.sched_policy != SCHED_OTHER && a.sched_policy != SCHED_BATCH)
		return false;
	a.size = sizeof(a);
	a.sched_flags = 0;
	a.sched_runtime = slice_ns;
	return !syscall(SYS_sched_setattr, 0, &a, 0);
}

static void on_stay_signal(int signo)
{
	(void)signo;
}

/* Yield every YIELD_US from now on, or no more. */
static bool yield_often(bool on)
{
	struct itimerspec every = { 0 };

	if (on)
		every.it_value.tv_nsec = every.it_interval.tv_nsec =
			YIELD_US * 1000;
	return !timer_settime(me.yield_timer, 0, &every, NULL);
}

static void on_yield_signal(int signo)
{
	int saved = errno;

	(void)signo;
	/*
	 * Periods went by while this signal waited to be taken: the thread
	 * cannot take one each period (a tracer stops it at each signal, or
	 * it does not get a CPU anyway). Yields would then leave the call no
	 * time of its own: none more for this call.
	 */
	if (timer_getoverrun(me.yield_timer) >= YIELD_MISSED_MAX)
		yield_often(false);
	else
		sched_yield();
	errno = saved;
}

/* Installed before the first worker, and left installed: a late signal
 * must not find the default action (to die). */
static void signals_setup(void)
{
	struct sigaction stay = { .sa_handler = on_stay_signal };
	struct sigaction yield = { .sa_handler = on_yield_signal,
				   .sa_flags = SA_RESTART };

	sigfillset(&stay.sa_mask);
	sigaction(STAY_SIGNAL, &stay, NULL);
	sigfillset(&yield.sa_mask);
	sigaction(YIELD_SIGNAL, &yield, NULL);
}

/* A timer of this thread's that sends it signo: errno or 0. */
static int timer_make(int signo, timer_t *timer)
{
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID,
			       .sigev_signo = signo };

	/* sigev_notify_thread_id, which glibc before 2.38 does not name */
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	return timer_create(CLOCK_MONOTONIC, &ev, timer) ? errno : 0;
}

/* This worker's two timers: false if it has none. */
static bool timers_make(void)
{
	int err = timer_make(STAY_SIGNAL, &me.timer);

	if (!err) {
		err = timer_make(YIELD_SIGNAL, &me.yield_timer);
		if (!err)
			return true;
		timer_delete(me.timer);
	}
	g_warning("a worker cannot make its timers: %s; it leaves",
		  g_strerror(err));
	return false;
}

static void timers_delete(void)
{
	timer_delete(me.timer);
	timer_delete(me.yield_timer);
}

/* A new worker's signals: whatever the thread that added it had blocked,
 * but the pool's own. */
static void worker_signals(void)
{
	sigset_t ours;

	sigemptyset(&ours);
	sigaddset(&ours, STAY_SIGNAL);
	sigaddset(&ours, YIELD_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &ours, NULL);
}

static gpointer worker(gpointer data)
{
	(void)data;
	me.is_worker = true;
	worker_signals();
	if (!timers_make()) {
		count_out();
		return NULL;
	}
	for (;;) {
		struct epoll_event ev;
		int timeout = g_atomic_int_get(&pool.threads) > (gint)pool.size
				      ? IDLE_RETIRE_MS
				      : -1;
		int n;

		g_atomic_int_inc(&pool.idle);
		n = epoll_wait(pool.epfd, &ev, 1, timeout);
		g_atomic_int_add(&pool.idle, -1);
		if (g_atomic_int_get(&pool.exiting))
			break;
		if (n == 0 && retire()) {
			timers_delete();
			return NULL;
		}
		if (n == 1 && ev.data.ptr != &pool)
			serve(ev.data.ptr);
	}
	timers_delete();
	count_out();
	return NULL;
}

static void close_set(void)
{
	if (pool.epfd >= 0)
		close(pool.epfd);
	pool.epfd = -1;
	if (pool.stopfd >= 0)
		close(pool.stopfd);
	pool.stopfd = -1;
}

/* The set, with the stop descriptor (which wakes all): errno or 0. */
static int open_set(void)
{
	/* Level-triggered, not one-shot: a stop wakes every worker. */
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &pool };

	pool.stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pool.stopfd < 0)
		return errno;
	pool.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (pool.epfd < 0)
		return errno;
	if (epoll_ctl(pool.epfd, EPOLL_CTL_ADD, pool.stopfd, &ev))
		return errno;
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
	err = open_set();
	if (err) {
		close_set();
		g_mutex_unlock(&pool.lock);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    "cannot make the workers' event loop: %s",
			    g_strerror(err));
		return FALSE;
	}
	pool.size = size;
	pool.started = true;
	if (sched_getaffinity(0, sizeof(pool.allowed), &pool.allowed))
		CPU_ZERO(&pool.allowed);
	pool.n_allowed = CPU_COUNT(&pool.allowed);
	pool.n_longs = CLAMP(pool.n_allowed - 1, 0, LONG_THREADS_MAX);
	CPU_ZERO(&pool.held);
	g_atomic_int_set(&pool.exiting, 0);
	g_atomic_int_set(&pool.warned, 0);
	g_mutex_unlock(&pool.lock);
	cusemu_request_set_will_wait(cusemu_pool_will_wait);
	signals_setup();
	for (unsigned int i = 0; i < size; i++)
		spawn();
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
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
				  .data.ptr = src };

	g_atomic_int_set(&src->gone, 0);
	g_atomic_int_set(&src->readers, 0);
	if (!epoll_ctl(pool.epfd, EPOLL_CTL_ADD, src->fd, &ev))
		return TRUE;
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "cannot watch descriptor %d: %s", src->fd, g_strerror(errno));
	return FALSE;
}

void cusemu_pool_remove(struct cusemu_pool_source *src)
{
	/* Once only: the descriptor may be closed and its number reused. */
	if (!g_atomic_int_compare_and_exchange(&src->gone, 0, 1))
		return;
	epoll_ctl(pool.epfd, EPOLL_CTL_DEL, src->fd, NULL);
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
		wake_longs();
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
	close_set();
	pool.started = false;
	g_mutex_unlock(&pool.lock);
	return true;
}

unsigned int cusemu_pool_threads(void)
{
	return (unsigned int)g_atomic_int_get(&pool.threads);
}

void cusemu_pool_read_begin(void)
{
	/* Again after each STAY_US: a signal that came before the read
	 * began did not end it, the next one will. */
	struct itimerspec at = {
		.it_value = { .tv_nsec = STAY_US * 1000L },
		.it_interval = { .tv_nsec = STAY_US * 1000L },
	};

	timer_settime(me.timer, 0, &at, NULL);
}

void cusemu_pool_read_end(void)
{
	static const struct itimerspec off;
	struct cusemu_pool_source *src = me.reading;

	timer_settime(me.timer, 0, &off, NULL);
	/* A request came: a second reader, if a worker is idle to be one. */
	if (src && g_atomic_int_get(&src->readers) < READERS &&
	    g_atomic_int_get(&pool.idle) > 1)
		arm(src);
}

void cusemu_pool_share(void)
{
	struct cusemu_pool_source *src = me.reading;

	if (!src)
		return;
	me.reading = NULL;
	/* Another worker reads it meanwhile. */
	g_atomic_int_add(&src->readers, -1);
	arm(src);
}

/* cpu, if the workers may run there and no other long call holds it. */
static bool cpu_free(int cpu)
{
	return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &pool.allowed) &&
	       !CPU_ISSET(cpu, &pool.held);
}

/* The CPU for a long call, marked held: last, else this one, else any
 * free one; -1 if every one is held. Under cpu_lock. */
static int pick_cpu(int last)
{
	int here = sched_getcpu();

	if (cpu_free(last))
		return last;
	if (cpu_free(here))
		return here;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (cpu_free(cpu))
			return cpu;
	return -1;
}

/* The thread runs on cpu alone from now on: false if it cannot. */
static bool pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return !sched_setaffinity(0, sizeof(one), &one);
}

/* cpu, held, or -1, is free again. */
static void cpu_give(int cpu)
{
	if (cpu < 0)
		return;
	g_mutex_lock(&pool.cpu_lock);
	CPU_CLR(cpu, &pool.held);
	g_mutex_unlock(&pool.cpu_lock);
}

void cusemu_pool_hold_cpu(gint *last)
{
	int cpu;

	if (me.is_long)
		return;		/* on its own CPU, yielding, already */
	if (me.is_worker && !me.short_slice)
		me.short_slice = set_slice(LONG_CALL_SLICE_NS);
	if (me.is_worker && !me.yielding)
		me.yielding = yield_often(true);
	if (!me.is_worker || me.held_cpu >= 0 || pool.n_allowed < 2)
		return;
	g_mutex_lock(&pool.cpu_lock);
	cpu = pick_cpu(g_atomic_int_get(last));
	if (cpu >= 0)
		CPU_SET(cpu, &pool.held);
	g_mutex_unlock(&pool.cpu_lock);
	if (cpu < 0)
		return;
	if (!pin(cpu)) {
		cpu_give(cpu);
		return;
	}
	me.held_cpu = cpu;
	g_atomic_int_set(last, cpu);
}

void cusemu_pool_release_cpu(void)
{
	if (me.yielding && yield_often(false))
		me.yielding = false;
	if (me.is_long)
		return;		/* its CPU and slice are its own for its life */
	if (me.short_slice && set_slice(0))
		me.short_slice = false;
	if (me.held_cpu < 0)
		return;
	if (sched_setaffinity(0, sizeof(pool.allowed), &pool.allowed))
		g_warning("cannot let a worker run on every CPU again: %s",
			  g_strerror(errno));
	cpu_give(me.held_cpu);
	me.held_cpu = -1;
}

void cusemu_pool_will_wait(void)
{
	/* It waits: its CPU is for others meanwhile. */
	cusemu_pool_release_cpu();
	cusemu_pool_share();
	/* A long-call thread reads no source: its wait keeps none waiting. */
	if (me.is_worker && !me.is_long && !g_atomic_int_get(&pool.idle))
		spawn();
}

/* ---- long-call threads (pool.h) */

/*
 * The CPU a new long-call thread keeps, marked held: a free one other
 * than avoid (the reader's, which handed the call over), else avoid; -1
 * if every one is held.
 */
static int long_cpu_take(int avoid)
{
	int cpu = -1;

	g_mutex_lock(&pool.cpu_lock);
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (c != avoid && cpu_free(c))
			cpu = c;
	if (cpu < 0 && cpu_free(avoid))
		cpu = avoid;
	if (cpu >= 0)
		CPU_SET(cpu, &pool.held);
	g_mutex_unlock(&pool.cpu_lock);
	return cpu;
}

/*
 * Wait for the next call under s->lock: false when the thread is to
 * leave (the pool ends, or it was idle for IDLE_RETIRE_MS), its state
 * then LONG_NONE. A reserved slot waits for its call even then: the
 * reader hands it over next.
 */
static bool long_wait(struct long_slot *s)
{
	gint64 until = g_get_monotonic_time() +
		       IDLE_RETIRE_MS * G_TIME_SPAN_MILLISECOND;

	while (!s->job) {
		if (g_atomic_int_get(&s->state) == LONG_RESERVED) {
			g_cond_wait(&s->cond, &s->lock);
			continue;
		}
		if (g_atomic_int_get(&pool.exiting) ||
		    g_get_monotonic_time() >= until) {
			g_atomic_int_set(&s->state, LONG_NONE);
			return false;
		}
		g_cond_wait_until(&s->cond, &s->lock, until);
	}
	return true;
}

/*
 * A long-call thread: pinned to its CPU, with the short time slice, it
 * runs the calls handed over, yielding every YIELD_US in each, as a
 * worker does in a long call it runs itself.
 */
static gpointer long_worker(gpointer data)
{
	struct long_slot *s = data;
	int cpu = long_cpu_take(s->avoid);

	me.is_worker = true;
	me.is_long = true;
	worker_signals();
	if (timer_make(YIELD_SIGNAL, &me.yield_timer))
		me.yield_timer = NULL;	/* it runs its calls without yields */
	if (cpu >= 0 && !pin(cpu)) {
		cpu_give(cpu);
		cpu = -1;
	}
	me.short_slice = set_slice(LONG_CALL_SLICE_NS);
	g_mutex_lock(&s->lock);
	while (long_wait(s)) {
		struct cusemu_pool_job *job = s->job;
		struct cusemu_pool_source *src = job->src;

		s->job = NULL;
		g_atomic_int_set(&s->state, LONG_BUSY);
		g_mutex_unlock(&s->lock);
		me.yielding = me.yield_timer && yield_often(true);
		job->work(job);
		cusemu_pool_release_cpu();	/* its yields, unless a wait stopped them */
		g_atomic_int_add(&src->active, -1);
		g_mutex_lock(&s->lock);
		g_atomic_int_set(&s->state, LONG_IDLE);
	}
	g_mutex_unlock(&s->lock);
	cpu_give(cpu);
	if (me.yield_timer)
		timer_delete(me.yield_timer);
	count_out();
	return NULL;
}

static void wake_longs(void)
{
	for (int i = 0; i < pool.n_longs; i++) {
		g_mutex_lock(&pool.longs[i].lock);
		g_cond_broadcast(&pool.longs[i].cond);
		g_mutex_unlock(&pool.longs[i].lock);
	}
}

bool cusemu_pool_long_reserve(void)
{
	if (!me.is_worker || me.is_long || !me.serving ||
	    g_atomic_int_get(&pool.exiting))
		return false;
	for (int i = 0; i < pool.n_longs; i++) {
		struct long_slot *s = &pool.longs[i];
		gint was = g_atomic_int_get(&s->state);

		if (was != LONG_IDLE && was != LONG_NONE)
			continue;
		g_mutex_lock(&s->lock);
		was = g_atomic_int_get(&s->state);
		if (was == LONG_IDLE || was == LONG_NONE)
			g_atomic_int_set(&s->state, LONG_RESERVED);
		g_mutex_unlock(&s->lock);
		if (was == LONG_NONE)
			s->avoid = sched_getcpu();
		if (was == LONG_NONE &&
		    !spawn_thread("cusemu-long", long_worker, s)) {
			g_atomic_int_set(&s->state, LONG_NONE);
			return false;
		}
		if (was == LONG_IDLE || was == LONG_NONE) {
			me.reserved = s;
			return true;
		}
	}
	return false;
}

void cusemu_pool_long_run(struct cusemu_pool_job *job)
{
	struct long_slot *s = me.reserved;

	me.reserved = NULL;
	job->src = me.serving;
	/* Until the call has run: a stop waits for it. */
	g_atomic_int_inc(&job->src->active);
	g_mutex_lock(&s->lock);
	s->job = job;
	g_cond_signal(&s->cond);
	g_mutex_unlock(&s->lock);
}

void cusemu_pool_long_cancel(void)
{
	struct long_slot *s = me.reserved;

	me.reserved = NULL;
	g_mutex_lock(&s->lock);
	g_atomic_int_set(&s->state, LONG_IDLE);
	g_cond_signal(&s->cond);
	g_mutex_unlock(&s->lock);
}
