/* SPDX-License-Identifier: MIT */
/*
 * Recordings (record=FILE): a worker that answers a request of a recorded
 * device writes its trace line to the file itself, in one write(2) under
 * the recording's lock, before it takes the next request. Nothing is
 * buffered, so a daemon that dies loses the call in flight and no more.
 */
#define G_LOG_DOMAIN "cusemu-trace"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "kmodel.h"
#include "record.h"
#include "stats.h"
#include "trace.h"

bool cusemu_recording_check_only;

struct cusemu_recording {
	gint refs;
	gint on;		/* not full, no write failed */
	char *path;
	uint64_t max;
	GMutex lock;
	/* Guarded by lock: */
	int fd;			/* -1 once it ended */
	uint64_t size;		/* bytes written */
	uint64_t lines;		/* request lines written */
};

/* Where path's directory is, for a message. */
static char *dir_of(const char *path)
{
	return g_path_get_dirname(path);
}

/* Refuse what exists and is no regular file: never open a node. */
static gboolean check_path(const struct cusemu_device *dev, const char *path,
			   const char *origin, GError **error)
{
	struct stat st;
	const char *what;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return TRUE;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: device %s: record=%s: %s", origin, dev->name,
			    path, g_strerror(errno));
		return FALSE;
	}
	if (S_ISREG(st.st_mode))
		return TRUE;
	what = S_ISLNK(st.st_mode)   ? "a symbolic link"
	       : S_ISDIR(st.st_mode) ? "a directory"
	       : S_ISCHR(st.st_mode) ? "a character device"
	       : S_ISBLK(st.st_mode) ? "a block device"
	       : S_ISFIFO(st.st_mode) ? "a FIFO"
				      : "not a regular file";
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
		    "%s: device %s: record=%s is %s: a recording is written "
		    "only to a regular file, which it replaces; give the path "
		    "of a new or regular file (the existing one is left "
		    "untouched)",
		    origin, dev->name, path, what);
	return FALSE;
}

gboolean cusemu_recording_check(const struct cusemu_device *dev,
				const char *path, const char *origin,
				GError **error)
{
	g_autofree char *dir = dir_of(path);

	if (!check_path(dev, path, origin, error))
		return FALSE;
	if (g_file_test(dir, G_FILE_TEST_IS_DIR))
		return TRUE;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
		    "%s: device %s: cannot record to %s: the directory %s "
		    "does not exist: make it first",
		    origin, dev->name, path, dir);
	return FALSE;
}

static int open_file(const struct cusemu_device *dev, const char *path,
		     const char *origin, GError **error)
{
	/*
	 * O_TRUNC: a recording is one run, it replaces the file (the kernel
	 * truncates regular files alone). O_NONBLOCK: a FIFO made since the
	 * check does not hold the open.
	 */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
				    O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
				    O_NONBLOCK,
		      0644);
	struct stat st;

	if (fd < 0) {
		g_autofree char *dir = dir_of(path);
		int err = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    "%s: device %s: cannot record to %s: %s%s%s%s",
			    origin, dev->name, path, g_strerror(err),
			    err == ENOENT ? " (the directory " : "",
			    err == ENOENT ? dir : "",
			    err == ENOENT ? " does not exist: make it first)"
					  : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		if (check_path(dev, path, origin, error))
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_AGAIN,
				    "%s: device %s: record=%s changed while "
				    "it was opened; start again",
				    origin, dev->name, path);
		return -1;
	}
	return fd;
}

/* All of buf, short writes resumed; 0 or an errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static gint compare_keys(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void cusemu_recording_header(GString *out, const struct cusemu_device *dev)
{
	struct cusemu_instance *inst = cusemu_instance(dev);
	g_autoptr(GString) more = g_string_new(",\"record\":{\"model\":");
	g_autofree gpointer *keys = NULL;
	guint n = 0;
	char *nodes[] = { (char *)dev->name, NULL };

	cusemu_json_append_string(more, dev->model->name);
	g_string_append(more, ",\"kernel\":");
	cusemu_json_append_string(more, inst->kmodel->name);
	g_string_append(more, ",\"params\":{");
	keys = g_hash_table_get_keys_as_array(inst->params, &n);
	qsort(keys, n, sizeof(*keys), compare_keys);
	for (guint i = 0; i < n; i++) {
		if (i)
			g_string_append_c(more, ',');
		cusemu_json_append_string(more, keys[i]);
		g_string_append_c(more, ':');
		cusemu_json_append_string(more,
					  g_hash_table_lookup(inst->params,
							      keys[i]));
	}
	g_string_append(more, "}}");
	cusemu_trace_header(out, nodes, more->str);
}

struct cusemu_recording *cusemu_recording_open(const struct cusemu_device *dev,
					       const char *path, uint64_t max,
					       const char *origin,
					       GError **error)
{
	g_autoptr(GString) header = g_string_new(NULL);
	struct cusemu_recording *r;
	int fd, err;

	if (!check_path(dev, path, origin, error))
		return NULL;
	fd = open_file(dev, path, origin, error);
	if (fd < 0)
		return NULL;
	cusemu_recording_header(header, dev);
	err = write_all(fd, header->str, header->len);
	if (err) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    "%s: device %s: cannot write to %s: %s", origin,
			    dev->name, path, g_strerror(err));
		close(fd);
		return NULL;
	}
	r = g_new0(struct cusemu_recording, 1);
	r->refs = 1;
	r->on = 1;
	r->path = g_strdup(path);
	r->max = max;
	r->fd = fd;
	r->size = header->len;
	g_mutex_init(&r->lock);
	cusemu_trace_watch(1);
	return r;
}

struct cusemu_recording *cusemu_recording_ref(struct cusemu_recording *r)
{
	if (r)
		g_atomic_int_inc(&r->refs);
	return r;
}

/* Under lock: the file ends; the fast path forgets it. */
static void end(struct cusemu_recording *r)
{
	if (r->fd < 0)
		return;
	close(r->fd);
	r->fd = -1;
	g_atomic_int_set(&r->on, 0);
	cusemu_trace_watch(-1);
}

void cusemu_recording_unref(struct cusemu_recording *r)
{
	if (!r || !g_atomic_int_dec_and_test(&r->refs))
		return;
	end(r);
	g_mutex_clear(&r->lock);
	g_free(r->path);
	g_free(r);
}

bool cusemu_recording_on(struct cusemu_recording *r)
{
	return r && g_atomic_int_get(&r->on);
}

/* Under lock: the line that would cross record-max, and what is said. */
static void full(struct cusemu_recording *r, struct cusemu_device *dev)
{
	g_autofree char *last = g_strdup_printf("{\"record\":\"full\","
						"\"max\":%" PRIu64 ","
						"\"lines\":%" PRIu64 "}\n",
						r->max, r->lines);
	int err = write_all(r->fd, last, strlen(last));

	if (err)
		cusemu_device_lost(dev, "recording to %s ended: %s", r->path,
				   g_strerror(err));
	else
		g_warning("%s: the recording %s reached record-max=%" PRIu64
			  " bytes after %" PRIu64 " lines; the rest of this "
			  "device's calls are not recorded (it serves on); "
			  "raise record-max= to record more",
			  dev->name, r->path, r->max, r->lines);
	end(r);
}

void cusemu_recording_write(struct cusemu_recording *r,
			    struct cusemu_device *dev, const GString *line)
{
	int err;

	g_mutex_lock(&r->lock);
	if (r->fd < 0)
		goto out;
	if (line->len > r->max || r->size + line->len > r->max) {
		full(r, dev);
		goto out;
	}
	err = write_all(r->fd, line->str, line->len);
	if (err) {
		/* What a short write left of the line goes: every line in
		 * the file stays whole. */
		if (ftruncate(r->fd, (off_t)r->size) < 0)
			g_debug("%s: a partial line stays: %s", r->path,
				g_strerror(errno));
		cusemu_device_lost(dev, "recording to %s ended after %" PRIu64
					" lines: write: %s; the device serves "
					"on, unrecorded",
				   r->path, r->lines, g_strerror(err));
		end(r);
		goto out;
	}
	r->size += line->len;
	r->lines++;
out:
	g_mutex_unlock(&r->lock);
}
