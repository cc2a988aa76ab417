/* SPDX-License-Identifier: MIT */
/*
 * The passthrough device's parts: the 32-bit system call entry
 * (passthrough-sys32.c) and the layouts that say what memory a command
 * reaches (passthrough-layouts.c). Private to the passthrough model.
 */
#ifndef CUSEMU_PASSTHROUGH_H
#define CUSEMU_PASSTHROUGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "cusemu/uaccess.h"

/* ---- the 32-bit entry (int $0x80) ---- */

/*
 * Whether this kernel takes 32-bit system calls from a 64-bit process
 * (IA32 emulation): tried once, in a child process, since a kernel
 * without it kills the caller with SIGSEGV.
 */
bool pt_sys32_available(void);
/* Under a seccomp filter (the daemon's sandbox), which forbids fork and
 * exec: what runs a child (a probe, the compiler) must have run before. */
bool pt_filtered(void);

/*
 * ioctl, read and write through the 32-bit entry: the kernel runs the
 * driver's compat_ioctl, and in_compat_syscall() is true in its read and
 * write. Every address must be below 4 GiB (pt_low_buffer). Returns the
 * result or -errno.
 */
long pt_sys32_ioctl(int fd, uint32_t cmd, uint32_t arg);
long pt_sys32_read(int fd, uint32_t buf, uint32_t count);
long pt_sys32_write(int fd, uint32_t buf, uint32_t count);

/*
 * This thread's buffer below 4 GiB, of at least PT_LOW_BYTES: where the
 * memory of a 32-bit call is laid. NULL when it cannot be mapped.
 */
#define PT_LOW_BYTES (4u * CUSEMU_USER_MAX_BYTES)
void *pt_low_buffer(void);

/* ---- the memory a command reaches ---- */

/*
 * The caller's memory one call reaches: ranges of its memory, and the
 * pointers between them (a slot of one range holding another's address).
 * Range 0, when there is one, sits at arg.
 */
#define PT_RANGES_MAX CUSEMU_USER_MAX_RANGES

struct pt_range {
	cusemu_uptr_t addr;
	uint32_t in;		/* bytes the driver reads */
	uint32_t out;		/* bytes the driver writes */
};

struct pt_pointer {
	uint16_t from, to;	/* ranges */
	uint32_t off;		/* of the slot in from */
	uint8_t width;		/* 4 or 8 bytes */
};

struct pt_graph {
	bool compat;		/* laid out as i386 lays it out */
	/* The fetch step: each range is named as it is found, before any
	 * of it is read, so that the call's ranges are the graph's. */
	bool naming;
	/* Ranges are named later, together (pt_graph_name_runs). */
	bool deferred;
	/* The driver's result is how many bytes it wrote at range 0's
	 * start (evdev's strings and bitmaps): those alone go back. */
	bool out_is_result;
	unsigned int nr, np;
	struct pt_range r[PT_RANGES_MAX];
	struct pt_pointer p[PT_RANGES_MAX];
};

/* A range of the caller's memory; its index, or -errno. */
int pt_graph_range(struct pt_graph *g, cusemu_uptr_t addr, uint32_t in,
		   uint32_t out);
/*
 * In the fetch step, names what ranges [first, nr), added while deferred,
 * reach: each run of them that overlap, once, each way. 0 or -errno.
 */
int pt_graph_name_runs(struct pt_graph *g, unsigned int first);
/* A pointer of range from, at off, to range to. 0 or -errno. */
int pt_graph_pointer(struct pt_graph *g, int from, uint32_t off, int to,
		     unsigned int width);

/* Adds what the command reaches to g, from arg; -EFAULT while memory it
 * reads to find the rest has not arrived. */
typedef int (*pt_chase_fn)(struct pt_graph *g, unsigned int cmd,
			   cusemu_uptr_t arg);

/* How a command's argument is used. */
enum pt_kind {
	PT_UNKNOWN,	/* no layout says: see pt_layout_lookup */
	PT_VALUE,	/* a value, passed as it is */
	PT_IOC,		/* the payload its _IOC bits describe */
	PT_BOTH,	/* _IOC size, read and written whatever the bits say */
	PT_IOC_LEN,	/* PT_IOC, the result the bytes written (out_is_result) */
	PT_CHASE,	/* pointers inside: a chase function */
	PT_HEADER,	/* a layout read from a header */
};

struct pt_layouts;

struct pt_cmd {
	enum pt_kind kind;
	const char *name;	/* NULL when no layout names it */
	pt_chase_fn chase;	/* PT_CHASE */
	const void *header;	/* PT_HEADER: the header's command */
	const char *why;	/* PT_UNKNOWN: what to give, when known */
};

/*
 * The layouts of one passthrough: those of a built-in model of the
 * driver's ABI (like: "rtc", "watchdog", "i2c", "evdev", or NULL) and
 * those of uapi headers (NULL-terminated paths, or NULL), with the
 * payloads of commands their numbers do not describe ("NAME=value",
 * "NAME=TYPE") and what members point to ("TAG.MEMBER=TYPE", or
 * "TAG.MEMBER=TYPE[COUNT]" for COUNT of them). NULL with a message for the user when a header does not
 * compile.
 */
struct pt_layouts *pt_layouts_new(const char *like, char **headers,
				  char **commands, char **pointees,
				  GError **error);
void pt_layouts_free(struct pt_layouts *l);
/* The built-in models passthrough knows the layouts of, for messages. */
const char *pt_layouts_models(void);
/* Whether name is one of them. */
bool pt_layouts_model_known(const char *name);

/* Whether like= names a built-in model: the driver is one of its. */
bool pt_layouts_have_model(const struct pt_layouts *l);

/* How cmd of a caller of this ABI uses its argument. */
struct pt_cmd pt_layout_lookup(const struct pt_layouts *l, unsigned int cmd,
			       bool compat);

/* The graph of a command found by pt_layout_lookup. */
int pt_layout_chase(const struct pt_cmd *c, struct pt_graph *g,
		    unsigned int cmd, cusemu_uptr_t arg);

/*
 * The compat shim: an i386 command the headers lay out without pointers,
 * as the x86_64 command it is. pt_translate_in converts the i386 payload
 * (in, *len bytes) to the native one (out, room for PT_LOW_BYTES); _out
 * converts back. FALSE with a reason in *why (static) when it cannot.
 */
struct pt_translation {
	unsigned int native_cmd;
	unsigned int cmd32;
	uint32_t size32, size64;
	const void *header;
};

bool pt_translation_find(const struct pt_layouts *l, unsigned int cmd32,
			 struct pt_translation *t, const char **why);
/* The same from a command as either ABI numbers it. */
bool pt_translation_find_abi(const struct pt_layouts *l, unsigned int cmd,
			     bool compat, struct pt_translation *t,
			     const char **why);
void pt_translate(const struct pt_translation *t, bool to_native,
		  const uint8_t *from, uint8_t *to);

#endif
