/* SPDX-License-Identifier: MIT */
/*
 * The request path over the in-process transport, driven as the kernel's
 * CUSE does: requests per ioctl, restricted and unrestricted nodes,
 * abandoned retries, and what a call allocates in steady state (nothing). Not the integration test: that one
 * runs real clients on real nodes (client-tests/).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "cusemu/abi/fioc.h"
#include "cusemu/abi/slow.h"
#include "fake-cuse.h"
#include "dispatch.h"
#include "fake-kernel.h"
#include "node.h"
#include "ratelimit.h"
#include "stats.h"
#include "test.h"
#include "trace.h"

#define NATIVE_BASE UINT64_C(0x7f5500000000)
#define COMPAT_BASE UINT64_C(0x08100000)
#define CLIENT_SIZE (64 * 1024)
#define PID 4242

/* ---- every allocation of the process, counted while asked to ---- */

/*
 * AddressSanitizer brings its own allocator, and these would bypass it:
 * allocations are counted in builds without it.
 */
#if defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOCATIONS 0
#else
#define COUNT_ALLOCATIONS 1
#endif

static gint counting;
static gint allocations;

#if COUNT_ALLOCATIONS

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void __libc_free(void *p);

static void count(void)
{
	if (g_atomic_int_get(&counting))
		g_atomic_int_inc(&allocations);
}

void *malloc(size_t size)
{
	count();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	count();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	count();
	return __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count();
	return __libc_memalign(align, size);
}

int posix_memalign(void **p, size_t align, size_t size)
{
	count();
	*p = __libc_memalign(align, size);
	return *p ? 0 : ENOMEM;
}

void free(void *p)
{
	__libc_free(p);
}
#endif

/* ---- a client process and a daemon with one device ---- */

struct fixture {
	struct fake_client client;
	struct cusemu_device *dev;
	struct fake_cuse *cuse;
	int fh;
};

/* A device of model m, or of the model device names when m is NULL. */
static void setup_model(struct fixture *f,
			const struct cusemu_device_model *m,
			const char *device, bool compat)
{
	g_autoptr(GError) error = NULL;

	f->client.compat = compat;
	f->client.base = compat ? COMPAT_BASE : NATIVE_BASE;
	f->client.size = CLIENT_SIZE;
	f->client.mem = g_malloc0(CLIENT_SIZE);
	f->dev = fake_device_try(m, device, &error);
	g_assert_no_error(error);
	f->cuse = fake_cuse_start(f->dev);
	f->fh = fake_cuse_open(f->cuse, PID);
	g_assert_cmpint(f->fh, >=, 0);
}

static void setup(struct fixture *f, const char *device, bool compat)
{
	setup_model(f, NULL, device, compat);
}

static void teardown(struct fixture *f)
{
	fake_cuse_release(f->cuse, f->fh);
	fake_cuse_stop(f->cuse);
	fake_device_free(f->dev);
	g_free(f->client.mem);
}

/* The client's address of byte off of its memory. */
static cusemu_uptr_t at(const struct fixture *f, size_t off)
{
	return f->client.base + off;
}

static long do_ioctl(struct fixture *f, pid_t tid, unsigned int cmd,
		     cusemu_uptr_t arg, unsigned int *requests)
{
	return fake_cuse_ioctl(f->cuse, f->fh, &f->client, tid, cmd, arg,
			       requests);
}

/* Where the client keeps things. */
enum { SIZE_OFF = 0, RW_OFF = 64, BUF_OFF = 1024 };

static long fioc_set_size(struct fixture *f, uint64_t size,
			  unsigned int *requests)
{
	if (f->client.compat) {
		uint32_t v = (uint32_t)size;

		memcpy(f->client.mem + SIZE_OFF, &v, sizeof(v));
		return do_ioctl(f, PID, FIOC_SET_SIZE32, at(f, SIZE_OFF),
				requests);
	}
	memcpy(f->client.mem + SIZE_OFF, &size, sizeof(size));
	return do_ioctl(f, PID, FIOC_SET_SIZE, at(f, SIZE_OFF), requests);
}

static uint64_t fioc_get_size(struct fixture *f, unsigned int *requests)
{
	uint32_t v32 = 0;
	uint64_t v = 0;
	long ret;

	memset(f->client.mem + SIZE_OFF, 0xee, 8);
	if (f->client.compat) {
		ret = do_ioctl(f, PID, FIOC_GET_SIZE32, at(f, SIZE_OFF),
			       requests);
		memcpy(&v32, f->client.mem + SIZE_OFF, sizeof(v32));
		v = v32;
	} else {
		ret = do_ioctl(f, PID, FIOC_GET_SIZE, at(f, SIZE_OFF),
			       requests);
		memcpy(&v, f->client.mem + SIZE_OFF, sizeof(v));
	}
	g_assert_cmpint(ret, ==, 0);
	return v;
}

/* FIOC_READ or FIOC_WRITE of size bytes at offset, buffer at buf. */
static long fioc_rw(struct fixture *f, pid_t tid, unsigned int cmd,
		    cusemu_uptr_t buf, uint32_t size, unsigned int *requests)
{
	if (f->client.compat) {
		struct fioc_rw_arg32 a = { .buf = (uint32_t)buf, .size = size };

		memcpy(f->client.mem + RW_OFF, &a, sizeof(a));
	} else {
		struct fioc_rw_arg a = {
			.buf = (void *)(uintptr_t)buf, .size = size,
		};

		memcpy(f->client.mem + RW_OFF, &a, sizeof(a));
	}
	return do_ioctl(f, tid, cmd, at(f, RW_OFF), requests);
}

/* Each class of command at the fewest requests the protocol allows. */
static void test_fioc(gconstpointer data)
{
	bool compat = GPOINTER_TO_INT(data);
	struct fixture f;
	unsigned int requests;

	setup(&f, "fioc", compat);
	g_assert_true(fake_cuse_unrestricted(f.cuse));
	g_assert_cmpint(fioc_set_size(&f, 100, &requests), ==, 0);
	g_assert_cmpuint(requests, ==, 2);
	g_assert_cmpuint(fioc_get_size(&f, &requests), ==, 100);
	g_assert_cmpuint(requests, ==, 2);

	memcpy(f.client.mem + BUF_OFF, "hello", 5);
	g_assert_cmpint(fioc_rw(&f, PID, FIOC_WRITE, at(&f, BUF_OFF), 5,
				&requests), ==, 5);
	/* The argument struct, then the buffer it points to. */
	g_assert_cmpuint(requests, ==, 3);
	memset(f.client.mem + BUF_OFF, 0, 5);
	g_assert_cmpint(fioc_rw(&f, PID, FIOC_READ, at(&f, BUF_OFF), 5,
				&requests), ==, 5);
	g_assert_cmpuint(requests, ==, 3);
	g_assert_cmpmem(f.client.mem + BUF_OFF, 5, "hello", 5);

	/* An unknown command costs one request under modern. */
	g_assert_cmpint(do_ioctl(&f, PID, _IO('Z', 9), 0, &requests), ==,
			-ENOTTY);
	g_assert_cmpuint(requests, ==, 1);
	teardown(&f);
}

/* slow's commands are all _IOC-encoded: the kernel copies, one request. */
static void test_restricted(gconstpointer data)
{
	bool compat = GPOINTER_TO_INT(data);
	struct cusemu_ioctl_report report;
	uint32_t us = 0;
	struct fixture f;
	unsigned int requests;

	setup(&f, "slow:hold_us=0", compat);
	g_assert_false(fake_cuse_unrestricted(f.cuse));
	memset(f.client.mem, 0xee, sizeof(report));
	g_assert_cmpint(do_ioctl(&f, PID, SLOW_REPORT, at(&f, 0), &requests),
			==, 0);
	g_assert_cmpuint(requests, ==, 1);
	memcpy(&report, f.client.mem, sizeof(report));
	g_assert_cmpuint(report.compat, ==, compat);
	g_assert_cmpuint(report.method, ==,
			 compat ? CUSEMU_REPORT_METHOD_COMPAT_IOCTL
				: CUSEMU_REPORT_METHOD_UNLOCKED_IOCTL);

	memcpy(f.client.mem, &us, sizeof(us));
	g_assert_cmpint(do_ioctl(&f, PID, SLOW_HOLD_US, at(&f, 0), &requests),
			==, 0);
	g_assert_cmpuint(requests, ==, 1);
	us = SLOW_HOLD_MAX_US + 1;
	memcpy(f.client.mem, &us, sizeof(us));
	g_assert_cmpint(do_ioctl(&f, PID, SLOW_HOLD_US, at(&f, 0), &requests),
			==, -EINVAL);
	g_assert_cmpint(do_ioctl(&f, PID, SLOW_HOLD, 0, &requests), ==, 0);
	g_assert_cmpuint(requests, ==, 1);
	teardown(&f);
}

/*
 * A client that gives up halfway (the kernel's copy failed: EFAULT) leaves
 * a retry behind. Its thread's next call starts afresh; more abandoned
 * retries than a file keeps push out the oldest, and every thread is still
 * served.
 */
static void test_abandoned_retries(void)
{
	const unsigned int threads = 100;
	struct fixture f;
	unsigned int requests;

	setup(&f, "fioc", false);
	g_assert_cmpint(fioc_set_size(&f, 16, &requests), ==, 0);
	for (pid_t tid = 1; tid <= (pid_t)threads; tid++)
		g_assert_cmpint(fioc_rw(&f, tid, FIOC_READ, 0x1000, 8,
					&requests), ==, -EFAULT);
	for (pid_t tid = 1; tid <= (pid_t)threads; tid++) {
		g_assert_cmpint(fioc_rw(&f, tid, FIOC_READ, at(&f, BUF_OFF), 8,
					&requests), ==, 8);
		g_assert_cmpuint(requests, ==, 3);
	}
	teardown(&f);
}

/*
 * The last page below 4 GiB is an i386 caller's to name; a range that
 * crosses 4 GiB is not, and the daemon itself refuses it (EFAULT). The
 * fake client has memory on both sides of 4 GiB, so only that refusal can
 * fail the i386 call: the same x86_64 call goes through.
 */
static void test_near_4gib(gconstpointer data)
{
	bool compat = GPOINTER_TO_INT(data);
	cusemu_uptr_t last_page;
	struct fixture f;
	unsigned int requests;

	setup(&f, "fioc", compat);
	f.client.base = (UINT64_C(1) << 32) - CLIENT_SIZE / 2;
	last_page = at(&f, CLIENT_SIZE / 2 - 4096);
	g_assert_cmpint(fioc_set_size(&f, 8192, &requests), ==, 0);
	g_assert_cmpint(fioc_rw(&f, PID, FIOC_READ, last_page, 4096,
				&requests), ==, 4096);
	g_assert_cmpint(fioc_rw(&f, PID, FIOC_READ, last_page, 4097,
				&requests), ==, compat ? -EFAULT : 4097);
	teardown(&f);
}

/* ---- a model that tries to give back more than it was asked for ---- */

#define GREEDY_IOC _IOR('G', 1, uint32_t)	/* 4 bytes out, by the bits */
#define GREEDY_WRAP_OUT _IO('G', 2)	/* 16 bytes at arg, in and out */
#define GREEDY_WRAP_IN _IO('G', 3)
#define GREEDY_EXTRA 100
#define GREEDY_BYTE 0x5a

/* 64 bytes out for a command whose _IOC bits promise 4. */
static long greedy_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	uint8_t bytes[64];

	memset(bytes, GREEDY_BYTE, sizeof(bytes));
	return cusemu_copy_to_user(arg, bytes, sizeof(bytes)) ? -EFAULT : 0;
}

/*
 * Asks for 16 bytes, then copies at their middle a length taken as is
 * from a client (one that wraps the address space).
 */
static long greedy_wrap(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	static uint8_t bytes[16];
	unsigned long wraps = (unsigned long)-4;

	if (cusemu_copy_from_user(bytes, arg, sizeof(bytes)) ||
	    cusemu_copy_to_user(arg, bytes, sizeof(bytes)))
		return -EFAULT;
	if (cmd == GREEDY_WRAP_OUT)
		return cusemu_copy_to_user(arg + 8, bytes, wraps) ? -EFAULT : 0;
	return cusemu_copy_from_user(bytes, arg + 8, wraps) ? -EFAULT : 0;
}

/* Names the 16 bytes, then a length that wraps the address space. */
static int greedy_wrap_fetch(struct cusemu_device *dev,
			     struct cusemu_file *file, unsigned int cmd,
			     unsigned long arg)
{
	static uint8_t bytes[16];
	unsigned long wraps = (unsigned long)-4;

	cusemu_user_want_write(arg, sizeof(bytes));
	if (cusemu_copy_from_user(bytes, arg, sizeof(bytes)))
		return -EFAULT;
	return cusemu_user_want_read(arg + 8, wraps) == -EFAULT ? 0 : -EIO;
}

/* Fills what it was given, and claims GREEDY_EXTRA bytes more. */
static ssize_t greedy_read(struct cusemu_device *dev, struct cusemu_file *file,
			   char *buf, size_t size)
{
	memset(buf, GREEDY_BYTE, size);
	return (ssize_t)(size + GREEDY_EXTRA);
}

static ssize_t greedy_write(struct cusemu_device *dev,
			    struct cusemu_file *file, const char *buf,
			    size_t size)
{
	return (ssize_t)(size + GREEDY_EXTRA);
}

static const struct cusemu_ioctl greedy_native[] = {
	CUSEMU_IOCTL_IOC(GREEDY_IOC, greedy_ioc),
	CUSEMU_IOCTL_USER(GREEDY_WRAP_OUT, greedy_wrap_fetch, greedy_wrap),
	CUSEMU_IOCTL_USER(GREEDY_WRAP_IN, greedy_wrap_fetch, greedy_wrap),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl greedy_compat[] = {
	CUSEMU_COMPAT_SAME(GREEDY_IOC),
	CUSEMU_COMPAT_SAME(GREEDY_WRAP_OUT),
	CUSEMU_COMPAT_SAME(GREEDY_WRAP_IN),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model greedy = {
	.name = "greedy",
	.node_prefix = "greedy",
	.read = greedy_read,
	.write = greedy_write,
	.native_table = greedy_native,
	.compat_table = greedy_compat,
};

/* Only the _IOC row: a session the kernel serves restricted. */
static const struct cusemu_ioctl greedy_ioc_only[] = {
	CUSEMU_IOCTL_IOC(GREEDY_IOC, greedy_ioc),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl greedy_ioc_only_compat[] = {
	CUSEMU_COMPAT_SAME(GREEDY_IOC),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model greedy_restricted = {
	.name = "greedy",
	.node_prefix = "greedy",
	.native_table = greedy_ioc_only,
	.compat_table = greedy_ioc_only_compat,
};

/* Nothing of the client's memory changed, here and past the 4 bytes. */
static void assert_untouched(const struct fixture *f)
{
	for (size_t i = 0; i < 64; i++)
		g_assert_cmphex(f->client.mem[i], ==, 0xee);
}

/*
 * A handler that writes past its command's _IOC payload fails the call
 * with EIO, restricted session or not, and writes nothing: the kernel
 * would refuse the longer reply of a restricted call, and an unrestricted
 * one must not differ. Said once per device in the log, as a bug of the
 * model.
 */
static void test_greedy_ioctl(void)
{
	const struct cusemu_device_model *models[] = {
		&greedy, &greedy_restricted,
	};
	struct fixture f;
	unsigned int requests;

	for (unsigned int i = 0; i < G_N_ELEMENTS(models) * 2; i++) {
		/* Once per device, however often it happens. */
		g_test_expect_message("cusemu-call", G_LOG_LEVEL_WARNING,
				      "*handler of GREEDY_IOC wrote memory its "
				      "fetch step did not name*");
		setup_model(&f, models[i / 2], "greedy", i % 2);
		g_assert_cmpint(fake_cuse_unrestricted(f.cuse), ==,
				models[i / 2] == &greedy);
		memset(f.client.mem, 0xee, 64);
		g_assert_cmpint(do_ioctl(&f, PID, GREEDY_IOC, at(&f, 0),
					 &requests), ==, -EIO);
		assert_untouched(&f);
		teardown(&f);
	}
	g_test_assert_expected_messages();
}

/* A length that wraps the address space is no range: EFAULT, no copy. */
static void test_greedy_wrap(gconstpointer data)
{
	struct fixture f;
	unsigned int requests;

	setup_model(&f, &greedy, "greedy", GPOINTER_TO_INT(data));
	memset(f.client.mem, 0xee, 64);
	g_assert_cmpint(do_ioctl(&f, PID, GREEDY_WRAP_OUT, at(&f, 0),
				 &requests), ==, -EFAULT);
	assert_untouched(&f);
	g_assert_cmpint(do_ioctl(&f, PID, GREEDY_WRAP_IN, at(&f, 0),
				 &requests), ==, -EFAULT);
	assert_untouched(&f);
	teardown(&f);
}

/* read() and write() answer at most the size asked, whatever the model says. */
static void test_greedy_read_write(void)
{
	char buf[64];
	struct fixture f;

	setup_model(&f, &greedy, "greedy", false);
	for (size_t size = 0; size <= 16; size += 16) {
		memset(buf, 0, sizeof(buf));
		g_assert_cmpint(fake_cuse_read(f.cuse, f.fh, buf, size), ==,
				size);
		g_assert_cmpint(fake_cuse_write(f.cuse, f.fh, buf, size), ==,
				size);
	}
	teardown(&f);
}

/* ---- a model whose every callback returns one chosen value ---- */

#define WILD_IOC _IO('W', 1)

static long wild_result;

static int wild_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	return (int)wild_result;
}

static ssize_t wild_read(struct cusemu_device *dev, struct cusemu_file *file,
			 char *buf, size_t size)
{
	return wild_result;
}

static ssize_t wild_write(struct cusemu_device *dev, struct cusemu_file *file,
			  const char *buf, size_t size)
{
	return wild_result;
}

static long wild_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	return wild_result;
}

static const struct cusemu_ioctl wild_native[] = {
	CUSEMU_IOCTL_NONE(WILD_IOC, wild_ioc),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl wild_compat[] = {
	CUSEMU_COMPAT_SAME(WILD_IOC),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model wild = {
	.name = "wild",
	.node_prefix = "wild",
	.open = wild_open,
	.read = wild_read,
	.write = wild_write,
	.native_table = wild_native,
	.compat_table = wild_compat,
};

/* The errno a client gets for result, and whether a log line says why. */
struct wild_case {
	long result;
	int error;
	bool logged;
};

static const struct wild_case wild_cases[] = {
	{ -512, EINTR, false },		/* ERESTARTSYS */
	{ -513, EINTR, false },		/* ERESTARTNOINTR */
	{ -514, EINTR, false },		/* ERESTARTNOHAND */
	{ -516, EINTR, false },		/* ERESTART_RESTARTBLOCK */
	{ -511, 511, false },
	{ -600, EIO, true },
	{ -4095, EIO, true },
	{ -70000, EIO, true },
};

/* The device's lines of results the kernel does not take so far: after
 * the burst, they are suppressed (a fatal warning otherwise). */
static unsigned int wild_said;

static void expect_wild_log(const struct wild_case *c, const char *what)
{
	g_autofree char *pattern = NULL;

	if (!c->logged || wild_said++ >= CUSEMU_RATELIMIT_BURST)
		return;
	pattern = g_strdup_printf("wild0: %s returned %ld, not an errno the "
				  "kernel takes; the caller gets EIO",
				  what, c->result);
	g_test_expect_message("cusemu-call", G_LOG_LEVEL_WARNING, pattern);
}

/*
 * A model's errno above 511 would be refused by the kernel, and its
 * caller never answered (D state, deaf to SIGKILL): open, read, write and
 * ioctl answer ERESTARTSYS and its kin with EINTR, the rest with EIO and a
 * log line naming the device and the operation or command. An ioctl result
 * above INT_MAX is refused the same way, where it read as 0. A client can
 * make a model return them on every call: the device's lines stop after
 * the kernel's burst of 10.
 */
static void test_result_range(gconstpointer data)
{
	char buf[16] = { 0 };
	struct fixture f;
	unsigned int requests;

	wild_result = 0;
	wild_said = 0;
	setup_model(&f, &wild, "wild", GPOINTER_TO_INT(data));
	wild_result = 0x100000000L;
	g_test_expect_message("cusemu-call", G_LOG_LEVEL_WARNING,
			      "wild0: WILD_IOC returned 4294967296, more than "
			      "an ioctl's int result holds; the caller gets "
			      "EIO");
	g_assert_cmpint(do_ioctl(&f, PID, WILD_IOC, 0, &requests), ==, -EIO);
	g_test_assert_expected_messages();
	wild_said++;
	for (unsigned int i = 0; i < G_N_ELEMENTS(wild_cases); i++) {
		const struct wild_case *c = &wild_cases[i];

		wild_result = c->result;
		expect_wild_log(c, "open");
		g_assert_cmpint(fake_cuse_open(f.cuse, PID), ==, -c->error);
		expect_wild_log(c, "read");
		g_assert_cmpint(fake_cuse_read(f.cuse, f.fh, buf, sizeof(buf)),
				==, -c->error);
		expect_wild_log(c, "write");
		g_assert_cmpint(fake_cuse_write(f.cuse, f.fh, buf, sizeof(buf)),
				==, -c->error);
		expect_wild_log(c, "WILD_IOC");
		g_assert_cmpint(do_ioctl(&f, PID, WILD_IOC, 0, &requests), ==,
				-c->error);
		g_test_assert_expected_messages();
	}
	wild_result = INT_MAX;
	g_assert_cmpint(do_ioctl(&f, PID, WILD_IOC, 0, &requests), ==,
			INT_MAX);
	/* Past the burst: refused all the same, and not said. */
	wild_result = 0x100000000L;
	g_assert_cmpint(do_ioctl(&f, PID, WILD_IOC, 0, &requests), ==, -EIO);
	wild_result = -600;
	g_assert_cmpint(do_ioctl(&f, PID, WILD_IOC, 0, &requests), ==, -EIO);
	g_assert_cmpuint(wild_said, >, CUSEMU_RATELIMIT_BURST);
	wild_result = 0;
	teardown(&f);
}

static void assert_json_has(struct cusemu_device *dev, const char *part)
{
	g_autoptr(GString) json = g_string_new(NULL);

	cusemu_stats_append_json(cusemu_instance(dev)->stats, json);
	if (!strstr(json->str, part))
		g_error("expected '%s' in:\n%s", part, json->str);
}

/*
 * Every request on a device is counted by operation, with its errors: a
 * read and a write the model has no slot for are EINVAL.
 */
static void test_operation_stats(void)
{
	char buf[16] = { 0 };
	struct fixture f;
	int fh;

	setup_model(&f, &greedy, "greedy", false);
	g_assert_cmpint(fake_cuse_read(f.cuse, f.fh, buf, 8), ==, 8);
	g_assert_cmpint(fake_cuse_read(f.cuse, f.fh, buf, 4), ==, 4);
	g_assert_cmpint(fake_cuse_write(f.cuse, f.fh, buf, 8), ==, 8);
	fh = fake_cuse_open(f.cuse, PID);
	fake_cuse_release(f.cuse, fh);
	assert_json_has(f.dev, "\"open\":{\"calls\":2,\"errors\":{},");
	assert_json_has(f.dev, "\"read\":{\"calls\":2,\"errors\":{},");
	assert_json_has(f.dev, "\"write\":{\"calls\":1,\"errors\":{},");
	assert_json_has(f.dev, "\"release\":{\"calls\":1,");
	teardown(&f);

	setup_model(&f, &greedy_restricted, "greedy", false);
	g_assert_cmpint(fake_cuse_read(f.cuse, f.fh, buf, 8), ==, -EINVAL);
	g_assert_cmpint(fake_cuse_write(f.cuse, f.fh, buf, 8), ==, -EINVAL);
	assert_json_has(f.dev, "\"read\":{\"calls\":1,"
			       "\"errors\":{\"EINVAL\":1},");
	assert_json_has(f.dev, "\"write\":{\"calls\":1,"
			       "\"errors\":{\"EINVAL\":1},");
	teardown(&f);
}

/* A client closing its file as soon as it is answered. */
struct closing {
	struct fixture *f;
	struct cusemu_device *old;
	const char *recorded;	/* in old's statistics by the reply */
};

static void close_on_reply(void *data)
{
	struct closing *c = data;

	assert_json_has(c->old, c->recorded);
	fake_cuse_release(c->f->cuse, c->f->fh);
}

/*
 * After a reload, a file opened before it gets ENODEV and its client
 * closes it at once: the release frees the replaced instance on another
 * worker while the answering one may still run. The request's statistics
 * are written before its reply, and nothing of it is touched after (with
 * AddressSanitizer, a heap-use-after-free otherwise).
 */
static void test_release_after_reply(gconstpointer data)
{
	bool read = GPOINTER_TO_INT(data);
	g_autoptr(GError) error = NULL;
	struct cusemu_device *fresh;
	unsigned int requests;
	struct closing c;
	struct fixture f;
	char buf[8];

	setup(&f, "fioc", false);
	c = (struct closing){
		.f = &f, .old = f.dev,
		.recorded = read ? "\"read\":{\"calls\":1,"
				   "\"errors\":{\"ENODEV\":1}"
				 : "\"ENODEV\":1",
	};
	fresh = cusemu_device_respawn(f.dev, f.dev->model, &error);
	g_assert_no_error(error);
	cusemu_dispatch_unbind(f.dev);
	cusemu_dispatch_bind(fresh, CUSEMU_LOCK_MODEL);
	cusemu_node_replace(cusemu_instance(f.dev)->serving.node, fresh);
	fake_cuse_on_reply(f.cuse, close_on_reply, &c);
	if (read)
		g_assert_cmpint(fake_cuse_read(f.cuse, f.fh, buf, sizeof(buf)),
				==, -ENODEV);
	else
		g_assert_cmpint(do_ioctl(&f, PID, FIOC_GET_SIZE, at(&f, 0),
					 &requests),
				==, -ENODEV);
	f.fh = fake_cuse_open(f.cuse, PID);
	g_assert_cmpint(f.fh, >=, 0);
	f.dev = fresh;
	teardown(&f);
}

/* ---- a model that is ready when told so ---- */

static unsigned int ready_mask;

static unsigned int ready_poll(struct cusemu_device *dev,
			       struct cusemu_file *file)
{
	return ready_mask;
}

static const struct cusemu_device_model ready = {
	.name = "ready",
	.node_prefix = "ready",
	.poll = ready_poll,
};

/*
 * A poll's handle is kept by the node until the model's wake-up notifies
 * it, or the next poll of the file, or its release, lets it go: each
 * handle let go once, and notified only by a wake-up.
 */
static void test_poll(void)
{
	struct cusemu_test_poll first = { 0 }, second = { 0 }, last = { 0 };
	struct fixture f;

	ready_mask = 0;
	setup_model(&f, &ready, "ready", false);
	g_assert_cmphex(fake_cuse_poll(f.cuse, f.fh, &first), ==, 0);
	g_assert_cmpint(first.freed, ==, 0);
	ready_mask = POLLIN;
	g_assert_cmphex(fake_cuse_poll(f.cuse, f.fh, &second), ==, POLLIN);
	g_assert_cmpint(first.freed, ==, 1);
	g_assert_cmpint(first.notified, ==, 0);
	cusemu_device_wake_up(f.dev);
	g_assert_cmpint(second.notified, ==, 1);
	g_assert_cmpint(second.freed, ==, 1);
	/* Nothing kept: a wake-up now notifies nobody. */
	cusemu_device_wake_up(f.dev);
	g_assert_cmpint(second.notified, ==, 1);
	g_assert_cmphex(fake_cuse_poll(f.cuse, f.fh, NULL), ==, POLLIN);
	g_assert_cmphex(fake_cuse_poll(f.cuse, f.fh, &last), ==, POLLIN);
	teardown(&f);
	g_assert_cmpint(last.freed, ==, 1);
	g_assert_cmpint(last.notified, ==, 0);
}

/* What a tracer on sv[1] has received, after the main loop wrote it out. */
static char *trace_received(int fd)
{
	GString *got = g_string_new(NULL);
	char buf[8192];
	ssize_t n;

	g_usleep(25 * 1000);
	while (g_main_context_iteration(NULL, FALSE))
		;
	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		g_string_append_len(got, buf, n);
	return g_string_free(got, FALSE);
}

/*
 * A traced ioctl is one line, once its retry is answered: both requests'
 * round trip counted, the bytes it fetched and wrote back in hex; the
 * other operations a line each.
 */
static void test_trace_lines(gconstpointer data)
{
	bool compat = GPOINTER_TO_INT(data);
	g_autoptr(GString) err = g_string_new(NULL);
	g_autofree char *got = NULL;
	const char *first;
	unsigned int requests;
	struct fixture f;
	char buf[8];
	int sv[2];

	setup(&f, "fioc", compat);
	g_assert_no_errno(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
				     sv));
	g_assert_cmpint(cusemu_trace_attach(sv[0], NULL, err), ==, 0);
	g_assert_cmpint(fioc_set_size(&f, 3, &requests), ==, 0);
	g_assert_cmpuint(fioc_get_size(&f, &requests), ==, 3);
	g_assert_cmpuint(requests, ==, 2);
	g_assert_cmpint(fake_cuse_read(f.cuse, f.fh, buf, 8), ==, 3);
	got = trace_received(sv[1]);
	if (compat)
		g_assert_nonnull(strstr(got, "\"op\":\"ioctl\",\"abi\":\"i386\","
					     "\"cmd\":2147763456,"
					     "\"name\":\"FIOC_GET_SIZE32\","));
	else
		g_assert_nonnull(strstr(got, "\"op\":\"ioctl\",\"abi\":\"x86_64\","
					     "\"cmd\":2148025600,"
					     "\"name\":\"FIOC_GET_SIZE\","));
	/* The size, 3, as the client's memory holds it. */
	g_assert_nonnull(strstr(got, compat ? "\"data\":\"03000000\"}],"
					      "\"round_trips\":1,\"result\":0,"
					    : "\"data\":\"0300000000000000\"}],"
					      "\"round_trips\":1,\"result\":0,"));
	/* One line for the two requests of the call. */
	first = strstr(got, "_GET_SIZE");
	g_assert_nonnull(first);
	/* first ? ...: gcc with sanitizers warns of a read at NULL + 1. */
	g_assert_null(strstr(first ? first + 1 : "", "_GET_SIZE"));
	g_assert_nonnull(strstr(got, "\"op\":\"read\","));
	g_assert_null(strstr(got, "\"round_trips\":2"));
	cusemu_trace_detach_all();
	close(sv[1]);
	teardown(&f);
}

/* ---- steady state: what 1000 ioctls of each class allocate ---- */

static unsigned int allocations_per_1000(struct fixture *f, const char *what,
					 long (*op)(struct fixture *f))
{
	unsigned int n;

	/* Warm up: the first calls make per-thread and per-file buffers. */
	for (int i = 0; i < 10; i++)
		g_assert_cmpint(op(f), >=, 0);
	g_atomic_int_set(&allocations, 0);
	g_atomic_int_set(&counting, 1);
	for (int i = 0; i < 1000; i++)
		op(f);
	g_atomic_int_set(&counting, 0);
	n = (unsigned int)g_atomic_int_get(&allocations);
	g_test_message("allocations per 1000 ioctls: %u (%s, %s)", n, what,
		       f->client.compat ? "i386" : "x86_64");
	return n;
}

static long op_get_size(struct fixture *f)
{
	unsigned int requests;

	return fioc_get_size(f, &requests) == 16 ? 0 : -1;
}

static long op_read(struct fixture *f)
{
	unsigned int requests;

	return fioc_rw(f, PID, FIOC_READ, at(f, BUF_OFF), 8, &requests);
}

static long op_unknown(struct fixture *f)
{
	unsigned int requests;

	return do_ioctl(f, PID, _IOR('Z', 1, int), at(f, 0), &requests) ==
			       -ENOTTY
		       ? 0
		       : -1;
}

static long op_report(struct fixture *f)
{
	unsigned int requests;

	return do_ioctl(f, PID, SLOW_REPORT, at(f, 0), &requests);
}

static void test_allocations(gconstpointer data)
{
	bool compat = GPOINTER_TO_INT(data);
	struct fixture f;
	unsigned int requests;

	if (!COUNT_ALLOCATIONS) {
		g_test_skip("allocations are counted in the build without "
			    "AddressSanitizer");
		return;
	}
	setup(&f, "fioc", compat);
	g_assert_cmpint(fioc_set_size(&f, 16, &requests), ==, 0);
	g_assert_cmpuint(allocations_per_1000(&f, "FIOC_GET_SIZE, one retry",
					      op_get_size), ==, 0);
	g_assert_cmpuint(allocations_per_1000(&f, "FIOC_READ, two retries",
					      op_read), ==, 0);
	g_assert_cmpuint(allocations_per_1000(&f, "unknown command, ENOTTY",
					      op_unknown), ==, 0);
	teardown(&f);

	/* The big lock, and for i386 the global ioctl32 table. */
	setup(&f, "fioc:kernel=2.6.10", compat);
	g_assert_cmpint(fioc_set_size(&f, 16, &requests), ==, 0);
	g_assert_cmpuint(allocations_per_1000(&f, "FIOC_GET_SIZE, 2.6.10",
					      op_get_size), ==, 0);
	teardown(&f);

	setup(&f, "slow:hold_us=0", compat);
	g_assert_cmpuint(allocations_per_1000(&f, "SLOW_REPORT, restricted",
					      op_report), ==, 0);
	teardown(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_data_func("/transport/fioc/x86_64", GINT_TO_POINTER(0),
			     test_fioc);
	g_test_add_data_func("/transport/fioc/i386", GINT_TO_POINTER(1),
			     test_fioc);
	g_test_add_data_func("/transport/restricted/x86_64",
			     GINT_TO_POINTER(0), test_restricted);
	g_test_add_data_func("/transport/restricted/i386", GINT_TO_POINTER(1),
			     test_restricted);
	g_test_add_func("/transport/abandoned-retries", test_abandoned_retries);
	g_test_add_data_func("/transport/near-4gib/x86_64", GINT_TO_POINTER(0),
			     test_near_4gib);
	g_test_add_data_func("/transport/near-4gib/i386", GINT_TO_POINTER(1),
			     test_near_4gib);
	g_test_add_func("/transport/greedy/ioctl", test_greedy_ioctl);
	g_test_add_data_func("/transport/greedy/wrap/x86_64",
			     GINT_TO_POINTER(0), test_greedy_wrap);
	g_test_add_data_func("/transport/greedy/wrap/i386", GINT_TO_POINTER(1),
			     test_greedy_wrap);
	g_test_add_func("/transport/greedy/read-write", test_greedy_read_write);
	g_test_add_func("/transport/operation-stats", test_operation_stats);
	g_test_add_data_func("/transport/release-after-reply/ioctl",
			     GINT_TO_POINTER(0), test_release_after_reply);
	g_test_add_data_func("/transport/release-after-reply/read",
			     GINT_TO_POINTER(1), test_release_after_reply);
	g_test_add_data_func("/transport/result-range/x86_64",
			     GINT_TO_POINTER(0), test_result_range);
	g_test_add_data_func("/transport/result-range/i386",
			     GINT_TO_POINTER(1), test_result_range);
	g_test_add_func("/transport/poll", test_poll);
	g_test_add_data_func("/transport/trace/x86_64", GINT_TO_POINTER(0),
			     test_trace_lines);
	g_test_add_data_func("/transport/trace/i386", GINT_TO_POINTER(1),
			     test_trace_lines);
	g_test_add_data_func("/transport/allocations/x86_64",
			     GINT_TO_POINTER(0), test_allocations);
	g_test_add_data_func("/transport/allocations/i386", GINT_TO_POINTER(1),
			     test_allocations);
	return g_test_run();
}
