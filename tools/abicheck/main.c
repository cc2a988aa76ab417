/* SPDX-License-Identifier: MIT */
/*
 * cusemu-abicheck: checks the ioctl commands of uapi headers against the
 * kernel's rules for both x86 ABIs, and a device model's tables against
 * the headers; writes the compat structs and conversions a model needs.
 */
#define G_LOG_DOMAIN "cusemu-abicheck"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "abicheck.h"
#include "stats.h"

enum {
	EXIT_CLEAN = 0,
	EXIT_FINDINGS = 1,
	EXIT_ERROR = 2,
};

static char **include_dirs, **defines, **given_args, **given_files;
static char **pointee_args;
static char **uapi_dirs;
static char *cc_arg, *model_arg, *output_path;
static gboolean json, emit, no_collisions, verbose, summary, full, version;

static const GOptionEntry entries[] = {
	{ "include", 'I', 0, G_OPTION_ARG_FILENAME_ARRAY, &include_dirs,
	  "Add DIR to the compiler's include path", "DIR" },
	{ "define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &defines,
	  "Define a macro for the compiler", "NAME[=VALUE]" },
	{ "command", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &given_args,
	  "Check NAME with payload TYPE: for commands whose number does not "
	  "say it (a plain number, or an _IO command); TYPE value: its "
	  "argument is a value or unused, no pointer",
	  "NAME=TYPE" },
	{ "commands-from", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &given_files,
	  "Read --command's NAME=TYPE from FILE, one a line (# starts a "
	  "comment)", "FILE" },
	{ "json", 'j', 0, G_OPTION_ARG_NONE, &json,
	  "Print one JSON array: an object per command", NULL },
	{ "summary", 's', 0, G_OPTION_ARG_NONE, &summary,
	  "One line per command, without its members", NULL },
	{ "full", 0, 0, G_OPTION_ARG_NONE, &full,
	  "With --model: each command's whole layout report, its members "
	  "and findings, not one line", NULL },
	{ "model", 'm', 0, G_OPTION_ARG_STRING, &model_arg,
	  "Cross-check the tables of a device model, built in or a plugin",
	  "NAME|FILE.so" },
	{ "emit-compat", 'e', 0, G_OPTION_ARG_NONE, &emit,
	  "Write C for the commands that need a translation: their i386 "
	  "structs and the conversions to and from the native ones", NULL },
	{ "pointee", 0, 0, G_OPTION_ARG_STRING_ARRAY, &pointee_args,
	  "--emit-compat: the member MEMBER of struct TAG (a __u64 that "
	  "carries a pointer) points to TYPE; its compat struct and array "
	  "conversions are written where TYPE's layouts differ",
	  "TAG.MEMBER=TYPE" },
	{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &output_path,
	  "Write --emit-compat's code to FILE (- for standard output)",
	  "FILE" },
	{ "uapi", 'u', 0, G_OPTION_ARG_FILENAME_ARRAY, &uapi_dirs,
	  "Look for colliding numbers in DIR instead of the installed uapi "
	  "headers (repeatable)", "DIR" },
	{ "no-collisions", 0, 0, G_OPTION_ARG_NONE, &no_collisions,
	  "Do not compare numbers with the installed uapi headers", NULL },
	{ "cc", 0, 0, G_OPTION_ARG_STRING, &cc_arg,
	  "The compiler: gcc with -m64 and -m32 (default $CC, else gcc)",
	  "CC" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
	  "Show the compiler commands", NULL },
	{ "version", 'V', 0, G_OPTION_ARG_NONE, &version,
	  "Print the version and exit", NULL },
	G_OPTION_ENTRY_NULL
};

#define DESCRIPTION                                                          \
	"Finds every command the headers define with _IO, _IOR, _IOW,\n"   \
	"_IOWR or _IOC(dir, type, nr, sizeof(T)) (macros and\n"          \
	"enumerators), compiles a probe of them with\n"                   \
	"gcc -m64 -g and -m32 -g, and reads both layouts from the debug\n"  \
	"information. Findings, each on a member:\n"                        \
	"  layout      an offset or size differs between x86_64 and i386\n" \
	"  long        a long or unsigned long (register-sized)\n"          \
	"  pointer     a pointer (needs compat_ptr; the kernel's advice: a\n" \
	"              __u64)\n"                                            \
	"  align64     a 64-bit member that i386 aligns to 4 bytes\n"      \
	"  padding     implicit padding: holes and tail\n"                 \
	"  time        time_t, struct timeval, struct timespec (y2038)\n"   \
	"  bitfield, enum, char\n"                                          \
	"              layout or signedness left to the implementation\n" \
	"  sizeof      data_type written sizeof(T): encodes sizeof(size_t)\n" \
	"  number      another number on i386 for the same payload (a\n"  \
	"              macro that picks a command by sizeof(time_t))\n"  \
	"  size-limit  a payload over the 14-bit size field\n"             \
	"  collision   the number of another command, of these headers or\n" \
	"              of the installed uapi headers\n"                    \
	"  unresolved  its number or payload does not compile with the\n" \
	"              headers as given (the compiler's words); the rest\n" \
	"              of the headers is still checked\n"                  \
	"  plain-number  a plain number (0x4600) that looks like a command:\n" \
	"              it encodes no payload; --command NAME=TYPE gives it\n" \
	"  unsized     an _IO command: its number says nothing of its\n"  \
	"              argument; --command NAME=TYPE for a pointer, or\n" \
	"              NAME=value for a value\n"                             \
	"Plain numbers and _IO commands are not judged until --command\n"  \
	"says what they take.\n"                                          \
	"A command is compatible when one table row serves both ABIs, and\n" \
	"otherwise needs a translation (a compat row of its own).\n"       \
	"\n"                                                                 \
	"--model checks a model's tables against the headers: commands\n"  \
	"without a native row, rows not in the headers, rows marked\n"     \
	"compatible for commands whose layouts differ, and compat rows\n"  \
	"whose number is not the command's i386 number.\n"                 \
	"\n"                                                                 \
	"Exit status: 0 when every command is compatible and has no\n"     \
	"finding (with --model: when the model's tables have no error;\n" \
	"with --emit-compat: when every command that needs a translation\n" \
	"was written), 1 when there are findings (an unresolved command\n" \
	"too; with --emit-compat: a command it could not write, named),\n" \
	"2 for a usage error or a header that does not compile."

static int usage_error(GOptionContext *ctx, const char *format, ...)
	G_GNUC_PRINTF(2, 3);

static int usage_error(GOptionContext *ctx, const char *format, ...)
{
	va_list ap;

	fputs("cusemu-abicheck: ", stderr);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputs("\nTry 'cusemu-abicheck --help'.\n", stderr);
	return EXIT_ERROR;
}

static const char *const dir_names[] = {
	[DIR_NONE] = "none", [DIR_READ] = "read", [DIR_WRITE] = "write",
	[DIR_BOTH] = "read-write", [DIR_UNKNOWN] = "unknown",
};

/* _IOC's first argument, as headers write it. */
const char *const ioc_dir_names[] = {
	[DIR_NONE] = "_IOC_NONE", [DIR_READ] = "_IOC_READ",
	[DIR_WRITE] = "_IOC_WRITE", [DIR_BOTH] = "_IOC_READ | _IOC_WRITE",
	[DIR_UNKNOWN] = "?",
};

static const struct member *payload(const struct command *c, enum abi abi)
{
	return c->layout[abi].present ? c->layout[abi].members->pdata[0] : NULL;
}

/* The kinds that make a command need a translation, each once. */
static char *reasons(const struct command *c, const char *sep, bool quoted)
{
	g_autoptr(GString) s = g_string_new(NULL);
	bool seen[FINDING_KIND_COUNT] = { false };

	for (guint i = 0; i < c->findings->len; i++) {
		const struct finding *f = c->findings->pdata[i];

		if (!finding_kind_translates(f->kind) || seen[f->kind])
			continue;
		seen[f->kind] = true;
		g_string_append_printf(s, "%s%s%s%s", s->len ? sep : "",
				       quoted ? "\"" : "",
				       finding_kind_name(f->kind),
				       quoted ? "\"" : "");
	}
	return g_string_free(g_steal_pointer(&s), FALSE);
}

static char *invocation(const struct command *c)
{
	if (!c->type_arg)
		return g_strdup_printf("%s", c->payload_arg ? c->payload_arg
							    : "");
	if (!strcmp(c->macro, "_IOC"))
		return g_strdup_printf("_IOC(%s, %s, %s, %s%s%s)",
				       ioc_dir_names[c->dir], c->type_arg,
				       c->nr_arg, c->payload_arg ? "sizeof(" : "",
				       c->payload_arg ? c->payload_arg : "...",
				       c->payload_arg ? ")" : "");
	if (c->dir == DIR_NONE)
		return g_strdup_printf("%s(%s, %s)%s%s", c->macro, c->type_arg,
				       c->nr_arg, c->payload_arg ? ", payload " : "",
				       c->payload_arg ? c->payload_arg : "");
	return g_strdup_printf("%s(%s, %s, %s)", c->macro, c->type_arg,
			       c->nr_arg, c->payload_arg);
}

static void print_finding(GString *out, const struct finding *f)
{
	g_string_append_printf(out, "  %s%-19s %-20s %s\n",
			       f->error ? "error: " : "",
			       finding_kind_name(f->kind), f->member, f->detail);
}

static void print_command(GString *out, const struct command *c)
{
	g_autofree char *inv = invocation(c);
	g_autofree char *why = reasons(c, ", ", false);
	const struct member *p64 = payload(c, ABI_X86_64);
	const struct member *p32 = payload(c, ABI_I386);

	if (c->row_only) {
		for (guint i = 0; i < c->findings->len; i++) {
			const struct finding *f = c->findings->pdata[i];

			g_string_append_printf(out, "%s%s  %s: %s\n",
					       summary ? "" : "\n", c->name,
					       finding_kind_name(f->kind),
					       f->detail);
		}
		return;
	}
	if (summary) {
		g_autoptr(GString) other = g_string_new(NULL);
		bool seen[FINDING_KIND_COUNT] = { false };

		/* The findings that do not decide the verdict, each once. */
		for (guint i = 0; i < c->findings->len; i++) {
			const struct finding *f = c->findings->pdata[i];

			if (finding_kind_translates(f->kind) || seen[f->kind])
				continue;
			seen[f->kind] = true;
			g_string_append_printf(other, "%s%s", other->len ? ", " : "",
					       finding_kind_name(f->kind));
		}
		g_autofree char *numbers = c->unresolved
			? g_strdup_printf("%-10s %-10s", "unresolved", "")
			: g_strdup_printf("0x%08x 0x%08x", c->number[ABI_X86_64],
					  c->number[ABI_I386]);

		g_string_append_printf(out, "%-28s %s %s%s%s%s%s%s%s\n",
				       c->name, numbers,
				       c->compatible ? "compatible"
				       : command_judged(c) ? "needs a translation"
						   : "not judged",
				       *why ? " (" : "", why, *why ? ")" : "",
				       other->len ? " [" : "", other->str,
				       other->len ? "]" : "");
		/* What --model is run for: the tables' problems, in full. */
		for (guint i = 0; model_arg && i < c->findings->len; i++) {
			const struct finding *f = c->findings->pdata[i];

			if (finding_kind_model(f->kind))
				print_finding(out, f);
		}
		return;
	}
	g_string_append_printf(out, "\n%s  %s  (%s:%u)\n", c->name, inv,
			       c->header, c->line);
	g_string_append_printf(out, "  %-24s %-24s %-12s %s\n", "", "", "x86_64",
			       "i386");
	if (c->unresolved)
		g_string_append_printf(out, "  %-24s %-24s %-12s %s\n", "number",
				       "", "unresolved", "unresolved");
	else
		g_string_append_printf(out, "  %-24s %-24s 0x%08x   0x%08x\n",
				       "number", "", c->number[ABI_X86_64],
				       c->number[ABI_I386]);
	if (p64 && p32) {
		const struct layout *l = &c->layout[ABI_X86_64];

		/* Offset+size per ABI, members indented under their struct. */
		g_string_append_printf(out, "  %-24s %-24s %-12s %s\n",
				       "member", "type", "offset+size",
				       "offset+size");
		for (guint i = 0; i < l->members->len; i++) {
			const struct member *m = l->members->pdata[i];
			const struct member *n = layout_find(&c->layout[ABI_I386],
							     m->path);
			g_autofree char *left = g_strdup_printf(
				"%" PRIu64 "+%" PRIu64, m->offset, m->size);
			g_autofree char *right = n ? g_strdup_printf(
				"%" PRIu64 "+%" PRIu64, n->offset, n->size)
						   : g_strdup("-");
			g_autofree char *label = NULL;
			int depth = 0;

			for (int p = m->parent; p >= 0;
			     p = ((struct member *)l->members->pdata[p])->parent)
				depth++;
			label = g_strdup_printf("%*s%s", 2 * depth, "",
						*m->name ? m->name : "(payload)");
			if (!n || n->offset != m->offset || n->size != m->size)
				g_string_append_printf(out, "  %-24s %-24s %-12s %-12s "
						       "differs\n", label, m->type,
						       left, right);
			else
				g_string_append_printf(out, "  %-24s %-24s %-12s %s\n",
						       label, m->type, left, right);
		}
	}
	if (c->compat_of)
		g_string_append_printf(out, "  the i386 number of %s\n",
				       c->compat_of->name);
	g_string_append_printf(out, "  %s%s%s%s\n",
			       c->compatible ? "compatible: one table row "
					       "serves both ABIs"
			       : command_judged(c) ? "needs a translation"
					     : "not judged: nothing tells its argument",
			       *why ? " (" : "", why, *why ? ")" : "");
	for (guint i = 0; i < c->findings->len; i++)
		print_finding(out, c->findings->pdata[i]);
}

static void json_member_list(GString *out, const struct layout *l,
			     const struct layout *l32)
{
	g_string_append(out, "[");
	for (guint i = 1; l->present && i < l->members->len; i++) {
		const struct member *m = l->members->pdata[i];
		const struct member *n = layout_find(l32, m->path);

		g_string_append(out, i > 1 ? ", {" : "{");
		g_string_append(out, "\"path\": ");
		cusemu_json_append_string(out, m->path);
		g_string_append(out, ", \"type\": ");
		cusemu_json_append_string(out, m->type);
		g_string_append_printf(out, ", \"offset_x86_64\": %" PRIu64
				       ", \"size_x86_64\": %" PRIu64,
				       m->offset, m->size);
		if (n)
			g_string_append_printf(out, ", \"offset_i386\": %" PRIu64
					       ", \"size_i386\": %" PRIu64,
					       n->offset, n->size);
		if (m->flags & MEMBER_ARRAY)
			g_string_append_printf(out, ", \"count_x86_64\": %" PRIu64
					       ", \"count_i386\": %" PRIu64,
					       m->count, n ? n->count : 0);
		if (m->flags & MEMBER_BITFIELD)
			g_string_append_printf(out, ", \"bit_offset\": %u, "
					       "\"bit_size\": %u", m->bit_offset,
					       m->bit_size);
		/* What a pointer points to: its own members, offsets from
		 * the pointee's start. */
		if (m->pointee && n && n->pointee) {
			const struct layout p64 = { true, m->pointee };
			const struct layout p32 = { true, n->pointee };
			const struct member *t = m->pointee->pdata[0];
			const struct member *u = n->pointee->pdata[0];

			g_string_append(out, ", \"pointee\": {\"type\": ");
			cusemu_json_append_string(out, t->type);
			g_string_append_printf(out, ", \"size_x86_64\": %" PRIu64
					       ", \"size_i386\": %" PRIu64,
					       t->size, u->size);
			/* A buffer of them: the member with their count. */
			if (m->pointee_count) {
				g_string_append(out, ", \"count\": ");
				cusemu_json_append_string(
					out, ((const struct member *)
						      l->members->pdata[m->pointee_count])
						     ->path);
			}
			g_string_append(out, ", \"members\": ");
			json_member_list(out, &p64, &p32);
			g_string_append(out, "}");
		}
		g_string_append(out, "}");
	}
	g_string_append(out, "]");
}

static void json_members(GString *out, const struct command *c)
{
	json_member_list(out, &c->layout[ABI_X86_64], &c->layout[ABI_I386]);
}

static void json_optional_string(GString *out, const char *key, const char *v)
{
	g_string_append_printf(out, ", \"%s\": ", key);
	if (v)
		cusemu_json_append_string(out, v);
	else
		g_string_append(out, "null");
}

static void json_command(GString *out, const struct command *c, bool first)
{
	g_autofree char *why = reasons(c, ", ", true);

	g_string_append(out, first ? "\n  {" : ",\n  {");
	g_string_append(out, "\"name\": ");
	cusemu_json_append_string(out, c->name);
	json_optional_string(out, "header", c->header);
	g_string_append_printf(out, ", \"line\": %u", c->line);
	json_optional_string(out, "macro", c->macro);
	g_string_append_printf(out, ", \"direction\": \"%s\"", dir_names[c->dir]);
	json_optional_string(out, "type", c->type_arg);
	json_optional_string(out, "nr", c->nr_arg);
	json_optional_string(out, "payload", c->payload_arg);
	if (c->unresolved)
		g_string_append(out, ", \"number_x86_64\": null, "
				     "\"number_i386\": null");
	else
		g_string_append_printf(out, ", \"number_x86_64\": %u, "
				       "\"number_i386\": %u",
				       c->number[ABI_X86_64], c->number[ABI_I386]);
	for (int abi = 0; abi < ABI_COUNT; abi++) {
		const struct member *p = payload(c, abi);

		if (p)
			g_string_append_printf(out, ", \"size_%s\": %" PRIu64,
					       abi_names[abi], p->size);
		else
			g_string_append_printf(out, ", \"size_%s\": null",
					       abi_names[abi]);
	}
	g_string_append_printf(out, ", \"judged\": %s, \"compatible\": %s, "
			       "\"reasons\": [%s]",
			       command_judged(c) && !c->row_only ? "true" : "false",
			       c->compatible && !c->row_only ? "true" : "false",
			       why);
	if (c->row_only)
		g_string_append(out, ", \"model_row_only\": true");
	if (model_arg) {
		g_string_append_printf(out, ", \"model_match\": %s",
				       model_matches(c) ? "true" : "false");
		json_optional_string(out, "model_served", c->served);
	}
	json_optional_string(out, "compat_of",
			     c->compat_of ? c->compat_of->name : NULL);
	g_string_append(out, ", \"members\": ");
	json_members(out, c);
	g_string_append(out, ", \"findings\": [");
	for (guint i = 0; i < c->findings->len; i++) {
		const struct finding *f = c->findings->pdata[i];

		g_string_append_printf(out, "%s{\"kind\": \"%s\", \"member\": ",
				       i ? ", " : "", finding_kind_name(f->kind));
		cusemu_json_append_string(out, f->member);
		g_string_append(out, ", \"detail\": ");
		cusemu_json_append_string(out, f->detail);
		g_string_append_printf(out, ", \"error\": %s}",
				       f->error ? "true" : "false");
	}
	g_string_append(out, "]}");
}

/* -IDIR and -DNAME as one word, as compilers take them; not after "--". */
static char **split_joined(int argc, char **argv, int *out_argc)
{
	GPtrArray *a = g_ptr_array_new();
	bool options = true;

	for (int i = 0; i < argc; i++) {
		if (i && !strcmp(argv[i], "--"))
			options = false;
		if (options && (g_str_has_prefix(argv[i], "-I") ||
		     g_str_has_prefix(argv[i], "-D")) && argv[i][2]) {
			g_ptr_array_add(a, g_strndup(argv[i], 2));
			g_ptr_array_add(a, g_strdup(argv[i] + 2));
		} else {
			g_ptr_array_add(a, g_strdup(argv[i]));
		}
	}
	*out_argc = (int)a->len;
	g_ptr_array_add(a, NULL);
	return (char **)g_ptr_array_free(a, FALSE);
}

/*
 * "--" ends the options, and is no header: the parser leaves it among what
 * remains when a header after it starts with '-'. *argc counts them.
 */
static void drop_end_of_options(char **remaining, int *argc)
{
	for (int i = 1; remaining[i]; i++) {
		if (strcmp(remaining[i], "--"))
			continue;
		g_free(remaining[i]);
		memmove(&remaining[i], &remaining[i + 1],
			(*argc - i) * sizeof(char *));
		--*argc;
		return;
	}
}

/* One NAME=TYPE; where says where it came from, for the error. */
static gboolean parse_one_given(GPtrArray *given, const char *arg,
				const char *where, GError **error)
{
	const char *eq = strchr(arg, '=');
	struct given_command *gc;

	if (!eq || eq == arg || !eq[1]) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s %s: give NAME=TYPE, e.g. "
			    "I2C_RDWR='struct i2c_rdwr_ioctl_data'", where, arg);
		return FALSE;
	}
	if (!strcmp(where, "--pointee") &&
	    (!memchr(arg, '.', eq - arg) || arg[0] == '.' || eq[-1] == '.')) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--pointee %s: give TAG.MEMBER=TYPE, e.g. "
			    "snd_ctl_elem_list.pids='struct snd_ctl_elem_id'",
			    arg);
		return FALSE;
	}
	gc = g_new0(struct given_command, 1);
	gc->name = g_strstrip(g_strndup(arg, eq - arg));
	gc->type = g_strstrip(g_strdup(eq + 1));
	g_ptr_array_add(given, gc);
	if (!strcmp(where, "--pointee") && !given_pointee_count(gc)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--pointee %s: give TAG.MEMBER=TYPE[COUNT], COUNT "
			    "the member beside it that holds how many TYPE "
			    "it points to",
			    arg);
		return FALSE;
	}
	return TRUE;
}

static gboolean parse_given(GPtrArray *given, GPtrArray *pointees,
			    GError **error)
{
	for (char **g = pointee_args; g && *g; g++)
		if (!parse_one_given(pointees, *g, "--pointee", error))
			return FALSE;
	for (char **g = given_args; g && *g; g++)
		if (!parse_one_given(given, *g, "--command", error))
			return FALSE;
	for (char **f = given_files; f && *f; f++) {
		g_autofree char *text = NULL;
		g_auto(GStrv) lines = NULL;

		if (!g_file_get_contents(*f, &text, NULL, error)) {
			g_prefix_error(error, "--commands-from: ");
			return FALSE;
		}
		lines = g_strsplit(text, "\n", -1);
		for (guint i = 0; lines[i]; i++) {
			g_autofree char *where = g_strdup_printf("%s:%u:", *f,
								 i + 1);
			char *l = g_strstrip(lines[i]);

			if (*l && *l != '#' &&
			    !parse_one_given(given, l, where, error))
				return FALSE;
		}
	}
	return TRUE;
}

static void given_free(struct given_command *g)
{
	g_free(g->name);
	g_free(g->type);
	g_free(g->count);
	g_free(g);
}

/* Ways of the summary that a person reads once, under the findings. */
static void print_reasons(GString *out, GPtrArray *commands)
{
	bool seen[FINDING_KIND_COUNT] = { false };
	guint compatible = 0, findings = 0, unjudged = 0;

	guint n = 0;

	for (guint i = 0; i < commands->len; i++) {
		const struct command *c = commands->pdata[i];

		n += !c->row_only;
		compatible += c->compatible && !c->row_only;
		unjudged += !c->row_only && !command_judged(c);
		findings += c->findings->len;
		for (guint j = 0; j < c->findings->len; j++)
			seen[((struct finding *)c->findings->pdata[j])->kind] = true;
	}
	g_string_append_printf(out, "\n%u command%s: %u compatible, %u need%s a "
			       "translation", n, n == 1 ? "" : "s", compatible,
			       n - compatible - unjudged,
			       n - compatible - unjudged == 1 ? "s" : "");
	if (unjudged)
		g_string_append_printf(out, ", %u not judged", unjudged);
	g_string_append_printf(out, "; %u finding%s\n", findings,
			       findings == 1 ? "" : "s");
	for (int k = 0; k < FINDING_KIND_COUNT; k++)
		if (seen[k])
			g_string_append_printf(out, "  %-19s %s\n",
					       finding_kind_name(k),
					       finding_kind_reason(k));
}

static char **compiler(void)
{
	const char *cc = cc_arg ? cc_arg : g_getenv("CC");
	char **argv = NULL;

	if (!cc || !*cc)
		cc = "gcc";
	if (!g_shell_parse_argv(cc, NULL, &argv, NULL)) {
		argv = g_new0(char *, 2);
		argv[0] = g_strdup(cc);
	}
	return argv;
}

/* Write to an open descriptor, all of it. */
static gboolean write_all(int fd, const GString *out, const char *path,
			  GError **error)
{
	for (gsize done = 0; done < out->len;) {
		ssize_t n = write(fd, out->str + done, out->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
				    "cannot write %s: %s", path, g_strerror(e));
			return FALSE;
		}
		done += n;
	}
	return TRUE;
}

/*
 * Where --emit-compat's code goes. A regular file (or a new one) is
 * replaced whole through a temporary file, so a reader never sees half of
 * it; through a symbolic link the link stays and its target is replaced.
 * Anything else is never renamed over: a character device or a FIFO is
 * written through as a shell's > would (so -o /dev/null stays a device),
 * a directory, a block device or a socket is refused.
 */
static gboolean write_output(const char *path, const GString *out,
			     GError **error)
{
	g_autofree char *target = NULL;
	struct stat st;
	int fd;

	if (!path || strcmp(path, "-") == 0) {
		if (fwrite(out->str, 1, out->len, stdout) != out->len ||
		    fflush(stdout) != 0) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO,
				    "cannot write standard output: %s",
				    g_strerror(errno));
			return FALSE;
		}
		return TRUE;
	}
	if (stat(path, &st) < 0) {
		if (errno != ENOENT) {
			int e = errno;

			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
				    "%s: %s", path, g_strerror(e));
			return FALSE;
		}
		return g_file_set_contents(path, out->str, out->len, error);
	}
	if (S_ISREG(st.st_mode)) {
		target = realpath(path, NULL);
		return g_file_set_contents(target ? target : path, out->str,
					   out->len, error);
	}
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s is %s; give a regular file, a character "
			    "device, a FIFO or - for standard output", path,
			    S_ISDIR(st.st_mode) ? "a directory" :
			    S_ISBLK(st.st_mode) ? "a block device" :
			    "not a file");
		return FALSE;
	}
	fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    "cannot open %s: %s", path, g_strerror(e));
		return FALSE;
	}
	if (!write_all(fd, out, path, error)) {
		close(fd);
		return FALSE;
	}
	if (close(fd) < 0) {
		int e = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    "cannot write %s: %s", path, g_strerror(e));
		return FALSE;
	}
	return TRUE;
}

/* The compiler's first error, for a line of its own. */
static char *first_error(const char *message)
{
	const char *e = strstr(message, "error: ");
	const char *end;

	if (!e)
		return g_strdup("it does not compile");
	e += strlen("error: ");
	end = strchr(e, '\n');
	return g_strndup(e, end ? (size_t)(end - e) : strlen(e));
}

/*
 * The commands whose code alone does not compile (a static assertion of
 * the emitter's own that fails, a warning), each with the compiler's
 * words: they are left out rather than written wrong.
 */
static void find_uncompilable(const struct probe_options *o,
			      GPtrArray *commands, char **headers,
			      const char *prelude, GHashTable *leave)
{
	struct emit_options eo = { .prelude = prelude };
	g_autoptr(GString) none = g_string_new(NULL);
	g_autoptr(GPtrArray) scratch = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) empty = g_ptr_array_new();

	emit_compat(none, empty, headers, &eo, scratch);
	for (guint i = 0; i < commands->len; i++) {
		g_autoptr(GString) one = g_string_new(NULL);
		g_autoptr(GError) failed = NULL;
		g_autofree char *words = NULL;

		eo.only = commands->pdata[i];
		emit_compat(one, commands, headers, &eo, scratch);
		/* Most write nothing: no compiler run for them. */
		if (g_string_equal(one, none) ||
		    probe_check_code(o, headers, one->str, &failed))
			continue;
		words = first_error(failed->message);
		g_hash_table_insert(leave, eo.only->name, g_strdup_printf(
			"the code written for it does not compile, a fault of "
			"cusemu-abicheck's (%s)", words));
	}
}

/*
 * --emit-compat: the code goes out with what it could write, once the
 * compiler has taken it for both ABIs; a command left out is a finding,
 * named, since a build must not take the file for the whole translation.
 */
static int emit_and_write(const struct probe_options *o, GPtrArray *commands,
			  char **headers, const char *prelude)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GPtrArray) left_out = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) leave = g_hash_table_new_full(g_str_hash,
							    g_str_equal, NULL,
							    g_free);
	struct emit_options eo = { .prelude = prelude, .leave = leave };
	g_autoptr(GError) error = NULL;

	emit_compat(out, commands, headers, &eo, left_out);
	if (!probe_check_code(o, headers, out->str, &error)) {
		g_clear_error(&error);
		find_uncompilable(o, commands, headers, prelude, leave);
		g_string_truncate(out, 0);
		g_ptr_array_set_size(left_out, 0);
		emit_compat(out, commands, headers, &eo, left_out);
		if (!probe_check_code(o, headers, out->str, &error)) {
			fprintf(stderr, "cusemu-abicheck: --emit-compat: the "
				"code does not compile, a fault of "
				"cusemu-abicheck's; nothing written:\n%s\n",
				error->message);
			return EXIT_ERROR;
		}
	}
	if (!write_output(output_path, out, &error)) {
		fprintf(stderr, "cusemu-abicheck: %s\n", error->message);
		return EXIT_ERROR;
	}
	for (guint i = 0; i < left_out->len; i++)
		fprintf(stderr, "cusemu-abicheck: --emit-compat: not written: "
			"%s\n", (char *)left_out->pdata[i]);
	return left_out->len ? EXIT_FINDINGS : EXIT_CLEAN;
}

int main(int argc, char **argv)
{
	g_autoptr(GOptionContext) ctx = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) commands = NULL;
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) given = g_ptr_array_new_with_free_func(
		(GDestroyNotify)given_free);
	g_autoptr(GPtrArray) pointees = g_ptr_array_new_with_free_func(
		(GDestroyNotify)given_free);
	g_autoptr(GPtrArray) cflags = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) out = g_string_new(NULL);
	g_auto(GStrv) args = NULL;
	g_auto(GStrv) headers = NULL;
	g_auto(GStrv) cc = NULL;
	g_autofree char *model_name = NULL;
	g_autofree char *prelude = NULL;
	struct probe_options o;
	int status = EXIT_CLEAN;

	setlocale(LC_ALL, "");
	ctx = g_option_context_new("HEADER...");
	g_option_context_set_summary(ctx,
		"Check the ioctl commands of uapi headers for both x86 ABIs\n"
		"(x86_64 and i386), by the rules of the kernel's guide to ioctl\n"
		"interfaces. A HEADER is a file, or a name as #include <...>\n"
		"takes it, such as linux/rtc.h.");
	g_option_context_set_description(ctx, DESCRIPTION);
	g_option_context_add_main_entries(ctx, entries, NULL);
	args = split_joined(argc, argv, &argc);
	{
		char **parse = g_memdup2(args, sizeof(char *) * (argc + 1));

		if (!g_option_context_parse(ctx, &argc, &parse, &error)) {
			g_free(parse);
			return usage_error(ctx, "%s", error->message);
		}
		/* The headers: what the parser left, in order. */
		headers = g_strdupv(parse);
		g_free(parse);
		drop_end_of_options(headers, &argc);
	}
	if (version) {
		printf("cusemu-abicheck %s\n", CUSEMU_VERSION);
		return EXIT_CLEAN;
	}
	if (argc < 2)
		return usage_error(ctx, "no header given");
	if (output_path && !emit)
		return usage_error(ctx, "--output is for --emit-compat");
	if (full && !model_arg)
		return usage_error(ctx, "--full is for --model: without it the "
				   "whole layout report is what is printed");
	if (full && summary)
		return usage_error(ctx, "--full and --summary ask for the "
				   "opposite: give one");
	/* --model's report is about the tables: one line a command. */
	if (model_arg && !full)
		summary = TRUE;
	if (pointee_args && !emit && !json)
		return usage_error(ctx, "--pointee is for --emit-compat and "
				   "--json");
	if (!parse_given(given, pointees, &error))
		return usage_error(ctx, "%s", error->message);
	for (char **d = include_dirs; d && *d; d++)
		g_ptr_array_add(cflags, g_strconcat("-I", *d, NULL));
	for (char **d = defines; d && *d; d++)
		g_ptr_array_add(cflags, g_strconcat("-D", *d, NULL));
	cc = compiler();
	o = (struct probe_options){ .cc = cc, .cflags = cflags,
				    .verbose = verbose, .pointees = pointees,
				    .prelude = &prelude };

	if (!probe_headers(&o, headers + 1, given, &commands, notes, &error)) {
		fprintf(stderr, "cusemu-abicheck: %s\n", error->message);
		return EXIT_ERROR;
	}
	if (!commands->len) {
		fprintf(stderr, "cusemu-abicheck: no command defined with _IO, "
				"_IOR, _IOW, _IOWR or _IOC in %s; give plain-number "
				"commands with --command NAME=TYPE\n",
			headers[1]);
		return EXIT_ERROR;
	}
	for (guint i = 0; i < commands->len; i++)
		rules_check(commands->pdata[i]);
	rules_check_set(commands);
	if (!no_collisions) {
		struct uapi_index *u = uapi_index_new(&o, uapi_dirs);

		uapi_check(u, commands);
		uapi_index_free(u);
	}

	if (emit)
		return emit_and_write(&o, commands, headers + 1, prelude);

	if (model_arg) {
		if (!model_check(model_arg, commands, notes, &model_name,
				 &error)) {
			fprintf(stderr, "cusemu-abicheck: %s\n", error->message);
			return EXIT_ERROR;
		}
	}
	for (guint i = 0; i < commands->len; i++) {
		const struct command *c = commands->pdata[i];

		for (guint j = 0; j < c->findings->len; j++) {
			const struct finding *f = c->findings->pdata[j];

			if (model_arg ? f->error : true)
				status = EXIT_FINDINGS;
		}
		if (!model_arg && !c->compatible && !c->row_only)
			status = EXIT_FINDINGS;
	}

	if (json) {
		g_string_append(out, "[");
		for (guint i = 0; i < commands->len; i++)
			json_command(out, commands->pdata[i], i == 0);
		g_string_append(out, "\n]\n");
	} else {
		const char *last = NULL;

		for (guint i = 0; i < notes->len; i++)
			g_string_append_printf(out, "note: %s\n",
					       (char *)notes->pdata[i]);
		for (guint i = 0; i < commands->len; i++) {
			const struct command *c = commands->pdata[i];

			if (summary && c->header && g_strcmp0(last, c->header))
				g_string_append_printf(out, "%s:\n", c->header);
			last = c->header;
			print_command(out, c);
		}
		print_reasons(out, commands);
		if (model_arg)
			model_report(out, model_name, commands);
	}
	fputs(out->str, stdout);
	return status;
}
