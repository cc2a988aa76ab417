/* SPDX-License-Identifier: MIT */
/*
 * cusemu-load: clients (threads or processes) calling one ioctl on one or
 * more nodes for a time or a count; one CSV row per node and a total.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strerrorname_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "cusemu/abi/fioc.h"
#include "cusemu/abi/slow.h"

#define MAX_CLIENTS 1024u
#define MAX_NODES 64u
/* Distinct errnos one client counts by name; the rest count as the last. */
#define MAX_ERRNOS 8u
/* Latencies kept in all, 8 bytes each (--max-samples). */
#define DEFAULT_SAMPLES 1000000ull
#define DEFAULT_SECONDS 5.0
/* Where i2c-rdwr reads: the EEPROM of the i2c model's default chips. */
#define EEPROM_ADDR 0x50

/* One client's state for its op: the arguments it passes every call. */
struct op_ctx {
	int fd;
	uint32_t value;
	unsigned int cmd;
	size_t size;
	struct fioc_rw_arg rw;
	struct cusemu_ioctl_report report;
	struct i2c_msg msgs[2];
	struct i2c_rdwr_ioctl_data rdwr;
	uint8_t offset;
	uint8_t *buf;
};

struct op {
	const char *name;
	const char *help;
	/* Untimed, before the start; -1 with errno on failure. */
	int (*setup)(struct op_ctx *c);
	long (*run)(struct op_ctx *c);
	uint32_t default_value;
	uint32_t max_value;	/* 0: the op takes no --value */
};

struct options {
	const char *nodes[MAX_NODES];
	unsigned int nnodes;
	unsigned int clients;
	bool processes;
	double seconds;		/* 0: no time limit */
	uint64_t count;		/* per client; 0: no count limit */
	uint64_t max_samples;
	int64_t value;		/* -1: the op's default */
	unsigned int cmd;
	const struct op *op;
	uint64_t pause_ns;	/* between a client's calls, untimed */
	const char *beside;	/* a node a thread of ours keeps busy */
	const struct op *beside_op;
};

struct errno_count {
	int err;
	uint64_t n;
};

/*
 * A client's results. They live in a shared mapping, so that forked
 * clients report the same way threads do.
 */
struct client {
	unsigned int node;
	uint64_t cap;		/* room in samples */
	uint64_t *samples;	/* a uniform sample of the latencies, in ns */
	uint64_t kept;
	uint64_t ops, errors, max_ns;
	uint64_t start_ns, end_ns;
	uint64_t rng;
	int setup_errno;	/* open or the op's setup failed */
	const char *setup_what;
	bool done;		/* false: the client died before reporting */
	struct errno_count errs[MAX_ERRNOS];
} __attribute__((aligned(64)));	/* no false sharing between threads */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *errno_name(int err)
{
	static __thread char buf[24];
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno%d", err);
	return buf;
}

static long op_fioc_get_size(struct op_ctx *c)
{
	return ioctl(c->fd, FIOC_GET_SIZE, &c->size);
}

/* The buffer must hold what one read asks for, or the read moves less. */
static int setup_fioc_read(struct op_ctx *c)
{
	size_t want = c->value;

	c->buf = malloc(want);
	if (!c->buf)
		return -1;
	if (ioctl(c->fd, FIOC_GET_SIZE, &c->size) < 0)
		return -1;
	if (c->size < want && ioctl(c->fd, FIOC_SET_SIZE, &want) < 0)
		return -1;
	c->rw = (struct fioc_rw_arg){ .buf = c->buf, .size = want };
	return 0;
}

static long op_fioc_read(struct op_ctx *c)
{
	return ioctl(c->fd, FIOC_READ, &c->rw);
}

static long op_slow_hold(struct op_ctx *c)
{
	return ioctl(c->fd, SLOW_HOLD, 0);
}

static long op_slow_hold_us(struct op_ctx *c)
{
	return ioctl(c->fd, SLOW_HOLD_US, &c->value);
}

/* VALUE us of spinning in this thread, no ioctl: where the kernel runs a
 * driver's spinning ioctl, in its caller's own time. */
static long op_spin(struct op_ctx *c)
{
	uint64_t end = now_ns() + (uint64_t)c->value * 1000;

	while (now_ns() < end)
		;
	return 0;
}

static long op_slow_report(struct op_ctx *c)
{
	return ioctl(c->fd, SLOW_REPORT, &c->report);
}

/* A random read: the offset written, a repeated start, the bytes read. */
static int setup_i2c_rdwr(struct op_ctx *c)
{
	c->buf = malloc(c->value);
	if (!c->buf)
		return -1;
	c->msgs[0] = (struct i2c_msg){ EEPROM_ADDR, 0, 1, &c->offset };
	c->msgs[1] = (struct i2c_msg){ EEPROM_ADDR, I2C_M_RD, c->value,
				       c->buf };
	c->rdwr = (struct i2c_rdwr_ioctl_data){ c->msgs, 2 };
	return 0;
}

static long op_i2c_rdwr(struct op_ctx *c)
{
	return ioctl(c->fd, I2C_RDWR, &c->rdwr);
}

/* A command with a payload points at a buffer of its size. */
static int setup_cmd(struct op_ctx *c)
{
	if (!_IOC_SIZE(c->cmd))
		return 0;
	c->buf = calloc(1, _IOC_SIZE(c->cmd));
	return c->buf ? 0 : -1;
}

static long op_cmd(struct op_ctx *c)
{
	return ioctl(c->fd, c->cmd, c->buf);
}

static const struct op ops[] = {
	{ "fioc-get-size", "FIOC_GET_SIZE on a fioc node (cusemu's or libfuse's"
	  " example server)", NULL, op_fioc_get_size, 0, 0 },
	{ "fioc-read", "FIOC_READ of VALUE bytes (default 64) at offset 0: a"
	  " pointer to a struct, then its buffer; the buffer is first grown to"
	  " VALUE with FIOC_SET_SIZE if smaller", setup_fioc_read, op_fioc_read,
	  64, 1u << 20 },
	{ "slow-hold", "SLOW_HOLD on a slow node: no payload, holds for the"
	  " device's hold_us", NULL, op_slow_hold, 0, 0 },
	{ "slow-hold-us", "SLOW_HOLD_US of VALUE microseconds (default 0)",
	  NULL, op_slow_hold_us, 0, SLOW_HOLD_MAX_US },
	{ "slow-report", "SLOW_REPORT: a struct out, _IOC-encoded", NULL,
	  op_slow_report, 0, 0 },
	{ "spin", "no ioctl: spins VALUE microseconds (default 1000) in the"
	  " calling thread, as the kernel spins a driver's ioctl in its"
	  " caller's thread (the node is opened, not called)", NULL, op_spin,
	  1000, SLOW_HOLD_MAX_US },
	{ "i2c-rdwr", "I2C_RDWR on an i2c node: writes offset 0 to the chip at"
	  " 0x50, then reads VALUE bytes (default 4), as 'i2ctransfer -y BUS"
	  " w1@0x50 0 rVALUE'", setup_i2c_rdwr, op_i2c_rdwr, 4, 8192 },
	{ "cmd", "the command given with --cmd; one with a payload (_IOR,"
	  " _IOW, _IOWR) points at a zeroed buffer of its _IOC size",
	  setup_cmd, op_cmd, 0, 0 },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

/*
 * Count err in a list of size slots; the last slot takes whatever finds no
 * room, as "other" (err -1).
 */
static void add_count(struct errno_count *list, unsigned int size, int err,
		      uint64_t n)
{
	unsigned int i;

	for (i = 0; i < size - 1; i++) {
		if (!list[i].n)
			list[i].err = err;
		if (list[i].err == err)
			break;
	}
	if (i == size - 1)
		list[i].err = -1;
	list[i].n += n;
}

static void count_error(struct client *c, int err)
{
	c->errors++;
	add_count(c->errs, MAX_ERRNOS, err, 1);
}

/* xorshift64: cheap enough to run once per op. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Reservoir sampling (Vitter's algorithm R): however long the run, the kept
 * latencies are a uniform sample of all of this client's ops, in bounded
 * memory. The maximum is exact.
 */
static void keep_sample(struct client *c, uint64_t ns)
{
	uint64_t seen = c->ops;	/* this op already counted */
	uint64_t j;

	if (ns > c->max_ns)
		c->max_ns = ns;
	if (c->kept < c->cap) {
		c->samples[c->kept++] = ns;
		return;
	}
	j = next_random(&c->rng) % seen;
	if (j < c->cap)
		c->samples[j] = ns;
}

static void pause_for(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static void run_ops(const struct options *o, struct client *c,
		    struct op_ctx *ctx)
{
	uint64_t limit = (uint64_t)(o->seconds * 1e9);
	uint64_t t0, t1;
	long ret;
	int err;

	c->start_ns = t1 = now_ns();
	while (!o->count || c->ops < o->count) {
		t0 = now_ns();
		ret = o->op->run(ctx);
		err = errno;
		t1 = now_ns();
		c->ops++;
		if (ret < 0)
			count_error(c, err);
		keep_sample(c, t1 - t0);
		if (limit && t1 - c->start_ns >= limit)
			break;
		if (o->pause_ns)
			pause_for(o->pause_ns);
	}
	c->end_ns = t1;
}

/* The go-ahead: every client reads the pipe until the parent closes it. */
struct gate {
	int ready[2];	/* a byte from each client once it is set up */
	int start[2];
};

static void client_main(const struct options *o, struct client *c,
			const struct gate *g)
{
	struct op_ctx ctx = { .value = (uint32_t)o->value, .cmd = o->cmd };
	char b = 0;

	ctx.fd = open(o->nodes[c->node], O_RDWR | O_CLOEXEC);
	if (ctx.fd < 0) {
		c->setup_errno = errno;
		c->setup_what = "open";
	} else if (o->op->setup && o->op->setup(&ctx)) {
		c->setup_errno = errno;
		c->setup_what = "setup";
	}
	if (write(g->ready[1], &b, 1) != 1)
		c->setup_errno = errno;
	while (read(g->start[0], &b, 1) < 0 && errno == EINTR)
		;
	if (!c->setup_errno)
		run_ops(o, c, &ctx);
	if (ctx.fd >= 0)
		close(ctx.fd);
	free(ctx.buf);
	c->done = true;
}

struct thread_arg {
	const struct options *o;
	struct client *c;
	const struct gate *g;
	pthread_t thread;
	pid_t pid;
	bool started;
};

static void *client_thread(void *p)
{
	struct thread_arg *a = p;

	client_main(a->o, a->c, a->g);
	return NULL;
}

static bool start_client(struct thread_arg *a)
{
	if (!a->o->processes)
		return !pthread_create(&a->thread, NULL, client_thread, a);
	fflush(stdout);
	a->pid = fork();
	if (a->pid == 0) {
		close(a->g->ready[0]);
		close(a->g->start[1]);
		client_main(a->o, a->c, a->g);
		_exit(0);
	}
	return a->pid > 0;
}

static void join_client(struct thread_arg *a)
{
	if (!a->started)
		return;
	if (!a->o->processes)
		pthread_join(a->thread, NULL);
	else
		while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* Start every client, let them go together once all are set up. */
static unsigned int run_clients(const struct options *o, struct client *cl)
{
	struct thread_arg *args = calloc(o->clients, sizeof(*args));
	struct gate g;
	unsigned int i, started = 0;
	char b;

	if (!args || pipe2(g.ready, O_CLOEXEC) || pipe2(g.start, O_CLOEXEC)) {
		perror("cusemu-load");
		exit(1);
	}
	for (i = 0; i < o->clients; i++) {
		args[i] = (struct thread_arg){ .o = o, .c = &cl[i], .g = &g };
		args[i].started = start_client(&args[i]);
		if (!args[i].started) {
			fprintf(stderr, "cusemu-load: cannot start client %u: "
				"%s\n", i, strerror(errno));
			break;
		}
		started++;
	}
	/* A process that dies before it is ready must not hang us. */
	if (o->processes)
		close(g.ready[1]);
	for (i = 0; i < started; i++)
		if (read(g.ready[0], &b, 1) != 1)
			break;
	close(g.start[1]);
	for (i = 0; i < started; i++)
		join_client(&args[i]);
	close(g.start[0]);
	close(g.ready[0]);
	if (!o->processes)
		close(g.ready[1]);
	free(args);
	return started;
}

/* A latency and the ops it stands for: its client's ops over kept. */
struct weighted {
	uint64_t ns;
	double weight;
};

struct row {
	const char *label;
	unsigned int clients;
	uint64_t ops, errors, max_ns;
	uint64_t start_ns, end_ns;
	struct weighted *w;
	size_t nw;
};

static int cmp_weighted(const void *a, const void *b)
{
	uint64_t x = ((const struct weighted *)a)->ns;
	uint64_t y = ((const struct weighted *)b)->ns;

	return x < y ? -1 : x > y;
}

static void add_client(struct row *r, const struct client *c)
{
	double weight = c->kept ? (double)c->ops / (double)c->kept : 0;

	r->clients++;
	if (!c->done || c->setup_errno || !c->ops)
		return;
	r->ops += c->ops;
	r->errors += c->errors;
	if (c->max_ns > r->max_ns)
		r->max_ns = c->max_ns;
	if (!r->start_ns || c->start_ns < r->start_ns)
		r->start_ns = c->start_ns;
	if (c->end_ns > r->end_ns)
		r->end_ns = c->end_ns;
	for (uint64_t i = 0; i < c->kept; i++)
		r->w[r->nw++] = (struct weighted){ c->samples[i], weight };
}

/* Weighted nearest rank: the first latency that p% of the ops reach. */
static double percentile_us(const struct row *r, unsigned int p)
{
	double total = 0, need, seen = 0;
	size_t i;

	if (!r->nw)
		return 0;
	for (i = 0; i < r->nw; i++)
		total += r->w[i].weight;
	need = total * p / 100 * (1 - 1e-12);
	for (i = 0; i < r->nw - 1; i++) {
		seen += r->w[i].weight;
		if (seen >= need)
			break;
	}
	return r->w[i].ns / 1000.0;
}

static void print_row(struct row *r)
{
	double secs = (r->end_ns - r->start_ns) / 1e9;

	qsort(r->w, r->nw, sizeof(*r->w), cmp_weighted);
	printf("%s,%u,%" PRIu64 ",%" PRIu64 ",%.3f,%.1f,%.2f,%.2f,%.2f,%.2f\n",
	       r->label, r->clients, r->ops, r->errors, secs,
	       secs > 0 ? r->ops / secs : 0, percentile_us(r, 50),
	       percentile_us(r, 90), percentile_us(r, 99), r->max_ns / 1000.0);
}

/* The errnos of node's failed calls, by name. */
static void report_errors(const struct client *cl, unsigned int started,
			  unsigned int node, const struct row *r)
{
	struct errno_count all[4 * MAX_ERRNOS] = { { 0, 0 } };
	unsigned int i, j;

	for (i = 0; i < started; i++)
		for (j = 0; cl[i].node == node && j < MAX_ERRNOS; j++)
			if (cl[i].errs[j].n)
				add_count(all, 4 * MAX_ERRNOS,
					  cl[i].errs[j].err, cl[i].errs[j].n);
	fprintf(stderr, "cusemu-load: %s: %" PRIu64 " of %" PRIu64
		" calls failed:", r->label, r->errors, r->ops);
	for (i = 0; i < 4 * MAX_ERRNOS && all[i].n; i++)
		fprintf(stderr, " %s x%" PRIu64,
			all[i].err < 0 ? "other" : errno_name(all[i].err),
			all[i].n);
	fputc('\n', stderr);
}

/* Clients that could not start, open, set up, or died: say which. */
static bool report_broken(const struct options *o, const struct client *cl,
			  unsigned int started)
{
	bool broken = started < o->clients;

	for (unsigned int i = 0; i < started; i++) {
		const struct client *c = &cl[i];

		if (!c->done)
			fprintf(stderr, "cusemu-load: client %u on %s died\n",
				i, o->nodes[c->node]);
		else if (c->setup_errno)
			fprintf(stderr, "cusemu-load: client %u: %s %s: %s "
				"(%s)\n", i, c->setup_what ? c->setup_what
					: "start", o->nodes[c->node],
				errno_name(c->setup_errno),
				strerror(c->setup_errno));
		broken |= !c->done || c->setup_errno;
	}
	return broken;
}

static int report(const struct options *o, struct client *cl,
		  unsigned int started, uint64_t kept)
{
	struct row total = { .label = "total" };
	bool broken = report_broken(o, cl, started);
	unsigned int n, i;

	total.w = malloc(kept * sizeof(*total.w) + 1);
	if (!total.w) {
		fprintf(stderr, "cusemu-load: cannot allocate the merge\n");
		return 1;
	}
	printf("node,clients,ops,errors,seconds,ops_per_s,p50_us,p90_us,"
	       "p99_us,max_us\n");
	for (n = 0; n < o->nnodes; n++) {
		struct row r = { .label = o->nodes[n], .w = total.w };

		for (i = 0; i < started; i++)
			if (cl[i].node == n)
				add_client(&r, &cl[i]);
		print_row(&r);
		if (r.errors)
			report_errors(cl, started, n, &r);
	}
	for (i = 0; i < started; i++)
		add_client(&total, &cl[i]);
	total.clients = o->clients;
	print_row(&total);
	free(total.w);
	return broken || total.errors == total.ops;
}

/*
 * --beside: a thread of this process that calls its op back to back from
 * before the clients start until they have ended, unmeasured; its calls
 * and failures are counted for the report on stderr.
 */
struct beside {
	const struct options *o;
	struct op_ctx ctx;
	pthread_t thread;
	atomic_bool stop;
	uint64_t ops, errors;
};

static void *beside_thread(void *p)
{
	struct beside *b = p;

	while (!atomic_load(&b->stop)) {
		if (b->o->beside_op->run(&b->ctx) < 0)
			b->errors++;
		b->ops++;
	}
	return NULL;
}

static bool beside_start(const struct options *o, struct beside *b)
{
	*b = (struct beside){ .o = o };
	b->ctx.value = o->beside_op->default_value;
	b->ctx.fd = open(o->beside, O_RDWR | O_CLOEXEC);
	if (b->ctx.fd < 0 ||
	    (o->beside_op->setup && o->beside_op->setup(&b->ctx)) ||
	    (errno = pthread_create(&b->thread, NULL, beside_thread, b))) {
		fprintf(stderr, "cusemu-load: --beside %s: %s\n", o->beside,
			strerror(errno));
		return false;
	}
	/* Under way before the first measured call. */
	while (!__atomic_load_n(&b->ops, __ATOMIC_RELAXED))
		pause_for(1000000);
	return true;
}

static bool beside_stop(struct beside *b)
{
	atomic_store(&b->stop, true);
	pthread_join(b->thread, NULL);
	close(b->ctx.fd);
	free(b->ctx.buf);
	fprintf(stderr, "cusemu-load: beside %s: %" PRIu64 " calls, %" PRIu64
		" failed\n", b->o->beside, b->ops, b->errors);
	return b->errors < b->ops;
}

static int run(const struct options *o)
{
	struct beside beside;
	uint64_t cap = o->max_samples / o->clients;
	uint64_t kept = 0;
	struct client *cl;
	uint64_t *samples;
	unsigned int i, started;
	size_t size;

	if (!cap)
		cap = 1;
	if (o->count && o->count < cap)
		cap = o->count;
	size = o->clients * sizeof(*cl) + o->clients * cap * sizeof(*samples);
	cl = mmap(NULL, size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cl == MAP_FAILED) {
		perror("cusemu-load: mmap");
		return 1;
	}
	samples = (uint64_t *)(cl + o->clients);
	for (i = 0; i < o->clients; i++) {
		cl[i].node = i % o->nnodes;
		cl[i].cap = cap;
		cl[i].samples = samples + i * cap;
		cl[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
	}
	if (o->beside && !beside_start(o, &beside))
		return 1;
	started = run_clients(o, cl);
	for (i = 0; i < started; i++)
		kept += cl[i].done ? cl[i].kept : 0;
	i = report(o, cl, started, kept);
	if (o->beside && !beside_stop(&beside))
		i = 1;
	munmap(cl, size);
	return (int)i;
}

/* text from column indent on, broken between words before column 80 */
static void print_wrapped(FILE *f, const char *text, int indent)
{
	int col = indent;
	int len;

	while (*text) {
		len = (int)strcspn(text, " ");
		if (col > indent && col + 1 + len >= 80) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
		fprintf(f, " %.*s", len, text);
		col += 1 + len;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
"usage: cusemu-load [OPTION...] --node PATH [--node PATH...]\n"
"\n"
"Runs --clients clients, each with its own open file, spread round-robin over\n"
"the nodes, all calling one ioctl as fast as they can, and prints CSV: a header,\n"
"one row per node and a total row:\n"
"  node,clients,ops,errors,seconds,ops_per_s,p50_us,p90_us,p99_us,max_us\n"
"ops counts every call, failed ones too (errors); seconds runs from the first\n"
"client's start to the last one's end; latencies are per call, measured with\n"
"CLOCK_MONOTONIC, in microseconds.\n"
"\n"
"  --node PATH        a device node; repeat for more (at most %u)\n"
"  --op OP            the ioctl (default fioc-get-size), see below\n"
"  --cmd HEX          call this command (implies --op cmd), see below\n"
"  --value N          the op's argument, see below\n"
"  --clients N        clients (default 1, at most %u)\n"
"  --processes        clients are processes (default: threads of this one)\n"
"  --seconds S        each client runs S seconds (default %.0f when no --count)\n"
"  --count N          each client makes N calls (with --seconds: what ends first)\n"
"  --max-samples N    latencies kept in all (default %llu, 8 bytes each): each\n"
"                     client keeps N/clients, a uniform sample of its calls\n"
"                     (reservoir sampling), and the percentiles weigh each\n"
"                     sample by its client's calls per kept sample; max_us is\n"
"                     exact\n"
"  --pause-us N       each client sleeps N microseconds after each call\n"
"                     (untimed): a sampler rather than a flood\n"
"  --beside PATH      one more thread of this process calls --beside-op on\n"
"                     PATH back to back, from before the clients start until\n"
"                     they end, unmeasured (its calls go to stderr)\n"
"  --beside-op OP     its ioctl, with its default value (default slow-hold)\n"
"  --help             this text\n"
"\n"
"OP:\n",
		MAX_NODES, MAX_CLIENTS, DEFAULT_SECONDS, DEFAULT_SAMPLES);
	for (i = 0; i < NOPS; i++) {
		fprintf(f, "  %-14s", ops[i].name);
		print_wrapped(f, ops[i].help, 16);
	}
	fprintf(f,
"\n"
"Failed calls are counted by errno name on stderr. Exit status: 0; 1 when every\n"
"call failed, or a client could not open its node, set up, or start; 2 for\n"
"bad options.\n");
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cusemu-load: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'cusemu-load --help'.\n");
	exit(2);
}

static uint64_t parse_u64(const char *opt, const char *s, uint64_t min,
			  uint64_t max, int base)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		bad_usage("%s: not a number in range", opt);
	return v;
}

static const struct op *find_op(const char *name)
{
	for (size_t i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	bad_usage("unknown op '%s'", name);
}

static void parse_seconds(struct options *o, const char *s)
{
	char *end;

	errno = 0;
	o->seconds = strtod(s, &end);
	if (errno || end == s || *end || !(o->seconds > 0) ||
	    o->seconds > 86400)
		bad_usage("--seconds: '%s' is not between 0 and 86400", s);
}

enum { OPT_NODE = 256, OPT_OP, OPT_CMD, OPT_VALUE, OPT_CLIENTS,
       OPT_PROCESSES, OPT_SECONDS, OPT_COUNT, OPT_MAX_SAMPLES, OPT_PAUSE_US,
       OPT_BESIDE, OPT_BESIDE_OP, OPT_HELP };

static void parse_option(struct options *o, int c, const char *arg)
{
	switch (c) {
	case OPT_NODE:
		if (o->nnodes == MAX_NODES)
			bad_usage("%s: too many nodes", "--node");
		o->nodes[o->nnodes++] = arg;
		break;
	case OPT_OP:
		o->op = find_op(arg);
		break;
	case OPT_CMD:
		o->cmd = parse_u64("--cmd", arg, 1, UINT32_MAX, 16);
		if ((_IOC_DIR(o->cmd) == _IOC_NONE) != !_IOC_SIZE(o->cmd))
			bad_usage("--cmd %s: its direction and size disagree",
				  arg);
		o->op = find_op("cmd");
		break;
	case OPT_VALUE:
		o->value = parse_u64("--value", arg, 0, UINT32_MAX, 0);
		break;
	case OPT_CLIENTS:
		o->clients = parse_u64("--clients", arg, 1, MAX_CLIENTS, 10);
		break;
	case OPT_PROCESSES:
		o->processes = true;
		break;
	case OPT_SECONDS:
		parse_seconds(o, arg);
		break;
	case OPT_COUNT:
		o->count = parse_u64("--count", arg, 1, UINT64_MAX, 10);
		break;
	case OPT_MAX_SAMPLES:
		o->max_samples = parse_u64("--max-samples", arg, 1,
					   SIZE_MAX / 64, 10);
		break;
	case OPT_PAUSE_US:
		o->pause_ns = parse_u64("--pause-us", arg, 1, 10000000, 10) *
			      1000u;
		break;
	case OPT_BESIDE:
		o->beside = arg;
		break;
	case OPT_BESIDE_OP:
		o->beside_op = find_op(arg);
		break;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	default:
		bad_usage("%s", "bad option");
	}
}

/* The op's --value: given, or its default, and within its range. */
static void check_value(struct options *o)
{
	if (o->value < 0) {
		o->value = o->op->default_value;
		return;
	}
	if (!o->op->max_value)
		bad_usage("--value: op %s takes none", o->op->name);
	if (o->value > o->op->max_value || (o->op->setup && !o->value))
		bad_usage("--value: out of range for op %s", o->op->name);
}

static void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option options[] = {
		{ "node", required_argument, NULL, OPT_NODE },
		{ "op", required_argument, NULL, OPT_OP },
		{ "cmd", required_argument, NULL, OPT_CMD },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "clients", required_argument, NULL, OPT_CLIENTS },
		{ "processes", no_argument, NULL, OPT_PROCESSES },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
		{ "pause-us", required_argument, NULL, OPT_PAUSE_US },
		{ "beside", required_argument, NULL, OPT_BESIDE },
		{ "beside-op", required_argument, NULL, OPT_BESIDE_OP },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1)
		parse_option(o, c, optarg);
	if (optind != argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (!o->nnodes)
		bad_usage("%s", "no --node given");
	if (o->op->run == op_cmd && !o->cmd)
		bad_usage("%s", "op cmd needs --cmd HEX");
	if (o->beside_op && !o->beside)
		bad_usage("%s", "--beside-op without --beside");
	if (o->beside_op && o->beside_op->run == op_cmd)
		bad_usage("%s", "--beside-op cmd: not with --beside");
	if (!o->beside_op)
		o->beside_op = find_op("slow-hold");
	check_value(o);
	if (!o->seconds && !o->count)
		o->seconds = DEFAULT_SECONDS;
}

int main(int argc, char **argv)
{
	struct options o = {
		.clients = 1,
		.max_samples = DEFAULT_SAMPLES,
		.value = -1,
		.op = &ops[0],
	};

	parse_args(argc, argv, &o);
	return run(&o);
}
