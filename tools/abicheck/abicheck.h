/* SPDX-License-Identifier: MIT */
/*
 * cusemu-abicheck: the ioctl commands of uapi headers, laid out by x86_64
 * and by i386 as gcc's debug information tells, and what the kernel's rules
 * for ioctl interfaces (Documentation/driver-api/ioctl.rst) say of them.
 */
#ifndef CUSEMU_ABICHECK_H
#define CUSEMU_ABICHECK_H

#include <stdbool.h>

#include <glib.h>

#include "layout.h"

/* "layout", "long"...: the names --json and docs/models.md use. */
const char *finding_kind_name(enum finding_kind kind);
/* The kernel guide's reason for the rule, in one sentence. */
const char *finding_kind_reason(enum finding_kind kind);
/* Kinds that make a command need a translation when they apply. */
bool finding_kind_translates(enum finding_kind kind);

/* _IOC's first argument for each: "_IOC_READ". */
extern const char *const ioc_dir_names[];

void finding_add(struct command *c, enum finding_kind kind,
		 const char *member, bool error, const char *format, ...)
	G_GNUC_PRINTF(5, 6);
/* How a finding names the member: its path, or the payload's type. */
const char *member_label(const struct command *c, const struct member *m);

/* The rules of the kernel guide, on one command's two layouts. */
void rules_check(struct command *c);
/* Whether the rules could judge c: not when it is unresolved, or when its
 * number encodes no payload (a plain number, _IO) and --command gave none. */
bool command_judged(const struct command *c);
/* An _IO command, or a plain number, that nothing says carries a pointer:
 * one table row serves both ABIs if its argument is a value. */
bool command_unsized(const struct command *c);
/* Where two commands share a number: "x86_64", "i386", "both ABIs", or
 * NULL; *number is the shared one. */
const char *collides(const struct command *a, const struct command *b,
		     uint32_t *number);
/* Commands of the same headers that share a number, and compat twins. */
void rules_check_set(GPtrArray *commands);

/* The installed uapi headers' commands, for collisions. */
struct uapi_index;
struct uapi_index *uapi_index_new(const struct probe_options *o,
				  char **dirs);
void uapi_index_free(struct uapi_index *u);
/* Adds a collision finding to each command that shares a number with a
 * command of the installed headers (other than itself). */
void uapi_check(struct uapi_index *u, GPtrArray *commands);

/* How --emit-compat writes. */
struct emit_options {
	const char *prelude;	/* what the probes put before the headers */
	/* Where not NULL, the one command to write code for (the others
	 * are still looked up: a header's NAME32). */
	const struct command *only;
	/* Where not NULL, commands to leave out: name to why. */
	GHashTable *leave;
};

/* --emit-compat: C for the commands that need a translation. Each command
 * it cannot write goes to left_out, "NAME: why". */
void emit_compat(GString *out, GPtrArray *commands, char **headers,
		 const struct emit_options *eo, GPtrArray *left_out);

/* --model: the model's tables against the headers, as findings of the
 * commands, and a row_only command for each row the headers lack; *name
 * is the model's name. FALSE when the model cannot be found or loaded. */
gboolean model_check(const char *model, GPtrArray *commands,
		     GPtrArray *notes, char **name, GError **error);
/* Kinds that --model finds: problems of the model's tables. */
bool finding_kind_model(enum finding_kind kind);
/* Whether the model's tables serve c as its header says. */
bool model_matches(const struct command *c);
/* --model's verdict: a line per command, one for the whole model. */
void model_report(GString *out, const char *name, GPtrArray *commands);

#endif
