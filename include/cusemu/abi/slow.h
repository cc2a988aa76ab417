/* SPDX-License-Identifier: MIT */
/*
 * The slow device's commands (magic 'S'), shared by the model and its
 * clients: an ioctl that holds the CPU or sleeps, to show what one slow
 * driver under the big lock costs every other device.
 */
#ifndef CUSEMU_ABI_SLOW_H
#define CUSEMU_ABI_SLOW_H

#include <linux/types.h>
#include <sys/ioctl.h>

#include "cusemu/abi/report.h"

/* The longest hold SLOW_HOLD_US accepts, in microseconds. */
#define SLOW_HOLD_MAX_US 1000000u

/* Hold for the device's hold_us, busy or asleep as its hold key says. */
#define SLOW_HOLD _IO('S', 1)
/* Hold for the given microseconds; more than SLOW_HOLD_MAX_US: EINVAL. */
#define SLOW_HOLD_US _IOW('S', 2, __u32)
/* How this call reached the driver. */
#define SLOW_REPORT _IOR('S', 3, struct cusemu_ioctl_report)
/* The same, filled after a 1 ms sleep: the big lock depth it was given back. */
#define SLOW_SLEEP_REPORT _IOR('S', 4, struct cusemu_ioctl_report)

#endif
