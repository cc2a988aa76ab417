/* SPDX-License-Identifier: MIT */
/*
 * The in-process transport (test.h): a node per device, requests built by
 * the caller and answered into them, on the caller's thread. It passes
 * ioctls as CUSE does, unrestricted unless every command of the model is
 * correctly encoded.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <string.h>

#include <glib.h>

#include "device.h"
#include "test.h"

struct test_transport {
	struct cusemu_transport pub;
	GPtrArray *nodes;	/* struct cusemu_node, one per device */
};

static struct cusemu_test_req *test_req(struct cusemu_req *r)
{
	return r->data;
}

static void replied(struct cusemu_test_req *t, enum cusemu_test_reply kind)
{
	void (*fn)(void *data) = t->replied;

	g_assert_cmpint(t->kind, ==, CUSEMU_TEST_NONE);
	t->kind = kind;
	t->replied = NULL;
	if (fn)
		fn(t->replied_data);
}

static void reply_err(struct cusemu_req *r, int err)
{
	test_req(r)->error = err;
	replied(test_req(r), CUSEMU_TEST_ERR);
}

static void reply_open(struct cusemu_req *r)
{
	replied(test_req(r), CUSEMU_TEST_OPEN);
}

static void reply_buf(struct cusemu_req *r, const void *buf, size_t size)
{
	test_req(r)->buf = buf;
	test_req(r)->size = size;
	replied(test_req(r), CUSEMU_TEST_BUF);
}

static void reply_write(struct cusemu_req *r, size_t count)
{
	test_req(r)->size = count;
	replied(test_req(r), CUSEMU_TEST_WRITE);
}

static void reply_ioctl(struct cusemu_req *r, int result, const void *buf,
			size_t size)
{
	test_req(r)->result = result;
	test_req(r)->buf = buf;
	test_req(r)->size = size;
	replied(test_req(r), CUSEMU_TEST_IOCTL);
}

static void to_ranges(struct cusemu_user_ranges *set, const struct iovec *iov,
		      size_t count)
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

static void reply_ioctl_retry(struct cusemu_req *r, const struct iovec *in,
			      size_t in_count, const struct iovec *out,
			      size_t out_count)
{
	to_ranges(test_req(r)->in, in, in_count);
	to_ranges(test_req(r)->out, out, out_count);
	replied(test_req(r), CUSEMU_TEST_RETRY);
}

static void reply_poll(struct cusemu_req *r, unsigned int revents)
{
	test_req(r)->revents = revents;
	replied(test_req(r), CUSEMU_TEST_POLL);
}

static void set_interrupt(struct cusemu_req *r, void (*fn)(void *data),
			  void *data)
{
	test_req(r)->interrupted = fn;
	test_req(r)->interrupted_data = data;
}

static void poll_notify(void *poll)
{
	g_atomic_int_inc(&((struct cusemu_test_poll *)poll)->notified);
}

static void poll_free(void *poll)
{
	g_atomic_int_inc(&((struct cusemu_test_poll *)poll)->freed);
}

static const struct cusemu_req_ops test_req_ops = {
	.err = reply_err,
	.open = reply_open,
	.buf = reply_buf,
	.write = reply_write,
	.ioctl = reply_ioctl,
	.ioctl_retry = reply_ioctl_retry,
	.poll = reply_poll,
	.interrupt = set_interrupt,
	.poll_notify = poll_notify,
	.poll_free = poll_free,
};

void cusemu_test_req_init(struct cusemu_test_req *r, pid_t pid)
{
	memset(r, 0, sizeof(*r));
	r->req.ops = &test_req_ops;
	r->req.data = r;
	r->req.pid = pid;
}

static struct test_transport *test_of(struct cusemu_transport *t)
{
	return (struct test_transport *)t;
}

struct cusemu_node *cusemu_test_node(struct cusemu_transport *t,
				     const struct cusemu_device *dev)
{
	GPtrArray *nodes = test_of(t)->nodes;

	for (guint i = 0; i < nodes->len; i++) {
		struct cusemu_node *n = nodes->pdata[i];

		if (n->dev == dev)
			return n;
	}
	return NULL;
}

static gboolean test_check(const struct cusemu_transport_settings *s,
			   GPtrArray *devices, GError **error)
{
	return TRUE;
}

static gboolean test_serve(struct cusemu_transport *t,
			   struct cusemu_device *dev, GError **error)
{
	struct cusemu_node *n = g_new0(struct cusemu_node, 1);

	cusemu_node_init(n, dev, cusemu_node_cuse_ioctls(dev));
	g_ptr_array_add(test_of(t)->nodes, n);
	return TRUE;
}

static void node_free(gpointer data)
{
	cusemu_node_clear(data);
	g_free(data);
}

static gboolean test_start(const struct cusemu_transport_settings *s,
			   GPtrArray *devices, struct cusemu_transport **t,
			   GError **error)
{
	struct test_transport *tt = g_new0(struct test_transport, 1);

	tt->pub.ops = &cusemu_test_ops;
	tt->nodes = g_ptr_array_new_with_free_func(node_free);
	*t = &tt->pub;
	for (guint i = 0; i < devices->len; i++)
		test_serve(*t, devices->pdata[i], NULL);
	return TRUE;
}

/* No request is inside a node but the caller's own. */
static bool test_unserve(struct cusemu_transport *t, struct cusemu_device *dev)
{
	struct cusemu_node *n = cusemu_test_node(t, dev);

	if (n) {
		cusemu_node_close_files(n);
		g_ptr_array_remove(test_of(t)->nodes, n);
	}
	return true;
}

static char *test_path(const struct cusemu_transport *t,
		       const struct cusemu_device *dev)
{
	return g_strdup(dev->name);
}

static const char *test_ioctls(const struct cusemu_device *dev)
{
	return cusemu_node_cuse_ioctls_name(dev);
}

static const char *test_name(const struct cusemu_transport *t,
			     const char *path)
{
	return path;
}

static char *test_lost(struct cusemu_transport *t)
{
	return NULL;
}

static char *test_stopping(const struct cusemu_transport *t, unsigned int n)
{
	return g_strdup_printf("ending %u in-process node(s)", n);
}

/* The files still open are released, as at the end of a CUSE session. */
static void test_stop(struct cusemu_transport *t)
{
	GPtrArray *nodes = test_of(t)->nodes;

	for (guint i = 0; i < nodes->len; i++)
		cusemu_node_close_files(nodes->pdata[i]);
}

static void test_free(struct cusemu_transport *t)
{
	g_ptr_array_unref(test_of(t)->nodes);
	g_free(t);
}

const struct cusemu_transport_ops cusemu_test_ops = {
	.check = test_check,
	.start = test_start,
	.serve = test_serve,
	.unserve = test_unserve,
	.path = test_path,
	.ioctls = test_ioctls,
	.name = test_name,
	.lost = test_lost,
	.stopping = test_stopping,
	.stop = test_stop,
	.free = test_free,
};
