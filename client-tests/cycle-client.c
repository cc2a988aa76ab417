/* SPDX-License-Identifier: MIT */
/*
 * cycle-client: the model host's life and end, over and over, in one
 * process (a process per step would cost more than the step): N cycles on
 * a device of the "rogue" test model (tests/plugins/rogue.h).
 *
 *   reload: ROGUE_IOC_NULL ends the device's host (EIO), "reload NODE" on
 *           the control socket starts a fresh one, ROGUE_IOC_GET_SIZE
 *           proves that it serves;
 *   add:    "add rogue:name=NODE", ROGUE_IOC_NULL (EIO), "remove NODE".
 *
 * Prints "MODE: N cycles in T ms, the slowest S ms", or the first cycle
 * that went wrong and how, and exits 1 then.
 * Usage: cycle-client CONTROL DIR NODE reload|add N
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../tests/plugins/rogue.h"

/* A loaded machine may take this long for one answer of the daemon. */
#define ANSWER_TIMEOUT_S 60

static const char *control, *dir, *node;
static unsigned long cycle;

__attribute__((format(printf, 1, 2), noreturn))
static void failed(const char *format, ...)
{
	va_list args;

	printf("cycle %lu: ", cycle);
	va_start(args, format);
	vprintf(format, args);
	va_end(args);
	putchar('\n');
	exit(1);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

/* One request on the control socket; its answer must not be an error. */
static void request(const char *verb, const char *what)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { ANSWER_TIMEOUT_S, 0 };
	char line[256], answer[4096];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", control);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		failed("%s %s: connecting to %s: %s", verb, what, control,
		       strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = snprintf(line, sizeof(line), "%s %s\n", verb, what);
	if (write(fd, line, (size_t)n) != n)
		failed("%s %s: sending: %s", verb, what, strerror(errno));
	while ((n = read(fd, answer + got, sizeof(answer) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	answer[got] = '\0';
	if (n < 0)
		failed("%s %s: no answer: %s", verb, what, strerror(errno));
	if (!got || !strncmp(answer, "error: ", 7))
		failed("%s %s: %s", verb, what, got ? answer : "no answer");
}

static int open_node(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		failed("open %s: %s", path, strerror(errno));
	return fd;
}

/* The model's NULL dereference: its host ends, the call gets EIO. */
static void oops(void)
{
	int fd = open_node();
	int ret = ioctl(fd, ROGUE_IOC_NULL);
	int err = errno;

	close(fd);
	if (ret != -1 || err != EIO)
		failed("ROGUE_IOC_NULL: %d (%s), not EIO", ret,
		       ret < 0 ? strerror(err) : "no error");
}

static void good_call(void)
{
	__u64 size = 0;
	int fd = open_node();
	int ret = ioctl(fd, ROGUE_IOC_GET_SIZE, &size);
	int err = errno;

	close(fd);
	if (ret != 0 || size != 4096)
		failed("ROGUE_IOC_GET_SIZE of the fresh host: %d (%s), size "
		       "%llu",
		       ret, ret < 0 ? strerror(err) : "no error",
		       (unsigned long long)size);
}

/* The node of a device just added: at once over FUSE, 10 s at most. */
static void wait_node(void)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	for (int i = 0; i < 1000; i++) {
		if (!stat(path, &st))
			return;
		usleep(10000);
	}
	failed("%s did not appear within 10 s of add", path);
}

int main(int argc, char **argv)
{
	char spec[256];
	long long start, slowest = 0;
	unsigned long n;
	bool add;

	if (argc != 6 || (strcmp(argv[4], "reload") && strcmp(argv[4], "add"))) {
		fprintf(stderr, "usage: cycle-client CONTROL DIR NODE reload|add N\n");
		return 2;
	}
	control = argv[1];
	dir = argv[2];
	node = argv[3];
	add = !strcmp(argv[4], "add");
	n = strtoul(argv[5], NULL, 10);
	snprintf(spec, sizeof(spec), "rogue:name=%s", node);
	setvbuf(stdout, NULL, _IOLBF, 0);
	start = now_ms();
	for (cycle = 1; cycle <= n; cycle++) {
		long long t = now_ms();

		if (add) {
			request("add", spec);
			wait_node();
			oops();
			request("remove", node);
		} else {
			oops();
			request("reload", node);
			good_call();
		}
		t = now_ms() - t;
		if (t > slowest)
			slowest = t;
	}
	printf("%s: %lu cycles in %lld ms, the slowest %lld ms\n", argv[4], n,
	       now_ms() - start, slowest);
	return 0;
}
