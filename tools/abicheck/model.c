/* SPDX-License-Identifier: MIT */
/*
 * --model: a device model's tables against the commands of its header. The
 * model is looked up as cusemud does (built in, then the models directory)
 * or loaded from a plugin file, with the same refusals.
 */
#include <string.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "abicheck.h"
#include "device.h"
#include "dispatch.h"
#include "plugin.h"

static const struct cusemu_device_model *find_model(const char *arg,
						    GError **error)
{
	const struct cusemu_device_model **loaded, *m;
	g_autofree char *base = NULL;
	guint n;

	if (!strchr(arg, '/') && !g_str_has_suffix(arg, ".so")) {
		g_autoptr(GError) refused = NULL;

		m = cusemu_device_model_find(arg);
		if (!m)
			m = cusemu_plugin_find(arg, &refused);
		if (m)
			return m;
		if (refused) {
			g_propagate_error(error, g_steal_pointer(&refused));
			return NULL;
		}
		g_set_error(error, ABICHECK_ERROR, 0,
			    "--model %s: no such device model, built in or in "
			    "%s; give a plugin as a path", arg,
			    cusemu_models_dir);
		return NULL;
	}
	if (!cusemu_plugin_load(arg, error))
		return NULL;
	/* Of several models, the one the file is named after, else the first. */
	n = cusemu_plugin_models(&loaded);
	base = g_path_get_basename(arg);
	if (g_str_has_suffix(base, ".so"))
		base[strlen(base) - 3] = '\0';
	m = n ? loaded[0] : NULL;
	for (guint i = 0; i < n; i++)
		if (!strcmp(loaded[i]->name, base))
			m = loaded[i];
	g_free(loaded);
	return m;
}

static struct command *command_by_number(GPtrArray *commands, enum abi abi,
					 unsigned int cmd)
{
	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];

		if (!c->row_only && c->number[abi] == cmd)
			return c;
	}
	return NULL;
}

/* The command of the headers with the type, number and direction of cmd. */
static struct command *command_by_nr(GPtrArray *commands, unsigned int cmd)
{
	for (guint i = 0; i < commands->len; i++) {
		struct command *c = commands->pdata[i];
		uint32_t n = c->number[ABI_I386];

		if (!c->row_only && _IOC_TYPE(n) == _IOC_TYPE(cmd) &&
		    _IOC_NR(n) == _IOC_NR(cmd) && _IOC_DIR(n) == _IOC_DIR(cmd))
			return c;
	}
	return NULL;
}

/* A row whose number no command of the headers has. */
static void extra_row(GPtrArray *commands, const struct cusemu_device_model *m,
		      const struct cusemu_ioctl *row, const char *table)
{
	struct command *c = g_new0(struct command, 1);

	c->name = g_strdup(row->name);
	c->row_only = true;
	c->macro = g_strdup(table);
	c->dir = DIR_UNKNOWN;
	c->number[ABI_X86_64] = c->number[ABI_I386] = row->cmd;
	c->findings = g_ptr_array_new();
	finding_add(c, FINDING_NOT_IN_HEADER, row->name, false,
		    "the %s row 0x%08x of model %s is no command of the headers",
		    table, row->cmd, m->name);
	g_ptr_array_add(commands, c);
}

/* How i386 callers reach a command, or NULL. */
static char *compat_served(const struct cusemu_device_model *m,
			   const struct cusemu_ioctl *row32)
{
	if (row32 && row32->handler)
		return g_strdup_printf("compat row %s translates", row32->name);
	if (row32)
		return g_strdup("compat row marked compatible");
	if (m->compat_ptr_ioctl)
		return g_strdup("compat_ptr_ioctl serves i386 callers");
	return NULL;
}

static void check_command(const struct cusemu_device_model *m,
			  struct command *c)
{
	const struct cusemu_ioctl *native, *row32, *same;
	uint32_t n64 = c->number[ABI_X86_64], n32 = c->number[ABI_I386];
	g_autofree char *how = NULL;

	native = cusemu_ioctl_lookup(m->native_table, n64);
	row32 = cusemu_ioctl_lookup(m->compat_table, n32);
	same = cusemu_ioctl_lookup(m->compat_table, n64);
	if (!native && !c->compat_of)
		finding_add(c, FINDING_NO_NATIVE_ROW, c->name, false,
			    "model %s has no native row for it: x86_64 callers "
			    "get ENOTTY%s", m->name,
			    row32 ? " (a compat row serves i386 ones)" : "");
	if (c->compat_of) {
		/* a compat table's name: checked below */
		if (row32 && row32->handler)
			c->served = g_strdup_printf(
				"the i386 number of %s, compat row %s",
				c->compat_of->name, row32->name);
		else if (native)
			c->served = g_strdup_printf(
				"the i386 number of %s, native row %s",
				c->compat_of->name, native->name);
		return;
	}
	/* An argument by value needs nothing but a row for each ABI. */
	if (c->compatible || command_unsized(c)) {
		how = compat_served(m, row32);
		if (native && !how)
			finding_add(c, FINDING_NO_COMPAT_ROW, c->name, false,
				    "compatible, but neither a compat row nor "
				    "compat_ptr_ioctl: i386 callers get ENOTTY; "
				    "add CUSEMU_COMPAT_SAME(%s)", c->name);
		if (native && how)
			c->served = g_strdup_printf("native row, %s", how);
		return;
	}
	if (same && !same->handler) {
		finding_add(c, FINDING_WRONG_COMPAT_SAME, c->name, true,
			    "CUSEMU_COMPAT_SAME(%s), but the layouts differ: "
			    "i386 callers send 0x%08x, which no row serves "
			    "(they get ENOTTY)", c->name, n32);
		return;
	}
	if (m->compat_ptr_ioctl && n64 == n32 && !row32) {
		finding_add(c, FINDING_WRONG_COMPAT_SAME, c->name, true,
			    "compat_ptr_ioctl serves it with the native handler, "
			    "but the layouts differ: give it a compat row that "
			    "translates");
		return;
	}
	if (!row32)
		finding_add(c, FINDING_NO_COMPAT_ROW, c->name, true,
			    "needs a translation, and no compat row has its "
			    "i386 number 0x%08x: i386 callers get ENOTTY", n32);
	else if (native)
		c->served = g_strdup_printf("native row, compat row %s "
					    "translates", row32->name);
}

gboolean model_check(const char *arg, GPtrArray *commands, GPtrArray *notes,
		     char **name, GError **error)
{
	const struct cusemu_device_model *m;
	guint n = commands->len;

	/* Devices of plugins' models made as cusemud makes them. */
	cusemu_plugin_register();
	m = find_model(arg, error);
	if (!m)
		return FALSE;
	*name = g_strdup(m->name);
	g_ptr_array_add(notes, g_strdup_printf(
		"model %s (%s)%s%s", m->name,
		cusemu_plugin_origin(m) ? cusemu_plugin_origin(m) : "built in",
		m->compat_ptr_ioctl ? ", compat_ptr_ioctl" : "",
		m->ioctl || m->unlocked_ioctl || m->compat_ioctl ||
				m->ioctl_native || m->ioctl_compat
			? ", some methods written by hand: their tables are "
			  "checked as they stand"
			: ""));
	for (guint i = 0; i < n; i++)
		check_command(m, commands->pdata[i]);

	for (const struct cusemu_ioctl *row = m->native_table; row && row->name;
	     row++)
		if (!command_by_number(commands, ABI_X86_64, row->cmd))
			extra_row(commands, m, row, "native");
	for (const struct cusemu_ioctl *row = m->compat_table; row && row->name;
	     row++) {
		struct command *c;

		if (!row->handler) {
			if (!command_by_number(commands, ABI_X86_64, row->cmd))
				extra_row(commands, m, row, "compat");
			continue;
		}
		if (command_by_number(commands, ABI_I386, row->cmd))
			continue;
		c = command_by_nr(commands, row->cmd);
		if (!c) {
			extra_row(commands, m, row, "compat");
			continue;
		}
		finding_add(c, FINDING_COMPAT_NUMBER, row->name, true,
			    "compat row %s is 0x%08x (%u bytes); the i386 number "
			    "of %s is 0x%08x (%u bytes)", row->name, row->cmd,
			    _IOC_SIZE(row->cmd), c->name, c->number[ABI_I386],
			    _IOC_SIZE(c->number[ABI_I386]));
	}
	return TRUE;
}

bool model_matches(const struct command *c)
{
	for (guint i = 0; i < c->findings->len; i++) {
		const struct finding *f = c->findings->pdata[i];

		if (finding_kind_model(f->kind))
			return false;
	}
	return !c->row_only && c->served;
}

/* The kinds of c's model findings, each once: "model-no-compat (error)". */
static char *problems(const struct command *c, guint *count, guint *errors)
{
	g_autoptr(GString) s = g_string_new(NULL);
	bool seen[FINDING_KIND_COUNT] = { false };

	for (guint i = 0; i < c->findings->len; i++) {
		const struct finding *f = c->findings->pdata[i];

		if (!finding_kind_model(f->kind))
			continue;
		++*count;
		*errors += f->error;
		if (seen[f->kind])
			continue;
		seen[f->kind] = true;
		g_string_append_printf(s, "%s%s%s", s->len ? ", " : "",
				       finding_kind_name(f->kind),
				       f->error ? " (error)" : "");
	}
	return g_string_free(g_steal_pointer(&s), FALSE);
}

/* The findings above say what is wrong; this says it of each command, and
 * says so too when nothing is. */
void model_report(GString *out, const char *name, GPtrArray *commands)
{
	guint n = 0, count = 0, errors = 0;

	g_string_append_c(out, '\n');
	for (guint i = 0; i < commands->len; i++) {
		const struct command *c = commands->pdata[i];
		guint mine = 0;
		g_autofree char *kinds = problems(c, &mine, &errors);

		n += !c->row_only;
		count += mine;
		if (model_matches(c))
			g_string_append_printf(out, "%s: the tables match the "
					       "header (%s)\n", c->name,
					       c->served);
		else if (c->row_only)
			g_string_append_printf(out, "%s: a %s row the header "
					       "lacks (%s)\n", c->name, c->macro,
					       kinds);
		else if (mine)
			g_string_append_printf(out, "%s: %u problem%s in the "
					       "tables: %s\n", c->name, mine,
					       mine == 1 ? "" : "s", kinds);
		else
			g_string_append_printf(out, "%s: no row serves it\n",
					       c->name);
	}
	if (!count)
		g_string_append_printf(out, "%s: %u command%s, the tables match "
				       "the header\n", name, n,
				       n == 1 ? "" : "s");
	else
		g_string_append_printf(out, "%s: %u command%s, %u problem%s in "
				       "the tables (%u error%s)\n", name, n,
				       n == 1 ? "" : "s", count,
				       count == 1 ? "" : "s", errors,
				       errors == 1 ? "" : "s");
}
