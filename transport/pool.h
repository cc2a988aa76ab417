/* SPDX-License-Identifier: MIT */
/*
 * One event loop and one worker pool for every device: the workers wait
 * on one epoll set that holds every session's descriptor, so the threads
 * do not grow with the devices. A request on a source nobody serves wakes
 * one waiting worker, which owns the source from then on: it reads and
 * serves the source's requests one after the other, and lets it go when
 * none is left. While it owns the source no other worker is woken for
 * it, unless it shares it (cusemu_pool_share()).
 *
 * A handler that waits (a read with nothing to read, a sleep, a lock
 * another call holds) keeps its worker; when it starts waiting and no
 * worker is left to take requests, one is added. Added workers leave
 * after a while without work, down to the configured size.
 */
#ifndef CUSEMU_POOL_H
#define CUSEMU_POOL_H

#include <stdbool.h>

#include <glib.h>

/* Workers the pool never goes beyond, waiting handlers included. */
#define CUSEMU_POOL_MAX_THREADS 4096

struct cusemu_pool_source {
	int fd;
	/*
	 * Called by a worker when fd may be readable: take what is there,
	 * one request after the other while cusemu_pool_owns() (fd is
	 * non-blocking: once shared, another worker may take it), and
	 * cusemu_pool_remove() the source once it has ended.
	 */
	void (*ready)(struct cusemu_pool_source *src);
	gint active;		/* workers inside ready() */
	gint gone;		/* removed: events still in flight are dropped */
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
 * Whether the calling thread is a worker inside ready() that owns its
 * source: nobody else takes the source's requests, so it may read the
 * next one when it is done with this one.
 */
bool cusemu_pool_owns(void);

/*
 * The calling worker's request may take long: the source's next requests
 * go to other workers from now on (its owner reads no more after this
 * one). Nothing if the thread owns no source.
 */
void cusemu_pool_share(void);

/*
 * The calling worker's call is known to take long (its handler spins):
 * it runs with a short time slice, so that a thread woken on its CPU need
 * not wait for the whole call, and on one CPU until
 * cusemu_pool_release_cpu(), *last if no other
 * long call holds it, else the one it is on or another free one, which
 * *last then names. The scheduler would otherwise at times wake the
 * spinning worker on the CPU where another device's client and worker
 * take turns, and leave them waiting there behind it (they are "cache
 * hot": not moved to the idle CPU) for the whole spin. Two long calls
 * never hold the same CPU; with one CPU, or all held, it keeps to none.
 */
void cusemu_pool_hold_cpu(gint *last);
/* The worker may run on every CPU again, with the default time slice;
 * nothing if it held neither. */
void cusemu_pool_release_cpu(void);

/*
 * The calling thread is about to wait in a handler: it lets go of the
 * CPU it held, shares its source, and if it is a worker and no other is free to take requests, one is
 * added.
 */
void cusemu_pool_will_wait(void);

#endif
