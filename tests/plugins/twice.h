/* SPDX-License-Identifier: MIT */
/*
 * The ABI of the twice model (tests/plugins/twice.c), shared with its
 * client (client-tests/twice-client.c).
 */
#ifndef TWICE_H
#define TWICE_H

#include <sys/ioctl.h>

#include <linux/types.h>

/* The handler reads the value twice, 200 µs apart, and returns 1 when
 * it saw two different ones, 0 when one. */
#define TWICE_READ _IOW('T', 1, __u32)

#endif
