/* SPDX-License-Identifier: MIT */
/*
 * --emit-compat: for each command that needs a translation, the i386 view
 * of its payload as a packed struct of fixed-width types, each member at
 * the offset i386 gives it, with compile-time checks of those offsets, and
 * the conversions to and from the native struct that a model's compat row
 * calls. Pointers travel as __u32 and come back through cusemu_compat_ptr.
 */
#include <string.h>

#include "abicheck.h"

struct emitter {
	GString *decls, *funcs;
	GHashTable *done;		/* compat struct names written */
	const struct layout *l64, *l32;
	const struct command *c;
	GPtrArray *problems;		/* what could not be generated */
};

static const struct member *at(const struct layout *l, int i)
{
	return l->members->pdata[i];
}

/* Index of the member with m's path in l, or -1. */
static int index_of(const struct layout *l, const char *path)
{
	for (guint i = 0; i < l->members->len; i++)
		if (!strcmp(at(l, (int)i)->path, path))
			return (int)i;
	return -1;
}

/* Whether the aggregate or member at i64 is laid out alike by both. */
static bool same_layout(struct emitter *e, int i64)
{
	const struct member *a = at(e->l64, i64);
	int i32 = index_of(e->l32, a->path);
	const struct member *b;

	if (i32 < 0)
		return false;
	b = at(e->l32, i32);
	if (a->size != b->size || (a->flags & (MEMBER_POINTER | MEMBER_LONG)))
		return false;
	for (guint i = i64 + 1; i < e->l64->members->len; i++) {
		const struct member *m = at(e->l64, (int)i);
		const struct member *n;

		/* Descendants follow their aggregate in pre-order. */
		if (!g_str_has_prefix(m->path, a->path) ||
		    (*a->path && m->path[strlen(a->path)] != '.' &&
		     m->path[strlen(a->path)] != '['))
			break;
		n = layout_find(e->l32, m->path);
		if (!n || m->offset - a->offset != n->offset - b->offset ||
		    m->size != n->size || (m->flags & (MEMBER_POINTER | MEMBER_LONG)))
			return false;
	}
	return true;
}

/* struct sensorhub_info -> sensorhub_info; anonymous ones by command. */
static char *tag_of(struct emitter *e, const struct member *m)
{
	const char *t = m->type;
	g_autofree char *lower = NULL;

	if (g_str_has_prefix(t, "struct ") && !strstr(t, "{"))
		return g_strdup(t + strlen("struct "));
	if (g_str_has_prefix(t, "union ") && !strstr(t, "{"))
		return g_strdup(t + strlen("union "));
	if (!strchr(t, ' ') && !strchr(t, '{') && !strchr(t, '['))
		return g_strdup(t);	/* a typedef */
	lower = g_ascii_strdown(e->c->name, -1);
	return *m->path ? g_strdup_printf("%s_%s", lower, m->name)
			: g_strdup(lower);
}

static const char *fixed(const struct member *m)
{
	bool s = m->flags & MEMBER_SIGNED;

	switch (m->size) {
	case 1: return s ? "__s8" : "__u8";
	case 2: return s ? "__s16" : "__u16";
	case 4: return s ? "__s32" : "__u32";
	default: return s ? "__s64" : "__u64";
	}
}

static const char *emit_aggregate(struct emitter *e, int i64);

/* The i386 type of a scalar or array element: long and pointers narrowed. */
static char *compat_type(struct emitter *e, int i64, const struct member *n,
			 bool *converts)
{
	const struct member *m = at(e->l64, i64);

	*converts = false;
	if (m->flags & MEMBER_POINTER) {
		*converts = true;
		return g_strdup("__u32");
	}
	if (m->flags & MEMBER_LONG) {
		*converts = true;
		return g_strdup(n->flags & MEMBER_SIGNED ? "__s32" : "__u32");
	}
	if (m->flags & (MEMBER_STRUCT | MEMBER_UNION)) {
		const char *name = same_layout(e, i64) ? NULL
						       : emit_aggregate(e, i64);

		*converts = name != NULL;
		return g_strdup(name ? name : m->type);
	}
	if ((m->flags & MEMBER_SCALAR) && !(m->flags & MEMBER_FLOAT) &&
	    !(m->flags & MEMBER_CHAR))
		return g_strdup(fixed(n));
	return g_strdup(m->type);
}

/* Element type of an array member, as compat_type sees it. */
static char *elem_type(const char *type)
{
	const char *b = strchr(type, '[');

	return b ? g_strndup(type, b - type) : g_strdup(type);
}

/* One member's copy, either way. */
static void convert_member(struct emitter *e, GString *to, GString *from,
			   int i64, const char *ctype, bool converts)
{
	const struct member *m = at(e->l64, i64);
	const char *f = m->name;

	if (m->flags & MEMBER_ARRAY) {
		int elem = i64 + 1 < (int)e->l64->members->len &&
				   at(e->l64, i64 + 1)->parent == i64
			   ? i64 + 1 : -1;

		if (!converts) {
			g_string_append_printf(to, "\tmemcpy(dst->%s, src->%s, "
					       "sizeof(dst->%s));\n", f, f, f);
			g_string_append_printf(from, "\tmemcpy(dst->%s, src->%s, "
					       "sizeof(dst->%s));\n", f, f, f);
			return;
		}
		g_string_append_printf(to, "\tfor (size_t i = 0; i < %" PRIu64
				       "; i++)\n\t", m->count);
		g_string_append_printf(from, "\tfor (size_t i = 0; i < %" PRIu64
				       "; i++)\n\t", m->count);
		if (elem >= 0) {
			g_autofree char *tag = g_strdup(ctype + strlen("struct compat_"));

			g_string_append_printf(to, "\t%s_to_compat(&dst->%s[i], "
					       "&src->%s[i]);\n", tag, f, f);
			g_string_append_printf(from, "\t%s_from_compat(&dst->%s[i], "
					       "&src->%s[i]);\n", tag, f, f);
		} else if (m->flags & MEMBER_POINTER) {
			g_string_append_printf(to, "\tdst->%s[i] = (__u32)(uintptr_t)"
					       "src->%s[i];\n", f, f);
			g_string_append_printf(from, "\tdst->%s[i] = (__typeof__("
					       "dst->%s[i]))(uintptr_t)"
					       "cusemu_compat_ptr(src->%s[i]);\n",
					       f, f, f);
		} else {
			g_string_append_printf(to, "\tdst->%s[i] = (%s)src->%s[i];\n",
					       f, ctype, f);
			g_string_append_printf(from, "\tdst->%s[i] = src->%s[i];\n",
					       f, f);
		}
		return;
	}
	if (m->flags & MEMBER_POINTER) {
		g_string_append_printf(to, "\tdst->%s = (__u32)(uintptr_t)src->%s;\n",
				       f, f);
		g_string_append_printf(from, "\tdst->%s = (__typeof__(dst->%s))"
				       "(uintptr_t)cusemu_compat_ptr(src->%s);\n",
				       f, f, f);
	} else if (converts && (m->flags & (MEMBER_STRUCT | MEMBER_UNION))) {
		g_autofree char *tag = g_strdup(ctype + strlen("struct compat_"));

		g_string_append_printf(to, "\t%s_to_compat(&dst->%s, &src->%s);\n",
				       tag, f, f);
		g_string_append_printf(from, "\t%s_from_compat(&dst->%s, &src->%s);\n",
				       tag, f, f);
	} else if (m->flags & (MEMBER_STRUCT | MEMBER_UNION)) {
		g_string_append_printf(to, "\tmemcpy(&dst->%s, &src->%s, "
				       "sizeof(dst->%s));\n", f, f, f);
		g_string_append_printf(from, "\tmemcpy(&dst->%s, &src->%s, "
				       "sizeof(dst->%s));\n", f, f, f);
	} else {
		g_string_append_printf(to, "\tdst->%s = %s%s%ssrc->%s;\n", f,
				       converts ? "(" : "", converts ? ctype : "",
				       converts ? ")" : "", f);
		g_string_append_printf(from, "\tdst->%s = src->%s;\n", f, f);
	}
}

/*
 * Writes struct compat_TAG for the struct at i64 (after the compat structs
 * of its members), with its conversions; returns its name.
 */
static const char *emit_aggregate(struct emitter *e, int i64)
{
	const struct member *a = at(e->l64, i64);
	int i32 = index_of(e->l32, a->path);
	const struct member *b = at(e->l32, i32);
	g_autofree char *tag = tag_of(e, a);
	g_autoptr(GString) body = g_string_new(NULL);
	g_autoptr(GString) to = g_string_new(NULL);
	g_autoptr(GString) from = g_string_new(NULL);
	g_autoptr(GString) asserts = g_string_new(NULL);
	char *name = g_strdup_printf("struct compat_%s", tag);
	g_autofree char *guard = NULL;
	uint64_t end = 0;
	unsigned int pad = 0;

	if (g_hash_table_contains(e->done, name)) {
		const char *kept = g_hash_table_lookup(e->done, name);

		g_free(name);
		return kept;
	}
	g_hash_table_insert(e->done, name, name);
	if (a->flags & MEMBER_UNION) {
		g_ptr_array_add(e->problems, g_strdup_printf(
			"%s: %s needs a translation, and a union's cannot be "
			"generated (which member is live is the driver's to "
			"say)", e->c->name, a->type));
		return name;
	}
	for (guint i = i64 + 1; i < e->l64->members->len; i++) {
		const struct member *m = at(e->l64, (int)i);
		const struct member *n;
		g_autofree char *ct = NULL, *et = NULL;
		bool converts;

		if (m->parent != i64)
			continue;
		n = layout_find(e->l32, m->path);
		if (!n)
			continue;
		if (m->anonymous || (m->flags & MEMBER_BITFIELD)) {
			g_ptr_array_add(e->problems, g_strdup_printf(
				"%s: member %s of %s is %s; write its "
				"translation by hand", e->c->name, m->path,
				a->type, m->anonymous ? "anonymous"
						      : "a bitfield"));
			continue;
		}
		if (n->offset - b->offset > end)
			g_string_append_printf(body, "\t__u8 __pad%u[%" PRIu64
					       "];\n", pad++,
					       n->offset - b->offset - end);
		if (m->flags & MEMBER_ARRAY) {
			int elem = (int)i + 1 < (int)e->l64->members->len &&
					   at(e->l64, (int)i + 1)->parent == (int)i
				   ? (int)i + 1 : -1;

			if (elem >= 0)
				ct = compat_type(e, elem, layout_find(e->l32,
						 at(e->l64, elem)->path), &converts);
			else if (m->flags & (MEMBER_LONG | MEMBER_POINTER)) {
				converts = true;
				ct = g_strdup(m->flags & MEMBER_POINTER ||
						      !(n->flags & MEMBER_SIGNED)
						      ? "__u32" : "__s32");
			} else {
				converts = false;
				et = elem_type(m->type);
				ct = g_strdup(et);
			}
			g_string_append_printf(body, "\t%s %s[%" PRIu64 "];\n", ct,
					       m->name, m->count);
		} else {
			ct = compat_type(e, (int)i, n, &converts);
			g_string_append_printf(body, "\t%s %s;\n", ct, m->name);
		}
		g_string_append_printf(asserts, "_Static_assert(offsetof(%s, %s) "
				       "== %" PRIu64 ", \"%s.%s\");\n", name,
				       m->name, n->offset - b->offset, name,
				       m->name);
		convert_member(e, to, from, (int)i, ct, converts);
		end = n->offset - b->offset + n->size;
	}
	if (b->size > end)
		g_string_append_printf(body, "\t__u8 __pad%u[%" PRIu64 "];\n",
				       pad, b->size - end);
	/* Guarded one by one: two generated headers may both need a struct
	 * of a header they share (struct timeval) in one translation unit. */
	guard = g_ascii_strup(tag, -1);
	g_string_append_printf(e->decls,
		"\n/* %s as i386 lays it out: %" PRIu64 " bytes, aligned to %u. */\n"
		"#ifndef CUSEMU_COMPAT_STRUCT_%s\n#define CUSEMU_COMPAT_STRUCT_%s\n"
		"%s {\n%s} __attribute__((packed, aligned(%u)));\n"
		"_Static_assert(sizeof(%s) == %" PRIu64 ", \"%s\");\n%s"
		"#endif\n",
		a->type, b->size, b->align, guard, guard, name, body->str,
		b->align, name, b->size, name, asserts->str);
	g_string_append_printf(e->funcs,
		"\n#ifndef CUSEMU_COMPAT_CONVERT_%s\n"
		"#define CUSEMU_COMPAT_CONVERT_%s\n"
		"/* For an i386 caller: %s to the layout it reads. */\n"
		"static inline void %s_to_compat(%s *dst,\n\t\tconst %s *src)\n"
		"{\n\tmemset(dst, 0, sizeof(*dst));\n%s}\n"
		"\n/* From an i386 caller: what it wrote, as %s. */\n"
		"static inline void %s_from_compat(%s *dst,\n\t\tconst %s *src)\n"
		"{\n\tmemset(dst, 0, sizeof(*dst));\n%s}\n#endif\n",
		guard, guard, a->type, tag, name, a->type, to->str,
		a->type, tag, a->type, name, from->str);
	return name;
}

/*
 * The include guard, from the headers' names: CUSEMU_COMPAT_SENSORHUB_H
 * for sensorhub.h, CUSEMU_COMPAT_LINUX_RTC_H for linux/rtc.h. Headers made
 * from other headers can be included together; two made from the same
 * ones would define the same structs, and share the guard on purpose.
 */
static char *include_guard(char **headers)
{
	GString *g = g_string_new("CUSEMU_COMPAT");

	for (char **h = headers; *h; h++) {
		g_autofree char *name = g_file_test(*h, G_FILE_TEST_EXISTS)
						? g_path_get_basename(*h)
						: g_strdup(*h);

		if (g_str_has_suffix(name, ".h"))
			name[strlen(name) - 2] = '\0';
		g_string_append_c(g, '_');
		for (const char *c = name; *c; c++)
			g_string_append_c(g, g_ascii_isalnum(*c)
						     ? g_ascii_toupper(*c) : '_');
	}
	g_string_append(g, "_H");
	return g_string_free(g, FALSE);
}

void emit_compat(GString *out, GPtrArray *commands, char **headers)
{
	g_autofree char *guard = include_guard(headers);
	g_autoptr(GString) decls = g_string_new(NULL);
	g_autoptr(GString) funcs = g_string_new(NULL);
	g_autoptr(GString) macros = g_string_new(NULL);
	g_autoptr(GHashTable) done = g_hash_table_new_full(g_str_hash,
							   g_str_equal, g_free,
							   NULL);
	g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < commands->len; i++) {
		const struct command *c = commands->pdata[i];
		struct emitter e = { decls, funcs, done, &c->layout[ABI_X86_64],
				     &c->layout[ABI_I386], c, problems };
		const struct member *p;
		g_autofree char *ct = NULL;
		bool named = false, converts;

		if (c->compatible || c->row_only || c->compat_of ||
		    !c->layout[ABI_X86_64].present)
			continue;
		for (guint j = 0; j < commands->len; j++)
			named = named || ((struct command *)commands->pdata[j])
						 ->compat_of == c;
		p = at(e.l64, 0);
		if (p->flags & MEMBER_ARRAY) {
			g_ptr_array_add(problems, g_strdup_printf(
				"%s: an array payload (%s); write its translation "
				"by hand", c->name, p->type));
			continue;
		}
		/* sizeof(T) as data_type: only the number differs, by the
		 * size of size_t. */
		ct = c->sizeof_arg ? g_strdup("__u32")
				   : compat_type(&e, 0, at(e.l32, 0), &converts);
		if (named || c->dir == DIR_UNKNOWN || !c->type_arg)
			g_string_append_printf(macros, "/* %s: 0x%08x from i386 "
					       "(%s) */\n", c->name,
					       c->number[ABI_I386], ct);
		else
			g_string_append_printf(macros,
				"#define %s32 %s(%s, %s, %s)\n"
				"_Static_assert(%s32 == 0x%08xu, \"%s32\");\n",
				c->name, c->macro, c->type_arg, c->nr_arg, ct,
				c->name, c->number[ABI_I386], c->name);
	}

	g_string_append(out, "/*\n * Generated by cusemu-abicheck --emit-compat from");
	for (char **h = headers; *h; h++)
		g_string_append_printf(out, " %s", *h);
	g_string_append(out,
		":\n * the i386 layouts of the commands that need a translation,"
		"\n * for a model's compat rows.\n */\n");
	g_string_append_printf(out, "#ifndef %s\n#define %s\n\n", guard, guard);
	g_string_append(out,
		"#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n"
		"#include <linux/types.h>\n\n#include <cusemu/uaccess.h>\n\n");
	for (char **h = headers; *h; h++) {
		if (g_file_test(*h, G_FILE_TEST_EXISTS)) {
			g_autofree char *base = g_path_get_basename(*h);

			g_string_append_printf(out, "#include \"%s\"\n", base);
		} else {
			g_string_append_printf(out, "#include <%s>\n", *h);
		}
	}
	for (guint i = 0; i < problems->len; i++)
		g_string_append_printf(out, "\n#warning \"%s\"\n",
				       (char *)problems->pdata[i]);
	g_string_append(out, decls->str);
	if (macros->len)
		g_string_append_printf(out, "\n/* The i386 numbers. */\n%s",
				       macros->str);
	g_string_append(out, funcs->str);
	g_string_append(out, "\n#endif\n");
}
