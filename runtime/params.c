/* SPDX-License-Identifier: MIT */
/*
 * A device's parameters and the rate limit of its model's log lines
 * (<cusemu/device.h>), read from the instance: the daemon's, and a model
 * host's copy of it, which holds the same.
 */
#define G_LOG_DOMAIN "cusemu-model"

#include <fcntl.h>
#include <string.h>

#include <glib.h>

#include "cusemu/device.h"
#include "instance.h"
#include "ratelimit.h"

static const char *param_value(const struct cusemu_device *dev,
			       const char *key)
{
	const char *v = g_hash_table_lookup(cusemu_instance(dev)->made.params, key);

	if (!v)
		g_error("device model %s reads key '%s' it does not declare "
			"or that has no default",
			dev->model->name, key);
	return v;
}

uint64_t cusemu_device_param_u64(const struct cusemu_device *dev,
				 const char *key)
{
	return g_ascii_strtoull(param_value(dev, key), NULL, 10);
}

bool cusemu_device_param_bool(const struct cusemu_device *dev,
			      const char *key)
{
	return !strcmp(param_value(dev, key), "true");
}

const char *cusemu_device_param_str(const struct cusemu_device *dev,
				    const char *key)
{
	return param_value(dev, key);
}

bool cusemu_device_ratelimit(struct cusemu_device *dev, char *note)
{
	return cusemu_ratelimit(&cusemu_instance(dev)->contract.model_said, note);
}

int cusemu_device_param_fd(const struct cusemu_device *dev, const char *path)
{
	GHashTable *files = cusemu_instance(dev)->made.files;
	gpointer fd = files && path ? g_hash_table_lookup(files, path) : NULL;

	return fd ? fcntl(GPOINTER_TO_INT(fd) - 1, F_DUPFD_CLOEXEC, 0) : -1;
}
