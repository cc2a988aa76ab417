/* SPDX-License-Identifier: MIT */
/*
 * twice: a model on the portable surface alone whose handler copies its
 * payload in twice, with a sleep between, as a driver that checks a struct
 * and then copies it again to act on it does. Where the handler reads the
 * fetch step's snapshot (cusemud, and the module's frame), it sees one
 * value however the caller's other thread changes it; twice-client makes
 * that race. Built as a plugin and, by sdk-example, as twice.ko.
 */
#include "cusemu/device.h"
#include "cusemu/plugin.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"
#include "twice.h"

static long twice_read(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	uint32_t first, second;

	if (cusemu_get_user(first, arg))
		return -EFAULT;
	cusemu_usleep(200);
	if (cusemu_get_user(second, arg))
		return -EFAULT;
	return first != second;
}

static const struct cusemu_ioctl twice_native[] = {
	CUSEMU_IOCTL_IOC(TWICE_READ, twice_read),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model twice_model = {
	.name = "twice",
	.summary = "a handler that copies its payload in twice",
	.node_prefix = "twice",
	.native_table = twice_native,
	.compat_ptr_ioctl = true,
};

CUSEMU_PLUGIN(&twice_model);
