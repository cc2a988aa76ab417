/* SPDX-License-Identifier: MIT */
/*
 * The commands of the installed uapi headers, for the `collision` rule. The
 * article's one global command space: a number two drivers both use is
 * a hazard for every program that opens the wrong node. Compiling some 200
 * headers for each check would take seconds, so the headers are read as
 * text first: a command whose type and number are literals (or literal
 * macros) is a candidate only when both match; only candidates' headers,
 * and headers whose commands hide behind helper macros, are compiled for
 * the exact numbers in both ABIs.
 *
 * Even so, reading and compiling them is most of a run, so what one run
 * learns (the index and the numbers each compile gave) is kept in the
 * user's cache directory and reused while every scanned header has the
 * same path, size, inode and times, and the compiler and flags are the
 * same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "abicheck.h"

/* A command of a uapi header, as its text reads. */
struct uapi_cmd {
	char *name;
	char *file;
	int type, nr;		/* -1: not a literal */
};

struct uapi_index {
	const struct probe_options *o;
	GPtrArray *cmds;		/* struct uapi_cmd * */
	GHashTable *literals;		/* macro name -> value, as text */
	GHashTable *opaque;		/* files whose commands need a compile */
	GHashTable *probed;		/* file -> GPtrArray of commands, or
					 * a NULL value when it did not compile */
	GPtrArray *roots;		/* the directories, to name files */
	/* The cache: its directory (-1: none), file name, what it is valid
	 * for, and whether this run learnt something to write back. */
	int cache_dir;
	char *cache_name;
	char *key;
	GString *manifest;		/* a line per header, see stat_dir */
	bool dirty;
};

static void unref_commands(gpointer commands)
{
	if (commands)
		g_ptr_array_unref(commands);
}

static void uapi_cmd_free(struct uapi_cmd *c)
{
	g_free(c->name);
	g_free(c->file);
	g_free(c);
}

/* The text without comments and with continuation lines joined. */
static char *plain_text(const char *s)
{
	GString *out = g_string_sized_new(strlen(s));

	while (*s) {
		if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");

			g_string_append_c(out, ' ');
			s = e ? e + 2 : s + strlen(s);
		} else if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '\\' && s[1] == '\n') {
			s += 2;
		} else if (*s == '\'' || *s == '"') {
			char q = *s;

			g_string_append_c(out, *s++);
			while (*s && *s != q && *s != '\n') {
				if (*s == '\\' && s[1])
					g_string_append_c(out, *s++);
				g_string_append_c(out, *s++);
			}
			if (*s == q)
				g_string_append_c(out, *s++);
		} else {
			g_string_append_c(out, *s++);
		}
	}
	return g_string_free(out, FALSE);
}

static char *strip(const char *s, size_t n)
{
	char *t = g_strndup(s, n);

	g_strstrip(t);
	while (t[0] == '(' && t[strlen(t) - 1] == ')') {
		/* Only when the parentheses enclose all of it. */
		int depth = 0;
		size_t len = strlen(t), i;

		for (i = 0; i < len; i++) {
			depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
			if (!depth)
				break;
		}
		if (i != len - 1)
			break;
		memmove(t, t + 1, len - 2);
		t[len - 2] = 0;
		g_strstrip(t);
	}
	return t;
}

static long eval(struct uapi_index *u, const char *expr, unsigned int depth);

/* A sum of terms at the top level, `BASE + 3`: its value, else -1. */
static long eval_sum(struct uapi_index *u, const char *e, unsigned int depth)
{
	int paren = 0;

	for (const char *p = e + strlen(e); p > e; p--) {
		char ch = p[-1];

		paren += ch == ')' ? 1 : ch == '(' ? -1 : 0;
		if (!paren && (ch == '+' || ch == '-') && p - 1 > e &&
		    !strchr("eExX", p[-2])) {
			g_autofree char *left = g_strndup(e, p - 1 - e);
			long a = eval(u, left, depth + 1), b = eval(u, p, depth + 1);

			if (a < 0 || b < 0)
				return -1;
			return ch == '+' ? a + b : a - b;
		}
	}
	return -2;	/* not a sum */
}

/* A literal, or a macro that is one, or a sum of them: its value, else -1. */
static long eval(struct uapi_index *u, const char *expr, unsigned int depth)
{
	g_autofree char *e = strip(expr, strlen(expr));
	char *end;
	long v;

	if (!*e || depth > 8)
		return -1;
	if (e[0] != '\'' && (v = eval_sum(u, e, depth)) != -2)
		return v;
	if (e[0] == '\'') {
		if (e[1] != '\\' && e[2] == '\'' && !e[3])
			return (unsigned char)e[1];
		if (e[1] == '\\') {
			if (e[2] == 'x' || g_ascii_isdigit(e[2])) {
				v = strtol(e + 2 + (e[2] == 'x'), &end,
					   e[2] == 'x' ? 16 : 8);
				return *end == '\'' && !end[1] ? v : -1;
			}
			if (e[3] == '\'' && !e[4])
				return e[2] == 'n' ? '\n' : e[2] == 't' ? '\t'
				       : (unsigned char)e[2];
		}
		return -1;
	}
	if (g_ascii_isdigit(e[0])) {
		v = strtol(e, &end, 0);
		while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
			end++;
		return *end ? -1 : v;
	}
	{
		const char *body = g_hash_table_lookup(u->literals, e);

		return body ? eval(u, body, depth + 1) : -1;
	}
}

/* The first two arguments of the call at s (after its '('). */
static bool two_args(const char *s, char **a, char **b)
{
	const char *start = s, *comma = NULL;
	int depth = 0;

	for (; *s; s++) {
		if (*s == '\'') {
			for (s++; *s && *s != '\''; s++)
				if (*s == '\\' && s[1])
					s++;
			if (!*s)
				return false;
		} else if (*s == '(') {
			depth++;
		} else if (*s == ')') {
			if (!depth--)
				break;
		} else if (*s == ',' && !depth) {
			if (comma)
				break;
			comma = s;
		}
	}
	if (!comma || !*s)
		return false;
	*a = g_strndup(start, comma - start);
	*b = g_strndup(comma + 1, s - comma - 1);
	return true;
}

/* `_IO(`, `_IOR(`...: the position after '(' or NULL. */
static const char *ioc_call(const char *s)
{
	static const char *const macros[] = { "_IOWR", "_IOR", "_IOW", "_IO" };

	for (unsigned int i = 0; i < G_N_ELEMENTS(macros); i++) {
		size_t n = strlen(macros[i]);

		if (!strncmp(s, macros[i], n)) {
			const char *p = s + n;

			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '(')
				return p + 1;
		}
	}
	return NULL;
}

/* One object-like #define or enumerator of a file. */
struct text_def {
	char *name, *body, *file;
	bool function_like;
};

static void text_def_free(struct text_def *d)
{
	g_free(d->name);
	g_free(d->body);
	g_free(d->file);
	g_free(d);
}

static void scan_file(const char *path, GPtrArray *defs)
{
	g_autofree char *raw = NULL, *text = NULL;
	g_auto(GStrv) lines = NULL;

	/* Every file: one without commands may define their types. */
	if (!g_file_get_contents(path, &raw, NULL, NULL))
		return;
	text = plain_text(raw);
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		const char *p = *l, *n;
		struct text_def *d;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#') {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			if (strncmp(p, "define", 6) || !g_ascii_isspace(p[6]))
				continue;
			p += 6;
			while (*p == ' ' || *p == '\t')
				p++;
			for (n = p; g_ascii_isalnum(*n) || *n == '_'; n++)
				;
			if (n == p)
				continue;
			d = g_new0(struct text_def, 1);
			d->name = g_strndup(p, n - p);
			d->function_like = *n == '(';
			if (d->function_like)
				n = strchr(n, ')') ? strchr(n, ')') + 1 : n;
			d->body = g_strstrip(g_strdup(n));
			d->file = g_strdup(path);
			g_ptr_array_add(defs, d);
			continue;
		}
		/* Enumerators: `NAME = _IOR(...)`. */
		for (const char *q = p; (q = strstr(q, "_IO")); q++) {
			const char *e = q, *b;

			if (!ioc_call(q) || (q > *l && (g_ascii_isalnum(q[-1]) ||
							q[-1] == '_')))
				continue;
			while (e > *l && g_ascii_isspace(e[-1]))
				e--;
			if (e == *l || e[-1] != '=')
				continue;
			e--;
			while (e > *l && g_ascii_isspace(e[-1]))
				e--;
			for (b = e; b > *l && (g_ascii_isalnum(b[-1]) ||
					       b[-1] == '_');)
				b--;
			if (b == e)
				continue;
			d = g_new0(struct text_def, 1);
			d->name = g_strndup(b, e - b);
			d->body = g_strdup(q);
			d->file = g_strdup(path);
			g_ptr_array_add(defs, d);
		}
	}
}

static void scan_dir(const char *dir, GPtrArray *defs, unsigned int depth)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	if (!d || depth > 4)
		return;
	while ((name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_DIR))
			scan_dir(path, defs, depth + 1);
		else if (g_str_has_suffix(name, ".h"))
			scan_file(path, defs);
	}
}

/* The type a helper such as `#define HSC_IO(num) _IO(MAGIC, num)` gives
 * every command, when its first argument is no parameter of its own. */
static int helper_type(struct uapi_index *u, const struct text_def *h)
{
	g_autofree char *body = strip(h->body, strlen(h->body));
	g_autofree char *a = NULL, *b = NULL;
	const char *args = ioc_call(body);

	if (!args || !two_args(args, &a, &b))
		return -1;
	return (int)eval(u, a, 0);
}

static char *multiarch(const struct probe_options *o)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	char *out = NULL;

	for (char **p = o->cc; *p; p++)
		g_ptr_array_add(argv, *p);
	g_ptr_array_add(argv, "-print-multiarch");
	g_ptr_array_add(argv, NULL);
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL,
			  G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
			  NULL, NULL, &out, NULL, NULL, NULL))
		return g_strdup("x86_64-linux-gnu");
	return g_strstrip(out);
}

/* The index from the headers' text. */
static void index_scan(struct uapi_index *u)
{
	g_autoptr(GPtrArray) defs = g_ptr_array_new_with_free_func(
		(GDestroyNotify)text_def_free);
	/* Helper macros (`HSC_IOW(num, dtype)`) -> the type they give, or -1. */
	g_autoptr(GHashTable) helpers = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; i < u->roots->len; i++)
		scan_dir(u->roots->pdata[i], defs, 0);

	for (guint i = 0; i < defs->len; i++) {
		struct text_def *d = defs->pdata[i];

		if (d->function_like && strstr(d->body, "_IO"))
			g_hash_table_insert(helpers, d->name, d);
		else if (!d->function_like && !strstr(d->body, "("))
			g_hash_table_insert(u->literals, g_strdup(d->name),
					    g_strdup(d->body));
	}
	for (guint i = 0; i < defs->len; i++) {
		struct text_def *d = defs->pdata[i];
		g_autofree char *body = NULL, *helper = NULL;
		g_autofree char *a = NULL, *b = NULL;
		const char *args;
		struct uapi_cmd *c;

		if (d->function_like)
			continue;
		body = strip(d->body, strlen(d->body));
		args = ioc_call(body);
		if (!args) {
			const char *p = body;

			while (g_ascii_isalnum(*p) || *p == '_')
				p++;
			helper = g_strndup(body, p - body);
			if (*p == '(' && g_hash_table_contains(helpers, helper)) {
				c = g_new0(struct uapi_cmd, 1);
				c->name = g_strdup(d->name);
				c->file = g_strdup(d->file);
				c->type = helper_type(u, g_hash_table_lookup(helpers,
									     helper));
				c->nr = -1;
				if (c->type < 0)
					g_hash_table_add(u->opaque, g_strdup(d->file));
				g_ptr_array_add(u->cmds, c);
			}
			continue;
		}
		c = g_new0(struct uapi_cmd, 1);
		c->name = g_strdup(d->name);
		c->file = g_strdup(d->file);
		c->type = c->nr = -1;
		if (two_args(args, &a, &b)) {
			c->type = (int)eval(u, a, 0);
			c->nr = (int)eval(u, b, 0);
		}
		if (c->type < 0)
			g_hash_table_add(u->opaque, g_strdup(d->file));
		g_ptr_array_add(u->cmds, c);
	}
}

/* A cache off: CUSEMU_ABICHECK_CACHE=0, off, no or false. */
static bool cache_wanted(void)
{
	const char *v = g_getenv("CUSEMU_ABICHECK_CACHE");

	return !v || !(!strcmp(v, "0") || !g_ascii_strcasecmp(v, "off") ||
		       !g_ascii_strcasecmp(v, "no") ||
		       !g_ascii_strcasecmp(v, "false"));
}

/*
 * $XDG_CACHE_HOME/cusemu-abicheck (else ~/.cache/...), made 0700 when
 * missing, opened without following a symbolic link, and used only when it
 * is the user's and nobody else may write to it: -1 otherwise.
 */
static int cache_dir_open(const struct probe_options *o)
{
	const char *xdg = g_getenv("XDG_CACHE_HOME");
	g_autofree char *base = xdg && g_path_is_absolute(xdg) ? g_strdup(xdg)
		: g_build_filename(g_get_home_dir(), ".cache", NULL);
	g_autofree char *dir = g_build_filename(base, "cusemu-abicheck", NULL);
	struct stat st;
	int fd;

	if (g_mkdir_with_parents(base, 0700) < 0 ||
	    (mkdir(dir, 0700) < 0 && errno != EEXIST) ||
	    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		       O_CLOEXEC)) < 0) {
		if (o->verbose)
			g_printerr("cusemu-abicheck: no cache: %s: %s\n", dir,
				   g_strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		if (o->verbose)
			g_printerr("cusemu-abicheck: no cache: %s is not the "
				   "user's alone\n", dir);
		close(fd);
		return -1;
	}
	return fd;
}

static void escaped(GString *out, const char *s)
{
	g_autofree char *e = g_strescape(s, NULL);

	g_string_append(out, e);
}

static int by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each header the scan reads, in a stable order, as stat sees it: a line
 * "h PATH SIZE INODE MTIME CTIME" (tab-separated) per file. */
static void stat_dir(GString *out, const char *dir, unsigned int depth)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	const char *name;

	if (!d || depth > 4)
		return;
	while ((name = g_dir_read_name(d)))
		g_ptr_array_add(names, g_strdup(name));
	g_ptr_array_sort(names, by_name);
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *path = g_build_filename(dir, names->pdata[i],
							 NULL);
		struct stat st;

		if (stat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			stat_dir(out, path, depth + 1);
		} else if (g_str_has_suffix(names->pdata[i], ".h")) {
			g_string_append(out, "h\t");
			escaped(out, path);
			g_string_append_printf(out,
					       "\t%jd\t%ju\t%jd.%09ld\t%jd.%09ld\n",
					       (intmax_t)st.st_size,
					       (uintmax_t)st.st_ino,
					       (intmax_t)st.st_mtim.tv_sec,
					       st.st_mtim.tv_nsec,
					       (intmax_t)st.st_ctim.tv_sec,
					       st.st_ctim.tv_nsec);
		}
	}
}

#define CACHE_MAGIC "cusemu-abicheck uapi index 1 " CUSEMU_VERSION
#define CACHE_MAX (64 << 20)

/* The compiler, its flags and the directories: a cache is for one of each. */
static void cache_key(struct uapi_index *u)
{
	GString *key = g_string_new(NULL);
	g_autofree char *sum = NULL;

	for (char **p = u->o->cc; *p; p++)
		g_string_append_printf(key, "cc %s\n", *p);
	for (guint i = 0; u->o->cflags && i < u->o->cflags->len; i++)
		g_string_append_printf(key, "flag %s\n",
				       (char *)u->o->cflags->pdata[i]);
	for (guint i = 0; i < u->roots->len; i++) {
		g_autofree char *dir = g_canonicalize_filename(
			u->roots->pdata[i], NULL);

		g_string_append_printf(key, "dir %s\n", dir);
	}
	u->key = g_string_free(key, FALSE);
	sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, u->key, -1);
	u->cache_name = g_strdup_printf("uapi-%.16s.idx", sum);
}

static char *cache_read(struct uapi_index *u)
{
	int fd = openat(u->cache_dir, u->cache_name,
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size < CACHE_MAX) {
		buf = g_malloc(st.st_size + 1);
		while (got < (size_t)st.st_size) {
			ssize_t n = read(fd, buf + got, st.st_size - got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += n;
		}
		buf[got] = 0;
		if (got != (size_t)st.st_size || strlen(buf) != got)
			g_clear_pointer(&buf, g_free);
	}
	close(fd);
	return buf;
}

static bool parse_int(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = g_ascii_strtoll(s, &end, 10);
	return *s && !*end && !errno;
}

/* One line's fields, unescaped; *n says how many. */
static char **fields(const char *line, guint *n)
{
	g_auto(GStrv) raw = g_strsplit(line, "\t", -1);
	char **out;

	*n = g_strv_length(raw);
	out = g_new0(char *, *n + 1);
	for (guint i = 0; i < *n; i++)
		out[i] = g_strcompress(raw[i]);
	return out;
}

/*
 * The index from the cache, when the cache is whole and for these headers;
 * false (and the index untouched but for what the caller clears) otherwise.
 * *why says what made it unusable.
 */
static bool cache_parse(struct uapi_index *u, char *text, char **why)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autoptr(GString) manifest = g_string_new(NULL);
	g_autofree char *key = g_strescape(u->key, NULL);
	GPtrArray *probing = NULL;
	int64_t left = 0;
	guint i = 2;

	if (g_strv_length(lines) < 3 || strcmp(lines[0], CACHE_MAGIC) ||
	    !g_str_has_prefix(lines[1], "key\t") || strcmp(lines[1] + 4, key)) {
		*why = g_strdup("of another version or for other options");
		return false;
	}
	for (; lines[i] && g_str_has_prefix(lines[i], "h\t"); i++)
		g_string_append_printf(manifest, "%s\n", lines[i]);
	if (strcmp(manifest->str, u->manifest->str)) {
		g_autoptr(GHashTable) had = g_hash_table_new(g_str_hash,
							     g_str_equal);
		g_auto(GStrv) now = g_strsplit(u->manifest->str, "\n", -1);
		g_auto(GStrv) then = g_strsplit(manifest->str, "\n", -1);
		const char *diff = NULL;

		for (char **l = then; *l; l++)
			g_hash_table_add(had, *l);
		for (char **l = now; *l && !diff; l++)
			if (!g_hash_table_contains(had, *l))
				diff = *l;
		if (!diff) {
			g_hash_table_remove_all(had);
			for (char **l = now; *l; l++)
				g_hash_table_add(had, *l);
			for (char **l = then; *l && !diff; l++)
				if (!g_hash_table_contains(had, *l))
					diff = *l;
		}
		{
			guint nf = 0;
			g_auto(GStrv) f = diff ? fields(diff, &nf) : NULL;

			*why = g_strdup_printf("stale: %s changed, came or went",
					       nf > 1 ? f[1] : "a header");
		}
		return false;
	}
	for (; lines[i]; i++) {
		guint nf;
		g_auto(GStrv) f = fields(lines[i], &nf);
		int64_t a, b, c;

		if (left) {
			struct command *t;

			if (nf != 6 || strcmp(f[0], "n") ||
			    !parse_int(f[3], &a) || !parse_int(f[4], &b) ||
			    !parse_int(f[5], &c))
				break;
			t = g_new0(struct command, 1);
			t->name = g_strdup(f[1]);
			t->file = g_strdup(f[2]);
			t->line = (unsigned int)a;
			t->number[ABI_X86_64] = (uint32_t)b;
			t->number[ABI_I386] = (uint32_t)c;
			t->findings = g_ptr_array_new();
			g_ptr_array_add(probing, t);
			left--;
		} else if (nf == 5 && !strcmp(f[0], "cmd")) {
			struct uapi_cmd *k;

			if (!parse_int(f[3], &a) || !parse_int(f[4], &b))
				break;
			k = g_new0(struct uapi_cmd, 1);
			k->name = g_strdup(f[1]);
			k->file = g_strdup(f[2]);
			k->type = (int)a;
			k->nr = (int)b;
			g_ptr_array_add(u->cmds, k);
		} else if (nf == 2 && !strcmp(f[0], "opaque")) {
			g_hash_table_add(u->opaque, g_strdup(f[1]));
		} else if (nf == 3 && !strcmp(f[0], "probed")) {
			if (!parse_int(f[2], &left) || left < -1)
				break;
			probing = left < 0 ? NULL : g_ptr_array_new_with_free_func(
				(GDestroyNotify)command_free);
			g_hash_table_insert(u->probed, g_strdup(f[1]), probing);
			left = left < 0 ? 0 : left;
		} else {
			break;
		}
	}
	if (left || !lines[i] || strcmp(lines[i], "end") || !lines[i + 1] ||
	    *lines[i + 1] || lines[i + 2]) {
		*why = g_strdup("unreadable");
		return false;
	}
	return true;
}
static void cache_write_all(int fd, const GString *s, bool *ok)
{
	for (gsize done = 0; *ok && done < s->len;) {
		ssize_t n = write(fd, s->str + done, s->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			*ok = false;
		else
			done += n;
	}
}

/* The index and every compile's numbers, through a temporary file that
 * replaces only a regular file. */
static void cache_save(struct uapi_index *u)
{
	g_autoptr(GString) s = g_string_new(CACHE_MAGIC "\nkey\t");
	g_autofree char *tmp = g_strdup_printf(".%s.%d.tmp", u->cache_name,
					       (int)getpid());
	GHashTableIter it;
	gpointer file, value;
	struct stat st;
	bool ok = true;
	int fd;

	escaped(s, u->key);
	g_string_append_printf(s, "\n%s", u->manifest->str);
	for (guint i = 0; i < u->cmds->len; i++) {
		const struct uapi_cmd *k = u->cmds->pdata[i];

		g_string_append(s, "cmd\t");
		escaped(s, k->name);
		g_string_append_c(s, '\t');
		escaped(s, k->file);
		g_string_append_printf(s, "\t%d\t%d\n", k->type, k->nr);
	}
	g_hash_table_iter_init(&it, u->opaque);
	while (g_hash_table_iter_next(&it, &file, NULL)) {
		g_string_append(s, "opaque\t");
		escaped(s, file);
		g_string_append_c(s, '\n');
	}
	g_hash_table_iter_init(&it, u->probed);
	while (g_hash_table_iter_next(&it, &file, &value)) {
		GPtrArray *theirs = value;

		g_string_append(s, "probed\t");
		escaped(s, file);
		g_string_append_printf(s, "\t%d\n",
				       theirs ? (int)theirs->len : -1);
		for (guint i = 0; theirs && i < theirs->len; i++) {
			const struct command *t = theirs->pdata[i];

			g_string_append(s, "n\t");
			escaped(s, t->name);
			g_string_append_c(s, '\t');
			escaped(s, t->file ? t->file : "");
			g_string_append_printf(s, "\t%u\t%" PRIu32 "\t%" PRIu32 "\n",
					       t->line, t->number[ABI_X86_64],
					       t->number[ABI_I386]);
		}
	}
	g_string_append(s, "end\n");

	unlinkat(u->cache_dir, tmp, 0);
	fd = openat(u->cache_dir, tmp, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	cache_write_all(fd, s, &ok);
	ok = !close(fd) && ok;
	/* A directory or a link in its place stays; the cache is skipped. */
	if (ok && fstatat(u->cache_dir, u->cache_name, &st,
			  AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		ok = false;
	if (!ok || renameat(u->cache_dir, tmp, u->cache_dir, u->cache_name) < 0)
		unlinkat(u->cache_dir, tmp, 0);
	else
		u->dirty = false;
}

/* The cached index when it is for these headers: false otherwise, with
 * the index empty again. */
static bool cache_load(struct uapi_index *u)
{
	g_autofree char *text = cache_read(u), *why = NULL;

	if (text && cache_parse(u, text, &why)) {
		if (u->o->verbose)
			g_printerr("cusemu-abicheck: the uapi index of %s\n",
				   u->cache_name);
		return true;
	}
	if (u->o->verbose)
		g_printerr("cusemu-abicheck: cache %s %s: rescanning\n",
			   u->cache_name, why ? why : "missing or unreadable");
	g_ptr_array_set_size(u->cmds, 0);
	g_hash_table_remove_all(u->opaque);
	g_hash_table_remove_all(u->probed);
	return false;
}

struct uapi_index *uapi_index_new(const struct probe_options *o, char **dirs)
{
	struct uapi_index *u = g_new0(struct uapi_index, 1);

	u->o = o;
	u->cache_dir = -1;
	u->cmds = g_ptr_array_new_with_free_func((GDestroyNotify)uapi_cmd_free);
	u->literals = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					    g_free);
	u->opaque = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	u->probed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  unref_commands);
	u->roots = g_ptr_array_new_with_free_func(g_free);
	if (dirs) {
		for (char **d = dirs; *d; d++)
			g_ptr_array_add(u->roots, g_strdup(*d));
	} else {
		static const char *const subdirs[] = {
			"linux", "asm-generic", "misc", "mtd", "rdma", "scsi",
			"sound", "video", "xen", "drm",
		};
		g_autofree char *ma = multiarch(o);

		for (unsigned int i = 0; i < G_N_ELEMENTS(subdirs); i++)
			g_ptr_array_add(u->roots, g_build_filename(
				"/usr/include", subdirs[i], NULL));
		g_ptr_array_add(u->roots, g_build_filename("/usr/include", ma,
							   "asm", NULL));
	}
	if (cache_wanted() && (u->cache_dir = cache_dir_open(o)) >= 0) {
		cache_key(u);
		u->manifest = g_string_new(NULL);
		for (guint i = 0; i < u->roots->len; i++)
			stat_dir(u->manifest, u->roots->pdata[i], 0);
		if (cache_load(u))
			return u;
		u->dirty = true;
	}
	index_scan(u);
	return u;
}

void uapi_index_free(struct uapi_index *u)
{
	if (!u)
		return;
	g_ptr_array_unref(u->cmds);
	g_hash_table_unref(u->literals);
	g_hash_table_unref(u->opaque);
	g_hash_table_unref(u->probed);
	g_ptr_array_unref(u->roots);
	if (u->cache_dir >= 0)
		close(u->cache_dir);
	g_free(u->cache_name);
	g_free(u->key);
	if (u->manifest)
		g_string_free(u->manifest, TRUE);
	g_free(u);
}

/* The file as an #include names it: linux/rtc.h. */
static const char *short_name(const char *file)
{
	const char *p = strstr(file, "/include/");

	if (!p)
		return file;
	p += strlen("/include/");
	/* The multiarch directory of asm/. */
	if (strstr(p, "-linux-gnu/"))
		p = strstr(p, "-linux-gnu/") + strlen("-linux-gnu/");
	return p;
}

/* A header's commands with their numbers; NULL when it does not compile
 * on its own or after the usual system headers. */
static GPtrArray *probe_file(struct uapi_index *u, const char *file)
{
	GPtrArray *commands = NULL;

	if (g_hash_table_contains(u->probed, file))
		return g_hash_table_lookup(u->probed, file);
	{
		const char *alone[] = { file, NULL };
		const char *with_libc[] = { "sys/types.h", "sys/socket.h",
					    "sys/time.h", "linux/types.h",
					    file, NULL };
		struct probe_options quiet = *u->o;

		quiet.verbose = false;
		quiet.prelude = NULL;
		if (!probe_headers(&quiet, (char **)alone, NULL, &commands, NULL,
				   NULL) &&
		    !probe_headers(&quiet, (char **)with_libc, NULL, &commands,
				   NULL, NULL))
			commands = NULL;
	}
	if (u->o->verbose && !commands)
		g_printerr("cusemu-abicheck: %s does not compile here; its "
			   "commands are not compared\n", file);
	g_hash_table_insert(u->probed, g_strdup(file), commands);
	u->dirty = true;
	return commands;
}

static bool same_file(const char *a, const char *b)
{
	g_autofree char *x = g_canonicalize_filename(a, NULL);
	g_autofree char *y = g_canonicalize_filename(b, NULL);
	g_autofree char *rx = realpath(x, NULL);
	g_autofree char *ry = realpath(y, NULL);

	return !strcmp(rx ? rx : x, ry ? ry : y);
}

void uapi_check(struct uapi_index *u, GPtrArray *commands)
{
	g_autoptr(GHashTable) files = g_hash_table_new(g_str_hash, g_str_equal);
	GHashTableIter it;
	gpointer file;

	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];

		for (guint j = 0; j < u->cmds->len; j++) {
			struct uapi_cmd *k = u->cmds->pdata[j];
			uint32_t n = c->number[ABI_X86_64];

			if ((k->type < 0 || (n >> 8 & 0xff) == (uint32_t)k->type) &&
			    (k->nr < 0 || (n & 0xff) == (uint32_t)k->nr))
				g_hash_table_add(files, k->file);
		}
	}
	g_hash_table_iter_init(&it, u->opaque);
	while (g_hash_table_iter_next(&it, &file, NULL))
		g_hash_table_add(files, file);

	g_hash_table_iter_init(&it, files);
	while (g_hash_table_iter_next(&it, &file, NULL)) {
		GPtrArray *theirs;
		bool mine = false;

		for (guint i = 0; i < commands->len && !mine; i++)
			mine = same_file(file, ((struct command *)
						commands->pdata[i])->file);
		if (mine)
			continue;
		if (u->o->verbose)
			g_printerr("cusemu-abicheck: comparing with %s (%s)\n",
				   (char *)file, g_hash_table_contains(u->opaque, file)
				   ? "its numbers need a compile" : "a candidate");
		if (!(theirs = probe_file(u, file)))
			continue;
		for (guint i = 0; i < commands->len; i++) {
			struct command *c = commands->pdata[i];

			for (guint j = 0; j < theirs->len; j++) {
				const struct command *t = theirs->pdata[j];
				const char *where;
				uint32_t number;

				if (!(where = collides(c, t, &number)))
					continue;
				finding_add(c, FINDING_COLLISION, t->name, false,
					    "0x%08x on %s is also %s of <%s>:%u",
					    number, where,
					    t->name, short_name(t->file), t->line);
			}
		}
	}
	if (u->dirty && u->cache_dir >= 0)
		cache_save(u);
}
