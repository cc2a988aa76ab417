/* SPDX-License-Identifier: MIT */
/*
 * Log lines a client can cause, bounded as the kernel's printk_ratelimit()
 * bounds them: a burst per interval, the rest held back and counted, and
 * the count said on the next line let through.
 */
#ifndef CUSEMU_RATELIMIT_H
#define CUSEMU_RATELIMIT_H

#include <stdbool.h>

#include <glib.h>

#include "cusemu/device.h"

/* The kernel's DEFAULT_RATELIMIT_BURST and _INTERVAL. */
#define CUSEMU_RATELIMIT_BURST 10
#define CUSEMU_RATELIMIT_INTERVAL (5 * G_TIME_SPAN_SECOND)

/* One kind of line, from one call site or of one device. A static one
 * needs no init; one in allocated memory takes cusemu_ratelimit_init().
 * Models reach their device's with cusemu_device_ratelimit(). */
struct cusemu_ratelimit {
	GMutex lock;
	gint64 begin;		/* monotonic us when the burst began, or 0 */
	unsigned int printed;	/* lines let through since begin */
	unsigned int missed;	/* held back since the last let through */
};

void cusemu_ratelimit_init(struct cusemu_ratelimit *rs);
void cusemu_ratelimit_clear(struct cusemu_ratelimit *rs);

/*
 * Whether one more line may go to the log now. note (CUSEMU_RATELIMIT_NOTE
 * bytes) gets what to add to that line: "" or, when lines were held back
 * since the last one let through, "; N lines like this suppressed".
 * Thread-safe.
 */
bool cusemu_ratelimit(struct cusemu_ratelimit *rs, char *note);

/* As cusemu_ratelimit(), at now (monotonic us): for tests. */
bool cusemu_ratelimit_at(struct cusemu_ratelimit *rs, gint64 now,
			 char *note);

#endif
