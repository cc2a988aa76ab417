/* SPDX-License-Identifier: MIT */
/* <poll.h> in a module that cusemu-kmod writes: POLLIN, POLLOUT and the rest, for ->poll, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_POLL_H
#define CUSEMU_KMOD_POLL_H
#include <linux/poll.h>
#endif
