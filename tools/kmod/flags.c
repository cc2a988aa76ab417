/* SPDX-License-Identifier: MIT */
/*
 * The defines and include directories of a model's sources, read from the
 * compile_commands.json of the build that made its plugin (meson writes one
 * in every build directory), so that the module is built from the same
 * configuration: a source built with -DFIXED is a module built with
 * -DFIXED.
 */
#define G_LOG_DOMAIN "cusemu-kmod"

#include <string.h>

#include <json-glib/json-glib.h>

#include "flags.h"

char *kmod_find_compile_commands(const char *plugin)
{
	g_autofree char *abs = g_canonicalize_filename(plugin, NULL);
	g_autofree char *dir = g_path_get_dirname(abs);

	for (;;) {
		g_autofree char *path = g_build_filename(dir, "compile_commands.json",
							 NULL);
		char *up;

		if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
			return g_steal_pointer(&path);
		up = g_path_get_dirname(dir);
		if (!strcmp(up, dir)) {
			g_free(up);
			return NULL;
		}
		g_free(dir);
		dir = up;
	}
}

/* The arguments of one entry: "arguments", else "command" split as the
 * shell does. */
static char **entry_argv(JsonObject *entry, GError **error)
{
	if (json_object_has_member(entry, "arguments")) {
		JsonArray *a = json_object_get_array_member(entry, "arguments");
		guint n = a ? json_array_get_length(a) : 0;
		char **argv = g_new0(char *, n + 1);

		for (guint i = 0; i < n; i++)
			argv[i] = g_strdup(json_array_get_string_element(a, i));
		return argv;
	} else {
		const char *command = json_object_get_string_member_with_default(
			entry, "command", "");
		char **argv = NULL;

		if (!g_shell_parse_argv(command, NULL, &argv, error))
			return NULL;
		return argv;
	}
}

static char *absolute(const char *dir, const char *path)
{
	return g_canonicalize_filename(path, dir);
}

/* A directory of user space's libraries: glib's, the C library's. */
static bool system_dir(const char *dir)
{
	return g_str_has_prefix(dir, "/usr/include") ||
	       g_str_has_prefix(dir, "/usr/lib") ||
	       g_str_has_prefix(dir, "/usr/local/lib");
}

static void add_dir(GPtrArray *flags, const char *opt, const char *dir,
		    const char *value)
{
	g_autofree char *abs = absolute(dir, value);

	if (!system_dir(abs))
		g_ptr_array_add(flags, g_strconcat(opt, abs, NULL));
}

/* What of argv the module's build takes. */
static GPtrArray *pick_flags(char **argv, const char *dir)
{
	static const char *const dir_opts[] = { "-I", "-iquote", "-isystem" };
	GPtrArray *flags = g_ptr_array_new_with_free_func(g_free);

	for (char **a = argv; *a; a++) {
		bool done = false;

		if (g_str_has_prefix(*a, "-D") || g_str_has_prefix(*a, "-U")) {
			if ((*a)[2])
				g_ptr_array_add(flags, g_strdup(*a));
			else if (a[1]) {
				g_ptr_array_add(flags, g_strconcat(*a, a[1], NULL));
				a++;
			}
			continue;
		}
		for (guint i = 0; i < G_N_ELEMENTS(dir_opts) && !done; i++) {
			size_t len = strlen(dir_opts[i]);

			if (strncmp(*a, dir_opts[i], len))
				continue;
			done = true;
			if ((*a)[len])
				add_dir(flags, dir_opts[i], dir, *a + len);
			else if (a[1])
				add_dir(flags, dir_opts[i], dir, *++a);
		}
	}
	return flags;
}

/* Meson puts a target's objects in TARGET.p/: the plugin's compile. */
static bool entry_is_plugin(JsonObject *entry, const char *plugin)
{
	const char *output = json_object_get_string_member_with_default(
		entry, "output", NULL);
	g_autofree char *base = plugin ? g_path_get_basename(plugin) : NULL;
	g_autofree char *prefix = base ? g_strconcat(base, ".p/", NULL) : NULL;

	return output && prefix && strstr(output, prefix);
}

GPtrArray *kmod_source_flags(const char *compile_commands, const char *source,
			     const char *plugin, GError **error)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonObject *found = NULL;
	JsonNode *root;
	JsonArray *entries;
	g_auto(GStrv) argv = NULL;
	const char *dir;

	if (!json_parser_load_from_file(parser, compile_commands, error))
		return NULL;
	root = json_parser_get_root(parser);
	if (!root || !JSON_NODE_HOLDS_ARRAY(root)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s: not a list of compile commands", compile_commands);
		return NULL;
	}
	entries = json_node_get_array(root);
	for (guint i = 0; i < json_array_get_length(entries); i++) {
		JsonObject *e = json_array_get_object_element(entries, i);
		const char *file, *edir;
		g_autofree char *path = NULL;

		if (!e)
			continue;
		file = json_object_get_string_member_with_default(e, "file", NULL);
		edir = json_object_get_string_member_with_default(e, "directory", "/");
		if (!file)
			continue;
		path = absolute(edir, file);
		if (strcmp(path, source))
			continue;
		if (!found || entry_is_plugin(e, plugin))
			found = e;
		if (entry_is_plugin(e, plugin))
			break;
	}
	if (!found) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "%s does not compile %s: its defines and include "
			    "directories are unknown", compile_commands, source);
		return NULL;
	}
	argv = entry_argv(found, error);
	if (!argv) {
		g_prefix_error(error, "%s: the compile of %s: ", compile_commands,
			       source);
		return NULL;
	}
	dir = json_object_get_string_member_with_default(found, "directory", "/");
	return pick_flags(argv, dir);
}

char *kmod_make_arg(const char *arg)
{
	g_autofree char *quoted = g_shell_quote(arg);
	GString *out = g_string_new(NULL);

	for (const char *c = quoted; *c; c++) {
		if (*c == '$')
			g_string_append_c(out, '$');
		else if (*c == '#')
			g_string_append_c(out, '\\');
		g_string_append_c(out, *c);
	}
	return g_string_free(out, FALSE);
}
