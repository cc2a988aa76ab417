/* SPDX-License-Identifier: MIT */
/*
 * Finding a header's ioctl commands and laying out their payloads. Three
 * compiler runs: the preprocessor lists the macros each header defines;
 * it runs again with _IO, _IOR, _IOW and _IOWR redefined to markers, which
 * shows every command's arguments, macros and enumerators alike, however
 * many helper macros stand between; then one probe, compiled with -g for
 * each ABI, holds every number (enumerators) and payload type (typedefs),
 * and libdw reads them back from the debug information.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "layout.h"

G_DEFINE_QUARK(cusemu-abicheck-error-quark, abicheck_error)

const char *const abi_names[ABI_COUNT] = { "x86_64", "i386" };
static const char *const abi_flags[ABI_COUNT] = { "-m64", "-m32" };

#define MARK "__cusemu_ioc_"
#define EXPAND "__cusemu_expand__"
#define PROBE_CMD "__cusemu_probe_cmd_"
#define PROBE_TYPE "__cusemu_probe_t_"
#define PROBE_POINTEE "__cusemu_probe_pointee_"

/* The probes live in one temporary directory, removed at the end. */
struct workdir {
	char *path;
	GPtrArray *files;
	char *prelude;		/* PRELUDE_NAME in it */
};

/*
 * What a uapi header may assume without including it, as the kernel's
 * headers_check and user space's habits have it: the kernel's types and
 * ioctl macros, offsetof, size_t and int64_t, and struct timeval, u_long
 * and friends as the C library gives them. Every probe includes it before the headers.
 */
#define PRELUDE_NAME "cusemu-abicheck-prelude.h"
static const char prelude[] =
	"#include <stddef.h>\n"
	"#include <stdint.h>\n"
	"#include <linux/types.h>\n"
	"#include <linux/ioctl.h>\n";
/* Only for headers that do not include the kernel's linux/time.h, which
 * would define the same structs again (sys/types.h brings struct timeval
 * through sys/select.h). */
static const char prelude_libc_time[] =
	"#include <sys/types.h>\n"
	"#include <sys/time.h>\n";
/* For those that do (linux/coda.h wants u_short and ino_t beside it): the
 * C library's types all the same, its struct timeval under another name. */
static const char prelude_libc_types[] =
	"#define timeval cusemu_abicheck_libc_timeval\n"
	"#include <sys/types.h>\n"
	"#undef timeval\n";

/*
 * The uapi headers include drm's as <drm/drm.h>; Debian installs those with
 * libdrm-dev, as /usr/include/libdrm/drm.h. A link named drm in the work
 * directory, searched after every other directory, stands in for the
 * missing one.
 */
#define LIBDRM_DIR "/usr/include/libdrm"

/*
 * What a fatal signal (SIGTERM, SIGINT, SIGHUP) leaves to undo while the
 * probes run: the compiler's process group and the work directory with its
 * files, kept where the handler may read them without allocating.
 */
#define CLEANUP_FILES 8
static char cleanup_dir[PATH_MAX];
static char cleanup_files[CLEANUP_FILES][PATH_MAX];
static volatile sig_atomic_t cleanup_count;
static volatile sig_atomic_t compiler_group;
static const int fatal_signals[] = { SIGTERM, SIGINT, SIGHUP };
static struct sigaction saved_actions[G_N_ELEMENTS(fatal_signals)];

static char *workdir_file(struct workdir *w, const char *name)
{
	char *path = g_build_filename(w->path, name, NULL);

	g_ptr_array_add(w->files, g_strdup(path));
	if (cleanup_count < CLEANUP_FILES &&
	    g_strlcpy(cleanup_files[cleanup_count], path, PATH_MAX) <
		    PATH_MAX)
		cleanup_count++;
	return path;
}

/* Ends a compiler's process group: politely (gcc removes its own
 * temporary files on SIGTERM), then for good. */
static void stop_group(pid_t group)
{
	const struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };

	kill(-group, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (waitpid(group, NULL, WNOHANG) != 0)
			return;
		nanosleep(&pause, NULL);
	}
	kill(-group, SIGKILL);
	waitpid(group, NULL, 0);
}

/* Async-signal-safe: kill, waitpid, nanosleep, unlink, rmdir, raise. */
static void on_fatal_signal(int sig)
{
	if (compiler_group > 0)
		stop_group(compiler_group);
	for (sig_atomic_t i = 0; i < cleanup_count; i++)
		unlink(cleanup_files[i]);
	if (cleanup_dir[0])
		rmdir(cleanup_dir);
	/* Die of the signal, as without the handler. */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void block_fatal_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (guint i = 0; i < G_N_ELEMENTS(fatal_signals); i++)
		sigaddset(&set, fatal_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

/*
 * w's directory, made with the signals blocked: from then until
 * workdir_clear(), a fatal signal removes it first, and none can come
 * between the two and leave it behind.
 */
static gboolean workdir_make(struct workdir *w, GError **error)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	sigset_t old;

	block_fatal_signals(&old);
	w->path = g_dir_make_tmp("cusemu-abicheck-XXXXXX", error);
	if (w->path) {
		w->files = g_ptr_array_new_with_free_func(g_free);
		g_strlcpy(cleanup_dir, w->path, sizeof(cleanup_dir));
		cleanup_count = 0;
		sigfillset(&sa.sa_mask);
		for (guint i = 0; i < G_N_ELEMENTS(fatal_signals); i++)
			sigaction(fatal_signals[i], &sa, &saved_actions[i]);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return w->path != NULL;
}

/* Removes w, and puts back the signal actions workdir_make() found. */
static void workdir_clear(struct workdir *w)
{
	sigset_t old;

	if (!w->path)
		return;
	block_fatal_signals(&old);
	for (guint i = 0; i < w->files->len; i++)
		g_remove(w->files->pdata[i]);
	g_rmdir(w->path);
	if (cleanup_dir[0]) {
		for (guint i = 0; i < G_N_ELEMENTS(fatal_signals); i++)
			sigaction(fatal_signals[i], &saved_actions[i], NULL);
		cleanup_dir[0] = '\0';
		cleanup_count = 0;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	g_ptr_array_unref(w->files);
	g_free(w->prelude);
	g_free(w->path);
}

/*
 * Each compiler run is limited: a header can ask for anything (macros
 * that expand without end, #include "/dev/zero", a pipe that never ends).
 * CUSEMU_ABICHECK_TIMEOUT changes the time, CPU and wall clock alike.
 */
#define CC_MEMORY (UINT64_C(1) << 30)	/* address space */
#define CC_SECONDS 120
#define CC_OUTPUT_MAX (256u << 20)	/* what it prints that is kept */

static unsigned int cc_seconds(void)
{
	const char *s = g_getenv("CUSEMU_ABICHECK_TIMEOUT");
	guint64 v;

	if (s && g_ascii_string_to_unsigned(s, 10, 1, 24 * 3600, &v, NULL))
		return (unsigned int)v;
	return CC_SECONDS;
}

static void lower_limit(int resource, rlim_t to)
{
	struct rlimit r;

	if (getrlimit(resource, &r) < 0)
		return;
	if (r.rlim_cur == RLIM_INFINITY || r.rlim_cur > to)
		r.rlim_cur = to;
	if (r.rlim_max == RLIM_INFINITY || r.rlim_max > to + 1)
		r.rlim_max = to + 1;
	setrlimit(resource, &r);
}

/* In the compiler's child, before exec: a group of its own, the limits,
 * and no signal blocked. */
static void cc_child_setup(gpointer data)
{
	const unsigned int *seconds = data;
	sigset_t none;

	setpgid(0, 0);
	lower_limit(RLIMIT_AS, CC_MEMORY);
	/* Past the soft limit SIGXCPU, past the hard one SIGKILL. */
	lower_limit(RLIMIT_CPU, *seconds);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

enum collected { CC_DONE, CC_TIMED_OUT, CC_TOO_MUCH };

/* Reads the compiler's output (fds[0], if any) and errors until both end
 * or the deadline (monotonic µs) passes. */
static enum collected collect(int fds[2], GString *bufs[2], gint64 deadline)
{
	char chunk[65536];

	for (;;) {
		struct pollfd p[2];
		int map[2], n = 0, r;
		gint64 left = deadline - g_get_monotonic_time();

		for (int i = 0; i < 2; i++) {
			if (fds[i] < 0)
				continue;
			p[n] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
			map[n++] = i;
		}
		if (!n)
			return CC_DONE;
		if (left <= 0)
			return CC_TIMED_OUT;
		r = poll(p, n, (int)MIN((left + 999) / 1000, G_MAXINT));
		if (r < 0 && errno == EINTR)
			continue;
		for (int j = 0; j < n && r > 0; j++) {
			int i = map[j];
			ssize_t got;

			if (!p[j].revents)
				continue;
			got = read(fds[i], chunk, sizeof(chunk));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(fds[i]);
				fds[i] = -1;
				continue;
			}
			if (bufs[i]->len + got > CC_OUTPUT_MAX)
				return CC_TOO_MUCH;
			g_string_append_len(bufs[i], chunk, got);
		}
	}
}

/* Why the compiler failed, from its exit status and messages. */
static void cc_failed(int status, enum collected how, unsigned int seconds,
		      char *err, GError **error)
{
	g_strstrip(err);
	if (how == CC_TIMED_OUT) {
		g_set_error(error, ABICHECK_ERROR, 0,
			    "the compiler did not finish within %u s and was "
			    "stopped (a header that reads a device or a pipe, "
			    "or expands without end?); "
			    "CUSEMU_ABICHECK_TIMEOUT=SECONDS gives it longer",
			    seconds);
	} else if (how == CC_TOO_MUCH) {
		g_set_error(error, ABICHECK_ERROR, 0,
			    "the compiler printed more than %u MiB and was "
			    "stopped (a header that expands without end?)",
			    CC_OUTPUT_MAX >> 20);
	} else if (WIFSIGNALED(status) || strstr(err, "out of memory") ||
		   strstr(err, "signal terminated program")) {
		g_set_error(error, ABICHECK_ERROR, 0,
			    "%s%sthe compiler ran out of its limits, %u MiB "
			    "of memory and %u s of CPU time (a header that "
			    "expands without end, or includes a device?)",
			    err, *err ? "\n" : "",
			    (unsigned int)(CC_MEMORY >> 20), seconds);
	} else {
		g_set_error(error, ABICHECK_ERROR, 0, "%s%s", err,
			    strstr(err, "-32.h") || strstr(err, "i386")
				    ? "\n(the i386 headers come with Debian's "
				      "gcc-multilib)"
			    : strstr(err, "error:")
				    ? "\n(the header named above does not "
				      "compile as given, after the headers a "
				      "uapi header may assume (stddef.h, "
				      "stdint.h, linux/types.h, linux/ioctl.h, "
				      "sys/time.h): name a header it needs "
				      "before it on the command line, its "
				      "include directory with -I DIR, or a "
				      "macro it expects with -D NAME[=VALUE], "
				      "such as -D__user= for a kernel tree's "
				      "headers)"
				    : "");
	}
}

/*
 * Runs the compiler, in a process group of its own and within its limits;
 * FALSE with its message when it fails.
 */
static gboolean run_cc(const struct probe_options *o, const char *const *args,
		       char **out, GError **error)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GString) out_buf = g_string_new(NULL);
	g_autoptr(GString) err_buf = g_string_new(NULL);
	GString *bufs[2] = { out_buf, err_buf };
	int fds[2] = { -1, -1 };
	unsigned int seconds = cc_seconds();
	enum collected how;
	gboolean spawned;
	sigset_t old;
	GPid pid;
	int status = 0;

	for (char **p = o->cc; *p; p++)
		g_ptr_array_add(argv, *p);
	for (guint i = 0; i < o->cflags->len; i++)
		g_ptr_array_add(argv, o->cflags->pdata[i]);
	for (const char *const *a = args; *a; a++)
		g_ptr_array_add(argv, (char *)*a);
	g_ptr_array_add(argv, NULL);
	if (o->verbose) {
		g_autofree char *line = g_strjoinv(" ", (char **)argv->pdata);
		g_printerr("cusemu-abicheck: %s\n", line);
	}
	/* Known to the signal handler before a signal can come. */
	block_fatal_signals(&old);
	spawned = g_spawn_async_with_pipes(
		NULL, (char **)argv->pdata, NULL,
		G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
			G_SPAWN_STDIN_FROM_DEV_NULL,
		cc_child_setup, &seconds, &pid, NULL, out ? &fds[0] : NULL,
		&fds[1], error);
	if (spawned) {
		/* Both sides, so that no kill comes before the group. */
		setpgid(pid, pid);
		compiler_group = pid;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!spawned)
		return FALSE;
	how = collect(fds, bufs,
		      g_get_monotonic_time() + seconds * G_TIME_SPAN_SECOND);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (how != CC_DONE)
		stop_group(pid);
	else
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	block_fatal_signals(&old);
	compiler_group = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (how != CC_DONE || !WIFEXITED(status) || WEXITSTATUS(status)) {
		cc_failed(status, how, seconds, err_buf->str, error);
		return FALSE;
	}
	if (out)
		*out = g_string_free(g_steal_pointer(&out_buf), FALSE);
	return TRUE;
}

/*
 * A header an #include can name: a file's full path goes between quotes,
 * which it cannot hold, a name between < and >.
 */
static gboolean check_header_names(char **headers, GError **error)
{
	for (char **h = headers; *h; h++) {
		bool file = g_file_test(*h, G_FILE_TEST_EXISTS);
		g_autofree char *abs = file ? g_canonicalize_filename(*h, NULL)
					    : NULL;

		if (strpbrk(file ? abs : *h, file ? "\"\n" : "\">\n")) {
			g_autofree char *shown = g_strescape(*h, NULL);

			g_set_error(error, ABICHECK_ERROR, 0,
				    "header %s: its %s has a %s, which an "
				    "#include cannot say; give it another name "
				    "(a link)",
				    shown, file ? "path" : "name",
				    strpbrk(file ? abs : *h, "\n") ? "newline"
				    : strchr(file ? abs : *h, '"') ? "'\"'"
								   : "'>'");
			return FALSE;
		}
	}
	return TRUE;
}

/*
 * What the headers' part of a preprocessor output is: a line marker
 * `# LINE "FILE" FLAGS` enters a file (flag 1) or returns to one (flag 2).
 * The headers are the files the probe includes itself (depth 1).
 */
struct cpp_pos {
	GPtrArray *stack;	/* file names, [0] the probe */
	unsigned int line;
};

/* Handles a marker line; FALSE for any other line. */
static gboolean cpp_marker(struct cpp_pos *p, const char *l)
{
	unsigned int line;
	char *q, *end;

	if (l[0] != '#' || l[1] != ' ' || !g_ascii_isdigit(l[2]))
		return FALSE;
	line = (unsigned int)strtoul(l + 2, &q, 10);
	if (q[0] != ' ' || q[1] != '"' || !(end = strrchr(q + 2, '"')))
		return FALSE;
	g_autofree char *file = g_strndup(q + 2, end - q - 2);
	int flag = atoi(end + 1);

	if (flag == 1 || !p->stack->len)
		g_ptr_array_add(p->stack, g_steal_pointer(&file));
	else if (flag == 2) {
		if (p->stack->len > 1)
			g_ptr_array_remove_index(p->stack, p->stack->len - 1);
	} else {
		/* No flag: the same file, or (after the implicit
		 * stdc-predef.h) a file lower on the stack. */
		bool found = false;

		for (guint i = 0; i < p->stack->len && !found; i++) {
			if (!strcmp(p->stack->pdata[i], file)) {
				g_ptr_array_set_size(p->stack, i + 1);
				found = true;
			}
		}
		/* <built-in> and <command-line> are the probe's own. */
		if (!found && p->stack->len > 1) {
			g_free(p->stack->pdata[p->stack->len - 1]);
			p->stack->pdata[p->stack->len - 1] = g_steal_pointer(&file);
		}
	}
	p->line = line;
	return TRUE;
}

static const char *cpp_header(const struct cpp_pos *p)
{
	if (p->stack->len != 2 ||
	    g_str_has_suffix(p->stack->pdata[1], "/" PRELUDE_NAME))
		return NULL;
	return p->stack->pdata[1];
}

/* One #define of a header, from `cc -E -dD`. */
struct define {
	char *name;
	char *file;
	unsigned int line;
	bool function_like;
	long plain;		/* find_commands: its value as a plain
				 * command number (0x4600), else -1 */
};

static void define_free(struct define *d)
{
	g_free(d->name);
	g_free(d->file);
	g_free(d);
}

static const char *skip_ident(const char *s)
{
	while (g_ascii_isalnum(*s) || *s == '_')
		s++;
	return s;
}

/* The macros defined in the headers themselves, and which files those are. */
static GPtrArray *list_defines(const char *cpp_out, GHashTable *header_files)
{
	GPtrArray *defs = g_ptr_array_new_with_free_func((GDestroyNotify)define_free);
	struct cpp_pos pos = { g_ptr_array_new_with_free_func(g_free), 0 };
	g_auto(GStrv) lines = g_strsplit(cpp_out, "\n", -1);

	for (char **l = lines; *l; l++) {
		const char *header, *name, *end;

		if (cpp_marker(&pos, *l))
			continue;
		header = cpp_header(&pos);
		if (header) {
			g_hash_table_add(header_files, g_strdup(header));
			if (g_str_has_prefix(*l, "#define ")) {
				struct define *d = g_new0(struct define, 1);

				name = *l + strlen("#define ");
				end = skip_ident(name);
				d->name = g_strndup(name, end - name);
				d->function_like = *end == '(';
				d->file = g_strdup(header);
				d->line = pos.line;
				g_ptr_array_add(defs, d);
			}
		}
		pos.line++;
	}
	g_ptr_array_unref(pos.stack);
	return defs;
}

/* Collapses runs of blanks to one space and trims: arguments as a person
 * reads them. */
static char *tidy(const char *s, size_t n)
{
	GString *out = g_string_new(NULL);
	bool blank = false;

	for (size_t i = 0; i < n; i++) {
		if (g_ascii_isspace(s[i])) {
			blank = out->len > 0;
			continue;
		}
		if (blank)
			g_string_append_c(out, ' ');
		blank = false;
		g_string_append_c(out, s[i]);
	}
	return g_string_free(out, FALSE);
}

/*
 * Parses `__cusemu_ioc_R__(a, b, c)` at s: the direction and the arguments,
 * split at commas outside parentheses and quotes. Returns the end, or NULL
 * when s holds no such call.
 */
static const char *parse_mark(const char *s, enum ioc_dir *dir, char **args,
			      unsigned int *nargs)
{
	static const struct {
		const char *tag;
		enum ioc_dir dir;
		unsigned int nargs;
	} kinds[] = {
		{ "N__", DIR_NONE, 2 },
		{ "R__", DIR_READ, 3 },
		{ "W__", DIR_WRITE, 3 },
		{ "WR__", DIR_BOTH, 3 },
		{ "C__", DIR_UNKNOWN, 4 },
	};
	const char *p, *start;
	unsigned int depth = 0, n = 0, want = 0;

	if (!g_str_has_prefix(s, MARK))
		return NULL;
	s += strlen(MARK);
	for (unsigned int i = 0; i < G_N_ELEMENTS(kinds); i++) {
		if (g_str_has_prefix(s, kinds[i].tag)) {
			*dir = kinds[i].dir;
			want = kinds[i].nargs;
			s += strlen(kinds[i].tag);
			break;
		}
	}
	while (*s == ' ')
		s++;
	if (!want || *s != '(')
		return NULL;
	start = p = s + 1;
	for (; *p; p++) {
		if (*p == '\'' || *p == '"') {
			char q = *p;

			for (p++; *p && *p != q; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				break;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if ((*p == ')' || *p == ']' || *p == '}') && depth) {
			depth--;
		} else if ((*p == ',' && !depth) || *p == ')') {
			if (n == want)
				return NULL;
			args[n++] = tidy(start, p - start);
			start = p + 1;
			if (*p == ')') {
				if (n != want)
					break;
				*nargs = n;
				return p + 1;
			}
		}
	}
	for (unsigned int i = 0; i < n; i++)
		g_free(args[i]);
	return NULL;
}

/* _IOC's direction as the preprocessor left it, "0U" or "(2U|1U)"; its
 * bits are _IOC_WRITE (1) and _IOC_READ (2) on every architecture this
 * tool lays out. */
static enum ioc_dir ioc_dir_of(const char *s)
{
	static const enum ioc_dir dirs[] = { DIR_NONE, DIR_WRITE, DIR_READ,
					     DIR_BOTH };
	unsigned long bits = 0;

	for (;;) {
		char *end;

		while (*s == '(' || *s == ' ')
			s++;
		if (!g_ascii_isdigit(*s))
			return DIR_UNKNOWN;
		bits |= strtoul(s, &end, 0);
		for (s = end; *s == 'u' || *s == 'U' || *s == ')' || *s == ' ';)
			s++;
		if (*s != '|')
			break;
		s++;
	}
	return *s || bits > 3 ? DIR_UNKNOWN : dirs[bits];
}

/*
 * _IOC(dir, type, nr, sizeof(T)), as xen/evtchn.h writes its commands: the
 * arguments of an _IOR(type, nr, T) and the like, T being the payload.
 * A size that is no sizeof leaves the payload for --command to say.
 */
static enum ioc_dir ioc_args(char **args)
{
	const char *size = args[3];
	size_t n = strlen(size);
	enum ioc_dir dir = ioc_dir_of(args[0]);

	g_free(args[0]);
	args[0] = args[1];
	args[1] = args[2];
	args[2] = NULL;
	args[3] = NULL;
	if (g_str_has_prefix(size, "sizeof") && size[n - 1] == ')') {
		const char *p = size + strlen("sizeof");

		while (*p == ' ')
			p++;
		if (*p == '(')
			args[2] = g_strndup(p + 1, size + n - 1 - (p + 1));
	}
	g_free((char *)size);
	return dir;
}

/* A command from the marker call at s; NULL when s is something else. */
static struct command *command_from_mark(const char *name, const char *s,
					 bool whole)
{
	char *args[4] = { NULL, NULL, NULL, NULL };
	unsigned int n = 0;
	enum ioc_dir dir = DIR_NONE;
	const char *end;
	struct command *c;
	static const char *const macros[] = { "_IO", "_IOR", "_IOW", "_IOWR" };
	const char *macro;

	while (*s == '(' || *s == ' ')
		s++;
	end = parse_mark(s, &dir, args, &n);
	if (!end)
		return NULL;
	while (whole && (*end == ')' || *end == ' '))
		end++;
	if (whole && *end) {
		/* `_IOR(...) | FLAG` or the like: not a plain command. */
		for (unsigned int i = 0; i < n; i++)
			g_free(args[i]);
		return NULL;
	}
	macro = n == 4 ? "_IOC" : macros[dir];
	if (n == 4)
		dir = ioc_args(args);
	c = g_new0(struct command, 1);
	c->name = g_strdup(name);
	c->dir = dir;
	c->macro = g_strdup(macro);
	c->type_arg = args[0];
	c->nr_arg = args[1];
	c->payload_arg = args[2];
	c->findings = g_ptr_array_new();
	if (c->payload_arg) {
		const char *p = c->payload_arg;

		/* sizeof(T) as data_type: the probe lays out T, and the
		 * rule says what the number really encodes. */
		if (n == 3 && g_str_has_prefix(p, "sizeof") &&
		    !g_ascii_isalnum(p[6]) &&
		    p[6] != '_') {
			c->sizeof_arg = true;
			p += 6;
			while (*p == ' ')
				p++;
		}
		c->payload_expr = g_strdup(p);
		if (c->sizeof_arg && p[0] == '(' &&
		    c->payload_expr[strlen(p) - 1] == ')') {
			/* sizeof(T): T, a type or an expression */
			c->payload_expr[strlen(p) - 1] = 0;
			memmove(c->payload_expr, c->payload_expr + 1, strlen(p) - 1);
		}
	}
	return c;
}

static void append_includes(GString *src, const struct workdir *w,
			    char **headers)
{
	g_string_append_printf(src, "#include \"%s\"\n", w->prelude);
	for (char **h = headers; *h; h++) {
		if (g_file_test(*h, G_FILE_TEST_EXISTS)) {
			g_autofree char *abs = g_canonicalize_filename(*h, NULL);

			g_string_append_printf(src, "#include \"%s\"\n", abs);
		} else {
			g_string_append_printf(src, "#include <%s>\n", *h);
		}
	}
}

/* Which header on the command line a file is, for display. */
static const char *header_name(GHashTable *names, const char *file)
{
	const char *given = g_hash_table_lookup(names, file);

	return given ? given : file;
}

void command_free(struct command *c)
{
	if (!c)
		return;
	for (int a = 0; a < ABI_COUNT; a++)
		if (c->layout[a].members)
			g_ptr_array_unref(c->layout[a].members);
	for (guint i = 0; i < c->findings->len; i++) {
		struct finding *f = c->findings->pdata[i];

		g_free(f->member);
		g_free(f->detail);
		g_free(f);
	}
	g_ptr_array_unref(c->findings);
	g_free(c->unresolved);
	g_free(c->name);
	g_free(c->header);
	g_free(c->file);
	g_free(c->macro);
	g_free(c->type_arg);
	g_free(c->nr_arg);
	g_free(c->payload_arg);
	g_free(c->payload_expr);
	g_free(c->served);
	g_free(c);
}

/* ---- Layouts from DWARF ---- */

static void member_free(struct member *m)
{
	g_free(m->path);
	g_free(m->name);
	g_free(m->type);
	g_free(m->time_type);
	if (m->pointee)
		g_ptr_array_unref(m->pointee);
	g_free(m);
}

static bool die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) &&
	       dwarf_formref_die(&a, type);
}

static uint64_t die_udata(Dwarf_Die *die, unsigned int at, uint64_t dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(die, at, &a) || dwarf_formudata(&a, &w))
		return dflt;
	return w;
}

/* The type as C spells it. */
static char *type_name(Dwarf_Die *t)
{
	Dwarf_Die inner;
	const char *name = dwarf_diename(t);
	bool has = die_type(t, &inner);
	g_autofree char *in = has ? type_name(&inner) : g_strdup("void");

	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
		return g_strdup(name ? name : "?");
	case DW_TAG_structure_type:
		return g_strconcat("struct ", name ? name : "{...}", NULL);
	case DW_TAG_union_type:
		return g_strconcat("union ", name ? name : "{...}", NULL);
	case DW_TAG_enumeration_type:
		return g_strconcat("enum ", name ? name : "{...}", NULL);
	case DW_TAG_pointer_type:
		return g_strconcat(in, g_str_has_suffix(in, "*") ? "*" : " *",
				   NULL);
	case DW_TAG_const_type:
		return g_strconcat("const ", in, NULL);
	case DW_TAG_volatile_type:
		return g_strconcat("volatile ", in, NULL);
	case DW_TAG_subroutine_type:
		return g_strdup("function");
	case DW_TAG_array_type: {
		GString *s = g_string_new(in);
		Dwarf_Die sub;

		if (dwarf_child(t, &sub) == 0) {
			do {
				if (dwarf_tag(&sub) != DW_TAG_subrange_type)
					continue;
				if (dwarf_hasattr(&sub, DW_AT_count))
					g_string_append_printf(s, "[%" PRIu64 "]",
						die_udata(&sub, DW_AT_count, 0));
				else if (dwarf_hasattr(&sub, DW_AT_upper_bound))
					g_string_append_printf(s, "[%" PRIu64 "]",
						die_udata(&sub, DW_AT_upper_bound, 0) + 1);
				else
					g_string_append(s, "[]");
			} while (dwarf_siblingof(&sub, &sub) == 0);
		}
		return g_string_free(s, FALSE);
	}
	default:
		return g_strdup("?");
	}
}

/* The time types whose layout the y2038 work changed, by typedef or tag. */
static const char *const time_typedefs[] = {
	"time_t", "__time_t", "__kernel_time_t", "__kernel_old_time_t",
	"suseconds_t", "__suseconds_t", "__kernel_suseconds_t", NULL,
};
static const char *const time_tags[] = {
	"timeval", "timespec", "itimerval", "itimerspec",
	"__kernel_old_timeval", "__kernel_old_itimerval", "timex", NULL,
};

static bool in_list(const char *const *list, const char *s)
{
	for (; s && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

/* Strips typedefs and qualifiers, noting a time type on the way. */
static void peel(Dwarf_Die *t, Dwarf_Die *out, char **time_type)
{
	*out = *t;
	for (;;) {
		int tag = dwarf_tag(out);
		const char *name = dwarf_diename(out);

		if (tag == DW_TAG_typedef && in_list(time_typedefs, name) &&
		    !*time_type)
			*time_type = g_strdup(name);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			break;
		if (!die_type(out, out))
			break;
	}
	if ((dwarf_tag(out) == DW_TAG_structure_type) &&
	    in_list(time_tags, dwarf_diename(out)) && !*time_type)
		*time_type = g_strconcat("struct ", dwarf_diename(out), NULL);
}

static unsigned int scalar_align(enum abi abi, uint64_t size)
{
	/* i386 aligns 8-byte members (and long double) to 4 in structs. */
	uint64_t max = abi == ABI_I386 ? 4 : 16;

	return (unsigned int)MAX(1, MIN(size, max));
}

static void walk(enum abi abi, Dwarf_Die *type, const char *path,
		 const char *name, uint64_t offset, int parent,
		 GPtrArray *members, unsigned int depth, bool follow);

/*
 * The next number of an anonymous member named from prefix. Members of an
 * anonymous struct or union are named from the enclosing one, so its own
 * anonymous members share the enclosing one's numbers: btrfs.h's second
 * union's struct is not the first union's struct.
 */
static unsigned int next_anonymous(GPtrArray *members, const char *prefix)
{
	g_autofree char *start = g_strconcat(prefix, "(anonymous ", NULL);
	unsigned int n = 0;

	for (guint i = 0; i < members->len; i++)
		n += g_str_has_prefix(((struct member *)members->pdata[i])->path,
				      start);
	return n;
}

static void walk_children(enum abi abi, Dwarf_Die *agg, struct member *m,
			  const char *prefix, uint64_t offset, int self,
			  GPtrArray *members, unsigned int depth, bool follow)
{
	Dwarf_Die child;

	if (dwarf_child(agg, &child))
		return;
	do {
		Dwarf_Die t;
		const char *cname;
		uint64_t loc;
		g_autofree char *cpath = NULL;
		bool unnamed;
		guint before;

		if (dwarf_tag(&child) != DW_TAG_member || !die_type(&child, &t))
			continue;
		cname = dwarf_diename(&child);
		unnamed = !cname;
		if (unnamed)
			cpath = g_strdup_printf("%s(anonymous %u)", prefix,
						next_anonymous(members, prefix));
		else
			cpath = g_strconcat(prefix, cname, NULL);
		loc = die_udata(&child, DW_AT_data_member_location, 0);
		before = members->len;
		walk(abi, &t, cpath, unnamed ? "(anonymous)" : cname,
		     offset + loc, self, members, depth + 1, follow);
		if (members->len > before) {
			struct member *cm = members->pdata[before];

			cm->anonymous = unnamed;
			if (dwarf_hasattr(&child, DW_AT_bit_size)) {
				uint64_t bits = die_udata(&child, DW_AT_data_bit_offset,
							  loc * 8);

				cm->flags |= MEMBER_BITFIELD;
				cm->bit_size = (unsigned int)die_udata(&child,
							DW_AT_bit_size, 0);
				cm->offset = offset + bits / 8;
				cm->bit_offset = (unsigned int)(bits % 8);
			}
			if (cm->align > m->align)
				m->align = cm->align;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * Appends the member of the given type at offset, then what it holds.
 * Members of an anonymous struct or union are named as C names them, from
 * the enclosing struct.
 */
/* The members of what a pointer points to, when that is a complete struct
 * or union, or, for the elements of a buffer (a pointer with a count), a
 * scalar; NULL otherwise. Qualifiers go, a typedef's name stays. */
static GPtrArray *walk_pointee(enum abi abi, Dwarf_Die *target,
			       unsigned int depth, bool elements)
{
	Dwarf_Die t = *target, bare;
	g_autofree char *time_type = NULL;
	GPtrArray *members;
	int tag;

	while ((dwarf_tag(&t) == DW_TAG_const_type ||
		dwarf_tag(&t) == DW_TAG_volatile_type) && die_type(&t, &t))
		;
	peel(&t, &bare, &time_type);
	tag = dwarf_tag(&bare);
	if (elements && tag == DW_TAG_base_type)
		;
	else if ((tag != DW_TAG_structure_type && tag != DW_TAG_union_type) ||
		 dwarf_hasattr(&bare, DW_AT_declaration))
		return NULL;
	members = g_ptr_array_new_with_free_func((GDestroyNotify)member_free);
	walk(abi, &t, "", "", 0, -1, members, depth + 1, false);
	return members;
}

static void walk(enum abi abi, Dwarf_Die *type, const char *path,
		 const char *name, uint64_t offset, int parent,
		 GPtrArray *members, unsigned int depth, bool follow)
{
	struct member *m = g_new0(struct member, 1);
	Dwarf_Die t, elem;
	Dwarf_Word size = 0;
	int self = (int)members->len;
	char *time_type = NULL;

	m->path = g_strdup(path);
	m->name = g_strdup(name);
	m->type = type_name(type);
	m->offset = offset;
	m->parent = parent;
	m->align = 1;
	peel(type, &t, &time_type);
	m->time_type = time_type;
	if (time_type)
		m->flags |= MEMBER_TIME;
	if (dwarf_aggregate_size(&t, &size) == 0)
		m->size = size;
	g_ptr_array_add(members, m);
	if (depth > 32)
		return;		/* no C type nests this deep */

	switch (dwarf_tag(&t)) {
	case DW_TAG_base_type: {
		uint64_t enc = die_udata(&t, DW_AT_encoding, 0);
		const char *bn = dwarf_diename(&t);

		m->flags |= MEMBER_SCALAR;
		if (bn && (!strcmp(bn, "long int") ||
			   !strcmp(bn, "long unsigned int")))
			m->flags |= MEMBER_LONG;
		if (bn && !strcmp(bn, "char"))
			m->flags |= MEMBER_CHAR;
		if (enc == DW_ATE_signed || enc == DW_ATE_signed_char)
			m->flags |= MEMBER_SIGNED;
		if (enc == DW_ATE_float)
			m->flags |= MEMBER_FLOAT;
		m->align = scalar_align(abi, m->size);
		break;
	}
	case DW_TAG_pointer_type:
		m->flags |= MEMBER_POINTER;
		m->align = scalar_align(abi, m->size);
		if (follow && die_type(&t, &elem))
			m->pointee = walk_pointee(abi, &elem, depth, false);
		break;
	case DW_TAG_enumeration_type: {
		Dwarf_Die e;

		m->flags |= MEMBER_ENUM;
		if (die_type(&t, &e) && die_udata(&e, DW_AT_encoding, 0) ==
						DW_ATE_signed)
			m->flags |= MEMBER_SIGNED;
		m->align = scalar_align(abi, m->size);
		break;
	}
	case DW_TAG_structure_type:
	case DW_TAG_union_type: {
		g_autofree char *prefix = NULL;

		m->flags |= dwarf_tag(&t) == DW_TAG_union_type ? MEMBER_UNION
							       : MEMBER_STRUCT;
		/* An anonymous member's members are named from the
		 * enclosing struct; the caller fixes m->anonymous. */
		if (!strcmp(name, "(anonymous)")) {
			const char *dot = strrchr(path, '.');

			prefix = dot ? g_strndup(path, dot - path + 1)
				     : g_strdup("");
		} else {
			prefix = *path ? g_strconcat(path, ".", NULL)
				       : g_strdup("");
		}
		walk_children(abi, &t, m, prefix, offset, self, members, depth,
			      follow);
		break;
	}
	case DW_TAG_array_type: {
		Dwarf_Word esize = 0;

		m->flags |= MEMBER_ARRAY;
		if (!die_type(&t, &elem))
			break;
		{
			g_autofree char *epath = g_strconcat(path, "[]", NULL);
			guint at = members->len;
			struct member *e;

			walk(abi, &elem, epath, name, offset, self, members,
			     depth + 1, follow);
			e = members->pdata[at];
			esize = e->size;
			m->elem_size = esize;
			m->count = esize ? m->size / esize : 0;
			m->align = e->align;
			m->flags |= e->flags & (MEMBER_LONG | MEMBER_POINTER |
						MEMBER_ENUM | MEMBER_TIME |
						MEMBER_SIGNED | MEMBER_FLOAT |
						MEMBER_SCALAR);
			if (e->time_type && !m->time_type)
				m->time_type = g_strdup(e->time_type);
			/* An array of pointers points where its elements do. */
			if (e->pointee && !m->pointee)
				m->pointee = g_ptr_array_ref(e->pointee);
			/* Elements of scalars add nothing: keep the array. */
			if (!(e->flags & (MEMBER_STRUCT | MEMBER_UNION))) {
				g_ptr_array_remove_index(members, at);
			}
		}
		break;
	}
	default:
		break;
	}
}

bool given_pointee_count(struct given_command *g)
{
	size_t n = strlen(g->type);
	char *open;

	if (!n || g->type[n - 1] != ']')
		return true;
	open = strrchr(g->type, '[');
	if (!open || open + 1 == g->type + n - 1)
		return false;
	for (const char *c = open + 1; c < g->type + n - 1; c++)
		if (!g_ascii_isalnum(*c) && *c != '_')
			return false;
	g->count = g_strndup(open + 1, (size_t)(g->type + n - 2 - open));
	*open = '\0';
	g_strstrip(g->type);
	return *g->type != '\0';
}

/* The member named name beside m (of m's parent): its index, or 0. */
static int sibling(const struct layout *l, const struct member *m,
		   const char *name)
{
	for (guint i = 1; i < l->members->len; i++) {
		const struct member *s = l->members->pdata[i];

		if (s->parent == m->parent && !strcmp(s->name, name))
			return (int)i;
	}
	return 0;
}

/* Whether m is the member "TAG.MEMBER" names: a member of a struct or
 * union whose tag (or typedef) is TAG. */
static bool pointee_names(const char *spec, const struct member *parent,
			  const struct member *m)
{
	const char *dot = strrchr(spec, '.');
	const char *t = parent->type;
	size_t n;

	if (!dot || strcmp(dot + 1, m->name))
		return false;
	if (g_str_has_prefix(t, "struct "))
		t += strlen("struct ");
	else if (g_str_has_prefix(t, "union "))
		t += strlen("union ");
	n = (size_t)(dot - spec);
	return strlen(t) == n && !strncmp(t, spec, n);
}

/* --pointee: the named members of every payload get the given type's
 * layout as their pointee. FALSE when one names no member of a payload,
 * or a type that is no complete struct or union. */
static gboolean attach_pointees(enum abi abi, GPtrArray *commands,
				GPtrArray *pointees, Dwarf_Die *dies,
				const bool *found, GError **error)
{
	for (guint k = 0; pointees && k < pointees->len; k++) {
		const struct given_command *g = pointees->pdata[k];
		bool named = false, laid_out = false;

		if (!found[k])
			continue;
		for (guint i = 0; i < commands->len; i++) {
			struct layout *l =
				&((struct command *)commands->pdata[i])->layout[abi];

			for (guint j = 1; l->present && j < l->members->len; j++) {
				struct member *m = l->members->pdata[j];
				Dwarf_Die t;

				if (!pointee_names(g->name,
						   l->members->pdata[m->parent], m) ||
				    !die_type(&dies[k], &t))
					continue;
				if (m->pointee)
					g_ptr_array_unref(m->pointee);
				m->pointee = walk_pointee(abi, &t, 0, g->count);
				named = true;
				laid_out = m->pointee != NULL;
				m->pointee_given = laid_out;
				m->pointee_count =
					g->count ? sibling(l, m, g->count) : 0;
				if (g->count && !m->pointee_count) {
					g_set_error(error, ABICHECK_ERROR, 0,
						    "--pointee %s=%s[%s]: no "
						    "member %s beside it",
						    g->name, g->type, g->count,
						    g->count);
					return FALSE;
				}
			}
		}
		if (!named || !laid_out) {
			g_set_error(error, ABICHECK_ERROR, 0, "--pointee %s=%s: %s",
				    g->name, g->type, !named
				    ? "no payload has that member"
				    : g->count ? "not a complete struct or union, "
						 "nor a scalar"
					       : "not a complete struct or union");
			return FALSE;
		}
	}
	return TRUE;
}

/* Reads the numbers and payload layouts of the probe built for abi. */
static gboolean read_probe(const char *path, enum abi abi, GPtrArray *commands,
			   GPtrArray *pointees, GError **error)
{
	guint np = pointees ? pointees->len : 0;
	g_autofree Dwarf_Die *pdies = g_new0(Dwarf_Die, np + 1);
	g_autofree bool *pfound = g_new0(bool, np + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	guint found = 0, expected = 0;

	if (fd < 0) {
		g_set_error(error, ABICHECK_ERROR, 0,
			    "%s: %s", path, g_strerror(errno));
		return FALSE;
	}
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		g_set_error(error, ABICHECK_ERROR, 0,
			    "%s: no debug information: %s", path,
			    dwarf_errmsg(-1));
		close(fd);
		return FALSE;
	}
	while (dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0) {
		Dwarf_Die die;

		if (dwarf_child(&cudie, &die))
			continue;
		do {
			const char *name = dwarf_diename(&die);
			Dwarf_Die t, e;
			guint64 k;

			if (!name)
				continue;
			if (dwarf_tag(&die) == DW_TAG_typedef &&
			    g_str_has_prefix(name, PROBE_TYPE) &&
			    (k = g_ascii_strtoull(name + strlen(PROBE_TYPE),
						  NULL, 10)) < commands->len &&
			    die_type(&die, &t)) {
				struct command *c = commands->pdata[k];
				struct layout *l = &c->layout[abi];

				l->present = true;
				l->members = g_ptr_array_new_with_free_func(
					(GDestroyNotify)member_free);
				walk(abi, &t, "", "", 0, -1, l->members, 0, true);
			}
			if (dwarf_tag(&die) == DW_TAG_typedef &&
			    g_str_has_prefix(name, PROBE_POINTEE) &&
			    (k = g_ascii_strtoull(name + strlen(PROBE_POINTEE),
						  NULL, 10)) < np) {
				pdies[k] = die;
				pfound[k] = true;
			}
			if (dwarf_tag(&die) != DW_TAG_enumeration_type ||
			    strcmp(name, PROBE_CMD "s") || dwarf_child(&die, &e))
				continue;
			do {
				const char *en = dwarf_diename(&e);
				Dwarf_Attribute a;
				Dwarf_Word w;
				Dwarf_Sword sw;

				if (!en || !g_str_has_prefix(en, PROBE_CMD) ||
				    !dwarf_attr(&e, DW_AT_const_value, &a))
					continue;
				k = g_ascii_strtoull(en + strlen(PROBE_CMD), NULL, 10);
				if (k >= commands->len)
					continue;
				if (dwarf_formudata(&a, &w) == 0)
					((struct command *)commands->pdata[k])->number[abi] = (uint32_t)w;
				else if (dwarf_formsdata(&a, &sw) == 0)
					((struct command *)commands->pdata[k])->number[abi] = (uint32_t)sw;
				found++;
			} while (dwarf_siblingof(&e, &e) == 0);
		} while (dwarf_siblingof(&die, &die) == 0);
	}
	if (!attach_pointees(abi, commands, pointees, pdies, pfound, error)) {
		dwarf_end(dw);
		close(fd);
		return FALSE;
	}
	dwarf_end(dw);
	close(fd);
	for (guint i = 0; i < commands->len; i++)
		expected += !((struct command *)commands->pdata[i])->unresolved;
	if (found != expected) {
		g_set_error(error, ABICHECK_ERROR, 0,
			    "%s: %u of %u command numbers in the debug "
			    "information", path, found, expected);
		return FALSE;
	}
	return TRUE;
}

static int command_cmp(gconstpointer a, gconstpointer b)
{
	const struct command *x = *(struct command *const *)a;
	const struct command *y = *(struct command *const *)b;
	int d = g_strcmp0(x->file, y->file);

	return d ? d : (int)x->line - (int)y->line;
}

/* The enumerators `NAME = _IOR(...)` of a header's preprocessed text. */
static void scan_enumerators(const char *line, const char *file,
			     unsigned int lineno, GHashTable *seen,
			     GPtrArray *commands)
{
	const char *p, *raw = line;
	g_autofree char *flat = g_strdup(line);

	/* One text: the positions stay, newlines count the lines. */
	g_strdelimit(flat, "\n\t", ' ');
	line = flat;
	p = flat;

	while ((p = strstr(p, MARK))) {
		const char *q = p, *end;
		struct command *c;

		/* Back over `=` and blanks to the name, which must follow a
		 * `{` or `,` of the enum (or start the line). */
		while (q > line && q[-1] == ' ')
			q--;
		if (q == line || q[-1] != '=') {
			p += strlen(MARK);
			continue;
		}
		q--;
		while (q > line && q[-1] == ' ')
			q--;
		end = q;
		while (q > line && (g_ascii_isalnum(q[-1]) || q[-1] == '_'))
			q--;
		{
			const char *b = q;

			while (b > line && b[-1] == ' ')
				b--;
			if (q == end || g_ascii_isdigit(*q) ||
			    (b > line && b[-1] != '{' && b[-1] != ',')) {
				p += strlen(MARK);
				continue;
			}
		}
		g_autofree char *name = g_strndup(q, end - q);

		c = command_from_mark(name, p, false);
		if (c && !g_hash_table_contains(seen, name)) {
			unsigned int nl = 0;

			for (const char *x = line; x < q; x++)
				nl += (raw[x - line] == '\n');
			c->file = g_strdup(file);
			c->line = lineno + nl;
			g_hash_table_add(seen, g_strdup(name));
			g_ptr_array_add(commands, c);
		} else {
			command_free(c);
		}
		p += strlen(MARK);
	}
}

/*
 * An expansion that is a plain command number as the kernel writes one,
 * 0xTTNN with four hex digits and a type byte: its value, else -1.
 */
static long plain_number(const char *s)
{
	char *end;
	long v;

	while (*s == '(' || *s == ' ')
		s++;
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	for (int i = 2; i < 6; i++)
		if (!g_ascii_isxdigit(s[i]))
			return -1;
	v = strtol(s, &end, 16);
	if (end != s + 6 || v < 0x100)
		return -1;
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	while (*end == ')' || *end == ' ')
		end++;
	return *end ? -1 : v;
}

/* The type byte of a command's type argument ('F', 0x12), else -1. */
static long type_byte(const char *t)
{
	char *end;
	long v;

	if (!t)
		return -1;
	if (t[0] == '\'' && t[1] && t[1] != '\\' && t[2] == '\'')
		return (unsigned char)t[1];
	v = strtol(t, &end, 0);
	return end != t && !*end ? v : -1;
}

/* A command defined as a plain number, by the macro d. */
static struct command *number_command(const struct define *d)
{
	struct command *c = g_new0(struct command, 1);

	c->name = g_strdup(d->name);
	c->file = g_strdup(d->file);
	c->line = d->line;
	c->dir = DIR_UNKNOWN;
	c->macro = g_strdup("number");
	c->findings = g_ptr_array_new();
	return c;
}

/* Whether another plain number of d's header has d's type byte. */
static bool type_shared(GPtrArray *plain, const struct define *d)
{
	for (guint i = 0; i < plain->len; i++) {
		const struct define *o = plain->pdata[i];

		if (o != d && !g_strcmp0(o->file, d->file) &&
		    ((o->plain ^ d->plain) & 0xff00) == 0)
			return true;
	}
	return false;
}

/*
 * The plain numbers that look like commands of their header: in a header
 * without _IO commands (cdrom.h, kd.h, i2c-dev.h), those whose type byte
 * another plain number shares, as a driver's commands share theirs, so
 * that flags of one bit each (cdrom.h's CDC_DVD, 0x8000) and masks (kd.h's
 * UNI_DIRECT_MASK, 0x01ff) are not taken for commands; else those whose
 * type byte one of its commands has (fb.h's 0x46xx beside FBIO_CURSOR's
 * 'F'), so that flags such as WDIOF_KEEPALIVEPING are not either.
 */
static void add_plain_numbers(GPtrArray *plain, GHashTable *seen,
			      GPtrArray *commands)
{
	guint marked = commands->len;

	for (guint i = 0; i < plain->len; i++) {
		struct define *d = plain->pdata[i];
		long type = (d->plain >> 8) & 0xff;
		bool anchored = false, matches = false;
		struct command *c;

		for (guint j = 0; j < marked; j++) {
			const struct command *o = commands->pdata[j];

			if (g_strcmp0(o->file, d->file))
				continue;
			anchored = true;
			matches = matches || type_byte(o->type_arg) == type;
		}
		if ((anchored ? !matches : !type_shared(plain, d)) ||
		    g_hash_table_contains(seen, d->name))
			continue;
		c = number_command(d);
		c->plain = true;
		g_hash_table_add(seen, g_strdup(d->name));
		g_ptr_array_add(commands, c);
	}
}

static const char redefine[] =
	"/* Its include guard keeps the markers below for every header. */\n"
	"#include <asm/ioctl.h>\n"
	"#undef _IO\n#undef _IOR\n#undef _IOW\n#undef _IOWR\n"
	"#define _IO(t, n) " MARK "N__(t, n)\n"
	"#define _IOR(t, n, s) " MARK "R__(t, n, s)\n"
	"#define _IOW(t, n, s) " MARK "W__(t, n, s)\n"
	"#define _IOWR(t, n, s) " MARK "WR__(t, n, s)\n"
	"#undef _IOC\n#define _IOC(d, t, n, s) " MARK "C__(d, t, n, s)\n";

/* Pass 2: the commands among the headers' macros and enumerators. */
static gboolean find_commands(const struct probe_options *o,
			      struct workdir *w, char **headers,
			      GPtrArray *defs, GHashTable *header_files,
			      GPtrArray *given, GPtrArray *commands,
			      GPtrArray *notes, GError **error)
{
	g_autoptr(GString) src = g_string_new(redefine);
	g_autofree char *path = workdir_file(w, "find.c");
	g_autofree char *out = NULL;
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash,
							   g_str_equal,
							   g_free, NULL);
	g_autoptr(GPtrArray) fn_like = g_ptr_array_new();
	g_autoptr(GPtrArray) plain = g_ptr_array_new();
	struct cpp_pos pos = { g_ptr_array_new_with_free_func(g_free), 0 };
	g_auto(GStrv) lines = NULL, expanded = NULL;
	g_autoptr(GString) chunk = g_string_new(NULL);
	g_autoptr(GString) expansions = g_string_new(NULL);
	g_autofree char *chunk_header = NULL;
	unsigned int chunk_line = 0;
	/* With line markers: they tell which header a line is from. */
	const char *args[] = { "-m64", "-E", path, NULL };

	append_includes(src, w, headers);
	for (guint i = 0; i < defs->len; i++) {
		struct define *d = defs->pdata[i];

		if (!d->function_like)
			g_string_append_printf(src, EXPAND " %u %s\n", i,
					       d->name);
	}
	if (!g_file_set_contents(path, src->str, -1, error))
		return FALSE;
	if (!run_cc(o, args, &out, error))
		return FALSE;
	/*
	 * The preprocessor breaks an expansion over lines (with markers in
	 * between) where its tokens come from several places: the headers'
	 * text is scanned in chunks between markers, and the probe's own
	 * lines, the expansions, as one text.
	 */
	lines = g_strsplit(out, "\n", -1);
	for (char **l = lines;; l++) {
		const char *header = cpp_header(&pos);

		if (!*l || cpp_marker(&pos, *l)) {
			if (chunk->len && chunk_header &&
			    g_hash_table_contains(header_files, chunk_header))
				scan_enumerators(chunk->str, chunk_header,
						 chunk_line, seen, commands);
			g_string_truncate(chunk, 0);
			g_clear_pointer(&chunk_header, g_free);
			if (!*l)
				break;
			chunk_line = pos.line;
			chunk_header = g_strdup(cpp_header(&pos));
			continue;
		}
		if (header)
			g_string_append_printf(chunk, "%s\n", *l);
		else if (pos.stack->len == 1 &&
			 (expansions->len || g_str_has_prefix(*l, EXPAND " ")))
			g_string_append_printf(expansions, "%s ", *l);
		pos.line++;
	}
	expanded = g_strsplit(expansions->str, EXPAND " ", -1);
	for (char **e = expanded; *e; e++) {
		char *end;
		guint i = (guint)strtoul(*e, &end, 10);
		struct define *d;
		struct command *c;

		if (end == *e || i >= defs->len || *end != ' ')
			continue;
		d = defs->pdata[i];
		g_strchomp(end);
		c = command_from_mark(d->name, end + 1, true);
		if (!c) {
			d->plain = plain_number(end + 1);
			if (d->plain >= 0)
				g_ptr_array_add(plain, d);
			continue;
		}
		if (g_hash_table_contains(seen, d->name)) {
			command_free(c);
			continue;
		}
		c->file = g_strdup(d->file);
		c->line = d->line;
		/* _IOC's payload is T of its sizeof(T): no macro of the
		 * probe gives it back. */
		c->payload_per_abi = c->payload_arg && !c->sizeof_arg &&
				     strcmp(c->macro, "_IOC");
		g_hash_table_add(seen, g_strdup(d->name));
		g_ptr_array_add(commands, c);
	}
	g_ptr_array_unref(pos.stack);
	add_plain_numbers(plain, seen, commands);

	/* --command: a payload for a command its number does not describe. */
	for (guint i = 0; given && i < given->len; i++) {
		struct given_command *g = given->pdata[i];
		struct command *c = NULL;

		for (guint j = 0; j < commands->len && !c; j++)
			if (!strcmp(((struct command *)commands->pdata[j])->name,
				    g->name))
				c = commands->pdata[j];
		if (!c) {
			struct define *d = NULL;

			for (guint j = 0; j < defs->len && !d; j++)
				if (!strcmp(((struct define *)defs->pdata[j])->name,
					    g->name) &&
				    !((struct define *)defs->pdata[j])->function_like)
					d = defs->pdata[j];
			if (!d) {
				g_set_error(error, ABICHECK_ERROR, 0,
					    "--command %s: the headers define no "
					    "macro or command of that name",
					    g->name);
				return FALSE;
			}
			c = number_command(d);
			g_ptr_array_add(commands, c);
		} else if (c->payload_arg) {
			g_set_error(error, ABICHECK_ERROR, 0,
				    "--command %s: its %s already names the "
				    "payload (%s)", g->name, c->macro,
				    c->payload_arg);
			return FALSE;
		}
		if (!strcmp(g->type, "value")) {
			c->by_value = true;
			continue;
		}
		g_free(c->payload_expr);
		c->payload_arg = g_strdup(g->type);
		c->payload_expr = g_strdup(g->type);
	}

	for (guint i = 0; i < defs->len; i++) {
		struct define *d = defs->pdata[i];

		if (d->function_like && !g_str_has_prefix(d->name, "_"))
			g_ptr_array_add(fn_like, d->name);
	}
	if (fn_like->len && notes) {
		g_ptr_array_add(fn_like, NULL);
		g_autofree char *names = g_strjoinv(", ", (char **)fn_like->pdata);

		g_ptr_array_add(notes, g_strdup_printf(
			"macros with parameters are not checked, as they "
			"define no one command: %s", names));
	}
	g_ptr_array_sort(commands, command_cmp);
	return TRUE;
}

static const char payload_macros[] =
	"#undef _IO\n#undef _IOR\n#undef _IOW\n#undef _IOWR\n"
	"#define _IOR(t, n, s) (*(__typeof__(s) *)0)\n"
	"#define _IOW(t, n, s) (*(__typeof__(s) *)0)\n"
	"#define _IOWR(t, n, s) (*(__typeof__(s) *)0)\n";

/* Pass 3: one probe per ABI, read back through libdw. */
static gboolean write_probe(struct workdir *w, const char *path,
			    char **headers, GPtrArray *commands,
			    GPtrArray *pointees, GError **error)
{
	g_autoptr(GString) src = g_string_new(NULL);

	append_includes(src, w, headers);
	/* Not empty when every command is unresolved. */
	g_string_append(src, "enum " PROBE_CMD "s {\n\t__cusemu_probe_none,\n");
	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];

		if (!c->unresolved)
			g_string_append_printf(src,
				"# 1 \"<command %s>\"\n\t" PROBE_CMD
				"%u = (%s),\n", c->name, i, c->name);
	}
	g_string_append(src, "};\n");
	/* From here a command macro expands to its payload, by this ABI's
	 * preprocessor: the i386 type of a data_type that _TIME_BITS or a
	 * -D changes is i386's own. */
	g_string_append(src, payload_macros);
	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];

		if (c->payload_expr && !c->unresolved)
			g_string_append_printf(src,
				"# 1 \"<payload of %s>\"\n"
				"typedef __typeof__(%s) " PROBE_TYPE "%u;\n",
				c->name, c->payload_per_abi ? c->name
							    : c->payload_expr,
				i);
	}
	for (guint i = 0; pointees && i < pointees->len; i++) {
		const struct given_command *g = pointees->pdata[i];

		g_string_append_printf(src, "# 1 \"<pointee %s>\"\n"
				       "typedef %s " PROBE_POINTEE "%u;\n",
				       g->name, g->type, i);
	}
	return g_file_set_contents(path, src->str, -1, error);
}

/*
 * The commands that the compiler's errors blame (`<command X>:1:2: error:
 * ...`, or a header's error followed by `<payload of X>: note: in
 * expansion of macro`): the compiler's words go to each, for an unresolved
 * finding. FALSE when the errors blame none of them.
 */
static gboolean mark_unresolved(GPtrArray *commands, enum abi abi,
				const char *message)
{
	g_auto(GStrv) lines = g_strsplit(message, "\n", -1);
	const char *words = NULL;
	gboolean any = FALSE;

	for (char **l = lines; *l; l++) {
		const char *name = *l, *end, *e = strstr(*l, ": error: ");

		if (e)
			words = e + strlen(": error: ");
		if (g_str_has_prefix(name, "<command "))
			name += strlen("<command ");
		else if (g_str_has_prefix(name, "<payload of "))
			name += strlen("<payload of ");
		else
			continue;
		end = strchr(name, '>');
		if (!end || !words)
			continue;
		for (guint i = 0; i < commands->len; i++) {
			struct command *c = commands->pdata[i];

			if (c->unresolved ||
			    strlen(c->name) != (size_t)(end - name) ||
			    strncmp(c->name, name, end - name))
				continue;
			c->unresolved = g_strdup_printf("%s: %s",
							abi_names[abi], words);
			any = TRUE;
		}
	}
	return any;
}

static gboolean lay_out(const struct probe_options *o, struct workdir *w,
			char **headers, GPtrArray *commands, GError **error)
{
	g_autofree char *path = workdir_file(w, "probe.c");
	/* Not g_autofree on an array: that frees its first element alone. */
	g_autofree char *so_x86_64 = workdir_file(w, "probe-x86_64.so");
	g_autofree char *so_i386 = workdir_file(w, "probe-i386.so");
	char *so[ABI_COUNT] = { [ABI_X86_64] = so_x86_64,
				[ABI_I386] = so_i386 };
	/* Each round leaves out the commands the last one's errors blamed,
	 * so that one kernel-only type costs one command, not the header. */
	for (int abi = 0; abi < ABI_COUNT;) {
		g_autoptr(GError) failed = NULL;
		const char *args[] = {
			abi_flags[abi], "-g", "-fno-eliminate-unused-debug-types",
			"-shared", "-nostdlib", "-fPIC", "-w", "-o", so[abi],
			path, NULL,
		};

		if (!write_probe(w, path, headers, commands, o->pointees,
				 error))
			return FALSE;
		if (run_cc(o, args, NULL, &failed)) {
			abi++;
			continue;
		}
		if (!mark_unresolved(commands, abi, failed->message)) {
			g_propagate_prefixed_error(error, g_steal_pointer(&failed),
						   "%s: ", abi_names[abi]);
			return FALSE;
		}
		abi = 0;
	}
	for (int abi = 0; abi < ABI_COUNT; abi++) {
		if (!read_probe(so[abi], abi, commands, o->pointees, error)) {
			g_prefix_error(error, "%s: ", abi_names[abi]);
			return FALSE;
		}
	}
	return TRUE;
}

const struct member *layout_find(const struct layout *l, const char *path)
{
	for (guint i = 0; l->members && i < l->members->len; i++) {
		const struct member *m = l->members->pdata[i];

		if (!strcmp(m->path, path))
			return m;
	}
	return NULL;
}

gboolean probe_headers(const struct probe_options *o, char **headers,
		       GPtrArray *given, GPtrArray **commands_out,
		       GPtrArray *notes, GError **error)
{
	struct workdir w = { 0 };
	g_autoptr(GString) src = g_string_new(NULL);
	g_autofree char *p1 = NULL, *out = NULL;
	g_autoptr(GPtrArray) defs = NULL;
	g_autoptr(GPtrArray) cflags = g_ptr_array_new();
	struct probe_options local;
	g_autoptr(GHashTable) header_files = g_hash_table_new_full(
		g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) names = g_hash_table_new_full(
		g_str_hash, g_str_equal, g_free, g_free);
	GPtrArray *commands = g_ptr_array_new_with_free_func(
		(GDestroyNotify)command_free);
	gboolean ok = FALSE;

	if (!check_header_names(headers, error))
		goto out;
	if (!workdir_make(&w, error))
		goto out;
	w.prelude = workdir_file(&w, PRELUDE_NAME);
	if (!g_file_set_contents(w.prelude, prelude, -1, error))
		goto out;
	local = *o;
	local.cflags = cflags;
	for (guint i = 0; i < o->cflags->len; i++)
		g_ptr_array_add(cflags, o->cflags->pdata[i]);
	if (g_file_test(LIBDRM_DIR "/drm.h", G_FILE_TEST_IS_REGULAR)) {
		g_autofree char *drm = workdir_file(&w, "drm");

		if (symlink(LIBDRM_DIR, drm) == 0) {
			g_ptr_array_add(cflags, "-idirafter");
			g_ptr_array_add(cflags, w.path);
		}
	}
	o = &local;

	/* Pass 1: the macros each header defines. */
	append_includes(src, &w, headers);
	p1 = workdir_file(&w, "defines.c");
	if (!g_file_set_contents(p1, src->str, -1, error))
		goto out;
	{
		const char *args[] = { "-m64", "-E", "-dD", p1, NULL };

		if (!run_cc(o, args, &out, error))
			goto out;
	}
	defs = list_defines(out, header_files);
	{
		g_autofree char *p = g_strconcat(
			prelude, strstr(out, "/linux/time.h\"")
					 ? prelude_libc_types
					 : prelude_libc_time, NULL);

		if (!g_file_set_contents(w.prelude, p, -1, error))
			goto out;
		if (o->prelude) {
			g_free(*o->prelude);
			*o->prelude = g_steal_pointer(&p);
		}
	}

	/* Show each file as the command line named it. */
	for (char **h = headers; *h; h++) {
		GHashTableIter it;
		gpointer file;

		g_hash_table_iter_init(&it, header_files);
		while (g_hash_table_iter_next(&it, &file, NULL)) {
			g_autofree char *a = g_canonicalize_filename(file, NULL);
			g_autofree char *b = g_file_test(*h, G_FILE_TEST_EXISTS)
				? g_canonicalize_filename(*h, NULL) : NULL;

			if ((b && !strcmp(a, b)) ||
			    (!b && g_str_has_suffix(a, *h) &&
			     a[strlen(a) - strlen(*h) - 1] == '/'))
				g_hash_table_insert(names, g_strdup(file),
						    g_strdup(*h));
		}
	}

	if (!find_commands(o, &w, headers, defs, header_files, given, commands,
			   notes, error))
		goto out;
	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];

		c->header = g_strdup(header_name(names, c->file));
	}
	if (commands->len && !lay_out(o, &w, headers, commands, error))
		goto out;
	ok = TRUE;
out:
	workdir_clear(&w);
	if (!ok) {
		g_ptr_array_unref(commands);
		return FALSE;
	}
	*commands_out = commands;
	return TRUE;
}

/*
 * What <cusemu/uaccess.h> gives generated code, for a check that needs no
 * installed SDK: the same signature, so that a call that does not fit it
 * fails here too.
 */
static const char uaccess_stub[] =
	"#include <errno.h>\n"
	"#include <stdbool.h>\n"
	"#include <stddef.h>\n"
	"#include <stdint.h>\n"
	"typedef uint64_t cusemu_uptr_t;\n"
	"#define CUSEMU_USER_MAX_BYTES (128u * 1024u)\n"
	"unsigned long cusemu_copy_from_user(void *to, cusemu_uptr_t from,\n"
	"\t\t\t\t    unsigned long n);\n"
	"unsigned long cusemu_copy_to_user(cusemu_uptr_t to, const void *from,\n"
	"\t\t\t\t  unsigned long n);\n"
	"int cusemu_user_want_read(cusemu_uptr_t addr, size_t len);\n"
	"int cusemu_user_want_write(cusemu_uptr_t addr, size_t len);\n"
	"bool cusemu_in_compat_syscall(void);\n"
	"static inline cusemu_uptr_t cusemu_compat_ptr(uint32_t uptr)\n"
	"{\n\treturn uptr;\n}\n";

/* -I for the directories of the headers given as files, which generated
 * code includes by their base names. */
static void add_header_dirs(GPtrArray *args, char **headers)
{
	for (char **h = headers; *h; h++) {
		if (!g_file_test(*h, G_FILE_TEST_EXISTS))
			continue;
		g_autofree char *abs = g_canonicalize_filename(*h, NULL);
		g_autofree char *dir = g_path_get_dirname(abs);

		g_ptr_array_add(args, g_strconcat("-I", dir, NULL));
	}
}

gboolean probe_check_code(const struct probe_options *o, char **headers,
			  const char *code, GError **error)
{
	struct workdir w = { 0 };
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *header = NULL, *unit = NULL, *sdk = NULL, *stub = NULL;
	g_autofree char *drm = NULL;
	gboolean ok = FALSE;

	if (!workdir_make(&w, error))
		return FALSE;
	header = workdir_file(&w, "compat.h");
	unit = workdir_file(&w, "check.c");
	/* The file before its directory: they go in this order. */
	stub = workdir_file(&w, "cusemu/uaccess.h");
	sdk = workdir_file(&w, "cusemu");
	drm = workdir_file(&w, "drm");
	if (!g_file_set_contents(header, code, -1, error) ||
	    !g_file_set_contents(unit, "#include \"compat.h\"\n", -1, error))
		goto out;
	if (g_mkdir(sdk, 0700) < 0) {
		g_set_error(error, ABICHECK_ERROR, 0, "%s: %s", sdk,
			    g_strerror(errno));
		goto out;
	}
	if (!g_file_set_contents(stub, uaccess_stub, -1, error))
		goto out;
	/* The stub's directory first, then what the probes had. */
	g_ptr_array_add(args, g_strconcat("-I", w.path, NULL));
	add_header_dirs(args, headers);
	if (g_file_test(LIBDRM_DIR "/drm.h", G_FILE_TEST_IS_REGULAR) &&
	    symlink(LIBDRM_DIR, drm) == 0) {
		g_ptr_array_add(args, g_strdup("-idirafter"));
		g_ptr_array_add(args, g_strdup(w.path));
	}
	for (int abi = 0; abi < ABI_COUNT; abi++) {
		g_autoptr(GPtrArray) argv = g_ptr_array_new();
		g_autoptr(GError) failed = NULL;

		g_ptr_array_add(argv, (char *)abi_flags[abi]);
		for (guint i = 0; i < args->len; i++)
			g_ptr_array_add(argv, args->pdata[i]);
		g_ptr_array_add(argv, "-fsyntax-only");
		g_ptr_array_add(argv, "-Wall");
		g_ptr_array_add(argv, "-Wextra");
		g_ptr_array_add(argv, "-Werror");
		g_ptr_array_add(argv, unit);
		g_ptr_array_add(argv, NULL);
		if (!run_cc(o, (const char *const *)argv->pdata, NULL, &failed)) {
			g_propagate_prefixed_error(error, g_steal_pointer(&failed),
						   "%s: ", abi_names[abi]);
			goto out;
		}
	}
	ok = TRUE;
out:
	workdir_clear(&w);
	return ok;
}
