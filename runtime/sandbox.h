/* SPDX-License-Identifier: MIT */
/*
 * What cusemud gives up once its nodes exist: every capability, in every
 * thread; root for a configured user; and every system call but those of
 * an allow-list (seccomp), also in every thread.
 */
#ifndef CUSEMU_SANDBOX_H
#define CUSEMU_SANDBOX_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

enum cusemu_seccomp_mode {
	CUSEMU_SECCOMP_ENFORCE,	/* a call off the list kills the daemon */
	CUSEMU_SECCOMP_LOG,	/* it goes through, and the kernel logs it */
	CUSEMU_SECCOMP_OFF,	/* no filter */
};

bool cusemu_seccomp_mode_parse(const char *s, enum cusemu_seccomp_mode *mode);
const char *cusemu_seccomp_mode_name(enum cusemu_seccomp_mode mode);

struct cusemu_sandbox {
	enum cusemu_seccomp_mode seccomp;
	/* --user: whom to run as after start-up; NULL to stay root. */
	char *user;
	uid_t uid;
	gid_t gid;
	GArray *groups;		/* of gid_t: the user's groups */
	/* Set before cusemu_sandbox_apply(): a passthrough device calls
	 * its real device (ioctl, and i386 calls through the 32-bit
	 * entry): cusemu_sandbox_passthrough_rules are allowed too. */
	bool passthrough;
	/* Filled by cusemu_sandbox_apply(). */
	unsigned int allowed_calls;
	/* Started as an ordinary user (own_user): it held no capability. */
	bool unprivileged;
	char *own_user;
	/* The /proc helper, from cusemu_sandbox_start_helper(). */
	pid_t helper_pid;
	/* The FUSE unmounter (fusefs.c), once forked; root's is sealed
	 * with unmounter_calls system calls allowed. */
	pid_t unmounter_pid;
	bool unmounter_sealed;
	bool unmounter_search;	/* it keeps CAP_DAC_READ_SEARCH too */
	unsigned int unmounter_calls;
};

/*
 * Look the user up now, while the user and group databases can still be
 * read; origin ("--user" or FILE:LINE) goes into the error. A user with
 * uid 0 is root: the daemon stays root.
 */
gboolean cusemu_sandbox_set_user(struct cusemu_sandbox *sb, const char *name,
				 const char *origin, GError **error);

/*
 * Fork the /proc helper, the process that reads other processes' /proc
 * entries for the daemon (proc.h), before any other thread exists. It
 * waits, as root, until cusemu_sandbox_apply() seals it.
 */
gboolean cusemu_sandbox_start_helper(struct cusemu_sandbox *sb,
				     GError **error);

/*
 * Once every node exists: seal the /proc helper (it keeps CAP_SYS_PTRACE
 * alone, under its own filter), drop every capability in every thread, switch
 * to the user, install the seccomp filter in every thread. Threads made
 * later inherit all of it. Fails with a message saying what stayed.
 */
gboolean cusemu_sandbox_apply(struct cusemu_sandbox *sb, GError **error);

/*
 * What root's FUSE unmounter keeps while it waits for the daemon's end:
 * CAP_SYS_ADMIN alone, no_new_privs and the unmounter's allow-list (by
 * the daemon's seccomp mode). Prepared in the daemon; applied in the
 * forked child, where only async-signal-safe calls may run.
 */
struct cusemu_unmounter_seal {
	struct sock_fprog prog;	/* len 0: no filter (--seccomp=off) */
	int last_cap;
	uint64_t keep;		/* capabilities kept */
};

/*
 * For a mount at dir. CAP_DAC_READ_SEARCH is kept too when uid 0 without
 * it could not look the mount point up in its parent directory.
 */
gboolean cusemu_sandbox_unmounter_prepare(struct cusemu_sandbox *sb,
					  const char *dir,
					  struct cusemu_unmounter_seal *seal,
					  GError **error);
/* In the child: 0, or -errno. */
int cusemu_sandbox_unmounter_seal(const struct cusemu_unmounter_seal *seal);
void cusemu_sandbox_unmounter_clear(struct cusemu_unmounter_seal *seal);

/*
 * What a model host (cusemu-host) gives up before it loads a plugin: its
 * address space bounded (RLIMIT_AS, 0 for no bound), every capability and
 * root for the daemon's user (a root daemon's host: for a uid of its own,
 * in a mount namespace of its own where it can), no_new_privs, and a
 * seccomp filter of its own
 * (cusemu_sandbox_host_rules) as the daemon's seccomp mode says; enforced,
 * a call off the list raises SIGSYS, which the host reports as a fault.
 */
struct cusemu_host_seal {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	unsigned int n_groups;
	uint64_t memory;
	enum cusemu_seccomp_mode seccomp;
};

gboolean cusemu_sandbox_seal_host(const struct cusemu_host_seal *seal,
				  GError **error);

/* The process no longer dumpable: no other process of its user (a model
 * host) may open its /proc/PID/mem or fd/, nor ptrace it. */
void cusemu_sandbox_undumpable(void);

/* One line on what the daemon runs with, for the log and cusemuctl list. */
void cusemu_sandbox_describe(const struct cusemu_sandbox *sb, GString *out);
/* The same as a JSON object. */
void cusemu_sandbox_describe_json(const struct cusemu_sandbox *sb,
				  GString *out);

void cusemu_sandbox_clear(struct cusemu_sandbox *sb);

/* What a rule of the allow-list lets through. */
enum cusemu_syscall_rule_kind {
	CUSEMU_RULE_ALLOW,		/* the call, whatever its arguments */
	CUSEMU_RULE_ARG0_EQ,		/* when its first argument is arg0 */
	CUSEMU_RULE_ARG0_HAS,		/* when its first argument has arg0's bits */
	CUSEMU_RULE_ARG0_SELF,		/* when its first argument is our pid */
	CUSEMU_RULE_ENOSYS,		/* fails with ENOSYS instead of running */
	CUSEMU_RULE_OPEN_READ_ONLY,	/* an openat that cannot write or create */
};

struct cusemu_syscall_rule {
	const char *name;
	enum cusemu_syscall_rule_kind kind;
	uint64_t arg0;
	const char *why;
};

/* The allow-list, ended by a rule without a name (docs/security.md lists it too). */
extern const struct cusemu_syscall_rule cusemu_sandbox_rules[];
/* The /proc helper's, the same way. */
extern const struct cusemu_syscall_rule cusemu_sandbox_helper_rules[];
/* What a passthrough device adds: [0] for x86_64, the rest for i386. */
extern const struct cusemu_syscall_rule cusemu_sandbox_passthrough_rules[];
/* What a daemon in a user namespace of its own adds to the first
 * (cusemu_reaches_callers()). */
extern const struct cusemu_syscall_rule cusemu_sandbox_reach_rules[];
/* A model host's, the same way. */
extern const struct cusemu_syscall_rule cusemu_sandbox_host_rules[];
/* Root's FUSE unmounter's, the same way. */
extern const struct cusemu_syscall_rule cusemu_sandbox_unmounter_rules[];

/*
 * Whether the daemon runs in a user namespace of its own (cusemu-run's),
 * where every process it can reach is one of the namespace's: over FUSE it
 * then reads and writes its callers' memory (process_vm_readv/writev,
 * cusemu_sandbox_reach_rules) for the ioctls whose _IOC bits do not
 * describe their payload. Outside one (root on the host) it does not.
 */
bool cusemu_reaches_callers(void);

#endif
