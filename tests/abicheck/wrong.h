/* SPDX-License-Identifier: MIT */
/*
 * The API of a model with the mistakes cusemu-abicheck --model finds
 * (wrong-model.c), and the i386 caller that meets them (client-tests/
 * wrong-client.c). Not an API to copy.
 */
#ifndef ABICHECK_WRONG_H
#define ABICHECK_WRONG_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* 16 bytes on x86_64, 12 on i386: the serial moves to offset 4. */
struct wrong_info {
	__u32 version;
	__u64 serial;
};

#define WRONG_SERIAL 0x1122334455667788ull

/* Marked compatible in the model's compat table: wrong. */
#define WRONG_INFO _IOR('Y', 1, struct wrong_info)
/* Translated by a compat row with another number than i386's: wrong. */
#define WRONG_LONG _IOR('Y', 2, unsigned long)
/* Compatible, and marked so: right. */
#define WRONG_RIGHT _IOR('Y', 3, __u32)
/* Without a native row. */
#define WRONG_UNSERVED _IO('Y', 4)

#endif
