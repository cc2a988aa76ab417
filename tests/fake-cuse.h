/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the kernel's CUSE, for unit tests of the request path: a
 * device is served by the in-process transport (transport/test.h), and
 * the test sends requests the way fs/fuse/ioctl.c does, restricted or
 * not, following FUSE_IOCTL_RETRY. Nothing here allocates per request, so
 * a test can count the request path's own allocations.
 */
#ifndef CUSEMU_FAKE_CUSE_H
#define CUSEMU_FAKE_CUSE_H

#include <stdbool.h>
#include <sys/types.h>

#include "device.h"
#include "fake-kernel.h"

/* One device's node as the kernel sees it. */
struct fake_cuse;

/* Serve dev; fails the test if the transport refuses. */
struct fake_cuse *fake_cuse_start(struct cusemu_device *dev);
/* End it: what SIGTERM does to the daemon. */
void fake_cuse_stop(struct fake_cuse *fc);

/*
 * fn(data) runs once, inside the daemon's next reply, as a client that goes
 * on as soon as it is answered (closing its file, say) would race the
 * worker that answered it.
 */
void fake_cuse_on_reply(struct fake_cuse *fc, void (*fn)(void *data),
			void *data);

/* Does the node take unrestricted ioctls (CUSE_UNRESTRICTED_IOCTL)? */
bool fake_cuse_unrestricted(const struct fake_cuse *fc);

/* open(2) by process pid: a file handle >= 0, or -errno. */
int fake_cuse_open(struct fake_cuse *fc, pid_t pid);
void fake_cuse_release(struct fake_cuse *fc, int fh);

/*
 * read(2) and write(2) of size bytes on file fh: the byte count or -errno,
 * as the client sees it. A reply claiming more than size is EIO, as the
 * kernel makes it.
 */
ssize_t fake_cuse_read(struct fake_cuse *fc, int fh, void *buf, size_t size);
ssize_t fake_cuse_write(struct fake_cuse *fc, int fh, const void *buf,
			size_t size);

struct cusemu_test_poll;

/*
 * poll(2) on file fh: the events the node answers, as the kernel gets
 * them; ph, when not NULL, the handle the node keeps to notify later.
 */
unsigned int fake_cuse_poll(struct fake_cuse *fc, int fh,
			    struct cusemu_test_poll *ph);

/* The daemon's answer to one request. */
struct fake_reply {
	enum {
		FAKE_REPLY_ERR, FAKE_REPLY_IOCTL, FAKE_REPLY_RETRY,
		FAKE_REPLY_REFUSED,	/* the kernel refused it */
	} kind;
	int error;		/* FAKE_REPLY_ERR: a positive errno */
	int result;		/* FAKE_REPLY_IOCTL: the result... */
	const void *buf;	/* ...and the bytes to copy out, size of them */
	size_t size;
	/* FAKE_REPLY_RETRY: the ranges to send with the next request. */
	struct cusemu_user_ranges *in, *out;
};

/*
 * One FUSE_IOCTL request, as it reaches the daemon: whatever flags, sizes
 * and data, even those no kernel would send. reply->in and reply->out must
 * point to room for a retry's ranges.
 */
void fake_cuse_request(struct fake_cuse *fc, int fh, pid_t tid,
		       unsigned int flags, unsigned int cmd, cusemu_uptr_t arg,
		       const void *in_buf, size_t in_size, size_t out_size,
		       struct fake_reply *reply);

/*
 * ioctl(2) by thread tid of client c on file fh: the result or -errno, as
 * the client sees it. *requests counts the requests the daemon answered.
 */
long fake_cuse_ioctl(struct fake_cuse *fc, int fh, struct fake_client *c,
		     pid_t tid, unsigned int cmd, cusemu_uptr_t arg,
		     unsigned int *requests);

#endif
