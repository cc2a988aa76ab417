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

#include "cusemu/device.h"
#include "instance.h"
#include "spec.h"

/* The default of record-max=, and its least value. */
#define CUSEMU_RECORD_MAX_DEFAULT "64M"
#define CUSEMU_RECORD_MAX_MIN 1024

/* The device models built in (generated from devices/meson.build). */
extern const struct cusemu_device_model *const cusemu_device_models[];

/* Made and ended in spawn.c: */

/*
 * Models from outside the registry: the daemon's plugin loader hands these
 * over at start-up (cusemu_model_source_set), so that the kernel's part
 * finds, isolates and names them, and knows no plugin. Without it, the
 * models built in alone.
 */
struct cusemu_model_source {
	/* The model name from the models directory, or NULL with *error
	 * set if it was there and refused. */
	const struct cusemu_device_model *(*find)(const char *name,
						  GError **error);
	/* Every model loaded so far, NULL-terminated; g_free() the array. */
	guint (*models)(const struct cusemu_device_model ***models);
	/* The plugin file m came from; NULL for a model built in. */
	const char *(*origin)(const struct cusemu_device_model *m);
	/* The plugin file a loaded object's path names, and its fd. */
	const char *(*file_origin)(const char *path, int *fd);
	/* The plugin file whose code pc is in, or NULL. */
	const char *(*code_origin)(const void *pc);
	/* isolation=none: m loaded into the daemon. */
	const struct cusemu_device_model *(*in_process)(
		const struct cusemu_device_model *m, GError **error);
	/* isolation=process: the proxy of m in its model host. */
	const struct cusemu_device_model *(*hosted)(
		const struct cusemu_device_model *m);
	/* Where find looks, for messages. */
	const char *(*dir)(void);
};

/* In source.c: */
void cusemu_model_source_set(const struct cusemu_model_source *source);
/* The source handed over, or NULL. */
const struct cusemu_model_source *cusemu_model_source(void);
/* The source's answers, or those of a registry alone: */
const char *cusemu_model_origin(const struct cusemu_device_model *m);
const char *cusemu_model_file_origin(const char *path, int *fd);
const char *cusemu_model_code_origin(const void *pc);

/*
 * record=FILE: the daemon's recordings, handed over at start-up the same
 * way (cusemu_recorder_set). Without them record= is refused.
 */
struct cusemu_recorder {
	/* The recording of dev as its description says, or continued (a
	 * reload's) in its place; TRUE without one. */
	gboolean (*start)(struct cusemu_device *dev,
			  const struct cusemu_device_spec *spec,
			  struct cusemu_recording *continued, GError **error);
	void (*unref)(struct cusemu_recording *recording);
};

void cusemu_recorder_set(const struct cusemu_recorder *recorder);


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
/*
 * The files a value of p names: the value of a CUSEMU_PARAM_PATH key when
 * not empty, the file= options of a CUSEMU_PARAM_PATHS one (even empty
 * ones: they name a file too), none for other types. Free it with
 * g_ptr_array_unref().
 */
GPtrArray *cusemu_param_paths(const struct cusemu_param *p,
			      const char *value);
/* Key's description, a common key's or m's own; NULL if neither has it. */
const struct cusemu_param *cusemu_param_of(const struct cusemu_device_model *m,
					  const char *key);

/* The data of an instance, in device-data.c; the model's code runs in none: */

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
