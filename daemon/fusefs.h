/* SPDX-License-Identifier: MIT */
/*
 * The FUSE transport: instead of CUSE nodes, one FUSE file system mounted
 * at a directory, with one file per device (DIR/rtc0, DIR/event0, ...).
 * Its requests go to the same nodes (node.h) and pool as CUSE sessions.
 * The kernel passes ioctls on FUSE files restricted: it copies what the
 * _IOC bits describe, and takes no retry.
 */
#ifndef CUSEMU_FUSEFS_H
#define CUSEMU_FUSEFS_H

#include <stdbool.h>
#include <sys/types.h>

#include <glib.h>

struct cusemu_mount;

struct cusemu_unmounter_seal;

struct cusemu_mount_options {
	const char *dir;	/* an existing directory */
	bool allow_other;	/* other users may use the files */
	bool debug;		/* libfuse's request trace */
	/* As root: what the unmounter keeps (sandbox.h); NULL otherwise. */
	const struct cusemu_unmounter_seal *seal;
};

/*
 * Mount dir with a file for each of devices (struct cusemu_device, whose
 * dispatch is bound) and serve it from the pool; as an ordinary user the
 * mount goes through fusermount3. The mount goes away when the daemon
 * ends, however it ends, but for a kill of the unmounter too (kill -9 of
 * the process group): a child process forked here unmounts it then, and
 * only it: not what a symbolic link or another mount put at dir since.
 */
struct cusemu_mount *cusemu_mount_start(GPtrArray *devices,
					const struct cusemu_mount_options *opts,
					GError **error);

/*
 * At run time, on the main thread (cusemuctl add, remove): a file for dev,
 * whose dispatch is bound, found by its name from now on; and the removal
 * of dev's file: its name goes, every later call on a file open on it
 * fails with ENODEV, and once no request is inside it, its open files are
 * released through the model. False when requests do not end in 10 s:
 * the device must then be left as it is.
 */
void cusemu_mount_add(struct cusemu_mount *m, struct cusemu_device *dev);
bool cusemu_mount_remove(struct cusemu_mount *m, struct cusemu_device *dev);

/* The unmounter's process id. */
pid_t cusemu_mount_unmounter(const struct cusemu_mount *m);

/* True once the kernel has dropped the mount (someone unmounted it). */
bool cusemu_mount_ended(struct cusemu_mount *m);

/* End its requests and its connection; its files then fail with ENOTCONN
 * until the daemon has exited and the mount is gone. */
void cusemu_mount_stop(struct cusemu_mount *m);
/* Once the pool has stopped (cusemu_transport_stop()). */
void cusemu_mount_free(struct cusemu_mount *m);

#endif
