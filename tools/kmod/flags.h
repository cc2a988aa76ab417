/* SPDX-License-Identifier: MIT */
/*
 * The defines and include directories a model's sources were built with,
 * from the compile commands of the plugin's build, for the module's build
 * of the same sources.
 */
#ifndef CUSEMU_KMOD_FLAGS_H
#define CUSEMU_KMOD_FLAGS_H

#include <stdbool.h>

#include <glib.h>

/*
 * The compile_commands.json that holds the plugin's compiles: the first
 * in plugin's directory or one above it. NULL when there is none.
 */
char *kmod_find_compile_commands(const char *plugin);

/*
 * The -D, -U and -I (also -iquote, -isystem) arguments that compile_commands
 * (a compile_commands.json) gives source (a canonical path), in their order,
 * each one argument with relative directories made absolute. The include
 * directories of user space's libraries (under /usr/include and /usr/lib)
 * are left out: a module has the kernel's, and the SDK's comes from the
 * frame. plugin, if not NULL, picks among several compiles of the source
 * the one for that plugin. NULL with *error set when the file cannot be
 * read or does not compile source.
 */
GPtrArray *kmod_source_flags(const char *compile_commands, const char *source,
			     const char *plugin, GError **error);

/* An argument for a kbuild variable: quoted for the shell, '$' and '#'
 * escaped for make. */
char *kmod_make_arg(const char *arg);

#endif
