/* SPDX-License-Identifier: MIT */
/*
 * One request on a device's node, as every transport hands it over: what
 * the operation carries in, who asked, and the functions that answer it.
 * A transport is an adapter, as cuse_lowlevel.c is to libfuse: it turns
 * its own request into a struct cusemu_req (on its stack: nothing is
 * allocated per request), calls the node (node.h) and turns the replies
 * back into its own. The node answers every request exactly once, and
 * touches none of it after the answer; an ioctl that runs long it may
 * keep (ops->keep) and answer from another thread.
 */
#ifndef CUSEMU_REQ_H
#define CUSEMU_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct cusemu_req;

/* The answers a transport gives; each slot is called at most once. */
struct cusemu_req_ops {
	/* Failure with a positive errno, or 0: release's answer. */
	void (*err)(struct cusemu_req *r, int err);
	/* The open succeeded: r->fh is the open file's handle from now on. */
	void (*open)(struct cusemu_req *r);
	/* A read's bytes. */
	void (*buf)(struct cusemu_req *r, const void *buf, size_t size);
	/* A write's count. */
	void (*write)(struct cusemu_req *r, size_t count);
	/* An ioctl's result, and the bytes to copy out to the caller. */
	void (*ioctl)(struct cusemu_req *r, int result, const void *buf,
		      size_t size);
	/* Ask the kernel to send the ioctl again with the caller's memory
	 * at these ranges (FUSE_IOCTL_RETRY). */
	void (*ioctl_retry)(struct cusemu_req *r, const struct iovec *in,
			    size_t in_count, const struct iovec *out,
			    size_t out_count);
	/* A poll's events. */
	void (*poll)(struct cusemu_req *r, unsigned int revents);
	/*
	 * While the node serves r, fn(data) when its caller gives up on it
	 * (a signal); fn NULL: no more. fn may be called from inside this
	 * call, when the caller gave up already.
	 */
	void (*interrupt)(struct cusemu_req *r, void (*fn)(void *data),
			  void *data);
	/*
	 * A poll handle (r->poll of a poll request), kept by the node past
	 * the request: tell the kernel to poll again, and let it go. Called
	 * outside any request, from any thread.
	 */
	void (*poll_notify)(void *poll);
	void (*poll_free)(void *poll);
	/*
	 * An ioctl request kept past the transport's callback, to be
	 * answered from another thread: a copy of r with its input bytes,
	 * holding what the transport holds while a request is inside the
	 * node, or NULL if it cannot be kept. NULL slot: none can. After
	 * the kept request's answer, drop() lets it go.
	 */
	struct cusemu_req *(*keep)(const struct cusemu_req *r);
	void (*drop)(struct cusemu_req *kept);
};

struct cusemu_req {
	const struct cusemu_req_ops *ops;
	void *data;		/* the transport's own request */

	/* Who asked: the calling thread, its user and group. */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	/* A 32-bit caller's ioctl (the kernel's FUSE_IOCTL_COMPAT). */
	bool compat;

	/* The open file: its handle (set by the node at open) and the file
	 * flags as of this request (open, read and write carry them). */
	uint64_t fh;
	int flags;

	/* ioctl: the command, its argument, and the caller's memory that
	 * came with the request, in_size bytes in, room for out_size out. */
	unsigned int cmd;
	uint64_t arg;
	const void *in;
	size_t in_size;
	size_t out_size;

	/* read: the bytes asked for; write: the bytes given. */
	size_t size;
	const char *buf;

	/* poll: the handle to notify later, or NULL; the node keeps it
	 * (and frees it with ops->poll_free) once handed over. */
	void *poll;
};

#endif
