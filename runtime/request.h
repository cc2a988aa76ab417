/* SPDX-License-Identifier: MIT */
/*
 * The request context: one request of the kernel being served (open, read,
 * write, poll or ioctl), the one thing the helpers of <cusemu/uaccess.h>
 * and <cusemu/sched.h> act on, as the kernel's act on `current`. The
 * transport sets it around a model's callback; nothing else does. Its wait
 * context is how an interrupt or the session's end wakes it.
 */
#ifndef CUSEMU_REQUEST_H
#define CUSEMU_REQUEST_H

#include <glib.h>

struct cusemu_call;

/*
 * The requests of one session that wait in cusemu_cond_wait_until(), so
 * that ending the session can wake them. A request joins only while it
 * waits: serving one that does not wait takes no lock for this.
 */
struct cusemu_waiters {
	GMutex lock;			/* guards head */
	struct cusemu_wait_ctx *head;
	gint ending;			/* every wait ends at once */
};

/*
 * What a request's thread waits on, so that an interrupt from the client
 * (FUSE_INTERRUPT) can wake it: the transport makes one per request.
 */
struct cusemu_wait_ctx {
	gint interrupted;
	GMutex lock;		/* guards cond and mutex */
	GCond *cond;		/* what cusemu_cond_wait_until() waits on */
	GMutex *mutex;
	/* The session's waiters, or NULL; the links are under its lock. */
	struct cusemu_waiters *waiters;
	struct cusemu_wait_ctx *prev, *next;
};

/* waiters may be NULL (a thread outside any session). */
void cusemu_wait_ctx_init(struct cusemu_wait_ctx *ctx,
			  struct cusemu_waiters *waiters);
void cusemu_wait_ctx_clear(struct cusemu_wait_ctx *ctx);
/* From another thread: the client gave up; wake the waiter. */
void cusemu_wait_ctx_interrupt(struct cusemu_wait_ctx *ctx);

/* What ctx's thread waits on now; NULL, NULL when it is done. */
void cusemu_wait_ctx_waiting_on(struct cusemu_wait_ctx *ctx, GCond *cond,
				GMutex *mutex);

void cusemu_waiters_init(struct cusemu_waiters *waiters);
void cusemu_waiters_clear(struct cusemu_waiters *waiters);
/*
 * The session ends: every wait, now and later, returns at once. A waiter
 * between its check and its wait may miss this wake-up (the model's mutex
 * is not taken, since waiters hold it while joining): call it again until
 * the requests are done.
 */
void cusemu_waiters_end(struct cusemu_waiters *waiters);


struct cusemu_request {
	struct cusemu_wait_ctx wait;	/* how an interrupt wakes its waits */
	struct cusemu_call *call;	/* the ioctl being served, or NULL */
};

/* waiters may be NULL (a request outside any session). */
void cusemu_request_init(struct cusemu_request *req,
			 struct cusemu_waiters *waiters,
			 struct cusemu_call *call);
void cusemu_request_clear(struct cusemu_request *req);

/* The request the current thread serves from now on; NULL when done. */
void cusemu_request_set_current(struct cusemu_request *req);
struct cusemu_request *cusemu_request_current(void);

/*
 * The sleeps of the current thread in the helpers of <cusemu/sched.h> and
 * in contended dispatcher locks: odd while it sleeps. The watchdog of
 * soft lockups and hung tasks reads another thread's through the address.
 */
void cusemu_request_sleep_begin(void);
void cusemu_request_sleep_end(void);
const unsigned long *cusemu_request_sleeps(void);

/*
 * What the layer that serves requests does when a handler's thread is
 * about to wait (the worker pool lends the worker's CPU, lets another
 * worker read its source and keeps a worker free): told once at start-up,
 * as the runtime knows nothing above it; until then, nothing. The locks
 * and sleep helpers call it, and so does a question to the /proc helper
 * whose answer needs the daemon's own FUSE mount.
 */
void cusemu_request_set_will_wait(void (*will_wait)(void));
void cusemu_request_will_wait(void);

/*
 * Something the current thread holds for the call it serves besides the
 * dispatcher locks (the ioctl32 table's reader lock), let go by
 * cusemu_request_release_holds() if the model oopses under it. Holds nest.
 */
void cusemu_request_hold(void (*release)(void *data), void *data);
void cusemu_request_unhold(void);
unsigned int cusemu_request_holds(void);
/* Let go of the holds taken since cusemu_request_holds() was mark. */
void cusemu_request_release_holds(unsigned int mark);

/* What the request the current thread serves waits on, or NULL. */
static inline struct cusemu_wait_ctx *cusemu_request_wait(void)
{
	struct cusemu_request *req = cusemu_request_current();

	return req ? &req->wait : NULL;
}

/* The ioctl the current thread serves, or NULL. */
static inline struct cusemu_call *cusemu_call_current(void)
{
	struct cusemu_request *req = cusemu_request_current();

	return req ? req->call : NULL;
}

#endif
