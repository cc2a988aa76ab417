/* SPDX-License-Identifier: MIT */
/* The request context of the current thread (see request.h). */
#include "request.h"

static __thread struct cusemu_request *current;

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
