/* SPDX-License-Identifier: MIT */
/*
 * Model hosts: the models of a plugin run in a process of their own
 * (cusemu-host, host/), one per loaded image of the plugin's file, so that
 * their faults, hangs and leaks cost their devices, never the daemon. The
 * daemon keeps everything but the models' code: for each model the host
 * describes, a proxy struct cusemu_device_model whose callbacks forward to
 * the host, so that nodes, dispatch, locks, statistics, trace and record
 * work on it as on any model.
 */
#ifndef CUSEMU_HOST_LINK_H
#define CUSEMU_HOST_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "cusemu/device.h"

/* The models of one image of a plugin, as its host described them. */
struct cusemu_host_models;

/* How the hosts started from now on are sandboxed (sandbox.h). */
struct cusemu_host_settings {
	uid_t uid;
	gid_t gid;
	gid_t groups[64];
	unsigned int n_groups;
	uint64_t memory;	/* RLIMIT_AS in bytes; 0: none */
	int seccomp;		/* enum cusemu_seccomp_mode */
};

/* The default of host_memory=. */
#define CUSEMU_HOST_MEMORY_DEFAULT "1G"

/* The host program, before any host starts; cusemud-test points it
 * elsewhere. */
void cusemu_hosts_set_program(const char *path);

/*
 * The settings are known: hosts started before (to describe the plugins of
 * the command line) end, and later ones get these. Hosts are started by a
 * launcher forked before the sandbox; once sealed, no other can be.
 */
void cusemu_hosts_configure(const struct cusemu_host_settings *s);
void cusemu_hosts_seal(void);

/*
 * Start a host for a plugin's sealed image (origin: the plugin's path) and
 * read its description: the proxy models, NULL-terminated, in *models.
 * NULL with why when the plugin does not load or its description is
 * refused (the message is a refusal's reason, without the file's name).
 */
struct cusemu_host_models *
cusemu_host_describe(const char *origin, int image,
		     const struct cusemu_device_model *const **models,
		     GError **error);
/*
 * Whether a device (not freed yet) is made from the set's models. A set
 * nobody uses any more (refused, or replaced by a reload of a rebuilt
 * file and its last device gone) is let go of: its host, if it has one,
 * ends; its models are gone; its image is closed once the last of its
 * hosts has reported its end.
 */
bool cusemu_host_models_used(struct cusemu_host_models *set);
void cusemu_host_models_free(struct cusemu_host_models *set);

/* Whether m is a proxy model, one of a host's. */
bool cusemu_host_model(const struct cusemu_device_model *m);

/*
 * The daemon stops: hosts that have not answered within ms are killed, so
 * that calls inside them end; cusemu_hosts_stop_end() kills any left.
 */
void cusemu_hosts_stop_begin(unsigned int ms);
void cusemu_hosts_stop_end(void);

/*
 * For tests: read a description from sock as from a host's control socket
 * (HELLO to READY), with every check; FALSE and why when it is refused.
 */
gboolean cusemu_host_check_description(int sock, GError **error);

#endif
