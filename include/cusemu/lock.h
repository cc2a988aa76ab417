/* SPDX-License-Identifier: MIT */
/*
 * A model's own lock, as the kernel's struct mutex: a thread that finds it
 * held sleeps until it is let go; it is not recursive, and the thread that
 * took it lets it go. It keeps a model's state whole between its callbacks
 * (a handler, ->poll, a timer's function), which run on several threads at
 * once in both worlds. Part of the portable surface: the same source builds
 * in cusemud (a GMutex) and in a kernel module that cusemu-kmod(1) writes
 * (the kernel's struct mutex).
 *
 * A handler may hold it across cusemu_copy_from_user() and
 * cusemu_copy_to_user(), which may sleep in the kernel, as a mutex allows;
 * not across a wait, which lets go of it itself (cusemu_wait_timeout() of
 * <cusemu/sched.h>).
 */
#ifndef CUSEMU_LOCK_H
#define CUSEMU_LOCK_H

#ifdef __KERNEL__
#include <linux/mutex.h>

struct cusemu_mutex {
	struct mutex m;
};
#else
#include <glib.h>

struct cusemu_mutex {
	GMutex m;
};
#endif

/* Ready to take; before any other call on it. */
static inline void cusemu_mutex_init(struct cusemu_mutex *lock)
{
#ifdef __KERNEL__
	mutex_init(&lock->m);
#else
	g_mutex_init(&lock->m);
#endif
}

/* No thread holds it or waits for it any more; it may be freed after. */
static inline void cusemu_mutex_destroy(struct cusemu_mutex *lock)
{
#ifdef __KERNEL__
	mutex_destroy(&lock->m);
#else
	g_mutex_clear(&lock->m);
#endif
}

static inline void cusemu_mutex_lock(struct cusemu_mutex *lock)
{
#ifdef __KERNEL__
	mutex_lock(&lock->m);
#else
	g_mutex_lock(&lock->m);
#endif
}

static inline void cusemu_mutex_unlock(struct cusemu_mutex *lock)
{
#ifdef __KERNEL__
	mutex_unlock(&lock->m);
#else
	g_mutex_unlock(&lock->m);
#endif
}

#endif
