/* SPDX-License-Identifier: MIT */
/*
 * The live trace: one JSON line per request on a device as it is answered,
 * pushed to the tracers attached to the control socket (cusemuctl trace).
 * The format is docs/daemon.md's "Trace lines", version 1.
 */
#ifndef CUSEMU_TRACE_H
#define CUSEMU_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "op.h"

/* Tracers attached at most at once. */
#define CUSEMU_TRACE_TRACERS_MAX 4
/* Bytes of lines a tracer may have waiting; beyond, lines are lost. */
#define CUSEMU_TRACE_QUEUE_MAX (1024 * 1024)
/* Bytes of a payload a tracer is shown per direction; the rest is cut. */
#define CUSEMU_TRACE_DATA_MAX 4096
/* ... and a recording: every byte. */
#define CUSEMU_TRACE_DATA_ALL SIZE_MAX

/* Tracers attached now, or recordings under way (record.h). */
static inline bool cusemu_trace_on(void)
{
	return cusemu_op_watched();
}

/* What a line says besides the record: when, who, in which ABI. */
struct cusemu_trace_caller {
	gint64 wall_us;		/* g_get_real_time() at the reply */
	const char *comm;	/* NULL when unknown */
	const char *abi;	/* "x86_64", "i386", or NULL when unknown */
};

/*
 * The line of one answered request, with its '\n', appended to out; at
 * most data_max bytes of payload per direction (CUSEMU_TRACE_DATA_MAX for
 * tracers, CUSEMU_TRACE_DATA_ALL for a recording), the rest cut.
 */
void cusemu_trace_format(GString *out, const struct cusemu_op_record *rec,
			 uint64_t duration_ns,
			 const struct cusemu_trace_caller *caller,
			 size_t data_max);

/*
 * The header line, with its '\n': the nodes (NULL: every node), then the
 * members in more (",\"name\":value..."; NULL for none).
 */
void cusemu_trace_header(GString *out, char **nodes, const char *more);

/* Who made the request of rec, and when it is answered: now. */
void cusemu_trace_caller_of(const struct cusemu_op_record *rec,
			    struct cusemu_trace_caller *caller);

/* Format rec's line and push it to the tracers of its node. Any thread. */
void cusemu_trace_op(const struct cusemu_op_record *rec,
		     uint64_t duration_ns);

/*
 * From the main loop: a tracer on fd (a connected, non-blocking stream
 * socket, taken over, closed when it goes) for the named nodes (NULL or
 * empty: all). Its first line is the header. Returns 0, or an errno with a
 * message in err (fd not taken) when CUSEMU_TRACE_TRACERS_MAX are attached.
 */
int cusemu_trace_attach(int fd, char **nodes, GString *err);

/* Close every tracer (at the daemon's end). */
void cusemu_trace_detach_all(void);

#endif
