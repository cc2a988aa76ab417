/* SPDX-License-Identifier: MIT */
/*
 * The control socket of cusemud, served from the main loop: every
 * connection is read and answered without blocking, so a slow or silent
 * client delays nobody.
 *
 * Protocol. The client connects to the UNIX stream socket, writes one
 * request line of at most 4096 bytes ending in '\n' (or shuts down its
 * writing side instead of the newline), then reads the answer until the
 * daemon closes the connection. The requests:
 *
 *     list            devices, nodes, model, kernel model, lock; pool, sandbox
 *     list --json     the same as one JSON document
 *     stats           statistics per device and command, as tables
 *     stats --json    the same as one JSON document
 *     reset           zero every statistic
 *     device NODE WORDS...  a request for the model of NODE
 *     add MODEL[:key=value,...]  a new device, as --device makes one
 *     remove NODE     take a device away
 *     trace [NODE...] stay connected: a JSON line per request on those
 *                     devices (all without NODE), as docs/daemon.md says
 *
 * Blanks around the request, and a '\r' before the '\n', are ignored.
 * The answer is text ending in '\n', never empty ("ok" at least). Every failure is a text starting
 * with "error: ": a request the daemon could not serve (with its reason),
 * an unknown or overlong request, no complete line within 1 s, more than
 * 16 connections at once (root has 4 more of its own, so that no other
 * peer can keep it out), and a refused peer, which is answered and closed
 * at once. Peers must be root, the
 * daemon's own user, or in the control group, as primary (SO_PEERCRED) or
 * supplementary group (SO_PEERGROUPS); the socket file's mode, 0600, or
 * 0660 with that group, says the same. A request may carry up to
 * CUSEMU_CONTROL_MAX_FDS descriptors (SCM_RIGHTS on its first bytes): the
 * files cusemuctl opened with its user's rights for what the request names.
 */
#define G_LOG_DOMAIN "cusemu-control"

#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "control.h"

#define REQUEST_MAX 4096
/* cusemuctl sends its line as soon as it is connected: a peer silent
 * this long holds a slot for nothing. */
#define REQUEST_TIMEOUT_MS 1000
/* A client that stops reading its answer loses it after this long. */
#define ANSWER_TIMEOUT_MS 2000
#define MAX_CONNECTIONS 16
/*
 * Beyond MAX_CONNECTIONS, for root alone; when those are taken too, root's
 * connection takes the slot of the oldest that has not yet sent its
 * request (then of any), others' before root's own: root is never busy.
 */
#define ROOT_CONNECTIONS 4
#define LISTEN_BACKLOG 16
/* Out of file descriptors: retry accepting after a pause, not in a loop. */
#define ACCEPT_PAUSE_MS 100
/* How much of an unknown request is repeated back. */
#define ECHO_MAX 64

struct connection {
	struct cusemu_control *control;
	int fd;
	uid_t uid;		/* the peer's */
	struct cusemu_control_peer peer;	/* and the files it sent */
	guint64 seq;		/* the order of accepting */
	guint watch;		/* readable, then writable */
	guint timeout;
	GString *request;
	GString *answer;
	gsize written;
};

struct cusemu_control {
	char *path;
	gid_t group;
	char *allowed;		/* who may connect, for the refusal message */
	const struct cusemu_control_ops *ops;
	void *data;
	int fd;
	guint watch;
	guint pause;
	/* The socket file this daemon made: only that one is removed. */
	dev_t dev;
	ino_t ino;
	GPtrArray *connections;
	guint64 accepted;
};

enum request_kind { REQUEST_LIST, REQUEST_STATS, REQUEST_RESET };

static const struct {
	const char *line;
	enum request_kind kind;
	gboolean json;
} requests[] = {
	{ "list", REQUEST_LIST, FALSE },
	{ "list --json", REQUEST_LIST, TRUE },
	{ "stats", REQUEST_STATS, FALSE },
	{ "stats --json", REQUEST_STATS, TRUE },
	{ "reset", REQUEST_RESET, FALSE },
};

static void close_fdp(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define autoclose __attribute__((cleanup(close_fdp)))

static void set_errno_error(GError **error, int err, const char *path,
			    const char *what)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
		    "control socket %s: %s: %s", path, what, g_strerror(err));
}

static void connection_free(struct connection *c)
{
	g_clear_handle_id(&c->watch, g_source_remove);
	g_clear_handle_id(&c->timeout, g_source_remove);
	if (c->fd >= 0)
		close(c->fd);
	for (unsigned int i = 0; i < c->peer.n_fds; i++)
		if (c->peer.fds[i] >= 0)
			close(c->peer.fds[i]);
	g_ptr_array_remove_fast(c->control->connections, c);
	g_string_free(c->request, TRUE);
	g_string_free(c->answer, TRUE);
	g_free(c);
}

/* TRUE while part of the answer waits for room in the socket. */
static gboolean write_some(struct connection *c)
{
	while (c->written < c->answer->len) {
		ssize_t n = send(c->fd, c->answer->str + c->written,
				 c->answer->len - c->written,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return TRUE;
		if (n < 0) {
			/* The client went away: its loss, not ours. */
			g_debug("control: client left before its answer: %s",
				g_strerror(errno));
			return FALSE;
		}
		c->written += n;
	}
	shutdown(c->fd, SHUT_WR);
	return FALSE;
}

static gboolean on_writable(int fd, GIOCondition condition, gpointer user_data)
{
	struct connection *c = user_data;

	if (write_some(c))
		return G_SOURCE_CONTINUE;
	c->watch = 0;
	connection_free(c);
	return G_SOURCE_REMOVE;
}

static gboolean on_answer_timeout(gpointer user_data)
{
	struct connection *c = user_data;

	c->timeout = 0;
	g_debug("control: client did not read its answer within %d ms",
		ANSWER_TIMEOUT_MS);
	connection_free(c);
	return G_SOURCE_REMOVE;
}

/* Send c->answer; the read watch, if any, is gone. May free c. */
static void start_answer(struct connection *c)
{
	g_clear_handle_id(&c->timeout, g_source_remove);
	if (!write_some(c)) {
		connection_free(c);
		return;
	}
	c->watch = g_unix_fd_add(c->fd, G_IO_OUT, on_writable, c);
	c->timeout = g_timeout_add(ANSWER_TIMEOUT_MS, on_answer_timeout, c);
}

/* The request as it may be shown: printable ASCII, cut short. */
static char *request_echo(const char *line, gsize len)
{
	GString *echo = g_string_new(NULL);

	for (gsize i = 0; i < len && i < ECHO_MAX; i++)
		g_string_append_c(echo, g_ascii_isprint(line[i]) ? line[i]
								  : '?');
	if (len > ECHO_MAX)
		g_string_append(echo, "...");
	return g_string_free(echo, FALSE);
}

static int run_request(struct cusemu_control *control, enum request_kind kind,
		       gboolean json, GString *body)
{
	const struct cusemu_control_ops *ops = control->ops;

	switch (kind) {
	case REQUEST_LIST:
		if (ops->list)
			return ops->list(control->data, json, body);
		break;
	case REQUEST_STATS:
		if (ops->stats)
			return ops->stats(control->data, json, body);
		break;
	case REQUEST_RESET:
		if (ops->reset)
			return ops->reset(control->data, body);
		break;
	}
	g_string_append(body, "this daemon does not serve that request");
	return EOPNOTSUPP;
}

/* "device NODE WORDS...": for a device model's own requests. */
#define DEVICE_REQUEST "device "

static int run_device_request(struct cusemu_control *control, const char *line,
			      gsize len, GString *body)
{
	g_autofree char *text = g_strndup(line + strlen(DEVICE_REQUEST),
					  len - strlen(DEVICE_REQUEST));
	g_auto(GStrv) argv = g_strsplit_set(g_strstrip(text), " \t", -1);
	g_autoptr(GPtrArray) words = g_ptr_array_new();

	/* Runs of blanks split into empty words: drop them. */
	for (char **w = argv; *w; w++)
		if (**w)
			g_ptr_array_add(words, *w);
	g_ptr_array_add(words, NULL);
	if (!control->ops->device || !words->pdata[0]) {
		g_string_append(body, "usage: device NODE WORDS...");
		return EINVAL;
	}
	return control->ops->device(control->data, (char **)words->pdata,
				    body);
}

/* "add SPEC", "remove NODE" and "reload NODE": devices at run time. */
#define ADD_REQUEST "add "
#define REMOVE_REQUEST "remove "
#define RELOAD_REQUEST "reload "

/* The text after prefix in line, or NULL when line does not start so. */
static char *argument_of(const char *line, gsize len, const char *prefix)
{
	gsize n = strlen(prefix);

	if (len <= n || memcmp(line, prefix, n))
		return NULL;
	return g_strstrip(g_strndup(line + n, len - n));
}

static bool run_hotplug_request(struct connection *c, const char *line,
				gsize len, GString *body, int *err)
{
	struct cusemu_control *control = c->control;
	const struct cusemu_control_ops *ops = control->ops;
	g_autofree char *spec = argument_of(line, len, ADD_REQUEST);
	g_autofree char *removed = argument_of(line, len, REMOVE_REQUEST);
	g_autofree char *reloaded = argument_of(line, len, RELOAD_REQUEST);
	/* remove and reload take a NODE. */
	const char *node = removed ? removed : reloaded;
	int (*node_op)(void *data, const char *node, GString *out) =
		removed ? ops->remove : ops->reload;

	if (!spec && !node)
		return false;
	if (spec && !*spec) {
		g_string_append(body, "usage: add MODEL[:key=value,...]");
		*err = EINVAL;
	} else if (node && (!*node || strpbrk(node, " \t"))) {
		g_string_append_printf(body, "usage: %s NODE",
				       removed ? "remove" : "reload");
		*err = EINVAL;
	} else if (spec ? !ops->add : !node_op) {
		g_string_append(body, "this daemon does not serve that request");
		*err = EOPNOTSUPP;
	} else {
		*err = spec ? ops->add(control->data, spec, &c->peer, body)
			    : node_op(control->data, node, body);
	}
	return true;
}

/* The words of line after its first one, runs of blanks dropped. */
static GPtrArray *request_words(const char *line, gsize len)
{
	g_autofree char *text = g_strndup(line, len);
	g_auto(GStrv) argv = g_strsplit_set(g_strstrip(text), " \t", -1);
	GPtrArray *words = g_ptr_array_new_with_free_func(g_free);

	for (char **w = argv; *w; w++)
		if (**w && w != argv)
			g_ptr_array_add(words, g_strdup(*w));
	g_ptr_array_add(words, NULL);
	return words;
}

/* "trace [NODE...]": on success the connection is handed over (fd -1). */
static int run_trace_request(struct connection *c, const char *line,
			     gsize len, GString *body)
{
	g_autoptr(GPtrArray) words = request_words(line, len);
	int err;

	if (!c->control->ops->trace) {
		g_string_append(body, "this daemon does not trace");
		return EOPNOTSUPP;
	}
	err = c->control->ops->trace(c->control->data, c->fd,
				     (char **)words->pdata, body);
	if (!err)
		c->fd = -1;
	return err;
}

static bool is_trace_request(const char *line, gsize len)
{
	return len >= strlen("trace") && !memcmp(line, "trace", strlen("trace")) &&
	       (len == strlen("trace") || line[strlen("trace")] == ' ');
}

static void answer_request(struct connection *c, const char *line, gsize len)
{
	g_autoptr(GString) body = g_string_new(NULL);
	g_autofree char *echo = request_echo(line, len);
	bool known = false;
	int err = 0;

	g_debug("control: request '%s'", echo);
	for (gsize i = 0; i < G_N_ELEMENTS(requests) && !known; i++) {
		known = strlen(requests[i].line) == len &&
			!memcmp(requests[i].line, line, len);
		if (known)
			err = run_request(c->control, requests[i].kind,
					  requests[i].json, body);
	}
	if (!known && len > strlen(DEVICE_REQUEST) &&
	    !memcmp(line, DEVICE_REQUEST, strlen(DEVICE_REQUEST))) {
		known = true;
		err = run_device_request(c->control, line, len, body);
	}
	if (!known)
		known = run_hotplug_request(c, line, len, body, &err);
	if (!known && is_trace_request(line, len)) {
		known = true;
		err = run_trace_request(c, line, len, body);
		if (c->fd < 0)
			return;
	}
	if (!known) {
		g_string_printf(c->answer,
				"error: unknown request '%s'; requests: "
				"list, stats, reset, device NODE ..., "
				"add MODEL[:key=value,...], remove NODE, "
				"reload NODE\n",
				echo);
		return;
	}
	/* Handlers elsewhere return -errno: take either sign. */
	err = ABS(err);
	if (err) {
		g_string_append(c->answer, "error: ");
		if (!body->len)
			g_string_append(body, g_strerror(err));
	}
	/* Never empty: an empty answer would look like a daemon that died. */
	if (!body->len)
		g_string_append(body, "ok");
	g_string_append_len(c->answer, body->str, body->len);
	if (c->answer->str[c->answer->len - 1] != '\n')
		g_string_append_c(c->answer, '\n');
}

/* The line in c->request, without its end and surrounding blanks. */
static void answer_line(struct connection *c, gsize len)
{
	const char *line = c->request->str;

	while (len && g_ascii_isspace(line[len - 1]))
		len--;
	while (len && g_ascii_isspace(line[0])) {
		line++;
		len--;
	}
	answer_request(c, line, len);
}

enum read_state {
	READ_MORE,
	READ_LINE,		/* a line, or all the client sent before EOF */
	READ_TOO_LONG,
	READ_TOO_MANY_FILES,
	READ_NOTHING,		/* EOF before any byte, or a broken socket */
};

/*
 * recv() of part of the request, and of the descriptors that came with it
 * into c->peer; -1 with EMSGSIZE when there were more than it holds (all
 * of them closed).
 */
static ssize_t receive(struct connection *c, char *buf, size_t room)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CUSEMU_CONTROL_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { buf, room };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control),
	};
	bool too_many = false;
	ssize_t n;

	n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return n;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h;
	     h = CMSG_NXTHDR(&msg, h)) {
		const int *fds = (const int *)CMSG_DATA(h);
		size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < count; i++) {
			if (c->peer.n_fds < CUSEMU_CONTROL_MAX_FDS) {
				c->peer.fds[c->peer.n_fds++] = fds[i];
				continue;
			}
			close(fds[i]);
			too_many = true;
		}
	}
	if (too_many || (msg.msg_flags & MSG_CTRUNC)) {
		errno = EMSGSIZE;
		return -1;
	}
	return n;
}

static enum read_state read_some(struct connection *c, gsize *line_len)
{
	char buf[REQUEST_MAX + 1];
	gsize room = REQUEST_MAX + 1 - c->request->len;
	const char *newline;
	ssize_t n;

	n = receive(c, buf, room);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		      errno == EINTR))
		return READ_MORE;
	if (n < 0 && errno == EMSGSIZE)
		return READ_TOO_MANY_FILES;
	if (n < 0) {
		g_debug("control: reading a request: %s", g_strerror(errno));
		return READ_NOTHING;
	}
	g_string_append_len(c->request, buf, n);
	newline = memchr(c->request->str, '\n', c->request->len);
	if (newline && newline - c->request->str < REQUEST_MAX) {
		*line_len = newline - c->request->str;
		return READ_LINE;
	}
	if (c->request->len >= REQUEST_MAX)
		return READ_TOO_LONG;
	if (n > 0)
		return READ_MORE;
	/* The client shut down its side: the line has no newline, or there
	 * is none at all, as when a daemon starting up probes the socket. */
	*line_len = c->request->len;
	return c->request->len ? READ_LINE : READ_NOTHING;
}

static gboolean on_readable(int fd, GIOCondition condition, gpointer user_data)
{
	struct connection *c = user_data;
	enum read_state state;
	gsize len = 0;

	state = read_some(c, &len);
	if (state == READ_MORE)
		return G_SOURCE_CONTINUE;
	c->watch = 0;
	if (state == READ_NOTHING) {
		connection_free(c);
		return G_SOURCE_REMOVE;
	}
	if (state == READ_LINE)
		answer_line(c, len);
	if (state == READ_LINE && c->fd < 0) {
		/* A tracer: the connection lives on elsewhere. */
		connection_free(c);
		return G_SOURCE_REMOVE;
	}
	if (state == READ_TOO_MANY_FILES)
		g_string_printf(c->answer,
				"error: more than %d files handed over with "
				"one request\n",
				CUSEMU_CONTROL_MAX_FDS);
	else if (state != READ_LINE)
		g_string_printf(c->answer,
				"error: request longer than %d bytes\n",
				REQUEST_MAX);
	start_answer(c);
	return G_SOURCE_REMOVE;
}

static gboolean on_request_timeout(gpointer user_data)
{
	struct connection *c = user_data;

	c->timeout = 0;
	g_clear_handle_id(&c->watch, g_source_remove);
	g_debug("control: no request within %d ms", REQUEST_TIMEOUT_MS);
	g_string_printf(c->answer,
			"error: no complete request line within %d s\n",
			REQUEST_TIMEOUT_MS / 1000);
	start_answer(c);
	return G_SOURCE_REMOVE;
}

/*
 * Whether the peer has group among its supplementary groups, which is how
 * a user is normally put in a group; SO_PEERCRED has the primary one only.
 */
static gboolean peer_in_group(int fd, gid_t group)
{
#ifdef SO_PEERGROUPS
	gid_t some[64];
	g_autofree gid_t *all = NULL;
	gid_t *groups = some;
	socklen_t len = sizeof(some);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE)
			return FALSE;
		/* len now says how much room the list needs. */
		groups = all = g_malloc(len);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
			return FALSE;
	}
	for (gsize i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return TRUE;
#endif
	return FALSE;
}

static gboolean peer_cred(int fd, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0) {
		g_message("control: cannot learn who connected: %s",
			  g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

static gboolean peer_allowed(struct cusemu_control *control, int fd,
			     const struct ucred *peer)
{
	struct ucred cred = *peer;

	/* The daemon's own user owns the socket file, so it may connect. */
	if (cred.uid == 0 || cred.uid == geteuid())
		return TRUE;
	if (control->group != (gid_t)-1 &&
	    (cred.gid == control->group || peer_in_group(fd, control->group)))
		return TRUE;
	g_message("control: refused pid %d (uid %u, gid %u): only %s may "
		  "use the control socket",
		  (int)cred.pid, (unsigned int)cred.uid, (unsigned int)cred.gid,
		  control->allowed);
	return FALSE;
}

/* Said in one send and closed: a peer the daemon does not serve keeps
 * no slot. cusemuctl reads the answer even when its own write fails. */
static void send_and_close(int fd, const char *text)
{
	if (send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		g_debug("control: refusing a connection: %s",
			g_strerror(errno));
	close(fd);
}

static void connection_new(struct cusemu_control *control, int fd,
			   const struct ucred *cred)
{
	struct connection *c = g_new0(struct connection, 1);

	c->control = control;
	c->fd = fd;
	c->uid = cred->uid;
	c->peer.uid = cred->uid;
	c->peer.gid = cred->gid;
	c->peer.pid = cred->pid;
	c->peer.trusted = cred->uid == 0 || cred->uid == geteuid();
	c->seq = ++control->accepted;
	c->request = g_string_new(NULL);
	c->answer = g_string_new(NULL);
	g_ptr_array_add(control->connections, c);
	c->watch = g_unix_fd_add(fd, G_IO_IN, on_readable, c);
	c->timeout = g_timeout_add(REQUEST_TIMEOUT_MS, on_request_timeout, c);
}

static gboolean on_incoming(int fd, GIOCondition condition,
			    gpointer user_data);

static const char busy[] =
	"error: busy: too many control connections; try again\n";

/* Worth less the lower: silent others, others, silent root, root. */
static int slot_rank(const struct connection *c)
{
	/* Still reading its request: nothing said yet is answered. */
	gboolean silent = c->watch && !c->answer->len;

	return (c->uid == 0) * 2 + !silent;
}

/*
 * Root came to a full table: the connection of lowest rank, the oldest
 * of those, is told busy and closed (cusemuctl tries again) to make room.
 */
static void make_room_for_root(struct cusemu_control *control)
{
	struct connection *out = NULL;

	for (guint i = 0; i < control->connections->len; i++) {
		struct connection *c = control->connections->pdata[i];

		if (!out || slot_rank(c) < slot_rank(out) ||
		    (slot_rank(c) == slot_rank(out) && c->seq < out->seq))
			out = c;
	}
	if (!out)
		return;
	g_debug("control: uid %u's connection gives its slot to root",
		(unsigned int)out->uid);
	if (send(out->fd, busy, strlen(busy), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		g_debug("control: telling a connection it is busy: %s",
			g_strerror(errno));
	connection_free(out);
}

static gboolean on_accept_pause_over(gpointer user_data)
{
	struct cusemu_control *control = user_data;

	control->pause = 0;
	control->watch = g_unix_fd_add(control->fd, G_IO_IN, on_incoming,
				       control);
	return G_SOURCE_REMOVE;
}

static gboolean on_incoming(int fd, GIOCondition condition, gpointer user_data)
{
	struct cusemu_control *control = user_data;
	int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cred;

	if (conn < 0) {
		if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS &&
		    errno != ENOMEM)
			return G_SOURCE_CONTINUE;
		/* The connection stays queued; trying again at once would
		 * spin the main loop. */
		g_warning("control: cannot accept a connection: %s",
			  g_strerror(errno));
		control->watch = 0;
		control->pause = g_timeout_add(ACCEPT_PAUSE_MS,
					       on_accept_pause_over, control);
		return G_SOURCE_REMOVE;
	}
	if (!peer_cred(conn, &cred) || !peer_allowed(control, conn, &cred)) {
		g_autofree char *text = g_strdup_printf(
			"error: permission denied: only %s may use the control "
			"socket\n", control->allowed);

		send_and_close(conn, text);
		return G_SOURCE_CONTINUE;
	}
	if (control->connections->len >=
	    MAX_CONNECTIONS + (cred.uid == 0 ? ROOT_CONNECTIONS : 0)) {
		if (cred.uid != 0) {
			send_and_close(conn, busy);
			return G_SOURCE_CONTINUE;
		}
		make_room_for_root(control);
	}
	connection_new(control, conn, &cred);
	return G_SOURCE_CONTINUE;
}

static gboolean fill_address(struct sockaddr_un *addr, const char *path,
			     GError **error)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr->sun_path)) {
		set_errno_error(error, ENAMETOOLONG, path,
				"path too long for a UNIX socket");
		return FALSE;
	}
	strcpy(addr->sun_path, path);
	return TRUE;
}

/*
 * A socket file nobody listens on is left by a daemon that died: remove it.
 * Anything else at path is not ours to remove.
 */
static gboolean remove_stale(const char *path, GError **error)
{
	autoclose int fd = -1;
	struct sockaddr_un addr;
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return TRUE;
		set_errno_error(error, errno, path, "stat");
		return FALSE;
	}
	if (!S_ISSOCK(st.st_mode)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "control socket %s: exists and is not a socket; "
			    "remove it or choose another path",
			    path);
		return FALSE;
	}
	if (!fill_address(&addr, path, error))
		return FALSE;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		set_errno_error(error, errno, path, "socket");
		return FALSE;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 ||
	    errno == EAGAIN) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "control socket %s: another daemon is serving it; "
			    "stop it or choose another path",
			    path);
		return FALSE;
	}
	if (errno == ENOENT)
		return TRUE;
	if (errno != ECONNREFUSED) {
		set_errno_error(error, errno, path, "probing the old socket");
		return FALSE;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		set_errno_error(error, errno, path, "removing the stale socket");
		return FALSE;
	}
	return TRUE;
}

static char *describe_allowed(gid_t group)
{
	GString *who = g_string_new("root");
	struct group *gr;

	if (geteuid() != 0)
		g_string_append_printf(who, " or uid %u",
				       (unsigned int)geteuid());
	if (group == (gid_t)-1)
		return g_string_free(who, FALSE);
	gr = getgrgid(group);
	if (gr)
		g_string_append_printf(who, " (or group %s)", gr->gr_name);
	else
		g_string_append_printf(who, " (or group %u)",
				       (unsigned int)group);
	return g_string_free(who, FALSE);
}

/* bind, set the file's mode and group, listen. */
static int listen_on(const char *path, gid_t group, struct stat *st,
		     GError **error)
{
	autoclose int fd = -1;
	struct sockaddr_un addr;

	if (!fill_address(&addr, path, error))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		set_errno_error(error, errno, path, "socket");
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		set_errno_error(error, errno, path, "bind");
		return -1;
	}
	/* Until the chmod the umask decides; SO_PEERCRED guards that gap. */
	if (chmod(path, group == (gid_t)-1 ? 0600 : 0660) < 0) {
		set_errno_error(error, errno, path, "chmod");
		goto unlink_socket;
	}
	if (group != (gid_t)-1 && chown(path, (uid_t)-1, group) < 0) {
		set_errno_error(error, errno, path, "chown to the control group");
		goto unlink_socket;
	}
	if (listen(fd, LISTEN_BACKLOG) < 0) {
		set_errno_error(error, errno, path, "listen");
		goto unlink_socket;
	}
	if (lstat(path, st) < 0) {
		set_errno_error(error, errno, path, "stat");
		goto unlink_socket;
	}
	return g_steal_fd(&fd);

unlink_socket:
	unlink(path);
	return -1;
}

gboolean cusemu_control_private_dir(const char *dir, GError **error)
{
	g_autofree char *parent = g_path_get_dirname(dir);
	g_autofree char *fix = NULL;
	const char *what = NULL;
	struct stat st;

	/* What is there already is judged below, whatever it is. */
	if (g_mkdir_with_parents(parent, 0700) < 0 ||
	    (mkdir(dir, 0700) < 0 && errno != EEXIST)) {
		int e = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    "control directory %s: cannot create it: %s", dir,
			    g_strerror(e));
		return FALSE;
	}
	if (lstat(dir, &st) < 0) {
		int e = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    "control directory %s: %s", dir, g_strerror(e));
		return FALSE;
	}
	if (!S_ISDIR(st.st_mode))
		what = "is not a directory";
	else if (st.st_uid != geteuid())
		what = "is owned by another user";
	else if ((st.st_mode & 07777) != 0700)
		what = "is not mode 0700";
	if (!what)
		return TRUE;
	if (S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		fix = g_strdup_printf("chmod 0700 %s", dir);
	else
		fix = g_strdup_printf("have it removed (rm -r %s, as its owner "
				      "or root) and start again", dir);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
		    "control directory %s %s (uid %u, mode %04o); it must be a "
		    "directory of uid %u with mode 0700, or another user could "
		    "answer cusemuctl: %s, or give another socket with --control "
		    "PATH", dir, what, (unsigned int)st.st_uid,
		    (unsigned int)(st.st_mode & 07777), (unsigned int)geteuid(),
		    fix);
	return FALSE;
}

/* Whether dir is an ordinary user's default control directory. */
static bool is_default_dir(const char *dir)
{
	g_autofree char *def = cusemu_control_default_path();
	g_autofree char *def_dir = g_path_get_dirname(def);

	return geteuid() != 0 && strcmp(dir, def_dir) == 0;
}

struct cusemu_control *cusemu_control_start(const char *path, gid_t group,
					    const struct cusemu_control_ops *ops,
					    void *data, GError **error)
{
	g_autofree char *dir = NULL;
	struct cusemu_control *control;
	struct stat st;
	int fd;

	g_return_val_if_fail(path && ops, NULL);
	dir = g_path_get_dirname(path);
	if (is_default_dir(dir)) {
		if (!cusemu_control_private_dir(dir, error))
			return NULL;
	} else if (g_mkdir_with_parents(dir, 0755) < 0) {
		set_errno_error(error, errno, path, "creating its directory");
		return NULL;
	}
	if (!remove_stale(path, error))
		return NULL;
	fd = listen_on(path, group, &st, error);
	if (fd < 0)
		return NULL;

	control = g_new0(struct cusemu_control, 1);
	control->path = g_strdup(path);
	control->group = group;
	control->allowed = describe_allowed(group);
	control->ops = ops;
	control->data = data;
	control->fd = fd;
	control->dev = st.st_dev;
	control->ino = st.st_ino;
	control->connections = g_ptr_array_new();
	control->watch = g_unix_fd_add(fd, G_IO_IN, on_incoming, control);
	g_debug("control: listening on %s", path);
	return control;
}

void cusemu_control_stop(struct cusemu_control *control)
{
	struct stat st;

	if (!control)
		return;
	g_clear_handle_id(&control->watch, g_source_remove);
	g_clear_handle_id(&control->pause, g_source_remove);
	while (control->connections->len)
		connection_free(control->connections->pdata[0]);
	g_ptr_array_unref(control->connections);
	close(control->fd);
	/* Another daemon may have taken the path over since. */
	if (lstat(control->path, &st) == 0 && st.st_dev == control->dev &&
	    st.st_ino == control->ino)
		unlink(control->path);
	g_free(control->path);
	g_free(control->allowed);
	g_free(control);
}
