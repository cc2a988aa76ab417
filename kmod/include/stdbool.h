/* SPDX-License-Identifier: MIT */
/* <stdbool.h> in a module that cusemu-kmod writes: bool, true, false, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_STDBOOL_H
#define CUSEMU_KMOD_STDBOOL_H
#include <linux/types.h>
#include <linux/stddef.h>
#endif
