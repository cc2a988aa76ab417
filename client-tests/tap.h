/* SPDX-License-Identifier: MIT */
/*
 * The TAP reporting the self-checking clients share: one "ok N - ..." or
 * "not ok N - ...: why" line per check, errno shown by name.
 */
#ifndef CUSEMU_CLIENT_TAP_H
#define CUSEMU_CLIENT_TAP_H

#include <stdbool.h>

extern int ntests, nfailed;

/* "EFAULT", or "errno" for one the table does not know. */
const char *errno_name(int err);

/* A call's result as the reader needs it: "-1 (EFAULT/Bad address)". */
const char *show_ret(long ret, int err);

/* One check; why (printf-style) says what went wrong when !ok, and with
 * CUSEMU_TAP_ANSWERS in the environment what was judged when ok too. */
__attribute__((format(printf, 3, 4)))
bool report(bool ok, const char *desc, const char *why, ...);

/* Trouble in the test's own setup, not in the device: stop. */
__attribute__((noreturn)) void bail(const char *what);

/*
 * These read errno first thing: callers pass a call's result straight in,
 * so nothing runs between the call and the read.
 */
bool expect_ret(const char *desc, long got, long want);
bool expect_errno(const char *desc, long got, int want);

/* open(node, flags) as one check: the descriptor, or -1 (reported). */
int expect_open(const char *node, int flags, const char *desc);

#endif
