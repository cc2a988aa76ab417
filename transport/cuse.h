/* SPDX-License-Identifier: MIT */
/*
 * The CUSE transport: one session per device instance, each with its
 * /dev node; cusemu_cuse_ops is its table (transport.h). The sessions'
 * own calls are for the unit tests' fake libfuse.
 */
#ifndef CUSEMU_CUSE_H
#define CUSEMU_CUSE_H

#include <stdbool.h>

#include <glib.h>

#include "cusemu/device.h"
#include "transport.h"

extern const struct cusemu_transport_ops cusemu_cuse_ops;

struct cusemu_session;

struct cusemu_session_options {
	bool debug;			/* libfuse's request trace */
	unsigned int major, minor;	/* the node's number; major 0: dynamic */
};

/* Open /dev/cuse for dev and start serving it; the node appears soon after. */
struct cusemu_session *
cusemu_session_start(struct cusemu_device *dev,
		     const struct cusemu_session_options *opts, GError **error);

/* True once the session loop has ended (the kernel dropped it, or stop). */
bool cusemu_session_ended(struct cusemu_session *s);
/* The kernel has answered the session's CUSE_INIT (or the session ended). */
bool cusemu_session_init_sent(struct cusemu_session *s);
/* The kernel registered the session's device: its CUSE_INIT was taken and
 * the connection lives. False for the loser of a race for a node name. */
bool cusemu_session_registered(struct cusemu_session *s);

/*
 * End the loop, close /dev/cuse (the node goes away) and release what
 * clients left open. Safe with clients connected or blocked.
 */
void cusemu_session_stop(struct cusemu_session *s);

/*
 * Free what is left, once the device's model has stopped its own threads
 * (they may still call cusemu_device_wake_up() until then).
 */
void cusemu_session_free(struct cusemu_session *s);

#endif
