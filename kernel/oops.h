/* SPDX-License-Identifier: MIT */
/*
 * A model's bug costs its device, not the daemon: what the kernel does with
 * a driver's oops. Every call into a model's code runs under a guard; a
 * fault there (SIGSEGV, SIGBUS, SIGFPE, SIGILL, abort()) jumps back to the
 * guard, which lets go of what the call held through cusemu's API, logs
 * one report with a symbolized backtrace, fences the device (every later
 * call on it fails with EIO) and taints the daemon. A fault outside any
 * guard is the daemon's own: the same report, then the daemon ends. A
 * watchdog reports a handler that runs too long without sleeping in the
 * helpers of <cusemu/sched.h> (a soft lockup), and one that sleeps or is
 * blocked too long (a hung task), once per call.
 */
#ifndef CUSEMU_OOPS_H
#define CUSEMU_OOPS_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "backtrace.h"
#include "stats.h"

struct cusemu_call;
struct cusemu_device;

/*
 * One call into a model, on the stack of the thread that makes it.
 * Use it as
 *
 *	struct cusemu_oops_guard g;
 *
 *	cusemu_oops_enter(&g, dev, CUSEMU_OP_READ, NULL, pid);
 *	if (!cusemu_oops_setjmp(&g))
 *		ret = dev->model->read(...);
 *	if (cusemu_oops_leave(&g))
 *		ret = -EIO;
 *
 * cusemu_oops_setjmp() must be called in the frame that stays alive for
 * the call, and a variable it sets there read only when it returned.
 */
struct cusemu_oops_guard {
	sigjmp_buf env;
	struct cusemu_device *dev;
	enum cusemu_op op;		/* what the daemon asked of the model */
	struct cusemu_call *call;	/* an ioctl's, else NULL */
	pid_t pid;			/* the caller, 0 if none */
	unsigned int locks;		/* dispatcher locks held before */
	unsigned int lock_holds;	/* and their depths, summed */
	unsigned int holds;		/* and other holds (request.h) */
	struct cusemu_oops_guard *prev;	/* an outer guard of the thread */
	/* Set by the signal handler when the model faulted. */
	int signo, code;
	void *addr, *ip;
	/* A fault on the stack's guard: the stack, else 0, 0. */
	uintptr_t stack_low, stack_high;
	struct cusemu_trace trace;
};

/*
 * The guard's jump point: 0 when set, non-zero when the model faulted.
 * The signal mask is not saved (that would be a system call per call):
 * the handlers do not block their signal, so there is none to restore.
 */
#define cusemu_oops_setjmp(g) sigsetjmp((g)->env, 0)

/*
 * Install the handlers and start the watchdog of soft lockups (lockup_secs
 * 0: none) and hung tasks (hung_secs 0: none). With panic, an oops ends
 * the daemon after its report. Call once, before the sandbox and before
 * any model runs.
 */
void cusemu_oops_init(bool panic, unsigned int lockup_secs,
		      unsigned int hung_secs);
/* The watchdog stops; the handlers stay. */
void cusemu_oops_shutdown(void);

void cusemu_oops_enter(struct cusemu_oops_guard *g, struct cusemu_device *dev,
		       enum cusemu_op op, struct cusemu_call *call,
		       pid_t pid);
/*
 * Leave the guard. True when the model faulted inside it: what the call
 * held is let go, the report is logged and the device fenced (or, with
 * panic_on_oops, the daemon ends); the caller fails the call with EIO.
 * A call that returned still holding a lock it took (cusemu_lock_kernel()
 * without its unlock) gets the kernel's "lock held when returning to user
 * space" report, and the lock is let go: its result stands, and the
 * device's other callers go on.
 */
bool cusemu_oops_leave(struct cusemu_oops_guard *g);

/*
 * Report such faults, from the main loop: fence_model(origin, report) is
 * to fence every device whose model came from that load of the plugin
 * (cusemu_oops_fence()).
 */
void cusemu_oops_reap(void (*fence_model)(const char *origin,
					  const char *report, void *data),
		      void *data);
void cusemu_oops_fence(struct cusemu_device *dev, const char *report);
/* A fenced device the daemon is done with: kept, never freed (see
 * cusemu_device_free()). */
void cusemu_oops_bury(struct cusemu_device *dev);

/* Taint flags as the kernel prints them: "D" once a model oopsed, "L"
 * once one locked up; "" when clean. */
const char *cusemu_oops_taint(void);
/* How many oopses, soft lockups and hung tasks there were. */
unsigned int cusemu_oops_count(void);
unsigned int cusemu_oops_lockups(void);
unsigned int cusemu_oops_hung_tasks(void);

/*
 * The current thread's call runs in a model host until
 * cusemu_oops_away_end(): the host's watch (daemon/host.c) reports its
 * lockups and hung tasks, not the daemon's watchdog.
 */
void cusemu_oops_away_begin(void);
void cusemu_oops_away_end(void);

/* Whether dev was fenced by an oops; its report (NULL if not fenced). */
bool cusemu_device_fenced(const struct cusemu_device *dev);
const char *cusemu_device_oops_report(const struct cusemu_device *dev);

/*
 * For reports of models that run in a model host (daemon/host.c): the
 * same report, from what the host sent.
 */
/* The call a report is about. */
struct cusemu_oops_call {
	enum cusemu_op op;
	const char *command;	/* an ioctl's, or NULL */
	unsigned int cmd;
	bool compat;
	pid_t pid;		/* the caller, 0 if none */
	pid_t tid;		/* the thread that ran it */
	const char *thread;	/* its name, NULL to read it from /proc */
};
/* An object of another process, where it was loaded. */
struct cusemu_oops_module {
	const char *name;	/* for the report: "buggy.so" */
	const char *path;	/* the file, read for its symbols */
	int fd;			/* or this descriptor of it, or -1 */
	uint64_t base;
};
/* "BUG: ..." and "Oops: SIGNAL (code) [#number] in WHERE" lines. */
void cusemu_oops_append_fault(GString *r, int signo, int code, void *addr,
			      int number, const char *where);
/* The same for a fault on the guard below a stack [low, high): "BUG:
 * stack guard page was hit at ADDR (stack is LOW..HIGH)". */
void cusemu_oops_append_stack_fault(GString *r, int signo, void *addr,
				    uintptr_t low, uintptr_t high, int number,
				    const char *where);
/* The Device:, Call: and Thread: lines. */
void cusemu_oops_append_context(GString *r, const struct cusemu_device *dev,
				const struct cusemu_oops_call *c);
/* "BUG: soft lockup - ..." (counted: the taint gets its L). */
void cusemu_oops_append_lockup(GString *r, const struct cusemu_device *dev,
			       enum cusemu_op op, gint64 stuck_us, pid_t pid,
			       const char *comm);
/* "INFO: task COMM:PID blocked for more than N seconds." and the lines
 * the kernel writes after it (counted). */
void cusemu_oops_append_hung(GString *r, pid_t pid);
/* What the hung call's thread does: asleep in the helpers, or blocked
 * elsewhere (it ran ran_ns on a CPU in stuck_us). */
void cusemu_oops_append_hung_state(GString *r, bool asleep, gint64 stuck_us,
				   uint64_t ran_ns);
/*
 * Whether a call that neither returned nor slept in the helpers of
 * <cusemu/sched.h> for stuck_us spins (a soft lockup) rather than waits
 * (a hung task): its thread ran ran_ns on a CPU meanwhile.
 */
bool cusemu_oops_spinning(gint64 stuck_us, uint64_t ran_ns);
/* "RIP:" (with rip) and "Call Trace:" of another process's frames. */
void cusemu_oops_append_remote_trace(GString *out,
				     const struct cusemu_oops_module *mods,
				     int n_mods, const struct cusemu_trace *t,
				     bool rip);
/* " symbol+0x0/0xsize [module] file:line" of a function of another
 * process, at addr. */
void cusemu_oops_append_remote_where(GString *out,
				     const struct cusemu_oops_module *mods,
				     int n_mods, uint64_t addr);
/* The number of the next oops (counted: the taint gets its D). */
int cusemu_oops_next(void);
/* Log a report, a message a line. */
void cusemu_oops_log(const char *report);
bool cusemu_oops_panics(void);
/* The soft-lockup and hung-task thresholds; 0 when there are none. */
unsigned int cusemu_oops_lockup_secs(void);
unsigned int cusemu_oops_hung_secs(void);

/*
 * Symbolize a trace as the report's "Call Trace:" lines, appended to out,
 * each " symbol+0xoff/0xsize [module] file:line", a fold of repeated
 * frames as " ... N times". The first frame is the faulting instruction,
 * the others are return addresses. For tests too.
 */
void cusemu_oops_append_trace(GString *out, const struct cusemu_trace *t);
/* " symbol+0x0/0xsize [module] file:line" of a function of ours. */
void cusemu_oops_append_where(GString *out, const void *addr);

#endif
