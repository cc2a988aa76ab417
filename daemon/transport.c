/* SPDX-License-Identifier: MIT */
/*
 * CUSE sessions and their requests. An ioctl becomes one call record; when
 * the handler needs client memory the reply is FUSE_IOCTL_RETRY with every
 * range known so far, and the ranges are kept per open file and thread so
 * that the data of the retried request can be laid back onto them.
 *
 * In steady state an ioctl allocates nothing here and takes no lock: the
 * reply buffer is per worker thread, a retry's ranges go into a slot of
 * the file claimed with a compare-and-swap, and the statistics count with
 * atomics. The only locks are the ones the kernel model prescribes.
 */
#define G_LOG_DOMAIN "cusemu-transport"
#define FUSE_USE_VERSION 314

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>

#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>
#include <glib.h>

#include "call.h"
#include "device.h"
#include "dispatch.h"
#include "fuse-keys.h"
#include "lock.h"
#include "pool.h"
#include "stats.h"
#include "request.h"
#include "transport.h"

/* Pending retries a file may hold: one per client thread in an ioctl. */
#define RETRY_SLOTS 64
/*
 * Requests a worker takes from one node in a row, without going back to
 * the event loop, while the node has more waiting: a busy node is served
 * without a wake-up per request, and other nodes still get their turn.
 */
#define DRAIN_MAX 16
/* How long a stop waits for the workers inside a session's requests. */
#define STOP_TIMEOUT_S 10

struct cusemu_session {
	struct cusemu_pool_source source;	/* its /dev/cuse descriptor */
	struct cusemu_device *dev;
	struct fuse_session *se;
	bool stuck;		/* a stop could not end its requests */
	bool free_later;	/* freed once the pool has stopped */

	bool restricted;	/* CUSE restricted ioctls: see cuse_ioctl() */
	struct cusemu_waiters waiters;

	GMutex lock;		/* guards the fields below */
	bool ended;		/* the kernel dropped it, or it was stopped */
	bool init_sent;		/* the CUSE_INIT reply went to the kernel */
	GList *files;		/* struct open_file, still open */
};

/* Every session started, for the end of the pool: under sessions_lock. */
static GMutex sessions_lock;
static GList *sessions;

/* A slot's owner when it holds no retry, or while a thread fills or takes it. */
#define SLOT_FREE 0
#define SLOT_BUSY (-1)

/* The ranges of the retry a client thread's ioctl is waiting for. */
struct retry {
	/* SLOT_FREE, SLOT_BUSY, or the thread id of a waiting retry. */
	gint owner;
	unsigned int cmd;
	unsigned long arg;
	guint64 age;		/* when it was kept: the oldest goes first */
	bool away;		/* kept elsewhere than its thread's home slot */
	/* in and out; allocated on the slot's first use and kept. */
	struct cusemu_user_ranges *ranges;
};

/*
 * A thread's retry lives in its home slot (its id modulo RETRY_SLOTS)
 * unless another thread's holds it; the two counters let a call with no
 * retry waiting, and one found at home, look at no other slot.
 */
struct open_file {
	struct cusemu_file file;
	struct retry retries[RETRY_SLOTS];
	guint64 retries_kept;
	gint waiting;		/* slots holding a retry */
	gint away;		/* of those, outside their home slot */
	struct fuse_pollhandle *poll;	/* guarded by the session's lock */
};

/*
 * Per worker thread, found through __thread at each call; the GPrivate
 * only frees it when the thread ends.
 */
static GPrivate out_buffer_key = G_PRIVATE_INIT(g_free);
static __thread uint8_t *worker_out_buffer;

/* One reply buffer per worker thread: nothing allocated per call for it. */
static uint8_t *out_buffer(void)
{
	if (G_UNLIKELY(!worker_out_buffer)) {
		worker_out_buffer = g_malloc(CUSEMU_USER_MAX_BYTES);
		g_private_set(&out_buffer_key, worker_out_buffer);
	}
	return worker_out_buffer;
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

static unsigned int home_slot(pid_t tid)
{
	return (unsigned int)tid % RETRY_SLOTS;
}

/* Take slot r from its waiting thread; false if another thread got it. */
static bool grab(struct open_file *of, struct retry *r, gint owner)
{
	if (!g_atomic_int_compare_and_exchange(&r->owner, owner, SLOT_BUSY))
		return false;
	g_atomic_int_dec_and_test(&of->waiting);
	if (r->away)
		g_atomic_int_dec_and_test(&of->away);
	return true;
}

/* The slot that holds tid's retry, marked busy, or NULL. */
static struct retry *find_retry(struct open_file *of, pid_t tid)
{
	struct retry *r = &of->retries[home_slot(tid)];

	if (!g_atomic_int_get(&of->waiting))
		return NULL;
	if (g_atomic_int_get(&r->owner) == tid && grab(of, r, tid))
		return r;
	if (!g_atomic_int_get(&of->away))
		return NULL;
	for (unsigned int i = 0; i < RETRY_SLOTS; i++) {
		r = &of->retries[i];
		if (g_atomic_int_get(&r->owner) == tid && grab(of, r, tid))
			return r;
	}
	return NULL;
}

/*
 * Lay the data of a retried request onto the ranges of the retry it
 * answers, and free the slot. A request without data starts a call: a
 * stale retry of the same thread is dropped (its client gave up, e.g. on
 * EFAULT while the kernel copied). A client thread has one ioctl in flight
 * at a time, so it owns at most one slot.
 */
static bool take_retry(struct open_file *of, struct cusemu_call *call,
		       const void *in_buf, size_t in_len, uint8_t *out,
		       size_t out_len)
{
	struct retry *r = find_retry(of, call->tid);
	bool match;

	if (!r)
		return false;
	match = r->cmd == call->cmd && r->arg == call->arg &&
		r->ranges[0].bytes == in_len && r->ranges[1].bytes == out_len &&
		(in_len || out_len);
	if (match)
		cusemu_call_set_data(call, &r->ranges[0], &r->ranges[1], in_buf,
				     (uint32_t)in_len, out, (uint32_t)out_len);
	g_atomic_int_set(&r->owner, SLOT_FREE);
	return match;
}

/*
 * The thread's home slot, else a free one, else the oldest retry's (its
 * client most likely died), marked busy; NULL if none can be had.
 */
static struct retry *claim_slot(struct open_file *of, pid_t tid)
{
	struct retry *oldest = NULL, *home = &of->retries[home_slot(tid)];
	gint owner;

	if (g_atomic_int_compare_and_exchange(&home->owner, SLOT_FREE,
					      SLOT_BUSY))
		return home;
	for (unsigned int i = 0; i < RETRY_SLOTS; i++) {
		struct retry *r = &of->retries[i];

		if (g_atomic_int_compare_and_exchange(&r->owner, SLOT_FREE,
						      SLOT_BUSY))
			return r;
		if (g_atomic_int_get(&r->owner) > 0 &&
		    (!oldest || r->age < oldest->age))
			oldest = r;
	}
	owner = oldest ? g_atomic_int_get(&oldest->owner) : SLOT_FREE;
	if (owner > 0 && grab(of, oldest, owner))
		return oldest;
	return NULL;
}

static void keep_retry(struct open_file *of, const struct cusemu_call *call)
{
	struct retry *r = claim_slot(of, call->tid);

	if (!r) {
		/* The retried request runs as a fresh call, and asks again. */
		g_warning("%s: more than %d threads of one file in an ioctl",
			  call->dev->name, RETRY_SLOTS);
		return;
	}
	if (!r->ranges)
		r->ranges = g_new(struct cusemu_user_ranges, 2);
	r->cmd = call->cmd;
	r->arg = call->arg;
	r->age = __atomic_add_fetch(&of->retries_kept, 1, __ATOMIC_RELAXED);
	cusemu_user_ranges_copy(&r->ranges[0], &call->in);
	cusemu_user_ranges_copy(&r->ranges[1], &call->out);
	r->away = r != &of->retries[home_slot(call->tid)];
	/* Counted before it can be found: a count is never short. */
	g_atomic_int_inc(&of->waiting);
	if (r->away)
		g_atomic_int_inc(&of->away);
	g_atomic_int_set(&r->owner, call->tid);
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
static void request_begin(fuse_req_t req, struct cusemu_request *r,
			  struct open_file *of, struct fuse_file_info *fi,
			  struct cusemu_call *call)
{
	struct cusemu_session *s = fuse_req_userdata(req);

	if (fi)
		of->file.flags = fi->flags;
	/* The session's end interrupts it too, if it comes to wait. */
	cusemu_request_init(r, &s->waiters, call);
	cusemu_request_set_current(r);
	fuse_req_interrupt_func(req, on_interrupt, &r->wait);
}

static void request_end(fuse_req_t req, struct cusemu_request *r)
{
	fuse_req_interrupt_func(req, NULL, NULL);
	cusemu_request_set_current(NULL);
	cusemu_request_clear(r);
}

/*
 * The command's name for the statistics: the dispatcher names the rows it
 * runs; look up those of commands that failed before, or of hand-written
 * methods.
 */
static void record(struct cusemu_call *call)
{
	const struct cusemu_device_model *m = call->dev->model;
	const struct cusemu_ioctl *row;

	if (call->stats.name)
		goto out;
	row = cusemu_ioctl_lookup(call->compat ? m->compat_table
					       : m->native_table,
				  call->cmd);
	if (!row)
		row = cusemu_ioctl_lookup(call->compat ? m->native_table
						       : m->compat_table,
					  call->cmd);
	call->stats.name = row ? row->name : NULL;
out:
	cusemu_stats_record(cusemu_instance(call->dev)->stats, &call->stats);
}

/*
 * A restricted request carries exactly what the _IOC bits of the command
 * say: the kernel copies by them. Anything else is not from the kernel.
 */
static bool ioc_sizes(unsigned int cmd, size_t in_len, size_t out_len)
{
	size_t size = _IOC_SIZE(cmd);

	return in_len == (_IOC_DIR(cmd) & _IOC_WRITE ? size : 0) &&
	       out_len == (_IOC_DIR(cmd) & _IOC_READ ? size : 0);
}

static void cuse_ioctl(fuse_req_t req, int cmd, void *arg,
		       struct fuse_file_info *fi, unsigned int flags,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct open_file *of = file_of(fi);
	struct cusemu_request r;
	struct cusemu_call call;
	uint8_t *out = out_buffer();
	long result;

	/* libfuse 3.14 hands the command over as an int. */
	cusemu_call_init(&call, s->dev, &of->file, (unsigned int)cmd,
			 (unsigned long)(uintptr_t)arg,
			 flags & FUSE_IOCTL_COMPAT, fuse_req_ctx(req)->pid);
	/*
	 * Restricted: the kernel already copied what the _IOC bits describe,
	 * and takes no retry. Unrestricted: the data, if any, answers a retry.
	 */
	if (s->restricted) {
		if (!ioc_sizes(call.cmd, in_bufsz, out_bufsz)) {
			call.stats.error = EIO;
			fuse_reply_err(req, EIO);
			record(&call);
			return;
		}
		cusemu_call_set_ioc_data(&call, in_buf, (uint32_t)in_bufsz, out,
					 (uint32_t)out_bufsz);
	} else {
		take_retry(of, &call, in_buf, in_bufsz, out, out_bufsz);
	}
	request_begin(req, &r, of, NULL, &call);
	result = cusemu_dispatch(&call);
	request_end(req, &r);
	switch (cusemu_call_outcome(&call, &result)) {
	case CUSEMU_CALL_RETRY:
		if (s->restricted) {
			g_warning_once("%s: a handler asked for memory outside "
				       "its _IOC payload in restricted mode "
				       "(a table row's payload is wrong); the "
				       "caller gets EIO",
				       s->dev->name);
			call.stats.error = EIO;
			fuse_reply_err(req, EIO);
			break;
		}
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
	err = dev->model->open ? dev->model->open(dev, &of->file) : 0;
	if (err) {
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
	for (unsigned int i = 0; i < RETRY_SLOTS; i++)
		g_free(of->retries[i].ranges);
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
	g_autofree char *big = NULL;
	struct cusemu_request r;
	char *buf;
	ssize_t ret;

	if (!dev->model->read) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* The kernel bounds size by max_read, which is what the buffer holds. */
	if (size <= CUSEMU_USER_MAX_BYTES)
		buf = (char *)out_buffer();
	else
		buf = big = g_malloc(size);
	request_begin(req, &r, of, fi, NULL);
	ret = dev->model->read(dev, &of->file, buf, size);
	request_end(req, &r);
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
	struct cusemu_request r;
	ssize_t ret;

	if (!dev->model->write) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	request_begin(req, &r, of, fi, NULL);
	ret = dev->model->write(dev, &of->file, buf, size);
	request_end(req, &r);
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
	cusemu_waiters_clear(&s->waiters);
	g_free(s);
}

void cusemu_transport_init(unsigned int workers)
{
	pool_size = workers;
}

/* libfuse's receive buffer, one per worker: they are all se->bufsize. */
static void free_fuse_buf(gpointer data)
{
	struct fuse_buf *buf = data;

	free(buf->mem);
	g_free(buf);
}

static GPrivate fuse_buf_key = G_PRIVATE_INIT(free_fuse_buf);
static __thread struct fuse_buf *worker_fuse_buf;

/* The buffer a worker reads requests into, as out_buffer(). */
static struct fuse_buf *worker_buf(void)
{
	if (G_UNLIKELY(!worker_fuse_buf)) {
		worker_fuse_buf = g_new0(struct fuse_buf, 1);
		g_private_set(&fuse_buf_key, worker_fuse_buf);
	}
	return worker_fuse_buf;
}

static void session_ended(struct cusemu_session *s, int res)
{
	cusemu_pool_remove(&s->source);
	g_mutex_lock(&s->lock);
	if (!s->ended && res < 0)
		g_message("%s: session ended (%s)", s->dev->name,
			  g_strerror(-res));
	s->ended = true;
	g_mutex_unlock(&s->lock);
}

/*
 * A worker's turn at the session's descriptor: one request read and
 * served; other workers may take the node's next ones meanwhile. While
 * other workers are on the node too, it is busy: the worker reads again
 * at once (up to DRAIN_MAX) instead of going back to wait. 0 from
 * libfuse: the kernel dropped the connection (ENODEV), or the session was
 * told to exit.
 */
static void session_ready(struct cusemu_pool_source *src)
{
	struct cusemu_session *s = (struct cusemu_session *)src;
	struct fuse_buf *buf = worker_buf();

	for (unsigned int i = 0; i < DRAIN_MAX; i++) {
		int res = fuse_session_receive_buf(s->se, buf);

		/* EAGAIN: another worker took it. */
		if (res == -EAGAIN || res == -EINTR)
			return;
		if (res <= 0) {
			session_ended(s, res);
			return;
		}
		fuse_session_process_buf(s->se, buf);
		/* Alone on the node: its next request is not there yet. */
		if (g_atomic_int_get(&src->gone) ||
		    g_atomic_int_get(&src->active) < 2)
			return;
	}
}

/* libfuse's messages, in the daemon's log under the domain "libfuse". */
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

struct cusemu_session *
cusemu_session_start(struct cusemu_device *dev,
		     const struct cusemu_session_options *opts, GError **error)
{
	g_autofree char *devname = g_strdup_printf("DEVNAME=%s", dev->name);
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

	s->dev = dev;
	s->restricted = cusemu_instance(dev)->restricted;
	cusemu_waiters_init(&s->waiters);
	g_mutex_init(&s->lock);
	fuse_set_log_func(libfuse_log);
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
	cusemu_instance(dev)->wake_up = wake_pollers;
	cusemu_instance(dev)->wake_up_data = s;
	/* libfuse's own handlers would end just one session: ours end all. */
	fuse_remove_signal_handlers(s->se);

	g_mutex_lock(&sessions_lock);
	sessions = g_list_prepend(sessions, s);
	g_mutex_unlock(&sessions_lock);
	/* The fake libfuse of the unit tests has no descriptor. */
	fd = fuse_session_fd(s->se);
	if (fd < 0)
		return s;
	s->source.fd = fd;
	s->source.ready = session_ready;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) ||
	    !cusemu_pool_start(pool_size, error) ||
	    !cusemu_pool_add(&s->source, error)) {
		if (error && *error)
			g_prefix_error(error, "/dev/%s: ", dev->name);
		else
			g_set_error(error, G_FILE_ERROR,
				    g_file_error_from_errno(errno),
				    "/dev/%s: cannot make /dev/cuse "
				    "non-blocking: %s",
				    dev->name, g_strerror(errno));
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
		cusemu_waiters_end(&s->waiters);
		if (g_get_monotonic_time() > deadline) {
			g_warning("%s: requests do not end; leaving them",
				  s->dev->name);
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
	GList *files;

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
	g_mutex_lock(&s->lock);
	files = s->files;
	s->files = NULL;
	g_mutex_unlock(&s->lock);
	for (GList *l = files; l; l = l->next)
		free_file(s->dev, l->data);
	g_list_free(files);
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

		cusemu_waiters_end(&s->waiters);
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
