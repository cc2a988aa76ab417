/* SPDX-License-Identifier: MIT */
/*
 * The model host's own parts (cusemu-host): the socket to the daemon, the
 * copies of the daemon's devices and files that the model's code sees, and
 * the call a channel thread serves.
 */
#ifndef CUSEMU_HOST_H
#define CUSEMU_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "call.h"
#include "instance.h"
#include "proto.h"
#include "request.h"

/* A device of the daemon, as the model sees it. */
struct host_dev {
	struct cusemu_instance inst;	/* first: cusemu_instance() finds it */
	uint64_t id;
	char *kernel;			/* its kernel model's name */
	unsigned int kernel_version;	/* and that model's version */
	bool in_probe;
	bool methods_set;
	unsigned int methods;
	char *default_name;
};

/* A call channel, served by one thread of the host. */
struct host_channel {
	int id;
	int sock;
	struct host_shm *shm;
	pid_t tid;
	GMutex lock;			/* guards seq and req's links */
	uint64_t seq;			/* the call being served, or 0 */
	struct cusemu_request req;
	struct cusemu_call call;
	unsigned int lock_depth;	/* of the big lock, as the daemon holds it */
	bool spin_next;			/* calls come close together */
	struct host_spin spin;		/* for the next call */
};

/* The host's control socket: messages to the daemon. */
extern int host_control;
/* The plugin's models. */
extern const struct cusemu_device_model *const *host_models;
extern unsigned int host_n_models;

/* Send a message on the control socket (any thread). */
void host_send(const void *msg, size_t len);

/* The channel the current thread serves a call of, or NULL. */
struct host_channel *host_current_channel(void);
/* Ask the daemon thread that waits for the current call: its answer. */
int64_t host_ask(enum host_ask what, int64_t value);

/* fault.c: the handlers for faults and backtrace samples. */
void host_fault_init(void);
void host_fault_thread_init(void);
void host_fault_set_channel(int channel);
/* Sample thread tid of the channel's call (SAMPLE to the daemon). */
void host_fault_sample(pid_t tid, int channel);

/* serve.c */
void host_serve_channel(int sock, int memfd, int id);
void host_interrupt(int channel, uint64_t seq);
void host_sample(int channel);
struct host_dev *host_dev_of(const struct cusemu_device *dev);

#endif
