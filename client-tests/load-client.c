/* SPDX-License-Identifier: MIT */
/*
 * A load generator and prober of the legacy, slow and fioc nodes: N processes
 * each run one ioctl M times, and their latencies come out as one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cusemu/abi/fioc.h"
#include "cusemu/abi/legacy.h"
#include "cusemu/abi/slow.h"

#define MAX_PROCS 256u
/* procs * iterations: the parent keeps every latency, 8 bytes each. */
#define MAX_SAMPLES 10000000ull

/* What one op gives back, for the ops that print it. */
struct op_ctx {
	int fd;
	const char *node;	/* open-close opens it again */
	__u32 value;		/* list-add: the value; hold-us: microseconds */
	long counter;
	__u32 len;
	size_t size;
	struct cusemu_ioctl_report report;
};

struct op {
	const char *name;
	long (*run)(struct op_ctx *c);
	/* NULL for ops that print nothing of their own. */
	void (*print)(const struct op_ctx *c);
	/* --value when none is given; -1: the iteration number. */
	int64_t default_value;
};

struct options {
	unsigned int procs;
	unsigned long iterations;
	int64_t value;		/* -1: not given */
	const char *node;
	const struct op *op;
};

/* What a child sends up its pipe, followed by `count` latencies in ns. */
struct child_summary {
	uint64_t ok, errors;
	uint64_t start_ns, end_ns;
	uint64_t count;
	int32_t first_errno;
	uint32_t reserved;
};

#define ERRNO_NAME(e) { e, #e }
static const struct {
	int err;
	const char *name;
} errno_names[] = {
	ERRNO_NAME(EFAULT), ERRNO_NAME(ENOTTY), ERRNO_NAME(EINVAL),
	ERRNO_NAME(ENOSPC), ERRNO_NAME(EIO), ERRNO_NAME(ENOMEM),
	ERRNO_NAME(ENOENT), ERRNO_NAME(EACCES), ERRNO_NAME(EPERM),
	ERRNO_NAME(ENODEV), ERRNO_NAME(ENXIO), ERRNO_NAME(EBADF),
	ERRNO_NAME(ENOSYS), ERRNO_NAME(EAGAIN), ERRNO_NAME(EINTR),
	ERRNO_NAME(EOVERFLOW), ERRNO_NAME(EBUSY), ERRNO_NAME(ECONNABORTED),
	ERRNO_NAME(ENOTCONN), ERRNO_NAME(ETIMEDOUT), ERRNO_NAME(ECHILD),
	ERRNO_NAME(ERANGE),
};

static const char *errno_name(int err)
{
	static char buf[32];
	size_t i;

	if (!err)
		return "none";
	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	snprintf(buf, sizeof(buf), "errno%d", err);
	return buf;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long op_inc(struct op_ctx *c)
{
	return ioctl(c->fd, LEGACY_INC);
}

static long op_get(struct op_ctx *c)
{
	return ioctl(c->fd, LEGACY_GET, &c->counter);
}

static long op_list_add(struct op_ctx *c)
{
	return ioctl(c->fd, LEGACY_LIST_ADD, &c->value);
}

static long op_list_len(struct op_ctx *c)
{
	return ioctl(c->fd, LEGACY_LIST_LEN, &c->len);
}

static long op_reset(struct op_ctx *c)
{
	return ioctl(c->fd, LEGACY_RESET);
}

static long op_report_legacy(struct op_ctx *c)
{
	return ioctl(c->fd, LEGACY_REPORT, &c->report);
}

static long op_report_slow(struct op_ctx *c)
{
	return ioctl(c->fd, SLOW_REPORT, &c->report);
}

static long op_sleep_report_slow(struct op_ctx *c)
{
	return ioctl(c->fd, SLOW_SLEEP_REPORT, &c->report);
}

static long op_hold(struct op_ctx *c)
{
	return ioctl(c->fd, SLOW_HOLD);
}

static long op_hold_us(struct op_ctx *c)
{
	return ioctl(c->fd, SLOW_HOLD_US, &c->value);
}

static long op_fioc_size(struct op_ctx *c)
{
	return ioctl(c->fd, FIOC_GET_SIZE, &c->size);
}

/* The file of each iteration is closed and the node opened afresh. */
static long op_open_close(struct op_ctx *c)
{
	close(c->fd);
	c->fd = open(c->node, O_RDWR);
	return c->fd;
}

static void print_counter(const struct op_ctx *c)
{
	printf("counter=%ld\n", c->counter);
}

static void print_len(const struct op_ctx *c)
{
	printf("list_len=%" PRIu32 "\n", (uint32_t)c->len);
}

static void print_size(const struct op_ctx *c)
{
	printf("size=%zu\n", c->size);
}

static void print_report(const struct op_ctx *c)
{
	const char *name = cusemu_report_method_name(c->report.method);
	char buf[32];

	if (!name) {
		snprintf(buf, sizeof(buf), "unknown(%" PRIu32 ")",
			 (uint32_t)c->report.method);
		name = c->report.method ? buf : "none";
	}
	printf("method=%s big_lock_depth=%" PRIu32 " compat=%" PRIu32 "\n",
	       name, (uint32_t)c->report.big_lock_depth,
	       (uint32_t)c->report.compat);
}

static const struct op ops[] = {
	{ "inc", op_inc, NULL, 0 },
	{ "get", op_get, print_counter, 0 },
	{ "list-add", op_list_add, NULL, -1 },
	{ "list-len", op_list_len, print_len, 0 },
	{ "reset", op_reset, NULL, 0 },
	{ "report-legacy", op_report_legacy, print_report, 0 },
	{ "report-slow", op_report_slow, print_report, 0 },
	{ "sleep-report-slow", op_sleep_report_slow, print_report, 0 },
	{ "hold", op_hold, NULL, 0 },
	{ "hold-us", op_hold_us, NULL, 1000 },
	{ "fioc-size", op_fioc_size, print_size, 0 },
	{ "open-close", op_open_close, NULL, 0 },
};

static bool single_print(const struct options *o)
{
	return o->procs == 1 && o->iterations == 1 && o->op->print;
}

static bool write_all(int fd, const void *buf, size_t size)
{
	const char *p = buf;
	ssize_t n;

	while (size) {
		n = write(fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		size -= (size_t)n;
	}
	return true;
}

static bool read_all(int fd, void *buf, size_t size)
{
	char *p = buf;
	ssize_t n;

	while (size) {
		n = read(fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		size -= (size_t)n;
	}
	return true;
}

/* Returns the descriptor open at the end: open-close replaces it. */
static int run_ops(const struct options *o, int fd, uint64_t *lat,
		   struct child_summary *s)
{
	struct op_ctx c = { .fd = fd, .node = o->node };
	unsigned long i;
	uint64_t t0;
	long ret;

	s->start_ns = now_ns();
	for (i = 0; i < o->iterations; i++) {
		c.value = o->value >= 0 ? (__u32)o->value : (__u32)i;
		t0 = now_ns();
		ret = o->op->run(&c);
		lat[s->count++] = now_ns() - t0;
		if (ret >= 0) {
			s->ok++;
		} else {
			if (!s->first_errno)
				s->first_errno = errno;
			s->errors++;
		}
	}
	s->end_ns = now_ns();
	if (single_print(o) && s->ok)
		o->op->print(&c);
	return c.fd;
}

/* One load process: open, wait for the start, run, report up the pipe. */
static void child_main(const struct options *o, int start_fd, int out_fd)
{
	struct child_summary s = { 0 };
	uint64_t *lat = calloc(o->iterations, sizeof(*lat));
	char go;
	int fd;

	if (!lat) {
		fprintf(stderr, "load-client: cannot allocate latencies\n");
		_exit(1);
	}
	fd = open(o->node, O_RDWR);
	if (fd < 0) {
		s.first_errno = errno;
		s.errors = o->iterations;
		fprintf(stderr, "load-client: open %s: %s\n", o->node,
			strerror(errno));
	}
	while (read(start_fd, &go, 1) < 0 && errno == EINTR)
		;
	if (fd >= 0) {
		fd = run_ops(o, fd, lat, &s);
		if (fd >= 0)
			close(fd);
	}
	fflush(stdout);
	if (!write_all(out_fd, &s, sizeof(s)) ||
	    !write_all(out_fd, lat, s.count * sizeof(*lat)))
		_exit(1);
	_exit(0);
}

struct totals {
	uint64_t ok, errors;
	uint64_t start_ns, end_ns;
	int first_errno;
	uint64_t *lat;
	size_t nlat;
	bool broken;		/* a child did not report */
};

static void merge_child(struct totals *t, const struct options *o, int fd)
{
	struct child_summary s;

	if (!read_all(fd, &s, sizeof(s)) || s.count > o->iterations ||
	    !read_all(fd, t->lat + t->nlat, s.count * sizeof(*t->lat))) {
		t->broken = true;
		t->errors += o->iterations;
		return;
	}
	t->ok += s.ok;
	t->errors += s.errors;
	t->nlat += s.count;
	if (!t->first_errno)
		t->first_errno = s.first_errno;
	if (s.count) {
		if (!t->start_ns || s.start_ns < t->start_ns)
			t->start_ns = s.start_ns;
		if (s.end_ns > t->end_ns)
			t->end_ns = s.end_ns;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank, in whole microseconds. */
static uint64_t percentile_us(const uint64_t *sorted, size_t n, unsigned int p)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (n * p + 99) / 100;
	return (sorted[rank ? rank - 1 : 0] + 500) / 1000;
}

static void print_summary(const struct options *o, struct totals *t)
{
	uint64_t elapsed = t->end_ns - t->start_ns;
	uint64_t done = t->ok + t->errors;

	qsort(t->lat, t->nlat, sizeof(*t->lat), cmp_u64);
	printf("op=%s procs=%u iterations=%lu ok=%" PRIu64 " errors=%" PRIu64
	       " first_errno=%s elapsed_ms=%" PRIu64 " ops_per_s=%" PRIu64
	       " p50_us=%" PRIu64 " p90_us=%" PRIu64 " p99_us=%" PRIu64
	       " max_us=%" PRIu64 "\n",
	       o->op->name, o->procs, o->iterations, t->ok, t->errors,
	       errno_name(t->first_errno), (elapsed + 500000) / 1000000,
	       elapsed ? done * 1000000000u / elapsed : 0,
	       percentile_us(t->lat, t->nlat, 50),
	       percentile_us(t->lat, t->nlat, 90),
	       percentile_us(t->lat, t->nlat, 99),
	       t->nlat ? (t->lat[t->nlat - 1] + 500) / 1000 : 0);
}

/*
 * Forks the children, which start together once `start` is closed; returns
 * how many started.
 */
static unsigned int spawn(const struct options *o, int *out, pid_t *pids)
{
	int start[2], pipefd[2];
	unsigned int i, j;

	if (pipe(start))
		return 0;
	for (i = 0; i < o->procs; i++) {
		if (pipe(pipefd))
			break;
		fflush(stdout);
		pids[i] = fork();
		if (pids[i] < 0) {
			close(pipefd[0]);
			close(pipefd[1]);
			break;
		}
		if (!pids[i]) {
			close(start[1]);
			close(pipefd[0]);
			for (j = 0; j < i; j++)
				close(out[j]);
			child_main(o, start[0], pipefd[1]);
		}
		close(pipefd[1]);
		out[i] = pipefd[0];
	}
	close(start[0]);
	close(start[1]);
	return i;
}

static int run(const struct options *o)
{
	struct totals t = { 0 };
	int *out = calloc(o->procs, sizeof(*out));
	pid_t *pids = calloc(o->procs, sizeof(*pids));
	unsigned int i, started;
	int status;

	t.lat = calloc((size_t)o->procs * o->iterations, sizeof(*t.lat));
	if (!out || !pids || !t.lat) {
		fprintf(stderr, "load-client: cannot allocate latencies\n");
		return 1;
	}
	started = spawn(o, out, pids);
	if (started < o->procs) {
		fprintf(stderr, "load-client: started %u of %u processes: %s\n",
			started, o->procs, strerror(errno));
		t.broken = true;
		t.errors += (uint64_t)(o->procs - started) * o->iterations;
	}
	for (i = 0; i < started; i++) {
		merge_child(&t, o, out[i]);
		close(out[i]);
	}
	for (i = 0; i < started; i++) {
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			t.broken = true;
	}
	if (t.broken) {
		fprintf(stderr, "load-client: a load process failed\n");
		if (!t.first_errno)
			t.first_errno = ECHILD;
	}
	if (!single_print(o) || t.errors || t.broken)
		print_summary(o, &t);
	free(t.lat);
	free(pids);
	free(out);
	return t.errors || t.broken ? 1 : 0;
}

static void usage(void)
{
	size_t i;

	fprintf(stderr,
		"usage: load-client [--procs N] [--iterations M] [--value V] "
		"NODE OP\n"
		"OP:");
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		fprintf(stderr, " %s", ops[i].name);
	fprintf(stderr,
		"\n--value: list-add's value (default: the iteration number),"
		" hold-us's microseconds (default 1000)\n");
	exit(2);
}

static unsigned long long parse_number(const char *what, const char *s,
				       unsigned long long min,
				       unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "load-client: %s takes %llu to %llu\n", what,
			min, max);
		usage();
	}
	return v;
}

static const struct op *find_op(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	fprintf(stderr, "load-client: unknown op '%s'\n", name);
	usage();
	return NULL;
}

static void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option options[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "value", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:i:v:h", options, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->procs = parse_number("--procs", optarg, 1,
						MAX_PROCS);
			break;
		case 'i':
			o->iterations = parse_number("--iterations", optarg, 1,
						     MAX_SAMPLES);
			break;
		case 'v':
			o->value = parse_number("--value", optarg, 0,
						UINT32_MAX);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 2)
		usage();
	o->node = argv[optind];
	o->op = find_op(argv[optind + 1]);
	if ((unsigned long long)o->procs * o->iterations > MAX_SAMPLES) {
		fprintf(stderr, "load-client: --procs times --iterations is at "
			"most %llu\n", MAX_SAMPLES);
		usage();
	}
	if (o->value < 0)
		o->value = o->op->default_value;
}

int main(int argc, char **argv)
{
	struct options o = { .procs = 1, .iterations = 1, .value = -1 };

	parse_args(argc, argv, &o);
	return run(&o);
}
