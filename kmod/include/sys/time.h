/* SPDX-License-Identifier: MIT */
/* <sys/time.h> in a module that cusemu-kmod writes: the kernel's time
 * types. struct timeval is not one of them: a uapi header that uses it
 * has a layout that changed with the y2038 work, as the kernel's own
 * headers say. */
#ifndef CUSEMU_KMOD_SYS_TIME_H
#define CUSEMU_KMOD_SYS_TIME_H
#include <linux/time.h>
#endif
