/* SPDX-License-Identifier: MIT */
/*
 * A transport carries the kernel's requests for the devices to their nodes
 * (node.h), each turned into a struct cusemu_req (req.h): CUSE, one
 * session and one /dev node per device (cuse.c), or FUSE, one mount with a
 * file per device (fusefs.c). The list of transports cusemud serves
 * through is transports.c's; main.c picks one by its settings, once, and
 * knows it only through the table below. Each transport brings its own
 * settings: the configuration keys and options of its table's keys. Here
 * too is what the transports share: their connections are served by the
 * workers of pool.h through one serve loop, and ended through one shutdown
 * loop.
 */
#ifndef CUSEMU_TRANSPORT_H
#define CUSEMU_TRANSPORT_H

#include <stdbool.h>

#include <glib.h>

#include "cusemu/device.h"
#include "pool.h"

struct cusemu_sandbox;

/* What every transport is started with. */
struct cusemu_transport_settings {
	unsigned int workers;		/* the pool's size */
	bool debug;			/* libfuse's request trace */
	/* The daemon's: who it runs as later; the FUSE unmounter's seal. */
	struct cusemu_sandbox *sandbox;
	/* The transport's own, as its configure() made them. */
	void *own;
};

/*
 * One setting of a transport's own: a key of the configuration's [daemon]
 * group, and the command-line option that wins over it.
 */
struct cusemu_transport_key {
	const char *key;	/* in [daemon], e.g. "allow_other" */
	const char *option;	/* its --OPTION, e.g. "allow-other" */
	bool flag;		/* the option takes no value: "true" if given */
	bool filename;		/* the option's value is a file name */
	const char *arg;	/* the option's value in --help, e.g. "DIR" */
	const char *help;	/* the option's line in --help */
};

/* A key's value, the command line's over the file's. */
struct cusemu_transport_value {
	const char *value;	/* NULL: neither gives one */
	const char *origin;	/* where: "--OPTION", or the file and line */
};

/* A running transport: embedded first in each one's own state. */
struct cusemu_transport {
	const struct cusemu_transport_ops *ops;
};

/*
 * Each slot means one thing; all are called on the main thread. devices
 * are struct cusemu_device, their dispatch bound, in the order given.
 */
struct cusemu_transport_ops {
	const char *kind;	/* e.g. "fuse": in cusemuctl models --json */
	/* Its settings, up to one with a NULL key; NULL: none. */
	const struct cusemu_transport_key *keys;
	/* A paragraph of cusemud --help about it, or NULL. */
	const char *help;
	/*
	 * Its own settings, from the values of its keys (values[i] is
	 * keys[i]'s): set *own, newly allocated, when they ask for this
	 * transport (the first of the list needs not be asked for); FALSE
	 * with an error for a value it refuses. s is the shared settings.
	 */
	gboolean (*configure)(const struct cusemu_transport_settings *s,
			      const struct cusemu_transport_value *values,
			      void **own, GError **error);
	/* Frees what configure() set in *own. */
	void (*settings_free)(void *own);
	/* What it serves of model m, a line for people ("serves fully"), or
	 * NULL when it serves every model alike; its label in --help. */
	char *(*fitness)(const struct cusemu_device_model *m);
	const char *fitness_label;
	/* Whether this host can serve devices so (before start): FALSE with
	 * what to do about it. */
	gboolean (*check)(const struct cusemu_transport_settings *s,
			  GPtrArray *devices, GError **error);
	/*
	 * Serve devices; each can be opened once this returns TRUE. *t is
	 * set once there is something to stop and free, even on FALSE.
	 */
	gboolean (*start)(const struct cusemu_transport_settings *s,
			  GPtrArray *devices, struct cusemu_transport **t,
			  GError **error);
	/* cusemuctl add: serve dev too, there once this returns. */
	gboolean (*serve)(struct cusemu_transport *t,
			  struct cusemu_device *dev, GError **error);
	/*
	 * cusemuctl remove: dev's node or file goes, its open files fail,
	 * and no request is inside it once this returns true; false when
	 * requests do not end (the device must then stay as it is).
	 */
	bool (*unserve)(struct cusemu_transport *t, struct cusemu_device *dev);
	/* Where clients find dev: its node or its file (newly allocated). */
	char *(*path)(const struct cusemu_transport *t,
		      const struct cusemu_device *dev);
	/* How the kernel passes dev's ioctls: "restricted", "unrestricted"
	 * (CUSE) or "fuse". */
	const char *(*ioctls)(const struct cusemu_device *dev);
	/* The name in a path clients use (PATH as path() gives it, or NAME),
	 * a pointer into it. */
	const char *(*name)(const struct cusemu_transport *t, const char *path);
	/* Why the transport can serve no more (the kernel dropped it), newly
	 * allocated; NULL while it serves. */
	char *(*lost)(struct cusemu_transport *t);
	/* What a stop of n devices does, for the log. */
	char *(*stopping)(const struct cusemu_transport *t, unsigned int n);
	/* End every request and connection: nodes go, files fail. */
	void (*stop)(struct cusemu_transport *t);
	/* What is left, once the pool has stopped. */
	void (*free)(struct cusemu_transport *t);
};

/*
 * The transports cusemud serves through (transports.c), up to NULL; the
 * first is the one used when the settings ask for no other.
 */
extern const struct cusemu_transport_ops *const cusemu_transports[];

/* The value of key k, and where it came from; NULL when none is given. */
typedef const char *cusemu_transport_value_fn(
	const struct cusemu_transport_key *k, const char **origin, void *data);

/*
 * Every transport of the list configured from the values of its keys,
 * which value(key, &origin, data) gives; the one the settings ask for,
 * its own settings in s->own. NULL with an error for a value a transport
 * refuses.
 */
const struct cusemu_transport_ops *
cusemu_transport_choose(struct cusemu_transport_settings *s,
			cusemu_transport_value_fn *value, void *data,
			GError **error);
/* Free s->own, as ops configured it; ops may be NULL. */
void cusemu_transport_settings_clear(const struct cusemu_transport_ops *ops,
				     struct cusemu_transport_settings *s);

/*
 * A key's value as a transport reads it. A count from 1 to max (*n left
 * when text is NULL), hint saying what to write instead; a boolean: true,
 * yes or 1, false, no or 0 (*b left when text is NULL). The errors begin
 * with origin and name the key.
 */
gboolean cusemu_setting_count(const char *text, const char *origin,
			      const char *key, guint64 max, const char *hint,
			      guint64 *n, GError **error);
gboolean cusemu_setting_bool(const char *text, const char *origin,
			     const char *key, gboolean *b, GError **error);

/*
 * cusemuctl reload: whether dev, a fresh instance of old's device, can
 * take its place where it is served (FALSE with why not); and its taking
 * it (cusemu_node_replace()).
 */
gboolean cusemu_transport_can_replace(const struct cusemu_device *old,
				      const struct cusemu_device *dev,
				      GError **error);
void cusemu_transport_replace(struct cusemu_device *old,
			      struct cusemu_device *dev);

/* ops->start, with the pool sized first. */
gboolean cusemu_transport_start(const struct cusemu_transport_ops *ops,
				const struct cusemu_transport_settings *s,
				GPtrArray *devices, struct cusemu_transport **t,
				GError **error);
/* The one shutdown: ops->stop, then the workers end; t may be NULL. */
void cusemu_transport_stop(struct cusemu_transport *t);
/* ops->free, once the devices' models have stopped their own threads
 * (they may call cusemu_device_wake_up() until then); t may be NULL. */
void cusemu_transport_free(struct cusemu_transport *t);

/*
 * For the transports: one connection to the kernel (a CUSE session, a
 * mount) served from the pool: source.fd is its descriptor. Embedded in a
 * transport's own state.
 */
struct cusemu_conn {
	struct cusemu_pool_source source;	/* first: the pool's */
	const char *what;	/* its node or mount, for messages */
	/*
	 * The pool's take() on source.fd: wait for a request and serve it;
	 * 1, 0 if none came, -1 once the connection has ended: *res is then
	 * why (0: the kernel dropped it, or it was told to exit; else
	 * -errno).
	 */
	int (*take)(struct cusemu_conn *c, int *res);
	/* Tell its loop to end, before the stop waits out its requests. */
	void (*exit)(struct cusemu_conn *c);
	/* Ends waits in the sleep helpers of the requests inside it. */
	void (*end_waits)(struct cusemu_conn *c);
	/* The loop ended by itself: res is take's (0: unmounted, or
	 * the kernel dropped it). */
	void (*ended)(struct cusemu_conn *c, int res);
	gint done;		/* ended, or stopped */
	bool stuck;		/* a stop could not end its requests */
	bool free_later;	/* freed once the pool has stopped */
	void (*free)(struct cusemu_conn *c);
};

/* Called once before the first connection: the size of the worker pool. */
void cusemu_transport_init(unsigned int workers);
/*
 * Serve c's descriptor from the pool (started on first use); the
 * descriptor becomes blocking. FALSE with an error that begins with
 * c->what. c->free frees it later (cusemu_conn_release()).
 */
gboolean cusemu_conn_serve(struct cusemu_conn *c, GError **error);
/* True once its loop has ended, or it was stopped. */
bool cusemu_conn_done(struct cusemu_conn *c);
/*
 * No worker takes its requests any more; those inside one have ended
 * (their waits interrupted as if their clients had given up). False
 * after 10 s: it is then stuck, and never freed.
 */
bool cusemu_conn_stop(struct cusemu_conn *c);
/* Free it (c->free) once no worker can reach it: now, or when the pool
 * stops. */
void cusemu_conn_release(struct cusemu_conn *c);

#endif
