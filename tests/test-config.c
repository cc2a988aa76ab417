/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of configuration reading: files and --device arguments, and
 * that every error names the place to fix.
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "config.h"
#include "device.h"
#include "dispatch.h"

static char *write_config(const char *text)
{
	g_autoptr(GError) error = NULL;
	char *path = NULL;
	int fd = g_file_open_tmp("cusemu-test-XXXXXX.conf", &path, &error);

	g_assert_no_error(error);
	close(fd);
	g_assert_true(g_file_set_contents(path, text, -1, &error));
	return path;
}

/* Load text as a configuration file and build its devices. */
static gboolean load(const char *text, GError **error, char **path_out)
{
	g_autofree char *path = write_config(text);
	struct cusemu_config *config = cusemu_config_new();
	gboolean ok = cusemu_config_load_file(config, path, error);

	for (guint i = 0; ok && i < config->devices->len; i++) {
		struct cusemu_device *dev = cusemu_device_new(
			config->devices->pdata[i], i,
			cusemu_kernel_model_find("modern"), error);

		ok = dev != NULL;
		cusemu_device_free(dev);
	}
	cusemu_config_free(config);
	g_unlink(path);
	*path_out = g_steal_pointer(&path);
	return ok;
}

/* The error starts with "PATH:LINE:" and mentions hint. */
static void expect_error(const char *text, unsigned int line, const char *hint)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = NULL;
	g_autofree char *where = NULL;

	g_assert_false(load(text, &error, &path));
	g_assert_nonnull(error);
	where = g_strdup_printf("%s:%u: ", path, line);
	if (!g_str_has_prefix(error->message, where) ||
	    !strstr(error->message, hint))
		g_error("expected '%s...%s', got '%s'", where, hint,
			error->message);
}

static void test_good_file(void)
{
	g_autofree char *path = write_config(
		"# two buffers\n"
		"[daemon]\n"
		"model=modern\n"
		"lock=none\n"
		"\n"
		"[device buf0]\n"
		"model=fioc\n"
		"max_size=64K\n"
		"mode=0660\n"
		"\n"
		"[device buf1]\n"
		"model=fioc\n");
	struct cusemu_config *config = cusemu_config_new();
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev;

	g_assert_true(cusemu_config_load_file(config, path, &error));
	g_assert_no_error(error);
	g_assert_cmpstr(config->kernel_model, ==, "modern");
	g_assert_cmpstr(config->lock, ==, "none");
	g_assert_cmpuint(config->devices->len, ==, 2);
	dev = cusemu_device_new(config->devices->pdata[0], 0,
				cusemu_kernel_model_find("modern"), &error);
	g_assert_no_error(error);
	g_assert_cmpstr(dev->name, ==, "buf0");
	g_assert_cmpuint(cusemu_device_param_u64(dev, "max_size"), ==, 65536);
	g_assert_cmpuint(cusemu_instance(dev)->made.mode, ==, 0660);
	cusemu_device_free(dev);
	/* A model default with a unit ("1M") reads as bytes too. */
	dev = cusemu_device_new(config->devices->pdata[1], 1,
				cusemu_kernel_model_find("modern"), &error);
	g_assert_no_error(error);
	g_assert_cmpuint(cusemu_device_param_u64(dev, "max_size"), ==, 1 << 20);
	g_assert_cmpuint(cusemu_instance(dev)->made.mode, ==, 0600);
	cusemu_device_free(dev);
	cusemu_config_free(config);
	g_unlink(path);
}

static void test_file_errors(void)
{
	expect_error("[device a]\nmodel=fioc\nmax_size=lots\n", 3,
		     "write a byte count");
	expect_error("[device a]\nmodel=fioc\n\nmaxsize=1\n", 4,
		     "unknown key 'maxsize' for device model fioc");
	expect_error("[daemon]\nmodel=modern\nworkers=3\n", 3,
		     "unknown key 'workers'");
	expect_error("[device a]\nmax_size=1\n", 1, "has no 'model' key");
	expect_error("[device a]\nmodel=nosuch\n", 1,
		     "unknown device model 'nosuch'; available: fioc");
	expect_error("[devices]\nmodel=fioc\n", 1, "unknown group [devices]");
	expect_error("[device a]\nmodel=fioc\nthis is not a pair\n", 3,
		     "not a key-value pair");
	expect_error("[device a]\nmodel=fioc\nmode=777\n", 3,
		     "leading 0");
	expect_error("[device a]\nmodel=fioc\nowner=no-such-user-here\n", 3,
		     "unknown user");
	expect_error("[device a/b]\nmodel=fioc\n", 1, "bad node name");
	expect_error("[device a]\nmodel=fioc\nkernel=2.4\n", 3,
		     "unknown kernel model '2.4'");
	expect_error("[device a]\nmodel=fioc\nmax_size=1G\n", 3,
		     "allowed: 0 to 268435456");
}

/* What a file may hold when it is not text, or was cut short. */
static void test_bad_text(void)
{
	static const char elf[] = "\x7f" "ELF\x02\x01\x01\x00\x00\x00";
	g_autofree char *path = write_config("");
	g_autoptr(GError) error = NULL;
	struct cusemu_config *config = cusemu_config_new();

	/* Binary junk: the start of an ELF file. */
	g_assert_true(g_file_set_contents(path, elf, sizeof(elf) - 1, &error));
	g_assert_false(cusemu_config_load_file(config, path, &error));
	g_assert_true(g_str_has_prefix(error->message, path));
	g_assert_nonnull(strstr(error->message,
				":1: a NUL byte: this is not a text file; "
				"write key=value lines"));
	g_clear_error(&error);

	/* A NUL byte must not hide what follows it. */
	g_assert_true(g_file_set_contents(
		path, "[device a]\nmodel=fioc\n\0\x01garbage", 31, &error));
	g_assert_false(cusemu_config_load_file(config, path, &error));
	g_assert_nonnull(strstr(error->message, ":3: a NUL byte"));
	cusemu_config_free(config);
	g_unlink(path);

	/* Bytes that are not UTF-8 still get their line. */
	expect_error("[device a]\nmodel=fioc\n\xff\xfejunk\n", 3,
		     "bytes that are not UTF-8: this is not a text file");
	/* A cut line that starts an earlier one is blamed on itself. */
	expect_error("[device a]\nmodel=fioc\n[devi", 3,
		     "not a key-value pair, group, or comment; write "
		     "key=value lines");

	/* A group cut in the middle: the last line, without its newline. */
	expect_error("[device a]\nmodel=fioc\n\n[device b", 4,
		     "not a key-value pair, group, or comment");
	expect_error("[device a\n", 1, "not a key-value pair, group");
	/* A key without a value, and without even its '='. */
	expect_error("[device a]\nmodel=fioc\nmax_size=\n", 3,
		     "bad value '' for max_size");
	expect_error("[device a]\nmodel=fioc\nmax_size\n", 3,
		     "not a key-value pair");
	expect_error("[device a]\nmodel=\n", 1, "add e.g. model=fioc");
	/* An unterminated last line is read like any other. */
	expect_error("[device a]\nmodel=fioc\nmax_size=lots", 3,
		     "write a byte count");
}

/* A good file whose last line has no newline. */
static void test_unterminated_line(void)
{
	g_autofree char *path =
		write_config("[device a]\nmodel=fioc\nmax_size=4K");
	struct cusemu_config *config = cusemu_config_new();
	g_autoptr(GError) error = NULL;
	const struct cusemu_setting *s;

	g_assert_true(cusemu_config_load_file(config, path, &error));
	g_assert_cmpuint(config->devices->len, ==, 1);
	s = cusemu_device_spec_lookup(config->devices->pdata[0], "max_size");
	g_assert_nonnull(s);
	g_assert_cmpstr(s->value, ==, "4K");
	cusemu_config_free(config);
	g_unlink(path);
}

/* The [daemon] group's sandbox keys, each with the line it came from. */
static void test_sandbox_keys(void)
{
	g_autofree char *path = write_config("[daemon]\n"
					     "seccomp=log\n"
					     "\n"
					     "user=nobody\n");
	struct cusemu_config *config = cusemu_config_new();
	g_autoptr(GError) error = NULL;
	g_autofree char *seccomp_at = g_strdup_printf("%s:2", path);
	g_autofree char *user_at = g_strdup_printf("%s:4", path);

	g_assert_true(cusemu_config_load_file(config, path, &error));
	g_assert_no_error(error);
	g_assert_cmpstr(config->seccomp, ==, "log");
	g_assert_cmpstr(config->seccomp_origin, ==, seccomp_at);
	g_assert_cmpstr(config->user, ==, "nobody");
	g_assert_cmpstr(config->user_origin, ==, user_at);
	cusemu_config_free(config);
	g_unlink(path);
	expect_error("[daemon]\nseccomp=log\nsandbox=strict\n", 3,
		     "the daemon settings are model, lock, control, "
		     "control_group, seccomp, user, plugins, threads, "
		     "major, fuse, allow_other, panic_on_oops, "
		     "soft_lockup_secs, hung_task_secs and host_memory");
}

static void test_device_args(void)
{
	struct cusemu_config *config = cusemu_config_new();
	g_autoptr(GError) error = NULL;
	struct cusemu_device_spec *spec;

	g_assert_true(cusemu_config_add_device_arg(
		config, "fioc:name=x,max_size=2K", &error));
	g_assert_true(cusemu_config_add_device_arg(config, "fioc", &error));
	spec = config->devices->pdata[0];
	g_assert_cmpstr(spec->model, ==, "fioc");
	g_assert_cmpstr(cusemu_device_spec_lookup(spec, "max_size")->value, ==,
			"2K");
	g_assert_false(cusemu_config_add_device_arg(config, "fioc:nokey",
						    &error));
	g_assert_nonnull(strstr(error->message, "'nokey' is not key=value"));
	g_clear_error(&error);
	g_assert_false(cusemu_config_add_device_arg(config, ":name=x", &error));
	g_assert_nonnull(strstr(error->message, "no device model"));
	cusemu_config_free(config);
}

/* load_file refuses path, naming it with hint, at once: a read without
 * bound would hang on a FIFO, or fill memory from /dev/zero, until the
 * alarm ends the test. */
static void expect_refused_file(const char *path, const char *hint)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_config *config = cusemu_config_new();

	alarm(10);
	g_assert_false(cusemu_config_load_file(config, path, &error));
	alarm(0);
	if (!g_str_has_prefix(error->message, path) ||
	    !strstr(error->message, hint))
		g_error("expected '%s...%s', got '%s'", path, hint,
			error->message);
	cusemu_config_free(config);
}

static void test_not_regular(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_dir_make_tmp("cusemu-test-XXXXXX", &error);
	g_autofree char *fifo = NULL;

	g_assert_no_error(error);
	expect_refused_file("/dev/zero", "is not a regular file");
	expect_refused_file(dir, "is not a regular file");
	fifo = g_build_filename(dir, "fifo.conf", NULL);
	g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
	expect_refused_file(fifo, "is not a regular file");
	g_unlink(fifo);
	g_rmdir(dir);
}

/* Larger than any configuration: refused, with the limit and the size. */
static void test_huge_file(void)
{
	g_autofree char *path = write_config("");
	g_autoptr(GError) error = NULL;
	struct cusemu_config *config = cusemu_config_new();
	g_autofree char *text = g_malloc(2 << 20);

	memset(text, '#', 2 << 20);
	g_assert_true(g_file_set_contents(path, text, 2 << 20, &error));
	g_assert_false(cusemu_config_load_file(config, path, &error));
	g_assert_true(g_str_has_prefix(error->message, path));
	g_assert_nonnull(strstr(error->message, "2097152 bytes"));
	g_assert_nonnull(strstr(error->message, "1 MiB"));
	cusemu_config_free(config);
	g_unlink(path);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/config/good-file", test_good_file);
	g_test_add_func("/config/file-errors", test_file_errors);
	g_test_add_func("/config/bad-text", test_bad_text);
	g_test_add_func("/config/unterminated-line", test_unterminated_line);
	g_test_add_func("/config/sandbox-keys", test_sandbox_keys);
	g_test_add_func("/config/device-args", test_device_args);
	g_test_add_func("/config/not-regular", test_not_regular);
	g_test_add_func("/config/huge-file", test_huge_file);
	return g_test_run();
}
