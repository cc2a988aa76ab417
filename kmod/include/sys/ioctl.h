/* SPDX-License-Identifier: MIT */
/* <sys/ioctl.h> in a module that cusemu-kmod writes: _IO, _IOR, _IOW, _IOWR and _IOC_*, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_SYS_IOCTL_H
#define CUSEMU_KMOD_SYS_IOCTL_H
#include <linux/ioctl.h>
#endif
