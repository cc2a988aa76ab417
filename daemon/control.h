/* SPDX-License-Identifier: MIT */
/*
 * The control socket: a UNIX stream socket served from the main loop, one
 * request line per connection, answered and closed. cusemuctl is its client.
 */
#ifndef CUSEMU_CONTROL_H
#define CUSEMU_CONTROL_H

#include <stdbool.h>
#include <sys/types.h>
#include <unistd.h>

#include <glib.h>

#define CUSEMU_CONTROL_DEFAULT_PATH "/run/cusemu/control"

/*
 * The socket when none is given: root's CUSEMU_CONTROL_DEFAULT_PATH; an
 * ordinary user's (a --fuse daemon) in $XDG_RUNTIME_DIR/cusemu, else in
 * /tmp/cusemu-UID. Free it with g_free().
 */
static inline char *cusemu_control_default_path(void)
{
	const char *runtime = g_getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		return g_strdup(CUSEMU_CONTROL_DEFAULT_PATH);
	if (runtime && *runtime)
		return g_build_filename(runtime, "cusemu", "control", NULL);
	return g_strdup_printf("/tmp/cusemu-%u/control",
			       (unsigned int)geteuid());
}

/* Files a request may hand over (SCM_RIGHTS); more fail the request. */
#define CUSEMU_CONTROL_MAX_FDS 4

/* Who sent a request, and the files it handed over with it. */
struct cusemu_control_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	/*
	 * Root, or the daemon's own user: one who may name files the daemon
	 * opens with its own rights. A control group member may not.
	 */
	bool trusted;
	/* In the order sent; a callee that keeps one puts -1 in its place,
	 * the rest are closed with the connection. */
	int fds[CUSEMU_CONTROL_MAX_FDS];
	unsigned int n_fds;
};

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
	/* "reload NODE": the device's plugin loaded again if rebuilt, and a
	 * fresh instance behind the node */
	int (*reload)(void *data, const char *node, GString *out);
	/* "add MODEL[:key=value,...]": a new device, as --device makes one;
	 * spec is the text after "add ", blanks around it removed; record=
	 * takes the file peer handed over, if any */
	int (*add)(void *data, const char *spec,
		   struct cusemu_control_peer *peer, GString *out);
	/* "remove NODE": the device goes away, its node or file with it */
	int (*remove)(void *data, const char *node, GString *out);
	/* "trace [NODE...]": nodes NULL-terminated, maybe empty (all). On
	 * 0 the connection's fd is the callee's, to push trace lines to;
	 * otherwise it is answered and closed as any other. */
	int (*trace)(void *data, int fd, char **nodes, GString *out);
};

struct cusemu_control;

/*
 * An ordinary user's own control directory (the default socket's): made
 * 0700 if missing; one that exists must be a directory (not a symbolic
 * link) owned by the user with mode 0700, as systemd and ssh-agent ask,
 * else another local user could move the socket away and answer in its
 * place. FALSE with a message that says what to do.
 */
gboolean cusemu_control_private_dir(const char *dir, GError **error);

/*
 * Listen on path, socket mode 0600 root, or 0660 with group when group !=
 * (gid_t)-1. Its directory is created 0755 if missing; an ordinary user's
 * default directory is held to cusemu_control_private_dir(). Peers other
 * than root, the daemon's user or that group are refused (SO_PEERCRED).
 */
struct cusemu_control *cusemu_control_start(const char *path, gid_t group,
					    const struct cusemu_control_ops *ops,
					    void *data, GError **error);
/* Stop listening and remove the socket file. */
void cusemu_control_stop(struct cusemu_control *control);

#endif
