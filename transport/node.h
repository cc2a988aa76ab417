/* SPDX-License-Identifier: MIT */
/*
 * What every transport shares behind its own requests: a device's open
 * files, their pending retries, and the handlers that turn a request
 * (open, release, read, write, ioctl, poll: a struct cusemu_req, req.h)
 * on one device into a call of its model. The CUSE transport (cuse.c) has
 * one node per session; the FUSE one (fusefs.c) one per file of its mount.
 */
#ifndef CUSEMU_NODE_H
#define CUSEMU_NODE_H

#include <stdbool.h>
#include <sys/types.h>

#include <glib.h>

#include "req.h"
#include "request.h"

struct cusemu_device;

/* How the kernel passes an ioctl's memory to the node. */
enum cusemu_node_ioctls {
	/* CUSE unrestricted: any memory, through FUSE_IOCTL_RETRY. */
	CUSEMU_NODE_UNRESTRICTED,
	/* CUSE restricted: only the _IOC payload, which the tables say is
	 * all there is; a handler wanting more is a table bug (EIO). */
	CUSEMU_NODE_RESTRICTED,
	/* A file on a FUSE mount: only the _IOC payload, whatever the
	 * model; a command needing more gets EOPNOTSUPP, said once. */
	CUSEMU_NODE_FILE,
};

struct cusemu_node {
	struct cusemu_device *dev;
	enum cusemu_node_ioctls ioctls;
	struct cusemu_waiters waiters;	/* its waiting requests */
	GMutex lock;			/* guards files and refused */
	GList *files;			/* struct open_file, still open */
	/* FILE: commands already logged, of native and of 32-bit callers */
	GHashTable *refused[2];
	gint long_cpu;			/* the CPU of its last long call, or -1 */
};

/* How a CUSE node serves dev (and the test transport, which plays one):
 * restricted when every command of its model is _IOC-encoded with no
 * pointer inside, else unrestricted; and the name cusemuctl shows. */
enum cusemu_node_ioctls cusemu_node_cuse_ioctls(const struct cusemu_device *dev);
const char *cusemu_node_cuse_ioctls_name(const struct cusemu_device *dev);

/* Also sets the device's wake_up to notify the node's pollers. */
void cusemu_node_init(struct cusemu_node *n, struct cusemu_device *dev,
		      enum cusemu_node_ioctls ioctls);
/*
 * cusemuctl reload: dev takes the place of the node's device. Files open
 * on the old one get ENODEV from now on, and the old instance is freed
 * (its model's ->remove called) once the last of them is released. The
 * node must be able to serve dev (cusemu_node_can_serve()).
 */
void cusemu_node_replace(struct cusemu_node *n, struct cusemu_device *dev);
/* Whether the node's kind of ioctls serves dev: a CUSE session opened
 * restricted cannot serve a model that needs memory its commands' _IOC
 * bits do not describe. */
bool cusemu_node_can_serve(const struct cusemu_node *n,
			   const struct cusemu_device *dev);

/* Release the files still open (the kernel sends no release for them at
 * a shutdown); no request may be inside the node any more. */
void cusemu_node_close_files(struct cusemu_node *n);
void cusemu_node_clear(struct cusemu_node *n);

/*
 * The requests, each answered once through req->ops. Open sets req->fh,
 * which the other requests of that file carry; the file is direct I/O
 * and not seekable.
 */
void cusemu_node_open(struct cusemu_node *n, struct cusemu_req *req);
void cusemu_node_release(struct cusemu_node *n, struct cusemu_req *req);
void cusemu_node_read(struct cusemu_node *n, struct cusemu_req *req);
void cusemu_node_write(struct cusemu_node *n, struct cusemu_req *req);
void cusemu_node_ioctl(struct cusemu_node *n, struct cusemu_req *req);
void cusemu_node_poll(struct cusemu_node *n, struct cusemu_req *req);

/*
 * The text of the attribute path of the node's device (struct cusemu_attr
 * of <cusemu/device.h>), read for pid into buf, at most size bytes: its
 * length, or -errno: ENOENT when its model has none of that path (a reload
 * may change the model), EIO when the model faulted in it or is fenced.
 */
ssize_t cusemu_node_show(struct cusemu_node *n, const char *path, pid_t pid,
			 char *buf, size_t size);

#endif
