/* SPDX-License-Identifier: MIT */
/*
 * The ABI of the test plugin's models, shared with their client
 * (client-tests/nap-client.c).
 */
#ifndef PLUGTEST_H
#define PLUGTEST_H

#include <sys/ioctl.h>

#include <linux/types.h>

/* plugtest: the answer, 42. */
#define PLUGTEST_GET _IOR('Q', 1, __u32)
/* plugnap: sleep this many milliseconds (at most PLUGTEST_NAP_MAX_MS);
 * a 32-bit caller goes through the global ioctl32 table's entry. */
#define PLUGTEST_NAP _IOW('Q', 2, __u32)
#define PLUGTEST_NAP_MAX_MS 30000

#endif
