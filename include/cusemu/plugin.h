/* SPDX-License-Identifier: MIT */
/*
 * A model built outside cusemu's tree, as a shared object that cusemud
 * loads with --plugin (or finds in its models directory). The object ends
 * with one line naming its models:
 *
 *     CUSEMU_PLUGIN(&my_model);
 *
 * It is built against this SDK (pkg-config cusemu-1) and resolves the
 * functions of <cusemu/device.h>, <cusemu/uaccess.h>, <cusemu/sched.h> and
 * <cusemu/report.h> against the daemon when it is loaded.
 */
#ifndef CUSEMU_PLUGIN_H
#define CUSEMU_PLUGIN_H

#include <stddef.h>

#include "cusemu/device.h"

/*
 * The version of the model API these headers describe. A plugin records the
 * one it was built with; the daemon refuses a plugin of another version,
 * since the structs it shares with the daemon may differ.
 */
#define CUSEMU_API_VERSION 1

/* What a plugin exports, under the name CUSEMU_PLUGIN_SYMBOL. */
struct cusemu_plugin {
	unsigned int api_version;	/* CUSEMU_API_VERSION at build time */
	/* The models, ended by NULL; their names must be new to the daemon. */
	const struct cusemu_device_model *const *models;
};

#define CUSEMU_PLUGIN_SYMBOL "cusemu_plugin"

#define CUSEMU_PLUGIN(...)                                                \
	static const struct cusemu_device_model *const                    \
		cusemu_plugin_models_[] = { __VA_ARGS__, NULL };          \
	__attribute__((visibility("default"))) extern const struct        \
		cusemu_plugin cusemu_plugin;                              \
	const struct cusemu_plugin cusemu_plugin = {                      \
		CUSEMU_API_VERSION, cusemu_plugin_models_ }

#endif
