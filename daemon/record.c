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
#include "private-file.h"
#include "record.h"
#include "stats.h"
#include "trace.h"

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

/* Whose path failed, in front of what private-file.c says of it. */
static void prefix(GError **error, const struct cusemu_device *dev,
		   const char *path, const char *origin)
{
	g_prefix_error(error, "%s: device %s: cannot record to %s: ", origin,
		       dev->name, path);
}

gboolean cusemu_recording_check(const struct cusemu_device *dev,
				const char *path, const char *origin,
				GError **error)
{
	if (cusemu_private_file_check(path, error))
		return TRUE;
	prefix(error, dev, path, origin);
	return FALSE;
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
	cusemu_json_append_string(more, inst->dispatch.kmodel->name);
	g_string_append(more, ",\"params\":{");
	keys = g_hash_table_get_keys_as_array(inst->made.params, &n);
	qsort(keys, n, sizeof(*keys), compare_keys);
	for (guint i = 0; i < n; i++) {
		if (i)
			g_string_append_c(more, ',');
		cusemu_json_append_string(more, keys[i]);
		g_string_append_c(more, ':');
		cusemu_json_append_string(more,
					  g_hash_table_lookup(inst->made.params,
							      keys[i]));
	}
	g_string_append(more, "}}");
	cusemu_trace_header(out, nodes, more->str);
}

/* The line of an answered request in its device's recording, uncut: what
 * op.c publishes, once a recording started. */
static void record_published(const struct cusemu_op_record *rec, uint64_t ns)
{
	struct cusemu_recording *recording =
		cusemu_instance(rec->dev)->record.recording;
	g_autoptr(GString) line = NULL;
	struct cusemu_trace_caller caller;

	if (!cusemu_recording_on(recording))
		return;
	cusemu_trace_caller_of(rec, &caller);
	line = g_string_sized_new(512);
	cusemu_trace_format(line, rec, ns, &caller, CUSEMU_TRACE_DATA_ALL);
	cusemu_recording_write(recording, rec->dev, line);
}

/* The recording in fd, which is taken: its header written first. */
static struct cusemu_recording *start(const struct cusemu_device *dev,
				      int fd, const char *path, uint64_t max,
				      const char *origin, GError **error)
{
	g_autoptr(GString) header = g_string_new(NULL);
	struct cusemu_recording *r;
	int err;

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
	cusemu_op_subscribe(record_published);
	cusemu_op_watch(1);
	return r;
}

struct cusemu_recording *cusemu_recording_open(const struct cusemu_device *dev,
					       const char *path, uint64_t max,
					       const char *origin,
					       GError **error)
{
	int fd = cusemu_private_file_open(path, CUSEMU_PRIVATE_EMPTY, NULL,
					  error);

	if (fd < 0) {
		prefix(error, dev, path, origin);
		return NULL;
	}
	return start(dev, fd, path, max, origin, error);
}

struct cusemu_recording *cusemu_recording_take(const struct cusemu_device *dev,
					       int fd, const char *path,
					       uint64_t max, const char *origin,
					       GError **error)
{
	if (!cusemu_private_file_take(fd, error)) {
		prefix(error, dev, path, origin);
		close(fd);
		return NULL;
	}
	return start(dev, fd, path, max, origin, error);
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
	cusemu_op_watch(-1);
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

/*
 * record=FILE: the file opened once the model started, so that a model
 * that fails to start leaves it alone; or the recording of the instance
 * this one replaces (cusemuctl reload), which goes on in the same file.
 */
static gboolean record_start(struct cusemu_device *dev,
			     const struct cusemu_device_spec *spec,
			     struct cusemu_recording *continued,
			     bool check_only, GError **error)
{
	struct cusemu_instance *inst = cusemu_instance(dev);
	const struct cusemu_setting *s = cusemu_device_spec_lookup(spec,
								   "record");

	if (continued) {
		inst->record.recording = cusemu_recording_ref(continued);
		return TRUE;
	}
	if (!s)
		return TRUE;
	if (s->fd >= 0)
		inst->record.recording = cusemu_recording_take(
			dev, fcntl(s->fd, F_DUPFD_CLOEXEC, 0), s->value,
			inst->record.record_max, s->origin, error);
	else if (check_only)
		return cusemu_recording_check(dev, s->value, s->origin, error);
	else
		inst->record.recording = cusemu_recording_open(dev, s->value,
							inst->record.record_max,
							s->origin, error);
	return inst->record.recording != NULL;
}

static gboolean start_recording(struct cusemu_device *dev,
				const struct cusemu_device_spec *spec,
				struct cusemu_recording *continued,
				GError **error)
{
	return record_start(dev, spec, continued, false, error);
}

static gboolean start_checking(struct cusemu_device *dev,
			       const struct cusemu_device_spec *spec,
			       struct cusemu_recording *continued,
			       GError **error)
{
	return record_start(dev, spec, continued, true, error);
}

/* Two, so that the kernel's part, which passes no pointer of ours,
 * holds which one the daemon runs as. */
static const struct cusemu_recorder recorder = {
	.start = start_recording,
	.unref = cusemu_recording_unref,
}, checker = {
	.start = start_checking,
	.unref = cusemu_recording_unref,
};

void cusemu_recording_register(bool check_only)
{
	cusemu_recorder_set(check_only ? &checker : &recorder);
}
