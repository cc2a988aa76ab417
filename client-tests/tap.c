/* SPDX-License-Identifier: MIT */
/* TAP output for the self-checking clients (tap.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

int ntests, nfailed;

#define ERRNO_NAME(e) { e, #e }
static const struct {
	int err;
	const char *name;
} errno_names[] = {
	ERRNO_NAME(EFAULT), ERRNO_NAME(ENOTTY), ERRNO_NAME(EINVAL),
	ERRNO_NAME(ENOSPC), ERRNO_NAME(ERANGE), ERRNO_NAME(EBUSY),
	ERRNO_NAME(EAGAIN), ERRNO_NAME(EINTR), ERRNO_NAME(EIO),
	ERRNO_NAME(ENOMEM), ERRNO_NAME(ENOENT), ERRNO_NAME(EACCES),
	ERRNO_NAME(EPERM), ERRNO_NAME(ENODEV), ERRNO_NAME(ENXIO),
	ERRNO_NAME(EBADF), ERRNO_NAME(ENOSYS), ERRNO_NAME(EOVERFLOW),
	ERRNO_NAME(EOPNOTSUPP), ERRNO_NAME(ECONNABORTED),
	ERRNO_NAME(EREMOTEIO), ERRNO_NAME(ETIMEDOUT), ERRNO_NAME(EPROTO),
	ERRNO_NAME(EBADMSG), ERRNO_NAME(ENOTCONN),
};

const char *errno_name(int err)
{
	size_t i;

	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return "errno";
}

const char *show_ret(long ret, int err)
{
	static char buf[160];

	if (ret == -1)
		snprintf(buf, sizeof(buf), "-1 (%s/%s)", errno_name(err),
			 strerror(err));
	else
		snprintf(buf, sizeof(buf), "%ld", ret);
	return buf;
}

/*
 * With CUSEMU_TAP_ANSWERS set, a passing check's line is followed by
 * "# = " and its why, which says what was expected and what came: the
 * answer it judged. Two servers answered a client alike when those lines
 * are the same (suite/10-fioc.sh compares cusemud and a kernel module).
 */
bool report(bool ok, const char *desc, const char *why, ...)
{
	static int answers = -1;
	va_list ap;

	if (answers < 0)
		answers = getenv("CUSEMU_TAP_ANSWERS") != NULL;
	ntests++;
	if (ok) {
		printf("ok %d - %s\n", ntests, desc);
		if (answers && why && *why) {
			fputs("# = ", stdout);
			va_start(ap, why);
			vprintf(why, ap);
			va_end(ap);
			putchar('\n');
		}
		return true;
	}
	nfailed++;
	printf("not ok %d - %s: ", ntests, desc);
	va_start(ap, why);
	vprintf(why, ap);
	va_end(ap);
	putchar('\n');
	return false;
}

void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

bool expect_ret(const char *desc, long got, long want)
{
	int err = errno;

	return report(got == want, desc, "expected %ld, got %s", want,
		      show_ret(got, err));
}

bool expect_errno(const char *desc, long got, int want)
{
	int err = errno;

	return report(got == -1 && err == want, desc,
		      "expected -1 (%s), got %s", errno_name(want),
		      show_ret(got, err));
}

int expect_open(const char *node, int flags, const char *desc)
{
	int fd = open(node, flags);

	report(fd >= 0, desc, "expected a descriptor, got %s",
	       show_ret(fd, errno));
	return fd;
}
