/* SPDX-License-Identifier: MIT */
/*
 * Pointers for cusemu-abicheck --emit-compat (tests/test-abicheck-compat):
 * an array of elements that hold a long, reached through a pointer and
 * through a __u64 (--pointee pt_wide.elems='struct pt_elem'). Not an API.
 */
#ifndef ABICHECK_POINTEE_H
#define ABICHECK_POINTEE_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct pt_elem {
	__u32 id;
	long value;
	unsigned long mask;
};

struct pt_list {
	__u32 count;
	struct pt_elem *elems;
};

struct pt_wide {
	__u32 count;
	__u32 pad;
	__u64 elems;
};

#define PT_LIST		_IOWR('p', 1, struct pt_list)
#define PT_WIDE		_IOWR('p', 2, struct pt_wide)

#endif
