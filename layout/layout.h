/* SPDX-License-Identifier: MIT */
/*
 * The layouts of headers: the ioctl commands of uapi headers, laid out by
 * x86_64 and by i386 as gcc's debug information tells (probe.c). Shared by
 * cusemu-abicheck, cusemuctl trace --header and the passthrough's layouts.
 */
#ifndef CUSEMU_LAYOUT_H
#define CUSEMU_LAYOUT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

/* Errors of the checker itself: a compile that failed, a bad argument. */
#define ABICHECK_ERROR abicheck_error_quark()
GQuark abicheck_error_quark(void);

enum abi { ABI_X86_64, ABI_I386, ABI_COUNT };

extern const char *const abi_names[ABI_COUNT];

/* What a member is, as far as the rules care. */
enum member_flags {
	MEMBER_SCALAR = 1u << 0,	/* a base type: integer, float, char */
	MEMBER_LONG = 1u << 1,		/* long or unsigned long */
	MEMBER_POINTER = 1u << 2,
	MEMBER_ENUM = 1u << 3,
	MEMBER_CHAR = 1u << 4,		/* plain char: signedness varies */
	MEMBER_BITFIELD = 1u << 5,
	MEMBER_STRUCT = 1u << 6,
	MEMBER_UNION = 1u << 7,
	MEMBER_ARRAY = 1u << 8,
	MEMBER_TIME = 1u << 9,		/* time_t, struct timeval... */
	MEMBER_SIGNED = 1u << 10,	/* a signed integer or enum */
	MEMBER_FLOAT = 1u << 11,
};

/*
 * One member of a payload, in one ABI. A payload's members come in
 * pre-order: [0] is the payload itself (path ""), then each member, and the
 * members of a struct or union member (or of the elements of an array of
 * them, path "msgs[].len") right after it.
 */
struct member {
	char *path;		/* "serial", "time.tm_sec", "" for the payload */
	char *name;		/* the last part of path: "tm_sec" */
	char *type;		/* as C spells it: "__u64", "struct timeval" */
	char *time_type;	/* MEMBER_TIME: which time type, e.g. "time_t" */
	uint64_t offset;	/* bytes from the payload's start */
	uint64_t size;
	uint64_t count;		/* MEMBER_ARRAY: elements (all dimensions) */
	uint64_t elem_size;	/* MEMBER_ARRAY: bytes per element */
	unsigned int bit_offset;	/* MEMBER_BITFIELD: bits from offset */
	unsigned int bit_size;
	unsigned int align;	/* the type's alignment inside a struct */
	unsigned int flags;	/* enum member_flags; an array's are its
				 * elements' too, but MEMBER_CHAR */
	int parent;		/* index of the enclosing member; -1 for [0] */
	bool anonymous;		/* an unnamed struct or union member */
	/* A pointer to a struct or union of the payload (not of a pointee:
	 * one level is followed), or a member that --pointee names: what it
	 * points to, laid out as a payload is ([0] is the pointee itself).
	 * NULL otherwise. */
	GPtrArray *pointee;
	/* --pointee TAG.MEMBER=TYPE[COUNT]: the index of COUNT, the member
	 * beside this one that holds how many TYPE it points to; 0 when
	 * it points to one. */
	int pointee_count;
	/* The pointee is --pointee's: the member holds a pointer that the
	 * driver follows, for which --emit-compat writes a fetch step. */
	bool pointee_given;
};

struct layout {
	bool present;		/* false: the command carries no payload */
	GPtrArray *members;	/* struct member *, see above */
};

enum finding_kind {
	FINDING_LAYOUT,
	FINDING_LONG,
	FINDING_POINTER,
	FINDING_ALIGN64,
	FINDING_PADDING,
	FINDING_TIME,
	FINDING_BITFIELD,
	FINDING_ENUM,
	FINDING_CHAR,
	FINDING_SIZEOF,
	FINDING_NUMBER,
	FINDING_SIZE_LIMIT,
	FINDING_COLLISION,
	FINDING_UNRESOLVED,
	FINDING_PLAIN_NUMBER,
	FINDING_UNSIZED,
	/* --model */
	FINDING_NO_NATIVE_ROW,
	FINDING_NOT_IN_HEADER,
	FINDING_WRONG_COMPAT_SAME,
	FINDING_COMPAT_NUMBER,
	FINDING_NO_COMPAT_ROW,
	FINDING_KIND_COUNT,
};

struct finding {
	enum finding_kind kind;
	char *member;		/* a member's path, or the payload's type */
	char *detail;
	bool error;		/* --model: the model is wrong, not just risky */
};

/* The _IOC direction of a command, from the macro that defines it. */
enum ioc_dir { DIR_NONE, DIR_READ, DIR_WRITE, DIR_BOTH, DIR_UNKNOWN };


struct command {
	char *name;
	char *header;		/* as given on the command line */
	char *file;		/* the file the compiler read it from */
	unsigned int line;
	enum ioc_dir dir;
	char *macro;		/* "_IOR", or "--command" for a given one */
	char *type_arg, *nr_arg;	/* the macro's arguments, expanded */
	char *payload_arg;	/* its data_type argument, as written */
	char *payload_expr;	/* the type the probe lays out */
	bool sizeof_arg;	/* data_type was written sizeof(...) */
	/* A macro whose data_type each ABI's preprocessor expands itself
	 * (_TIME_BITS, -D): payload_expr is the x86_64 expansion. */
	bool payload_per_abi;
	uint32_t number[ABI_COUNT];
	struct layout layout[ABI_COUNT];
	GPtrArray *findings;	/* struct finding * */
	bool compatible;
	/* A plain number (0x4600) that looks like a command of the header:
	 * without --command it is listed, with a plain-number finding, and
	 * not judged. */
	bool plain;
	/* --command NAME=value: its argument is a value (or unused), never
	 * a pointer, so its number says all there is to judge. */
	bool by_value;
	/* Its number or payload does not compile with the headers as
	 * given: the compiler's words, for an unresolved finding; nothing
	 * else is judged. NULL when it compiles. */
	char *unresolved;
	/* --model: a row of the model that is no command of the headers. */
	bool row_only;
	/* Another command of the headers whose i386 number this is, as
	 * FIOC_GET_SIZE32 is FIOC_GET_SIZE's: a compat table's name. */
	const struct command *compat_of;
	/* --model: how the model's tables serve it, when they do ("native
	 * row, compat row X32 translates"); NULL otherwise. */
	char *served;
};

/* How to run the compiler, and on what. */
struct probe_options {
	char **cc;		/* argv prefix: "gcc" */
	GPtrArray *cflags;	/* -I and -D as given */
	bool verbose;
	/* --pointee: struct given_command *, NAME is "TAG.MEMBER". */
	GPtrArray *pointees;
	/* Where not NULL, gets what the probes put before the headers (a
	 * uapi header may use _IOW or u_short without including them), for
	 * code that includes the headers the same way; g_free it. */
	char **prelude;
};

/* A --command NAME=TYPE: a payload type for a command whose number does
 * not say it (plain numbers, _IO commands that take a pointer); TYPE
 * "value" for one whose argument is no pointer. */
struct given_command {
	char *name;
	char *type;
	char *count;	/* --pointee TYPE[COUNT]: COUNT, or NULL */
};

/*
 * A --pointee's TYPE "T[COUNT]": T, and COUNT, the member beside the
 * pointer that holds how many T it points to (the driver's pattern of a
 * pointer and a count). FALSE when the brackets hold no member's name.
 */
bool given_pointee_count(struct given_command *g);

/*
 * Every command the headers define with _IO, _IOR, _IOW, _IOWR or _IOC
 * (macros
 * and enumerators), and the given ones, with both numbers and layouts.
 * FALSE with the compiler's message when a probe does not compile.
 */
gboolean probe_headers(const struct probe_options *o, char **headers,
		       GPtrArray *given, GPtrArray **commands,
		       GPtrArray *notes, GError **error);

/* Whether code (a generated header) compiles alone for both ABIs with
 * -Wall -Wextra -Werror, after the headers it was made from; FALSE with
 * the compiler's words. */
gboolean probe_check_code(const struct probe_options *o, char **headers,
			  const char *code, GError **error);

void command_free(struct command *c);
/* The member with this path in a layout, or NULL. */
const struct member *layout_find(const struct layout *l, const char *path);

#endif
