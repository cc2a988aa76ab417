/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the control socket, served in this process from the default
 * main context while clients in threads (and cusemuctl) talk to it.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "control.h"
#include "record.h"

#define LIST_TEXT "fioc0  /dev/fioc0  fioc  modern  model\n"
#define LIST_JSON "{\"devices\":[{\"name\":\"fioc0\"}]}\n"
#define STATS_TEXT "device fioc0\n(no requests yet)\n"
/* Without its newline: the daemon adds it. */
#define STATS_JSON "{\"devices\":{}}"
#define UNKNOWN(r) \
	"error: unknown request '" r "'; requests: list, stats, reset, " \
	"device NODE ..., add MODEL[:key=value,...], remove NODE, " \
	"reload NODE\n"
#define NOBODY 65534

struct stub {
	int resets;
	int stats_error;
	gboolean stats_error_quiet;
	int reset_error;	/* returned as it is: may be -errno */
	gboolean reset_quiet;
	int device_requests;
	char device_words[4096];	/* of the last one, joined by ' ' */
	char added[4096];		/* the last add's spec */
	gboolean added_trusted;		/* and who asked for it */
	unsigned int added_files;	/* the files handed over with it */
	ino_t added_ino;		/* the first one's */
	char removed[256];		/* the last remove's node */
	char trace_nodes[256];		/* of the last trace, joined by ' ' */
};

static int stub_list(void *data, gboolean json, GString *out)
{
	g_string_append(out, json ? LIST_JSON : LIST_TEXT);
	return 0;
}

static int stub_stats(void *data, gboolean json, GString *out)
{
	struct stub *stub = data;

	if (stub->stats_error) {
		if (!stub->stats_error_quiet)
			g_string_append(out, "statistics are off");
		return stub->stats_error;
	}
	g_string_append(out, json ? STATS_JSON : STATS_TEXT);
	return 0;
}

static int stub_reset(void *data, GString *out)
{
	struct stub *stub = data;

	stub->resets++;
	if (stub->reset_error)
		return stub->reset_error;
	if (!stub->reset_quiet)
		g_string_append(out, "statistics reset\n");
	return 0;
}

/* Takes every request but one with a word "BAD". */
static int stub_device(void *data, char **argv, GString *out)
{
	struct stub *stub = data;
	g_autofree char *words = g_strjoinv(" ", argv);

	stub->device_requests++;
	g_strlcpy(stub->device_words, words, sizeof(stub->device_words));
	if (g_strv_contains((const char *const *)argv, "BAD")) {
		g_string_append(out, "unknown code BAD");
		return EINVAL;
	}
	return 0;
}

/* Adds anything but a spec starting with "BAD". */
static int stub_add(void *data, const char *spec,
		    struct cusemu_control_peer *peer, GString *out)
{
	struct stub *stub = data;
	struct stat st;

	g_strlcpy(stub->added, spec, sizeof(stub->added));
	stub->added_trusted = peer->trusted;
	stub->added_files = peer->n_fds;
	stub->added_ino = peer->n_fds && !fstat(peer->fds[0], &st) ? st.st_ino
								  : 0;
	if (g_str_has_prefix(spec, "BAD")) {
		g_string_append(out, "unknown device model 'BAD'");
		return EINVAL;
	}
	g_string_append_printf(out, "added %s\n", spec);
	return 0;
}

/* Removes anything but "gone". */
static int stub_remove(void *data, const char *node, GString *out)
{
	struct stub *stub = data;

	g_strlcpy(stub->removed, node, sizeof(stub->removed));
	if (!strcmp(node, "gone"))
		return ENODEV;
	g_string_append_printf(out, "removed %s\n", node);
	return 0;
}

#define TRACE_LINES "{\"trace\":\"cusemu\"}\n{\"op\":\"open\"}\n"

/* Takes the connection, says two lines and ends the trace; refuses a node
 * named "nosuch". */
static int stub_trace(void *data, int fd, char **nodes, GString *out)
{
	struct stub *stub = data;
	g_autofree char *names = g_strjoinv(" ", nodes);

	g_strlcpy(stub->trace_nodes, names, sizeof(stub->trace_nodes));
	if (g_strv_contains((const char *const *)nodes, "nosuch")) {
		g_string_append(out, "no device nosuch here");
		return ENODEV;
	}
	g_assert_cmpint(send(fd, TRACE_LINES, strlen(TRACE_LINES),
			     MSG_NOSIGNAL), ==, strlen(TRACE_LINES));
	close(fd);
	return 0;
}

static const struct cusemu_control_ops stub_ops = {
	.list = stub_list,
	.stats = stub_stats,
	.reset = stub_reset,
	.device = stub_device,
	.add = stub_add,
	.remove = stub_remove,
	.trace = stub_trace,
};

struct fixture {
	char *dir;
	char *path;
	struct stub stub;
	struct cusemu_control *control;
};

/*
 * A directory for sockets in /tmp, whatever $TMPDIR says: a package build
 * points that into its build tree, whose path may be longer than a socket
 * address holds (108 bytes) and which other users cannot reach, where the
 * tests of other users' connections need them to reach the socket before
 * the daemon can refuse them.
 */
static char *socket_dir(void)
{
	char *dir = g_strdup("/tmp/cusemu-control-XXXXXX");

	g_assert_nonnull(g_mkdtemp(dir));
	return dir;
}

static void fixture_setup(struct fixture *f, gconstpointer group)
{
	g_autoptr(GError) error = NULL;

	f->dir = socket_dir();
	/* The directory is made on demand, as /run/cusemu is. */
	f->path = g_build_filename(f->dir, "run", "control", NULL);
	f->control = cusemu_control_start(f->path, GPOINTER_TO_UINT(group),
					  &stub_ops, &f->stub, &error);
	g_assert_no_error(error);
	g_assert_nonnull(f->control);
}

static void fixture_teardown(struct fixture *f, gconstpointer unused)
{
	g_autofree char *run = g_path_get_dirname(f->path);

	cusemu_control_stop(f->control);
	g_assert_false(g_file_test(f->path, G_FILE_TEST_EXISTS));
	g_assert_cmpint(g_rmdir(run), ==, 0);
	g_assert_cmpint(g_rmdir(f->dir), ==, 0);
	g_free(f->path);
	g_free(f->dir);
}

/* One client connection, run in its own thread. */
struct exchange {
	const char *path;
	const char *send;	/* NULL: send nothing, stay silent */
	gsize send_len;		/* 0: strlen(send) */
	unsigned int split_ms;	/* send in two halves, this far apart */
	gboolean shut_wr;	/* shut down writing after sending */
	GString *answer;
	int error;		/* errno of connect or recv, or 0 */
	gint64 elapsed_us;
	gint done;
};

static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static void read_answer(int fd, struct exchange *ex)
{
	struct timeval timeout = { .tv_sec = 10 };
	char buf[4096];
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		g_string_append_len(ex->answer, buf, n);
	/* Closed with the request unread: reset, after the answer. */
	if (n < 0 && !(errno == ECONNRESET && ex->answer->len))
		ex->error = errno;
}

static void send_request(int fd, struct exchange *ex)
{
	gsize len = ex->send_len ? ex->send_len : strlen(ex->send);
	gsize first = ex->split_ms ? len / 2 : len;

	/* A refusal may close the connection first: its answer counts. */
	if (send(fd, ex->send, first, MSG_NOSIGNAL) < 0)
		return;
	if (ex->split_ms) {
		g_usleep(ex->split_ms * 1000);
		if (send(fd, ex->send + first, len - first, MSG_NOSIGNAL) < 0)
			return;
	}
	if (ex->shut_wr)
		shutdown(fd, SHUT_WR);
}

static gpointer client_thread(gpointer data)
{
	struct exchange *ex = data;
	gint64 start = g_get_monotonic_time();
	int fd = connect_to(ex->path);

	if (fd < 0) {
		ex->error = errno;
	} else {
		if (ex->send)
			send_request(fd, ex);
		read_answer(fd, ex);
		close(fd);
	}
	ex->elapsed_us = g_get_monotonic_time() - start;
	g_atomic_int_set(&ex->done, 1);
	g_main_context_wakeup(NULL);
	return NULL;
}

/* Serve the control socket until every thread has set its done flag. */
static void serve_until_done(GThread **threads, gint **done, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		while (!g_atomic_int_get(done[i]))
			g_main_context_iteration(NULL, TRUE);
		g_thread_join(threads[i]);
	}
}

static void run_exchanges(struct exchange *ex, unsigned int n)
{
	GThread *threads[8];
	gint *done[8];

	g_assert_cmpuint(n, <=, G_N_ELEMENTS(threads));
	for (unsigned int i = 0; i < n; i++) {
		ex[i].answer = g_string_new(NULL);
		done[i] = &ex[i].done;
		threads[i] = g_thread_new("client", client_thread, &ex[i]);
	}
	serve_until_done(threads, done, n);
}

static char *ask(struct fixture *f, const char *request)
{
	struct exchange ex = { .path = f->path, .send = request };

	run_exchanges(&ex, 1);
	g_assert_cmpint(ex.error, ==, 0);
	return g_string_free(ex.answer, FALSE);
}

static void assert_answer(struct fixture *f, const char *request,
			  const char *expected)
{
	g_autofree char *answer = ask(f, request);

	g_assert_cmpstr(answer, ==, expected);
}

static void test_socket_file(struct fixture *f, gconstpointer unused)
{
	g_autofree char *run = g_path_get_dirname(f->path);
	struct stat st;

	g_assert_cmpint(lstat(f->path, &st), ==, 0);
	g_assert_true(S_ISSOCK(st.st_mode));
	g_assert_cmpint(st.st_mode & 07777, ==, 0600);
	g_assert_cmpint(lstat(run, &st), ==, 0);
	g_assert_true(S_ISDIR(st.st_mode));
}

static void test_requests(struct fixture *f, gconstpointer unused)
{
	assert_answer(f, "list\n", LIST_TEXT);
	assert_answer(f, "list --json\n", LIST_JSON);
	assert_answer(f, "stats\n", STATS_TEXT);
	assert_answer(f, "stats --json\n", STATS_JSON "\n");
	g_assert_cmpint(f->stub.resets, ==, 0);
	assert_answer(f, "reset\n", "statistics reset\n");
	g_assert_cmpint(f->stub.resets, ==, 1);
	/* Blanks and a CRLF end are forgiven. */
	assert_answer(f, "  list \r\n", LIST_TEXT);
	/* Only the first line counts. */
	assert_answer(f, "list\nreset\n", LIST_TEXT);
	g_assert_cmpint(f->stub.resets, ==, 1);
}

/* "trace [NODE...]" hands the connection over; a refusal is answered. */
static void test_trace(struct fixture *f, gconstpointer unused)
{
	assert_answer(f, "trace\n", TRACE_LINES);
	g_assert_cmpstr(f->stub.trace_nodes, ==, "");
	assert_answer(f, "trace  fioc0 /dev/rtc0\n", TRACE_LINES);
	g_assert_cmpstr(f->stub.trace_nodes, ==, "fioc0 /dev/rtc0");
	assert_answer(f, "trace fioc0 nosuch\n",
		      "error: no device nosuch here\n");
	/* Not a trace request: a word that starts the same. */
	assert_answer(f, "tracer\n", UNKNOWN("tracer"));
}

static void test_errors(struct fixture *f, gconstpointer unused)
{
	g_autofree char *quiet = NULL;

	f->stub.stats_error = EBUSY;
	assert_answer(f, "stats\n", "error: statistics are off\n");
	/* With no message of its own, the errno says it. */
	f->stub.stats_error_quiet = TRUE;
	quiet = g_strdup_printf("error: %s\n", g_strerror(EBUSY));
	assert_answer(f, "stats --json\n", quiet);
	/* -errno, as handlers elsewhere in the daemon return it. */
	f->stub.reset_error = -EBUSY;
	assert_answer(f, "reset\n", quiet);
	/* Success without words still answers something. */
	f->stub.reset_error = 0;
	f->stub.reset_quiet = TRUE;
	assert_answer(f, "reset\n", "ok\n");
}

static void test_unknown(struct fixture *f, gconstpointer unused)
{
	g_autofree char *long_request = NULL;
	g_autofree char *long_echo = NULL;

	assert_answer(f, "frobnicate\n", UNKNOWN("frobnicate"));
	assert_answer(f, "\n", UNKNOWN(""));
	assert_answer(f, "reset --json\n", UNKNOWN("reset --json"));
	assert_answer(f, "stats  --json\n", UNKNOWN("stats  --json"));
	assert_answer(f, "LIST\n", UNKNOWN("LIST"));
	/* What the client sent is shown, but cannot mess up a terminal. */
	assert_answer(f, "\x1b[2Jx\x01\n", UNKNOWN("?[2Jx?"));
	long_request = g_strnfill(100, 'a');
	long_echo = g_strnfill(64, 'a');
	{
		g_autofree char *line = g_strconcat(long_request, "\n", NULL);
		g_autofree char *expected = g_strdup_printf(
			"error: unknown request '%s...'; requests: list, "
			"stats, reset, device NODE ..., add "
			"MODEL[:key=value,...], remove NODE, reload NODE\n",
			long_echo);

		assert_answer(f, line, expected);
	}
	g_assert_cmpint(f->stub.resets, ==, 0);
}

/* add SPEC and remove NODE reach their callbacks, blanks trimmed. */
static void test_add_remove(struct fixture *f, gconstpointer unused)
{
	g_autofree char *gone = g_strdup_printf("error: %s\n",
						g_strerror(ENODEV));

	assert_answer(f, "add rtc:name=rtc9,mode=0666\n",
		      "added rtc:name=rtc9,mode=0666\n");
	g_assert_cmpstr(f->stub.added, ==, "rtc:name=rtc9,mode=0666");
	/* The spec is the rest of the line: a value may hold blanks. */
	assert_answer(f, "add  i2c:eeprom_file=/var/lib/a b \n",
		      "added i2c:eeprom_file=/var/lib/a b\n");
	assert_answer(f, "add BAD\n",
		      "error: unknown device model 'BAD'\n");
	assert_answer(f, "add \n", UNKNOWN("add"));
	assert_answer(f, "add  \n", UNKNOWN("add"));
	assert_answer(f, "remove rtc9\n", "removed rtc9\n");
	g_assert_cmpstr(f->stub.removed, ==, "rtc9");
	assert_answer(f, "remove gone\n", gone);
	assert_answer(f, "remove a b\n", "error: usage: remove NODE\n");
	assert_answer(f, "removes x\n", UNKNOWN("removes x"));
}

/* A line may arrive in pieces, or end with the client's shutdown. */
static void test_pieces(struct fixture *f, gconstpointer unused)
{
	struct exchange ex[2] = {
		{ .path = f->path, .send = "stats --json\n", .split_ms = 100 },
		{ .path = f->path, .send = "list", .shut_wr = TRUE },
	};

	run_exchanges(ex, 2);
	g_assert_cmpstr(ex[0].answer->str, ==, STATS_JSON "\n");
	g_assert_cmpstr(ex[1].answer->str, ==, LIST_TEXT);
	for (int i = 0; i < 2; i++)
		g_string_free(ex[i].answer, TRUE);
}

static void test_overlong(struct fixture *f, gconstpointer unused)
{
	g_autofree char *fits = g_strnfill(4096, ' ');
	g_autofree char *too_long = g_strnfill(5000, 'x');

	/* 4095 bytes and the newline: the limit itself is fine. */
	memcpy(fits + 4095 - 4, "list\n", 5);
	{
		struct exchange ex = { .path = f->path, .send = fits,
				       .send_len = 4096 };

		run_exchanges(&ex, 1);
		g_assert_cmpstr(ex.answer->str, ==, LIST_TEXT);
		g_string_free(ex.answer, TRUE);
	}
	{
		struct exchange ex = { .path = f->path, .send = too_long };

		run_exchanges(&ex, 1);
		g_assert_cmpstr(ex.answer->str, ==,
				"error: request longer than 4096 bytes\n");
		g_string_free(ex.answer, TRUE);
	}
}

/* A client that says nothing is answered after 1 s and holds up nobody. */
static void test_silent_client(struct fixture *f, gconstpointer unused)
{
	struct exchange ex[2] = {
		{ .path = f->path, .send = NULL },
		{ .path = f->path, .send = "list\n", .split_ms = 200 },
	};

	run_exchanges(ex, 2);
	g_assert_cmpstr(ex[0].answer->str, ==,
			"error: no complete request line within 1 s\n");
	g_assert_cmpint(ex[0].elapsed_us, >=, 900 * 1000);
	g_assert_cmpint(ex[0].elapsed_us, <, 5 * G_USEC_PER_SEC);
	g_assert_cmpstr(ex[1].answer->str, ==, LIST_TEXT);
	g_assert_cmpint(ex[1].elapsed_us, <, 1500 * 1000);
	for (int i = 0; i < 2; i++)
		g_string_free(ex[i].answer, TRUE);
}

#define BUSY "error: busy: too many control connections; try again\n"

/* What fd has been told, read without waiting. */
static char *told(int fd)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	return g_strndup(buf, n > 0 ? n : 0);
}

/*
 * Connections are limited, 16 and root's 4; one over the limit is told
 * so, not queued. Root is never: its connection takes the slot of the
 * oldest silent one, which is told it is busy.
 */
static void test_busy(struct fixture *f, gconstpointer unused)
{
	struct exchange ex = { .path = f->path, .send = "list\n" };
	gboolean root = geteuid() == 0;
	int idle[20];
	unsigned int n = root ? 20 : 16;

	/* Accepted one by one: more than the listen backlog would block. */
	for (unsigned int i = 0; i < n; i++) {
		g_assert_cmpint((idle[i] = connect_to(f->path)), >=, 0);
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	run_exchanges(&ex, 1);
	g_assert_cmpstr(ex.answer->str, ==, root ? LIST_TEXT : BUSY);
	g_string_free(ex.answer, TRUE);
	if (root) {
		g_autofree char *oldest = told(idle[0]);
		g_autofree char *next = told(idle[1]);

		g_assert_cmpstr(oldest, ==, BUSY);
		g_assert_cmpstr(next, ==, "");
	}
	for (unsigned int i = 0; i < n; i++)
		close(idle[i]);
}

/* Start and stop on an own path, without the fixture. */
static void test_stale_and_taken(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = socket_dir();
	g_autofree char *path = g_build_filename(dir, "control", NULL);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct cusemu_control *control, *second;
	struct stub stub = { 0 };
	int fd;

	/* A socket file nobody listens on, as a killed daemon leaves. */
	g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), ==,
			0);
	close(fd);
	control = cusemu_control_start(path, (gid_t)-1, &stub_ops, &stub,
				       &error);
	g_assert_no_error(error);

	/* A second daemon must not take the path of a running one. */
	second = cusemu_control_start(path, (gid_t)-1, &stub_ops, &stub,
				      &error);
	g_assert_null(second);
	g_assert_nonnull(error);
	g_assert_nonnull(strstr(error->message, "another daemon is serving"));
	g_clear_error(&error);
	{
		struct exchange ex = { .path = path, .send = "list\n" };

		run_exchanges(&ex, 1);
		g_assert_cmpstr(ex.answer->str, ==, LIST_TEXT);
		g_string_free(ex.answer, TRUE);
	}
	cusemu_control_stop(control);
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));

	/* Not a socket: not ours to remove. */
	g_assert_true(g_file_set_contents(path, "keep me", -1, NULL));
	control = cusemu_control_start(path, (gid_t)-1, &stub_ops, &stub,
				       &error);
	g_assert_null(control);
	g_assert_nonnull(error);
	g_assert_nonnull(strstr(error->message,
				"exists and is not a socket"));
	g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
	g_unlink(path);
	g_rmdir(dir);
}

/*
 * An ordinary user's control directory: made 0700; one that another user
 * could have made or opened up is refused, and the message says what to do.
 */
static void expect_private_refused(const char *dir, const char *why,
				   const char *fix)
{
	g_autoptr(GError) error = NULL;

	g_assert_false(cusemu_control_private_dir(dir, &error));
	g_assert_nonnull(error);
	g_assert_nonnull(strstr(error->message, why));
	g_assert_nonnull(strstr(error->message, fix));
}

static void test_private_dir(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *tmp = g_dir_make_tmp("cusemu-control-XXXXXX", NULL);
	g_autofree char *dir = g_build_filename(tmp, "run", "cusemu", NULL);
	g_autofree char *other = g_build_filename(tmp, "other", NULL);
	g_autofree char *run = g_path_get_dirname(dir);
	struct stat st;

	g_assert_true(cusemu_control_private_dir(dir, &error));
	g_assert_no_error(error);
	g_assert_cmpint(lstat(dir, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 07777, ==, 0700);
	g_assert_true(cusemu_control_private_dir(dir, &error));

	g_assert_cmpint(chmod(dir, 0755), ==, 0);
	expect_private_refused(dir, "is not mode 0700", "chmod 0700");
	g_assert_cmpint(chmod(dir, 0777), ==, 0);
	expect_private_refused(dir, "is not mode 0700", "chmod 0700");
	g_assert_cmpint(g_rmdir(dir), ==, 0);

	g_assert_true(g_file_set_contents(dir, "", 0, NULL));
	expect_private_refused(dir, "is not a directory", "rm -r");
	g_assert_cmpint(g_unlink(dir), ==, 0);

	g_assert_cmpint(mkdir(other, 0700), ==, 0);
	g_assert_cmpint(symlink(other, dir), ==, 0);
	expect_private_refused(dir, "is not a directory", "rm -r");
	g_assert_cmpint(g_unlink(dir), ==, 0);

	if (geteuid() == 0) {
		g_assert_cmpint(mkdir(dir, 0700), ==, 0);
		g_assert_cmpint(chown(dir, NOBODY, NOBODY), ==, 0);
		expect_private_refused(dir, "is owned by another user",
				       "as its owner or root");
		g_assert_cmpint(g_rmdir(dir), ==, 0);
	}
	g_rmdir(other);
	g_rmdir(run);
	g_rmdir(tmp);
}

/* Connect as another user in a child process; the answer comes back. */
struct as_user {
	const char *path;
	uid_t uid;
	gid_t gid;
	gid_t extra;		/* a supplementary group, or -1 */
	GString *answer;
	gint done;
};

static void child_connect(const char *path, uid_t uid, gid_t gid,
			  gid_t extra, int out)
{
	char buf[512];
	ssize_t n;
	int fd;

	if (setgroups(extra != (gid_t)-1, &extra) < 0 || setgid(gid) < 0 ||
	    setuid(uid) < 0)
		_exit(2);
	fd = connect_to(path);
	if (fd < 0) {
		n = snprintf(buf, sizeof(buf), "connect: %s", strerror(errno));
		if (write(out, buf, n) < 0)
			_exit(3);
		_exit(1);
	}
	/* A daemon that answers and closes at once (busy, refused) leaves
	 * its answer to read, as cusemuctl does. */
	if (send(fd, "list\n", 5, MSG_NOSIGNAL) != 5 && errno != EPIPE &&
	    errno != ECONNRESET)
		_exit(4);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (write(out, buf, n) != n)
			_exit(5);
	_exit(0);
}

static gpointer as_user_thread(gpointer data)
{
	struct as_user *as = data;
	char buf[512];
	ssize_t n;
	int pipefd[2];
	int status;
	pid_t pid;

	g_assert_cmpint(pipe(pipefd), ==, 0);
	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		close(pipefd[0]);
		child_connect(as->path, as->uid, as->gid, as->extra, pipefd[1]);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], buf, sizeof(buf))) > 0)
		g_string_append_len(as->answer, buf, n);
	close(pipefd[0]);
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_atomic_int_set(&as->done, 1);
	g_main_context_wakeup(NULL);
	return NULL;
}

static char *ask_as(const char *path, uid_t uid, gid_t gid, gid_t extra)
{
	struct as_user as = { .path = path, .uid = uid, .gid = gid,
			      .extra = extra, .answer = g_string_new(NULL) };
	GThread *thread = g_thread_new("as-user", as_user_thread, &as);
	gint *done = &as.done;

	serve_until_done(&thread, &done, 1);
	return g_string_free(as.answer, FALSE);
}

/*
 * A process of another user holding n connections open without a word, as
 * a peer that means to keep others out does, until hold_release().
 */
struct holder {
	pid_t pid;
	int release;
};

static struct holder hold_as(const char *path, uid_t uid, gid_t gid,
			     unsigned int n)
{
	int ready[2], release[2];
	struct holder h;
	char c;

	g_assert_cmpint(pipe(ready), ==, 0);
	g_assert_cmpint(pipe(release), ==, 0);
	h.pid = fork();
	g_assert_cmpint(h.pid, >=, 0);
	if (h.pid == 0) {
		close(ready[0]);
		close(release[1]);
		if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
			_exit(2);
		for (unsigned int i = 0; i < n; i++)
			if (connect_to(path) < 0)
				_exit(3);
		if (write(ready[1], "r", 1) != 1 || read(release[0], &c, 1) < 0)
			_exit(4);
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	/* The daemon's loop accepts them meanwhile. */
	for (;;) {
		struct pollfd p = { .fd = ready[0], .events = POLLIN };

		while (g_main_context_iteration(NULL, FALSE))
			;
		if (poll(&p, 1, 10) > 0)
			break;
	}
	g_assert_cmpint(read(ready[0], &c, 1), ==, 1);
	close(ready[0]);
	for (unsigned int i = 0; i < 20; i++) {
		while (g_main_context_iteration(NULL, FALSE))
			;
		g_usleep(5000);
	}
	h.release = release[1];
	return h;
}

static void hold_release(struct holder h)
{
	int status;

	close(h.release);
	g_assert_cmpint(waitpid(h.pid, &status, 0), ==, h.pid);
	g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Let others reach the socket file, so that only SO_PEERCRED decides. */
static void open_up(struct fixture *f)
{
	g_autofree char *run = g_path_get_dirname(f->path);

	g_assert_cmpint(chmod(f->dir, 0755), ==, 0);
	g_assert_cmpint(chmod(run, 0755), ==, 0);
}

static void test_peer_refused(struct fixture *f, gconstpointer unused)
{
	g_autofree char *answer = NULL;

	if (geteuid() != 0) {
		g_test_skip("needs root to connect as another user");
		return;
	}
	open_up(f);
	g_assert_cmpint(chmod(f->path, 0666), ==, 0);
	answer = ask_as(f->path, NOBODY, NOBODY, (gid_t)-1);
	g_assert_cmpstr(answer, ==,
			"error: permission denied: only root may use the "
			"control socket\n");
	/* Refused peers are closed at once: twenty of them hold nothing. */
	{
		struct holder h = hold_as(f->path, NOBODY, NOBODY, 20);
		struct exchange ex = { .path = f->path, .send = "list\n" };

		run_exchanges(&ex, 1);
		g_assert_cmpstr(ex.answer->str, ==, LIST_TEXT);
		g_string_free(ex.answer, TRUE);
		hold_release(h);
	}
}

/*
 * A peer that may use the socket (here the control group's) holding every
 * slot without a word keeps root out for no time: root has slots of its
 * own, and the silent ones end after the request deadline.
 */
static void test_slots_for_root(struct fixture *f, gconstpointer unused)
{
	struct holder h;
	g_autofree char *busy = NULL;

	if (geteuid() != 0) {
		g_test_skip("needs root to connect as another user");
		return;
	}
	open_up(f);
	h = hold_as(f->path, NOBODY, NOBODY, 16);
	busy = ask_as(f->path, NOBODY, NOBODY, (gid_t)-1);
	g_assert_cmpstr(busy, ==,
			"error: busy: too many control connections; try "
			"again\n");
	{
		struct exchange ex = { .path = f->path, .send = "list\n" };

		run_exchanges(&ex, 1);
		g_assert_cmpstr(ex.answer->str, ==, LIST_TEXT);
		g_string_free(ex.answer, TRUE);
	}
	hold_release(h);
}

/*
 * Every slot held by silent connections, 16 of another user and root's 4
 * of its own: root is served at once all the same (not after the request
 * deadline), in the slot of the other user's oldest.
 */
static void test_root_never_busy(struct fixture *f, gconstpointer unused)
{
	struct exchange ex = { .path = f->path, .send = "list\n" };
	int own[4];
	struct holder h;

	if (geteuid() != 0) {
		g_test_skip("needs root to connect as another user");
		return;
	}
	open_up(f);
	h = hold_as(f->path, NOBODY, NOBODY, 16);
	for (unsigned int i = 0; i < G_N_ELEMENTS(own); i++) {
		g_assert_cmpint((own[i] = connect_to(f->path)), >=, 0);
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	run_exchanges(&ex, 1);
	g_assert_cmpstr(ex.answer->str, ==, LIST_TEXT);
	g_assert_cmpint(ex.elapsed_us, <, 500 * 1000);
	g_string_free(ex.answer, TRUE);
	for (unsigned int i = 0; i < G_N_ELEMENTS(own); i++) {
		g_autofree char *said = told(own[i]);

		g_assert_cmpstr(said, ==, "");
		close(own[i]);
	}
	hold_release(h);
}

static void test_group(struct fixture *f, gconstpointer unused)
{
	g_autofree char *member = NULL;
	g_autofree char *supplementary = NULL;
	g_autofree char *stranger = NULL;
	g_autofree char *refusal = NULL;
	struct group *gr = getgrgid(NOBODY);
	struct stat st;

	if (geteuid() != 0) {
		g_test_skip("needs root to give the socket a group");
		return;
	}
	g_assert_cmpint(lstat(f->path, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 07777, ==, 0660);
	g_assert_cmpuint(st.st_gid, ==, NOBODY);
	open_up(f);
	/* Through the group's permission on the file, then SO_PEERCRED. */
	member = ask_as(f->path, NOBODY, NOBODY, (gid_t)-1);
	g_assert_cmpstr(member, ==, LIST_TEXT);
	/* A member the usual way, by a supplementary group. */
	supplementary = ask_as(f->path, NOBODY, NOBODY - 1, NOBODY);
	g_assert_cmpstr(supplementary, ==, LIST_TEXT);
	/* Neither root nor of the group: the file's mode stops it first. */
	stranger = ask_as(f->path, NOBODY, NOBODY - 1, (gid_t)-1);
	g_assert_cmpstr(stranger, ==, "connect: Permission denied");
	/* And SO_PEERCRED when the file's mode would let it through. */
	g_assert_cmpint(chmod(f->path, 0666), ==, 0);
	g_free(stranger);
	stranger = ask_as(f->path, NOBODY, NOBODY - 1, NOBODY - 2);
	if (gr)
		refusal = g_strdup_printf("error: permission denied: only root "
					  "(or group %s) may use the control "
					  "socket\n",
					  gr->gr_name);
	else
		refusal = g_strdup_printf("error: permission denied: only root "
					  "(or group %u) may use the control "
					  "socket\n",
					  NOBODY);
	g_assert_cmpstr(stranger, ==, refusal);
}

/* Run cusemuctl in a thread while this one serves the socket. */
struct ctl_run {
	char **argv;
	char *out;
	char *err;
	int status;
	gint done;
};

static gpointer ctl_thread(gpointer data)
{
	struct ctl_run *run = data;
	g_autoptr(GError) error = NULL;

	g_assert_true(g_spawn_sync(NULL, run->argv, NULL, G_SPAWN_DEFAULT,
				   NULL, NULL, &run->out, &run->err,
				   &run->status, &error));
	g_assert_no_error(error);
	g_atomic_int_set(&run->done, 1);
	g_main_context_wakeup(NULL);
	return NULL;
}

/* cusemuctl ARGS...: exit status, stdout and stderr. */
static int ctl(const char *path, char **out, char **err, ...)
{
	const char *ctl_path = g_getenv("CUSEMUCTL");
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	struct ctl_run run = { 0 };
	const char *arg;
	GThread *thread;
	gint *done = &run.done;
	va_list args;

	g_ptr_array_add(argv, (char *)ctl_path);
	g_ptr_array_add(argv, "--socket");
	g_ptr_array_add(argv, (char *)path);
	va_start(args, err);
	while ((arg = va_arg(args, const char *)))
		g_ptr_array_add(argv, (char *)arg);
	va_end(args);
	g_ptr_array_add(argv, NULL);
	run.argv = (char **)argv->pdata;
	thread = g_thread_new("cusemuctl", ctl_thread, &run);
	serve_until_done(&thread, &done, 1);
	*out = run.out;
	*err = run.err;
	if (WIFEXITED(run.status))
		return WEXITSTATUS(run.status);
	return -1;
}

#define CTL_EXPECT(f, status, out, err, ...)                               \
	do {                                                               \
		g_autofree char *o_ = NULL;                                \
		g_autofree char *e_ = NULL;                                \
		g_assert_cmpint(ctl((f)->path, &o_, &e_, __VA_ARGS__, NULL), \
				==, status);                               \
		g_assert_cmpstr(o_, ==, out);                              \
		g_assert_cmpstr(e_, ==, err);                              \
	} while (0)

/* A bad command line: the message, then a pointer to --help. */
#define CTL_EXPECT_USAGE(f, message, ...)                                  \
	do {                                                               \
		g_autofree char *o_ = NULL;                                \
		g_autofree char *e_ = NULL;                                \
		g_assert_cmpint(ctl((f)->path, &o_, &e_, __VA_ARGS__, NULL), \
				==, 1);                                    \
		g_assert_cmpstr(o_, ==, "");                               \
		g_assert_true(g_str_has_prefix(e_, message "\nTry '"));    \
		g_assert_true(g_str_has_suffix(e_, "cusemuctl --help'.\n")); \
	} while (0)

/* cusemuctl add and remove: one argument each, sent as it is. */
static void test_cusemuctl_add_remove(struct fixture *f, gconstpointer unused)
{
	if (!g_getenv("CUSEMUCTL")) {
		g_test_skip("CUSEMUCTL is not set to the built cusemuctl");
		return;
	}
	CTL_EXPECT(f, 0, "added rtc:name=rtc9,kernel=2.6.11\n", "", "add",
		   "rtc:name=rtc9,kernel=2.6.11");
	g_assert_cmpstr(f->stub.added, ==, "rtc:name=rtc9,kernel=2.6.11");
	CTL_EXPECT(f, 1, "", "cusemuctl: unknown device model 'BAD'\n", "add",
		   "BAD");
	CTL_EXPECT(f, 1, "",
		   "cusemuctl: add takes one argument, MODEL[:key=value,...], "
		   "e.g. add 'rtc:name=rtc9,mode=0660'\n",
		   "add", "rtc", "fioc");
	CTL_EXPECT(f, 0, "removed /dev/rtc9\n", "", "remove", "/dev/rtc9");
	g_assert_cmpstr(f->stub.removed, ==, "/dev/rtc9");
	CTL_EXPECT(f, 1, "",
		   "cusemuctl: the node 'a b' cannot be sent: it is empty or "
		   "has blanks\n",
		   "remove", "a b");
	CTL_EXPECT(f, 1, "",
		   "cusemuctl: remove takes one argument, the NODE (a name "
		   "under /dev, with or without /dev/)\n",
		   "remove");
}

/*
 * record= of an add is opened by cusemuctl with its own rights and handed
 * over: the daemon gets that file, never a path to open itself.
 */
static void test_cusemuctl_hands_files(struct fixture *f,
				       gconstpointer unused)
{
	g_autofree char *rec = g_build_filename(f->dir, "r.rec", NULL);
	g_autofree char *spec = g_strdup_printf("fioc:record=%s", rec);
	g_autofree char *two = g_strdup_printf("fioc:record=%s,record=%s", rec,
					       rec);
	g_autofree char *nowhere = g_strdup_printf("fioc:record=%s/no/r.rec",
						   f->dir);
	g_autofree char *o = NULL, *e = NULL;
	struct stat st;

	if (!g_getenv("CUSEMUCTL")) {
		g_test_skip("CUSEMUCTL is not set to the built cusemuctl");
		return;
	}
	g_assert_cmpint(ctl(f->path, &o, &e, "add", spec, NULL), ==, 0);
	g_assert_cmpstr(f->stub.added, ==, spec);
	g_assert_cmpuint(f->stub.added_files, ==, 1);
	g_assert_cmpint(stat(rec, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & 07777, ==, 0600);
	g_assert_cmpuint(f->stub.added_ino, ==, st.st_ino);
	g_assert_true(f->stub.added_trusted == (geteuid() == 0 ||
						 geteuid() == getuid()));
	g_clear_pointer(&o, g_free);
	g_clear_pointer(&e, g_free);
	g_assert_cmpint(ctl(f->path, &o, &e, "add", two, NULL), ==, 0);
	g_assert_cmpuint(f->stub.added_files, ==, 2);
	/* What cusemuctl cannot open itself is not asked for. */
	f->stub.added[0] = 0;
	g_clear_pointer(&o, g_free);
	g_clear_pointer(&e, g_free);
	g_assert_cmpint(ctl(f->path, &o, &e, "add", nowhere, NULL), ==, 1);
	g_assert_nonnull(strstr(e, "does not exist"));
	g_assert_cmpstr(f->stub.added, ==, "");
	g_assert_cmpint(g_unlink(rec), ==, 0);
}

/* A refused add loses nothing: a file that was there keeps what it held,
 * one made for it is gone. */
static void test_cusemuctl_refused_files(struct fixture *f,
					 gconstpointer unused)
{
	g_autofree char *kept = g_build_filename(f->dir, "kept.rec", NULL);
	g_autofree char *made = g_build_filename(f->dir, "made.rec", NULL);
	g_autofree char *spec = g_strdup_printf("BAD:record=%s,record=%s",
						kept, made);
	g_autofree char *o = NULL, *e = NULL, *text = NULL;

	if (!g_getenv("CUSEMUCTL")) {
		g_test_skip("CUSEMUCTL is not set to the built cusemuctl");
		return;
	}
	g_assert_true(g_file_set_contents(kept, "an earlier recording\n", -1,
					  NULL));
	g_assert_cmpint(chmod(kept, 0600), ==, 0);
	g_assert_cmpint(ctl(f->path, &o, &e, "add", spec, NULL), ==, 1);
	g_assert_cmpuint(f->stub.added_files, ==, 2);
	g_assert_nonnull(strstr(e, "unknown device model 'BAD'"));
	g_assert_true(g_file_get_contents(kept, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "an earlier recording\n");
	g_assert_false(g_file_test(made, G_FILE_TEST_EXISTS));
	g_assert_cmpint(g_unlink(kept), ==, 0);
}

static void test_cusemuctl(struct fixture *f, gconstpointer unused)
{
	g_autofree char *missing = NULL;
	g_autofree char *help = NULL;
	g_autofree char *help_err = NULL;
	g_autofree char *quiet = NULL;

	if (!g_getenv("CUSEMUCTL")) {
		g_test_skip("CUSEMUCTL is not set to the built cusemuctl");
		return;
	}
	CTL_EXPECT(f, 0, LIST_TEXT, "", "list");
	CTL_EXPECT(f, 0, LIST_JSON, "", "--json", "list");
	CTL_EXPECT(f, 0, STATS_TEXT, "", "stats");
	CTL_EXPECT(f, 0, STATS_JSON "\n", "", "stats", "--json");
	CTL_EXPECT(f, 0, "statistics reset\n", "", "reset");
	g_assert_cmpint(f->stub.resets, ==, 1);

	CTL_EXPECT_USAGE(f, "cusemuctl: --json applies to list, stats and trace only",
			 "--json", "reset");
	/* trace: the lines as they come, until the daemon ends it. */
	CTL_EXPECT(f, 0, TRACE_LINES, "cusemuctl: cusemud ended the trace\n",
		   "--json", "trace", "fioc0");
	g_assert_cmpstr(f->stub.trace_nodes, ==, "fioc0");
	CTL_EXPECT(f, 1, "", "cusemuctl: no device nosuch here\n", "trace",
		   "nosuch");
	CTL_EXPECT_USAGE(f, "cusemuctl: --header applies to trace only",
			 "--header", "x.h", "list");
	CTL_EXPECT_USAGE(f, "cusemuctl: unknown command 'frob'; commands: "
			    "list, stats, reset, inject, replay, device, add, "
			    "remove, reload, trace",
			 "frob");
	CTL_EXPECT_USAGE(f, "cusemuctl: give one command: list, stats, "
			    "reset, inject, replay, device, add, remove, "
			    "reload or trace",
			 "list", "stats");
	f->stub.stats_error = EBUSY;
	CTL_EXPECT(f, 1, "", "cusemuctl: statistics are off\n", "stats");
	f->stub.stats_error_quiet = TRUE;
	quiet = g_strdup_printf("cusemuctl: %s\n", g_strerror(EBUSY));
	CTL_EXPECT(f, 1, "", quiet, "stats");
	g_assert_cmpint(f->stub.resets, ==, 1);

	{
		struct fixture gone = { .path = g_build_filename(
						f->dir, "nothing", NULL) };

		missing = g_strdup_printf(
			"cusemuctl: cannot reach cusemud at %s: No such file "
			"or directory; is cusemud running? (--socket PATH)\n",
			gone.path);
		CTL_EXPECT(&gone, 1, "", missing, "list");
		g_free(gone.path);
	}

	g_assert_cmpint(ctl(f->path, &help, &help_err, "--help", NULL), ==, 0);
	for (const char *const *word = (const char *const[]){
		     "list", "stats", "reset", "inject", "replay", "device",
		     "--socket", "--json",
		     CUSEMU_CONTROL_DEFAULT_PATH, "Exit status", NULL };
	     *word; word++)
		if (!strstr(help, *word))
			g_error("cusemuctl --help lacks '%s':\n%s", *word,
				help);
}

/* A daemon that says busy to its first connections, then answers. */
struct busy_daemon {
	int fd;			/* listening */
	unsigned int busy;	/* connections told busy before one is served */
	const char *answer;	/* what that one is told */
};

static gpointer busy_daemon_thread(gpointer data)
{
	struct busy_daemon *d = data;
	char buf[256];

	for (unsigned int i = 0; i <= d->busy; i++) {
		int conn = accept4(d->fd, NULL, NULL, SOCK_CLOEXEC);

		g_assert_cmpint(conn, >=, 0);
		if (i < d->busy) {
			g_assert_cmpint(send(conn, BUSY, strlen(BUSY),
					     MSG_NOSIGNAL), ==, strlen(BUSY));
		} else {
			g_assert_cmpint(recv(conn, buf, sizeof(buf), 0), >, 0);
			g_assert_cmpint(send(conn, d->answer, strlen(d->answer),
					     MSG_NOSIGNAL), ==,
					strlen(d->answer));
		}
		close(conn);
	}
	return NULL;
}

/* A busy daemon at f's directory, in a thread, until busy_daemon_end(). */
static GThread *busy_daemon_start(struct fixture *f, struct fixture *other,
				  struct busy_daemon *d)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	other->path = g_build_filename(f->dir, "busy", NULL);
	g_strlcpy(addr.sun_path, other->path, sizeof(addr.sun_path));
	d->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(d->fd, >=, 0);
	g_assert_cmpint(bind(d->fd, (struct sockaddr *)&addr, sizeof(addr)),
			==, 0);
	g_assert_cmpint(listen(d->fd, 4), ==, 0);
	return g_thread_new("busy-daemon", busy_daemon_thread, d);
}

static void busy_daemon_end(GThread *thread, struct fixture *other,
			    struct busy_daemon *d)
{
	g_thread_join(thread);
	close(d->fd);
	g_unlink(other->path);
	g_free(other->path);
}

/*
 * A busy daemon frees a slot within its deadlines: cusemuctl asks again
 * meanwhile, for a request as for a trace.
 */
static void test_cusemuctl_busy(struct fixture *f, gconstpointer unused)
{
	struct fixture other;
	struct busy_daemon d = { .busy = 3, .answer = LIST_TEXT };
	GThread *thread;

	if (!g_getenv("CUSEMUCTL")) {
		g_test_skip("CUSEMUCTL is not set to the built cusemuctl");
		return;
	}
	thread = busy_daemon_start(f, &other, &d);
	CTL_EXPECT(&other, 0, LIST_TEXT, "", "list");
	busy_daemon_end(thread, &other, &d);

	d = (struct busy_daemon){ .busy = 2, .answer = TRACE_LINES };
	thread = busy_daemon_start(f, &other, &d);
	CTL_EXPECT(&other, 0, TRACE_LINES, "cusemuctl: cusemud ended the trace\n",
		   "--json", "trace", "fioc0");
	busy_daemon_end(thread, &other, &d);
}

/* inject, replay and device: "device NODE WORDS..." requests. */
static void test_cusemuctl_device(struct fixture *f, gconstpointer unused)
{
	g_autofree char *events = g_build_filename(f->dir, "events", NULL);
	g_autofree char *bad = g_build_filename(f->dir, "bad", NULL);
	g_autofree char *bad_err = NULL;
	gint64 start;

	if (!g_getenv("CUSEMUCTL")) {
		g_test_skip("CUSEMUCTL is not set to the built cusemuctl");
		return;
	}
	/* A negative value is a word, not an option. */
	CTL_EXPECT(f, 0, "ok\n", "", "inject", "/dev/event-m", "EV_REL",
		   "REL_X", "-5", "EV_REL", "REL_Y", "2");
	g_assert_cmpstr(f->stub.device_words, ==,
			"/dev/event-m inject EV_REL REL_X -5 EV_REL REL_Y 2");
	CTL_EXPECT(f, 1, "", "cusemuctl: unknown code BAD\n", "inject",
		   "event-kbd", "EV_KEY", "BAD", "1");
	CTL_EXPECT(f, 1, "", "cusemuctl: inject takes NODE and events as "
			     "TYPE CODE VALUE, e.g. inject event-kbd EV_KEY "
			     "KEY_A 1; see cusemuctl --help\n",
		   "inject", "event-kbd", "EV_KEY", "KEY_A");
	CTL_EXPECT(f, 0, "ok\n", "", "device", "event-kbd", "frob", "1");
	g_assert_cmpstr(f->stub.device_words, ==, "event-kbd frob 1");
	CTL_EXPECT_USAGE(f, "cusemuctl: --json applies to list, stats and trace only",
			 "--json", "device", "event-kbd", "frob");
	g_assert_cmpint(f->stub.device_requests, ==, 3);

	/* Two groups, the second 0.2 s after the start. */
	g_assert_true(g_file_set_contents(events,
					  "# a key press\n"
					  "0.0 EV_KEY KEY_A 1\n"
					  "0   EV_MSC MSC_SCAN 4\n"
					  "\n"
					  "0.2 EV_KEY KEY_A 0\n",
					  -1, NULL));
	start = g_get_monotonic_time();
	CTL_EXPECT(f, 0, "replayed 3 events in 2 groups\n", "", "replay",
		   "event-kbd", events);
	g_assert_cmpint(g_get_monotonic_time() - start, >=, 200000);
	g_assert_cmpint(f->stub.device_requests, ==, 5);
	g_assert_cmpstr(f->stub.device_words, ==, "event-kbd inject EV_KEY KEY_A 0");

	/* A malformed line: nothing is sent. */
	g_assert_true(g_file_set_contents(bad,
					  "0.0 EV_KEY KEY_A 1\n"
					  "0.1 EV_KEY KEY_A\n",
					  -1, NULL));
	bad_err = g_strdup_printf("cusemuctl: %s:2: want 'SECONDS TYPE CODE "
				  "VALUE', got '0.1 EV_KEY KEY_A'\n",
				  bad);
	CTL_EXPECT(f, 1, "", bad_err, "replay", "event-kbd", bad);
	g_assert_cmpint(f->stub.device_requests, ==, 5);

	/* Times that are not plain decimals, or past 30 days: nothing is
	 * sent, and the line is named. */
	for (guint i = 0; i < 5; i++) {
		static const char *const times[] = { "0x10", "1e3", "inf",
						     "nan", "99999999999" };
		g_autofree char *text = g_strdup_printf(
			"0 EV_KEY KEY_A 1\n%s EV_KEY KEY_A 0\n", times[i]);
		g_autofree char *err = NULL;

		g_assert_true(g_file_set_contents(bad, text, -1, NULL));
		err = g_strdup_printf("cusemuctl: %s:2: %s\n", bad,
			i == 4 ? "99999999999 s is past the 2592000 s (30 days) "
				 "a replay may last"
			       : NULL);
		if (i < 4) {
			g_free(err);
			err = g_strdup_printf("cusemuctl: %s:2: '%s' is not a "
					      "time in seconds (decimal digits "
					      "with an optional point, such as "
					      "0.25)\n", bad, times[i]);
		}
		CTL_EXPECT(f, 1, "", err, "replay", "event-kbd", bad);
	}
	/* A group too long for one request, found before anything is sent. */
	{
		g_autoptr(GString) text = g_string_new("0 EV_KEY KEY_A 1\n");
		g_autofree char *err = NULL;

		for (guint i = 0; i < 400; i++)
			g_string_append(text, "1 EV_KEY KEY_LEFTSHIFT 1\n");
		g_assert_true(g_file_set_contents(bad, text->str, -1, NULL));
		err = g_strdup_printf("cusemuctl: %s:2: the 400 events at 1 s "
				      "make a request longer than cusemud "
				      "takes (4095 bytes); spread them over "
				      "more times; nothing was sent\n", bad);
		CTL_EXPECT(f, 1, "", err, "replay", "event-kbd", bad);
	}
	g_assert_cmpint(f->stub.device_requests, ==, 5);
	g_assert_cmpint(g_unlink(events), ==, 0);
	g_assert_cmpint(g_unlink(bad), ==, 0);
}

static void add(const char *name, gid_t group,
		void (*func)(struct fixture *, gconstpointer))
{
	g_test_add(name, struct fixture, GUINT_TO_POINTER(group),
		   fixture_setup, func, fixture_teardown);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	cusemu_recording_register(false);
	add("/control/socket-file", (gid_t)-1, test_socket_file);
	add("/control/requests", (gid_t)-1, test_requests);
	add("/control/errors", (gid_t)-1, test_errors);
	add("/control/trace", (gid_t)-1, test_trace);
	add("/control/unknown", (gid_t)-1, test_unknown);
	add("/control/pieces", (gid_t)-1, test_pieces);
	add("/control/overlong", (gid_t)-1, test_overlong);
	add("/control/silent-client", (gid_t)-1, test_silent_client);
	add("/control/busy", (gid_t)-1, test_busy);
	g_test_add_func("/control/stale-and-taken", test_stale_and_taken);
	g_test_add_func("/control/private-dir", test_private_dir);
	add("/control/peer-refused", (gid_t)-1, test_peer_refused);
	add("/control/slots-for-root", NOBODY, test_slots_for_root);
	add("/control/root-never-busy", NOBODY, test_root_never_busy);
	add("/control/group", NOBODY, test_group);
	add("/control/cusemuctl", (gid_t)-1, test_cusemuctl);
	add("/control/cusemuctl-device", (gid_t)-1, test_cusemuctl_device);
	add("/control/cusemuctl-busy", (gid_t)-1, test_cusemuctl_busy);
	add("/control/add-remove", (gid_t)-1, test_add_remove);
	add("/control/cusemuctl-add-remove", (gid_t)-1,
	    test_cusemuctl_add_remove);
	add("/control/cusemuctl-hands-files", (gid_t)-1,
	    test_cusemuctl_hands_files);
	add("/control/cusemuctl-refused-files", (gid_t)-1,
	    test_cusemuctl_refused_files);
	return g_test_run();
}
