/* SPDX-License-Identifier: MIT */
/*
 * The rate limit of log lines a client can cause without end (an unmatched
 * replay call, a model's bad errno), after the kernel's lib/ratelimit.c.
 */
#include "ratelimit.h"

void cusemu_ratelimit_init(struct cusemu_ratelimit *rs)
{
	*rs = (struct cusemu_ratelimit){ 0 };
	g_mutex_init(&rs->lock);
}

void cusemu_ratelimit_clear(struct cusemu_ratelimit *rs)
{
	g_mutex_clear(&rs->lock);
}

bool cusemu_ratelimit_at(struct cusemu_ratelimit *rs, gint64 now,
			 char *note)
{
	unsigned int missed = 0;
	bool pass;

	g_mutex_lock(&rs->lock);
	if (!rs->begin || now - rs->begin >= CUSEMU_RATELIMIT_INTERVAL) {
		rs->begin = now;
		rs->printed = 0;
	}
	pass = rs->printed < CUSEMU_RATELIMIT_BURST;
	if (pass) {
		rs->printed++;
		missed = rs->missed;
		rs->missed = 0;
	} else if (rs->missed < G_MAXUINT) {
		rs->missed++;
	}
	g_mutex_unlock(&rs->lock);
	if (missed)
		g_snprintf(note, CUSEMU_RATELIMIT_NOTE,
			   "; %u lines like this suppressed", missed);
	else
		note[0] = '\0';
	return pass;
}

bool cusemu_ratelimit(struct cusemu_ratelimit *rs, char *note)
{
	return cusemu_ratelimit_at(rs, g_get_monotonic_time(), note);
}
