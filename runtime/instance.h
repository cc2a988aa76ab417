/* SPDX-License-Identifier: MIT */
/*
 * The daemon's half of a device: struct cusemu_instance embeds the public
 * struct cusemu_device a model sees, and keeps beside it each module's
 * part. The runtime implements the model API on it; kernel/device.h makes
 * and ends instances.
 */
#ifndef CUSEMU_INSTANCE_H
#define CUSEMU_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "cusemu/device.h"
#include "ratelimit.h"

struct cusemu_device_spec;
struct cusemu_kernel_model;
struct cusemu_lock;
struct cusemu_node;
struct cusemu_recording;
struct cusemu_stats;

/* device-data.c's part: how the instance was made, to make it again
 * (cusemuctl reload), and what its node is made with. */
struct cusemu_made_part {
	struct cusemu_device_spec *spec;
	unsigned int number;		/* of its model's instances */
	const struct cusemu_kernel_model *default_kmodel;
	GHashTable *params;	/* key -> validated value string */
	/* The files of its keys handed over by whoever added it: path ->
	 * descriptor + 1, its spec's (kernel/spec.h); NULL for none. */
	GHashTable *files;
	mode_t mode;
	uid_t owner;
	gid_t group;
	/* Its model runs in a model host (daemon/host.c), none of its code
	 * in the daemon: fenced, it is freed all the same. */
	bool hosted;
};

/* The dispatcher's part of an instance: dispatch.c binds it, handler.c
 * runs handlers under its lock. */
struct cusemu_dispatch_part {
	/* How its ioctls are dispatched. */
	const struct cusemu_kernel_model *kmodel;
	unsigned int methods;		/* CUSEMU_METHOD_* bits offered */
	/* The methods, from the model or built from its tables. */
	cusemu_ioctl_fn ioctl, unlocked_ioctl, compat_ioctl;
	cusemu_ioctl_fn ioctl_native, ioctl_compat;
	int lock_mode;			/* enum cusemu_lock_mode */
	struct cusemu_lock *lock;	/* --lock=device: this device's */
	/* Every command is _IOC-encoded, with no pointer inside: the kernel
	 * copies payloads itself (CUSE restricted ioctls). */
	bool restricted;
	/* The table rows whose handler was said to write nothing
	 * (handler.c), under its lock. */
	GHashTable *wrote_nothing;
};

/* oops.c's part: an oops fenced it (oops.h), and every call fails with
 * EIO; the first report, kept for cusemuctl list. */
struct cusemu_oops_part {
	gint fenced;
	char *report;
};

/* The transport's part: the node serving it, and how. Under the node's
 * lock, the instance's open files and opens under way, and whether a
 * reload replaced it (it is freed when the last of those goes); the
 * ioctls dispatched, and how long the handler of the last one timed took,
 * in µs, and of that its thread's CPU time (a long one shares its
 * worker's source before each call; one that also spent long on a CPU,
 * a spinning one, gets a CPU of its own). */
struct cusemu_serving_part {
	struct cusemu_node *node;
	/* Set by the transport: wakes the pollers of the node. */
	void (*wake_up)(void *data);
	void *wake_up_data;
	unsigned int users;
	bool retired;
	gint dispatched;
	gint last_us;
	gint last_cpu_us;
};

/* The recorder's part (daemon/record.h): record=FILE's recording, shared
 * with the instances that cusemuctl reload puts in their place, else
 * NULL; and record-max=, in bytes. */
struct cusemu_record_part {
	struct cusemu_recording *recording;
	uint64_t record_max;
};

/* call.c's part: how the model broke the handler contract, each said
 * once; results the kernel does not take, said at most as often as
 * bad_result lets through (a client may cause one per call); and the
 * model's own lines of that kind (cusemu_device_ratelimit). */
struct cusemu_contract_part {
	guint broken;
	struct cusemu_ratelimit bad_result;
	struct cusemu_ratelimit model_said;
};

/*
 * A device instance: the public struct cusemu_device that the model sees,
 * and what the daemon keeps beside it, each module's in its part.
 */
struct cusemu_instance {
	struct cusemu_device pub;
	struct cusemu_made_part made;
	struct cusemu_dispatch_part dispatch;
	struct cusemu_oops_part oops;
	struct cusemu_serving_part serving;
	struct cusemu_record_part record;
	struct cusemu_contract_part contract;
	/* stats.c's part, an allocation of its own: its size is the
	 * model's number of commands. */
	struct cusemu_stats *stats;
};

static inline struct cusemu_instance *
cusemu_instance(const struct cusemu_device *dev)
{
	return (struct cusemu_instance *)((char *)dev -
					  offsetof(struct cusemu_instance, pub));
}

/* How many times a model reported lost data (cusemu_device_lost): the
 * daemon then exits with status 1. */
unsigned int cusemu_device_lost_count(void);

#endif
