/* SPDX-License-Identifier: MIT */
/* A prototype's model with what a module cannot build, for test-kmod. */
#include <assert.h>
#include <glib.h>
#include <string.h>

#include "cusemu/device.h"

struct st {
	GMutex lock;
	gboolean on;
};

static __attribute__((noinline)) int helper(int x)
{
	assert(x > 0);
	return x;
}

int outside_probe(struct cusemu_device *dev, char **why);
void outside_remove(struct cusemu_device *dev);

int outside_probe(struct cusemu_device *dev, char **why)
{
	struct st *s = g_new0(struct st, 1);

	g_mutex_init(&s->lock);
	s->on = TRUE;
	dev->priv = s;
	return helper(1) - 1;
}

void outside_remove(struct cusemu_device *dev)
{
	struct st *s = dev->priv;

	g_mutex_clear(&s->lock);
	g_free(s);
}
