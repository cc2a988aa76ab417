/* SPDX-License-Identifier: MIT */
/*
 * CUSE sessions and their requests. An ioctl becomes one call record; when
 * the handler needs client memory the reply is FUSE_IOCTL_RETRY with every
 * range known so far, and the ranges are kept per open file and thread so
 * that the data of the retried request can be laid back onto them.
 */
#define G_LOG_DOMAIN "cusemu-transport"
#define FUSE_USE_VERSION 314

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>
#include <glib.h>

#include "call.h"
#include "device.h"
#include "dispatch.h"
#include "lock.h"
#include "stats.h"
#include "transport.h"

/* Pending retries a file may hold: one per thread in an ioctl. */
#define MAX_RETRIES_PER_FILE 64
/* Interrupts the loop thread's wait once the session is told to exit. */
#define WAKE_SIGNAL SIGUSR1

struct cusemu_session {
	struct cusemu_device *dev;
	struct fuse_session *se;
	struct fuse_loop_config *loop_config;
	GThread *thread;

	GMutex lock;		/* guards the fields below */
	GCond cond;
	pthread_t loop_thread;
	bool started, ended;
	/*
	 * Requests in flight (struct cusemu_wait_ctx), under their own lock:
	 * interrupting one takes a model's mutex, and models wake pollers
	 * (the lock above) with their mutex held.
	 */
	GMutex waits_lock;
	GList *waits;
	GList *files;		/* struct open_file, still open */
};

/* The ranges of the retry a thread's ioctl is waiting for. */
struct retry {
	pid_t tid;
	unsigned int cmd;
	unsigned long arg;
	struct cusemu_user_ranges in, out;
};

struct open_file {
	struct cusemu_file file;
	GMutex lock;
	GQueue retries;		/* struct retry, oldest first */
	struct fuse_pollhandle *poll;	/* guarded by the session's lock */
};

static GPrivate out_buffer_key = G_PRIVATE_INIT(g_free);

/* One reply buffer per worker thread: nothing allocated per call for it. */
static uint8_t *out_buffer(void)
{
	uint8_t *buf = g_private_get(&out_buffer_key);

	if (!buf) {
		buf = g_malloc(CUSEMU_USER_MAX_BYTES);
		g_private_set(&out_buffer_key, buf);
	}
	return buf;
}

static struct open_file *file_of(struct fuse_file_info *fi)
{
	return (struct open_file *)(uintptr_t)fi->fh;
}

/* A positive errno the kernel accepts; anything else is a model bug. */
static int reply_errno(long result)
{
	if (result < 0 && result > -4096)
		return (int)-result;
	g_warning("handler returned %ld, not a -errno; replying EIO", result);
	return EIO;
}

/*
 * The retry this request answers, removed from the file. A request without
 * data starts a call: a stale retry of the same thread is dropped (its
 * client gave up, e.g. on EFAULT while the kernel copied).
 */
static struct retry *take_retry(struct open_file *of,
				const struct cusemu_call *call,
				size_t in_len, size_t out_len)
{
	struct retry *found = NULL;

	g_mutex_lock(&of->lock);
	for (GList *l = of->retries.head; l; l = l->next) {
		struct retry *r = l->data;

		if (r->tid != call->tid)
			continue;
		g_queue_delete_link(&of->retries, l);
		if (r->cmd == call->cmd && r->arg == call->arg &&
		    r->in.bytes == in_len && r->out.bytes == out_len &&
		    (in_len || out_len))
			found = r;
		else
			g_free(r);
		break;
	}
	g_mutex_unlock(&of->lock);
	return found;
}

static void keep_retry(struct open_file *of, const struct cusemu_call *call)
{
	struct retry *r = g_new(struct retry, 1);

	r->tid = call->tid;
	r->cmd = call->cmd;
	r->arg = call->arg;
	cusemu_user_ranges_copy(&r->in, &call->in);
	cusemu_user_ranges_copy(&r->out, &call->out);

	g_mutex_lock(&of->lock);
	g_queue_push_tail(&of->retries, r);
	if (of->retries.length > MAX_RETRIES_PER_FILE)
		g_free(g_queue_pop_head(&of->retries));
	g_mutex_unlock(&of->lock);
}

static void to_iovec(struct iovec *iov, const struct cusemu_user_ranges *set)
{
	for (unsigned int i = 0; i < set->count; i++) {
		iov[i].iov_base = (void *)(uintptr_t)set->r[i].addr;
		iov[i].iov_len = set->r[i].len;
	}
}

static void reply_retry(fuse_req_t req, struct open_file *of,
			const struct cusemu_call *call)
{
	struct iovec in[CUSEMU_USER_MAX_RANGES], out[CUSEMU_USER_MAX_RANGES];

	to_iovec(in, &call->in);
	to_iovec(out, &call->out);
	keep_retry(of, call);
	fuse_reply_ioctl_retry(req, in, call->in.count, out, call->out.count);
}

static void on_interrupt(fuse_req_t req, void *data)
{
	cusemu_wait_ctx_interrupt(data);
}

/*
 * Around a model's handler: the file's flags as of this request (fcntl may
 * have changed O_NONBLOCK since open; only read and write requests carry
 * them, so fi is NULL for the others), and a way for the client's
 * interrupt to wake a handler that waits.
 */
static void request_begin(fuse_req_t req, struct cusemu_wait_ctx *ctx,
			  struct open_file *of, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	if (fi)
		of->file.flags = fi->flags;
	cusemu_wait_ctx_init(ctx);
	g_mutex_lock(&s->waits_lock);
	s->waits = g_list_prepend(s->waits, ctx);
	/* A request that comes in while the session ends waits for nothing. */
	if (fuse_session_exited(s->se))
		g_atomic_int_set(&ctx->interrupted, 1);
	g_mutex_unlock(&s->waits_lock);
	cusemu_wait_ctx_set_current(ctx);
	fuse_req_interrupt_func(req, on_interrupt, ctx);
}

static void request_end(fuse_req_t req, struct cusemu_wait_ctx *ctx)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	fuse_req_interrupt_func(req, NULL, NULL);
	cusemu_wait_ctx_set_current(NULL);
	g_mutex_lock(&s->waits_lock);
	s->waits = g_list_remove(s->waits, ctx);
	g_mutex_unlock(&s->waits_lock);
	cusemu_wait_ctx_clear(ctx);
}

/* The command's name from the device's tables, for the statistics. */
static void record(struct cusemu_call *call)
{
	const struct cusemu_device_model *m = call->dev->model;
	const struct cusemu_ioctl *row;

	row = cusemu_ioctl_lookup(call->compat ? m->compat_table
					       : m->native_table,
				  call->cmd);
	if (!row)
		row = cusemu_ioctl_lookup(call->compat ? m->native_table
						       : m->compat_table,
					  call->cmd);
	call->stats.name = row ? row->name : NULL;
	cusemu_stats_record(call->dev->dp->stats, &call->stats);
}

static void cuse_ioctl(fuse_req_t req, int cmd, void *arg,
		       struct fuse_file_info *fi, unsigned int flags,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct open_file *of = file_of(fi);
	g_autofree struct retry *prev = NULL;
	struct cusemu_wait_ctx ctx;
	struct cusemu_call call;
	uint8_t *out = out_buffer();
	long result;

	/* libfuse 3.14 hands the command over as an int. */
	cusemu_call_init(&call, s->dev, &of->file, (unsigned int)cmd,
			 (unsigned long)(uintptr_t)arg,
			 flags & FUSE_IOCTL_COMPAT, fuse_req_ctx(req)->pid);
	prev = take_retry(of, &call, in_bufsz, out_bufsz);
	if (prev)
		cusemu_call_set_data(&call, &prev->in, &prev->out, in_buf,
				     (uint32_t)in_bufsz, out,
				     (uint32_t)out_bufsz);
	request_begin(req, &ctx, of, NULL);
	result = cusemu_dispatch(&call);
	request_end(req, &ctx);
	switch (cusemu_call_outcome(&call, &result)) {
	case CUSEMU_CALL_RETRY:
		call.stats.retry = true;
		reply_retry(req, of, &call);
		break;
	case CUSEMU_CALL_ERROR:
		call.stats.error = reply_errno(result);
		fuse_reply_err(req, call.stats.error);
		break;
	case CUSEMU_CALL_REPLY:
		fuse_reply_ioctl(req, (int)result, out, call.out_used);
		break;
	}
	record(&call);
}

static void cuse_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_device *dev = s->dev;
	struct open_file *of = g_new0(struct open_file, 1);
	int err;

	of->file.dev = dev;
	of->file.flags = fi->flags;
	of->file.opener = fuse_req_ctx(req)->pid;
	g_mutex_init(&of->lock);
	g_queue_init(&of->retries);
	err = dev->model->open ? dev->model->open(dev, &of->file) : 0;
	if (err) {
		g_mutex_clear(&of->lock);
		g_free(of);
		fuse_reply_err(req, reply_errno(err));
		return;
	}
	g_mutex_lock(&s->lock);
	s->files = g_list_prepend(s->files, of);
	g_mutex_unlock(&s->lock);
	fi->fh = (uintptr_t)of;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

static void free_file(struct cusemu_device *dev, struct open_file *of)
{
	if (of->poll)
		fuse_pollhandle_destroy(of->poll);
	if (dev->model->release)
		dev->model->release(dev, &of->file);
	g_queue_clear_full(&of->retries, g_free);
	g_mutex_clear(&of->lock);
	g_free(of);
}

static void cuse_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct open_file *of = file_of(fi);

	g_mutex_lock(&s->lock);
	s->files = g_list_remove(s->files, of);
	g_mutex_unlock(&s->lock);
	free_file(s->dev, of);
	fuse_reply_err(req, 0);
}

static void cuse_read(fuse_req_t req, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_device *dev = s->dev;
	struct open_file *of = file_of(fi);
	g_autofree char *buf = NULL;
	struct cusemu_wait_ctx ctx;
	ssize_t ret;

	if (!dev->model->read) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* The kernel bounds size by the connection's max_read. */
	buf = g_malloc(size ? size : 1);
	request_begin(req, &ctx, of, fi);
	ret = dev->model->read(dev, &of->file, buf, size);
	request_end(req, &ctx);
	if (ret < 0)
		fuse_reply_err(req, reply_errno(ret));
	else
		fuse_reply_buf(req, buf, MIN((size_t)ret, size));
}

static void cuse_write(fuse_req_t req, const char *buf, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_device *dev = s->dev;
	struct open_file *of = file_of(fi);
	struct cusemu_wait_ctx ctx;
	ssize_t ret;

	if (!dev->model->write) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	request_begin(req, &ctx, of, fi);
	ret = dev->model->write(dev, &of->file, buf, size);
	request_end(req, &ctx);
	if (ret < 0)
		fuse_reply_err(req, reply_errno(ret));
	else
		fuse_reply_write(req, MIN((size_t)ret, size));
}

/* Without a poll slot a node is always ready, as the kernel's default. */
#define DEFAULT_POLLMASK (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

static void cuse_poll(fuse_req_t req, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_device *dev = s->dev;
	struct open_file *of = file_of(fi);
	struct fuse_pollhandle *old = NULL;
	unsigned int mask = DEFAULT_POLLMASK;

	/* Kept before asking the model, so no wake-up falls in between. */
	if (ph) {
		g_mutex_lock(&s->lock);
		old = of->poll;
		of->poll = ph;
		g_mutex_unlock(&s->lock);
	}
	if (old)
		fuse_pollhandle_destroy(old);
	if (dev->model->poll)
		mask = dev->model->poll(dev, &of->file);
	fuse_reply_poll(req, mask);
}

/* The model's cusemu_device_wake_up(): the kernel polls every waiter again. */
static void wake_pollers(void *data)
{
	struct cusemu_session *s = data;

	g_mutex_lock(&s->lock);
	for (GList *l = s->files; l; l = l->next) {
		struct open_file *of = l->data;

		if (!of->poll)
			continue;
		fuse_lowlevel_notify_poll(of->poll);
		fuse_pollhandle_destroy(of->poll);
		of->poll = NULL;
	}
	g_mutex_unlock(&s->lock);
}

static const struct cuse_lowlevel_ops cuse_ops = {
	.open = cuse_open,
	.release = cuse_release,
	.read = cuse_read,
	.write = cuse_write,
	.ioctl = cuse_ioctl,
	.poll = cuse_poll,
};

static void wake_handler(int sig)
{
	(void)sig;
}

void cusemu_transport_init(void)
{
	struct sigaction sa = { .sa_handler = wake_handler };

	/* No SA_RESTART: the loop thread's sem_wait must return EINTR. */
	sigemptyset(&sa.sa_mask);
	sigaction(WAKE_SIGNAL, &sa, NULL);
}

static gpointer session_loop(gpointer data)
{
	struct cusemu_session *s = data;
	int ret;

	g_mutex_lock(&s->lock);
	s->loop_thread = pthread_self();
	s->started = true;
	g_mutex_unlock(&s->lock);
	ret = fuse_session_loop_mt(s->se, s->loop_config);
	if (ret)
		g_message("%s: session loop ended (%d)", s->dev->name, ret);
	g_mutex_lock(&s->lock);
	s->ended = true;
	g_cond_broadcast(&s->cond);
	g_mutex_unlock(&s->lock);
	return NULL;
}

struct cusemu_session *
cusemu_session_start(struct cusemu_device *dev,
		     const struct cusemu_session_options *opts, GError **error)
{
	g_autofree char *devname = g_strdup_printf("DEVNAME=%s", dev->name);
	const char *dev_info[] = { devname };
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	char *argv[] = { "cusemud", "-f", opts->debug ? "-d" : NULL, NULL };
	struct cusemu_session *s = g_new0(struct cusemu_session, 1);
	int multithreaded;

	s->dev = dev;
	g_mutex_init(&s->lock);
	g_mutex_init(&s->waits_lock);
	g_cond_init(&s->cond);
	s->se = cuse_lowlevel_setup(opts->debug ? 3 : 2, argv, &ci, &cuse_ops,
				    &multithreaded, s);
	if (!s->se) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "cannot start the CUSE session of /dev/%s (see "
			    "the message above)",
			    dev->name);
		g_free(s);
		return NULL;
	}
	dev->dp->wake_up = wake_pollers;
	dev->dp->wake_up_data = s;
	/* libfuse's own handlers would end just one session: ours end all. */
	fuse_remove_signal_handlers(s->se);

	s->loop_config = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(s->loop_config, 0);
	fuse_loop_cfg_set_max_threads(s->loop_config, opts->max_threads);
	fuse_loop_cfg_set_idle_threads(s->loop_config,
				       MIN(opts->max_threads, 4u));
	s->thread = g_thread_new(dev->name, session_loop, s);
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
 * fuse_session_exit() alone does not wake a loop waiting for its workers
 * (libfuse #1572): interrupt the wait until the loop has seen the exit. The
 * loop then cancels its workers, blocked in read() or not.
 */
static void end_loop(struct cusemu_session *s)
{
	gint64 deadline = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;

	fuse_session_exit(s->se);
	/*
	 * Handlers waiting in the sleep helpers (a blocking read) cannot be
	 * cancelled: interrupt them as if their clients had given up.
	 */
	g_mutex_lock(&s->waits_lock);
	for (GList *l = s->waits; l; l = l->next)
		cusemu_wait_ctx_interrupt(l->data);
	g_mutex_unlock(&s->waits_lock);
	g_mutex_lock(&s->lock);
	while (!s->ended) {
		if (s->started)
			pthread_kill(s->loop_thread, WAKE_SIGNAL);
		if (!g_cond_wait_until(&s->cond, &s->lock,
				       g_get_monotonic_time() +
					       20 * G_TIME_SPAN_MILLISECOND) &&
		    g_get_monotonic_time() > deadline) {
			g_warning("%s: session loop does not end; leaving it",
				  s->dev->name);
			g_mutex_unlock(&s->lock);
			return;
		}
	}
	g_mutex_unlock(&s->lock);
	g_thread_join(s->thread);
	s->thread = NULL;
}

void cusemu_session_stop(struct cusemu_session *s)
{
	GList *files;

	end_loop(s);
	if (s->thread)
		return;	/* still running: freeing under it would be worse */
	/* Closing /dev/cuse removes the node; clients get errors, not hangs. */
	cuse_lowlevel_teardown(s->se);
	s->se = NULL;
	fuse_loop_cfg_destroy(s->loop_config);
	/* The kernel sends no release for files open at shutdown. */
	g_mutex_lock(&s->lock);
	files = s->files;
	s->files = NULL;
	g_mutex_unlock(&s->lock);
	for (GList *l = files; l; l = l->next)
		free_file(s->dev, l->data);
	g_list_free(files);
}

void cusemu_session_free(struct cusemu_session *s)
{
	if (s->thread)
		return;	/* a loop that never ended still uses it */
	g_mutex_clear(&s->lock);
	g_mutex_clear(&s->waits_lock);
	g_cond_clear(&s->cond);
	g_free(s);
}
