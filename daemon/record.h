/* SPDX-License-Identifier: MIT */
/*
 * A device's recording (record=FILE): every answered request of the device
 * written to a file as it is answered, one trace line each (trace.h), the
 * data uncut, under a header that says what was recorded. docs/daemon.md's
 * "Recording" describes the file.
 */
#ifndef CUSEMU_RECORD_H
#define CUSEMU_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

struct cusemu_device;
struct cusemu_recording;

/*
 * The recording of dev to path: the file made 0600 or emptied, its header
 * written, as cusemu_private_file_open() finds it: no symbolic link on the
 * path, an existing file only if it is a regular file of the daemon's user
 * with one name; anything else is refused and left as it is. NULL and why,
 * naming dev (origin: where record= was given), when it cannot be.
 */
struct cusemu_recording *cusemu_recording_open(const struct cusemu_device *dev,
					       const char *path, uint64_t max,
					       const char *origin,
					       GError **error);
/*
 * The recording of dev to fd, which a control client opened for record=path
 * with its own rights and handed over; fd is taken, closed on failure.
 */
struct cusemu_recording *cusemu_recording_take(const struct cusemu_device *dev,
					       int fd, const char *path,
					       uint64_t max, const char *origin,
					       GError **error);
/*
 * What cusemu_recording_open() checks before it opens, without opening:
 * for --check-config, which must not empty the file of a running daemon.
 */
gboolean cusemu_recording_check(const struct cusemu_device *dev,
				const char *path, const char *origin,
				GError **error);
/*
 * Hand the recordings to the kernel's part (cusemu_recorder_set): the
 * devices it makes then serve record=. At start-up, before any device;
 * check_only (--check-config): devices check their record= path, open none.
 */
void cusemu_recording_register(bool check_only);

struct cusemu_recording *cusemu_recording_ref(struct cusemu_recording *r);
/* The file is closed with the last reference. */
void cusemu_recording_unref(struct cusemu_recording *r);

/* Still recording: not full, no write failed. Any thread. */
bool cusemu_recording_on(struct cusemu_recording *r);

/*
 * Append one line (with its '\n') in one write(2), under the recording's
 * lock: lines of concurrent workers never interleave. The line that would
 * take the file beyond record-max ends it with {"record":"full",...}; a
 * failed write ends it too, and is lost data (cusemu_device_lost).
 */
void cusemu_recording_write(struct cusemu_recording *r,
			    struct cusemu_device *dev, const GString *line);

/* The header line of dev's recording, with its '\n', appended to out. */
void cusemu_recording_header(GString *out, const struct cusemu_device *dev);

#endif
