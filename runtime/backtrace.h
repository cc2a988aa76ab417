/* SPDX-License-Identifier: MIT */
/*
 * A faulting thread's backtrace, taken in its signal handler: by the
 * daemon's oops guard (kernel/oops.c) and a model host's fault handler.
 * Async-signal-safe once cusemu_trace_warm_up() was called outside a
 * handler (glibc and libgcc load the unwinder on first use). A trace of
 * any depth fits: repeated frames (a recursion) are folded with their
 * count as they are walked, and a trace that still does not fit keeps
 * its first and its last frames and counts those left out between.
 */
#ifndef CUSEMU_BACKTRACE_H
#define CUSEMU_BACKTRACE_H

#include <stdbool.h>
#include <stdint.h>

/* Items a trace holds: frames, and folds of the frames before them. */
#define CUSEMU_TRACE_ITEMS 64
/* Of those, the last frames of a trace too long for the others. */
#define CUSEMU_TRACE_TAIL 24

struct cusemu_trace_item {
	uint64_t pc;		/* a frame's address */
	uint32_t period;	/* a fold: the items before it that repeat; */
	uint32_t times;		/* ... this many times in all (0: a frame) */
};

/* Fixed-size and without pointers: a model host sends it as it is. */
struct cusemu_trace {
	uint32_t n;		/* items */
	uint32_t frames;	/* frames walked, the folded ones too */
	uint32_t left_out;	/* frames neither kept nor folded, */
	uint32_t cut;		/* ... which were before item cut */
	struct cusemu_trace_item item[CUSEMU_TRACE_ITEMS];
};

/* A thread's stack, [low, high), and the guard page's size below it;
 * all 0 when unknown. */
struct cusemu_stack {
	uintptr_t low, high, guard;
};

/*
 * The calling thread's stack, as glibc made it (the main thread's from its
 * limit and /proc/self/maps). Not in a handler: it allocates, and asks the
 * kernel for the thread's CPU affinity.
 */
void cusemu_stack_find(struct cusemu_stack *s);
/* A fault at addr hit the guard below s, or a frame larger than the guard
 * stepped over it: the stack overflowed. In a handler too. */
bool cusemu_stack_overflowed(const struct cusemu_stack *s, int signo,
			     uintptr_t addr);

/* The interrupted instruction of a signal handler's context. */
void *cusemu_fault_ip(void *context);

/*
 * The trace from ip on, in a signal handler: the handler's own frames
 * and the kernel's signal frame are left out. The walk stops after a
 * few million frames (a stack the unwinder goes round in).
 */
void cusemu_trace_from(struct cusemu_trace *t, void *ip);

/* Load the unwinder, outside any handler. */
void cusemu_trace_warm_up(void);

#endif
