/* SPDX-License-Identifier: MIT */
/* <errno.h> in a module that cusemu-kmod writes: the error numbers (no errno: calls return -errno), from the kernel's own headers. */
#ifndef CUSEMU_KMOD_ERRNO_H
#define CUSEMU_KMOD_ERRNO_H
#include <linux/errno.h>
#endif
