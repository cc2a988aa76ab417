/* SPDX-License-Identifier: MIT */
/*
 * What the two libfuse transports (cuse.c, fusefs.c) share: the adapter
 * that turns libfuse's request into a struct cusemu_req (req.h) and its
 * replies back into libfuse's, a connection served from the pool by
 * libfuse's session, and libfuse's messages in the daemon's log. Nothing
 * outside transport/ sees libfuse.
 */
#ifndef CUSEMU_FUSE_COMMON_H
#define CUSEMU_FUSE_COMMON_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <glib.h>

#include "req.h"
#include "transport.h"

/* A libfuse request as the node sees it; on the adapter's stack. */
struct cusemu_fuse_req {
	struct cusemu_req pub;
	fuse_req_t req;
	struct fuse_file_info *fi;
	/* What the node asked to be called on the client's interrupt. */
	void (*interrupted)(void *data);
	void *interrupted_data;
	/* The transport's count of requests inside the node, which a kept
	 * request (req.h's keep) is counted in until dropped; or NULL. */
	gint *inside;
};

extern const struct cusemu_req_ops cusemu_fuse_req_ops;

/*
 * Fill r for libfuse's req on file fi (NULL for none): the caller, the
 * file's handle and flags. Inline: the adapter's frame is the only one
 * between libfuse's callback and the node.
 */
static inline struct cusemu_req *
cusemu_fuse_req(struct cusemu_fuse_req *r, fuse_req_t req,
		struct fuse_file_info *fi)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	r->pub = (struct cusemu_req){
		.ops = &cusemu_fuse_req_ops,
		.data = r,
		.pid = ctx->pid,
		.uid = ctx->uid,
		.gid = ctx->gid,
	};
	if (fi) {
		r->pub.fh = fi->fh;
		r->pub.flags = fi->flags;
	}
	r->req = req;
	r->fi = fi;
	r->inside = NULL;
	return &r->pub;
}

/* cusemu_fuse_req() for an ioctl, with its arguments as libfuse's ioctl
 * callbacks (CUSE's and FUSE's alike) give them. */
static inline struct cusemu_req *
cusemu_fuse_ioctl_req(struct cusemu_fuse_req *r, fuse_req_t req,
		      struct fuse_file_info *fi, unsigned int cmd, void *arg,
		      unsigned int flags, const void *in_buf, size_t in_bufsz,
		      size_t out_bufsz)
{
	struct cusemu_req *pub = cusemu_fuse_req(r, req, fi);

	pub->cmd = cmd;
	pub->arg = (uintptr_t)arg;
	pub->compat = flags & FUSE_IOCTL_COMPAT;
	pub->in = in_buf;
	pub->in_size = in_bufsz;
	pub->out_size = out_bufsz;
	return pub;
}

/* One libfuse session (a CUSE session, a mount) served from the pool. */
struct cusemu_fuse_conn {
	struct cusemu_conn conn;	/* first: the pool's and the stop's */
	struct fuse_session *se;
};

/* cusemu_conn_serve() of c's session, read by libfuse. */
gboolean cusemu_fuse_conn_serve(struct cusemu_fuse_conn *c, GError **error);

/* libfuse's messages into the daemon's log, under the domain "libfuse". */
void cusemu_fuse_log(void);

#endif
