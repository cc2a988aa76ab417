/* SPDX-License-Identifier: MIT */
/*
 * The kernel models by name. Their descriptors are models/NAME.c, and the
 * table of a program is generated from the lists of meson.build.
 */
#include <string.h>

#include "kmodel.h"

const struct cusemu_kernel_model *cusemu_kernel_model_find(const char *name)
{
	for (unsigned int i = 0; cusemu_kernel_models[i]; i++)
		if (!strcmp(cusemu_kernel_models[i]->name, name))
			return cusemu_kernel_models[i];
	return NULL;
}
