/* SPDX-License-Identifier: MIT */
/*
 * Device descriptions, as the configuration file and --device give them
 * (daemon/config.c reads them): not validated against their model yet.
 */
#ifndef CUSEMU_SPEC_H
#define CUSEMU_SPEC_H

#include <glib.h>

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
	/* The model's files a control client opened with its own rights and
	 * handed over, by the path its settings name them with: path ->
	 * descriptor + 1, owned here; NULL for none. */
	GHashTable *files;
};

struct cusemu_device_spec *cusemu_device_spec_new(const char *model,
						  const char *origin);
/* Adds key = value, said at origin. */
void cusemu_device_spec_add(struct cusemu_device_spec *spec, const char *key,
			    const char *value, const char *origin);
/* A spec that outlives its configuration (a device keeps its own). */
struct cusemu_device_spec *
cusemu_device_spec_copy(const struct cusemu_device_spec *spec);
void cusemu_device_spec_free(struct cusemu_device_spec *spec);
/* A model's file at path, handed over as fd, which spec now owns. */
void cusemu_device_spec_add_file(struct cusemu_device_spec *spec,
				 const char *path, int fd);
/* The descriptor handed over for path (spec keeps it), or -1. */
int cusemu_device_spec_file(const struct cusemu_device_spec *spec,
			    const char *path);

/* The value of key in spec, or NULL. */
const struct cusemu_setting *
cusemu_device_spec_lookup(const struct cusemu_device_spec *spec,
			  const char *key);

#endif
