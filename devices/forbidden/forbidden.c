/* SPDX-License-Identifier: MIT */
/*
 * forbidden: a device for tests only (built into cusemud-test, never into
 * cusemud) whose ioctls make system calls the sandbox's allow-list does
 * not hold, as a compromised handler would. Under --seccomp=enforce the
 * kernel kills the daemon; under log the call runs and the kernel logs it.
 */
#define G_LOG_DOMAIN "cusemu-forbidden"

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cusemu/device.h"

/* 0x5a01: socket(AF_INET, ...), closed again; 0 when it runs. */
#define FORBIDDEN_SOCKET _IO('Z', 1)
/* 0x5a02: execve of a program that does not exist; ENOENT when it runs. */
#define FORBIDDEN_EXEC _IO('Z', 2)

static long forbidden_socket(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static long forbidden_exec(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	char *const argv[] = { "cusemu-forbidden", NULL };

	execve("/nonexistent/cusemu-forbidden", argv, argv + 1);
	return -errno;
}

static const struct cusemu_ioctl forbidden_native[] = {
	CUSEMU_IOCTL_NONE(FORBIDDEN_SOCKET, forbidden_socket),
	CUSEMU_IOCTL_NONE(FORBIDDEN_EXEC, forbidden_exec),
	CUSEMU_IOCTL_END
};

const struct cusemu_device_model cusemu_model_forbidden = {
	.name = "forbidden",
	.summary = "tests only: ioctls that make system calls the sandbox "
		   "forbids (socket(AF_INET), execve)",
	.node_prefix = "forbidden",
	.native_table = forbidden_native,
	.compat_ptr_ioctl = true,
};
