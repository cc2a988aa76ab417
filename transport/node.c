/* SPDX-License-Identifier: MIT */
/*
 * A device's open files and their requests, for every transport: each
 * request comes as a struct cusemu_req (req.h) and is answered through its
 * ops. An ioctl becomes one call record; when the handler needs client
 * memory the reply is a retry (FUSE_IOCTL_RETRY) with every range known
 * so far, and the ranges are
 * kept per open file and thread so that the data of the retried request
 * can be laid back onto them.
 *
 * In steady state an ioctl allocates nothing here and takes no lock: the
 * reply buffer is per worker thread, a retry's ranges go into a slot of
 * the file claimed with a compare-and-swap, and the statistics count with
 * atomics. The only locks are the ones the kernel model prescribes.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include <glib.h>

#include "call.h"
#include "device.h"
#include "dispatch.h"
#include "lock.h"
#include "node.h"
#include "oops.h"
#include "op.h"
#include "pool.h"
#include "proc.h"
#include "sandbox.h"
#include "stats.h"

/* Pending retries a file may hold: one per client thread in an ioctl. */
#define RETRY_SLOTS 64

/*
 * An ioctl whose handler took longer than this, the last time one was
 * timed, shares its worker's source before it runs: the node's next
 * requests go to other workers, as the kernel runs them on other CPUs
 * meanwhile. Quicker ones are served one after the other by the worker
 * that owns the source, cheaper than a wake-up each.
 */
#define SHARE_AFTER_US 30
/* One ioctl in this many is timed: on some machines the clock is a
 * system call. */
#define SHARE_SAMPLE 16
/*
 * One whose handler spent longer than this on a CPU, the last time one
 * was timed, goes to a long-call thread, which stays on a CPU of its own
 * (pool.h), or when none is free holds a CPU while it runs in its reader
 * (cusemu_pool_hold_cpu()): worth the hand-over or the move only for
 * handlers that spin for many round trips. One that waited as long (a
 * sleep, a model host's answer, a real device's ioctl) needs no CPU.
 */
#define HOLD_CPU_AFTER_US 200

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
	unsigned int round_trips;	/* the call's, this one counted */
	uint64_t start_ns;	/* the call's, when traced */
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
	/* The last poll's handle, and its transport's ops: under the
	 * node's lock. */
	void *poll;
	const struct cusemu_req_ops *poll_ops;
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

/*
 * Run stmt, a call into dev's model, under an oops guard: true when the
 * model faulted in it (oops.h). Values stmt assigns are only read when it
 * returned.
 */
#define GUARDED(dev, op, call, pid, stmt)                                \
	({                                                               \
		struct cusemu_oops_guard guard_;                         \
		cusemu_oops_enter(&guard_, (dev), (op), (call), (pid));  \
		if (!cusemu_oops_setjmp(&guard_)) {                      \
			stmt;                                            \
		}                                                        \
		cusemu_oops_leave(&guard_);                              \
	})

static struct open_file *file_of(const struct cusemu_req *req)
{
	return (struct open_file *)(uintptr_t)req->fh;
}

/*
 * The file was opened on an instance that cusemuctl reload has replaced
 * since: every call fails with ENODEV, as on a revoked file, and reaches
 * neither the old model nor the new one.
 */
static bool replaced(struct cusemu_node *n, const struct open_file *of)
{
	return of->file.dev != g_atomic_pointer_get(&n->dev);
}

/* The node's device now, which stays, reload or not, until
 * put_instance(). */
static struct cusemu_device *get_instance(struct cusemu_node *n)
{
	struct cusemu_device *dev;

	g_mutex_lock(&n->lock);
	dev = n->dev;
	cusemu_instance(dev)->serving.users++;
	g_mutex_unlock(&n->lock);
	return dev;
}

/* A file, or an open under way, lets go of its instance; a replaced one
 * goes with the last. */
static void put_instance(struct cusemu_node *n, struct cusemu_device *dev)
{
	struct cusemu_instance *inst = cusemu_instance(dev);
	bool last;

	g_mutex_lock(&n->lock);
	last = !--inst->serving.users && inst->serving.retired;
	g_mutex_unlock(&n->lock);
	if (last)
		cusemu_device_free(dev);
}

/* The errno of rec's reply for result, one the kernel takes (call.h). */
static int reply_errno(const struct cusemu_op_record *rec, long result)
{
	return cusemu_reply_errno(result, rec->dev,
				  cusemu_op_name(rec->op));
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
	if (match) {
		cusemu_call_set_data(call, &r->ranges[0], &r->ranges[1], in_buf,
				     (uint32_t)in_len, out, (uint32_t)out_len);
		call->round_trips = r->round_trips;
		call->start_ns = r->start_ns;
	}
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
	r->round_trips = call->round_trips + 1;
	r->start_ns = call->start_ns;
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

static void reply_retry(struct cusemu_req *req, struct open_file *of,
			const struct cusemu_call *call)
{
	struct iovec in[CUSEMU_USER_MAX_RANGES], out[CUSEMU_USER_MAX_RANGES];

	to_iovec(in, &call->in);
	to_iovec(out, &call->out);
	keep_retry(of, call);
	req->ops->ioctl_retry(req, in, call->in.count, out, call->out.count);
}

static void on_interrupt(void *data)
{
	cusemu_wait_ctx_interrupt(data);
}

/*
 * Around a model's handler: the file's flags as of this request (fcntl may
 * have changed O_NONBLOCK since open; only read and write requests carry
 * them, so flags is false for the others), and a way for the client's
 * interrupt to wake a handler that waits.
 */
static void request_begin(struct cusemu_node *n, struct cusemu_req *req,
			  struct cusemu_request *r, struct open_file *of,
			  bool flags, struct cusemu_call *call)
{
	if (flags)
		of->file.flags = req->flags;
	/* The session's end interrupts it too, if it comes to wait. */
	cusemu_request_init(r, &n->waiters, call);
	cusemu_request_set_current(r);
	req->ops->interrupt(req, on_interrupt, &r->wait);
}

static void request_end(struct cusemu_req *req, struct cusemu_request *r)
{
	req->ops->interrupt(req, NULL, NULL);
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
	call->stats.name = cusemu_call_command_name(call);
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

/*
 * A file on a FUSE mount asked for memory its _IOC bits do not describe:
 * the kernel copies only those, and takes no retry. Said once per
 * command and device.
 */
static void refuse_outside_payload(struct cusemu_node *n,
				   const struct cusemu_call *call)
{
	bool first;

	g_mutex_lock(&n->lock);
	if (!n->refused[call->compat])
		n->refused[call->compat] = g_hash_table_new(NULL, NULL);
	first = g_hash_table_add(n->refused[call->compat],
				 GUINT_TO_POINTER(call->cmd));
	g_mutex_unlock(&n->lock);
	if (first)
		g_warning("%s: %s (%s%08x) needs memory outside the payload its "
			  "_IOC bits describe (a pointer inside, or data the "
			  "other way): files on a FUSE mount cannot fetch it, "
			  "and a daemon started by an ordinary user reaches "
			  "no caller's memory itself, so the caller gets "
			  "EOPNOTSUPP; serve this device over CUSE for it, "
			  "start cusemud as root, or run the caller under "
			  "cusemu-run",
			  n->dev->name,
			  call->stats.name ? call->stats.name : "the command",
			  call->compat ? "32-bit, " : "", call->cmd);
}

/* When a timed handler started, by the clock and by the thread's own
 * account. */
struct timing {
	gint64 wall_us;
	gint64 cpu_us;
	long preempted;
};

/* The thread's CPU time in µs, and how often it was preempted. */
static gint64 thread_cpu(long *preempted)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		*preempted = 0;
		return 0;
	}
	*preempted = ru.ru_nivcsw;
	return (gint64)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
		       G_USEC_PER_SEC +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void timing_start(struct timing *t)
{
	t->cpu_us = thread_cpu(&t->preempted);
	t->wall_us = g_get_monotonic_time();
}

/*
 * Into serving, how long the handler held its worker: the time by the
 * clock, which counts its waits in system calls too (a real device's
 * ioctl, a model host's answer); but when the worker was preempted
 * meanwhile, its CPU time, else a quick handler on a loaded machine
 * would look long for the time it waited for a CPU, and its node's
 * requests would be shared for nothing until the next timed call. And
 * the CPU time alone, which tells a spinning handler.
 */
static void timing_record(const struct timing *t,
			  struct cusemu_serving_part *serving)
{
	gint64 wall = g_get_monotonic_time() - t->wall_us;
	long preempted;
	gint64 cpu = thread_cpu(&preempted) - t->cpu_us;
	gint64 took = preempted == t->preempted ? wall : cpu;

	g_atomic_int_set(&serving->last_us, (gint)CLAMP(took, 0, G_MAXINT));
	g_atomic_int_set(&serving->last_cpu_us, (gint)CLAMP(cpu, 0, G_MAXINT));
}

/*
 * The model's callbacks, each under an oops guard: true if it faulted.
 * Results go through pointers, which a jump back leaves alone.
 *
 * An ioctl's guard holds the CPU policy too: a device whose last timed
 * handler ran long shares its worker's source first, or holds a CPU of
 * its own (on a long-call thread, which has one, neither is needed);
 * one call in SHARE_SAMPLE is timed for it. The guard is a
 * frame of its own (sigsetjmp's locals), the dispatcher the next one.
 */
static bool model_ioctl(struct cusemu_call *call, long *result)
{
	struct cusemu_instance *inst = cusemu_instance(call->dev);

	return GUARDED(call->dev, CUSEMU_OP_IOCTL, call, call->tid, {
		guint nth = (guint)g_atomic_int_add(&inst->serving.dispatched,
						    1);
		gint last_us = g_atomic_int_get(&inst->serving.last_us);
		bool hold = g_atomic_int_get(&inst->serving.last_cpu_us) >
			    HOLD_CPU_AFTER_US;
		struct timing timing;

		if (last_us > SHARE_AFTER_US)
			cusemu_pool_share();
		if (hold)
			cusemu_pool_hold_cpu(&inst->serving.node->long_cpu);
		if (nth % SHARE_SAMPLE) {
			*result = cusemu_dispatch(call);
		} else {
			timing_start(&timing);
			*result = cusemu_dispatch(call);
			timing_record(&timing, &inst->serving);
		}
		if (hold)
			cusemu_pool_release_cpu();
	});
}

static bool model_open(struct cusemu_device *dev, struct cusemu_file *file,
		       int *err)
{
	return GUARDED(dev, CUSEMU_OP_OPEN, NULL, file->opener,
		       *err = dev->model->open(dev, file));
}

static void model_release(struct cusemu_device *dev, struct cusemu_file *file,
			  pid_t pid)
{
	GUARDED(dev, CUSEMU_OP_RELEASE, NULL, pid,
		dev->model->release(dev, file));
}

static bool model_read(struct cusemu_device *dev, struct cusemu_file *file,
		       char *buf, size_t size, pid_t pid, ssize_t *ret)
{
	return GUARDED(dev, CUSEMU_OP_READ, NULL, pid,
		       *ret = dev->model->read(dev, file, buf, size));
}

static bool model_write(struct cusemu_device *dev, struct cusemu_file *file,
			const char *buf, size_t size, pid_t pid, ssize_t *ret)
{
	return GUARDED(dev, CUSEMU_OP_WRITE, NULL, pid,
		       *ret = dev->model->write(dev, file, buf, size));
}

static bool model_show(struct cusemu_device *dev,
		       const struct cusemu_attr *attr, char *buf, size_t size,
		       pid_t pid, ssize_t *ret)
{
	return GUARDED(dev, CUSEMU_OP_READ, NULL, pid,
		       *ret = attr->show(dev, buf, size));
}

static bool model_poll(struct cusemu_device *dev, struct cusemu_file *file,
		       pid_t pid, unsigned int *mask)
{
	return GUARDED(dev, CUSEMU_OP_POLL, NULL, pid,
		       *mask = dev->model->poll(dev, file));
}

/*
 * What an ioctl's reply is, its statistics set: the errno, a retry, or
 * the data with result.
 */
enum ioctl_reply { IOCTL_REPLY_ERR, IOCTL_REPLY_RETRY, IOCTL_REPLY_DATA };

static enum ioctl_reply ioctl_reply_of(struct cusemu_node *n,
				       struct cusemu_call *call,
				       struct cusemu_op_record *rec,
				       long *result)
{
	switch (cusemu_call_outcome(call, result)) {
	case CUSEMU_CALL_RETRY:
		if (n->ioctls == CUSEMU_NODE_RESTRICTED) {
			g_warning_once("%s: a handler asked for memory outside "
				       "its _IOC payload in restricted mode "
				       "(a table row's payload is wrong); the "
				       "caller gets EIO",
				       n->dev->name);
			call->stats.error = EIO;
			return IOCTL_REPLY_ERR;
		}
		if (n->ioctls == CUSEMU_NODE_FILE) {
			call->stats.name = cusemu_call_command_name(call);
			refuse_outside_payload(n, call);
			call->stats.error = EOPNOTSUPP;
			return IOCTL_REPLY_ERR;
		}
		call->stats.retry = true;
		return IOCTL_REPLY_RETRY;
	case CUSEMU_CALL_ERROR:
		call->stats.error = reply_errno(rec, *result);
		return IOCTL_REPLY_ERR;
	case CUSEMU_CALL_REPLY:
		rec->result = *result;
		return IOCTL_REPLY_DATA;
	}
	g_assert_not_reached();
}

/*
 * The statistics and the trace line of a request are written before its
 * reply, and nothing of it is touched after: once answered, the client
 * may close its file, and the release, on another worker, frees an
 * instance that a reload has replaced.
 */
static void ioctl_finish(struct cusemu_call *call, struct cusemu_op_record *rec)
{
	record(call);
	cusemu_op_done(rec);
}

/*
 * The call's handler, unless its device was replaced (ENODEV) or fenced
 * (EIO); a fault in it is EIO. *result is the handler's.
 */
static void run_ioctl(struct cusemu_node *n, struct open_file *of,
		      struct cusemu_call *call, long *result)
{
	if (replaced(n, of)) {
		call->error = -ENODEV;
	} else if (cusemu_device_fenced(call->dev)) {
		call->error = -EIO;
	} else if (model_ioctl(call, result)) {
		call->error = -EIO;
		call->pending = false;
	}
}

/*
 * Over FUSE the kernel takes no retry: the memory a handler needs beyond
 * the _IOC payload is read and written here instead, in the caller's
 * process, as the kernel would have copied it on a retry. In a user
 * namespace of its own (cusemu-run's) the daemon holds CAP_SYS_PTRACE
 * over its callers and does it itself (process_vm_readv/writev); a root
 * daemon asks its /proc helper, which checks that the caller waits in an
 * ioctl on the mount. Up to REACH_LEVELS levels of pointers.
 */
#define REACH_LEVELS 16

static bool reaches_callers(void)
{
	return cusemu_reaches_callers() || cusemu_proc_reaches();
}

/* The caller's memory at set: into buf, or from it. 0, or -errno:
 * -EFAULT for memory the caller does not have. */
static int reach(pid_t pid, const struct cusemu_user_ranges *set,
		 uint8_t *buf, size_t len, bool write)
{
	struct iovec remote[CUSEMU_USER_MAX_RANGES];

	if (!len)
		return 0;
	to_iovec(remote, set);
	if (!cusemu_reaches_callers())
		return cusemu_proc_reach(pid, remote, set->count, buf, len,
					 write);
	return cusemu_proc_vm(pid, buf, len, remote, set->count, write);
}

/*
 * Run call again with the memory its handler asked for, read from the
 * caller, until it asks for none; *in holds what was read (freed by the
 * caller, after the call's record). True if the call ran on the caller's
 * memory: its out ranges are then written back by the daemon. False, the
 * call still pending: the daemon may not reach that caller.
 */
static bool reach_caller(struct cusemu_node *n, struct cusemu_req *req,
			 struct open_file *of, struct cusemu_call *call,
			 long *result, uint8_t *out, uint8_t **in)
{
	g_autofree struct cusemu_user_ranges *set =
		g_new(struct cusemu_user_ranges, 2);
	bool reached = false;

	for (unsigned int level = 0; call->pending && !call->error &&
				     level < REACH_LEVELS; level++) {
		uint8_t *buf = g_malloc(MAX(call->in.bytes, 1));
		int err;

		cusemu_user_ranges_copy(&set[0], &call->in);
		cusemu_user_ranges_copy(&set[1], &call->out);
		err = reach(req->pid, &set[0], buf, set[0].bytes, false);
		if (err && err != -EFAULT) {
			g_free(buf);
			return reached;
		}
		g_free(*in);
		*in = buf;
		reached = true;
		cusemu_call_init(call, of->file.dev, &of->file, req->cmd,
				 (unsigned long)req->arg, req->compat, req->pid);
		if (err) {
			call->error = -EFAULT;
			break;
		}
		cusemu_call_set_data(call, &set[0], &set[1], buf, set[0].bytes,
				     out, set[1].bytes);
		*result = 0;
		run_ioctl(n, of, call, result);
	}
	if (call->pending && !call->error)
		call->error = -EFAULT;	/* pointers deeper than any ABI has */
	return reached;
}

/* An ioctl handed over to a long-call thread (pool.h): its request, kept
 * by the transport. */
struct handed {
	struct cusemu_pool_job job;	/* first: the pool's */
	struct cusemu_node *node;
	struct cusemu_req *req;
};

static void run_handed(struct cusemu_pool_job *job)
{
	struct handed *h = (struct handed *)job;

	cusemu_node_ioctl(h->node, h->req);
	h->req->ops->drop(h->req);
	g_free(h);
}

/*
 * A call on a device whose last timed handler spun long goes to a
 * long-call thread when one is free, and its worker reads on: true if
 * it went. On that thread it comes back here and runs.
 */
static bool hand_over(struct cusemu_node *n, struct cusemu_req *req)
{
	struct cusemu_instance *inst = cusemu_instance(file_of(req)->file.dev);
	struct handed *h;
	struct cusemu_req *kept;

	if (g_atomic_int_get(&inst->serving.last_cpu_us) <= HOLD_CPU_AFTER_US ||
	    !req->ops->keep || !cusemu_pool_long_reserve())
		return false;
	kept = req->ops->keep(req);
	h = kept ? g_try_new(struct handed, 1) : NULL;
	if (!h) {
		if (kept)
			kept->ops->drop(kept);
		cusemu_pool_long_cancel();
		return false;
	}
	*h = (struct handed){ .job.work = run_handed, .node = n, .req = kept };
	cusemu_pool_long_run(&h->job);
	return true;
}

void cusemu_node_ioctl(struct cusemu_node *n, struct cusemu_req *req)
{
	struct open_file *of = file_of(req);
	struct cusemu_request r;
	struct cusemu_call call;
	struct cusemu_op_record rec;
	uint8_t *out = out_buffer();
	g_autofree uint8_t *in = NULL;
	enum ioctl_reply reply;
	bool reached = false;
	long result = 0;

	if (hand_over(n, req))
		return;
	cusemu_call_init(&call, of->file.dev, &of->file, req->cmd,
			 (unsigned long)req->arg, req->compat, req->pid);
	/*
	 * Restricted: the kernel already copied what the _IOC bits describe,
	 * and takes no retry. Unrestricted: the data, if any, answers a retry.
	 */
	if (n->ioctls != CUSEMU_NODE_UNRESTRICTED) {
		if (!ioc_sizes(call.cmd, req->in_size, req->out_size)) {
			call.stats.error = EIO;
			cusemu_op_begin_call(&rec, &call);
			ioctl_finish(&call, &rec);
			req->ops->err(req, EIO);
			return;
		}
		cusemu_call_set_ioc_data(&call, req->in, (uint32_t)req->in_size,
					 out, (uint32_t)req->out_size);
	} else {
		take_retry(of, &call, req->in, req->in_size, out,
			   req->out_size);
	}
	cusemu_op_begin_call(&rec, &call);
	request_begin(n, req, &r, of, false, &call);
	run_ioctl(n, of, &call, &result);
	if (call.pending && n->ioctls == CUSEMU_NODE_FILE &&
	    reaches_callers())
		reached = reach_caller(n, req, of, &call, &result, out, &in);
	request_end(req, &r);
	reply = ioctl_reply_of(n, &call, &rec, &result);
	/* What the kernel would have copied out on a retry. */
	if (reply == IOCTL_REPLY_DATA && reached &&
	    reach(req->pid, &call.out, out, call.out_used, true)) {
		call.stats.error = EFAULT;
		reply = IOCTL_REPLY_ERR;
	}
	ioctl_finish(&call, &rec);
	switch (reply) {
	case IOCTL_REPLY_ERR:
		req->ops->err(req, call.stats.error);
		break;
	case IOCTL_REPLY_RETRY:
		reply_retry(req, of, &call);
		break;
	case IOCTL_REPLY_DATA:
		/* Reached: written already; the kernel copies nothing. */
		req->ops->ioctl(req, (int)result, out,
				reached ? 0 : call.out_used);
		break;
	}
}

void cusemu_node_open(struct cusemu_node *n, struct cusemu_req *req)
{
	struct open_file *of = g_new0(struct open_file, 1);
	struct cusemu_op_record rec;
	/* The instance stays while the open is under way. */
	struct cusemu_device *dev = get_instance(n);
	int err = 0;

	cusemu_op_begin(&rec, CUSEMU_OP_OPEN, dev, req->pid);
	of->file.dev = dev;
	of->file.flags = req->flags;
	of->file.opener = req->pid;
	if (cusemu_device_fenced(dev))
		err = -EIO;
	else if (dev->model->open && model_open(dev, &of->file, &err))
		err = -EIO;
	if (err) {
		g_free(of);
		rec.error = reply_errno(&rec, err);
		cusemu_op_done(&rec);
		req->ops->err(req, rec.error);
		put_instance(n, dev);
		return;
	}
	g_mutex_lock(&n->lock);
	n->files = g_list_prepend(n->files, of);
	g_mutex_unlock(&n->lock);
	req->fh = (uintptr_t)of;
	/* Before the reply: a close may free a replaced instance after it. */
	cusemu_op_done(&rec);
	req->ops->open(req);
}

/*
 * The model's release (pid: who closed it, 0 at the daemon's end; a
 * fenced model is not called, its file state is left) and the file's
 * memory. Its instance is the caller's to put_instance() after.
 */
static void free_file(struct open_file *of, pid_t pid)
{
	struct cusemu_device *dev = of->file.dev;

	if (of->poll)
		of->poll_ops->poll_free(of->poll);
	if (dev->model->release && !cusemu_device_fenced(dev))
		model_release(dev, &of->file, pid);
	for (unsigned int i = 0; i < RETRY_SLOTS; i++)
		g_free(of->retries[i].ranges);
	g_free(of);
}

void cusemu_node_release(struct cusemu_node *n, struct cusemu_req *req)
{
	struct open_file *of = file_of(req);
	struct cusemu_device *dev = of->file.dev;
	struct cusemu_op_record rec;

	cusemu_op_begin(&rec, CUSEMU_OP_RELEASE, dev, req->pid);
	g_mutex_lock(&n->lock);
	n->files = g_list_remove(n->files, of);
	g_mutex_unlock(&n->lock);
	free_file(of, req->pid);
	req->ops->err(req, 0);
	cusemu_op_done(&rec);
	put_instance(n, dev);
}

/* A read or write that reaches no model: ENODEV after a reload, EINVAL
 * without the slot. */
static bool refuse_io(struct cusemu_node *n, struct cusemu_req *req,
		      const struct open_file *of, bool has_slot,
		      struct cusemu_op_record *rec)
{
	if (!replaced(n, of) && has_slot)
		return false;
	rec->error = replaced(n, of) ? ENODEV : EINVAL;
	cusemu_op_done(rec);
	req->ops->err(req, rec->error);
	return true;
}

void cusemu_node_read(struct cusemu_node *n, struct cusemu_req *req)
{
	struct open_file *of = file_of(req);
	size_t size = req->size;
	struct cusemu_device *dev = of->file.dev;
	g_autofree char *big = NULL;
	struct cusemu_request r;
	struct cusemu_op_record rec;
	char *buf;
	ssize_t ret = 0;

	cusemu_op_begin(&rec, CUSEMU_OP_READ, dev, req->pid);
	rec.size = size;
	if (refuse_io(n, req, of, dev->model->read, &rec))
		return;
	/* The kernel bounds size by max_read, which is what the buffer holds. */
	if (size <= CUSEMU_USER_MAX_BYTES)
		buf = (char *)out_buffer();
	else
		buf = big = g_malloc(size);
	request_begin(n, req, &r, of, true, NULL);
	if (cusemu_device_fenced(dev) ||
	    model_read(dev, &of->file, buf, size, req->pid, &ret))
		ret = -EIO;
	request_end(req, &r);
	if (ret < 0) {
		rec.error = reply_errno(&rec, ret);
		cusemu_op_done(&rec);
		req->ops->err(req, rec.error);
	} else {
		rec.result = (long)MIN((size_t)ret, size);
		rec.data = buf;
		cusemu_op_done(&rec);
		req->ops->buf(req, buf, rec.result);
	}
}

ssize_t cusemu_node_show(struct cusemu_node *n, const char *path, pid_t pid,
			 char *buf, size_t size)
{
	/* The instance stays while its model runs. */
	struct cusemu_device *dev = get_instance(n);
	const struct cusemu_attr *attr = NULL;
	ssize_t ret = -ENOENT;

	for (const struct cusemu_attr *a = dev->model->attrs; a && a->path; a++)
		if (!strcmp(a->path, path))
			attr = a;
	if (attr && (cusemu_device_fenced(dev) ||
		     model_show(dev, attr, buf, size, pid, &ret)))
		ret = -EIO;
	put_instance(n, dev);
	if (ret > (ssize_t)size) {
		g_warning("%s: attribute %s: show() says %zd bytes, of %zu",
			  dev->name, path, ret, size);
		ret = -EIO;
	}
	return ret;
}

void cusemu_node_write(struct cusemu_node *n, struct cusemu_req *req)
{
	struct open_file *of = file_of(req);
	const char *buf = req->buf;
	size_t size = req->size;
	struct cusemu_device *dev = of->file.dev;
	struct cusemu_request r;
	struct cusemu_op_record rec;
	ssize_t ret = 0;

	cusemu_op_begin(&rec, CUSEMU_OP_WRITE, dev, req->pid);
	rec.size = size;
	rec.data = buf;
	if (refuse_io(n, req, of, dev->model->write, &rec))
		return;
	request_begin(n, req, &r, of, true, NULL);
	if (cusemu_device_fenced(dev) ||
	    model_write(dev, &of->file, buf, size, req->pid, &ret))
		ret = -EIO;
	request_end(req, &r);
	if (ret < 0) {
		rec.error = reply_errno(&rec, ret);
		cusemu_op_done(&rec);
		req->ops->err(req, rec.error);
	} else {
		rec.result = (long)MIN((size_t)ret, size);
		cusemu_op_done(&rec);
		req->ops->write(req, rec.result);
	}
}

/* Without a poll slot a node is always ready, as the kernel's default. */
#define DEFAULT_POLLMASK (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

void cusemu_node_poll(struct cusemu_node *n, struct cusemu_req *req)
{
	struct open_file *of = file_of(req);
	struct cusemu_device *dev = of->file.dev;
	const struct cusemu_req_ops *old_ops = NULL;
	unsigned int mask = DEFAULT_POLLMASK;
	struct cusemu_op_record rec;
	void *old = NULL;

	cusemu_op_begin(&rec, CUSEMU_OP_POLL, dev, req->pid);
	/* Kept before asking the model, so no wake-up falls in between. */
	if (req->poll) {
		g_mutex_lock(&n->lock);
		old = of->poll;
		old_ops = of->poll_ops;
		of->poll = req->poll;
		of->poll_ops = req->ops;
		g_mutex_unlock(&n->lock);
	}
	if (old)
		old_ops->poll_free(old);
	if (replaced(n, of) || cusemu_device_fenced(dev)) {
		/* Ready, so that a poller goes on to the call that fails. */
		mask = POLLERR | DEFAULT_POLLMASK;
	} else if (dev->model->poll &&
		   model_poll(dev, &of->file, req->pid, &mask)) {
		mask = POLLERR | DEFAULT_POLLMASK;
	}
	rec.result = mask;
	cusemu_op_done(&rec);
	req->ops->poll(req, mask);
}

/* The model's cusemu_device_wake_up(): the kernel polls every waiter again. */
static void wake_pollers(void *data)
{
	struct cusemu_node *n = data;

	g_mutex_lock(&n->lock);
	for (GList *l = n->files; l; l = l->next) {
		struct open_file *of = l->data;

		if (!of->poll)
			continue;
		of->poll_ops->poll_notify(of->poll);
		of->poll_ops->poll_free(of->poll);
		of->poll = NULL;
	}
	g_mutex_unlock(&n->lock);
}

/* dev is served by n from now on. */
static void attach(struct cusemu_node *n, struct cusemu_device *dev)
{
	struct cusemu_instance *inst = cusemu_instance(dev);

	inst->serving.node = n;
	inst->serving.wake_up = wake_pollers;
	inst->serving.wake_up_data = n;
}

void cusemu_node_init(struct cusemu_node *n, struct cusemu_device *dev,
		      enum cusemu_node_ioctls ioctls)
{
	n->dev = dev;
	n->ioctls = ioctls;
	n->long_cpu = -1;
	cusemu_waiters_init(&n->waiters);
	g_mutex_init(&n->lock);
	attach(n, dev);
}

enum cusemu_node_ioctls cusemu_node_cuse_ioctls(const struct cusemu_device *dev)
{
	return cusemu_instance(dev)->dispatch.restricted
		       ? CUSEMU_NODE_RESTRICTED
		       : CUSEMU_NODE_UNRESTRICTED;
}

const char *cusemu_node_cuse_ioctls_name(const struct cusemu_device *dev)
{
	return cusemu_node_cuse_ioctls(dev) == CUSEMU_NODE_RESTRICTED
		       ? "restricted"
		       : "unrestricted";
}

bool cusemu_node_can_serve(const struct cusemu_node *n,
			   const struct cusemu_device *dev)
{
	return n->ioctls != CUSEMU_NODE_RESTRICTED ||
	       cusemu_dispatch_restricted(dev->model);
}

void cusemu_node_replace(struct cusemu_node *n, struct cusemu_device *dev)
{
	struct cusemu_instance *old;
	bool unused;

	attach(n, dev);
	g_mutex_lock(&n->lock);
	old = cusemu_instance(n->dev);
	g_atomic_pointer_set(&n->dev, dev);
	old->serving.retired = true;
	unused = !old->serving.users;
	g_mutex_unlock(&n->lock);
	/* Else its last file's release frees it. */
	if (unused)
		cusemu_device_free(&old->pub);
}

void cusemu_node_close_files(struct cusemu_node *n)
{
	GList *files;

	g_mutex_lock(&n->lock);
	files = n->files;
	n->files = NULL;
	g_mutex_unlock(&n->lock);
	for (GList *l = files; l; l = l->next) {
		struct open_file *of = l->data;
		struct cusemu_device *dev = of->file.dev;

		free_file(of, 0);
		put_instance(n, dev);
	}
	g_list_free(files);
}

void cusemu_node_clear(struct cusemu_node *n)
{
	g_clear_pointer(&n->refused[0], g_hash_table_unref);
	g_clear_pointer(&n->refused[1], g_hash_table_unref);
	g_mutex_clear(&n->lock);
	cusemu_waiters_clear(&n->waiters);
}
