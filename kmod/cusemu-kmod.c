// SPDX-License-Identifier: MIT
/*
 * The frame of a kernel module that cusemu-kmod(1) writes around a device
 * model: the SDK's portable surface (the headers of <cusemu/...>) on the kernel's own
 * calls, a misc device per model of the plugin, and file_operations that
 * dispatch ioctls through the model's native and compat tables with their
 * fetch and run steps, as cusemud's `modern` kernel model does:
 * unlocked_ioctl and compat_ioctl, no global ioctl32 table, no big lock,
 * ENOTTY for a command no row serves.
 *
 * What the daemon emulated, the kernel does itself here: user memory is
 * the caller's own (a fetch step only checks that the ranges it names can
 * be addressed, and the handler's copies reach the caller at once), a
 * wait is the task's own sleep, poll() a wait queue. docs/kernel-module.md
 * in cusemu's source says what else differs.
 *
 * Beside it cusemu-kmod writes cusemu-kmod-params.h: a module parameter
 * for each key of the models' parameters (kmod_module_params[]), and one
 * for each model's node name (kmod_node_names[]).
 */
#include <linux/compat.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/workqueue.h>

#include "cusemu/device.h"
#include "cusemu/log.h"
#include "cusemu/memory.h"
#include "cusemu/plugin.h"
#include "cusemu/report.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"

/* One parameter of a model, as the module takes it: the model's index in
 * the plugin's list, its key, and the module parameter's value (NULL: the
 * key's default). kmod_module_params[] ends with a NULL key. */
struct kmod_param {
	unsigned int model;
	const char *key;
	char **value;
};

#include "cusemu-kmod-params.h"

/* The models the module serves, from the model's own CUSEMU_PLUGIN(). */
extern const struct cusemu_plugin cusemu_plugin;

/* A read or write reaches the model in pieces of at most this much, as
 * over CUSE. */
#define KMOD_IO_MAX CUSEMU_USER_MAX_BYTES
#define KMOD_NAME_MAX 64

/* A file of the model's in the device's directory in /sys. */
struct kmod_attr {
	struct device_attribute attr;
	const struct cusemu_attr *model_attr;
	struct kmod_dev *k;
};

/* One model's device: what the daemon keeps beside struct cusemu_device. */
struct kmod_dev {
	struct cusemu_device dev;
	struct miscdevice misc;
	/* The model's attrs of its own directory, as the misc device's. */
	struct kmod_attr *attrs;
	struct attribute **attr_list;
	struct attribute_group attr_group;
	const struct attribute_group *attr_groups[2];
	wait_queue_head_t pollers;	/* cusemu_device_wake_up() */
	struct ratelimit_state ratelimit;
	unsigned int methods;		/* cusemu_device_set_methods() */
	bool probed, registered;
	bool name_given;		/* name= at insmod */
	bool warned_unnamed;		/* a handler read unnamed memory */
	char name[KMOD_NAME_MAX + 1];
	/* The model's parameters, in the order of model->params. */
	u64 *numbers;
	const char **strings;
};

static struct kmod_dev **kmod_devs;
static unsigned int kmod_n_devs;

static struct kmod_dev *kmod_dev_of(const struct cusemu_device *dev)
{
	return container_of(dev, struct kmod_dev, dev);
}

/* Memory, strings and the log (<cusemu/memory.h>, <cusemu/log.h>). */

void *cusemu_zalloc(size_t size)
{
	return kvzalloc(size ? size : 1, GFP_KERNEL);
}

void cusemu_free(void *ptr)
{
	kvfree(ptr);
}

ssize_t cusemu_strscpy(char *dst, const char *src, size_t size)
{
	return strscpy(dst, src, size);
}

int cusemu_snprintf(char *buf, size_t size, const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = vsnprintf(buf, size, format, ap);
	va_end(ap);
	return n;
}

char *cusemu_strdup_printf(const char *format, ...)
{
	va_list ap;
	char *s;

	va_start(ap, format);
	s = kvasprintf(GFP_KERNEL, format, ap);
	va_end(ap);
	return s;
}

void cusemu_dev_log(const struct cusemu_device *dev,
		    enum cusemu_log_level level, const char *format, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, format);
	vaf.fmt = format;
	vaf.va = &ap;
	switch (level) {
	case CUSEMU_LOG_ERR:
		pr_err("%s: %pV\n", dev->name, &vaf);
		break;
	case CUSEMU_LOG_WARNING:
		pr_warn("%s: %pV\n", dev->name, &vaf);
		break;
	default:
		pr_info("%s: %pV\n", dev->name, &vaf);
		break;
	}
	va_end(ap);
}

/*
 * User memory (<cusemu/uaccess.h>). What the caller gives is read once:
 * each range the fetch step reads or names for reading is copied in then,
 * into a snapshot of the call, and every later read of it, the handler's
 * included, is a copy of that snapshot, as cusemud hands a handler the
 * bytes CUSE's retry brought. A handler that copies its struct in again
 * sees what the fetch step checked, however the caller changes its memory
 * meanwhile (the double fetch that the kernel's drivers must avoid by
 * hand). Writes reach the caller at once, as a driver's copy_to_user().
 */

/* A range of the caller's memory as the call read it. */
struct kmod_range {
	u64 addr;
	size_t len;
	u8 *bytes;
};

/* One ioctl, in the task that makes it: the ranges read so far. */
struct kmod_call {
	struct hlist_node node;
	struct task_struct *task;
	struct kmod_dev *k;
	const char *step;	/* the row, for the log */
	bool running;		/* the handler runs: nothing more to read */
	int error;		/* fails the call, whatever it returns */
	unsigned int n_ranges;
	struct kmod_range *ranges;	/* CUSEMU_USER_MAX_RANGES of them */
};

/* The calls under way, by task: the surface's calls take no context. */
static DEFINE_HASHTABLE(kmod_calls, 6);
static DEFINE_SPINLOCK(kmod_calls_lock);

static void kmod_call_begin(struct kmod_call *call)
{
	spin_lock(&kmod_calls_lock);
	hash_add(kmod_calls, &call->node, (unsigned long)call->task);
	spin_unlock(&kmod_calls_lock);
}

static void kmod_call_end(struct kmod_call *call)
{
	spin_lock(&kmod_calls_lock);
	hash_del(&call->node);
	spin_unlock(&kmod_calls_lock);
	for (unsigned int i = 0; i < call->n_ranges; i++)
		kvfree(call->ranges[i].bytes);
	kvfree(call->ranges);
}

/* Only the task itself adds and removes its call: it stays while used. */
static struct kmod_call *kmod_call_current(void)
{
	struct kmod_call *call, *found = NULL;

	spin_lock(&kmod_calls_lock);
	hash_for_each_possible(kmod_calls, call, node, (unsigned long)current)
		if (call->task == current) {
			found = call;
			break;
		}
	spin_unlock(&kmod_calls_lock);
	return found;
}

static void __user *kmod_uptr(cusemu_uptr_t addr)
{
	return u64_to_user_ptr(addr);
}

/* A range read that holds [addr, addr + len); no sum can wrap. */
static const struct kmod_range *kmod_range_find(const struct kmod_call *call,
						u64 addr, u64 len)
{
	for (unsigned int i = 0; i < call->n_ranges; i++) {
		const struct kmod_range *r = &call->ranges[i];

		if (addr >= r->addr && len <= r->len &&
		    addr - r->addr <= r->len - len)
			return &call->ranges[i];
	}
	return NULL;
}

/*
 * [addr, addr + len) in the call's snapshot: read now if the fetch step
 * names it first; a range the caller cannot give fails the call with
 * -EFAULT, as CUSE's retry fails it in cusemud. The handler reads only
 * what is there: anything else fails the call with -EIO, as in cusemud.
 */
static int kmod_read_in(struct kmod_call *call, u64 addr, size_t len)
{
	struct kmod_range *r;

	if (!len || kmod_range_find(call, addr, len))
		return 0;
	if (call->running) {
		if (!call->k->warned_unnamed) {
			call->k->warned_unnamed = true;
			pr_warn("%s: the handler of %s read memory its fetch "
				"step did not name (the handler contract of "
				"<cusemu/device.h>); the caller gets EIO\n",
				call->k->name, call->step ? call->step : "an ioctl");
		}
		call->error = -EIO;
		return -EIO;
	}
	if (!access_ok(kmod_uptr(addr), len)) {
		call->error = -EFAULT;
		return -EFAULT;
	}
	if (!call->ranges)
		call->ranges = kvcalloc(CUSEMU_USER_MAX_RANGES,
					sizeof(*call->ranges), GFP_KERNEL);
	/* kvmalloc() takes at most INT_MAX bytes: more is too much memory. */
	if (!call->ranges || call->n_ranges == CUSEMU_USER_MAX_RANGES ||
	    len > INT_MAX) {
		call->error = -ENOMEM;
		return -ENOMEM;
	}
	r = &call->ranges[call->n_ranges];
	r->bytes = kvmalloc(len, GFP_KERNEL);
	if (!r->bytes) {
		call->error = -ENOMEM;
		return -ENOMEM;
	}
	if (copy_from_user(r->bytes, kmod_uptr(addr), len)) {
		kvfree(r->bytes);
		call->error = -EFAULT;
		return -EFAULT;
	}
	r->addr = addr;
	r->len = len;
	call->n_ranges++;
	return 0;
}

/* Outside an ioctl (a timer's function) there is no caller to read. */
unsigned long cusemu_copy_from_user(void *to, cusemu_uptr_t from,
				    unsigned long n)
{
	struct kmod_call *call = kmod_call_current();
	const struct kmod_range *r;

	if (!call || kmod_read_in(call, from, n))
		return n;
	if (!n)
		return 0;
	r = kmod_range_find(call, from, n);
	memcpy(to, r->bytes + (from - r->addr), n);
	return 0;
}

unsigned long cusemu_copy_to_user(cusemu_uptr_t to, const void *from,
				  unsigned long n)
{
	return copy_to_user(kmod_uptr(to), from, n);
}

/* A range the caller could never address fails now; one it can, but
 * that is not mapped, fails at the copy, as in the driver. */
static int kmod_want(cusemu_uptr_t addr, size_t len)
{
	return len && !access_ok(kmod_uptr(addr), len) ? -EFAULT : 0;
}

int cusemu_user_want_read(cusemu_uptr_t addr, size_t len)
{
	struct kmod_call *call = kmod_call_current();

	return call ? kmod_read_in(call, addr, len) : -EFAULT;
}

int cusemu_user_want_write(cusemu_uptr_t addr, size_t len)
{
	return kmod_want(addr, len);
}

int cusemu_fetch_range(uint64_t addr, size_t read_len, size_t write_len)
{
	return cusemu_user_want_read(addr, read_len) ?:
	       kmod_want(addr, write_len);
}

int cusemu_fetch_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	size_t size = _IOC_SIZE(cmd);

	return cusemu_fetch_range(arg, _IOC_DIR(cmd) & _IOC_WRITE ? size : 0,
				  _IOC_DIR(cmd) & _IOC_READ ? size : 0);
}

bool cusemu_user_pending(void)
{
	return false;
}

bool cusemu_in_compat_syscall(void)
{
	return in_compat_syscall();
}

/* Only the two methods of today's kernels exist; which one a call came
 * through is the caller's ABI. */
enum cusemu_method cusemu_current_method(void)
{
	return in_compat_syscall() ? CUSEMU_METHOD_COMPAT_IOCTL
				   : CUSEMU_METHOD_UNLOCKED_IOCTL;
}

const char *cusemu_method_name(enum cusemu_method method)
{
	switch (method) {
	case CUSEMU_METHOD_IOCTL: return "ioctl";
	case CUSEMU_METHOD_UNLOCKED_IOCTL: return "unlocked_ioctl";
	case CUSEMU_METHOD_COMPAT_IOCTL: return "compat_ioctl";
	case CUSEMU_METHOD_IOCTL_NATIVE: return "ioctl_native";
	case CUSEMU_METHOD_IOCTL_COMPAT: return "ioctl_compat";
	case CUSEMU_METHOD_IOCTL32_HANDLER: return "ioctl32 handler";
	}
	return "?";
}

struct cusemu_ioctl_report cusemu_report_current(void)
{
	return (struct cusemu_ioctl_report){
		.method = cusemu_current_method(),
		.compat = in_compat_syscall(),
	};
}

long cusemu_put_report(cusemu_uptr_t uptr)
{
	struct cusemu_ioctl_report r = cusemu_report_current();

	return cusemu_copy_to_user(uptr, &r, sizeof(r)) ? -EFAULT : 0;
}

/* Time, sleeps, waits and timers (<cusemu/sched.h>). */

uint64_t cusemu_time_ns(void)
{
	return ktime_get_ns();
}

bool cusemu_signal_pending(void)
{
	return signal_pending(current);
}

void cusemu_usleep(unsigned int us)
{
	ktime_t left = ns_to_ktime((u64)us * NSEC_PER_USEC);

	/* Ends early on a signal, as the daemon's sleep ends when the client
	 * gives up. */
	set_current_state(TASK_INTERRUPTIBLE);
	schedule_hrtimeout(&left, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

void cusemu_msleep(unsigned int ms)
{
	while (ms > 1000 && !signal_pending(current)) {
		cusemu_usleep(1000 * 1000);
		ms -= 1000;
	}
	if (!signal_pending(current))
		cusemu_usleep(ms * 1000);
}

void cusemu_waitq_init(struct cusemu_waitq *q)
{
	init_waitqueue_head(&q->head);
}

void cusemu_wake_up(struct cusemu_waitq *q)
{
	wake_up_all(&q->head);
}

int cusemu_wait_timeout(struct cusemu_waitq *q, struct cusemu_mutex *lock,
			unsigned int timeout_ms)
{
	DEFINE_WAIT(wait);
	long left;

	if (signal_pending(current))
		return -EINTR;
	/* On the queue before the lock goes: a wake-up after it is not lost. */
	prepare_to_wait(&q->head, &wait, TASK_INTERRUPTIBLE);
	mutex_unlock(&lock->m);
	left = schedule_timeout(msecs_to_jiffies(timeout_ms));
	finish_wait(&q->head, &wait);
	mutex_lock(&lock->m);
	if (signal_pending(current))
		return -EINTR;
	return left ? 1 : 0;
}

/* A timer: an hrtimer for the time, a work item for the function, which
 * may then sleep and take mutexes. */
struct cusemu_timer {
	struct hrtimer hrtimer;
	struct work_struct work;
	cusemu_timer_fn fn;
	void *data;
	atomic_t stopping;
};

static enum hrtimer_restart kmod_timer_due(struct hrtimer *hrtimer)
{
	struct cusemu_timer *t = container_of(hrtimer, struct cusemu_timer,
					      hrtimer);

	queue_work(system_highpri_wq, &t->work);
	return HRTIMER_NORESTART;
}

static void kmod_timer_run(struct work_struct *work)
{
	struct cusemu_timer *t = container_of(work, struct cusemu_timer, work);

	t->fn(t->data);
}

struct cusemu_timer *cusemu_timer_new(cusemu_timer_fn fn, void *data)
{
	struct cusemu_timer *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return NULL;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(&t->hrtimer, kmod_timer_due, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
#else
	hrtimer_init(&t->hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	t->hrtimer.function = kmod_timer_due;
#endif
	INIT_WORK(&t->work, kmod_timer_run);
	t->fn = fn;
	t->data = data;
	return t;
}

void cusemu_timer_start(struct cusemu_timer *t, uint64_t delay_ns)
{
	if (!atomic_read(&t->stopping))
		hrtimer_start(&t->hrtimer, ns_to_ktime(delay_ns),
			      HRTIMER_MODE_REL);
}

void cusemu_timer_stop(struct cusemu_timer *t)
{
	if (current_work() == &t->work) {
		hrtimer_cancel(&t->hrtimer);
		return;
	}
	atomic_inc(&t->stopping);
	hrtimer_cancel(&t->hrtimer);
	cancel_work_sync(&t->work);
	hrtimer_cancel(&t->hrtimer);
	atomic_dec(&t->stopping);
}

void cusemu_timer_free(struct cusemu_timer *t)
{
	if (!t)
		return;
	cusemu_timer_stop(t);
	kfree(t);
}

/* The device (<cusemu/device.h>). */

void cusemu_device_wake_up(struct cusemu_device *dev)
{
	wake_up_interruptible(&kmod_dev_of(dev)->pollers);
}

bool cusemu_process_is_32bit(pid_t pid)
{
	bool compat = false;
#ifdef CONFIG_X86
	struct task_struct *task;

	rcu_read_lock();
	task = pid_task(find_vpid(pid), PIDTYPE_PID);
	if (task)
		compat = test_ti_thread_flag(task_thread_info(task), TIF_ADDR32);
	rcu_read_unlock();
#endif
	return compat;
}

void cusemu_device_set_methods(struct cusemu_device *dev, unsigned int methods)
{
	kmod_dev_of(dev)->methods = methods & CUSEMU_METHODS_ALL;
}

int cusemu_device_default_name(struct cusemu_device *dev, const char *name)
{
	struct kmod_dev *k = kmod_dev_of(dev);
	size_t len = strlen(name);

	if (!len || len > KMOD_NAME_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	for (const char *c = name; *c; c++)
		if (!isalnum(*c) && !strchr("-_.", *c))
			return -EINVAL;
	if (!k->registered && !k->name_given)
		strscpy(k->name, name, sizeof(k->name));
	return 0;
}

/* The kernel it runs in is the generation it plays. */
const char *cusemu_device_kernel_model(const struct cusemu_device *dev)
{
	return "modern";
}

unsigned int cusemu_device_kernel_version(const struct cusemu_device *dev)
{
	return LINUX_VERSION_CODE;
}

/* No statistics to count in: cusemuctl stats is the daemon's. */
void cusemu_device_count_event(struct cusemu_device *dev, const char *event)
{
}

void cusemu_device_lost(struct cusemu_device *dev, const char *format, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, format);
	vaf.fmt = format;
	vaf.va = &ap;
	pr_err("%s: lost: %pV\n", dev->name, &vaf);
	va_end(ap);
}

/* The kernel's own rate limit, which prints what it held back itself. */
bool cusemu_device_ratelimit(struct cusemu_device *dev, char *note)
{
	note[0] = '\0';
	return __ratelimit(&kmod_dev_of(dev)->ratelimit);
}

static int kmod_param_index(const struct cusemu_device *dev, const char *key)
{
	const struct cusemu_param *p = dev->model->params;

	for (unsigned int i = 0; p && p[i].key; i++)
		if (!strcmp(p[i].key, key))
			return i;
	WARN_ONCE(1, "%s: model %s has no parameter %s\n", dev->name,
		  dev->model->name, key);
	return -1;
}

uint64_t cusemu_device_param_u64(const struct cusemu_device *dev,
				 const char *key)
{
	int i = kmod_param_index(dev, key);

	return i < 0 ? 0 : kmod_dev_of(dev)->numbers[i];
}

bool cusemu_device_param_bool(const struct cusemu_device *dev,
			      const char *key)
{
	return cusemu_device_param_u64(dev, key) != 0;
}

const char *cusemu_device_param_str(const struct cusemu_device *dev,
				    const char *key)
{
	int i = kmod_param_index(dev, key);

	return i < 0 ? NULL : kmod_dev_of(dev)->strings[i];
}

/* A module is handed no file: its model opens none through a descriptor. */
int cusemu_device_param_fd(const struct cusemu_device *dev, const char *path)
{
	return -1;
}

/* The file operations. */

static struct cusemu_file *kmod_file(struct file *filp)
{
	struct cusemu_file *f = filp->private_data;

	f->flags = filp->f_flags;	/* O_NONBLOCK as of this call */
	return f;
}

static int kmod_open(struct inode *inode, struct file *filp)
{
	struct kmod_dev *k = container_of(filp->private_data, struct kmod_dev,
					  misc);
	struct cusemu_file *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int err;

	if (!f)
		return -ENOMEM;
	f->dev = &k->dev;
	f->flags = filp->f_flags;
	f->opener = task_tgid_vnr(current);
	if (k->dev.model->open) {
		err = k->dev.model->open(&k->dev, f);
		if (err) {
			kfree(f);
			return err;
		}
	}
	filp->private_data = f;
	/* As a CUSE node: a stream, not seekable. */
	return stream_open(inode, filp);
}

static int kmod_release(struct inode *inode, struct file *filp)
{
	struct cusemu_file *f = filp->private_data;

	if (f->dev->model->release)
		f->dev->model->release(f->dev, f);
	kfree(f);
	return 0;
}

/*
 * read(2) and write(2) in pieces of KMOD_IO_MAX, as the kernel's FUSE
 * hands a CUSE server a large one: the model sees each piece, the caller
 * the bytes of every piece up to a short one or an error (the error itself
 * when it came first).
 */
static ssize_t kmod_read(struct file *filp, char __user *ubuf, size_t size,
			 loff_t *pos)
{
	struct cusemu_file *f = kmod_file(filp);
	size_t done = 0, piece = min_t(size_t, size, KMOD_IO_MAX);
	char *buf;
	ssize_t n = 0;

	if (!f->dev->model->read)
		return -EINVAL;
	if (!size)
		return 0;	/* FUSE asks the server nothing */
	buf = kvmalloc(piece, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	do {
		piece = min_t(size_t, size - done, KMOD_IO_MAX);
		n = f->dev->model->read(f->dev, f, buf, piece);
		if (n > (ssize_t)piece)
			n = -EIO;
		if (n > 0 && copy_to_user(ubuf + done, buf, n))
			n = -EFAULT;
		if (n > 0)
			done += n;
	} while (n == (ssize_t)piece && n > 0 && done < size);
	kvfree(buf);
	return done ? (ssize_t)done : n;
}

static ssize_t kmod_write(struct file *filp, const char __user *ubuf,
			  size_t size, loff_t *pos)
{
	struct cusemu_file *f = kmod_file(filp);
	size_t done = 0, piece;
	ssize_t n = 0;

	if (!f->dev->model->write)
		return -EINVAL;
	if (!size)
		return 0;
	do {
		char *buf;

		piece = min_t(size_t, size - done, KMOD_IO_MAX);
		buf = vmemdup_user(ubuf + done, piece);
		if (IS_ERR(buf)) {
			n = PTR_ERR(buf);
			break;
		}
		n = f->dev->model->write(f->dev, f, buf, piece);
		kvfree(buf);
		if (n > (ssize_t)piece)
			n = -EIO;
		if (n > 0)
			done += n;
	} while (n == (ssize_t)piece && n > 0 && done < size);
	return done ? (ssize_t)done : n;
}

static __poll_t kmod_poll(struct file *filp, poll_table *wait)
{
	struct cusemu_file *f = kmod_file(filp);
	struct kmod_dev *k = kmod_dev_of(f->dev);

	if (!f->dev->model->poll)
		return DEFAULT_POLLMASK;
	poll_wait(filp, &k->pollers, wait);
	/* POLLIN and the rest have the values of EPOLLIN and the rest. */
	return (__force __poll_t)f->dev->model->poll(f->dev, f);
}

/*
 * The row a call runs, as the daemon's table_row(): native from the
 * native table; compat from the compat table, or, for a row marked
 * compatible or under compat_ptr_ioctl, the native row with the caller's
 * pointer widened. NULL: not mine.
 */
static const struct cusemu_ioctl *kmod_row(const struct cusemu_device_model *m,
					   unsigned int cmd, bool compat,
					   unsigned long *arg)
{
	const struct cusemu_ioctl *row = NULL;

	if (compat) {
		for (row = m->compat_table; row && row->name; row++)
			if (row->cmd == cmd)
				break;
		if (row && !row->name)
			row = NULL;
		if (row && row->handler)
			return row;
		if (!row && !m->compat_ptr_ioctl)
			return NULL;
		*arg = (unsigned long)compat_ptr((compat_uptr_t)*arg);
	}
	for (row = m->native_table; row && row->name; row++)
		if (row->cmd == cmd)
			return row;
	return NULL;
}

static cusemu_fetch_fn kmod_row_fetch(const struct cusemu_ioctl *row)
{
	switch (row->payload) {
	case CUSEMU_PAYLOAD_IOC:
		return cusemu_fetch_ioc;
	case CUSEMU_PAYLOAD_USER:
		return row->fetch;
	default:
		return NULL;
	}
}

/* The handler contract: the fetch step, then the handler, once, on what
 * the fetch step read. */
static long kmod_ioctl(struct file *filp, unsigned int cmd, unsigned long arg,
		       bool compat)
{
	struct cusemu_file *f = kmod_file(filp);
	struct cusemu_device *dev = f->dev;
	const struct cusemu_device_model *m = dev->model;
	unsigned int methods = kmod_dev_of(dev)->methods;
	cusemu_ioctl_fn fn = compat ? m->compat_ioctl : m->unlocked_ioctl;
	struct kmod_call call = { .task = current, .k = kmod_dev_of(dev) };
	cusemu_fetch_fn fetch;
	long ret;

	if (!(methods & (compat ? CUSEMU_METHOD_COMPAT_IOCTL
				: CUSEMU_METHOD_UNLOCKED_IOCTL)))
		return -ENOTTY;
	if (fn) {
		fetch = m->ioctl_fetch ? m->ioctl_fetch : cusemu_fetch_ioc;
	} else {
		const struct cusemu_ioctl *row = kmod_row(m, cmd, compat, &arg);

		if (!row || !row->handler)
			return -ENOTTY;
		fn = row->handler;
		fetch = kmod_row_fetch(row);
		call.step = row->name;
	}
	kmod_call_begin(&call);
	ret = fetch ? fetch(dev, f, cmd, arg) : 0;
	if (call.error) {
		ret = call.error;
	} else if (ret >= 0) {
		call.running = true;
		ret = fn(dev, f, cmd, arg);
		if (call.error)
			ret = call.error;
	}
	kmod_call_end(&call);
	return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
}

static long kmod_unlocked_ioctl(struct file *filp, unsigned int cmd,
				unsigned long arg)
{
	return kmod_ioctl(filp, cmd, arg, false);
}

#ifdef CONFIG_COMPAT
static long kmod_compat_ioctl(struct file *filp, unsigned int cmd,
			      unsigned long arg)
{
	return kmod_ioctl(filp, cmd, arg, true);
}
#endif

static const struct file_operations kmod_fops = {
	.owner = THIS_MODULE,
	.open = kmod_open,
	.release = kmod_release,
	.read = kmod_read,
	.write = kmod_write,
	.poll = kmod_poll,
	.unlocked_ioctl = kmod_unlocked_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = kmod_compat_ioctl,
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
	.llseek = no_llseek,	/* stream_open() says it since */
#endif
};

/* Module start and end. */

/* The value of a key: the module parameter's, else the model's default,
 * checked as the daemon checks a configuration's. */
static int kmod_param_parse(struct kmod_dev *k, unsigned int i,
			    const char *value)
{
	const struct cusemu_param *p = &k->dev.model->params[i];
	u64 v = 0;
	bool b;
	int err = 0;

	k->strings[i] = value;
	switch (p->type) {
	case CUSEMU_PARAM_UINT:
		err = kstrtou64(value, 0, &v);
		break;
	case CUSEMU_PARAM_SIZE: {
		char *end;

		v = memparse(value, &end);
		err = *end || end == value ? -EINVAL : 0;
		break;
	}
	case CUSEMU_PARAM_BOOL:
		err = kstrtobool(value, &b);
		v = b;
		break;
	default:
		return 0;
	}
	if (err) {
		pr_err("%s: %s=%s: not a %s\n", k->name, p->key, value,
		       p->type == CUSEMU_PARAM_BOOL ? "boolean" : "number");
		return -EINVAL;
	}
	if ((p->min || p->max) && (v < p->min || v > p->max)) {
		pr_err("%s: %s=%s: must be %llu to %llu\n", k->name, p->key,
		       value, p->min, p->max);
		return -EINVAL;
	}
	k->numbers[i] = v;
	return 0;
}

static int kmod_params(struct kmod_dev *k, unsigned int model)
{
	const struct cusemu_param *p = k->dev.model->params;
	unsigned int n = 0;

	while (p && p[n].key)
		n++;
	k->numbers = kcalloc(n + 1, sizeof(*k->numbers), GFP_KERNEL);
	k->strings = kcalloc(n + 1, sizeof(*k->strings), GFP_KERNEL);
	if (!k->numbers || !k->strings)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		const char *value = p[i].default_value ? p[i].default_value : "";

		for (unsigned int j = 0; kmod_module_params[j].key; j++)
			if (kmod_module_params[j].model == model &&
			    !strcmp(kmod_module_params[j].key, p[i].key) &&
			    *kmod_module_params[j].value)
				value = *kmod_module_params[j].value;
		if (kmod_param_parse(k, i, value))
			return -EINVAL;
	}
	return 0;
}

static ssize_t kmod_attr_show(struct device *d, struct device_attribute *da,
			      char *buf)
{
	struct kmod_attr *a = container_of(da, struct kmod_attr, attr);

	return a->model_attr->show(&a->k->dev, buf, PAGE_SIZE);
}

/*
 * The model's attrs (those of the device's own directory: a path with a
 * '/' is of a parent the misc device does not have) as files of the misc
 * device, read-only, there before the device is announced: wdctl and
 * udev find them by the node's number, /sys/dev/char/10:MINOR.
 */
static int kmod_attrs(struct kmod_dev *k)
{
	const struct cusemu_attr *ma = k->dev.model->attrs;
	unsigned int n = 0, i = 0;

	while (ma && ma[n].path)
		n++;
	if (!n)
		return 0;
	k->attrs = kcalloc(n, sizeof(*k->attrs), GFP_KERNEL);
	k->attr_list = kcalloc(n + 1, sizeof(*k->attr_list), GFP_KERNEL);
	if (!k->attrs || !k->attr_list)
		return -ENOMEM;
	for (unsigned int j = 0; j < n; j++) {
		struct kmod_attr *a = &k->attrs[i];

		if (strchr(ma[j].path, '/'))
			continue;
		sysfs_attr_init(&a->attr.attr);
		a->attr.attr.name = ma[j].path;
		a->attr.attr.mode = 0444;
		a->attr.show = kmod_attr_show;
		a->model_attr = &ma[j];
		a->k = k;
		k->attr_list[i++] = &a->attr.attr;
	}
	k->attr_group.attrs = k->attr_list;
	k->attr_groups[0] = &k->attr_group;
	k->misc.groups = k->attr_groups;
	return 0;
}

static void kmod_dev_free(struct kmod_dev *k)
{
	if (k->registered)
		misc_deregister(&k->misc);
	if (k->probed && k->dev.model->remove)
		k->dev.model->remove(&k->dev);
	kfree(k->attrs);
	kfree(k->attr_list);
	kfree(k->numbers);
	kfree(k->strings);
	kfree(k);
}

static int kmod_dev_start(struct kmod_dev *k, unsigned int model)
{
	const struct cusemu_device_model *m = k->dev.model;
	char *why = NULL;
	int err;

	snprintf(k->name, sizeof(k->name), "%s0", m->node_prefix);
	k->dev.name = k->name;
	if (*kmod_node_names[model]) {
		/* name= wins over the model's choice, as in cusemud. */
		err = cusemu_device_default_name(&k->dev, *kmod_node_names[model]);
		if (err) {
			pr_err("%s: name=%s: not a node name (letters, digits, "
			       "'-', '_' and '.', at most %d)\n", m->name,
			       *kmod_node_names[model], KMOD_NAME_MAX);
			return err;
		}
		k->name_given = true;
	}
	k->methods = CUSEMU_METHODS_ALL;
	init_waitqueue_head(&k->pollers);
	ratelimit_state_init(&k->ratelimit, 5 * HZ, 10);
	err = kmod_params(k, model);
	if (err)
		return err;
	if (m->probe) {
		err = m->probe(&k->dev, &why);
		if (err) {
			pr_err("%s: model %s: probe failed (%d)%s%s\n", k->name,
			       m->name, err, why ? ": " : "", why ? why : "");
			kfree(why);	/* cusemu_strdup_printf()'s */
			return err;
		}
	}
	k->probed = true;
	err = kmod_attrs(k);
	if (err)
		return err;
	k->misc.minor = MISC_DYNAMIC_MINOR;
	k->misc.name = k->name;
	k->misc.fops = &kmod_fops;
	err = misc_register(&k->misc);
	if (err) {
		pr_err("%s: cannot register the misc device (%d)\n", k->name,
		       err);
		return err;
	}
	k->registered = true;
	pr_info("%s: model %s serves /dev/%s\n", KBUILD_MODNAME, m->name,
		k->name);
	return 0;
}

static void kmod_stop(void)
{
	while (kmod_n_devs)
		kmod_dev_free(kmod_devs[--kmod_n_devs]);
	kfree(kmod_devs);
	kmod_devs = NULL;
}

static int __init kmod_init(void)
{
	const struct cusemu_device_model *const *models = cusemu_plugin.models;
	unsigned int n = 0;
	int err = 0;

	while (models[n])
		n++;
	kmod_devs = kcalloc(n, sizeof(*kmod_devs), GFP_KERNEL);
	if (!kmod_devs)
		return -ENOMEM;
	for (unsigned int i = 0; i < n && !err; i++) {
		struct kmod_dev *k = kzalloc(sizeof(*k), GFP_KERNEL);

		if (!k) {
			err = -ENOMEM;
			break;
		}
		k->dev.model = models[i];
		kmod_devs[kmod_n_devs++] = k;
		err = kmod_dev_start(k, i);
	}
	if (err)
		kmod_stop();
	return err;
}

static void __exit kmod_exit(void)
{
	kmod_stop();
}

module_init(kmod_init);
module_exit(kmod_exit);
MODULE_LICENSE("Dual MIT/GPL");
