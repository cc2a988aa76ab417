/* SPDX-License-Identifier: MIT */
/*
 * How the programs name themselves in their hints: by where they run from.
 */
#ifndef CUSEMU_SELF_H
#define CUSEMU_SELF_H

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

#endif
