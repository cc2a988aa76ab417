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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

struct uapi_index *uapi_index_new(const struct probe_options *o, char **dirs)
{
	struct uapi_index *u = g_new0(struct uapi_index, 1);
	g_autoptr(GPtrArray) defs = g_ptr_array_new_with_free_func(
		(GDestroyNotify)text_def_free);
	/* Helper macros (`HSC_IOW(num, dtype)`) -> the type they give, or -1. */
	g_autoptr(GHashTable) helpers = g_hash_table_new(g_str_hash, g_str_equal);

	u->o = o;
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
}
