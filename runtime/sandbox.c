/* SPDX-License-Identifier: MIT */
/*
 * The sandbox cusemud enters once its nodes exist: every capability
 * dropped in every thread, the configured user instead of root, and a
 * seccomp filter that lets through only the system calls of the list
 * below. What needs CAP_SYS_PTRACE (reading other users' /proc/PID/exe and
 * /proc/PID/fd) is done by the /proc helper, a process forked at start-up
 * that keeps that one capability under a filter of its own.
 *
 * Capabilities belong to each thread, and the capset and bounding-set
 * calls change only the caller's: every thread that exists by then (the
 * sessions' loops and workers, the models' timers) is made to drop its own
 * from a signal handler, and a new thread inherits its creator's. The
 * user switch and the filter reach every thread by themselves (glibc's
 * set*id calls, and seccomp's TSYNC).
 */
#define G_LOG_DOMAIN "cusemu-sandbox"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include "proc.h"
#include "sandbox.h"

/* Each thread is asked once; every thread must have dropped by then. */
#define DROP_TIMEOUT_MS 2000
#define DROP_PAUSE_US 1000

#define ALLOW(call, why) { #call, CUSEMU_RULE_ALLOW, 0, why }
#define ALLOW_IF_ARG0(call, value, why) \
	{ #call, CUSEMU_RULE_ARG0_EQ, value, why }
#define ALLOW_IF_ARG0_HAS(call, bits, why) \
	{ #call, CUSEMU_RULE_ARG0_HAS, bits, why }
#define ALLOW_IF_OWN_PID(call, why) { #call, CUSEMU_RULE_ARG0_SELF, 0, why }
#define ENOSYS_FOR(call, why) { #call, CUSEMU_RULE_ENOSYS, 0, why }
#define ALLOW_READ_ONLY(call, why) \
	{ #call, CUSEMU_RULE_OPEN_READ_ONLY, 0, why }

/*
 * What the daemon does after start-up, and nothing more: serve FUSE
 * requests in libfuse's worker threads, which come and go; run the models'
 * handlers and timers; answer the control socket; log; save EEPROM files;
 * ask the /proc helper; stop. docs/security.md
 * has the same table.
 */
const struct cusemu_syscall_rule cusemu_sandbox_rules[] = {
	/* Memory */
	ALLOW(brk, "malloc grows the heap"),
	ALLOW(mmap, "malloc's arenas and large blocks; thread stacks"),
	ALLOW(munmap, "the same, given back"),
	ALLOW(mprotect, "a new thread's stack guard; malloc arenas grow"),
	ALLOW(madvise, "glibc gives back the memory of ended threads"),
	ALLOW(mremap, "realloc of large blocks (a fioc buffer grows)"),
	/* Threads */
	ALLOW_IF_ARG0_HAS(clone, CLONE_THREAD,
			  "the pool adds a worker while a handler waits, "
			  "and a long-call thread at the first long call; "
			  "threads only, never a new process"),
	ENOSYS_FOR(clone3, "its flags are in memory a filter cannot read: "
			   "ENOSYS makes glibc fall back to clone"),
	ALLOW(set_robust_list, "each new thread registers its robust futexes"),
	ALLOW_IF_ARG0(prctl, PR_SET_NAME, "glib names each worker thread the "
					  "pool adds"),
	ALLOW(rseq, "each new thread registers its restartable sequences"),
	ALLOW(futex, "mutexes, condition variables, thread joins; a call "
		     "to a model host waits on its channel's state word"),
	ALLOW(exit, "a thread ends"),
	ALLOW(exit_group, "the daemon exits"),
	ALLOW(getpid, "abort() and syslog's LOG_PID"),
	ALLOW_IF_OWN_PID(tgkill, "abort() raises SIGABRT in its own thread, "
				 "so a failed assertion still leaves a core "
				 "(where fs.suid_dumpable=2 lets a process "
				 "that is not dumpable leave one); "
				 "the watchdog asks a stuck or hung thread for "
				 "its backtrace; only the daemon's own "
				 "threads"),
	ALLOW(rt_sigprocmask, "threads start with signals blocked"),
	ALLOW(rt_sigaction, "abort() puts back SIGABRT's default action"),
	ALLOW(rt_sigreturn, "return from a signal handler"),
	ALLOW(sigaltstack, "each thread that calls into models gets a stack "
			   "for the oops handler (a model's stack overflow)"),
	ALLOW(sched_getaffinity, "glibc's pthread_getattr_np() asks it: each "
				 "such thread finds its stack, so that a "
				 "fault on its guard page is named a stack "
				 "overflow"),
	ALLOW(gettid, "the watchdog knows each such thread by its id"),
	ALLOW(readlink, "an oops report's backtrace: libdw resolves the "
			"paths of the program and its libraries"),
	ALLOW(sysinfo, "an oops report's backtrace: glibc's qsort sizes "
		       "its buffer for libdw's symbol tables"),
	ALLOW(restart_syscall, "a timed wait (futex, poll) that SIGSTOP, "
			       "SIGCONT or a debugger interrupted goes on"),
	/* Time */
	ALLOW(clock_gettime, "clocks, where the vDSO falls back to the call"),
	ALLOW(gettimeofday, "wall-clock time, where the vDSO falls back"),
	/* Files and descriptors */
	ALLOW(openat, "i2c saves EEPROM files; the ioctl32 log line and the "
		      "trace read the client's /proc/PID/comm; syslog reads "
		      "the time zone; a device added at run time opens its "
		      "record= file"),
	ALLOW(close, "every descriptor"),
	ALLOW(dup2, "a detached daemon, once ready, points stdin, stdout and "
		    "stderr at /dev/null"),
	ALLOW(fcntl, "fdopen reads a descriptor's flags (glib reading a "
		     "/proc file); a recording a control client handed over "
		     "is duplicated and made append-only"),
	ALLOW(read, "FUSE requests from /dev/cuse; files; glib's wake-ups"),
	ALLOW(write, "logs to stderr; files; recordings (record=); glib's "
		     "wake-ups"),
	ALLOW(writev, "FUSE replies and poll notifications to /dev/cuse"),
	ALLOW(lseek, "fclose gives back what stdio read ahead (glib reading "
		     "a /proc file); a reload reads the rebuilt plugin"),
	ALLOW(memfd_create, "a reload copies the rebuilt plugin into a "
			    "sealed memory file, which the loader maps; a "
			    "model host's call channel gets its shared "
			    "memory, its size sealed"),
	ALLOW(newfstatat, "stdio sizes its buffers (fstat); lstat of the "
			  "control socket at shutdown; lstat and fstat of "
			  "the record= file of a device added at run time; "
			  "an oops report opens only regular files of a "
			  "model host's objects"),
	ALLOW(fstatfs, "an oops report reads no object of a model host "
		       "that is on a FUSE file system (this daemon's own "
		       "mount, or a stalled one)"),
	ALLOW(fallocate, "glib reserves an EEPROM file's size before writing "
			 "it"),
	ALLOW(fsync, "an EEPROM file is on disk before its rename"),
	ALLOW(ftruncate, "a recording whose write failed loses the part of "
			 "the line that was written"),
	ALLOW(rename, "an EEPROM file is replaced whole"),
	ALLOW(chmod, "a node added at run time (cusemuctl add) gets its "
		     "mode"),
	ALLOW(chown, "... and its owner: root's alone, without CAP_CHOWN"),
	ALLOW(chdir, "libfuse's CUSE set-up of a node added at run time "
		     "goes to / (where the daemon already is)"),
	ALLOW(getuid, "... and libfuse's session notes the daemon's uid"),
	ALLOW(unlink, "the control socket at shutdown; a failed save's "
		      "temporary file"),
	ALLOW(ppoll, "glib's main loop, whose wait alone takes SIGINT and "
		     "SIGTERM"),
	ALLOW(poll, "a model host's answer or the /proc helper's, waited "
		    "for with a deadline; a model host's end; short pauses"),
	ALLOW(epoll_wait, "the workers wait for requests on every node"),
	ALLOW(epoll_pwait, "the same, where glibc uses it for epoll_wait"),
	ALLOW(epoll_ctl, "a node's descriptor is armed again after each burst "
			 "of its requests, and leaves the workers' epoll set "
			 "when it ends"),
	ALLOW(sched_setaffinity, "a worker in a spinning handler keeps to "
				 "one CPU, and lets go of it after; a "
				 "long-call thread keeps to its own for its "
				 "life"),
	ALLOW(sched_getattr, "a worker reads its policy and nice value, to "
			     "keep them when it changes its time slice"),
	ALLOW(sched_setattr, "a worker in a spinning handler takes a short "
			     "time slice, and the default one back after; a "
			     "long-call thread keeps it"),
	ALLOW(timer_create, "a worker's two timers: one ends its wait for "
			    "the next request of the node it reads, one "
			    "makes it yield while in a spinning handler; a "
			    "long-call thread's one, to yield"),
	ALLOW(timer_settime, "... set before each wait or spinning handler, "
			     "and stopped after it"),
	ALLOW(timer_delete, "... and deleted when the worker leaves"),
	ALLOW(sched_yield, "... the yield, in that timer's signal handler"),
	ALLOW(timer_getoverrun, "... which stops yielding when it cannot take "
				"a signal each period (under a tracer)"),
	ALLOW(getcpu, "the CPU a worker is on, where the vDSO falls back"),
	ALLOW(getrusage, "a timed handler's CPU time, when its worker was "
			 "preempted meanwhile"),
	/* Sockets */
	ALLOW(accept4, "control socket connections"),
	ALLOW(recvfrom, "control requests"),
	ALLOW(recvmsg, "control requests, with the files a client opened "
		       "itself and hands over (SCM_RIGHTS); the /proc "
		       "helper's answers"),
	ALLOW(sendto, "control answers and trace lines; syslog"),
	ALLOW(shutdown, "the end of a control answer"),
	ALLOW(getsockopt, "who is on the control socket (SO_PEERCRED, "
			  "SO_PEERGROUPS)"),
	ALLOW_IF_ARG0(socket, AF_UNIX, "syslog's socket to /dev/log; no "
				       "other address family"),
	ALLOW(connect, "syslog connects to /dev/log"),
	ALLOW(geteuid, "the daemon's own user may use the control socket"),
	ALLOW_IF_ARG0(socketpair, AF_UNIX, "a model host's call channels, "
					   "and the control socket of a host "
					   "started for a reload"),
	ALLOW(sendmsg, "a model host gets its channels, the launcher a "
		       "host's sockets (SCM_RIGHTS); queries to the /proc "
		       "helper"),
	ALLOW(pidfd_send_signal, "a stuck or faulted model host is ended, "
				 "named by its pidfd"),
	{ NULL },
};

/*
 * What a daemon serving passthrough devices does besides: calls to the real
 * devices. Added to the list above only when the configuration has such a
 * device. The i386 calls are those of the 32-bit entry (int $0x80), the
 * only ones of that architecture the filter lets through.
 */
const struct cusemu_syscall_rule cusemu_sandbox_passthrough_rules[] = {
	ALLOW(ioctl, "a passthrough device's calls to its real device"),
	ALLOW(ioctl, "an i386 caller's ioctl, to the driver's compat_ioctl "
		     "(i386 architecture: the 32-bit entry)"),
	ALLOW(read, "an i386 opener's read, laid out for i386 by the driver "
		    "(i386 architecture)"),
	ALLOW(write, "an i386 opener's write, read as i386 by the driver "
		     "(i386 architecture)"),
	{ NULL },
};

/*
 * What a daemon in a user namespace of its own does besides (under
 * cusemu-run, cusemu_reaches_callers()): over FUSE, read and write the
 * memory of the callers, the namespace's processes alone.
 */
const struct cusemu_syscall_rule cusemu_sandbox_reach_rules[] = {
	ALLOW(process_vm_readv, "over FUSE, a caller's memory that its "
				"ioctl's _IOC bits do not describe"),
	ALLOW(process_vm_writev, "... and what the ioctl writes back there"),
	{ NULL },
};

/*
 * What the /proc helper does once sealed: answer the daemon's queries on
 * its socket by reading /proc/PID/exe and /proc/PID/fd, and for a root
 * daemon over FUSE, a caller's memory while it waits in an ioctl on the
 * mount (/proc/TID/syscall tells); exit.
 */
const struct cusemu_syscall_rule cusemu_sandbox_helper_rules[] = {
	ALLOW(recvfrom, "a query from the daemon"),
	ALLOW(sendmsg, "its answer, with the bytes read of a caller's "
		       "memory"),
	ALLOW_READ_ONLY(openat, "/proc/PID/exe, /proc/PID/fd and "
				"/proc/TID/syscall; never for writing or "
				"creating"),
	ALLOW(process_vm_readv, "a root daemon's FUSE callers' memory, while "
				"they wait in an ioctl on its mount"),
	ALLOW(process_vm_writev, "the same, written back"),
	ALLOW(read, "the ELF header of /proc/PID/exe; /proc/TID/syscall"),
	ALLOW(clock_nanosleep, "a caller not yet asleep in its ioctl is "
			       "looked at again 50 us later"),
	ALLOW(newfstatat, "opendir checks that it opened a directory; the "
			  "device of the file a caller's ioctl is on"),
	ALLOW(getdents64, "the entries of /proc/PID/fd"),
	ALLOW(readlinkat, "each entry's link"),
	ALLOW(close, "each file it opened"),
	ALLOW(brk, "malloc: opendir's buffer"),
	ALLOW(mmap, "malloc, where the heap cannot grow"),
	ALLOW(munmap, "the same, given back"),
	ALLOW(clock_gettime, "clocks, where the vDSO falls back to the call "
			     "(AddressSanitizer's allocator reads one)"),
	ALLOW(restart_syscall, "a wait that SIGSTOP, SIGCONT or a debugger "
			       "interrupted goes on"),
	ALLOW(exit_group, "the daemon closed the socket"),
	{ NULL },
};

/*
 * Root's FUSE unmounter: it waits for the end of the daemon's pipe, then
 * unmounts the daemon's own mount, found from the mount point's parent
 * directory (its working directory since before the filter). docs/security.md
 * has the same table.
 */
const struct cusemu_syscall_rule cusemu_sandbox_unmounter_rules[] = {
	ALLOW(read, "waits for the end of the daemon's pipe"),
	ALLOW(statx, "the mount id at the mount point, from what the kernel "
		     "knows (AT_STATX_DONT_SYNC), to unmount only the "
		     "daemon's own mount"),
	ALLOW(umount2, "the unmount, MNT_DETACH with UMOUNT_NOFOLLOW"),
	ALLOW(restart_syscall, "a wait that SIGSTOP, SIGCONT or a debugger "
			       "interrupted goes on"),
	ALLOW(exit_group, "done"),
	{ NULL },
};

/*
 * A model host's (cusemu-host): what a plugin's models do in the daemon's
 * place, and nothing more. Unlike the daemon it makes no socket, starts no
 * process, mounts nothing; it talks to the daemon on the sockets it was
 * given. docs/security.md has the same table.
 */
const struct cusemu_syscall_rule cusemu_sandbox_host_rules[] = {
	ALLOW(brk, "malloc grows the heap"),
	ALLOW(mmap, "malloc; thread stacks; the plugin's code and the call "
		    "channels' memory"),
	ALLOW(munmap, "the same, given back"),
	ALLOW(mprotect, "a new thread's stack guard; the loader maps the "
			"plugin"),
	ALLOW(madvise, "glibc gives back the memory of ended threads"),
	ALLOW(mremap, "realloc of large blocks"),
	ALLOW_IF_ARG0_HAS(clone, CLONE_THREAD,
			  "a thread per call channel, and the model's own; "
			  "threads only, never a new process"),
	ENOSYS_FOR(clone3, "its flags are in memory a filter cannot read: "
			   "ENOSYS makes glibc fall back to clone"),
	ALLOW(set_robust_list, "each new thread registers its robust futexes"),
	ALLOW_IF_ARG0(prctl, PR_SET_NAME, "glib names each thread"),
	ALLOW(rseq, "each new thread registers its restartable sequences"),
	ALLOW(futex, "mutexes, condition variables, thread joins; a call "
		     "channel's thread waits on its state word"),
	ALLOW(exit, "a thread ends"),
	ALLOW(exit_group, "the host ends"),
	ALLOW(getpid, "abort()"),
	ALLOW(gettid, "the fault handler names the faulting thread"),
	ALLOW_IF_OWN_PID(tgkill, "abort() raises SIGABRT; the daemon asks a "
				 "stuck or hung thread for its backtrace; "
				 "only the host's own threads"),
	ALLOW(rt_sigprocmask, "threads start with signals blocked"),
	ALLOW(rt_sigaction, "abort() puts back SIGABRT's default action"),
	ALLOW(rt_sigreturn, "return from a signal handler"),
	ALLOW(sigaltstack, "each call thread gets a stack for the fault "
			   "handler (a model's stack overflow)"),
	ALLOW(sched_getaffinity, "glibc's pthread_getattr_np() asks it: each "
				 "call thread finds its stack, so that a "
				 "fault on its guard page is named a stack "
				 "overflow"),
	ALLOW(restart_syscall, "a timed wait that SIGSTOP, SIGCONT or a "
			       "debugger interrupted goes on"),
	ALLOW(clock_gettime, "clocks, where the vDSO falls back to the call"),
	ALLOW(gettimeofday, "wall-clock time, where the vDSO falls back"),
	ALLOW(openat, "the loader opens the plugin and its libraries; models "
		      "open their files"),
	ALLOW(close, "every descriptor"),
	ALLOW(read, "the loader reads the plugin; models read their files"),
	ALLOW(pread64, "the loader reads an object's notes"),
	ALLOW(write, "models write their files"),
	ALLOW_IF_ARG0(writev, STDERR_FILENO,
		      "glibc's last words before abort() (\"double free or "
		      "corruption\"), to the daemon's log"),
	ALLOW(lseek, "stdio gives back what it read ahead"),
	ALLOW(newfstatat, "the loader and stdio look at a file"),
	ALLOW(fcntl, "stdio reads a descriptor's flags"),
	ALLOW(fallocate, "glib reserves a saved file's size before writing "
			 "it"),
	ALLOW(fsync, "a saved file is on disk before its rename"),
	ALLOW(ftruncate, "a model shortens its file"),
	ALLOW(rename, "a saved file is replaced whole"),
	ALLOW(unlink, "a failed save's temporary file"),
	ALLOW(getuid, "glib asks who runs it"),
	ALLOW(geteuid, "the same"),
	ALLOW(poll, "a model waits on its descriptors"),
	ALLOW(recvmsg, "interrupts and new call channels from the daemon "
		       "(SCM_RIGHTS)"),
	ALLOW(sendto, "faults, wake-ups and log lines to the daemon; the "
		      "result of a call it gave up on"),
	{ NULL },
};

static const char *const seccomp_mode_names[] = {
	[CUSEMU_SECCOMP_ENFORCE] = "enforce",
	[CUSEMU_SECCOMP_LOG] = "log",
	[CUSEMU_SECCOMP_OFF] = "off",
};

bool cusemu_seccomp_mode_parse(const char *s, enum cusemu_seccomp_mode *mode)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(seccomp_mode_names); i++) {
		if (!strcmp(s, seccomp_mode_names[i])) {
			*mode = i;
			return true;
		}
	}
	return false;
}

const char *cusemu_seccomp_mode_name(enum cusemu_seccomp_mode mode)
{
	return seccomp_mode_names[mode];
}

gboolean cusemu_sandbox_set_user(struct cusemu_sandbox *sb, const char *name,
				 const char *origin, GError **error)
{
	struct passwd *pw = getpwnam(name);
	int n = 0;

	if (!pw) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown user '%s'; give a user of this "
			    "system (e.g. nobody) for the daemon to run as "
			    "after start-up",
			    origin, name);
		return FALSE;
	}
	g_clear_pointer(&sb->user, g_free);
	if (pw->pw_uid == 0)
		return TRUE;
	sb->user = g_strdup(pw->pw_name);
	sb->uid = pw->pw_uid;
	sb->gid = pw->pw_gid;
	/* Its supplementary groups too: a group may own its EEPROM files. */
	getgrouplist(pw->pw_name, pw->pw_gid, NULL, &n);
	if (sb->groups)
		g_array_unref(sb->groups);
	sb->groups = g_array_sized_new(FALSE, TRUE, sizeof(gid_t), n);
	g_array_set_size(sb->groups, n);
	if (getgrouplist(pw->pw_name, pw->pw_gid,
			 (gid_t *)sb->groups->data, &n) < 0)
		g_array_set_size(sb->groups, 0);
	else
		g_array_set_size(sb->groups, n);
	return TRUE;
}

void cusemu_sandbox_clear(struct cusemu_sandbox *sb)
{
	g_clear_pointer(&sb->user, g_free);
	g_clear_pointer(&sb->own_user, g_free);
	g_clear_pointer(&sb->groups, g_array_unref);
}

/* "WHAT: the errno's text; HINT" */
static gboolean fail_errno(GError **error, int err, const char *what,
			   const char *hint)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
		    "%s: %s; %s", what, g_strerror(err), hint);
	return FALSE;
}

/* ---- capabilities, in every thread */

/*
 * The process's capabilities, which every thread drops alike (threads
 * started later, the pool's among them, take them from here): the
 * highest capability this kernel knows, and what threads keep. privileged:
 * started as root, the bounding set can be emptied. An ordinary user's
 * daemon holds no capability to begin with, and cannot change that set
 * (CAP_SETPCAP); with no_new_privs it can gain nothing from it.
 */
static struct {
	int last_cap;
	uint64_t keep;
	bool privileged;
} caps = { .privileged = true };

/* Async-signal-safe: every thread runs it in its own signal handler. */
static int drop_own_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	/* The bounding set first: dropping from it takes CAP_SETPCAP. */
	for (int cap = 0; caps.privileged && cap <= caps.last_cap; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	data[0].effective = data[0].permitted = (uint32_t)caps.keep;
	data[1].effective = data[1].permitted = (uint32_t)(caps.keep >> 32);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	/*
	 * No execve could give any back (the filter allows none, and off
	 * it, neither setuid bits nor file capabilities would count). Last:
	 * the thread that waits for this one takes the flag in its status
	 * for the whole drop done, and installs the filter, which has no
	 * capset, once it sees it. (An ordinary user's threads hold no
	 * capability to begin with: set first, the flag would let the
	 * filter in before the capset.)
	 */
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -errno : 0;
}

static void on_drop_signal(int sig)
{
	int saved = errno;

	drop_own_caps();
	errno = saved;
}

static int find_last_cap(void)
{
	int cap = CAP_LAST_CAP;

	/* The kernel may know more than these headers, or fewer. */
	while (prctl(PR_CAPBSET_READ, cap + 1, 0, 0, 0) >= 0)
		cap++;
	while (cap > 0 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
		cap--;
	return cap;
}

/* A field of /proc/.../status, as "CapPrm:\t0000000000000000". */
static guint64 status_hex(const char *status, const char *key)
{
	const char *at = strstr(status, key);

	return at ? g_ascii_strtoull(at + strlen(key), NULL, 16) : G_MAXUINT64;
}

/*
 * Whether a thread holds no capability but keep, and may gain none (one
 * that is gone holds none); *name says which thread it is when not.
 */
static gboolean thread_dropped(pid_t tid, guint64 keep, char **name)
{
	g_autofree char *path = g_strdup_printf("/proc/self/task/%d/status",
						(int)tid);
	g_autofree char *status = NULL;

	if (!g_file_get_contents(path, &status, NULL, NULL))
		return TRUE;
	if (status_hex(status, "\nNoNewPrivs:") == 1 &&
	    status_hex(status, "\nCapInh:") == 0 &&
	    status_hex(status, "\nCapPrm:") == keep &&
	    status_hex(status, "\nCapEff:") == keep &&
	    (!caps.privileged || status_hex(status, "\nCapBnd:") == 0) &&
	    (!strstr(status, "\nCapAmb:") ||
	     status_hex(status, "\nCapAmb:") == 0))
		return TRUE;
	if (name) {
		g_free(*name);
		*name = g_strndup(status + strlen("Name:\t"),
				  strcspn(status + strlen("Name:\t"), "\n"));
	}
	return FALSE;
}

/* The threads of this process but the caller. */
static GArray *other_threads(void)
{
	GArray *tids = g_array_new(FALSE, FALSE, sizeof(pid_t));
	g_autoptr(GDir) dir = g_dir_open("/proc/self/task", 0, NULL);
	pid_t self = gettid();
	const char *entry;

	while (dir && (entry = g_dir_read_name(dir))) {
		pid_t tid = (pid_t)g_ascii_strtoll(entry, NULL, 10);

		if (tid > 0 && tid != self)
			g_array_append_val(tids, tid);
	}
	return tids;
}

/*
 * Signal every other thread once, and wait until each has dropped. A
 * thread made meanwhile by one that had not dropped yet shows up in a
 * later round; one made by a thread that had is born without.
 */
static gboolean drop_in_other_threads(guint64 keep, GError **error)
{
	g_autoptr(GHashTable) asked = g_hash_table_new(NULL, NULL);
	gint64 deadline = g_get_monotonic_time() +
			  DROP_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
	g_autofree char *name = NULL;
	pid_t left;

	do {
		g_autoptr(GArray) tids = other_threads();

		left = 0;
		for (guint i = 0; i < tids->len; i++) {
			pid_t tid = g_array_index(tids, pid_t, i);

			if (thread_dropped(tid, keep, &name))
				continue;
			left = tid;
			if (g_hash_table_add(asked, GINT_TO_POINTER(tid)))
				syscall(SYS_tgkill, getpid(), tid, SIGRTMIN);
		}
		if (left)
			g_usleep(DROP_PAUSE_US);
	} while (left && g_get_monotonic_time() < deadline);
	if (left) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
			    "thread %d (%s) did not drop its capabilities "
			    "within %d ms (does it block signal %d?); not "
			    "serving with them",
			    (int)left, name, DROP_TIMEOUT_MS, SIGRTMIN);
		return FALSE;
	}
	return TRUE;
}

static gboolean drop_caps(guint64 keep, GError **error)
{
	struct sigaction sa = {
		.sa_handler = on_drop_signal,
		/* Threads blocked in read() or poll() go on waiting. */
		.sa_flags = SA_RESTART,
	};
	int err;

	caps.last_cap = find_last_cap();
	caps.keep = keep;
	sigfillset(&sa.sa_mask);
	/* Left installed: no late signal may find the default (to die). */
	sigaction(SIGRTMIN, &sa, NULL);
	if (!drop_in_other_threads(keep, error))
		return FALSE;
	err = drop_own_caps();
	return !err || fail_errno(error, -err, "cannot drop capabilities",
				  "cusemud must start as root");
}

/* After a user switch, which changes every thread's capabilities itself. */
static gboolean check_every_thread(GError **error)
{
	g_autoptr(GArray) tids = other_threads();
	g_autofree char *name = NULL;
	pid_t self = gettid();

	g_array_append_val(tids, self);
	for (guint i = 0; i < tids->len; i++) {
		pid_t tid = g_array_index(tids, pid_t, i);

		if (!thread_dropped(tid, 0, &name)) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
				    "thread %d (%s) kept capabilities after "
				    "the switch to a user; not serving with "
				    "them",
				    (int)tid, name);
			return FALSE;
		}
	}
	return TRUE;
}

/* glibc makes every thread change its ids, as POSIX wants. */
static gboolean switch_user(const struct cusemu_sandbox *sb, GError **error)
{
	if (setgroups(sb->groups->len, (const gid_t *)sb->groups->data) ||
	    setresgid(sb->gid, sb->gid, sb->gid) ||
	    setresuid(sb->uid, sb->uid, sb->uid)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot switch to user %s (uid %u, gid %u): %s",
			    sb->user, (unsigned int)sb->uid,
			    (unsigned int)sb->gid, g_strerror(errno));
		return FALSE;
	}
	/* The switch set it to fs.suid_dumpable, which may be 1. */
	cusemu_sandbox_undumpable();
	return check_every_thread(error);
}

/* ---- dumpable */

void cusemu_sandbox_undumpable(void)
{
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* ---- the system call filter */

static int add_rule(scmp_filter_ctx ctx, const struct cusemu_syscall_rule *r,
		    int nr)
{
	switch (r->kind) {
	case CUSEMU_RULE_ALLOW:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case CUSEMU_RULE_ARG0_EQ:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, r->arg0));
	case CUSEMU_RULE_ARG0_HAS:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, r->arg0,
						r->arg0));
	case CUSEMU_RULE_ARG0_SELF:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, getpid()));
	case CUSEMU_RULE_ENOSYS:
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	case CUSEMU_RULE_OPEN_READ_ONLY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ,
						O_ACCMODE | O_CREAT | O_TRUNC,
						O_RDONLY));
	}
	return -EINVAL;
}

/*
 * A build with AddressSanitizer (client-tests/sanitize) runs its checks
 * inside the daemon: they need these too. Not in the installed daemon.
 */
static const struct cusemu_syscall_rule sanitizer_rules[] = {
#if defined(__SANITIZE_ADDRESS__)
	ALLOW(sched_getaffinity, "AddressSanitizer's allocator, per CPU"),
	ALLOW(prctl, "AddressSanitizer's thread setup"),
#endif
	{ NULL },
};

static int add_rules(scmp_filter_ctx ctx,
		     const struct cusemu_syscall_rule *rules,
		     unsigned int *allowed)
{
	int err = 0;

	for (const struct cusemu_syscall_rule *r = rules; !err && r->name;
	     r++) {
		int nr = seccomp_syscall_resolve_name(r->name);

		/* Not a call of this architecture: nothing to allow. */
		if (nr < 0)
			continue;
		err = add_rule(ctx, r, nr);
		*allowed += r->kind != CUSEMU_RULE_ENOSYS;
	}
	return err;
}

/*
 * The passthrough's calls: ioctl, and the i386 ioctl, read and write of
 * the 32-bit entry, in a filter of that architecture merged into ctx (a
 * rule added to ctx itself would allow every call of the list there).
 */
static int add_passthrough(scmp_filter_ctx ctx, uint32_t off_list,
			   unsigned int *allowed)
{
	const struct cusemu_syscall_rule *native =
		cusemu_sandbox_passthrough_rules;
	scmp_filter_ctx x86 = seccomp_init(off_list);
	uint32_t tsync = 0;
	int err = x86 ? add_rule(ctx, native, SCMP_SYS(ioctl)) : -ENOMEM;

	if (!err)
		err = seccomp_arch_remove(x86, SCMP_ARCH_NATIVE);
	if (!err)
		err = seccomp_arch_add(x86, SCMP_ARCH_X86);
	if (!err)
		err = seccomp_attr_set(x86, SCMP_FLTATR_ACT_BADARCH, off_list);
	if (!err && !seccomp_attr_get(ctx, SCMP_FLTATR_CTL_TSYNC, &tsync))
		err = seccomp_attr_set(x86, SCMP_FLTATR_CTL_TSYNC, tsync);
	if (!err)
		err = add_rules(x86, native + 1, allowed);
	if (!err)
		err = seccomp_merge(ctx, x86);
	if (err && x86)
		seccomp_release(x86);
	*allowed += !err;
	return err;
}

bool cusemu_reaches_callers(void)
{
	static gsize done;
	static bool own;

	if (g_once_init_enter(&done)) {
		g_autofree char *map = NULL;
		unsigned long inside, outside, count;

		/* The first namespace maps every id to itself. */
		own = g_file_get_contents("/proc/self/uid_map", &map, NULL,
					  NULL) &&
		      sscanf(map, "%lu %lu %lu", &inside, &outside, &count) ==
			      3 &&
		      !(inside == 0 && outside == 0 && count == 4294967295UL);
		g_once_init_leave(&done, 1);
	}
	return own;
}

static int fill_filter(scmp_filter_ctx ctx, uint32_t off_list,
		       const struct cusemu_syscall_rule *rules,
		       bool passthrough, unsigned int *allowed)
{
	/* Another ABI's calls (int 0x80, x32) are off the list too. */
	int err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, off_list);

	if (!err)
		err = add_rules(ctx, rules, allowed);
	if (!err)
		err = add_rules(ctx, sanitizer_rules, allowed);
	if (!err && passthrough)
		err = add_passthrough(ctx, off_list, allowed);
	if (!err && rules == cusemu_sandbox_rules && cusemu_reaches_callers())
		err = add_rules(ctx, cusemu_sandbox_reach_rules, allowed);
	return err;
}

static int build_filter(scmp_filter_ctx ctx, uint32_t off_list,
			const struct cusemu_syscall_rule *rules,
			bool passthrough, unsigned int *allowed)
{
	int err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);

	if (!err)
		err = fill_filter(ctx, off_list, rules, passthrough, allowed);
	return err ? err : seccomp_load(ctx);
}

static uint32_t off_list_action(enum cusemu_seccomp_mode mode)
{
	return mode == CUSEMU_SECCOMP_ENFORCE ? SCMP_ACT_KILL_PROCESS
					      : SCMP_ACT_LOG;
}

static int load_rules_as(uint32_t off_list,
			 const struct cusemu_syscall_rule *rules,
			 bool passthrough, unsigned int *allowed)
{
	scmp_filter_ctx ctx = seccomp_init(off_list);
	int err = ctx ? build_filter(ctx, off_list, rules, passthrough,
				     allowed)
		      : -ENOMEM;

	seccomp_release(ctx);
	return err;
}

static int load_rules(enum cusemu_seccomp_mode mode,
		      const struct cusemu_syscall_rule *rules,
		      bool passthrough, unsigned int *allowed)
{
	return load_rules_as(off_list_action(mode), rules, passthrough,
			     allowed);
}

/* The filter as BPF, for a process that cannot run libseccomp. */
static int export_rules(enum cusemu_seccomp_mode mode,
			const struct cusemu_syscall_rule *rules,
			unsigned int *allowed, struct sock_fprog *prog)
{
	uint32_t off_list = off_list_action(mode);
	scmp_filter_ctx ctx = seccomp_init(off_list);
	int fd = memfd_create("cusemu-filter", MFD_CLOEXEC);
	int err = !ctx ? -ENOMEM : fd < 0 ? -errno : 0;
	off_t size;

	if (!err)
		err = fill_filter(ctx, off_list, rules, false, allowed);
	if (!err)
		err = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (!err) {
		size = lseek(fd, 0, SEEK_END);
		if (size <= 0 || size % sizeof(struct sock_filter) ||
		    size / sizeof(struct sock_filter) > BPF_MAXINSNS)
			err = -EINVAL;
	}
	if (!err) {
		prog->filter = g_malloc(size);
		prog->len = size / sizeof(struct sock_filter);
		if (pread(fd, prog->filter, size, 0) != size)
			err = -EIO;
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static gboolean load_filter(struct cusemu_sandbox *sb, GError **error)
{
	int err = load_rules(sb->seccomp, cusemu_sandbox_rules,
			     sb->passthrough, &sb->allowed_calls);

	return !err || fail_errno(error, -err,
				  "cannot install the seccomp filter",
				  "--seccomp=off runs without it");
}

/* ---- the /proc helper */

/*
 * The kernel shows a process's /proc/PID/exe (evdev's ABI of an opener)
 * and /proc/PID/fd (the ioctl32 log line) only to a process holding every
 * capability the first one may use, or CAP_SYS_PTRACE; a root client may
 * use them all. That capability would let the daemon read and write any
 * process's memory: the helper keeps it instead, in a process that can do
 * nothing but read those two places.
 */
static int seal_helper(uint32_t mode)
{
	unsigned int allowed = 0;
	int err;

	caps.last_cap = find_last_cap();
	caps.privileged = geteuid() == 0;
	/* An ordinary user's clients are its own: no capability needed. */
	caps.keep = caps.privileged ? 1ull << CAP_SYS_PTRACE : 0;
	err = drop_own_caps();
	if (err || mode == CUSEMU_SECCOMP_OFF)
		return err;
	return load_rules(mode, cusemu_sandbox_helper_rules, false, &allowed);
}

static G_GNUC_NORETURN void helper_main(int sock, pid_t daemon)
{
	/* It ends with the thread that made it: main(), the daemon's life. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != daemon)
		_exit(0);
	prctl(PR_SET_NAME, "cusemud-proc");
	/* Nothing of the daemon's but the socket, and stderr for ASan. */
	close_range(3, sock - 1, 0);
	close_range(sock + 1, ~0u, 0);
	cusemu_proc_serve(sock, seal_helper);
}

gboolean cusemu_sandbox_start_helper(struct cusemu_sandbox *sb,
				     GError **error)
{
	pid_t daemon = getpid();
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return fail_errno(error, errno,
				  "cannot make the /proc helper's socket",
				  "is the system out of descriptors?");
	sb->helper_pid = fork();
	if (sb->helper_pid < 0) {
		sb->helper_pid = 0;
		close(sv[0]);
		close(sv[1]);
		return fail_errno(error, errno,
				  "cannot start the /proc helper",
				  "is the system out of processes?");
	}
	if (sb->helper_pid == 0) {
		close(sv[0]);
		helper_main(sv[1], daemon);
	}
	close(sv[1]);
	cusemu_proc_use_helper(sv[0]);
	return TRUE;
}

gboolean cusemu_sandbox_apply(struct cusemu_sandbox *sb, GError **error)
{
	/* The switch to a user needs these, and drops them itself. */
	guint64 keep = sb->user ? (1ull << CAP_SETUID) | (1ull << CAP_SETGID)
				: 0;
	int err;

	caps.privileged = geteuid() == 0;
	sb->unprivileged = !caps.privileged;
	if (sb->unprivileged) {
		struct passwd *pw = getpwuid(geteuid());

		sb->uid = geteuid();
		sb->gid = getegid();
		g_free(sb->own_user);
		sb->own_user = pw ? g_strdup(pw->pw_name)
				  : g_strdup_printf("%u", (unsigned int)sb->uid);
	}
	if (!sb->helper_pid) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
			    "no /proc helper: cusemud must start as root");
		return FALSE;
	}
	err = cusemu_proc_seal(sb->seccomp);
	if (err)
		return fail_errno(error, -err, "cannot seal the /proc helper",
				  "--seccomp=off runs it without a filter");
	if (!drop_caps(keep, error) ||
	    (sb->user && !switch_user(sb, error)))
		return FALSE;
	return sb->seccomp == CUSEMU_SECCOMP_OFF || load_filter(sb, error);
}

/* ---- a model host */

/*
 * A root daemon's host runs as a uid and gid of its own, which no account
 * and no other process has: this base plus its pid (pids stay below 2^22).
 */
#define HOST_OWN_ID 0x7f000000u

/* Whether id is one of this user namespace's (map: "uid_map" or
 * "gid_map"); a namespace of a user's (cusemu-run's) maps only a few. */
static bool id_mapped(const char *map, unsigned int id)
{
	g_autofree char *path = g_strdup_printf("/proc/self/%s", map);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return false;
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		unsigned long inside, outside, count;

		if (sscanf(*l, "%lu %lu %lu", &inside, &outside, &count) == 3 &&
		    id >= inside && id - inside < count)
			return true;
	}
	return false;
}

/* Where the real node is bound over the empty file in the host's /dev. */
static int bind_node(int from, const char *to)
{
	char path[32];
	int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	close(fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", from);
	return mount(path, to, NULL, MS_BIND, NULL) ? -errno : 0;
}

/*
 * A root launcher's host gets a mount namespace of its own, with a /dev
 * that holds the harmless nodes alone (no /dev/cuse, /dev/fuse, disk or
 * other device: it makes no node and reaches no driver), read-only, and a
 * /proc that shows only the processes the host may look at
 * (hidepid=invisible): neither the daemon nor its launcher. 0 or -errno:
 * without CAP_SYS_ADMIN (as under cusemud.service) or where namespaces are
 * refused, the host goes on in the daemon's, which its uid keeps it from.
 */
static int private_mounts(void)
{
	static const char *const nodes[] = { "/dev/null", "/dev/zero",
					     "/dev/full", "/dev/random",
					     "/dev/urandom" };
	int from[G_N_ELEMENTS(nodes)], err = 0;

	if (unshare(CLONE_NEWNS))
		return -errno;
	/* Nothing mounted below may reach the daemon's namespace: before
	 * that is sure, nothing is mounted. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++)
		from[i] = open(nodes[i], O_PATH | O_CLOEXEC);
	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=16k,nr_inodes=16"))
		err = -errno;
	for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++) {
		if (!err && from[i] >= 0)
			err = bind_node(from[i], nodes[i]);
		if (from[i] >= 0)
			close(from[i]);
	}
	if (!err && mount(NULL, "/dev", NULL,
			  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID |
				  MS_NODEV | MS_NOEXEC,
			  NULL))
		err = -errno;
	if (!err && mount("proc", "/proc", "proc",
			  MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "hidepid=invisible"))
		err = -errno;
	return err;
}

gboolean cusemu_sandbox_seal_host(const struct cusemu_host_seal *seal,
				  GError **error)
{
	struct rlimit as = { seal->memory, seal->memory };
	/* Enforced, a call off the list is a fault the host reports (SIGSYS
	 * names the call), rather than a silent death. */
	uint32_t off_list = seal->seccomp == CUSEMU_SECCOMP_ENFORCE
				    ? SCMP_ACT_TRAP
				    : SCMP_ACT_LOG;
	uid_t uid = seal->uid;
	gid_t gid = seal->gid;
	unsigned int n_groups = seal->n_groups;
	pid_t launcher = getppid();
	bool switching;
	unsigned int allowed = 0;
	int err;

#if defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer reserves terabytes of shadow address space. */
	as.rlim_cur = as.rlim_max = RLIM_INFINITY;
#endif
	if (seal->memory && setrlimit(RLIMIT_AS, &as))
		return fail_errno(error, errno, "cannot limit its memory",
				  "is host_memory= too low?");
	caps.last_cap = find_last_cap();
	caps.privileged = geteuid() == 0;
	/* Root's files, nodes and processes (the daemon) are not a host's. */
	if (caps.privileged && uid == 0 &&
	    id_mapped("uid_map", HOST_OWN_ID + (unsigned int)getpid()) &&
	    id_mapped("gid_map", HOST_OWN_ID + (unsigned int)getpid())) {
		uid = (uid_t)(HOST_OWN_ID + (unsigned int)getpid());
		gid = (gid_t)uid;
		n_groups = 0;
	}
	switching = uid != geteuid();
	/* Where it cannot, it goes on in the daemon's (no log line: the
	 * daemon reads nothing before the host's hello). */
	if (caps.privileged)
		(void)private_mounts();
	caps.keep = switching ? (1ull << CAP_SETUID) | (1ull << CAP_SETGID)
			      : 0;
	err = drop_own_caps();
	if (err)
		return fail_errno(error, -err, "cannot drop capabilities",
				  "the launcher runs as root");
	if (switching &&
	    (setgroups(n_groups, seal->groups) ||
	     setresgid(gid, gid, gid) || setresuid(uid, uid, uid)))
		return fail_errno(error, errno, "cannot switch to its user",
				  "the launcher runs as root");
	/* The switch made it undumpable: /proc/self/fd, where the plugin's
	 * image is, would be root's. */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	/* ... and cleared its parent-death signal: it dies with the
	 * launcher, as before. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != launcher)
		return fail_errno(error, ESRCH, "its launcher ended",
				  "the daemon is gone");
	if (seal->seccomp == CUSEMU_SECCOMP_OFF)
		return TRUE;
	err = load_rules_as(off_list, cusemu_sandbox_host_rules, false,
			    &allowed);
	return !err || fail_errno(error, -err, "cannot install its seccomp "
				  "filter", "--seccomp=off runs without it");
}

/* ---- root's FUSE unmounter */

/* Whether uid 0 without capabilities may search the directory above dir. */
static bool parent_searchable(const char *dir)
{
	g_autofree char *real = realpath(dir, NULL);
	g_autofree char *parent = g_path_get_dirname(real ? real : dir);
	struct stat st;

	if (stat(parent, &st))
		return false;
	return (st.st_mode & S_IXOTH) ||
	       (st.st_uid == 0 && (st.st_mode & S_IXUSR)) ||
	       (st.st_gid == 0 && (st.st_mode & S_IXGRP));
}

gboolean cusemu_sandbox_unmounter_prepare(struct cusemu_sandbox *sb,
					  const char *dir,
					  struct cusemu_unmounter_seal *seal,
					  GError **error)
{
	int err = 0;

	memset(seal, 0, sizeof(*seal));
	seal->last_cap = find_last_cap();
	seal->keep = 1ull << CAP_SYS_ADMIN;
	sb->unmounter_search = !parent_searchable(dir);
	if (sb->unmounter_search)
		seal->keep |= 1ull << CAP_DAC_READ_SEARCH;
	sb->unmounter_calls = 0;
	if (sb->seccomp != CUSEMU_SECCOMP_OFF)
		err = export_rules(sb->seccomp, cusemu_sandbox_unmounter_rules,
				   &sb->unmounter_calls, &seal->prog);
	if (err) {
		cusemu_sandbox_unmounter_clear(seal);
		return fail_errno(error, -err,
				  "cannot make the FUSE unmounter's seccomp "
				  "filter", "--seccomp=off runs it without one");
	}
	sb->unmounter_sealed = true;
	return TRUE;
}

/* Async-signal-safe: the daemon's pool may have threads at the fork. */
int cusemu_sandbox_unmounter_seal(const struct cusemu_unmounter_seal *seal)
{
	int err;

	caps.last_cap = seal->last_cap;
	caps.keep = seal->keep;
	caps.privileged = true;
	err = drop_own_caps();
	if (err)
		return err;
	if (seal->prog.len &&
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &seal->prog, 0, 0))
		return -errno;
	return 0;
}

void cusemu_sandbox_unmounter_clear(struct cusemu_unmounter_seal *seal)
{
	g_clear_pointer(&seal->prog.filter, g_free);
	seal->prog.len = 0;
}

/* Whom the daemon runs as, and what the /proc helper keeps. */
static const char *sandbox_user(const struct cusemu_sandbox *sb)
{
	return sb->unprivileged ? sb->own_user : sb->user ? sb->user : "root";
}

static const char *helper_caps(const struct cusemu_sandbox *sb, bool json)
{
	if (sb->unprivileged)
		return json ? "" : "none";
	return json ? "\"cap_sys_ptrace\"" : "cap_sys_ptrace only";
}

void cusemu_sandbox_describe(const struct cusemu_sandbox *sb, GString *out)
{
	g_string_append_printf(out, "sandbox: seccomp %s",
			       cusemu_seccomp_mode_name(sb->seccomp));
	if (sb->seccomp != CUSEMU_SECCOMP_OFF)
		g_string_append_printf(out, " (%u system calls allowed)",
				       sb->allowed_calls);
	g_string_append_printf(out, ", capabilities kept: none (%s), user %s "
				    "(uid %u, gid %u); /proc helper pid %d: "
				    "%s",
			       sb->unprivileged ? "started as an ordinary "
						  "user, it held none"
						: "every one dropped, in "
						  "every thread",
			       sandbox_user(sb), (unsigned int)sb->uid,
			       (unsigned int)sb->gid, (int)sb->helper_pid,
			       helper_caps(sb, false));
	if (!sb->unmounter_pid)
		return;
	g_string_append_printf(out, "; FUSE unmounter pid %d: ",
			       (int)sb->unmounter_pid);
	if (!sb->unmounter_sealed) {
		g_string_append(out, "none (runs fusermount3)");
		return;
	}
	g_string_append(out, sb->unmounter_search
				     ? "cap_sys_admin and cap_dac_read_search "
				       "(the mount point's parent is closed to "
				       "others)"
				     : "cap_sys_admin only");
	if (sb->seccomp == CUSEMU_SECCOMP_OFF)
		g_string_append(out, ", no_new_privs, seccomp off");
	else
		g_string_append_printf(out, ", no_new_privs, seccomp %s (%u "
					    "system calls allowed)",
				       cusemu_seccomp_mode_name(sb->seccomp),
				       sb->unmounter_calls);
}

void cusemu_sandbox_describe_json(const struct cusemu_sandbox *sb,
				  GString *out)
{
	g_string_append_printf(out,
			       "{\"seccomp\":\"%s\",\"allowed_calls\":%u,"
			       "\"capabilities\":[],\"user\":\"%s\","
			       "\"uid\":%u,\"gid\":%u,"
			       "\"proc_helper\":{\"pid\":%d,"
			       "\"capabilities\":[%s]}",
			       cusemu_seccomp_mode_name(sb->seccomp),
			       sb->allowed_calls, sandbox_user(sb),
			       (unsigned int)sb->uid, (unsigned int)sb->gid,
			       (int)sb->helper_pid, helper_caps(sb, true));
	if (sb->unmounter_pid)
		g_string_append_printf(out,
				       ",\"unmounter\":{\"pid\":%d,"
				       "\"capabilities\":[%s],"
				       "\"allowed_calls\":%u}",
				       (int)sb->unmounter_pid,
				       !sb->unmounter_sealed ? ""
				       : sb->unmounter_search
					       ? "\"cap_sys_admin\","
						 "\"cap_dac_read_search\""
					       : "\"cap_sys_admin\"",
				       sb->unmounter_calls);
	g_string_append_c(out, '}');
}
