/* SPDX-License-Identifier: MIT */
/*
 * The caller's side of tests/test-abicheck-compat's fetch steps, built
 * -m64 and -m32: "make" writes a memory image of payloads of buffers.h and
 * what they point to, laid out as this ABI's compiler lays them out, at
 * addresses from BASE; "check" reads the image back after
 * buffers-steps.c's handlers ran on it, and checks what they wrote.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buffers.h"

#define BASE 0x10000u
#define IMAGE 0x4000u

/* Where each thing sits in the image. */
enum {
	AT_READ = 0x100,
	AT_READ_PTR = 0x140,
	AT_WRITE = 0x180,
	AT_LEVELS = 0x1c0,
	AT_TOO_MANY = 0x200,	/* a bufs_read of BUFS_MAX + 1 */
	AT_TOO_BIG = 0x240,	/* a bufs_read of more than a call moves */
	AT_SAMPLES = 0x400,	/* BUFS_READ's 5 */
	AT_SAMPLES_PTR = 0x800,	/* BUFS_READ_PTR's 4 */
	AT_WRITTEN = 0xc00,	/* BUFS_WRITE's 3 */
	AT_LEVEL_BUF = 0x1000,	/* BUFS_LEVELS's 4 */
};

/* Bytes the handlers leave alone. */
#define UNTOUCHED 0xee

static unsigned char img[IMAGE];
static int bad;

#define WANT(cond)                                                      \
	do {                                                            \
		if (!(cond) && bad++ < 20)                              \
			printf("%d-bit caller: %s\n",                   \
			       (int)sizeof(void *) * 8, #cond);         \
	} while (0)

static void *at(size_t off)
{
	return img + off;
}

static void make(void)
{
	struct bufs_read r = { BASE + AT_SAMPLES, 5 };
	struct bufs_read_ptr rp = {
		(struct bufs_sample *)(uintptr_t)(BASE + AT_SAMPLES_PTR), 4 };
	struct bufs_write w = {
		(const struct bufs_sample *)(uintptr_t)(BASE + AT_WRITTEN), 3 };
	struct bufs_levels l = { BASE + AT_LEVEL_BUF, 4, 0 };
	struct bufs_read many = { BASE + AT_SAMPLES, BUFS_MAX + 1 };
	struct bufs_read big = { BASE + AT_SAMPLES, 100000 };
	struct bufs_sample *in = at(AT_WRITTEN);
	long *levels = at(AT_LEVEL_BUF);

	memset(img, UNTOUCHED, sizeof(img));
	memcpy(at(AT_READ), &r, sizeof(r));
	memcpy(at(AT_READ_PTR), &rp, sizeof(rp));
	memcpy(at(AT_WRITE), &w, sizeof(w));
	memcpy(at(AT_LEVELS), &l, sizeof(l));
	memcpy(at(AT_TOO_MANY), &many, sizeof(many));
	memcpy(at(AT_TOO_BIG), &big, sizeof(big));
	for (unsigned int i = 0; i < 3; i++)
		in[i] = (struct bufs_sample){ i + 1,
					      0x1122334455667700ull + i,
					      -(__s32)(i + 10) };
	for (unsigned int i = 0; i < 4; i++)
		levels[i] = 7;
	fwrite(img, 1, sizeof(img), stdout);
}

/* What buffers-steps.c's handlers write, element i of n. */
static void check_samples(const struct bufs_sample *s, unsigned int n,
			  unsigned int room)
{
	const unsigned char *rest = (const unsigned char *)&s[n];

	for (unsigned int i = 0; i < n; i++) {
		WANT(s[i].channel == 100 + i);
		WANT(s[i].timestamp_ns == 0xaabbccdd00000000ull + i);
		WANT(s[i].value == 1000 * (__s32)i - 1);
	}
	for (size_t i = 0; i < (room - n) * sizeof(*s); i++)
		WANT(rest[i] == UNTOUCHED);
}

static void check(void)
{
	const struct bufs_read *r = at(AT_READ);
	const struct bufs_read_ptr *rp = at(AT_READ_PTR);
	const struct bufs_write *w = at(AT_WRITE);
	const struct bufs_levels *l = at(AT_LEVELS);
	const long *levels = at(AT_LEVEL_BUF);

	if (fread(img, 1, sizeof(img), stdin) != sizeof(img)) {
		printf("no image\n");
		bad++;
		return;
	}
	WANT(r->buf == BASE + AT_SAMPLES && r->count == 3);
	check_samples(at(AT_SAMPLES), 3, 5);
	WANT(rp->buf == (void *)(uintptr_t)(BASE + AT_SAMPLES_PTR) &&
	     rp->len == 2);
	check_samples(at(AT_SAMPLES_PTR), 2, 4);
	WANT(w->len == 3);
	WANT(l->n == 4 && levels[0] == -1 && levels[1] == -2 &&
	     levels[2] == 3 && levels[3] == 4);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "make"))
		make();
	else if (argc == 2 && !strcmp(argv[1], "check"))
		check();
	else
		return 2;
	return bad != 0;
}
