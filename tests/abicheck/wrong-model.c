/* SPDX-License-Identifier: MIT */
/*
 * A model with the table mistakes of wrong.h, for cusemu-abicheck --model
 * (tests/test-abicheck) and the daemon's hint to the i386 caller it fails
 * (client-tests/suite/96-abicheck.sh).
 */
#include <sys/ioctl.h>

#include "cusemu/plugin.h"
#include "cusemu/uaccess.h"

#include "wrong.h"

/* A row the header does not have. */
#define WRONG_EXTRA _IO('Y', 9)
/* What the author took for WRONG_LONG's i386 number: __u64 is 8 bytes. */
#define WRONG_LONG32 _IOR('Y', 2, __u64)

static long wrong_info(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct wrong_info info = { .version = 1, .serial = WRONG_SERIAL };

	return cusemu_copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long wrong_u32(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user((__u32)7, arg);
}

static long wrong_long(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	return cusemu_put_user((unsigned long)7, arg);
}

static long wrong_none(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	return 0;
}

static const struct cusemu_ioctl wrong_native[] = {
	CUSEMU_IOCTL_IOC(WRONG_INFO, wrong_info),
	CUSEMU_IOCTL_IOC(WRONG_LONG, wrong_long),
	CUSEMU_IOCTL_IOC(WRONG_RIGHT, wrong_u32),
	CUSEMU_IOCTL_NONE(WRONG_EXTRA, wrong_none),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl wrong_compat[] = {
	CUSEMU_COMPAT_SAME(WRONG_INFO),
	CUSEMU_IOCTL_IOC(WRONG_LONG32, wrong_u32),
	CUSEMU_COMPAT_SAME(WRONG_RIGHT),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model wrong_model = {
	.name = "wrong",
	.summary = "a model whose compat table is wrong, for the tests",
	.node_prefix = "wrong",
	.native_table = wrong_native,
	.compat_table = wrong_compat,
};

CUSEMU_PLUGIN(&wrong_model);
