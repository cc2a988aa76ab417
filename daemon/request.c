/* SPDX-License-Identifier: MIT */
/* The request context of the current thread (see request.h). */
#include <glib.h>

#include "request.h"

/* A handler holds the ioctl32 table at most once; nesting is for safety. */
#define MAX_HOLDS 4

static __thread struct cusemu_request *current;
static __thread unsigned long sleeps;
static __thread struct {
	void (*release)(void *data);
	void *data;
} holds[MAX_HOLDS];
static __thread unsigned int n_holds;

void cusemu_request_init(struct cusemu_request *req,
			 struct cusemu_waiters *waiters,
			 struct cusemu_call *call)
{
	cusemu_wait_ctx_init(&req->wait, waiters);
	req->call = call;
}

void cusemu_request_clear(struct cusemu_request *req)
{
	cusemu_wait_ctx_clear(&req->wait);
}

void cusemu_request_set_current(struct cusemu_request *req)
{
	current = req;
}

struct cusemu_request *cusemu_request_current(void)
{
	return current;
}

void cusemu_request_sleep_begin(void)
{
	__atomic_store_n(&sleeps, sleeps + 1, __ATOMIC_RELAXED);
}

void cusemu_request_sleep_end(void)
{
	__atomic_store_n(&sleeps, sleeps + 1, __ATOMIC_RELAXED);
}

const unsigned long *cusemu_request_sleeps(void)
{
	return &sleeps;
}

void cusemu_request_hold(void (*release)(void *data), void *data)
{
	g_return_if_fail(n_holds < MAX_HOLDS);
	holds[n_holds].release = release;
	holds[n_holds].data = data;
	n_holds++;
}

void cusemu_request_unhold(void)
{
	g_return_if_fail(n_holds > 0);
	n_holds--;
}

unsigned int cusemu_request_holds(void)
{
	return n_holds;
}

void cusemu_request_release_holds(unsigned int mark)
{
	while (n_holds > mark) {
		n_holds--;
		holds[n_holds].release(holds[n_holds].data);
	}
}
