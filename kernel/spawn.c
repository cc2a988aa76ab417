/* SPDX-License-Identifier: MIT */
/*
 * Device instances made and ended: the model found among those built in
 * and those of plugins, the instance's data made (device-data.c), its kernel
 * model chosen, and the model's probe, sandboxed and remove run under an
 * oops guard.
 */
#define G_LOG_DOMAIN "cusemu-device"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "kmodel.h"
#include "oops.h"

static const struct cusemu_recorder *recorder;

void cusemu_recorder_set(const struct cusemu_recorder *r)
{
	recorder = r;
}

static const struct cusemu_device_model *plugin_find(const char *name,
						     GError **error)
{
	const struct cusemu_model_source *source = cusemu_model_source();

	return source ? source->find(name, error) : NULL;
}

/* Every model loaded from a plugin, NULL-terminated; g_free() it. */
static const struct cusemu_device_model **plugin_models(void)
{
	const struct cusemu_model_source *source = cusemu_model_source();
	const struct cusemu_device_model **models = NULL;

	if (source)
		source->models(&models);
	else
		models = g_new0(const struct cusemu_device_model *, 1);
	return models;
}

const struct cusemu_device_model *cusemu_device_model_find(const char *name)
{
	for (unsigned int i = 0; cusemu_device_models[i]; i++)
		if (!strcmp(cusemu_device_models[i]->name, name))
			return cusemu_device_models[i];
	return plugin_find(name, NULL);
}

const struct cusemu_device_model *cusemu_device_model_loaded(const char *name)
{
	g_autofree const struct cusemu_device_model **plugins = plugin_models();

	for (unsigned int i = 0; cusemu_device_models[i]; i++)
		if (!strcmp(cusemu_device_models[i]->name, name))
			return cusemu_device_models[i];
	for (unsigned int i = 0; plugins[i]; i++)
		if (!strcmp(plugins[i]->name, name))
			return plugins[i];
	return NULL;
}

char *cusemu_device_model_names(void)
{
	g_autofree const struct cusemu_device_model **plugins = plugin_models();
	GString *names = g_string_new(NULL);

	for (unsigned int i = 0; cusemu_device_models[i]; i++)
		g_string_append_printf(names, "%s%s", i ? ", " : "",
				       cusemu_device_models[i]->name);
	for (unsigned int i = 0; plugins[i]; i++)
		g_string_append_printf(names, ", %s", plugins[i]->name);
	return g_string_free(names, FALSE);
}

static gboolean load_kernel_model(struct cusemu_device *dev,
				  const struct cusemu_device_spec *spec,
				  const struct cusemu_kernel_model *daemon_km,
				  GError **error)
{
	const char *origin;
	const char *v = cusemu_device_setting(spec, "kernel", NULL, &origin);

	cusemu_instance(dev)->dispatch.kmodel = v ? cusemu_kernel_model_find(v) : daemon_km;
	if (!cusemu_instance(dev)->dispatch.kmodel) {
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
		m = plugin_find(spec->model, &refused);
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
			    cusemu_model_source()
				    ? cusemu_model_source()->dir()
				    : "no directory");
		return NULL;
	}
	return cusemu_device_create(m, spec, instance, kmodel, error);
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

/*
 * record=FILE: the file opened once the model started, so that a model
 * that fails to start leaves it alone; or the recording of the instance
 * this one replaces (cusemuctl reload), which goes on in the same file.
 */
static gboolean start_recording(struct cusemu_device *dev,
				const struct cusemu_device_spec *spec,
				struct cusemu_recording *continued,
				GError **error)
{
	if (recorder)
		return recorder->start(dev, spec, continued, error);
	if (!cusemu_device_spec_lookup(spec, "record"))
		return TRUE;
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "%s: device %s: record= is not served by this program",
		    spec->origin, dev->name);
	return FALSE;
}

/*
 * isolation=: a plugin's model in its model host (the proxy m is), or
 * loaded into the daemon; built-in models always run in the daemon.
 */
static const struct cusemu_device_model *
isolated(const struct cusemu_device_model *m,
	 const struct cusemu_device_spec *spec, GError **error)
{
	const char *origin;
	const char *v = cusemu_device_setting(spec, "isolation", NULL, &origin);

	if (v && strcmp(v, "process") && strcmp(v, "none")) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: bad isolation '%s': use process (a model "
			    "host of its own) or none (in the daemon)",
			    origin, v);
		return NULL;
	}
	if (!cusemu_model_origin(m)) {
		if (v && !strcmp(v, "process")) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "%s: %s is built in, and built-in models "
				    "run in the daemon; isolation=process is "
				    "for the models of plugins",
				    origin, m->name);
			return NULL;
		}
		return m;
	}
	if (v && !strcmp(v, "none")) {
		m = cusemu_model_source()->in_process(m, error);
		if (!m)
			g_prefix_error(error, "%s: ", origin);
		return m;
	}
	return cusemu_model_source()->hosted(m);
}

static struct cusemu_device *
create(const struct cusemu_device_model *m,
       const struct cusemu_device_spec *spec, unsigned int instance,
       const struct cusemu_kernel_model *kmodel,
       struct cusemu_recording *continued, GError **error)
{
	struct cusemu_device *dev;
	char *why = NULL;
	int err;

	m = isolated(m, spec, error);
	if (!m)
		return NULL;
	dev = cusemu_device_alloc(m, spec, instance, kmodel);

	if (!cusemu_device_load_common(dev, spec, instance, error) ||
	    !load_kernel_model(dev, spec, kmodel, error) ||
	    !cusemu_device_load_params(dev, spec, error))
		goto fail;
	err = m->probe ? guarded_probe(dev, CUSEMU_OP_PROBE, &why) : 0;
	if (err) {
		set_model_error(error, err, why, "%s: device %s (%s) failed to "
						 "start",
				spec->origin, dev->name, m->name);
		goto fail;
	}
	if (!start_recording(dev, spec, continued, error))
		goto fail;
	return dev;

fail:
	cusemu_device_free(dev);
	return NULL;
}

struct cusemu_device *
cusemu_device_create(const struct cusemu_device_model *m,
		     const struct cusemu_device_spec *spec,
		     unsigned int instance,
		     const struct cusemu_kernel_model *kmodel, GError **error)
{
	return create(m, spec, instance, kmodel, NULL, error);
}

struct cusemu_device *cusemu_device_respawn(const struct cusemu_device *dev,
					    const struct cusemu_device_model *m,
					    GError **error)
{
	const struct cusemu_instance *inst = cusemu_instance(dev);

	return create(m, inst->made.spec, inst->made.number, inst->made.default_kmodel,
		      inst->record.recording, error);
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
	 * A model host's threads are not the daemon's: the proxy's remove
	 * lets go of the host without running the model, and the instance
	 * goes.
	 */
	if (inst->oops.fenced && !inst->made.hosted) {
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
	if (recorder)
		recorder->unref(cusemu_instance(dev)->record.recording);
	cusemu_device_free_data(dev);
}
