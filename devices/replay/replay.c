/* SPDX-License-Identifier: MIT */
/*
 * replay: answers a node's calls from a recording (JSON lines in the trace
 * format of docs/daemon.md), without the device that was recorded. Each open
 * file is answered in the order of a recorded open file, one of those whose
 * calls it has made so far: ioctls and writes matched by their input bytes,
 * reads given as they came; the rules are in docs/replay.md.
 */
#define G_LOG_DOMAIN "cusemu-replay"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <linux/i2c-dev.h>
#include <linux/rtc.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"
#include "passthrough.h"

/* The longest line a recording may have: 128 KiB of data each way, in hex,
 * and the rest. */
#define REPLAY_LINE_MAX (1024u * 1024u)
/* How deep a line may nest arrays and objects. json-glib parses them by
 * recursion, so 100,000 '[' would overflow the stack; a recording needs 3. */
#define REPLAY_DEPTH_MAX 64
/* How long a read with nothing left to give sleeps before it looks again
 * whether its caller gave up (which wakes it anyway). */
#define REPLAY_READ_RECHECK_US G_TIME_SPAN_SECOND
/* Readiness a read still to come gives. */
#define REPLAY_POLL_READ (POLLIN | POLLRDNORM)

enum replay_op { REPLAY_IOCTL, REPLAY_READ, REPLAY_WRITE, REPLAY_POLL };

/*
 * One user range of a recorded ioctl. Its live address is its base plus
 * delta: the base is arg for a range with no parent, else the pointer the
 * live caller holds at byte slot of in range parent.
 */
struct replay_range {
	uint64_t addr;		/* as recorded */
	uint32_t len;
	uint8_t *data;		/* recorded bytes, have of them */
	uint32_t have;
	int parent;		/* index into in[], or -1: at arg */
	uint32_t slot;
	int64_t delta;
	/* in ranges: 1 where a byte belongs to a pointer slot, else NULL */
	uint8_t *skip;
};

struct replay_call {
	unsigned int line;	/* in the file, from 1 */
	enum replay_op op;
	unsigned int cmd;
	char *name;		/* the command's name, or NULL */
	bool compat;		/* recorded from an i386 caller */
	uint64_t arg;
	GArray *in, *out;	/* struct replay_range */
	uint8_t *data;		/* read, write: the bytes */
	size_t len;
	long result;
	int error;		/* errno, or 0 */
	/* Why this line answers nothing (cut data, a range no pointer
	 * reaches), or NULL. */
	const char *unusable;
	/* The recorded open file it was made on: 0 before any open line,
	 * then one for each. */
	unsigned int seq;
	int next;		/* index of its file's next step, or -1 */
	bool twin;		/* made for the other ABI from the call before */
};

/* Where a live open file is in one recorded open file it may follow. */
struct replay_place {
	unsigned int seq;	/* the recorded file */
	int next;		/* index into calls of its next step, or -1 */
	int last;		/* the line of it that answered last, or -1 */
};

/*
 * A live open file's candidates: the recorded open files whose calls it
 * has made so far in their order (the call answered last may repeat),
 * each with its place. Several may begin alike (i2cset and i2cdump both
 * with I2C_FUNCS and I2C_SLAVE), so the set narrows call by call; the one
 * the file follows gives the answers while it stays in the set.
 */
struct replay_candidates {
	GArray *places;		/* struct replay_place, in recorded order */
	int follows;		/* the seq it follows, or -1 before an answer */
};

/* A live call, as matched against the recorded ones. */
struct replay_live {
	enum replay_op op;
	bool compat;
	unsigned int cmd;	/* ioctl */
	unsigned long arg;
	const char *buf;	/* write */
	size_t size;
	/* A recorded ioctl of the caller's ABI matches: the other ABI's may
	 * not answer (replay_fetch named none of their ranges). */
	bool own_abi;
};

struct replay {
	char *file;
	bool strict;
	unsigned int node_line;	/* where the node's name was read */
	GPtrArray *calls;	/* struct replay_call *, in recorded order */
	unsigned int reads;	/* recorded reads that returned data */
	uint32_t poll_rest;	/* what polls answer, but reads to come */
	unsigned int seqs;	/* recorded open files, seq 0 included */
	int *first;		/* of each: the index of its first step, or -1 */
	/* While loading: the recorded file of each caller's pid. */
	GHashTable *seq_of_pid;

	GMutex lock;		/* guards what follows */
	GCond more;		/* never signalled: reads sleep on it */
	/* Of each recorded file: the live files that followed it to their
	 * end or follow it now. */
	unsigned int *followers;
	GPtrArray *files;	/* struct replay_candidates *, of live files */
	unsigned int read_given;
	unsigned int answered;
	unsigned int unmatched;
	unsigned int out_of_order;
};

/* ---- loading ---- */

static void range_clear(gpointer p)
{
	struct replay_range *r = p;

	g_free(r->data);
	g_free(r->skip);
}

static void call_free(gpointer p)
{
	struct replay_call *c = p;

	if (!c)
		return;
	g_free(c->name);
	if (c->in)
		g_array_unref(c->in);
	if (c->out)
		g_array_unref(c->out);
	g_free(c->data);
	g_free(c);
}

static GArray *ranges_new(void)
{
	GArray *a = g_array_new(FALSE, TRUE, sizeof(struct replay_range));

	g_array_set_clear_func(a, range_clear);
	return a;
}

/* An errno from its name ("EINVAL") or its number as a string. */
static int errno_from_name(const char *name)
{
	char *end;
	long n = strtol(name, &end, 10);

	if (*name && !*end)
		return n > 0 && n < 4096 ? (int)n : 0;
	for (int e = 1; e < 600; e++) {
		const char *s = strerrorname_np(e);

		if (s && !strcmp(s, name))
			return e;
	}
	return 0;
}

static bool parse_hex(const char *hex, uint8_t **out, uint32_t *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > CUSEMU_USER_MAX_BYTES * 8)
		return false;
	*out = g_malloc(n / 2 + 1);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = g_ascii_xdigit_value(hex[2 * i]);
		int lo = g_ascii_xdigit_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			g_clear_pointer(out, g_free);
			return false;
		}
		(*out)[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = (uint32_t)(n / 2);
	return true;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*v = g_ascii_strtoull(s, &end, 0);
	return !errno && !*end;
}

/*
 * An error about a line of the recording names the file, the line and what
 * was expected there, and quotes nothing of the line: the daemon may read a
 * file that whoever asked for it (cusemuctl add) may not, and its errors
 * must not show them what it holds.
 */
G_GNUC_PRINTF(4, 5)
static bool line_error(char **why, const char *file, unsigned int line,
		       const char *format, ...)
{
	g_autofree char *msg = NULL;
	va_list args;

	va_start(args, format);
	msg = g_strdup_vprintf(format, args);
	va_end(args);
	*why = g_strdup_printf("%s:%u: %s", file, line, msg);
	return false;
}

static const char *member_string(JsonObject *o, const char *key)
{
	JsonNode *n = json_object_get_member(o, key);

	return n && JSON_NODE_HOLDS_VALUE(n) &&
			       json_node_get_value_type(n) == G_TYPE_STRING
		       ? json_node_get_string(n)
		       : NULL;
}

static bool member_int(JsonObject *o, const char *key, int64_t *v)
{
	JsonNode *n = json_object_get_member(o, key);

	if (!n || !JSON_NODE_HOLDS_VALUE(n) ||
	    json_node_get_value_type(n) != G_TYPE_INT64)
		return false;
	*v = json_node_get_int(n);
	return true;
}

static bool member_cut(JsonObject *o)
{
	return json_object_has_member(o, "cut") &&
	       json_object_get_boolean_member_with_default(o, "cut", FALSE);
}

/* One direction's ranges of an ioctl line. */
static bool load_ranges(JsonObject *o, const char *key, GArray *into,
			struct replay_call *c, const char *file, char **why)
{
	JsonArray *a;

	if (!json_object_has_member(o, key) ||
	    !JSON_NODE_HOLDS_ARRAY(json_object_get_member(o, key)))
		return line_error(why, file, c->line,
				  "an ioctl needs an array \"%s\"", key);
	a = json_object_get_array_member(o, key);
	for (guint i = 0; i < json_array_get_length(a); i++) {
		JsonNode *n = json_array_get_element(a, i);
		struct replay_range r = { .parent = -1 };
		JsonObject *ro;
		const char *hex;
		int64_t len;

		if (!JSON_NODE_HOLDS_OBJECT(n))
			return line_error(why, file, c->line,
					  "%s[%u] is not an object", key, i);
		ro = json_node_get_object(n);
		hex = member_string(ro, "data");
		if (!parse_u64(member_string(ro, "addr"), &r.addr) ||
		    !member_int(ro, "len", &len) || len < 0 ||
		    len > CUSEMU_USER_MAX_BYTES || !hex)
			return line_error(why, file, c->line,
					  "%s[%u] needs \"addr\" (\"0x...\"), "
					  "\"len\" (at most %u) and \"data\"",
					  key, i, CUSEMU_USER_MAX_BYTES);
		r.len = (uint32_t)len;
		if (!parse_hex(hex, &r.data, &r.have) || r.have > r.len) {
			g_free(r.data);
			return line_error(why, file, c->line,
					  "%s[%u]: \"data\" is not hex of at "
					  "most \"len\" bytes", key, i);
		}
		if (member_cut(ro))
			c->unusable = "its data was cut when recorded";
		else if (into == c->in && r.have < r.len)
			c->unusable = "its input was not all recorded";
		g_array_append_val(into, r);
	}
	return true;
}

/*
 * Where a range's live address comes from: arg, or a pointer of the
 * caller's ABI width, aligned, among the recorded bytes of an earlier in
 * range (before, in order: in ranges before it, or any in range for out).
 */
static bool find_base(struct replay_call *c, struct replay_range *r,
		      guint before)
{
	unsigned int psize = c->compat ? 4 : 8;

	for (guint i = 0; i < before; i++) {
		struct replay_range *p =
			&g_array_index(c->in, struct replay_range, i);

		for (uint32_t off = 0; off + psize <= p->have; off++) {
			uint64_t v = 0;

			if ((p->addr + off) % psize)
				continue;
			memcpy(&v, p->data + off, psize);
			if (v != r->addr)
				continue;
			r->parent = (int)i;
			r->slot = off;
			r->delta = 0;
			if (!p->skip)
				p->skip = g_malloc0(p->len);
			memset(p->skip + off, 1, psize);
			return true;
		}
	}
	r->parent = -1;
	r->delta = (int64_t)(r->addr - c->arg);
	/* At arg or in the first page after it: a payload at arg. */
	return r->addr >= c->arg && r->addr - c->arg < 4096;
}

static void map_ranges(struct replay_call *c)
{
	for (guint i = 0; i < c->in->len; i++) {
		struct replay_range *r =
			&g_array_index(c->in, struct replay_range, i);

		if (!find_base(c, r, i) && !c->unusable)
			c->unusable = "an input range is reached through no "
				      "pointer the recording shows";
	}
	for (guint i = 0; i < c->out->len; i++) {
		struct replay_range *r =
			&g_array_index(c->out, struct replay_range, i);
		bool found = false;

		/* Read and written back (_IOWR): as its in range. */
		for (guint j = 0; j < c->in->len && !found; j++) {
			struct replay_range *in =
				&g_array_index(c->in, struct replay_range, j);

			if (in->addr == r->addr) {
				r->parent = in->parent;
				r->slot = in->slot;
				r->delta = in->delta;
				found = true;
			}
		}
		if (!found && !find_base(c, r, c->in->len) && !c->unusable)
			c->unusable = "an output range is reached through no "
				      "pointer the recording shows";
	}
}

/*
 * Holes of uapi structs: padding a program leaves as its stack had it, so
 * a replay must not compare it. Only the structs of the devices cusemu
 * emulates are known; other commands are compared byte for byte.
 */
struct replay_hole {
	unsigned int cmd;
	int abi;		/* 0: both, 64: x86_64, 32: i386 */
	guint range;		/* which in range, in recorded order */
	uint32_t stride;	/* an array of structs of this size, or 0 */
	uint32_t off, len;
};

static const struct replay_hole replay_holes[] = {
	/* struct i2c_smbus_ioctl_data: read_write, command, 2, size... */
	{ I2C_SMBUS, 0, 0, 0, 2, 2 },
	/* struct i2c_rdwr_ioctl_data: msgs, nmsgs, 4 (x86_64) */
	{ I2C_RDWR, 64, 0, 0, 12, 4 },
	/* struct i2c_msg: addr, flags, len, 2, buf */
	{ I2C_RDWR, 64, 1, 16, 6, 2 },
	{ I2C_RDWR, 32, 1, 12, 6, 2 },
	/* struct rtc_wkalrm: enabled, pending, 2, time */
	{ RTC_WKALM_SET, 0, 0, 0, 2, 2 },
};

static void mark_holes(struct replay_call *c)
{
	for (size_t i = 0; i < G_N_ELEMENTS(replay_holes); i++) {
		const struct replay_hole *h = &replay_holes[i];
		struct replay_range *r;

		if (h->cmd != c->cmd || h->range >= c->in->len ||
		    (h->abi && h->abi != (c->compat ? 32 : 64)))
			continue;
		r = &g_array_index(c->in, struct replay_range, h->range);
		if (!r->skip)
			r->skip = g_malloc0(r->len);
		for (uint32_t at = 0; at + h->off + h->len <= r->len;
		     at += h->stride) {
			memset(r->skip + at + h->off, 1, h->len);
			if (!h->stride)
				break;
		}
	}
}

static bool load_ioctl(JsonObject *o, struct replay_call *c,
		       const char *file, char **why)
{
	int64_t cmd;
	const char *name = member_string(o, "name");

	if (!member_int(o, "cmd", &cmd) || cmd < 0 || cmd > G_MAXUINT32 ||
	    !parse_u64(member_string(o, "arg"), &c->arg))
		return line_error(why, file, c->line,
				  "an ioctl needs \"cmd\" (a number) and "
				  "\"arg\" (\"0x...\")");
	c->cmd = (unsigned int)cmd;
	c->name = g_strdup(name);
	c->in = ranges_new();
	c->out = ranges_new();
	if (!load_ranges(o, "in", c->in, c, file, why) ||
	    !load_ranges(o, "out", c->out, c, file, why))
		return false;
	map_ranges(c);
	mark_holes(c);
	return true;
}

static bool load_data(JsonObject *o, struct replay_call *c,
		      const char *file, char **why)
{
	const char *hex = member_string(o, "data");
	uint32_t len = 0;

	if (!hex)
		hex = "";
	if (!parse_hex(hex, &c->data, &len))
		return line_error(why, file, c->line,
				  "\"data\" is not hex");
	c->len = len;
	if (member_cut(o))
		c->unusable = "its data was cut when recorded";
	return true;
}

static bool load_result(JsonObject *o, struct replay_call *c,
			const char *file, char **why)
{
	const char *error = member_string(o, "error");
	int64_t result;

	if (error) {
		c->error = errno_from_name(error);
		if (!c->error)
			return line_error(why, file, c->line,
					  "\"error\" is neither an errno "
					  "name (\"EINVAL\") nor a number "
					  "from 1 to 4095");
		return true;
	}
	if (!member_int(o, "result", &result))
		return line_error(why, file, c->line,
				  "needs \"result\" (a number) or \"error\"");
	c->result = (long)result;
	return true;
}

static bool load_header(struct replay *rp, JsonObject *o, char **node,
			char **why)
{
	const char *trace = member_string(o, "trace");
	int64_t version;

	if (!trace || strcmp(trace, "cusemu") || !member_int(o, "version",
							    &version))
		return line_error(why, rp->file, 1,
				  "not a cusemu recording: the first line "
				  "must be {\"trace\":\"cusemu\","
				  "\"version\":1,...}");
	if (version != 1)
		return line_error(why, rp->file, 1,
				  "a version of the trace format other than "
				  "1, the one this cusemud reads");
	if (json_object_has_member(o, "nodes") &&
	    JSON_NODE_HOLDS_ARRAY(json_object_get_member(o, "nodes"))) {
		JsonArray *a = json_object_get_array_member(o, "nodes");

		JsonNode *n = json_array_get_length(a) == 1
				      ? json_array_get_element(a, 0)
				      : NULL;

		if (n && JSON_NODE_HOLDS_VALUE(n) &&
		    json_node_get_value_type(n) == G_TYPE_STRING) {
			*node = g_strdup(json_node_get_string(n));
			rp->node_line = 1;
		}
	}
	return true;
}

/* One line after the header: a call of node (or NULL: skipped). */
static bool load_line(struct replay *rp, JsonObject *o, unsigned int line,
		      char **node, char **why)
{
	g_autoptr(GPtrArray) keep = NULL;
	struct replay_call *c;
	const char *op = member_string(o, "op");
	const char *n = member_string(o, "node");
	const char *abi = member_string(o, "abi");
	int64_t lost, pid;

	if (member_int(o, "lost", &lost))
		return line_error(why, rp->file, line,
				  "the recording lost lines here: record "
				  "again");
	if (!g_strcmp0(member_string(o, "record"), "full")) {
		/* record-max= ended it: what came before is whole. */
		g_message("%s:%u: the recording reached its record-max= here; "
			  "the calls after it were not recorded",
			  rp->file, line);
		return true;
	}
	if (!op || !n)
		return line_error(why, rp->file, line,
				  "a call needs \"op\" and \"node\"");
	if (!*node) {
		*node = g_strdup(n);
		rp->node_line = line;
	} else if (strcmp(*node, n)) {
		return line_error(why, rp->file, line,
				  "a call of another node than line %u "
				  "names: a replay answers for one node; "
				  "cut the recording down to one (jq -c "
				  "'select(.node==\"NODE\" or .trace)')",
				  rp->node_line);
	}
	if (!member_int(o, "pid", &pid))
		pid = -1;
	if (!strcmp(op, "open")) {
		/* Its calls follow, from this pid, or the latest open's. */
		g_hash_table_insert(rp->seq_of_pid, GINT_TO_POINTER((int)pid),
				    GUINT_TO_POINTER(rp->seqs));
		rp->seqs++;
		return true;
	}
	c = g_new0(struct replay_call, 1);
	c->line = line;
	c->compat = abi && !strcmp(abi, "i386");
	c->seq = rp->seqs - 1;
	if (g_hash_table_contains(rp->seq_of_pid, GINT_TO_POINTER((int)pid)))
		c->seq = GPOINTER_TO_UINT(g_hash_table_lookup(
			rp->seq_of_pid, GINT_TO_POINTER((int)pid)));
	keep = g_ptr_array_new_with_free_func(call_free);
	g_ptr_array_add(keep, c);
	if (!strcmp(op, "ioctl")) {
		c->op = REPLAY_IOCTL;
		if (!load_ioctl(o, c, rp->file, why))
			return false;
	} else if (!strcmp(op, "read") || !strcmp(op, "write")) {
		c->op = op[0] == 'r' ? REPLAY_READ : REPLAY_WRITE;
		if (!load_data(o, c, rp->file, why))
			return false;
	} else if (!strcmp(op, "poll")) {
		c->op = REPLAY_POLL;
	} else if (!strcmp(op, "release")) {
		return true;
	} else {
		return line_error(why, rp->file, line,
				  "\"op\" is none of open, read, write, "
				  "poll, release and ioctl");
	}
	if (!load_result(o, c, rp->file, why))
		return false;
	g_ptr_array_add(rp->calls, g_ptr_array_steal_index(keep, 0));
	return true;
}

/* What json-glib expected, in words of our own: its message quotes the
 * line. */
static const char *json_expected(const GError *error)
{
	if (error->domain != JSON_PARSER_ERROR)
		return "expected UTF-8 text";
	switch (error->code) {
	case JSON_PARSER_ERROR_TRAILING_COMMA:
		return "a comma where a value was expected";
	case JSON_PARSER_ERROR_MISSING_COMMA:
		return "expected a comma between values";
	case JSON_PARSER_ERROR_MISSING_COLON:
		return "expected a colon after a member's name";
	case JSON_PARSER_ERROR_INVALID_BAREWORD:
		return "a bare word where a value (a string, a number, an "
		       "array, an object, true, false or null) or the line's "
		       "end was expected";
	case JSON_PARSER_ERROR_EMPTY_MEMBER_NAME:
		return "a member with an empty name";
	case JSON_PARSER_ERROR_INVALID_DATA:
		return "expected UTF-8 text";
	default:
		return "expected one JSON object, whole, on the line";
	}
}

/* The lines that answer nothing, said once the recording is accepted:
 * their names come from the file. */
static void say_unusable(const struct replay *rp)
{
	static const char *const ops[] = {
		[REPLAY_IOCTL] = "ioctl", [REPLAY_READ] = "read",
		[REPLAY_WRITE] = "write", [REPLAY_POLL] = "poll",
	};

	for (guint i = 0; i < rp->calls->len; i++) {
		const struct replay_call *c = rp->calls->pdata[i];

		if (c->unusable)
			g_message("%s:%u: %s%s%s is not replayed: %s",
				  rp->file, c->line, ops[c->op],
				  c->name ? " " : "", c->name ? c->name : "",
				  c->unusable);
	}
}

enum replay_shape { REPLAY_SHAPE_OK, REPLAY_SHAPE_DEEP, REPLAY_SHAPE_LAX };

/*
 * A look at a line's nesting before json-glib parses it. Brackets inside
 * strings do not count; a comment or a single-quoted string, which
 * json-glib takes but JSON and the trace never have, is refused, so that
 * this scan and json-glib's see the same strings.
 */
static enum replay_shape line_shape(const char *s)
{
	unsigned int depth = 0;
	bool string = false;

	for (; *s; s++) {
		if (string) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == '"')
				string = false;
		} else if (*s == '"') {
			string = true;
		} else if (*s == '\'' || *s == '/') {
			return REPLAY_SHAPE_LAX;
		} else if (*s == '[' || *s == '{') {
			if (++depth > REPLAY_DEPTH_MAX)
				return REPLAY_SHAPE_DEEP;
		} else if ((*s == ']' || *s == '}') && depth) {
			depth--;
		}
	}
	return REPLAY_SHAPE_OK;
}

/* How the daemon begins each line of a call (trace.c). */
#define CALL_LINE_START "{\"time\":\""

/*
 * Whether s, the last line of a file (no newline after it) and no JSON,
 * begins as a call's line: what a write(2) of the daemon left when SIGKILL
 * stopped it between two pages (it writes each line in one write(2)). Not
 * an error: the calls answered before it are all in the file.
 */
static bool cut_short(const char *s)
{
	return !strncmp(s, CALL_LINE_START,
			MIN(strlen(s), strlen(CALL_LINE_START)));
}

static bool load_text(struct replay *rp, char *text, char **node,
		      char **why)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	unsigned int line = 0;
	char *next;

	for (char *s = text; s && *s; s = next) {
		g_autoptr(GError) error = NULL;
		JsonNode *root;

		next = strchr(s, '\n');
		if (next)
			*next++ = '\0';
		line++;
		if (!*s && line > 1)
			continue;
		if (strlen(s) > REPLAY_LINE_MAX)
			return line_error(why, rp->file, line,
					  "line longer than %u bytes",
					  REPLAY_LINE_MAX);
		switch (line_shape(s)) {
		case REPLAY_SHAPE_DEEP:
			return line_error(why, rp->file, line,
					  "arrays and objects nested deeper "
					  "than %u (a recording needs 3)",
					  REPLAY_DEPTH_MAX);
		case REPLAY_SHAPE_LAX:
			return line_error(why, rp->file, line,
					  "not JSON: a comment or a "
					  "single-quoted string, which a "
					  "recording never has");
		case REPLAY_SHAPE_OK:
			break;
		}
		if (!json_parser_load_from_data(parser, s, -1, &error)) {
			if (!next && line > 1 && cut_short(s)) {
				g_message("%s:%u: the last line is cut short "
					  "(the call in flight when the "
					  "recording daemon was killed): not "
					  "replayed", rp->file, line);
				break;
			}
			return line_error(why, rp->file, line, "not JSON: %s",
					  json_expected(error));
		}
		root = json_parser_get_root(parser);
		if (!root || !JSON_NODE_HOLDS_OBJECT(root))
			return line_error(why, rp->file, line,
					  "not a JSON object");
		if (line == 1) {
			if (!load_header(rp, json_node_get_object(root), node,
					 why))
				return false;
		} else if (!load_line(rp, json_node_get_object(root), line,
				      node, why)) {
			return false;
		}
	}
	if (!line)
		return line_error(why, rp->file, 1, "empty recording");
	return true;
}

/*
 * Whether c is a step of its recorded file's sequence: polls are answered
 * from their sum, reads that failed were matters of timing (EINTR,
 * EAGAIN), and a twin is an alternative of the call before it.
 */
static bool sequenced(const struct replay_call *c)
{
	if (c->unusable || c->twin || c->op == REPLAY_POLL)
		return false;
	return c->op != REPLAY_READ || (!c->error && c->result > 0);
}

/*
 * What polls answer: every readiness a recorded poll gave; when the
 * recording has reads, readability only while one is still to come. Each
 * recorded file's steps, linked in their order from its first.
 */
static void summarise(struct replay *rp)
{
	uint32_t polled = 0;

	rp->first = g_new(int, rp->seqs);
	rp->followers = g_new0(unsigned int, rp->seqs);
	for (unsigned int s = 0; s < rp->seqs; s++)
		rp->first[s] = -1;
	for (guint i = rp->calls->len; i-- > 0;) {
		struct replay_call *c = rp->calls->pdata[i];

		c->next = -1;
		if (c->op == REPLAY_POLL && !c->error)
			polled |= (uint32_t)c->result;
		if (!sequenced(c))
			continue;
		if (c->op == REPLAY_READ)
			rp->reads++;
		c->next = rp->first[c->seq];
		rp->first[c->seq] = (int)i;
	}
	rp->poll_rest = rp->reads ? polled & ~(uint32_t)REPLAY_POLL_READ
				  : polled;
}

/* ---- matching an ioctl ---- */

/*
 * How a live ioctl compares with a recorded one: the first range and byte
 * that differ, or that is still on its way.
 */
enum replay_verdict { REPLAY_MATCH, REPLAY_DIFFERS, REPLAY_PENDING };

struct replay_diff {
	guint range;
	uint32_t offset;
	int live, recorded;	/* -1: no byte there */
};

/* The live address of range r, from the live pointers of its parents. */
static bool live_addr(const struct replay_call *c,
		      const struct replay_range *r, unsigned long arg,
		      const uint64_t *in_addr, uint64_t *addr)
{
	uint64_t base = arg;

	if (r->parent >= 0) {
		uint32_t v32;

		if (c->compat) {
			if (cusemu_copy_from_user(&v32,
						  in_addr[r->parent] + r->slot,
						  4))
				return false;
			base = v32;
		} else if (cusemu_copy_from_user(&base,
						 in_addr[r->parent] + r->slot,
						 8)) {
			return false;
		}
	}
	*addr = base + (uint64_t)r->delta;
	return true;
}

/*
 * Names the in ranges of c that its arrived bytes reach, and compares
 * them. The ranges of one level go out in one retry: a range whose parent
 * has not arrived waits for the next.
 */
static enum replay_verdict compare_in(const struct replay_call *c,
				      unsigned long arg, uint64_t *in_addr,
				      bool *arrived, struct replay_diff *diff)
{
	g_autofree uint8_t *buf = NULL;
	enum replay_verdict v = REPLAY_MATCH;

	for (guint i = 0; i < c->in->len; i++) {
		const struct replay_range *r =
			&g_array_index(c->in, struct replay_range, i);

		if (r->parent >= 0 && !arrived[r->parent]) {
			v = REPLAY_PENDING;
			continue;
		}
		if (!live_addr(c, r, arg, in_addr, &in_addr[i]))
			return REPLAY_DIFFERS;
		buf = g_realloc(buf, r->len + 1);
		if (cusemu_copy_from_user(buf, in_addr[i], r->len)) {
			v = REPLAY_PENDING;
			continue;
		}
		arrived[i] = true;
		for (uint32_t k = 0; k < r->len; k++) {
			if (r->skip && r->skip[k])
				continue;
			if (k < r->have && buf[k] == r->data[k])
				continue;
			diff->range = i;
			diff->offset = k;
			diff->live = buf[k];
			diff->recorded = k < r->have ? r->data[k] : -1;
			return REPLAY_DIFFERS;
		}
	}
	return v;
}

/* Calls with no ranges: arg is a value. */
static bool takes_value(const struct replay_call *c)
{
	return !c->in->len && !c->out->len;
}

/*
 * The live addresses of c's in ranges go to in_addr, and whether each has
 * arrived to arrived (both of c->in->len entries, or NULL).
 */
static enum replay_verdict compare(const struct replay_call *c,
				   unsigned long arg, uint64_t *in_addr,
				   bool *arrived, struct replay_diff *diff)
{
	g_autofree uint64_t *own_addr = NULL;
	g_autofree bool *own_arrived = NULL;

	*diff = (struct replay_diff){ .live = -1, .recorded = -1 };
	if (takes_value(c))
		return c->arg == arg ? REPLAY_MATCH : REPLAY_DIFFERS;
	if (!in_addr)
		in_addr = own_addr = g_new0(uint64_t, c->in->len + 1);
	if (!arrived)
		arrived = own_arrived = g_new0(bool, c->in->len + 1);
	return compare_in(c, arg, in_addr, arrived, diff);
}

static bool candidate(const struct replay_call *c, unsigned int cmd)
{
	return c->op == REPLAY_IOCTL && c->cmd == cmd && !c->unusable;
}

/*
 * Names what each recorded call of cmd needs while the live bytes agree
 * with it: its in ranges level by level, and its out ranges as soon as
 * the pointer to each has arrived, so a call costs the round trips the
 * device's own would.
 */
static int fetch_abi(struct replay *rp, unsigned int cmd, unsigned long arg,
		     bool compat, bool *alive)
{
	for (guint i = 0; i < rp->calls->len; i++) {
		const struct replay_call *c = rp->calls->pdata[i];
		g_autofree uint64_t *in_addr = NULL;
		g_autofree bool *arrived = NULL;
		struct replay_diff diff;

		if (!candidate(c, cmd) || c->compat != compat)
			continue;
		in_addr = g_new0(uint64_t, c->in->len + 1);
		arrived = g_new0(bool, c->in->len + 1);
		if (compare(c, arg, in_addr, arrived, &diff) == REPLAY_DIFFERS)
			continue;
		*alive = true;
		for (guint k = 0; k < c->out->len; k++) {
			const struct replay_range *r =
				&g_array_index(c->out, struct replay_range, k);
			uint64_t addr;
			int err;

			if (r->parent >= 0 && !arrived[r->parent])
				continue;
			if (!live_addr(c, r, arg, in_addr, &addr))
				continue;
			err = cusemu_fetch_range(addr, 0, r->len);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Names what each recorded call of cmd needs while the live bytes agree
 * with it: its in ranges level by level, and its out ranges as soon as
 * the pointer to each has arrived, so a call costs the round trips the
 * device's own would. The calls of the caller's ABI come first; the
 * other ABI's only when none of them can match (an I2C_FUNCS of 8 bytes
 * must not answer an i386 caller that recorded its own 4).
 */
static int replay_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct replay *rp = dev->priv;
	bool compat = cusemu_in_compat_syscall();
	bool alive = false;
	int err = fetch_abi(rp, cmd, arg, compat, &alive);

	if (err || alive)
		return err;
	return fetch_abi(rp, cmd, arg, !compat, &alive);
}

/* The recorded call of the same command nearest to an unmatched one. */
static void describe_nearest(struct replay *rp, unsigned int cmd,
			     unsigned long arg, GString *out)
{
	const struct replay_call *best = NULL;
	uint64_t best_dist = UINT64_MAX;

	for (guint i = 0; i < rp->calls->len; i++) {
		const struct replay_call *c = rp->calls->pdata[i];
		struct replay_diff diff;

		if (c->op != REPLAY_IOCTL || c->cmd != cmd)
			continue;
		if (c->unusable) {
			g_string_append_printf(out, "; line %u has the "
						    "command but %s",
					       c->line, c->unusable);
			return;
		}
		if (compare(c, arg, NULL, NULL, &diff) == REPLAY_MATCH)
			continue;
		if (takes_value(c))
			g_string_append_printf(out, "; line %u has arg 0x%"
						    G_GINT64_MODIFIER "x",
					       c->line, c->arg);
		else
			g_string_append_printf(out, "; line %u differs first "
						    "in input range %u, byte "
						    "%u: 0x%02x here, 0x%02x "
						    "recorded",
					       c->line, diff.range,
					       diff.offset, diff.live,
					       diff.recorded);
		return;
	}
	for (guint i = 0; i < rp->calls->len; i++) {
		const struct replay_call *c = rp->calls->pdata[i];
		uint64_t d = c->cmd > cmd ? c->cmd - cmd : cmd - c->cmd;

		if (c->op == REPLAY_IOCTL && d < best_dist) {
			best = c;
			best_dist = d;
		}
	}
	if (best)
		g_string_append_printf(out, "; nearest recorded command: "
					    "0x%08x %s (line %u)",
				       best->cmd, best->name ? best->name : "",
				       best->line);
	else
		g_string_append(out, "; the recording holds no ioctl");
}

/*
 * A call the recording does not answer: one line in the log; with
 * strict=true the replay has failed (the daemon exits with status 1 at its
 * end) and the caller gets EIO, else what was asked.
 */
static long unmatched(struct cusemu_device *dev, GString *what, long err)
{
	struct replay *rp = dev->priv;
	char note[CUSEMU_RATELIMIT_NOTE];
	bool say;

	g_mutex_lock(&rp->lock);
	rp->unmatched++;
	g_mutex_unlock(&rp->lock);
	/* A client makes as many as it likes. The first is always said:
	 * under strict, it makes the exit status. */
	say = cusemu_device_ratelimit(dev, note);
	if (rp->strict) {
		if (say)
			cusemu_device_lost(dev, "the replay of %s failed: not "
						"in it: %s%s",
					   rp->file, what->str, note);
		return -EIO;
	}
	if (say)
		g_message("%s: not in %s: %s%s", dev->name, rp->file,
			  what->str, note);
	return err;
}

/* The recorded name of a command, if any line has one. */
static const char *cmd_name(const struct replay *rp, unsigned int cmd)
{
	for (guint i = 0; i < rp->calls->len; i++) {
		const struct replay_call *c = rp->calls->pdata[i];

		if (c->op == REPLAY_IOCTL && c->cmd == cmd && c->name)
			return c->name;
	}
	return NULL;
}

/* ---- the order of the calls, per open file ---- */

static bool matches(const struct replay_call *c, const struct replay_live *l)
{
	struct replay_diff diff;

	if (c->op != l->op || c->unusable)
		return false;
	switch (l->op) {
	case REPLAY_IOCTL:
		if (c->compat != l->compat && l->own_abi)
			return false;
		return c->cmd == l->cmd &&
		       compare(c, l->arg, NULL, NULL, &diff) == REPLAY_MATCH;
	case REPLAY_WRITE:
		return c->len == l->size && !memcmp(c->data, l->buf, l->size);
	case REPLAY_READ:
		return sequenced(c);
	default:
		return false;
	}
}

static struct replay_call *call_at(const struct replay *rp, guint i)
{
	return rp->calls->pdata[i];
}

/* The step at i, or its twin, where it matches l: the caller's ABI first. */
static int match_step(const struct replay *rp, guint i,
		      const struct replay_live *l)
{
	bool twin = i + 1 < rp->calls->len && call_at(rp, i + 1)->twin;

	if (twin && call_at(rp, i + 1)->compat == l->compat &&
	    matches(call_at(rp, i + 1), l))
		return (int)i + 1;
	if (matches(call_at(rp, i), l))
		return (int)i;
	if (twin && matches(call_at(rp, i + 1), l))
		return (int)i + 1;
	return -1;
}

/*
 * How well line c suits l's caller: a line of its own ABI, then a twin
 * made for it, then the other ABI's. Reads and writes have one layout.
 */
static unsigned int abi_rank(const struct replay_call *c,
			     const struct replay_live *l)
{
	if (l->op != REPLAY_IOCTL)
		return 0;
	if (c->compat != l->compat)
		return 2;
	return c->twin ? 1 : 0;
}

static struct replay_place *place_at(const struct replay_candidates *f,
				     guint k)
{
	return &g_array_index(f->places, struct replay_place, k);
}

/* The live files other than f that followed recorded file seq. */
static unsigned int others(const struct replay *rp,
			   const struct replay_candidates *f, unsigned int seq)
{
	return rp->followers[seq] - (f->follows == (int)seq);
}

/*
 * Whether f is to follow place a, which answers with line ai, rather than
 * b with line bi: the caller's ABI first, then the recorded file f follows
 * already (its answers stay those of one run), then the one that fewer
 * other live files followed (a recording of two runs answers two runs,
 * each from its start). Else the first in recorded order.
 */
static bool prefer(const struct replay *rp, const struct replay_candidates *f,
		   const struct replay_live *l, const struct replay_place *a,
		   int ai, const struct replay_place *b, int bi)
{
	unsigned int ra = abi_rank(call_at(rp, (guint)ai), l);
	unsigned int rb = abi_rank(call_at(rp, (guint)bi), l);
	bool fa = f->follows == (int)a->seq, fb = f->follows == (int)b->seq;

	if (ra != rb)
		return ra < rb;
	if (fa != fb)
		return fa;
	return others(rp, f, a->seq) < others(rp, f, b->seq);
}

/* The best of f's places with a line in line[] (one per place), or -1. */
static int best_place(const struct replay *rp,
		      const struct replay_candidates *f,
		      const struct replay_live *l, const int *line)
{
	int best = -1;

	for (guint k = 0; k < f->places->len; k++)
		if (line[k] >= 0 &&
		    (best < 0 || prefer(rp, f, l, place_at(f, k), line[k],
					place_at(f, (guint)best), line[best])))
			best = (int)k;
	return best;
}

/* f follows recorded file seq from now on. */
static void follow(struct replay *rp, struct replay_candidates *f,
		   unsigned int seq)
{
	if (f->follows == (int)seq)
		return;
	if (f->follows >= 0)
		rp->followers[f->follows]--;
	rp->followers[seq]++;
	f->follows = (int)seq;
}

/*
 * p's file answered with line i: a step at p's next or ahead of it moves
 * p past it; a line behind, or the last one again, leaves p where it is.
 */
static void move_to(const struct replay *rp, struct replay_place *p, int i)
{
	int step = call_at(rp, (guint)i)->twin ? i - 1 : i;

	if (p->next >= 0 && step >= p->next)
		p->next = call_at(rp, (guint)step)->next;
	p->last = i;
}

/*
 * f narrowed to its places with a line in line[], each moved past it; f
 * follows the best of them, whose line answers. -1, and f unchanged, when
 * no place has one.
 */
static int narrow(struct replay *rp, struct replay_candidates *f,
		  const struct replay_live *l, const int *line)
{
	int best = best_place(rp, f, l, line);
	guint kept = 0;

	if (best < 0)
		return -1;
	follow(rp, f, place_at(f, (guint)best)->seq);
	best = line[best];
	for (guint k = 0; k < f->places->len; k++) {
		if (line[k] < 0)
			continue;
		move_to(rp, place_at(f, k), line[k]);
		*place_at(f, kept++) = *place_at(f, k);
	}
	g_array_set_size(f->places, kept);
	return best;
}

/*
 * The line of p's file that answers l in its order: its next step (or the
 * step's twin), else the line that answered last, again (a call repeated
 * more often than recorded; not a read, each is given once). -1: none.
 */
static int in_order(const struct replay *rp, const struct replay_place *p,
		    const struct replay_live *l)
{
	int i;

	if (p->next >= 0 && (i = match_step(rp, (guint)p->next, l)) >= 0)
		return i;
	if (p->last >= 0 && l->op != REPLAY_READ &&
	    matches(call_at(rp, (guint)p->last), l))
		return p->last;
	return -1;
}

/* l in the order of f's candidates: f narrows to those whose order it
 * keeps. The line that answers, or -1. */
static int in_order_of(struct replay *rp, struct replay_candidates *f,
		       const struct replay_live *l)
{
	g_autofree int *line = g_new(int, f->places->len + 1);

	for (guint k = 0; k < f->places->len; k++)
		line[k] = in_order(rp, place_at(f, k), l);
	return narrow(rp, f, l, line);
}

/* The first line ahead in p's file that has l, steps skipped, or -1. */
static int ahead(const struct replay *rp, const struct replay_place *p,
		 const struct replay_live *l)
{
	for (int s = p->next; s >= 0; s = call_at(rp, (guint)s)->next) {
		int i = match_step(rp, (guint)s, l);

		if (i >= 0)
			return i;
	}
	return -1;
}

/* The latest line of p's file before its next step that has l, or -1. */
static int behind(const struct replay *rp, const struct replay_place *p,
		  const struct replay_live *l)
{
	guint end = p->next >= 0 ? (guint)p->next : rp->calls->len;
	int latest = -1;

	for (guint i = 0; i < end; i++)
		if (call_at(rp, i)->seq == p->seq && matches(call_at(rp, i), l))
			latest = (int)i;
	return latest;
}

/* The place of the recorded file f follows, or NULL before an answer. */
static struct replay_place *followed(const struct replay_candidates *f)
{
	for (guint k = 0; k < f->places->len; k++)
		if ((int)place_at(f, k)->seq == f->follows)
			return place_at(f, k);
	return NULL;
}

/*
 * A line that has l, out of f's recorded order: the first ahead in a
 * candidate's file (the best candidate's; with move, f narrows to those
 * that have it ahead, moved past it), else the latest behind in the file f
 * follows, else the first anywhere, the caller's ABI first. A read only
 * ahead: each is given once. -1: the recording does not hold it.
 */
static int out_of_order(struct replay *rp, struct replay_candidates *f,
			const struct replay_live *l, bool move)
{
	g_autofree int *line = g_new(int, f->places->len + 1);
	struct replay_place *p = followed(f);
	int i;

	for (guint k = 0; k < f->places->len; k++)
		line[k] = ahead(rp, place_at(f, k), l);
	if (move)
		i = narrow(rp, f, l, line);
	else if ((i = best_place(rp, f, l, line)) >= 0)
		i = line[i];
	if (i >= 0)
		return i;
	if (l->op == REPLAY_READ)
		return -1;
	if (p && (i = behind(rp, p, l)) >= 0) {
		if (move)
			p->last = i;
		return i;
	}
	for (int pass = 0; pass < 2; pass++)
		for (guint k = 0; k < rp->calls->len; k++)
			if ((pass || call_at(rp, k)->compat == l->compat) &&
			    matches(call_at(rp, k), l))
				return (int)k;
	return -1;
}

/* Says in why where l, which line i has, broke f's order: the line that
 * came next in the file f follows. */
static void say_out_of_order(const struct replay *rp,
			     const struct replay_candidates *f, int i,
			     GString *why)
{
	const struct replay_place *p = followed(f);

	g_string_append_printf(why, "; line %u has it, out of the recorded "
				    "order: ",
			       call_at(rp, (guint)i)->line);
	if (!p)
		g_string_append(why, "no recorded open file began with it");
	else if (p->next < 0)
		g_string_append(why, "its recorded file had ended");
	else
		g_string_append_printf(why, "line %u came next",
				       call_at(rp, (guint)p->next)->line);
}

/* The candidates of a live file, made at its first call: every recorded
 * file that has a step, at its start. */
static struct replay_candidates *candidates_of(struct replay *rp,
					       struct cusemu_file *file)
{
	struct replay_candidates *f = file->private_data;

	if (f)
		return f;
	f = g_new0(struct replay_candidates, 1);
	f->places = g_array_new(FALSE, FALSE, sizeof(struct replay_place));
	f->follows = -1;
	for (unsigned int s = 0; s < rp->seqs; s++) {
		struct replay_place p = { .seq = s, .next = rp->first[s],
					  .last = -1 };

		if (p.next >= 0)
			g_array_append_val(f->places, p);
	}
	g_ptr_array_add(rp->files, f);
	file->private_data = f;
	return f;
}

static void candidates_free(gpointer data)
{
	struct replay_candidates *f = data;

	g_array_unref(f->places);
	g_free(f);
}

/*
 * The call that answers l on file, or NULL. Out of the recorded order, a
 * strict replay answers nothing and says in why which line it expected;
 * else the call answers and is counted.
 */
static const struct replay_call *pick(struct replay *rp,
				      struct cusemu_file *file,
				      struct replay_live *l, GString *why)
{
	struct replay_candidates *f;
	int i;

	g_mutex_lock(&rp->lock);
	l->own_abi = false;
	for (guint k = 0; l->op == REPLAY_IOCTL && k < rp->calls->len; k++) {
		const struct replay_call *c = call_at(rp, k);

		if (c->compat == l->compat && matches(c, l)) {
			l->own_abi = true;
			break;
		}
	}
	f = candidates_of(rp, file);
	i = in_order_of(rp, f, l);
	if (i < 0 && rp->strict) {
		i = out_of_order(rp, f, l, false);
		if (i >= 0)
			say_out_of_order(rp, f, i, why);
		i = -1;
	} else if (i < 0) {
		i = out_of_order(rp, f, l, true);
		if (i >= 0)
			rp->out_of_order++;
	}
	if (i >= 0) {
		if (l->op == REPLAY_READ)
			rp->read_given++;
		else
			rp->answered++;
	}
	g_mutex_unlock(&rp->lock);
	return i >= 0 ? call_at(rp, (guint)i) : NULL;
}

static long answer(const struct replay_call *c, unsigned long arg)
{
	g_autofree uint64_t *in_addr = g_new0(uint64_t, c->in->len + 1);
	struct replay_diff diff;

	if (c->error)
		return -c->error;
	/* Fills in_addr: the live addresses the pointers lead to. */
	compare(c, arg, in_addr, NULL, &diff);
	for (guint k = 0; k < c->out->len; k++) {
		const struct replay_range *r =
			&g_array_index(c->out, struct replay_range, k);
		uint64_t addr;

		if (!r->have)
			continue;
		if (!live_addr(c, r, arg, in_addr, &addr) ||
		    cusemu_copy_to_user(addr, r->data, r->have))
			return -EFAULT;
	}
	return c->result;
}

static long replay_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	struct replay *rp = dev->priv;
	struct replay_live l = { .op = REPLAY_IOCTL, .cmd = cmd,
				       .arg = arg,
				       .compat = cusemu_in_compat_syscall() };
	g_autoptr(GString) why = g_string_new(NULL);
	const struct replay_call *c = pick(rp, file, &l, why);
	g_autoptr(GString) what = NULL;
	const char *name;

	if (c)
		return answer(c, arg);
	name = cmd_name(rp, cmd);
	what = g_string_new(NULL);
	g_string_append_printf(what, "ioctl 0x%08x%s%s from %s, arg 0x%lx",
			       cmd, name ? " " : "", name ? name : "",
			       l.compat ? "i386" : "x86_64", arg);
	if (why->len)
		g_string_append(what, why->str);
	else
		describe_nearest(rp, cmd, arg, what);
	return unmatched(dev, what, -ENOIOCTLCMD);
}

/* ---- read, write, poll ---- */

static ssize_t replay_read(struct cusemu_device *dev,
			   struct cusemu_file *file, char *buf, size_t size)
{
	struct replay *rp = dev->priv;
	/* Reads and writes have one layout: their ABI is not asked. */
	struct replay_live l = { .op = REPLAY_READ };
	g_autoptr(GString) why = g_string_new(NULL);
	const struct replay_call *c;
	ssize_t ret;

	/* With no read left to give, wait until the caller gives up. */
	while (!(c = pick(rp, file, &l, why)) && !why->len) {
		if (file->flags & O_NONBLOCK)
			return -EAGAIN;
		if (cusemu_signal_pending())
			return -EINTR;
		g_mutex_lock(&rp->lock);
		cusemu_cond_wait_until(&rp->more, &rp->lock,
				       g_get_monotonic_time() +
					       REPLAY_READ_RECHECK_US);
		g_mutex_unlock(&rp->lock);
	}
	if (!c) {
		g_string_prepend(why, "read");
		return unmatched(dev, why, -EIO);
	}
	ret = (ssize_t)MIN(size, c->len);
	memcpy(buf, c->data, (size_t)ret);
	return ret;
}

static ssize_t replay_write(struct cusemu_device *dev,
			    struct cusemu_file *file, const char *buf,
			    size_t size)
{
	struct replay *rp = dev->priv;
	struct replay_live l = { .op = REPLAY_WRITE, .buf = buf,
				 .size = size };
	g_autoptr(GString) why = g_string_new(NULL);
	const struct replay_call *c = pick(rp, file, &l, why);
	g_autoptr(GString) what = NULL;

	if (c)
		return c->error ? -c->error : c->result;
	what = g_string_new(NULL);
	g_string_append_printf(what, "write of %zu bytes%s", size, why->str);
	return unmatched(dev, what, -EINVAL);
}

/* Whether a recorded read is still to come for f: a step of one of its
 * candidates. Before its first call, any recorded read. */
static bool read_to_come(const struct replay *rp,
			 const struct replay_candidates *f)
{
	if (!f || !rp->reads)
		return rp->reads;
	for (guint k = 0; k < f->places->len; k++)
		for (int s = place_at(f, k)->next; s >= 0;
		     s = call_at(rp, (guint)s)->next)
			if (call_at(rp, (guint)s)->op == REPLAY_READ)
				return true;
	return false;
}

static unsigned int replay_poll(struct cusemu_device *dev,
				struct cusemu_file *file)
{
	struct replay *rp = dev->priv;
	unsigned int mask = rp->poll_rest;

	g_mutex_lock(&rp->lock);
	if (read_to_come(rp, file->private_data))
		mask |= REPLAY_POLL_READ;
	g_mutex_unlock(&rp->lock);
	return mask;
}

static void replay_release(struct cusemu_device *dev,
			   struct cusemu_file *file)
{
	struct replay *rp = dev->priv;

	g_mutex_lock(&rp->lock);
	if (file->private_data)
		g_ptr_array_remove_fast(rp->files, file->private_data);
	file->private_data = NULL;
	g_mutex_unlock(&rp->lock);
}

/* ---- the device ---- */

static int replay_control(struct cusemu_device *dev, char **argv,
			  GString *out)
{
	struct replay *rp = dev->priv;

	if (!argv[0] || strcmp(argv[0], "status") || argv[1]) {
		g_string_append(out, "requests: status");
		return -EINVAL;
	}
	g_mutex_lock(&rp->lock);
	g_string_append_printf(out,
			       "file: %s\nstrict: %s\nlines: %u\n"
			       "answered: %u\nreads: %u of %u\n"
			       "unmatched: %u\nout of order: %u\n",
			       rp->file, rp->strict ? "true" : "false",
			       rp->calls->len, rp->answered, rp->read_given,
			       rp->reads, rp->unmatched, rp->out_of_order);
	g_mutex_unlock(&rp->lock);
	return 0;
}


static void replay_free(struct replay *rp)
{
	g_ptr_array_unref(rp->calls);
	g_ptr_array_unref(rp->files);
	g_free(rp->first);
	g_free(rp->followers);
	g_mutex_clear(&rp->lock);

	g_cond_clear(&rp->more);
	g_free(rp->file);
	g_free(rp);
}

/* ---- the other ABI, from a header's two layouts ---- */

/* A recorded payload at arg, all of it recorded, of the size given. */
static struct replay_range *payload(GArray *ranges, uint32_t size)
{
	struct replay_range *r;

	if (ranges->len != 1)
		return NULL;
	r = &g_array_index(ranges, struct replay_range, 0);
	return r->parent < 0 && !r->delta && r->len == size &&
			       r->have == size
		       ? r
		       : NULL;
}

/* The range of the twin: the recorded bytes in the other layout, its
 * padding (what no member covers) not compared. */
static void convert_range(GArray *into, const struct replay_range *from,
			  const struct pt_translation *t, bool to_native,
			  bool input)
{
	uint32_t len = to_native ? t->size64 : t->size32;
	struct replay_range r = { .addr = from->addr, .len = len,
				  .have = len, .parent = -1 };
	g_autofree uint8_t *ones = g_malloc(from->len);

	r.data = g_malloc0(len);
	pt_translate(t, to_native, from->data, r.data);
	if (input) {
		r.skip = g_malloc0(len);
		memset(ones, 0xff, from->len);
		pt_translate(t, to_native, ones, r.skip);
		for (uint32_t i = 0; i < len; i++)
			r.skip[i] = !r.skip[i];
	}
	g_array_append_val(into, r);
}

/*
 * The call as the other ABI would have made it, where the headers lay its
 * payload out without pointers: the compat translation, made of recorded
 * truth. NULL when they do not.
 */
static struct replay_call *twin_of(const struct replay_call *c,
				   const struct pt_layouts *l)
{
	struct pt_translation t;
	const char *why;
	uint32_t size;
	const struct replay_range *in, *out;
	struct replay_call *w;
	bool to_native = c->compat;

	if (c->op != REPLAY_IOCTL || c->unusable ||
	    !pt_translation_find_abi(l, c->cmd, c->compat, &t, &why) ||
	    !t.size32 || t.native_cmd == t.cmd32)
		return NULL;
	size = c->compat ? t.size32 : t.size64;
	in = payload(c->in, size);
	out = payload(c->out, size);
	if ((c->in->len && !in) || (c->out->len && !out))
		return NULL;
	w = g_new0(struct replay_call, 1);
	w->line = c->line;
	w->op = REPLAY_IOCTL;
	w->cmd = to_native ? t.native_cmd : t.cmd32;
	w->name = g_strdup(c->name);
	w->compat = !c->compat;
	w->seq = c->seq;
	w->twin = true;
	w->arg = c->arg;
	w->in = ranges_new();
	w->out = ranges_new();
	if (in)
		convert_range(w->in, in, &t, to_native, true);
	if (out)
		convert_range(w->out, out, &t, to_native, false);
	w->result = c->result;
	w->error = c->error;
	return w;
}

/* Each call a twin in the other ABI, right after it, where the headers of
 * layouts= allow. */
static bool add_twins(struct replay *rp, const char *headers, char **why)
{
	g_auto(GStrv) list = g_strsplit(headers, ":", -1);
	g_autoptr(GError) error = NULL;
	struct pt_layouts *l = pt_layouts_new(NULL, list, NULL, NULL, &error);
	GPtrArray *all;
	unsigned int twins = 0;

	if (!l) {
		*why = g_strdup_printf("layouts=%s: %s", headers,
				       error->message);
		return false;
	}
	all = g_ptr_array_new_with_free_func(call_free);
	for (guint i = 0; i < rp->calls->len; i++) {
		struct replay_call *c = rp->calls->pdata[i];
		struct replay_call *w = twin_of(c, l);

		g_ptr_array_add(all, c);
		if (w) {
			g_ptr_array_add(all, w);
			twins++;
		}
	}
	/* The calls moved to all. */
	g_ptr_array_set_free_func(rp->calls, NULL);
	g_ptr_array_unref(rp->calls);
	rp->calls = all;
	pt_layouts_free(l);
	g_message("%s: %u calls also answer the other ABI, converted by the "
		  "layouts of %s", rp->file, twins, headers);
	return true;
}

static int replay_probe(struct cusemu_device *dev, char **why)
{
	struct replay *rp = g_new0(struct replay, 1);
	const char *file = cusemu_device_param_str(dev, "file");
	const char *layouts = cusemu_device_param_str(dev, "layouts");
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	g_autofree char *node = NULL;
	bool ok;

	g_mutex_init(&rp->lock);
	g_cond_init(&rp->more);

	rp->file = g_strdup(file);
	rp->strict = cusemu_device_param_bool(dev, "strict");
	rp->calls = g_ptr_array_new_with_free_func(call_free);
	/* Freed at release, or here if a fenced device had none. */
	rp->files = g_ptr_array_new_with_free_func(candidates_free);
	rp->seqs = 1;
	if (!*file) {
		*why = g_strdup("replay needs file=RECORDING");
		goto fail;
	}
	if (!g_file_get_contents(file, &text, NULL, &error)) {
		*why = g_strdup(error->message);
		goto fail;
	}
	rp->seq_of_pid = g_hash_table_new(NULL, NULL);
	ok = load_text(rp, text, &node, why);
	g_clear_pointer(&rp->seq_of_pid, g_hash_table_unref);
	if (!ok)
		goto fail;
	say_unusable(rp);
	if (*layouts && !add_twins(rp, layouts, why))
		goto fail;
	summarise(rp);
	if (node && cusemu_device_default_name(dev, node)) {
		*why = g_strdup_printf("%s:%u: the recorded node name is not "
				       "one cusemud can use (letters, digits, "
				       "'-', '_' and '.', at most 64): give "
				       "name=",
				       file, rp->node_line);
		goto fail;
	}
	dev->priv = rp;
	return 0;

fail:
	replay_free(rp);
	return -EINVAL;
}

static void replay_remove(struct cusemu_device *dev)
{
	replay_free(dev->priv);
}

static const struct cusemu_param replay_params[] = {
	{ .key = "file", .type = CUSEMU_PARAM_PATH, .default_value = "",
	  .help = "the recording to answer from: JSON lines of the trace "
		  "format (record=, or cusemuctl trace --json), read at "
		  "start-up; the node name defaults to the recorded node's" },
	{ .key = "layouts", .type = CUSEMU_PARAM_PATH, .default_value = "",
	  .help = "uapi headers (':' between several) whose two layouts "
		  "convert a recorded call to the other ABI, where its "
		  "payload has no pointer" },
	{ .key = "strict", .type = CUSEMU_PARAM_BOOL, .default_value = "false",
	  .help = "a call the recording does not answer fails with EIO and "
		  "the daemon exits with status 1 when it stops, instead of "
		  "the unknown command's error and a log line" },
	CUSEMU_PARAM_END
};

const struct cusemu_device_model cusemu_model_replay = {
	.name = "replay",
	.summary = "answers calls from a recording (file=), without the "
		   "device",
	.node_prefix = "replay",
	.params = replay_params,
	.probe = replay_probe,
	.remove = replay_remove,
	.release = replay_release,
	.read = replay_read,
	.write = replay_write,
	.poll = replay_poll,
	/* Every method, so that both ABIs reach the replay under every
	 * kernel model that calls one. */
	.ioctl = replay_ioctl,
	.unlocked_ioctl = replay_ioctl,
	.compat_ioctl = replay_ioctl,
	.ioctl_native = replay_ioctl,
	.ioctl_compat = replay_ioctl,
	.ioctl_fetch = replay_fetch,
	.control = replay_control,
};
