/* SPDX-License-Identifier: MIT */
/* A faulting thread's backtrace, from its signal handler (backtrace.h). */
#include <execinfo.h>
#include <ucontext.h>

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

/* Frames the handler and the signal frame may take before ip's. */
#define SIGNAL_FRAMES 8

int cusemu_backtrace_from(void **frames, int max, void *ip)
{
	void *raw[256 + SIGNAL_FRAMES];
	int n = backtrace(raw, MIN(max + SIGNAL_FRAMES, (int)G_N_ELEMENTS(raw)));
	int from = -1, count = 0;

	for (int i = 0; i < n && from < 0; i++)
		if (raw[i] == ip)
			from = i;
	if (from < 0) {
		frames[count++] = ip;
		from = MIN(n, 2);	/* this handler and the signal frame */
	}
	for (int i = from; i < n && count < max; i++)
		frames[count++] = raw[i];
	return count;
}
