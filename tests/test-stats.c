/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the statistics: what a request adds, histogram buckets,
 * reset, and that the text table and the JSON say it right.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "stats.h"

#define US 1000ull
#define MS 1000000ull

/*
 * A JSON syntax check, enough for what the statistics write: returns the
 * end of the value at p, or NULL where the text stops being JSON.
 */
static const char *json_value(const char *p);

static const char *json_space(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!g_ascii_isxdigit(p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *json_number(const char *p)
{
	const char *start;

	if (*p == '-')
		p++;
	start = p;
	while (g_ascii_isdigit(*p))
		p++;
	if (p == start || (*start == '0' && p - start > 1))
		return NULL;
	if (*p == '.') {
		start = ++p;
		while (g_ascii_isdigit(*p))
			p++;
		if (p == start)
			return NULL;
	}
	return p;
}

/* Members or elements up to close, with keys when object is set. */
static const char *json_items(const char *p, char close, gboolean object)
{
	p = json_space(p);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (object) {
			p = json_string(json_space(p));
			if (!p)
				return NULL;
			p = json_space(p);
			if (*p++ != ':')
				return NULL;
		}
		p = json_value(p);
		if (!p)
			return NULL;
		p = json_space(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p)
{
	p = json_space(p);
	switch (*p) {
	case '{':
		return json_items(p + 1, '}', TRUE);
	case '[':
		return json_items(p + 1, ']', FALSE);
	case '"':
		return json_string(p);
	case 't':
		return g_str_has_prefix(p, "true") ? p + 4 : NULL;
	case 'f':
		return g_str_has_prefix(p, "false") ? p + 5 : NULL;
	case 'n':
		return g_str_has_prefix(p, "null") ? p + 4 : NULL;
	default:
		return json_number(p);
	}
}

static void assert_json(const char *text)
{
	const char *end = json_value(text);

	if (!end || *json_space(end))
		g_error("not valid JSON at offset %td: %s",
			end ? end - text : (ptrdiff_t)-1, text);
}

static char *as_text(struct cusemu_stats *stats)
{
	GString *out = g_string_new(NULL);

	cusemu_stats_append_text(stats, out);
	return g_string_free(out, FALSE);
}

static char *as_json(struct cusemu_stats *stats)
{
	GString *out = g_string_new(NULL);

	cusemu_stats_append_json(stats, out);
	assert_json(out->str);
	return g_string_free(out, FALSE);
}

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		g_error("expected '%s' in:\n%s", part, text);
}

static void record(struct cusemu_stats *stats, unsigned int cmd,
		   const char *name, bool compat, bool retry, int error)
{
	struct cusemu_request_stats req = {
		.cmd = cmd,
		.name = name,
		.compat = compat,
		.retry = retry,
		.error = error,
	};

	cusemu_stats_record(stats, &req);
}

static void record_locked(struct cusemu_stats *stats, unsigned int cmd,
			  const char *name, uint32_t acquisitions,
			  uint32_t contended, uint64_t wait_ns,
			  uint64_t hold_ns)
{
	struct cusemu_request_stats req = {
		.cmd = cmd,
		.name = name,
		.lock_acquisitions = acquisitions,
		.lock_contended = contended,
		.lock_wait_ns = wait_ns,
		.lock_hold_ns = hold_ns,
	};

	cusemu_stats_record(stats, &req);
}

static void test_bucket(void)
{
	g_assert_cmpuint(cusemu_stats_bucket(0), ==, 0);
	g_assert_cmpuint(cusemu_stats_bucket(999), ==, 0);
	g_assert_cmpuint(cusemu_stats_bucket(1 * US), ==, 1);
	g_assert_cmpuint(cusemu_stats_bucket(2 * US - 1), ==, 1);
	g_assert_cmpuint(cusemu_stats_bucket(2 * US), ==, 2);
	g_assert_cmpuint(cusemu_stats_bucket(3 * US), ==, 2);
	g_assert_cmpuint(cusemu_stats_bucket(4 * US), ==, 3);
	g_assert_cmpuint(cusemu_stats_bucket(1 * MS), ==, 10);
	g_assert_cmpuint(cusemu_stats_bucket(1024 * US), ==, 11);
	g_assert_cmpuint(cusemu_stats_bucket((1ull << 22) * US - 1), ==, 22);
	g_assert_cmpuint(cusemu_stats_bucket((1ull << 22) * US), ==, 23);
	g_assert_cmpuint(cusemu_stats_bucket(UINT64_MAX), ==,
			 CUSEMU_STATS_BUCKETS - 1);
}

/* Calls count answered requests; retries count round trips apart. */
static void test_calls_retries_errors(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *json = NULL;

	record(stats, 0x8008e501, "FIOC_GET_SIZE", false, false, 0);
	record(stats, 0x8008e501, "FIOC_GET_SIZE", false, false, 0);
	record(stats, 0x4010e503, "FIOC_READ", false, true, 0);
	record(stats, 0x4010e503, "FIOC_READ", false, false, EFAULT);
	record(stats, 0x4010e503, "FIOC_READ", false, false, -EINVAL);
	record(stats, 0x4010e503, "FIOC_READ", false, false, EINVAL);
	record(stats, 0x4010e503, "FIOC_READ", false, false, 4095);
	json = as_json(stats);
	assert_contains(json, "{\"cmd\":2148066561,\"name\":\"FIOC_GET_SIZE\","
			      "\"abi\":\"native\",\"calls\":2,\"retries\":0,"
			      "\"errors\":{},");
	assert_contains(json, "{\"cmd\":1074849027,\"name\":\"FIOC_READ\","
			      "\"abi\":\"native\",\"calls\":4,\"retries\":1,"
			      "\"errors\":{\"EFAULT\":1,\"EINVAL\":2,"
			      "\"4095\":1},");
	cusemu_stats_free(stats);
}

/* One row per command and ABI: the compat number of a command differs. */
static void test_rows_per_abi(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *json = NULL;
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	record(stats, 0x8008e501, "FIOC_GET_SIZE", false, false, 0);
	record(stats, 0x8004e501, "FIOC_GET_SIZE", true, false, 0);
	record(stats, 0x8004e501, "FIOC_GET_SIZE", true, false, ENOTTY);
	/* Same number, other ABI: still its own row. */
	record(stats, 0x8008e501, "FIOC_GET_SIZE", true, false, 0);
	json = as_json(stats);
	assert_contains(json, "{\"cmd\":2148066561,\"name\":\"FIOC_GET_SIZE\","
			      "\"abi\":\"native\",\"calls\":1,");
	assert_contains(json, "{\"cmd\":2148066561,\"name\":\"FIOC_GET_SIZE\","
			      "\"abi\":\"compat\",\"calls\":1,");
	assert_contains(json, "{\"cmd\":2147804417,\"name\":\"FIOC_GET_SIZE\","
			      "\"abi\":\"compat\",\"calls\":2,\"retries\":0,"
			      "\"errors\":{\"ENOTTY\":1}");
	text = as_text(stats);
	/* A header and three rows, native first. */
	lines = g_strsplit(text, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 5);
	g_assert_true(strstr(text, "FIOC_GET_SIZE  native") <
		      strstr(text, "FIOC_GET_SIZE  compat"));
	cusemu_stats_free(stats);
}

static void test_lock_histograms(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *json = NULL;

	/* Uncontended: 0.5 us wait, 3 us hold. */
	record_locked(stats, 1, "A", 1, 0, 500, 3 * US);
	/* Contended: 5 us wait, 1.5 ms hold. */
	record_locked(stats, 1, "A", 1, 1, 5 * US, 1500 * US);
	/* Let go over a sleep and taken back: two acquisitions. */
	record_locked(stats, 1, "A", 2, 1, 20 * US, 8 * US);
	json = as_json(stats);
	assert_contains(json, "\"lock\":{\"acquisitions\":4,\"contended\":2,"
			      "\"wait_ns_total\":25500,"
			      "\"hold_ns_total\":1511000,"
			      "\"wait_ns_max\":10000,"
			      "\"wait_us_histogram\":[1,0,0,1,2,0,0,0,0,0,0,0,"
			      "0,0,0,0,0,0,0,0,0,0,0,0],"
			      "\"hold_us_histogram\":[0,0,1,2,0,0,0,0,0,0,0,1,"
			      "0,0,0,0,0,0,0,0,0,0,0,0]}");
	cusemu_stats_free(stats);
}

/* The exact table: columns aligned, rows by name then ABI. */
static void test_text_table(void)
{
	static const char expected[] =
		"command        abi        calls   retries  lock acq  "
		"contended  wait mean  wait p99  wait max  hold mean  errors\n"
		"0x0000beef     native         1         0         0          "
		"0          -         -         -          -  ENOTTY:1\n"
		"FIOC_GET_SIZE  native         2         0         2          "
		"1     2.75us    5.00us    5.00us     12.0us  -\n"
		"FIOC_GET_SIZE  compat         1         0         0          "
		"0          -         -         -          -  -\n"
		"FIOC_READ      native         3         2         0          "
		"0          -         -         -          -  EFAULT:1 "
		"EINVAL:2\n"
		"\n"
		"event             count\n"
		"timer-expired         3\n"
		"watchdog-ping         1\n";
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *text = NULL;

	record(stats, 0x4010e503, "FIOC_READ", false, true, 0);
	record(stats, 0x4010e503, "FIOC_READ", false, false, EINVAL);
	record(stats, 0x4010e503, "FIOC_READ", false, true, 0);
	record(stats, 0x4010e503, "FIOC_READ", false, false, EFAULT);
	record(stats, 0x4010e503, "FIOC_READ", false, false, EINVAL);
	record(stats, 0x8004e501, "FIOC_GET_SIZE", true, false, 0);
	record_locked(stats, 0x8008e501, "FIOC_GET_SIZE", 1, 0, 500, 4 * US);
	record_locked(stats, 0x8008e501, "FIOC_GET_SIZE", 1, 1, 5 * US,
		      20 * US);
	record(stats, 0xbeef, NULL, false, false, ENOTTY);
	cusemu_stats_count_event(stats, "watchdog-ping");
	for (int i = 0; i < 3; i++)
		cusemu_stats_count_event(stats, "timer-expired");
	text = as_text(stats);
	g_assert_cmpstr(text, ==, expected);
	cusemu_stats_free(stats);
}

/* The p99 column is the upper bound of the bucket reaching 99%, or the
 * slowest time if less. */
static void test_p99(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *one_slow = NULL;
	g_autofree char *two_slow = NULL;
	g_autofree char *endless = NULL;

	for (int i = 0; i < 99; i++)
		record_locked(stats, 1, "X", 1, 0, 1500, 0);
	record_locked(stats, 1, "X", 1, 1, 1 * MS, 0);
	/* 99 of 100 within [1, 2) us. */
	one_slow = as_text(stats);
	assert_contains(one_slow, "       2us    1.00ms");
	record_locked(stats, 1, "X", 1, 1, 1 * MS, 0);
	/* 99 of 101 is under 99%: the slow bucket [512, 1024) us, whose
	 * bound is above the slowest time. */
	two_slow = as_text(stats);
	assert_contains(two_slow, "    1.00ms    1.00ms");
	cusemu_stats_reset(stats);
	/* The last bucket has no upper bound but the slowest time. */
	record_locked(stats, 1, "X", 1, 1, 10000 * MS, 0);
	endless = as_text(stats);
	assert_contains(endless, "  10.0s     10.0s     10.0s");
	cusemu_stats_free(stats);
}

/* A time as the table prints it ("12.7ms", "8us", "500ns"), in ns. */
static double parse_time(const char *text)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double value = g_ascii_strtod(text, &end);

	g_assert_true(end != text);
	for (gsize i = 0; i < G_N_ELEMENTS(units); i++)
		if (!strcmp(end, units[i].unit))
			return value * units[i].ns;
	g_error("not a time: '%s'", text);
}

/* The words of the first line of text that starts with prefix. */
static GStrv row_words(const char *text, const char *prefix)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	for (GStrv line = lines; *line; line++)
		if (g_str_has_prefix(*line, prefix))
			return g_strsplit_set(g_strstrip(*line), " ", -1);
	g_error("no row '%s' in:\n%s", prefix, text);
}

/* Words without the empty strings that runs of spaces leave. */
static GPtrArray *columns(GStrv words)
{
	GPtrArray *cols = g_ptr_array_new();

	for (GStrv w = words; *w; w++)
		if (**w)
			g_ptr_array_add(cols, *w);
	return cols;
}

/*
 * The wait p99 and wait max of command X's row, and the time p99 and time
 * max of the read row, must lie within [least sample, max]: the bucket's
 * bound alone may be far above the largest time it holds.
 */
static void assert_p99_in_range(const uint64_t *ns, gsize n)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *text = NULL;
	g_auto(GStrv) lock_words = NULL;
	g_auto(GStrv) op_words = NULL;
	g_autoptr(GPtrArray) lock = NULL;
	g_autoptr(GPtrArray) op = NULL;
	uint64_t least = UINT64_MAX;

	for (gsize i = 0; i < n; i++) {
		record_locked(stats, 1, "X", 1, 1, ns[i], 0);
		cusemu_stats_record_op(stats, CUSEMU_OP_READ, 0, ns[i]);
		least = MIN(least, ns[i]);
	}
	text = as_text(stats);
	lock_words = row_words(text, "X ");
	op_words = row_words(text, "read ");
	lock = columns(lock_words);
	op = columns(op_words);
	/* X native calls retries acq contended mean p99 max hold errors */
	g_assert_cmpuint(lock->len, ==, 11);
	/* read calls mean p99 max errors */
	g_assert_cmpuint(op->len, ==, 6);
	for (int t = 0; t < 2; t++) {
		const char *p99 = t ? op->pdata[3] : lock->pdata[7];
		const char *max = t ? op->pdata[4] : lock->pdata[8];

		/* The table rounds to three digits. */
		if (parse_time(p99) > parse_time(max) ||
		    parse_time(p99) < 0.995 * (double)least)
			g_error("p99 %s outside [%" G_GUINT64_FORMAT
				"ns, %s] in:\n%s", p99, least, max, text);
	}
	cusemu_stats_free(stats);
}

/* A percentile from buckets never lies outside the times recorded. */
static void test_p99_in_range(void)
{
	/* All in [8.19, 16.4) ms: the bucket's bound is above the max. */
	static const uint64_t one_bucket[] = { 9 * MS, 10 * MS, 12700 * US };
	static const uint64_t under_1us[] = { 300, 500 };
	static const uint64_t last_bucket[] = { 5000 * MS, 6000 * MS };
	static const uint64_t spread[] = { 1 * US, 3 * US, 700 * US, 9 * MS };
	g_autofree uint64_t *many = g_new(uint64_t, 1000);
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *text = NULL;
	GRand *rand = g_rand_new_with_seed(19);

	assert_p99_in_range(one_bucket, G_N_ELEMENTS(one_bucket));
	assert_p99_in_range(under_1us, G_N_ELEMENTS(under_1us));
	assert_p99_in_range(last_bucket, G_N_ELEMENTS(last_bucket));
	assert_p99_in_range(spread, G_N_ELEMENTS(spread));
	for (int round = 0; round < 50; round++) {
		gsize n = g_rand_int_range(rand, 1, 1000);

		for (gsize i = 0; i < n; i++)
			many[i] = (uint64_t)g_rand_double_range(rand, 100,
								2e10);
		assert_p99_in_range(many, n);
	}
	g_rand_free(rand);

	/* The one-bucket case shows its max as p99, in both tables. */
	for (gsize i = 0; i < G_N_ELEMENTS(one_bucket); i++) {
		record_locked(stats, 1, "X", 1, 1, one_bucket[i], 0);
		cusemu_stats_record_op(stats, CUSEMU_OP_OPEN, 0,
				       one_bucket[i]);
	}
	text = as_text(stats);
	assert_contains(text, "    10.6ms    12.7ms    12.7ms");
	assert_contains(text, "\nopen              3     10.6ms     12.7ms"
			      "     12.7ms  -\n");
	cusemu_stats_free(stats);
}

static void test_unnamed(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *before = NULL;
	g_autofree char *after = NULL;
	g_autofree char *text = NULL;

	record(stats, 0xc0de0001, NULL, true, false, ENOTTY);
	before = as_json(stats);
	assert_contains(before, "{\"cmd\":3235774465,\"name\":null,"
				"\"abi\":\"compat\",");
	text = as_text(stats);
	assert_contains(text, "\n0xc0de0001  compat         1  ");
	/* A later request of the command learns its name. */
	record(stats, 0xc0de0001, "LATE", true, false, 0);
	after = as_json(stats);
	assert_contains(after, "{\"cmd\":3235774465,\"name\":\"LATE\","
			       "\"abi\":\"compat\",\"calls\":2,");
	cusemu_stats_free(stats);
}

static void test_reset(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *text = NULL;
	g_autofree char *json = NULL;

	record(stats, 1, "A", false, false, EIO);
	record_locked(stats, 2, "B", 1, 1, 10 * US, 10 * US);
	cusemu_stats_count_event(stats, "tick");
	cusemu_stats_reset(stats);
	text = as_text(stats);
	assert_contains(text, "\n(no requests yet)\n");
	g_assert_null(strstr(text, "tick"));
	json = as_json(stats);
	g_assert_true(g_str_has_prefix(json, "{\"commands\":[],"));
	g_assert_true(g_str_has_suffix(json, "},\"events\":{}}"));
	/* Still usable after a reset. */
	record(stats, 1, "A", false, false, 0);
	g_clear_pointer(&json, g_free);
	json = as_json(stats);
	assert_contains(json, "\"name\":\"A\",\"abi\":\"native\",\"calls\":1,");
	cusemu_stats_free(stats);
}

/* open, read, write, poll and release: one row each, with time. */
static void test_operations(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *text = NULL;
	g_autofree char *json = NULL;

	cusemu_stats_record_op(stats, CUSEMU_OP_OPEN, 0, 3 * US);
	cusemu_stats_record_op(stats, CUSEMU_OP_OPEN, EBUSY, 5 * US);
	cusemu_stats_record_op(stats, CUSEMU_OP_READ, 0, 2 * US);
	cusemu_stats_record_op(stats, CUSEMU_OP_READ, -EAGAIN, 1 * US);
	cusemu_stats_record_op(stats, CUSEMU_OP_READ, EAGAIN, 1 * US);
	cusemu_stats_record_op(stats, CUSEMU_OP_RELEASE, 0, 500);
	text = as_text(stats);
	/* No ioctl yet, but the operations are shown. */
	assert_contains(text, "(no requests yet)\n\noperation  ");
	assert_contains(text, "\nopen              2     4.00us     5.00us"
			      "     5.00us  EBUSY:1\n");
	assert_contains(text, "\nread              3     1.33us     2.00us"
			      "     2.00us  EAGAIN:2\n");
	assert_contains(text, "\nrelease           1      500ns      500ns"
			      "      500ns  -\n");
	/* Rows only for operations served. */
	g_assert_null(strstr(text, "\nwrite "));
	g_assert_null(strstr(text, "\npoll "));
	json = as_json(stats);
	assert_contains(json, "\"operations\":{\"open\":{\"calls\":2,"
			      "\"errors\":{\"EBUSY\":1},"
			      "\"time_ns_total\":8000,\"time_ns_max\":5000,"
			      "\"time_us_histogram\":[0,0,1,1,0,");
	assert_contains(json, "\"write\":{\"calls\":0,\"errors\":{},");
	assert_contains(json, "\"poll\":{\"calls\":0,");
	assert_contains(json, "\"release\":{\"calls\":1,\"errors\":{},"
			      "\"time_ns_total\":500,");
	cusemu_stats_reset(stats);
	g_clear_pointer(&json, g_free);
	json = as_json(stats);
	assert_contains(json, "\"open\":{\"calls\":0,\"errors\":{},"
			      "\"time_ns_total\":0,");
	g_assert_cmpstr(cusemu_op_name(CUSEMU_OP_POLL), ==, "poll");
	g_assert_cmpstr(cusemu_op_name(CUSEMU_OP_IOCTL), ==, "ioctl");
	cusemu_stats_free(stats);
}

/* Names come from device models: any bytes must still give JSON, and
 * a table that keeps its shape. */
static void test_json_escapes(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *json = NULL;
	g_autofree char *text = NULL;

	record(stats, 7, "quote\" back\\slash\nnew\ttab\x01", false, false, 0);
	cusemu_stats_count_event(stats, "bad \xff utf-8 \xc3\xa9");
	json = as_json(stats);
	assert_contains(json, "\"name\":\"quote\\\" back\\\\slash\\nnew\\ttab"
			      "\\u0001\"");
	assert_contains(json, "\"events\":{\"bad \\ufffd utf-8 \xc3\xa9\":1}");
	text = as_text(stats);
	/* In the table they must not break lines or columns. */
	assert_contains(text, "\nquote\" back\\slash?new?tab?  native ");
	assert_contains(text, "\nbad ? utf-8 ??  ");
	cusemu_stats_free(stats);
}

#define THREADS 4
#define PER_THREAD 20000

static gpointer record_many(gpointer data)
{
	struct cusemu_stats *stats = data;

	for (int i = 0; i < PER_THREAD; i++) {
		record_locked(stats, i % 3, "T", 1, i % 2, 100, 100);
		if (i % 100 == 0)
			cusemu_stats_count_event(stats, "e");
	}
	return NULL;
}

/* Transport worker threads record at once; nothing may be lost. */
static void test_threads(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	GThread *threads[THREADS];
	g_autofree char *json = NULL;
	g_autofree char *calls = NULL;

	for (int i = 0; i < THREADS; i++)
		threads[i] = g_thread_new("record", record_many, stats);
	for (int i = 0; i < THREADS; i++)
		g_thread_join(threads[i]);
	json = as_json(stats);
	/* Command 0 gets i = 0, 3, 6, ...: ceil(PER_THREAD / 3) each. */
	calls = g_strdup_printf("{\"cmd\":0,\"name\":\"T\",\"abi\":\"native\","
				"\"calls\":%d,",
				THREADS * ((PER_THREAD + 2) / 3));
	assert_contains(json, calls);
	assert_contains(json, "\"events\":{\"e\":800}");
	cusemu_stats_free(stats);
}

/*
 * A client may send any number of distinct commands and errnos: the rows
 * stay bounded, and what does not fit is still counted, as "other".
 */
static void test_bounded(void)
{
	struct cusemu_stats *stats = cusemu_stats_new(0);
	g_autofree char *json = NULL;
	g_autofree char *text = NULL;
	unsigned int rows = 0;

	for (unsigned int cmd = 1; cmd <= 1000; cmd++)
		record(stats, cmd, NULL, false, false, 0);
	for (int error = 1; error <= 10; error++)
		record(stats, 1, NULL, false, false, error);
	json = as_json(stats);
	for (const char *p = json; (p = strstr(p, "{\"cmd\":")); p++)
		rows++;
	/* 64 spare rows for a device without tables, and the other row. */
	g_assert_cmpuint(rows, ==, 65);
	assert_contains(json, "{\"cmd\":0,\"name\":\"(other commands)\","
			      "\"abi\":\"-\",\"calls\":936,");
	assert_contains(json, "{\"cmd\":1,\"name\":null,\"abi\":\"native\","
			      "\"calls\":11,\"retries\":0,\"errors\":{"
			      "\"EPERM\":1,\"ENOENT\":1,\"ESRCH\":1,"
			      "\"EINTR\":1,\"EIO\":1,\"ENXIO\":1,"
			      "\"E2BIG\":1,\"8\":1,\"other\":2}");
	text = as_text(stats);
	assert_contains(text, "\n(other commands)  -      ");
	cusemu_stats_free(stats);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/stats/bucket", test_bucket);
	g_test_add_func("/stats/calls-retries-errors",
			test_calls_retries_errors);
	g_test_add_func("/stats/rows-per-abi", test_rows_per_abi);
	g_test_add_func("/stats/lock-histograms", test_lock_histograms);
	g_test_add_func("/stats/text-table", test_text_table);
	g_test_add_func("/stats/p99", test_p99);
	g_test_add_func("/stats/p99-in-range", test_p99_in_range);
	g_test_add_func("/stats/unnamed", test_unnamed);
	g_test_add_func("/stats/reset", test_reset);
	g_test_add_func("/stats/operations", test_operations);
	g_test_add_func("/stats/json-escapes", test_json_escapes);
	g_test_add_func("/stats/threads", test_threads);
	g_test_add_func("/stats/bounded", test_bounded);
	return g_test_run();
}
