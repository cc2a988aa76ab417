/* SPDX-License-Identifier: MIT */
/*
 * The record of one request on a device, from its start to its reply: the
 * statistics of the operations other than ioctl, and the record published
 * to its subscribers (the trace and the recordings). Without a tracer or a
 * recording an ioctl costs one atomic load here.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <string.h>
#include <time.h>

#include <glib.h>

#include "call.h"
#include "device.h"
#include "op.h"

gint cusemu_op_watchers;

/* Who takes every record, one list for the process: what the daemon
 * subscribed at start-up. n is published after its slot is filled:
 * cusemu_op_done() reads no lock. */
static struct {
	cusemu_op_subscriber fn[CUSEMU_OP_SUBSCRIBERS_MAX];
	gint n;
	GMutex lock;
} subscribers;

void cusemu_op_subscribe(cusemu_op_subscriber fn)
{
	int n;

	g_mutex_lock(&subscribers.lock);
	n = g_atomic_int_get(&subscribers.n);
	for (int i = 0; i < n; i++)
		if (subscribers.fn[i] == fn)
			goto out;
	g_assert(n < CUSEMU_OP_SUBSCRIBERS_MAX);
	subscribers.fn[n] = fn;
	g_atomic_int_set(&subscribers.n, n + 1);
out:
	g_mutex_unlock(&subscribers.lock);
}

void cusemu_op_watch(int delta)
{
	g_atomic_int_add(&cusemu_op_watchers, delta);
}

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
	rec->traced = cusemu_op_watched();
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
	int n;

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
	n = g_atomic_int_get(&subscribers.n);
	for (int i = 0; i < n; i++)
		subscribers.fn[i](rec, ns);
}
