/* SPDX-License-Identifier: MIT */
/*
 * The control socket: a UNIX stream socket served from the main loop, one
 * request line per connection, answered and closed. cusemuctl is its client.
 */
#ifndef CUSEMU_CONTROL_H
#define CUSEMU_CONTROL_H

#include <sys/types.h>

#include <glib.h>

#define CUSEMU_CONTROL_DEFAULT_PATH "/run/cusemu/control"

/*
 * What the daemon answers. Each callback appends its answer to out and
 * returns 0, or returns an errno and appends a message for the user.
 */
struct cusemu_control_ops {
	/* "list": devices, nodes, model, kernel model, lock */
	int (*list)(void *data, gboolean json, GString *out);
	/* "stats" or "stats --json" */
	int (*stats)(void *data, gboolean json, GString *out);
	/* "reset": zero every statistic */
	int (*reset)(void *data, GString *out);
	/* "device NODE WORDS...": argv is NODE then the words */
	int (*device)(void *data, char **argv, GString *out);
};

struct cusemu_control;

/*
 * Listen on path (its directory is created 0755 if missing), socket mode
 * 0600 root, or 0660 with group when group != (gid_t)-1. Peers other than
 * root or that group are refused (SO_PEERCRED).
 */
struct cusemu_control *cusemu_control_start(const char *path, gid_t group,
					    const struct cusemu_control_ops *ops,
					    void *data, GError **error);
/* Stop listening and remove the socket file. */
void cusemu_control_stop(struct cusemu_control *control);

#endif
