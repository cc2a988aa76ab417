/* SPDX-License-Identifier: MIT */
/*
 * The in-process transport of the unit tests: no kernel and no thread of
 * its own. A test builds each request as a struct cusemu_test_req, hands
 * it to the node of a device (cusemu_node_open(), _ioctl(), ...) on its
 * own thread, and finds the answer in it. Started through its table, as
 * cusemud starts the others, from struct cusemu_transport_settings.
 */
#ifndef CUSEMU_TEST_H
#define CUSEMU_TEST_H

#include <glib.h>

#include "call.h"
#include "node.h"
#include "req.h"
#include "transport.h"

extern const struct cusemu_transport_ops cusemu_test_ops;

/* The node that serves dev, to hand requests to; NULL if none does. */
struct cusemu_node *cusemu_test_node(struct cusemu_transport *t,
				     const struct cusemu_device *dev);

/* How the node answered. */
enum cusemu_test_reply {
	CUSEMU_TEST_NONE,	/* not (yet) */
	CUSEMU_TEST_ERR,
	CUSEMU_TEST_OPEN,
	CUSEMU_TEST_BUF,
	CUSEMU_TEST_WRITE,
	CUSEMU_TEST_IOCTL,
	CUSEMU_TEST_RETRY,
	CUSEMU_TEST_POLL,
};

/* A poll handle: what the node did with it. */
struct cusemu_test_poll {
	gint notified;
	gint freed;
};

struct cusemu_test_req {
	/* What the test fills in; cusemu_test_req_init() sets its ops. */
	struct cusemu_req req;
	enum cusemu_test_reply kind;
	int error;		/* ERR: the errno as given, whatever it is */
	int result;		/* IOCTL */
	/* BUF and IOCTL: the bytes, valid until the thread's next request;
	 * size also WRITE's count. */
	const void *buf;
	size_t size;
	unsigned int revents;	/* POLL */
	/* RETRY: the ranges asked for, written to the test's room. */
	struct cusemu_user_ranges *in, *out;
	/*
	 * Called once, inside the reply, as a client that goes on as soon as
	 * it is answered (closing its file, say) races the worker that
	 * answered it.
	 */
	void (*replied)(void *data);
	void *replied_data;
	/* While the node serves it: what the client's interrupt calls. */
	void (*interrupted)(void *data);
	void *interrupted_data;
};

/* An empty request of thread pid, its answer NONE. */
void cusemu_test_req_init(struct cusemu_test_req *r, pid_t pid);

#endif
