/* SPDX-License-Identifier: MIT */
/*
 * The legacy device's commands (magic 'L'), shared by the model and its
 * clients. LEGACY_GET keeps a historical long on purpose: it is what makes
 * its 32-bit number differ, so that the compat table has to translate it.
 */
#ifndef CUSEMU_ABI_LEGACY_H
#define CUSEMU_ABI_LEGACY_H

#include <linux/types.h>
#include <sys/ioctl.h>

#include "cusemu/abi/report.h"

/* Add one to the counter. */
#define LEGACY_INC _IO('L', 1)
/* Read the counter, as a long of the caller's ABI. */
#define LEGACY_GET _IOR('L', 2, long)
/* Append a value to the list; ENOSPC once it holds max_nodes. */
#define LEGACY_LIST_ADD _IOW('L', 3, __u32)
/* How many nodes the list holds. */
#define LEGACY_LIST_LEN _IOR('L', 4, __u32)
/* Counter back to 0, list emptied. */
#define LEGACY_RESET _IO('L', 5)
/* How this call reached the driver. */
#define LEGACY_REPORT _IOR('L', 6, struct cusemu_ioctl_report)

/* What an i386 caller's LEGACY_GET is: long is 4 bytes there. */
#define LEGACY_GET32 _IOR('L', 2, __u32)

#endif
