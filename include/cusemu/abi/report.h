/* SPDX-License-Identifier: MIT */
/*
 * struct cusemu_ioctl_report: how the daemon reached a handler (method, big
 * lock depth, caller's ABI), shared by the models that report it and clients.
 */
#ifndef CUSEMU_ABI_REPORT_H
#define CUSEMU_ABI_REPORT_H

#include <stddef.h>

#include <linux/types.h>

/*
 * The method a call reached its handler through. Same values as the
 * CUSEMU_METHOD_* bits of <cusemu/device.h>, which clients do not include;
 * the models that fill a report check at compile time that they match.
 */
enum cusemu_report_method {
	CUSEMU_REPORT_METHOD_IOCTL = 1,		/* under the big lock */
	CUSEMU_REPORT_METHOD_UNLOCKED_IOCTL = 2,
	CUSEMU_REPORT_METHOD_COMPAT_IOCTL = 4,
	CUSEMU_REPORT_METHOD_IOCTL_NATIVE = 8,	/* the split proposal */
	CUSEMU_REPORT_METHOD_IOCTL_COMPAT = 16,
	CUSEMU_REPORT_METHOD_IOCTL32_HANDLER = 32, /* global ioctl32 table */
};

/* The same 16 bytes on both ABIs, so the compat table needs no translation. */
struct cusemu_ioctl_report {
	__u32 method;		/* one enum cusemu_report_method */
	__u32 big_lock_depth;	/* how deep the serving thread held it */
	__u32 compat;		/* 1 when the caller is a 32-bit process */
	__u32 reserved;		/* 0 */
};

_Static_assert(sizeof(struct cusemu_ioctl_report) == 16,
	       "struct cusemu_ioctl_report must not depend on the ABI");

/* The method's name as the daemon spells it, or NULL for an unknown value. */
static inline const char *cusemu_report_method_name(__u32 method)
{
	switch (method) {
	case CUSEMU_REPORT_METHOD_IOCTL:
		return "ioctl";
	case CUSEMU_REPORT_METHOD_UNLOCKED_IOCTL:
		return "unlocked_ioctl";
	case CUSEMU_REPORT_METHOD_COMPAT_IOCTL:
		return "compat_ioctl";
	case CUSEMU_REPORT_METHOD_IOCTL_NATIVE:
		return "ioctl_native";
	case CUSEMU_REPORT_METHOD_IOCTL_COMPAT:
		return "ioctl_compat";
	case CUSEMU_REPORT_METHOD_IOCTL32_HANDLER:
		return "ioctl32 handler";
	}
	return NULL;
}

#endif
