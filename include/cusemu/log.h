/* SPDX-License-Identifier: MIT */
/*
 * A model's lines in the log, as the kernel's dev_err(), dev_warn() and
 * dev_info(): each starts with the device's node name. cusemud writes them
 * to its log (journal or standard error) in the log domain cusemu-MODEL
 * (cusemu-watchdog), a module that cusemu-kmod(1) builds to the kernel's
 * (dmesg). Part of the
 * portable surface. A line a client can cause on every call goes through
 * cusemu_device_ratelimit() of <cusemu/device.h> first.
 */
#ifndef CUSEMU_LOG_H
#define CUSEMU_LOG_H

#include "cusemu/device.h"

enum cusemu_log_level {
	CUSEMU_LOG_ERR,		/* the device cannot do what it should */
	CUSEMU_LOG_WARNING,	/* it goes on, but something is wrong */
	CUSEMU_LOG_INFO,	/* worth knowing */
};

/* One line; printf's format (the kernel's %p extensions excepted), no
 * newline needed. */
void cusemu_dev_log(const struct cusemu_device *dev,
		    enum cusemu_log_level level, const char *format, ...)
	CUSEMU_PRINTF(3, 4);

#define cusemu_dev_err(dev, ...) cusemu_dev_log((dev), CUSEMU_LOG_ERR, __VA_ARGS__)
#define cusemu_dev_warn(dev, ...) cusemu_dev_log((dev), CUSEMU_LOG_WARNING, __VA_ARGS__)
#define cusemu_dev_info(dev, ...) cusemu_dev_log((dev), CUSEMU_LOG_INFO, __VA_ARGS__)

#endif
