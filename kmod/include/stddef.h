/* SPDX-License-Identifier: MIT */
/* <stddef.h> in a module that cusemu-kmod writes: size_t, NULL, offsetof, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_STDDEF_H
#define CUSEMU_KMOD_STDDEF_H
#include <linux/stddef.h>
#include <linux/types.h>
#endif
