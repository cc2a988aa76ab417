/* SPDX-License-Identifier: MIT */
/* <sys/types.h> in a module that cusemu-kmod writes: ssize_t, off_t, pid_t, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_SYS_TYPES_H
#define CUSEMU_KMOD_SYS_TYPES_H
#include <linux/types.h>
#endif
