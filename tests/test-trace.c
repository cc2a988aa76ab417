/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the trace: the line of each kind of request, the tracers
 * (their limit, the lines a slow reader loses and is told of), and the
 * text cusemuctl makes of the lines, payloads decoded by a header's
 * layouts in both ABIs.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "layout.h"
#include "call.h"
#include "device.h"
#include "op.h"
#include "proc.h"
#include "trace-print.h"
#include "trace.h"

/* A record of op on a device named name, recorded nowhere; only the name
 * and the recording are read. */
static struct cusemu_device *device_named(const char *name)
{
	static struct cusemu_instance inst;

	inst.pub.name = (char *)name;
	return &inst.pub;
}

static const struct cusemu_trace_caller caller = {
	/* 2026-12-05T16:50:30.028752Z */
	.wall_us = G_GINT64_CONSTANT(1796489430028752),
	.comm = "client",
	.abi = "i386",
};

static char *format(const struct cusemu_op_record *rec, uint64_t ns)
{
	GString *out = g_string_new(NULL);

	cusemu_trace_format(out, rec, ns, &caller, CUSEMU_TRACE_DATA_MAX);
	return g_string_free(out, FALSE);
}

/* read, write, open and a failure: the record's facts, bytes in hex. */
static void test_format_ops(void)
{
	struct cusemu_op_record rec = {
		.op = CUSEMU_OP_READ, .dev = device_named("fioc0"), .pid = 42,
		.size = 100, .result = 3, .data = "AB\"",
	};
	g_autofree char *read_line = format(&rec, 1500);
	g_autofree char *open_line = NULL;

	g_assert_cmpstr(read_line, ==,
			"{\"time\":\"2026-12-05T16:50:30.028752Z\","
			"\"node\":\"fioc0\",\"pid\":42,\"comm\":\"client\","
			"\"op\":\"read\",\"abi\":\"i386\",\"size\":100,"
			"\"data\":\"414222\",\"result\":3,\"error\":null,"
			"\"duration_ns\":1500}\n");
	rec = (struct cusemu_op_record){ .op = CUSEMU_OP_OPEN,
					 .dev = device_named("a\"b"),
					 .pid = 7, .error = EBUSY };
	open_line = format(&rec, 0);
	g_assert_cmpstr(open_line, ==,
			"{\"time\":\"2026-12-05T16:50:30.028752Z\","
			"\"node\":\"a\\\"b\",\"pid\":7,\"comm\":\"client\","
			"\"op\":\"open\",\"abi\":\"i386\",\"result\":null,"
			"\"error\":\"EBUSY\",\"duration_ns\":0}\n");
}

/* An ioctl: its command, arg, ranges with their bytes, round trips. */
static void test_format_ioctl(void)
{
	uint8_t in[4] = { 1, 2, 3, 4 }, out[8] = { 0xaa, 0xbb, 0xcc };
	struct cusemu_call call = { 0 };
	struct cusemu_op_record rec = {
		.op = CUSEMU_OP_IOCTL, .dev = device_named("hub0"), .pid = 9,
		.call = &call, .result = 0,
	};
	g_autofree char *line = NULL;
	g_autofree char *failed = NULL;

	call.cmd = _IOWR('x', 1, uint32_t);
	call.arg = 0x8000;
	call.compat = false;
	call.stats.name = "X_SWAP";
	call.in.count = 1;
	call.in.r[0] = (struct cusemu_user_range){ .addr = 0x8000, .len = 4 };
	call.in_data = in;
	call.in_avail = 4;
	call.out.count = 2;
	call.out.r[0] = (struct cusemu_user_range){ .addr = 0x8000, .len = 2 };
	call.out.r[1] = (struct cusemu_user_range){ .addr = 0x9000, .len = 4,
						    .off = 2 };
	call.out_data = out;
	call.out_used = 3;	/* the reply covers 3 bytes of the 6 */
	call.round_trips = 2;
	line = format(&rec, 10);
	g_assert_cmpstr(line, ==,
			"{\"time\":\"2026-12-05T16:50:30.028752Z\","
			"\"node\":\"hub0\",\"pid\":9,\"comm\":\"client\","
			"\"op\":\"ioctl\",\"abi\":\"x86_64\",\"cmd\":3221518337,"
			"\"name\":\"X_SWAP\",\"arg\":\"0x8000\",\"size\":4,"
			"\"in\":[{\"addr\":\"0x8000\",\"len\":4,"
			"\"data\":\"01020304\"}],"
			"\"out\":[{\"addr\":\"0x8000\",\"len\":2,\"data\":\"aabb\"},"
			"{\"addr\":\"0x9000\",\"len\":4,\"data\":\"cc\"}],"
			"\"round_trips\":2,\"result\":0,\"error\":null,"
			"\"duration_ns\":10}\n");
	/* A failed call copies nothing out; a 32-bit caller says so. */
	call.compat = true;
	call.stats.name = NULL;
	rec.error = ENOTTY;
	failed = format(&rec, 10);
	g_assert_nonnull(strstr(failed, "\"abi\":\"i386\",\"cmd\":3221518337,"
					"\"name\":null,"));
	g_assert_nonnull(strstr(failed, "\"out\":[{\"addr\":\"0x8000\","
					"\"len\":2,\"data\":\"\"},"));
	g_assert_nonnull(strstr(failed, "\"result\":null,"
					"\"error\":\"ENOTTY\","));
}

/* A payload longer than the trace shows is cut, and says so. */
static void test_format_cut(void)
{
	g_autofree uint8_t *big = g_malloc0(CUSEMU_TRACE_DATA_MAX + 10);
	struct cusemu_op_record rec = {
		.op = CUSEMU_OP_WRITE, .dev = device_named("d"), .pid = 1,
		.size = CUSEMU_TRACE_DATA_MAX + 10,
		.result = CUSEMU_TRACE_DATA_MAX + 10, .data = big,
	};
	g_autofree char *line = format(&rec, 0);
	const char *data = strstr(line, "\"data\":\"");

	/* Not data + 8 after the assertion: with sanitizers, gcc no longer
	 * sees that it ends the test, and warns of a read at NULL + 8. */
	g_assert_nonnull(data);
	g_assert_cmpuint(strspn(data ? data + 8 : "", "0"), ==,
			 2 * CUSEMU_TRACE_DATA_MAX);
	g_assert_nonnull(strstr(line, "\",\"cut\":true,\"result\":"));
}

/* ---- tracers ---- */

/* The main loop's turn, after its timer has written the queues out. */
static void iterate(void)
{
	g_usleep(25 * 1000);
	while (g_main_context_iteration(NULL, FALSE))
		;
}

/* What the tracer's end of a socket pair has received so far. */
static char *drain(int fd)
{
	GString *got = g_string_new(NULL);
	char buf[65536];
	ssize_t n;

	iterate();
	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		g_string_append_len(got, buf, n);
		iterate();
	}
	return g_string_free(got, FALSE);
}

static void tracer_pair(int *daemon_end, int *client_end)
{
	int sv[2];

	g_assert_no_errno(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
				     sv));
	*daemon_end = sv[0];
	*client_end = sv[1];
}

static void trace_write(const char *node, int n)
{
	static const char bytes[64];
	struct cusemu_op_record rec = {
		.op = CUSEMU_OP_WRITE, .dev = device_named(node),
		.pid = getpid(), .size = sizeof(bytes),
		.result = sizeof(bytes), .data = bytes,
	};

	for (int i = 0; i < n; i++)
		cusemu_trace_op(&rec, 1);
}

static unsigned int count_lines(const char *text, const char *part)
{
	unsigned int n = 0;

	for (const char *p = text; (p = strstr(p, part)); p++)
		n++;
	return n;
}

/* A header first, then the lines of the nodes asked for, no others. */
static void test_tracer_nodes(void)
{
	char *nodes[] = { "fioc0", NULL };
	g_autoptr(GString) err = g_string_new(NULL);
	g_autofree char *got = NULL;
	g_autofree char *want_comm = NULL;
	char comm[32];
	int d, c;

	tracer_pair(&d, &c);
	g_assert_false(cusemu_trace_on());
	g_assert_cmpint(cusemu_trace_attach(d, nodes, err), ==, 0);
	g_assert_true(cusemu_trace_on());
	trace_write("fioc0", 2);
	trace_write("rtc0", 3);
	got = drain(c);
	g_assert_true(g_str_has_prefix(got, "{\"trace\":\"cusemu\",\"version\":1,"
					    "\"nodes\":[\"fioc0\"]}\n"));
	g_assert_cmpuint(count_lines(got, "\"node\":\"fioc0\""), ==, 2);
	g_assert_cmpuint(count_lines(got, "\"node\":\"rtc0\""), ==, 0);
	/* Our own name: test-trace, or valgrind's when it runs us. */
	g_assert_cmpint(cusemu_proc_comm(getpid(), comm, sizeof(comm)), >, 0);
	want_comm = g_strdup_printf("\"comm\":\"%s\"", comm);
	g_assert_nonnull(strstr(got, want_comm));
	/* The client leaves: the tracer goes, and the cost with it. */
	close(c);
	iterate();
	g_assert_false(cusemu_trace_on());
}

/* At most CUSEMU_TRACE_TRACERS_MAX at once; a place frees on leaving. */
static void test_tracer_limit(void)
{
	int d[CUSEMU_TRACE_TRACERS_MAX + 1], c[CUSEMU_TRACE_TRACERS_MAX + 1];
	g_autoptr(GString) err = g_string_new(NULL);

	for (int i = 0; i <= CUSEMU_TRACE_TRACERS_MAX; i++)
		tracer_pair(&d[i], &c[i]);
	for (int i = 0; i < CUSEMU_TRACE_TRACERS_MAX; i++)
		g_assert_cmpint(cusemu_trace_attach(d[i], NULL, err), ==, 0);
	g_assert_cmpint(cusemu_trace_attach(d[CUSEMU_TRACE_TRACERS_MAX], NULL,
					    err),
			==, EBUSY);
	g_assert_nonnull(strstr(err->str, "busy"));
	close(c[0]);
	iterate();
	g_string_truncate(err, 0);
	g_assert_cmpint(cusemu_trace_attach(d[CUSEMU_TRACE_TRACERS_MAX], NULL,
					    err),
			==, 0);
	cusemu_trace_detach_all();
	g_assert_false(cusemu_trace_on());
	for (int i = 1; i <= CUSEMU_TRACE_TRACERS_MAX; i++)
		close(c[i]);
}

/*
 * A reader that does not read: lines beyond the queue are lost, never
 * waited for, and once it reads again it is told how many.
 */
static void test_tracer_drops(void)
{
	g_autoptr(GString) err = g_string_new(NULL);
	g_autoptr(GString) got = g_string_new(NULL);
	int d, c, size = 4096;
	unsigned int lines;
	gint64 start;
	const char *lost;
	char *all;
	int sent = 30000;	/* some 10 MB of lines: far over the queue */

	tracer_pair(&d, &c);
	setsockopt(d, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	g_assert_cmpint(cusemu_trace_attach(d, NULL, err), ==, 0);
	start = g_get_monotonic_time();
	trace_write("fioc0", sent);
	iterate();
	/* Nothing waited for the reader. */
	g_assert_cmpint(g_get_monotonic_time() - start, <, 10 * G_USEC_PER_SEC);
	trace_write("fioc0", 1);	/* after the reader has caught up */
	for (int i = 0; i < 100; i++) {
		g_autofree char *part = drain(c);

		g_string_append(got, part);
		if (i > 2 && !*part)
			break;
		trace_write("fioc0", i == 0);
	}
	all = got->str;
	lines = count_lines(all, "\"op\":\"write\"");
	lost = strstr(all, "{\"lost\":");
	g_assert_nonnull(lost);
	g_assert_cmpuint(lines, <, sent);
	/* Every line is either seen or counted as lost. */
	g_assert_cmpuint(lines + g_ascii_strtoull(lost + 8, NULL, 10), ==,
			 sent + 2);
	close(c);
	iterate();
	g_assert_false(cusemu_trace_on());
}

/* ---- cusemuctl's text ---- */

static const char header[] =
	"#include <linux/ioctl.h>\n"
	"#include <linux/types.h>\n"
	"struct hub_info {\n"
	"	__u32 version;\n"
	"	__u64 serial;\n"
	"	long delta;\n"
	"	char name[8];\n"
	"	struct { __s16 x, y; } at[2];\n"
	"};\n"
	"#define HUB_INFO _IOR(0xBC, 1, struct hub_info)\n"
	"#define HUB_RATE _IOW(0xBC, 2, __u32)\n";

static GPtrArray *probe(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_dir_make_tmp("test-trace-XXXXXX", &error);
	g_autofree char *path = g_build_filename(dir, "hub.h", NULL);
	g_autoptr(GPtrArray) cflags = g_ptr_array_new();
	g_autoptr(GPtrArray) given = g_ptr_array_new();
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	char *cc[] = { "gcc", NULL };
	char *headers[] = { path, NULL };
	struct probe_options o = { .cc = cc, .cflags = cflags };
	GPtrArray *commands = NULL;

	g_assert_no_error(error);
	g_assert_true(g_file_set_contents(path, header, -1, &error));
	if (!probe_headers(&o, headers, given, &commands, notes, &error)) {
		g_test_skip(error->message);
		commands = NULL;
	}
	g_unlink(path);
	g_rmdir(dir);
	return commands;
}

static char *print(const char *line, GPtrArray *commands)
{
	GString *out = g_string_new(NULL);

	g_assert_true(cusemu_trace_print(out, line, commands));
	return g_string_free(out, FALSE);
}

#define LINE_START "{\"time\":\"2026-12-05T16:50:30.028752Z\",\"node\":\"hub0\"," \
		   "\"pid\":9,\"comm\":\"client\",\"op\":\"ioctl\","

/* struct hub_info: x86_64 aligns serial to 8 and long is 8 bytes; i386
 * to 4 and 4 bytes. The same values, each ABI's bytes. */
static void test_print_decoded(void)
{
	g_autoptr(GPtrArray) commands = probe();
	g_autofree char *native = NULL, *compat = NULL, *plain = NULL;
#define DECODED "in {} out {version=1, serial=258, delta=-2, " \
		"name=\"hub\", at=[{x=1, y=-1}, {x=2, y=3}]}"

	if (!commands)
		return;
	native = print(LINE_START "\"abi\":\"x86_64\",\"cmd\":2150153217,"
		"\"name\":null,\"arg\":\"0x10\",\"size\":40,\"in\":[],"
		"\"out\":[{\"addr\":\"0x10\",\"len\":40,\"data\":\""
		"01000000" "00000000" "0201000000000000" "feffffffffffffff"
		"6875620000000000" "0100ffff" "02000300\"}],"
		"\"round_trips\":1,\"result\":0,\"error\":null,"
		"\"duration_ns\":1500}", commands);
	g_assert_cmpstr(native, ==,
			"16:50:30.028752 hub0 9 client ioctl(HUB_INFO "
			"0x8028bc01, x86_64, 40 bytes) " DECODED
			" round trips 1 = 0 <1.5us>\n");
	compat = print(LINE_START "\"abi\":\"i386\",\"cmd\":2149628929,"
		"\"name\":\"HUB_INFO32\",\"arg\":\"0x10\",\"size\":32,"
		"\"in\":[],\"out\":[{\"addr\":\"0x10\",\"len\":32,\"data\":\""
		"01000000" "0201000000000000" "feffffff"
		"6875620000000000" "0100ffff" "02000300\"}],"
		"\"round_trips\":0,\"result\":0,\"error\":null,"
		"\"duration_ns\":1500}", commands);
	g_assert_cmpstr(compat, ==,
			"16:50:30.028752 hub0 9 client ioctl(HUB_INFO "
			"0x8020bc01, i386, 32 bytes) " DECODED " = 0 <1.5us>\n");
#undef DECODED
	/* Without a header, the ranges. */
	plain = print(LINE_START "\"abi\":\"i386\",\"cmd\":1074052098,"
		"\"name\":\"HUB_RATE\",\"arg\":\"0x10\",\"size\":4,"
		"\"in\":[{\"addr\":\"0x10\",\"len\":4,\"data\":\"e8030000\"}],"
		"\"out\":[],\"round_trips\":1,\"result\":null,"
		"\"error\":\"EINVAL\",\"duration_ns\":2000000}", NULL);
	g_assert_cmpstr(plain, ==,
			"16:50:30.028752 hub0 9 client ioctl(HUB_RATE "
			"0x4004bc02, i386, 4 bytes) in [0x10+4] out [] round "
			"trips 1 = -1 EINVAL <2.00ms>\n");
}

/* The other operations, the header and lost lines; and what is not a
 * trace line. */
static void test_print_ops(void)
{
	g_autofree char *read_line = NULL, *poll_line = NULL, *lost = NULL;
	GString *out = g_string_new(NULL);

	read_line = print("{\"time\":\"2026-12-05T01:02:03.000004Z\","
			  "\"node\":\"fioc0\",\"pid\":42,\"comm\":null,"
			  "\"op\":\"read\",\"abi\":null,\"size\":100,"
			  "\"data\":\"41420a\",\"result\":3,\"error\":null,"
			  "\"duration_ns\":999}", NULL);
	g_assert_cmpstr(read_line, ==, "01:02:03.000004 fioc0 42 ? "
				       "read(?, 100) = 3 \"AB\\x0a\" <999ns>\n");
	poll_line = print("{\"time\":\"2026-12-05T01:02:03.000004Z\","
			  "\"node\":\"e\",\"pid\":1,\"comm\":\"x\","
			  "\"op\":\"poll\",\"abi\":\"x86_64\",\"result\":65,"
			  "\"error\":null,\"duration_ns\":1000}", NULL);
	g_assert_cmpstr(poll_line, ==, "01:02:03.000004 e 1 x poll(x86_64) "
				       "= 0x41 <1.0us>\n");
	lost = print("{\"lost\":12}", NULL);
	g_assert_cmpstr(lost, ==, "... 12 lines lost: this reader was too "
				  "slow\n");
	g_assert_true(cusemu_trace_print(out, "{\"trace\":\"cusemu\","
					      "\"version\":1,\"nodes\":null}",
					 NULL));
	g_assert_cmpuint(out->len, ==, 0);
	g_assert_false(cusemu_trace_print(out, "{\"op\":", NULL));
	g_assert_false(cusemu_trace_print(out, "error: no", NULL));
	g_assert_cmpuint(out->len, ==, 0);
	g_string_free(out, TRUE);
}

int main(int argc, char **argv)
{
	/* cusemuctl prints local time: make it UTC here. */
	g_setenv("TZ", "UTC", TRUE);
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/trace/format/ops", test_format_ops);
	g_test_add_func("/trace/format/ioctl", test_format_ioctl);
	g_test_add_func("/trace/format/cut", test_format_cut);
	g_test_add_func("/trace/tracer/nodes", test_tracer_nodes);
	g_test_add_func("/trace/tracer/limit", test_tracer_limit);
	g_test_add_func("/trace/tracer/drops", test_tracer_drops);
	g_test_add_func("/trace/print/decoded", test_print_decoded);
	g_test_add_func("/trace/print/ops", test_print_ops);
	return g_test_run();
}
