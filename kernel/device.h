/* SPDX-License-Identifier: MIT */
/*
 * Device instances: a model, its validated parameters, node attributes and
 * the kernel model and lock it is dispatched with.
 */
#ifndef CUSEMU_DAEMON_DEVICE_H
#define CUSEMU_DAEMON_DEVICE_H

#include <stddef.h>
#include <sys/types.h>

#include <glib.h>

#include "config.h"
#include "cusemu/device.h"
#include "ratelimit.h"

struct cusemu_kernel_model;
struct cusemu_lock;
struct cusemu_node;
struct cusemu_stats;

/* The dispatcher's part of an instance: dispatch.c binds it, handler.c
 * runs handlers under its lock. */
struct cusemu_dispatch_part {
	unsigned int methods;		/* CUSEMU_METHOD_* bits offered */
	/* The methods, from the model or built from its tables. */
	cusemu_ioctl_fn ioctl, unlocked_ioctl, compat_ioctl;
	cusemu_ioctl_fn ioctl_native, ioctl_compat;
	int lock_mode;			/* enum cusemu_lock_mode */
	struct cusemu_lock *lock;	/* --lock=device: this device's */
};

/* oops.c's part: an oops fenced it (oops.h), and every call fails with
 * EIO; the first report, kept for cusemuctl list. */
struct cusemu_oops_part {
	gint fenced;
	char *report;
};

/* node.c's part: under the node's lock, the instance's open files and
 * opens under way, and whether a reload replaced it (it is freed when the
 * last of those goes); the ioctls dispatched, and how long the handler of
 * the last one timed took, in µs (a long one shares its worker's source
 * before each call, a longer one also holds a CPU). */
struct cusemu_serving_part {
	unsigned int users;
	bool retired;
	gint dispatched;
	gint last_us;
};

/*
 * A device instance: the public struct cusemu_device that the model sees,
 * and what the daemon keeps beside it, each module's in its part.
 */
/* The default of record-max=, and its least value. */
#define CUSEMU_RECORD_MAX_DEFAULT "64M"
#define CUSEMU_RECORD_MAX_MIN 1024

struct cusemu_instance {
	struct cusemu_device pub;
	/* How it was made, to make it again (cusemuctl reload): device.c. */
	struct cusemu_device_spec *spec;
	unsigned int number;		/* of its model's instances */
	const struct cusemu_kernel_model *default_kmodel;
	GHashTable *params;	/* key -> validated value string */
	mode_t mode;
	uid_t owner;
	gid_t group;
	/* The node serving it, and how. */
	struct cusemu_node *node;
	struct cusemu_serving_part serving;
	/* Set by the transport: wakes the pollers of the node. */
	void (*wake_up)(void *data);
	void *wake_up_data;
	/* How its ioctls are dispatched. */
	const struct cusemu_kernel_model *kmodel;
	struct cusemu_dispatch_part dispatch;
	/* Every command is _IOC-encoded, with no pointer inside: the kernel
	 * copies payloads itself (CUSE restricted ioctls). */
	bool restricted;
	struct cusemu_stats *stats;
	/* record=FILE: its recording (daemon/record.h), shared with the
	 * instances that cusemuctl reload puts in its place; else NULL. */
	struct cusemu_recording *recording;
	uint64_t record_max;		/* record-max=, in bytes */
	struct cusemu_oops_part oops;
	/* Its model runs in a model host (daemon/host.c), none of its code
	 * in the daemon: fenced, it is freed all the same. */
	bool hosted;
	/* How the model broke the handler contract, each said once (call.c). */
	guint contract_broken;
	/* The table rows whose handler was said to write nothing
	 * (handler.c), under its lock. */
	GHashTable *wrote_nothing;
	/* Results the kernel does not take, said at most as often as this
	 * lets through (call.c): a client may cause one per call. */
	struct cusemu_ratelimit bad_result;
	/* The model's own lines of that kind (cusemu_device_ratelimit). */
	struct cusemu_ratelimit model_said;
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

/* The device models built in (generated from devices/meson.build). */
extern const struct cusemu_device_model *const cusemu_device_models[];

/* Made and ended in spawn.c: */

const struct cusemu_device_model *cusemu_device_model_find(const char *name);
/* The same among the models built in and those of plugins already loaded:
 * never loads a file (at run time, in the sandbox). */
const struct cusemu_device_model *cusemu_device_model_loaded(const char *name);
/* "fioc, probe, ...": the names of both, for messages; g_free() it. */
char *cusemu_device_model_names(void);

/*
 * Create an instance from its description; instance is the number of
 * earlier instances of the same model (for the default node name). The
 * kernel model is the daemon's unless the description has kernel=.
 */
struct cusemu_device *
cusemu_device_new(const struct cusemu_device_spec *spec, unsigned int instance,
		  const struct cusemu_kernel_model *kmodel, GError **error);
/* The same for a model outside the registry (tests). */
struct cusemu_device *
cusemu_device_create(const struct cusemu_device_model *m,
		     const struct cusemu_device_spec *spec,
		     unsigned int instance,
		     const struct cusemu_kernel_model *kmodel, GError **error);
/*
 * A fresh instance of model m made as dev was (same description, name and
 * node attributes): what cusemuctl reload puts behind dev's node.
 */
struct cusemu_device *cusemu_device_respawn(const struct cusemu_device *dev,
					    const struct cusemu_device_model *m,
					    GError **error);
/* The model's check once the daemon is in its sandbox (see sandboxed). */
gboolean cusemu_device_sandboxed(struct cusemu_device *dev, GError **error);
void cusemu_device_free(struct cusemu_device *dev);

/* The common keys every model takes, for --help. */
extern const struct cusemu_param cusemu_common_params[];
/* A value of key p in its canonical form, or NULL with a hint in *why. */
char *cusemu_param_normalise(const struct cusemu_param *p, const char *value,
			     const char **why);
/* Key's description, a common key's or m's own; NULL if neither has it. */
const struct cusemu_param *cusemu_param_of(const struct cusemu_device_model *m,
					  const char *key);

/* The data of an instance, in device.c; the model's code runs in none: */

/* A bare instance of m: its description kept, no key applied yet. */
struct cusemu_device *
cusemu_device_alloc(const struct cusemu_device_model *m,
		    const struct cusemu_device_spec *spec, unsigned int instance,
		    const struct cusemu_kernel_model *kmodel);
/* What the description says of key, else fallback; *origin is where it
 * was said (the description's own origin for the fallback). */
const char *cusemu_device_setting(const struct cusemu_device_spec *spec,
				  const char *key, const char *fallback,
				  const char **origin);
/* The common keys but kernel= and record= (name, mode, owner, group,
 * record-max), then the
 * model's own keys, checked and normalised; FALSE and why. */
gboolean cusemu_device_load_common(struct cusemu_device *dev,
				   const struct cusemu_device_spec *spec,
				   unsigned int instance, GError **error);
gboolean cusemu_device_load_params(struct cusemu_device *dev,
				   const struct cusemu_device_spec *spec,
				   GError **error);
/* Free what cusemu_device_alloc() and the loads made. */
void cusemu_device_free_data(struct cusemu_device *dev);

#endif
