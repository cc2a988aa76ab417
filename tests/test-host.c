/* SPDX-License-Identifier: MIT */
/*
 * What a model host says is untrusted: descriptions with wrong versions,
 * counts, strings, rows and order are refused, naming what is wrong, and
 * a good one is taken. The messages are written into a socket pair as a
 * host would (daemon/host.c reads them).
 */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "cusemu/device.h"
#include "host.h"
#include "proto.h"

struct desc {
	int sv[2];
};

static void desc_open(struct desc *d, uint32_t version, uint32_t n_models)
{
	struct host_hello_msg hello = { .type = HOST_MSG_HELLO,
					.version = version, .pid = 1,
					.n_models = n_models };

	g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, d->sv), ==, 0);
	g_assert_cmpint(send(d->sv[1], &hello, sizeof(hello), 0), ==,
			sizeof(hello));
}

static void put(struct desc *d, const void *msg, size_t len)
{
	g_assert_cmpint(send(d->sv[1], msg, len, 0), ==, (ssize_t)len);
}

static void model(struct desc *d, uint32_t index, const char *name,
		  uint32_t params, uint32_t rows)
{
	struct host_model_msg m = { .type = HOST_MSG_MODEL, .index = index,
				    .has_name = 1, .has_node_prefix = 1,
				    .n_params = params, .n_rows = { rows, 0 },
				    .has_table = { 1, 0 } };

	g_strlcpy(m.name, name, sizeof(m.name));
	g_strlcpy(m.node_prefix, name, sizeof(m.node_prefix));
	put(d, &m, sizeof(m));
}

static void row(struct desc *d, const char *name, uint32_t payload,
		uint32_t handler)
{
	struct host_row_msg r = { .type = HOST_MSG_ROW, .cmd = 0x80084500,
				  .payload = payload, .has_handler = handler };

	g_strlcpy(r.name, name, sizeof(r.name));
	put(d, &r, sizeof(r));
}

static void param(struct desc *d, const char *key)
{
	struct host_param_msg p = { .type = HOST_MSG_PARAM,
				    .param_type = CUSEMU_PARAM_UINT };

	g_strlcpy(p.key, key, sizeof(p.key));
	put(d, &p, sizeof(p));
}

static void ready(struct desc *d)
{
	uint32_t type = HOST_MSG_READY;

	put(d, &type, sizeof(type));
}

/* Read it, the writing end closed: NULL when taken, else the error. */
static char *check(struct desc *d)
{
	g_autoptr(GError) error = NULL;
	gboolean ok;

	close(d->sv[1]);
	ok = cusemu_host_check_description(d->sv[0], &error);
	close(d->sv[0]);
	g_assert_true(ok == (error == NULL));
	return ok ? NULL : g_strdup(error->message);
}

static void expect(struct desc *d, const char *what)
{
	g_autofree char *why = check(d);

	if (!why || !strstr(why, what))
		g_error("expected a refusal with '%s', got '%s'", what,
			why ? why : "(taken)");
}

static void test_good(void)
{
	struct desc d;
	g_autofree char *why = NULL;

	desc_open(&d, HOST_PROTO_VERSION, 1);
	model(&d, 0, "good", 1, 1);
	param(&d, "size");
	row(&d, "GOOD_GET", CUSEMU_PAYLOAD_IOC, 1);
	ready(&d);
	why = check(&d);
	g_assert_null(why);
}

static void test_refused(void)
{
	struct desc d;
	struct host_text_msg t = { .type = HOST_MSG_REFUSED };

	g_strlcpy(t.text, "it names no model", sizeof(t.text));
	g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, d.sv), ==, 0);
	put(&d, &t, sizeof(t));
	expect(&d, "it names no model");
}

static void test_version(void)
{
	struct desc d;

	desc_open(&d, HOST_PROTO_VERSION + 1, 1);
	expect(&d, "speaks another protocol");
	desc_open(&d, HOST_PROTO_VERSION, 0);
	expect(&d, "speaks another protocol");
	desc_open(&d, HOST_PROTO_VERSION, HOST_MODELS_MAX + 1);
	expect(&d, "speaks another protocol");
}

static void test_strings(void)
{
	struct desc d;
	struct host_model_msg m = { .type = HOST_MSG_MODEL, .has_name = 1 };

	desc_open(&d, HOST_PROTO_VERSION, 1);
	memset(m.name, 'x', sizeof(m.name));	/* no NUL */
	put(&d, &m, sizeof(m));
	expect(&d, "sent a malformed model");
}

static void test_counts(void)
{
	struct desc d;

	desc_open(&d, HOST_PROTO_VERSION, 1);
	model(&d, 1, "beyond", 0, 0);		/* index past n_models */
	expect(&d, "sent a malformed model");

	desc_open(&d, HOST_PROTO_VERSION, 1);
	model(&d, 0, "keys", 0, 0);
	param(&d, "one");			/* announced none */
	expect(&d, "more keys than it announced");

	desc_open(&d, HOST_PROTO_VERSION, 1);
	model(&d, 0, "rows", 0, 2);
	row(&d, "ONE", CUSEMU_PAYLOAD_IOC, 1);
	ready(&d);				/* one of two rows */
	expect(&d, "described its models in part");

	desc_open(&d, HOST_PROTO_VERSION, 2);
	model(&d, 0, "half", 0, 0);
	ready(&d);				/* one of two models */
	expect(&d, "described its models in part");
}

static void test_rows(void)
{
	struct desc d;

	desc_open(&d, HOST_PROTO_VERSION, 1);
	model(&d, 0, "nohandler", 0, 1);
	row(&d, "NONE", CUSEMU_PAYLOAD_NONE, 0);
	expect(&d, "a native row without a handler");

	desc_open(&d, HOST_PROTO_VERSION, 1);
	model(&d, 0, "payload", 0, 1);
	row(&d, "BAD", 7, 1);
	expect(&d, "sent a malformed table row");
}

static void test_order(void)
{
	struct desc d;
	struct host_event_msg e = { .type = HOST_MSG_WAKE_UP };

	desc_open(&d, HOST_PROTO_VERSION, 1);
	param(&d, "early");			/* before its model */
	expect(&d, "sent a malformed key");

	desc_open(&d, HOST_PROTO_VERSION, 1);
	put(&d, &e, sizeof(e));
	expect(&d, "sent a message out of place");

	desc_open(&d, HOST_PROTO_VERSION, 1);
	model(&d, 0, "cut", 0, 0);		/* then the host ends */
	expect(&d, "ended while it loaded the plugin");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/host/description/good", test_good);
	g_test_add_func("/host/description/refused", test_refused);
	g_test_add_func("/host/description/version", test_version);
	g_test_add_func("/host/description/strings", test_strings);
	g_test_add_func("/host/description/counts", test_counts);
	g_test_add_func("/host/description/rows", test_rows);
	g_test_add_func("/host/description/order", test_order);
	return g_test_run();
}
