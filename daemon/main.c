/* SPDX-License-Identifier: MIT */
/*
 * cusemud: reads the configuration, serves every device instance through
 * the transport its settings pick (transport.h: a CUSE node each, or a
 * file on a FUSE mount) until SIGINT or SIGTERM, then removes them.
 */
#define G_LOG_DOMAIN "cusemud"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib.h>
#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "config.h"
#include "control.h"
#include "device.h"
#include "dispatch.h"
#include "host.h"
#include "oops.h"
#include "plugin.h"
#include "private-file.h"
#include "sandbox.h"
#include "stats.h"
#include "record.h"
#include "trace.h"
#include "pool.h"
#include "transport.h"

struct options {
	char *config_file;
	char **devices;
	char *kernel_model;
	char *lock;
	gboolean foreground;
	char *threads;
	gboolean debug;
	gboolean verbose;
	char *control;
	char *control_group;
	char *seccomp;
	char *user;
	/* The transports' options given: value ("true" for a flag) by the
	 * option's name, as the transports' keys name it. */
	GHashTable *transport_args;
	gboolean panic_on_oops;
	char *soft_lockup_secs;
	char *hung_task_secs;
	char *host_memory;
	char **plugins;		/* loaded before the options are parsed */
	gboolean version;
	gboolean check;		/* --check-config: check, then exit */
	char *check_file;	/* its FILE, if given */
};

struct daemon {
	const struct cusemu_kernel_model *kmodel;
	enum cusemu_lock_mode lock_mode;
	unsigned int threads;	/* the pool's workers */
	GPtrArray *devices;	/* struct cusemu_device */
	gboolean panic_on_oops;	/* an oops ends the daemon */
	unsigned int soft_lockup_secs;	/* 0: no watchdog */
	unsigned int hung_task_secs;	/* 0: none reported */
	uint64_t host_memory;	/* RLIMIT_AS of a model host, bytes */
	/* The transport the settings chose, once, and the running one. */
	struct cusemu_transport_settings transport_settings;
	const struct cusemu_transport_ops *transport_ops;
	struct cusemu_transport *transport;
	char *control_path;
	gid_t control_group;
	struct cusemu_control *control;
	struct cusemu_sandbox sandbox;
	GMainLoop *loop;
	int exit_status;
};

/* File-scope: log_writer is installed once per process and may run on any
 * thread, before struct daemon is filled in and after main() has left. */
static gboolean use_syslog;
static gboolean verbose;

static GLogWriterOutput log_writer(GLogLevelFlags level,
				   const GLogField *fields, gsize n_fields,
				   gpointer user_data)
{
	const char *message = NULL, *domain = NULL;
	const char *prefix = "";
	int priority = LOG_INFO;

	for (gsize i = 0; i < n_fields; i++) {
		if (!strcmp(fields[i].key, "MESSAGE"))
			message = fields[i].value;
		else if (!strcmp(fields[i].key, "GLIB_DOMAIN"))
			domain = fields[i].value;
	}
	if (!message)
		return G_LOG_WRITER_UNHANDLED;
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)) {
		prefix = "error: ";
		priority = LOG_ERR;
	} else if (level & G_LOG_LEVEL_WARNING) {
		prefix = "warning: ";
		priority = LOG_WARNING;
	} else if (level & G_LOG_LEVEL_DEBUG) {
		if (!verbose)
			return G_LOG_WRITER_HANDLED;
		priority = LOG_DEBUG;
	}
	if (domain && !strcmp(domain, "cusemu-oops"))
		priority = LOG_CRIT;	/* the kernel's oopses are KERN_ALERT */
	if (use_syslog)
		syslog(priority, "%s%s", prefix, message);
	else
		fprintf(stderr, "cusemud: %s%s\n", prefix, message);
	return G_LOG_WRITER_HANDLED;
}

static void describe_params(GString *s, const struct cusemu_param *params)
{
	for (const struct cusemu_param *p = params; p && p->key; p++) {
		g_autofree char *kv = g_strdup_printf(
			"%s=%s", p->key, p->default_value ? p->default_value : "");

		g_string_append_printf(s, "    %-16s %s\n", kv, p->help);
	}
}

/* How each transport that does not serve every model alike serves m. */
static void describe_fitness(GString *s, const struct cusemu_device_model *m)
{
	for (unsigned int i = 0; cusemu_transports[i]; i++) {
		const struct cusemu_transport_ops *t = cusemu_transports[i];
		g_autofree char *fitness = t->fitness ? t->fitness(m) : NULL;
		g_autofree char *label = NULL;

		if (!fitness)
			continue;
		label = g_strconcat(t->fitness_label, ":", NULL);
		g_string_append_printf(s, "    %-16s %s\n", label, fitness);
	}
}

/* The width of --help's paragraphs. */
#define HELP_WIDTH 72

/* text as lines of at most HELP_WIDTH columns, broken at spaces. */
static void append_wrapped(GString *s, const char *text)
{
	size_t column = 0;

	while (*text) {
		size_t n = strcspn(text, " ");

		if (column && column + 1 + n > HELP_WIDTH) {
			g_string_append_c(s, '\n');
			column = 0;
		} else if (column) {
			g_string_append_c(s, ' ');
			column++;
		}
		g_string_append_len(s, text, n);
		column += n;
		text += n;
		text += strspn(text, " ");
	}
	g_string_append_c(s, '\n');
}

/* The [daemon] group's keys in --help. */
static void describe_daemon_keys(GString *s)
{
	g_autoptr(GPtrArray) names = cusemu_config_daemon_keys();
	g_autoptr(GString) keys = g_string_new(NULL);
	g_autofree char *text = NULL;

	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(keys, "%s=, ",
				       (const char *)names->pdata[i]);
	g_string_truncate(keys, keys->len - 2);
	text = g_strdup_printf("The configuration file has a [daemon] group "
			       "(%s) and one [device NAME] group per node "
			       "(model=fioc, then the keys above). The command "
			       "line wins over the file.",
			       keys->str);
	append_wrapped(s, text);
}

static char *models_description(void)
{
	GString *s = g_string_new("Device models (--device MODEL[:key=value,...]):\n");
	g_autofree const struct cusemu_device_model **plugins = NULL;
	int width;

	for (unsigned int i = 0; cusemu_device_models[i]; i++) {
		const struct cusemu_device_model *m = cusemu_device_models[i];

		g_string_append_printf(s, "  %-10s %s\n", m->name, m->summary);
		describe_fitness(s, m);
		describe_params(s, m->params);
	}
	cusemu_plugin_models(&plugins);
	for (unsigned int i = 0; plugins[i]; i++) {
		const struct cusemu_device_model *m = plugins[i];

		g_string_append_printf(s, "  %-10s %s (from %s)\n", m->name,
				       m->summary ? m->summary : "",
				       cusemu_plugin_origin(m));
		describe_fitness(s, m);
		describe_params(s, m->params);
	}
	g_string_append_printf(s, "  More models: MODEL.so in %s, or --plugin "
				  "FILE\n", cusemu_models_dir);
	g_string_append(s, "  Keys every model takes:\n");
	describe_params(s, cusemu_common_params);
	g_string_append(s, "\nKernel models (--model, or kernel= per device), "
			   "with the kernel version a device model sees:\n");
	/* The names' column fits the longest (a test model's, in
	 * cusemud-test), at least 10 wide. */
	width = 10;
	for (unsigned int i = 0; cusemu_kernel_models[i]; i++)
		width = MAX(width, (int)strlen(cusemu_kernel_models[i]->name));
	for (unsigned int i = 0; cusemu_kernel_models[i]; i++) {
		const struct cusemu_kernel_model *km = cusemu_kernel_models[i];
		g_autofree char *version = g_strdup_printf(
			"%u.%u.%u", km->version >> 16, (km->version >> 8) & 0xff,
			km->version & 0xff);

		g_string_append_printf(s, "  %-*s %-7s %s%s\n", width,
				       km->name, version, km->summary,
				       strcmp(km->name,
					      CUSEMU_DEFAULT_KERNEL_MODEL)
					       ? ""
					       : " (default)");
	}
	g_string_append(s,
		"\nLock modes (--lock):\n"
		"  model      what the kernel model prescribes (default)\n"
		"  global     one lock around every handler of every device\n"
		"  device     one lock per device\n"
		"  none       no lock at all\n"
		"\nSeccomp modes (--seccomp), once every node exists:\n"
		"  enforce    a system call off the allow-list kills the "
		"daemon (default)\n"
		"  log        it goes through, and the kernel logs it\n"
		"  off        no filter\n"
		"\nWithout --device and --config, one fioc device is created: "
		"/dev/fioc0.\n");
	for (unsigned int i = 0; cusemu_transports[i]; i++)
		if (cusemu_transports[i]->help)
			g_string_append(s, cusemu_transports[i]->help);
	describe_daemon_keys(s);
	g_string_append(s,
		"--check-config reads and checks what a start would before it "
		"opens /dev/cuse:\nthe file, the rest of the command line, "
		"plugins, devices and their keys. It\nneeds no root and "
		"creates nothing; it says 'FILE: OK, N devices' (exit status\n"
		"0) or the errors (exit status 1).\n");
	return g_string_free(s, FALSE);
}

/* --plugin FILE and --plugin=FILE, in the order given. */
static gboolean load_plugin_args(int argc, char **argv, GError **error)
{
	for (int i = 1; i < argc; i++) {
		const char *file = NULL;

		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--plugin") && i + 1 < argc)
			file = argv[++i];
		else if (g_str_has_prefix(argv[i], "--plugin="))
			file = argv[i] + strlen("--plugin=");
		if (file && !cusemu_plugin_load(file, error))
			return FALSE;
	}
	return TRUE;
}

/* plugins= of [daemon]: files separated by ';'. */
static gboolean load_config_plugins(const struct cusemu_config *config,
				    GError **error)
{
	g_auto(GStrv) files = NULL;

	if (!config->plugins)
		return TRUE;
	files = g_strsplit(config->plugins, ";", -1);
	for (char **f = files; *f; f++) {
		g_strstrip(*f);
		if (**f && !cusemu_plugin_load(*f, error)) {
			g_prefix_error(error, "%s: ", config->plugins_origin);
			return FALSE;
		}
	}
	return TRUE;
}

/* --check-config[=FILE]; FILE may also follow as an argument. */
static gboolean on_check_config(const char *name, const char *value,
				gpointer data, GError **error)
{
	struct options *o = data;

	o->check = TRUE;
	g_free(o->check_file);
	o->check_file = g_strdup(value);
	return TRUE;
}

/* A transport's option (--NAME): its value, the last one given, kept for
 * the transport to read. */
static gboolean on_transport_option(const char *name, const char *value,
				    gpointer data, GError **error)
{
	struct options *o = data;

	if (!o->transport_args)
		o->transport_args = g_hash_table_new_full(g_str_hash,
							  g_str_equal, g_free,
							  g_free);
	g_hash_table_replace(o->transport_args, g_strdup(name + 2),
			     g_strdup(value ? value : "true"));
	return TRUE;
}

/* The options of every transport's keys, ending with an empty entry. */
static GOptionEntry *transport_options(void)
{
	GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));

	for (unsigned int i = 0; cusemu_transports[i]; i++) {
		for (const struct cusemu_transport_key *k =
			     cusemu_transports[i]->keys;
		     k && k->key; k++) {
			GOptionEntry e = {
				.long_name = k->option,
				.flags = (k->flag ? G_OPTION_FLAG_NO_ARG : 0) |
					 (k->filename ? G_OPTION_FLAG_FILENAME
						      : 0),
				.arg = G_OPTION_ARG_CALLBACK,
				.arg_data = (gpointer)on_transport_option,
				.description = k->help,
				.arg_description = k->arg,
			};

			g_array_append_val(entries, e);
		}
	}
	return (GOptionEntry *)(void *)g_array_free(entries, FALSE);
}

/*
 * FALSE with *usage set for a bad command line, which the caller follows
 * with a pointer to --help; with it clear for a plugin refused.
 */
static gboolean parse_options(int *argc, char ***argv, struct options *o,
			      gboolean *usage, GError **error)
{
	GOptionEntry before[] = {
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &o->config_file,
		  "Read devices and settings from FILE", "FILE" },
		{ "device", 'd', 0, G_OPTION_ARG_STRING_ARRAY, &o->devices,
		  "Add a device; repeat for more", "MODEL[:key=value,...]" },
		{ "model", 'm', 0, G_OPTION_ARG_STRING, &o->kernel_model,
		  "Kernel model to dispatch ioctls as (default: "
		  CUSEMU_DEFAULT_KERNEL_MODEL ")", "NAME" },
		{ "lock", 'l', 0, G_OPTION_ARG_STRING, &o->lock,
		  "Lock around handlers: model, global, device or none "
		  "(default: model)", "MODE" },
		{ "foreground", 'f', 0, G_OPTION_ARG_NONE, &o->foreground,
		  "Stay in the foreground and log to stderr (default: "
		  "detach once the nodes exist, log to syslog)", NULL },
		{ "threads", 't', 0, G_OPTION_ARG_STRING, &o->threads,
		  "Worker threads serving every device (default: 8); one is "
		  "added while a handler waits and none is free", "N" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose,
		  "Log debug messages", NULL },
		{ "control", 0, 0, G_OPTION_ARG_FILENAME, &o->control,
		  "Control socket for cusemuctl, or 'none' (default: "
		  CUSEMU_CONTROL_DEFAULT_PATH " as root, else "
		  "$XDG_RUNTIME_DIR/cusemu/control or /tmp/cusemu-UID/control)",
		  "PATH" },
		{ "control-group", 0, 0, G_OPTION_ARG_STRING, &o->control_group,
		  "Group that may use the control socket besides root",
		  "GROUP" },
		{ "seccomp", 0, 0, G_OPTION_ARG_STRING, &o->seccomp,
		  "System call filter once the nodes exist: enforce, log or "
		  "off (default: enforce)", "MODE" },
		{ "user", 'u', 0, G_OPTION_ARG_STRING, &o->user,
		  "Run as USER once the nodes exist (default: stay root, "
		  "with no capability)", "USER" },
		{ NULL }
	};
	GOptionEntry after[] = {
		{ "panic-on-oops", 0, 0, G_OPTION_ARG_NONE, &o->panic_on_oops,
		  "End the daemon, every node with it, when a model's code "
		  "faults (default: fence that device alone and go on)",
		  NULL },
		{ "soft-lockup-secs", 0, 0, G_OPTION_ARG_STRING,
		  &o->soft_lockup_secs,
		  "Report a handler that runs this long without sleeping "
		  "(default: 20; 0: never)", "N" },
		{ "hung-task-secs", 0, 0, G_OPTION_ARG_STRING,
		  &o->hung_task_secs,
		  "Report a call that sleeps or is blocked this long "
		  "(default: 120; 0: never)", "N" },
		{ "host-memory", 0, 0, G_OPTION_ARG_STRING, &o->host_memory,
		  "Address space of each model host, the process a plugin's "
		  "models run in (default: " CUSEMU_HOST_MEMORY_DEFAULT
		  "; 0: no bound)", "SIZE" },
		{ "plugin", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->plugins,
		  "Load the device models of the shared object FILE; repeat "
		  "for more", "FILE" },
		{ "fuse-debug", 0, 0, G_OPTION_ARG_NONE, &o->debug,
		  "Trace every FUSE request (libfuse's -d)", NULL },
		{ "check-config", 0,
		  G_OPTION_FLAG_OPTIONAL_ARG | G_OPTION_FLAG_FILENAME,
		  G_OPTION_ARG_CALLBACK, on_check_config,
		  "Check FILE (default: --config's, else " CUSEMU_CONFIG_FILE
		  ") as a start would, without root or /dev/cuse, and exit",
		  "FILE" },
		{ "version", 'V', 0, G_OPTION_ARG_NONE, &o->version,
		  "Print the version and exit", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx =
		g_option_context_new("- emulated character devices over CUSE");
	GOptionGroup *group = g_option_group_new(NULL, NULL, NULL, o, NULL);
	g_autofree GOptionEntry *transport_entries = NULL;
	g_autofree char *description = NULL;

	*usage = FALSE;
	/* Before --help is written, so that it lists their models too. */
	if (!load_plugin_args(*argc, *argv, error)) {
		g_option_group_unref(group);
		return FALSE;
	}
	description = models_description();

	/* The callbacks' data: o. The transports' options, in --help
	 * where cusemud always had them. */
	transport_entries = transport_options();
	g_option_group_add_entries(group, before);
	g_option_group_add_entries(group, transport_entries);
	g_option_group_add_entries(group, after);
	g_option_context_set_main_group(ctx, group);
	g_option_context_set_description(ctx, description);
	*usage = TRUE;
	if (!g_option_context_parse(ctx, argc, argv, error))
		return FALSE;
	/* --check-config FILE, as well as --check-config=FILE */
	if (o->check && !o->check_file && *argc == 2)
		o->check_file = g_strdup((*argv)[--*argc]);
	if (*argc > 1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
			    "unexpected argument '%s'", (*argv)[1]);
		return FALSE;
	}
	*usage = FALSE;
	return TRUE;
}

/*
 * The command line's value over the configuration file's (NULL when
 * neither gives one); *origin says where it came from, for errors.
 */
static const char *pick(const char *arg, const char *option,
			const char *value, const char *value_origin,
			const char **origin)
{
	*origin = arg ? option : value_origin;
	return arg ? arg : value;
}

/* "ORIGIN: unknown WHAT 'VALUE'" and what to write instead, in hint. */
static gboolean unknown_value(GError **error, const char *origin,
			      const char *what, const char *value,
			      const char *hint)
{
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "%s: unknown %s '%s'%s", origin, what, value, hint);
	return FALSE;
}

static gboolean resolve_control(struct daemon *d, const struct options *o,
				const struct cusemu_config *config,
				GError **error)
{
	const char *origin;
	const char *path = pick(o->control, "--control", config->control,
				config->control_origin, &origin);
	const char *group = pick(o->control_group, "--control-group",
				 config->control_group,
				 config->control_group_origin, &origin);
	struct group *gr;

	d->control_path = path ? g_strdup(path)
			       : cusemu_control_default_path();
	d->control_group = (gid_t)-1;
	if (!group)
		return TRUE;
	gr = getgrnam(group);
	if (!gr)
		return unknown_value(error, origin, "group", group, "");
	d->control_group = gr->gr_gid;
	return TRUE;
}

static gboolean resolve_dispatch(struct daemon *d, const struct options *o,
				 const struct cusemu_config *config,
				 GError **error)
{
	const char *origin;
	const char *km = pick(o->kernel_model, "--model", config->kernel_model,
			      config->kernel_model_origin, &origin);
	const char *lock;

	d->kmodel = cusemu_kernel_model_find(km ? km
					       : CUSEMU_DEFAULT_KERNEL_MODEL);
	if (!d->kmodel)
		return unknown_value(error, origin, "kernel model", km,
				     "; see --help for the list");
	lock = pick(o->lock, "--lock", config->lock, config->lock_origin,
		    &origin);
	if (!cusemu_lock_mode_parse(lock ? lock : "model", &d->lock_mode))
		return unknown_value(error, origin, "lock mode", lock,
				     "; use model, global, device or none");
	return TRUE;
}

static gboolean resolve_sandbox(struct daemon *d, const struct options *o,
				const struct cusemu_config *config,
				GError **error)
{
	const char *origin;
	const char *mode = pick(o->seccomp, "--seccomp", config->seccomp,
				config->seccomp_origin, &origin);
	const char *user;

	if (!cusemu_seccomp_mode_parse(mode ? mode : "enforce",
				       &d->sandbox.seccomp))
		return unknown_value(error, origin, "seccomp mode", mode,
				     "; use enforce, log or off");
	user = pick(o->user, "--user", config->user, config->user_origin,
		    &origin);
	return !user ||
	       cusemu_sandbox_set_user(&d->sandbox, user, origin, error);
}

/*
 * A count from 1 to max, the command line's over the file's; *n keeps its
 * default when neither gives one. hint says what to write instead.
 */
static gboolean resolve_count(const char *arg, const char *option,
			      const char *value, const char *value_origin,
			      const char *what, guint64 max, const char *hint,
			      guint64 *n, GError **error)
{
	const char *origin;
	const char *text = pick(arg, option, value, value_origin, &origin);

	return cusemu_setting_count(text, origin, what, max, hint, n, error);
}

#define THREADS_DEFAULT 8
#define THREADS_MAX 1024

static gboolean resolve_numbers(struct daemon *d, const struct options *o,
				const struct cusemu_config *config,
				GError **error)
{
	guint64 threads = THREADS_DEFAULT;

	if (!resolve_count(o->threads, "--threads", config->threads,
			   config->threads_origin, "threads", THREADS_MAX,
			   "the pool adds workers for waiting handlers by "
			   "itself, so a few are enough (default "
			   G_STRINGIFY(THREADS_DEFAULT) ")",
			   &threads, error))
		return FALSE;
	d->threads = (unsigned int)threads;
	return TRUE;
}

/* A true/false key of the file; *value is left when it is absent. */
static gboolean resolve_bool(const char *text, const char *origin,
			     const char *key, gboolean *value, GError **error)
{
	return cusemu_setting_bool(text, origin, key, value, error);
}

/* As the kernel's watchdog_thresh x 2, and its hung_task_timeout_secs. */
#define SOFT_LOCKUP_DEFAULT 20
#define HUNG_TASK_DEFAULT 120
#define WATCHDOG_MAX 3600

/* A threshold of the watchdog, in seconds: 0 (never) to WATCHDOG_MAX. */
static gboolean resolve_secs(const char *value, const char *option,
			     const char *key, const char *key_value,
			     const char *key_origin, unsigned int fallback,
			     unsigned int *secs, GError **error)
{
	const char *origin;
	const char *s = pick(value, option, key_value, key_origin, &origin);
	guint64 n = fallback;

	if (s && !g_ascii_string_to_unsigned(s, 10, 0, WATCHDOG_MAX, &n,
					     NULL)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: %s '%s' is not a number of seconds from 0 "
			    "(never) to %d; the default is %u, as the "
			    "kernel's",
			    origin, key, s, WATCHDOG_MAX, fallback);
		return FALSE;
	}
	*secs = (unsigned int)n;
	return TRUE;
}

/* What a model's fault, a handler that never sleeps and a call that
 * never wakes cost. */
static gboolean resolve_oops(struct daemon *d, const struct options *o,
			     const struct cusemu_config *config,
			     GError **error)
{
	d->panic_on_oops = o->panic_on_oops;
	if (!o->panic_on_oops &&
	    !resolve_bool(config->panic_on_oops, config->panic_on_oops_origin,
			  "panic_on_oops", &d->panic_on_oops, error))
		return FALSE;
	return resolve_secs(o->soft_lockup_secs, "--soft-lockup-secs",
			    "soft_lockup_secs", config->soft_lockup_secs,
			    config->soft_lockup_secs_origin,
			    SOFT_LOCKUP_DEFAULT, &d->soft_lockup_secs,
			    error) &&
	       resolve_secs(o->hung_task_secs, "--hung-task-secs",
			    "hung_task_secs", config->hung_task_secs,
			    config->hung_task_secs_origin, HUNG_TASK_DEFAULT,
			    &d->hung_task_secs, error);
}

/* The bound of a model host's address space: a size, 0 for none. */
static gboolean resolve_host(struct daemon *d, const struct options *o,
			     const struct cusemu_config *config,
			     GError **error)
{
	static const struct cusemu_param size = {
		.key = "host_memory", .type = CUSEMU_PARAM_SIZE };
	const char *origin;
	const char *text = pick(o->host_memory, "--host-memory",
				config->host_memory,
				config->host_memory_origin, &origin);
	struct cusemu_host_settings hs = { 0 };
	const struct cusemu_sandbox *sb = &d->sandbox;
	g_autofree char *bytes = NULL;
	const char *why = NULL;

	bytes = cusemu_param_normalise(&size, text ? text
						   : CUSEMU_HOST_MEMORY_DEFAULT,
				       &why);
	if (!bytes) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: host_memory '%s' is not a size (%s); write "
			    "bytes with an optional K, M or G, or 0 for no "
			    "bound",
			    origin, text, why);
		return FALSE;
	}
	d->host_memory = g_ascii_strtoull(bytes, NULL, 10);
	hs.uid = sb->user ? sb->uid : geteuid();
	hs.gid = sb->user ? sb->gid : getegid();
	for (guint i = 0; sb->user && sb->groups && i < sb->groups->len &&
			  i < G_N_ELEMENTS(hs.groups);
	     i++)
		hs.groups[hs.n_groups++] = g_array_index(sb->groups, gid_t, i);
	hs.memory = d->host_memory;
	hs.seccomp = sb->seccomp;
	cusemu_hosts_configure(&hs);
	return TRUE;
}

/* What resolve_transport() reads the transports' keys from. */
struct transport_values {
	const struct options *o;
	const struct cusemu_config *config;
	GPtrArray *origins;	/* "--OPTION" strings handed out */
};

/* A transport's key: its option's value over the file's. */
static const char *transport_value(const struct cusemu_transport_key *k,
				   const char **origin, void *data)
{
	struct transport_values *v = data;
	const char *arg = v->o->transport_args
				  ? g_hash_table_lookup(v->o->transport_args,
							k->option)
				  : NULL;
	char *option;

	if (!arg)
		return cusemu_config_transport_value(v->config, k->key,
						     origin);
	option = g_strconcat("--", k->option, NULL);
	g_ptr_array_add(v->origins, option);
	*origin = option;
	return arg;
}

/* The transport the settings ask for, with its own settings. */
static gboolean resolve_transport(struct daemon *d, const struct options *o,
				  const struct cusemu_config *config,
				  GError **error)
{
	g_autoptr(GPtrArray) origins = g_ptr_array_new_with_free_func(g_free);
	struct transport_values values = { o, config, origins };
	struct cusemu_transport_settings *ts = &d->transport_settings;

	cusemu_transport_settings_clear(d->transport_ops, ts);
	ts->workers = d->threads;
	ts->debug = o->debug;
	ts->sandbox = &d->sandbox;
	d->transport_ops = cusemu_transport_choose(ts, transport_value,
						   &values, error);
	return d->transport_ops != NULL;
}

/* Command line over configuration file over defaults. */
static gboolean resolve_settings(struct daemon *d, const struct options *o,
				 const struct cusemu_config *config,
				 GError **error)
{
	return resolve_control(d, o, config, error) &&
	       resolve_dispatch(d, o, config, error) &&
	       resolve_sandbox(d, o, config, error) &&
	       resolve_numbers(d, o, config, error) &&
	       resolve_oops(d, o, config, error) &&
	       resolve_transport(d, o, config, error) &&
	       resolve_host(d, o, config, error);
}

static gboolean create_devices(struct daemon *d,
			       const struct cusemu_config *config,
			       GError **error)
{
	g_autoptr(GHashTable) instances = g_hash_table_new(g_str_hash,
							   g_str_equal);
	g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash,
						       g_str_equal);

	for (guint i = 0; i < config->devices->len; i++) {
		const struct cusemu_device_spec *spec = config->devices->pdata[i];
		guint n = GPOINTER_TO_UINT(
			g_hash_table_lookup(instances, spec->model));
		struct cusemu_device *dev;
		const char *other;

		dev = cusemu_device_new(spec, n, d->kmodel, error);
		if (!dev)
			return FALSE;
		g_ptr_array_add(d->devices, dev);
		g_hash_table_insert(instances, spec->model,
				    GUINT_TO_POINTER(n + 1));
		other = g_hash_table_lookup(names, dev->name);
		if (other) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "%s: node name '%s' is already used by %s; "
				    "give one of them another name=",
				    spec->origin, dev->name, other);
			return FALSE;
		}
		g_hash_table_insert(names, (char *)dev->name, spec->origin);
	}
	return TRUE;
}

/* How the kernel passes dev's ioctls (see docs/daemon.md). */
static const char *ioctl_mode(const struct daemon *d,
			      const struct cusemu_device *dev)
{
	return d->transport_ops->ioctls(dev);
}

/* Where clients find the device: its node, or its file on the mount. */
static char *device_path(const struct daemon *d,
			 const struct cusemu_device *dev)
{
	if (!d->transport)
		return g_strdup(dev->name);
	return d->transport_ops->path(d->transport, dev);
}

/* Every device served, through the one transport the settings chose. */
static gboolean start_transport(struct daemon *d, GError **error)
{
	for (guint i = 0; i < d->devices->len; i++)
		cusemu_dispatch_bind(d->devices->pdata[i], d->lock_mode);
	return cusemu_transport_start(d->transport_ops, &d->transport_settings,
				      d->devices, &d->transport, error);
}

static void stop(struct daemon *d)
{
	/*
	 * Calls stuck in a model host end when it is killed. A sound host
	 * answers its releases in milliseconds; half a second leaves the rest
	 * of the stop room within the 2 s promised on a loaded machine.
	 */
	cusemu_hosts_stop_begin(500);
	cusemu_oops_shutdown();
	if (d->control)
		cusemu_control_stop(d->control);
	d->control = NULL;
	cusemu_trace_detach_all();
	cusemu_transport_stop(d->transport);
	for (guint i = 0; i < d->devices->len; i++) {
		struct cusemu_device *dev = d->devices->pdata[i];

		cusemu_dispatch_unbind(dev);
		cusemu_device_free(dev);
	}
	g_ptr_array_set_size(d->devices, 0);
	cusemu_transport_free(d->transport);
	d->transport = NULL;
	cusemu_sandbox_clear(&d->sandbox);
	cusemu_hosts_stop_end();
}

/*
 * One model, where it came from and how each transport that does not
 * serve every model alike serves it: in JSON, or for people (the name on
 * the models line, the rest on a line of its own in fitness[t], t the
 * transport's index).
 */
static void describe_model(GString *out, GString **fitness, gboolean json,
			   gboolean first, const struct cusemu_device_model *m,
			   const char *origin)
{
	if (json) {
		g_string_append_printf(out, "%s{\"name\":\"%s\",\"origin\":",
				       first ? "" : ",", m->name);
		cusemu_json_append_string(out, origin ? origin : "built-in");
	} else {
		g_string_append_printf(out, "%s%s", first ? " " : ", ",
				       m->name);
		if (origin)
			g_string_append_printf(out, " (from %s)", origin);
	}
	for (unsigned int t = 0; cusemu_transports[t]; t++) {
		const struct cusemu_transport_ops *ops = cusemu_transports[t];
		g_autofree char *line = ops->fitness ? ops->fitness(m) : NULL;

		if (!line)
			continue;
		if (json) {
			g_string_append_printf(out, ",\"%s\":", ops->kind);
			cusemu_json_append_string(out, line);
		} else {
			g_string_append_printf(fitness[t], "  %-16s %s\n",
					       m->name, line);
		}
	}
	if (json)
		g_string_append_c(out, '}');
}

/* Every device model this daemon has, where it came from, and how the
 * transports that do not serve every model alike serve it. */
static void describe_models(GString *out, gboolean json)
{
	g_autofree const struct cusemu_device_model **plugins = NULL;
	guint n = cusemu_plugin_models(&plugins);
	unsigned int n_transports = 0;
	GString **fitness;

	while (cusemu_transports[n_transports])
		n_transports++;
	fitness = g_new0(GString *, n_transports);
	for (unsigned int t = 0; t < n_transports; t++)
		fitness[t] = g_string_new(NULL);
	g_string_append(out, json ? "[" : "models:");
	for (unsigned int i = 0; cusemu_device_models[i]; i++)
		describe_model(out, fitness, json, i == 0,
			       cusemu_device_models[i], NULL);
	for (guint i = 0; i < n; i++)
		describe_model(out, fitness, json, FALSE, plugins[i],
			       cusemu_plugin_origin(plugins[i]));
	if (json)
		g_string_append_c(out, ']');
	else
		g_string_append_c(out, '\n');
	for (unsigned int t = 0; t < n_transports; t++) {
		const char *label = cusemu_transports[t]->fitness_label;

		if (!json && fitness[t]->len)
			g_string_append_printf(out, "%s:\n%s", label,
					       fitness[t]->str);
		g_string_free(fitness[t], TRUE);
	}
	g_free(fitness);
}

/* A report under its device's line of cusemuctl list. */
static void append_indented(GString *out, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	for (char **l = lines; *l; l++)
		g_string_append_printf(out, "    %s\n", *l);
}

/* The kernel's "Tainted:", in words. */
static void describe_taint(GString *out)
{
	const char *taint = cusemu_oops_taint();

	if (!*taint) {
		g_string_append(out, "tainted: no (no model oopsed or locked "
				     "up)\n");
		return;
	}
	g_string_append_printf(out, "tainted: %s (%u oops(es), %u soft "
				    "lockup(s)); a model's fault may have "
				    "corrupted memory others use\n",
			       taint, cusemu_oops_count(),
			       cusemu_oops_lockups());
}

static int control_list(void *data, gboolean json, GString *out)
{
	struct daemon *d = data;

	if (json)
		g_string_append(out, "{\"devices\":[");
	for (guint i = 0; i < d->devices->len; i++) {
		const struct cusemu_device *dev = d->devices->pdata[i];
		const char *kernel = cusemu_instance(dev)->dispatch.kmodel->name;
		const char *lock = cusemu_lock_mode_name(d->lock_mode);
		const char *plugin = cusemu_plugin_origin(dev->model);
		const char *origin = plugin ? plugin : "built-in";
		g_autofree char *path = device_path(d, dev);

		const char *report = cusemu_device_oops_report(dev);

		if (!json) {
			g_string_append_printf(out,
					       "%-16s %-21s model %-8s "
					       "kernel %-8s lock %-6s "
					       "ioctls %s%s%s%s\n",
					       dev->name, path,
					       dev->model->name, kernel, lock,
					       ioctl_mode(d, dev),
					       plugin ? " from " : "",
					       plugin ? plugin : "",
					       report ? " FENCED (oops)" : "");
			if (report)
				append_indented(out, report);
			continue;
		}
		g_string_append_printf(out,
				       "%s{\"name\":\"%s\",\"node\":",
				       i ? "," : "", dev->name);
		cusemu_json_append_string(out, path);
		g_string_append_printf(out,
				       ",\"model\":\"%s\",\"kernel\":\"%s\","
				       "\"lock\":\"%s\",\"ioctls\":\"%s\","
				       "\"origin\":",
				       dev->model->name, kernel, lock,
				       ioctl_mode(d, dev));
		cusemu_json_append_string(out, origin);
		g_string_append_printf(out, ",\"state\":\"%s\"",
				       report ? "fenced" : "serving");
		if (report) {
			g_string_append(out, ",\"oops\":");
			cusemu_json_append_string(out, report);
		}
		g_string_append_c(out, '}');
	}
	if (json) {
		g_string_append(out, "],\"tainted\":");
		cusemu_json_append_string(out, cusemu_oops_taint());
		g_string_append_printf(out, ",\"oopses\":%u,\"soft_lockups\""
					    ":%u,\"hung_tasks\":%u",
				       cusemu_oops_count(),
				       cusemu_oops_lockups(),
				       cusemu_oops_hung_tasks());
		g_string_append(out, ",\"models\":");
		describe_models(out, TRUE);
		g_string_append_printf(out,
				       ",\"pool\":{\"threads\":%u,\"running\":%u}",
				       d->threads, cusemu_pool_threads());
		g_string_append(out, ",\"sandbox\":");
		cusemu_sandbox_describe_json(&d->sandbox, out);
		g_string_append(out, "}\n");
	} else {
		describe_models(out, FALSE);
		describe_taint(out);
		g_string_append_printf(out,
				       "pool: %u worker threads, %u running "
				       "now (more while handlers wait)\n",
				       d->threads, cusemu_pool_threads());
		cusemu_sandbox_describe(&d->sandbox, out);
		g_string_append_c(out, '\n');
	}
	return 0;
}

static int control_stats(void *data, gboolean json, GString *out)
{
	struct daemon *d = data;

	if (json)
		g_string_append(out, "{\"devices\":[");
	for (guint i = 0; i < d->devices->len; i++) {
		const struct cusemu_device *dev = d->devices->pdata[i];
		g_autofree char *path = device_path(d, dev);

		if (json) {
			g_string_append_printf(out,
					       "%s{\"name\":\"%s\",\"stats\":",
					       i ? "," : "", dev->name);
			cusemu_stats_append_json(cusemu_instance(dev)->stats, out);
			g_string_append(out, "}");
		} else {
			g_string_append_printf(
				out, "%sdevice %s (%s) model %s kernel %s "
				     "lock %s\n",
				i ? "\n" : "", dev->name, path,
				dev->model->name, cusemu_instance(dev)->dispatch.kmodel->name,
				cusemu_lock_mode_name(d->lock_mode));
			cusemu_stats_append_text(cusemu_instance(dev)->stats, out);
		}
	}
	if (json)
		g_string_append(out, "]}\n");
	return 0;
}

static int control_reset(void *data, GString *out)
{
	struct daemon *d = data;

	for (guint i = 0; i < d->devices->len; i++) {
		const struct cusemu_device *dev = d->devices->pdata[i];

		cusemu_stats_reset(cusemu_instance(dev)->stats);
	}
	g_string_append_printf(out, "statistics of %u device(s) reset\n",
			       d->devices->len);
	return 0;
}

/* The model's answer to cusemuctl device, under an oops guard. */
static int control_model(struct daemon *d, struct cusemu_device *dev,
			 char **argv, GString *out)
{
	g_autofree char *path = device_path(d, dev);
	struct cusemu_oops_guard g;
	int err = 0;

	if (cusemu_device_fenced(dev)) {
		g_string_append_printf(out, "%s is fenced after an oops "
					    "(cusemuctl list shows the report); "
					    "cusemuctl reload %s brings it back",
				       path, dev->name);
		return EIO;
	}
	cusemu_oops_enter(&g, dev, CUSEMU_OP_CONTROL, NULL, 0);
	if (!cusemu_oops_setjmp(&g))
		err = dev->model->control(dev, argv, out);
	if (cusemu_oops_leave(&g)) {
		g_string_append_printf(out, "%s%s oopsed answering this "
					    "request and is fenced; the report "
					    "is in the log and in cusemuctl "
					    "list",
				       out->len ? "\n" : "", path);
		return EIO;
	}
	/* The control socket answers positive errnos. */
	return -err;
}

/* The answer to a control request naming a node the daemon lacks. */
static int no_device(GString *out, const char *node)
{
	g_string_append_printf(out, "no device %s here; cusemuctl list shows "
				    "the devices",
			       node);
	return ENODEV;
}

/* The index of the device node names (NAME, or a path the transport
 * gives it: /dev/NAME, DIR/NAME), or -1. */
static int device_index(const struct daemon *d, const char *node)
{
	if (d->transport)
		node = d->transport_ops->name(d->transport, node);
	else if (g_str_has_prefix(node, "/dev/"))
		node += strlen("/dev/");
	for (guint i = 0; i < d->devices->len; i++) {
		const struct cusemu_device *dev = d->devices->pdata[i];

		if (!strcmp(dev->name, node))
			return (int)i;
	}
	return -1;
}

static int control_device(void *data, char **argv, GString *out)
{
	struct daemon *d = data;
	int i = device_index(d, argv[0]);

	if (i >= 0) {
		struct cusemu_device *dev = d->devices->pdata[i];

		if (!dev->model->control) {
			g_autofree char *path = device_path(d, dev);

			g_string_append_printf(out, "%s (%s) takes no "
						    "requests",
					       path, dev->model->name);
			return EOPNOTSUPP;
		}
		return control_model(d, dev, argv + 1, out);
	}
	return no_device(out, argv[0]);
}

/*
 * Devices at run time (cusemuctl add, remove), on the main thread, which
 * alone changes d->devices and what the transport serves. The daemon is
 * in its sandbox by then: no capability, maybe another user, and the
 * system calls of docs/security.md.
 */

/*
 * A model built in or from a plugin loaded at start-up. Loading a plugin
 * file at run time is not done here: in the sandbox, dlopen()'s calls are
 * off the list, and the file's checks want root. That belongs to the
 * plugin loader (plugin-loader.c), which would then answer for names it loads.
 */
static const struct cusemu_device_model *
loaded_model(const struct cusemu_device_spec *spec, GError **error)
{
	const struct cusemu_device_model *m =
		cusemu_device_model_loaded(spec->model);
	g_autofree char *names = NULL;

	if (m)
		return m;
	names = cusemu_device_model_names();
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "%s: no device model '%s' in this daemon; its models: %s. "
		    "A plugin's model is added once cusemud has loaded the "
		    "plugin at start-up (--plugin FILE, or plugins= in "
		    "[daemon])",
		    spec->origin, spec->model, names);
	return NULL;
}

/* The instance number of a new device of model m: the first whose
 * default node name (PREFIX0, PREFIX1, ...) no device has. */
static unsigned int free_instance(const struct daemon *d,
				  const struct cusemu_device_model *m)
{
	unsigned int n = 0;

	for (guint i = 0; i < d->devices->len; i++)
		if (((struct cusemu_device *)d->devices->pdata[i])->model == m)
			n++;
	for (;; n++) {
		g_autofree char *name = g_strdup_printf("%s%u", m->node_prefix,
							 n);

		if (device_index(d, name) < 0)
			return n;
	}
}

/* A device that calls a real device: the sandbox lets it. */
static bool is_passthrough(const struct cusemu_device *dev)
{
	return !strcmp(dev->model->name, "passthrough");
}

/*
 * A member's files of a key of type CUSEMU_PARAM_FILE or _PATHS (i2c's
 * eeprom_file=, and file= in its chips=): each must have been handed
 * over, and the model must run in the daemon, where it finds them with
 * cusemu_device_param_fd() (a model host is given none).
 */
static gboolean check_model_files(const struct cusemu_device_spec *spec,
				  const struct cusemu_setting *s,
				  const struct cusemu_param *p,
				  const struct cusemu_device_model *m,
				  const struct cusemu_control_peer *peer,
				  GError **error)
{
	g_autoptr(GPtrArray) paths = cusemu_param_paths(p, s->value);
	bool hosted = cusemu_model_origin(m) != NULL;

	for (guint i = 0; i < paths->len; i++) {
		const char *path = paths->pdata[i];

		if (!hosted && cusemu_device_spec_file(spec, path) >= 0)
			continue;
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: %s= names a file (%s), which the daemon would "
			    "open with its own rights (uid %u), not with those "
			    "of uid %u who asks: %s",
			    spec->origin, s->key, path, (unsigned int)geteuid(),
			    (unsigned int)peer->uid,
			    hosted ? "a plugin's model opens its files itself, "
				     "in its model host; only root and the "
				     "daemon's own user may give them through "
				     "the control socket"
				   : "cusemuctl add opens it as its user and "
				     "hands it over; this client handed none");
		return FALSE;
	}
	return TRUE;
}

/*
 * The files a control client opened with its own rights and handed over,
 * in the order cusemu_private_files_of_add() names them in the add's
 * text: record='s, then for the model (kept in spec by path).
 */
static gboolean take_handed(const char *text,
			    struct cusemu_device_spec *spec,
			    struct cusemu_control_peer *peer, GError **error)
{
	g_autoptr(GPtrArray) named = cusemu_private_files_of_add(text);
	guint next = 0;

	if (peer->n_fds > named->len) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: %u files were handed over, for %u files "
			    "named (record=, and the model's files)",
			    spec->origin, peer->n_fds, named->len);
		return FALSE;
	}
	for (unsigned int i = 0; i < peer->n_fds; i++) {
		const char *what = named->pdata[i];
		g_autoptr(GError) bad = NULL;

		if (what[0] == 'r') {
			struct cusemu_setting *s = NULL;

			while (next < spec->settings->len && !s) {
				s = spec->settings->pdata[next++];
				if (strcmp(s->key, "record") || s->fd >= 0)
					s = NULL;
			}
			if (!s) {
				g_set_error(error, G_OPTION_ERROR,
					    G_OPTION_ERROR_BAD_VALUE,
					    "%s: a recording was handed over "
					    "for %s, which no record= key "
					    "takes",
					    spec->origin, what + 1);
				return FALSE;
			}
			s->fd = peer->fds[i];
			peer->fds[i] = -1;
			continue;
		}
		if (!cusemu_private_file_take_model(peer->fds[i], &bad)) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "%s: the file handed over for %s: %s",
				    spec->origin, what + 1, bad->message);
			return FALSE;
		}
		cusemu_device_spec_add_file(spec, what + 1, peer->fds[i]);
		peer->fds[i] = -1;
	}
	return TRUE;
}

/*
 * What a control client names is reached with its own rights: record=
 * and the model's files (keys of type CUSEMU_PARAM_FILE and _PATHS) with
 * the files it opened and handed over (cusemuctl does), any other key
 * naming a file the daemon would open itself only from root or the
 * daemon's own user.
 */
static gboolean take_client_files(const char *text,
				  struct cusemu_device_spec *spec,
				  const struct cusemu_device_model *m,
				  struct cusemu_control_peer *peer,
				  GError **error)
{
	if (!take_handed(text, spec, peer, error))
		return FALSE;
	for (guint i = 0; i < spec->settings->len; i++) {
		struct cusemu_setting *s = spec->settings->pdata[i];
		const struct cusemu_param *p = cusemu_param_of(m, s->key);

		if (!p || peer->trusted)
			continue;
		if ((p->type == CUSEMU_PARAM_FILE ||
		     p->type == CUSEMU_PARAM_PATHS) &&
		    !check_model_files(spec, s, p, m, peer, error))
			return FALSE;
		if (p->type != CUSEMU_PARAM_PATH ||
		    (!strcmp(s->key, "record") && s->fd >= 0))
			continue;
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: %s= names a file, which the daemon would open "
			    "with its own rights (uid %u), not with those of "
			    "uid %u who asks: %s",
			    spec->origin, s->key, (unsigned int)geteuid(),
			    (unsigned int)peer->uid,
			    !strcmp(s->key, "record")
				    ? "cusemuctl add opens record= as its "
				      "user and hands the file over; this "
				      "client handed none"
				    : "only root and the daemon's own user may "
				      "give it through the control socket; put "
				      "the device in the configuration, or ask "
				      "root to add it");
		return FALSE;
	}
	return TRUE;
}

/*
 * Keys whose value widens what code runs in the daemon, and how: a value
 * other than the safe one is for root and the daemon's own user alone,
 * who may change the daemon as they wish anyway. A control group member's
 * model runs where every member's does.
 */
static const struct {
	const char *key;
	const char *safe;	/* the value anyone may give */
	const char *why;
} root_keys[] = {
	{ "isolation", "process",
	  "it runs the model in the daemon itself, a plugin's outside its "
	  "model host and sandbox, where a fault or a system call off the "
	  "daemon's filter ends every device" },
};

static gboolean check_root_keys(const struct cusemu_device_spec *spec,
				const struct cusemu_control_peer *peer,
				GError **error)
{
	if (peer->trusted)
		return TRUE;
	for (guint i = 0; i < spec->settings->len; i++) {
		const struct cusemu_setting *s = spec->settings->pdata[i];

		for (size_t k = 0; k < G_N_ELEMENTS(root_keys); k++) {
			if (strcmp(s->key, root_keys[k].key) ||
			    !strcmp(s->value, root_keys[k].safe))
				continue;
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "%s: %s=%s is refused to uid %u: %s; only "
				    "root and the daemon's own user may give "
				    "it through the control socket. Leave it "
				    "out (%s=%s), put the device in the "
				    "configuration, or ask root to add it",
				    spec->origin, s->key, s->value,
				    (unsigned int)peer->uid, root_keys[k].why,
				    s->key, root_keys[k].safe);
			return FALSE;
		}
	}
	return TRUE;
}

/* A device as --device makes it, checked as at start-up, and serving. */
static struct cusemu_device *add_device(struct daemon *d, const char *text,
					struct cusemu_control_peer *peer,
					GError **error)
{
	struct cusemu_config *config = cusemu_config_new();
	struct cusemu_device_spec *spec;
	const struct cusemu_device_model *m;
	struct cusemu_device *dev = NULL;
	int other;

	if (!cusemu_config_add_device_text(config, text, "add", error))
		goto out;
	spec = config->devices->pdata[0];
	m = loaded_model(spec, error);
	if (!m || !check_root_keys(spec, peer, error) ||
	    !take_client_files(text, spec, m, peer, error))
		goto out;
	dev = cusemu_device_create(m, spec, free_instance(d, m), d->kmodel,
				   error);
	if (!dev)
		goto out;
	other = device_index(d, dev->name);
	if (other >= 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: node name '%s' is already used by a %s device; "
			    "give this one another name=",
			    spec->origin, dev->name,
			    ((struct cusemu_device *)d->devices->pdata[other])
				    ->model->name);
		goto free_device;
	}
	if (is_passthrough(dev) && !d->sandbox.passthrough &&
	    d->sandbox.seccomp != CUSEMU_SECCOMP_OFF) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: the sandbox was made without a passthrough "
			    "device, and its filter forbids the calls one "
			    "makes: give a passthrough device at start-up "
			    "(the configuration, or --device), or run with "
			    "--seccomp=off",
			    spec->origin);
		goto free_device;
	}
	if (!cusemu_device_sandboxed(dev, error) ||
	    !cusemu_dispatch_bind_added(dev, d->lock_mode, error))
		goto free_device;
	if (!d->transport_ops->serve(d->transport, dev, error))
		goto unbind;
	g_ptr_array_add(d->devices, dev);
	goto out;

unbind:
	cusemu_dispatch_unplug(dev);
	cusemu_dispatch_unbind(dev);
free_device:
	cusemu_device_free(dev);
	dev = NULL;
out:
	cusemu_config_free(config);
	return dev;
}

static int control_add(void *data, const char *spec,
		       struct cusemu_control_peer *peer, GString *out)
{
	struct daemon *d = data;
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev = add_device(d, spec, peer, &error);
	g_autofree char *path = NULL;

	if (!dev) {
		g_message("add %s: refused: %s", spec, error->message);
		g_string_append(out, error->message);
		return error->domain == G_FILE_ERROR &&
				       error->code == G_FILE_ERROR_EXIST
			       ? EEXIST
			       : EINVAL;
	}
	path = device_path(d, dev);
	g_string_append_printf(out, "added %s: %s, kernel model %s, lock %s\n",
			       path, dev->model->name,
			       cusemu_instance(dev)->dispatch.kmodel->name,
			       cusemu_lock_mode_name(d->lock_mode));
	return 0;
}

/*
 * Its node goes, or its file leaves the mount; FALSE when requests inside
 * it do not end, and the device must stay.
 */
static gboolean take_away(struct daemon *d, guint i)
{
	return d->transport_ops->unserve(d->transport, d->devices->pdata[i]);
}

static int control_remove(void *data, const char *node, GString *out)
{
	struct daemon *d = data;
	int i = device_index(d, node);
	struct cusemu_device *dev;
	g_autofree char *path = NULL;

	if (i < 0)
		return no_device(out, node);
	dev = d->devices->pdata[i];
	path = device_path(d, dev);
	/* While the node serves, as a module's exit did before
	 * misc_deregister(): its 32-bit calls in the table end first. */
	cusemu_dispatch_unplug(dev);
	if (!take_away(d, (guint)i)) {
		g_string_append_printf(out, "%s: requests inside it did not end "
					    "within 10 s, so its model is not "
					    "stopped; the daemon keeps the "
					    "device until it exits",
				       path);
		return EBUSY;
	}
	g_ptr_array_remove_index(d->devices, (guint)i);
	cusemu_dispatch_unbind(dev);
	g_message("removed %s (%s)", path, dev->model->name);
	g_string_append_printf(out, "removed %s (%s)\n", path,
			       dev->model->name);
	/* Nothing is inside it any more: the model's remove runs. */
	cusemu_device_free(dev);
	cusemu_plugin_prune();
	return 0;
}

/*
 * cusemuctl reload: the model's plugin again if it was rebuilt, a fresh
 * instance made as the old one was, and the node kept. The old instance
 * stays as it was when anything fails, and is freed once its files are.
 */
static int control_reload(void *data, const char *node, GString *out)
{
	struct daemon *d = data;
	int i = device_index(d, node);
	g_autoptr(GError) error = NULL;
	const struct cusemu_device_model *m;
	const struct cusemu_device_model *old_model;
	struct cusemu_device *old, *dev;
	g_autofree char *path = NULL, *what = NULL;
	const char *origin;

	if (i < 0)
		return no_device(out, node);
	old = d->devices->pdata[i];
	old_model = old->model;
	path = device_path(d, old);
	m = cusemu_plugin_reload(old->model, &error);
	dev = m ? cusemu_device_respawn(old, m, &error) : NULL;
	if (dev && !cusemu_transport_can_replace(old, dev, &error)) {
		cusemu_device_free(dev);
		dev = NULL;
	}
	if (!dev) {
		g_string_append_printf(out, "%s not reloaded, it serves as "
					    "before: %s",
				       path, error->message);
		g_warning("%s not reloaded: %s", path, error->message);
		return EINVAL;
	}
	/* The global ioctl32 table: the old entries out, the new ones in. */
	cusemu_dispatch_unbind(old);
	cusemu_dispatch_bind(dev, d->lock_mode);
	cusemu_transport_replace(old, dev);
	d->devices->pdata[i] = dev;
	origin = cusemu_plugin_origin(m);
	what = g_strdup_printf("a fresh %s %s%s", m->name,
			       !origin ? "(built in)" :
			       cusemu_plugin_hosted(m) ==
					       cusemu_plugin_hosted(old_model)
				       ? "of the same code (the file is "
						"the one loaded: not rebuilt) "
						"from " :
						"from the rebuilt ",
			       origin ? origin : "");
	g_message("%s reloaded: %s; files opened before get ENODEV", path,
		  what);
	g_string_append_printf(out, "%s reloaded: %s\n", path, what);
	/* The load the old instance was the last user of goes. */
	cusemu_plugin_prune();
	return 0;
}

/* "trace [NODE...]": every node named must be one of ours. */
static int control_trace(void *data, int fd, char **nodes, GString *out)
{
	struct daemon *d = data;
	g_autoptr(GPtrArray) names = g_ptr_array_new();

	for (char **n = nodes; *n; n++) {
		int i = device_index(d, *n);

		if (i < 0)
			return no_device(out, *n);
		g_ptr_array_add(names, (char *)((struct cusemu_device *)
						d->devices->pdata[i])->name);
	}
	g_ptr_array_add(names, NULL);
	return cusemu_trace_attach(fd, (char **)names->pdata, out);
}

static const struct cusemu_control_ops control_ops = {
	.list = control_list,
	.stats = control_stats,
	.reset = control_reset,
	.device = control_device,
	.reload = control_reload,
	.add = control_add,
	.remove = control_remove,
	.trace = control_trace,
};

/*
 * SIGINT and SIGTERM are blocked before any thread exists, so in every
 * thread, and taken in the main loop's wait alone: its poll is a ppoll()
 * that unblocks them, and their handler wakes the loop through an
 * eventfd. Not a signalfd: the kernel wakes a signalfd's poller for every
 * signal sent to any thread of the process, and the workers' timers send
 * thousands a second (a long call yields every 50 us), so the main thread
 * would take a CPU from the callers for nothing. g_unix_signal_add() would
 * start a thread of glib's own with every signal blocked, which the
 * sandbox could not make drop its capabilities.
 */
static struct {
	int fd;			/* the handler's eventfd, read by on_signal() */
	sigset_t unblocked;	/* the main thread's mask in its wait */
} stop_signals = { .fd = -1 };

/* GPollFD is struct pollfd on Unix, as glib's own g_poll() assumes. */
G_STATIC_ASSERT(sizeof(GPollFD) == sizeof(struct pollfd) &&
		G_STRUCT_OFFSET(GPollFD, revents) ==
			G_STRUCT_OFFSET(struct pollfd, revents));

static void block_stop_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &stop_signals.unblocked);
	sigdelset(&stop_signals.unblocked, SIGINT);
	sigdelset(&stop_signals.unblocked, SIGTERM);
}

static void on_stop_signal(int signo)
{
	int saved = errno;

	(void)signo;
	eventfd_write(stop_signals.fd, 1);
	errno = saved;
}

/* The main loop's poll; a stop signal ends it with EINTR, which glib
 * takes as a wake-up, and the eventfd is then readable. */
static gint poll_taking_stop_signals(GPollFD *fds, guint n, gint timeout_ms)
{
	struct timespec t = { .tv_sec = timeout_ms / 1000,
			      .tv_nsec = timeout_ms % 1000 * 1000000L };

	return ppoll((struct pollfd *)fds, n, timeout_ms < 0 ? NULL : &t,
		     &stop_signals.unblocked);
}

static gboolean on_signal(int fd, GIOCondition condition, gpointer data)
{
	struct daemon *d = data;
	eventfd_t n;

	(void)condition;
	if (eventfd_read(fd, &n))
		return G_SOURCE_CONTINUE;
	if (d->transport) {
		g_autofree char *what = d->transport_ops->stopping(
			d->transport, d->devices->len);

		g_message("stopping: %s", what);
	}
	g_main_loop_quit(d->loop);
	return G_SOURCE_REMOVE;
}

/* The descriptor lives as long as the daemon. */
static gboolean watch_stop_signals(struct daemon *d, GError **error)
{
	struct sigaction take = { .sa_handler = on_stop_signal };

	stop_signals.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop_signals.fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot watch SIGINT and SIGTERM: %s",
			    g_strerror(errno));
		return FALSE;
	}
	sigfillset(&take.sa_mask);
	sigaction(SIGINT, &take, NULL);
	sigaction(SIGTERM, &take, NULL);
	g_main_context_set_poll_func(NULL, poll_taking_stop_signals);
	g_unix_fd_add(stop_signals.fd, G_IO_IN, on_signal, d);
	return TRUE;
}

/*
 * Every node exists with its owner and mode: what needed root is done.
 * The models then check what they need later, with what is left.
 */
static gboolean enter_sandbox(struct daemon *d, GError **error)
{
	g_autoptr(GString) line = g_string_new(NULL);

	for (guint i = 0; i < d->devices->len; i++)
		d->sandbox.passthrough |= is_passthrough(d->devices->pdata[i]);
	/* Model hosts come from the launcher from now on, or not at all. */
	cusemu_hosts_seal();
	if (!cusemu_sandbox_apply(&d->sandbox, error))
		return FALSE;
	for (guint i = 0; i < d->devices->len; i++)
		if (!cusemu_device_sandboxed(d->devices->pdata[i], error))
			return FALSE;
	cusemu_sandbox_describe(&d->sandbox, line);
	g_message("%s", line->str);
	return TRUE;
}

/* A session whose loop ended by itself lost its node: say so and stop. */
/* A thread of a model's own oopsed: every device of that load's models. */
static void fence_model(const char *origin, const char *report, void *data)
{
	struct daemon *d = data;

	for (guint i = 0; i < d->devices->len; i++) {
		struct cusemu_device *dev = d->devices->pdata[i];

		if (cusemu_plugin_origin(dev->model) == origin)
			cusemu_oops_fence(dev, report);
	}
}

static gboolean check_sessions(gpointer data)
{
	struct daemon *d = data;

	g_autofree char *lost = NULL;

	cusemu_oops_reap(fence_model, d);
	lost = d->transport_ops->lost(d->transport);
	if (!lost)
		return G_SOURCE_CONTINUE;
	g_critical("%s; stopping", lost);
	d->exit_status = EXIT_FAILURE;
	g_main_loop_quit(d->loop);
	return G_SOURCE_REMOVE;
}

/*
 * Detach before any thread exists. The parent stays until the child says
 * whether every node came up, so that the caller sees start-up errors.
 */
static int detach(int *ready_fd)
{
	int pipefd[2];
	pid_t pid;
	char status = 1;

	if (pipe(pipefd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(pipefd[1]);
		if (read(pipefd[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(pipefd[0]);
	setsid();
	*ready_fd = pipefd[1];
	return 0;
}

/*
 * Under systemd (Type=notify, $NOTIFY_SOCKET set): every node or file
 * exists. Said before the sandbox, whose filter has no sendmsg; a sandbox
 * that fails still ends the daemon, and the service with it.
 */
static void notify_ready(const struct daemon *d)
{
#ifdef HAVE_LIBSYSTEMD
	int err = sd_notifyf(1, "READY=1\nSTATUS=serving %u device(s)",
			     d->devices->len);

	if (err < 0)
		g_warning("cannot tell systemd that the devices are ready: %s",
			  g_strerror(-err));
#else
	(void)d;
#endif
}

static void report_ready(int ready_fd, char status)
{
	int devnull;

	if (ready_fd < 0)
		return;
	if (!status) {
		devnull = open("/dev/null", O_RDWR);
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
		if (devnull > STDERR_FILENO)
			close(devnull);
		openlog("cusemud", LOG_PID, LOG_DAEMON);
		use_syslog = TRUE;
	}
	if (write(ready_fd, &status, 1) != 1)
		g_warning("cannot report start-up to the parent");
	close(ready_fd);
}

static gboolean load_config(struct cusemu_config *config,
			    const struct options *o, GError **error)
{
	if (o->config_file &&
	    !cusemu_config_load_file(config, o->config_file, error))
		return FALSE;
	for (char **arg = o->devices; arg && *arg; arg++)
		if (!cusemu_config_add_device_arg(config, *arg, error))
			return FALSE;
	if (!config->devices->len)
		return cusemu_config_add_device_arg(config, "fioc", error);
	return TRUE;
}

/* Devices and settings from the file and the command line. */
/* Before the first model runs: its probe is guarded too. A check starts
 * no watchdog. */
static gboolean start_oops(struct daemon *d, const struct options *o)
{
	cusemu_oops_init(d->panic_on_oops, o->check ? 0 : d->soft_lockup_secs,
			 o->check ? 0 : d->hung_task_secs);
	return TRUE;
}

static gboolean configure(struct daemon *d, const struct options *o,
			  GError **error)
{
	struct cusemu_config *config = cusemu_config_new();
	gboolean ok = load_config(config, o, error) &&
		      load_config_plugins(config, error) &&
		      resolve_settings(d, o, config, error) &&
		      start_oops(d, o) &&
		      create_devices(d, config, error);

	cusemu_config_free(config);
	return ok;
}

/* What GOptionContext filled in. */
static void options_clear(struct options *o)
{
	g_free(o->config_file);
	g_strfreev(o->devices);
	g_strfreev(o->plugins);
	g_free(o->kernel_model);
	g_free(o->lock);
	g_free(o->control);
	g_free(o->control_group);
	g_free(o->seccomp);
	g_free(o->user);
	g_free(o->threads);
	if (o->transport_args)
		g_hash_table_unref(o->transport_args);
	g_free(o->soft_lockup_secs);
	g_free(o->hung_task_secs);
	g_free(o->host_memory);
	g_free(o->check_file);
}

/*
 * --check-config: what a start reads and checks before it opens /dev/cuse
 * (configure()), as any user, and nothing after it: no detach, /proc
 * helper, node, mount, control socket or sandbox. The devices' models
 * are probed, and removed again.
 */
static int check_config(struct daemon *d, struct options *o)
{
	g_autoptr(GError) error = NULL;
	const char *file = o->check_file ? o->check_file : o->config_file;
	int status = EXIT_SUCCESS;

	if (!file)
		file = CUSEMU_CONFIG_FILE;
	if (file != o->config_file) {
		g_free(o->config_file);
		o->config_file = g_strdup(file);
	}
	/* A running daemon's recordings stay as they are. */
	cusemu_recording_register(true);
	if (configure(d, o, &error))
		printf("%s: OK, %u device%s\n", o->config_file,
		       d->devices->len, d->devices->len == 1 ? "" : "s");
	else {
		g_critical("%s", error->message);
		status = EXIT_FAILURE;
	}
	stop(d);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct daemon d = { 0 };
	g_autoptr(GError) error = NULL;
	gboolean usage = FALSE;
	int ready_fd = -1;

	/* The user's language and characters for messages and --help; numbers
	 * as C writes them, in logs and in the control socket's JSON. */
	setlocale(LC_ALL, "");
	setlocale(LC_NUMERIC, "C");
	/* First: no process of its user (a model host's) may reach its
	 * memory or descriptors through /proc, nor those of the children it
	 * forks (the /proc helper, the FUSE unmounter). */
	cusemu_sandbox_undumpable();
	g_log_set_writer_func(log_writer, NULL, NULL);
	/* What the daemon adds to the devices the kernel's part makes. */
	cusemu_plugin_register();
	cusemu_recording_register(false);
#ifdef CUSEMUD_TEST
	/* cusemud-test, never installed: the tests' own models directory. */
	if (g_getenv("CUSEMUD_TEST_MODELS_DIR"))
		cusemu_models_dir = g_getenv("CUSEMUD_TEST_MODELS_DIR");
	if (g_getenv("CUSEMUD_TEST_HOST"))
		cusemu_hosts_set_program(g_getenv("CUSEMUD_TEST_HOST"));
#endif
	d.devices = g_ptr_array_new();
	if (!parse_options(&argc, &argv, &o, &usage, &error))
		goto fail;
	verbose = o.verbose;
	if (o.version) {
		printf("cusemud %s\n", CUSEMU_VERSION);
		d.exit_status = EXIT_SUCCESS;
		goto out;
	}
	/* Before any of what follows: detach, helper, /dev/cuse. */
	if (o.check) {
		d.exit_status = check_config(&d, &o);
		goto out;
	}
	/* Before the models start their threads: a fork keeps none. */
	if (!o.foreground && detach(&ready_fd)) {
		g_set_error(&error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "cannot detach: %s", g_strerror(errno));
		goto fail;
	}
	block_stop_signals();
	/* A fork too, while no other thread exists. */
	if (!cusemu_sandbox_start_helper(&d.sandbox, &error))
		goto fail;
	if (!configure(&d, &o, &error) ||
	    !d.transport_ops->check(&d.transport_settings, d.devices, &error))
		goto fail;
	signal(SIGPIPE, SIG_IGN);
	/* Before the nodes exist: a signal during start-up stops us cleanly. */
	d.loop = g_main_loop_new(NULL, FALSE);
	if (!watch_stop_signals(&d, &error))
		goto fail;
	if (strcmp(d.control_path, "none")) {
		d.control = cusemu_control_start(d.control_path, d.control_group,
						 &control_ops, &d, &error);
		if (!d.control)
			goto fail;
	}
	if (!start_transport(&d, &error))
		goto fail;
	notify_ready(&d);
	if (!enter_sandbox(&d, &error))
		goto fail;

	g_timeout_add(200, check_sessions, &d);
	g_message("ready: %u device(s), %u worker threads", d.devices->len,
		  cusemu_pool_threads());
	report_ready(ready_fd, 0);
	g_main_loop_run(d.loop);
	g_main_loop_unref(d.loop);
	stop(&d);
	if (cusemu_device_lost_count()) {
		/* The last saves ran in stop(): what they lost is logged. */
		g_message("exit status 1: a device lost data at shutdown (see "
			  "above)");
		d.exit_status = EXIT_FAILURE;
	}
out:
	g_ptr_array_unref(d.devices);
	g_free(d.control_path);
	cusemu_transport_settings_clear(d.transport_ops, &d.transport_settings);
	options_clear(&o);
	return d.exit_status;

fail:
	g_critical("%s", error->message);
	if (usage) {
		g_autofree char *self = cusemu_self_command("cusemud",
							    CUSEMU_SBINDIR);

		fprintf(stderr, "Try '%s --help'.\n", self);
	}
	stop(&d);
	if (d.loop)
		g_main_loop_unref(d.loop);
	report_ready(ready_fd, 1);
	g_free(d.control_path);
	cusemu_transport_settings_clear(d.transport_ops, &d.transport_settings);
	options_clear(&o);
	return EXIT_FAILURE;
}
