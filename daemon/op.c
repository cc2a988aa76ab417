/* SPDX-License-Identifier: MIT */
/*
 * The record of one request on a device, from its start to its reply: the
 * statistics of the operations other than ioctl.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <string.h>
#include <time.h>

#include <glib.h>

#include "device.h"
#include "op.h"

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
	/* An ioctl is timed by the dispatcher when it needs to: the clock
	 * is a system call on some machines. */
	if (op != CUSEMU_OP_IOCTL)
		rec->start_ns = cusemu_op_now_ns();
}

void cusemu_op_done(struct cusemu_op_record *rec)
{
	uint64_t ns = rec->start_ns ? cusemu_op_now_ns() - rec->start_ns : 0;

	if (rec->op != CUSEMU_OP_IOCTL)
		cusemu_stats_record_op(cusemu_instance(rec->dev)->stats,
				       rec->op, rec->error, ns);
}
