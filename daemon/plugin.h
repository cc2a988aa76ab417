/* SPDX-License-Identifier: MIT */
/*
 * Device models from shared objects (<cusemu/plugin.h>): --plugin FILE, or
 * MODEL.so in the models directory for a --device MODEL that is not built
 * in. Loaded before any node exists, as root, so a file or directory that
 * someone else could have written is refused.
 */
#ifndef CUSEMU_PLUGIN_LOADER_H
#define CUSEMU_PLUGIN_LOADER_H

#include <glib.h>

#include "cusemu/device.h"

/*
 * Where the installed models live (libdir/cusemu-1/models); cusemud-test
 * alone, never installed, may point it elsewhere for the tests.
 */
extern const char *cusemu_models_dir;

/*
 * Hand the loader to the kernel's part (cusemu_model_source_set): devices
 * of plugins' models, found by name in the models directory too. Once, at
 * start-up, before any device is made; loading a plugin does it too.
 */
void cusemu_plugin_register(void);

/* Load the models of the plugin at path; FALSE and why on a refusal. */
gboolean cusemu_plugin_load(const char *path, GError **error);

/* The model name from the models directory, or NULL with *error set
 * only when a file was there and refused. */
const struct cusemu_device_model *cusemu_plugin_find(const char *name,
						     GError **error);

/* Every model loaded from a plugin, in load order, and where it came from. */
guint cusemu_plugin_models(const struct cusemu_device_model ***models);
const char *cusemu_plugin_origin(const struct cusemu_device_model *m);
/* The plugin file a loaded object's path (as the dynamic loader names it)
 * was loaded from, or NULL if it is no plugin; *fd is the file as it was
 * loaded (a rebuild may have replaced the path since), or -1. */
const char *cusemu_plugin_file_origin(const char *path, int *fd);
/*
 * The plugin file whose code holds pc, or NULL: for a fault in a thread a
 * model started, outside any call. Safe in a signal handler.
 */
const char *cusemu_plugin_code_origin(const void *pc);

/*
 * The model m (a model host's proxy) loaded into the daemon itself, for a
 * device with isolation=none: its file's sealed image is loaded once, on
 * the first such device. NULL and why when the loader refuses it.
 */
const struct cusemu_device_model *
cusemu_plugin_in_process(const struct cusemu_device_model *m, GError **error);
/* The proxy of a model loaded in the daemon (m itself for others). */
const struct cusemu_device_model *
cusemu_plugin_hosted(const struct cusemu_device_model *m);

/*
 * cusemuctl reload: model m's plugin file loaded again if it was rebuilt
 * (a new file at its path), with the checks of a first load; the model of
 * the same name in it, which --device and add use from now on. m itself
 * when the file is the one loaded, or m is built in. NULL and why when the
 * file is refused, or has no such model any more. The old code stays
 * loaded while files opened before may still be inside it: code loaded
 * into the daemon (isolation=none) for the daemon's life, a model host's
 * description until cusemu_plugin_prune() finds no device of it.
 */
const struct cusemu_device_model *
cusemu_plugin_reload(const struct cusemu_device_model *m, GError **error);

/*
 * The loads that reloads replaced, whose models no device uses any more and
 * whose code was never loaded into the daemon, go: their proxy models,
 * their model hosts' descriptions, their images. From the main thread,
 * after a device was freed.
 */
void cusemu_plugin_prune(void);

#endif
