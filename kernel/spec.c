/* SPDX-License-Identifier: MIT */
/*
 * Device descriptions: a model's name and its key = value settings, each
 * with where it was said. The daemon's configuration makes them; a device
 * instance keeps its own copy.
 */
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
	g_free(spec);
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
