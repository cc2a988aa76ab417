/* SPDX-License-Identifier: MIT */
/*
 * The kernel's CUSE of fake-cuse.h: the requests it sends a device's node,
 * built for the in-process transport (transport/test.h), and the kernel's
 * half of an ioctl (fs/fuse/ioctl.c) following the node's answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#include <glib.h>

#include "fake-cuse.h"
#include "test.h"

/* The kernel gives up on a server that keeps asking; so do we. */
#define MAX_ROUNDS 16
#define MAX_FILES 16
/* The kernel's flags of an ioctl request (include/uapi/linux/fuse.h). */
#define FUSE_IOCTL_COMPAT (1 << 0)
#define FUSE_IOCTL_UNRESTRICTED (1 << 1)
#define FUSE_IOCTL_32BIT (1 << 3)

struct fake_cuse {
	struct cusemu_transport *t;
	struct cusemu_node *node;
	/* Called once, at the next reply, as the client would go on then. */
	void (*on_reply)(void *data);
	void *on_reply_data;
	uint64_t fh[MAX_FILES];
	bool open[MAX_FILES];
};

/* A request of thread pid on file fh (-1: none yet), with the reply hook. */
static void request(struct fake_cuse *fc, struct cusemu_test_req *r, int fh,
		    pid_t pid)
{
	cusemu_test_req_init(r, pid);
	if (fh >= 0)
		r->req.fh = fc->fh[fh];
	r->req.flags = O_RDWR;
	r->replied = fc->on_reply;
	r->replied_data = fc->on_reply_data;
	fc->on_reply = NULL;
}

/*
 * fuse_dev_do_write() refuses an error outside 0 to 511 (EINVAL to the
 * daemon), and the request stays unanswered.
 */
static bool refused(const struct cusemu_test_req *r)
{
	return r->kind == CUSEMU_TEST_ERR && (r->error < 0 || r->error > 511);
}

struct fake_cuse *fake_cuse_start(struct cusemu_device *dev)
{
	static const struct cusemu_transport_settings settings = {
		.workers = 4,
	};
	struct fake_cuse *fc = g_new0(struct fake_cuse, 1);
	g_autoptr(GPtrArray) devices = g_ptr_array_new();
	g_autoptr(GError) error = NULL;

	g_ptr_array_add(devices, dev);
	g_assert_true(cusemu_test_ops.check(&settings, devices, &error));
	g_assert_true(cusemu_test_ops.start(&settings, devices, &fc->t,
					    &error));
	g_assert_no_error(error);
	fc->node = cusemu_test_node(fc->t, dev);
	g_assert_nonnull(fc->node);
	return fc;
}

void fake_cuse_stop(struct fake_cuse *fc)
{
	fc->t->ops->stop(fc->t);
	fc->t->ops->free(fc->t);
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
	return fc->node->ioctls == CUSEMU_NODE_UNRESTRICTED;
}

int fake_cuse_open(struct fake_cuse *fc, pid_t pid)
{
	struct cusemu_test_req r;
	int fh;

	for (fh = 0; fh < MAX_FILES && fc->open[fh]; fh++)
		;
	g_assert_cmpint(fh, <, MAX_FILES);
	request(fc, &r, -1, pid);
	cusemu_node_open(fc->node, &r.req);
	if (refused(&r))
		return FAKE_UNANSWERED;
	if (r.kind == CUSEMU_TEST_ERR)
		return -r.error;
	g_assert_cmpint(r.kind, ==, CUSEMU_TEST_OPEN);
	fc->fh[fh] = r.req.fh;
	fc->open[fh] = true;
	return fh;
}

void fake_cuse_release(struct fake_cuse *fc, int fh)
{
	struct cusemu_test_req r;

	request(fc, &r, fh, 0);
	cusemu_node_release(fc->node, &r.req);
	g_assert_cmpint(r.kind, ==, CUSEMU_TEST_ERR);
	g_assert_cmpint(r.error, ==, 0);
	fc->open[fh] = false;
}

ssize_t fake_cuse_read(struct fake_cuse *fc, int fh, void *buf, size_t size)
{
	struct cusemu_test_req r;

	request(fc, &r, fh, 0);
	r.req.size = size;
	cusemu_node_read(fc->node, &r.req);
	if (refused(&r))
		return FAKE_UNANSWERED;
	if (r.kind == CUSEMU_TEST_ERR)
		return -r.error;
	g_assert_cmpint(r.kind, ==, CUSEMU_TEST_BUF);
	/* fuse_dev_do_write(): more than the request's room is an error. */
	if (r.size > size)
		return -EIO;
	memcpy(buf, r.buf, r.size);
	return (ssize_t)r.size;
}

ssize_t fake_cuse_write(struct fake_cuse *fc, int fh, const void *buf,
			size_t size)
{
	struct cusemu_test_req r;

	request(fc, &r, fh, 0);
	r.req.buf = buf;
	r.req.size = size;
	cusemu_node_write(fc->node, &r.req);
	if (refused(&r))
		return FAKE_UNANSWERED;
	if (r.kind == CUSEMU_TEST_ERR)
		return -r.error;
	g_assert_cmpint(r.kind, ==, CUSEMU_TEST_WRITE);
	/* fuse_send_write(): a count above what was sent is an error. */
	if (r.size > size)
		return -EIO;
	return (ssize_t)r.size;
}

unsigned int fake_cuse_poll(struct fake_cuse *fc, int fh,
			    struct cusemu_test_poll *ph)
{
	struct cusemu_test_req r;

	request(fc, &r, fh, 0);
	r.req.poll = ph;
	cusemu_node_poll(fc->node, &r.req);
	g_assert_cmpint(r.kind, ==, CUSEMU_TEST_POLL);
	return r.revents;
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
	struct cusemu_test_req r;

	request(fc, &r, fh, tid);
	r.req.cmd = cmd;
	r.req.arg = arg;
	r.req.compat = flags & FUSE_IOCTL_COMPAT;
	r.req.in = in_buf;
	r.req.in_size = in_size;
	r.req.out_size = out_size;
	r.in = reply->in;
	r.out = reply->out;
	cusemu_node_ioctl(fc->node, &r.req);
	if (refused(&r)) {
		reply->kind = FAKE_REPLY_REFUSED;
		return;
	}
	switch (r.kind) {
	case CUSEMU_TEST_ERR:
		reply->kind = FAKE_REPLY_ERR;
		reply->error = r.error;
		break;
	case CUSEMU_TEST_IOCTL:
		reply->kind = FAKE_REPLY_IOCTL;
		reply->result = r.result;
		reply->buf = r.buf;
		reply->size = r.size;
		break;
	case CUSEMU_TEST_RETRY:
		reply->kind = FAKE_REPLY_RETRY;
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
