/* SPDX-License-Identifier: MIT */
/*
 * What is outside the portable surface, in cusemu-kmod's words: the
 * headers that stand in for libc's in a module's tree, what a model's
 * sources show before the build (a header no one has, a spelling the
 * kernel's macros break), and kbuild's errors read back, each named with
 * the model's file and line and what to use instead. Every use is named
 * in one run: a header the kernel lacks is an #error the compile goes on
 * after, not the fatal error it would be, and make goes on after a source
 * that failed.
 */
#define G_LOG_DOMAIN "cusemu-kmod"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "outside.h"

#define SURFACE "cusemu's portable surface, which a kernel module is built on"
#define SEE_SURFACE "the SDK's portable calls (cusemu-model(7), THE PORTABLE SURFACE)"

/*
 * What stands in for libc's headers in the module's tree (include/, first
 * on its include path): the headers whose calls the kernel has too map to
 * the kernel's own; the others stop the build where the model includes
 * them, saying what to use instead.
 */
struct libc_header {
	const char *name;
	const char *what;	/* what it gives, or what to use instead */
	const char *body;	/* the kernel's includes; NULL: an #error */
};

static const struct libc_header libc_headers[] = {
	{ "string.h", "memcpy, memset, strcmp, strlen and the rest the kernel has",
	  "#include <linux/string.h>\n" },
	{ "stddef.h", "size_t, NULL, offsetof",
	  "#include <linux/stddef.h>\n#include <linux/types.h>\n" },
	{ "stdbool.h", "bool, true, false",
	  "#include <linux/stddef.h>\n#include <linux/types.h>\n" },
	{ "stdint.h", "uint8_t to uint64_t, int8_t to int64_t and their limits",
	  "#include <linux/limits.h>\n#include <linux/types.h>\n\n"
	  "#define INT8_MIN S8_MIN\n#define INT8_MAX S8_MAX\n"
	  "#define UINT8_MAX U8_MAX\n#define INT16_MIN S16_MIN\n"
	  "#define INT16_MAX S16_MAX\n#define UINT16_MAX U16_MAX\n"
	  "#define INT32_MIN S32_MIN\n#define INT32_MAX S32_MAX\n"
	  "#define UINT32_MAX U32_MAX\n#define INT64_MIN S64_MIN\n"
	  "#define INT64_MAX S64_MAX\n#define UINT64_MAX U64_MAX\n" },
	{ "errno.h", "the error numbers (no errno: calls return -errno)",
	  "#include <linux/errno.h>\n" },
	{ "poll.h", "POLLIN, POLLOUT and the rest, for ->poll",
	  "#include <linux/poll.h>\n" },
	{ "limits.h", "INT_MAX and the rest", "#include <linux/limits.h>\n" },
	{ "sys/types.h", "ssize_t, off_t, pid_t", "#include <linux/types.h>\n" },
	{ "sys/ioctl.h", "_IO, _IOR, _IOW, _IOWR and _IOC_*",
	  "#include <linux/ioctl.h>\n" },
	/* A uapi header's struct timeval changed with the y2038 work: the
	 * kernel's time types, without it. */
	{ "sys/time.h", "the kernel's time types", "#include <linux/time.h>\n" },
	{ "glib.h", "glib: use <cusemu/lock.h> (struct cusemu_mutex), "
		    "<cusemu/sched.h> (cusemu_timer, cusemu_waitq, cusemu_time_ns), "
		    "<cusemu/memory.h> (cusemu_zalloc, cusemu_strscpy) and "
		    "<cusemu/log.h>", NULL },
	{ "stdlib.h", "malloc and free: use cusemu_zalloc() and cusemu_free() "
		      "of <cusemu/memory.h>", NULL },
	{ "stdio.h", "stdio: format with cusemu_snprintf() of <cusemu/memory.h>, "
		     "log with cusemu_dev_info() and the rest of <cusemu/log.h>",
	  NULL },
	{ "time.h", "clock_gettime and nanosleep: use cusemu_time_ns() and "
		    "cusemu_usleep() of <cusemu/sched.h>", NULL },
	{ "unistd.h", "unistd: sleep with cusemu_usleep() of <cusemu/sched.h>; "
		      "a module has no files of its own", NULL },
	{ "pthread.h", "threads: use a timer (cusemu_timer) or a wait queue "
		       "(cusemu_waitq) of <cusemu/sched.h>, and struct "
		       "cusemu_mutex of <cusemu/lock.h>", NULL },
	{ "fcntl.h", "files: a module has no files of its own to open", NULL },
	{ "assert.h", "assert(): check the condition and return -EINVAL, or "
		      "use the kernel's WARN_ON() under #ifdef __KERNEL__", NULL },
	{ "inttypes.h", "PRIu64 and the rest: the kernel prints a uint64_t "
			"with %llu and a cast to unsigned long long", NULL },
	{ "math.h", "floating point: a module has none; compute in integers", NULL },
	{ "signal.h", "signals: a handler asks cusemu_signal_pending() of "
		      "<cusemu/sched.h>", NULL },
	{ "setjmp.h", "setjmp: return -errno up the calls instead", NULL },
	{ "sys/mman.h", "mappings: a module has no mmap of its own; "
			"cusemu_zalloc() of <cusemu/memory.h> for memory", NULL },
	{ "sys/stat.h", "files: a module has no files of its own", NULL },
	{ "sys/socket.h", "sockets: a module has none", NULL },
	{ "dlfcn.h", "dlopen: a module links what it calls", NULL },
	{ "glib/gstdio.h", "glib's stdio: a module has no files of its own", NULL },
	{ "gio/gio.h", "gio: a module has no files, sockets or D-Bus of its own", NULL },
	{ "glib-object.h", "GObject: plain structs and the model's own functions", NULL },
};

static const struct libc_header *libc_header(const char *name)
{
	for (guint i = 0; i < G_N_ELEMENTS(libc_headers); i++)
		if (!strcmp(libc_headers[i].name, name))
			return &libc_headers[i];
	return NULL;
}

static bool write_header(const char *dir, const char *name, const char *text)
{
	g_autofree char *path = g_build_filename(dir, "include", name, NULL);
	g_autofree char *parent = g_path_get_dirname(path);
	g_autoptr(GError) error = NULL;

	if (g_mkdir_with_parents(parent, 0755)) {
		fprintf(stderr, "cusemu-kmod: cannot create %s: %s\n", parent,
			g_strerror(errno));
		return false;
	}
	if (!g_file_set_contents(path, text, -1, &error)) {
		fprintf(stderr, "cusemu-kmod: %s\n", error->message);
		return false;
	}
	return true;
}

/* What to use instead of a header the kernel does not have either. */
static const char *header_advice(const char *name)
{
	const struct libc_header *h = libc_header(name);

	if (h)
		return h->what;
	if (g_str_has_prefix(name, "glib") || g_str_has_prefix(name, "gio/") ||
	    g_str_has_prefix(name, "gobject/"))
		return "glib: a module has none; use " SEE_SURFACE;
	return "the kernel has no such header; use " SEE_SURFACE
	       ", or the kernel's own headers under #ifdef __KERNEL__";
}

static char *error_header(const char *name)
{
	return g_strdup_printf(
		"/* <%s> is outside cusemu's portable surface: a model that "
		"includes it cannot build as a module. */\n"
		"#error \"<%s> is outside " SURFACE ": %s\"\n",
		name, name, header_advice(name));
}

bool kmod_write_libc_headers(const char *dir, GPtrArray *headers)
{
	for (guint i = 0; i < G_N_ELEMENTS(libc_headers); i++) {
		const struct libc_header *h = &libc_headers[i];
		g_autofree char *guard = g_ascii_strup(h->name, -1);
		g_autofree char *text = NULL;

		g_strdelimit(guard, "/.-", '_');
		if (h->body)
			text = g_strdup_printf(
				"/* <%s> in a module that cusemu-kmod writes: %s, "
				"from the kernel's own headers. */\n"
				"#ifndef CUSEMU_KMOD_%s\n#define CUSEMU_KMOD_%s\n"
				"%s#endif\n", h->name, h->what, guard, guard,
				h->body);
		else
			text = error_header(h->name);
		if (!write_header(dir, h->name, text))
			return false;
	}
	for (guint i = 0; headers && i < headers->len; i++) {
		g_autofree char *text = error_header(headers->pdata[i]);

		if (!write_header(dir, headers->pdata[i], text))
			return false;
	}
	return true;
}

/* Headers a module's build has: the SDK's and the kernel's own. */
static bool kernel_header(const char *name)
{
	static const char *const prefixes[] = {
		"cusemu/", "linux/", "asm/", "asm-generic/", "uapi/", "generated/",
		"vdso/", "crypto/", "net/", "sound/", "media/", "drm/", "acpi/",
		"clocksource/", "dt-bindings/", "keys/", "kunit/", "math-emu/",
		"misc/", "pcmcia/", "ras/", "rdma/", "scsi/", "soc/", "target/",
		"trace/", "video/", "xen/", "mtd/",
	};

	for (guint i = 0; i < G_N_ELEMENTS(prefixes); i++)
		if (g_str_has_prefix(name, prefixes[i]))
			return true;
	return false;
}

/* name in one of dirs (or in dir, for a "" include), or NULL. */
static char *find_header(const char *name, const char *dir, GPtrArray *dirs)
{
	if (dir) {
		char *path = g_build_filename(dir, name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
			return path;
		g_free(path);
	}
	for (guint i = 0; dirs && i < dirs->len; i++) {
		char *path = g_build_filename(dirs->pdata[i], name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
			return path;
		g_free(path);
	}
	return NULL;
}

/* The spellings of an attribute that the kernel's macros of the same
 * names break, and the one that builds in both. */
static const struct {
	const char *word, *write;
} macro_attributes[] = {
	{ "noinline", "__attribute__((__noinline__))" },
	{ "fallthrough", "__attribute__((__fallthrough__)), or the kernel's fallthrough; under #ifdef __KERNEL__" },
};

struct scan {
	GPtrArray *dirs;	/* the include path of the source */
	GPtrArray *headers;	/* what none has */
	GHashTable *seen;	/* files read */
	GRegex *include, *attribute, *function;
	GPtrArray *out;		/* what it says */
	GHashTable *broken;	/* functions declared on a line said */
};

/* The function a line with a broken attribute declares: the last name
 * before a '(' but the attribute's own. */
static void note_declared(struct scan *sc, const char *line)
{
	g_autoptr(GMatchInfo) mi = NULL;
	char *last = NULL;

	g_regex_match(sc->function, line, 0, &mi);
	while (g_match_info_matches(mi)) {
		char *name = g_match_info_fetch(mi, 1);

		if (strcmp(name, "__attribute__")) {
			g_free(last);
			last = name;
		} else {
			g_free(name);
		}
		g_match_info_next(mi, NULL);
	}
	if (last)
		g_hash_table_add(sc->broken, last);
}

static void scan_file(struct scan *sc, const char *path)
{
	g_autofree char *text = NULL;
	g_autofree char *dir = NULL;
	g_auto(GStrv) lines = NULL;

	if (g_hash_table_contains(sc->seen, path) ||
	    !g_file_get_contents(path, &text, NULL, NULL))
		return;
	g_hash_table_add(sc->seen, g_strdup(path));
	dir = g_path_get_dirname(path);
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		g_autoptr(GMatchInfo) mi = NULL;

		if (g_regex_match(sc->include, lines[i], 0, &mi)) {
			g_autofree char *open = g_match_info_fetch(mi, 1);
			g_autofree char *name = g_match_info_fetch(mi, 2);
			bool quoted = !strcmp(open, "\"");
			g_autofree char *found = NULL;

			if (!quoted && (libc_header(name) || kernel_header(name)))
				continue;
			found = find_header(name, quoted ? dir : NULL, sc->dirs);
			if (found)
				scan_file(sc, found);
			else if (!quoted &&
				 !g_ptr_array_find_with_equal_func(sc->headers, name,
								   g_str_equal, NULL))
				g_ptr_array_add(sc->headers, g_strdup(name));
			continue;
		}
		g_clear_pointer(&mi, g_match_info_free);
		if (g_regex_match(sc->attribute, lines[i], 0, &mi)) {
			g_autofree char *word = g_match_info_fetch(mi, 1);

			for (guint j = 0; j < G_N_ELEMENTS(macro_attributes); j++)
				if (!strcmp(word, macro_attributes[j].word)) {
					g_ptr_array_add(sc->out, g_strdup_printf(
						"%s:%u: __attribute__((%s)) "
						"does not build in a kernel module, "
						"whose headers define %s as a macro: "
						"write %s, which both builds take",
						path, i + 1, word, word,
						macro_attributes[j].write));
					note_declared(sc, lines[i]);
				}
		}
	}
}

void kmod_scan(char **sources, int n, GPtrArray **include_dirs,
	       GPtrArray *headers, GPtrArray *out, GHashTable *broken)
{
	struct scan sc = {
		.headers = headers,
		.out = out,
		.broken = broken,
		.function = g_regex_new("([A-Za-z_][A-Za-z_0-9]*)\\s*\\(", 0, 0, NULL),
		.include = g_regex_new("^\\s*#\\s*include\\s*([<\"])([^>\"]+)[>\"]",
				       0, 0, NULL),
		.attribute = g_regex_new("__attribute__\\s*\\(\\(\\s*(noinline|fallthrough)\\b",
					 0, 0, NULL),
	};

	for (int i = 0; i < n; i++) {
		g_autofree char *src = g_canonicalize_filename(sources[i], NULL);

		sc.dirs = include_dirs[i];
		sc.seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		scan_file(&sc, src);
		g_hash_table_unref(sc.seen);
	}
	g_regex_unref(sc.include);
	g_regex_unref(sc.attribute);
	g_regex_unref(sc.function);
}

struct replacement {
	const char *name;	/* a name, or a prefix ending in '_' */
	const char *use;
};

#define NEW0_NULL "; it returns NULL when memory is short, which glib's never does: check it and return -ENOMEM"

/* What to call instead, for the calls a user-space model makes most; the
 * first row that matches is said. */
static const struct replacement calls[] = {
	{ "g_mutex_init", "cusemu_mutex_init() of <cusemu/lock.h>" },
	{ "g_mutex_clear", "cusemu_mutex_destroy() of <cusemu/lock.h>" },
	{ "g_mutex_lock", "cusemu_mutex_lock() of <cusemu/lock.h>" },
	{ "g_mutex_unlock", "cusemu_mutex_unlock() of <cusemu/lock.h>" },
	{ "g_mutex_trylock", "cusemu_mutex_lock() of <cusemu/lock.h>: the surface has no trylock" },
	{ "g_mutex_", "struct cusemu_mutex and cusemu_mutex_init(), _lock(), _unlock() and _destroy() of <cusemu/lock.h>" },
	{ "g_cond_init", "cusemu_waitq_init() of <cusemu/sched.h>" },
	{ "g_cond_clear", "nothing: a struct cusemu_waitq of <cusemu/sched.h> needs no clearing" },
	{ "g_cond_wait", "cusemu_wait_timeout() of <cusemu/sched.h>, which takes a timeout in ms" },
	{ "g_cond_wait_until", "cusemu_wait_timeout() of <cusemu/sched.h>, which takes a timeout in ms, not an end time" },
	{ "g_cond_signal", "cusemu_wake_up() of <cusemu/sched.h>, which wakes every waiter" },
	{ "g_cond_broadcast", "cusemu_wake_up() of <cusemu/sched.h>" },
	{ "g_cond_", "struct cusemu_waitq, cusemu_wait_timeout() and cusemu_wake_up() of <cusemu/sched.h>" },
	{ "g_thread_", "a timer, cusemu_timer_new() of <cusemu/sched.h>" },
	{ "pthread_mutex_", "struct cusemu_mutex and cusemu_mutex_init(), _lock(), _unlock() and _destroy() of <cusemu/lock.h>" },
	{ "pthread_cond_", "struct cusemu_waitq, cusemu_wait_timeout() and cusemu_wake_up() of <cusemu/sched.h>" },
	{ "pthread_", "a timer (cusemu_timer_new()) or a wait queue of <cusemu/sched.h>" },
	{ "g_usleep", "cusemu_usleep() of <cusemu/sched.h>" },
	{ "usleep", "cusemu_usleep() of <cusemu/sched.h>" },
	{ "nanosleep", "cusemu_usleep() of <cusemu/sched.h>" },
	{ "sleep", "cusemu_msleep() of <cusemu/sched.h>" },
	{ "g_get_monotonic_time", "cusemu_time_ns() of <cusemu/sched.h>, in nanoseconds, not microseconds" },
	{ "clock_gettime", "cusemu_time_ns() of <cusemu/sched.h>" },
	{ "time", "cusemu_time_ns() of <cusemu/sched.h>" },
	{ "g_new0", "cusemu_new0(type) of <cusemu/memory.h>, whose arity differs: it takes the type alone, one object (g_new0(type, 1) is cusemu_new0(type); for n, cusemu_zalloc(n * sizeof(type)) with n checked)" NEW0_NULL },
	{ "g_new", "cusemu_new0(type) of <cusemu/memory.h>, whose arity differs: it takes the type alone, one object, cleared (for n, cusemu_zalloc(n * sizeof(type)) with n checked)" NEW0_NULL },
	{ "g_malloc", "cusemu_zalloc() of <cusemu/memory.h>" NEW0_NULL },
	{ "g_malloc0", "cusemu_zalloc() of <cusemu/memory.h>" NEW0_NULL },
	{ "g_try_malloc0", "cusemu_zalloc() of <cusemu/memory.h>" },
	{ "g_realloc", "cusemu_zalloc(), a copy and cusemu_free() of <cusemu/memory.h>" },
	{ "realloc", "cusemu_zalloc(), a copy and cusemu_free() of <cusemu/memory.h>" },
	{ "g_strdup", "cusemu_strdup_printf(\"%s\", s) of <cusemu/memory.h>" NEW0_NULL },
	{ "g_strdup_printf", "cusemu_strdup_printf() of <cusemu/memory.h>" NEW0_NULL },
	{ "g_snprintf", "cusemu_snprintf() of <cusemu/memory.h>" },
	{ "snprintf", "cusemu_snprintf() of <cusemu/memory.h>" },
	{ "MIN", "the comparison written out: glib's MIN() is not the kernel's min(), which checks types" },
	{ "MAX", "the comparison written out: glib's MAX() is not the kernel's max(), which checks types" },
	{ "G_N_ELEMENTS", "sizeof(a) / sizeof((a)[0]) written out" },
	{ "g_free", "cusemu_free() of <cusemu/memory.h>" },
	{ "malloc", "cusemu_zalloc() of <cusemu/memory.h>" },
	{ "calloc", "cusemu_zalloc() of <cusemu/memory.h>" },
	{ "free", "cusemu_free() of <cusemu/memory.h>" },
	{ "g_strlcpy", "cusemu_strscpy() of <cusemu/memory.h>" },
	{ "strncpy", "cusemu_strscpy() of <cusemu/memory.h>" },
	{ "assert", "a check that returns -EINVAL, or the kernel's WARN_ON() under #ifdef __KERNEL__ (a module's assert would stop the kernel)" },
	{ "g_assert", "a check that returns -EINVAL, or the kernel's WARN_ON() under #ifdef __KERNEL__" },
	{ "g_return_val_if_fail", "a check that returns -EINVAL" },
	{ "g_return_if_fail", "a check that returns" },
	{ "g_message", "cusemu_dev_info() of <cusemu/log.h>" },
	{ "g_info", "cusemu_dev_info() of <cusemu/log.h>" },
	{ "g_debug", "cusemu_dev_info() of <cusemu/log.h>" },
	{ "g_warning", "cusemu_dev_warn() of <cusemu/log.h>" },
	{ "g_critical", "cusemu_dev_err() of <cusemu/log.h>" },
	{ "printf", "cusemu_dev_info() of <cusemu/log.h>" },
	{ "fprintf", "cusemu_dev_err() of <cusemu/log.h>" },
	{ "cusemu_lock_kernel", "a struct cusemu_mutex of the model's: kernels have had no big lock since 2.6.39" },
	{ "cusemu_unlock_kernel", "a struct cusemu_mutex of the model's: kernels have had no big lock since 2.6.39" },
	{ "cusemu_cond_wait_until", "cusemu_wait_timeout() of <cusemu/sched.h>" },
};

/* Types and other names the kernel's build does not know. */
static const struct replacement names[] = {
	{ "GMutex", "struct cusemu_mutex of <cusemu/lock.h>" },
	{ "GRecMutex", "struct cusemu_mutex of <cusemu/lock.h>, which is not recursive" },
	{ "GCond", "struct cusemu_waitq of <cusemu/sched.h>" },
	{ "GThread", "a timer, struct cusemu_timer of <cusemu/sched.h>" },
	{ "pthread_mutex_t", "struct cusemu_mutex of <cusemu/lock.h>" },
	{ "pthread_cond_t", "struct cusemu_waitq of <cusemu/sched.h>" },
	{ "pthread_t", "a timer, struct cusemu_timer of <cusemu/sched.h>" },
	{ "gboolean", "bool of <stdbool.h>" },
	{ "gchar", "char" },
	{ "guchar", "unsigned char" },
	{ "gint", "int" },
	{ "guint", "unsigned int" },
	{ "glong", "long" },
	{ "gulong", "unsigned long" },
	{ "gsize", "size_t of <stddef.h>" },
	{ "gssize", "ssize_t of <sys/types.h>" },
	{ "gpointer", "void *" },
	{ "gconstpointer", "const void *" },
	{ "gint8", "int8_t of <stdint.h>" },
	{ "guint8", "uint8_t of <stdint.h>" },
	{ "gint16", "int16_t of <stdint.h>" },
	{ "guint16", "uint16_t of <stdint.h>" },
	{ "gint32", "int32_t of <stdint.h>" },
	{ "guint32", "uint32_t of <stdint.h>" },
	{ "gint64", "int64_t of <stdint.h>" },
	{ "guint64", "uint64_t of <stdint.h>" },
	{ "GString", "a buffer of the model's own, written with cusemu_snprintf() of <cusemu/memory.h>" },
	{ "FILE", "nothing: a module has no files of its own" },
	{ "time_t", "a uint64_t of nanoseconds, cusemu_time_ns() of <cusemu/sched.h>" },
	{ "TRUE", "true of <stdbool.h>" },
	{ "FALSE", "false of <stdbool.h>" },
	{ "G_MAXUINT", "UINT_MAX of <limits.h>" },
	{ "G_MAXINT", "INT_MAX of <limits.h>" },
	{ "G_MAXSIZE", "SIZE_MAX of <stdint.h>" },
	{ "stderr", "cusemu_dev_err() of <cusemu/log.h>" },
	{ "stdout", "cusemu_dev_info() of <cusemu/log.h>" },
};

static const char *lookup(const struct replacement *table, guint n,
			  const char *name)
{
	for (guint i = 0; i < n; i++) {
		size_t len = strlen(table[i].name);
		bool prefix = table[i].name[len - 1] == '_';

		if (prefix ? !strncmp(name, table[i].name, len)
			   : !strcmp(name, table[i].name))
			return table[i].use;
	}
	return NULL;
}

static const char *call_advice(const char *fn)
{
	const char *use = lookup(calls, G_N_ELEMENTS(calls), fn);

	if (use)
		return use;
	if (g_str_has_prefix(fn, "g_"))
		return SEE_SURFACE ": a module has no glib";
	return SEE_SURFACE ", or the kernel's own under #ifdef __KERNEL__";
}

static const char *name_advice(const char *name)
{
	const char *use = lookup(names, G_N_ELEMENTS(names), name);

	if (use)
		return use;
	if (name[0] == 'G' || g_str_has_prefix(name, "g_"))
		return SEE_SURFACE ": a module has no glib";
	return SEE_SURFACE ", or the kernel's own under #ifdef __KERNEL__";
}

/* One error line of the compiler: its file, line and message. */
static GRegex *error_regex(void)
{
	return g_regex_new("^(.+?):([0-9]+):[0-9]+: (?:fatal )?error: (.*)$",
			   0, 0, NULL);
}

/* A use kbuild's message names, said; false when it names none. */
static bool say_use(const char *file, const char *line, const char *msg,
		    GPtrArray *out)
{
	enum use { USE_CALL, USE_NAME, USE_HEADER, USE_STAND_IN };
	static const struct {
		const char *pattern;
		enum use kind;
	} kinds[] = {
		{ "^implicit declaration of function ['‘]([A-Za-z_0-9]+)['’]", USE_CALL },
		{ "^unknown type name ['‘]([A-Za-z_0-9]+)['’]", USE_NAME },
		{ "^['‘]([A-Za-z_0-9]+)['’] undeclared", USE_NAME },
		{ "^([^:]+): No such file or directory$", USE_HEADER },
		/* a header's stand-in, which says it all */
		{ "^#error \"(<[^>]+> is outside [^\"]*)\"", USE_STAND_IN },
	};

	for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
		g_autoptr(GRegex) re = g_regex_new(kinds[i].pattern, 0, 0, NULL);
		g_autoptr(GMatchInfo) mi = NULL;
		g_autofree char *what = NULL;
		bool call = kinds[i].kind == USE_CALL;

		if (!g_regex_match(re, msg, 0, &mi))
			continue;
		what = g_match_info_fetch(mi, 1);
		switch (kinds[i].kind) {
		case USE_CALL:
		case USE_NAME:
			g_ptr_array_add(out, g_strdup_printf(
				"%s:%s: %s%s is outside cusemu's portable "
				"surface: use %s", file, line, what,
				call ? "()" : "",
				call ? call_advice(what) : name_advice(what)));
			break;
		case USE_HEADER:
			g_ptr_array_add(out, g_strdup_printf(
				"%s:%s: <%s> is outside " SURFACE ": %s",
				file, line, what, header_advice(what)));
			break;
		case USE_STAND_IN:
			g_ptr_array_add(out, g_strdup_printf("%s:%s: %s", file,
							     line, what));
			break;
		}
		return true;
	}
	return false;
}

/*
 * Walk log's errors: fn gets each with the place the model's source is
 * at (the first file of an include chain, else the error's own) and its
 * message.
 */
static void each_error(const char *log,
		       void (*fn)(const char *file, const char *line,
				  const char *at_file, const char *at_line,
				  const char *msg, void *data),
		       void *data)
{
	g_auto(GStrv) lines = g_strsplit(log, "\n", -1);
	g_autoptr(GRegex) error = error_regex();
	g_autoptr(GRegex) included = g_regex_new(
		"^In file included from (.+?):([0-9]+)[:,]", 0, 0, NULL);
	g_autofree char *from_file = NULL, *from_line = NULL;

	for (char **l = lines; *l; l++) {
		g_autoptr(GMatchInfo) mi = NULL;

		/* The first line of an include chain names the file that
		 * included the header: the model's. */
		if (g_regex_match(included, *l, 0, &mi)) {
			g_free(from_file);
			g_free(from_line);
			from_file = g_match_info_fetch(mi, 1);
			from_line = g_match_info_fetch(mi, 2);
			continue;
		}
		if (g_regex_match_simple("^\\s+from ", *l, 0, 0))
			continue;
		g_clear_pointer(&mi, g_match_info_free);
		if (g_regex_match(error, *l, 0, &mi)) {
			g_autofree char *file = g_match_info_fetch(mi, 1);
			g_autofree char *line = g_match_info_fetch(mi, 2);
			g_autofree char *msg = g_match_info_fetch(mi, 3);

			fn(file, line, from_file ? from_file : file,
			   from_line ? from_line : line, msg, data);
		}
		/* A chain names the includes of the next message alone. */
		if (!g_regex_match_simple("^\\s", *l, 0, 0)) {
			g_clear_pointer(&from_file, g_free);
			g_clear_pointer(&from_line, g_free);
		}
	}
}

struct named {
	unsigned int found, other;
	GHashTable *said;	/* "file:line:what" */
	GPtrArray *out;
	GHashTable *broken;	/* the model's own, their lines said */
};

/* A call to a function of the model's whose declaration a line already
 * said broke: a consequence, not a use. */
static bool consequence(const struct named *nd, const char *msg)
{
	g_autoptr(GRegex) re = g_regex_new(
		"^implicit declaration of function ['‘]([A-Za-z_0-9]+)['’]",
		0, 0, NULL);
	g_autoptr(GMatchInfo) mi = NULL;
	g_autofree char *fn = NULL;

	if (!nd->broken || !g_regex_match(re, msg, 0, &mi))
		return false;
	fn = g_match_info_fetch(mi, 1);
	return g_hash_table_contains(nd->broken, fn);
}

static void name_one(const char *file, const char *line, const char *at_file,
		     const char *at_line, const char *msg, void *data)
{
	struct named *nd = data;
	g_autofree char *key = g_strdup_printf("%s:%s:%s", file, line, msg);
	bool header = g_str_has_prefix(msg, "#error \"<");

	if (g_hash_table_contains(nd->said, key))
		return;
	g_hash_table_add(nd->said, g_steal_pointer(&key));
	if (consequence(nd, msg)) {
		nd->other++;
		return;
	}
	/* A stand-in's #error is said where the model included it. */
	if (say_use(header ? at_file : file, header ? at_line : line, msg,
		    nd->out))
		nd->found++;
	else
		nd->other++;
}

unsigned int kmod_name_outside(const char *log, unsigned int *other,
			       GPtrArray *out, GHashTable *broken)
{
	struct named nd = {
		.said = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.out = out,
		.broken = broken,
	};

	each_error(log, name_one, &nd);
	g_hash_table_unref(nd.said);
	*other = nd.other;
	return nd.found;
}

struct others {
	char **sources;
	int n;
	GRegex *known;
};

static bool model_file(const struct others *o, const char *file)
{
	g_autofree char *abs = g_canonicalize_filename(file, NULL);

	if (g_str_has_suffix(abs, "/cusemu-kmod.c") ||
	    g_str_has_suffix(abs, "/cusemu-kmod-params.h") ||
	    g_str_has_suffix(abs, "/cusemu-kmod-plugin.c"))
		return false;
	for (int i = 0; i < o->n; i++) {
		g_autofree char *src = g_canonicalize_filename(o->sources[i], NULL);
		g_autofree char *dir = g_path_get_dirname(src);

		g_autofree char *under = g_strconcat(dir, "/", NULL);

		if (!strcmp(abs, src) || g_str_has_prefix(abs, under))
			return true;
	}
	return false;
}

static void say_other(const char *file, const char *line, const char *at_file,
		      const char *at_line, const char *msg, void *data)
{
	struct others *o = data;

	if (g_regex_match(o->known, msg, 0, NULL))
		return;
	if (model_file(o, file) && (strstr(msg, "SSE") || strstr(msg, "x87")))
		fprintf(stderr, "%s:%s: kbuild: %s: the model's line uses "
			"floating point, which a kernel module has not: compute "
			"in integers (fixed point) there\n", file, line, msg);
	else if (model_file(o, file))
		fprintf(stderr, "%s:%s: kbuild: %s: the model's line builds in "
			"cusemud but not in a kernel module: use " SEE_SURFACE
			" there, or the kernel's own under #ifdef __KERNEL__\n",
			file, line, msg);
	else if (model_file(o, at_file))
		fprintf(stderr, "%s:%s: kbuild: %s (in %s:%s, which the "
			"model's line includes): what the model includes or "
			"defines before it does not build in a kernel module: "
			"include the SDK's and the kernel's headers alone, or "
			"put it under #ifdef __KERNEL__\n",
			at_file, at_line, msg, file, line);
	else
		fprintf(stderr, "%s:%s: kbuild: %s: not in the model's "
			"sources but in the frame or the kernel's headers: "
			"cusemu-kmod's frame may not build against this kernel; "
			"say so to cusemu's authors, with the log\n",
			file, line, msg);
}

void kmod_name_other_errors(const char *log, char **sources, int n)
{
	struct others o = {
		.sources = sources,
		.n = n,
		.known = g_regex_new("^(implicit declaration of function|"
				     "unknown type name|['‘][A-Za-z_0-9]+['’] "
				     "undeclared|[^:]+: No such file or directory$|"
				     "#error \"<)", 0, 0, NULL),
	};

	each_error(log, say_other, &o);
	g_regex_unref(o.known);
}
