/* SPDX-License-Identifier: MIT */
/* <string.h> in a module that cusemu-kmod writes: memcpy, memset, strcmp, strlen and the rest of <string.h> that the kernel has, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_STRING_H
#define CUSEMU_KMOD_STRING_H
#include <linux/string.h>
#endif
