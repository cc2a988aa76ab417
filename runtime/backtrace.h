/* SPDX-License-Identifier: MIT */
/*
 * A faulting thread's backtrace, taken in its signal handler: by the
 * daemon's oops guard (kernel/oops.c) and a model host's fault handler.
 * Async-signal-safe once backtrace() was called once outside a handler
 * (glibc loads libgcc's unwinder on first use).
 */
#ifndef CUSEMU_BACKTRACE_H
#define CUSEMU_BACKTRACE_H

/* The interrupted instruction of a signal handler's context. */
void *cusemu_fault_ip(void *context);

/*
 * Up to max frames from ip on: backtrace() starts in the handler and goes
 * through the kernel's signal frame, which are left out. Their count.
 */
int cusemu_backtrace_from(void **frames, int max, void *ip);

#endif
