/* SPDX-License-Identifier: MIT */
/*
 * A faulting thread's backtrace, from its signal handler (backtrace.h):
 * libgcc's unwinder hands the frames one by one, and they are folded as
 * they come, so that a stack overflow's hundred thousand frames of one
 * recursion take a few items and the frames below it, down to the call
 * into the model, are kept.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include <glib.h>

#include "backtrace.h"

void *cusemu_fault_ip(void *context)
{
	const ucontext_t *uc = context;

#if defined(__x86_64__)
	return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
	return (void *)uc->uc_mcontext.gregs[REG_EIP];
#else
	(void)uc;
	return NULL;
#endif
}

/*
 * How far below its stack a fault still counts as the stack's overflow: a
 * frame larger than the guard page steps over it.
 */
#define STACK_REACH (64 * 1024)

void cusemu_stack_find(struct cusemu_stack *s)
{
	pthread_attr_t attr;
	void *low;
	size_t size, guard = 0;

	*s = (struct cusemu_stack){ 0 };
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &low, &size)) {
		s->low = (uintptr_t)low;
		s->high = (uintptr_t)low + size;
	}
	pthread_attr_getguardsize(&attr, &guard);
	s->guard = MAX(guard, (size_t)sysconf(_SC_PAGESIZE));
	pthread_attr_destroy(&attr);
}

bool cusemu_stack_overflowed(const struct cusemu_stack *s, int signo,
			     uintptr_t addr)
{
	return s->low && signo == SIGSEGV && addr < s->low &&
	       s->low - addr <= MAX(s->guard, STACK_REACH);
}

/* Frames the handler and the signal frame may take before ip's. */
#define SIGNAL_FRAMES 8
/* The longest run of frames that repeats as a block (mutual recursion). */
#define MAX_PERIOD 8
/* A block is folded once it came three times in a row. */
#define FOLD_AFTER 3
/* Beyond any stack the kernel gives a thread. */
#define MAX_WALK (1u << 22)
#define HEAD_ITEMS (CUSEMU_TRACE_ITEMS - CUSEMU_TRACE_TAIL)

struct walk {
	struct cusemu_trace *t;
	uintptr_t ip;
	bool started;		/* ip's frame was reached */
	int early;		/* frames seen before it */
	uint32_t plain_from;	/* no fold reaches back before this item */
	int fold;		/* the fold under way (the last item), or -1 */
	uint32_t into;		/* frames of its block matched so far */
	bool tail;		/* the items are full: the ring takes on */
	uint32_t pushed;
	uint64_t ring[CUSEMU_TRACE_TAIL];
};

static bool same_blocks(const struct cusemu_trace *t, uint32_t a, uint32_t b,
			uint32_t period)
{
	for (uint32_t i = 0; i < period; i++)
		if (t->item[a + i].pc != t->item[b + i].pc)
			return false;
	return true;
}

/* The last FOLD_AFTER blocks of some period are alike: one stays, and a
 * fold after it counts them. */
static void try_fold(struct walk *w)
{
	struct cusemu_trace *t = w->t;

	for (uint32_t p = 1; p <= MAX_PERIOD; p++) {
		uint32_t first;
		bool alike = true;

		if (t->n - w->plain_from < FOLD_AFTER * p)
			return;
		first = t->n - FOLD_AFTER * p;
		for (uint32_t k = 1; k < FOLD_AFTER && alike; k++)
			alike = same_blocks(t, first, first + k * p, p);
		if (!alike)
			continue;
		t->n = first + p;
		t->item[t->n] = (struct cusemu_trace_item){
			.period = p, .times = FOLD_AFTER };
		w->fold = (int)t->n++;
		w->into = 0;
		w->plain_from = t->n;
		return;
	}
}

static void add_plain(struct walk *w, uint64_t pc)
{
	struct cusemu_trace *t = w->t;

	if (!w->tail && t->n >= HEAD_ITEMS) {
		w->tail = true;
		t->cut = t->n;
	}
	if (w->tail) {
		w->ring[w->pushed++ % CUSEMU_TRACE_TAIL] = pc;
		return;
	}
	t->item[t->n++] = (struct cusemu_trace_item){ .pc = pc };
	try_fold(w);
}

static void add_frame(struct walk *w, uint64_t pc)
{
	struct cusemu_trace *t = w->t;
	const struct cusemu_trace_item *f;
	uint32_t start, matched;

	t->frames++;
	if (w->fold < 0) {
		add_plain(w, pc);
		return;
	}
	f = &t->item[w->fold];
	start = (uint32_t)w->fold - f->period;
	if (pc == t->item[start + w->into].pc) {
		if (++w->into == f->period) {
			t->item[w->fold].times++;
			w->into = 0;
		}
		return;
	}
	/* The recursion ends here: what matched of its block is plain. */
	matched = w->into;
	w->fold = -1;
	w->into = 0;
	for (uint32_t i = 0; i < matched; i++)
		add_plain(w, t->item[start + i].pc);
	add_plain(w, pc);
}

static _Unwind_Reason_Code on_frame(struct _Unwind_Context *ctx, void *data)
{
	struct walk *w = data;
	int after_signal = 0;
	uintptr_t pc = _Unwind_GetIPInfo(ctx, &after_signal);

	if (!w->started) {
		/* The interrupted frame: the one a signal frame unwinds to. */
		if (pc != w->ip && !after_signal && ++w->early < SIGNAL_FRAMES)
			return _URC_NO_REASON;
		w->started = true;
		if (pc != w->ip)
			add_frame(w, w->ip);
	}
	/* No return address: the outermost frame (a thread's start). */
	if (w->t->frames >= MAX_WALK || (!pc && w->t->frames))
		return _URC_END_OF_STACK;
	add_frame(w, pc);
	return _URC_NO_REASON;
}

void cusemu_trace_from(struct cusemu_trace *t, void *ip)
{
	struct walk w = { .t = t, .ip = (uintptr_t)ip, .fold = -1 };

	t->n = t->frames = t->left_out = t->cut = 0;
	_Unwind_Backtrace(on_frame, &w);
	if (!w.started)
		add_frame(&w, w.ip);
	if (w.tail) {
		uint32_t kept = MIN(w.pushed, (uint32_t)CUSEMU_TRACE_TAIL);

		t->left_out = w.pushed - kept;
		for (uint32_t i = w.pushed - kept; i < w.pushed; i++)
			t->item[t->n++] = (struct cusemu_trace_item){
				.pc = w.ring[i % CUSEMU_TRACE_TAIL] };
	}
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *ctx,
				       void *data)
{
	(void)ctx;
	return ++*(int *)data < 2 ? _URC_NO_REASON : _URC_END_OF_STACK;
}

void cusemu_trace_warm_up(void)
{
	int n = 0;

	_Unwind_Backtrace(count_frame, &n);
}
