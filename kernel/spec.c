/* SPDX-License-Identifier: MIT */
/*
 * Device descriptions: a model's name and its key = value settings, each
 * with where it was said. The daemon's configuration makes them; a device
 * instance keeps its own copy.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "spec.h"

static void setting_free(gpointer p)
{
	struct cusemu_setting *s = p;

	g_free(s->key);
	g_free(s->value);
	g_free(s->origin);
	if (s->fd >= 0)
		close(s->fd);
	g_free(s);
}

void cusemu_device_spec_free(struct cusemu_device_spec *spec)
{
	if (!spec)
		return;

	g_free(spec->model);
	g_free(spec->origin);
	g_ptr_array_unref(spec->settings);
	if (spec->files)
		g_hash_table_unref(spec->files);
	g_free(spec);
}

static void close_file(gpointer fd)
{
	close(GPOINTER_TO_INT(fd) - 1);
}

void cusemu_device_spec_add_file(struct cusemu_device_spec *spec,
				 const char *path, int fd)
{
	if (!spec->files)
		spec->files = g_hash_table_new_full(g_str_hash, g_str_equal,
						    g_free, close_file);
	g_hash_table_replace(spec->files, g_strdup(path),
			     GINT_TO_POINTER(fd + 1));
}

int cusemu_device_spec_file(const struct cusemu_device_spec *spec,
			    const char *path)
{
	gpointer fd = spec && spec->files
			      ? g_hash_table_lookup(spec->files, path)
			      : NULL;

	return fd ? GPOINTER_TO_INT(fd) - 1 : -1;
}

struct cusemu_device_spec *cusemu_device_spec_new(const char *model,
						  const char *origin)
{
	struct cusemu_device_spec *spec = g_new0(struct cusemu_device_spec, 1);

	spec->model = g_strdup(model);
	spec->origin = g_strdup(origin);
	spec->settings = g_ptr_array_new_with_free_func(setting_free);
	return spec;
}

void cusemu_device_spec_add(struct cusemu_device_spec *spec, const char *key,
			    const char *value, const char *origin)
{
	struct cusemu_setting *s = g_new0(struct cusemu_setting, 1);

	s->key = g_strdup(key);
	s->value = g_strdup(value);
	s->origin = g_strdup(origin);
	s->fd = -1;
	g_ptr_array_add(spec->settings, s);
}

struct cusemu_device_spec *
cusemu_device_spec_copy(const struct cusemu_device_spec *spec)
{
	struct cusemu_device_spec *copy = cusemu_device_spec_new(spec->model, spec->origin);

	for (guint i = 0; i < spec->settings->len; i++) {
		const struct cusemu_setting *s = spec->settings->pdata[i];

		cusemu_device_spec_add(copy, s->key, s->value, s->origin);
	}
	if (spec->files) {
		GHashTableIter it;
		gpointer path, fd;

		g_hash_table_iter_init(&it, spec->files);
		while (g_hash_table_iter_next(&it, &path, &fd)) {
			int dup = fcntl(GPOINTER_TO_INT(fd) - 1,
					F_DUPFD_CLOEXEC, 0);

			if (dup >= 0)
				cusemu_device_spec_add_file(copy, path, dup);
		}
	}
	return copy;
}

const struct cusemu_setting *
cusemu_device_spec_lookup(const struct cusemu_device_spec *spec,
			  const char *key)
{
	for (guint i = 0; i < spec->settings->len; i++) {
		const struct cusemu_setting *s = spec->settings->pdata[i];

		if (!strcmp(s->key, key))
			return s;
	}
	return NULL;
}
