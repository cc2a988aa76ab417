/* SPDX-License-Identifier: MIT */
/*
 * A racing caller of the fioc device node: FIOC_WRITE of one page at
 * offset 0, again and again, while a second thread flips the offset in the
 * caller's struct fioc_rw_arg between 0, minus a page and 4 GiB. The fetch
 * step and the handler must act on one reading of the struct: every call
 * either writes the page at offset 0 or is refused with EINVAL, and the
 * buffer ends one page long, holding the page. A handler that read the
 * struct again would write before the buffer (a kernel module: a usercopy
 * BUG in the kernel's log, and this client killed). TAP, in the ABI it is
 * built for.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "cusemu/abi/fioc.h"

#define PAGE 4096
#define DEFAULT_SECONDS 3

static struct fioc_rw_arg arg;
static volatile bool stop;

/* The offsets the second thread writes, in turn: the one the call is
 * made with, one the fetch step refuses (negative), and one past any
 * buffer whose sum with the count an i386 size_t would wrap. */
static const int64_t offsets[] = { 0, -PAGE, INT64_C(1) << 32 };

static void *flip(void *unused)
{
	volatile off_t *at = &arg.offset;
	unsigned int i = 0;

	(void)unused;
	while (!stop)
		*at = (off_t)offsets[i++ % 3];
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned char page[PAGE], back[PAGE];
	unsigned long wrote = 0, refused = 0, calls = 0;
	char bad[160] = "";
	struct fioc_rw_arg rd;
	uint64_t end;
	unsigned int seconds = DEFAULT_SECONDS;
	size_t size = SIZE_MAX;
	pthread_t flipper;
	bool same;
	int fd;

	if (argc == 3)
		seconds = (unsigned int)strtoul(argv[2], NULL, 10);
	if (argc < 2 || argc > 3 || !seconds) {
		fprintf(stderr, "usage: fioc-race-client NODE [SECONDS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# fioc-race-client: ABI %s\n", sizeof(long) == 4 ? "i386" : "x86_64");
	fd = expect_open(argv[1], O_RDWR, "open the node read-write");
	if (fd < 0) {
		printf("1..%d\n", ntests);
		return 1;
	}
	size = 0;
	expect_ret("FIOC_SET_SIZE 0 returns 0", ioctl(fd, FIOC_SET_SIZE, &size), 0);
	for (unsigned int i = 0; i < PAGE; i++)
		page[i] = (unsigned char)(i * 7 + 1);
	arg = (struct fioc_rw_arg){ .buf = page, .size = PAGE };
	if (pthread_create(&flipper, NULL, flip, NULL))
		bail("cannot start the thread that flips the offset");
	end = now_ns() + seconds * UINT64_C(1000000000);
	while (now_ns() < end) {
		long ret = ioctl(fd, FIOC_WRITE, &arg);
		int err = errno;

		calls++;
		if (ret == PAGE && arg.new_size == PAGE &&
		    (arg.prev_size == 0 || arg.prev_size == PAGE)) {
			wrote++;
		} else if (ret == -1 && err == EINVAL) {
			refused++;
		} else if (!*bad) {
			snprintf(bad, sizeof(bad),
				 "call %lu: %s, sizes %zu -> %zu", calls,
				 show_ret(ret, err), arg.prev_size,
				 arg.new_size);
		}
	}
	stop = true;
	pthread_join(flipper, NULL);
	report(!*bad, "every FIOC_WRITE under the race wrote the page at offset 0 or got EINVAL",
	       "%s", *bad ? bad : "all of them");
	report(wrote && refused, "the offset changed under the calls: some wrote, some were refused",
	       "%lu calls: %lu wrote, %lu refused", calls, wrote, refused);
	size = SIZE_MAX;
	expect_ret("FIOC_GET_SIZE after the race returns 0", ioctl(fd, FIOC_GET_SIZE, &size), 0);
	report(size == PAGE, "the buffer is one page long", "expected %d, got %zu", PAGE, size);
	memset(back, 0, sizeof(back));
	rd = (struct fioc_rw_arg){ .offset = 0, .buf = back, .size = PAGE };
	expect_ret("FIOC_READ of the page returns 4096", ioctl(fd, FIOC_READ, &rd), PAGE);
	same = !memcmp(back, page, PAGE);
	report(same, "the buffer holds the page written", "%s",
	       same ? "the page's bytes" : "other bytes");
	close(fd);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
