/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the dispatcher and user-memory logic, run against a fake
 * kernel (no CUSE): the fioc model in both ABIs, round trips, limits and
 * bad pointers.
 */
#include <limits.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "cusemu/abi/fioc.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"

#define NATIVE_BASE UINT64_C(0x7f0000000000)
#define COMPAT_BASE UINT64_C(0x08000000)
#define CLIENT_SIZE (512u * 1024u)

struct fixture {
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client client;
};

static void setup(struct fixture *f, const struct cusemu_device_model *m,
		  const char *arg, bool compat)
{
	g_autoptr(GError) error = NULL;

	f->dev = fake_device_try(m, arg, &error);
	g_assert_no_error(error);
	f->file = (struct cusemu_file){ .dev = f->dev };
	f->client.compat = compat;
	f->client.base = compat ? COMPAT_BASE : NATIVE_BASE;
	f->client.size = CLIENT_SIZE;
	f->client.mem = g_malloc0(CLIENT_SIZE);
}

static void setup_native(struct fixture *f, gconstpointer data)
{
	setup(f, NULL, "fioc:max_size=256K", false);
}

static void setup_compat(struct fixture *f, gconstpointer data)
{
	setup(f, NULL, "fioc:max_size=256K", true);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	fake_device_free(f->dev);
	g_free(f->client.mem);
}

static long do_ioctl(struct fixture *f, unsigned int cmd, cusemu_uptr_t arg,
		     unsigned int *round_trips)
{
	unsigned int rt;

	return fake_ioctl(&f->client, f->dev, &f->file, cmd, arg,
			  round_trips ? round_trips : &rt);
}

/* Client memory layout used by the fioc tests. */
#define AT_ARG 0x100
#define AT_BUF 0x1000

static cusemu_uptr_t at(struct fixture *f, size_t off)
{
	return f->client.base + off;
}

/* The size commands of the caller's ABI. */
static void set_size(struct fixture *f, uint64_t size)
{
	unsigned int rt;
	long ret;

	if (f->client.compat) {
		uint32_t v = (uint32_t)size;

		memcpy(f->client.mem + AT_ARG, &v, sizeof(v));
		ret = do_ioctl(f, FIOC_SET_SIZE32, at(f, AT_ARG), &rt);
	} else {
		memcpy(f->client.mem + AT_ARG, &size, sizeof(size));
		ret = do_ioctl(f, FIOC_SET_SIZE, at(f, AT_ARG), &rt);
	}
	g_assert_cmpint(ret, ==, 0);
	g_assert_cmpuint(rt, ==, 1);
}

static uint64_t get_size(struct fixture *f)
{
	unsigned int rt;
	uint64_t v = 0;

	memset(f->client.mem + AT_ARG, 0xAA, 8);
	if (f->client.compat) {
		g_assert_cmpint(do_ioctl(f, FIOC_GET_SIZE32, at(f, AT_ARG), &rt),
				==, 0);
		memcpy(&v, f->client.mem + AT_ARG, 4);
		/* An i386 caller's size_t is 4 bytes: nothing past it moves. */
		g_assert_cmphex(f->client.mem[AT_ARG + 4], ==, 0xAA);
	} else {
		g_assert_cmpint(do_ioctl(f, FIOC_GET_SIZE, at(f, AT_ARG), &rt),
				==, 0);
		memcpy(&v, f->client.mem + AT_ARG, 8);
	}
	g_assert_cmpuint(rt, ==, 1);
	return v;
}

/* FIOC_READ/FIOC_WRITE with the caller's struct fioc_rw_arg layout. */
static long rw(struct fixture *f, unsigned int cmd, int64_t offset,
	       size_t buf_off, uint32_t size, uint64_t *prev, uint64_t *next,
	       unsigned int *rt)
{
	uint8_t *a = f->client.mem + AT_ARG;
	long ret;

	if (f->client.compat) {
		struct fioc_rw_arg32 r = {
			.offset = offset,
			.buf = (uint32_t)at(f, buf_off),
			.size = size,
		};

		memcpy(a, &r, sizeof(r));
		ret = do_ioctl(f, cmd, at(f, AT_ARG), rt);
		memcpy(&r, a, sizeof(r));
		*prev = r.prev_size;
		*next = r.new_size;
	} else {
		struct fioc_rw_arg r = {
			.offset = offset,
			.buf = (void *)(uintptr_t)at(f, buf_off),
			.size = size,
		};

		memcpy(a, &r, sizeof(r));
		ret = do_ioctl(f, cmd, at(f, AT_ARG), rt);
		memcpy(&r, a, sizeof(r));
		*prev = r.prev_size;
		*next = r.new_size;
	}
	return ret;
}

static void test_fioc_size(struct fixture *f, gconstpointer data)
{
	g_assert_cmpuint(get_size(f), ==, 0);
	set_size(f, 4096);
	g_assert_cmpuint(get_size(f), ==, 4096);
	set_size(f, 0);
	g_assert_cmpuint(get_size(f), ==, 0);
}

static void test_fioc_set_size_too_big(struct fixture *f, gconstpointer data)
{
	uint64_t big = 256 * 1024 + 1;
	unsigned int cmd = f->client.compat ? FIOC_SET_SIZE32 : FIOC_SET_SIZE;

	memcpy(f->client.mem + AT_ARG, &big, sizeof(big));
	g_assert_cmpint(do_ioctl(f, cmd, at(f, AT_ARG), NULL), ==, -EINVAL);
	g_assert_cmpuint(get_size(f), ==, 0);
}

static void test_fioc_write_read(struct fixture *f, gconstpointer data)
{
	uint64_t prev, next;
	unsigned int rt;

	memcpy(f->client.mem + AT_BUF, "hello world", 11);
	g_assert_cmpint(rw(f, FIOC_WRITE, 0, AT_BUF, 11, &prev, &next, &rt),
			==, 11);
	g_assert_cmpuint(prev, ==, 0);
	g_assert_cmpuint(next, ==, 11);
	/* The argument, then the buffer and the sizes: two retries. */
	g_assert_cmpuint(rt, ==, 2);

	memset(f->client.mem + AT_BUF, 0xAA, 64);
	g_assert_cmpint(rw(f, FIOC_READ, 0, AT_BUF, 64, &prev, &next, &rt),
			==, 11);
	g_assert_cmpmem(f->client.mem + AT_BUF, 11, "hello world", 11);
	/* Only the bytes read are written to the client. */
	g_assert_cmphex(f->client.mem[AT_BUF + 11], ==, 0xAA);
	g_assert_cmphex(f->client.mem[AT_BUF + 63], ==, 0xAA);
	g_assert_cmpuint(prev, ==, 11);
	g_assert_cmpuint(next, ==, 11);
	g_assert_cmpuint(rt, ==, 2);

	g_assert_cmpint(rw(f, FIOC_READ, 6, AT_BUF, 5, &prev, &next, &rt),
			==, 5);
	g_assert_cmpmem(f->client.mem + AT_BUF, 5, "world", 5);
	g_assert_cmpint(rw(f, FIOC_READ, 100, AT_BUF, 5, &prev, &next, &rt),
			==, 0);
}

static void test_fioc_write_extends(struct fixture *f, gconstpointer data)
{
	static const uint8_t zeros[9];
	uint64_t prev, next;
	unsigned int rt;

	memcpy(f->client.mem + AT_BUF, "hello world", 11);
	g_assert_cmpint(rw(f, FIOC_WRITE, 0, AT_BUF, 11, &prev, &next, &rt),
			==, 11);
	memcpy(f->client.mem + AT_BUF, "xyz", 3);
	g_assert_cmpint(rw(f, FIOC_WRITE, 20, AT_BUF, 3, &prev, &next, &rt),
			==, 3);
	g_assert_cmpuint(prev, ==, 11);
	g_assert_cmpuint(next, ==, 23);
	g_assert_cmpint(rw(f, FIOC_READ, 0, AT_BUF, 23, &prev, &next, &rt),
			==, 23);
	g_assert_cmpmem(f->client.mem + AT_BUF + 11, 9, zeros, 9);
	g_assert_cmpmem(f->client.mem + AT_BUF + 20, 3, "xyz", 3);
}

static void test_fioc_limits(struct fixture *f, gconstpointer data)
{
	uint64_t prev, next;
	unsigned int rt;

	/* Past max_size: refused before any data is fetched. */
	g_assert_cmpint(rw(f, FIOC_WRITE, 256 * 1024 - 2, AT_BUF, 3, &prev,
			   &next, &rt),
			==, -EINVAL);
	g_assert_cmpuint(get_size(f), ==, 0);
	g_assert_cmpint(rw(f, FIOC_WRITE, -1, AT_BUF, 3, &prev, &next, &rt),
			==, -EINVAL);
	/* A read larger than one CUSE transfer is short, not an error. */
	set_size(f, 200000);
	g_assert_cmpint(rw(f, FIOC_READ, 0, AT_BUF, 200000, &prev, &next, &rt),
			<=, CUSEMU_USER_MAX_BYTES);
	g_assert_cmpint(rw(f, FIOC_READ, 0, AT_BUF, 200000, &prev, &next, &rt),
			>, 100000);
}

static void test_fioc_bad_pointers(struct fixture *f, gconstpointer data)
{
	uint64_t prev, next;
	unsigned int rt;
	unsigned int get = f->client.compat ? FIOC_GET_SIZE32 : FIOC_GET_SIZE;

	g_assert_cmpint(do_ioctl(f, get, 8, NULL), ==, -EFAULT);
	g_assert_cmpint(do_ioctl(f, FIOC_READ, 8, NULL), ==, -EFAULT);
	set_size(f, 16);
	/* A good argument holding a bad buffer pointer. */
	g_assert_cmpint(rw(f, FIOC_READ, 0, CLIENT_SIZE + 4096, 16, &prev,
			   &next, &rt),
			==, -EFAULT);
	g_assert_cmpint(rw(f, FIOC_WRITE, 0, CLIENT_SIZE + 4096, 16, &prev,
			   &next, &rt),
			==, -EFAULT);
	g_assert_cmpuint(get_size(f), ==, 16);
}

static void test_unknown_command(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(do_ioctl(f, _IO('E', 99), 0, NULL), ==, -ENOTTY);
	g_assert_cmpint(do_ioctl(f, _IOR('Z', 1, int), at(f, AT_ARG), NULL),
			==, -ENOTTY);
}

static void test_native_number_from_compat(struct fixture *f,
					   gconstpointer data)
{
	/* An i386 caller cannot send the 8-byte GET_SIZE: not in its table. */
	g_assert_cmpint(do_ioctl(f, FIOC_GET_SIZE, at(f, AT_ARG), NULL), ==,
			-ENOTTY);
}

/*
 * A test-only model whose one command asks for N ranges in one level
 * (like I2C_RDWR's messages), then writes each back incremented.
 */
struct gather_arg {
	uint32_t count;
	uint32_t len;
	uint64_t ptrs[300];
};

/* Names every pointer of the level at once. */
static int gather_fetch(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	struct gather_arg a;

	if (cusemu_copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.count > G_N_ELEMENTS(a.ptrs))
		return -EINVAL;
	for (uint32_t i = 0; i < a.count; i++) {
		cusemu_user_want_read(a.ptrs[i], a.len);
		cusemu_user_want_write(a.ptrs[i], a.len);
	}
	return 0;
}

static long gather_handler(struct cusemu_device *dev, struct cusemu_file *file,
			   unsigned int cmd, unsigned long arg)
{
	struct gather_arg a;
	uint8_t byte;

	if (cusemu_copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	for (uint32_t i = 0; i < a.count; i++) {
		if (cusemu_copy_from_user(&byte, a.ptrs[i], 1))
			return -EFAULT;
		byte++;
		if (cusemu_copy_to_user(a.ptrs[i], &byte, 1))
			return -EFAULT;
	}
	return a.count;
}

#define GATHER_CMD _IO('T', 1)

static const struct cusemu_ioctl gather_table[] = {
	CUSEMU_IOCTL_USER(GATHER_CMD, gather_fetch, gather_handler),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model gather_model = {
	.name = "gather",
	.node_prefix = "gather",
	.native_table = gather_table,
};

static void setup_gather(struct fixture *f, gconstpointer data)
{
	setup(f, &gather_model, "gather", false);
}

static long run_gather(struct fixture *f, uint32_t count, uint32_t len,
		       unsigned int *rt)
{
	struct gather_arg *a = (struct gather_arg *)(f->client.mem + AT_ARG);

	a->count = count;
	a->len = len;
	for (uint32_t i = 0; i < count; i++) {
		a->ptrs[i] = at(f, 0x4000 + i * 16);
		f->client.mem[0x4000 + i * 16] = (uint8_t)i;
	}
	return do_ioctl(f, GATHER_CMD, at(f, AT_ARG), rt);
}

static void test_round_trips_per_level(struct fixture *f, gconstpointer data)
{
	unsigned int rt1, rt42;

	g_assert_cmpint(run_gather(f, 1, 4, &rt1), ==, 1);
	g_assert_cmpint(run_gather(f, 42, 4, &rt42), ==, 42);
	/* The argument, then every message of the level at once. */
	g_assert_cmpuint(rt1, ==, 2);
	g_assert_cmpuint(rt42, ==, rt1);
	for (uint32_t i = 0; i < 42; i++)
		g_assert_cmpuint(f->client.mem[0x4000 + i * 16], ==, i + 1);
}

static void test_range_limits(struct fixture *f, gconstpointer data)
{
	unsigned int rt;

	/* 2 ranges per message: 128 messages and the argument overflow. */
	g_assert_cmpint(run_gather(f, 128, 4, &rt), ==, -ENOMEM);
	/* 127 * 2 + 1 = 255 ranges fit. */
	g_assert_cmpint(run_gather(f, 127, 4, &rt), ==, 127);
	/* Bytes: 40 ranges of 4 KiB would be 160 KiB in one direction. */
	g_assert_cmpint(run_gather(f, 40, 4096, &rt), ==, -ENOMEM);
}

static void test_compat_high_pointer(struct fixture *f, gconstpointer data)
{
	/* An address a 32-bit caller cannot have: EFAULT, no retry. */
	unsigned int rt;

	g_assert_cmpint(do_ioctl(f, FIOC_GET_SIZE32,
				 UINT64_C(0x100000000) + 16, &rt),
			==, -EFAULT);
	g_assert_cmpuint(rt, ==, 0);
}

/*
 * The handler contract: a command that chases pointers three levels deep
 * (arg -> level 1 -> level 2 -> a counter in the caller) and counts its
 * runs in the device. Each level costs a retry; the device's counter and
 * the caller's must move by exactly one per ioctl, in both ABIs.
 */
#define CHAIN_CMD _IO('T', 2)
#define CHAIN_BROKEN _IO('T', 3)	/* its handler reads past its fetch */
#define CHAIN_WRITES _IO('T', 4)	/* its fetch step writes */

static unsigned int chain_runs;

/* A pointer of the caller's ABI at addr: 0 when it is not here yet. */
static int chain_ptr(cusemu_uptr_t addr, cusemu_uptr_t *out)
{
	uint64_t p64;
	uint32_t p32;

	if (cusemu_in_compat_syscall()) {
		if (cusemu_get_user(p32, addr))
			return -EFAULT;
		*out = cusemu_compat_ptr(p32);
		return 0;
	}
	if (cusemu_get_user(p64, addr))
		return -EFAULT;
	*out = p64;
	return 0;
}

/* Follows the chain as far as it has arrived; names the next link. */
static int chain_fetch(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	cusemu_uptr_t l1, l2;
	int err;

	if (chain_ptr(arg, &l1) || chain_ptr(l1, &l2))
		return -EFAULT;
	err = cusemu_user_want_read(l2, sizeof(uint32_t));
	if (!err || err == -EAGAIN)
		err = cusemu_user_want_write(l2, sizeof(uint32_t));
	return err == -EAGAIN ? 0 : err;
}

static long chain_run(struct cusemu_device *dev, struct cusemu_file *file,
		      unsigned int cmd, unsigned long arg)
{
	cusemu_uptr_t l1, l2;
	uint32_t count;

	g_assert_false(cusemu_user_pending());
	if (chain_ptr(arg, &l1) || chain_ptr(l1, &l2) ||
	    cusemu_get_user(count, l2))
		return -EFAULT;
	chain_runs++;
	if (cmd == CHAIN_BROKEN && cusemu_get_user(count, l2 + 64))
		return -EFAULT;
	return cusemu_put_user(count + 1, l2);
}

static int chain_fetch_writes(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	uint32_t zero = 0;

	if (cusemu_copy_to_user(arg, &zero, sizeof(zero)))
		return -EFAULT;
	return 0;
}

static const struct cusemu_ioctl chain_native[] = {
	CUSEMU_IOCTL_USER(CHAIN_CMD, chain_fetch, chain_run),
	CUSEMU_IOCTL_USER(CHAIN_BROKEN, chain_fetch, chain_run),
	CUSEMU_IOCTL_USER(CHAIN_WRITES, chain_fetch_writes, chain_run),
	CUSEMU_IOCTL_END
};

/* The same steps read the caller's pointers at their width. */
static const struct cusemu_ioctl chain_compat[] = {
	CUSEMU_IOCTL_USER(CHAIN_CMD, chain_fetch, chain_run),
	CUSEMU_IOCTL_USER(CHAIN_BROKEN, chain_fetch, chain_run),
	CUSEMU_IOCTL_USER(CHAIN_WRITES, chain_fetch_writes, chain_run),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model chain_model = {
	.name = "chain",
	.node_prefix = "chain",
	.native_table = chain_native,
	.compat_table = chain_compat,
};

static void setup_chain(struct fixture *f, gconstpointer data)
{
	setup(f, &chain_model, "chain", GPOINTER_TO_INT(data));
}

/* Lays the chain out: arg at 0x100, level 1 at 0x200, the counter at 0x300. */
static void put_ptr(struct fixture *f, size_t off, cusemu_uptr_t to)
{
	if (f->client.compat) {
		uint32_t p = (uint32_t)to;

		memcpy(f->client.mem + off, &p, sizeof(p));
	} else {
		memcpy(f->client.mem + off, &to, sizeof(to));
	}
}

static uint32_t chain_counter(struct fixture *f)
{
	uint32_t v;

	memcpy(&v, f->client.mem + 0x300, sizeof(v));
	return v;
}

static void test_chain_once(struct fixture *f, gconstpointer data)
{
	unsigned int rt;

	put_ptr(f, 0x100, at(f, 0x200));
	put_ptr(f, 0x200, at(f, 0x300));
	chain_runs = 0;
	for (unsigned int i = 1; i <= 5; i++) {
		g_assert_cmpint(do_ioctl(f, CHAIN_CMD, at(f, 0x100), &rt), ==, 0);
		/* arg, level 1, the counter: one retry per level. */
		g_assert_cmpuint(rt, ==, 3);
		g_assert_cmpuint(chain_runs, ==, i);
		g_assert_cmpuint(chain_counter(f), ==, i);
	}
	/* A broken link fails in the fetch step: nothing runs. */
	put_ptr(f, 0x200, 0);
	g_assert_cmpint(do_ioctl(f, CHAIN_CMD, at(f, 0x100), &rt), ==, -EFAULT);
	g_assert_cmpuint(chain_runs, ==, 5);
}

static void test_chain_contract(struct fixture *f, gconstpointer data)
{
	unsigned int rt;

	put_ptr(f, 0x100, at(f, 0x200));
	put_ptr(f, 0x200, at(f, 0x300));
	chain_runs = 0;
	/* The handler reads what its fetch step never named: EIO, logged. */
	g_test_expect_message("cusemu-call", G_LOG_LEVEL_WARNING,
			      "*CHAIN_BROKEN read memory its fetch step did "
			      "not name*");
	g_assert_cmpint(do_ioctl(f, CHAIN_BROKEN, at(f, 0x100), &rt), ==, -EIO);
	g_test_assert_expected_messages();
	g_assert_cmpuint(chain_runs, ==, 1);
	g_assert_cmpuint(chain_counter(f), ==, 0);	/* nothing went back */
	/* A fetch step that writes is refused before anything runs. */
	g_test_expect_message("cusemu-call", G_LOG_LEVEL_WARNING,
			      "*fetch step of CHAIN_WRITES wrote to the "
			      "caller*");
	g_assert_cmpint(do_ioctl(f, CHAIN_WRITES, at(f, 0x100), &rt), ==, -EIO);
	g_test_assert_expected_messages();
	g_assert_cmpuint(chain_runs, ==, 1);
}

/* ---- results no reply can carry as they are ---- */

/* The command's number picks what the handler returns. */
#define RESULT_IOC(n) _IO('R', (n))

static const long results[] = {
	-512, -513, -514, -516,	/* ERESTARTSYS and its kin */
	-511, -515 /* ENOIOCTLCMD: ENOTTY in modern */, -4095, -4096, -100000,
	LONG_MIN,
	INT_MAX, (long)INT_MAX + 1, 0x100000000L, LONG_MAX,
};

static long result_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	return results[_IOC_NR(cmd)];
}

#define RESULT_ROW(n) CUSEMU_IOCTL_NONE(RESULT_IOC(n), result_ioc)
#define RESULT_COMPAT(n) CUSEMU_COMPAT_SAME(RESULT_IOC(n))

static const struct cusemu_ioctl result_native[] = {
	RESULT_ROW(0), RESULT_ROW(1), RESULT_ROW(2), RESULT_ROW(3),
	RESULT_ROW(4), RESULT_ROW(5), RESULT_ROW(6), RESULT_ROW(7),
	RESULT_ROW(8), RESULT_ROW(9), RESULT_ROW(10), RESULT_ROW(11),
	RESULT_ROW(12), RESULT_ROW(13),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl result_compat[] = {
	RESULT_COMPAT(0), RESULT_COMPAT(1), RESULT_COMPAT(2),
	RESULT_COMPAT(3), RESULT_COMPAT(4), RESULT_COMPAT(5),
	RESULT_COMPAT(6), RESULT_COMPAT(7), RESULT_COMPAT(8),
	RESULT_COMPAT(9), RESULT_COMPAT(10), RESULT_COMPAT(11),
	RESULT_COMPAT(12), RESULT_COMPAT(13),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model result_model = {
	.name = "result",
	.node_prefix = "result",
	.native_table = result_native,
	.compat_table = result_compat,
};

static void setup_result(struct fixture *f, gconstpointer data)
{
	setup(f, &result_model, "result", GPOINTER_TO_INT(data));
}

/*
 * A result the kernel would refuse in a reply (an errno above 511: the
 * client would never be answered) or cut to an int (0x100000000 would
 * read as 0) reaches the caller as the kernel has it for a driver:
 * ERESTARTSYS and its kin as EINTR, the rest as EIO with a log line that
 * names the command.
 */
static void test_result_range(struct fixture *f, gconstpointer data)
{
	static const long want[G_N_ELEMENTS(results)] = {
		-EINTR, -EINTR, -EINTR, -EINTR,
		-511, -ENOTTY, -EIO, -EIO, -EIO, -EIO,
		INT_MAX, -EIO, -EIO, -EIO,
	};
	unsigned int rt;

	G_STATIC_ASSERT(G_N_ELEMENTS(result_native) ==
			G_N_ELEMENTS(results) + 1);
	for (unsigned int i = 0; i < G_N_ELEMENTS(results); i++) {
		if (want[i] == -EIO)
			g_test_expect_message(
				"cusemu-call", G_LOG_LEVEL_WARNING,
				"result0: RESULT_IOC(*) returned *; the caller "
				"gets EIO");
		g_assert_cmpint(do_ioctl(f, RESULT_IOC(i), 0, &rt), ==,
				want[i]);
		g_test_assert_expected_messages();
	}
}

/*
 * The log's hint for a 32-bit caller's command that no row serves: only
 * for a number that can be the i386 one of a native row's command, and
 * said as what it would mean, since the daemon has no header to know.
 */
struct hint_info { uint32_t version; uint64_t serial; };	/* 16, i386 12 */
#define HINT_INFO _IOR('H', 1, struct hint_info)
#define HINT_TRANS _IOR('H', 2, struct hint_info)
#define HINT_TRANS32 _IOC(_IOC_READ, 'H', 2, 12)

static long hint_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	return 0;
}

static const struct cusemu_ioctl hint_native[] = {
	CUSEMU_IOCTL_IOC(HINT_INFO, hint_ioc),
	CUSEMU_IOCTL_IOC(HINT_TRANS, hint_ioc),
	CUSEMU_IOCTL_END
};

static const struct cusemu_ioctl hint_compat[] = {
	CUSEMU_IOCTL_IOC(HINT_TRANS32, hint_ioc),
	CUSEMU_IOCTL_END
};

static const struct cusemu_device_model hint_model = {
	.name = "hint",
	.node_prefix = "hint",
	.native_table = hint_native,
	.compat_table = hint_compat,
};

static void setup_hint(struct fixture *f, gconstpointer data)
{
	setup(f, &hint_model, "hint", true);
}

static void collect_message(const char *domain, GLogLevelFlags level,
			    const char *message, gpointer data)
{
	g_ptr_array_add(data, g_strdup(message));
}

/* The dispatcher's log lines of one 32-bit call of cmd, joined. */
static char *hint_of(struct fixture *f, unsigned int cmd)
{
	g_autoptr(GPtrArray) said = g_ptr_array_new_with_free_func(g_free);
	guint id = g_log_set_handler("cusemu-dispatch", G_LOG_LEVEL_MASK,
				     collect_message, said);
	unsigned int rt;

	g_assert_cmpint(do_ioctl(f, cmd, at(f, AT_ARG), &rt), ==, -ENOTTY);
	g_log_remove_handler("cusemu-dispatch", id);
	g_ptr_array_add(said, NULL);
	return g_strjoinv("\n", (char **)said->pdata);
}

static void test_compat_hint(struct fixture *f, gconstpointer data)
{
	g_autofree char *i386 = hint_of(f, _IOC(_IOC_READ, 'H', 1, 12));
	g_autofree char *larger = hint_of(f, _IOC(_IOC_READ, 'H', 1, 24));
	g_autofree char *empty = hint_of(f, _IOC(_IOC_READ, 'H', 1, 0));
	g_autofree char *other = hint_of(f, _IOC(_IOC_READ, 'H', 2, 13));

	/* 12 bytes can be HINT_INFO's i386 layout: said, as a condition. */
	g_assert_nonnull(strstr(i386, "a 32-bit caller's 800c4801 has no "
				      "compat row, but native HINT_INFO "
				      "(80104801) has its type, number and "
				      "direction with 16 bytes against the "
				      "caller's 12: if that is HINT_INFO's "
				      "i386 number"));
	g_assert_null(strstr(i386, "the payload's layout differs between "
				   "the ABIs; run"));
	/* i386 lays out no payload larger than x86_64 does, nor of none. */
	g_assert_cmpstr(larger, ==, "");
	g_assert_cmpstr(empty, ==, "");
	/* The model has HINT_TRANS's i386 number: 13 bytes is made up. */
	g_assert_cmpstr(other, ==, "");
}

#define ADD(name, setup_fn, fn) \
	g_test_add(name, struct fixture, NULL, setup_fn, fn, teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	/* Every fioc test in both ABIs, as a pair. */
	static const struct {
		const char *name;
		void (*fn)(struct fixture *, gconstpointer);
	} both[] = {
		{ "size", test_fioc_size },
		{ "set-size-too-big", test_fioc_set_size_too_big },
		{ "write-read", test_fioc_write_read },
		{ "write-extends", test_fioc_write_extends },
		{ "limits", test_fioc_limits },
		{ "bad-pointers", test_fioc_bad_pointers },
		{ "unknown-command", test_unknown_command },
	};
	for (unsigned int i = 0; i < G_N_ELEMENTS(both); i++) {
		g_autofree char *n64 =
			g_strdup_printf("/fioc/native/%s", both[i].name);
		g_autofree char *n32 =
			g_strdup_printf("/fioc/compat/%s", both[i].name);

		ADD(n64, setup_native, both[i].fn);
		ADD(n32, setup_compat, both[i].fn);
	}
	ADD("/fioc/compat/native-number", setup_compat,
	    test_native_number_from_compat);
	ADD("/fioc/compat/high-pointer", setup_compat, test_compat_high_pointer);
	ADD("/uaccess/round-trips-per-level", setup_gather,
	    test_round_trips_per_level);
	ADD("/uaccess/range-limits", setup_gather, test_range_limits);
	for (int compat = 0; compat <= 1; compat++) {
		g_autofree char *once = g_strdup_printf(
			"/contract/%s/three-levels-once",
			compat ? "compat" : "native");
		g_autofree char *bad = g_strdup_printf(
			"/contract/%s/violations", compat ? "compat" : "native");

		g_test_add(once, struct fixture, GINT_TO_POINTER(compat),
			   setup_chain, test_chain_once, teardown);
		g_test_add(bad, struct fixture, GINT_TO_POINTER(compat),
			   setup_chain, test_chain_contract, teardown);
	}
	ADD("/dispatch/compat/size-hint", setup_hint, test_compat_hint);
	g_test_add("/result/native/out-of-range", struct fixture,
		   GINT_TO_POINTER(0), setup_result, test_result_range,
		   teardown);
	g_test_add("/result/compat/out-of-range", struct fixture,
		   GINT_TO_POINTER(1), setup_result, test_result_range,
		   teardown);
	return g_test_run();
}
