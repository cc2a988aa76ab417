/* SPDX-License-Identifier: MIT */
/*
 * CUSE sessions: one /dev/cuse connection per device, its node's
 * registration and end. What a request does on the device is node.c's.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "node.h"

#include <cuse_lowlevel.h>
#include <glib.h>

#include "device.h"
#include "fuse-keys.h"
#include "pool.h"
#include "transport.h"

/* How long a stop waits for the workers inside a session's requests. */
#define STOP_TIMEOUT_S 10

struct cusemu_session {
	struct cusemu_pool_source source;	/* its /dev/cuse descriptor */
	struct cusemu_node node;		/* the device behind it */
	struct fuse_session *se;
	bool stuck;		/* a stop could not end its requests */
	bool free_later;	/* freed once the pool has stopped */

	GMutex lock;		/* guards the fields below */
	bool ended;		/* the kernel dropped it, or it was stopped */
	bool init_sent;		/* the CUSE_INIT reply went to the kernel */
};

/* Every session started, for the end of the pool: under sessions_lock. */
static GMutex sessions_lock;
static GList *sessions;

/* libfuse 3.14 hands the command over as an int. */
static void cuse_ioctl(fuse_req_t req, int cmd, void *arg,
		       struct fuse_file_info *fi, unsigned int flags,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	cusemu_node_ioctl(&s->node, req, (unsigned int)cmd, arg, fi, flags,
			  in_buf, in_bufsz, out_bufsz);
}

static void cuse_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	cusemu_node_open(&s->node, req, fi);
}

static void cuse_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	cusemu_node_release(&s->node, req, fi);
}

static void cuse_read(fuse_req_t req, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	cusemu_node_read(&s->node, req, size, fi);
}

static void cuse_write(fuse_req_t req, const char *buf, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	cusemu_node_write(&s->node, req, buf, size, fi);
}

static void cuse_poll(fuse_req_t req, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	cusemu_node_poll(&s->node, req, fi, ph);
}

/* The kernel has handled the CUSE_INIT reply: the device is registered,
 * or its connection is aborted (a name another connection has). */
static void cuse_init_done(void *userdata)
{
	struct cusemu_session *s = userdata;

	g_mutex_lock(&s->lock);
	s->init_sent = true;
	g_mutex_unlock(&s->lock);
}

bool cusemu_session_registered(struct cusemu_session *s)
{
	struct pollfd p = { .fd = fuse_session_fd(s->se), .events = POLLIN };
	bool sent;

	g_mutex_lock(&s->lock);
	sent = s->init_sent && !s->ended;
	g_mutex_unlock(&s->lock);
	/* An aborted FUSE connection polls as an error at once. */
	return sent && poll(&p, 1, 0) >= 0 &&
	       !(p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

bool cusemu_session_init_sent(struct cusemu_session *s)
{
	bool sent;

	g_mutex_lock(&s->lock);
	sent = s->init_sent || s->ended;
	g_mutex_unlock(&s->lock);
	return sent;
}

static const struct cuse_lowlevel_ops cuse_ops = {
	.init_done = cuse_init_done,
	.open = cuse_open,
	.release = cuse_release,
	.read = cuse_read,
	.write = cuse_write,
	.ioctl = cuse_ioctl,
	.poll = cuse_poll,
};

static unsigned int pool_size = 8;

static void session_forget(struct cusemu_session *s)
{
	g_mutex_lock(&sessions_lock);
	sessions = g_list_remove(sessions, s);
	g_mutex_unlock(&sessions_lock);
}

static void session_free_now(struct cusemu_session *s)
{
	session_forget(s);
	g_mutex_clear(&s->lock);
	cusemu_node_clear(&s->node);
	g_free(s);
}

void cusemu_transport_init(unsigned int workers)
{
	pool_size = workers;
}

gboolean cusemu_transport_serve(struct cusemu_pool_source *src, int fd,
				const char *what, GError **error)
{
	src->fd = fd;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: cannot make its descriptor non-blocking: %s",
			    what, g_strerror(errno));
		return FALSE;
	}
	if (!cusemu_pool_start(pool_size, error) ||
	    !cusemu_pool_add(src, error)) {
		g_prefix_error(error, "%s: ", what);
		return FALSE;
	}
	return TRUE;
}

static void session_ended(struct cusemu_session *s, int res)
{
	cusemu_pool_remove(&s->source);
	g_mutex_lock(&s->lock);
	if (!s->ended && res < 0)
		g_message("%s: session ended (%s)", s->node.dev->name,
			  g_strerror(-res));
	s->ended = true;
	g_mutex_unlock(&s->lock);
}

/* 0 from libfuse: the kernel dropped the connection (ENODEV), or the
 * session was told to exit. */
static void session_ready(struct cusemu_pool_source *src)
{
	struct cusemu_session *s = (struct cusemu_session *)src;
	int res;

	if (!cusemu_node_serve(s->se, src, &res))
		session_ended(s, res);
}

struct cusemu_session *
cusemu_session_start(struct cusemu_device *dev,
		     const struct cusemu_session_options *opts, GError **error)
{
	g_autofree char *devname = g_strdup_printf("DEVNAME=%s", dev->name);
	g_autofree char *node = NULL;
	const char *dev_info[] = { devname };
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.dev_major = opts->major,
		.dev_minor = opts->minor,
		.flags = cusemu_instance(dev)->restricted ? 0 : CUSE_UNRESTRICTED_IOCTL,
	};
	char *argv[] = { "cusemud", "-f", opts->debug ? "-d" : NULL, NULL };
	struct cusemu_session *s = g_new0(struct cusemu_session, 1);
	int multithreaded, fd;

	cusemu_node_init(&s->node, dev,
			 cusemu_instance(dev)->restricted
				 ? CUSEMU_NODE_RESTRICTED
				 : CUSEMU_NODE_UNRESTRICTED);
	g_mutex_init(&s->lock);
	cusemu_node_log_libfuse();
	cusemu_fuse_keys_share(true);
	s->se = cuse_lowlevel_setup(opts->debug ? 3 : 2, argv, &ci, &cuse_ops,
				    &multithreaded, s);
	cusemu_fuse_keys_share(false);
	if (!s->se) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "cannot start the CUSE session of /dev/%s (see "
			    "the message above)",
			    dev->name);
		cusemu_session_free(s);
		return NULL;
	}
	/* libfuse's own handlers would end just one session: ours end all. */
	fuse_remove_signal_handlers(s->se);

	g_mutex_lock(&sessions_lock);
	sessions = g_list_prepend(sessions, s);
	g_mutex_unlock(&sessions_lock);
	/* The fake libfuse of the unit tests has no descriptor. */
	fd = fuse_session_fd(s->se);
	if (fd < 0)
		return s;
	s->source.ready = session_ready;
	node = g_strconcat("/dev/", dev->name, NULL);
	if (!cusemu_transport_serve(&s->source, fd, node, error)) {
		fuse_session_destroy(s->se);
		session_free_now(s);
		return NULL;
	}
	return s;
}

bool cusemu_session_ended(struct cusemu_session *s)
{
	bool ended;

	g_mutex_lock(&s->lock);
	ended = s->ended;
	g_mutex_unlock(&s->lock);
	return ended;
}

/*
 * No worker takes the session's requests any more; wait for those inside
 * one, interrupting waits in the sleep helpers (a blocking read) as if
 * their clients had given up, again each round for one between its
 * check and its wait.
 */
static bool end_requests(struct cusemu_session *s)
{
	gint64 deadline = g_get_monotonic_time() +
			  STOP_TIMEOUT_S * G_TIME_SPAN_SECOND;

	fuse_session_exit(s->se);
	cusemu_pool_remove(&s->source);
	while (g_atomic_int_get(&s->source.active)) {
		cusemu_waiters_end(&s->node.waiters);
		if (g_get_monotonic_time() > deadline) {
			g_warning("%s: requests do not end; leaving them",
				  s->node.dev->name);
			return false;
		}
		poll(NULL, 0, 1);	/* not nanosleep: the sandbox has poll */
	}
	g_mutex_lock(&s->lock);
	s->ended = true;
	g_mutex_unlock(&s->lock);
	return true;
}

void cusemu_session_stop(struct cusemu_session *s)
{
	if (!end_requests(s)) {
		s->stuck = true;	/* freeing under it would be worse */
		return;
	}
	/*
	 * Closing /dev/cuse removes the node; clients get errors, not hangs.
	 * Not cuse_lowlevel_teardown(): it would remove libfuse's signal
	 * handlers again, and complain that the session has none.
	 */
	fuse_session_destroy(s->se);
	s->se = NULL;
	/* The kernel sends no release for files open at shutdown. */
	cusemu_node_close_files(&s->node);
}

/*
 * A worker may still hold an event for a stopped session: its memory
 * lives until the pool has stopped.
 */
void cusemu_session_free(struct cusemu_session *s)
{
	if (s->stuck)
		return;
	if (cusemu_pool_running())
		s->free_later = true;
	else
		session_free_now(s);
}

static void end_all_waits(void *data)
{
	(void)data;
	g_mutex_lock(&sessions_lock);
	for (GList *l = sessions; l; l = l->next) {
		struct cusemu_session *s = l->data;

		cusemu_waiters_end(&s->node.waiters);
	}
	g_mutex_unlock(&sessions_lock);
}

void cusemu_transport_stop(void)
{
	GList *left;

	if (!cusemu_pool_stop(end_all_waits, NULL))
		return;
	/* Freed by now unless a worker could still reach them. */
	g_mutex_lock(&sessions_lock);
	left = g_list_copy(sessions);
	g_mutex_unlock(&sessions_lock);
	for (GList *l = left; l; l = l->next) {
		struct cusemu_session *s = l->data;

		if (s->free_later)
			session_free_now(s);
	}
	g_list_free(left);
}
