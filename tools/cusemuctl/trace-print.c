/* SPDX-License-Identifier: MIT */
/*
 * Trace lines for people: a small JSON reader for the daemon's lines,
 * then one line per call,
 *
 *     16:48:45.354489 fioc0 27937 fioc-client ioctl(FIOC_GET_SIZE
 *         0x80086500, x86_64, 8 bytes) in [] out [0x7ffd22538968+8]
 *         = 0 <19.2us>
 *
 * (on one line), and with a header's layouts the payload member by member:
 * in {} out {size=16}.
 */
#define G_LOG_DOMAIN "cusemuctl"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "trace-print.h"

/* ---- reading JSON ---- */

enum json_kind { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT };

struct json {
	enum json_kind kind;
	char *text;		/* J_STRING: the string; J_NUMBER: as written */
	bool truth;
	GPtrArray *items;	/* J_ARRAY: struct json *; J_OBJECT: pairs,
				 * name (a J_STRING) then value */
};

static void json_free(struct json *j)
{
	if (!j)
		return;
	g_free(j->text);
	if (j->items)
		g_ptr_array_unref(j->items);
	g_free(j);
}

static void json_freep(struct json **j)
{
	json_free(*j);
}

#define autojson __attribute__((cleanup(json_freep)))

static struct json *json_new(enum json_kind kind)
{
	struct json *j = g_new0(struct json, 1);

	j->kind = kind;
	if (kind == J_ARRAY || kind == J_OBJECT)
		j->items = g_ptr_array_new_with_free_func(
			(GDestroyNotify)json_free);
	return j;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static struct json *parse_value(const char **p, int depth);

static struct json *parse_string(const char **p)
{
	GString *s = g_string_new(NULL);
	const char *q = *p + 1;
	struct json *j;

	while (*q && *q != '"') {
		if (*q != '\\') {
			g_string_append_c(s, *q++);
			continue;
		}
		q++;
		switch (*q) {
		case 'n': g_string_append_c(s, '\n'); break;
		case 't': g_string_append_c(s, '\t'); break;
		case 'r': g_string_append_c(s, '\r'); break;
		case 'b': g_string_append_c(s, '\b'); break;
		case 'f': g_string_append_c(s, '\f'); break;
		case 'u': {
			char hex[5] = { 0 };

			for (int i = 0; i < 4; i++)
				if (!g_ascii_isxdigit(hex[i] = q[1 + i]))
					goto bad;
			g_string_append_unichar(s, (gunichar)strtoul(hex, NULL,
								     16));
			q += 4;
			break;
		}
		case '\0':
			goto bad;
		default:
			g_string_append_c(s, *q);
		}
		q++;
	}
	if (*q != '"')
		goto bad;
	*p = q + 1;
	j = json_new(J_STRING);
	j->text = g_string_free(s, FALSE);
	return j;
bad:
	g_string_free(s, TRUE);
	return NULL;
}

/* Members or elements up to close; objects as name, value, name... */
static struct json *parse_items(const char **p, int depth, bool object)
{
	autojson struct json *j = json_new(object ? J_OBJECT : J_ARRAY);
	const char *q = skip_space(*p + 1);
	char close = object ? '}' : ']';

	if (*q == close) {
		*p = q + 1;
		return g_steal_pointer(&j);
	}
	for (;;) {
		struct json *v;

		q = skip_space(q);
		if (object) {
			if (*q != '"' || !(v = parse_string(&q)))
				return NULL;
			g_ptr_array_add(j->items, v);
			q = skip_space(q);
			if (*q++ != ':')
				return NULL;
			q = skip_space(q);
		}
		if (!(v = parse_value(&q, depth + 1)))
			return NULL;
		g_ptr_array_add(j->items, v);
		q = skip_space(q);
		if (*q == close) {
			*p = q + 1;
			return g_steal_pointer(&j);
		}
		if (*q++ != ',')
			return NULL;
	}
}

static struct json *parse_value(const char **p, int depth)
{
	const char *q = *p;
	struct json *j;

	if (depth > 16)
		return NULL;
	if (*q == '"')
		return parse_string(p);
	if (*q == '{' || *q == '[')
		return parse_items(p, depth, *q == '{');
	if (g_str_has_prefix(q, "null") || g_str_has_prefix(q, "true") ||
	    g_str_has_prefix(q, "false")) {
		j = json_new(*q == 'n' ? J_NULL : J_BOOL);
		j->truth = *q == 't';
		*p = q + (*q == 'f' ? 5 : 4);
		return j;
	}
	if (*q == '-' || g_ascii_isdigit(*q)) {
		const char *end = q + 1;

		while (g_ascii_isdigit(*end) || strchr(".eE+-", *end))
			end++;
		j = json_new(J_NUMBER);
		j->text = g_strndup(q, end - q);
		*p = end;
		return j;
	}
	return NULL;
}

static struct json *json_parse(const char *text)
{
	const char *p = skip_space(text);
	struct json *j = parse_value(&p, 0);

	if (j && *skip_space(p)) {
		json_free(j);
		return NULL;
	}
	return j;
}

static const struct json *member(const struct json *o, const char *name)
{
	if (!o || o->kind != J_OBJECT)
		return NULL;
	for (guint i = 0; i + 1 < o->items->len; i += 2) {
		const struct json *n = o->items->pdata[i];

		if (!strcmp(n->text, name))
			return o->items->pdata[i + 1];
	}
	return NULL;
}

static const char *str(const struct json *o, const char *name)
{
	const struct json *j = member(o, name);

	return j && j->kind == J_STRING ? j->text : NULL;
}

/* A number member as written ("-1", "4096"), or NULL. */
static const char *num(const struct json *o, const char *name)
{
	const struct json *j = member(o, name);

	return j && j->kind == J_NUMBER ? j->text : NULL;
}

static uint64_t unum(const struct json *o, const char *name)
{
	const char *n = num(o, name);

	return n ? g_ascii_strtoull(n, NULL, 10) : 0;
}

/* ---- payloads ---- */

/* The bytes of a "data" hex string; NULL when there is none. */
static GBytes *hex_bytes(const char *hex)
{
	size_t len = hex ? strlen(hex) / 2 : 0;
	uint8_t *b;

	if (!len)
		return NULL;
	b = g_malloc(len);
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(g_ascii_xdigit_value(hex[2 * i]) << 4 |
				 g_ascii_xdigit_value(hex[2 * i + 1]));
	return g_bytes_new_take(b, len);
}

/* The bytes of the range that starts at arg (the payload), or NULL. */
static GBytes *payload_at(const struct json *ranges, const char *arg)
{
	if (!ranges || ranges->kind != J_ARRAY || !arg)
		return NULL;
	for (guint i = 0; i < ranges->items->len; i++) {
		const struct json *r = ranges->items->pdata[i];
		const char *addr = str(r, "addr");

		if (addr && !g_ascii_strcasecmp(addr, arg))
			return hex_bytes(str(r, "data"));
	}
	return NULL;
}

static void append_ranges(GString *out, const struct json *ranges)
{
	g_string_append_c(out, '[');
	for (guint i = 0; ranges && ranges->kind == J_ARRAY &&
			  i < ranges->items->len; i++) {
		const struct json *r = ranges->items->pdata[i];

		g_string_append_printf(out, "%s%s+%s", i ? " " : "",
				       str(r, "addr") ? str(r, "addr") : "?",
				       num(r, "len") ? num(r, "len") : "?");
	}
	g_string_append_c(out, ']');
}

static uint64_t load(const uint8_t *p, size_t size)
{
	uint64_t v = 0;

	/* x86 is little-endian in both ABIs. */
	for (size_t i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void append_scalar(GString *out, const struct member *m,
			  const uint8_t *p, size_t size)
{
	uint64_t v = load(p, size);

	if (m->flags & MEMBER_BITFIELD && m->bit_size < 64) {
		v = v >> m->bit_offset & ((UINT64_C(1) << m->bit_size) - 1);
		size = 8;
		if (m->flags & MEMBER_SIGNED && v >> (m->bit_size - 1))
			v |= ~((UINT64_C(1) << m->bit_size) - 1);
	}
	if (m->flags & MEMBER_POINTER) {
		g_string_append_printf(out, "0x%" PRIx64, v);
	} else if (m->flags & MEMBER_FLOAT && size == 4) {
		float f;

		memcpy(&f, p, 4);
		g_string_append_printf(out, "%g", f);
	} else if (m->flags & MEMBER_FLOAT && size == 8) {
		double d;

		memcpy(&d, p, 8);
		g_string_append_printf(out, "%g", d);
	} else if (m->flags & MEMBER_SIGNED) {
		int64_t s = size < 8 && v >> (8 * size - 1)
				    ? (int64_t)(v | ~((UINT64_C(1) << 8 * size) - 1))
				    : (int64_t)v;

		g_string_append_printf(out, "%" PRId64, s);
	} else {
		g_string_append_printf(out, "%" PRIu64, v);
	}
}

/* Elements shown of an array; the rest is "...". */
#define ARRAY_SHOWN 16

static void append_member(GString *out, GPtrArray *members, guint at,
			  const uint8_t *data, size_t len, uint64_t delta);

/* The members whose parent is at, as name=value, between braces. */
static void append_children(GString *out, GPtrArray *members, guint at,
			    const uint8_t *data, size_t len, uint64_t delta,
			    bool braces)
{
	bool first = true;

	if (braces)
		g_string_append_c(out, '{');
	for (guint i = at + 1; i < members->len; i++) {
		const struct member *c = members->pdata[i];

		if (c->parent != (int)at)
			continue;
		if (!first)
			g_string_append(out, ", ");
		first = false;
		if (c->anonymous) {
			append_children(out, members, i, data, len, delta,
					false);
			continue;
		}
		g_string_append_printf(out, "%s=", c->name);
		append_member(out, members, i, data, len, delta);
	}
	if (braces)
		g_string_append_c(out, '}');
}

static bool is_text(const struct member *m)
{
	return m->elem_size == 1 && strstr(m->type, "char");
}

static void append_array(GString *out, GPtrArray *members, guint at,
			 const uint8_t *data, size_t len, uint64_t delta)
{
	const struct member *m = members->pdata[at];
	const struct member *e = at + 1 < members->len ? members->pdata[at + 1]
						       : NULL;
	bool structs = e && e->parent == (int)at;

	if (is_text(m)) {
		const char *s = (const char *)data + m->offset + delta;
		g_autofree char *text = g_strndup(s, m->count);
		g_autofree char *escaped = g_strescape(text, NULL);

		g_string_append_printf(out, "\"%s\"", escaped);
		return;
	}
	g_string_append_c(out, '[');
	for (uint64_t i = 0; i < m->count; i++) {
		uint64_t off = delta + i * m->elem_size;

		if (i)
			g_string_append(out, ", ");
		if (i == ARRAY_SHOWN) {
			g_string_append(out, "...");
			break;
		}
		if (structs)
			append_children(out, members, at + 1, data, len, off,
					true);
		else
			append_scalar(out, m, data + m->offset + off,
				      m->elem_size);
	}
	g_string_append_c(out, ']');
}

/*
 * Member at of a layout, its bytes at its offset plus delta (elements of
 * arrays of structs lie delta further on); "?" where the data ends.
 */
static void append_member(GString *out, GPtrArray *members, guint at,
			  const uint8_t *data, size_t len, uint64_t delta)
{
	const struct member *m = members->pdata[at];

	if (m->offset + delta + m->size > len) {
		g_string_append_c(out, '?');
		return;
	}
	if (m->flags & MEMBER_ARRAY)
		append_array(out, members, at, data, len, delta);
	else if (m->flags & (MEMBER_STRUCT | MEMBER_UNION))
		append_children(out, members, at, data, len, delta, true);
	else
		append_scalar(out, m, data + m->offset + delta, m->size);
}

static void append_payload(GString *out, const struct layout *l,
			   GBytes *bytes)
{
	gsize len = 0;
	const uint8_t *data = bytes ? g_bytes_get_data(bytes, &len) : NULL;

	if (!data || !l->present || !l->members->len) {
		g_string_append(out, "{}");
		return;
	}
	append_member(out, l->members, 0, data, len, 0);
}

static const struct command *find_command(GPtrArray *commands, uint32_t cmd,
					  enum abi abi)
{
	for (guint i = 0; commands && i < commands->len; i++) {
		const struct command *c = commands->pdata[i];

		if (!c->row_only && c->number[abi] == cmd)
			return c;
	}
	return NULL;
}

/* ---- lines ---- */

static void append_duration(GString *out, uint64_t ns)
{
	if (ns < 1000)
		g_string_append_printf(out, " <%" PRIu64 "ns>", ns);
	else if (ns < 1000000)
		g_string_append_printf(out, " <%.1fus>", ns / 1e3);
	else
		g_string_append_printf(out, " <%.2fms>", ns / 1e6);
}

/* Printable bytes as C would write them, at most 32. */
static void append_bytes(GString *out, const char *hex)
{
	g_autoptr(GBytes) b = hex_bytes(hex);
	gsize len = 0;
	const uint8_t *p = b ? g_bytes_get_data(b, &len) : NULL;

	g_string_append(out, " \"");
	for (gsize i = 0; i < len && i < 32; i++) {
		if (p[i] == '"' || p[i] == '\\')
			g_string_append_printf(out, "\\%c", p[i]);
		else if (g_ascii_isprint(p[i]))
			g_string_append_c(out, (char)p[i]);
		else
			g_string_append_printf(out, "\\x%02x", p[i]);
	}
	g_string_append_c(out, '"');
	if (len > 32)
		g_string_append(out, "...");
}

static void append_ioctl(GString *out, const struct json *j,
			 GPtrArray *commands)
{
	uint32_t cmd = (uint32_t)unum(j, "cmd");
	const char *abi = str(j, "abi");
	enum abi a = abi && !strcmp(abi, "i386") ? ABI_I386 : ABI_X86_64;
	const struct command *c = find_command(commands, cmd, a);
	/* The header's name: the model's compat row may have its own. */
	const char *name = c ? c->name : str(j, "name");
	const char *arg = str(j, "arg");

	g_string_append_printf(out, "(%s%s0x%08x, %s, %" PRIu64 " bytes)",
			       name ? name : "", name ? " " : "", cmd,
			       abi ? abi : "?", unum(j, "size"));
	if (c) {
		g_autoptr(GBytes) in = payload_at(member(j, "in"), arg);
		g_autoptr(GBytes) out_bytes = payload_at(member(j, "out"), arg);

		g_string_append(out, " in ");
		append_payload(out, &c->layout[a], in);
		g_string_append(out, " out ");
		append_payload(out, &c->layout[a], out_bytes);
	} else {
		g_string_append(out, " in ");
		append_ranges(out, member(j, "in"));
		g_string_append(out, " out ");
		append_ranges(out, member(j, "out"));
	}
	if (unum(j, "round_trips"))
		g_string_append_printf(out, " round trips %" PRIu64,
				       unum(j, "round_trips"));
}

/* "17:48:45.354489" of "2026-12-05T16:48:45.354489Z": local time, as
 * strace -t prints it. */
static void append_clock(GString *out, const char *time)
{
	g_autoptr(GDateTime) utc = time ? g_date_time_new_from_iso8601(time,
								       NULL)
					: NULL;
	g_autoptr(GDateTime) local = utc ? g_date_time_to_local(utc) : NULL;
	g_autofree char *hms = local ? g_date_time_format(local, "%H:%M:%S")
				     : NULL;

	if (hms)
		g_string_append_printf(out, "%s.%06d", hms,
				       g_date_time_get_microsecond(local));
	else
		g_string_append(out, time ? time : "?");
}

bool cusemu_trace_print(GString *out, const char *line, GPtrArray *commands)
{
	autojson struct json *j = json_parse(line);
	const char *op = str(j, "op");
	const char *error = str(j, "error");
	const char *abi = str(j, "abi");

	if (!j || j->kind != J_OBJECT)
		return false;
	if (member(j, "trace"))
		return true;
	if (num(j, "lost")) {
		g_string_append_printf(out, "... %s lines lost: this reader "
					    "was too slow\n",
				       num(j, "lost"));
		return true;
	}
	if (!op)
		return false;
	append_clock(out, str(j, "time"));
	g_string_append_printf(out, " %s %s %s %s",
			       str(j, "node") ? str(j, "node") : "?",
			       num(j, "pid") ? num(j, "pid") : "?",
			       str(j, "comm") ? str(j, "comm") : "?", op);
	if (!strcmp(op, "ioctl"))
		append_ioctl(out, j, commands);
	else if (!strcmp(op, "read") || !strcmp(op, "write"))
		g_string_append_printf(out, "(%s, %" PRIu64 ")",
				       abi ? abi : "?", unum(j, "size"));
	else
		g_string_append_printf(out, "(%s)", abi ? abi : "?");
	if (error)
		g_string_append_printf(out, " = -1 %s", error);
	else if (!strcmp(op, "poll"))
		g_string_append_printf(out, " = 0x%" PRIx64,
				       unum(j, "result"));
	else
		g_string_append_printf(out, " = %s",
				       num(j, "result") ? num(j, "result")
							: "?");
	if (!error && (!strcmp(op, "read") || !strcmp(op, "write")))
		append_bytes(out, str(j, "data"));
	append_duration(out, unum(j, "duration_ns"));
	g_string_append_c(out, '\n');
	return true;
}
