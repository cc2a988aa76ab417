/* SPDX-License-Identifier: MIT */
/*
 * cusemuctl: asks a running cusemud, over its control socket, for its
 * devices and statistics, or to reset the statistics; passes requests to
 * a device model ("device NODE WORDS..."), such as input events to inject,
 * one group at once or replayed from a timed list; adds and removes
 * devices at run time.
 */
#define G_LOG_DOMAIN "cusemuctl"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>

#include "layout.h"
#include "config.h"
#include "control.h"
#include "private-file.h"
#include "trace-print.h"

/* A daemon that does not answer in this time is stuck, not busy. */
#define ANSWER_TIMEOUT_S 10
/* add waits for the kernel's node (up to 10 s), remove for the calls
 * running through the device's ioctl32 entries. */
#define HOTPLUG_TIMEOUT_S 60

static int answer_timeout_s = ANSWER_TIMEOUT_S;

/* The longest request line the daemon reads, without its '\n'. */
#define REQUEST_MAX 4095

#define SUMMARY                                                              \
	"Ask a running cusemud about its devices and statistics, or pass\n" \
	"requests to its device models.\n"                                   \
	"\n"                                                                 \
	"Commands:\n"                                                        \
	"  list    the devices (node, device model and the plugin it\n"    \
	"          came from, kernel model, lock), every device model,\n" \
	"          the worker pool and the daemon's sandbox\n"             \
	"  stats   per device, per command and ABI (native or compat):\n"   \
	"          calls, retries (round trips), errors by errno, lock\n"   \
	"          acquisitions, contended ones, wait and hold times\n"     \
	"          and per device, open, read, write, poll and release:\n" \
	"          calls, time, errors by errno\n"                          \
	"  reset   set every statistic back to zero\n"                      \
	"  trace [NODE...]\n"                                                \
	"          a line per request on those devices (all without NODE)\n" \
	"          as it is answered, until interrupted: time, node, caller\n" \
	"          pid and program, operation, command and ABI, payload,\n"  \
	"          round trips, result and duration; --json gives the\n"    \
	"          daemon's JSON lines, --header decodes ioctl payloads\n"  \
	"  inject NODE TYPE CODE VALUE [TYPE CODE VALUE...]\n"              \
	"          input events for an evdev device, e.g.\n"                 \
	"          'inject event-kbd EV_KEY KEY_A 1': names or numbers; the\n" \
	"          device checks them and ends the group with SYN_REPORT\n"  \
	"  replay NODE [FILE]\n"                                             \
	"          inject the events of FILE (standard input when absent or\n" \
	"          '-'), one per line as 'SECONDS TYPE CODE VALUE', SECONDS\n" \
	"          a decimal (0.25) counted from the start of the replay,\n" \
	"          never going back, at most 30 days; lines with the same\n" \
	"          SECONDS form one group. Blank lines and lines starting\n" \
	"          with '#' are skipped. The whole file, and the size of\n" \
	"          each group, is checked before anything is sent; a group the\n"  \
	"          daemon refuses ends the replay. Says 'replayed N events\n" \
	"          in M groups'\n"                                          \
	"  device NODE WORDS...\n"                                           \
	"          pass 'device NODE WORDS...' to the model of NODE (a name\n" \
	"          under /dev, with or without /dev/) and print its answer\n" \
	"  add MODEL[:key=value,...]\n"                                     \
	"          create a device in the running daemon, as its --device\n" \
	"          would: a new node (a new file on a --fuse mount), with\n" \
	"          the same keys and checks; says where it serves\n"        \
	"  remove NODE\n"                                                   \
	"          take a device away: its node (or file) goes, its open\n" \
	"          files fail from then on, and its model is stopped once\n" \
	"          no call is inside it\n"                                  \
	"  reload NODE\n"                                                    \
	"          a fresh instance of NODE's device: its plugin loaded\n"   \
	"          again if the file was rebuilt, the node kept; files\n"     \
	"          opened before get ENODEV; a fenced device serves again"

#define DESCRIPTION                                                          \
	"cusemuctl talks to cusemud over its control socket: by default\n"  \
	CUSEMU_CONTROL_DEFAULT_PATH " as root; as another user, where that\n" \
	"user's cusemud --fuse listens, $XDG_RUNTIME_DIR/cusemu/control,\n" \
	"or /tmp/cusemu-UID/control without XDG_RUNTIME_DIR.\n"           \
	"Yours: %s\n"                                                        \
	"Only root, the daemon's own user and members of the group given\n" \
	"to cusemud with --control-group may use it. -s, --socket PATH is\n" \
	"the older name of --control PATH.\n"                                \
	"\n"                                                                 \
	"Exit status: 0 on success, 1 on any error, the daemon's error\n"  \
	"answers included.\n"

static const char *const commands[] = { "list",   "stats",  "reset",
					"inject", "replay", "device",
					"add",	  "remove", "reload",
					"trace" };

/* Commands whose arguments follow them, and are not options. */
static const char *const commands_with_args[] = { "inject", "replay",
						  "device", "add", "remove",
						  "reload" };

static char *socket_path;
static const char *socket_option = "--control";	/* the one given */
static gboolean json;
static gboolean version;
static char **headers;

static gboolean on_socket(const char *name, const char *value, gpointer data,
			  GError **error)
{
	g_free(socket_path);
	socket_path = g_strdup(value);
	/* name is glib's for the call: keep a constant. */
	if (!strcmp(name, "--socket"))
		socket_option = "--socket";
	else if (!strcmp(name, "-s"))
		socket_option = "-s";
	else
		socket_option = "--control";
	return TRUE;
}

static const GOptionEntry entries[] = {
	{ "control", 0, G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK,
	  on_socket,
	  "Control socket of cusemud (default: " CUSEMU_CONTROL_DEFAULT_PATH
	  " as root, else $XDG_RUNTIME_DIR/cusemu/control or "
	  "/tmp/cusemu-UID/control)",
	  "PATH" },
	/* Its older name, in many scripts. */
	{ "socket", 's', G_OPTION_FLAG_FILENAME | G_OPTION_FLAG_HIDDEN,
	  G_OPTION_ARG_CALLBACK, on_socket, NULL, "PATH" },
	{ "json", 'j', 0, G_OPTION_ARG_NONE, &json,
	  "Answer list and stats as one JSON document; trace as JSON lines",
	  NULL },
	{ "header", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &headers,
	  "With trace: decode ioctl payloads member by member by the "
	  "layouts of this uapi header, for both ABIs (repeatable)",
	  "FILE" },
	{ "version", 'V', 0, G_OPTION_ARG_NONE, &version,
	  "Print the version and exit", NULL },
	G_OPTION_ENTRY_NULL
};

static void close_fdp(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define autoclose __attribute__((cleanup(close_fdp)))

static int fail(const char *format, ...) G_GNUC_PRINTF(1, 2);

static int fail(const char *format, ...)
{
	va_list args;

	fputs("cusemuctl: ", stderr);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	return EXIT_FAILURE;
}

/* Say why the daemon cannot be reached, and what to do about it. */
static int fail_connect(const char *path, int err)
{
	switch (err) {
	case ENOENT:
	case ECONNREFUSED:
		return fail("cannot reach cusemud at %s: %s; is cusemud "
			    "running? (%s PATH)",
			    path, g_strerror(err), socket_option);
	case EACCES:
	case EPERM:
		return fail("cannot reach cusemud at %s: %s; run as root or as "
			    "a member of cusemud's control group "
			    "(cusemud --control-group)",
			    path, g_strerror(err));
	default:
		return fail("cannot reach cusemud at %s: %s", path,
			    g_strerror(err));
	}
}

/*
 * Whether the process that answers at path may: root, our own user, or,
 * for a socket named with --control, the socket file's owner. At the
 * default path (our uid's directory) only root or we may answer: anyone
 * else got there by taking the directory over. Says why not.
 */
static gboolean peer_trusted(int fd, const char *path)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct stat st;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		fail("cusemud at %s: cannot learn who answers: %s", path,
		     g_strerror(errno));
		return FALSE;
	}
	if (cred.uid == 0 || cred.uid == geteuid())
		return TRUE;
	if (socket_path && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_uid == cred.uid)
		return TRUE;
	fail("the process answering at %s runs as uid %u, which is neither "
	     "root, you (uid %u) nor the socket's owner: another user may have "
	     "taken over its directory; not talking to it. Check who owns %s's "
	     "directory (it must be yours, mode 0700), remove it and start "
	     "cusemud again, or give the socket with %s PATH",
	     path, (unsigned int)cred.uid, (unsigned int)geteuid(), path,
	     socket_option);
	return FALSE;
}

/*
 * A connection to the daemon at path, or -1 with *err an errno to report
 * (fail_connect), or 0 when the reason was said already.
 */
static int connect_daemon(const char *path, int *err)
{
	autoclose int fd = -1;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval timeout = { .tv_sec = answer_timeout_s };

	if (strlen(path) >= sizeof(addr.sun_path)) {
		*err = ENAMETOOLONG;
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout,
		       sizeof(timeout)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout,
		       sizeof(timeout)) < 0 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		*err = errno;
		return -1;
	}
	*err = 0;
	if (!peer_trusted(fd, path))
		return -1;
	return g_steal_fd(&fd);
}

static gboolean send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return FALSE;
		buf += n;
		len -= n;
	}
	return TRUE;
}

/*
 * The whole answer: the daemon closes the connection after it. A daemon
 * that refuses the connection at once resets it once its answer is read.
 */
static gboolean receive_all(int fd, GString *answer)
{
	char buf[8192];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ECONNRESET && answer->len)
			return TRUE;
		if (n < 0)
			return FALSE;
		if (n == 0)
			return TRUE;
		g_string_append_len(answer, buf, n);
	}
}

/*
 * The files a request names, opened here with this user's rights and
 * handed over with it (SCM_RIGHTS): the daemon never opens them itself.
 */
struct handed {
	int fds[CUSEMU_CONTROL_MAX_FDS];
	unsigned int n;
	/* The files opened here for them, and which of those were made here:
	 * what a refused request leaves behind is removed. */
	char *paths[CUSEMU_CONTROL_MAX_FDS];
	bool made[CUSEMU_CONTROL_MAX_FDS];
	bool refused;
};

/* The first bytes of a request, with the files handed over on them. */
static gboolean send_with_files(int fd, const char *buf, size_t len,
				const struct handed *files)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CUSEMU_CONTROL_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *h;
	ssize_t n;

	if (!files || !files->n)
		return send_all(fd, buf, len);
	memset(&control, 0, sizeof(control));
	msg.msg_control = control.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * files->n);
	h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int) * files->n);
	memcpy(CMSG_DATA(h), files->fds, sizeof(int) * files->n);
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return FALSE;
	return send_all(fd, buf + n, len - (size_t)n);
}

/* One request and its answer, as exchange(). */
static int exchange_once(const char *path, const char *request,
			 const struct handed *files, GString *answer)
{
	g_autofree char *line = g_strconcat(request, "\n", NULL);
	autoclose int fd = -1;
	int err;

	fd = connect_daemon(path, &err);
	if (fd < 0)
		return err ? fail_connect(path, err) : EXIT_FAILURE;
	/* A daemon too busy to serve says so and closes before reading:
	 * its answer is still there to read. */
	if (!send_with_files(fd, line, strlen(line), files) &&
	    errno != EPIPE && errno != ECONNRESET)
		return fail("sending to cusemud at %s: %s", path,
			    g_strerror(errno));
	if (!receive_all(fd, answer)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return fail("cusemud at %s did not answer within %d s",
				    path, answer_timeout_s);
		return fail("reading the answer of cusemud at %s: %s", path,
			    g_strerror(errno));
	}
	if (!answer->len)
		return fail("cusemud at %s closed the connection without an "
			    "answer",
			    path);
	return EXIT_SUCCESS;
}

static gboolean is_error(const GString *answer)
{
	return g_str_has_prefix(answer->str, "error: ");
}

/*
 * A daemon whose connections are all taken frees one within its request
 * and answer deadlines (1 s, then 2 s for a peer that does not read): so
 * long a busy daemon is asked again, a pause apart.
 */
#define BUSY_WAIT_MS 3500
#define BUSY_PAUSE_MS 100

/*
 * Send one request and read the whole answer. Failing to talk to the
 * daemon is said here; an answer starting with "error: " is the caller's.
 */
static int exchange_files(const char *path, const char *request,
			  const struct handed *files, GString *answer)
{
	gint64 end = g_get_monotonic_time() + BUSY_WAIT_MS * 1000;

	for (;;) {
		int ret = exchange_once(path, request, files, answer);

		if (ret != EXIT_SUCCESS ||
		    !g_str_has_prefix(answer->str, "error: busy: ") ||
		    g_get_monotonic_time() >= end)
			return ret;
		g_string_truncate(answer, 0);
		g_usleep(BUSY_PAUSE_MS * 1000);
	}
}

static int exchange(const char *path, const char *request, GString *answer)
{
	return exchange_files(path, request, NULL, answer);
}

/* The daemon's error answer, as "cusemuctl: PREFIX...". */
static int fail_answer(const GString *answer, const char *prefix)
{
	fprintf(stderr, "cusemuctl: %s%s", prefix,
		answer->str + strlen("error: "));
	if (answer->str[answer->len - 1] != '\n')
		fputc('\n', stderr);
	return EXIT_FAILURE;
}

static int ask_files(const char *path, const char *request,
		     struct handed *files)
{
	g_autoptr(GString) answer = g_string_new(NULL);
	int status = exchange_files(path, request, files, answer);

	if (status != EXIT_SUCCESS)
		return status;
	if (is_error(answer)) {
		if (files)
			files->refused = true;
		return fail_answer(answer, "");
	}
	if (fwrite(answer->str, 1, answer->len, stdout) != answer->len ||
	    fflush(stdout) != 0)
		return fail("writing the answer: %s", g_strerror(errno));
	return EXIT_SUCCESS;
}

static int ask(const char *path, const char *request)
{
	return ask_files(path, request, NULL);
}

static gboolean in_list(const char *const *list, gsize n, const char *word)
{
	for (gsize i = 0; i < n; i++)
		if (!strcmp(list[i], word))
			return TRUE;
	return FALSE;
}

/*
 * Where the arguments of inject, replay or device start in argv, so that
 * they are not taken for options ("EV_REL REL_X -5"); argc when the
 * command is another or absent.
 */
static int command_args_start(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-s") || !strcmp(argv[i], "--socket") ||
		    !strcmp(argv[i], "--control")) {
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			continue;
		if (in_list(commands_with_args, G_N_ELEMENTS(commands_with_args),
			    argv[i]))
			return i + 1;
		break;
	}
	return argc;
}

/* A word that fits in one request word: no blanks, no control bytes. */
static gboolean plain_word(const char *word)
{
	if (!*word)
		return FALSE;
	for (const char *c = word; *c; c++)
		if (g_ascii_isspace(*c) || g_ascii_iscntrl(*c))
			return FALSE;
	return TRUE;
}

/* "device NODE WORDS...", or NULL after saying what is wrong. */
static char *device_request(const char *node, char **words, int n)
{
	GString *request = g_string_new("device ");

	if (!plain_word(node)) {
		fail("the node '%s' cannot be sent: it is empty or has blanks",
		     node);
		return g_string_free(request, TRUE);
	}
	g_string_append(request, node);
	for (int i = 0; i < n; i++) {
		if (!plain_word(words[i])) {
			fail("the word '%s' cannot be sent: it is empty or "
			     "has blanks",
			     words[i]);
			return g_string_free(request, TRUE);
		}
		g_string_append_printf(request, " %s", words[i]);
	}
	if (request->len > REQUEST_MAX) {
		fail("the request is %zu bytes long; cusemud takes at most %d",
		     request->len, REQUEST_MAX);
		return g_string_free(request, TRUE);
	}
	return g_string_free(request, FALSE);
}

static int run_device(const char *path, const char *node, char **words, int n)
{
	g_autofree char *request = device_request(node, words, n);

	return request ? ask(path, request) : EXIT_FAILURE;
}

static int run_inject(const char *path, char **args, int n)
{
	g_autofree char **words = NULL;

	if (n < 4 || (n - 1) % 3)
		return fail("inject takes NODE and events as TYPE CODE VALUE, "
			    "e.g. inject event-kbd EV_KEY KEY_A 1; see "
			    "cusemuctl --help");
	words = g_new(char *, n);
	words[0] = "inject";
	memcpy(words + 1, args + 1, (n - 1) * sizeof(*words));
	return run_device(path, args[0], words, n);
}

/* One group of the replay: the events that share a time. */
struct group {
	double seconds;
	guint line;		/* of its first event */
	guint events;
	GString *words;		/* "TYPE CODE VALUE TYPE CODE VALUE..." */
};

static void group_clear(gpointer data)
{
	struct group *g = data;

	g_string_free(g->words, TRUE);
}

/* The longest a replay may run, and so the latest time it may hold. */
#define REPLAY_MAX_SECONDS (30u * 24 * 3600)

/* "12", "0.25", ".5", "3.": a time as the replay format writes it. */
static gboolean decimal(const char *s)
{
	guint digits = 0, points = 0;

	for (; *s; s++) {
		if (g_ascii_isdigit(*s))
			digits++;
		else if (*s == '.' && !points++)
			continue;
		else
			return FALSE;
	}
	return digits > 0;
}

/* Read and check every line of a replay into groups; FALSE after saying
 * what is wrong (and on which line). */
static gboolean read_replay(const char *name, FILE *in, GArray *groups,
			    guint *events)
{
	g_autofree char *text = NULL;
	size_t size = 0;
	ssize_t len;
	guint line = 0;
	struct group *last = NULL;

	while ((len = getline(&text, &size, in)) >= 0) {
		g_auto(GStrv) fields = NULL;
		char *start = g_strstrip(text);
		char *end;
		double seconds;

		line++;
		if (!*start || *start == '#')
			continue;
		fields = g_strsplit_set(start, " \t", -1);
		{
			/* Runs of blanks split into empty fields: drop them. */
			guint kept = 0;

			for (guint i = 0; fields[i]; i++) {
				if (*fields[i])
					fields[kept++] = fields[i];
				else
					g_free(fields[i]);
			}
			fields[kept] = NULL;
		}
		if (g_strv_length(fields) != 4) {
			fail("%s:%u: want 'SECONDS TYPE CODE VALUE', got '%s'",
			     name, line, start);
			return FALSE;
		}
		/* Decimal digits and one point: strtod would also take
		 * 0x10 (16 s), 1e3 and inf. */
		errno = 0;
		seconds = g_ascii_strtod(fields[0], &end);
		if (!decimal(fields[0]) || errno || *end || seconds < 0) {
			fail("%s:%u: '%s' is not a time in seconds (decimal "
			     "digits with an optional point, such as 0.25)",
			     name, line, fields[0]);
			return FALSE;
		}
		if (seconds > REPLAY_MAX_SECONDS) {
			fail("%s:%u: %s s is past the %u s (30 days) a replay "
			     "may last",
			     name, line, fields[0], REPLAY_MAX_SECONDS);
			return FALSE;
		}
		if (last && seconds < last->seconds) {
			fail("%s:%u: %s s is before the %g s of line %u; times "
			     "count from the start and never go back",
			     name, line, fields[0], last->seconds, last->line);
			return FALSE;
		}
		for (guint i = 1; i < 4; i++) {
			if (!plain_word(fields[i])) {
				fail("%s:%u: '%s' cannot be sent", name, line,
				     fields[i]);
				return FALSE;
			}
		}
		if (!last || seconds != last->seconds) {
			struct group g = { .seconds = seconds, .line = line,
					   .words = g_string_new(NULL) };

			g_array_append_val(groups, g);
			last = &g_array_index(groups, struct group,
					      groups->len - 1);
		}
		g_string_append_printf(last->words, "%s%s %s %s",
				       last->words->len ? " " : "", fields[1],
				       fields[2], fields[3]);
		last->events++;
		(*events)++;
	}
	if (ferror(in)) {
		fail("reading %s: %s", name, g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

static int run_replay(const char *path, char **args, int n)
{
	g_autoptr(GArray) groups = g_array_new(FALSE, TRUE,
					       sizeof(struct group));
	const char *name = n == 2 ? args[1] : "-";
	gboolean from_stdin = !strcmp(name, "-");
	guint events = 0;
	gint64 start;
	FILE *in;
	gboolean read_ok;

	if (n < 1 || n > 2)
		return fail("replay takes NODE and at most one FILE; see "
			    "cusemuctl --help");
	if (!plain_word(args[0]))
		return fail("the node '%s' cannot be sent: it is empty or has "
			    "blanks",
			    args[0]);
	g_array_set_clear_func(groups, group_clear);
	in = from_stdin ? stdin : fopen(name, "r");
	if (!in)
		return fail("cannot open %s: %s", name, g_strerror(errno));
	read_ok = read_replay(from_stdin ? "standard input" : name, in, groups,
			      &events);
	if (!from_stdin)
		fclose(in);
	if (!read_ok)
		return EXIT_FAILURE;
	/* Every group fits a request before the first is sent. */
	for (guint i = 0; i < groups->len; i++) {
		struct group *g = &g_array_index(groups, struct group, i);
		size_t len = strlen("device ") + strlen(args[0]) +
			     strlen(" inject ") + g->words->len;

		if (len > REQUEST_MAX)
			return fail("%s:%u: the %u events at %g s make a "
				    "request longer than cusemud takes (%d "
				    "bytes); spread them over more times; "
				    "nothing was sent",
				    name, g->line, g->events, g->seconds,
				    REQUEST_MAX);
	}

	start = g_get_monotonic_time();
	for (guint i = 0; i < groups->len; i++) {
		struct group *g = &g_array_index(groups, struct group, i);
		g_autoptr(GString) answer = g_string_new(NULL);
		g_autofree char *request = NULL;
		g_autofree char *where = NULL;
		gint64 due = start + (gint64)(g->seconds * G_USEC_PER_SEC);
		gint64 now = g_get_monotonic_time();
		int status;

		request = g_strdup_printf("device %s inject %s", args[0],
					  g->words->str);
		if (due > now)
			g_usleep(due - now);
		status = exchange(path, request, answer);
		if (status != EXIT_SUCCESS)
			return status;
		if (is_error(answer)) {
			where = g_strdup_printf("%s:%u: ",
						from_stdin ? "standard input"
							   : name,
						g->line);
			return fail_answer(answer, where);
		}
	}
	printf("replayed %u events in %u groups\n", events, groups->len);
	if (fflush(stdout) != 0)
		return fail("writing: %s", g_strerror(errno));
	return EXIT_SUCCESS;
}

static void handed_clear(struct handed *files)
{
	for (unsigned int i = 0; i < files->n; i++) {
		if (files->refused && files->made[i])
			cusemu_private_file_unmake(files->paths[i],
						   files->fds[i]);
		close(files->fds[i]);
		g_free(files->paths[i]);
	}
}

/*
 * The files of an add's SPEC (cusemu_private_files_of_add: record=PATH,
 * and the model's files, NAME_file=PATH and file=PATH inside a value),
 * opened here with this user's rights (no symbolic link on the way, made
 * 0600 or a file of ours) and handed over in that order: the daemon uses
 * the files this user could, never one it finds by the path with its own
 * rights. A recording is opened for appending and emptied by the daemon
 * once the device has started; a model's file for reading and writing,
 * as it is. A refused add leaves an existing file as it was, and removes
 * one made here.
 */
static gboolean open_records(const char *spec, struct handed *files)
{
	g_autoptr(GPtrArray) named = cusemu_private_files_of_add(spec);

	for (guint i = 0; i < named->len; i++) {
		g_autoptr(GError) error = NULL;
		const char *what = named->pdata[i];
		bool record = what[0] == 'r';
		const char *path = what + 1;
		int fd;

		if (files->n == CUSEMU_CONTROL_MAX_FDS) {
			fail("more than %d files named (record= and the "
			     "model's files)",
			     CUSEMU_CONTROL_MAX_FDS);
			return FALSE;
		}
		fd = cusemu_private_file_open(path,
					      record ? CUSEMU_PRIVATE_KEEP
						     : CUSEMU_PRIVATE_MODEL,
					      &files->made[files->n], &error);
		if (fd < 0) {
			fail(record ? "cannot record to %s: %s"
				    : "cannot open %s for the model: %s",
			     path, error->message);
			return FALSE;
		}
		files->paths[files->n] = g_strdup(path);
		files->fds[files->n++] = fd;
	}
	return TRUE;
}

/* "add SPEC", "remove NODE" or "reload NODE": one argument, sent as it
 * is; the daemon may take long (a probe, 32-bit calls to wait for). */
static int run_hotplug(const char *path, const char *command, char **args,
		       int n)
{
	g_autofree char *request = NULL;
	gboolean add = !strcmp(command, "add");
	struct handed files = { .n = 0 };
	int status;

	if (n != 1 && add)
		return fail("add takes one argument, MODEL[:key=value,...], "
			    "e.g. add 'rtc:name=rtc9,mode=0660'");
	if (n != 1)
		return fail("%s takes one argument, the NODE (a name under "
			    "/dev, with or without /dev/)",
			    command);
	if (add ? !*args[0] || strpbrk(args[0], "\n\r")
		: !plain_word(args[0]))
		return fail("the %s '%s' cannot be sent: it is empty or has "
			    "%s",
			    add ? "device" : "node", args[0],
			    add ? "a line break" : "blanks");
	request = g_strdup_printf("%s %s", command, args[0]);
	if (strlen(request) > REQUEST_MAX)
		return fail("the request is %zu bytes long; cusemud takes at "
			    "most %d",
			    strlen(request), REQUEST_MAX);
	if (add && !open_records(args[0], &files)) {
		handed_clear(&files);
		return EXIT_FAILURE;
	}
	answer_timeout_s = HOTPLUG_TIMEOUT_S;
	status = ask_files(path, request, &files);
	handed_clear(&files);
	return status;
}

/* The commands of --header, laid out for both ABIs, or FALSE. */
static gboolean probe_trace_headers(GPtrArray **layouts)
{
	const char *cc = g_getenv("CC");
	g_auto(GStrv) cc_argv = NULL;
	g_autoptr(GPtrArray) cflags = g_ptr_array_new();
	g_autoptr(GPtrArray) given = g_ptr_array_new();
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	struct probe_options o = { .cflags = cflags };

	if (!cc || !*cc || !g_shell_parse_argv(cc, NULL, &cc_argv, NULL))
		cc_argv = g_strsplit("gcc", " ", -1);
	o.cc = cc_argv;
	if (!probe_headers(&o, headers, given, layouts, notes, &error)) {
		fail("--header: %s", error->message);
		return FALSE;
	}
	if (!(*layouts)->len)
		fprintf(stderr, "cusemuctl: --header: no command defined with "
				"_IO, _IOR, _IOW or _IOWR; payloads are shown "
				"as ranges\n");
	return TRUE;
}

/* One line of the trace (with its '\n') onto out, as asked. */
static void trace_line(GString *out, const char *line, GPtrArray *layouts)
{
	if (json)
		g_string_append(out, line);
	else if (!cusemu_trace_print(out, line, layouts))
		g_string_append_printf(out, "? %s", line);
}

/*
 * Lines of the trace until the daemon ends it, as they come or decoded:
 * what one read brings is written out at once, so a busy trace costs a
 * write per read, not per line.
 */
static int print_trace(int fd, const char *path, GPtrArray *layouts)
{
	g_autoptr(GString) pending = g_string_new(NULL);
	g_autoptr(GString) out = g_string_new(NULL);
	gboolean first = TRUE;
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		char *start, *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("reading the trace from cusemud at %s: %s",
				    path, g_strerror(errno));
		g_string_append_len(pending, buf, n);
		if (first && g_str_has_prefix(pending->str, "error: ") &&
		    strchr(pending->str, '\n')) {
			fprintf(stderr, "cusemuctl: %s", pending->str + 7);
			return EXIT_FAILURE;
		}
		start = pending->str;
		while ((end = strchr(start, '\n'))) {
			char saved = end[1];

			if (first && !json)
				fprintf(stderr, "cusemuctl: tracing; interrupt "
						"to stop\n");
			first = FALSE;
			end[1] = '\0';
			trace_line(out, start, layouts);
			end[1] = saved;
			start = end + 1;
		}
		g_string_erase(pending, 0, start - pending->str);
		if (fwrite(out->str, 1, out->len, stdout) != out->len ||
		    fflush(stdout) != 0)
			return fail("writing: %s", g_strerror(errno));
		g_string_truncate(out, 0);
	}
	if (first)
		return fail("cusemud at %s closed the connection without an "
			    "answer",
			    path);
	fprintf(stderr, "cusemuctl: cusemud ended the trace\n");
	return EXIT_SUCCESS;
}

/* "trace NODE...", or NULL after saying what is wrong. */
static char *trace_request(char **nodes, int n)
{
	g_autoptr(GString) request = g_string_new("trace");

	for (int i = 0; i < n; i++) {
		if (!plain_word(nodes[i])) {
			fail("the node '%s' cannot be sent: it is empty or "
			     "has blanks",
			     nodes[i]);
			return NULL;
		}
		g_string_append_printf(request, " %s", nodes[i]);
	}
	if (request->len > REQUEST_MAX) {
		fail("the request is %zu bytes long; cusemud takes at most %d",
		     request->len, REQUEST_MAX);
		return NULL;
	}
	return g_string_free(g_steal_pointer(&request), FALSE);
}

/*
 * The trace request sent on a connection of its own: fd, or -1 with *err
 * as connect_daemon() sets it, or -errno when sending failed. A busy daemon's answer is read without
 * taking it (it says so at once, as the header of a trace comes at once),
 * and the daemon is asked again, as exchange() does.
 */
static int trace_connect(const char *path, const char *request, int *err)
{
	static const char busy[] = "error: busy: ";
	gint64 end = g_get_monotonic_time() + BUSY_WAIT_MS * 1000;
	char peek[sizeof(busy) - 1];

	for (;;) {
		autoclose int fd = connect_daemon(path, err);
		ssize_t got;

		if (fd < 0)
			return -1;
		/* A busy daemon may have closed already: its answer is there. */
		if ((!send_all(fd, request, strlen(request)) ||
		     !send_all(fd, "\n", 1)) &&
		    errno != EPIPE && errno != ECONNRESET) {
			*err = -errno;
			return -1;
		}
		got = recv(fd, peek, sizeof(peek), MSG_PEEK | MSG_WAITALL);
		if (got != (ssize_t)sizeof(peek) ||
		    memcmp(peek, busy, sizeof(peek)) ||
		    g_get_monotonic_time() >= end)
			return g_steal_fd(&fd);
		g_usleep(BUSY_PAUSE_MS * 1000);
	}
}

static int run_trace(const char *path, char **nodes, int n)
{
	g_autoptr(GPtrArray) layouts = NULL;
	g_autofree char *request = NULL;
	struct timeval forever = { 0 };
	autoclose int fd = -1;
	int err;

	if (headers && !probe_trace_headers(&layouts))
		return EXIT_FAILURE;
	request = trace_request(nodes, n);
	if (!request)
		return EXIT_FAILURE;
	fd = trace_connect(path, request, &err);
	if (fd < 0 && err > 0)
		return fail_connect(path, err);
	if (fd < 0 && !err)
		return EXIT_FAILURE;	/* said already: a stranger answered */
	if (fd < 0)
		return fail("sending to cusemud at %s: %s", path,
			    g_strerror(-err));
	/* Lines come when clients call: wait for them as long as it takes. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
	return print_trace(fd, path, layouts);
}

/* A bad command line: what is wrong, and where to read how it goes. */
static int usage_error(const char *format, ...) G_GNUC_PRINTF(1, 2);

static int usage_error(const char *format, ...)
{
	g_autofree char *self = cusemu_self_command("cusemuctl", CUSEMU_BINDIR);
	va_list args;

	fputs("cusemuctl: ", stderr);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fprintf(stderr, "\nTry '%s --help'.\n", self);
	return EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = g_option_context_new(
		"list|stats|reset|inject|replay|device|add|remove|reload|trace "
		"[ARGS...]");
	g_autoptr(GError) error = NULL;
	g_autofree char *request = NULL;
	g_autofree char *default_path = cusemu_control_default_path();
	g_autofree char *description = NULL;
	const char *path;
	const char *command;
	int args_start = command_args_start(argc, argv);
	int parse_argc = args_start;
	int n_args = argc - args_start;
	/* The option parser may reorder argv: keep the command's own. */
	g_autofree char **args = g_memdup2(argv + args_start,
					   (n_args + 1) * sizeof(*argv));

	setlocale(LC_ALL, "");
	description = g_strdup_printf(DESCRIPTION, default_path);
	g_option_context_set_summary(context, SUMMARY);
	g_option_context_set_description(context, description);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &parse_argc, &argv, &error))
		return usage_error("%s", error->message);
	if (version) {
		printf("cusemuctl %s\n", CUSEMU_VERSION);
		return EXIT_SUCCESS;
	}
	if (parse_argc >= 2 && !strcmp(argv[1], "trace"))
		return run_trace(socket_path ? socket_path : default_path,
				 argv + 2, parse_argc - 2);
	if (headers)
		return usage_error("--header applies to trace only");
	if (parse_argc != 2)
		return usage_error("give one command: list, stats, reset, "
				   "inject, replay, device, add, remove, "
				   "reload or trace");
	command = argv[1];
	if (!in_list(commands, G_N_ELEMENTS(commands), command))
		return usage_error("unknown command '%s'; commands: list, "
				   "stats, reset, inject, replay, device, add, "
				   "remove, reload, trace",
				   command);
	if (json && strcmp(command, "list") && strcmp(command, "stats"))
		return usage_error("--json applies to list, stats and trace "
				   "only");
	path = socket_path ? socket_path : default_path;
	if (!strcmp(command, "inject"))
		return run_inject(path, args, n_args);
	if (!strcmp(command, "replay"))
		return run_replay(path, args, n_args);
	if (!strcmp(command, "device")) {
		if (n_args < 1)
			return usage_error("device takes NODE and the words "
					   "to pass to its model");
		return run_device(path, args[0], args + 1, n_args - 1);
	}
	if (!strcmp(command, "add") || !strcmp(command, "remove") ||
	    !strcmp(command, "reload"))
		return run_hotplug(path, command, args, n_args);
	request = g_strconcat(command, json ? " --json" : "", NULL);
	return ask(path, request);
}
