/* SPDX-License-Identifier: MIT */
/*
 * Statistics per device and per command: calls, native and compat, errors
 * by errno, round trips, and the locks around handlers (acquisitions,
 * contended acquisitions, wait and hold time histograms); and per device
 * the other operations (open, read, write, poll, release): calls, errors
 * by errno, time.
 */
#ifndef CUSEMU_STATS_H
#define CUSEMU_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

/* Histogram buckets: bucket i counts times in [2^(i-1), 2^i) microseconds,
 * bucket 0 those under 1 us, the last one everything longer. */
#define CUSEMU_STATS_BUCKETS 24

/* What one request to the daemon did, recorded when it is answered. */
struct cusemu_request_stats {
	unsigned int cmd;
	/* The table row's name, or NULL if unknown; kept, not copied. */
	const char *name;
	bool compat;
	bool retry;		/* answered with FUSE_IOCTL_RETRY: a round trip */
	int error;		/* errno of a failed call, 0 otherwise */
	/* Locks the dispatcher took around the handler, for this request. */
	uint32_t lock_acquisitions;
	uint32_t lock_contended;	/* had to wait for the lock */
	uint64_t lock_wait_ns;
	uint64_t lock_hold_ns;
};

/* The requests a device serves; ioctls have rows per command, the others
 * one row each. */
enum cusemu_op {
	CUSEMU_OP_OPEN,
	CUSEMU_OP_READ,
	CUSEMU_OP_WRITE,
	CUSEMU_OP_POLL,
	CUSEMU_OP_RELEASE,
	CUSEMU_OP_IOCTL,
	/* Not requests: other calls into a model, for oops reports. */
	CUSEMU_OP_CONTROL,	/* cusemuctl device NODE ... (inject too) */
	CUSEMU_OP_PROBE,
	CUSEMU_OP_SANDBOXED,
	CUSEMU_OP_REMOVE,
};

/* The operations counted by cusemu_stats_record_op(): all but ioctl. */
#define CUSEMU_STATS_OPS CUSEMU_OP_IOCTL

/* "open", "read", ..., "ioctl", "control", ..., "remove". */
const char *cusemu_op_name(enum cusemu_op op);

struct cusemu_stats;

/* commands: how many distinct commands the device's tables hold. */
struct cusemu_stats *cusemu_stats_new(unsigned int commands);
void cusemu_stats_free(struct cusemu_stats *stats);

/* Thread-safe; called by the transport once per request. */
void cusemu_stats_record(struct cusemu_stats *stats,
			 const struct cusemu_request_stats *req);

/* Thread-safe: one open, read, write, poll or release answered, error its
 * errno (0 on success), after ns nanoseconds in the daemon. */
void cusemu_stats_record_op(struct cusemu_stats *stats, enum cusemu_op op,
			    int error, uint64_t ns);

/* The symbolic name of a positive errno ("ENOTTY"), or its number in buf. */
const char *cusemu_errno_name(int error, char *buf, gsize size);

/* Expiry of an emulated timer and similar model events, by name. */
void cusemu_stats_count_event(struct cusemu_stats *stats, const char *event);

void cusemu_stats_reset(struct cusemu_stats *stats);

/* The histogram bucket of a time of ns nanoseconds. */
unsigned int cusemu_stats_bucket(uint64_t ns);

/*
 * Render the statistics of one device: as rows of a readable table, or as
 * one JSON object {"commands": [...], "operations": {...}, "events": {...}}.
 */
void cusemu_stats_append_text(struct cusemu_stats *stats, GString *out);
void cusemu_stats_append_json(struct cusemu_stats *stats, GString *out);

/* s as a JSON string, quoted and escaped, whatever bytes it holds. */
void cusemu_json_append_string(GString *out, const char *s);

#endif
