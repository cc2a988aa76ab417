/* SPDX-License-Identifier: MIT */
/*
 * probe-client: one ioctl on a probe node, printing how the daemon served
 * it (`method=... big_lock_depth=N compat=N`) or the errno's name. Built
 * -m64 and -m32, so the same command shows both ABIs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cusemu/abi/probe.h"
#include "tap.h"

static void print_report(const struct cusemu_ioctl_report *r)
{
	const char *name = cusemu_report_method_name(r->method);

	printf("method=%s big_lock_depth=%u compat=%u\n", name ? name : "none",
	       r->big_lock_depth, r->compat);
}

int main(int argc, char **argv)
{
	struct cusemu_ioctl_report r = { 0 };
	unsigned long who = 0;
	const char *op;
	int fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: probe-client NODE report|who|native-only|"
				"unknown|claim-fioc-read\n");
		return 2;
	}
	op = argv[2];
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "probe-client: %s: %s\n", argv[1],
			strerror(errno));
		return 2;
	}
	if (!strcmp(op, "report"))
		ret = ioctl(fd, PROBE_REPORT, &r);
	else if (!strcmp(op, "native-only"))
		ret = ioctl(fd, PROBE_NATIVE_ONLY, &r);
	else if (!strcmp(op, "who"))
		ret = ioctl(fd, PROBE_WHO, &who);
	else if (!strcmp(op, "unknown"))
		ret = ioctl(fd, _IOR('P', 99, int), &who);
	else if (!strcmp(op, "claim-fioc-read"))
		ret = ioctl(fd, PROBE_CLAIM_FIOC_READ, 0);
	else {
		fprintf(stderr, "probe-client: unknown operation '%s'\n", op);
		return 2;
	}
	if (ret < 0) {
		int err = errno;

		/* tap.c's names; the number for one it does not know */
		if (strcmp(errno_name(err), "errno"))
			printf("errno=%s\n", errno_name(err));
		else
			printf("errno=%d\n", err);
		return 1;
	}
	if (!strcmp(op, "who") || !strcmp(op, "claim-fioc-read")) {
		if (!strcmp(op, "claim-fioc-read"))
			who = (unsigned long)ret;
		r.method = PROBE_WHO_METHOD(who);
		r.big_lock_depth = PROBE_WHO_DEPTH(who);
		r.compat = PROBE_WHO_COMPAT(who);
	}
	print_report(&r);
	close(fd);
	return 0;
}
