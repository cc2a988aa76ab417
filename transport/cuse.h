/* SPDX-License-Identifier: MIT */
/*
 * The CUSE transport: one session per device instance, each with its
 * /dev node; cusemu_cuse_ops is its table (transport.h).
 */
#ifndef CUSEMU_CUSE_H
#define CUSEMU_CUSE_H

#include "transport.h"

extern const struct cusemu_transport_ops cusemu_cuse_ops;

#endif
