/* SPDX-License-Identifier: MIT */
/*
 * The fake libfuse of fake-fuse.h: the libfuse functions the transport
 * calls, defined here so that the test binary needs no /dev/cuse, and the
 * kernel's half of an ioctl (fs/fuse/ioctl.c) driving the captured
 * operations.
 */
#define FUSE_USE_VERSION 314

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>
#include <glib.h>

#include "fake-fuse.h"

/* The kernel gives up on a server that keeps asking; so do we. */
#define MAX_ROUNDS 16
#define MAX_FILES 16
/* The kernel's flag for 32-bit callers; libfuse's header lacks it. */
#define FUSE_IOCTL_32BIT (1 << 3)

struct fuse_session {
	const struct cuse_lowlevel_ops *ops;
	void *userdata;
	unsigned int ci_flags;
	bool exited;
};

struct fake_cuse {
	struct fuse_session se;
	/* Called once, at the next reply, as the client would go on then. */
	void (*on_reply)(void *data);
	void *on_reply_data;
	struct cusemu_session *session;
	struct fuse_file_info files[MAX_FILES];
	bool open[MAX_FILES];
};

enum reply_kind {
	REPLY_NONE, REPLY_REFUSED, REPLY_ERR, REPLY_OPEN, REPLY_IOCTL, REPLY_RETRY,
	REPLY_BUF, REPLY_WRITE,
};

/* One request, and the reply the daemon gave it. */
struct fuse_req {
	struct fuse_session *se;
	struct fuse_ctx ctx;
	enum reply_kind kind;
	int error;
	int result;
	const void *buf;	/* the daemon's reply bytes, still valid */
	size_t size;
	struct cusemu_user_ranges *in, *out;	/* a retry's ranges */
};

/*
 * A reply has gone to the kernel: the client goes on at once, maybe on
 * another worker of the daemon, while the replying one still runs.
 */
static void replied(fuse_req_t req)
{
	struct fake_cuse *fc = (struct fake_cuse *)((char *)req->se -
						 G_STRUCT_OFFSET(struct fake_cuse, se));
	void (*fn)(void *data) = fc->on_reply;

	fc->on_reply = NULL;
	if (fn)
		fn(fc->on_reply_data);
}

/* The session the transport's cuse_lowlevel_setup() is setting up. */
static struct fake_cuse *starting;

struct fuse_session *cuse_lowlevel_setup(int argc, char *argv[],
					 const struct cuse_info *ci,
					 const struct cuse_lowlevel_ops *clop,
					 int *multithreaded, void *userdata)
{
	struct fuse_session *se = &starting->se;

	se->ops = clop;
	se->userdata = userdata;
	se->ci_flags = ci->flags;
	*multithreaded = 1;
	return se;
}

void fuse_session_destroy(struct fuse_session *se)
{
}

void fuse_set_log_func(fuse_log_func_t func)
{
}

/* No kernel behind it: a descriptor that polls as nothing to read. */
int fuse_session_fd(struct fuse_session *se)
{
	return -1;
}

void fuse_remove_signal_handlers(struct fuse_session *se)
{
}

/* Never called: the session has no descriptor for the workers to read. */
int fuse_session_receive_buf(struct fuse_session *se, struct fuse_buf *buf)
{
	return 0;
}

void fuse_session_process_buf(struct fuse_session *se,
			      const struct fuse_buf *buf)
{
}

void fuse_session_exit(struct fuse_session *se)
{
	se->exited = true;
}

void *fuse_req_userdata(fuse_req_t req)
{
	return req->se->userdata;
}

const struct fuse_ctx *fuse_req_ctx(fuse_req_t req)
{
	return &req->ctx;
}

void fuse_req_interrupt_func(fuse_req_t req, fuse_interrupt_func_t func,
			     void *data)
{
}

/*
 * fuse_dev_do_write() refuses an error outside 0 to 511 (EINVAL to the
 * daemon), and the request stays unanswered.
 */
int fuse_reply_err(fuse_req_t req, int err)
{
	if (err < 0 || err > 511) {
		req->kind = REPLY_REFUSED;
		return -EINVAL;
	}
	req->kind = REPLY_ERR;
	req->error = err;
	replied(req);
	return 0;
}

int fuse_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	req->kind = REPLY_OPEN;
	replied(req);
	return 0;
}

int fuse_reply_ioctl(fuse_req_t req, int result, const void *buf, size_t size)
{
	req->kind = REPLY_IOCTL;
	req->result = result;
	req->buf = buf;
	req->size = size;
	replied(req);
	return 0;
}

static void iov_to_ranges(struct cusemu_user_ranges *set,
			  const struct iovec *iov, size_t count)
{
	set->count = 0;
	set->bytes = 0;
	for (size_t i = 0; i < count; i++) {
		set->r[i] = (struct cusemu_user_range){
			.addr = (uintptr_t)iov[i].iov_base,
			.len = (uint32_t)iov[i].iov_len,
			.off = set->bytes,
		};
		set->bytes += (uint32_t)iov[i].iov_len;
		set->count++;
	}
}

int fuse_reply_ioctl_retry(fuse_req_t req, const struct iovec *in_iov,
			   size_t in_count, const struct iovec *out_iov,
			   size_t out_count)
{
	req->kind = REPLY_RETRY;
	iov_to_ranges(req->in, in_iov, in_count);
	iov_to_ranges(req->out, out_iov, out_count);
	replied(req);
	return 0;
}

int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	req->kind = REPLY_BUF;
	req->buf = buf;
	req->size = size;
	replied(req);
	return 0;
}

int fuse_reply_write(fuse_req_t req, size_t count)
{
	req->kind = REPLY_WRITE;
	req->size = count;
	replied(req);
	return 0;
}

/* Poll is not what this fake is for. */
int fuse_reply_poll(fuse_req_t req, unsigned revents)
{
	g_assert_not_reached();
}

int fuse_lowlevel_notify_poll(struct fuse_pollhandle *ph)
{
	return 0;
}

void fuse_pollhandle_destroy(struct fuse_pollhandle *ph)
{
}

struct fake_cuse *fake_cuse_start(struct cusemu_device *dev)
{
	static const struct cusemu_session_options opts = { 0 };
	struct fake_cuse *fc = g_new0(struct fake_cuse, 1);
	g_autoptr(GError) error = NULL;

	starting = fc;
	fc->session = cusemu_session_start(dev, &opts, &error);
	starting = NULL;
	g_assert_no_error(error);
	return fc;
}

void fake_cuse_stop(struct fake_cuse *fc)
{
	cusemu_session_stop(fc->session);
	cusemu_session_free(fc->session);
	g_free(fc);
}

void fake_cuse_on_reply(struct fake_cuse *fc, void (*fn)(void *data),
			void *data)
{
	fc->on_reply = fn;
	fc->on_reply_data = data;
}

bool fake_cuse_unrestricted(const struct fake_cuse *fc)
{
	return fc->se.ci_flags & CUSE_UNRESTRICTED_IOCTL;
}

int fake_cuse_open(struct fake_cuse *fc, pid_t pid)
{
	struct fuse_req req = { .se = &fc->se, .ctx = { .pid = pid } };
	int fh;

	for (fh = 0; fh < MAX_FILES && fc->open[fh]; fh++)
		;
	g_assert_cmpint(fh, <, MAX_FILES);
	memset(&fc->files[fh], 0, sizeof(fc->files[fh]));
	fc->files[fh].flags = O_RDWR;
	fc->se.ops->open(&req, &fc->files[fh]);
	if (req.kind == REPLY_REFUSED)
		return FAKE_UNANSWERED;
	if (req.kind == REPLY_ERR)
		return -req.error;
	g_assert_cmpint(req.kind, ==, REPLY_OPEN);
	fc->open[fh] = true;
	return fh;
}

void fake_cuse_release(struct fake_cuse *fc, int fh)
{
	struct fuse_req req = { .se = &fc->se };

	fc->se.ops->release(&req, &fc->files[fh]);
	g_assert_cmpint(req.kind, ==, REPLY_ERR);
	fc->open[fh] = false;
}

ssize_t fake_cuse_read(struct fake_cuse *fc, int fh, void *buf, size_t size)
{
	struct fuse_req req = { .se = &fc->se };

	fc->se.ops->read(&req, size, 0, &fc->files[fh]);
	if (req.kind == REPLY_REFUSED)
		return FAKE_UNANSWERED;
	if (req.kind == REPLY_ERR)
		return -req.error;
	g_assert_cmpint(req.kind, ==, REPLY_BUF);
	/* fuse_dev_do_write(): more than the request's room is an error. */
	if (req.size > size)
		return -EIO;
	memcpy(buf, req.buf, req.size);
	return (ssize_t)req.size;
}

ssize_t fake_cuse_write(struct fake_cuse *fc, int fh, const void *buf,
			size_t size)
{
	struct fuse_req req = { .se = &fc->se };

	fc->se.ops->write(&req, buf, size, 0, &fc->files[fh]);
	if (req.kind == REPLY_REFUSED)
		return FAKE_UNANSWERED;
	if (req.kind == REPLY_ERR)
		return -req.error;
	g_assert_cmpint(req.kind, ==, REPLY_WRITE);
	/* fuse_send_write(): a count above what was sent is an error. */
	if (req.size > size)
		return -EIO;
	return (ssize_t)req.size;
}

/* What a restricted ioctl sends: the payload the _IOC bits describe. */
static void ioc_ranges(struct cusemu_user_ranges *in,
		       struct cusemu_user_ranges *out, unsigned int cmd,
		       cusemu_uptr_t arg)
{
	struct iovec iov = { (void *)(uintptr_t)arg, _IOC_SIZE(cmd) };

	iov_to_ranges(in, &iov, _IOC_DIR(cmd) & _IOC_WRITE ? 1 : 0);
	iov_to_ranges(out, &iov, _IOC_DIR(cmd) & _IOC_READ ? 1 : 0);
}

void fake_cuse_request(struct fake_cuse *fc, int fh, pid_t tid,
		       unsigned int flags, unsigned int cmd, cusemu_uptr_t arg,
		       const void *in_buf, size_t in_size, size_t out_size,
		       struct fake_reply *reply)
{
	struct fuse_req req = {
		.se = &fc->se, .ctx = { .pid = tid },
		.in = reply->in, .out = reply->out,
	};

	fc->se.ops->ioctl(&req, (int)cmd, (void *)(uintptr_t)arg,
			  &fc->files[fh], flags, in_buf, in_size, out_size);
	switch (req.kind) {
	case REPLY_ERR:
		reply->kind = FAKE_REPLY_ERR;
		reply->error = req.error;
		break;
	case REPLY_IOCTL:
		reply->kind = FAKE_REPLY_IOCTL;
		reply->result = req.result;
		reply->buf = req.buf;
		reply->size = req.size;
		break;
	case REPLY_RETRY:
		reply->kind = FAKE_REPLY_RETRY;
		break;
	case REPLY_REFUSED:
		reply->kind = FAKE_REPLY_REFUSED;
		break;
	default:
		g_error("the daemon did not answer ioctl %08x", cmd);
	}
}

long fake_cuse_ioctl(struct fake_cuse *fc, int fh, struct fake_client *c,
		     pid_t tid, unsigned int cmd, cusemu_uptr_t arg,
		     unsigned int *requests)
{
	static struct cusemu_user_ranges in, out;
	static uint8_t in_buf[CUSEMU_USER_MAX_BYTES];
	bool unrestricted = fake_cuse_unrestricted(fc);
	unsigned int flags = unrestricted ? FUSE_IOCTL_UNRESTRICTED : 0;
	struct fake_reply reply = { .in = &in, .out = &out };
	int err;

	if (c->compat)
		flags |= FUSE_IOCTL_COMPAT | FUSE_IOCTL_32BIT;
	if (unrestricted)
		in.count = in.bytes = out.count = out.bytes = 0;
	else
		ioc_ranges(&in, &out, cmd, arg);
	*requests = 0;
	for (unsigned int round = 0; round < MAX_ROUNDS; round++) {
		err = fake_gather(c, &in, in_buf);
		if (err)
			return err;
		++*requests;
		fake_cuse_request(fc, fh, tid, flags, cmd, arg, in_buf, in.bytes,
				  out.bytes, &reply);
		switch (reply.kind) {
		case FAKE_REPLY_RETRY:
			if (!unrestricted)
				return -EIO;
			err = fake_check_ranges(c, &in) ?:
			      fake_check_ranges(c, &out);
			if (err)
				return err;
			continue;
		case FAKE_REPLY_REFUSED:
			return FAKE_UNANSWERED;
		case FAKE_REPLY_ERR:
			/* fs/fuse turns ENOSYS into ENOTTY. */
			return reply.error == ENOSYS ? -ENOTTY : -reply.error;
		case FAKE_REPLY_IOCTL:
			if (reply.size > out.bytes)
				return -EIO;
			err = fake_scatter(c, &out, reply.buf,
					   (uint32_t)reply.size);
			return err ? err : reply.result;
		}
	}
	return -EIO;
}
