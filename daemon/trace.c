/* SPDX-License-Identifier: MIT */
/*
 * The live trace. A worker that answers a request while tracers are
 * attached formats its line and queues it for each tracer of the node,
 * under one short lock; the main loop writes the queues out without
 * blocking, every FLUSH_MS: a worker never wakes it, which would cost a
 * system call per line. A tracer that reads too slowly loses lines, and is told how
 * many (a {"lost":N} line), rather than holding up a worker or the daemon.
 */
#define G_LOG_DOMAIN "cusemu-trace"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "call.h"
#include "device.h"
#include "proc.h"
#include "stats.h"
#include "trace.h"

struct tracer {
	int fd;
	char **nodes;		/* NULL: every node */
	guint out_watch;	/* while out has bytes the socket took not */
	guint in_watch;		/* the client's end */
	GString *out;		/* main loop only: lines being written */
	/* Guarded by lock: */
	GString *queue;		/* lines from workers, not yet in out */
	gsize out_len;		/* out->len, as workers count it */
	guint64 lost;		/* lines dropped since the last report */
};

/* How often the main loop writes the queues out while tracers are on. */
#define FLUSH_MS 10

/*
 * The trace's state, one per process: cusemu_op_subscribe() calls
 * cusemu_trace_op() with no pointer of its own, so it finds this here.
 */
static struct {
	GMutex lock;
	GPtrArray *tracers;	/* struct tracer *, guarded by lock */
	guint flush_timer;	/* main loop only */
	gint count;		/* tracers attached: whether a line goes out */
} trace;

/* ---- the line ---- */

static void append_hex(GString *out, const uint8_t *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		g_string_append_c(out, digits[data[i] >> 4]);
		g_string_append_c(out, digits[data[i] & 15]);
	}
}

/* "data":"HEX" of len bytes, at most *budget of them; "cut" if fewer. */
static void append_data(GString *out, const uint8_t *data, size_t len,
			size_t *budget)
{
	size_t shown = MIN(len, *budget);

	g_string_append(out, "\"data\":\"");
	append_hex(out, data, shown);
	g_string_append_c(out, '"');
	if (shown < len)
		g_string_append(out, ",\"cut\":true");
	*budget -= shown;
}

/*
 * The ranges of one direction: address, length, and their bytes among the
 * first avail of data (the rest was not sent, or not replied), at most
 * data_max for the whole direction.
 */
static void append_ranges(GString *out, const struct cusemu_user_ranges *set,
			  const uint8_t *data, uint32_t avail, size_t data_max)
{
	size_t budget = data_max;

	g_string_append_c(out, '[');
	for (unsigned int i = 0; i < set->count; i++) {
		const struct cusemu_user_range *r = &set->r[i];
		size_t have = data && r->off < avail
				      ? MIN(r->len, avail - r->off) : 0;

		g_string_append_printf(out,
				       "%s{\"addr\":\"0x%" PRIx64
				       "\",\"len\":%" PRIu32 ",",
				       i ? "," : "", (uint64_t)r->addr, r->len);
		append_data(out, have ? data + r->off : NULL, have, &budget);
		g_string_append_c(out, '}');
	}
	g_string_append_c(out, ']');
}

static void append_time(GString *out, gint64 wall_us)
{
	time_t secs = (time_t)(wall_us / G_USEC_PER_SEC);
	struct tm tm = { 0 };

	gmtime_r(&secs, &tm);
	g_string_append_printf(out, "\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d"
				    ".%06dZ\"",
			       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			       tm.tm_hour, tm.tm_min, tm.tm_sec,
			       (int)(wall_us % G_USEC_PER_SEC));
}

static void append_string_or_null(GString *out, const char *s)
{
	if (s)
		cusemu_json_append_string(out, s);
	else
		g_string_append(out, "null");
}

static void append_ioctl(GString *out, const struct cusemu_call *call,
			 bool replied, size_t data_max)
{
	g_string_append_printf(out, ",\"cmd\":%u,\"name\":", call->cmd);
	append_string_or_null(out, call->stats.name);
	g_string_append_printf(out,
			       ",\"arg\":\"0x%lx\",\"size\":%u,\"in\":",
			       call->arg, (unsigned int)_IOC_SIZE(call->cmd));
	append_ranges(out, &call->in, call->in_data, call->in_avail,
		      data_max);
	g_string_append(out, ",\"out\":");
	append_ranges(out, &call->out, call->out_data,
		      replied ? call->out_used : 0, data_max);
	g_string_append_printf(out, ",\"round_trips\":%u", call->round_trips);
}

void cusemu_trace_format(GString *out, const struct cusemu_op_record *rec,
			 uint64_t duration_ns,
			 const struct cusemu_trace_caller *caller,
			 size_t data_max)
{
	const struct cusemu_call *call =
		rec->op == CUSEMU_OP_IOCTL ? rec->call : NULL;
	char num[16];

	g_string_append_c(out, '{');
	append_time(out, caller->wall_us);
	g_string_append(out, ",\"node\":");
	cusemu_json_append_string(out, rec->dev->name);
	g_string_append_printf(out, ",\"pid\":%d,\"comm\":", (int)rec->pid);
	append_string_or_null(out, caller->comm);
	g_string_append_printf(out, ",\"op\":\"%s\",\"abi\":",
			       cusemu_op_name(rec->op));
	if (call)
		g_string_append(out, call->compat ? "\"i386\"" : "\"x86_64\"");
	else
		append_string_or_null(out, caller->abi);
	if (call) {
		append_ioctl(out, call, !rec->error, data_max);
	} else if (rec->op == CUSEMU_OP_READ || rec->op == CUSEMU_OP_WRITE) {
		size_t budget = data_max;

		g_string_append_printf(out, ",\"size\":%zu,", rec->size);
		append_data(out, rec->data,
			    rec->error || !rec->data ? 0 : (size_t)rec->result,
			    &budget);
	}
	g_string_append(out, ",\"result\":");
	if (rec->error)
		g_string_append(out, "null");
	else
		g_string_append_printf(out, "%ld", rec->result);
	g_string_append(out, ",\"error\":");
	append_string_or_null(out, rec->error ? cusemu_errno_name(rec->error,
								  num,
								  sizeof(num))
					      : NULL);
	g_string_append_printf(out, ",\"duration_ns\":%" PRIu64 "}\n",
			       duration_ns);
}

/* ---- the tracers ---- */

static bool traces(const struct tracer *t, const char *node)
{
	if (!t->nodes)
		return true;
	for (char **n = t->nodes; *n; n++)
		if (!strcmp(*n, node))
			return true;
	return false;
}

/* Under lock: the report of lines t lost, if it has room for it now. */
static void report_lost(struct tracer *t)
{
	if (!t->lost || t->queue->len + t->out_len >= CUSEMU_TRACE_QUEUE_MAX)
		return;
	g_string_append_printf(t->queue, "{\"lost\":%" PRIu64 "}\n", t->lost);
	t->lost = 0;
}

static void publish(const char *node, const GString *line)
{
	g_mutex_lock(&trace.lock);
	for (guint i = 0; trace.tracers && i < trace.tracers->len; i++) {
		struct tracer *t = trace.tracers->pdata[i];

		if (!traces(t, node))
			continue;
		if (t->queue->len + t->out_len + line->len >
		    CUSEMU_TRACE_QUEUE_MAX) {
			t->lost++;
			continue;
		}
		report_lost(t);
		g_string_append_len(t->queue, line->str, line->len);
	}
	g_mutex_unlock(&trace.lock);
}

static const char *abi_of_pid(pid_t pid)
{
	switch (cusemu_proc_elf_class(pid)) {
	case ELFCLASS64:
		return "x86_64";
	case ELFCLASS32:
		return "i386";
	default:
		return NULL;
	}
}

/*
 * What /proc said of the last caller a worker traced, for this long: a
 * client calling in a loop costs one read of /proc per second, not per
 * call (a comm changed by prctl shows within that second).
 */
#define CALLER_FRESH_US G_USEC_PER_SEC

struct caller_cache {
	pid_t pid;
	gint64 comm_at, abi_at;	/* monotonic; 0: not asked */
	bool has_comm;
	char comm[32];
	const char *abi;
};

/* Per worker thread: no lock, and the op record has no room for it. */
static __thread struct caller_cache last_caller;

static struct caller_cache *caller_of(pid_t pid, bool want_abi)
{
	struct caller_cache *c = &last_caller;
	gint64 now = g_get_monotonic_time();

	if (c->pid != pid) {
		*c = (struct caller_cache){ .pid = pid };
	}
	if (!c->comm_at || now - c->comm_at > CALLER_FRESH_US) {
		c->has_comm = cusemu_proc_comm(pid, c->comm,
					       sizeof(c->comm)) >= 0;
		c->comm_at = now;
	}
	if (want_abi && (!c->abi_at || now - c->abi_at > CALLER_FRESH_US)) {
		c->abi = abi_of_pid(pid);
		c->abi_at = now;
	}
	return c;
}

void cusemu_trace_caller_of(const struct cusemu_op_record *rec,
			    struct cusemu_trace_caller *caller)
{
	/* An ioctl says its ABI itself; the others, the program's. */
	bool want_abi = rec->op != CUSEMU_OP_IOCTL;
	struct caller_cache *c = caller_of(rec->pid, want_abi);

	*caller = (struct cusemu_trace_caller){
		.wall_us = g_get_real_time(),
		.comm = c->has_comm ? c->comm : NULL,
		.abi = want_abi ? c->abi : NULL,
	};
}

void cusemu_trace_op(const struct cusemu_op_record *rec, uint64_t duration_ns)
{
	g_autoptr(GString) line = NULL;
	struct cusemu_trace_caller caller;

	/* A recorded device, or the tracer just left. */
	if (!g_atomic_int_get(&trace.count))
		return;
	cusemu_trace_caller_of(rec, &caller);
	line = g_string_sized_new(512);
	cusemu_trace_format(line, rec, duration_ns, &caller,
			    CUSEMU_TRACE_DATA_MAX);
	publish(rec->dev->name, line);
}

static void tracer_free(struct tracer *t)
{
	bool last;

	g_mutex_lock(&trace.lock);
	g_ptr_array_remove_fast(trace.tracers, t);
	last = !trace.tracers->len;
	g_mutex_unlock(&trace.lock);
	if (last)
		g_clear_handle_id(&trace.flush_timer, g_source_remove);
	g_atomic_int_dec_and_test(&trace.count);
	cusemu_op_watch(-1);
	g_clear_handle_id(&t->out_watch, g_source_remove);
	g_clear_handle_id(&t->in_watch, g_source_remove);
	close(t->fd);
	g_strfreev(t->nodes);
	g_string_free(t->queue, TRUE);
	g_string_free(t->out, TRUE);
	g_free(t);
}

static gboolean on_writable(int fd, GIOCondition condition, gpointer data);

/* Write what the socket takes of t->out; FALSE once the tracer is gone. */
static bool write_out(struct tracer *t)
{
	gsize written = 0;

	while (written < t->out->len) {
		ssize_t n = send(t->fd, t->out->str + written,
				 t->out->len - written,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			g_debug("trace: a tracer left: %s", g_strerror(errno));
			tracer_free(t);
			return false;
		}
		written += n;
	}
	g_string_erase(t->out, 0, written);
	g_mutex_lock(&trace.lock);
	t->out_len = t->out->len;
	g_mutex_unlock(&trace.lock);
	if (t->out->len && !t->out_watch)
		t->out_watch = g_unix_fd_add(t->fd, G_IO_OUT, on_writable, t);
	return true;
}

static gboolean on_writable(int fd, GIOCondition condition, gpointer data)
{
	struct tracer *t = data;

	if (!write_out(t))
		return G_SOURCE_REMOVE; /* t freed its watch */
	if (t->out->len)
		return G_SOURCE_CONTINUE;
	t->out_watch = 0;
	return G_SOURCE_REMOVE;
}

static gboolean flush_all(gpointer data)
{
	g_autoptr(GPtrArray) all = g_ptr_array_new();

	g_mutex_lock(&trace.lock);
	for (guint i = 0; i < trace.tracers->len; i++) {
		struct tracer *t = trace.tracers->pdata[i];

		report_lost(t);
		g_string_append_len(t->out, t->queue->str, t->queue->len);
		g_string_truncate(t->queue, 0);
		t->out_len = t->out->len;
		g_ptr_array_add(all, t);
	}
	g_mutex_unlock(&trace.lock);
	/* Only the main loop frees tracers: these stay until written. */
	for (guint i = 0; i < all->len; i++) {
		struct tracer *t = all->pdata[i];

		if (!t->out_watch)
			write_out(t);
	}
	return G_SOURCE_CONTINUE;
}

/* The client sends nothing more: readable means it closed its end. */
static gboolean on_client(int fd, GIOCondition condition, gpointer data)
{
	struct tracer *t = data;
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return G_SOURCE_CONTINUE;
	t->in_watch = 0;
	tracer_free(t);
	return G_SOURCE_REMOVE;
}

void cusemu_trace_header(GString *out, char **nodes, const char *more)
{
	g_string_append(out, "{\"trace\":\"cusemu\",\"version\":1,\"nodes\":");
	if (!nodes) {
		g_string_append(out, "null");
	} else {
		g_string_append_c(out, '[');
		for (char **n = nodes; *n; n++) {
			if (n != nodes)
				g_string_append_c(out, ',');
			cusemu_json_append_string(out, *n);
		}
		g_string_append_c(out, ']');
	}
	g_string_append_printf(out, "%s}\n", more ? more : "");
}

int cusemu_trace_attach(int fd, char **nodes, GString *err)
{
	struct tracer *t;

	g_mutex_lock(&trace.lock);
	if (!trace.tracers)
		trace.tracers = g_ptr_array_new();
	if (trace.tracers->len >= CUSEMU_TRACE_TRACERS_MAX) {
		g_mutex_unlock(&trace.lock);
		g_string_append_printf(err, "busy: %d tracers are attached "
					    "already, the most there may be",
				       CUSEMU_TRACE_TRACERS_MAX);
		return EBUSY;
	}
	t = g_new0(struct tracer, 1);
	t->fd = fd;
	t->nodes = nodes && *nodes ? g_strdupv(nodes) : NULL;
	t->queue = g_string_new(NULL);
	t->out = g_string_new(NULL);
	cusemu_trace_header(t->queue, t->nodes, NULL);
	g_ptr_array_add(trace.tracers, t);
	g_mutex_unlock(&trace.lock);
	if (!trace.flush_timer)
		trace.flush_timer = g_timeout_add(FLUSH_MS, flush_all, NULL);
	t->in_watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
				    on_client, t);
	g_atomic_int_inc(&trace.count);
	cusemu_op_subscribe(cusemu_trace_op);
	cusemu_op_watch(1);
	/* The header at once: the tracer knows it is attached. */
	flush_all(NULL);
	return 0;
}

void cusemu_trace_detach_all(void)
{
	while (trace.tracers && trace.tracers->len)
		tracer_free(trace.tracers->pdata[0]);
}
