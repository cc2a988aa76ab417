/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the replay model against the fake kernel (no CUSE), with
 * recordings written here by hand: the order of answers and repeats,
 * matching by input bytes across ABIs, pointer slots (an I2C_RDWR-like
 * call), unmatched calls with and without strict=, reads, writes and
 * polls, and recordings refused with their line.
 */
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/rtc.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "device.h"
#include "fake-kernel.h"
#include "ratelimit.h"
#include "request.h"

#define CLIENT_SIZE 8192

/* An _IOW command with 4 bytes in and none out, _IOWR with 4 each way. */
#define TEST_SET _IOW('r', 1, __u32)
#define TEST_XCHG _IOWR('r', 2, __u32)
/* A device that must be started before it is read. */
#define TEST_START _IO('r', 3)
#define TEST_READ _IOR('r', 4, __u32)

struct fixture {
	char *dir;
	char *path;
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client native, compat;
};

static void fixture_init(struct fixture *f)
{
	f->dir = g_dir_make_tmp("cusemu-replay-XXXXXX", NULL);
	g_assert_nonnull(f->dir);
	f->path = g_build_filename(f->dir, "rec.json", NULL);
	fake_client_init(&f->native, false, CLIENT_SIZE);
	fake_client_init(&f->compat, true, CLIENT_SIZE);
}

/* Writes the recording (lines joined by \n) and starts a device on it. */
static void start(struct fixture *f, const char *const *lines,
		  const char *extra)
{
	g_autofree char *text = g_strjoinv("\n", (char **)lines);
	g_autofree char *arg = g_strdup_printf("replay:file=%s%s", f->path,
					       extra ? extra : "");
	g_autoptr(GError) error = NULL;

	g_assert_true(g_file_set_contents(f->path, text, -1, NULL));
	f->dev = fake_device_try(NULL, arg, &error);
	g_assert_no_error(error);
	f->file = (struct cusemu_file){ .dev = f->dev };
}

static void fixture_clear(struct fixture *f)
{
	if (f->dev)
		fake_device_free(f->dev);
	g_unlink(f->path);
	g_rmdir(f->dir);
	g_free(f->path);
	g_free(f->dir);
	g_free(f->native.mem);
	g_free(f->compat.mem);
}

static long call(struct fixture *f, bool compat, unsigned int cmd,
		 cusemu_uptr_t arg, unsigned int *round_trips)
{
	unsigned int rt;

	return fake_ioctl(compat ? &f->compat : &f->native, f->dev, &f->file,
			  cmd, arg, round_trips ? round_trips : &rt);
}

static cusemu_uptr_t at(struct fixture *f, bool compat, size_t off)
{
	return (compat ? f->compat.base : f->native.base) + off;
}

static uint8_t *mem(struct fixture *f, bool compat, size_t off)
{
	return (compat ? f->compat.mem : f->native.mem) + off;
}

#define HEADER "{\"trace\":\"cusemu\",\"version\":1,\"nodes\":[\"clock7\"]}"

/* An ioctl line: its in and out members given as JSON text. */
static char *ioctl_line(unsigned int cmd, const char *name, const char *abi,
			const char *arg, const char *in, const char *out,
			const char *result)
{
	return g_strdup_printf("{\"time\":\"2026-12-05T16:50:30.028752Z\","
			       "\"node\":\"clock7\",\"pid\":7,\"comm\":\"t\","
			       "\"op\":\"ioctl\",\"abi\":\"%s\",\"cmd\":%u,"
			       "\"name\":\"%s\",\"arg\":\"%s\",\"size\":0,"
			       "\"in\":%s,\"out\":%s,\"round_trips\":1,%s,"
			       "\"duration_ns\":1}",
			       abi, cmd, name, arg, in, out, result);
}

static char *rd_time(const char *abi, unsigned int sec)
{
	g_autofree char *out = g_strdup_printf(
		"[{\"addr\":\"0x7ffc00001000\",\"len\":36,\"data\":"
		"\"%02x0000002c00000016000000050000000b0000007e000000060000005"
		"201000000000000\"}]",
		sec);

	return ioctl_line(RTC_RD_TIME, "RTC_RD_TIME", abi, "0x7ffc00001000",
			  "[]", out, "\"result\":0,\"error\":null");
}

/* Repeats of one query: in recorded order, then the latest again; the
 * node is named after the recording's; an i386 caller gets them too. */
static void test_order(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = rd_time("x86_64", 1);
	g_autofree char *b = rd_time("x86_64", 2);
	const char *lines[] = { HEADER, a, b, NULL };
	struct rtc_time tm;

	fixture_init(f);
	start(f, lines, NULL);
	g_assert_cmpstr(f->dev->name, ==, "clock7");
	for (unsigned int i = 0; i < 4; i++) {
		bool compat = i == 3;

		memset(mem(f, compat, 0x100), 0xAA, 64);
		g_assert_cmpint(call(f, compat, RTC_RD_TIME,
				     at(f, compat, 0x100), NULL), ==, 0);
		memcpy(&tm, mem(f, compat, 0x100), sizeof(tm));
		g_assert_cmpint(tm.tm_sec, ==, i ? 2 : 1);
		g_assert_cmpint(tm.tm_min, ==, 44);
		g_assert_cmpint(tm.tm_year, ==, 126);
	}
	fixture_clear(f);
}

/* name= wins over the recorded node. */
static void test_name(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = rd_time("x86_64", 1);
	const char *lines[] = { HEADER, a, NULL };

	fixture_init(f);
	start(f, lines, ",name=rtc-replayed");
	g_assert_cmpstr(f->dev->name, ==, "rtc-replayed");
	fixture_clear(f);
}

/* A TEST_XCHG line: 4 bytes in and out at arg, hex. */
static char *xchg_line(const char *abi, const char *arg, const char *in,
		       const char *out, const char *result)
{
	g_autofree char *ins = g_strdup_printf(
		"[{\"addr\":\"%s\",\"len\":4,\"data\":\"%s\"}]", arg, in);
	g_autofree char *outs = g_strdup_printf(
		"[{\"addr\":\"%s\",\"len\":4,\"data\":\"%s\"}]", arg, out);

	return ioctl_line(TEST_XCHG, "TEST_XCHG", abi, arg, ins, outs, result);
}

/* Matched by input bytes; a call that takes a value by arg; an error. */
static void test_input(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *one = xchg_line("x86_64", "0x7ffc00000010", "01000000",
					 "11000000", "\"result\":0,\"error\":null");
	g_autofree char *two = xchg_line("i386", "0x10000", "02000000",
					 "22000000", "\"result\":5,\"error\":null");
	g_autofree char *bad = xchg_line("x86_64", "0x7ffc00000010", "03000000",
					 "", "\"result\":null,\"error\":\"EBUSY\"");
	g_autofree char *value = ioctl_line(
		RTC_IRQP_SET, "RTC_IRQP_SET", "x86_64", "0x40", "[]", "[]",
		"\"result\":0,\"error\":null");
	g_autofree char *value2 = ioctl_line(
		RTC_IRQP_SET, "RTC_IRQP_SET", "x86_64", "0x2000", "[]", "[]",
		"\"result\":null,\"error\":\"EINVAL\"");
	const char *lines[] = { HEADER, one, two, bad, value, value2, NULL };
	uint32_t v;
	unsigned int rt;

	fixture_init(f);
	start(f, lines, NULL);
	for (int compat = 0; compat < 2; compat++) {
		v = 2;
		memcpy(mem(f, compat, 0x200), &v, 4);
		g_assert_cmpint(call(f, compat, TEST_XCHG, at(f, compat, 0x200),
				     &rt), ==, 5);
		g_assert_cmpuint(rt, ==, 1);
		memcpy(&v, mem(f, compat, 0x200), 4);
		g_assert_cmpuint(v, ==, 0x22);
		v = 1;
		memcpy(mem(f, compat, 0x200), &v, 4);
		g_assert_cmpint(call(f, compat, TEST_XCHG, at(f, compat, 0x200),
				     NULL), ==, 0);
		memcpy(&v, mem(f, compat, 0x200), 4);
		g_assert_cmpuint(v, ==, 0x11);
		v = 3;
		memcpy(mem(f, compat, 0x200), &v, 4);
		g_assert_cmpint(call(f, compat, TEST_XCHG, at(f, compat, 0x200),
				     NULL), ==, -EBUSY);
		memcpy(&v, mem(f, compat, 0x200), 4);
		g_assert_cmpuint(v, ==, 3);
	}
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 0x40, &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 0);
	g_assert_cmpint(call(f, false, RTC_IRQP_SET, 0x2000, NULL), ==,
			-EINVAL);
	fixture_clear(f);
}

/* One command number, a layout per ABI: each caller gets its own ABI's. */
static void test_own_abi(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *l64 = ioctl_line(
		I2C_FUNCS, "I2C_FUNCS", "x86_64", "0x7ffc00000010", "[]",
		"[{\"addr\":\"0x7ffc00000010\",\"len\":8,"
		"\"data\":\"0100000000000080\"}]",
		"\"result\":0,\"error\":null");
	g_autofree char *l32 = ioctl_line(
		I2C_FUNCS, "I2C_FUNCS", "i386", "0xffd00010", "[]",
		"[{\"addr\":\"0xffd00010\",\"len\":4,"
		"\"data\":\"02000000\"}]",
		"\"result\":0,\"error\":null");
	const char *lines[] = { HEADER, l64, l32, NULL };

	fixture_init(f);
	start(f, lines, NULL);
	for (int i = 0; i < 2; i++) {
		memset(mem(f, true, 0x100), 0xAA, 8);
		g_assert_cmpint(call(f, true, I2C_FUNCS, at(f, true, 0x100),
				     NULL), ==, 0);
		g_assert_cmpmem(mem(f, true, 0x100), 8,
				"\x02\x00\x00\x00\xaa\xaa\xaa\xaa", 8);
		g_assert_cmpint(call(f, false, I2C_FUNCS, at(f, false, 0x100),
				     NULL), ==, 0);
		g_assert_cmpmem(mem(f, false, 0x100), 8,
				"\x01\x00\x00\x00\x00\x00\x00\x80", 8);
	}
	fixture_clear(f);
}

/*
 * An I2C_RDWR of two messages, recorded at other addresses than the live
 * caller's: the pointers inside are found at load, followed live, and left
 * out of the comparison.
 */
static char *rdwr_line(unsigned int reg, const char *answer)
{
	g_autofree char *in = g_strdup_printf(
		"[{\"addr\":\"0x7ffd00001000\",\"len\":16,"
		"\"data\":\"00200000fd7f00000200000000000000\"},"
		"{\"addr\":\"0x7ffd00002000\",\"len\":32,\"data\":"
		"\"500000000100000000300000fd7f0000"
		"500001000400000000310000fd7f0000\"},"
		"{\"addr\":\"0x7ffd00003000\",\"len\":1,\"data\":\"%02x\"}]",
		reg);
	g_autofree char *out = g_strdup_printf(
		"[{\"addr\":\"0x7ffd00003100\",\"len\":4,\"data\":\"%s\"}]",
		answer);

	return ioctl_line(I2C_RDWR, "I2C_RDWR", "x86_64", "0x7ffd00001000", in,
			  out, "\"result\":2,\"error\":null");
}

struct live_msg {
	uint16_t addr, flags, len, pad;
	uint64_t buf;
};

/* Lays out a live I2C_RDWR at other addresses and calls it. */
static long rdwr(struct fixture *f, unsigned int reg, unsigned int *rt)
{
	/* Padding as a stack leaves it: not compared. */
	struct { uint64_t msgs; uint32_t nmsgs, pad; } data = {
		at(f, false, 0x600), 2, 0xdeadbeef
	};
	struct live_msg msgs[2] = {
		{ 0x50, 0, 1, 0x7777, at(f, false, 0x900) },
		{ 0x50, I2C_M_RD, 4, 0x1234, at(f, false, 0xa00) },
	};

	memcpy(mem(f, false, 0x300), &data, sizeof(data));
	memcpy(mem(f, false, 0x600), msgs, sizeof(msgs));
	*mem(f, false, 0x900) = (uint8_t)reg;
	memset(mem(f, false, 0xa00), 0xAA, 4);
	return call(f, false, I2C_RDWR, at(f, false, 0x300), rt);
}

static void test_pointers(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = rdwr_line(0x10, "deadbeef");
	g_autofree char *b = rdwr_line(0x20, "01020304");
	const char *lines[] = { HEADER, a, b, NULL };
	unsigned int rt;

	fixture_init(f);
	start(f, lines, NULL);
	g_assert_cmpint(rdwr(f, 0x20, &rt), ==, 2);
	/* The struct, the messages, the buffers: one level per retry. */
	g_assert_cmpuint(rt, ==, 3);
	g_assert_cmpmem(mem(f, false, 0xa00), 4, "\x01\x02\x03\x04", 4);
	g_assert_cmpint(rdwr(f, 0x10, &rt), ==, 2);
	g_assert_cmpmem(mem(f, false, 0xa00), 4, "\xde\xad\xbe\xef", 4);

	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "clock7: not in *: ioctl 0x00000707 I2C_RDWR from "
			      "x86_64, arg 0x7f0000000300; line 2 differs first "
			      "in input range 2, byte 0: 0x30 here, 0x10 "
			      "recorded");
	g_assert_cmpint(rdwr(f, 0x30, &rt), ==, -ENOTTY);
	g_test_assert_expected_messages();
	/* Untouched by the unmatched call. */
	g_assert_cmpmem(mem(f, false, 0xa00), 4, "\xaa\xaa\xaa\xaa", 4);
	fixture_clear(f);
}

/* A command the recording lacks: what the kernel model gives an unknown
 * one, and the nearest recorded command in the log. */
static void test_unmatched(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = rd_time("x86_64", 1);
	const char *lines[] = { HEADER, a, NULL };
	g_autoptr(GString) out = g_string_new(NULL);
	char *argv[] = { "status", NULL };

	fixture_init(f);
	start(f, lines, NULL);
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "clock7: not in *: ioctl 0x8024700a from i386, "
			      "arg 0x8000100; nearest recorded command: "
			      "0x80247009 RTC_RD_TIME (line 2)");
	g_assert_cmpint(call(f, true, RTC_RD_TIME + 1, at(f, true, 0x100),
			     NULL), ==, -ENOTTY);
	g_test_assert_expected_messages();
	g_assert_cmpint(f->dev->model->control(f->dev, argv, out), ==, 0);
	g_assert_nonnull(strstr(out->str, "unmatched: 1\n"));
	fixture_clear(f);

	fixture_init(f);
	start(f, lines, ",kernel=2.6.11");
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "clock7: not in *: ioctl 0x00007001*");
	g_assert_cmpint(call(f, false, RTC_AIE_ON, 0, NULL), ==, -EINVAL);
	g_test_assert_expected_messages();
	fixture_clear(f);
}

/* strict=true: the caller gets EIO and the daemon will exit with 1. */
static void test_strict(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = rd_time("x86_64", 1);
	const char *lines[] = { HEADER, a, NULL };
	unsigned int before = cusemu_device_lost_count();

	fixture_init(f);
	start(f, lines, ",strict=true");
	g_assert_cmpint(call(f, false, RTC_RD_TIME, at(f, false, 0x100),
			     NULL), ==, 0);
	g_test_expect_message("cusemu-model", G_LOG_LEVEL_CRITICAL,
			      "/dev/clock7 (replay) lost data: the replay of * "
			      "failed: not in it: ioctl 0x00007001 from x86_64*");
	g_assert_cmpint(call(f, false, RTC_AIE_ON, 0, NULL), ==, -EIO);
	g_test_assert_expected_messages();
	g_assert_cmpuint(cusemu_device_lost_count(), ==, before + 1);
	fixture_clear(f);
}

#define READ_LINE(data, result)                                           \
	"{\"node\":\"clock7\",\"pid\":7,\"comm\":\"t\",\"op\":\"read\","   \
	"\"abi\":\"x86_64\",\"size\":8,\"data\":\"" data "\",\"result\":"  \
	result ",\"error\":null,\"duration_ns\":1}"

/* Reads in order, cut to the size asked; then EAGAIN; polls follow. */
static void test_read_poll(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	const char *lines[] = {
		HEADER,
		"{\"node\":\"clock7\",\"pid\":7,\"op\":\"open\",\"result\":0,"
		"\"error\":null}",
		"{\"node\":\"clock7\",\"pid\":7,\"op\":\"poll\",\"result\":0,"
		"\"error\":null}",
		"{\"node\":\"clock7\",\"pid\":7,\"op\":\"poll\",\"result\":69,"
		"\"error\":null}",
		READ_LINE("9001000000000000", "8"),
		"{\"node\":\"clock7\",\"pid\":7,\"op\":\"read\",\"size\":8,"
		"\"data\":\"\",\"result\":null,\"error\":\"EINTR\"}",
		READ_LINE("a001000000000000", "8"),
		"{\"node\":\"clock7\",\"pid\":7,\"op\":\"write\",\"size\":2,"
		"\"data\":\"6869\",\"result\":2,\"error\":null}",
		"{\"node\":\"clock7\",\"pid\":7,\"op\":\"write\",\"size\":2,"
		"\"data\":\"6868\",\"result\":null,\"error\":\"ENOSPC\"}",
		"",
		"{\"record\":\"full\",\"max\":1024,\"lines\":8}",
		NULL
	};
	char buf[8];

	fixture_init(f);
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "*rec.json:11: the recording reached its "
			      "record-max= here*");
	start(f, lines, NULL);
	g_test_assert_expected_messages();
	f->file.flags = O_NONBLOCK;
	g_assert_cmpuint(f->dev->model->poll(f->dev, &f->file), ==,
			 (POLLIN | POLLRDNORM | POLLOUT));
	g_assert_cmpint(f->dev->model->read(f->dev, &f->file, buf, 4), ==, 4);
	g_assert_cmpmem(buf, 4, "\x90\x01\x00\x00", 4);
	g_assert_cmpint(f->dev->model->read(f->dev, &f->file, buf, 8), ==, 8);
	g_assert_cmpmem(buf, 8, "\xa0\x01\x00\x00\x00\x00\x00\x00", 8);
	g_assert_cmpuint(f->dev->model->poll(f->dev, &f->file), ==, POLLOUT);
	g_assert_cmpint(f->dev->model->read(f->dev, &f->file, buf, 8), ==,
			-EAGAIN);
	g_assert_cmpint(f->dev->model->write(f->dev, &f->file, "hi", 2), ==,
			2);
	g_assert_cmpint(f->dev->model->write(f->dev, &f->file, "hh", 2), ==,
			-ENOSPC);
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "clock7: not in *: write of 3 bytes");
	g_assert_cmpint(f->dev->model->write(f->dev, &f->file, "hi!", 3), ==,
			-EINVAL);
	g_test_assert_expected_messages();
	fixture_clear(f);
}

struct reader {
	struct fixture *f;
	struct cusemu_request req;
	ssize_t ret;
};

static gpointer reader_thread(gpointer data)
{
	struct reader *r = data;
	char buf[8];

	cusemu_request_set_current(&r->req);
	r->ret = r->f->dev->model->read(r->f->dev, &r->f->file, buf,
					sizeof(buf));
	cusemu_request_set_current(NULL);
	return NULL;
}

/* The recorded reads used up, a blocking read waits until its caller
 * gives up (FUSE_INTERRUPT): EINTR then. */
static void test_read_blocks(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	const char *lines[] = { HEADER, READ_LINE("9001000000000000", "8"),
				NULL };
	struct reader r = { .f = f };
	GThread *thread;
	char buf[8];
	gint64 t;

	fixture_init(f);
	start(f, lines, NULL);
	g_assert_cmpint(f->dev->model->read(f->dev, &f->file, buf, 8), ==, 8);
	cusemu_request_init(&r.req, NULL, NULL);
	thread = g_thread_new("reader", reader_thread, &r);
	g_usleep(200 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpint(r.ret, ==, 0);
	t = g_get_monotonic_time();
	cusemu_wait_ctx_interrupt(&r.req.wait);
	g_thread_join(thread);
	t = g_get_monotonic_time() - t;
	g_assert_cmpint(r.ret, ==, -EINTR);
	g_assert_cmpint(t, <, 200 * G_TIME_SPAN_MILLISECOND);
	cusemu_request_clear(&r.req);
	fixture_clear(f);
}

/* Data cut when recorded: the line answers nothing, and the log says so. */
static void test_cut(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = ioctl_line(
		TEST_SET, "TEST_SET", "x86_64", "0x7ffc00000010",
		"[{\"addr\":\"0x7ffc00000010\",\"len\":4,\"data\":\"01\","
		"\"cut\":true}]",
		"[]", "\"result\":0,\"error\":null");
	const char *lines[] = { HEADER, a, NULL };
	uint32_t v = 1;

	fixture_init(f);
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "*rec.json:2: ioctl TEST_SET is not replayed: "
			      "its data was cut when recorded");
	start(f, lines, NULL);
	g_test_assert_expected_messages();
	memcpy(mem(f, false, 0x200), &v, 4);
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "*; line 2 has the command but its data was cut "
			      "when recorded");
	g_assert_cmpint(call(f, false, TEST_SET, at(f, false, 0x200), NULL),
			==, -ENOTTY);
	g_test_assert_expected_messages();
	fixture_clear(f);
}

/*
 * A daemon killed while it wrote a line leaves it cut short, without its
 * newline: the calls before it replay, and the log says why it does not.
 */
static void test_killed(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = rd_time("x86_64", 7);
	g_autofree char *b = rd_time("x86_64", 8);
	const char *lines[] = { HEADER, a, "", NULL };
	g_autofree char *cut = NULL;
	g_autofree char *whole = NULL;
	g_autofree char *text = NULL;
	g_autofree char *arg = NULL;
	g_autoptr(GError) error = NULL;
	struct rtc_time tm;

	fixture_init(f);
	/* The first 40 bytes of the next line, as a write stopped early. */
	cut = g_strndup(b, 40);
	whole = g_strjoinv("\n", (char **)lines);
	text = g_strconcat(whole, cut, NULL);
	g_assert_true(g_file_set_contents(f->path, text, -1, NULL));
	arg = g_strdup_printf("replay:file=%s", f->path);
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "*rec.json:3: the last line is cut short (the "
			      "call in flight when the recording daemon was "
			      "killed): not replayed");
	f->dev = fake_device_try(NULL, arg, &error);
	g_assert_no_error(error);
	g_test_assert_expected_messages();
	f->file = (struct cusemu_file){ .dev = f->dev };
	g_assert_cmpint(call(f, false, RTC_RD_TIME, at(f, false, 0x100), NULL),
			==, 0);
	memcpy(&tm, mem(f, false, 0x100), sizeof(tm));
	g_assert_cmpint(tm.tm_sec, ==, 7);
	fixture_clear(f);
}

/*
 * The recording kept in the tree (hwclock --show, x86_64, on the rtc model
 * at 2031-02-03 04:05:06): the tree's copy loads, and answers an i386
 * RTC_RD_TIME too, its layout being the same.
 */
static void test_kept(void)
{
	g_autofree char *path = g_test_build_filename(G_TEST_DIST, "replay",
						      "hwclock.json", NULL);
	g_autofree char *arg = g_strdup_printf("replay:file=%s", path);
	g_autoptr(GError) error = NULL;
	struct fixture fx = { 0 }, *f = &fx;
	struct rtc_time tm;

	fixture_init(f);
	f->dev = fake_device_try(NULL, arg, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(f->dev->name, ==, "rtc0");
	f->file = (struct cusemu_file){ .dev = f->dev };
	g_assert_cmpint(call(f, true, RTC_UIE_ON, 0, NULL), ==, 0);
	g_assert_cmpuint(f->dev->model->poll(f->dev, &f->file), ==,
			 (POLLIN | POLLRDNORM));
	g_assert_cmpint(call(f, true, RTC_UIE_OFF, 0, NULL), ==, 0);
	g_assert_cmpint(call(f, true, RTC_RD_TIME, at(f, true, 0x100), NULL),
			==, 0);
	memcpy(&tm, mem(f, true, 0x100), sizeof(tm));
	g_assert_cmpint(tm.tm_year + 1900, ==, 2031);
	g_assert_cmpint(tm.tm_mon + 1, ==, 2);
	g_assert_cmpint(tm.tm_mday, ==, 3);
	g_assert_cmpint(tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec, ==,
			4 * 3600 + 5 * 60 + 9);
	fixture_clear(f);
}

static char *hex_of(const uint8_t *data, size_t len)
{
	GString *out = g_string_new(NULL);

	for (size_t i = 0; i < len; i++)
		g_string_append_printf(out, "%02x", data[i]);
	return g_string_free(out, FALSE);
}

/* struct shim_args of tests/passthrough/shim.h, laid out by i386. */
static void shim_args32(uint8_t *p, int32_t l)
{
	int32_t arr[3] = { -1, 2, -3 };
	uint64_t u64 = 0x1122334455667788ull;

	memset(p, 0, 44);
	memcpy(p, &l, 4);
	memcpy(p + 8, &(int32_t){ -7 }, 4);
	memcpy(p + 16, &u64, 8);
	memcpy(p + 24, arr, 12);
}

/* ... and by x86_64, with garbage in its padding. */
static void shim_args64(uint8_t *p, int64_t l)
{
	int64_t arr[3] = { -1, 2, -3 };
	uint64_t u64 = 0x1122334455667788ull;

	memset(p, 0xee, 72);
	memcpy(p, &l, 8);
	memset(p + 8, 0, 8);
	memcpy(p + 16, &(int32_t){ -7 }, 4);
	memset(p + 20, 0, 2);
	memcpy(p + 24, &u64, 8);
	memcpy(p + 32, arr, 24);
	memset(p + 56, 0, 12);
}

/*
 * layouts= a header: a call recorded in one ABI answers the other, its
 * payload converted by the two layouts (the padding not compared); an
 * x86_64 PROBE_WHO's unsigned long reaches an i386 caller as 4 bytes.
 */
static void test_other_abi(void)
{
	g_autofree char *shim = g_test_build_filename(G_TEST_DIST,
						      "passthrough", "shim.h",
						      NULL);
	g_autofree char *probe = g_test_build_filename(
		G_TEST_DIST, "..", "include", "cusemu", "abi", "probe.h", NULL);
	g_autofree char *extra = g_strdup_printf(",layouts=%s:%s", shim,
						 probe);
	uint8_t rec32[44], live64[72];
	g_autofree char *in32 = NULL, *range = NULL, *set = NULL, *who = NULL;
	const unsigned int set32 = _IOW('S', 1, uint8_t[44]);
	const unsigned int set64 = _IOW('S', 1, uint8_t[72]);
	const unsigned int who64 = _IOR('P', 2, uint64_t);
	const unsigned int who32 = _IOR('P', 2, uint32_t);
	struct fixture fx = { 0 }, *f = &fx;
	uint32_t answer32;

	shim_args32(rec32, -5);
	in32 = hex_of(rec32, sizeof(rec32));
	range = g_strdup_printf("[{\"addr\":\"0xffd00000\",\"len\":44,"
				"\"data\":\"%s\"}]",
				in32);
	set = ioctl_line(set32, "SHIM_SET", "i386", "0xffd00000", range, "[]",
			 "\"result\":0,\"error\":null");
	who = ioctl_line(who64, "PROBE_WHO", "x86_64", "0x7ffc00001000", "[]",
			 "[{\"addr\":\"0x7ffc00001000\",\"len\":8,"
			 "\"data\":\"0201000000000000\"}]",
			 "\"result\":0,\"error\":null");
	fixture_init(f);
	start(f, (const char *const[]){ HEADER, set, who, NULL }, extra);

	/* The i386 payload, as x86_64 lays it out. */
	shim_args64(live64, -5);
	memcpy(mem(f, false, 0x100), live64, sizeof(live64));
	g_assert_cmpint(call(f, false, set64, at(f, false, 0x100), NULL), ==,
			0);
	/* Another value is another call. */
	shim_args64(live64, -6);
	memcpy(mem(f, false, 0x100), live64, sizeof(live64));
	g_test_expect_message("cusemu-replay", G_LOG_LEVEL_MESSAGE,
			      "*SHIM_SET from x86_64*line 2 differs first*");
	g_assert_cmpint(call(f, false, set64, at(f, false, 0x100), NULL), ==,
			-ENOTTY);
	g_test_assert_expected_messages();

	memset(mem(f, true, 0x200), 0xaa, 8);
	g_assert_cmpint(call(f, true, who32, at(f, true, 0x200), NULL), ==, 0);
	memcpy(&answer32, mem(f, true, 0x200), 4);
	g_assert_cmphex(answer32, ==, 0x102);
	/* Four bytes written, not eight. */
	g_assert_cmphex(mem(f, true, 0x200)[4], ==, 0xaa);
	fixture_clear(f);
}

/* Recordings refused at start-up, with the file and the line. */
static void expect_refused_arg(const char *arg, const char *why)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *want = g_strdup_printf("*%s", why);

	g_assert_null(fake_device_try(NULL, arg, &error));
	g_assert_nonnull(error);
	if (!g_pattern_match_simple(want, error->message))
		g_error("'%s' does not match '%s'", error->message, want);
}

/* A recording of lines (and keys extra) in f's file, refused: why. */
static GError *refusal(struct fixture *f, const char *const *lines,
		       const char *extra)
{
	g_autofree char *text = g_strjoinv("\n", (char **)lines);
	g_autofree char *arg = NULL;
	GError *error = NULL;

	fixture_init(f);
	g_assert_true(g_file_set_contents(f->path, text, -1, NULL));
	arg = g_strdup_printf("replay:file=%s%s", f->path, extra ? extra : "");
	g_assert_null(fake_device_try(NULL, arg, &error));
	g_assert_nonnull(error);
	return error;
}

static void expect_refused(const char *const *lines, const char *extra,
			   const char *why)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autoptr(GError) error = refusal(f, lines, extra);
	g_autofree char *want = NULL;

	want = g_strdup_printf("*%s%s", why[0] == ':' ? f->path : "", why);
	if (!g_pattern_match_simple(want, error->message))
		g_error("'%s' does not match '%s'", error->message, want);
	fixture_clear(f);
}

static void test_refused(void)
{
	g_autofree char *good = rd_time("x86_64", 1);
	const char *not_json[] = { HEADER, good, "{\"node\":", NULL };
	const char *no_header[] = { good, NULL };
	const char *version[] = {
		"{\"trace\":\"cusemu\",\"version\":2,\"nodes\":null}", NULL
	};
	const char *lost[] = { HEADER, good, "{\"lost\":3}", NULL };
	const char *bad_hex[] = {
		HEADER,
		"{\"node\":\"clock7\",\"op\":\"read\",\"data\":\"zz\","
		"\"result\":1,\"error\":null}",
		NULL
	};
	const char *two_nodes[] = {
		"{\"trace\":\"cusemu\",\"version\":1,\"nodes\":null}", good,
		"{\"node\":\"other\",\"op\":\"poll\",\"result\":0,"
		"\"error\":null}",
		NULL
	};
	const char *bad_errno[] = {
		HEADER,
		"{\"node\":\"clock7\",\"op\":\"poll\",\"result\":null,"
		"\"error\":\"ENOTANERROR\"}",
		NULL
	};
	const char *bad_name[] = {
		"{\"trace\":\"cusemu\",\"version\":1,\"nodes\":[\"a/b\"]}", NULL
	};

	g_autofree char *deep = g_strnfill(100000, '[');
	const char *too_deep[] = { HEADER, good, deep, NULL };
	const char *comment[] = {
		HEADER, "{\"node\":\"clock7\",/* \" */\"op\":\"poll\"}", NULL
	};

	expect_refused(not_json, NULL, ":3: not JSON: *");
	/* Refused before json-glib's recursion would overflow the stack. */
	expect_refused(too_deep, NULL, ":3: arrays and objects nested deeper "
		       "than 64*");
	expect_refused(comment, NULL, ":2: not JSON: a comment or a "
		       "single-quoted string*");
	expect_refused(no_header, NULL, ":1: not a cusemu recording*");
	expect_refused(version, NULL, ":1: a version of the trace format "
		       "other than 1*");
	expect_refused(lost, NULL, ":3: the recording lost lines here*");
	expect_refused(bad_hex, NULL, ":2: \"data\" is not hex");
	expect_refused(two_nodes, NULL,
		       ":3: a call of another node than line 2 names*");
	expect_refused(bad_errno, NULL, ":2: \"error\" is neither an errno "
		       "name*");
	expect_refused(bad_name, NULL, ":1: the recorded node name is not one "
		       "cusemud can use*");
	expect_refused_arg("replay", "replay needs file=RECORDING");
	expect_refused_arg("replay:file=/nonexistent/rec.json",
			   "/nonexistent/rec.json*");
}

static char *read_ioctl_line(const char *pid, const char *answer)
{
	g_autofree char *out = g_strdup_printf(
		"[{\"addr\":\"0x7ffc00000010\",\"len\":4,\"data\":\"%s\"}]",
		answer);
	g_autofree char *line = ioctl_line(
		TEST_READ, "TEST_READ", "x86_64", "0x7ffc00000010", "[]", out,
		"\"result\":0,\"error\":null");

	g_auto(GStrv) parts = g_strsplit(line, "\"pid\":7", 2);

	/* Its pid, for the open it belongs to. */
	return g_strjoinv(pid, parts);
}

/* TEST_READ on file, its answer. */
static uint32_t read_on(struct fixture *f, struct cusemu_file *file,
			long want)
{
	uint32_t v = 0xAAAAAAAA;
	unsigned int rt;

	memcpy(mem(f, false, 0x100), &v, 4);
	g_assert_cmpint(fake_ioctl(&f->native, f->dev, file, TEST_READ,
				   at(f, false, 0x100), &rt), ==, want);
	memcpy(&v, mem(f, false, 0x100), 4);
	return v;
}

static long start_on(struct fixture *f, struct cusemu_file *file)
{
	unsigned int rt;

	return fake_ioctl(&f->native, f->dev, file, TEST_START, 0, &rt);
}

/*
 * Each open file follows a recorded open file in its order: a new client
 * starts again from the first answer, not the latest; a call the
 * recording made only after another (a READ before START, a read() before
 * START) is flagged under strict, and answered but counted without it.
 */
static void test_sequence(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *start_line = ioctl_line(
		TEST_START, "TEST_START", "x86_64", "0x0", "[]", "[]",
		"\"result\":0,\"error\":null");
	g_autofree char *r1 = read_ioctl_line("\"pid\":7", "2a000000");
	g_autofree char *r2 = read_ioctl_line("\"pid\":7", "2b000000");
	const char *lines[] = {
		HEADER,
		"{\"node\":\"clock7\",\"pid\":7,\"op\":\"open\",\"result\":0,"
		"\"error\":null}",
		start_line, r1, r2, READ_LINE("0102", "2"),
		"{\"node\":\"clock7\",\"pid\":0,\"op\":\"release\","
		"\"result\":0,\"error\":null}",
		NULL
	};
	struct cusemu_file a, b, c, d;
	g_autoptr(GString) out = g_string_new(NULL);
	char *argv[] = { "status", NULL };
	char buf[8];

	fixture_init(f);
	start(f, lines, ",strict=true");
	a = b = c = d = f->file;
	g_test_expect_message("cusemu-model", G_LOG_LEVEL_CRITICAL,
			      "*not in it: ioctl 0x80047204 TEST_READ from "
			      "x86_64, arg *; line 4 has it, out of the "
			      "recorded order: no recorded open file began "
			      "with it");
	read_on(f, &a, -EIO);
	g_test_assert_expected_messages();
	g_assert_cmpint(start_on(f, &c), ==, 0);
	g_test_expect_message("cusemu-model", G_LOG_LEVEL_CRITICAL,
			      "*not in it: read; line 6 has it, out of the "
			      "recorded order: line 4 came next");
	g_assert_cmpint(f->dev->model->read(f->dev, &c, buf, 8), ==, -EIO);
	g_test_assert_expected_messages();

	g_assert_cmpint(start_on(f, &b), ==, 0);
	g_assert_cmphex(read_on(f, &b, 0), ==, 0x2a);
	g_assert_cmphex(read_on(f, &b, 0), ==, 0x2b);
	/* Repeated more often than recorded: the latest again. */
	g_assert_cmphex(read_on(f, &b, 0), ==, 0x2b);
	g_assert_cmpint(f->dev->model->read(f->dev, &b, buf, 8), ==, 2);
	g_assert_cmpmem(buf, 2, "\x01\x02", 2);
	f->dev->model->release(f->dev, &b);
	/* A new client, from the start. */
	g_assert_cmpint(start_on(f, &d), ==, 0);
	g_assert_cmphex(read_on(f, &d, 0), ==, 0x2a);
	fixture_clear(f);

	fixture_init(f);
	start(f, lines, NULL);
	a = f->file;
	g_assert_cmphex(read_on(f, &a, 0), ==, 0x2a);
	g_assert_cmpint(f->dev->model->control(f->dev, argv, out), ==, 0);
	g_assert_nonnull(strstr(out->str, "out of order: 1\n"));
	fixture_clear(f);
}

/* line, made by pid instead of 7: the open file it belongs to. */
static char *by_pid(const char *line, unsigned int pid)
{
	g_auto(GStrv) parts = g_strsplit(line, "\"pid\":7,", 2);
	g_autofree char *with = g_strdup_printf("\"pid\":%u,", pid);

	return g_strjoinv(with, parts);
}

static char *open_line(unsigned int pid)
{
	return g_strdup_printf("{\"node\":\"clock7\",\"pid\":%u,\"op\":"
			       "\"open\",\"result\":0,\"error\":null}",
			       pid);
}

/* How many calls the replay answered out of order and left unmatched. */
static void assert_status(struct fixture *f, unsigned int out_of_order,
			  unsigned int unmatched)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *want = g_strdup_printf(
		"unmatched: %u\nout of order: %u\n", unmatched, out_of_order);
	char *argv[] = { "status", NULL };

	g_assert_cmpint(f->dev->model->control(f->dev, argv, out), ==, 0);
	g_assert_nonnull(strstr(out->str, want));
}

/* The calls an i2cset and an i2cdump both begin with, on file. */
static void i2c_prefix_on(struct fixture *f, struct cusemu_file *file,
			  unsigned int step)
{
	unsigned int rt;

	if (step == 0) {
		memset(mem(f, false, 0x100), 0xAA, 8);
		g_assert_cmpint(fake_ioctl(&f->native, f->dev, file,
					   I2C_FUNCS, at(f, false, 0x100),
					   &rt), ==, 0);
		g_assert_cmpmem(mem(f, false, 0x100), 8,
				"\x01\x00\x00\x00\x00\x00\x00\x80", 8);
	} else {
		g_assert_cmpint(fake_ioctl(&f->native, f->dev, file,
					   I2C_SLAVE, 0x50, &rt), ==, 0);
	}
}

/* What the i2cset-like run does after them: one TEST_SET of 0xab. */
static void set_on(struct fixture *f, struct cusemu_file *file)
{
	uint32_t v = 0xab;
	unsigned int rt;

	memcpy(mem(f, false, 0x200), &v, 4);
	g_assert_cmpint(fake_ioctl(&f->native, f->dev, file, TEST_SET,
				   at(f, false, 0x200), &rt), ==, 0);
}

/* ... and the i2cdump-like one: TEST_XCHG of reg, the value it gets. */
static uint32_t xchg_on(struct fixture *f, struct cusemu_file *file,
			uint32_t reg)
{
	unsigned int rt;

	memcpy(mem(f, false, 0x300), &reg, 4);
	g_assert_cmpint(fake_ioctl(&f->native, f->dev, file, TEST_XCHG,
				   at(f, false, 0x300), &rt), ==, 0);
	memcpy(&reg, mem(f, false, 0x300), 4);
	return reg;
}

/*
 * Two recorded open files that begin alike, as an i2cset and an i2cdump
 * do (I2C_FUNCS, I2C_SLAVE), then differ: under strict, a live file of
 * each is answered in order, whichever opens and calls first, one after
 * the other or interleaved. A live file is not bound to the first
 * recorded file that began with its first call.
 */
static void test_shared_prefix(void)
{
	g_autofree char *funcs = ioctl_line(
		I2C_FUNCS, "I2C_FUNCS", "x86_64", "0x7ffc00000010", "[]",
		"[{\"addr\":\"0x7ffc00000010\",\"len\":8,"
		"\"data\":\"0100000000000080\"}]",
		"\"result\":0,\"error\":null");
	g_autofree char *slave = ioctl_line(
		I2C_SLAVE, "I2C_SLAVE", "x86_64", "0x50", "[]", "[]",
		"\"result\":0,\"error\":null");
	g_autofree char *set = ioctl_line(
		TEST_SET, "TEST_SET", "x86_64", "0x7ffc00000020",
		"[{\"addr\":\"0x7ffc00000020\",\"len\":4,"
		"\"data\":\"ab000000\"}]",
		"[]", "\"result\":0,\"error\":null");
	g_autofree char *x0 = xchg_line("x86_64", "0x7ffc00000030", "00000000",
					"11000000", "\"result\":0,\"error\":null");
	g_autofree char *x1 = xchg_line("x86_64", "0x7ffc00000030", "01000000",
					"22000000", "\"result\":0,\"error\":null");
	g_autofree char *open7 = open_line(7), *open8 = open_line(8);
	g_autofree char *funcs8 = by_pid(funcs, 8), *slave8 = by_pid(slave, 8);
	g_autofree char *x0_8 = by_pid(x0, 8), *x1_8 = by_pid(x1, 8);
	const char *lines[] = { HEADER, open7, funcs, slave, set,
				open8, funcs8, slave8, x0_8, x1_8, NULL };

	for (unsigned int order = 0; order < 3; order++) {
		struct fixture fx = { 0 }, *f = &fx;
		struct cusemu_file a, b;

		fixture_init(f);
		start(f, lines, ",strict=true");
		a = b = f->file;
		/* a is the i2cset, b the i2cdump. */
		if (order == 0) {
			i2c_prefix_on(f, &a, 0);
			i2c_prefix_on(f, &a, 1);
			set_on(f, &a);
		}
		if (order < 2) {
			i2c_prefix_on(f, &b, 0);
			i2c_prefix_on(f, &b, 1);
			g_assert_cmphex(xchg_on(f, &b, 0), ==, 0x11);
			g_assert_cmphex(xchg_on(f, &b, 1), ==, 0x22);
		}
		if (order == 1) {
			i2c_prefix_on(f, &a, 0);
			i2c_prefix_on(f, &a, 1);
			set_on(f, &a);
		}
		if (order == 2) {
			/* The dump first, each step of the two in turn. */
			for (unsigned int step = 0; step < 2; step++) {
				i2c_prefix_on(f, &b, step);
				i2c_prefix_on(f, &a, step);
			}
			g_assert_cmphex(xchg_on(f, &b, 0), ==, 0x11);
			set_on(f, &a);
			g_assert_cmphex(xchg_on(f, &b, 1), ==, 0x22);
		}
		assert_status(f, 0, 0);
		f->dev->model->release(f->dev, &a);
		f->dev->model->release(f->dev, &b);
		fixture_clear(f);
	}
}

static char *who_line(const char *abi, const char *arg, const char *answer)
{
	bool compat = !strcmp(abi, "i386");
	g_autofree char *out = g_strdup_printf(
		"[{\"addr\":\"%s\",\"len\":%zu,\"data\":\"%s\"}]", arg,
		strlen(answer) / 2, answer);

	return ioctl_line(compat ? _IOR('P', 2, uint32_t)
				 : _IOR('P', 2, uint64_t),
			  "PROBE_WHO", abi, arg, "[]", out,
			  "\"result\":0,\"error\":null");
}

/* PROBE_WHO from file in an ABI, its answer. */
static uint64_t who_on(struct fixture *f, struct cusemu_file *file,
		       bool compat)
{
	uint64_t v = 0;
	unsigned int rt;

	memset(mem(f, compat, 0x200), 0, 8);
	g_assert_cmpint(fake_ioctl(compat ? &f->compat : &f->native, f->dev,
				   file,
				   compat ? _IOR('P', 2, uint32_t)
					  : _IOR('P', 2, uint64_t),
				   at(f, compat, 0x200), &rt), ==, 0);
	memcpy(&v, mem(f, compat, 0x200), 8);
	return v;
}

/*
 * The caller's ABI first: with layouts=, the x86_64 run's PROBE_WHO
 * answers an i386 caller too, converted, and it was recorded first; but
 * an i386 live file follows the i386 run recorded after it, and an x86_64
 * one the x86_64 run, whichever of them comes first.
 */
static void test_abi_first(void)
{
	g_autofree char *probe = g_test_build_filename(
		G_TEST_DIST, "..", "include", "cusemu", "abi", "probe.h", NULL);
	g_autofree char *extra = g_strdup_printf(",layouts=%s,strict=true",
						 probe);
	g_autofree char *w64 = who_line("x86_64", "0x7ffc00001000",
					"0201000000000000");
	g_autofree char *w32 = who_line("i386", "0xffd00010", "03020000");
	g_autofree char *open7 = open_line(7), *open8 = open_line(8);
	g_autofree char *w32_8 = by_pid(w32, 8);
	const char *lines[] = { HEADER, open7, w64, open8, w32_8, NULL };

	for (int first = 0; first < 2; first++) {
		struct fixture fx = { 0 }, *f = &fx;
		struct cusemu_file a, b;
		bool compat = first;

		fixture_init(f);
		start(f, lines, extra);
		a = b = f->file;
		for (int k = 0; k < 2; k++, compat = !compat)
			g_assert_cmphex(who_on(f, k ? &b : &a, compat), ==,
					compat ? 0x203 : 0x102);
		assert_status(f, 0, 0);
		fixture_clear(f);
	}
}

/*
 * A recording of two runs that begin alike: two live files, one after the
 * other, get the two runs' answers, each from its start; a third the first
 * run's again.
 */
static void test_two_runs(void)
{
	g_autofree char *t1 = rd_time("x86_64", 1), *t2 = rd_time("x86_64", 2);
	g_autofree char *open7 = open_line(7), *open8 = open_line(8);
	g_autofree char *t2_8 = by_pid(t2, 8);
	const char *lines[] = { HEADER, open7, t1, open8, t2_8, NULL };
	struct fixture fx = { 0 }, *f = &fx;
	struct cusemu_file files[3];
	const int want[] = { 1, 2, 1 };
	struct rtc_time tm;
	unsigned int rt;

	fixture_init(f);
	start(f, lines, ",strict=true");
	for (int k = 0; k < 3; k++) {
		files[k] = f->file;
		g_assert_cmpint(fake_ioctl(&f->native, f->dev, &files[k],
					   RTC_RD_TIME, at(f, false, 0x100),
					   &rt), ==, 0);
		memcpy(&tm, mem(f, false, 0x100), sizeof(tm));
		g_assert_cmpint(tm.tm_sec, ==, want[k]);
		f->dev->model->release(f->dev, &files[k]);
	}
	assert_status(f, 0, 0);
	fixture_clear(f);
}

/* Log lines of unmatched calls written (not expected by a test). */
static unsigned int said_unmatched;

/* Counts them; and no log line may quote a refused file (test_secret). */
static GLogWriterOutput log_writer(GLogLevelFlags level,
				   const GLogField *fields, gsize n,
				   gpointer data)
{
	for (gsize i = 0; i < n; i++) {
		if (strcmp(fields[i].key, "MESSAGE"))
			continue;
		if (strstr(fields[i].value, "ECRE"))
			g_test_fail_printf("a log line quotes the "
					   "recording: %s",
					   (const char *)fields[i].value);
		if (strstr(fields[i].value, ": not in "))
			said_unmatched++;
	}
	return g_log_writer_default(level, fields, n, data);
}

/* A file refused at line, its error naming the file and the line and
 * nothing of what the file holds. */
static void expect_quiet(const char *const *lines, unsigned int line)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autoptr(GError) error = refusal(f, lines, NULL);
	g_autofree char *want = NULL;

	want = g_strdup_printf("*%s:%u: *", f->path, line);
	if (!g_pattern_match_simple(want, error->message))
		g_error("'%s' does not match '%s'", error->message, want);
	if (strstr(error->message, "ECRE") || strstr(error->message, "31337"))
		g_test_fail_printf("the error quotes the recording: %s",
				   error->message);
	fixture_clear(f);
}

/*
 * The daemon may read a file its asker may not (cusemuctl add): its errors
 * say where and what was expected, never what the file holds.
 */
static void test_secret(void)
{
	g_autofree char *good = rd_time("x86_64", 1);
	g_autofree char *cut = ioctl_line(
		TEST_SET, "SECRET_SET", "x86_64", "0x7ffc00000010",
		"[{\"addr\":\"0x7ffc00000010\",\"len\":4,\"data\":\"01\","
		"\"cut\":true}]",
		"[]", "\"result\":0,\"error\":null");
	const char *bare[] = { "SECRET:x:0:0:root:/root:/bin/sh", NULL };
	const char *string[] = { HEADER, "{\"SECRET\" 1}", NULL };
	const char *open_string[] = { HEADER, "\"SECRET", NULL };
	const char *trailing[] = { HEADER, "{\"a\":1} SECRET", NULL };
	const char *op[] = {
		HEADER, "{\"node\":\"clock7\",\"op\":\"SECRET\"}", NULL
	};
	const char *error[] = {
		HEADER,
		"{\"node\":\"clock7\",\"op\":\"poll\",\"result\":null,"
		"\"error\":\"SECRET\"}",
		NULL
	};
	const char *node[] = {
		HEADER, good, "{\"node\":\"SECRET\",\"op\":\"poll\"}", NULL
	};
	const char *name[] = {
		"{\"trace\":\"cusemu\",\"version\":1,\"nodes\":[\"SE/CRET\"]}",
		NULL
	};
	const char *version[] = {
		"{\"trace\":\"cusemu\",\"version\":31337}", NULL
	};
	const char *lost[] = { HEADER, "{\"lost\":31337}", NULL };
	const char *after_cut[] = { HEADER, cut, "{\"SECRET\"}", NULL };

	expect_quiet(bare, 1);
	expect_quiet(string, 2);
	expect_quiet(open_string, 2);
	expect_quiet(trailing, 2);
	expect_quiet(op, 2);
	expect_quiet(error, 2);
	expect_quiet(node, 3);
	expect_quiet(name, 1);
	expect_quiet(version, 1);
	expect_quiet(lost, 2);
	expect_quiet(after_cut, 3);
}

/*
 * 100,000 unmatched calls: 10 log lines, as the kernel's printk_ratelimit
 * lets through, all counted in the status; under strict, each fails with
 * EIO and the first makes the exit status.
 */
static void test_flood(void)
{
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *a = rd_time("x86_64", 1);
	const char *lines[] = { HEADER, a, NULL };
	g_autoptr(GString) out = g_string_new(NULL);
	char *argv[] = { "status", NULL };
	unsigned int before;
	gint64 began;

	fixture_init(f);
	start(f, lines, NULL);
	said_unmatched = 0;
	began = g_get_monotonic_time();
	for (unsigned int i = 0; i < 100000; i++)
		g_assert_cmpint(call(f, false, RTC_AIE_ON, 0, NULL), ==,
				-ENOTTY);
	/* A burst per interval begun: one, on a machine that makes the
	 * calls within 5 s; more under valgrind or load, never one a call. */
	g_assert_cmpuint(said_unmatched, >=, CUSEMU_RATELIMIT_BURST);
	g_assert_cmpuint(said_unmatched, <=,
			 CUSEMU_RATELIMIT_BURST *
				 (1 + (g_get_monotonic_time() - began) /
					      CUSEMU_RATELIMIT_INTERVAL));
	g_assert_cmpint(f->dev->model->control(f->dev, argv, out), ==, 0);
	g_assert_nonnull(strstr(out->str, "unmatched: 100000\n"));
	fixture_clear(f);

	fixture_init(f);
	start(f, lines, ",strict=true");
	before = cusemu_device_lost_count();
	/* An eleventh would be a fatal critical. */
	for (unsigned int i = 0; i < 10; i++)
		g_test_expect_message("cusemu-model", G_LOG_LEVEL_CRITICAL,
				      "/dev/clock7 (replay) lost data: the "
				      "replay of * failed: not in it: *");
	for (unsigned int i = 0; i < 1000; i++)
		g_assert_cmpint(call(f, false, RTC_AIE_ON, 0, NULL), ==,
				-EIO);
	g_test_assert_expected_messages();
	g_assert_cmpuint(cusemu_device_lost_count(), >, before);
	fixture_clear(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_log_set_writer_func(log_writer, NULL, NULL);
	g_test_add_func("/replay/order", test_order);
	g_test_add_func("/replay/name", test_name);
	g_test_add_func("/replay/input", test_input);
	g_test_add_func("/replay/own-abi", test_own_abi);
	g_test_add_func("/replay/pointers", test_pointers);
	g_test_add_func("/replay/unmatched", test_unmatched);
	g_test_add_func("/replay/strict", test_strict);
	g_test_add_func("/replay/read-poll", test_read_poll);
	g_test_add_func("/replay/read-blocks", test_read_blocks);
	g_test_add_func("/replay/cut", test_cut);
	g_test_add_func("/replay/killed", test_killed);
	g_test_add_func("/replay/kept", test_kept);
	g_test_add_func("/replay/other-abi", test_other_abi);
	g_test_add_func("/replay/refused", test_refused);
	g_test_add_func("/replay/secret", test_secret);
	g_test_add_func("/replay/flood", test_flood);
	g_test_add_func("/replay/sequence", test_sequence);
	g_test_add_func("/replay/shared-prefix", test_shared_prefix);
	g_test_add_func("/replay/abi-first", test_abi_first);
	g_test_add_func("/replay/two-runs", test_two_runs);
	return g_test_run();
}
