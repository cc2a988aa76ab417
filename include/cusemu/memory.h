/* SPDX-License-Identifier: MIT */
/*
 * Memory and strings for a model's own state, as the kernel's kzalloc(),
 * kfree() and strscpy(). Part of the portable surface: the same source
 * builds in cusemud and in a kernel module that cusemu-kmod(1) writes.
 * What the kernel lacks (malloc(), g_new0(), snprintf() into a new string)
 * a portable model does without.
 */
#ifndef CUSEMU_MEMORY_H
#define CUSEMU_MEMORY_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stddef.h>
#include <sys/types.h>
#endif

/*
 * size bytes, cleared; NULL when there is not enough memory, which the
 * caller handles (-ENOMEM), as it handles kzalloc(GFP_KERNEL) failing. It
 * may sleep in the kernel, which every callback of a model allows (a
 * timer's function too: it runs as a work item does).
 */
void *cusemu_zalloc(size_t size);

/* What cusemu_zalloc() gave; NULL is ignored. */
void cusemu_free(void *ptr);

/* One object of a type, cleared, or NULL. */
#define cusemu_new0(type) ((type *)cusemu_zalloc(sizeof(type)))

/*
 * Copy the string src into dst, which holds size bytes, always
 * NUL-terminated when size > 0: returns the length copied, or -E2BIG when
 * src did not fit and was cut (the kernel's strscpy()).
 */
ssize_t cusemu_strscpy(char *dst, const char *src, size_t size);

/*
 * snprintf(): at most size bytes into buf, NUL-terminated; returns the
 * length the whole text has (the kernel's printf format; its %p
 * extensions are not portable).
 */
int cusemu_snprintf(char *buf, size_t size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A new string, formatted; NULL when out of memory. For a message in
 * ->probe's *why, which the daemon (or the module) frees; anything else
 * frees it with cusemu_free().
 */
char *cusemu_strdup_printf(const char *format, ...)
	__attribute__((format(printf, 1, 2)));

#endif
