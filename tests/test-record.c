/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of recordings (record=FILE): the header, lines with their
 * data uncut, the end at record-max, a failed write, a reload that goes on
 * in the same file, and the paths refused and left untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "call.h"
#include "config.h"
#include "device.h"
#include "kmodel.h"
#include "op.h"
#include "record.h"
#include "trace.h"

static char *tmpdir;

/* A device from a --device argument, or NULL and why. */
static struct cusemu_device *device(const char *arg, GError **error)
{
	struct cusemu_config *config = cusemu_config_new();
	struct cusemu_device *dev;

	g_assert_true(cusemu_config_add_device_arg(config, arg, NULL));
	dev = cusemu_device_new(config->devices->pdata[0], 0,
				cusemu_kernel_model_find("modern"), error);
	cusemu_config_free(config);
	return dev;
}

static char *path_in_tmp(const char *name)
{
	return g_build_filename(tmpdir, name, NULL);
}

static char **lines_of(const char *path)
{
	g_autofree char *text = NULL;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	g_assert_true(g_str_has_suffix(text, "\n"));
	text[strlen(text) - 1] = '\0';
	return g_strsplit(text, "\n", -1);
}

/* A write of len bytes of value c, answered, on dev. */
static void answer_write(struct cusemu_device *dev, size_t len, int c)
{
	g_autofree uint8_t *bytes = g_malloc(len);
	struct cusemu_op_record rec;

	memset(bytes, c, len);
	cusemu_op_begin(&rec, CUSEMU_OP_WRITE, dev, getpid());
	rec.size = len;
	rec.result = (long)len;
	rec.data = bytes;
	cusemu_op_done(&rec);
}

/* The header says what was recorded; the trace's header, added to. */
static void test_header(void)
{
	g_autofree char *path = path_in_tmp("header.rec");
	g_autofree char *arg = g_strdup_printf("fioc:name=f0,max_size=64K,"
					       "kernel=2.6.11,record=%s",
					       path);
	struct cusemu_device *dev = device(arg, NULL);
	g_auto(GStrv) lines = NULL;

	g_assert_nonnull(dev);
	g_assert_true(cusemu_trace_on());
	lines = lines_of(path);
	g_assert_cmpuint(g_strv_length(lines), ==, 1);
	g_assert_cmpstr(lines[0], ==,
			"{\"trace\":\"cusemu\",\"version\":1,\"nodes\":[\"f0\"],"
			"\"record\":{\"model\":\"fioc\",\"kernel\":\"2.6.11\","
			"\"params\":{\"max_size\":\"65536\"}}}");
	cusemu_device_free(dev);
	/* The last recording gone, the fast path is back. */
	g_assert_false(cusemu_trace_on());
}

/* Each answered request is a line as it is answered, its data uncut. */
static void test_lines_uncut(void)
{
	g_autofree char *path = path_in_tmp("uncut.rec");
	g_autofree char *arg = g_strdup_printf("fioc:record=%s", path);
	struct cusemu_device *dev = device(arg, NULL);
	g_auto(GStrv) lines = NULL;
	g_autofree char *hex = NULL;
	g_autoptr(GString) cut = g_string_new(NULL);
	struct cusemu_op_record rec;
	struct cusemu_trace_caller caller = { .wall_us = 1 };

	g_assert_nonnull(dev);
	cusemu_op_begin(&rec, CUSEMU_OP_OPEN, dev, getpid());
	cusemu_op_done(&rec);
	answer_write(dev, 5000, 0xab);
	lines = lines_of(path);
	g_assert_cmpuint(g_strv_length(lines), ==, 3);
	g_assert_nonnull(strstr(lines[1], "\"op\":\"open\""));
	g_assert_nonnull(strstr(lines[1], "\"node\":\"fioc0\""));
	g_assert_nonnull(strstr(lines[1], "\"abi\":\"x86_64\""));
	hex = g_strnfill(10000, 'a');
	for (int i = 1; i < 10000; i += 2)
		hex[i] = 'b';
	g_assert_nonnull(strstr(lines[2], "\"op\":\"write\""));
	g_assert_nonnull(strstr(lines[2], "\"size\":5000"));
	g_assert_nonnull(strstr(lines[2], hex));
	g_assert_null(strstr(lines[2], "\"cut\""));
	g_assert_nonnull(strstr(lines[2], "\"result\":5000"));
	/* The trace of the same record cuts at 4096 bytes, as before. */
	rec = (struct cusemu_op_record){ .op = CUSEMU_OP_WRITE, .dev = dev,
					 .size = 5000, .result = 5000,
					 .data = g_malloc0(5000) };
	cusemu_trace_format(cut, &rec, 0, &caller, CUSEMU_TRACE_DATA_MAX);
	g_assert_nonnull(strstr(cut->str, "\",\"cut\":true"));
	g_assert_cmpuint(strchr(strstr(cut->str, "\"data\":\"") + 8, '"') -
				 (strstr(cut->str, "\"data\":\"") + 8),
			 ==, 8192);
	g_free((void *)rec.data);
	cusemu_device_free(dev);
}

/* An ioctl's ranges beyond 4096 bytes, whole. */
static void test_ioctl_uncut(void)
{
	static uint8_t in[6000];
	struct cusemu_call call = { 0 };
	struct cusemu_op_record rec = { .op = CUSEMU_OP_IOCTL, .call = &call };
	struct cusemu_trace_caller caller = { .wall_us = 1 };
	g_autoptr(GString) all = g_string_new(NULL);
	g_autoptr(GString) cut = g_string_new(NULL);
	struct cusemu_instance inst = { .pub.name = "x0" };

	rec.dev = &inst.pub;
	memset(in, 0x11, sizeof(in));
	call.in.count = 2;
	call.in.r[0] = (struct cusemu_user_range){ .addr = 0x1000, .len = 4000 };
	call.in.r[1] = (struct cusemu_user_range){ .addr = 0x9000, .len = 2000,
						   .off = 4000 };
	call.in_data = in;
	call.in_avail = sizeof(in);
	cusemu_trace_format(all, &rec, 0, &caller, CUSEMU_TRACE_DATA_ALL);
	cusemu_trace_format(cut, &rec, 0, &caller, CUSEMU_TRACE_DATA_MAX);
	g_assert_null(strstr(all->str, "cut"));
	g_assert_cmpuint(all->len, >, 12000);
	/* The trace: the second range holds the 96 bytes left of 4096. */
	g_assert_nonnull(strstr(cut->str, "\"len\":2000,\"data\":\""));
	g_assert_nonnull(strstr(cut->str, "\"cut\":true"));
	g_assert_cmpuint(cut->len, <, all->len);
}

/* The line that would cross record-max ends the file with a full line. */
static void test_full(void)
{
	g_autofree char *path = path_in_tmp("full.rec");
	g_autofree char *arg = g_strdup_printf("fioc:record=%s,record-max=1K",
					       path);
	struct cusemu_device *dev = device(arg, NULL);
	struct cusemu_instance *inst;
	g_auto(GStrv) lines = NULL;
	guint n;
	GStatBuf st;

	g_assert_nonnull(dev);
	inst = cusemu_instance(dev);
	g_assert_cmpuint(inst->record.record_max, ==, 1024);
	answer_write(dev, 150, 1);	/* about 550 bytes each */
	g_test_expect_message("cusemu-trace", G_LOG_LEVEL_WARNING,
			      "fioc0: the recording *full.rec reached "
			      "record-max=1024 bytes after 1 lines;*raise "
			      "record-max=*");
	answer_write(dev, 150, 2);
	g_test_assert_expected_messages();
	g_assert_false(cusemu_recording_on(inst->record.recording));
	answer_write(dev, 150, 3);	/* not recorded, not said again */
	lines = lines_of(path);
	n = g_strv_length(lines);
	g_assert_cmpuint(n, ==, 3);
	g_assert_nonnull(strstr(lines[1], "\"data\":\"0101"));
	g_assert_cmpstr(lines[2], ==,
			"{\"record\":\"full\",\"max\":1024,\"lines\":1}");
	g_assert_cmpint(g_stat(path, &st), ==, 0);
	g_assert_cmpint(st.st_size, <=, 1024 + (gint64)strlen(lines[2]) + 1);
	cusemu_device_free(dev);
}

/* A failed write ends the recording and counts as lost data. */
static void test_write_error(void)
{
	g_autofree char *path = path_in_tmp("efbig.rec");
	g_autofree char *arg = g_strdup_printf("fioc:record=%s", path);
	struct cusemu_device *dev = device(arg, NULL);
	unsigned int lost = cusemu_device_lost_count();
	struct rlimit old, small = { 1000, 1000 };
	g_auto(GStrv) lines = NULL;

	g_assert_nonnull(dev);
	/* EFBIG past 1000 bytes, as ENOSPC would be on a full disk. */
	signal(SIGXFSZ, SIG_IGN);
	g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &old), ==, 0);
	small.rlim_max = old.rlim_max;
	g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &small), ==, 0);
	answer_write(dev, 100, 1);
	g_test_expect_message("cusemu-model", G_LOG_LEVEL_CRITICAL,
			      "/dev/fioc0 (fioc) lost data: recording to "
			      "*efbig.rec ended after 1 lines: write: *");
	answer_write(dev, 2000, 2);
	g_test_assert_expected_messages();
	g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &old), ==, 0);
	g_assert_cmpuint(cusemu_device_lost_count(), ==, lost + 1);
	g_assert_false(cusemu_recording_on(cusemu_instance(dev)->record.recording));
	answer_write(dev, 10, 3);	/* said once */
	g_assert_cmpuint(cusemu_device_lost_count(), ==, lost + 1);
	cusemu_device_free(dev);
	/* What was answered before is whole, and no part of the line that
	 * failed is left. */
	lines = lines_of(path);
	g_assert_cmpuint(g_strv_length(lines), ==, 2);
	g_assert_nonnull(strstr(lines[1], "\"op\":\"write\""));
}

/* A reload goes on in the same file: one header, the lines of both. */
static void test_reload(void)
{
	g_autofree char *path = path_in_tmp("reload.rec");
	g_autofree char *arg = g_strdup_printf("rtc:record=%s", path);
	struct cusemu_device *dev = device(arg, NULL);
	struct cusemu_device *fresh;
	g_auto(GStrv) lines = NULL;

	g_assert_nonnull(dev);
	answer_write(dev, 1, 1);
	fresh = cusemu_device_respawn(dev, dev->model, NULL);
	g_assert_nonnull(fresh);
	g_assert_true(cusemu_instance(fresh)->record.recording ==
		      cusemu_instance(dev)->record.recording);
	cusemu_device_free(dev);	/* the file stays open for fresh */
	answer_write(fresh, 1, 2);
	lines = lines_of(path);
	g_assert_cmpuint(g_strv_length(lines), ==, 3);
	g_assert_true(g_str_has_prefix(lines[0], "{\"trace\""));
	g_assert_nonnull(strstr(lines[2], "\"data\":\"02\""));
	cusemu_device_free(fresh);
	g_assert_false(cusemu_trace_on());
}

/* The start of a device refused with a message that has each of parts. */
static void assert_refused(const char *path, const char *const *parts)
{
	g_autofree char *arg = g_strdup_printf("fioc:name=refused,record=%s",
					       path);
	g_autoptr(GError) error = NULL;

	g_assert_null(device(arg, &error));
	g_assert_nonnull(error);
	for (; *parts; parts++)
		if (!strstr(error->message, *parts))
			g_error("'%s' lacks '%s'", error->message, *parts);
	g_assert_false(cusemu_trace_on());
}

/* A device node is never written to, nor even opened. */
static void test_refuse_device_node(void)
{
	const char *const parts[] = { "device refused", "/dev/null",
				      "a character device", "regular file",
				      NULL };
	GStatBuf before, after;

	g_assert_cmpint(g_lstat("/dev/null", &before), ==, 0);
	assert_refused("/dev/null", parts);
	g_assert_cmpint(g_lstat("/dev/null", &after), ==, 0);
	g_assert_true(S_ISCHR(after.st_mode));
	g_assert_cmpint(after.st_rdev, ==, before.st_rdev);
	g_assert_cmpint(after.st_mtime, ==, before.st_mtime);
}

/* A symlink is refused, and what it points at stays as it was. */
static void test_refuse_symlink(void)
{
	g_autofree char *target = path_in_tmp("target");
	g_autofree char *link = path_in_tmp("link.rec");
	const char *const parts[] = { "device refused", "a symbolic link",
				      NULL };
	g_autofree char *text = NULL;

	g_assert_true(g_file_set_contents(target, "keep me\n", -1, NULL));
	g_assert_cmpint(symlink(target, link), ==, 0);
	assert_refused(link, parts);
	g_assert_true(g_file_get_contents(target, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "keep me\n");
}

/*
 * A directory on the path swapped for a symbolic link: the daemon follows
 * none, and the file it would reach stays as it was.
 */
static void test_refuse_symlinked_dir(void)
{
	g_autofree char *elsewhere = path_in_tmp("elsewhere");
	g_autofree char *target = path_in_tmp("elsewhere/x.rec");
	g_autofree char *link = path_in_tmp("swapped");
	g_autofree char *path = path_in_tmp("swapped/x.rec");
	const char *const parts[] = { "device refused", "swapped on its path "
				      "is a symbolic link", NULL };
	g_autofree char *text = NULL;

	g_assert_cmpint(g_mkdir(elsewhere, 0700), ==, 0);
	g_assert_true(g_file_set_contents(target, "keep me\n", -1, NULL));
	g_assert_cmpint(symlink(elsewhere, link), ==, 0);
	assert_refused(path, parts);
	g_assert_true(g_file_get_contents(target, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "keep me\n");
}

/* A file with another name is not written into: it may be anyone's. */
static void test_refuse_hard_link(void)
{
	g_autofree char *file = path_in_tmp("linked.rec");
	g_autofree char *other = path_in_tmp("other-name");
	const char *const parts[] = { "device refused", "2 names", NULL };
	g_autofree char *text = NULL;

	g_assert_true(g_file_set_contents(file, "keep me\n", -1, NULL));
	g_assert_cmpint(link(file, other), ==, 0);
	assert_refused(file, parts);
	g_assert_true(g_file_get_contents(other, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "keep me\n");
}

/*
 * A file another user made where both may write (as /tmp): root's daemon
 * neither writes into it nor empties it, which would let that user read
 * and forge the recording.
 */
static void test_refuse_other_users_file(void)
{
	g_autofree char *path = path_in_tmp("theirs.rec");
	g_autofree char *want = g_strdup_printf("belongs to uid 65534, not to "
						"uid %u",
						(unsigned int)geteuid());
	const char *const parts[] = { "device refused", want, NULL };
	g_autofree char *text = NULL;

	if (geteuid() != 0) {
		g_test_skip("making another user's file needs root");
		return;
	}
	g_assert_true(g_file_set_contents(path, "theirs\n", -1, NULL));
	g_assert_cmpint(chown(path, 65534, 65534), ==, 0);
	assert_refused(path, parts);
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "theirs\n");
}

/* A new recording is its user's alone. */
static void test_new_file_private(void)
{
	g_autofree char *path = path_in_tmp("new.rec");
	g_autofree char *arg = g_strdup_printf("fioc:record=%s", path);
	mode_t old = umask(0);
	struct cusemu_device *dev = device(arg, NULL);
	GStatBuf st;

	umask(old);
	g_assert_nonnull(dev);
	g_assert_cmpint(g_stat(path, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & 07777, ==, 0600);
	g_assert_cmpuint(st.st_uid, ==, geteuid());
	cusemu_device_free(dev);
}

static void test_refuse_directory(void)
{
	const char *const parts[] = { "device refused", "a directory", NULL };

	assert_refused(tmpdir, parts);
}

static void test_refuse_missing_directory(void)
{
	g_autofree char *path = path_in_tmp("nowhere/x.rec");
	g_autofree char *dir = path_in_tmp("nowhere");
	g_autofree char *want = g_strdup_printf("the directory %s does not "
						"exist",
						dir);
	const char *const parts[] = { "device refused", "cannot record",
				      want, NULL };

	assert_refused(path, parts);
}

/* A regular file is replaced; a bad record-max is refused. */
static void test_replace_and_max(void)
{
	g_autofree char *path = path_in_tmp("old.rec");
	g_autofree char *arg = g_strdup_printf("fioc:record=%s", path);
	g_autofree char *small = g_strdup_printf("fioc:record=%s,"
						 "record-max=100", path);
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev;
	g_auto(GStrv) lines = NULL;

	g_assert_true(g_file_set_contents(path, "old\nlines\nthere\n", -1,
					  NULL));
	dev = device(arg, NULL);
	g_assert_nonnull(dev);
	lines = lines_of(path);
	g_assert_cmpuint(g_strv_length(lines), ==, 1);
	g_assert_cmpuint(cusemu_instance(dev)->record.record_max, ==, 64 << 20);
	cusemu_device_free(dev);
	g_assert_null(device(small, &error));
	g_assert_nonnull(strstr(error->message, "record-max"));
}

static void remove_tree(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			remove_tree(path);
		else
			g_unlink(path);
	}
	g_rmdir(dir);
}

/* --check-config checks the path and leaves the file of a running daemon
 * as it is. */
static void test_check_only(void)
{
	g_autofree char *path = path_in_tmp("running.rec");
	g_autofree char *arg = g_strdup_printf("fioc:record=%s", path);
	const char *const parts[] = { "a character device", NULL };
	g_autofree char *text = NULL;
	struct cusemu_device *dev;

	g_assert_true(g_file_set_contents(path, "{\"trace\":1}\n", -1, NULL));
	cusemu_recording_register(true);
	dev = device(arg, NULL);
	g_assert_nonnull(dev);
	g_assert_null(cusemu_instance(dev)->record.recording);
	cusemu_device_free(dev);
	assert_refused("/dev/null", parts);
	cusemu_recording_register(false);
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "{\"trace\":1}\n");
}

int main(int argc, char **argv)
{
	int ret;

	g_test_init(&argc, &argv, NULL);
	cusemu_recording_register(false);
	tmpdir = g_dir_make_tmp("cusemu-record-XXXXXX", NULL);
	g_assert_nonnull(tmpdir);
	g_test_add_func("/record/header", test_header);
	g_test_add_func("/record/lines-uncut", test_lines_uncut);
	g_test_add_func("/record/ioctl-uncut", test_ioctl_uncut);
	g_test_add_func("/record/full", test_full);
	g_test_add_func("/record/write-error", test_write_error);
	g_test_add_func("/record/reload", test_reload);
	g_test_add_func("/record/refuse-device-node", test_refuse_device_node);
	g_test_add_func("/record/refuse-symlink", test_refuse_symlink);
	g_test_add_func("/record/refuse-directory", test_refuse_directory);
	g_test_add_func("/record/refuse-symlinked-dir",
			test_refuse_symlinked_dir);
	g_test_add_func("/record/refuse-hard-link", test_refuse_hard_link);
	g_test_add_func("/record/refuse-other-users-file",
			test_refuse_other_users_file);
	g_test_add_func("/record/new-file-private", test_new_file_private);
	g_test_add_func("/record/refuse-missing-directory",
			test_refuse_missing_directory);
	g_test_add_func("/record/replace-and-max", test_replace_and_max);
	g_test_add_func("/record/check-only", test_check_only);
	ret = g_test_run();
	remove_tree(tmpdir);
	g_free(tmpdir);
	return ret;
}
