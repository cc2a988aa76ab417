/* SPDX-License-Identifier: MIT */
/*
 * Device instances from their descriptions: the model's keys checked and
 * normalised, the common keys (name, mode, owner, group, kernel) applied.
 */
#define G_LOG_DOMAIN "cusemu-device"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "dispatch.h"
#include "oops.h"
#include "plugin.h"
#include "stats.h"

const struct cusemu_param cusemu_common_params[] = {
	{ .key = "name", .type = CUSEMU_PARAM_STRING,
	  .help = "node name under /dev (default: model name and a number, "
		  "e.g. fioc0)" },
	{ .key = "mode", .type = CUSEMU_PARAM_UINT, .default_value = "0600",
	  .help = "node permissions, octal" },
	{ .key = "owner", .type = CUSEMU_PARAM_STRING, .default_value = "root",
	  .help = "node owner, name or uid" },
	{ .key = "group", .type = CUSEMU_PARAM_STRING, .default_value = "root",
	  .help = "node group, name or gid" },
	{ .key = "kernel", .type = CUSEMU_PARAM_STRING,
	  .help = "kernel model for this device (default: the daemon's "
		  "--model)" },
	CUSEMU_PARAM_END
};

const struct cusemu_device_model *cusemu_device_model_find(const char *name)
{
	for (unsigned int i = 0; cusemu_device_models[i]; i++)
		if (!strcmp(cusemu_device_models[i]->name, name))
			return cusemu_device_models[i];
	return cusemu_plugin_find(name, NULL);
}

const struct cusemu_device_model *cusemu_device_model_loaded(const char *name)
{
	g_autofree const struct cusemu_device_model **plugins = NULL;

	for (unsigned int i = 0; cusemu_device_models[i]; i++)
		if (!strcmp(cusemu_device_models[i]->name, name))
			return cusemu_device_models[i];
	cusemu_plugin_models(&plugins);
	for (unsigned int i = 0; plugins[i]; i++)
		if (!strcmp(plugins[i]->name, name))
			return plugins[i];
	return NULL;
}

char *cusemu_device_model_names(void)
{
	g_autofree const struct cusemu_device_model **plugins = NULL;
	GString *names = g_string_new(NULL);

	for (unsigned int i = 0; cusemu_device_models[i]; i++)
		g_string_append_printf(names, "%s%s", i ? ", " : "",
				       cusemu_device_models[i]->name);
	cusemu_plugin_models(&plugins);
	for (unsigned int i = 0; plugins[i]; i++)
		g_string_append_printf(names, ", %s", plugins[i]->name);
	return g_string_free(names, FALSE);
}

static const struct cusemu_param *find_param(const struct cusemu_param *params,
					     const char *key)
{
	for (const struct cusemu_param *p = params; p && p->key; p++)
		if (!strcmp(p->key, key))
			return p;
	return NULL;
}

static gboolean parse_u64(const char *s, enum cusemu_param_type type,
			  uint64_t *out)
{
	char *end;
	uint64_t v, mult = 1;

	if (!*s || *s == '-' || g_ascii_isspace(*s))
		return FALSE;
	errno = 0;
	v = g_ascii_strtoull(s, &end, type == CUSEMU_PARAM_SIZE ? 10 : 0);
	if (errno || end == s)
		return FALSE;
	if (type == CUSEMU_PARAM_SIZE && *end) {
		switch (g_ascii_toupper(*end++)) {
		case 'K': mult = 1ull << 10; break;
		case 'M': mult = 1ull << 20; break;
		case 'G': mult = 1ull << 30; break;
		default: return FALSE;
		}
	}
	if (*end || v > UINT64_MAX / mult)
		return FALSE;
	*out = v * mult;
	return TRUE;
}

static gboolean parse_bool(const char *s, gboolean *out)
{
	static const char *const yes[] = { "true", "yes", "1", "on" };
	static const char *const no[] = { "false", "no", "0", "off" };

	for (unsigned int i = 0; i < G_N_ELEMENTS(yes); i++) {
		if (!g_ascii_strcasecmp(s, yes[i]) ||
		    !g_ascii_strcasecmp(s, no[i])) {
			*out = !g_ascii_strcasecmp(s, yes[i]);
			return TRUE;
		}
	}
	return FALSE;
}

/* The value in a canonical form, or NULL with a hint in *why. */
static char *normalise(const struct cusemu_param *p, const char *value,
		       const char **why)
{
	uint64_t v;
	gboolean b;

	switch (p->type) {
	case CUSEMU_PARAM_STRING:
		return g_strdup(value);
	case CUSEMU_PARAM_BOOL:
		if (!parse_bool(value, &b)) {
			*why = "write true or false";
			return NULL;
		}
		return g_strdup(b ? "true" : "false");
	case CUSEMU_PARAM_UINT:
	case CUSEMU_PARAM_SIZE:
		if (!parse_u64(value, p->type, &v)) {
			*why = p->type == CUSEMU_PARAM_SIZE
				       ? "write a byte count, e.g. 65536 or 64K"
				       : "write a non-negative integer";
			return NULL;
		}
		if ((p->min || p->max) && (v < p->min || v > p->max)) {
			*why = "the value is out of range";
			return NULL;
		}
		return g_strdup_printf("%" G_GUINT64_FORMAT, v);
	}
	g_assert_not_reached();
}

static char *known_keys(const struct cusemu_device_model *m)
{
	GString *s = g_string_new(NULL);

	for (const struct cusemu_param *p = cusemu_common_params; p->key; p++)
		g_string_append_printf(s, "%s%s", s->len ? ", " : "", p->key);
	for (const struct cusemu_param *p = m->params; p && p->key; p++)
		g_string_append_printf(s, ", %s", p->key);
	return g_string_free(s, FALSE);
}

static gboolean set_param(struct cusemu_device *dev,
			  const struct cusemu_param *p,
			  const struct cusemu_setting *s, GError **error)
{
	const char *why = NULL;
	char *v = normalise(p, s->value, &why);

	if (!v) {
		g_autofree char *range =
			p->min || p->max
				? g_strdup_printf(" (allowed: %" G_GUINT64_FORMAT
						  " to %" G_GUINT64_FORMAT ")",
						  p->min, p->max)
				: g_strdup("");

		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: bad value '%s' for %s, the %s: %s%s",
			    s->origin, s->value, p->key, p->help, why, range);
		return FALSE;
	}
	g_hash_table_replace(cusemu_instance(dev)->params, g_strdup(p->key), v);
	return TRUE;
}

/* Model keys: defaults first, then the description's values. */
static gboolean load_params(struct cusemu_device *dev,
			    const struct cusemu_device_spec *spec,
			    GError **error)
{
	const struct cusemu_device_model *m = dev->model;

	for (const struct cusemu_param *p = m->params; p && p->key; p++) {
		const char *why = NULL;
		char *v;

		if (!p->default_value)
			continue;
		v = normalise(p, p->default_value, &why);
		if (!v)
			g_error("device model %s: default '%s' of %s: %s",
				m->name, p->default_value, p->key, why);
		g_hash_table_replace(cusemu_instance(dev)->params, g_strdup(p->key), v);
	}
	for (guint i = 0; i < spec->settings->len; i++) {
		const struct cusemu_setting *s = spec->settings->pdata[i];
		const struct cusemu_param *p;

		if (find_param(cusemu_common_params, s->key))
			continue;
		p = find_param(m->params, s->key);
		if (!p) {
			g_autofree char *keys = known_keys(m);

			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_UNKNOWN_OPTION,
				    "%s: unknown key '%s' for device model "
				    "%s; its keys are: %s",
				    s->origin, s->key, m->name, keys);
			return FALSE;
		}
		if (!set_param(dev, p, s, error))
			return FALSE;
	}
	return TRUE;
}

static gboolean valid_node_name(const char *name)
{
	if (!*name || strlen(name) > 64 || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return FALSE;
	for (const char *c = name; *c; c++)
		if (!g_ascii_isalnum(*c) && !strchr("-_.", *c))
			return FALSE;
	return TRUE;
}

static gboolean resolve_id(const char *value, gboolean is_user, guint32 *id)
{
	char *end;
	unsigned long v = strtoul(value, &end, 10);

	if (*value && !*end) {
		*id = (guint32)v;
		return v <= G_MAXUINT32;
	}
	if (is_user) {
		struct passwd *pw = getpwnam(value);

		if (pw)
			*id = pw->pw_uid;
		return pw != NULL;
	} else {
		struct group *gr = getgrnam(value);

		if (gr)
			*id = gr->gr_gid;
		return gr != NULL;
	}
}

static const char *setting(const struct cusemu_device_spec *spec,
			   const char *key, const char *fallback,
			   const char **origin)
{
	const struct cusemu_setting *s = cusemu_device_spec_lookup(spec, key);

	*origin = s ? s->origin : spec->origin;
	return s ? s->value : fallback;
}

static gboolean load_common(struct cusemu_device *dev,
			    const struct cusemu_device_spec *spec,
			    unsigned int instance, GError **error)
{
	struct cusemu_instance *dp = cusemu_instance(dev);
	const char *origin, *v;
	guint32 id;
	uint64_t mode;

	v = setting(spec, "name", NULL, &origin);
	dev->name = v ? g_strdup(v)
		      : g_strdup_printf("%s%u", dev->model->node_prefix,
					 instance);
	if (!valid_node_name(dev->name)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: bad node name '%s': use letters, digits, "
			    "'-', '_' and '.', at most 64",
			    origin, dev->name);
		return FALSE;
	}
	v = setting(spec, "mode", "0600", &origin);
	if (!parse_u64(v, CUSEMU_PARAM_UINT, &mode) || v[0] != '0' ||
	    mode > 0777) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: bad mode '%s': write octal permissions "
			    "with a leading 0, e.g. 0660",
			    origin, v);
		return FALSE;
	}
	dp->mode = (mode_t)mode;
	v = setting(spec, "owner", "0", &origin);
	if (!resolve_id(v, TRUE, &id)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown user '%s' for owner", origin, v);
		return FALSE;
	}
	dp->owner = id;
	v = setting(spec, "group", "0", &origin);
	if (!resolve_id(v, FALSE, &id)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown group '%s'", origin, v);
		return FALSE;
	}
	dp->group = id;
	return TRUE;
}

static gboolean load_kernel_model(struct cusemu_device *dev,
				  const struct cusemu_device_spec *spec,
				  const struct cusemu_kernel_model *daemon_km,
				  GError **error)
{
	const char *origin;
	const char *v = setting(spec, "kernel", NULL, &origin);

	cusemu_instance(dev)->kmodel = v ? cusemu_kernel_model_find(v) : daemon_km;
	if (!cusemu_instance(dev)->kmodel) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown kernel model '%s'; see cusemud --help "
			    "for the list",
			    origin, v);
		return FALSE;
	}
	return TRUE;
}

struct cusemu_device *
cusemu_device_new(const struct cusemu_device_spec *spec, unsigned int instance,
		  const struct cusemu_kernel_model *kmodel, GError **error)
{
	const struct cusemu_device_model *m = cusemu_device_model_find(spec->model);
	g_autoptr(GError) refused = NULL;

	if (!m)	/* MODEL.so in the models directory, if it is there */
		m = cusemu_plugin_find(spec->model, &refused);
	if (refused) {
		g_propagate_prefixed_error(error, g_steal_pointer(&refused),
					   "%s: ", spec->origin);
		return NULL;
	}
	if (!m) {
		g_autofree char *names = cusemu_device_model_names();

		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown device model '%s'; available: %s "
			    "(and MODEL.so in %s, or --plugin FILE)",
			    spec->origin, spec->model, names,
			    cusemu_models_dir);
		return NULL;
	}
	return cusemu_device_create(m, spec, instance, kmodel, error);
}

static unsigned int table_rows(const struct cusemu_ioctl *table)
{
	unsigned int n = 0;

	while (table && table[n].name)
		n++;
	return n;
}

/* A model's -errno and message (freed here) as a GError after context. */
G_GNUC_PRINTF(4, 5)
static void set_model_error(GError **error, int err, char *why,
			    const char *format, ...)
{
	g_autofree char *context = NULL;
	va_list args;

	va_start(args, format);
	context = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(-err),
		    "%s: %s", context, why ? why : g_strerror(-err));
	g_free(why);
}

/* ->probe or ->sandboxed, under an oops guard: a fault there is -EIO. */
static int guarded_probe(struct cusemu_device *dev, enum cusemu_op op,
			 char **why)
{
	const struct cusemu_device_model *m = dev->model;
	struct cusemu_oops_guard g;
	/* Not in a register: a jump back would not restore it. */
	volatile int err = 0;

	cusemu_oops_enter(&g, dev, op, NULL, 0);
	if (!cusemu_oops_setjmp(&g))
		err = op == CUSEMU_OP_PROBE ? m->probe(dev, why)
					    : m->sandboxed(dev, why);
	if (cusemu_oops_leave(&g)) {
		g_free(*why);
		*why = g_strdup_printf("the model's %s oopsed (the report is "
				       "above)",
				       cusemu_op_name(op));
		return -EIO;
	}
	return err;
}

struct cusemu_device *
cusemu_device_create(const struct cusemu_device_model *m,
		     const struct cusemu_device_spec *spec,
		     unsigned int instance,
		     const struct cusemu_kernel_model *kmodel, GError **error)
{
	struct cusemu_instance *inst = g_new0(struct cusemu_instance, 1);
	struct cusemu_device *dev = &inst->pub;
	char *why = NULL;
	int err;

	dev->model = m;
	inst->spec = cusemu_device_spec_copy(spec);
	inst->number = instance;
	inst->default_kmodel = kmodel;
	inst->methods = CUSEMU_METHODS_ALL;
	inst->params = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					     g_free);
	inst->stats = cusemu_stats_new(table_rows(m->native_table) +
				       table_rows(m->compat_table));
	if (!load_common(dev, spec, instance, error) ||
	    !load_kernel_model(dev, spec, kmodel, error) ||
	    !load_params(dev, spec, error))
		goto fail;
	err = m->probe ? guarded_probe(dev, CUSEMU_OP_PROBE, &why) : 0;
	if (err) {
		set_model_error(error, err, why, "%s: device %s (%s) failed to "
						 "start",
				spec->origin, dev->name, m->name);
		goto fail;
	}
	return dev;

fail:
	cusemu_device_free(dev);
	return NULL;
}

struct cusemu_device *cusemu_device_respawn(const struct cusemu_device *dev,
					    const struct cusemu_device_model *m,
					    GError **error)
{
	const struct cusemu_instance *inst = cusemu_instance(dev);

	return cusemu_device_create(m, inst->spec, inst->number,
				    inst->default_kmodel, error);
}

gboolean cusemu_device_sandboxed(struct cusemu_device *dev, GError **error)
{
	char *why = NULL;
	int err;

	err = dev->model->sandboxed
		      ? guarded_probe(dev, CUSEMU_OP_SANDBOXED, &why)
		      : 0;
	if (err)
		set_model_error(error, err, why,
				"device %s (%s) cannot run in the sandbox",
				dev->name, dev->model->name);
	return !err;
}

void cusemu_device_free(struct cusemu_device *dev)
{
	struct cusemu_instance *inst;

	if (!dev)
		return;
	inst = cusemu_instance(dev);
	/*
	 * A fenced model's code is not run again, and its state is left as
	 * it is: a thread of its own may still use the instance (its
	 * parameters, its statistics, its wake-ups), so that stays too.
	 */
	if (inst->fenced) {
		cusemu_oops_bury(dev);
		return;
	}
	if (dev->priv && dev->model->remove) {
		struct cusemu_oops_guard g;

		cusemu_oops_enter(&g, dev, CUSEMU_OP_REMOVE, NULL, 0);
		if (!cusemu_oops_setjmp(&g))
			dev->model->remove(dev);
		cusemu_oops_leave(&g);
	}
	g_free(inst->oops_report);
	cusemu_device_spec_free(inst->spec);
	g_hash_table_unref(inst->params);
	cusemu_stats_free(inst->stats);
	g_free((char *)dev->name);
	g_free(inst);
}
