/* SPDX-License-Identifier: MIT */
/*
 * The transports cusemud serves through, and the choice of one by the
 * settings. A new transport is its file, its entry here and its line in
 * meson.build.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <glib.h>

#include "transport.h"

extern const struct cusemu_transport_ops cusemu_cuse_ops;
extern const struct cusemu_transport_ops cusemu_fusefs_ops;

/* CUSE first: it serves when no other is asked for. */
const struct cusemu_transport_ops *const cusemu_transports[] = {
	&cusemu_cuse_ops,
	&cusemu_fusefs_ops,
	NULL
};

/* ops's own settings from its keys' values, into *own. */
static gboolean configure(const struct cusemu_transport_ops *ops,
			  const struct cusemu_transport_settings *s,
			  cusemu_transport_value_fn *value, void *data,
			  void **own, GError **error)
{
	g_autofree struct cusemu_transport_value *values = NULL;
	unsigned int n = 0;

	while (ops->keys && ops->keys[n].key)
		n++;
	values = g_new0(struct cusemu_transport_value, n + 1);
	for (unsigned int i = 0; i < n; i++)
		values[i].value = value(&ops->keys[i], &values[i].origin,
					data);
	return ops->configure(s, values, own, error);
}

/*
 * Each transport reads its keys, so that a bad value is said whichever
 * serves; the first after CUSE that is asked for serves, else CUSE.
 */
const struct cusemu_transport_ops *
cusemu_transport_choose(struct cusemu_transport_settings *s,
			cusemu_transport_value_fn *value, void *data,
			GError **error)
{
	const struct cusemu_transport_ops *chosen = NULL;
	void *chosen_own = NULL;

	for (unsigned int i = 0; cusemu_transports[i]; i++) {
		const struct cusemu_transport_ops *ops = cusemu_transports[i];
		void *own = NULL;

		if (!configure(ops, s, value, data, &own, error)) {
			if (chosen)
				chosen->settings_free(chosen_own);
			return NULL;
		}
		if (own && chosen && chosen != cusemu_transports[0]) {
			ops->settings_free(own);
		} else if (own) {
			if (chosen)
				chosen->settings_free(chosen_own);
			chosen = ops;
			chosen_own = own;
		}
	}
	if (!chosen) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "no transport to serve the devices through");
		return NULL;
	}
	s->own = chosen_own;
	return chosen;
}
