/* SPDX-License-Identifier: MIT */
/*
 * Oopses, soft lockups and hung tasks of device models (oops.h). The
 * signal handler does as little as it can: it takes the backtrace
 * (backtrace.h: libgcc's unwinder, loaded before anything runs) and jumps
 * back to the guard; the report is written and symbolized with libdw
 * afterwards, on the same thread, as ordinary code. Like the kernel after
 * an oops, the daemon bets that what the model broke stays in its own
 * state, and says so with the taint.
 */
#define G_LOG_DOMAIN "cusemu-oops"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <glib.h>

#include "backtrace.h"
#include "call.h"
#include "device.h"
#include "handler.h"
#include "lock.h"
#include "oops.h"
#include "proc.h"
#include "ratelimit.h"
#include "request.h"

/*
 * The oops handler's stack, for a thread whose own stack overflowed: enough
 * for backtrace() and, when the daemon itself faulted, for its report
 * (libdw has frames of over 150 KiB). Mapped, so only what a handler
 * touches takes memory.
 */
#define ALT_STACK_SIZE (1024 * 1024)
/* How long the watchdog waits for a stuck thread to take its backtrace. */
#define SAMPLE_WAIT_MS 500
/* An oops under panic_on_oops ends the daemon with this status. */
#define PANIC_STATUS 3
/* The largest object file of another process that a report reads. */
#define REMOTE_OBJECT_MAX (512u << 20)
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

/*
 * What a lockup report says of the call a guard serves, copied out of it:
 * a stuck thread copies its own when the watchdog samples it, since the
 * call may end (and its guard go) as soon as the handler returns. The
 * strings it points to outlive the call: model tables and names, and
 * plugin files, are never unloaded; the node's name is copied.
 */
struct call_context {
	guint seq;			/* the slot's, when copied */
	/* The model, for the plugin it came from: models outlive devices. */
	const struct cusemu_device_model *m;
	const char *kmodel;
	char node[72];
	struct cusemu_oops_call call;
};

/* What the watchdog knows of one thread that calls into models. */
struct slot {
	pid_t tid;
	struct cusemu_oops_guard *guard;	/* the innermost, or NULL */
	guint seq;			/* bumped at each guard's enter */
	const unsigned long *sleeps;	/* the thread's: odd while asleep */
	gint away;			/* its call runs in a model host */
	void *alt_stack;
	/* Its stack, for a fault on the guard page below it. */
	struct cusemu_stack stack;
	/* Its time on a CPU: spinning or blocked. */
	clockid_t cpu_clock;
	bool has_cpu_clock;
	/* The watchdog's, under oops.lock. */
	guint seen_seq;
	unsigned long seen_sleeps;
	gint64 seen_since;
	int64_t seen_cpu;		/* at seen_since; -1: unknown */
	guint reported_seq, hung_seq;
	bool reported, hung_reported;
	/* A backtrace the thread takes of itself when the watchdog asks,
	 * and what it serves; has_context is false outside a guard. */
	gint sampled;
	struct cusemu_trace trace;
	bool has_context;
	struct call_context context;
};

static struct {
	bool panic;
	unsigned int lockup_secs, hung_secs;
	int lockup_signal;
	char *self_exe;		/* the program, for its symbols */
	gint oopses, lockups, hung_tasks;
	gint fatal;		/* the daemon's own fault is being reported */
	GMutex lock;		/* guards slots, reports and stopping */
	GCond cond;
	GPtrArray *slots;
	GPtrArray *buried;	/* fenced devices the daemon is done with */
	GThread *watchdog;
	bool stopping;
} oops;

/* This thread's slot among oops.slots, if it serves calls: the signal
 * handler, given no pointer, finds the guard's context here. */
static __thread struct slot *my_slot;

/* Such faults, handed from the dying thread to cusemu_oops_reap(). */
#define MAX_ORPHANS 8
static struct orphan {
	gint state;		/* 0 free, 1 being written, 2 ready */
	int signo, code;
	void *addr;
	pid_t tid;
	const char *origin;
	struct cusemu_trace trace;
} orphans[MAX_ORPHANS];

/* ---- the signal handler: backtrace, then back to the guard */

static void *fault_ip(void *context)
{
	return cusemu_fault_ip(context);
}

static void report_daemon_fault(int signo, const siginfo_t *si, void *ip);

/* g's call, copied into c. Async-signal-safe: it only reads memory. */
static void context_of(const struct cusemu_oops_guard *g, guint seq,
		       pid_t tid, struct call_context *c)
{
	const struct cusemu_device *dev = g->dev;
	size_t i;

	c->seq = seq;
	c->m = dev->model;
	c->kmodel = cusemu_device_kernel_model(dev);
	for (i = 0; dev->name[i] && i + 1 < sizeof(c->node); i++)
		c->node[i] = dev->name[i];
	c->node[i] = '\0';
	c->call = (struct cusemu_oops_call){ .op = g->op, .pid = g->pid,
					     .tid = tid };
	if (g->call) {
		c->call.command = cusemu_call_command_name(g->call);
		c->call.cmd = g->call->cmd;
		c->call.compat = g->call->compat;
	}
}

/* The plugin whose code one of the first frames runs, or NULL. */
static const char *plugin_of(const struct cusemu_trace *t)
{
	const char *origin = NULL;

	for (uint32_t i = 0; i < t->n && i < 8 && !origin; i++)
		if (!t->item[i].period)
			origin = cusemu_model_code_origin(
				(void *)(uintptr_t)t->item[i].pc);
	return origin;
}

/*
 * A thread the model started faulted in the model's code: it ends, as the
 * kernel ends a kthread that oopses, and the report and the fences come
 * from cusemu_oops_reap(). False when it is not such a thread.
 */
static bool end_model_thread(int signo, const siginfo_t *si, void *ip)
{
	struct orphan *o = NULL;
	struct cusemu_trace trace;
	const char *origin;

	if (my_slot || syscall(SYS_gettid) == getpid())
		return false;	/* a worker or the main thread: ours */
	cusemu_trace_from(&trace, ip);
	origin = plugin_of(&trace);
	if (!origin)
		return false;
	for (int i = 0; i < MAX_ORPHANS && !o; i++)
		if (g_atomic_int_compare_and_exchange(&orphans[i].state, 0, 1))
			o = &orphans[i];
	if (o) {
		o->signo = signo;
		o->code = si->si_code;
		o->addr = si->si_addr;
		o->tid = (pid_t)syscall(SYS_gettid);
		o->origin = origin;
		o->trace = trace;
		g_atomic_int_set(&o->state, 2);
	}
	pthread_exit(NULL);
}

static void on_signal(int signo, siginfo_t *si, void *context)
{
	struct slot *s = my_slot;
	struct cusemu_oops_guard *g = s ? s->guard : NULL;
	void *ip = fault_ip(context);

	if (signo == oops.lockup_signal) {
		if (s) {
			cusemu_trace_from(&s->trace, ip);
			s->has_context = g != NULL;
			if (g)
				context_of(g, s->seq, s->tid, &s->context);
			g_atomic_int_set(&s->sampled, 1);
		}
		return;
	}
	if (g && !g->signo) {
		g->signo = signo;
		g->code = si->si_code;
		g->addr = si->si_addr;
		g->ip = ip;
		g->stack_low = g->stack_high = 0;
		if (cusemu_stack_overflowed(&s->stack, signo,
					    (uintptr_t)si->si_addr)) {
			g->stack_low = s->stack.low;
			g->stack_high = s->stack.high;
		}
		cusemu_trace_from(&g->trace, ip);
		siglongjmp(g->env, 1);
	}
	if (!g && end_model_thread(signo, si, ip))
		return;
	/* The daemon's own bug, or a second fault while one is handled. */
	if (g_atomic_int_compare_and_exchange(&oops.fatal, 0, 1))
		report_daemon_fault(signo, si, ip);
	signal(signo, SIG_DFL);
	/* A fault comes back when the instruction runs again; a sent signal
	 * (kill, abort's raise) must be sent again. */
	if (si->si_code <= 0)
		raise(signo);
}

/* ---- slots: the threads that call into models */

static void slot_gone(gpointer data)
{
	struct slot *s = data;
	stack_t off = { .ss_flags = SS_DISABLE };

	g_mutex_lock(&oops.lock);
	g_ptr_array_remove_fast(oops.slots, s);
	g_mutex_unlock(&oops.lock);
	sigaltstack(&off, NULL);
	if (s->alt_stack)
		munmap(s->alt_stack, ALT_STACK_SIZE);
	g_free(s);
}

static GPrivate slot_key = G_PRIVATE_INIT(slot_gone);

static struct slot *slot_new(void)
{
	struct slot *s = g_new0(struct slot, 1);
	stack_t ss = { .ss_size = ALT_STACK_SIZE };

	s->tid = (pid_t)syscall(SYS_gettid);
	s->sleeps = cusemu_request_sleeps();
	cusemu_stack_find(&s->stack);
	s->has_cpu_clock = !pthread_getcpuclockid(pthread_self(),
						  &s->cpu_clock);
	/* An overflowed stack still leaves room for the handler. */
	s->alt_stack = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				    MAP_STACK,
			    -1, 0);
	if (s->alt_stack == MAP_FAILED)
		s->alt_stack = NULL;
	ss.ss_sp = s->alt_stack;
	if (!s->alt_stack || sigaltstack(&ss, NULL) < 0)
		g_debug("no alternate signal stack: %s", g_strerror(errno));
	g_mutex_lock(&oops.lock);
	if (!oops.slots)
		oops.slots = g_ptr_array_new();
	g_ptr_array_add(oops.slots, s);
	g_mutex_unlock(&oops.lock);
	g_private_set(&slot_key, s);
	my_slot = s;
	return s;
}

void cusemu_oops_enter(struct cusemu_oops_guard *g, struct cusemu_device *dev,
		       enum cusemu_op op, struct cusemu_call *call,
		       pid_t pid)
{
	struct slot *s = my_slot ? my_slot : slot_new();

	g->dev = dev;
	g->op = op;
	g->call = call;
	g->pid = pid;
	g->signo = 0;
	g->locks = cusemu_lock_held();
	g->lock_holds = g->locks ? cusemu_lock_holds() : 0;
	g->holds = cusemu_request_holds();
	g->prev = s->guard;
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->guard, g, __ATOMIC_RELEASE);
}

void cusemu_oops_away_begin(void)
{
	if (my_slot)
		g_atomic_int_inc(&my_slot->away);
}

void cusemu_oops_away_end(void)
{
	if (my_slot)
		g_atomic_int_add(&my_slot->away, -1);
}

/* ---- reports */

static const char *signal_name(int signo)
{
	switch (signo) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGABRT: return "SIGABRT";
	case SIGSYS: return "SIGSYS";
	case SIGTRAP: return "SIGTRAP";
	}
	return "signal";
}

static const char *code_name(int signo, int code)
{
	if (code == SI_USER || code == SI_TKILL)
		return "sent by kill or abort()";
	switch (signo) {
	case SIGSEGV:
		return code == SEGV_MAPERR ? "address not mapped" :
		       code == SEGV_ACCERR ? "access not allowed" : "segfault";
	case SIGBUS:
		return code == BUS_ADRALN ? "misaligned address" :
		       code == BUS_ADRERR ? "no such physical address" :
					    "bus error";
	case SIGFPE:
		return code == FPE_INTDIV ? "integer divide by zero" :
		       code == FPE_INTOVF ? "integer overflow" :
					    "arithmetic error";
	case SIGILL:
		return code == ILL_ILLOPN ? "illegal operand" :
					    "illegal instruction";
	case SIGSYS:
		return "a system call off the allow-list";
	}
	return "";
}

/* The report's first line, in the kernel's words where it has some. */
static void append_headline(GString *r, int signo, int code, void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	if (signo == SIGSEGV && code > 0 && a < 4096)
		g_string_append_printf(r, "BUG: NULL pointer dereference, "
					  "address: %016" G_GINTPTR_MODIFIER "x",
				       a);
	else if (signo == SIGSEGV && code > 0)
		g_string_append_printf(r, "BUG: unable to handle page fault "
					  "for address: %016" G_GINTPTR_MODIFIER
					  "x",
				       a);
	else if (signo == SIGBUS)
		g_string_append_printf(r, "BUG: bus error at address: %016"
					  G_GINTPTR_MODIFIER "x",
				       a);
	else if (signo == SIGFPE)
		g_string_append(r, "divide error: a division by zero or an "
				   "overflowing one");
	else if (signo == SIGILL)
		g_string_append(r, "invalid opcode");
	else if (signo == SIGABRT)
		g_string_append(r, "BUG: abort() called (a failed assertion, "
				   "or an error the code cannot go on from)");
	else if (signo == SIGTRAP)
		g_string_append(r, "BUG: a breakpoint trap (glib's g_error() "
				   "ends a program so: an error the code cannot "
				   "go on from)");
	else if (signo == SIGSYS)
		g_string_append_printf(r, "BUG: system call %" G_GINTPTR_MODIFIER
					  "u is off the model host's allow-list "
					  "(seccomp)",
				       a);
	else
		g_string_append_printf(r, "BUG: %s", signal_name(signo));
}

static const char *module_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* An object with no file, named for the frames in it ("[vdso]"). */
static void report_memory_object(Dwfl *dwfl, const struct dl_phdr_info *info)
{
	GElf_Addr start = G_MAXUINT64, end = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		start = MIN(start, info->dlpi_addr + ph->p_vaddr);
		end = MAX(end, info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
	}
	if (start < end)
		dwfl_report_module(dwfl, "vdso", start, end);
}

static int report_object(struct dl_phdr_info *info, size_t size, void *data)
{
	Dwfl *dwfl = data;
	const char *path = info->dlpi_name;
	const char *origin;
	int fd;

	(void)size;
	if (!path || !*path)
		path = oops.self_exe;	/* the program itself comes first */
	if (path && path[0] != '/') {
		report_memory_object(dwfl, info);	/* the vDSO */
		return 0;
	}
	if (!path)
		return 0;
	/* A plugin as it was loaded, not what a rebuild put at its path. */
	origin = cusemu_model_file_origin(path, &fd);
	if (fd >= 0)	/* not dup(): the sandbox has fcntl */
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (!dwfl_report_elf(dwfl, module_name(origin ? origin : path), path,
			     fd, info->dlpi_addr, true) &&
	    fd >= 0)
		close(fd);
	return 0;
}

static void append_frame(GString *out, Dwfl *dwfl, void *frame, bool first)
{
	/* A return address points after its call: look up the call. */
	GElf_Addr pc = (GElf_Addr)(uintptr_t)frame;
	GElf_Addr at = first ? pc : pc - 1;
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, at) : NULL;
	const char *mod_name = NULL, *name = NULL, *file = NULL;
	GElf_Off off = 0;
	GElf_Sym sym = { 0 };
	Dwfl_Line *line;
	int lineno = 0;

	if (mod) {
		mod_name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL,
					    NULL, NULL);
		name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL,
					    NULL);
		line = dwfl_module_getsrc(mod, at);
		if (line)
			file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL,
					     NULL);
	}
	if (name)
		g_string_append_printf(out, " %s+0x%" G_GINT64_MODIFIER
					    "x/0x%" G_GINT64_MODIFIER "x",
				       name, (guint64)(off + (pc - at)),
				       (guint64)sym.st_size);
	else
		g_string_append_printf(out, " 0x%" G_GINT64_MODIFIER "x",
				       (guint64)pc);
	if (mod_name)
		g_string_append_printf(out, " [%s]", mod_name);
	if (file)
		g_string_append_printf(out, " %s:%d", module_name(file),
				       lineno);
}

/*
 * The distribution's debug files (/usr/lib/debug/.build-id), else the
 * module's own sections. Not dwfl_standard_find_debuginfo(): it starts
 * debuginfod's network client, which a report must not wait for (and
 * which the sandbox forbids).
 */
static int find_local_debuginfo(Dwfl_Module *mod, void **userdata,
				const char *modname, Dwarf_Addr base,
				const char *file_name,
				const char *debuglink_file,
				GElf_Word debuglink_crc,
				char **debuginfo_file_name)
{
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base,
					    file_name, debuglink_file,
					    debuglink_crc,
					    debuginfo_file_name);
}

/* The objects of another process, as it listed them. */
struct remote_objects {
	const struct cusemu_oops_module *mods;
	int n;
};

/* A regular file of at most REMOTE_OBJECT_MAX bytes, not on a FUSE file
 * system. */
static bool remote_object_file(int fd)
{
	struct statfs fs;
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	       st.st_size <= (off_t)REMOTE_OBJECT_MAX && !fstatfs(fd, &fs) &&
	       fs.f_type != FUSE_SUPER_MAGIC;
}

/*
 * An object another process named by its path (a model host's link map),
 * for libdw, which would open anything: a FIFO blocks the open for ever, a
 * device's open acts (a watchdog starts), a FUSE file is a request to a
 * server that may be this daemon, a file without end is read for ever.
 * O_PATH opens none of them; what it found is looked at, and only a
 * regular file is opened, through that descriptor (so not what a rename
 * put at the path since), without blocking. -1 when it is not one.
 */
static int open_remote_object(const char *path)
{
	char again[32];
	int at = open(path, O_PATH | O_CLOEXEC), fd = -1;

	if (at < 0)
		return -1;
	if (remote_object_file(at)) {
		snprintf(again, sizeof(again), "/proc/self/fd/%d", at);
		fd = open(again, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0 && !remote_object_file(fd)) {
			close(fd);
			fd = -1;
		}
	}
	close(at);
	return fd;
}

static void report_remote(Dwfl *dwfl, const struct remote_objects *r)
{
	for (int i = 0; i < r->n; i++) {
		const struct cusemu_oops_module *m = &r->mods[i];
		int fd = m->fd >= 0 ? fcntl(m->fd, F_DUPFD_CLOEXEC, 0)
				    : open_remote_object(m->path);

		/* Without a file, its frames are addresses. */
		if (fd < 0)
			continue;
		if (!dwfl_report_elf(dwfl, m->name, m->path, fd, m->base,
				     true))
			close(fd);
	}
}

/* libdw over this process's objects, or remote's; NULL if it fails. */
static Dwfl *symbols_of(const struct remote_objects *remote)
{
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = find_local_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&callbacks);

	if (dwfl) {
		dwfl_report_begin(dwfl);
		if (remote)
			report_remote(dwfl, remote);
		else
			dl_iterate_phdr(report_object, dwfl);
		dwfl_report_end(dwfl, NULL, NULL);
	}
	return dwfl;
}

/* A fold of the frames before it. */
static void append_fold(GString *out, const struct cusemu_trace_item *f)
{
	if (f->period == 1)
		g_string_append_printf(out, " ... %u times\n", f->times);
	else
		g_string_append_printf(out, " ... the %u frames above, %u "
					    "times\n",
				       f->period, f->times);
}

/* The trace as lines, "RIP:" first with rip: of this process's objects,
 * or of remote's. */
static void append_symbols_of(GString *out, const struct remote_objects *remote,
			      const struct cusemu_trace *t, bool rip)
{
	Dwfl *dwfl = symbols_of(remote);
	uint32_t n = MIN(t->n, (uint32_t)CUSEMU_TRACE_ITEMS);

	if (rip && n > 0 && !t->item[0].period) {
		g_string_append(out, "RIP:");
		append_frame(out, dwfl, (void *)(uintptr_t)t->item[0].pc, true);
		g_string_append_c(out, '\n');
	}
	g_string_append(out, "Call Trace:\n");
	for (uint32_t i = 0; i < n; i++) {
		const struct cusemu_trace_item *it = &t->item[i];

		if (t->left_out && i == t->cut)
			g_string_append_printf(out, " ... %u frames left out\n",
					       t->left_out);
		if (it->period) {
			append_fold(out, it);
			continue;
		}
		append_frame(out, dwfl, (void *)(uintptr_t)it->pc, i == 0);
		g_string_append_c(out, '\n');
	}
	if (dwfl)
		dwfl_end(dwfl);
}

static void append_symbols(GString *out, const struct cusemu_trace *t,
			   bool rip)
{
	append_symbols_of(out, NULL, t, rip);
}

void cusemu_oops_append_trace(GString *out, const struct cusemu_trace *t)
{
	append_symbols(out, t, false);
}

void cusemu_oops_append_remote_trace(GString *out,
				     const struct cusemu_oops_module *mods,
				     int n_mods, const struct cusemu_trace *t,
				     bool rip)
{
	struct remote_objects remote = { mods, n_mods };

	append_symbols_of(out, &remote, t, rip);
}

/* A function's entry: its first line, no return address to step back. */
static void append_where_of(GString *out, const struct remote_objects *remote,
			    uint64_t addr)
{
	Dwfl *dwfl = symbols_of(remote);

	append_frame(out, dwfl, (void *)(uintptr_t)addr, true);
	if (dwfl)
		dwfl_end(dwfl);
}

void cusemu_oops_append_where(GString *out, const void *addr)
{
	append_where_of(out, NULL, (uintptr_t)addr);
}

void cusemu_oops_append_remote_where(GString *out,
				     const struct cusemu_oops_module *mods,
				     int n_mods, uint64_t addr)
{
	struct remote_objects remote = { mods, n_mods };

	append_where_of(out, &remote, addr);
}

/* The command name of pid, "?" when it is gone (or pid is 0). */
static void comm_of(pid_t pid, char *buf, size_t size)
{
	if (pid <= 0 || cusemu_proc_comm(pid, buf, size) < 0)
		g_strlcpy(buf, "?", size);
}

/* The Device:, Call: and Thread: lines, from what outlives the device. */
static void append_context_of(GString *r, const char *node,
			      const struct cusemu_device_model *m,
			      const char *kmodel,
			      const struct cusemu_oops_call *c)
{
	const char *origin = cusemu_model_origin(m);
	char comm[32], self[32];

	comm_of(c->pid, comm, sizeof(comm));
	if (c->thread)
		g_strlcpy(self, c->thread, sizeof(self));
	else
		comm_of(c->tid, self, sizeof(self));

	g_string_append_printf(r, "Device: %s, model %s (%s%s), kernel model "
				  "%s\n",
			       node, m->name, origin ? "from " : "built in",
			       origin ? origin : "", kmodel);
	g_string_append_printf(r, "Call: %s", cusemu_op_name(c->op));
	if (c->op == CUSEMU_OP_IOCTL)
		g_string_append_printf(r, " %s (0x%08x) from an %s caller",
				       c->command ? c->command
						  : "an unknown command",
				       c->cmd, c->compat ? "i386" : "x86_64");
	if (c->pid)
		g_string_append_printf(r, ", pid %d (%s)", (int)c->pid, comm);
	else if (c->op == CUSEMU_OP_CONTROL)
		g_string_append(r, ", from cusemuctl device");
	g_string_append_printf(r, "\nThread: %d (%s) Tainted: %s\n",
			       (int)c->tid, self, cusemu_oops_taint());
}

void cusemu_oops_append_context(GString *r, const struct cusemu_device *dev,
				const struct cusemu_oops_call *c)
{
	append_context_of(r, dev->name, dev->model,
			  cusemu_device_kernel_model(dev), c);
}

/* Device:, Call: and Thread: lines of a guard's report, on its thread. */
static void append_context(GString *r, const struct cusemu_oops_guard *g,
			   pid_t tid)
{
	struct call_context c;

	context_of(g, 0, tid, &c);
	cusemu_oops_append_context(r, g->dev, &c.call);
}

/* One line a log message, each with the first word of the report. */
static void log_report(const char *report)
{
	g_auto(GStrv) lines = g_strsplit(report, "\n", -1);

	for (char **l = lines; *l; l++)
		if (**l)
			g_message("%s", *l);
}

static void report_daemon_fault(int signo, const siginfo_t *si, void *ip)
{
	struct cusemu_trace trace;
	GString *r = g_string_new(NULL);

	cusemu_trace_from(&trace, ip);
	append_headline(r, signo, si->si_code, si->si_addr);
	g_string_append_printf(r, "\nOops: %s (%s) in cusemud itself, not in "
				  "a model's call: the daemon ends\n",
			       signal_name(signo),
			       code_name(signo, si->si_code));
	append_symbols(r, &trace, true);
	g_string_append(r, "---[ end trace ]---");
	log_report(r->str);
	g_string_free(r, TRUE);
}

void cusemu_oops_append_fault(GString *r, int signo, int code, void *addr,
			      int number, const char *where)
{
	append_headline(r, signo, code, addr);
	g_string_append_printf(r, "\nOops: %s (%s) [#%d] in %s\n",
			       signal_name(signo), code_name(signo, code),
			       number, where);
}

void cusemu_oops_append_stack_fault(GString *r, int signo, void *addr,
				    uintptr_t low, uintptr_t high, int number,
				    const char *where)
{
	/* The kernel's words for its own stacks (handle_stack_overflow). */
	g_string_append_printf(r, "BUG: stack guard page was hit at %016"
				  G_GINTPTR_MODIFIER "x (stack is %016"
				  G_GINTPTR_MODIFIER "x..%016"
				  G_GINTPTR_MODIFIER "x)\n",
			       (uintptr_t)addr, low, high);
	g_string_append_printf(r, "Oops: %s (a stack overflow) [#%d] in %s\n",
			       signal_name(signo), number, where);
}

static char *oops_report(const struct cusemu_oops_guard *g, int number)
{
	GString *r = g_string_new(NULL);
	g_autofree char *where = g_strdup_printf("%s's %s",
						 g->dev->model->name,
						 cusemu_op_name(g->op));

	if (g->stack_low)
		cusemu_oops_append_stack_fault(r, g->signo, g->addr,
					       g->stack_low, g->stack_high,
					       number, where);
	else
		cusemu_oops_append_fault(r, g->signo, g->code, g->addr, number,
					 where);
	append_context(r, g, my_slot->tid);
	append_symbols(r, &g->trace, true);
	if (!oops.panic)
		g_string_append_printf(r, "%s is fenced: every call on it "
					  "fails with EIO until 'cusemuctl "
					  "reload %s'\n",
				       g->dev->name, g->dev->name);
	g_string_append(r, "---[ end trace ]---");
	return g_string_free(r, FALSE);
}

/* The guard's device takes no more calls; the first report is kept. */
static void fence(struct cusemu_device *dev, char *report)
{
	struct cusemu_instance *inst = cusemu_instance(dev);

	g_mutex_lock(&oops.lock);
	if (!inst->oops.report)
		inst->oops.report = g_steal_pointer(&report);
	g_atomic_int_set(&inst->oops.fenced, 1);
	g_mutex_unlock(&oops.lock);
	g_free(report);
}

/* A signal sent while blocked (abort() blocks none; a kill may come
 * from a thread that blocked it) is not left blocked after the jump. */
static void unblock(int signo)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, signo);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/*
 * A call that returns owing unlocks it did not owe when it began, as the
 * kernel's lockdep_sys_exit() finds at a system call's end: the report
 * (rate-limited: a client may repeat the call) and the locks let go.
 */
static void lock_left_held(const struct cusemu_oops_guard *g)
{
	static struct cusemu_ratelimit limit;
	const void *ip = cusemu_big_lock.model_ip;
	bool big = cusemu_lock_depth(&cusemu_big_lock) > 0;
	char note[CUSEMU_RATELIMIT_NOTE], comm[32];
	struct call_context c;
	unsigned int let_go;
	pid_t pid;
	GString *r;

	if (!big)
		ip = NULL;
	let_go = cusemu_lock_restore(g->locks, g->lock_holds);
	if (!let_go || !cusemu_ratelimit(&limit, note))
		return;
	context_of(g, 0, my_slot->tid, &c);
	pid = g->pid ? g->pid : my_slot->tid;
	comm_of(pid, comm, sizeof(comm));
	r = g_string_new(NULL);
	g_string_append_printf(
		r,
		"================================================\n"
		"WARNING: lock held when returning to user space!\n"
		"------------------------------------------------\n"
		"%s/%d is leaving the kernel with locks still held!\n"
		"%u hold%s of %s by %s's %s:%s",
		comm, (int)pid, let_go, let_go == 1 ? "" : "s",
		big ? "the big lock (lock_kernel)" : "a dispatcher lock",
		g->dev->model->name, cusemu_op_name(g->op),
		ip ? "" : " taken in its model host");
	if (ip) {
		g_string_append(r, " taken at:");
		cusemu_oops_append_where(r, ip);
	}
	g_string_append_c(r, '\n');
	cusemu_oops_append_context(r, g->dev, &c.call);
	g_string_append_printf(r, "The lock is let go: the call's result "
				  "stands, and %s's other callers go on%s\n"
				  "---[ end trace ]---",
			       g->dev->name, note);
	log_report(r->str);
	g_string_free(r, TRUE);
}

bool cusemu_oops_leave(struct cusemu_oops_guard *g)
{
	struct slot *s = my_slot;
	g_autofree char *report = NULL;
	int number;

	__atomic_store_n(&s->guard, g->prev, __ATOMIC_RELEASE);
	if (G_LIKELY(!g->signo)) {
		if (G_UNLIKELY(cusemu_lock_held() > g->locks ||
			       (g->locks &&
				cusemu_lock_holds() > g->lock_holds)))
			lock_left_held(g);
		return false;
	}
	unblock(g->signo);
	/* What the call held through cusemu's API, so no one waits for it. */
	cusemu_request_release_holds(g->holds);
	cusemu_lock_release_held(g->locks);
	number = g_atomic_int_add(&oops.oopses, 1) + 1;
	report = oops_report(g, number);
	log_report(report);
	if (oops.panic) {
		g_message("panic_on_oops: the daemon ends; its nodes go with it");
		_exit(PANIC_STATUS);
	}
	fence(g->dev, g_steal_pointer(&report));
	return true;
}

bool cusemu_device_fenced(const struct cusemu_device *dev)
{
	return g_atomic_int_get(&cusemu_instance(dev)->oops.fenced);
}

const char *cusemu_device_oops_report(const struct cusemu_device *dev)
{
	const struct cusemu_instance *inst = cusemu_instance(dev);

	return g_atomic_int_get(&inst->oops.fenced) ? inst->oops.report : NULL;
}

const char *cusemu_oops_taint(void)
{
	bool d = g_atomic_int_get(&oops.oopses) > 0;
	bool l = g_atomic_int_get(&oops.lockups) > 0;

	return d && l ? "DL" : d ? "D" : l ? "L" : "";
}

unsigned int cusemu_oops_count(void)
{
	return (unsigned int)g_atomic_int_get(&oops.oopses);
}

unsigned int cusemu_oops_lockups(void)
{
	return (unsigned int)g_atomic_int_get(&oops.lockups);
}

unsigned int cusemu_oops_hung_tasks(void)
{
	return (unsigned int)g_atomic_int_get(&oops.hung_tasks);
}

void cusemu_oops_reap(void (*fence_model)(const char *origin,
					  const char *report, void *data),
		      void *data)
{
	for (int i = 0; i < MAX_ORPHANS; i++) {
		struct orphan *o = &orphans[i];
		GString *r;
		int number;

		if (g_atomic_int_get(&o->state) != 2)
			continue;
		number = g_atomic_int_add(&oops.oopses, 1) + 1;
		r = g_string_new(NULL);
		{
		g_autofree char *where = g_strdup_printf(
			"thread %d, which the model of %s started: the "
			"thread ends",
			(int)o->tid, o->origin);

		cusemu_oops_append_fault(r, o->signo, o->code, o->addr, number,
					 where);
		g_string_append_printf(r, "Tainted: %s\n",
				       cusemu_oops_taint());
		}
		append_symbols(r, &o->trace, true);
		g_string_append_printf(r, "Every device of that model is "
					  "fenced until 'cusemuctl reload'\n"
					  "---[ end trace ]---");
		log_report(r->str);
		if (oops.panic) {
			g_message("panic_on_oops: the daemon ends; its nodes go "
				  "with it");
			_exit(PANIC_STATUS);
		}
		fence_model(o->origin, r->str, data);
		g_string_free(r, TRUE);
		g_atomic_int_set(&o->state, 0);
	}
}

void cusemu_oops_fence(struct cusemu_device *dev, const char *report)
{
	fence(dev, g_strdup(report));
}

void cusemu_oops_bury(struct cusemu_device *dev)
{
	g_mutex_lock(&oops.lock);
	if (!oops.buried)
		oops.buried = g_ptr_array_new();
	g_ptr_array_add(oops.buried, dev);
	g_mutex_unlock(&oops.lock);
}

/* ---- the watchdog: soft lockups and hung tasks */

/*
 * A soft lockup or a hung task, as the watchdog found it: copied out of
 * the slot under oops.lock, reported after it, so that the slow part
 * (symbols) holds no thread that enters a guard or a fence.
 */
struct lockup {
	pid_t tid;
	bool hung;		/* a hung task, else a soft lockup */
	bool asleep;		/* hung in the helpers of <cusemu/sched.h> */
	gint64 stuck_us;
	uint64_t ran_ns;	/* its time on a CPU meanwhile */
	bool answered;		/* the thread took its backtrace */
	struct call_context context;
	struct cusemu_trace trace;
};

/* At most this many reports per look; the others wait for the next. */
#define LOCKUPS_PER_LOOK 4
/*
 * A thread stuck outside the helpers spins if it ran at least this part
 * of the time (1/SPIN_SHARE) on a CPU: a spinning thread gets its share
 * even on a loaded machine, a blocked one next to nothing.
 */
#define SPIN_SHARE 50

/*
 * The stuck thread takes its own backtrace and copies what it serves,
 * from the lockup signal; under oops.lock. False when it did not answer
 * in time, or answered from another call (the stuck one ended meanwhile).
 */
static bool sample(struct slot *s, guint seq, struct lockup *l)
{
	g_atomic_int_set(&s->sampled, 0);
	if (syscall(SYS_tgkill, getpid(), s->tid, oops.lockup_signal) < 0)
		return false;
	for (int waited = 0; waited < SAMPLE_WAIT_MS; waited += 5) {
		if (g_atomic_int_get(&s->sampled)) {
			if (!s->has_context || s->context.seq != seq)
				return false;
			l->context = s->context;
			l->trace = s->trace;
			return true;
		}
		poll(NULL, 0, 5);
	}
	return false;
}

/* "BUG: soft lockup - ..." (counted: the taint gets its L). */
static void append_lockup_of(GString *r, const char *model, enum cusemu_op op,
			     gint64 stuck_us, pid_t pid, const char *comm)
{
	char buf[32];

	if (!comm) {
		comm_of(pid, buf, sizeof(buf));
		comm = buf;
	}
	g_atomic_int_inc(&oops.lockups);
	g_string_append_printf(r, "BUG: soft lockup - %s's %s stuck for %us "
				  "without sleeping! [%s:%d]\n",
			       model, cusemu_op_name(op),
			       (unsigned int)(stuck_us / G_USEC_PER_SEC), comm,
			       (int)pid);
}

void cusemu_oops_append_hung(GString *r, pid_t pid)
{
	const char *taint = cusemu_oops_taint();
	char comm[32];

	comm_of(pid, comm, sizeof(comm));
	g_atomic_int_inc(&oops.hung_tasks);
	/* khungtaskd's lines, with our knob in place of its sysctl. */
	g_string_append_printf(r, "INFO: task %s:%d blocked for more than %u "
				  "seconds.\n      %s%s\n\"hung_task_secs=0\" "
				  "(--hung-task-secs 0) disables this "
				  "message.\n",
			       comm, (int)pid, oops.hung_secs,
			       *taint ? "Tainted: " : "Not tainted", taint);
}

void cusemu_oops_append_hung_state(GString *r, bool asleep, gint64 stuck_us,
				   uint64_t ran_ns)
{
	if (asleep)
		g_string_append_printf(r, "It sleeps in the helpers of "
					  "<cusemu/sched.h>, for %us now\n",
				       (unsigned int)(stuck_us /
						      G_USEC_PER_SEC));
	else
		g_string_append_printf(r, "It is blocked outside the helpers "
					  "of <cusemu/sched.h> (a lock of the "
					  "model's own?): %" G_GUINT64_FORMAT
					  " ms on a CPU in %us\n",
				       ran_ns / 1000000,
				       (unsigned int)(stuck_us /
						      G_USEC_PER_SEC));
}

bool cusemu_oops_spinning(gint64 stuck_us, uint64_t ran_ns)
{
	return stuck_us <= 0 ||
	       ran_ns * SPIN_SHARE >= (uint64_t)stuck_us * 1000;
}

static void report_hung(const struct lockup *l)
{
	GString *r = g_string_new(NULL);
	const struct call_context *c = &l->context;

	if (!l->answered) {
		cusemu_oops_append_hung(r, l->tid);
		g_string_append(r, "Call Trace: (the thread did not answer)\n");
	} else {
		cusemu_oops_append_hung(r, c->call.pid ? c->call.pid : l->tid);
		append_context_of(r, c->node, c->m, c->kmodel, &c->call);
		append_symbols(r, &l->trace, false);
	}
	cusemu_oops_append_hung_state(r, l->asleep, l->stuck_us, l->ran_ns);
	g_string_append_printf(r, "The call goes on, as the kernel leaves a "
				  "hung task: %s\n---[ end trace ]---",
			       l->asleep ? "a wake-up ends it, or its caller "
					   "giving up"
					 : "only the model can end it");
	log_report(r->str);
	g_string_free(r, TRUE);
}

static void report_lockup(const struct lockup *l)
{
	GString *r = g_string_new(NULL);
	const struct call_context *c = &l->context;
	char comm[32];

	if (l->hung) {
		g_string_free(r, TRUE);
		report_hung(l);
		return;
	}
	if (!l->answered) {
		comm_of(l->tid, comm, sizeof(comm));
		g_atomic_int_inc(&oops.lockups);
		g_string_append_printf(r, "BUG: soft lockup - a call stuck "
					  "for %us without sleeping! [%s:%d]\n"
					  "Call Trace: (the thread did not "
					  "answer)\n---[ end trace ]---",
				       (unsigned int)(l->stuck_us /
						      G_USEC_PER_SEC),
				       comm, (int)l->tid);
		log_report(r->str);
		g_string_free(r, TRUE);
		return;
	}
	append_lockup_of(r, c->m->name, c->call.op, l->stuck_us,
			 c->call.pid ? c->call.pid : l->tid, NULL);
	append_context_of(r, c->node, c->m, c->kmodel, &c->call);
	append_symbols(r, &l->trace, true);
	g_string_append_printf(r, "The call goes on; sleep through "
				  "<cusemu/sched.h> (cusemu_msleep, "
				  "cusemu_cond_wait_until) to let other "
				  "calls of %s run\n---[ end trace ]---",
			       c->node);
	log_report(r->str);
	g_string_free(r, TRUE);
}

void cusemu_oops_append_lockup(GString *r, const struct cusemu_device *dev,
			       enum cusemu_op op, gint64 stuck_us, pid_t pid,
			       const char *comm)
{
	append_lockup_of(r, dev->model->name, op, stuck_us, pid, comm);
}

int cusemu_oops_next(void)
{
	return g_atomic_int_add(&oops.oopses, 1) + 1;
}

void cusemu_oops_log(const char *report)
{
	log_report(report);
}

bool cusemu_oops_panics(void)
{
	return oops.panic;
}

unsigned int cusemu_oops_lockup_secs(void)
{
	return oops.lockup_secs;
}

unsigned int cusemu_oops_hung_secs(void)
{
	return oops.hung_secs;
}

/* The thread's time on a CPU, in ns; -1 when unknown. */
static int64_t cpu_ns(const struct slot *s)
{
	struct timespec ts;

	if (!s->has_cpu_clock || clock_gettime(s->cpu_clock, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * What a thread in a guard that neither returned nor changed its sleeps
 * since the last look is: l->hung, l->asleep and l->ran_ns set. False
 * when it is neither a lockup nor a hung task yet, or was reported.
 */
static bool stuck(struct slot *s, guint seq, gint64 now, struct lockup *l)
{
	gint64 lockup_us = (gint64)oops.lockup_secs * G_USEC_PER_SEC;
	gint64 hung_us = (gint64)oops.hung_secs * G_USEC_PER_SEC;
	int64_t cpu = -1;

	l->stuck_us = now - s->seen_since;
	l->asleep = s->seen_sleeps & 1;
	l->ran_ns = 0;
	if (!l->asleep)
		cpu = cpu_ns(s);
	if (cpu >= 0 && s->seen_cpu >= 0 && cpu >= s->seen_cpu)
		l->ran_ns = (uint64_t)(cpu - s->seen_cpu);
	/* Not knowing, a thread outside the helpers spins. */
	l->hung = l->asleep || (cpu >= 0 && s->seen_cpu >= 0 &&
				!cusemu_oops_spinning(l->stuck_us, l->ran_ns));
	if (l->hung)
		return hung_us && l->stuck_us >= hung_us &&
		       !(s->hung_reported && s->hung_seq == seq);
	return lockup_us && l->stuck_us >= lockup_us &&
	       !(s->reported && s->reported_seq == seq);
}

/*
 * One look at every thread, under oops.lock: the stuck ones sampled into
 * found (at most LOCKUPS_PER_LOOK), their number returned. A thread that
 * did not answer is reported once, without its call; one whose call ended
 * meanwhile is not stuck. A call away in a model host is its host's.
 */
static int watch(gint64 now, struct lockup *found)
{
	int n = 0;

	for (guint i = 0; i < oops.slots->len && n < LOCKUPS_PER_LOOK; i++) {
		struct slot *s = oops.slots->pdata[i];
		struct cusemu_oops_guard *g =
			__atomic_load_n(&s->guard, __ATOMIC_ACQUIRE);
		guint seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		unsigned long sleeps =
			__atomic_load_n(s->sleeps, __ATOMIC_RELAXED);
		struct lockup *l = &found[n];

		if (!g || g_atomic_int_get(&s->away) || seq != s->seen_seq ||
		    sleeps != s->seen_sleeps) {
			s->seen_seq = seq;
			s->seen_sleeps = sleeps;
			s->seen_since = now;
			s->seen_cpu = cpu_ns(s);
			continue;
		}
		if (!stuck(s, seq, now, l))
			continue;
		l->tid = s->tid;
		l->answered = sample(s, seq, l);
		if (!l->answered && g_atomic_int_get(&s->sampled))
			continue;	/* it moved on: not stuck */
		if (l->hung) {
			s->hung_reported = true;
			s->hung_seq = seq;
		} else {
			s->reported = true;
			s->reported_seq = seq;
		}
		n++;
	}
	return n;
}

static gpointer watchdog(gpointer data)
{
	unsigned int secs = oops.lockup_secs && oops.hung_secs
				    ? MIN(oops.lockup_secs, oops.hung_secs)
				    : MAX(oops.lockup_secs, oops.hung_secs);
	/* Five looks per threshold, as the kernel's sample period. */
	gint64 period = (gint64)secs * G_USEC_PER_SEC / 5;
	struct lockup *found = g_new(struct lockup, LOCKUPS_PER_LOOK);

	(void)data;
	g_mutex_lock(&oops.lock);
	while (!oops.stopping) {
		int n = 0;

		g_cond_wait_until(&oops.cond, &oops.lock,
				  g_get_monotonic_time() + period);
		if (!oops.stopping && oops.slots)
			n = watch(g_get_monotonic_time(), found);
		g_mutex_unlock(&oops.lock);
		for (int i = 0; i < n; i++)
			report_lockup(&found[i]);
		g_mutex_lock(&oops.lock);
	}
	g_mutex_unlock(&oops.lock);
	g_free(found);
	return NULL;
}

/* ---- set-up */

void cusemu_oops_init(bool panic, unsigned int lockup_secs,
		      unsigned int hung_secs)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				      SIGABRT };
	/* Not blocked in the handler: it leaves by a jump that restores no
	 * mask (cusemu_oops_setjmp). */
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO | SA_ONSTACK |
					    SA_NODEFER };

	oops.panic = panic;
	oops.lockup_secs = lockup_secs;
	oops.hung_secs = hung_secs;
	oops.lockup_signal = SIGRTMIN + 1;
	oops.self_exe = g_file_read_link("/proc/self/exe", NULL);
	cusemu_trace_warm_up();
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < G_N_ELEMENTS(faults); i++)
		sigaction(faults[i], &sa, NULL);
	/* A sampled thread may be blocked in any system call: it goes on. */
	sa.sa_flags |= SA_RESTART;
	sigaction(oops.lockup_signal, &sa, NULL);
	/* The main thread's stack too, for its control callbacks. */
	if (!my_slot)
		slot_new();
	if ((lockup_secs || hung_secs) && !oops.watchdog)
		oops.watchdog = g_thread_new("cusemu-watchdog", watchdog, NULL);
}

void cusemu_oops_shutdown(void)
{
	if (!oops.watchdog)
		return;
	g_mutex_lock(&oops.lock);
	oops.stopping = true;
	g_cond_broadcast(&oops.cond);
	g_mutex_unlock(&oops.lock);
	g_thread_join(oops.watchdog);
	oops.watchdog = NULL;
	oops.stopping = false;
}
