/* SPDX-License-Identifier: MIT */
/*
 * The probe device: each command reports how the ioctl reached it (which
 * method, under which lock), to show the kernel models side by side.
 */
#ifndef CUSEMU_ABI_PROBE_H
#define CUSEMU_ABI_PROBE_H

#include <linux/types.h>
#include <sys/ioctl.h>

#include "cusemu/abi/report.h"

/* Same layout on both ABIs: a compatible compat row. */
#define PROBE_REPORT _IOR('P', 1, struct cusemu_ioctl_report)

/*
 * The report packed in an unsigned long: method | depth << 8 | compat << 16.
 * Its size differs by ABI, so the 32-bit form is a translated compat row
 * (and, under the older kernel models, a handler in the global table).
 */
#define PROBE_WHO _IOR('P', 2, unsigned long)
#define PROBE_WHO32 _IOR('P', 2, __u32)

/* In the native table only: what 32-bit callers get shows each model's
 * "not mine". */
#define PROBE_NATIVE_ONLY _IOR('P', 3, struct cusemu_ioctl_report)

/*
 * A 32-bit command on fioc's number (FIOC_READ, _IO('E', 2)): claiming it
 * shows the one command space of the global ioctl32 table.
 */
#define PROBE_CLAIM_FIOC_READ _IO('E', 2)

#define PROBE_WHO_METHOD(v) ((v) & 0xff)
#define PROBE_WHO_DEPTH(v) (((v) >> 8) & 0xff)
#define PROBE_WHO_COMPAT(v) (((v) >> 16) & 0x1)

#endif
