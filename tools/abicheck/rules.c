/* SPDX-License-Identifier: MIT */
/*
 * The kernel's rules for ioctl interfaces (Documentation/driver-api/
 * ioctl.rst), applied to one command's x86_64 and i386 layouts, and the
 * verdict: one table row serves both ABIs, or the command needs a
 * translation.
 */
#include <stdarg.h>
#include <string.h>

#include "abicheck.h"

static const struct {
	const char *name;
	bool translates;
	const char *reason;
} kinds[FINDING_KIND_COUNT] = {
	[FINDING_LAYOUT] = { "layout", true,
		"a member's offset or size, or the payload's size, differs "
		"between the ABIs: a compat handler must translate it" },
	[FINDING_LONG] = { "long", true,
		"long and unsigned long are the size of a register, 8 bytes on "
		"x86_64 and 4 on i386: use __u32, __s32, __u64 or __s64" },
	[FINDING_POINTER] = { "pointer", true,
		"a pointer is 8 bytes on x86_64 and 4 on i386 and needs "
		"compat_ptr(): carry it in a __u64" },
	[FINDING_ALIGN64] = { "align64", true,
		"i386 aligns 64-bit members to 4 bytes, x86_64 to 8: put them "
		"at multiples of 8, with explicit reserved fields before" },
	[FINDING_PADDING] = { "padding", false,
		"implicit padding leaks kernel memory unless the driver clears "
		"it, and differs by ABI: add explicit reserved fields" },
	[FINDING_TIME] = { "time", true,
		"time_t, struct timeval and struct timespec have two layouts in "
		"32-bit user space since 64-bit time_t (y2038): use __u64 "
		"nanoseconds or struct __kernel_timespec" },
	[FINDING_BITFIELD] = { "bitfield", false,
		"the layout of bitfields is implementation-defined: use a "
		"fixed-width integer and masks" },
	[FINDING_ENUM] = { "enum", false,
		"the size and signedness of an enum are implementation-defined: "
		"use a fixed-width integer" },
	[FINDING_CHAR] = { "char", false,
		"char is signed on x86 and unsigned on arm and powerpc: use "
		"__u8 or __s8 (char arrays are fine for strings)" },
	[FINDING_SIZEOF] = { "sizeof", true,
		"the data_type argument is a type: sizeof(T) there encodes "
		"sizeof(size_t), 8 on x86_64 and 4 on i386" },
	[FINDING_NUMBER] = { "number", true,
		"the macro gives each ABI another number for the same payload "
		"(it picks a command by sizeof(time_t) or the like): the i386 "
		"number needs a row of its own" },
	[FINDING_SIZE_LIMIT] = { "size-limit", false,
		"the size field is 14 bits on x86 (13 on powerpc, mips and "
		"sparc): pass larger data through a pointer in a __u64" },
	[FINDING_COLLISION] = { "collision", false,
		"ioctl numbers share one command space: a program that opens the "
		"wrong node gets another driver's command" },
	[FINDING_UNRESOLVED] = { "unresolved", false,
		"the number or the payload type does not compile with the "
		"headers as given (a kernel-only type?): it cannot be judged; "
		"name the header it needs first, or give -I, -D or --command" },
	[FINDING_PLAIN_NUMBER] = { "plain-number", false,
		"a plain number encodes neither size nor direction, so nothing "
		"tells its payload: give it with --command NAME=TYPE" },
	[FINDING_UNSIZED] = { "unsized", false,
		"_IO encodes no payload: an argument passed by value is the same "
		"for both ABIs, a pointer is not, and the number does not say "
		"which: give --command NAME=TYPE or NAME=value" },
	[FINDING_NO_NATIVE_ROW] = { "model-missing", false,
		"the model has no native row for a command of the header" },
	[FINDING_NOT_IN_HEADER] = { "model-extra", false,
		"a row of the model has a number no command of the header has" },
	[FINDING_WRONG_COMPAT_SAME] = { "model-compat-same", false,
		"a row marked compatible serves a command whose layouts differ: "
		"its i386 number never reaches it" },
	[FINDING_COMPAT_NUMBER] = { "model-compat-number", false,
		"a translating compat row's number is not the i386 number of "
		"the header's command" },
	[FINDING_NO_COMPAT_ROW] = { "model-no-compat", false,
		"a command that needs a translation has no compat row: i386 "
		"callers get ENOTTY" },
};

const char *finding_kind_name(enum finding_kind kind)
{
	return kinds[kind].name;
}

const char *finding_kind_reason(enum finding_kind kind)
{
	return kinds[kind].reason;
}

bool finding_kind_translates(enum finding_kind kind)
{
	return kinds[kind].translates;
}

bool finding_kind_model(enum finding_kind kind)
{
	return kind >= FINDING_NO_NATIVE_ROW && kind < FINDING_KIND_COUNT;
}

void finding_add(struct command *c, enum finding_kind kind,
		 const char *member, bool error, const char *format, ...)
{
	struct finding *f = g_new0(struct finding, 1);
	va_list ap;

	f->kind = kind;
	f->member = g_strdup(member);
	f->error = error;
	va_start(ap, format);
	f->detail = g_strdup_vprintf(format, ap);
	va_end(ap);
	g_ptr_array_add(c->findings, f);
}

const char *member_label(const struct command *c, const struct member *m)
{
	return *m->path ? m->path : c->payload_arg;
}

static const struct member *member_at(const struct layout *l, int i)
{
	return i < 0 ? NULL : l->members->pdata[i];
}

/* True when m lies inside a member that has flag (a time struct's tv_sec
 * is reported with the struct). */
static bool inside(const struct layout *l, const struct member *m,
		   unsigned int flag)
{
	for (const struct member *p = member_at(l, m->parent); p;
	     p = member_at(l, p->parent))
		if (p->flags & flag)
			return true;
	return false;
}

static void check_layouts(struct command *c)
{
	const struct layout *l64 = &c->layout[ABI_X86_64];
	const struct layout *l32 = &c->layout[ABI_I386];
	bool changed = false;	/* some member's offset or size */

	for (guint i = 0; i < l64->members->len; i++) {
		const struct member *m = l64->members->pdata[i];
		const struct member *n = layout_find(l32, m->path);
		const char *label = member_label(c, m);

		if (!n) {
			finding_add(c, FINDING_LAYOUT, label, false,
				    "exists on x86_64 only");
			continue;
		}
		if (!*m->path && m->size != n->size)
			finding_add(c, FINDING_LAYOUT, label, false,
				    "%" PRIu64 " bytes on x86_64, %" PRIu64
				    " on i386", m->size, n->size);
		else if (*m->path && (m->offset != n->offset ||
				      m->size != n->size)) {
			GString *d = g_string_new(NULL);

			if (m->offset != n->offset)
				g_string_append_printf(d, "offset %" PRIu64
					" on x86_64, %" PRIu64 " on i386",
					m->offset, n->offset);
			if (m->size != n->size)
				g_string_append_printf(d, "%ssize %" PRIu64
					" on x86_64, %" PRIu64 " on i386",
					d->len ? "; " : "", m->size, n->size);
			finding_add(c, FINDING_LAYOUT, label, false, "%s", d->str);
			g_string_free(d, TRUE);
			changed = true;
		}

		if ((m->flags & MEMBER_LONG) && !(m->flags & MEMBER_ARRAY &&
						  inside(l64, m, MEMBER_TIME)) &&
		    !inside(l64, m, MEMBER_TIME))
			finding_add(c, FINDING_LONG, label, false,
				    "%s is %s: %" PRIu64 " bytes on x86_64, %"
				    PRIu64 " on i386; use %s",
				    m->type, (m->flags & MEMBER_SIGNED) ? "long"
						: "unsigned long",
				    m->size, n->size,
				    (m->flags & MEMBER_SIGNED)
					    ? "__s64 or __s32"
					    : "__u64 or __u32");
		if (m->flags & MEMBER_POINTER)
			finding_add(c, FINDING_POINTER, label, false,
				    "%s: %" PRIu64 " bytes on x86_64, %" PRIu64
				    " on i386, and a compat handler must pass "
				    "it through compat_ptr(); carry it in a __u64",
				    m->type, m->size, n->size);
		if ((m->flags & MEMBER_SCALAR) && !(m->flags & MEMBER_ARRAY) &&
		    m->size == 8 && n->size == 8 && m->offset % 8 == 0 &&
		    n->offset % 8 != 0)
			finding_add(c, FINDING_ALIGN64, label, false,
				    "%s at offset %" PRIu64 " on x86_64 but %"
				    PRIu64 " on i386, which aligns 64-bit "
				    "members to 4 bytes", m->type, m->offset,
				    n->offset);
		if ((m->flags & MEMBER_TIME) && !inside(l64, m, MEMBER_TIME))
			finding_add(c, FINDING_TIME, label, false,
				    "%s%s%s: y2038, and two layouts in 32-bit "
				    "user space (_TIME_BITS=64)", m->type,
				    strcmp(m->type, m->time_type) ? " holds " : "",
				    strcmp(m->type, m->time_type) ? m->time_type : "");
		if (m->flags & MEMBER_BITFIELD)
			finding_add(c, FINDING_BITFIELD, label, false,
				    "%u bits at bit %u of byte %" PRIu64
				    "%s", m->bit_size, m->bit_offset, m->offset,
				    m->offset == n->offset &&
				    m->bit_offset == n->bit_offset ? "" :
				    " on x86_64, elsewhere on i386");
		if ((m->flags & MEMBER_ENUM) && !inside(l64, m, MEMBER_ENUM))
			finding_add(c, FINDING_ENUM, label, false,
				    "%s, %" PRIu64 " bytes here", m->type,
				    m->size);
		if ((m->flags & MEMBER_CHAR) && !(m->flags & MEMBER_ARRAY) &&
		    !inside(l64, m, MEMBER_ARRAY))
			finding_add(c, FINDING_CHAR, label, false,
				    "plain char, whose signedness differs by "
				    "architecture");
	}

	/* A struct that only its alignment makes longer on x86_64. */
	{
		const struct member *p64 = l64->members->pdata[0];
		const struct member *p32 = l32->members->pdata[0];

		if (!changed && p64->size != p32->size &&
		    (p64->flags & (MEMBER_STRUCT | MEMBER_UNION)))
			for (guint i = 1; i < l64->members->len; i++) {
				const struct member *m = l64->members->pdata[i];

				if ((m->flags & MEMBER_SCALAR) && m->size == 8 &&
				    m->align == 8 && !(m->flags & MEMBER_LONG)) {
					finding_add(c, FINDING_ALIGN64,
						    member_label(c, m), false,
						    "%s aligns %s to 8 bytes on "
						    "x86_64 but 4 on i386: the tail "
						    "padding, and so the size, "
						    "differ", m->type, p64->type);
					break;
				}
			}
	}
}

/* The holes of one struct or union member of l, in bits. */
static void holes(const struct layout *l, int agg, enum abi abi,
		  GPtrArray *out)
{
	const struct member *a = l->members->pdata[agg];
	uint64_t end = 0;
	const struct member *last = NULL;

	for (guint i = agg + 1; i < l->members->len; i++) {
		const struct member *m = l->members->pdata[i];
		uint64_t start, stop;

		if (m->parent != agg)
			continue;
		start = (m->offset - a->offset) * 8 + m->bit_offset;
		stop = start + ((m->flags & MEMBER_BITFIELD) ? m->bit_size
							     : m->size * 8);
		if (a->flags & MEMBER_STRUCT && (start + 7) / 8 > (end + 7) / 8) {
			g_ptr_array_add(out, g_strdup_printf("%s\t%" PRIu64 "\t%"
				PRIu64 "\t%s", last ? last->path : "",
				a->offset + (end + 7) / 8,
				(start + 7) / 8 - (end + 7) / 8, abi_names[abi]));
		}
		if (stop > end || (a->flags & MEMBER_UNION)) {
			end = MAX(end, stop);
			last = m;
		}
	}
	if (last && a->size * 8 > end && (a->size - (end + 7) / 8) > 0)
		g_ptr_array_add(out, g_strdup_printf("%s\t%" PRIu64 "\t%" PRIu64
			"\t%s\ttail", last->path, a->offset + (end + 7) / 8,
			a->size - (end + 7) / 8, abi_names[abi]));
}

/* Implicit padding, merged where both ABIs have the same hole. */
static void check_padding(struct command *c)
{
	GPtrArray *found[ABI_COUNT];

	for (int abi = 0; abi < ABI_COUNT; abi++) {
		const struct layout *l = &c->layout[abi];

		found[abi] = g_ptr_array_new_with_free_func(g_free);
		for (guint i = 0; i < l->members->len; i++) {
			const struct member *m = l->members->pdata[i];

			if ((m->flags & (MEMBER_STRUCT | MEMBER_UNION)) &&
			    !inside(l, m, MEMBER_ARRAY | MEMBER_TIME) &&
			    !(m->flags & MEMBER_TIME))
				holes(l, (int)i, abi, found[abi]);
		}
	}
	for (int abi = 0; abi < ABI_COUNT; abi++) {
		for (guint i = 0; i < found[abi]->len; i++) {
			g_auto(GStrv) h = g_strsplit(found[abi]->pdata[i], "\t", -1);
			const char *where = abi_names[abi];
			bool both = false;

			if (abi == ABI_I386) {
				bool dup = false;

				/* Said with the x86_64 one already? */
				for (guint j = 0; j < found[0]->len && !dup; j++) {
					g_auto(GStrv) o = g_strsplit(found[0]->pdata[j], "\t", -1);

					dup = !strcmp(o[0], h[0]) && !strcmp(o[1], h[1]) &&
					      !strcmp(o[2], h[2]);
				}
				if (dup)
					continue;
			} else {
				for (guint j = 0; j < found[1]->len && !both; j++) {
					g_auto(GStrv) o = g_strsplit(found[1]->pdata[j], "\t", -1);

					both = !strcmp(o[0], h[0]) && !strcmp(o[1], h[1]) &&
					       !strcmp(o[2], h[2]);
				}
			}
			if (both)
				where = "both ABIs";
			else
				where = abi == ABI_X86_64 ? "x86_64 only"
							  : "i386 only";
			finding_add(c, FINDING_PADDING, *h[0] ? h[0] : c->payload_arg,
				    false, "%s byte%s %s, at offset %s, on %s",
				    h[2], strcmp(h[2], "1") ? "s" : "",
				    h[4] ? (*h[0] ? "at the end, after it"
						  : "at the end")
					 : (*h[0] ? "after it" : "at the start"),
				    h[1], where);
		}
	}
	for (int abi = 0; abi < ABI_COUNT; abi++)
		g_ptr_array_unref(found[abi]);
}

/* Whether a finding says why c needs a translation: a verdict always
 * says why. */
static bool translates(const struct command *c)
{
	for (guint i = 0; i < c->findings->len; i++)
		if (finding_kind_translates(
			    ((struct finding *)c->findings->pdata[i])->kind))
			return true;
	return false;
}

bool command_unsized(const struct command *c)
{
	return !c->unresolved && !c->payload_expr && !c->by_value &&
	       (c->plain || c->dir == DIR_NONE || !strcmp(c->macro, "_IOC"));
}

bool command_judged(const struct command *c)
{
	return !c->unresolved && !command_unsized(c);
}

void rules_check(struct command *c)
{
	const struct layout *l64 = &c->layout[ABI_X86_64];
	uint32_t size64 = (c->number[ABI_X86_64] >> 16) & 0x3fff;
	uint32_t size32 = (c->number[ABI_I386] >> 16) & 0x3fff;

	if (command_unsized(c) && c->plain) {
		finding_add(c, FINDING_PLAIN_NUMBER, c->name, false,
			    "0x%04x encodes no payload: if it is a command, "
			    "give its payload with --command %s=TYPE",
			    c->number[ABI_X86_64], c->name);
		c->compatible = false;
		return;
	}
	if (command_unsized(c)) {
		finding_add(c, FINDING_UNSIZED, c->name, false,
			    "%s encodes no payload: if its argument is a "
			    "pointer, give the type with --command %s=TYPE; "
			    "if it is a value (or unused), --command %s=value",
			    c->macro, c->name, c->name);
		c->compatible = false;
		return;
	}
	if (c->unresolved) {
		finding_add(c, FINDING_UNRESOLVED,
			    c->payload_arg ? c->payload_arg : c->name, false,
			    "%s", c->unresolved);
		c->compatible = false;
		return;
	}

	if (c->sizeof_arg)
		finding_add(c, FINDING_SIZEOF, c->payload_arg, false,
			    "encodes sizeof(size_t), %u bytes on x86_64 and %u on "
			    "i386, not the %" PRIu64 " of %s; write %s(%s, %s, %s)",
			    size64, size32,
			    l64->present ? ((struct member *)l64->members->pdata[0])->size
					 : 0,
			    c->payload_expr, c->macro, c->type_arg, c->nr_arg,
			    c->payload_expr);
	if (l64->present && c->layout[ABI_I386].present) {
		check_layouts(c);
		check_padding(c);
		const struct member *p = l64->members->pdata[0];
		const struct member *q = c->layout[ABI_I386].members->pdata[0];
		g_autofree char *sizes = p->size == q->size
			? g_strdup_printf("%" PRIu64 " bytes on both ABIs", p->size)
			: g_strdup_printf("%" PRIu64 " bytes on x86_64, %" PRIu64
					  " on i386", p->size, q->size);

		/* A plain number or _IO has no size field to overflow. */
		if (c->dir != DIR_READ && c->dir != DIR_WRITE &&
		    c->dir != DIR_BOTH)
			;
		else if (MAX(p->size, q->size) > 0x3fff)
			finding_add(c, FINDING_SIZE_LIMIT, member_label(c, p),
				    false, "%s, more than the 14-bit size field "
				    "holds (16383): the number 0x%08x has the "
				    "size run into its direction bits", sizes,
				    c->number[ABI_X86_64]);
		else if (p->size > 0x1fff)
			finding_add(c, FINDING_SIZE_LIMIT, member_label(c, p),
				    false, "%s: fits x86's 14-bit size field, not "
				    "the 13 bits of powerpc, mips and sparc (8191)",
				    sizes);
	}
	c->compatible = c->number[ABI_X86_64] == c->number[ABI_I386];
	for (guint i = 0; i < c->findings->len; i++) {
		const struct finding *f = c->findings->pdata[i];

		if (f->kind == FINDING_LAYOUT || f->kind == FINDING_SIZEOF)
			c->compatible = false;
	}
	if (!c->compatible && !translates(c))
		finding_add(c, FINDING_NUMBER, c->name, false,
			    "0x%08x on x86_64, 0x%08x on i386, for a payload "
			    "laid out alike: the macro picks another command "
			    "for i386", c->number[ABI_X86_64],
			    c->number[ABI_I386]);
}

/*
 * Across the checked headers: two commands with one number, and commands
 * that are another's i386 number (a compat table's name, such as
 * LEGACY_GET32 for LEGACY_GET).
 */
const char *collides(const struct command *a, const struct command *b,
		     uint32_t *number)
{
	bool n64 = a->number[ABI_X86_64] == b->number[ABI_X86_64];
	bool n32 = a->number[ABI_I386] == b->number[ABI_I386];

	/* An unresolved command has no number to share. */
	if (a->unresolved || b->unresolved)
		return NULL;

	*number = a->number[n64 ? ABI_X86_64 : ABI_I386];
	return n64 && n32 ? "both ABIs" : n64 ? abi_names[ABI_X86_64]
				   : n32 ? abi_names[ABI_I386] : NULL;
}

static bool twins(const struct command *a, const struct command *b)
{
	return a->compat_of == b || b->compat_of == a;
}

/*
 * Two names one header gives a command on purpose: the same numbers in
 * both ABIs (SNDRV_PCM_IOCTL_SYNC_PTR and __SNDRV_PCM_IOCTL_SYNC_PTR), or
 * the same type, nr and direction, one command in two payload versions
 * that meet on x86_64 (__SNDRV_PCM_IOCTL_SYNC_PTR and its ..._SYNC_PTR64).
 */
static bool aliases(const struct command *a, const struct command *b)
{
	if (!a->file || !b->file || strcmp(a->file, b->file))
		return false;
	if (a->number[ABI_X86_64] == b->number[ABI_X86_64] &&
	    a->number[ABI_I386] == b->number[ABI_I386])
		return true;
	return a->dir == b->dir && a->type_arg && b->type_arg && a->nr_arg &&
	       b->nr_arg && !strcmp(a->type_arg, b->type_arg) &&
	       !strcmp(a->nr_arg, b->nr_arg);
}

void rules_check_set(GPtrArray *commands)
{
	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];

		for (guint j = 0; j < commands->len && c->compatible; j++) {
			struct command *o = commands->pdata[j];

			if (i != j && !o->compatible && !o->unresolved &&
			    c->number[ABI_X86_64] == o->number[ABI_I386])
				c->compat_of = o;
		}
	}
	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];

		for (guint j = i + 1; j < commands->len; j++) {
			struct command *o = commands->pdata[j];
			const char *where;
			uint32_t number;

			if (twins(c, o) || aliases(c, o) ||
			    !(where = collides(c, o, &number)))
				continue;
			finding_add(c, FINDING_COLLISION, o->name, false,
				    "0x%08x on %s is also %s (%s:%u)", number,
				    where, o->name, o->header, o->line);
			finding_add(o, FINDING_COLLISION, c->name, false,
				    "0x%08x on %s is also %s (%s:%u)", number,
				    where, c->name, c->header, c->line);
		}
	}
}
