/* SPDX-License-Identifier: MIT */
/*
 * Statistics of one device: a row per command and ABI, a row per other
 * operation (open, read, write, poll, release), model events by name,
 * and their rendering as a text table or as JSON for the control socket.
 */
#define G_LOG_DOMAIN "cusemu-stats"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Kernel-internal errnos a handler may return; no libc header has them. */
#ifndef ERESTARTSYS
#define ERESTARTSYS 512
#endif
#ifndef ENOIOCTLCMD
#define ENOIOCTLCMD 515
#endif

/*
 * Recording takes no lock and allocates nothing: rows sit in a table of
 * fixed size, claimed with a compare-and-swap on their key, and every
 * counter is an atomic add. Only model events, reset and rendering take the
 * mutex. A client that sends more distinct commands than the table holds
 * gets them counted in one "other commands" row: memory stays bounded.
 */
#define ADD(p, n) __atomic_fetch_add((p), (n), __ATOMIC_RELAXED)
#define GET(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define SET(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Distinct errnos kept per row; more are counted as "other". */
#define ERROR_SLOTS 8
/* Rows for commands outside the tables, besides twice the table rows. */
#define SPARE_ROWS 64
/* Marks a claimed key, so that no key is 0 (a free row). */
#define KEY_USED (UINT64_C(1) << 63)
/* The key of the "other commands" row. */
#define KEY_OTHER (KEY_USED | UINT64_C(1) << 62)

struct error_count {
	int error;		/* 0: free slot */
	uint64_t count;
};

struct command_row {
	uint64_t key;		/* row_key(), or 0 while the row is free */
	const char *name;	/* a table row's; NULL until one names it */
	uint64_t calls;
	uint64_t retries;
	struct error_count errors[ERROR_SLOTS];
	uint64_t other_errors;
	uint64_t lock_acquisitions;
	uint64_t lock_contended;
	uint64_t wait_ns_total;
	uint64_t hold_ns_total;
	uint64_t wait_ns_max;
	uint64_t wait_hist[CUSEMU_STATS_BUCKETS];
	uint64_t hold_hist[CUSEMU_STATS_BUCKETS];
};

/* open, read, write, poll or release: one row each per device. */
struct op_row {
	uint64_t calls;
	struct error_count errors[ERROR_SLOTS];
	uint64_t other_errors;
	uint64_t ns_total;
	uint64_t ns_max;
	uint64_t hist[CUSEMU_STATS_BUCKETS];
};

struct cusemu_stats {
	struct command_row *rows;
	struct op_row ops[CUSEMU_STATS_OPS];
	unsigned int mask;	/* rows in the table, minus one */
	struct command_row other;
	GMutex lock;		/* guards events */
	GHashTable *events;	/* name -> uint64_t count */
};

static const struct {
	int error;
	const char *name;
} errno_names[] = {
	{ EPERM, "EPERM" },		{ ENOENT, "ENOENT" },
	{ ESRCH, "ESRCH" },		{ EINTR, "EINTR" },
	{ EIO, "EIO" },			{ ENXIO, "ENXIO" },
	{ E2BIG, "E2BIG" },		{ EBADF, "EBADF" },
	{ EAGAIN, "EAGAIN" },		{ ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" },		{ EFAULT, "EFAULT" },
	{ EBUSY, "EBUSY" },		{ EEXIST, "EEXIST" },
	{ ENODEV, "ENODEV" },		{ EINVAL, "EINVAL" },
	{ EMFILE, "EMFILE" },		{ ENOTTY, "ENOTTY" },
	{ EFBIG, "EFBIG" },		{ ENOSPC, "ENOSPC" },
	{ ESPIPE, "ESPIPE" },		{ EROFS, "EROFS" },
	{ EPIPE, "EPIPE" },		{ EDOM, "EDOM" },
	{ ERANGE, "ERANGE" },		{ EDEADLK, "EDEADLK" },
	{ ENAMETOOLONG, "ENAMETOOLONG" }, { ENOSYS, "ENOSYS" },
	{ ENODATA, "ENODATA" },		{ ETIME, "ETIME" },
	{ EPROTO, "EPROTO" },		{ EOVERFLOW, "EOVERFLOW" },
	{ EILSEQ, "EILSEQ" },		{ EOPNOTSUPP, "EOPNOTSUPP" },
	{ ENOBUFS, "ENOBUFS" },		{ ETIMEDOUT, "ETIMEDOUT" },
	{ ECONNABORTED, "ECONNABORTED" }, { EREMOTEIO, "EREMOTEIO" },
	{ ERESTARTSYS, "ERESTARTSYS" },	{ ENOIOCTLCMD, "ENOIOCTLCMD" },
};

static const char *const op_names[] = {
	[CUSEMU_OP_OPEN] = "open",	[CUSEMU_OP_READ] = "read",
	[CUSEMU_OP_WRITE] = "write",	[CUSEMU_OP_POLL] = "poll",
	[CUSEMU_OP_RELEASE] = "release", [CUSEMU_OP_IOCTL] = "ioctl",
	[CUSEMU_OP_CONTROL] = "control", [CUSEMU_OP_PROBE] = "probe",
	[CUSEMU_OP_SANDBOXED] = "sandboxed", [CUSEMU_OP_REMOVE] = "remove",
};

const char *cusemu_op_name(enum cusemu_op op)
{
	return (unsigned int)op < G_N_ELEMENTS(op_names) ? op_names[op] : "?";
}

const char *cusemu_errno_name(int error, char *buf, gsize size)
{
	for (gsize i = 0; i < G_N_ELEMENTS(errno_names); i++)
		if (errno_names[i].error == error)
			return errno_names[i].name;
	g_snprintf(buf, size, "%d", error);
	return buf;
}

static uint64_t row_key(unsigned int cmd, bool compat)
{
	return KEY_USED | (uint64_t)cmd << 1 | compat;
}

static unsigned int row_cmd(const struct command_row *row)
{
	return (unsigned int)(row->key >> 1);
}

static bool row_compat(const struct command_row *row)
{
	return row->key & 1;
}

static bool row_is_other(const struct command_row *row)
{
	return row->key == KEY_OTHER;
}

struct cusemu_stats *cusemu_stats_new(unsigned int commands)
{
	struct cusemu_stats *stats = g_new0(struct cusemu_stats, 1);
	unsigned int size = 1;

	while (size < 2 * commands + SPARE_ROWS)
		size <<= 1;
	stats->rows = g_new0(struct command_row, size);
	stats->mask = size - 1;
	stats->other.key = KEY_OTHER;
	stats->other.name = "(other commands)";
	g_mutex_init(&stats->lock);
	stats->events = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					      g_free);
	return stats;
}

void cusemu_stats_free(struct cusemu_stats *stats)
{
	if (!stats)
		return;
	g_free(stats->rows);
	g_hash_table_destroy(stats->events);
	g_mutex_clear(&stats->lock);
	g_free(stats);
}

unsigned int cusemu_stats_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;

	if (!us)
		return 0;
	/* g_bit_storage(us) is floor(log2(us)) + 1: [2^(i-1), 2^i) is i. */
	return MIN(g_bit_storage(us), CUSEMU_STATS_BUCKETS - 1);
}

/* The command's row, claimed on its first request; linear probing. */
static struct command_row *row_lookup(struct cusemu_stats *stats,
				      const struct cusemu_request_stats *req)
{
	uint64_t key = row_key(req->cmd, req->compat);
	unsigned int i = (unsigned int)(key ^ key >> 17) * 0x9e3779b1u;
	struct command_row *row = &stats->other;
	const char *none = NULL;

	for (unsigned int n = 0; n <= stats->mask; n++, i++) {
		struct command_row *r = &stats->rows[i & stats->mask];
		uint64_t have = __atomic_load_n(&r->key, __ATOMIC_ACQUIRE);

		if (!have &&
		    !__atomic_compare_exchange_n(&r->key, &have, key, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			; /* another thread took it: have is its key */
		else if (!have)
			have = key;
		if (have == key) {
			row = r;
			break;
		}
	}
	/* A first request may fail before its table row is known. */
	if (req->name && !__atomic_load_n(&row->name, __ATOMIC_ACQUIRE))
		__atomic_compare_exchange_n(&row->name, &none, req->name,
					    false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	return row;
}

static void count_error(struct error_count *errors, uint64_t *other,
			int error)
{
	for (unsigned int i = 0; i < ERROR_SLOTS; i++) {
		struct error_count *e = &errors[i];
		int have = __atomic_load_n(&e->error, __ATOMIC_ACQUIRE);

		if (!have &&
		    __atomic_compare_exchange_n(&e->error, &have, error, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			have = error;
		if (have == error) {
			ADD(&e->count, 1);
			return;
		}
	}
	ADD(other, 1);
}

static void atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t have = GET(p);

	while (v > have &&
	       !__atomic_compare_exchange_n(p, &have, v, true,
					    __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/*
 * The request only says how long its n acquisitions waited and held in
 * total; each counts as one sample of the mean, so that the histograms add
 * up to the acquisitions. With one acquisition per request, the usual case,
 * that is exact.
 */
static void count_lock(struct command_row *row,
		       const struct cusemu_request_stats *req)
{
	uint32_t n = req->lock_acquisitions;

	if (!n)
		return;
	ADD(&row->lock_acquisitions, n);
	ADD(&row->lock_contended, req->lock_contended);
	ADD(&row->wait_ns_total, req->lock_wait_ns);
	ADD(&row->hold_ns_total, req->lock_hold_ns);
	atomic_max(&row->wait_ns_max, req->lock_wait_ns / n);
	ADD(&row->wait_hist[cusemu_stats_bucket(req->lock_wait_ns / n)], n);
	ADD(&row->hold_hist[cusemu_stats_bucket(req->lock_hold_ns / n)], n);
}

void cusemu_stats_record(struct cusemu_stats *stats,
			 const struct cusemu_request_stats *req)
{
	struct command_row *row;

	g_return_if_fail(stats && req);
	row = row_lookup(stats, req);
	ADD(req->retry ? &row->retries : &row->calls, 1);
	if (req->error)
		count_error(row->errors, &row->other_errors, ABS(req->error));
	count_lock(row, req);
}

void cusemu_stats_record_op(struct cusemu_stats *stats, enum cusemu_op op,
			    int error, uint64_t ns)
{
	struct op_row *row;

	g_return_if_fail(stats && (unsigned int)op < CUSEMU_STATS_OPS);
	row = &stats->ops[op];
	ADD(&row->calls, 1);
	if (error)
		count_error(row->errors, &row->other_errors, ABS(error));
	ADD(&row->ns_total, ns);
	atomic_max(&row->ns_max, ns);
	ADD(&row->hist[cusemu_stats_bucket(ns)], 1);
}

void cusemu_stats_count_event(struct cusemu_stats *stats, const char *event)
{
	uint64_t *count;

	g_return_if_fail(stats && event);
	g_mutex_lock(&stats->lock);
	count = g_hash_table_lookup(stats->events, event);
	if (!count) {
		count = g_new0(uint64_t, 1);
		g_hash_table_insert(stats->events, g_strdup(event), count);
	}
	(*count)++;
	g_mutex_unlock(&stats->lock);
}

/* Counts to zero; the errno slots stay claimed. */
static void errors_zero(struct error_count *errors, uint64_t *other)
{
	for (unsigned int i = 0; i < ERROR_SLOTS; i++)
		SET(&errors[i].count, 0);
	SET(other, 0);
}

static void row_zero(struct command_row *row)
{
	SET(&row->calls, 0);
	SET(&row->retries, 0);
	errors_zero(row->errors, &row->other_errors);
	SET(&row->lock_acquisitions, 0);
	SET(&row->lock_contended, 0);
	SET(&row->wait_ns_total, 0);
	SET(&row->hold_ns_total, 0);
	SET(&row->wait_ns_max, 0);
	for (unsigned int i = 0; i < CUSEMU_STATS_BUCKETS; i++) {
		SET(&row->wait_hist[i], 0);
		SET(&row->hold_hist[i], 0);
	}
}

static void op_row_zero(struct op_row *row)
{
	SET(&row->calls, 0);
	errors_zero(row->errors, &row->other_errors);
	SET(&row->ns_total, 0);
	SET(&row->ns_max, 0);
	for (unsigned int i = 0; i < CUSEMU_STATS_BUCKETS; i++)
		SET(&row->hist[i], 0);
}

/*
 * Rows keep their key and errno slots, with zero counts: requests served
 * meanwhile may or may not be counted, never half of one counter.
 */
void cusemu_stats_reset(struct cusemu_stats *stats)
{
	g_return_if_fail(stats);
	for (unsigned int i = 0; i <= stats->mask; i++)
		row_zero(&stats->rows[i]);
	row_zero(&stats->other);
	for (unsigned int i = 0; i < CUSEMU_STATS_OPS; i++)
		op_row_zero(&stats->ops[i]);
	g_mutex_lock(&stats->lock);
	g_hash_table_remove_all(stats->events);
	g_mutex_unlock(&stats->lock);
}

/*
 * What rendering reads: one row's counters copied out, errors sorted by
 * errno, so that the text and the JSON agree on a consistent-enough view.
 */
struct row_view {
	unsigned int cmd;
	bool compat;
	bool other;
	const char *name;
	uint64_t calls, retries;
	/* The errnos, "other", and an entry of count 0 that ends them. */
	struct error_count errors[ERROR_SLOTS + 2];
	uint64_t lock_acquisitions, lock_contended;
	uint64_t wait_ns_total, hold_ns_total, wait_ns_max;
	uint64_t wait_hist[CUSEMU_STATS_BUCKETS];
	uint64_t hold_hist[CUSEMU_STATS_BUCKETS];
};

static int error_compare(const void *pa, const void *pb)
{
	const struct error_count *a = pa, *b = pb;

	return (a->error > b->error) - (a->error < b->error);
}

/* Errors sort after the errnos; "other" is shown as -1 below them all. */
#define OTHER_ERRORS INT_MAX

/* The errnos counted, sorted, then "other", then an entry of count 0. */
static void errors_view(const struct error_count *errors,
			const uint64_t *other, struct error_count *v)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < ERROR_SLOTS; i++) {
		int error = __atomic_load_n(&errors[i].error,
					    __ATOMIC_ACQUIRE);
		uint64_t count = GET(&errors[i].count);

		if (error && count)
			v[n++] = (struct error_count){ error, count };
	}
	qsort(v, n, sizeof(v[0]), error_compare);
	if (GET(other))
		v[n++] = (struct error_count){ OTHER_ERRORS, GET(other) };
	v[n].count = 0;
}

static bool row_view_get(const struct command_row *row, struct row_view *v)
{
	v->calls = GET(&row->calls);
	v->retries = GET(&row->retries);
	if (!v->calls && !v->retries)
		return false;
	v->other = row_is_other(row);
	v->cmd = v->other ? 0 : row_cmd(row);
	v->compat = !v->other && row_compat(row);
	v->name = __atomic_load_n(&row->name, __ATOMIC_ACQUIRE);
	errors_view(row->errors, &row->other_errors, v->errors);
	v->lock_acquisitions = GET(&row->lock_acquisitions);
	v->lock_contended = GET(&row->lock_contended);
	v->wait_ns_total = GET(&row->wait_ns_total);
	v->hold_ns_total = GET(&row->hold_ns_total);
	v->wait_ns_max = GET(&row->wait_ns_max);
	for (unsigned int i = 0; i < CUSEMU_STATS_BUCKETS; i++) {
		v->wait_hist[i] = GET(&row->wait_hist[i]);
		v->hold_hist[i] = GET(&row->hold_hist[i]);
	}
	return true;
}

static const char *error_name(int error, char *buf, gsize size)
{
	if (error == OTHER_ERRORS)
		return "other";
	return cusemu_errno_name(error, buf, size);
}

/* Rows in the order of the output: by name, native before compat. */
static int row_compare(gconstpointer pa, gconstpointer pb)
{
	const struct row_view *a = pa, *b = pb;
	char na[16], nb[16];
	int r;

	if (a->other != b->other)
		return a->other ? 1 : -1;

	g_snprintf(na, sizeof(na), "0x%08x", a->cmd);
	g_snprintf(nb, sizeof(nb), "0x%08x", b->cmd);
	r = strcmp(a->name ? a->name : na, b->name ? b->name : nb);
	if (r)
		return r;
	if (a->compat != b->compat)
		return a->compat ? 1 : -1;
	return a->cmd < b->cmd ? -1 : a->cmd > b->cmd;
}

static int str_compare(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every row with requests, copied out and sorted: a GArray of row_view. */
static GArray *sorted_rows(struct cusemu_stats *stats)
{
	GArray *rows = g_array_new(FALSE, FALSE, sizeof(struct row_view));
	struct row_view v;

	for (unsigned int i = 0; i <= stats->mask; i++)
		if (row_view_get(&stats->rows[i], &v))
			g_array_append_val(rows, v);
	if (row_view_get(&stats->other, &v))
		g_array_append_val(rows, v);
	g_array_sort(rows, row_compare);
	return rows;
}

static GPtrArray *sorted_events(struct cusemu_stats *stats)
{
	GPtrArray *names =
		g_ptr_array_sized_new(g_hash_table_size(stats->events));
	GHashTableIter iter;
	gpointer name;

	g_hash_table_iter_init(&iter, stats->events);
	while (g_hash_table_iter_next(&iter, &name, NULL))
		g_ptr_array_add(names, name);
	g_ptr_array_sort(names, str_compare);
	return names;
}

/* For the table: any other byte would break its lines or columns. */
static char *printable(const char *s)
{
	char *copy = g_strdup(s);

	for (char *p = copy; *p; p++)
		if (!g_ascii_isprint(*p))
			*p = '?';
	return copy;
}

static char *row_text_name(const struct row_view *row)
{
	if (row->name)
		return printable(row->name);
	return g_strdup_printf("0x%08x", row->cmd);
}

static const char *abi_name(const struct row_view *row)
{
	if (row->other)
		return "-";
	return row->compat ? "compat" : "native";
}

/* About three significant digits, in ns, us, ms or s: at most 6 chars. */
static void format_ns(double ns, char *buf, gsize size)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	unsigned int u = 0;

	while (ns >= 999.5 && u < G_N_ELEMENTS(units) - 1) {
		ns /= 1000;
		u++;
	}
	if (u == 0 || ns >= 99.95)
		g_snprintf(buf, size, "%.0f%s", ns, units[u]);
	else if (ns >= 9.995)
		g_snprintf(buf, size, "%.1f%s", ns, units[u]);
	else
		g_snprintf(buf, size, "%.2f%s", ns, units[u]);
}

/*
 * The upper bound of the bucket where 99% of the samples are reached, or the
 * largest sample if that is less: a bucket's bound may be far above anything
 * it holds, and the last bucket has none. Every sample of the bucket is below
 * its bound, so the estimate is never below the smallest sample either.
 */
static void format_p99(const uint64_t *hist, uint64_t max_ns, char *buf,
		       gsize size)
{
	uint64_t total = 0, seen = 0, need;
	unsigned int i;

	for (i = 0; i < CUSEMU_STATS_BUCKETS; i++)
		total += hist[i];
	if (!total) {
		g_strlcpy(buf, "-", size);
		return;
	}
	need = total - total / 100;	/* ceil(0.99 * total) */
	for (i = 0; i < CUSEMU_STATS_BUCKETS - 1; i++) {
		seen += hist[i];
		if (seen >= need)
			break;
	}
	if (i == CUSEMU_STATS_BUCKETS - 1 || max_ns < UINT64_C(1000) << i)
		format_ns((double)max_ns, buf, size);
	else if (i < 10)
		/* Bounds are whole microseconds: print them whole. */
		g_snprintf(buf, size, "%uus", 1u << i);
	else
		format_ns((double)(UINT64_C(1000) << i), buf, size);
}

static void format_mean(uint64_t total_ns, uint64_t n, char *buf, gsize size)
{
	if (n)
		format_ns((double)total_ns / (double)n, buf, size);
	else
		g_strlcpy(buf, "-", size);
}

static void append_errors_text(GString *out, const struct error_count *e)
{
	char num[16];

	if (!e->count) {
		g_string_append_c(out, '-');
		return;
	}
	for (unsigned int i = 0; e[i].count; i++)
		g_string_append_printf(out, "%s%s:%" PRIu64, i ? " " : "",
				       error_name(e[i].error, num, sizeof(num)),
				       e[i].count);
}

#define TEXT_ROW_FORMAT "%-*s  %-6s  %8s  %8s  %8s  %9s  %9s  %8s  %8s  %9s  "

static void append_row_text(GString *out, const struct row_view *row,
			    const char *name, int name_width)
{
	char calls[24], retries[24], acq[24], contended[24];
	char wait_mean[16], wait_p99[16], wait_max[16], hold_mean[16];

	g_snprintf(calls, sizeof(calls), "%" PRIu64, row->calls);
	g_snprintf(retries, sizeof(retries), "%" PRIu64, row->retries);
	g_snprintf(acq, sizeof(acq), "%" PRIu64, row->lock_acquisitions);
	g_snprintf(contended, sizeof(contended), "%" PRIu64,
		   row->lock_contended);
	format_mean(row->wait_ns_total, row->lock_acquisitions, wait_mean,
		    sizeof(wait_mean));
	format_p99(row->wait_hist, row->wait_ns_max, wait_p99,
		   sizeof(wait_p99));
	format_mean(row->wait_ns_max, row->lock_acquisitions ? 1 : 0, wait_max,
		    sizeof(wait_max));
	format_mean(row->hold_ns_total, row->lock_acquisitions, hold_mean,
		    sizeof(hold_mean));
	g_string_append_printf(out, TEXT_ROW_FORMAT, name_width, name,
			       abi_name(row), calls, retries, acq,
			       contended, wait_mean, wait_p99, wait_max,
			       hold_mean);
	append_errors_text(out, row->errors);
	g_string_append_c(out, '\n');
}

/* One operation's counters, copied out for rendering. */
struct op_view {
	uint64_t calls, ns_total, ns_max;
	uint64_t hist[CUSEMU_STATS_BUCKETS];
	struct error_count errors[ERROR_SLOTS + 2];
};

static void op_view_get(const struct op_row *row, struct op_view *v)
{
	v->calls = GET(&row->calls);
	v->ns_total = GET(&row->ns_total);
	v->ns_max = GET(&row->ns_max);
	for (unsigned int i = 0; i < CUSEMU_STATS_BUCKETS; i++)
		v->hist[i] = GET(&row->hist[i]);
	errors_view(row->errors, &row->other_errors, v->errors);
}

#define OP_ROW_FORMAT "%-9s  %8s  %9s  %9s  %9s  "

/* The operations other than ioctl that were served, one row each. */
static void append_ops_text(GString *out, struct cusemu_stats *stats)
{
	bool header = false;

	for (unsigned int op = 0; op < CUSEMU_STATS_OPS; op++) {
		char calls[24], mean[16], p99[16], max[16];
		struct op_view v;

		op_view_get(&stats->ops[op], &v);
		if (!v.calls)
			continue;
		if (!header)
			g_string_append_printf(out, "\n" OP_ROW_FORMAT "errors\n",
					       "operation", "calls",
					       "time mean", "time p99",
					       "time max");
		header = true;
		g_snprintf(calls, sizeof(calls), "%" PRIu64, v.calls);
		format_mean(v.ns_total, v.calls, mean, sizeof(mean));
		format_p99(v.hist, v.ns_max, p99, sizeof(p99));
		format_mean(v.ns_max, 1, max, sizeof(max));
		g_string_append_printf(out, OP_ROW_FORMAT, cusemu_op_name(op),
				       calls, mean, p99, max);
		append_errors_text(out, v.errors);
		g_string_append_c(out, '\n');
	}
}

static void append_events_text(GString *out, struct cusemu_stats *stats)
{
	g_autoptr(GPtrArray) names = sorted_events(stats);
	g_autoptr(GPtrArray) shown = g_ptr_array_new_with_free_func(g_free);
	int width = strlen("event");

	if (!names->len)
		return;
	for (guint i = 0; i < names->len; i++) {
		g_ptr_array_add(shown, printable(names->pdata[i]));
		width = MAX(width, (int)strlen(shown->pdata[i]));
	}
	g_string_append_printf(out, "\n%-*s  %8s\n", width, "event", "count");
	for (guint i = 0; i < names->len; i++) {
		const uint64_t *count =
			g_hash_table_lookup(stats->events, names->pdata[i]);

		g_string_append_printf(out, "%-*s  %8" PRIu64 "\n", width,
				       (const char *)shown->pdata[i], *count);
	}
}

void cusemu_stats_append_text(struct cusemu_stats *stats, GString *out)
{
	g_autoptr(GArray) rows = NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	int name_width = strlen("command");

	g_return_if_fail(stats && out);
	g_mutex_lock(&stats->lock);
	rows = sorted_rows(stats);
	for (guint i = 0; i < rows->len; i++) {
		g_ptr_array_add(names, row_text_name(&g_array_index(
					       rows, struct row_view, i)));
		name_width = MAX(name_width, (int)strlen(names->pdata[i]));
	}
	g_string_append_printf(out, TEXT_ROW_FORMAT "errors\n", name_width,
			       "command", "abi", "calls", "retries",
			       "lock acq", "contended", "wait mean",
			       "wait p99", "wait max", "hold mean");
	for (guint i = 0; i < rows->len; i++)
		append_row_text(out, &g_array_index(rows, struct row_view, i),
				names->pdata[i],
				name_width);
	if (!rows->len)
		g_string_append(out, "(no requests yet)\n");
	append_ops_text(out, stats);
	append_events_text(out, stats);
	g_mutex_unlock(&stats->lock);
}

/* A JSON string: quotes, backslashes and control characters escaped, and
 * bytes that are not UTF-8 replaced, so that any name makes valid JSON. */
void cusemu_json_append_string(GString *out, const char *s)
{
	const char *end = s + strlen(s);

	g_string_append_c(out, '"');
	while (s < end) {
		gunichar c = g_utf8_get_char_validated(s, end - s);

		if (c == (gunichar)-1 || c == (gunichar)-2) {
			g_string_append(out, "\\ufffd");
			s++;
			continue;
		}
		s = g_utf8_next_char(s);
		switch (c) {
		case '"':
			g_string_append(out, "\\\"");
			break;
		case '\\':
			g_string_append(out, "\\\\");
			break;
		case '\n':
			g_string_append(out, "\\n");
			break;
		case '\t':
			g_string_append(out, "\\t");
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				g_string_append_printf(out, "\\u%04x", c);
			else
				g_string_append_unichar(out, c);
		}
	}
	g_string_append_c(out, '"');
}

static void append_json_histogram(GString *out, const uint64_t *hist)
{
	g_string_append_c(out, '[');
	for (unsigned int i = 0; i < CUSEMU_STATS_BUCKETS; i++)
		g_string_append_printf(out, "%s%" PRIu64, i ? "," : "",
				       hist[i]);
	g_string_append_c(out, ']');
}

static void append_errors_json(GString *out, const struct error_count *e)
{
	char num[16];

	g_string_append_c(out, '{');
	for (unsigned int i = 0; e[i].count; i++) {
		if (i)
			g_string_append_c(out, ',');
		cusemu_json_append_string(out, error_name(e[i].error, num,
							  sizeof(num)));
		g_string_append_printf(out, ":%" PRIu64, e[i].count);
	}
	g_string_append_c(out, '}');
}

static void append_row_json(GString *out, const struct row_view *row)
{

	g_string_append_printf(out, "{\"cmd\":%u,\"name\":", row->cmd);
	if (row->name)
		cusemu_json_append_string(out, row->name);
	else
		g_string_append(out, "null");
	g_string_append_printf(out,
			       ",\"abi\":\"%s\",\"calls\":%" PRIu64
			       ",\"retries\":%" PRIu64 ",\"errors\":",
			       abi_name(row), row->calls, row->retries);
	append_errors_json(out, row->errors);
	g_string_append_printf(out,
			       ",\"lock\":{\"acquisitions\":%" PRIu64
			       ",\"contended\":%" PRIu64
			       ",\"wait_ns_total\":%" PRIu64
			       ",\"hold_ns_total\":%" PRIu64
			       ",\"wait_ns_max\":%" PRIu64
			       ",\"wait_us_histogram\":",
			       row->lock_acquisitions, row->lock_contended,
			       row->wait_ns_total, row->hold_ns_total,
			       row->wait_ns_max);
	append_json_histogram(out, row->wait_hist);
	g_string_append(out, ",\"hold_us_histogram\":");
	append_json_histogram(out, row->hold_hist);
	g_string_append(out, "}}");
}

void cusemu_stats_append_json(struct cusemu_stats *stats, GString *out)
{
	g_autoptr(GArray) rows = NULL;
	g_autoptr(GPtrArray) names = NULL;

	g_return_if_fail(stats && out);
	g_mutex_lock(&stats->lock);
	rows = sorted_rows(stats);
	g_string_append(out, "{\"commands\":[");
	for (guint i = 0; i < rows->len; i++) {
		if (i)
			g_string_append_c(out, ',');
		append_row_json(out, &g_array_index(rows, struct row_view, i));
	}
	g_string_append(out, "],\"operations\":{");
	for (unsigned int op = 0; op < CUSEMU_STATS_OPS; op++) {
		struct op_view v;

		op_view_get(&stats->ops[op], &v);
		g_string_append_printf(out,
				       "%s\"%s\":{\"calls\":%" PRIu64
				       ",\"errors\":",
				       op ? "," : "", cusemu_op_name(op),
				       v.calls);
		append_errors_json(out, v.errors);
		g_string_append_printf(out,
				       ",\"time_ns_total\":%" PRIu64
				       ",\"time_ns_max\":%" PRIu64
				       ",\"time_us_histogram\":",
				       v.ns_total, v.ns_max);
		append_json_histogram(out, v.hist);
		g_string_append_c(out, '}');
	}
	g_string_append(out, "},\"events\":{");
	names = sorted_events(stats);
	for (guint i = 0; i < names->len; i++) {
		const uint64_t *count =
			g_hash_table_lookup(stats->events, names->pdata[i]);

		if (i)
			g_string_append_c(out, ',');
		cusemu_json_append_string(out, names->pdata[i]);
		g_string_append_printf(out, ":%" PRIu64, *count);
	}
	g_string_append(out, "}}");
	g_mutex_unlock(&stats->lock);
}
