/* SPDX-License-Identifier: MIT */
/*
 * What the transports share: how they read their settings, their
 * connections served by the pool's workers (one serve loop), and their
 * end (one shutdown loop). What a request does on a device is node.c's;
 * the list of transports and the choice of one are transports.c's.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include <glib.h>

#include "device.h"
#include "node.h"
#include "pool.h"
#include "transport.h"

/* How long a stop waits for the workers inside a connection's requests. */
#define STOP_TIMEOUT_S 10

/* The pool's connections, one set for the process as there is one pool:
 * every connection served and not freed yet, for the end of the pool,
 * under lock; and the pool's size, set once before the first. */
static struct {
	GMutex lock;
	GList *list;
	unsigned int pool_size;
} conns = { .pool_size = 8 };

void cusemu_transport_init(unsigned int workers)
{
	conns.pool_size = workers;
}

gboolean cusemu_setting_count(const char *text, const char *origin,
			      const char *key, guint64 max, const char *hint,
			      guint64 *n, GError **error)
{
	if (!text || g_ascii_string_to_unsigned(text, 10, 1, max, n, NULL))
		return TRUE;
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "%s: %s '%s' is not a number from 1 to %" G_GUINT64_FORMAT
		    "; %s",
		    origin, key, text, max, hint);
	return FALSE;
}

gboolean cusemu_setting_bool(const char *text, const char *origin,
			     const char *key, gboolean *b, GError **error)
{
	if (!text)
		return TRUE;
	if (!g_ascii_strcasecmp(text, "true") || !strcmp(text, "1") ||
	    !g_ascii_strcasecmp(text, "yes"))
		*b = TRUE;
	else if (!g_ascii_strcasecmp(text, "false") || !strcmp(text, "0") ||
		 !g_ascii_strcasecmp(text, "no"))
		*b = FALSE;
	else {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown %s value '%s'; use true or false",
			    origin, key, text);
		return FALSE;
	}
	return TRUE;
}

void cusemu_transport_settings_clear(const struct cusemu_transport_ops *ops,
				     struct cusemu_transport_settings *s)
{
	if (ops && s->own && ops->settings_free)
		ops->settings_free(s->own);
	s->own = NULL;
}

gboolean cusemu_transport_can_replace(const struct cusemu_device *old,
				      const struct cusemu_device *dev,
				      GError **error)
{
	if (cusemu_node_can_serve(cusemu_instance(old)->serving.node, dev))
		return TRUE;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
		    "the new %s needs memory that its commands' _IOC bits do "
		    "not describe, which this CUSE node, registered for "
		    "restricted ioctls, cannot fetch; restart the daemon for it",
		    dev->model->name);
	return FALSE;
}

void cusemu_transport_replace(struct cusemu_device *old,
			      struct cusemu_device *dev)
{
	cusemu_node_replace(cusemu_instance(old)->serving.node, dev);
}

gboolean cusemu_transport_start(const struct cusemu_transport_ops *ops,
				const struct cusemu_transport_settings *s,
				GPtrArray *devices, struct cusemu_transport **t,
				GError **error)
{
	cusemu_transport_init(s->workers);
	return ops->start(s, devices, t, error);
}

/* The one serve loop's step: -1 from take is the kernel's end of it
 * (ENODEV), an unmount, or a stop. */
static int conn_take(struct cusemu_pool_source *src)
{
	struct cusemu_conn *c = (struct cusemu_conn *)src;
	int res;
	int taken = c->take(c, &res);

	if (taken >= 0)
		return taken;
	cusemu_pool_remove(src);
	if (!g_atomic_int_exchange(&c->done, 1) && c->ended)
		c->ended(c, res);
	return -1;
}

gboolean cusemu_conn_serve(struct cusemu_conn *c, GError **error)
{
	int fd = c->source.fd;

	c->source.take = conn_take;
	g_mutex_lock(&conns.lock);
	conns.list = g_list_prepend(conns.list, c);
	g_mutex_unlock(&conns.lock);
	/* Its readers wait in a read (pool.h). */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: cannot make its descriptor blocking: %s",
			    c->what, g_strerror(errno));
		return FALSE;
	}
	if (!cusemu_pool_start(conns.pool_size, error) ||
	    !cusemu_pool_add(&c->source, error)) {
		g_prefix_error(error, "%s: ", c->what);
		return FALSE;
	}
	return TRUE;
}

bool cusemu_conn_done(struct cusemu_conn *c)
{
	return g_atomic_int_get(&c->done);
}

/*
 * The one shutdown loop of a connection: no worker takes its requests any
 * more; wait for those inside one, interrupting waits in the sleep helpers
 * (a blocking read) as if their clients had given up, again each round
 * for one between its check and its wait.
 */
bool cusemu_conn_stop(struct cusemu_conn *c)
{
	gint64 deadline = g_get_monotonic_time() +
			  STOP_TIMEOUT_S * G_TIME_SPAN_SECOND;

	c->exit(c);
	cusemu_pool_remove(&c->source);
	while (g_atomic_int_get(&c->source.active)) {
		c->end_waits(c);
		if (g_get_monotonic_time() > deadline) {
			g_warning("%s: requests do not end; leaving them",
				  c->what);
			c->stuck = true;	/* freeing under it would be worse */
			return false;
		}
		poll(NULL, 0, 1);	/* not nanosleep: the sandbox has poll */
	}
	g_atomic_int_set(&c->done, 1);
	return true;
}

static void conn_free_now(struct cusemu_conn *c)
{
	g_mutex_lock(&conns.lock);
	conns.list = g_list_remove(conns.list, c);
	g_mutex_unlock(&conns.lock);
	c->free(c);
}

/* A worker may still hold an event for a stopped connection: its memory
 * lives until the pool has stopped. */
void cusemu_conn_release(struct cusemu_conn *c)
{
	if (c->stuck)
		return;
	if (cusemu_pool_running())
		c->free_later = true;
	else
		conn_free_now(c);
}

static void end_all_waits(void *data)
{
	(void)data;
	g_mutex_lock(&conns.lock);
	for (GList *l = conns.list; l; l = l->next) {
		struct cusemu_conn *c = l->data;

		c->end_waits(c);
	}
	g_mutex_unlock(&conns.lock);
}

/* After every connection has stopped: end the workers, then free what
 * they could still reach. */
static void end_pool(void)
{
	GList *left;

	if (!cusemu_pool_stop(end_all_waits, NULL))
		return;
	g_mutex_lock(&conns.lock);
	left = g_list_copy(conns.list);
	g_mutex_unlock(&conns.lock);
	for (GList *l = left; l; l = l->next) {
		struct cusemu_conn *c = l->data;

		if (c->free_later)
			conn_free_now(c);
	}
	g_list_free(left);
}

void cusemu_transport_stop(struct cusemu_transport *t)
{
	if (t)
		t->ops->stop(t);
	end_pool();
}

void cusemu_transport_free(struct cusemu_transport *t)
{
	if (t)
		t->ops->free(t);
}
