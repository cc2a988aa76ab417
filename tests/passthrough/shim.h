/* SPDX-License-Identifier: MIT */
/* A uapi header whose payloads i386 lays out otherwise: the compat shim's
 * fixture (test-passthrough). */
#ifndef SHIM_H
#define SHIM_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct shim_args {
	long l;
	unsigned long ul;
	int i;
	short s;
	__u64 u64;		/* 4-byte aligned on i386 */
	long arr[3];
	union {
		int a;
		long b;
	} u;
	unsigned int low : 3, high : 5;
};

struct shim_ptr {
	int *p;
};

#define SHIM_SET _IOW('S', 1, struct shim_args)
#define SHIM_GET _IOR('S', 2, struct shim_args)
#define SHIM_RAW _IO('S', 3)
#define SHIM_PTR _IOW('S', 4, struct shim_ptr)

/* An array of pointers: each element is followed, as a pointer member. */
struct shim_node {
	__u32 v;
};

struct shim_nodes {
	struct shim_node *arr[4];
};

#define SHIM_NODES _IOW('S', 5, struct shim_nodes)

/*
 * A pointer and a count, as drivers mostly pass arrays: with
 * pointees=shim_span.elems=struct shim_node[n] and
 * shim_bytes.buf=__u8[len], n nodes and len bytes are followed.
 */
struct shim_span {
	__u64 elems;
	__u32 n;
	__u32 pad;
};

struct shim_bytes {
	__u8 *buf;
	__u16 len;
};

#define SHIM_SPAN _IOWR('S', 6, struct shim_span)
#define SHIM_BYTES _IOW('S', 7, struct shim_bytes)

#endif
