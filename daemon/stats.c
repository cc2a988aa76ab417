/* SPDX-License-Identifier: MIT */
/*
 * Statistics of one device: a row per command and ABI, model events by name,
 * and their rendering as a text table or as JSON for the control socket.
 */
#define G_LOG_DOMAIN "cusemu-stats"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "stats.h"

/* Kernel-internal errnos a handler may return; no libc header has them. */
#ifndef ERESTARTSYS
#define ERESTARTSYS 512
#endif
#ifndef ENOIOCTLCMD
#define ENOIOCTLCMD 515
#endif

struct error_count {
	int error;
	uint64_t count;
};

struct command_row {
	uint64_t key;		/* hash key: cmd and compat, see row_key() */
	unsigned int cmd;
	bool compat;
	char *name;		/* NULL until a request names the command */
	uint64_t calls;
	uint64_t retries;
	GArray *errors;		/* struct error_count, sorted by errno */
	uint64_t lock_acquisitions;
	uint64_t lock_contended;
	uint64_t wait_ns_total;
	uint64_t hold_ns_total;
	uint64_t wait_ns_max;
	uint64_t wait_hist[CUSEMU_STATS_BUCKETS];
	uint64_t hold_hist[CUSEMU_STATS_BUCKETS];
};

struct cusemu_stats {
	GMutex lock;
	GHashTable *rows;	/* &row->key -> struct command_row */
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

/* The symbolic name of error, or its number in buf. */
static const char *errno_name(int error, char *buf, gsize size)
{
	for (gsize i = 0; i < G_N_ELEMENTS(errno_names); i++)
		if (errno_names[i].error == error)
			return errno_names[i].name;
	g_snprintf(buf, size, "%d", error);
	return buf;
}

static uint64_t row_key(unsigned int cmd, bool compat)
{
	return (uint64_t)cmd << 1 | compat;
}

static void row_free(gpointer p)
{
	struct command_row *row = p;

	g_free(row->name);
	g_array_unref(row->errors);
	g_free(row);
}

struct cusemu_stats *cusemu_stats_new(void)
{
	struct cusemu_stats *stats = g_new0(struct cusemu_stats, 1);

	g_mutex_init(&stats->lock);
	stats->rows = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
					    row_free);
	stats->events = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					      g_free);
	return stats;
}

void cusemu_stats_free(struct cusemu_stats *stats)
{
	if (!stats)
		return;
	g_hash_table_destroy(stats->rows);
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

static struct command_row *row_lookup(struct cusemu_stats *stats,
				      const struct cusemu_request_stats *req)
{
	uint64_t key = row_key(req->cmd, req->compat);
	struct command_row *row = g_hash_table_lookup(stats->rows, &key);

	if (!row) {
		row = g_new0(struct command_row, 1);
		row->key = key;
		row->cmd = req->cmd;
		row->compat = req->compat;
		row->errors = g_array_new(FALSE, FALSE,
					  sizeof(struct error_count));
		g_hash_table_insert(stats->rows, &row->key, row);
	}
	/* A first request may fail before its table row is known. */
	if (!row->name && req->name)
		row->name = g_strdup(req->name);
	return row;
}

static void count_error(GArray *errors, int error)
{
	struct error_count e = { .error = error, .count = 1 };
	guint i;

	for (i = 0; i < errors->len; i++) {
		struct error_count *have =
			&g_array_index(errors, struct error_count, i);

		if (have->error == error) {
			have->count++;
			return;
		}
		if (have->error > error)
			break;
	}
	g_array_insert_val(errors, i, e);
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

	row->lock_acquisitions += n;
	row->lock_contended += req->lock_contended;
	row->wait_ns_total += req->lock_wait_ns;
	row->hold_ns_total += req->lock_hold_ns;
	if (!n)
		return;
	row->wait_ns_max = MAX(row->wait_ns_max, req->lock_wait_ns / n);
	row->wait_hist[cusemu_stats_bucket(req->lock_wait_ns / n)] += n;
	row->hold_hist[cusemu_stats_bucket(req->lock_hold_ns / n)] += n;
}

void cusemu_stats_record(struct cusemu_stats *stats,
			 const struct cusemu_request_stats *req)
{
	struct command_row *row;

	g_return_if_fail(stats && req);
	g_mutex_lock(&stats->lock);
	row = row_lookup(stats, req);
	if (req->retry)
		row->retries++;
	else
		row->calls++;
	if (req->error)
		count_error(row->errors, ABS(req->error));
	count_lock(row, req);
	g_mutex_unlock(&stats->lock);
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

void cusemu_stats_reset(struct cusemu_stats *stats)
{
	g_return_if_fail(stats);
	g_mutex_lock(&stats->lock);
	g_hash_table_remove_all(stats->rows);
	g_hash_table_remove_all(stats->events);
	g_mutex_unlock(&stats->lock);
}

/* Rows in the order of the output: by name, native before compat. */
static int row_compare(gconstpointer pa, gconstpointer pb)
{
	const struct command_row *a = *(const struct command_row *const *)pa;
	const struct command_row *b = *(const struct command_row *const *)pb;
	char na[16], nb[16];
	int r;

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

/* Caller holds the lock; the arrays point into the tables. */
static GPtrArray *sorted_rows(struct cusemu_stats *stats)
{
	GPtrArray *rows = g_ptr_array_sized_new(g_hash_table_size(stats->rows));
	GHashTableIter iter;
	gpointer row;

	g_hash_table_iter_init(&iter, stats->rows);
	while (g_hash_table_iter_next(&iter, NULL, &row))
		g_ptr_array_add(rows, row);
	g_ptr_array_sort(rows, row_compare);
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

static char *row_text_name(const struct command_row *row)
{
	if (row->name)
		return printable(row->name);
	return g_strdup_printf("0x%08x", row->cmd);
}

static const char *abi_name(bool compat)
{
	return compat ? "compat" : "native";
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

/* The upper bound of the bucket where 99% of the samples are reached. */
static void format_p99(const uint64_t *hist, char *buf, gsize size)
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
	if (i < 10) {
		/* Bounds are whole microseconds: print them whole. */
		g_snprintf(buf, size, "%uus", 1u << i);
	} else if (i < CUSEMU_STATS_BUCKETS - 1) {
		format_ns((double)(UINT64_C(1000) << i), buf, size);
	} else {
		/* The last bucket has no upper bound: give its lower one. */
		buf[0] = '>';
		format_ns((double)(UINT64_C(1000) << (i - 1)), buf + 1,
			  size - 1);
	}
}

static void format_mean(uint64_t total_ns, uint64_t n, char *buf, gsize size)
{
	if (n)
		format_ns((double)total_ns / (double)n, buf, size);
	else
		g_strlcpy(buf, "-", size);
}

static void append_errors_text(GString *out, GArray *errors)
{
	char num[16];

	if (!errors->len) {
		g_string_append_c(out, '-');
		return;
	}
	for (guint i = 0; i < errors->len; i++) {
		const struct error_count *e =
			&g_array_index(errors, struct error_count, i);

		g_string_append_printf(out, "%s%s:%" PRIu64, i ? " " : "",
				       errno_name(e->error, num, sizeof(num)),
				       e->count);
	}
}

#define TEXT_ROW_FORMAT "%-*s  %-6s  %8s  %8s  %8s  %9s  %9s  %8s  %8s  %9s  "

static void append_row_text(GString *out, const struct command_row *row,
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
	format_p99(row->wait_hist, wait_p99, sizeof(wait_p99));
	format_mean(row->wait_ns_max, row->lock_acquisitions ? 1 : 0, wait_max,
		    sizeof(wait_max));
	format_mean(row->hold_ns_total, row->lock_acquisitions, hold_mean,
		    sizeof(hold_mean));
	g_string_append_printf(out, TEXT_ROW_FORMAT, name_width, name,
			       abi_name(row->compat), calls, retries, acq,
			       contended, wait_mean, wait_p99, wait_max,
			       hold_mean);
	append_errors_text(out, row->errors);
	g_string_append_c(out, '\n');
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
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	int name_width = strlen("command");

	g_return_if_fail(stats && out);
	g_mutex_lock(&stats->lock);
	rows = sorted_rows(stats);
	for (guint i = 0; i < rows->len; i++) {
		g_ptr_array_add(names, row_text_name(rows->pdata[i]));
		name_width = MAX(name_width, (int)strlen(names->pdata[i]));
	}
	g_string_append_printf(out, TEXT_ROW_FORMAT "errors\n", name_width,
			       "command", "abi", "calls", "retries",
			       "lock acq", "contended", "wait mean",
			       "wait p99", "wait max", "hold mean");
	for (guint i = 0; i < rows->len; i++)
		append_row_text(out, rows->pdata[i], names->pdata[i],
				name_width);
	if (!rows->len)
		g_string_append(out, "(no requests yet)\n");
	append_events_text(out, stats);
	g_mutex_unlock(&stats->lock);
}

/* A JSON string: quotes, backslashes and control characters escaped, and
 * bytes that are not UTF-8 replaced, so that any name makes valid JSON. */
static void append_json_string(GString *out, const char *s)
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

static void append_row_json(GString *out, const struct command_row *row)
{
	char num[16];

	g_string_append_printf(out, "{\"cmd\":%u,\"name\":", row->cmd);
	if (row->name)
		append_json_string(out, row->name);
	else
		g_string_append(out, "null");
	g_string_append_printf(out,
			       ",\"abi\":\"%s\",\"calls\":%" PRIu64
			       ",\"retries\":%" PRIu64 ",\"errors\":{",
			       abi_name(row->compat), row->calls, row->retries);
	for (guint i = 0; i < row->errors->len; i++) {
		const struct error_count *e =
			&g_array_index(row->errors, struct error_count, i);

		if (i)
			g_string_append_c(out, ',');
		append_json_string(out,
				   errno_name(e->error, num, sizeof(num)));
		g_string_append_printf(out, ":%" PRIu64, e->count);
	}
	g_string_append_printf(out,
			       "},\"lock\":{\"acquisitions\":%" PRIu64
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
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GPtrArray) names = NULL;

	g_return_if_fail(stats && out);
	g_mutex_lock(&stats->lock);
	rows = sorted_rows(stats);
	g_string_append(out, "{\"commands\":[");
	for (guint i = 0; i < rows->len; i++) {
		if (i)
			g_string_append_c(out, ',');
		append_row_json(out, rows->pdata[i]);
	}
	g_string_append(out, "],\"events\":{");
	names = sorted_events(stats);
	for (guint i = 0; i < names->len; i++) {
		const uint64_t *count =
			g_hash_table_lookup(stats->events, names->pdata[i]);

		if (i)
			g_string_append_c(out, ',');
		append_json_string(out, names->pdata[i]);
		g_string_append_printf(out, ":%" PRIu64, *count);
	}
	g_string_append(out, "}}");
	g_mutex_unlock(&stats->lock);
}
