/* SPDX-License-Identifier: MIT */
/*
 * One event loop and one worker pool for every device: the workers wait
 * on one epoll set that holds every session's descriptor, so the threads
 * do not grow with the devices. A request on a source nobody serves wakes
 * one waiting worker, which reads the source from then on: it waits for
 * its requests in a blocking read and serves them one after the other,
 * and lets it go when none has come for a few milliseconds. While it
 * reads the source no other worker is woken for it but one, a second
 * reader, as in libfuse's own loop; or when it shares it
 * (cusemu_pool_share()).
 *
 * A call known to run long is handed to a long-call thread, which stays
 * on its CPU (cusemu_pool_long_reserve()).
 *
 * A handler that waits (a read with nothing to read, a sleep, a lock
 * another call holds) keeps its worker; when it starts waiting and no
 * worker is left to take requests, one is added. Added workers leave
 * after a while without work, down to the configured size.
 */
#ifndef CUSEMU_POOL_H
#define CUSEMU_POOL_H

#include <signal.h>
#include <stdbool.h>

#include <glib.h>

/* Workers the pool never goes beyond, waiting handlers included. */
#define CUSEMU_POOL_MAX_THREADS 4096

struct cusemu_pool_source {
	/* Blocking: a reader waits in a read of it, which the pool ends. */
	int fd;
	/*
	 * Called by a worker, one of the source's readers, for its next
	 * request: a read of fd between cusemu_pool_read_begin() and
	 * cusemu_pool_read_end(), which may wait and then ends with EINTR
	 * when none comes; then the request served. 1 if one was served, 0
	 * if none came (EINTR, or EAGAIN), -1 once the source has ended: it
	 * calls cusemu_pool_remove() then.
	 */
	int (*take)(struct cusemu_pool_source *src);
	gint active;		/* workers inside take() */
	gint gone;		/* removed: events still in flight are dropped */
	gint readers;		/* the pool's: its readers now */
};

/* Start size workers, once; later calls do nothing. */
gboolean cusemu_pool_start(unsigned int size, GError **error);
/* Serve src from now on; it must stay valid until cusemu_pool_stop(). */
gboolean cusemu_pool_add(struct cusemu_pool_source *src, GError **error);
/*
 * No more events for src; workers inside ready() may still be there
 * (src->active): wait for them before closing its descriptor.
 */
void cusemu_pool_remove(struct cusemu_pool_source *src);
/* Whether the pool was started: sources added, workers running. */
bool cusemu_pool_running(void);

/*
 * End every worker. Workers held by waiting handlers are let go through
 * wake(data), called every 20 ms until they are; false if some still
 * had not after 10 s (they are left running, and the pool with them).
 */
bool cusemu_pool_stop(void (*wake)(void *data), void *data);

/* The workers now, waiting handlers' included. */
unsigned int cusemu_pool_threads(void);

/*
 * Around a take()'s read: from begin, a signal ends the read (EINTR)
 * once a few milliseconds pass without a request; from end, none does,
 * and if a request came, a second reader may be woken for the source.
 */
void cusemu_pool_read_begin(void);
void cusemu_pool_read_end(void);

/*
 * The calling worker's request may take long: the source's next requests
 * go to other workers from now on (this one reads no more after this
 * request). Nothing if the thread reads no source.
 */
void cusemu_pool_share(void);

/* The signal that makes a worker in a long call yield (below). */
#define CUSEMU_POOL_YIELD_SIGNAL (SIGRTMIN + 3)

/*
 * The calling worker's call is known to take long (its handler spins):
 * it runs with a short time slice and yields its CPU every 50 us (a timer
 * signal with SA_RESTART; no more in this call once it could not take
 * one each period), so that a thread woken on its CPU need not
 * wait for the whole call, and on one CPU until
 * cusemu_pool_release_cpu(), *last if no other
 * long call holds it, else the one it is on or another free one, which
 * *last then names. The scheduler would otherwise at times wake the
 * spinning worker on the CPU where another device's client and worker
 * take turns, and leave them waiting there behind it (they are "cache
 * hot": not moved to the idle CPU) for the whole spin. Two long calls
 * never hold the same CPU; with one CPU, or all held, it keeps to none.
 */
void cusemu_pool_hold_cpu(gint *last);
/* The worker may run on every CPU again, with the default time slice,
 * and yields no more; nothing if it did none of these. A long-call
 * thread only stops its yields: its CPU and slice are its own. */
void cusemu_pool_release_cpu(void);

/*
 * A long call handed to a thread of its own: work(job) there, once; the
 * job is the caller's, freed by work if it was allocated.
 */
struct cusemu_pool_job {
	void (*work)(struct cusemu_pool_job *job);
	struct cusemu_pool_source *src;	/* the pool's: counted active */
};

/*
 * Long calls run on threads of their own, one per CPU but one, each
 * pinned to its CPU for its life: the reader that takes such a call
 * hands it over (cusemu_pool_long_run()) and goes on reading its source,
 * so that no thread moves between CPUs per call and the readers stay
 * readers. Such a thread runs its calls with the short time slice and
 * the yields of cusemu_pool_hold_cpu(). With one CPU there is none, and
 * while all are busy none is free: the reader then runs the call itself,
 * sharing its source and holding a CPU (above).
 *
 * Reserve one: true if the calling worker may hand its call over, and
 * must then call cusemu_pool_long_run() or cusemu_pool_long_cancel().
 * False on a long-call thread itself, on a thread that is no worker, and
 * when every long-call thread is busy.
 */
bool cusemu_pool_long_reserve(void);
/* Run job on the thread reserved; the source the caller serves is counted
 * active until its work returns. */
void cusemu_pool_long_run(struct cusemu_pool_job *job);
/* Let the thread reserved go, unused. */
void cusemu_pool_long_cancel(void);

/*
 * The calling thread is about to wait in a handler: it lets go of the
 * CPU it held, shares its source, and if it is a worker that reads (not
 * a long-call thread) and no other is free to take requests, one is
 * added.
 */
void cusemu_pool_will_wait(void);

#endif
