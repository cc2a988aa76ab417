/* SPDX-License-Identifier: MIT */
/*
 * Where models come from besides the registry: the source the daemon's
 * plugin loader hands over at start-up, asked by spawn.c to find and
 * isolate models, and by the oops reports and the dispatcher to name
 * them. Without it, the models built in alone.
 */
#include "device.h"

static const struct cusemu_model_source *source;

/* Set again by every plugin loaded, maybe while calls run: the same. */
void cusemu_model_source_set(const struct cusemu_model_source *src)
{
	if (g_atomic_pointer_get(&source) != src)
		g_atomic_pointer_set(&source, src);
}

const struct cusemu_model_source *cusemu_model_source(void)
{
	return g_atomic_pointer_get(&source);
}

const char *cusemu_model_origin(const struct cusemu_device_model *m)
{
	const struct cusemu_model_source *src = cusemu_model_source();

	return src ? src->origin(m) : NULL;
}

const char *cusemu_model_file_origin(const char *path, int *fd)
{
	const struct cusemu_model_source *src = cusemu_model_source();

	*fd = -1;
	return src ? src->file_origin(path, fd) : NULL;
}

const char *cusemu_model_code_origin(const void *pc)
{
	const struct cusemu_model_source *src = cusemu_model_source();

	return src ? src->code_origin(pc) : NULL;
}
