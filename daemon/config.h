/* SPDX-License-Identifier: MIT */
/*
 * The daemon's configuration: settings and device descriptions, from the
 * configuration file and the command line, each value with where it came
 * from so that an error can point at it.
 */
#ifndef CUSEMU_CONFIG_H
#define CUSEMU_CONFIG_H

#include <stdlib.h>
#include <string.h>

#include <glib.h>

/*
 * The build's settings come from data/meson.build: CUSEMU_VERSION, the
 * install directories CUSEMU_BINDIR and CUSEMU_SBINDIR, and
 * CUSEMU_CONFIG_FILE, the file cusemud.service reads. The programs' hints
 * name themselves by where they run from.
 */

/* Whether this program runs from dir, where meson installs it. */
static inline gboolean cusemu_runs_installed(const char *dir)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *exe_dir = exe ? g_path_get_dirname(exe) : NULL;
	char *real = realpath(dir, NULL);
	gboolean installed = exe_dir && real && !strcmp(exe_dir, real);

	free(real);
	return installed;
}

/*
 * How a message names this program, for the user to run it: name when it
 * runs installed in dir, else the path of the build tree's, relative to the
 * working directory when under it. Free it with g_free().
 */
static inline char *cusemu_self_command(const char *name, const char *dir)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *cwd = g_get_current_dir();
	size_t n = strlen(cwd);

	if (!exe || cusemu_runs_installed(dir))
		return g_strdup(name);
	if (!strncmp(exe, cwd, n) && exe[n] == '/' && strchr(exe + n + 1, '/'))
		return g_strdup(exe + n + 1);
	if (!strncmp(exe, cwd, n) && exe[n] == '/')
		return g_strconcat("./", exe + n + 1, NULL);
	return g_steal_pointer(&exe);
}

/* One key = value of a device description. */
struct cusemu_setting {
	char *key;
	char *value;
	char *origin;		/* "FILE:LINE" or "--device ARG" */
	/* The file a control client opened for value with its own rights
	 * and handed over (record=), owned here; else -1. */
	int fd;
};

/* One device instance, as described; not validated against its model yet. */
struct cusemu_device_spec {
	char *model;
	char *origin;		/* where the description starts */
	GPtrArray *settings;	/* of struct cusemu_setting */
};

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
	char *major;		/* char-device major for every node; NULL: dynamic */
	char *major_origin;
	char *threads;		/* workers of the pool; NULL: the default */
	char *threads_origin;
	char *fuse;		/* a FUSE mount for the files; NULL: CUSE nodes */
	char *fuse_origin;
	char *allow_other;	/* "true": other users may use the mount */
	char *allow_other_origin;
	char *panic_on_oops;	/* "true": a model's oops ends the daemon */
	char *panic_on_oops_origin;
	char *soft_lockup_secs;	/* the watchdog's threshold; NULL: default */
	char *soft_lockup_secs_origin;
	char *hung_task_secs;	/* the hung-task threshold; NULL: default */
	char *hung_task_secs_origin;
	char *host_memory;	/* a model host's address space; NULL: default */
	char *host_memory_origin;
	GPtrArray *devices;	/* of struct cusemu_device_spec */
};

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

/* A spec that outlives its configuration (a device keeps its own). */
struct cusemu_device_spec *
cusemu_device_spec_copy(const struct cusemu_device_spec *spec);
void cusemu_device_spec_free(struct cusemu_device_spec *spec);

/* The value of key in spec, or NULL. */
const struct cusemu_setting *
cusemu_device_spec_lookup(const struct cusemu_device_spec *spec,
			  const char *key);

#endif
