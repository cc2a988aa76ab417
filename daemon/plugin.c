/* SPDX-License-Identifier: MIT */
/*
 * Loading device models from plugins: the file's ownership and permissions
 * first (sshd's rule for what root runs), then GModule, the entry symbol,
 * the API version and the models' names.
 */
#define G_LOG_DOMAIN "cusemu-plugin"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <gmodule.h>

#include "cusemu/plugin.h"
#include "device.h"
#include "plugin.h"

const char cusemu_models_dir[] = CUSEMU_MODELS_DIR;

struct loaded {
	const struct cusemu_device_model *model;
	char *origin;		/* the plugin's path */
};

static GArray *loaded;		/* struct loaded, in load order */

static const struct loaded *find_loaded(const char *name)
{
	for (guint i = 0; loaded && i < loaded->len; i++) {
		const struct loaded *l = &g_array_index(loaded, struct loaded, i);

		if (!strcmp(l->model->name, name))
			return l;
	}
	return NULL;
}

static gboolean refuse(GError **error, const char *path, const char *format,
		       ...) G_GNUC_PRINTF(3, 4);

static gboolean refuse(GError **error, const char *path, const char *format,
		       ...)
{
	g_autofree char *why = NULL;
	va_list args;

	va_start(args, format);
	why = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
		    "plugin %s refused: %s", path, why);
	return FALSE;
}

/* Who may own and write the path: root, and the daemon's user if not root. */
static char *trusted(uid_t self)
{
	return self ? g_strdup_printf("root or uid %u", (unsigned int)self)
		    : g_strdup("root");
}

/*
 * A directory that others can write, above the plugin. Sticky (as /tmp and
 * /var/tmp are), it keeps them from removing or renaming an entry they do
 * not own, so it is safe when its next component, child_uid, is root's or
 * the daemon's user's. Never advise chmod on such a directory: the system
 * needs it as it is. Otherwise advise chmod only on the plugin's own
 * directory, which its author made; above it, moving the plugin is safe.
 */
static gboolean safe_dir(const char *path, const char *p,
			 const struct stat *st, uid_t child_uid, bool own_dir,
			 GError **error)
{
	uid_t self = geteuid();
	g_autofree char *who = trusted(self);
	const char *by = st->st_mode & S_IWOTH ? "anyone" : "its group";
	unsigned int mode = st->st_mode & 07777;

	if (st->st_mode & S_ISVTX) {
		if (child_uid == 0 || child_uid == self)
			return TRUE;
		return refuse(error, path,
			      "%s is writable by %s (mode %04o), and sticky "
			      "keeps others from replacing only what root or "
			      "the daemon's user owns there; copy the plugin "
			      "into a directory that only %s can write",
			      p, by, mode, who);
	}
	if (own_dir)
		return refuse(error, path,
			      "%s is writable by %s (mode %04o); make it "
			      "writable by its owner alone: chmod go-w %s",
			      p, by, mode, p);
	return refuse(error, path,
		      "%s is writable by %s (mode %04o) and not sticky, so "
		      "others could replace what it holds; copy the plugin "
		      "into a directory that only %s can write",
		      p, by, mode, who);
}

/*
 * The plugin and every directory above it: owned by root or by the user
 * the daemon runs as, and writable by that owner alone, or sticky (see
 * safe_dir). Anyone else who could replace one of them could make the
 * daemon run their code as root.
 */
static gboolean safe_path(const char *path, const char *real,
			  GError **error)
{
	g_autofree char *p = g_strdup(real);
	uid_t self = geteuid(), child_uid = self;
	bool file = true, own_dir = false;

	for (;;) {
		struct stat st;
		char *slash;

		if (lstat(p, &st) < 0)
			return refuse(error, path, "%s: %s", p,
				      g_strerror(errno));
		if (st.st_uid != 0 && st.st_uid != self) {
			g_autofree char *who = trusted(self);

			return refuse(error, path,
				      "%s belongs to uid %u, neither root nor "
				      "the daemon's user: that user could "
				      "replace the plugin; copy the plugin "
				      "into a directory that only %s can "
				      "write",
				      p, (unsigned int)st.st_uid, who);
		}
		if (file && st.st_mode & (S_IWGRP | S_IWOTH))
			return refuse(error, path,
				      "%s is writable by %s (mode %04o); make "
				      "it writable by its owner alone: chmod "
				      "go-w %s",
				      p, st.st_mode & S_IWOTH ? "anyone"
							      : "its group",
				      (unsigned int)(st.st_mode & 07777), p);
		if (!file && st.st_mode & (S_IWGRP | S_IWOTH) &&
		    !safe_dir(path, p, &st, child_uid, own_dir, error))
			return FALSE;
		if (!strcmp(p, "/"))
			return TRUE;
		own_dir = file;
		file = false;
		child_uid = st.st_uid;
		slash = strrchr(p, '/');
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

static gboolean check_model(const char *path,
			    const struct cusemu_device_model *m,
			    GError **error)
{
	const struct cusemu_device_model *builtin;
	const struct loaded *other;

	if (!m->name || !*m->name || !m->node_prefix)
		return refuse(error, path, "a model without a name or "
					   "node_prefix; both are required");
	/* Names go into --device, configuration groups and JSON as they are. */
	for (const char *c = m->name; *c; c++)
		if (!g_ascii_isalnum(*c) && !strchr("-_.", *c))
			return refuse(error, path,
				      "its model name '%s' has a character "
				      "other than letters, digits, '-', '_' "
				      "and '.'",
				      m->name);
	for (unsigned int i = 0; cusemu_device_models[i]; i++) {
		builtin = cusemu_device_models[i];
		if (!strcmp(builtin->name, m->name))
			return refuse(error, path,
				      "its model '%s' has the name of a "
				      "built-in model; rename it",
				      m->name);
	}
	other = find_loaded(m->name);
	if (other)
		return refuse(error, path,
			      "its model '%s' is already loaded from %s; "
			      "rename one of them",
			      m->name, other->origin);
	return TRUE;
}

gboolean cusemu_plugin_load(const char *path, GError **error)
{
	char real[PATH_MAX];
	const struct cusemu_plugin *plugin;
	GModule *module;
	gpointer sym;
	struct stat st;

	if (!realpath(path, real))
		return refuse(error, path, "%s", g_strerror(errno));
	if (stat(real, &st) < 0 || !S_ISREG(st.st_mode))
		return refuse(error, path, "not a regular file");
	if (!safe_path(path, real, error))
		return FALSE;
	module = g_module_open(real, G_MODULE_BIND_LOCAL);
	if (!module)
		return refuse(error, path, "not a shared object this daemon "
					   "can load: %s",
			      g_module_error());
	if (!g_module_symbol(module, CUSEMU_PLUGIN_SYMBOL, &sym) || !sym) {
		g_module_close(module);
		return refuse(error, path,
			      "no cusemu model symbol '%s'; end the model's "
			      "file with CUSEMU_PLUGIN(&model) of "
			      "<cusemu/plugin.h>",
			      CUSEMU_PLUGIN_SYMBOL);
	}
	plugin = sym;
	if (plugin->api_version != CUSEMU_API_VERSION) {
		unsigned int v = plugin->api_version;

		g_module_close(module);
		return refuse(error, path,
			      "built for model API version %u, this daemon "
			      "has version %d; rebuild it against this "
			      "daemon's SDK (pkg-config cusemu-1)",
			      v, CUSEMU_API_VERSION);
	}
	for (unsigned int i = 0; plugin->models && plugin->models[i]; i++) {
		if (!check_model(path, plugin->models[i], error)) {
			g_module_close(module);
			return FALSE;
		}
	}
	if (!plugin->models || !plugin->models[0]) {
		g_module_close(module);
		return refuse(error, path, "it names no model");
	}
	/* Models stay for the daemon's life: the module is never closed. */
	g_module_make_resident(module);
	if (!loaded)
		loaded = g_array_new(FALSE, FALSE, sizeof(struct loaded));
	for (unsigned int i = 0; plugin->models[i]; i++) {
		struct loaded l = { plugin->models[i], g_strdup(real) };

		g_array_append_val(loaded, l);
		g_debug("model %s from %s", l.model->name, l.origin);
	}
	return TRUE;
}

const struct cusemu_device_model *cusemu_plugin_find(const char *name,
						     GError **error)
{
	const struct loaded *l = find_loaded(name);
	g_autofree char *file = NULL;

	if (l)
		return l->model;
	/* A name, not a path: nothing outside the models directory. */
	if (strchr(name, '/') || !strcmp(name, "..") || !*name)
		return NULL;
	file = g_strdup_printf("%s/%s.so", cusemu_models_dir, name);
	if (access(file, F_OK) < 0)
		return NULL;
	if (!cusemu_plugin_load(file, error))
		return NULL;
	l = find_loaded(name);
	if (!l)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "%s holds no model named '%s'", file, name);
	return l ? l->model : NULL;
}

guint cusemu_plugin_models(const struct cusemu_device_model ***models)
{
	guint n = loaded ? loaded->len : 0;

	*models = g_new0(const struct cusemu_device_model *, n + 1);
	for (guint i = 0; i < n; i++)
		(*models)[i] = g_array_index(loaded, struct loaded, i).model;
	return n;
}

const char *cusemu_plugin_origin(const struct cusemu_device_model *m)
{
	for (guint i = 0; loaded && i < loaded->len; i++) {
		const struct loaded *l = &g_array_index(loaded, struct loaded, i);

		if (l->model == m)
			return l->origin;
	}
	return NULL;
}

const char *cusemu_plugin_file_origin(const char *path)
{
	for (guint i = 0; loaded && i < loaded->len; i++) {
		const struct loaded *l = &g_array_index(loaded, struct loaded, i);

		if (!strcmp(l->origin, path))
			return l->origin;
	}
	return NULL;
}
