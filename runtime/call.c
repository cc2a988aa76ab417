/* SPDX-License-Identifier: MIT */
/*
 * User memory over FUSE_IOCTL_RETRY: the uaccess helpers of
 * <cusemu/uaccess.h>, the fetch helpers and the report of <cusemu/report.h>,
 * acting on the call record of the request the current thread serves. A
 * model host links this file too, and runs them on its copy of the call.
 */
#define G_LOG_DOMAIN "cusemu-call"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "call.h"
#include "cusemu/report.h"
#include "cusemu/sched.h"
#include "instance.h"
#include "ratelimit.h"
#include "request.h"

void cusemu_call_init(struct cusemu_call *call, struct cusemu_device *dev,
		      struct cusemu_file *file, unsigned int cmd,
		      unsigned long arg, bool compat, pid_t tid)
{
	call->dev = dev;
	call->file = file;
	call->cmd = cmd;
	call->arg = arg;
	call->compat = compat;
	call->tid = tid;
	call->in.count = call->out.count = 0;
	call->in.bytes = call->out.bytes = 0;
	call->in_data = NULL;
	call->out_data = NULL;
	call->in_avail = call->out_avail = call->out_used = 0;
	call->phase = CUSEMU_PHASE_FETCH;
	call->step = NULL;
	call->pending = false;
	call->named_out = false;
	call->error = 0;
	call->method = 0;
	call->round_trips = 0;
	call->start_ns = 0;
	call->stats = (struct cusemu_request_stats){
		.cmd = cmd,
		.compat = compat,
	};
}

void cusemu_user_ranges_copy(struct cusemu_user_ranges *to,
			     const struct cusemu_user_ranges *from)
{
	to->count = from->count;
	to->bytes = from->bytes;
	memcpy(to->r, from->r, from->count * sizeof(from->r[0]));
}

/*
 * A known range holding [addr, addr + len), fetched or not. Written so that
 * no sum can wrap: a handler may pass any length a client made up.
 */
static const struct cusemu_user_range *
find_range(const struct cusemu_user_ranges *set, cusemu_uptr_t addr,
	   uint64_t len)
{
	for (unsigned int i = 0; i < set->count; i++) {
		const struct cusemu_user_range *r = &set->r[i];

		if (addr >= r->addr && len <= r->len &&
		    addr - r->addr <= r->len - len)
			return r;
	}
	return NULL;
}

static bool fetched(const struct cusemu_user_range *r, uint32_t avail)
{
	return r->off + r->len <= avail;
}

/*
 * Bytes of an out range that the handler leaves alone must not change in
 * the client: take them from the in data where the range was also read.
 */
static void prefill_out(struct cusemu_call *call)
{
	memset(call->out_data, 0, call->out_avail);
	for (unsigned int i = 0; i < call->out.count; i++) {
		const struct cusemu_user_range *o = &call->out.r[i];
		const struct cusemu_user_range *r;

		r = find_range(&call->in, o->addr, o->len);
		if (r && fetched(r, call->in_avail))
			memcpy(call->out_data + o->off,
			       call->in_data + r->off + (o->addr - r->addr),
			       o->len);
	}
}

void cusemu_call_set_data(struct cusemu_call *call,
			  const struct cusemu_user_ranges *prev_in,
			  const struct cusemu_user_ranges *prev_out,
			  const void *in_data, uint32_t in_len,
			  uint8_t *out_data, uint32_t out_len)
{
	if (prev_in)
		cusemu_user_ranges_copy(&call->in, prev_in);
	if (prev_out)
		cusemu_user_ranges_copy(&call->out, prev_out);
	g_return_if_fail(call->in.bytes == in_len);
	g_return_if_fail(call->out.bytes == out_len);
	call->in_data = in_data;
	call->in_avail = in_len;
	call->out_data = out_data;
	call->out_avail = out_len;
	if (out_len)
		prefill_out(call);
}

static void one_range(struct cusemu_user_ranges *set, cusemu_uptr_t addr,
		      uint32_t len)
{
	set->count = 0;
	set->bytes = len;
	if (len)
		set->r[set->count++] = (struct cusemu_user_range){ addr, len, 0 };
}

void cusemu_call_set_ioc_data(struct cusemu_call *call, const void *in_data,
			      uint32_t in_len, uint8_t *out_data,
			      uint32_t out_len)
{
	one_range(&call->in, call->arg, in_len);
	one_range(&call->out, call->arg, out_len);
	cusemu_call_set_data(call, NULL, NULL, in_data, in_len, out_data,
			     out_len);
}

/* A 32-bit caller cannot name memory above 4 GiB; the kernel would say -EIO. */
static bool reachable(const struct cusemu_call *call, cusemu_uptr_t addr,
		      uint64_t len)
{
	uint64_t limit = call->compat ? UINT64_C(1) << 32 : UINT64_MAX;

	return addr <= limit && len <= limit - addr;
}

/* Each way of breaking the handler contract is said once per device. */
enum { BROKE_UNNAMED = 1, BROKE_FETCH_WROTE = 2 };

static bool first_time(const struct cusemu_call *call, guint how)
{
	return !(g_atomic_int_or((guint *)&cusemu_instance(call->dev)->contract.broken,
				 how) & how);
}

/*
 * The handler asked for memory its fetch step never named: it cannot come
 * now (the handler runs once), so the call fails. A model bug, said once.
 */
static int unnamed(struct cusemu_call *call, const char *what)
{
	if (first_time(call, BROKE_UNNAMED))
		g_warning("%s: the handler of %s %s memory its fetch step "
			  "did not name (see the handler contract in "
			  "<cusemu/device.h>); the caller gets EIO",
			  call->dev->name,
			  call->step ? call->step : "an ioctl", what);
	call->error = -EIO;
	return -EIO;
}

/*
 * Name a range for the next retry. Returns 0 when its bytes are here,
 * -EAGAIN when they will come with the retry, -EFAULT or -ENOMEM when they
 * never can.
 */
static int want(struct cusemu_call *call, struct cusemu_user_ranges *set,
		uint32_t avail, cusemu_uptr_t addr, uint64_t len)
{
	const struct cusemu_user_range *known;
	struct cusemu_user_range *r;

	if (!len)
		return 0;
	/* What the handler is to write: it may not forget to (handler.c). */
	if (set == &call->out && call->phase == CUSEMU_PHASE_FETCH)
		call->named_out = true;
	known = find_range(set, addr, len);
	if (known && fetched(known, avail))
		return 0;
	if (known) {
		call->pending = true;
		return -EAGAIN;
	}
	if (!reachable(call, addr, len))
		return -EFAULT;
	if (call->phase == CUSEMU_PHASE_RUN)
		return unnamed(call, set == &call->in ? "read" : "wrote");
	if (call->in.count + call->out.count >= CUSEMU_USER_MAX_RANGES ||
	    len > CUSEMU_USER_MAX_BYTES - set->bytes) {
		call->error = -ENOMEM;
		return -ENOMEM;
	}
	r = &set->r[set->count++];
	r->addr = addr;
	r->len = (uint32_t)len;
	r->off = set->bytes;
	set->bytes += (uint32_t)len;
	call->pending = true;
	return -EAGAIN;
}

int cusemu_user_want_read(cusemu_uptr_t addr, size_t len)
{
	struct cusemu_call *call = cusemu_call_current();

	return want(call, &call->in, call->in_avail, addr, len);
}

int cusemu_user_want_write(cusemu_uptr_t addr, size_t len)
{
	struct cusemu_call *call = cusemu_call_current();

	return want(call, &call->out, call->out_avail, addr, len);
}

bool cusemu_user_pending(void)
{
	return cusemu_call_current()->pending;
}

bool cusemu_in_compat_syscall(void)
{
	return cusemu_call_current()->compat;
}

unsigned long cusemu_copy_from_user(void *to, cusemu_uptr_t from,
				    unsigned long n)
{
	struct cusemu_call *call = cusemu_call_current();
	const struct cusemu_user_range *r;

	if (want(call, &call->in, call->in_avail, from, n))
		return n;
	if (!n)
		return 0;
	r = find_range(&call->in, from, n);
	memcpy(to, call->in_data + r->off + (from - r->addr), n);
	return 0;
}

unsigned long cusemu_copy_to_user(cusemu_uptr_t to, const void *from,
				  unsigned long n)
{
	struct cusemu_call *call = cusemu_call_current();
	const struct cusemu_user_range *r;
	uint32_t end;

	/* Bytes written before the call may act would go back on a retry. */
	if (call->phase == CUSEMU_PHASE_FETCH && n) {
		if (first_time(call, BROKE_FETCH_WROTE))
			g_warning("%s: the fetch step of %s wrote to the "
				  "caller; name the range with "
				  "cusemu_user_want_write() and write it in "
				  "the handler",
				  call->dev->name,
				  call->step ? call->step : "a command");
		call->error = -EIO;
		return n;
	}
	if (want(call, &call->out, call->out_avail, to, n))
		return n;
	if (!n)
		return 0;
	r = find_range(&call->out, to, n);
	memcpy(call->out_data + r->off + (to - r->addr), from, n);
	end = r->off + (uint32_t)(to - r->addr) + (uint32_t)n;
	if (end > call->out_used)
		call->out_used = end;
	return 0;
}

/* The kernel's own codes (include/linux/errno.h), never for user space. */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516
/* The largest errno fuse_dev_do_write() takes in a reply. */
#define REPLY_ERRNO_MAX 511

int cusemu_reply_errno(long result, struct cusemu_device *dev,
		       const char *what)
{
	char note[CUSEMU_RATELIMIT_NOTE];

	if (result < 0 && result >= -REPLY_ERRNO_MAX)
		return (int)-result;
	switch (result) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		/*
		 * A driver returns these when a signal interrupted it, and
		 * the kernel makes them EINTR or a restart of the system
		 * call. A FUSE server can ask for no restart, so EINTR it
		 * is, signal pending or not: without one the model broke
		 * the idiom, and EINTR is still the answer a caller knows
		 * to try again on.
		 */
		return EINTR;
	default:
		/* A model may return it on every call a client makes. */
		if (cusemu_ratelimit(&cusemu_instance(dev)->contract.bad_result, note))
			g_warning("%s: %s returned %ld, not an errno the "
				  "kernel takes; the caller gets EIO%s",
				  dev->name, what, result, note);
		return EIO;
	}
}

/* The command's name in a log line, into buf if it has none. */
static const char *command_name(const struct cusemu_call *call, char *buf,
				size_t size)
{
	if (call->stats.name)
		return call->stats.name;
	g_snprintf(buf, size, "ioctl %s%08x", call->compat ? "32-bit " : "",
		   call->cmd);
	return buf;
}

enum cusemu_call_outcome cusemu_call_outcome(struct cusemu_call *call,
					     long *result)
{
	char note[CUSEMU_RATELIMIT_NOTE];
	char name[32];

	if (call->error) {
		*result = call->error;
		return CUSEMU_CALL_ERROR;
	}
	if (call->pending)
		return CUSEMU_CALL_RETRY;
	if (*result < 0) {
		*result = -cusemu_reply_errno(
			*result, call->dev,
			command_name(call, name, sizeof(name)));
		return CUSEMU_CALL_ERROR;
	}
	if (*result > INT_MAX) {
		if (cusemu_ratelimit(&cusemu_instance(call->dev)->contract.bad_result,
				     note))
			g_warning("%s: %s returned %ld, more than an ioctl's "
				  "int result holds; the caller gets EIO%s",
				  call->dev->name,
				  command_name(call, name, sizeof(name)),
				  *result, note);
		*result = -EIO;
		return CUSEMU_CALL_ERROR;
	}
	/*
	 * Unwritten out ranges past the last written byte are simply not
	 * sent back; the ones before it carry their prefilled bytes.
	 */
	return CUSEMU_CALL_REPLY;
}

int cusemu_fetch_range(uint64_t addr, size_t read_len, size_t write_len)
{
	int err = cusemu_user_want_read(addr, read_len);

	if (!err || err == -EAGAIN)
		err = cusemu_user_want_write(addr, write_len);
	return err == -EAGAIN ? 0 : err;
}

int cusemu_fetch_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	size_t size = _IOC_SIZE(cmd);

	return cusemu_fetch_range(arg, _IOC_DIR(cmd) & _IOC_WRITE ? size : 0,
				  _IOC_DIR(cmd) & _IOC_READ ? size : 0);
}

enum cusemu_method cusemu_current_method(void)
{
	struct cusemu_call *call = cusemu_call_current();

	return call ? call->method : 0;
}

/* Clients read the method through <cusemu/abi/report.h>: same values. */
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL == (int)CUSEMU_METHOD_IOCTL);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_UNLOCKED_IOCTL == (int)CUSEMU_METHOD_UNLOCKED_IOCTL);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_COMPAT_IOCTL == (int)CUSEMU_METHOD_COMPAT_IOCTL);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL_NATIVE == (int)CUSEMU_METHOD_IOCTL_NATIVE);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL_COMPAT == (int)CUSEMU_METHOD_IOCTL_COMPAT);
G_STATIC_ASSERT((int)CUSEMU_REPORT_METHOD_IOCTL32_HANDLER == (int)CUSEMU_METHOD_IOCTL32_HANDLER);

struct cusemu_ioctl_report cusemu_report_current(void)
{
	return (struct cusemu_ioctl_report){
		.method = cusemu_current_method(),
		.big_lock_depth = cusemu_kernel_lock_depth(),
		.compat = cusemu_in_compat_syscall(),
	};
}

long cusemu_put_report(cusemu_uptr_t uptr)
{
	struct cusemu_ioctl_report r = cusemu_report_current();

	return cusemu_copy_to_user(uptr, &r, sizeof(r)) ? -EFAULT : 0;
}

const char *cusemu_method_name(enum cusemu_method how)
{
	const char *name = cusemu_report_method_name(how);

	return name ? name : "none";
}

const struct cusemu_ioctl *cusemu_ioctl_lookup(const struct cusemu_ioctl *table,
					       unsigned int cmd)
{
	for (const struct cusemu_ioctl *row = table; row && row->name; row++)
		if (row->cmd == cmd)
			return row;
	return NULL;
}

const char *cusemu_call_command_name(const struct cusemu_call *call)
{
	const struct cusemu_device_model *m = call->dev->model;
	const struct cusemu_ioctl *row;

	if (call->stats.name)
		return call->stats.name;
	row = cusemu_ioctl_lookup(call->compat ? m->compat_table
					       : m->native_table,
				  call->cmd);
	if (!row)
		row = cusemu_ioctl_lookup(call->compat ? m->native_table
						       : m->compat_table,
					  call->cmd);
	return row ? row->name : NULL;
}
