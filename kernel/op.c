/* SPDX-License-Identifier: MIT */
/*
 * The record of one request on a device, from its start to its reply: the
 * statistics of the operations other than ioctl, the trace and the
 * recordings. Without a tracer or a recording an ioctl costs one atomic
 * load here.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <string.h>
#include <time.h>

#include <glib.h>

#include "call.h"
#include "device.h"
#include "op.h"
#include "trace.h"

uint64_t cusemu_op_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * G_GUINT64_CONSTANT(1000000000) +
	       (uint64_t)ts.tv_nsec;
}

void cusemu_op_begin(struct cusemu_op_record *rec, enum cusemu_op op,
		     struct cusemu_device *dev, pid_t pid)
{
	memset(rec, 0, sizeof(*rec));
	rec->op = op;
	rec->dev = dev;
	rec->pid = pid;
	rec->traced = cusemu_trace_on();
	/* An ioctl is timed by the dispatcher when it needs to: the clock
	 * is a system call on some machines. */
	if (op != CUSEMU_OP_IOCTL || rec->traced)
		rec->start_ns = cusemu_op_now_ns();
}

void cusemu_op_begin_call(struct cusemu_op_record *rec,
			  struct cusemu_call *call)
{
	cusemu_op_begin(rec, CUSEMU_OP_IOCTL, call->dev, call->tid);
	rec->call = call;
	if (rec->traced && !call->start_ns)
		call->start_ns = rec->start_ns;
}

void cusemu_op_done(struct cusemu_op_record *rec)
{
	struct cusemu_call *call = rec->call;
	uint64_t start = call && call->start_ns ? call->start_ns
						: rec->start_ns;
	uint64_t ns = start ? cusemu_op_now_ns() - start : 0;

	if (rec->op != CUSEMU_OP_IOCTL)
		cusemu_stats_record_op(cusemu_instance(rec->dev)->stats,
				       rec->op, rec->error, ns);
	if (G_LIKELY(!rec->traced))
		return;
	if (call) {
		if (call->stats.retry)
			return;
		rec->error = call->stats.error;
	}
	cusemu_trace_op(rec, ns);
}
