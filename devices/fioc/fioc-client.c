/* SPDX-License-Identifier: MIT */
/*
 * A self-checking client of the fioc device node: the FIOC_* ioctls and
 * read/write in the ABI it is built for (-m64 or -m32), reported as TAP.
 * With --fuse-file, of a file of a FUSE mount, which the client asks what
 * it serves (its user.cusemu.needs-cuse attribute): every check where the
 * daemon reaches its callers' memory; else what the kernel serves there
 * (commands whose memory the _IOC bits describe, read, write), and
 * FIOC_READ/FIOC_WRITE, which chase a pointer, refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tap.h"
#include "cusemu/abi/fioc.h"

#define DEFAULT_MAX_SIZE 65536
/* The checks write up to offset 23 and set the size to 16. */
#define MIN_MAX_SIZE 32
#define MAX_MAX_SIZE (1u << 30)
/* What one CUSE transfer carries; a larger FIOC_READ comes back short. */
#define MAX_TRANSFER 131072
#define LARGE_READ 200000
/* Below this a clamped read could not be told from a complete one. */
#define LARGE_READ_MIN_MAX 140000
/* Prefill, so that bytes the device did not write can be told apart. */
#define FILL 0xAA
/* A size of 4 GiB; an i386 size_t holds 4 GiB - 1 at most. */
#define SIZE_4G (sizeof(size_t) > 4 ? (size_t)(UINT64_C(1) << 32) : SIZE_MAX)
/* The bytes just below 4 GiB, where an i386 address space ends. */
#define BELOW_4G(n) ((void *)(uintptr_t)(UINT32_MAX - (n) + 1))

/* Lengths at the edges: none, one, a page less one, a page and one. */
static const size_t edge_sizes[] = { 0, 1, 4095, 4097 };
#define EDGE_TOTAL 8193

static void *xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		bail("cannot allocate a test buffer");
	return p;
}

static bool expect_bytes(const char *desc, const void *got, const void *want,
			 size_t n)
{
	const unsigned char *g = got, *w = want;
	size_t i;

	for (i = 0; i < n && g[i] == w[i]; i++)
		;
	return report(i == n, desc, "expected 0x%02x at byte %zu, got 0x%02x",
		      i < n ? w[i] : 0, i, i < n ? g[i] : 0);
}

/* Bytes from..to-1 of buf all equal byte. */
static bool expect_fill(const char *desc, const void *buf, size_t from,
			size_t to, unsigned char byte)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = from; i < to && b[i] == byte; i++)
		;
	return report(i == to, desc, "expected 0x%02x at byte %zu, got 0x%02x",
		      byte, i, i < to ? b[i] : 0);
}

/* Bytes that say where they are, to catch a shifted copy. */
static unsigned char *patterned(size_t size)
{
	unsigned char *p = xmalloc(size);

	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)(i * 7 + 1);
	return p;
}

/* Anonymous memory, untouched until used: for reads of 4 GiB. */
static unsigned char *xmap(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		bail("cannot map a test buffer");
	return p;
}

static long fioc_set(int fd, size_t size)
{
	return ioctl(fd, FIOC_SET_SIZE, &size);
}

static bool expect_set(int fd, const char *desc, size_t size)
{
	return expect_ret(desc, fioc_set(fd, size), 0);
}

static bool expect_size(int fd, const char *desc, size_t want)
{
	size_t size = SIZE_MAX;
	long ret = ioctl(fd, FIOC_GET_SIZE, &size);

	if (ret)
		return report(false, desc, "expected %zu, got %s", want,
			      show_ret(ret, errno));
	return report(size == want, desc, "expected %zu, got %zu", want, size);
}

/* The out fields start at SIZE_MAX, so that a device leaving them shows. */
static long fioc_rw(int fd, unsigned long cmd, struct fioc_rw_arg *arg,
		    off_t offset, void *buf, size_t size)
{
	*arg = (struct fioc_rw_arg){
		.offset = offset,
		.buf = buf,
		.size = size,
		.prev_size = SIZE_MAX,
		.new_size = SIZE_MAX,
	};
	return ioctl(fd, cmd, arg);
}

static bool expect_sizes(const char *desc, const struct fioc_rw_arg *arg,
			 size_t prev, size_t next)
{
	return report(arg->prev_size == prev && arg->new_size == next, desc,
		      "expected %zu -> %zu, got %zu -> %zu", prev, next,
		      arg->prev_size, arg->new_size);
}

static void check_write(int fd)
{
	struct fioc_rw_arg arg;
	char hello[] = "hello world";

	expect_set(fd, "FIOC_SET_SIZE 0 returns 0", 0);
	expect_size(fd, "FIOC_GET_SIZE gives 0", 0);
	expect_ret("FIOC_WRITE of 11 bytes at offset 0 returns 11",
		   fioc_rw(fd, FIOC_WRITE, &arg, 0, hello, 11), 11);
	expect_sizes("FIOC_WRITE reports sizes 0 -> 11", &arg, 0, 11);
	expect_size(fd, "FIOC_GET_SIZE gives 11 after the write", 11);
}

static void check_read(int fd)
{
	struct fioc_rw_arg arg;
	unsigned char buf[64];

	memset(buf, FILL, sizeof(buf));
	expect_ret("FIOC_READ of 64 bytes at offset 0 returns 11",
		   fioc_rw(fd, FIOC_READ, &arg, 0, buf, 64), 11);
	expect_bytes("FIOC_READ gives \"hello world\"", buf, "hello world", 11);
	expect_fill("FIOC_READ leaves bytes 11..63 of the buffer alone",
		    buf, 11, 64, FILL);
	expect_sizes("FIOC_READ reports sizes 11 -> 11", &arg, 11, 11);

	memset(buf, FILL, sizeof(buf));
	expect_ret("FIOC_READ of 5 bytes at offset 6 returns 5",
		   fioc_rw(fd, FIOC_READ, &arg, 6, buf, 5), 5);
	expect_bytes("FIOC_READ at offset 6 gives \"world\"", buf, "world", 5);
}

static void check_gap(int fd)
{
	struct fioc_rw_arg arg;
	char xyz[] = "xyz";
	unsigned char want[23] = "hello world", buf[23];

	memcpy(want + 20, xyz, 3);
	expect_ret("FIOC_WRITE of 3 bytes at offset 20 returns 3",
		   fioc_rw(fd, FIOC_WRITE, &arg, 20, xyz, 3), 3);
	expect_sizes("FIOC_WRITE past the end reports sizes 11 -> 23",
		     &arg, 11, 23);
	memset(buf, FILL, sizeof(buf));
	expect_ret("FIOC_READ of 23 bytes at offset 0 returns 23",
		   fioc_rw(fd, FIOC_READ, &arg, 0, buf, 23), 23);
	expect_bytes("FIOC_READ gives \"hello world\", 9 zero bytes, \"xyz\"",
		     buf, want, 23);
	expect_ret("FIOC_READ at offset 100, past the end, returns 0",
		   fioc_rw(fd, FIOC_READ, &arg, 100, buf, 16), 0);
}

static void check_truncate(int fd)
{
	struct fioc_rw_arg arg;
	unsigned char buf[64];

	expect_set(fd, "FIOC_SET_SIZE 4 returns 0", 4);
	expect_size(fd, "FIOC_GET_SIZE gives 4", 4);
	memset(buf, FILL, sizeof(buf));
	expect_ret("FIOC_READ of 64 bytes after truncation returns 4",
		   fioc_rw(fd, FIOC_READ, &arg, 0, buf, 64), 4);
	expect_bytes("FIOC_READ after truncation gives \"hell\"",
		     buf, "hell", 4);
}

/* The size commands at the limit; the size is 4 before and after. */
static void check_size_limits(int fd, size_t max)
{
	expect_errno("FIOC_SET_SIZE to max size + 1 fails with EINVAL",
		     fioc_set(fd, max + 1), EINVAL);
	expect_size(fd, "size is still 4 after the refused FIOC_SET_SIZE", 4);
	expect_set(fd, "FIOC_SET_SIZE to max size returns 0", max);
	expect_size(fd, "FIOC_GET_SIZE gives max size", max);
	expect_set(fd, "FIOC_SET_SIZE back to 4 returns 0", 4);
}

static void check_limits(int fd, size_t max)
{
	struct fioc_rw_arg arg;
	char xyz[] = "xyz";

	check_size_limits(fd, max);
	expect_errno("FIOC_WRITE ending past max size fails with EINVAL",
		     fioc_rw(fd, FIOC_WRITE, &arg, (off_t)max - 1, xyz, 3),
		     EINVAL);
	expect_size(fd, "size is still 4 after the refused FIOC_WRITE", 4);
}

/*
 * read(2)/write(2) keep one position per open file, from 0. CUSE sends no
 * file offset, so the device keeps the position itself.
 */
static void check_stream(const char *node, int fd, int *fd2, int *fd3)
{
	unsigned char buf[100];

	*fd2 = expect_open(node, O_RDWR, "open a second descriptor");
	expect_ret("write of 8 bytes on the fresh descriptor returns 8",
		   write(*fd2, "ABCDEFGH", 8), 8);
	expect_size(fd, "FIOC_GET_SIZE gives 8 after the write", 8);

	*fd3 = expect_open(node, O_RDWR, "open a third descriptor");
	memset(buf, FILL, sizeof(buf));
	expect_ret("read of 100 bytes on the fresh descriptor returns 8",
		   read(*fd3, buf, 100), 8);
	expect_bytes("read gives \"ABCDEFGH\"", buf, "ABCDEFGH", 8);
	expect_ret("the next read returns 0 (end of buffer)",
		   read(*fd3, buf, 100), 0);
}

static void check_write_cap(const char *node, size_t max, int *fd4)
{
	unsigned char *data = xmalloc(max + 100);

	memset(data, 'x', max + 100);
	*fd4 = expect_open(node, O_RDWR, "open a fourth descriptor");
	expect_set(*fd4, "FIOC_SET_SIZE 0 before filling the buffer", 0);
	expect_ret("write of max size + 100 bytes returns max size",
		   write(*fd4, data, max + 100), (long)max);
	expect_errno("a further write of 1 byte fails with ENOSPC",
		     write(*fd4, data, 1), ENOSPC);
	expect_size(*fd4, "FIOC_GET_SIZE gives max size after the writes", max);
	expect_set(*fd4, "FIOC_SET_SIZE 0 after the writes", 0);
	free(data);
}

static void check_large_read(int fd, size_t max)
{
	size_t size = max < LARGE_READ ? max : LARGE_READ;
	const char *desc = "large FIOC_READ clamped";
	struct fioc_rw_arg arg;
	unsigned char *buf;
	long ret;

	if (max < LARGE_READ_MIN_MAX) {
		ntests++;
		printf("ok %d - %s # SKIP max size too small\n", ntests, desc);
		return;
	}
	expect_set(fd, "FIOC_SET_SIZE to min(max size, 200000) returns 0",
		   size);
	buf = xmalloc(size);
	memset(buf, FILL, size);
	ret = fioc_rw(fd, FIOC_READ, &arg, 0, buf, size);
	if (report(ret > 0 && ret <= MAX_TRANSFER, desc,
		   "expected 1..%d, got %s", MAX_TRANSFER,
		   show_ret(ret, errno)))
		expect_fill("the clamped FIOC_READ gives zeros", buf, 0,
			    (size_t)ret, 0);
	free(buf);
}

/* FIOC_WRITE, then FIOC_READ, of each edge size: n bytes, no byte more. */
static void check_edge_sizes(int fd)
{
	unsigned char *data = patterned(EDGE_TOTAL), *buf = xmalloc(8192);
	struct fioc_rw_arg arg;
	char desc[128];

	expect_set(fd, "FIOC_SET_SIZE 0 before the edge sizes", 0);
	for (size_t i = 0; i < sizeof(edge_sizes) / sizeof(*edge_sizes); i++) {
		size_t n = edge_sizes[i];

		snprintf(desc, sizeof(desc),
			 "FIOC_WRITE of %zu bytes at offset 0 returns %zu", n, n);
		expect_ret(desc, fioc_rw(fd, FIOC_WRITE, &arg, 0, data, n),
			   (long)n);
		memset(buf, FILL, 8192);
		snprintf(desc, sizeof(desc),
			 "FIOC_READ of %zu bytes at offset 0 returns %zu", n, n);
		expect_ret(desc, fioc_rw(fd, FIOC_READ, &arg, 0, buf, n),
			   (long)n);
		snprintf(desc, sizeof(desc), "... gives the %zu bytes written",
			 n);
		if (expect_bytes(desc, buf, data, n))
			expect_fill("... and writes nothing past them", buf, n,
				    8192, FILL);
	}
	memset(buf, FILL, 8192);
	expect_ret("FIOC_READ of 4 GiB (4 GiB - 1 for i386) into 8 KiB returns "
		   "the 4097 bytes there are",
		   fioc_rw(fd, FIOC_READ, &arg, 0, buf, SIZE_4G), 4097);
	expect_fill("... and writes nothing past them", buf, 4097, 8192, FILL);
	expect_errno("FIOC_WRITE of 4 GiB (4 GiB - 1 for i386) fails with "
		     "EINVAL", fioc_rw(fd, FIOC_WRITE, &arg, 0, data, SIZE_4G),
		     EINVAL);
	expect_errno("FIOC_SET_SIZE 4 GiB (4 GiB - 1 for i386) fails with "
		     "EINVAL", fioc_set(fd, SIZE_4G), EINVAL);
	expect_size(fd, "size is still 4097 after the 4 GiB calls", 4097);
	free(data);
	free(buf);
}

static void check_offsets(int fd)
{
	struct fioc_rw_arg arg;
	char buf[16] = "0123456789abcdef";

	expect_errno("FIOC_READ at offset -1 fails with EINVAL",
		     fioc_rw(fd, FIOC_READ, &arg, -1, buf, 16), EINVAL);
	expect_errno("FIOC_WRITE at offset -1 fails with EINVAL",
		     fioc_rw(fd, FIOC_WRITE, &arg, -1, buf, 16), EINVAL);
	expect_errno("FIOC_WRITE at offset INT64_MIN fails with EINVAL",
		     fioc_rw(fd, FIOC_WRITE, &arg, INT64_MIN, buf, 16), EINVAL);
	expect_ret("FIOC_READ at offset INT64_MAX returns 0",
		   fioc_rw(fd, FIOC_READ, &arg, INT64_MAX, buf, 16), 0);
	expect_errno("FIOC_WRITE at offset INT64_MAX fails with EINVAL",
		     fioc_rw(fd, FIOC_WRITE, &arg, INT64_MAX, buf, 16), EINVAL);
	expect_size(fd, "size is still 4097 after the bad offsets", 4097);
}

/*
 * Just below 4 GiB an i386 address space ends: a range crossing 4 GiB is
 * refused by the daemon itself, one below it by the kernel's copy (the
 * page is never mapped). An x86_64 caller has no memory there either.
 */
static void check_near_4g(int fd)
{
	struct fioc_rw_arg arg;

	expect_errno("FIOC_READ of 4097 bytes into the last page below 4 GiB "
		     "(crossing 4 GiB) fails with EFAULT",
		     fioc_rw(fd, FIOC_READ, &arg, 0, BELOW_4G(4096), 4097),
		     EFAULT);
	expect_errno("FIOC_READ of 4096 bytes into the last page below 4 GiB "
		     "fails with EFAULT",
		     fioc_rw(fd, FIOC_READ, &arg, 0, BELOW_4G(4096), 4096),
		     EFAULT);
	expect_errno("FIOC_WRITE from the last 16 bytes below 4 GiB fails "
		     "with EFAULT",
		     fioc_rw(fd, FIOC_WRITE, &arg, 0, BELOW_4G(16), 16),
		     EFAULT);
	expect_errno("FIOC_READ with its argument in the last 16 bytes below "
		     "4 GiB (crossing 4 GiB) fails with EFAULT",
		     ioctl(fd, FIOC_READ, BELOW_4G(16)), EFAULT);
	expect_errno("FIOC_GET_SIZE into the last 2 bytes below 4 GiB "
		     "(crossing 4 GiB) fails with EFAULT",
		     ioctl(fd, FIOC_GET_SIZE, BELOW_4G(2)), EFAULT);
	expect_size(fd, "size is still 4097 after the calls near 4 GiB", 4097);
}

/* read(2) and write(2) of the edge sizes, then of 4 GiB. */
static void check_stream_sizes(const char *node, size_t max)
{
	/* Room for what the device holds and one more transfer. */
	size_t room = max + MAX_TRANSFER;
	/* Kept from the compiler, which rightly sees no such buffer. */
	volatile size_t size_4g = SIZE_4G;
	unsigned char *data = patterned(EDGE_TOTAL), *buf = xmap(room);
	int w = expect_open(node, O_RDWR, "open a descriptor to write the edge sizes");
	int r = expect_open(node, O_RDWR, "open a descriptor to read them");
	size_t off = 0;
	char desc[128];

	expect_set(w, "FIOC_SET_SIZE 0 before the stream edge sizes", 0);
	for (size_t i = 0; i < sizeof(edge_sizes) / sizeof(*edge_sizes); i++) {
		size_t n = edge_sizes[i];

		snprintf(desc, sizeof(desc), "write() of %zu bytes returns %zu",
			 n, n);
		expect_ret(desc, write(w, data + off, n), (long)n);
		off += n;
	}
	off = 0;
	for (size_t i = 0; i < sizeof(edge_sizes) / sizeof(*edge_sizes); i++) {
		size_t n = edge_sizes[i];

		memset(buf, FILL, 8192);
		snprintf(desc, sizeof(desc), "read() of %zu bytes returns %zu",
			 n, n);
		expect_ret(desc, read(r, buf, n), (long)n);
		snprintf(desc, sizeof(desc),
			 "... gives the next %zu bytes written", n);
		if (expect_bytes(desc, buf, data + off, n))
			expect_fill("... and writes nothing past them", buf, n,
				    8192, FILL);
		off += n;
	}
	close(r);
	r = expect_open(node, O_RDWR, "open a descriptor to read 4 GiB");
	memset(buf, FILL, 2 * EDGE_TOTAL);
	expect_ret("read() of 4 GiB (4 GiB - 1 for i386) returns the 8193 "
		   "bytes there are", read(r, buf, size_4g), EDGE_TOTAL);
	if (expect_bytes("... the bytes written", buf, data, EDGE_TOTAL))
		expect_fill("... and nothing past them", buf, EDGE_TOTAL,
			    2 * EDGE_TOTAL, FILL);
	close(r);
	close(w);
	w = expect_open(node, O_RDWR, "open a descriptor to write 4 GiB");
	expect_ret("write() of 4 GiB (4 GiB - 1 for i386) stops at max size",
		   write(w, buf, size_4g), (long)max);
	expect_size(w, "FIOC_GET_SIZE gives max size after it", max);
	expect_set(w, "FIOC_SET_SIZE 16 after the stream edge sizes", 16);
	close(w);
	munmap(buf, room);
	free(data);
}

static void check_prot_none(int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p, page, PROT_NONE))
		bail("cannot make a PROT_NONE page");
	expect_errno("FIOC_GET_SIZE into a PROT_NONE page fails with EFAULT",
		     ioctl(fd, FIOC_GET_SIZE, p), EFAULT);
	expect_size(fd, "FIOC_GET_SIZE gives 16 after the PROT_NONE page", 16);
	munmap(p, page);
}

/* A client's bad pointer fails its own call, and the device serves on. */
static void check_bad_pointers(int fd)
{
	/* Kept from the compiler, which would refuse the read() into it. */
	void *volatile bad = (void *)8;
	struct fioc_rw_arg arg;

	expect_set(fd, "FIOC_SET_SIZE 16 before the bad pointers", 16);
	expect_errno("FIOC_GET_SIZE to address 8 fails with EFAULT",
		     ioctl(fd, FIOC_GET_SIZE, bad), EFAULT);
	expect_size(fd, "FIOC_GET_SIZE gives 16 after the bad FIOC_GET_SIZE",
		    16);
	expect_errno("FIOC_SET_SIZE from address 8 fails with EFAULT",
		     ioctl(fd, FIOC_SET_SIZE, bad), EFAULT);
	expect_size(fd, "size is still 16 after the bad FIOC_SET_SIZE", 16);
	expect_errno("FIOC_READ with its argument at address 8 fails with "
		     "EFAULT", ioctl(fd, FIOC_READ, bad), EFAULT);
	expect_size(fd, "FIOC_GET_SIZE gives 16 after the bad FIOC_READ "
		    "argument", 16);
	expect_errno("FIOC_READ into a buffer at address 8 fails with EFAULT",
		     fioc_rw(fd, FIOC_READ, &arg, 0, bad, 16), EFAULT);
	expect_size(fd, "FIOC_GET_SIZE gives 16 after the bad FIOC_READ buffer",
		    16);
	expect_errno("FIOC_WRITE from a buffer at address 8 fails with EFAULT",
		     fioc_rw(fd, FIOC_WRITE, &arg, 0, bad, 16), EFAULT);
	expect_size(fd, "size is still 16 after the bad FIOC_WRITE", 16);
	expect_errno("read() into address 8 fails with EFAULT",
		     read(fd, bad, 16), EFAULT);
	expect_errno("write() from address 8 fails with EFAULT",
		     write(fd, bad, 16), EFAULT);
	expect_size(fd, "size is still 16 after the bad read() and write()",
		    16);
	check_prot_none(fd);
}

static void check_unknown(int fd)
{
	int v = 0;

	expect_errno("unknown command _IO('E', 99) fails with ENOTTY",
		     ioctl(fd, _IO('E', 99)), ENOTTY);
	expect_errno("unknown command _IOR('Z', 1, int) fails with ENOTTY",
		     ioctl(fd, _IOR('Z', 1, int), &v), ENOTTY);
}

/* The buffer belongs to the device, not to its open files. */
static void check_reopen(const char *node, const int *fds, int n)
{
	long ret = 0;
	int i, err = 0, fd;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0 && close(fds[i]) && !err) {
			ret = -1;
			err = errno;
		}
	}
	report(!ret, "close every descriptor", "expected 0, got %s",
	       show_ret(ret, err));
	fd = expect_open(node, O_RDWR, "reopen the node");
	expect_size(fd, "FIOC_GET_SIZE on the reopened node gives 16", 16);
	if (fd >= 0)
		close(fd);
}

/*
 * A file of a FUSE mount: the kernel copies only what the _IOC bits
 * describe, so the commands that chase a pointer fail, and nothing moves.
 */
static void check_pointers_refused(int fd)
{
	struct fioc_rw_arg arg;
	char buf[16];

	memset(buf, FILL, sizeof(buf));
	expect_errno("FIOC_READ, which chases a pointer, fails with "
		     "EOPNOTSUPP on a FUSE file",
		     fioc_rw(fd, FIOC_READ, &arg, 0, buf, sizeof(buf)),
		     EOPNOTSUPP);
	expect_fill("... and writes nothing", buf, 0, sizeof(buf), FILL);
	expect_errno("FIOC_WRITE, which chases a pointer, fails with "
		     "EOPNOTSUPP on a FUSE file",
		     fioc_rw(fd, FIOC_WRITE, &arg, 0, buf, sizeof(buf)),
		     EOPNOTSUPP);
	expect_size(fd, "size is still 4 after them", 4);
}

/*
 * Whether a FUSE file serves FIOC_READ and FIOC_WRITE, as the daemon says
 * (fusefs.c): they chase a pointer, which only a daemon that reaches its
 * callers' memory can follow. Exits when the file does not say.
 */
static bool fuse_serves_pointers(int fd)
{
	char needs[4096];
	ssize_t n = fgetxattr(fd, "user.cusemu.needs-cuse", needs,
			      sizeof(needs) - 1);

	if (n < 0) {
		printf("Bail out! the file does not say what it serves "
		       "(user.cusemu.needs-cuse: %s): is it a file of "
		       "cusemud --fuse?\n", strerror(errno));
		exit(1);
	}
	needs[n] = '\0';
	printf("# over FUSE, needs CUSE: %s\n", n ? needs : "nothing");
	return !strchr(needs, '*') && !strstr(needs, "FIOC_READ") &&
	       !strstr(needs, "FIOC_WRITE");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fioc-client [--max-size BYTES] [--fuse-file] NODE\n");
	exit(2);
}

static const char *parse_args(int argc, char **argv, size_t *max,
			      bool *fuse_file)
{
	static const struct option options[] = {
		{ "max-size", required_argument, NULL, 'm' },
		{ "fuse-file", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (c == 'f') {
			*fuse_file = true;
			continue;
		}
		if (c != 'm')
			usage();
		errno = 0;
		v = strtoull(optarg, &end, 10);
		if (errno || end == optarg || *end || *optarg == '-' ||
		    v < MIN_MAX_SIZE || v > MAX_MAX_SIZE) {
			fprintf(stderr, "fioc-client: --max-size takes %d to %u bytes\n",
				MIN_MAX_SIZE, MAX_MAX_SIZE);
			usage();
		}
		*max = v;
	}
	if (optind != argc - 1)
		usage();
	return argv[optind];
}

int main(int argc, char **argv)
{
	int fds[4] = { -1, -1, -1, -1 };
	size_t max = DEFAULT_MAX_SIZE;
	bool fuse_file = false;
	const char *node = parse_args(argc, argv, &max, &fuse_file);

	/* A hang in the daemon should still show how far the checks got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* What the caller's ABI decides: the width of long (and size_t). */
	printf("# fioc-client: ABI %s\n",
	       sizeof(long) == 4 ? "i386" : "x86_64");
	fds[0] = expect_open(node, O_RDWR, "open the node read-write");
	if (fds[0] < 0) {
		printf("1..%d\n", ntests);
		return 1;
	}
	if (fuse_file && !fuse_serves_pointers(fds[0])) {
		expect_set(fds[0], "FIOC_SET_SIZE 4 returns 0", 4);
		expect_size(fds[0], "FIOC_GET_SIZE gives 4", 4);
		check_size_limits(fds[0], max);
		check_pointers_refused(fds[0]);
		check_stream(node, fds[0], &fds[1], &fds[2]);
		check_write_cap(node, max, &fds[3]);
		check_stream_sizes(node, max);
		check_unknown(fds[0]);
		check_reopen(node, fds, 4);
		printf("1..%d\n", ntests);
		return nfailed ? 1 : 0;
	}
	check_write(fds[0]);
	check_read(fds[0]);
	check_gap(fds[0]);
	check_truncate(fds[0]);
	check_limits(fds[0], max);
	check_stream(node, fds[0], &fds[1], &fds[2]);
	check_write_cap(node, max, &fds[3]);
	check_large_read(fds[0], max);
	check_edge_sizes(fds[0]);
	check_offsets(fds[0]);
	check_near_4g(fds[0]);
	check_stream_sizes(node, max);
	check_bad_pointers(fds[0]);
	check_unknown(fds[0]);
	check_reopen(node, fds, 4);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
