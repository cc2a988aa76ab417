/* SPDX-License-Identifier: MIT */
/*
 * cusemu-kmod: a device model's sources, the ones its plugin builds from,
 * as a kernel module. It reads the models, their names and parameters from
 * the plugin (loaded as cusemud loads it), writes a kbuild tree around the
 * sources with the SDK's frame (kmod/cusemu-kmod.c), each source with the
 * defines and include directories of the plugin's build (flags.c), and
 * runs kbuild on it. A use outside the portable surface is named with its
 * file and line and what to use instead (outside.c).
 */
#define G_LOG_DOMAIN "cusemu-kmod"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "device.h"
#include "flags.h"
#include "outside.h"
#include "plugin.h"

enum {
	EXIT_BUILT = 0,
	EXIT_NOT_PORTABLE = 1,	/* the model calls outside the surface */
	EXIT_ERROR = 2,
};

static char *model_arg, *output_dir, *kernel_dir, *module_copy, *name_arg;
static char *compile_commands;
static char **include_dirs, **defines;
static gboolean no_build, no_compile_commands, version;

static const GOptionEntry entries[] = {
	{ "model", 'm', 0, G_OPTION_ARG_FILENAME, &model_arg,
	  "The plugin the SOURCEs build to, or the name of a model built "
	  "into cusemud (its source in devices/): the models, their node "
	  "names and parameters (required)", "FILE.so|NAME" },
	{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &output_dir,
	  "Write the module's tree to DIR (default: NAME-kmod)", "DIR" },
	{ "name", 'n', 0, G_OPTION_ARG_STRING, &name_arg,
	  "The module's name (default: the plugin's, without .so; for a "
	  "built-in model cusemu_MODEL)", "NAME" },
	{ "include", 'I', 0, G_OPTION_ARG_FILENAME_ARRAY, &include_dirs,
	  "Add DIR to the include path of the SOURCEs, as their build does "
	  "(where the generated compat header is, say)", "DIR" },
	{ "define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &defines,
	  "Define NAME for the SOURCEs, as -D does for their own build",
	  "NAME[=VALUE]" },
	{ "compile-commands", 0, 0, G_OPTION_ARG_FILENAME, &compile_commands,
	  "Take each SOURCE's defines and include directories from FILE, "
	  "the plugin's build's (default: the first compile_commands.json "
	  "in the plugin's directory or one above it)", "FILE" },
	{ "no-compile-commands", 0, 0, G_OPTION_ARG_NONE, &no_compile_commands,
	  "The SOURCEs need no defines and include directories but those "
	  "-D and -I give: read no compile commands", NULL },
	{ "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &kernel_dir,
	  "The kernel's build directory (default: /lib/modules/$(uname -r)"
	  "/build, which Debian's linux-headers package makes)", "DIR" },
	{ "copy", 'c', 0, G_OPTION_ARG_FILENAME, &module_copy,
	  "Copy the built module to FILE too", "FILE" },
	{ "no-build", 0, 0, G_OPTION_ARG_NONE, &no_build,
	  "Write the tree, do not run kbuild on it", NULL },
	{ "version", 'V', 0, G_OPTION_ARG_NONE, &version,
	  "Print the version and exit", NULL },
	G_OPTION_ENTRY_NULL
};

#define DESCRIPTION                                                       \
	"The tree holds a Kbuild and a Makefile (make -C KDIR M=DIR), the\n"  \
	"SDK's frame, a module parameter per key of the models' parameters\n" \
	"(key=value at insmod; with several models MODEL_KEY) and name=,\n"  \
	"the node's name, as cusemud's device key; and a file\n"             \
	"per SOURCE that includes it where it is. The module serves each\n"   \
	"model of the plugin at /dev/PREFIX0, as cusemud's modern kernel\n"   \
	"model dispatches: unlocked_ioctl and compat_ioctl by the tables.\n"  \
	"\n"                                                                  \
	"Exit status: 0 built (or written, with --no-build), 1 the model\n"  \
	"calls outside the portable surface (each call named with its file\n" \
	"and line), 2 any other error. See cusemu-kmod(1).\n"

static G_GNUC_PRINTF(1, 2) void say(const char *format, ...)
{
	va_list ap;

	fputs("cusemu-kmod: ", stderr);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Where the SDK's kernel files are: beside the installed program
 * (BINDIR/../share/cusemu/kmod, as meson installs them), else the source
 * tree this program was built from.
 */
static char *sdk_path(const char *installed, const char *in_tree)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *bindir = exe ? g_path_get_dirname(exe) : NULL;
	g_autofree char *path = bindir ? g_build_filename(bindir, "..", installed,
							  NULL) : NULL;

	if (path && g_file_test(path, G_FILE_TEST_IS_DIR))
		return g_canonicalize_filename(path, NULL);
	return g_strdup(in_tree);
}

static char *c_name(const char *s)
{
	char *n = g_strdup(s);

	for (char *c = n; *c; c++)
		if (!g_ascii_isalnum(*c))
			*c = '_';
	return n;
}

/* A module parameter's name for a model's key: KEY, or MODEL_KEY when the
 * module serves several models. */
static char *param_name(const struct cusemu_device_model *m, const char *key,
			bool several)
{
	g_autofree char *full = several ? g_strconcat(m->name, "_", key, NULL)
					: g_strdup(key);

	return c_name(full);
}

/* A C string literal of s. */
static char *c_string(const char *s)
{
	GString *out = g_string_new("\"");

	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			g_string_append_c(out, '\\');
		if (*s == '\n')
			g_string_append(out, "\\n");
		else
			g_string_append_c(out, *s);
	}
	g_string_append_c(out, '"');
	return g_string_free(out, FALSE);
}

/* What a module cannot serve of a model: an error, or a warning when the
 * module can do without it. */
static bool model_portable(const struct cusemu_device_model *m)
{
	bool ok = true;

	if (m->ioctl) {
		say("model %s: ->ioctl runs under the big lock, which kernels "
		    "have not had since 2.6.39: give the model tables, or "
		    "->unlocked_ioctl", m->name);
		ok = false;
	}
	if (m->ioctl_native || m->ioctl_compat) {
		say("model %s: ->ioctl_native and ->ioctl_compat are the split "
		    "proposal of 2004, which no kernel took: give the model "
		    "tables, or ->unlocked_ioctl and ->compat_ioctl", m->name);
		ok = false;
	}
	if (!m->node_prefix || !*m->node_prefix) {
		say("model %s: no node_prefix to name its node by", m->name);
		ok = false;
	}
	if (m->control)
		say("warning: model %s: ->control (cusemuctl device) has no "
		    "counterpart in a module: left out", m->name);
	if (m->sandboxed)
		say("warning: model %s: ->sandboxed is the daemon's: a module "
		    "does not call it", m->name);
	if (m->sysfs_parent || m->udev_props)
		say("warning: model %s: ->sysfs_parent and ->udev_props are "
		    "cusemu-run's: a module's device has no parent, and udev "
		    "makes its own properties", m->name);
	return ok;
}

static char *params_header(const struct cusemu_device_model **models,
			   guint n, const char *module)
{
	GString *h = g_string_new(NULL);
	GString *table = g_string_new(NULL);
	unsigned int k = 0;

	g_string_append_printf(h,
		"/* Written by cusemu-kmod for the module %s: a module\n"
		" * parameter per key of the models' parameters. */\n", module);
	for (guint i = 0; i < n; i++) {
		const struct cusemu_device_model *m = models[i];

		for (const struct cusemu_param *p = m->params; p && p->key; p++, k++) {
			g_autofree char *name = param_name(m, p->key, n > 1);
			g_autofree char *key = c_string(p->key);
			g_autofree char *desc = NULL;
			g_autofree char *lit = NULL;
			GString *d = g_string_new(p->help ? p->help : p->key);

			if (p->min || p->max)
				g_string_append_printf(d, ", %" G_GUINT64_FORMAT
						       " to %" G_GUINT64_FORMAT,
						       p->min, p->max);
			if (p->default_value)
				g_string_append_printf(d, " (default %s)",
						       p->default_value);
			desc = g_string_free(d, FALSE);
			lit = c_string(desc);
			g_string_append_printf(h,
				"static char *kmod_value_%u;\n"
				"module_param_named(%s, kmod_value_%u, charp, 0444);\n"
				"MODULE_PARM_DESC(%s, %s);\n",
				k, name, k, name, lit);
			g_string_append_printf(table, "\t{ %u, %s, &kmod_value_%u },\n",
					       i, key, k);
		}
	}
	g_string_append_printf(h,
		"\nstatic struct kmod_param kmod_module_params[] = {\n%s"
		"\t{ 0, NULL, NULL }\n};\n", table->str);
	/* name=, as cusemud's common key: the node's name under /dev. */
	g_string_truncate(table, 0);
	for (guint i = 0; i < n; i++) {
		g_autofree char *name = param_name(models[i], "name", n > 1);

		g_string_append_printf(h,
			"static char *kmod_node_name_%u;\n"
			"module_param_named(%s, kmod_node_name_%u, charp, 0444);\n"
			"MODULE_PARM_DESC(%s, \"the node's name under /dev "
			"(default %s0)\");\n",
			i, name, i, name, models[i]->node_prefix);
		g_string_append_printf(table, "\t&kmod_node_name_%u,\n", i);
	}
	g_string_append_printf(h,
		"\nstatic char **kmod_node_names[] = {\n%s\tNULL\n};\n",
		table->str);
	g_string_free(table, TRUE);
	if (n && models[0]->summary) {
		g_autofree char *lit = c_string(models[0]->summary);

		g_string_append_printf(h, "MODULE_DESCRIPTION(%s);\n", lit);
	}
	return g_string_free(h, FALSE);
}

static bool write_file(const char *dir, const char *name, const char *text)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	g_autoptr(GError) error = NULL;

	if (!g_file_set_contents(path, text, -1, &error)) {
		say("%s", error->message);
		return false;
	}
	return true;
}

static bool copy_file(const char *from, const char *to)
{
	g_autofree char *text = NULL;
	gsize len;
	g_autoptr(GError) error = NULL;

	if (!g_file_get_contents(from, &text, &len, &error) ||
	    !g_file_set_contents(to, text, (gssize)len, &error)) {
		say("%s", error->message);
		return false;
	}
	return true;
}

/*
 * The defines and include directories each SOURCE was built with, from
 * the compile commands of the plugin's build (for a model built into
 * cusemud, of cusemu's): a module built without them is another
 * configuration of the model, where a missing -DFIXED brings back the bug
 * it fixes. When they cannot be known, cusemu-kmod refuses, unless told
 * that -D and -I say them all. flags[i] gets those of sources[i].
 */
static bool source_flags(char **sources, int n, bool builtin, GPtrArray **flags)
{
	g_autofree char *file = NULL;

	if (no_compile_commands) {
		for (int i = 0; i < n; i++)
			flags[i] = g_ptr_array_new_with_free_func(g_free);
		return true;
	}
	if (compile_commands)
		file = g_strdup(compile_commands);
	else if (builtin)
		file = g_build_filename(CUSEMU_BUILD_ROOT, "compile_commands.json",
					NULL);
	else
		file = kmod_find_compile_commands(model_arg);
	if (!file || !g_file_test(file, G_FILE_TEST_IS_REGULAR)) {
		if (file && compile_commands)
			say("--compile-commands %s: no such file", file);
		else
			say("cannot tell the defines (-D) and include directories "
			    "(-I) that the sources of %s were built with: no "
			    "compile_commands.json %s (meson writes one in its "
			    "build directory); give the build's with "
			    "--compile-commands FILE, or give them all with -D "
			    "and -I, and --no-compile-commands",
			    model_arg, builtin ? "in cusemu's build directory"
					       : "in its directory or above it");
		return false;
	}
	for (int i = 0; i < n; i++) {
		g_autofree char *src = g_canonicalize_filename(sources[i], NULL);
		g_autoptr(GError) error = NULL;

		flags[i] = kmod_source_flags(file, src, builtin ? NULL : model_arg,
					     &error);
		if (!flags[i]) {
			say("%s; give the compile commands of the build that "
			    "made %s with --compile-commands FILE, or its "
			    "flags with -D and -I, and --no-compile-commands",
			    error->message, model_arg);
			return false;
		}
	}
	return true;
}

/* The directories a source's includes are looked for in: its own, -I's,
 * and those of its build's flags. */
static GPtrArray *source_dirs(const char *source, GPtrArray *flags)
{
	static const char *const opts[] = { "-I", "-iquote", "-isystem" };
	GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *src = g_canonicalize_filename(source, NULL);

	g_ptr_array_add(dirs, g_path_get_dirname(src));
	for (char **d = include_dirs; d && *d; d++)
		g_ptr_array_add(dirs, g_canonicalize_filename(*d, NULL));
	for (guint i = 0; i < flags->len; i++) {
		const char *f = flags->pdata[i];

		for (guint j = 0; j < G_N_ELEMENTS(opts); j++)
			if (g_str_has_prefix(f, opts[j])) {
				g_ptr_array_add(dirs, g_strdup(f + strlen(opts[j])));
				break;
			}
	}
	return dirs;
}

/* "FILE:LINE: ..." lines by file, then line. */
static int by_place(gconstpointer a, gconstpointer b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	const char *cx = strchr(x, ':'), *cy = strchr(y, ':');
	size_t lx = cx ? (size_t)(cx - x) : strlen(x);
	size_t ly = cy ? (size_t)(cy - y) : strlen(y);
	int c = strncmp(x, y, MIN(lx, ly));

	if (c || lx != ly)
		return c ? c : (lx < ly ? -1 : 1);
	return (int)(cx ? strtol(cx + 1, NULL, 10) : 0) -
	       (int)(cy ? strtol(cy + 1, NULL, 10) : 0);
}

int main(int argc, char **argv)
{
	g_autoptr(GOptionContext) ctx = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree const struct cusemu_device_model **models = NULL;
	g_autofree char *module = NULL, *dir = NULL, *kdir = NULL;
	g_autofree char *frame_dir = NULL, *sdk_include = NULL;
	g_autofree char *header = NULL, *out = NULL, *err = NULL;
	GString *kbuild, *objs, *object_flags;
	g_autofree GPtrArray **flags = NULL;
	g_autoptr(GPtrArray) missing_headers = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) said = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) broken = g_hash_table_new_full(g_str_hash, g_str_equal,
							     g_free, NULL);
	guint n;
	int status;
	bool portable = true, builtin;

	setlocale(LC_ALL, "");
	ctx = g_option_context_new("SOURCE.c...");
	g_option_context_set_summary(ctx,
		"Build a device model's sources, unchanged, as a Linux kernel\n"
		"module: the model's native and compat tables behind a misc\n"
		"device, served as the modern kernel model serves them, on the\n"
		"kernel's own calls for the SDK's portable surface.");
	g_option_context_set_description(ctx, DESCRIPTION);
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
		say("%s (see --help)", error->message);
		return EXIT_ERROR;
	}
	if (version) {
		printf("cusemu-kmod %s\n", CUSEMU_VERSION);
		return EXIT_BUILT;
	}
	if (!model_arg) {
		say("no --model: give the plugin the sources build to, such as "
		    "build/sensorhub.so (see --help)");
		return EXIT_ERROR;
	}
	if (argc < 2) {
		say("no SOURCE: give the model's .c files (see --help)");
		return EXIT_ERROR;
	}
	builtin = !strchr(model_arg, '/') && !g_str_has_suffix(model_arg, ".so");
	for (int i = 1; i < argc; i++) {
		if (!g_file_test(argv[i], G_FILE_TEST_IS_REGULAR)) {
			say("%s: no such source file", argv[i]);
			return EXIT_ERROR;
		}
	}
	flags = g_new0(GPtrArray *, argc);
	if (!source_flags(argv + 1, argc - 1, builtin, flags + 1))
		return EXIT_ERROR;
	/* What the compiler would stop at, or misread, before it runs. */
	{
		GPtrArray **dirs = g_new0(GPtrArray *, argc);

		for (int i = 1; i < argc; i++)
			dirs[i] = source_dirs(argv[i], flags[i]);
		kmod_scan(argv + 1, argc - 1, dirs + 1, missing_headers, said,
			  broken);
		for (int i = 1; i < argc; i++)
			g_ptr_array_unref(dirs[i]);
		g_free(dirs);
	}
	if (builtin) {
		const struct cusemu_device_model *m =
			cusemu_device_model_find(model_arg);

		if (!m) {
			say("--model %s: no model of that name is built into "
			    "cusemud; give a plugin as a path", model_arg);
			return EXIT_ERROR;
		}
		models = g_new0(const struct cusemu_device_model *, 2);
		models[0] = m;
		n = 1;
	} else if (!cusemu_plugin_load(model_arg, &error)) {
		say("%s", error->message);
		return EXIT_ERROR;
	} else {
		n = cusemu_plugin_models(&models);
	}
	if (!n) {
		say("%s has no models", model_arg);
		return EXIT_ERROR;
	}
	for (guint i = 0; i < n; i++)
		portable = model_portable(models[i]) && portable;
	if (!portable)
		return EXIT_NOT_PORTABLE;

	if (name_arg) {
		module = c_name(name_arg);
	} else if (builtin) {
		/* The kernel has modules of those names: watchdog, evdev. */
		g_autofree char *prefixed = g_strconcat("cusemu_", models[0]->name, NULL);

		module = c_name(prefixed);
	} else {
		g_autofree char *base = g_path_get_basename(model_arg);

		if (g_str_has_suffix(base, ".so"))
			base[strlen(base) - 3] = '\0';
		module = c_name(base);
	}
	{
		g_autofree char *fallback = g_strconcat(module, "-kmod", NULL);

		dir = g_canonicalize_filename(output_dir ? output_dir : fallback,
					      NULL);
	}
	frame_dir = sdk_path("share/cusemu/kmod", CUSEMU_SOURCE_ROOT "/kmod");
	sdk_include = sdk_path("include/cusemu-1", CUSEMU_SOURCE_ROOT "/include");
	if (g_mkdir_with_parents(dir, 0755)) {
		say("cannot create %s: %s", dir, g_strerror(errno));
		return EXIT_ERROR;
	}
	{
		g_autofree char *frame = g_build_filename(frame_dir, "cusemu-kmod.c", NULL);
		g_autofree char *to = g_build_filename(dir, "cusemu-kmod.c", NULL);

		if (!copy_file(frame, to) || !kmod_write_libc_headers(dir, missing_headers))
			return EXIT_ERROR;
	}
	header = params_header(models, n, module);
	if (!write_file(dir, "cusemu-kmod-params.h", header))
		return EXIT_ERROR;
	/* A model built into cusemud is in its registry, not a plugin: the
	 * module names it as a plugin would. */
	objs = g_string_new("cusemu-kmod.o");
	if (builtin) {
		g_autofree char *text = g_strdup_printf(
			"/* Written by cusemu-kmod: the model built into cusemud "
			"that the module serves. */\n"
			"#include \"cusemu/plugin.h\"\n\n"
			"extern const struct cusemu_device_model cusemu_model_%s;\n"
			"CUSEMU_PLUGIN(&cusemu_model_%s);\n",
			models[0]->name, models[0]->name);

		if (!write_file(dir, "cusemu-kmod-plugin.c", text))
			return EXIT_ERROR;
		g_string_append(objs, " cusemu-kmod-plugin.o");
	}

	/* A file per source that includes it where it is: its own includes
	 * resolve there, and the compiler names its lines. */
	kbuild = g_string_new(NULL);
	object_flags = g_string_new(NULL);
	for (int i = 1; i < argc; i++) {
		g_autofree char *src = g_canonicalize_filename(argv[i], NULL);
		g_autofree char *srcdir = g_path_get_dirname(src);
		g_autofree char *base = g_path_get_basename(src);
		g_autofree char *stem = NULL;
		g_autofree char *file = NULL, *text = NULL;

		if (g_str_has_suffix(base, ".c"))
			base[strlen(base) - 2] = '\0';
		stem = c_name(base);
		file = g_strdup_printf("model-%d-%s.c", i, stem);
		text = g_strdup_printf("/* Written by cusemu-kmod: the model's "
				       "source, where it is. */\n#include \"%s\"\n",
				       src);
		if (!write_file(dir, file, text))
			return EXIT_ERROR;
		file[strlen(file) - 1] = 'o';
		g_string_append_printf(objs, " %s", file);
		g_string_append_printf(kbuild, " -I%s", srcdir);
		/* The source's own build's flags, then -D's. */
		g_string_append_printf(object_flags, "CFLAGS_%s :=", file);
		for (guint j = 0; j < flags[i]->len; j++) {
			g_autofree char *arg = kmod_make_arg(flags[i]->pdata[j]);

			g_string_append_printf(object_flags, " %s", arg);
		}
		for (char **d = defines; d && *d; d++) {
			g_autofree char *def = g_strconcat("-D", *d, NULL);
			g_autofree char *arg = kmod_make_arg(def);

			g_string_append_printf(object_flags, " %s", arg);
		}
		g_string_append_c(object_flags, '\n');
		g_ptr_array_unref(flags[i]);
	}
	for (char **d = include_dirs; d && *d; d++) {
		g_autofree char *abs = g_canonicalize_filename(*d, NULL);

		g_string_append_printf(kbuild, " -I%s", abs);
	}
	{
		g_autofree char *text = g_strdup_printf(
			"# Written by cusemu-kmod from %s: the module %s, the\n"
			"# model's sources and the frame of cusemu's SDK.\n"
			"obj-m := %s.o\n"
			"%s-y := %s\n"
			"ccflags-y := -I$(src)/include -I%s -I$(src)%s\n"
			"# Each source's defines and include directories, as "
			"its own build\n# gave them.\n%s",
			model_arg, module, module, module, objs->str,
			sdk_include, kbuild->str, object_flags->str);

		g_string_free(objs, TRUE);
		g_string_free(kbuild, TRUE);
		g_string_free(object_flags, TRUE);
		if (!write_file(dir, "Kbuild", text))
			return EXIT_ERROR;
	}
	if (!write_file(dir, "Makefile",
			"# make [KDIR=DIR]: the module, against the running "
			"kernel's headers or KDIR's.\n"
			"KDIR ?= /lib/modules/$(shell uname -r)/build\n\n"
			"modules clean:\n"
			"\t$(MAKE) -C $(KDIR) M=$(CURDIR) $@\n"))
		return EXIT_ERROR;
	if (no_build) {
		printf("%s\n", dir);
		return EXIT_BUILT;
	}

	if (kernel_dir) {
		kdir = g_strdup(kernel_dir);
	} else {
		struct utsname u;

		uname(&u);
		kdir = g_strdup_printf("/lib/modules/%s/build", u.release);
	}
	if (!g_file_test(kdir, G_FILE_TEST_IS_DIR)) {
		say("no kernel build directory %s: install the kernel's headers "
		    "(on Debian: apt-get install linux-headers-$(uname -r)), or "
		    "give another with --kernel", kdir);
		return EXIT_ERROR;
	}
	{
		g_autofree char *m = g_strdup_printf("M=%s", dir);
		/* -k: every source's errors in one run, not the first's alone. */
		const char *make[] = { "make", "-k", "-C", kdir, m, "modules", NULL };
		/* The compiler's words untranslated: they are read below. */
		g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "LC_ALL",
						     "C", TRUE);

		if (!g_spawn_sync(NULL, (char **)make, env, G_SPAWN_SEARCH_PATH,
				  NULL, NULL, &out, &err, &status, &error)) {
			say("cannot run make: %s", error->message);
			return EXIT_ERROR;
		}
	}
	{
		g_autofree char *log = g_strconcat(out, err, NULL);
		g_autofree char *log_path = g_build_filename(dir, "build.log", NULL);

		g_file_set_contents(log_path, log, -1, NULL);
		if (!g_spawn_check_wait_status(status, NULL)) {
			unsigned int other = 0;

			kmod_name_outside(err, &other, said, broken);
			if (said->len) {
				g_ptr_array_sort(said, by_place);
				for (guint i = 0; i < said->len; i++)
					fprintf(stderr, "%s\n", (char *)said->pdata[i]);
				if (other)
					say("%s: %u more error%s of kbuild's, which may "
					    "follow from these, in %s", module, other,
					    other == 1 ? "" : "s", log_path);
				say("%s: %u use%s of what is outside the portable surface; "
				    "kbuild's own words in %s", module, said->len,
				    said->len == 1 ? "" : "s", log_path);
				return EXIT_NOT_PORTABLE;
			}
			fputs(err, stderr);
			kmod_name_other_errors(err, argv + 1, argc - 1);
			say("kbuild failed on %s: its log is %s", dir, log_path);
			return EXIT_ERROR;
		}
		/* Warnings are kbuild's to show. */
		if (err && *err)
			fputs(err, stderr);
	}
	{
		g_autofree char *ko = g_strdup_printf("%s/%s.ko", dir, module);

		if (module_copy && !copy_file(ko, module_copy))
			return EXIT_ERROR;
		printf("%s\n", ko);
	}
	return EXIT_BUILT;
}
