/* SPDX-License-Identifier: MIT */
/*
 * cusemuctl: asks a running cusemud, over its control socket, for its
 * devices and statistics, or to reset the statistics.
 */
#define G_LOG_DOMAIN "cusemuctl"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>

#include "control.h"

/* A daemon that does not answer in this time is stuck, not busy. */
#define ANSWER_TIMEOUT_S 10

#define SUMMARY                                                              \
	"Ask a running cusemud about its devices and statistics.\n"         \
	"\n"                                                                 \
	"Commands:\n"                                                        \
	"  list    the devices: node, device model, kernel model and lock\n" \
	"  stats   per device, per command and ABI (native or compat):\n"   \
	"          calls, retries (round trips), errors by errno, lock\n"   \
	"          acquisitions, contended ones, wait and hold times\n"     \
	"  reset   set every statistic back to zero"

#define DESCRIPTION                                                          \
	"cusemuctl talks to cusemud over its control socket, by default\n"  \
	CUSEMU_CONTROL_DEFAULT_PATH ". Only root, and members of the group\n" \
	"given to cusemud with --control-group, may use it.\n"              \
	"\n"                                                                 \
	"Exit status: 0 on success, 1 on any error.\n"

static const char *const commands[] = { "list", "stats", "reset" };

static char *socket_path;
static gboolean json;

static const GOptionEntry entries[] = {
	{ "socket", 's', 0, G_OPTION_ARG_FILENAME, &socket_path,
	  "Control socket of cusemud (default " CUSEMU_CONTROL_DEFAULT_PATH
	  ")",
	  "PATH" },
	{ "json", 'j', 0, G_OPTION_ARG_NONE, &json,
	  "Answer list and stats as one JSON document", NULL },
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
			    "running? (--socket PATH)",
			    path, g_strerror(err));
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

static int connect_daemon(const char *path, int *err)
{
	autoclose int fd = -1;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval timeout = { .tv_sec = ANSWER_TIMEOUT_S };

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

static int ask(const char *path, const char *request)
{
	g_autoptr(GString) answer = g_string_new(NULL);
	g_autofree char *line = g_strconcat(request, "\n", NULL);
	autoclose int fd = -1;
	int err;

	fd = connect_daemon(path, &err);
	if (fd < 0)
		return fail_connect(path, err);
	/* A daemon too busy to serve says so and closes before reading:
	 * its answer is still there to read. */
	if (!send_all(fd, line, strlen(line)) && errno != EPIPE &&
	    errno != ECONNRESET)
		return fail("sending to cusemud at %s: %s", path,
			    g_strerror(errno));
	if (!receive_all(fd, answer)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return fail("cusemud at %s did not answer within %d s",
				    path, ANSWER_TIMEOUT_S);
		return fail("reading the answer of cusemud at %s: %s", path,
			    g_strerror(errno));
	}
	if (!answer->len)
		return fail("cusemud at %s closed the connection without an "
			    "answer",
			    path);
	if (g_str_has_prefix(answer->str, "error: ")) {
		fprintf(stderr, "cusemuctl: %s", answer->str + strlen("error: "));
		if (answer->str[answer->len - 1] != '\n')
			fputc('\n', stderr);
		return EXIT_FAILURE;
	}
	if (fwrite(answer->str, 1, answer->len, stdout) != answer->len ||
	    fflush(stdout) != 0)
		return fail("writing the answer: %s", g_strerror(errno));
	return EXIT_SUCCESS;
}

static gboolean known_command(const char *command)
{
	for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
		if (!strcmp(commands[i], command))
			return TRUE;
	return FALSE;
}

int main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context =
		g_option_context_new("list|stats|reset");
	g_autoptr(GError) error = NULL;
	g_autofree char *request = NULL;
	const char *command;

	setlocale(LC_ALL, "");
	g_option_context_set_summary(context, SUMMARY);
	g_option_context_set_description(context, DESCRIPTION);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error))
		return fail("%s; see cusemuctl --help", error->message);
	if (argc != 2)
		return fail("give one command: list, stats or reset; see "
			    "cusemuctl --help");
	command = argv[1];
	if (!known_command(command))
		return fail("unknown command '%s'; commands: list, stats, "
			    "reset",
			    command);
	if (json && !strcmp(command, "reset"))
		return fail("--json applies to list and stats only");
	request = g_strconcat(command, json ? " --json" : "", NULL);
	return ask(socket_path ? socket_path : CUSEMU_CONTROL_DEFAULT_PATH,
		   request);
}
