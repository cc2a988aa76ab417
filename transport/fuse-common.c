/* SPDX-License-Identifier: MIT */
/*
 * The libfuse adapter of the CUSE and FUSE transports (fuse-common.h):
 * the replies of a struct cusemu_req in libfuse's terms, the serve loop of
 * a session, and libfuse's log.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <errno.h>
#include <string.h>

#include "fuse-common.h"

#include <glib.h>

#include "pool.h"

static fuse_req_t fuse_req_of(struct cusemu_req *r)
{
	return ((struct cusemu_fuse_req *)r->data)->req;
}

static void reply_err(struct cusemu_req *r, int err)
{
	fuse_reply_err(fuse_req_of(r), err);
}

/* The node's files are direct I/O and not seekable. */
static void reply_open(struct cusemu_req *r)
{
	struct cusemu_fuse_req *fr = r->data;

	fr->fi->fh = r->fh;
	fr->fi->direct_io = 1;
	fr->fi->nonseekable = 1;
	fuse_reply_open(fr->req, fr->fi);
}

static void reply_buf(struct cusemu_req *r, const void *buf, size_t size)
{
	fuse_reply_buf(fuse_req_of(r), buf, size);
}

static void reply_write(struct cusemu_req *r, size_t count)
{
	fuse_reply_write(fuse_req_of(r), count);
}

static void reply_ioctl(struct cusemu_req *r, int result, const void *buf,
			size_t size)
{
	fuse_reply_ioctl(fuse_req_of(r), result, buf, size);
}

static void reply_ioctl_retry(struct cusemu_req *r, const struct iovec *in,
			      size_t in_count, const struct iovec *out,
			      size_t out_count)
{
	fuse_reply_ioctl_retry(fuse_req_of(r), in, in_count, out, out_count);
}

static void reply_poll(struct cusemu_req *r, unsigned int revents)
{
	fuse_reply_poll(fuse_req_of(r), revents);
}

static void fuse_interrupted(fuse_req_t req, void *data)
{
	struct cusemu_fuse_req *fr = data;

	fr->interrupted(fr->interrupted_data);
}

static void set_interrupt(struct cusemu_req *r, void (*fn)(void *data),
			   void *data)
{
	struct cusemu_fuse_req *fr = r->data;

	/* Kept on the way out: libfuse may be calling it still. */
	if (!fn) {
		fuse_req_interrupt_func(fr->req, NULL, NULL);
		return;
	}
	fr->interrupted = fn;
	fr->interrupted_data = data;
	fuse_req_interrupt_func(fr->req, fuse_interrupted, fr);
}

static void poll_notify(void *poll)
{
	fuse_lowlevel_notify_poll(poll);
}

static void poll_free(void *poll)
{
	fuse_pollhandle_destroy(poll);
}

/*
 * An ioctl kept past libfuse's callback: libfuse's request lives until
 * its answer, the input bytes in the worker's receive buffer only until
 * its next request, so they are copied; the file's info is not kept
 * (no ioctl answer needs it). One allocation.
 */
static struct cusemu_req *keep(const struct cusemu_req *r)
{
	const struct cusemu_fuse_req *fr = r->data;
	struct cusemu_fuse_req *k = g_try_malloc(sizeof(*k) + r->in_size);

	if (!k)
		return NULL;
	*k = *fr;
	k->pub.data = k;
	k->fi = NULL;
	if (r->in_size) {
		memcpy(k + 1, r->in, r->in_size);
		k->pub.in = k + 1;
	}
	if (k->inside)
		g_atomic_int_inc(k->inside);
	return &k->pub;
}

static void drop(struct cusemu_req *kept)
{
	struct cusemu_fuse_req *k = kept->data;

	if (k->inside)
		g_atomic_int_dec_and_test(k->inside);
	g_free(k);
}

const struct cusemu_req_ops cusemu_fuse_req_ops = {
	.err = reply_err,
	.open = reply_open,
	.buf = reply_buf,
	.write = reply_write,
	.ioctl = reply_ioctl,
	.ioctl_retry = reply_ioctl_retry,
	.poll = reply_poll,
	.interrupt = set_interrupt,
	.poll_notify = poll_notify,
	.poll_free = poll_free,
	.keep = keep,
	.drop = drop,
};

/* libfuse's receive buffer, one per worker: they are all se->bufsize. */
static void free_fuse_buf(gpointer data)
{
	struct fuse_buf *buf = data;

	free(buf->mem);
	g_free(buf);
}

/* Found through __thread at each request, as libfuse's own loop keeps its
 * buffer per thread; the GPrivate only frees it when the thread ends. */
static GPrivate fuse_buf_key = G_PRIVATE_INIT(free_fuse_buf);
static __thread struct fuse_buf *worker_fuse_buf;

/* The buffer a worker reads requests into, allocated on its first use. */
static struct fuse_buf *worker_buf(void)
{
	if (G_UNLIKELY(!worker_fuse_buf)) {
		worker_fuse_buf = g_new0(struct fuse_buf, 1);
		g_private_set(&fuse_buf_key, worker_fuse_buf);
	}
	return worker_fuse_buf;
}

/* One request of the session, waited for and served: take() of pool.h. */
static int fuse_conn_take(struct cusemu_conn *c, int *res)
{
	struct fuse_session *se = ((struct cusemu_fuse_conn *)c)->se;
	struct fuse_buf *buf = worker_buf();

	cusemu_pool_read_begin();
	*res = fuse_session_receive_buf(se, buf);
	cusemu_pool_read_end();
	/* EINTR: none came for a while; EAGAIN: the kernel had none. */
	if (*res == -EAGAIN || *res == -EINTR)
		return 0;
	if (*res <= 0)
		return -1;
	fuse_session_process_buf(se, buf);
	return 1;
}

/* libfuse's messages, in the daemon's log under the domain "libfuse". */
G_GNUC_PRINTF(2, 0)
static void libfuse_log(enum fuse_log_level level, const char *fmt,
			va_list ap)
{
	g_autofree char *message = g_strdup_vprintf(fmt, ap);
	GLogLevelFlags flags = level <= FUSE_LOG_ERR ? G_LOG_LEVEL_WARNING :
			       level <= FUSE_LOG_NOTICE ? G_LOG_LEVEL_MESSAGE :
			       level == FUSE_LOG_INFO ? G_LOG_LEVEL_INFO :
							G_LOG_LEVEL_DEBUG;

	g_strchomp(message);
	g_log("libfuse", flags, "libfuse: %s", message);
}

void cusemu_fuse_log(void)
{
	fuse_set_log_func(libfuse_log);
}

static void fuse_conn_exit(struct cusemu_conn *c)
{
	fuse_session_exit(((struct cusemu_fuse_conn *)c)->se);
}

gboolean cusemu_fuse_conn_serve(struct cusemu_fuse_conn *c, GError **error)
{
	c->conn.source.fd = fuse_session_fd(c->se);
	c->conn.take = fuse_conn_take;
	c->conn.exit = fuse_conn_exit;
	return cusemu_conn_serve(&c->conn, error);
}
