/* SPDX-License-Identifier: MIT */
/* <limits.h> in a module that cusemu-kmod writes: INT_MAX and the rest, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_LIMITS_H
#define CUSEMU_KMOD_LIMITS_H
#include <linux/limits.h>
#endif
