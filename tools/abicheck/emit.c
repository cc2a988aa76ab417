/* SPDX-License-Identifier: MIT */
/*
 * --emit-compat: for each command that needs a translation, the i386 view
 * of its payload as a packed struct of fixed-width types, each member at
 * the offset i386 gives it, with compile-time checks of those offsets, and
 * the conversions to and from the native struct that a model's compat row
 * calls. Pointers travel as __u32 and come back through cusemu_compat_ptr.
 * A pointer that --pointee names, with its count, gets the fetch step and
 * the copies its handler makes, for callers of both ABIs.
 */
#include <string.h>

#include "abicheck.h"

struct emitter {
	GString *decls, *funcs;
	/* Compat struct names written (value NULL), and each written
	 * layout, "NAME@SIZE.ALIGN", to the name it was written under. */
	GHashTable *done;
	const struct layout *l64, *l32;
	const struct command *c;
	GPtrArray *problems;		/* what could not be generated */
	GString *steps;			/* fetch steps, after conversions */
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

/* Whether C can name the type as the debug information spells it. */
static bool nameable(const char *type)
{
	return !strchr(type, '{');
}

/* struct sensorhub_info -> sensorhub_info; a struct or union without a
 * name by where it is: snd_ctl_elem_value_value for the union value of
 * struct snd_ctl_elem_value. */
static char *tag_of(struct emitter *e, const struct member *m)
{
	const char *t = m->type;
	const struct member *root = at(e->l64, 0);
	g_autofree char *prefix = NULL;
	GString *s;

	if (g_str_has_prefix(t, "struct ") && nameable(t))
		return g_strdup(t + strlen("struct "));
	if (g_str_has_prefix(t, "union ") && nameable(t))
		return g_strdup(t + strlen("union "));
	if (!strchr(t, ' ') && nameable(t) && !strchr(t, '['))
		return g_strdup(t);	/* a typedef */
	prefix = root != m && nameable(root->type) ? tag_of(e, root)
		: g_ascii_strdown(e->c->name, -1);
	if (!*m->path)
		return g_steal_pointer(&prefix);
	s = g_string_new(prefix);
	g_string_append_c(s, '_');
	for (const char *c = m->path; *c; c++)
		if (g_ascii_isalnum(*c) || *c == '_')
			g_string_append_c(s, *c);
		else if (*c == '.')
			g_string_append_c(s, '_');
	return g_string_free(s, FALSE);
}

/* The native type as C can name it: a struct without a name through the
 * payload's member that has it. */
static char *native_type(struct emitter *e, const struct member *m)
{
	const struct member *root = at(e->l64, 0);
	g_autofree char *path = NULL;

	if (nameable(m->type) || m == root || !nameable(root->type))
		return g_strdup(m->type);
	path = g_strdup(m->path);
	for (char *b; (b = strstr(path, "[]"));) {
		g_autofree char *rest = g_strdup(b + 2);
		char *old = path;

		*b = '\0';
		path = g_strconcat(old, "[0]", rest, NULL);
		g_free(old);
	}
	return g_strdup_printf("__typeof__(((%s *)0)->%s)", root->type, path);
}

/* A fixed-width integer of the i386 size. */
static const char *fixed_of(uint64_t size, bool s)
{
	switch (size) {
	case 1: return s ? "__s8" : "__u8";
	case 2: return s ? "__s16" : "__u16";
	case 4: return s ? "__s32" : "__u32";
	default: return s ? "__s64" : "__u64";
	}
}

static const char *emit_aggregate(struct emitter *e, int i64);

/* Element type of an array member: "char[16]" -> "char". */
static char *elem_type(const char *type)
{
	const char *b = strchr(type, '[');

	return b ? g_strndup(type, b - type) : g_strdup(type);
}

/* The i386 type of a scalar (or of an array's scalar elements, size being
 * the element's): long and pointers narrowed, integers and enums of fixed
 * width; *converts when a plain copy will not do. */
static char *scalar_type(const struct member *m, const struct member *n,
			 uint64_t size, bool *converts)
{
	*converts = m->flags & (MEMBER_POINTER | MEMBER_LONG);
	if (m->flags & MEMBER_POINTER)
		return g_strdup("__u32");
	if ((m->flags & (MEMBER_SCALAR | MEMBER_ENUM | MEMBER_LONG)) &&
	    !(m->flags & MEMBER_FLOAT))
		return g_strdup(fixed_of(size, n->flags & MEMBER_SIGNED));
	return elem_type(m->type);
}

/* The i386 type of a member that is no array. */
static char *compat_type(struct emitter *e, int i64, const struct member *n,
			 bool *converts)
{
	const struct member *m = at(e->l64, i64);

	if (m->flags & (MEMBER_STRUCT | MEMBER_UNION)) {
		const char *name = same_layout(e, i64) && nameable(m->type)
					   ? NULL : emit_aggregate(e, i64);

		*converts = name != NULL;
		return g_strdup(name ? name : m->type);
	}
	return scalar_type(m, n, n->size, converts);
}

/* "struct compat_foo" -> "foo": the conversions' prefix. */
static const char *tag_in(const char *ctype)
{
	return strstr(ctype, "compat_") + strlen("compat_");
}

/*
 * A long narrowed to i386's 32 bits: the conversion to i386 fails with
 * -EOVERFLOW where the value does not fit, as the kernel's compat code
 * does (put_compat_* and the like), instead of cutting it. what is the
 * C of the native value, indent the statement's.
 */
static void overflow_check(GString *to, const struct member *m,
			   const char *what, const char *indent)
{
	if (!(m->flags & MEMBER_LONG) || (m->flags & MEMBER_POINTER))
		return;
	g_string_append_printf(to, "%sif (!cusemu_compat_fits_%s(%s))\n"
			       "%s\treturn -EOVERFLOW;\n", indent,
			       m->flags & MEMBER_SIGNED ? "s32" : "u32", what,
			       indent);
}

static void both(GString *to, GString *from, const char *format, ...)
	G_GNUC_PRINTF(3, 4);

/* The same line in both conversions (dst and src swap their roles). */
static void both(GString *to, GString *from, const char *format, ...)
{
	va_list ap;

	if (!to)
		return;
	va_start(ap, format);
	g_string_append_vprintf(to, format, ap);
	va_end(ap);
	va_start(ap, format);
	g_string_append_vprintf(from, format, ap);
	va_end(ap);
}

/* The element of an array member, when it has members of its own. */
static int elem_of(struct emitter *e, int i64)
{
	return i64 + 1 < (int)e->l64->members->len &&
			       at(e->l64, i64 + 1)->parent == i64
		       ? i64 + 1 : -1;
}

/* A flexible array: no size in either ABI (char[0] on x86_64 may be
 * char[4] on i386, as __pad_before_uframe is). */
static bool flexible(struct emitter *e, const struct member *m)
{
	const struct member *n = layout_find(e->l32, m->path);

	return (m->flags & MEMBER_ARRAY) && m->size == 0 && (!n || !n->size);
}

/* One array member's copy, either way; ctype is its i386 element type. */
static void convert_array(struct emitter *e, GString *to, GString *from,
			  int i64, const char *ctype, bool converts)
{
	const struct member *m = at(e->l64, i64);
	const char *f = m->name;

	if (flexible(e, m)) {
		both(to, from, "\t/* %s[]: the elements that follow are the "
		     "caller's to convert%s%s%s. */\n", f,
		     converts ? " (" : "", converts ? tag_in(ctype) : "",
		     converts ? "_array_*_compat)" : "");
		return;
	}
	/* The ABIs may differ in the count (reserved[52 - 2 *
	 * sizeof(struct timespec)]): the common part is copied. */
	if (!converts) {
		both(to, from, "\tmemcpy(dst->%s, src->%s, CUSEMU_COMPAT_MIN("
		     "sizeof(dst->%s), sizeof(src->%s)));\n", f, f, f, f);
		return;
	}
	if (strchr(strchr(m->type, '[') + 1, '[')) {
		g_ptr_array_add(e->problems, g_strdup_printf(
			"%s: %s is an array of several dimensions whose "
			"elements translate; write its translation by hand",
			e->c->name, m->path));
		return;
	}
	both(to, from, "\tfor (size_t i = 0; i < CUSEMU_COMPAT_MIN("
	     "CUSEMU_COMPAT_COUNT(dst->%s), CUSEMU_COMPAT_COUNT(src->%s)); "
	     "i++)%s\n\t", f, f, (m->flags & MEMBER_LONG) ? " {" : "");
	if (elem_of(e, i64) >= 0) {
		/* The native element by offsetof: in a header's own packed
		 * struct (dvb/frontend.h's dtv_property) its address is a
		 * warning (-Waddress-of-packed-member), even through void *. */
		g_string_append_printf(to, "\tif (%s_to_compat(&dst->%s[i], "
				       "(const void *)((const char *)src + "
				       "offsetof(__typeof__(*src), %s[i]))))\n"
				       "\t\t\treturn -EOVERFLOW;\n",
				       tag_in(ctype), f, f);
		g_string_append_printf(from, "\t%s_from_compat((void *)((char *)"
				       "dst + offsetof(__typeof__(*dst), %s[i])), "
				       "&src->%s[i]);\n", tag_in(ctype), f, f);
	} else if (m->flags & MEMBER_POINTER) {
		g_string_append_printf(to, "\tdst->%s[i] = (__u32)(uintptr_t)"
				       "src->%s[i];\n", f, f);
		g_string_append_printf(from, "\tdst->%s[i] = (__typeof__("
				       "dst->%s[i]))(uintptr_t)"
				       "cusemu_compat_ptr(src->%s[i]);\n",
				       f, f, f);
	} else if (m->flags & MEMBER_LONG) {
		g_autofree char *what = g_strdup_printf("src->%s[i]", f);

		overflow_check(to, m, what, "\t\t");
		g_string_append_printf(to, "\t\tdst->%s[i] = (%s)src->%s[i];\n"
				       "\t}\n", f, ctype, f);
		g_string_append_printf(from, "\tdst->%s[i] = src->%s[i];\n"
				       "\t}\n", f, f);
	} else {
		g_string_append_printf(to, "\tdst->%s[i] = (%s)src->%s[i];\n",
				       f, ctype, f);
		g_string_append_printf(from, "\tdst->%s[i] = src->%s[i];\n",
				       f, f);
	}
}

/* One member's copy, either way, that is no array and not anonymous. */
static void convert_member(struct emitter *e, GString *to, GString *from,
			   int i64, const char *ctype, bool converts)
{
	const struct member *m = at(e->l64, i64);
	const char *f = m->name;

	if (m->flags & MEMBER_POINTER) {
		g_string_append_printf(to, "\tdst->%s = (__u32)(uintptr_t)src->%s;\n",
				       f, f);
		g_string_append_printf(from, "\tdst->%s = (__typeof__(dst->%s))"
				       "(uintptr_t)cusemu_compat_ptr(src->%s);\n",
				       f, f, f);
	} else if (converts && (m->flags & (MEMBER_STRUCT | MEMBER_UNION))) {
		if (m->flags & MEMBER_UNION)
			both(to, from, "\t/* A union: its bytes; %s's comment "
			     "says which members differ. */\n", ctype);
		/* The native member by offsetof, as convert_array says. */
		g_string_append_printf(to, "\tif (%s_to_compat(&dst->%s, "
				       "(const void *)((const char *)src + "
				       "offsetof(__typeof__(*src), %s))))\n"
				       "\t\treturn -EOVERFLOW;\n",
				       tag_in(ctype), f, f);
		g_string_append_printf(from, "\t%s_from_compat((void *)((char *)"
				       "dst + offsetof(__typeof__(*dst), %s)), "
				       "&src->%s);\n", tag_in(ctype), f, f);
	} else if (m->flags & (MEMBER_STRUCT | MEMBER_UNION)) {
		both(to, from, "\tmemcpy(&dst->%s, &src->%s, sizeof(dst->%s));\n",
		     f, f, f);
	} else {
		g_autofree char *what = g_strdup_printf("src->%s", f);

		overflow_check(to, m, what, "\t");
		g_string_append_printf(to, "\tdst->%s = %s%s%ssrc->%s;\n", f,
				       converts ? "(" : "", converts ? ctype : "",
				       converts ? ")" : "", f);
		g_string_append_printf(from, "\tdst->%s = src->%s;\n", f, f);
	}
}

/* The first named member inside an anonymous one, for offsetof. */
static const struct member *first_named(struct emitter *e, int i64)
{
	for (guint i = i64 + 1; i < e->l64->members->len; i++) {
		const struct member *m = at(e->l64, (int)i);

		if (m->parent < i64)
			break;
		if (!m->anonymous && *m->name && !(m->flags & MEMBER_BITFIELD))
			return m;
	}
	return NULL;
}

static int elem_of(struct emitter *e, int i64);

/* The members of a union whose i386 layout differs, one a line after
 * prefix: what a copy of its bytes gets wrong when one of them is the
 * live member, and what converts it. */
static void union_differs(struct emitter *e, int i64, GString *s,
			  const char *prefix)
{
	for (guint i = i64 + 1; i < e->l64->members->len; i++) {
		const struct member *m = at(e->l64, (int)i);
		g_autofree char *tag = NULL;

		if (m->parent != i64)
			continue;
		/* A union in a union: its own members are what differs. */
		if (m->anonymous || ((m->flags & MEMBER_UNION) &&
				     !(m->flags & MEMBER_ARRAY))) {
			union_differs(e, (int)i, s, prefix);
			continue;
		}
		if (same_layout(e, (int)i))
			continue;
		g_string_append_printf(s, "\n%s- %s (%s)", prefix, m->path,
				       m->type);
		if (m->flags & MEMBER_POINTER)
			g_string_append(s, ": pointers, 4 bytes on i386");
		else if (m->flags & MEMBER_LONG)
			g_string_append(s, ": long, 4 bytes on i386");
		else if (m->flags & (MEMBER_STRUCT | MEMBER_UNION)) {
			int elem = m->flags & MEMBER_ARRAY ? elem_of(e, (int)i)
							   : (int)i;

			tag = tag_of(e, at(e->l64, elem >= 0 ? elem : (int)i));
			g_string_append_printf(s, ": %s_%sfrom_compat() and "
					       "_to_compat()", tag,
					       m->flags & MEMBER_ARRAY ? "array_"
								       : "");
		}
	}
}

/* What one struct or union body is made of, as it is written. */
struct body {
	GString *decl, *to, *from, *asserts;
	const char *name;	/* the compat type's name, for offsetof */
	uint64_t base32;	/* the named aggregate's i386 offset */
	unsigned int *pad;	/* padding members so far */
	const char *indent;
};

static void emit_body(struct emitter *e, int i64, struct body *b);

/* An anonymous struct or union, written in place. */
static void emit_anonymous(struct emitter *e, int i, struct body *b)
{
	const struct member *m = at(e->l64, i);
	const struct member *n = layout_find(e->l32, m->path);
	bool is_union = m->flags & MEMBER_UNION;
	g_autofree char *indent = g_strconcat(b->indent, "\t", NULL);
	struct body inner = *b;
	const struct member *first = first_named(e, i);

	inner.indent = indent;
	if (is_union) {
		g_autoptr(GString) differs = g_string_new(NULL);

		union_differs(e, i, differs, "\t *   ");
		inner.to = inner.from = NULL;
		if (b->to && first)
			both(b->to, b->from, "\t/*\n\t * An anonymous union: its "
			     "bytes are copied, whichever member is\n\t * live.%s"
			     "%s\n\t */\n"
			     "\tmemcpy((char *)dst + offsetof(__typeof__(*dst), "
			     "%s),\n\t       (const char *)src + offsetof("
			     "__typeof__(*src), %s), %" PRIu64 ");\n",
			     differs->len ? " Members that i386 lays out "
					    "otherwise, to convert\n\t * by hand "
					    "when live:" : "", differs->str,
			     first->name, first->name, MIN(m->size, n->size));
	}
	g_string_append_printf(b->decl, "%s%s {\n", b->indent,
			       is_union ? "union" : "struct");
	emit_body(e, i, &inner);
	/* Its i386 alignment: packed alone, a member of an aligned compat
	 * type inside would be misaligned (-Wpacked-not-aligned). */
	g_string_append_printf(b->decl, "%s} __attribute__((packed, "
			       "aligned(%u)));\n", b->indent, n->align);
}

/* A member that is an array: its declaration and its copies. */
static void emit_array(struct emitter *e, int i, const struct member *n,
		       struct body *b, bool last)
{
	const struct member *m = at(e->l64, i);
	int elem = elem_of(e, i);
	g_autofree char *ct = NULL;
	bool converts;

	if (elem >= 0)
		ct = compat_type(e, elem, layout_find(e->l32,
				 at(e->l64, elem)->path), &converts);
	else
		ct = scalar_type(m, n, n->elem_size ? n->elem_size : 1,
				 &converts);
	if (flexible(e, m))
		g_string_append_printf(b->decl, "%s%s %s[%s];\n", b->indent, ct,
				       m->name, last ? "" : "0");
	else
		g_string_append_printf(b->decl, "%s%s %s[%" PRIu64 "];\n",
				       b->indent, ct, m->name, n->count);
	if (b->to)
		convert_array(e, b->to, b->from, i, ct, converts);
}

/* A pointer whose pointee lays out differently: a note where it is. */
static void note_pointee(struct emitter *e, int i, struct body *b);

/* Padding from bit end to bit start: the bits to a whole byte, then
 * bytes. The names are the generator's own; a header's may be __pad1. */
static void pad_bits(struct body *b, uint64_t end, uint64_t start)
{
	if (end % 8 && start - end >= 8 - end % 8) {
		g_string_append_printf(b->decl, "%s__u8 : %u;\n", b->indent,
				       (unsigned int)(8 - end % 8));
		end += 8 - end % 8;
	}
	if (start - end >= 8)
		g_string_append_printf(b->decl, "%s__u8 __cusemu_pad%u[%" PRIu64
				       "];\n", b->indent, (*b->pad)++,
				       (start - end) / 8);
	if ((start - end) % 8)
		g_string_append_printf(b->decl, "%s__u8 : %u;\n", b->indent,
				       (unsigned int)((start - end) % 8));
}

/* The members of the aggregate at i64, each at its i386 offset (in bits:
 * bitfields). */
static void emit_body(struct emitter *e, int i64, struct body *b)
{
	const struct member *a = at(e->l64, i64);
	const struct member *an = layout_find(e->l32, a->path);
	bool is_union = a->flags & MEMBER_UNION;
	uint64_t end = 0;	/* bits */
	int last = -1;

	for (guint i = i64 + 1; i < e->l64->members->len; i++)
		if (at(e->l64, (int)i)->parent == i64)
			last = (int)i;
	for (guint i = i64 + 1; i < e->l64->members->len; i++) {
		const struct member *m = at(e->l64, (int)i);
		const struct member *n;
		uint64_t off, start;

		if (m->parent != i64)
			continue;
		n = layout_find(e->l32, m->path);
		if (!n)
			continue;
		off = n->offset - an->offset;
		start = off * 8 + n->bit_offset;
		if (!is_union && start > end)
			pad_bits(b, end, start);
		if (m->flags & MEMBER_BITFIELD) {
			/* The same bits: a packed struct lays bitfields one
			 * after the other, from the padding before. */
			g_string_append_printf(b->decl, "%s%s %s : %u;\n", b->indent,
					       fixed_of(n->size, n->flags & MEMBER_SIGNED),
					       m->name, n->bit_size);
			if (b->to)
				both(b->to, b->from, "\tdst->%s = src->%s;\n",
				     m->name, m->name);
		} else if (m->anonymous) {
			emit_anonymous(e, (int)i, b);
		} else if (m->flags & MEMBER_ARRAY) {
			emit_array(e, (int)i, n, b,
				   (int)i == last && !b->indent[1]);
		} else {
			bool converts;
			g_autofree char *ct = compat_type(e, (int)i, n, &converts);

			g_string_append_printf(b->decl, "%s%s %s;\n", b->indent,
					       ct, m->name);
			if (b->to)
				convert_member(e, b->to, b->from, (int)i, ct,
					       converts);
		}
		note_pointee(e, (int)i, b);
		/* offsetof takes no bitfield; the members after it and the
		 * size check where it ends. */
		if (!m->anonymous && !(m->flags & MEMBER_BITFIELD))
			g_string_append_printf(b->asserts, "_Static_assert("
					       "offsetof(%s, %s) == %" PRIu64
					       ", \"%s.%s\");\n", b->name,
					       m->name, n->offset - b->base32,
					       b->name, m->name);
		end = MAX(end, start + (m->flags & MEMBER_BITFIELD
					? n->bit_size : n->size * 8));
	}
	if (an->size * 8 > end)
		pad_bits(b, end, an->size * 8);
}

/* Where the pointee of the member at i has an i386 layout of its own,
 * its compat struct and array conversions; their name, or NULL. A
 * buffer of scalars (--pointee TAG.MEMBER=long[COUNT]) has no struct:
 * its elements convert one by one. */
static const char *emit_pointee(struct emitter *e, int i)
{
	const struct member *m = at(e->l64, i);
	const struct member *n = layout_find(e->l32, m->path);
	struct layout p64, p32;
	struct emitter sub = *e;

	if (!m->pointee || !n || !n->pointee ||
	    !(((const struct member *)m->pointee->pdata[0])->flags &
	      (MEMBER_STRUCT | MEMBER_UNION)))
		return NULL;
	p64 = (struct layout){ true, m->pointee };
	p32 = (struct layout){ true, n->pointee };
	sub.l64 = &p64;
	sub.l32 = &p32;
	if (same_layout(&sub, 0) && nameable(at(&p64, 0)->type))
		return NULL;
	return emit_aggregate(&sub, 0);
}

static void note_pointee(struct emitter *e, int i, struct body *b)
{
	const char *name = emit_pointee(e, i);

	if (name)
		g_string_append_printf(b->decl, "%s/* %s points to i386's "
				       "%s: %s_array_from_compat() */\n",
				       b->indent, at(e->l64, i)->name, name,
				       tag_in(name));
}

static void emit_functions(struct emitter *e, const struct member *a,
			   const char *tag, const char *name,
			   const GString *to, const GString *from,
			   const char *guard)
{
	g_autofree char *native = native_type(e, a);
	const char *what = a->flags & MEMBER_UNION
		? "\t/* A union: its bytes are copied, whichever member is "
		  "live. */\n" : "";

	g_string_append_printf(e->funcs,
		"\n#ifndef CUSEMU_COMPAT_CONVERT_%s\n"
		"#define CUSEMU_COMPAT_CONVERT_%s\n"
		"/* For an i386 caller: %s to the layout it reads; 0, or\n"
		" * -EOVERFLOW where a long does not fit i386's. */\n"
		"static inline int %s_to_compat(%s *dst,\n\t\tconst %s *src)\n"
		"{\n\tmemset(dst, 0, sizeof(*dst));\n%s%s\treturn 0;\n}\n"
		"\n/* From an i386 caller: what it wrote, as %s. */\n"
		"static inline void %s_from_compat(%s *dst,\n\t\tconst %s *src)\n"
		"{\n\tmemset(dst, 0, sizeof(*dst));\n%s%s}\n"
		"\n/* n of them, as an array that a pointer points to. */\n"
		"static inline int %s_array_to_compat(%s *dst,\n"
		"\t\tconst %s *src, size_t n)\n{\n"
		"\tfor (size_t i = 0; i < n; i++)\n"
		"\t\tif (%s_to_compat(&dst[i], &src[i]))\n"
		"\t\t\treturn -EOVERFLOW;\n\treturn 0;\n}\n"
		"\nstatic inline void %s_array_from_compat(%s *dst,\n"
		"\t\tconst %s *src, size_t n)\n{\n"
		"\tfor (size_t i = 0; i < n; i++)\n"
		"\t\t%s_from_compat(&dst[i], &src[i]);\n}\n#endif\n",
		guard, guard, a->type, tag, name, native, what,
		to->len ? to->str : "\t(void)src;\n",
		a->type, tag, native, name, what,
		from->len ? from->str : "\t(void)src;\n",
		tag, name, native, tag, tag, native, name, tag);
}

/*
 * Writes the compat struct or union for the aggregate at i64 (after the
 * compat types of its members), with its conversions; returns its name.
 */
static const char *emit_aggregate(struct emitter *e, int i64)
{
	const struct member *a = at(e->l64, i64);
	const struct member *an = layout_find(e->l32, a->path);
	bool is_union = a->flags & MEMBER_UNION;
	g_autofree char *tag = tag_of(e, a);
	g_autofree char *key = NULL;
	g_autoptr(GString) decl = g_string_new(NULL);
	g_autoptr(GString) to = g_string_new(NULL);
	g_autoptr(GString) from = g_string_new(NULL);
	g_autoptr(GString) asserts = g_string_new(NULL);
	g_autoptr(GString) differs = g_string_new(NULL);
	g_autofree char *what = NULL;
	char *name = g_strdup_printf("%s compat_%s",
				     is_union ? "union" : "struct", tag);
	g_autofree char *guard = NULL;
	unsigned int pad = 0;
	struct body b = { decl, to, from, asserts, NULL, an->offset, &pad,
			  "\t" };

	key = g_strdup_printf("%s@%" PRIu64 ".%u", name, an->size, an->align);
	if (g_hash_table_contains(e->done, key)) {
		g_free(name);
		return g_hash_table_lookup(e->done, key);
	}
	/* One tag that i386 lays out two ways in one run (struct timespec
	 * where each ABI's preprocessor picks a payload under _TIME_BITS=64):
	 * the second gets a name of its own, with its size. */
	if (g_hash_table_contains(e->done, name)) {
		char *sized = g_strdup_printf("%s_%" PRIu64, tag, an->size);

		g_free(tag);
		tag = sized;
		g_free(name);
		name = g_strdup_printf("%s compat_%s",
				       is_union ? "union" : "struct", tag);
	}
	b.name = name;
	g_hash_table_insert(e->done, g_strdup(name), NULL);
	g_hash_table_insert(e->done, g_steal_pointer(&key), name);
	if (is_union) {
		/* Which member is live is the driver's to say. */
		b.to = b.from = NULL;
		union_differs(e, i64, differs, " *   ");
		both(to, from, "\tmemcpy(dst, src, CUSEMU_COMPAT_MIN(sizeof(*dst), "
		     "sizeof(*src)));\n");
	}
	emit_body(e, i64, &b);
	/* Guarded one by one: two generated headers may both need a struct
	 * of a header they share (struct timeval) in one translation unit. */
	guard = g_ascii_strup(tag, -1);
	/* A struct without a name, by where it is. */
	what = nameable(a->type) || !*a->path ? g_strdup(a->type)
		: g_strdup_printf("%s %s of %s", is_union ? "The union"
							   : "The struct",
				  a->path, at(e->l64, 0)->type);
	g_string_append_printf(e->decls,
		"\n/*\n * %s as i386 lays it out: %" PRIu64 " bytes, aligned "
		"to %u.%s%s%s\n */\n"
		"#ifndef CUSEMU_COMPAT_STRUCT_%s\n#define CUSEMU_COMPAT_STRUCT_%s\n"
		"%s {\n%s} __attribute__((packed, aligned(%u)));\n"
		"_Static_assert(sizeof(%s) == %" PRIu64 ", \"%s\");\n%s"
		"#endif\n",
		what, an->size, an->align,
		is_union ? "\n * A union: the conversions copy its bytes, as the "
			   "live member is\n * the driver's to know." : "",
		differs->len ? "\n * Members that i386 lays out otherwise, to "
			       "convert by hand when live:" : "",
		differs->str,
		guard, guard, name, decl->str, an->align, name, an->size, name,
		asserts->str);
	emit_functions(e, a, tag, name, to, from, guard);
	return name;
}

/* ---- Fetch steps: a pointer that --pointee names, and its count */

/* A member that --pointee names: the buffer a fetch step names. */
struct buffer {
	const struct member *m;		/* the pointer, or the __u64 */
	const struct member *count;	/* how many; NULL: one */
	const char *elem;		/* the native element's type */
	/* i386's element where it differs: a compat struct, or the
	 * fixed-width type of a long (narrow); NULL when alike. */
	const char *celem;
	bool narrow;
};

#define STEP_BUFFERS 8

/* The functions of one command, prefixed with its name in lower case. */
struct step {
	struct emitter *e;
	GString *s;
	const char *name;		/* BUFS_READ */
	char *p;			/* bufs_read */
	char *native;			/* struct bufs_read */
	char *compat;			/* its compat struct, or NULL */
	bool back;			/* the payload goes back */
	bool counted;			/* a buffer has a count: max */
	struct buffer b[STEP_BUFFERS];
	unsigned int nb;
};

static void comment(GString *s, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* A comment of prose, its words filled to 78 columns: on one line when
 * it fits. "\n\n" in it starts a paragraph, and a line that starts with
 * a tab is taken as it is (code). */
static void comment(GString *s, const char *format, ...)
{
	va_list ap;
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	GString *line = g_string_new(NULL);

	va_start(ap, format);
	text = g_strdup_vprintf(format, ap);
	va_end(ap);
	if (!strchr(text, '\n') && strlen(text) + 6 <= 78) {
		g_string_append_printf(s, "\n/* %s */\n", text);
		g_string_free(line, TRUE);
		return;
	}
	g_string_append(s, "\n/*\n");
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_auto(GStrv) words = NULL;

		if (**l == '\t' || !**l) {
			g_string_append_printf(s, " *%s\n", *l);
			continue;
		}
		words = g_strsplit(*l, " ", -1);
		g_string_truncate(line, 0);
		for (char **w = words; *w; w++) {
			if (line->len && line->len + 1 + strlen(*w) > 74) {
				g_string_append_printf(s, " * %s\n", line->str);
				g_string_truncate(line, 0);
			}
			if (line->len)
				g_string_append_c(line, ' ');
			g_string_append(line, *w);
		}
		if (line->len)
			g_string_append_printf(s, " * %s\n", line->str);
	}
	g_string_append(s, " */\n");
	g_string_free(line, TRUE);
}

/* An integer, as a count is. */
static bool integer(const struct member *m)
{
	return (m->flags & (MEMBER_SCALAR | MEMBER_ENUM | MEMBER_LONG)) &&
	       !(m->flags & (MEMBER_FLOAT | MEMBER_ARRAY | MEMBER_POINTER));
}

/* The buffer that the member at i points to; NULL, or why none. */
static const char *buffer_of(struct emitter *e, int i, struct buffer *b)
{
	const struct member *m = at(e->l64, i);
	const struct member *n = layout_find(e->l32, m->path);
	const struct member *p = m->pointee->pdata[0];
	const struct member *q = n && n->pointee ? n->pointee->pdata[0] : NULL;

	*b = (struct buffer){ .m = m, .elem = p->type };
	if (!q || m->parent != 0)
		return "it is inside a struct or union of the payload";
	if (m->flags & MEMBER_ARRAY)
		return "it is an array";
	if (!(m->flags & MEMBER_POINTER) && (!integer(m) || m->size != 8))
		return "it holds no pointer (a pointer, or an integer of 64 "
		       "bits)";
	if (!nameable(p->type) || !p->size || !q->size)
		return "what it points to has no name or no size";
	if (m->pointee_count) {
		b->count = at(e->l64, m->pointee_count);
		if (!integer(b->count) || (b->count->flags & MEMBER_BITFIELD))
			return "its count is no integer member";
	}
	if (p->flags & (MEMBER_STRUCT | MEMBER_UNION)) {
		b->celem = emit_pointee(e, i);
	} else if (p->flags & MEMBER_LONG) {
		b->celem = fixed_of(q->size, q->flags & MEMBER_SIGNED);
		b->narrow = true;
	} else if (p->size != q->size) {
		return "its elements are scalars of another size on i386";
	}
	return NULL;
}

/* The address a buffer's member holds, in the native struct src. */
static char *buffer_addr(const struct buffer *b, const char *src)
{
	return g_strdup_printf("(cusemu_uptr_t)%s%s->%s",
			       b->m->flags & MEMBER_POINTER ? "(uintptr_t)" : "",
			       src, b->m->name);
}

/* Who names the command's i386 number in a compat table. */
static char *compat_row(GPtrArray *commands, const struct command *c)
{
	for (guint i = 0; i < commands->len; i++) {
		const struct command *o = commands->pdata[i];

		if (o->compat_of == c ||
		    (g_str_has_prefix(o->name, c->name) &&
		     !strcmp(o->name + strlen(c->name), "32")))
			return g_strdup(o->name);
	}
	if (c->number[ABI_X86_64] == c->number[ABI_I386])
		return g_strdup(c->name);
	/* The macro emit_compat writes, where it writes one. */
	if (c->dir != DIR_UNKNOWN && c->type_arg)
		return g_strconcat(c->name, "32", NULL);
	return g_strdup_printf("0x%08x", c->number[ABI_I386]);
}

/* The handler of the usage comment, from the payload on. */
static char *usage_handler(const struct step *st)
{
	const struct buffer *b = &st->b[0];
	const char *cnt = b->count ? b->count->name : NULL;
	const char *var = cnt ? "buf" : "one";

	if (st->back)
		return g_strdup_printf(
			"\t\tif (err)\n\t\t\treturn err;\n"
			"\t\t... the driver's work, into %s%s%s ...\n"
			"\t\terr = %s_%s_to_user(&p, %s%s);\n"
			"\t\treturn err ? err : %s_to_user(arg, &p);\n",
			var, cnt ? ": n elements, at most p." : "",
			cnt ? cnt : "", st->p, b->m->name,
			cnt ? "buf" : "&one", cnt ? ", n" : "", st->p);
	return g_strdup_printf(
		"\t\tif (!err)\n\t\t\terr = %s_%s_from_user(%s, &p%s%s);\n"
		"\t\tif (err)\n\t\t\treturn err;\n"
		"\t\t... the driver's work on %s ...\n\t\treturn 0;\n",
		st->p, b->m->name, cnt ? "buf" : "&one", cnt ? ", p." : "",
		cnt ? cnt : "", var);
}

/* The model's part, in the comment above the functions: a fetch step
 * and a handler that call them, and their rows. */
static void step_usage(struct step *st, const char *row32)
{
	static const char *const dirs[] = { "_IO", "_IOR", "_IOW", "_IOWR",
					    "a plain number" };
	const struct buffer *b = &st->b[0];
	const char *cnt = b->count ? b->count->name : NULL;
	g_autofree char *what = cnt ? g_strdup_printf("p.%s elements of %s",
						      cnt, b->elem)
				    : g_strdup_printf("%s", b->elem);
	g_autofree char *handler = usage_handler(st);

	comment(st->s,
		"%s (%s): %s from the caller%s, and the %s that %s points "
		"to, each in the layout of the caller's ABI "
		"(cusemu_in_compat_syscall()), so that one fetch step and "
		"one handler serve both tables. %s\n\n"
		"\tstatic int my_fetch(struct cusemu_device *dev,\n"
		"\t\t\t    struct cusemu_file *file, unsigned int cmd,\n"
		"\t\t\t    unsigned long arg)\n\t{\n\t\t%s p;\n\n"
		"\t\treturn %s_fetch(arg, &p%s);\n\t}\n\n"
		"\tstatic long my_ioctl(struct cusemu_device *dev,\n"
		"\t\t\t     struct cusemu_file *file, unsigned int cmd,\n"
		"\t\t\t     unsigned long arg)\n\t{\n"
		"\t\t%s %s%s;\n\t\t%s p;\n"
		"\t\tint err = %s_from_user(&p, arg);\n\n%s\t}\n\n"
		"\tnative table: CUSEMU_IOCTL_USER(%s, my_fetch, my_ioctl)\n"
		"\tcompat table: CUSEMU_IOCTL_USER(%s, my_fetch, my_ioctl)%s",
		st->name, dirs[st->e->c->dir], st->native,
		st->back ? " and back" : "", what, b->m->name,
		st->back ? "As the command writes back, what the payload "
			   "points to is fetched both ways: what the handler "
			   "leaves unwritten keeps its value."
			 : "Nothing goes back to the caller.",
		st->native, st->p, st->counted ? ", MAX" : "", b->elem,
		cnt ? "buf" : "one", cnt ? "[MAX]" : "", st->native, st->p,
		handler, st->name, row32,
		st->counted ? "\n\nMAX: the most elements the driver takes, "
			      "more get -EINVAL; 0 takes as many as one call "
			      "moves (CUSEMU_USER_MAX_BYTES), more get "
			      "-ENOMEM." : "");
}

/* The payload, from the caller and back: each ABI's layout. */
static void step_payload(struct step *st)
{
	const char *tag = st->compat ? tag_in(st->compat) : NULL;

	if (!st->compat) {
		comment(st->s, "%s's payload from the caller, one layout in "
			"both ABIs: 0 or -EFAULT.", st->name);
		g_string_append_printf(st->s,
			"static inline int %s_from_user(%s *dst,\n"
			"\t\tcusemu_uptr_t arg)\n{\n"
			"\treturn cusemu_copy_from_user(dst, arg, sizeof(*dst)) ?"
			" -EFAULT : 0;\n}\n", st->p, st->native);
		if (!st->back)
			return;
		comment(st->s, "%s's payload back to the caller: 0 or "
			"-EFAULT.", st->name);
		g_string_append_printf(st->s,
			"static inline int %s_to_user(cusemu_uptr_t arg,\n"
			"\t\tconst %s *src)\n{\n"
			"\treturn cusemu_copy_to_user(arg, src, sizeof(*src)) ? "
			"-EFAULT : 0;\n}\n", st->p, st->native);
		return;
	}
	comment(st->s, "%s's payload from the caller, as %s: 0 or -EFAULT.",
		st->name, st->native);
	g_string_append_printf(st->s,
		"static inline int %s_from_user(%s *dst,\n"
		"\t\tcusemu_uptr_t arg)\n{\n"
		"\t%s c;\n\n\tif (!cusemu_in_compat_syscall())\n"
		"\t\treturn cusemu_copy_from_user(dst, arg, sizeof(*dst)) ?\n"
		"\t\t\t-EFAULT : 0;\n"
		"\tif (cusemu_copy_from_user(&c, arg, sizeof(c)))\n"
		"\t\treturn -EFAULT;\n\t%s_from_compat(dst, &c);\n"
		"\treturn 0;\n}\n", st->p, st->native, st->compat, tag);
	if (!st->back)
		return;
	comment(st->s, "%s's payload back to the caller, in its layout: 0, "
		"-EFAULT, or -EOVERFLOW where a long does not fit i386's.",
		st->name);
	g_string_append_printf(st->s,
		"static inline int %s_to_user(cusemu_uptr_t arg,\n"
		"\t\tconst %s *src)\n{\n"
		"\t%s c;\n\n\tif (!cusemu_in_compat_syscall())\n"
		"\t\treturn cusemu_copy_to_user(arg, src, sizeof(*src)) ?\n"
		"\t\t\t-EFAULT : 0;\n"
		"\tif (%s_to_compat(&c, src))\n\t\treturn -EOVERFLOW;\n"
		"\treturn cusemu_copy_to_user(arg, &c, sizeof(c)) ? "
		"-EFAULT : 0;\n}\n", st->p, st->native, st->compat, tag);
}

/* The size of one element of b in the caller's ABI, as C. */
static char *elem_size(const struct buffer *b)
{
	if (!b->celem)
		return g_strdup_printf("sizeof(%s)", b->elem);
	return g_strdup_printf("cusemu_in_compat_syscall() ?\n\t\tsizeof(%s) : "
			       "sizeof(%s)", b->celem, b->elem);
}

/* For the fetch step: name what b's member points to, both ways when
 * the command writes back. */
static void step_want(struct step *st, const struct buffer *b)
{
	g_autofree char *addr = buffer_addr(b, "src");
	g_autofree char *size = elem_size(b);
	const char *cnt = b->count ? b->count->name : NULL;
	g_autofree char *len = cnt ? g_strdup_printf("(size_t)src->%s * size",
						     cnt)
				   : g_strdup("size");

	if (cnt) {
		comment(st->s, "For %s's fetch step, once the payload is "
			"here: the src->%s elements that %s points to, in the "
			"caller's layout, named for reading%s. 0; -EINVAL for "
			"more than max (when max is not 0)%s, -ENOMEM for more "
			"than one call moves, before anything is named; "
			"-EFAULT where the caller cannot have them.", st->name,
			cnt, b->m->name, st->back ? " and writing back" : "",
			b->count->flags & MEMBER_SIGNED ? " or below 0" : "");
		g_string_append_printf(st->s, "static inline int %s_want_%s("
				       "const %s *src,\n\t\tsize_t max)\n",
				       st->p, b->m->name, st->native);
	} else {
		comment(st->s, "For %s's fetch step, once the payload is "
			"here: the %s that %s points to, in the caller's "
			"layout, named for reading%s. 0, or -EFAULT where the "
			"caller cannot have it.", st->name, b->elem,
			b->m->name, st->back ? " and writing back" : "");
		g_string_append_printf(st->s, "static inline int %s_want_%s("
				       "const %s *src)\n", st->p, b->m->name,
				       st->native);
	}
	g_string_append_printf(st->s, "{\n\tsize_t size = %s;\n"
			       "\tcusemu_uptr_t addr = %s;\n\tint err;\n\n",
			       size, addr);
	if (cnt && (b->count->flags & MEMBER_SIGNED))
		g_string_append_printf(st->s, "\tif (src->%s < 0)\n"
				       "\t\treturn -EINVAL;\n", cnt);
	if (cnt)
		g_string_append_printf(st->s,
			"\tif (max && (__u64)src->%s > max)\n"
			"\t\treturn -EINVAL;\n"
			"\tif ((__u64)src->%s > CUSEMU_USER_MAX_BYTES / size)\n"
			"\t\treturn -ENOMEM;\n", cnt, cnt);
	g_string_append_printf(st->s, "\terr = cusemu_user_want_read(addr, "
			       "%s);\n", len);
	if (st->back)
		g_string_append_printf(st->s, "\tif (!err || err == -EAGAIN)\n"
				       "\t\terr = cusemu_user_want_write(addr, "
				       "%s);\n", len);
	g_string_append(st->s, "\treturn err == -EAGAIN ? 0 : err;\n}\n");
}

/* For the handler: b's elements from the caller, converted. */
static void step_from_user(struct step *st, const struct buffer *b)
{
	g_autofree char *addr = buffer_addr(b, "src");
	const char *cnt = b->count ? b->count->name : NULL;

	if (cnt) {
		comment(st->s, "For %s's handler: the first n elements that "
			"%s points to (n at most src->%s), as %s: 0 or "
			"-EFAULT.", st->name, b->m->name, cnt, b->elem);
		g_string_append_printf(st->s, "static inline int %s_%s_from_"
				       "user(%s *dst,\n\t\tconst %s *src, "
				       "size_t n)\n{\n", st->p, b->m->name,
				       b->elem, st->native);
	} else {
		comment(st->s, "For %s's handler: what %s points to, as %s: "
			"0 or -EFAULT.", st->name, b->m->name, b->elem);
		g_string_append_printf(st->s, "static inline int %s_%s_from_"
				       "user(%s *dst,\n\t\tconst %s *src)\n{\n"
				       "\tconst size_t n = 1;\n", st->p,
				       b->m->name, b->elem, st->native);
	}
	g_string_append_printf(st->s, "\tcusemu_uptr_t addr = %s;\n", addr);
	if (!b->celem) {
		g_string_append(st->s, "\n\treturn cusemu_copy_from_user(dst, "
				"addr, n * sizeof(*dst)) ? -EFAULT : 0;\n}\n");
		return;
	}
	g_string_append_printf(st->s,
		"\t%s c;\n\n\tif (!cusemu_in_compat_syscall())\n"
		"\t\treturn cusemu_copy_from_user(dst, addr, "
		"n * sizeof(*dst)) ?\n"
		"\t\t\t-EFAULT : 0;\n"
		"\tfor (size_t i = 0; i < n; i++) {\n"
		"\t\tif (cusemu_copy_from_user(&c, addr + i * sizeof(c), "
		"sizeof(c)))\n\t\t\treturn -EFAULT;\n", b->celem);
	if (b->narrow)
		g_string_append(st->s, "\t\tdst[i] = c;\n");
	else
		g_string_append_printf(st->s, "\t\t%s_from_compat(&dst[i], "
				       "&c);\n", tag_in(b->celem));
	g_string_append(st->s, "\t}\n\treturn 0;\n}\n");
}

/* For the handler: b's elements to the caller, converted. */
static void step_to_user(struct step *st, const struct buffer *b)
{
	g_autofree char *addr = buffer_addr(b, "dst");
	const char *cnt = b->count ? b->count->name : NULL;

	if (cnt) {
		comment(st->s, "For %s's handler: n elements (n at most "
			"dst->%s) to where %s points, in the caller's layout: "
			"0, -EFAULT, or -EOVERFLOW where a long does not fit "
			"i386's.", st->name, cnt, b->m->name);
		g_string_append_printf(st->s, "static inline int %s_%s_to_user("
				       "const %s *dst,\n\t\tconst %s *src, "
				       "size_t n)\n{\n", st->p, b->m->name,
				       st->native, b->elem);
	} else {
		comment(st->s, "For %s's handler: src to where %s points, in "
			"the caller's layout: 0, -EFAULT, or -EOVERFLOW where "
			"a long does not fit i386's.", st->name, b->m->name);
		g_string_append_printf(st->s, "static inline int %s_%s_to_user("
				       "const %s *dst,\n\t\tconst %s *src)\n{\n"
				       "\tconst size_t n = 1;\n", st->p,
				       b->m->name, st->native, b->elem);
	}
	g_string_append_printf(st->s, "\tcusemu_uptr_t addr = %s;\n", addr);
	if (!b->celem) {
		g_string_append(st->s, "\n\treturn cusemu_copy_to_user(addr, "
				"src, n * sizeof(*src)) ? -EFAULT : 0;\n}\n");
		return;
	}
	g_string_append_printf(st->s,
		"\t%s c;\n\n\tif (!cusemu_in_compat_syscall())\n"
		"\t\treturn cusemu_copy_to_user(addr, src, "
		"n * sizeof(*src)) ?\n"
		"\t\t\t-EFAULT : 0;\n"
		"\tfor (size_t i = 0; i < n; i++) {\n", b->celem);
	if (b->narrow)
		g_string_append_printf(st->s,
			"\t\tif (!cusemu_compat_fits_%s(src[i]))\n"
			"\t\t\treturn -EOVERFLOW;\n\t\tc = (%s)src[i];\n",
			strcmp(b->celem, "__s32") ? "u32" : "s32", b->celem);
	else
		g_string_append_printf(st->s, "\t\tif (%s_to_compat(&c, "
				       "&src[i]))\n\t\t\treturn -EOVERFLOW;\n",
				       tag_in(b->celem));
	g_string_append(st->s,
		"\t\tif (cusemu_copy_to_user(addr + i * sizeof(c), &c, "
		"sizeof(c)))\n\t\t\treturn -EFAULT;\n\t}\n\treturn 0;\n}\n");
}

/* The fetch step itself: the payload, then what it points to. */
static void step_fetch(struct step *st)
{
	comment(st->s, "%s's fetch step: the payload, named for reading%s, "
		"and, once it is here, what it points to (%s_want_*()). dst "
		"gets the payload as far as it has arrived. Returns what a "
		"fetch step returns.", st->name,
		st->back ? " and writing back" : "", st->p);
	g_string_append_printf(st->s, "static inline int %s_fetch("
			       "cusemu_uptr_t arg,\n\t\t%s *dst%s)\n{\n",
			       st->p, st->native,
			       st->counted ? ", size_t max" : "");
	if (st->back && st->compat)
		g_string_append_printf(st->s,
			"\tsize_t size = cusemu_in_compat_syscall() ?\n"
			"\t\tsizeof(%s) : sizeof(*dst);\n"
			"\tint err = cusemu_user_want_write(arg, size);\n\n",
			st->compat);
	else if (st->back)
		g_string_append(st->s, "\tint err = cusemu_user_want_write(arg, "
				"sizeof(*dst));\n\n");
	if (st->back)
		g_string_append_printf(st->s, "\tif (err && err != -EAGAIN)\n"
				       "\t\treturn err;\n\terr = %s_from_user("
				       "dst, arg);\n", st->p);
	else
		g_string_append_printf(st->s, "\tint err = %s_from_user(dst, "
				       "arg);\n\n", st->p);
	for (unsigned int i = 0; i < st->nb; i++)
		g_string_append_printf(st->s, "\tif (!err)\n\t\terr = "
				       "%s_want_%s(dst%s);\n", st->p,
				       st->b[i].m->name,
				       st->b[i].count ? ", max" : "");
	g_string_append(st->s, "\treturn err;\n}\n");
}

/* Claims the names of st's functions; FALSE when one is another's. */
static bool step_names(struct step *st, char **taken)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(names, g_strconcat(st->p, "_from_user", NULL));
	g_ptr_array_add(names, g_strconcat(st->p, "_to_user", NULL));
	g_ptr_array_add(names, g_strconcat(st->p, "_fetch", NULL));
	for (unsigned int i = 0; i < st->nb; i++) {
		const char *m = st->b[i].m->name;

		g_ptr_array_add(names, g_strconcat(st->p, "_want_", m, NULL));
		g_ptr_array_add(names, g_strconcat(st->p, "_", m, "_from_user",
						   NULL));
		g_ptr_array_add(names, g_strconcat(st->p, "_", m, "_to_user",
						   NULL));
	}
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *key = g_strconcat("fn:", names->pdata[i],
						   NULL);

		if (g_hash_table_contains(st->e->done, key)) {
			*taken = g_strdup(names->pdata[i]);
			return false;
		}
	}
	for (guint i = 0; i < names->len; i++)
		g_hash_table_insert(st->e->done, g_strconcat("fn:",
				    names->pdata[i], NULL), NULL);
	return true;
}

/*
 * For a payload whose members --pointee names: its fetch step and the
 * copies a handler makes, for callers of both ABIs. What it cannot write
 * is said in a comment, for the model to write by hand.
 */
static void emit_step(struct emitter *e, GPtrArray *commands)
{
	const struct command *c = e->c;
	const struct member *root = at(e->l64, 0);
	struct step st = { .e = e, .s = e->steps, .name = c->name,
			   .back = c->dir != DIR_WRITE };
	g_autofree char *row32 = NULL, *taken = NULL;
	bool converts;

	if (c->compat_of || c->sizeof_arg || (root->flags & MEMBER_ARRAY) ||
	    !(root->flags & MEMBER_STRUCT))
		return;
	for (guint i = 1; i < e->l64->members->len; i++) {
		const struct member *m = at(e->l64, (int)i);
		const char *why = NULL;

		if (!m->pointee_given)
			continue;
		if (st.nb < STEP_BUFFERS)
			why = buffer_of(e, (int)i, &st.b[st.nb]);
		else
			why = "the payload has too many of them";
		if (why) {
			comment(e->steps, "%s: no fetch step written for %s: "
				"%s; the model's to write.", c->name, m->path,
				why);
			return;
		}
		st.counted = st.counted || st.b[st.nb].count;
		st.nb++;
	}
	if (!st.nb)
		return;
	st.p = g_ascii_strdown(c->name, -1);
	if (!step_names(&st, &taken)) {
		comment(e->steps, "%s: no fetch step written: %s is another "
			"command's.", c->name, taken);
		g_free(st.p);
		return;
	}
	st.native = native_type(e, root);
	st.compat = compat_type(e, 0, at(e->l32, 0), &converts);
	if (!converts)
		g_clear_pointer(&st.compat, g_free);
	row32 = compat_row(commands, c);
	step_usage(&st, row32);
	step_payload(&st);
	for (unsigned int i = 0; i < st.nb; i++) {
		step_want(&st, &st.b[i]);
		step_from_user(&st, &st.b[i]);
		if (st.back)
			step_to_user(&st, &st.b[i]);
	}
	step_fetch(&st);
	g_free(st.p);
	g_free(st.native);
	g_free(st.compat);
}

/*
 * The include guard, from the headers' names: a file's directory and name
 * (CUSEMU_COMPAT_SENSORHUB_SENSORHUB_H for examples/sensorhub/sensorhub.h,
 * so that include/cusemu/abi/report.h and include/cusemu/report.h differ),
 * a system header's name as given (CUSEMU_COMPAT_LINUX_RTC_H). Headers
 * made from other headers can be included together; two made from the
 * same ones would define the same structs, and share the guard on purpose.
 */
static char *include_guard(char **headers)
{
	GString *g = g_string_new("CUSEMU_COMPAT");

	for (char **h = headers; *h; h++) {
		g_autofree char *name = NULL;

		if (g_file_test(*h, G_FILE_TEST_EXISTS)) {
			g_autofree char *full = g_canonicalize_filename(*h, NULL);
			g_autofree char *dir = g_path_get_dirname(full);
			g_autofree char *parent = g_path_get_basename(dir);
			g_autofree char *base = g_path_get_basename(full);

			name = strcmp(parent, "/") ? g_strconcat(parent, "_", base,
								  NULL)
						   : g_strdup(base);
		} else {
			name = g_strdup(*h);
		}

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

/* Whether c is the header's own NAME32 of another command: its i386
 * number, whose kernel-only payload (usbdevice_fs.h's struct
 * usbdevfs_urb32) the compat struct written for NAME stands for. */
static bool own_name32(GPtrArray *commands, const struct command *c)
{
	size_t n = strlen(c->name);

	if (n < 3 || strcmp(c->name + n - 2, "32"))
		return false;
	for (guint i = 0; i < commands->len; i++) {
		const struct command *o = commands->pdata[i];

		if (strlen(o->name) == n - 2 && !strncmp(o->name, c->name, n - 2))
			return true;
	}
	return false;
}

/* The commands left out, in a comment of the file: no #warning, which
 * -Werror would make an error of the whole file. */
static void left_out_comment(GString *out, GPtrArray *left_out)
{
	if (!left_out->len)
		return;
	g_string_append(out, "\n/*\n * Not written: their translations are the "
			"model's to write by hand,\n * or the headers lack "
			"what they need.\n");
	for (guint i = 0; i < left_out->len; i++) {
		g_autofree char *line = g_strdup(left_out->pdata[i]);

		/* A compiler's words must not end the comment. */
		for (char *end; (end = strstr(line, "*/"));)
			end[1] = '|';
		g_string_append_printf(out, " *   %s\n", line);
	}
	g_string_append(out, " */\n");
}

void emit_compat(GString *out, GPtrArray *commands, char **headers,
		 const struct emit_options *eo, GPtrArray *left_out)
{
	g_autofree char *guard = include_guard(headers);
	g_autoptr(GString) decls = g_string_new(NULL);
	g_autoptr(GString) funcs = g_string_new(NULL);
	g_autoptr(GString) macros = g_string_new(NULL);
	g_autoptr(GString) steps = g_string_new(NULL);
	g_autoptr(GHashTable) done = g_hash_table_new_full(g_str_hash,
							   g_str_equal, g_free,
							   g_free);
	GPtrArray *problems = left_out;

	for (guint i = 0; i < commands->len; i++) {
		const struct command *c = commands->pdata[i];
		struct emitter e = { decls, funcs, done, &c->layout[ABI_X86_64],
				     &c->layout[ABI_I386], c, problems,
				     steps };
		const struct member *p;
		g_autofree char *ct = NULL;
		bool named = false, converts;
		const char *why = eo->leave ? g_hash_table_lookup(eo->leave,
								  c->name)
					    : NULL;

		if (eo->only && eo->only != c)
			continue;
		if (why) {
			g_ptr_array_add(problems, g_strdup_printf("%s: %s",
								  c->name, why));
			continue;
		}
		/* Whether it needs a translation is unknown: said, not
		 * passed over as if it needed none. */
		if (c->unresolved && !c->row_only &&
		    !own_name32(commands, c)) {
			g_ptr_array_add(problems, g_strdup_printf(
				"%s: does not compile with the headers as "
				"given (%s); give the header it needs first, "
				"-I or -D", c->name, c->unresolved));
			continue;
		}
		if (c->row_only || c->unresolved ||
		    !c->layout[ABI_X86_64].present ||
		    !c->layout[ABI_I386].present)
			continue;
		/* A pointee may differ where the payload does not (a __u64
		 * that --pointee names). */
		for (guint j = 0; j < e.l64->members->len; j++)
			emit_pointee(&e, (int)j);
		emit_step(&e, commands);
		if (c->compatible || c->compat_of)
			continue;
		for (guint j = 0; j < commands->len; j++) {
			const struct command *o = commands->pdata[j];

			/* The header's own NAME32 (usbdevice_fs.h has them). */
			named = named || o->compat_of == c ||
				(g_str_has_prefix(o->name, c->name) &&
				 !strcmp(o->name + strlen(c->name), "32"));
		}
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
		else if (!strcmp(c->macro, "_IOC"))
			g_string_append_printf(macros,
				"#define %s32 _IOC(%s, %s, %s, sizeof(%s))\n"
				"_Static_assert(%s32 == 0x%08xu, \"%s32\");\n",
				c->name, ioc_dir_names[c->dir], c->type_arg,
				c->nr_arg, ct, c->name, c->number[ABI_I386],
				c->name);
		else if (c->dir == DIR_NONE)
			/* _IO takes no type: the number is the native one,
			 * the payload --command gave only the row's. */
			g_string_append_printf(macros,
				"#define %s32 _IO(%s, %s)\t/* i386's payload: "
				"%s */\n"
				"_Static_assert(%s32 == 0x%08xu, \"%s32\");\n",
				c->name, c->type_arg, c->nr_arg, ct,
				c->name, c->number[ABI_I386], c->name);
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
		"\n * for a model's compat rows");
	if (steps->len)
		g_string_append(out, ", and the fetch steps and copies of\n"
				" * the buffers that --pointee names, for both "
				"tables");
	g_string_append(out, ".\n */\n");
	g_string_append_printf(out, "#ifndef %s\n#define %s\n\n", guard, guard);
	/* What the probes gave the headers, so that the file compiles
	 * alone: a uapi header may use _IOW without linux/ioctl.h (as
	 * sound/asound.h does), or struct timeval without sys/time.h. */
	g_string_append_printf(out, "#include <errno.h>\n#include <string.h>\n\n"
			       "%s\n", eo->prelude);
	g_string_append(out,
		"#include <cusemu/uaccess.h>\n\n"
		"#ifndef CUSEMU_COMPAT_MIN\n"
		"#define CUSEMU_COMPAT_MIN(a, b) ((a) < (b) ? (a) : (b))\n"
		"#define CUSEMU_COMPAT_COUNT(a) (sizeof(a) / sizeof((a)[0]))\n"
		"\n/* Whether a native long fits i386's. */\n"
		"static inline int cusemu_compat_fits_s32(__s64 v)\n{\n"
		"\treturn v >= INT32_MIN && v <= INT32_MAX;\n}\n\n"
		"static inline int cusemu_compat_fits_u32(__u64 v)\n{\n"
		"\treturn v <= UINT32_MAX;\n}\n"
		"#endif\n\n");
	for (char **h = headers; *h; h++) {
		if (g_file_test(*h, G_FILE_TEST_EXISTS)) {
			g_autofree char *base = g_path_get_basename(*h);

			g_string_append_printf(out, "#include \"%s\"\n", base);
		} else {
			g_string_append_printf(out, "#include <%s>\n", *h);
		}
	}
	left_out_comment(out, problems);
	g_string_append(out, decls->str);
	if (macros->len)
		g_string_append_printf(out, "\n/* The i386 numbers. */\n%s",
				       macros->str);
	g_string_append(out, funcs->str);
	g_string_append(out, steps->str);
	g_string_append(out, "\n#endif\n");
}
