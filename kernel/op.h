/* SPDX-License-Identifier: MIT */
/*
 * One request on a device (open, read, write, poll, release or ioctl) as
 * the transport answers it: filled along the way, handed over once when
 * the reply is sent, and counted in the device's statistics.
 */
#ifndef CUSEMU_OP_H
#define CUSEMU_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "stats.h"

struct cusemu_call;
struct cusemu_device;

struct cusemu_op_record {
	enum cusemu_op op;
	struct cusemu_device *dev;
	pid_t pid;		/* the caller, from the request */
	bool traced;		/* a tracer or a recording was on when it began */
	uint64_t start_ns;	/* CLOCK_MONOTONIC; 0 for an untimed ioctl */
	int error;		/* positive errno of a failed request, or 0 */
	long result;		/* read, write: bytes; poll: the mask */
	size_t size;		/* read, write: the count asked for */
	const void *data;	/* read: the bytes read; write: those written */
	struct cusemu_call *call;	/* ioctl: the call, with its stats */
};

/* The record of a request that starts now. */
void cusemu_op_begin(struct cusemu_op_record *rec, enum cusemu_op op,
		     struct cusemu_device *dev, pid_t pid);

/*
 * The record of an ioctl request of call, which the transport has started
 * (and laid a retry's data onto); a traced call's start is kept in it, for
 * the retries to come.
 */
void cusemu_op_begin_call(struct cusemu_op_record *rec,
			  struct cusemu_call *call);

/*
 * The request has been answered: count it (ioctls are counted per command
 * by the transport, with their round trips), and trace it when tracers
 * are attached or record it when its device is recorded. An ioctl answered
 * with a retry is traced and recorded when its last request is answered.
 */
void cusemu_op_done(struct cusemu_op_record *rec);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t cusemu_op_now_ns(void);

/*
 * Who reads the records of answered requests: the daemon's trace and
 * recordings subscribe as they start, so that nothing here calls up into
 * them. A request is timed and published only while a watcher is there
 * (cusemu_op_watch): without any, it pays one atomic load.
 */
typedef void (*cusemu_op_subscriber)(const struct cusemu_op_record *rec,
				     uint64_t duration_ns);

/* Each subscriber once, however often it comes; at most
 * CUSEMU_OP_SUBSCRIBERS_MAX, never taken back. */
#define CUSEMU_OP_SUBSCRIBERS_MAX 4
void cusemu_op_subscribe(cusemu_op_subscriber fn);

/* A watcher (a tracer, a recording) comes (+1) or goes (-1). */
void cusemu_op_watch(int delta);

extern gint cusemu_op_watchers;

static inline bool cusemu_op_watched(void)
{
	return g_atomic_int_get(&cusemu_op_watchers) > 0;
}

#endif
