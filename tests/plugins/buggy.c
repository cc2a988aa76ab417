/* SPDX-License-Identifier: MIT */
/*
 * buggy: a model with the bugs a prototype has, loaded as a plugin by the
 * oops tests: a NULL dereference, a failed assertion, a division by zero,
 * a handler that spins, and the same in read and in a control request.
 * Built twice: as is, and with BUGGY_FIXED, the "rebuilt" model that a
 * reload brings in (its NULL command then returns 0, its version is 2).
 */
#include <assert.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cusemu/log.h"
#include "cusemu/plugin.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"
#include "buggy.h"

#ifdef BUGGY_FIXED
#define BUGGY_VERSION 2
#else
#define BUGGY_VERSION 1
#endif

struct buggy {
	unsigned int calls;
	GThread *timer;
	GThread *ticker;
	gint stop;		/* the ticker ends */
	struct cusemu_device *dev;
};

/*
 * The bugs are the point: not for UndefinedBehaviorSanitizer to stop first
 * (a build with sanitizers builds the plugin with them too).
 */
#define BUG __attribute__((noinline, no_sanitize("undefined")))

/* Its own function, so that the report names it with file:line. */
BUG static int buggy_null_deref(struct buggy *b)
{
#ifdef BUGGY_FIXED
	(void)b;
	return 0;
#else
	volatile int *nothing = NULL;

	b->calls++;
	return *nothing;
#endif
}

static long buggy_info(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct buggy *b = dev->priv;
	struct buggy_info info = { BUGGY_VERSION, ++b->calls };

	return cusemu_copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long buggy_null(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	return buggy_null_deref(dev->priv);
}

static long buggy_abort(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct buggy *b = dev->priv;

	assert(b->calls == 12345);
	return 0;
}

BUG static long buggy_div(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	volatile __u32 by;
	__u32 value;

	if (cusemu_get_user(value, arg))
		return -EFAULT;
	by = value;
	return (long)(1000u / by);
}

static long buggy_spin(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct timespec start, now;
	__u32 ms;

	if (cusemu_get_user(ms, arg))
		return -EFAULT;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000 +
		       (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
	return 0;
}

static long buggy_locked_null(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	cusemu_lock_kernel();
	return buggy_null_deref(dev->priv);
}

static long buggy_locked_return(struct cusemu_device *dev,
				struct cusemu_file *file, unsigned int cmd,
				unsigned long arg)
{
	cusemu_lock_kernel();
	return 0;	/* where cusemu_unlock_kernel() should have been */
}

static long buggy_log(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	__u32 n;

	if (cusemu_get_user(n, arg))
		return -EFAULT;
	for (__u32 i = 0; i < n; i++)
		cusemu_dev_info(dev, "line %u of %u", i + 1, n);
	return 0;
}

/* What a model's library might do before it execs: the host's channels
 * to the daemon go with the rest. */
static long buggy_close_all(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	for (int fd = 0; fd < 4096; fd++)
		close(fd);
	return 0;
}

static long buggy_return(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	__s32 value;

	if (cusemu_get_user(value, arg))
		return -EFAULT;
	return value;
}

static const struct cusemu_ioctl buggy_native[] = {
	CUSEMU_IOCTL_IOC(BUGGY_IOC_INFO, buggy_info),
	CUSEMU_IOCTL_NONE(BUGGY_IOC_NULL, buggy_null),
	CUSEMU_IOCTL_NONE(BUGGY_IOC_ABORT, buggy_abort),
	CUSEMU_IOCTL_IOC(BUGGY_IOC_DIV, buggy_div),
	CUSEMU_IOCTL_IOC(BUGGY_IOC_SPIN, buggy_spin),
	CUSEMU_IOCTL_NONE(BUGGY_IOC_LOCKED_NULL, buggy_locked_null),
	CUSEMU_IOCTL_IOC(BUGGY_IOC_RETURN, buggy_return),
	CUSEMU_IOCTL_NONE(BUGGY_IOC_LOCKED_RETURN, buggy_locked_return),
	CUSEMU_IOCTL_IOC(BUGGY_IOC_LOG, buggy_log),
	CUSEMU_IOCTL_NONE(BUGGY_IOC_CLOSE_ALL, buggy_close_all),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param buggy_params[] = {
	{ .key = "crash_read", .type = CUSEMU_PARAM_BOOL,
	  .default_value = "false", .help = "read() dereferences NULL" },
	{ .key = "crash_timer", .type = CUSEMU_PARAM_BOOL,
	  .default_value = "false",
	  .help = "a timer thread of the model's own dereferences NULL 0.3 s "
		  "after the start" },
	{ .key = "tick", .type = CUSEMU_PARAM_BOOL, .default_value = "false",
	  .help = "a thread of the model's own counts a 'tick' event and wakes "
		  "pollers every 20 ms, until the model's remove" },
	CUSEMU_PARAM_END
};

/* A timer of the model's own, as a driver's: outside any call. */
static gpointer buggy_timer(gpointer data)
{
	struct buggy *b = data;

	cusemu_msleep(300);
	return GINT_TO_POINTER(buggy_null_deref(b));
}

/* A thread that uses its device until the model is removed: after an
 * oops, the daemon must keep what it uses. */
static gpointer buggy_ticker(gpointer data)
{
	struct buggy *b = data;

	while (!g_atomic_int_get(&b->stop)) {
		cusemu_device_count_event(b->dev, "tick");
		cusemu_device_wake_up(b->dev);
		cusemu_msleep(20);
	}
	return NULL;
}

static int buggy_probe(struct cusemu_device *dev, char **why)
{
	struct buggy *b = g_new0(struct buggy, 1);

	dev->priv = b;
	b->dev = dev;
	if (cusemu_device_param_bool(dev, "crash_timer"))
		b->timer = g_thread_new("buggy-timer", buggy_timer, b);
	if (cusemu_device_param_bool(dev, "tick"))
		b->ticker = g_thread_new("buggy-ticker", buggy_ticker, b);
	return 0;
}

static void buggy_remove(struct cusemu_device *dev)
{
	struct buggy *b = dev->priv;

	g_atomic_int_set(&b->stop, 1);
	if (b->ticker)
		g_thread_join(b->ticker);
	if (b->timer)
		g_thread_join(b->timer);
	g_free(b);
}

static ssize_t buggy_read(struct cusemu_device *dev, struct cusemu_file *file,
			  char *buf, size_t size)
{
	static const char text[] = "buggy\n";

	if (cusemu_device_param_bool(dev, "crash_read"))
		return buggy_null_deref(dev->priv);
	size = MIN(size, sizeof(text) - 1);
	memcpy(buf, text, size);
	return (ssize_t)size;
}

static int buggy_control(struct cusemu_device *dev, char **argv, GString *out)
{
	if (argv[0] && !strcmp(argv[0], "crash"))
		return buggy_null_deref(dev->priv);
	g_string_append_printf(out, "buggy version %d\n", BUGGY_VERSION);
	return 0;
}

static const struct cusemu_device_model buggy_model = {
	.name = "buggy",
	.summary = "a model with bugs, for the oops tests",
	.node_prefix = "buggy",
	.params = buggy_params,
	.probe = buggy_probe,
	.remove = buggy_remove,
	.read = buggy_read,
	.control = buggy_control,
	.native_table = buggy_native,
	.compat_ptr_ioctl = true,
};

CUSEMU_PLUGIN(&buggy_model);
