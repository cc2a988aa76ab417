/* SPDX-License-Identifier: MIT */
/*
 * Reading the configuration file (GKeyFile) and --device arguments into
 * device descriptions. GKeyFile keeps no line numbers, so errors find the
 * line in the text themselves.
 */
#define G_LOG_DOMAIN "cusemu-config"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "transport.h"

#define DEVICE_GROUP_PREFIX "device "
#define DAEMON_GROUP "daemon"

static void value_free(gpointer data)
{
	struct cusemu_config_value *v = data;

	g_free(v->value);
	g_free(v->origin);
	g_free(v);
}

struct cusemu_config *cusemu_config_new(void)
{
	struct cusemu_config *config = g_new0(struct cusemu_config, 1);

	config->devices = g_ptr_array_new_with_free_func(
		(GDestroyNotify)cusemu_device_spec_free);
	config->transport_keys = g_hash_table_new_full(g_str_hash, g_str_equal,
						       NULL, value_free);
	return config;
}

const char *cusemu_config_transport_value(const struct cusemu_config *config,
					  const char *key,
					  const char **origin)
{
	const struct cusemu_config_value *v =
		g_hash_table_lookup(config->transport_keys, key);

	*origin = v ? v->origin : NULL;
	return v ? v->value : NULL;
}

void cusemu_config_free(struct cusemu_config *config)
{
	if (!config)
		return;
	g_free(config->kernel_model);
	g_free(config->kernel_model_origin);
	g_free(config->lock);
	g_free(config->lock_origin);
	g_free(config->control);
	g_free(config->control_origin);
	g_free(config->control_group);
	g_free(config->control_group_origin);
	g_free(config->threads);
	g_free(config->threads_origin);
	g_free(config->panic_on_oops);
	g_free(config->panic_on_oops_origin);
	g_free(config->soft_lockup_secs);
	g_free(config->soft_lockup_secs_origin);
	g_free(config->hung_task_secs);
	g_free(config->hung_task_secs_origin);
	g_free(config->host_memory);
	g_free(config->host_memory_origin);
	g_hash_table_unref(config->transport_keys);
	g_free(config->plugins);
	g_free(config->plugins_origin);
	g_free(config->seccomp);
	g_free(config->seccomp_origin);
	g_free(config->user);
	g_free(config->user_origin);
	g_ptr_array_unref(config->devices);
	g_free(config);
}

/* The text of a file, split in lines, to point errors at a line number. */
struct source {
	const char *path;
	char **lines;
};

static gboolean is_group_line(const char *line, const char *group)
{
	const char *s = line + strspn(line, " \t");
	size_t n = strlen(group);

	return s[0] == '[' && !strncmp(s + 1, group, n) && s[n + 1] == ']';
}

static gboolean is_key_line(const char *line, const char *key)
{
	const char *s = line + strspn(line, " \t");
	size_t n = strlen(key);

	if (strncmp(s, key, n))
		return FALSE;
	s += n;
	s += strspn(s, " \t");
	return *s == '=';
}

/* 1-based line of [group] (key NULL) or of key within it; 0 if unknown. */
static guint source_line(const struct source *src, const char *group,
			 const char *key)
{
	gboolean in_group = FALSE;

	for (guint i = 0; src->lines[i]; i++) {
		const char *s = src->lines[i] + strspn(src->lines[i], " \t");

		if (s[0] == '[') {
			in_group = is_group_line(s, group);
			if (in_group && !key)
				return i + 1;
			continue;
		}
		if (in_group && key && is_key_line(s, key))
			return i + 1;
	}
	return 0;
}

static char *source_origin(const struct source *src, const char *group,
			   const char *key)
{
	guint line = source_line(src, group, key);

	return line ? g_strdup_printf("%s:%u", src->path, line)
		    : g_strdup(src->path);
}

/*
 * GKeyFile quotes the offending text in its parse errors; find that line
 * so the user is sent to it.
 */
#define TEXT_HINT "write key=value lines, [group] lines and # comments"

/* The line GKeyFile quotes: the one that is exactly it, else one holding it. */
static int quoted_line(const struct source *src, const char *quoted)
{
	for (guint i = 0; src->lines[i]; i++) {
		g_autofree char *line = g_strstrip(g_strdup(src->lines[i]));

		if (!strcmp(line, quoted))
			return (int)i + 1;
	}
	for (guint i = 0; src->lines[i]; i++)
		if (strstr(src->lines[i], quoted))
			return (int)i + 1;
	return 0;
}

static void prefix_parse_error(const struct source *src, GError **error)
{
	const char *msg = (*error)->message;
	const char *open = strstr(msg, "“");
	const char *close = open ? strstr(open, "”") : NULL;
	int line = 0;

	if (open && close) {
		g_autofree char *quoted =
			g_strndup(open + strlen("“"),
				  close - open - strlen("“"));

		if (*g_strstrip(quoted))
			line = quoted_line(src, quoted);
	}
	if (line)
		g_prefix_error(error, "%s:%d: ", src->path, line);
	else
		g_prefix_error(error, "%s: ", src->path);
	msg = (*error)->message;
	(*error)->message = g_strconcat(msg, "; " TEXT_HINT, NULL);
	g_free((char *)msg);
}

/*
 * What GKeyFile would misreport: a NUL byte ends its text early, and bytes
 * that are not UTF-8 come back without a line.
 */
static gboolean check_text(const char *path, const char *text, gsize len,
			   GError **error)
{
	const char *nul = memchr(text, '\0', len);
	const char *bad = NULL;
	unsigned int line = 1;

	if (!nul && g_utf8_validate(text, (gssize)len, &bad))
		return TRUE;
	for (const char *p = text; p < (nul ? nul : bad); p++)
		line += *p == '\n';
	g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE,
		    "%s:%u: %s: this is not a text file; %s", path, line,
		    nul ? "a NUL byte" : "bytes that are not UTF-8",
		    TEXT_HINT);
	return FALSE;
}

/* key as a transport names it (a string that stays), or NULL. */
static const char *transport_key(const char *key)
{
	for (guint i = 0; cusemu_transports[i]; i++) {
		const struct cusemu_transport_key *k;

		for (k = cusemu_transports[i]->keys; k && k->key; k++)
			if (!strcmp(k->key, key))
				return k->key;
	}
	return NULL;
}

#define SETTING(key, field)                                              \
	{ key, G_STRUCT_OFFSET(struct cusemu_config, field),             \
	  G_STRUCT_OFFSET(struct cusemu_config, field##_origin) }

/* The [daemon] group's own keys, and their fields of the configuration. */
static const struct {
	const char *key;
	goffset value, origin;
} daemon_settings[] = {
	SETTING("model", kernel_model),
	SETTING("lock", lock),
	SETTING("control", control),
	SETTING("control_group", control_group),
	SETTING("seccomp", seccomp),
	SETTING("user", user),
	SETTING("plugins", plugins),
	SETTING("threads", threads),
	SETTING("panic_on_oops", panic_on_oops),
	SETTING("soft_lockup_secs", soft_lockup_secs),
	SETTING("hung_task_secs", hung_task_secs),
	SETTING("host_memory", host_memory),
};

GPtrArray *cusemu_config_daemon_keys(void)
{
	GPtrArray *names = g_ptr_array_new();

	for (guint i = 0; i < G_N_ELEMENTS(daemon_settings); i++) {
		g_ptr_array_add(names, (char *)daemon_settings[i].key);
		if (strcmp(daemon_settings[i].key, "threads"))
			continue;
		for (guint t = 0; cusemu_transports[t]; t++)
			for (const struct cusemu_transport_key *k =
				     cusemu_transports[t]->keys;
			     k && k->key; k++)
				g_ptr_array_add(names, (char *)k->key);
	}
	return names;
}

/* "a, b and c"; frees names. */
static char *and_list(GPtrArray *names)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(s, "%s%s",
				       !i ? ""
				       : i + 1 < names->len ? ", "
							    : " and ",
				       (const char *)names->pdata[i]);
	g_ptr_array_unref(names);
	return g_string_free(s, FALSE);
}

static gboolean load_daemon_group(struct cusemu_config *config,
				  GKeyFile *kf, const struct source *src,
				  GError **error)
{
	g_auto(GStrv) keys = g_key_file_get_keys(kf, DAEMON_GROUP, NULL, NULL);

	for (guint i = 0; keys && keys[i]; i++) {
		char **value = NULL, **origin = NULL;

		for (guint j = 0; j < G_N_ELEMENTS(daemon_settings); j++) {
			if (!strcmp(keys[i], daemon_settings[j].key)) {
				value = G_STRUCT_MEMBER_P(config,
						daemon_settings[j].value);
				origin = G_STRUCT_MEMBER_P(config,
						daemon_settings[j].origin);
			}
		}
		if (!value && transport_key(keys[i])) {
			struct cusemu_config_value *v =
				g_new0(struct cusemu_config_value, 1);

			v->value = g_key_file_get_string(kf, DAEMON_GROUP,
							 keys[i], NULL);
			v->origin = source_origin(src, DAEMON_GROUP, keys[i]);
			g_hash_table_replace(config->transport_keys,
					     (char *)transport_key(keys[i]), v);
			continue;
		}
		if (!value) {
			g_autofree char *at =
				source_origin(src, DAEMON_GROUP, keys[i]);
			g_autofree char *names =
				and_list(cusemu_config_daemon_keys());
			g_set_error(error, G_KEY_FILE_ERROR,
				    G_KEY_FILE_ERROR_KEY_NOT_FOUND,
				    "%s: unknown key '%s' in [%s]; the daemon "
				    "settings are %s",
				    at, keys[i], DAEMON_GROUP, names);
			return FALSE;
		}
		g_free(*value);
		g_free(*origin);
		*value = g_key_file_get_string(kf, DAEMON_GROUP, keys[i], NULL);
		*origin = source_origin(src, DAEMON_GROUP, keys[i]);
	}
	return TRUE;
}

static gboolean load_device_group(struct cusemu_config *config,
				  GKeyFile *kf, const struct source *src,
				  const char *group, GError **error)
{
	const char *name = group + strlen(DEVICE_GROUP_PREFIX);
	g_autofree char *at = source_origin(src, group, NULL);
	g_autofree char *model = NULL;
	g_auto(GStrv) keys = NULL;
	struct cusemu_device_spec *spec;

	model = g_key_file_get_string(kf, group, "model", NULL);
	if (!model || !*model) {
		g_set_error(error, G_KEY_FILE_ERROR,
			    G_KEY_FILE_ERROR_KEY_NOT_FOUND,
			    "%s: [%s] has no 'model' key; add e.g. model=fioc",
			    at, group);
		return FALSE;
	}
	spec = cusemu_device_spec_new(model, at);
	g_ptr_array_add(config->devices, spec);
	if (*name) {
		g_autofree char *name_at = g_strdup(at);

		cusemu_device_spec_add(spec, "name", name, name_at);
	}
	keys = g_key_file_get_keys(kf, group, NULL, NULL);
	for (guint i = 0; keys && keys[i]; i++) {
		g_autofree char *value = NULL;
		g_autofree char *origin = NULL;

		if (!strcmp(keys[i], "model"))
			continue;
		origin = source_origin(src, group, keys[i]);
		if (!strcmp(keys[i], "name")) {
			g_set_error(error, G_KEY_FILE_ERROR,
				    G_KEY_FILE_ERROR_INVALID_VALUE,
				    "%s: the node name comes from the group "
				    "name: write [device NAME] instead of a "
				    "name key",
				    origin);
			return FALSE;
		}
		value = g_key_file_get_string(kf, group, keys[i], NULL);
		cusemu_device_spec_add(spec, keys[i], value ? value : "", origin);
	}
	return TRUE;
}

/* Far more than any configuration holds: the bound of what is read. */
#define CONFIG_MAX_BYTES (1 << 20)

/*
 * The text of the file at path, read with a bound: a regular file alone,
 * opened without blocking (a FIFO with no writer would hang the start),
 * of at most CONFIG_MAX_BYTES (/dev/zero or a log given by mistake would
 * fill memory).
 */
static gboolean read_config_text(const char *path, char **text, gsize *len,
				 GError **error)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	char *buf;
	gsize n = 0;

	if (fd < 0) {
		int e = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    "cannot read the configuration file: %s: %s", path,
			    g_strerror(e));
		return FALSE;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s is not a regular file (a device, a FIFO or a "
			    "directory): give the path of a configuration "
			    "file, such as %s",
			    path, CUSEMU_CONFIG_FILE);
		return FALSE;
	}
	if (st.st_size > CONFIG_MAX_BYTES) {
		close(fd);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s holds %jd bytes, more than a configuration "
			    "file may (1 MiB): is it the configuration file? "
			    "Give the path of one",
			    path, (intmax_t)st.st_size);
		return FALSE;
	}
	/* One byte more than the bound: a file that grew since is told. */
	buf = g_malloc(CONFIG_MAX_BYTES + 2);
	while (n <= CONFIG_MAX_BYTES) {
		ssize_t r = read(fd, buf + n, CONFIG_MAX_BYTES + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			g_free(buf);
			g_set_error(error, G_FILE_ERROR,
				    g_file_error_from_errno(e),
				    "cannot read the configuration file: %s: "
				    "%s",
				    path, g_strerror(e));
			return FALSE;
		}
		if (r == 0)
			break;
		n += (gsize)r;
	}
	close(fd);
	if (n > CONFIG_MAX_BYTES) {
		g_free(buf);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s holds more than a configuration file may "
			    "(1 MiB): is it the configuration file? Give the "
			    "path of one",
			    path);
		return FALSE;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return TRUE;
}

gboolean cusemu_config_load_file(struct cusemu_config *config,
				 const char *path, GError **error)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	g_auto(GStrv) groups = NULL;
	g_autoptr(GKeyFile) kf = g_key_file_new();
	struct source src;
	gsize len;

	if (!read_config_text(path, &text, &len, error))
		return FALSE;
	if (!check_text(path, text, len, error))
		return FALSE;
	lines = g_strsplit(text, "\n", -1);
	src.path = path;
	src.lines = lines;
	if (!g_key_file_load_from_data(kf, text, (gsize)-1, G_KEY_FILE_NONE,
				       error)) {
		prefix_parse_error(&src, error);
		return FALSE;
	}
	groups = g_key_file_get_groups(kf, NULL);
	for (guint i = 0; groups[i]; i++) {
		const char *group = groups[i];
		gboolean ok;

		if (!strcmp(group, DAEMON_GROUP)) {
			ok = load_daemon_group(config, kf, &src, error);
		} else if (g_str_has_prefix(group, DEVICE_GROUP_PREFIX)) {
			ok = load_device_group(config, kf, &src, group, error);
		} else {
			g_autofree char *at = source_origin(&src, group, NULL);

			g_set_error(error, G_KEY_FILE_ERROR,
				    G_KEY_FILE_ERROR_GROUP_NOT_FOUND,
				    "%s: unknown group [%s]; groups are "
				    "[daemon] and [device NAME]",
				    at, group);
			ok = FALSE;
		}
		if (!ok)
			return FALSE;
	}
	return TRUE;
}

gboolean cusemu_config_add_device_arg(struct cusemu_config *config,
				      const char *arg, GError **error)
{
	return cusemu_config_add_device_text(config, arg, "--device", error);
}

gboolean cusemu_config_add_device_text(struct cusemu_config *config,
				       const char *arg, const char *what,
				       GError **error)
{
	g_autofree char *origin = g_strdup_printf("%s %s", what, arg);
	const char *colon = strchr(arg, ':');
	g_autofree char *model =
		colon ? g_strndup(arg, colon - arg) : g_strdup(arg);
	g_auto(GStrv) pairs = NULL;
	struct cusemu_device_spec *spec;

	if (!*model) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: no device model before ':'; write "
			    "MODEL[:key=value,...], e.g. fioc:name=fioc0",
			    origin);
		return FALSE;
	}
	spec = cusemu_device_spec_new(model, origin);
	g_ptr_array_add(config->devices, spec);
	if (!colon || !colon[1])
		return TRUE;
	pairs = g_strsplit(colon + 1, ",", -1);
	for (guint i = 0; pairs[i]; i++) {
		const char *eq = strchr(pairs[i], '=');
		g_autofree char *key = NULL;

		if (!eq || eq == pairs[i]) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "%s: '%s' is not key=value", origin,
				    pairs[i]);
			return FALSE;
		}
		key = g_strndup(pairs[i], eq - pairs[i]);
		if (!strcmp(key, "model")) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "%s: the device model goes before ':'; "
				    "for the kernel model use kernel=NAME",
				    origin);
			return FALSE;
		}
		cusemu_device_spec_add(spec, key, eq + 1, origin);
	}
	return TRUE;
}
