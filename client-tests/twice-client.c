/* SPDX-License-Identifier: MIT */
/*
 * A racing caller of the twice model (tests/plugins/twice.c): TWICE_READ
 * again and again while a second thread flips the value in the caller's
 * memory. Its handler copies the value in twice; both copies must be of
 * one reading of the caller's memory, the fetch step's: every call
 * returns 0. TAP, in the ABI it is built for.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tap.h"
#include "../tests/plugins/twice.h"

#define CALLS 2000

static volatile uint32_t value;
static volatile bool stop;

static void *flip(void *unused)
{
	(void)unused;
	while (!stop)
		value++;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long same = 0, differed = 0, failed = 0;
	pthread_t flipper;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: twice-client NODE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# twice-client: ABI %s\n", sizeof(long) == 4 ? "i386" : "x86_64");
	fd = expect_open(argv[1], O_RDWR, "open the node read-write");
	if (fd < 0) {
		printf("1..%d\n", ntests);
		return 1;
	}
	if (pthread_create(&flipper, NULL, flip, NULL))
		bail("cannot start the thread that flips the value");
	for (int i = 0; i < CALLS; i++) {
		long ret = ioctl(fd, TWICE_READ, (uint32_t *)&value);

		if (ret == 0)
			same++;
		else if (ret == 1)
			differed++;
		else
			failed++;
	}
	stop = true;
	pthread_join(flipper, NULL);
	report(!differed && !failed,
	       "every TWICE_READ under the race: the handler's two copies are of one reading",
	       "%d calls: %lu saw one value, %lu two, %lu failed", CALLS, same,
	       differed, failed);
	close(fd);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
