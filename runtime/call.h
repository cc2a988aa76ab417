/* SPDX-License-Identifier: MIT */
/*
 * The call record: one ioctl as it travels from the transport through the
 * dispatcher to a handler, with the client memory fetched so far. Nothing
 * here knows about FUSE, so unit tests drive it with a fake kernel.
 */
#ifndef CUSEMU_CALL_H
#define CUSEMU_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cusemu/device.h"
#include "cusemu/uaccess.h"
#include "stats.h"

struct cusemu_user_range {
	cusemu_uptr_t addr;
	uint32_t len;
	uint32_t off;	/* where its bytes sit in the in or out data */
};

/* The ranges of one direction, in the order the kernel lays their bytes. */
struct cusemu_user_ranges {
	struct cusemu_user_range r[CUSEMU_USER_MAX_RANGES];
	unsigned int count;
	uint32_t bytes;
};

/* Copies only the ranges in use, not the whole array. */
void cusemu_user_ranges_copy(struct cusemu_user_ranges *to,
			     const struct cusemu_user_ranges *from);

/* The two steps of the handler contract (<cusemu/device.h>). */
enum cusemu_phase {
	CUSEMU_PHASE_FETCH,	/* naming memory; no side effect, no copy out */
	CUSEMU_PHASE_RUN,	/* once per ioctl; only named memory */
};

struct cusemu_call {
	struct cusemu_device *dev;
	struct cusemu_file *file;
	unsigned int cmd;
	unsigned long arg;
	bool compat;		/* a 32-bit caller */
	pid_t tid;		/* the calling thread */

	struct cusemu_user_ranges in, out;
	const uint8_t *in_data;	/* bytes of in, as the kernel sent them */
	uint32_t in_avail;
	uint8_t *out_data;	/* bytes of out, to send back */
	uint32_t out_avail;
	uint32_t out_used;	/* the reply covers out_data[0, out_used) */

	enum cusemu_phase phase;
	const char *step;	/* the row or method in that phase, for logs */
	bool pending;		/* some range must still be fetched */
	bool named_out;		/* the fetch step named memory to write */
	int error;		/* -errno that fails the call whatever the handler says */

	enum cusemu_method method;	/* how the handler was reached */
	/* Kept by the transport across the call's retries: */
	unsigned int round_trips;	/* FUSE_IOCTL_RETRY replies so far */
	uint64_t start_ns;	/* when a traced call began, or 0 */
	struct cusemu_request_stats stats;
};

/* The table row for cmd, or NULL (runtime/call.c). */
const struct cusemu_ioctl *cusemu_ioctl_lookup(const struct cusemu_ioctl *table,
					       unsigned int cmd);

/*
 * The name of the call's command: the row the dispatcher ran
 * (call->stats.name), else the row of the caller's table, else of the
 * other one; NULL when no table has it.
 */
const char *cusemu_call_command_name(const struct cusemu_call *call);

/* What the transport does with a call once the handler has run. */
enum cusemu_call_outcome {
	CUSEMU_CALL_REPLY,	/* result >= 0 and out_data[0, out_used) */
	CUSEMU_CALL_ERROR,	/* -result is the errno */
	CUSEMU_CALL_RETRY,	/* send in and out ranges, expect the call again */
};

/*
 * Start a call. in_data/out_data are what the kernel sent and the room for
 * the reply; prev holds the ranges of the retry that produced them (NULL on
 * a fresh call), and must describe exactly in_len and out_len bytes.
 */
void cusemu_call_init(struct cusemu_call *call, struct cusemu_device *dev,
		      struct cusemu_file *file, unsigned int cmd,
		      unsigned long arg, bool compat, pid_t tid);
void cusemu_call_set_data(struct cusemu_call *call,
			  const struct cusemu_user_ranges *prev_in,
			  const struct cusemu_user_ranges *prev_out,
			  const void *in_data, uint32_t in_len,
			  uint8_t *out_data, uint32_t out_len);
/*
 * Restricted mode: the kernel sent the payload the _IOC bits of the command
 * describe, at arg, in_len bytes in and room for out_len bytes out.
 */
void cusemu_call_set_ioc_data(struct cusemu_call *call, const void *in_data,
			      uint32_t in_len, uint8_t *out_data,
			      uint32_t out_len);

/*
 * The positive errno a reply to the kernel carries for result, a model
 * callback's failure (result < 0): fuse_dev_do_write() refuses any error
 * but 1 to 511, and the client's request is then never answered (it waits
 * in D state, deaf to SIGKILL). ERESTARTSYS and its kin become EINTR; any
 * other value EIO, with a log line naming dev and what (the operation or
 * the command), as many as the device's rate limit lets through.
 */
int cusemu_reply_errno(long result, struct cusemu_device *dev,
		       const char *what);

/*
 * Decide the outcome from the handler's result; *result may change: an
 * errno the kernel would refuse, or a result above INT_MAX (a reply holds
 * an int), becomes an error the kernel takes (cusemu_reply_errno()).
 */
enum cusemu_call_outcome cusemu_call_outcome(struct cusemu_call *call,
					     long *result);

#endif
