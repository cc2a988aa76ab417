/* SPDX-License-Identifier: MIT */
/*
 * Oopses, soft lockups and hung tasks (kernel/oops.c) without the kernel:
 * a model's fault under a guard comes back as a failed call, the device
 * fenced and the daemon tainted, with what the call held let go and one
 * report that names the faulting function with file:line; a stack
 * overflow is named as one, its recursion folded and the frames down to
 * the guard kept; a call that spins gets one soft-lockup report, one that
 * sleeps through the helpers none, and one that sleeps or is blocked past
 * the threshold one hung-task report; an _IOR handler that returns 0
 * having written nothing gets one warning (the forgotten copy_to_user),
 * by table row or, for a model written by hand, by command.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/types.h>

#include <glib.h>

#include "cusemu/sched.h"
#include "cusemu/uaccess.h"
#include "call.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"
#include "lock.h"
#include "oops.h"
#include "request.h"

/* The log, kept for the checks. */
static GString *logged;
static GMutex log_lock;

static void keep_log(const char *domain, GLogLevelFlags level,
		     const char *message, gpointer data)
{
	g_mutex_lock(&log_lock);
	g_string_append_printf(logged, "%s\n", message);
	g_mutex_unlock(&log_lock);
}

static bool log_has(const char *text)
{
	bool has;

	g_mutex_lock(&log_lock);
	has = strstr(logged->str, text) != NULL;
	g_mutex_unlock(&log_lock);
	return has;
}

static unsigned int log_count(const char *text)
{
	unsigned int n = 0;

	g_mutex_lock(&log_lock);
	for (const char *p = logged->str; (p = strstr(p, text)); p++)
		n++;
	g_mutex_unlock(&log_lock);
	return n;
}

/*
 * The watchdog logs a report once it is symbolized, which a loaded machine
 * or a sanitizer build delays past the end of the call: until text is in
 * the log n times, 20 s at most.
 */
static void wait_for_log(const char *text, unsigned int n)
{
	for (int i = 0; i < 2000 && log_count(text) < n; i++)
		g_usleep(10 * 1000);
}

/*
 * A model without state: a fenced device's state is left as it is (its
 * model's remove is not run again), which the leak checker would count.
 */
static const struct cusemu_device_model stateless_model = {
	.name = "stateless",
	.node_prefix = "stateless",
};

static struct cusemu_device *stateless_device(const char *name)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *arg = g_strconcat("stateless:name=", name, NULL);
	struct cusemu_device *dev = fake_device_try(&stateless_model, arg,
						    &error);

	g_assert_no_error(error);
	return dev;
}

/* Faults on purpose: not for UndefinedBehaviorSanitizer to stop first. */
#define FAULTS __attribute__((noinline, no_sanitize("undefined")))

FAULTS static int model_null_deref(volatile int *p)
{
	return *p;
}

FAULTS static int model_divide(volatile int by)
{
	return 1000 / by;
}

/* Under a guard, as the transport runs a handler: -EIO if it faulted. */
static int guarded(struct cusemu_device *dev, int (*fn)(struct cusemu_device *))
{
	struct cusemu_oops_guard g;
	volatile int ret = 0;

	cusemu_oops_enter(&g, dev, CUSEMU_OP_IOCTL, NULL, 0);
	if (!cusemu_oops_setjmp(&g))
		ret = fn(dev);
	if (cusemu_oops_leave(&g))
		return -EIO;
	return ret;
}

static int null_handler(struct cusemu_device *dev)
{
	return model_null_deref(NULL);
}

static int locked_null_handler(struct cusemu_device *dev)
{
	cusemu_lock_kernel();
	cusemu_lock_kernel();
	return model_null_deref(NULL);
}

static int divide_handler(struct cusemu_device *dev)
{
	return model_divide(0);
}

static int abort_handler(struct cusemu_device *dev)
{
	abort();
}

static int fine_handler(struct cusemu_device *dev)
{
	return 7;
}

static void test_null_fences_the_device(void)
{
	struct cusemu_device *dev = stateless_device("oops0");
	struct cusemu_device *other = stateless_device("other0");

	g_assert_cmpint(guarded(dev, fine_handler), ==, 7);
	g_assert_false(cusemu_device_fenced(dev));
	g_assert_cmpint(guarded(dev, null_handler), ==, -EIO);
	g_assert_true(cusemu_device_fenced(dev));
	g_assert_false(cusemu_device_fenced(other));
	g_assert_cmpint(guarded(other, fine_handler), ==, 7);
	g_assert_cmpstr(cusemu_oops_taint(), ==, "D");
	g_assert_true(log_has("BUG: NULL pointer dereference, address: "
			      "0000000000000000"));
	g_assert_true(log_has("Device: oops0, model stateless (built in)"));
	/* The faulting function first, with its file and line. */
	g_assert_true(log_has("RIP: model_null_deref"));
	g_assert_true(log_has("test-oops.c:"));
	g_assert_true(log_has("oops0 is fenced"));
	g_assert_nonnull(cusemu_device_oops_report(dev));
	g_assert_nonnull(strstr(cusemu_device_oops_report(dev),
				"model_null_deref"));
	g_assert_null(cusemu_device_oops_report(other));
	fake_device_free(dev);
	fake_device_free(other);
}

static gpointer take_big_lock(gpointer data)
{
	cusemu_lock_kernel();
	cusemu_unlock_kernel();
	return GINT_TO_POINTER(1);
}

static void test_locks_let_go(void)
{
	struct cusemu_device *dev = stateless_device("oops1");

	g_assert_cmpint(guarded(dev, locked_null_handler), ==, -EIO);
	g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 0);
	g_assert_cmpuint(cusemu_lock_held(), ==, 0);
	/* Another thread gets the big lock: nobody holds it any more. */
	g_assert_cmpint(GPOINTER_TO_INT(g_thread_join(
				g_thread_new("taker", take_big_lock, NULL))),
			==, 1);
	fake_device_free(dev);
}

static void test_divide_and_abort(void)
{
	struct cusemu_device *dev = stateless_device("oops2");
	struct cusemu_device *dev2 = stateless_device("oops3");
	unsigned int before = cusemu_oops_count();

	g_assert_cmpint(guarded(dev, divide_handler), ==, -EIO);
	g_assert_true(log_has("divide error"));
	g_assert_true(log_has("SIGFPE (integer divide by zero)"));
	g_assert_cmpint(guarded(dev2, abort_handler), ==, -EIO);
	g_assert_true(log_has("BUG: abort() called"));
	g_assert_cmpuint(cusemu_oops_count(), ==, before + 2);
	/* abort() can be called again afterwards: its lock was not kept. */
	g_assert_cmpint(guarded(dev2, abort_handler), ==, -EIO);
	fake_device_free(dev);
	fake_device_free(dev2);
}

static int spin_handler(struct cusemu_device *dev)
{
	gint64 end = g_get_monotonic_time() + 3500 * 1000;
	volatile unsigned long n = 0;

	while (g_get_monotonic_time() < end)
		n++;
	return 0;
}

static int sleep_handler(struct cusemu_device *dev)
{
	for (int i = 0; i < 25; i++)
		cusemu_msleep(100);
	return 0;
}

/*
 * The watchdog at 1 s: one report for a 3.5 s spin, none for sleeps (nor
 * a hung-task report: each sleep is short).
 */
static void test_soft_lockup(void)
{
	struct cusemu_device *dev = stateless_device("spin0");
	unsigned int hung = cusemu_oops_hung_tasks();

	g_assert_cmpint(guarded(dev, sleep_handler), ==, 0);
	g_assert_cmpuint(log_count("BUG: soft lockup"), ==, 0);
	g_assert_cmpuint(cusemu_oops_hung_tasks(), ==, hung);
	g_assert_cmpint(guarded(dev, spin_handler), ==, 0);
	wait_for_log("calls of spin0 run", 1);
	g_assert_cmpuint(log_count("BUG: soft lockup"), ==, 1);
	g_assert_true(log_has("stateless's ioctl stuck for"));
	g_assert_true(log_has("spin_handler+0x"));
	g_assert_false(cusemu_device_fenced(dev));
	g_assert_cmpuint(cusemu_oops_lockups(), ==, 1);
	fake_device_free(dev);
}

/* Spins until the watchdog has its report, then returns at once. */
static int spin_until_reported(struct cusemu_device *dev)
{
	unsigned int before = cusemu_oops_lockups();

	while (cusemu_oops_lockups() == before)
		;
	return 0;
}

/* What a stack the returned call left may hold next. */
static G_NO_INLINE void scribble(void)
{
	volatile char junk[8192];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)0xa5;
}

/*
 * The call ends, and its device goes, while its report is written: the
 * report says what the call was, from what the thread copied when it was
 * sampled, never from the guard or the device it no longer has.
 */
static void test_soft_lockup_call_ends(void)
{
	struct cusemu_device *dev = stateless_device("spin1");
	unsigned int reports = log_count("BUG: soft lockup");

	g_assert_cmpint(guarded(dev, spin_until_reported), ==, 0);
	fake_device_free(dev);
	scribble();
	wait_for_log("calls of spin1 run", 1);
	g_assert_cmpuint(log_count("BUG: soft lockup"), ==, reports + 1);
	g_assert_true(log_has("Device: spin1, model stateless (built in)"));
	g_assert_true(log_has("spin_until_reported+0x"));
	g_assert_true(log_has("calls of spin1 run"));
}

/* Unbounded, as far as the compiler can tell. */
static volatile unsigned long recursion_end = G_MAXULONG;

__attribute__((noinline, no_sanitize("undefined", "address")))
static unsigned long model_recurse(unsigned long depth)
{
	volatile char frame[64];

	frame[0] = (char)depth;
	if (depth == recursion_end)
		return 0;
	return model_recurse(depth + 1) + (unsigned long)frame[0];
}

static int overflow_handler(struct cusemu_device *dev)
{
	return (int)model_recurse(0);
}

static gpointer overflow_thread(gpointer data)
{
	return GINT_TO_POINTER(guarded(data, overflow_handler));
}

static unsigned int lines_with(const char *report, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(report, "\n", -1);
	unsigned int n = 0;

	for (char **l = lines; *l; l++)
		n += strstr(*l, text) != NULL;
	return n;
}

/*
 * Unbounded recursion on a thread's stack, under a guard: the report says
 * a stack overflow, in the kernel's words, the recursion's thousands of
 * frames are one frame and its count, and the frames below it, down to
 * the guard and the thread's start, are all there.
 */
static void test_stack_overflow(void)
{
	struct cusemu_device *dev = stateless_device("deep0");
	pthread_attr_t attr;
	pthread_t thread;
	void *ret = NULL;
	const char *report;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	g_assert_cmpint(pthread_create(&thread, &attr, overflow_thread, dev),
			==, 0);
	pthread_attr_destroy(&attr);
	pthread_join(thread, &ret);
	g_assert_cmpint(GPOINTER_TO_INT(ret), ==, -EIO);
	report = cusemu_device_oops_report(dev);
	g_assert_nonnull(report);
	g_test_message("%s", report);
	g_assert_true(g_str_has_prefix(report, "BUG: stack guard page was hit "
					       "at "));
	g_assert_nonnull(strstr(report, "(stack is "));
	g_assert_nonnull(strstr(report, "Oops: SIGSEGV (a stack overflow)"));
	/* RIP, the faulting frame, and the one folded. */
	g_assert_cmpuint(lines_with(report, "model_recurse+0x"), <=, 3);
	g_assert_true(g_regex_match_simple("\n \\.\\.\\. [0-9]{3,} times\n",
					   report, 0, 0));
	g_assert_nonnull(strstr(report, " overflow_handler+0x"));
	g_assert_nonnull(strstr(report, " guarded+0x"));
	g_assert_nonnull(strstr(report, " overflow_thread+0x"));
	g_assert_null(strstr(report, "left out"));
	g_assert_true(cusemu_device_fenced(dev));
	fake_device_free(dev);
}

static int long_sleep_handler(struct cusemu_device *dev)
{
	cusemu_msleep(3500);
	return 0;
}

static GMutex held;

static gpointer hold_for_a_while(gpointer data)
{
	gint *taken = data;

	g_mutex_lock(&held);
	g_atomic_int_set(taken, 1);
	g_usleep(3500 * 1000);
	g_mutex_unlock(&held);
	return NULL;
}

/* A lock of the model's own, held by another thread for 3.5 s. */
static int blocked_handler(struct cusemu_device *dev)
{
	g_mutex_lock(&held);
	g_mutex_unlock(&held);
	return 0;
}

/*
 * Hung tasks at 1 s: one report for a 3.5 s sleep in the helpers, and one
 * for a call blocked 3.5 s on the model's own mutex, which spins no CPU and
 * so is no soft lockup.
 */
static void test_hung_task(void)
{
	struct cusemu_device *dev = stateless_device("hung0");
	unsigned int lockups = log_count("BUG: soft lockup");
	unsigned int before = cusemu_oops_hung_tasks();
	gint taken = 0;
	GThread *holder;

	g_assert_cmpint(guarded(dev, long_sleep_handler), ==, 0);
	wait_for_log("a wake-up ends it, or its caller giving up", 1);
	g_assert_cmpuint(cusemu_oops_hung_tasks(), ==, before + 1);
	g_assert_true(log_has("blocked for more than 1 seconds."));
	g_assert_true(log_has("\"hung_task_secs=0\" (--hung-task-secs 0) "
			      "disables this message."));
	g_assert_true(log_has("Device: hung0, model stateless (built in)"));
	g_assert_true(log_has("long_sleep_handler+0x"));
	g_assert_true(log_has("It sleeps in the helpers of <cusemu/sched.h>"));

	holder = g_thread_new("holder", hold_for_a_while, &taken);
	while (!g_atomic_int_get(&taken))
		g_usleep(1000);
	g_assert_cmpint(guarded(dev, blocked_handler), ==, 0);
	g_thread_join(holder);
	wait_for_log("only the model can end it", 1);
	g_assert_cmpuint(cusemu_oops_hung_tasks(), ==, before + 2);
	g_assert_true(log_has("blocked_handler+0x"));
	g_assert_true(log_has("It is blocked outside the helpers of "
			      "<cusemu/sched.h>"));
	g_assert_cmpuint(log_count("BUG: soft lockup"), ==, lockups);
	g_assert_false(cusemu_device_fenced(dev));
	fake_device_free(dev);
}

/* ---- the forgotten copy_to_user */

#define FORGET_GET _IOR('F', 1, __u64)
#define FORGET_SET _IOR('F', 2, __u64)	/* only reads, as WDIOC_SETOPTIONS */
#define FORGET_GOOD _IOR('F', 3, __u64)
#define FORGET_FAILS _IOR('F', 4, __u64)

static long forget_get(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	return 0;	/* the copy_to_user that is not here */
}

static int forget_set_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			    unsigned int cmd, unsigned long arg)
{
	return cusemu_fetch_range(arg, sizeof(__u64), 0);
}

static long forget_set(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	__u64 v;

	return cusemu_copy_from_user(&v, arg, sizeof(v)) ? -EFAULT : 0;
}

static long forget_good(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	__u64 v = 42;

	return cusemu_copy_to_user(arg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long forget_fails(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	return -ENODATA;
}

static const struct cusemu_ioctl forget_native[] = {
	CUSEMU_IOCTL_IOC(FORGET_GET, forget_get),
	CUSEMU_IOCTL_USER(FORGET_SET, forget_set_fetch, forget_set),
	CUSEMU_IOCTL_IOC(FORGET_GOOD, forget_good),
	CUSEMU_IOCTL_IOC(FORGET_FAILS, forget_fails),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model forget_model = {
	.name = "forget",
	.node_prefix = "forget",
	.native_table = forget_native,
	.compat_ptr_ioctl = true,
};

/* cmd on the client's memory, as the client's ioctl(2) returns it. */
static long call_at_base(struct fake_client *c, struct cusemu_device *dev,
			 unsigned int cmd)
{
	struct cusemu_file file = { .dev = dev };
	unsigned int rounds;

	return fake_ioctl(c, dev, &file, cmd, c->base, &rounds);
}

/*
 * m's FORGET_GET, called three times by an x86_64 caller and once by an
 * i386 one, gets one warning, the one given, and leaves the caller's
 * buffer as it was. The device, for more calls.
 */
static struct cusemu_device *forgets_once(const struct cusemu_device_model *m,
					  const char *spec, const char *warning,
					  struct fake_client *native,
					  struct fake_client *compat)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev = fake_device_try(m, spec, &error);

	g_assert_no_error(error);
	fake_client_init(native, false, 64);
	fake_client_init(compat, true, 64);
	*(__u64 *)native->mem = 7;
	g_test_expect_message("cusemu-dispatch", G_LOG_LEVEL_WARNING, warning);
	for (int i = 0; i < 3; i++)
		g_assert_cmpint(call_at_base(native, dev, FORGET_GET), ==, 0);
	g_assert_cmpint(call_at_base(compat, dev, FORGET_GET), ==, 0);
	g_test_assert_expected_messages();
	g_assert_cmpuint(*(__u64 *)native->mem, ==, 7);
	return dev;
}

/*
 * An _IOR row's handler that returns 0 and writes nothing: one warning,
 * whatever the calls and ABIs, with the handler's file:line; none for the
 * command that names nothing to write, one that writes, or one that fails.
 */
static void test_forgotten_copy_to_user(void)
{
	struct fake_client native, compat;
	struct cusemu_device *dev =
		forgets_once(&forget_model, "forget:name=forget0",
			     "forget0: FORGET_GET (0x80084601, _IOR, 8 bytes, "
			     "x86_64 caller) returned 0 and wrote nothing to "
			     "the caller's memory: a forgotten copy_to_user? "
			     "Its handler: forget_get+0x0/0x* [test-oops] "
			     "test-oops.c:*",
			     &native, &compat);

	g_assert_cmpint(call_at_base(&native, dev, FORGET_SET), ==, 0);
	g_assert_cmpint(call_at_base(&native, dev, FORGET_GOOD), ==, 0);
	g_assert_cmpuint(*(__u64 *)native.mem, ==, 42);
	g_assert_cmpint(call_at_base(&native, dev, FORGET_FAILS), ==,
			-ENODATA);
	g_free(native.mem);
	g_free(compat.mem);
	fake_device_free(dev);
}

/* The same contract for a model written by hand: its method is checked
 * per command, with the _IOC bits as what it must write. */
static long forget_by_hand(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case FORGET_GET:
		return 0;	/* the copy_to_user that is not here */
	case FORGET_GOOD:
		return forget_good(dev, file, cmd, arg);
	}
	return -ENOTTY;
}

static const struct cusemu_device_model forget_hand_model = {
	.name = "forget-hand",
	.node_prefix = "forgethand",
	.unlocked_ioctl = forget_by_hand,
	.compat_ioctl = forget_by_hand,
};

static void test_forgotten_copy_to_user_by_hand(void)
{
	struct fake_client native, compat;
	struct cusemu_device *dev =
		forgets_once(&forget_hand_model, "forget-hand:name=hand0",
			     "hand0: ioctl (0x80084601, _IOR, 8 bytes, x86_64 "
			     "caller) returned 0 and wrote nothing to the "
			     "caller's memory: a forgotten copy_to_user? Its "
			     "handler: forget_by_hand+0x0/0x* [test-oops] "
			     "test-oops.c:*",
			     &native, &compat);

	g_assert_cmpint(call_at_base(&native, dev, FORGET_GOOD), ==, 0);
	g_assert_cmpuint(*(__u64 *)native.mem, ==, 42);
	g_assert_cmpint(call_at_base(&native, dev, FORGET_SET), ==, -ENOTTY);
	g_free(native.mem);
	g_free(compat.mem);
	fake_device_free(dev);
}

/* ---- a lock held when returning to user space */

#define LEAK_LOCK _IO('K', 1)
#define LEAK_NESTED _IO('K', 2)

/* Returns holding the big lock: cusemu_lock_kernel() without its unlock. */
static long leak_lock(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	cusemu_lock_kernel();
	return 5;
}

/* Takes it twice and lets go once. */
static long leak_nested(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	cusemu_lock_kernel();
	cusemu_lock_kernel();
	cusemu_unlock_kernel();
	return 6;
}

static const struct cusemu_ioctl leak_native[] = {
	CUSEMU_IOCTL_IOC(LEAK_LOCK, leak_lock),
	CUSEMU_IOCTL_IOC(LEAK_NESTED, leak_nested),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model leak_model = {
	.name = "leak",
	.node_prefix = "leak",
	.native_table = leak_native,
};

/* cmd on dev under a guard, as the transport runs an ioctl. */
static long guarded_ioctl(struct cusemu_device *dev, unsigned int cmd)
{
	struct cusemu_file file = { .dev = dev };
	struct cusemu_oops_guard g;
	struct cusemu_request req;
	struct cusemu_call call;
	volatile long ret = 0;

	cusemu_call_init(&call, dev, &file, cmd, 0, false, getpid());
	cusemu_request_init(&req, NULL, &call);
	cusemu_request_set_current(&req);
	cusemu_oops_enter(&g, dev, CUSEMU_OP_IOCTL, &call, getpid());
	if (!cusemu_oops_setjmp(&g))
		ret = cusemu_dispatch(&call);
	if (cusemu_oops_leave(&g))
		ret = -EIO;
	cusemu_request_set_current(NULL);
	cusemu_request_clear(&req);
	return ret;
}

/*
 * A handler that returns holding the big lock, on a device of a modern
 * kernel (no lock around it) and of 2.6.10 (the lock's own hold around
 * it, one more left): the call ends with its result and one report
 * naming the device, the command and where the lock was taken, and the
 * lock is free for another thread.
 */
static void test_lock_left_held(void)
{
	static const char *const specs[] = { "leak:name=leak0",
					     "leak:name=leak1,kernel=2.6.10" };

	for (unsigned int i = 0; i < G_N_ELEMENTS(specs); i++) {
		g_autoptr(GError) error = NULL;
		struct cusemu_device *dev =
			fake_device_try(&leak_model, specs[i], &error);
		unsigned int before = log_count("WARNING: lock held when "
						"returning to user space!");
		g_autofree char *device = NULL;

		g_assert_no_error(error);
		device = g_strdup_printf("Device: %s, model leak", dev->name);
		g_assert_cmpint(guarded_ioctl(dev, LEAK_LOCK), ==, 5);
		g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 0);
		g_assert_cmpuint(cusemu_lock_held(), ==, 0);
		g_assert_cmpint(GPOINTER_TO_INT(g_thread_join(g_thread_new(
					"taker", take_big_lock, NULL))),
				==, 1);
		g_assert_cmpuint(log_count("WARNING: lock held when returning "
					   "to user space!"),
				 ==, before + 1);
		g_assert_true(log_has(device));
		g_assert_true(log_has("Call: ioctl LEAK_LOCK (0x00004b01)"));
		g_assert_true(log_has("1 hold of the big lock (lock_kernel) by "
				      "leak's ioctl: taken at: leak_lock+"));
		g_assert_cmpint(guarded_ioctl(dev, LEAK_NESTED), ==, 6);
		g_assert_cmpuint(cusemu_kernel_lock_depth(), ==, 0);
		g_assert_true(log_has("Call: ioctl LEAK_NESTED (0x00004b02)"));
		g_assert_false(cusemu_device_fenced(dev));
		fake_device_free(dev);
	}
}

int main(int argc, char **argv)
{
	int status;

	g_test_init(&argc, &argv, NULL);
	logged = g_string_new(NULL);
	g_log_set_handler("cusemu-oops", G_LOG_LEVEL_MASK, keep_log, NULL);
	cusemu_oops_init(false, 1, 1);
	g_test_add_func("/oops/null-fences-the-device",
			test_null_fences_the_device);
	g_test_add_func("/oops/locks-let-go", test_locks_let_go);
	g_test_add_func("/oops/divide-and-abort", test_divide_and_abort);
	g_test_add_func("/oops/soft-lockup", test_soft_lockup);
	g_test_add_func("/oops/soft-lockup-call-ends",
			test_soft_lockup_call_ends);
	g_test_add_func("/oops/stack-overflow", test_stack_overflow);
	g_test_add_func("/oops/hung-task", test_hung_task);
	g_test_add_func("/oops/forgotten-copy-to-user",
			test_forgotten_copy_to_user);
	g_test_add_func("/oops/forgotten-copy-to-user-by-hand",
			test_forgotten_copy_to_user_by_hand);
	g_test_add_func("/oops/lock-left-held", test_lock_left_held);
	status = g_test_run();
	cusemu_oops_shutdown();
	return status;
}
