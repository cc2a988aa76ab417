/* SPDX-License-Identifier: MIT */
/*
 * The FUSE transport: instead of CUSE nodes, one FUSE file system mounted
 * at a directory, with one file per device (DIR/rtc0, DIR/event0, ...).
 * Its requests go to the same nodes (node.h) and pool as CUSE sessions.
 * The kernel passes ioctls on FUSE files restricted: it copies what the
 * _IOC bits describe, and takes no retry.
 *
 * The mount goes away when the daemon ends, however it ends, but for a
 * kill of the unmounter too (kill -9 of the process group): a child
 * process forked at start unmounts it then, and only it: not what a
 * symbolic link or another mount put at the directory since. A file
 * removed at run time (cusemuctl remove) loses its name; every later call
 * on a file open on it fails with ENODEV, and once no request is inside
 * it, its open files are released through the model.
 */
#ifndef CUSEMU_FUSEFS_H
#define CUSEMU_FUSEFS_H

#include <stdbool.h>
#include <sys/types.h>

#include <glib.h>

#include "cusemu/device.h"
#include "transport.h"

/* The transport's table (transport.h). */
extern const struct cusemu_transport_ops cusemu_fusefs_ops;

/* Whether m serves fully as a file on a FUSE mount: a line for people. */
char *cusemu_fuse_fitness(const struct cusemu_device_model *m);

#endif
