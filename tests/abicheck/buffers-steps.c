/* SPDX-License-Identifier: MIT */
/*
 * The model's side of tests/test-abicheck-compat's fetch steps: the code
 * cusemu-abicheck --emit-compat wrote for buffers.h, run on a memory
 * image that buffers-caller.c made in its ABI ("32" as argument: an i386
 * caller's). <cusemu/uaccess.h> is played here as the daemon plays it: a
 * fetch step names ranges, and a handler copies only what was named; the
 * ranges named must be what the caller's layouts make them. The image,
 * as the handlers left it, goes to standard output.
 */
#include <stdio.h>
#include <string.h>

#include "buffers-compat.h"

#define BASE 0x10000u
#define IMAGE 0x4000u

enum {
	AT_READ = 0x100,
	AT_READ_PTR = 0x140,
	AT_WRITE = 0x180,
	AT_LEVELS = 0x1c0,
	AT_TOO_MANY = 0x200,
	AT_TOO_BIG = 0x240,
	AT_SAMPLES = 0x400,
	AT_SAMPLES_PTR = 0x800,
	AT_WRITTEN = 0xc00,
	AT_LEVEL_BUF = 0x1000,
};

static unsigned char img[IMAGE];
static bool compat;
static bool fetching;
static int bad;

/* The ranges named, as the daemon keeps them for one call. */
struct range {
	cusemu_uptr_t addr;
	size_t len;
};
static struct range named[2][8];	/* read, write */
static unsigned int nnamed[2];

#define WANT(cond)                                                      \
	do {                                                            \
		if (!(cond) && bad++ < 20)                              \
			fprintf(stderr, "%s caller: %s:%d: %s\n",       \
				compat ? "i386" : "x86_64", __FILE__,   \
				__LINE__, #cond);                       \
	} while (0)

static bool inside(int way, cusemu_uptr_t addr, size_t len)
{
	for (unsigned int i = 0; i < nnamed[way]; i++)
		if (addr >= named[way][i].addr &&
		    addr + len <= named[way][i].addr + named[way][i].len)
			return true;
	return false;
}

static int name(int way, cusemu_uptr_t addr, size_t len)
{
	if (!len || inside(way, addr, len))
		return 0;
	if (fetching && nnamed[way] < 8) {
		named[way][nnamed[way]++] = (struct range){ addr, len };
		return -EAGAIN;
	}
	return -EIO;
}

static bool mapped(cusemu_uptr_t addr, size_t len)
{
	return addr >= BASE && addr + len <= BASE + IMAGE;
}

int cusemu_user_want_read(cusemu_uptr_t addr, size_t len)
{
	return name(0, addr, len);
}

int cusemu_user_want_write(cusemu_uptr_t addr, size_t len)
{
	return name(1, addr, len);
}

bool cusemu_in_compat_syscall(void)
{
	return compat;
}

unsigned long cusemu_copy_from_user(void *to, cusemu_uptr_t from,
				    unsigned long n)
{
	int err = name(0, from, n);

	if ((err && err != -EAGAIN) || !mapped(from, n))
		return n;
	memcpy(to, img + (from - BASE), n);
	return 0;
}

unsigned long cusemu_copy_to_user(cusemu_uptr_t to, const void *from,
				  unsigned long n)
{
	if (fetching || !inside(1, to, n) || !mapped(to, n))
		return n;
	memcpy(img + (to - BASE), from, n);
	return 0;
}

static void start(void)
{
	memset(named, 0, sizeof(named));
	nnamed[0] = nnamed[1] = 0;
	fetching = true;
}

/* What a fetch step named: the payload, and then a buffer. */
static void want_named(cusemu_uptr_t arg, size_t payload, bool back,
		       cusemu_uptr_t buf, size_t len)
{
	WANT(nnamed[0] == 2 && named[0][0].addr == arg &&
	     named[0][0].len == payload && named[0][1].addr == buf &&
	     named[0][1].len == len);
	if (back)
		WANT(nnamed[1] == 2 && named[1][0].addr == arg &&
		     named[1][0].len == payload && named[1][1].addr == buf &&
		     named[1][1].len == len);
	else
		WANT(nnamed[1] == 0);
}

/* The sizes of the caller's ABI, from the header's own layouts. */
#define SIZE(native, i386) (compat ? (size_t)(i386) : (size_t)(native))

static void read_samples(void)
{
	struct bufs_sample out[3];
	struct bufs_read p;

	start();
	WANT(bufs_read_fetch(BASE + AT_READ, &p, BUFS_MAX) == 0);
	want_named(BASE + AT_READ, SIZE(16, 12), true, BASE + AT_SAMPLES,
		   5 * SIZE(24, 16));
	fetching = false;
	WANT(bufs_read_from_user(&p, BASE + AT_READ) == 0);
	WANT(p.buf == BASE + AT_SAMPLES && p.count == 5);
	for (unsigned int i = 0; i < 3; i++)
		out[i] = (struct bufs_sample){ 100 + i,
					       0xaabbccdd00000000ull + i,
					       1000 * (__s32)i - 1 };
	WANT(bufs_read_buf_to_user(&p, out, 3) == 0);
	p.count = 3;
	WANT(bufs_read_to_user(BASE + AT_READ, &p) == 0);
}

static void read_ptr(void)
{
	struct bufs_sample out[2];
	struct bufs_read_ptr p;

	start();
	WANT(bufs_read_ptr_fetch(BASE + AT_READ_PTR, &p, 0) == 0);
	want_named(BASE + AT_READ_PTR, SIZE(16, 8), true,
		   BASE + AT_SAMPLES_PTR, 4 * SIZE(24, 16));
	fetching = false;
	WANT(bufs_read_ptr_from_user(&p, BASE + AT_READ_PTR) == 0);
	WANT((uintptr_t)p.buf == BASE + AT_SAMPLES_PTR && p.len == 4);
	for (unsigned int i = 0; i < 2; i++)
		out[i] = (struct bufs_sample){ 100 + i,
					       0xaabbccdd00000000ull + i,
					       1000 * (__s32)i - 1 };
	WANT(bufs_read_ptr_buf_to_user(&p, out, 2) == 0);
	p.len = 2;
	WANT(bufs_read_ptr_to_user(BASE + AT_READ_PTR, &p) == 0);
}

static void write_samples(void)
{
	struct bufs_sample in[BUFS_MAX];
	struct bufs_write p;

	start();
	WANT(bufs_write_fetch(BASE + AT_WRITE, &p, BUFS_MAX) == 0);
	want_named(BASE + AT_WRITE, SIZE(16, 8), false, BASE + AT_WRITTEN,
		   3 * SIZE(24, 16));
	fetching = false;
	WANT(bufs_write_from_user(&p, BASE + AT_WRITE) == 0);
	WANT(p.len == 3 && bufs_write_buf_from_user(in, &p, p.len) == 0);
	for (unsigned int i = 0; i < 3; i++)
		WANT(in[i].channel == i + 1 &&
		     in[i].timestamp_ns == 0x1122334455667700ull + i &&
		     in[i].value == -(__s32)(i + 10));
}

static void levels(void)
{
	long l[4];
	struct bufs_levels p;

	start();
	WANT(bufs_levels_fetch(BASE + AT_LEVELS, &p, BUFS_MAX) == 0);
	want_named(BASE + AT_LEVELS, 16, true, BASE + AT_LEVEL_BUF,
		   4 * SIZE(8, 4));
	fetching = false;
	WANT(bufs_levels_from_user(&p, BASE + AT_LEVELS) == 0);
	WANT(p.n == 4 && bufs_levels_levels_from_user(l, &p, 4) == 0);
	WANT(l[0] == 7 && l[1] == 7 && l[2] == 7 && l[3] == 7);
	/* A long i386 cannot hold: -EOVERFLOW for it alone. */
	l[3] = 1L << 33;
	WANT(bufs_levels_levels_to_user(&p, l, 4) ==
	     (compat ? -EOVERFLOW : 0));
	l[0] = -1;
	l[1] = -2;
	l[2] = 3;
	l[3] = 4;
	WANT(bufs_levels_levels_to_user(&p, l, 4) == 0);
	WANT(bufs_levels_to_user(BASE + AT_LEVELS, &p) == 0);
}

/* Counts refused before their buffer is named. */
static void bounds(void)
{
	struct bufs_read p;

	start();
	WANT(bufs_read_fetch(BASE + AT_TOO_MANY, &p, BUFS_MAX) == -EINVAL);
	WANT(nnamed[0] == 1 && nnamed[1] == 1);
	WANT(bufs_read_fetch(BASE + AT_TOO_MANY, &p, 0) == 0);
	start();
	WANT(bufs_read_fetch(BASE + AT_TOO_BIG, &p, 0) == -ENOMEM);
	WANT(nnamed[0] == 1 && nnamed[1] == 1);
}

int main(int argc, char **argv)
{
	compat = argc > 1 && !strcmp(argv[1], "32");
	if (fread(img, 1, sizeof(img), stdin) != sizeof(img))
		return 2;
	read_samples();
	read_ptr();
	write_samples();
	levels();
	bounds();
	fwrite(img, 1, sizeof(img), stdout);
	return bad != 0;
}
