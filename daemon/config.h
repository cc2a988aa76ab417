/* SPDX-License-Identifier: MIT */
/*
 * The daemon's configuration: settings and device descriptions, from the
 * configuration file and the command line, each value with where it came
 * from so that an error can point at it.
 */
#ifndef CUSEMU_CONFIG_H
#define CUSEMU_CONFIG_H

#include <glib.h>

#include "self.h"
#include "spec.h"

struct cusemu_config {
	char *kernel_model;	/* NULL: the default */
	char *kernel_model_origin;
	char *lock;		/* NULL: the default */
	char *lock_origin;
	char *control;		/* control socket path; NULL: the default */
	char *control_origin;
	char *control_group;	/* who besides root may use it */
	char *control_group_origin;
	char *plugins;		/* plugin files, separated by ';'; or NULL */
	char *plugins_origin;
	char *seccomp;		/* enforce, log or off; NULL: the default */
	char *seccomp_origin;
	char *user;		/* whom to run as after start-up; NULL: root */
	char *user_origin;
	char *threads;		/* workers of the pool; NULL: the default */
	char *threads_origin;
	char *panic_on_oops;	/* "true": a model's oops ends the daemon */
	char *panic_on_oops_origin;
	char *soft_lockup_secs;	/* the watchdog's threshold; NULL: default */
	char *soft_lockup_secs_origin;
	char *hung_task_secs;	/* the hung-task threshold; NULL: default */
	char *hung_task_secs_origin;
	char *host_memory;	/* a model host's address space; NULL: default */
	char *host_memory_origin;
	/* The transports' own keys of [daemon] (transport.h): a struct
	 * cusemu_config_value by key, for those the file gives. */
	GHashTable *transport_keys;
	GPtrArray *devices;	/* of struct cusemu_device_spec */
};

struct cusemu_config_value {
	char *value;
	char *origin;
};

/* The [daemon] group's keys, in the order the documents give them: its
 * own, with the transports' after the pool's size (threads). */
GPtrArray *cusemu_config_daemon_keys(void);

/* The value of a transport's key of [daemon], and where it came from;
 * NULL when the file gives none. */
const char *cusemu_config_transport_value(const struct cusemu_config *config,
					  const char *key,
					  const char **origin);

struct cusemu_config *cusemu_config_new(void);
void cusemu_config_free(struct cusemu_config *config);

/* Add what a configuration file holds; errors name the file and line. */
gboolean cusemu_config_load_file(struct cusemu_config *config,
				 const char *path, GError **error);

/* Add one --device MODEL[:key=value,...] argument. */
gboolean cusemu_config_add_device_arg(struct cusemu_config *config,
				      const char *arg, GError **error);
/* The same from elsewhere (cusemuctl add): errors start with "WHAT ARG". */
gboolean cusemu_config_add_device_text(struct cusemu_config *config,
				       const char *arg, const char *what,
				       GError **error);

#endif
