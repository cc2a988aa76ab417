/* SPDX-License-Identifier: MIT */
/*
 * The data of device instances, from their descriptions: the model's keys
 * checked and normalised, the common keys (name, mode, owner, group)
 * applied. spawn.c makes and ends whole instances.
 */
#define G_LOG_DOMAIN "cusemu-device"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kmodel.h"
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
	{ .key = "isolation", .type = CUSEMU_PARAM_STRING,
	  .help = "process: a plugin's model runs in a model host of its "
		  "own (the default); none: in the daemon" },
	{ .key = "record", .type = CUSEMU_PARAM_PATH,
	  .help = "write every answered request to this file, one JSON "
		  "trace line each, data uncut (the file is replaced)" },
	{ .key = "record-max", .type = CUSEMU_PARAM_SIZE,
	  .default_value = CUSEMU_RECORD_MAX_DEFAULT,
	  .min = CUSEMU_RECORD_MAX_MIN, .max = UINT64_MAX,
	  .help = "size at which the recording ends with a \"full\" line" },
	CUSEMU_PARAM_END
};

static const struct cusemu_param *find_param(const struct cusemu_param *params,
					     const char *key)
{
	for (const struct cusemu_param *p = params; p && p->key; p++)
		if (!strcmp(p->key, key))
			return p;
	return NULL;
}

const struct cusemu_param *cusemu_param_of(const struct cusemu_device_model *m,
					  const char *key)
{
	const struct cusemu_param *p = find_param(cusemu_common_params, key);

	return p ? p : find_param(m->params, key);
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

char *cusemu_param_normalise(const struct cusemu_param *p, const char *value,
			     const char **why)
{
	uint64_t v;
	gboolean b;

	switch (p->type) {
	case CUSEMU_PARAM_STRING:
	case CUSEMU_PARAM_PATH:
	case CUSEMU_PARAM_PATHS:
	case CUSEMU_PARAM_FILE:
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

GPtrArray *cusemu_param_paths(const struct cusemu_param *p,
			      const char *value)
{
	GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) options = NULL;

	if (p->type == CUSEMU_PARAM_PATH || p->type == CUSEMU_PARAM_FILE) {
		if (*value)
			g_ptr_array_add(paths, g_strdup(value));
		return paths;
	}
	if (p->type != CUSEMU_PARAM_PATHS)
		return paths;
	options = g_strsplit_set(value, "+:,;", -1);
	for (guint i = 0; options[i]; i++) {
		const char *eq = strchr(options[i], '=');
		g_autofree char *name = NULL;

		if (!eq)
			continue;
		name = g_strndup(options[i], (gsize)(eq - options[i]));
		if (strcmp(name, "file") && !g_str_has_suffix(name, "_file"))
			continue;
		g_ptr_array_add(paths, g_strdup(eq + 1));
	}
	return paths;
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
	char *v = cusemu_param_normalise(p, s->value, &why);

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
	g_hash_table_replace(cusemu_instance(dev)->made.params, g_strdup(p->key), v);
	return TRUE;
}

/* Model keys: defaults first, then the description's values. */
gboolean cusemu_device_load_params(struct cusemu_device *dev,
				   const struct cusemu_device_spec *spec,
				   GError **error)
{
	const struct cusemu_device_model *m = dev->model;

	for (const struct cusemu_param *p = m->params; p && p->key; p++) {
		const char *why = NULL;
		char *v;

		if (!p->default_value)
			continue;
		v = cusemu_param_normalise(p, p->default_value, &why);
		if (!v)
			g_error("device model %s: default '%s' of %s: %s",
				m->name, p->default_value, p->key, why);
		g_hash_table_replace(cusemu_instance(dev)->made.params, g_strdup(p->key), v);
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

const char *cusemu_device_setting(const struct cusemu_device_spec *spec,
				  const char *key, const char *fallback,
				  const char **origin)
{
	const struct cusemu_setting *s = cusemu_device_spec_lookup(spec, key);

	*origin = s ? s->origin : spec->origin;
	return s ? s->value : fallback;
}

/* record-max=: checked here, at every start; record= opens in spawn.c. */
static gboolean load_record_max(struct cusemu_device *dev,
				const struct cusemu_device_spec *spec,
				GError **error)
{
	const struct cusemu_param *p = find_param(cusemu_common_params,
						  "record-max");
	const char *origin, *why = NULL;
	const char *v = cusemu_device_setting(spec, p->key, p->default_value,
					      &origin);
	g_autofree char *bytes = cusemu_param_normalise(p, v, &why);

	if (!bytes) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: bad value '%s' for record-max, the %s: %s "
			    "(at least %d bytes)",
			    origin, v, p->help, why, CUSEMU_RECORD_MAX_MIN);
		return FALSE;
	}
	cusemu_instance(dev)->record.record_max = g_ascii_strtoull(bytes, NULL, 10);
	return TRUE;
}

gboolean cusemu_device_load_common(struct cusemu_device *dev,
				   const struct cusemu_device_spec *spec,
				   unsigned int instance, GError **error)
{
	struct cusemu_instance *dp = cusemu_instance(dev);
	const char *origin, *v;
	guint32 id;
	uint64_t mode;

	v = cusemu_device_setting(spec, "name", NULL, &origin);
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
	v = cusemu_device_setting(spec, "mode", "0600", &origin);
	if (!parse_u64(v, CUSEMU_PARAM_UINT, &mode) || v[0] != '0' ||
	    mode > 0777) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: bad mode '%s': write octal permissions "
			    "with a leading 0, e.g. 0660",
			    origin, v);
		return FALSE;
	}
	dp->made.mode = (mode_t)mode;
	v = cusemu_device_setting(spec, "owner", "0", &origin);
	if (!resolve_id(v, TRUE, &id)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown user '%s' for owner", origin, v);
		return FALSE;
	}
	dp->made.owner = id;
	v = cusemu_device_setting(spec, "group", "0", &origin);
	if (!resolve_id(v, FALSE, &id)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown group '%s'", origin, v);
		return FALSE;
	}
	dp->made.group = id;
	return load_record_max(dev, spec, error);
}

int cusemu_device_default_name(struct cusemu_device *dev, const char *name)
{
	const char *origin;

	if (cusemu_device_setting(cusemu_instance(dev)->made.spec, "name", NULL,
				  &origin))
		return 0;
	if (!valid_node_name(name))
		return -EINVAL;
	g_free((char *)dev->name);
	dev->name = g_strdup(name);
	return 0;
}

static unsigned int table_rows(const struct cusemu_ioctl *table)
{
	unsigned int n = 0;

	while (table && table[n].name)
		n++;
	return n;
}

struct cusemu_device *
cusemu_device_alloc(const struct cusemu_device_model *m,
		    const struct cusemu_device_spec *spec, unsigned int instance,
		    const struct cusemu_kernel_model *kmodel)
{
	struct cusemu_instance *inst = g_new0(struct cusemu_instance, 1);
	struct cusemu_device *dev = &inst->pub;

	dev->model = m;
	inst->made.spec = cusemu_device_spec_copy(spec);
	inst->made.files = inst->made.spec->files;
	inst->made.number = instance;
	inst->made.default_kmodel = kmodel;
	inst->dispatch.methods = CUSEMU_METHODS_ALL;
	inst->made.params = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					     g_free);
	inst->stats = cusemu_stats_new(table_rows(m->native_table) +
				       table_rows(m->compat_table));
	cusemu_ratelimit_init(&inst->contract.bad_result);
	cusemu_ratelimit_init(&inst->contract.model_said);
	return dev;
}

void cusemu_device_free_data(struct cusemu_device *dev)
{
	struct cusemu_instance *inst = cusemu_instance(dev);

	g_free(inst->oops.report);
	cusemu_device_spec_free(inst->made.spec);
	g_hash_table_unref(inst->made.params);
	cusemu_stats_free(inst->stats);
	cusemu_ratelimit_clear(&inst->contract.bad_result);
	cusemu_ratelimit_clear(&inst->contract.model_said);
	if (inst->dispatch.wrote_nothing)
		g_hash_table_unref(inst->dispatch.wrote_nothing);
	g_free((char *)dev->name);
	g_free(inst);
}

/* Of the model API: the kernel model is the kernel's to name. */
const char *cusemu_device_kernel_model(const struct cusemu_device *dev)
{
	return cusemu_instance(dev)->dispatch.kmodel->name;
}

/* ... and so is its version (KERNEL_VERSION()'s encoding). */
unsigned int cusemu_device_kernel_version(const struct cusemu_device *dev)
{
	return cusemu_instance(dev)->dispatch.kmodel->version;
}
