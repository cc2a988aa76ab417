/* SPDX-License-Identifier: MIT */
/*
 * What finding a 32-bit command costs: in the global ioctl32 table, one hash
 * under a reader-writer lock that holds every device's commands, and in one
 * device's compat table, a linear scan of that device's rows only.
 */
#define G_LOG_DOMAIN "cusemu-bench"

#include <stdio.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "call.h"
#include "dispatch.h"
#include "ioctl32.h"

/* Commands looked up in one batch, drawn at random from the table. */
#define BATCH 4096u

static const unsigned int sizes[] = { 10, 100, 1000, 10000 };

/* Registered as a model: the table keeps the model of every entry. */
static const struct cusemu_device_model synthetic_model = {
	.name = "synthetic",
};

struct bench {
	struct cusemu_ioctl *table;	/* the rows and the end row */
	unsigned int hits[BATCH];	/* commands in the table */
	unsigned int misses[BATCH];	/* commands not in it */
	struct cusemu_call call;
	unsigned long sink;		/* keeps the loops from going away */
};

/* Distinct _IO numbers for up to 32768 rows, none of a real model's. */
static unsigned int synthetic_cmd(unsigned int i)
{
	return _IO(0x80 + (i >> 8), i & 0xff);
}

static struct cusemu_ioctl *make_table(unsigned int n)
{
	struct cusemu_ioctl *t = g_new0(struct cusemu_ioctl, n + 1);

	/* No handler: a compatible row, which the native path serves. */
	for (unsigned int i = 0; i < n; i++) {
		t[i].cmd = synthetic_cmd(i);
		t[i].name = g_strdup_printf("SYNTHETIC_%u", i);
	}
	return t;
}

static void free_table(struct cusemu_ioctl *t)
{
	for (struct cusemu_ioctl *row = t; row->name; row++)
		g_free((char *)row->name);
	g_free(t);
}

/* Where a handler-less entry of the global table leads: nothing to do. */
static long native_path(struct cusemu_call *call)
{
	return call->cmd & 1;
}

static void global_batch(struct bench *b)
{
	for (unsigned int i = 0; i < BATCH; i++) {
		b->call.cmd = b->hits[i];
		b->sink += cusemu_ioctl32_dispatch(&b->call, native_path,
						   false);
	}
}

static void device_batch(struct bench *b)
{
	for (unsigned int i = 0; i < BATCH; i++)
		b->sink += cusemu_ioctl_lookup(b->table, b->hits[i])->cmd;
}

static void device_miss_batch(struct bench *b)
{
	for (unsigned int i = 0; i < BATCH; i++)
		b->sink += !cusemu_ioctl_lookup(b->table, b->misses[i]);
}

/*
 * Batches until min_us have passed, after one to warm the caches; a batch
 * takes far longer than the clock's microsecond.
 */
static double ns_per_lookup(void (*batch)(struct bench *b), struct bench *b,
			    gint64 min_us)
{
	gint64 start, elapsed;
	uint64_t rounds = 0;

	batch(b);
	start = g_get_monotonic_time();
	do {
		batch(b);
		rounds++;
		elapsed = g_get_monotonic_time() - start;
	} while (elapsed < min_us);
	return 1000.0 * (double)elapsed / (double)(rounds * BATCH);
}

static void measure(unsigned int n, gint64 min_us, GRand *rand)
{
	struct cusemu_device owner = {
		.model = &synthetic_model,
		.name = "synthetic0",
	};
	struct bench *b = g_new0(struct bench, 1);
	double global, device, miss;

	b->table = make_table(n);
	for (unsigned int i = 0; i < n; i++)
		g_assert(cusemu_ioctl32_register(&b->table[i], &owner) == 0);
	for (unsigned int i = 0; i < BATCH; i++) {
		b->hits[i] = synthetic_cmd(g_rand_int_range(rand, 0, n));
		b->misses[i] = _IO(0x7f, i & 0xff);
	}
	/* A 32-bit call on the device: only the command changes. */
	cusemu_call_init(&b->call, &owner, NULL, 0, 0, true, 0);

	global = ns_per_lookup(global_batch, b, min_us);
	device = ns_per_lookup(device_batch, b, min_us);
	miss = ns_per_lookup(device_miss_batch, b, min_us);
	printf("%u,%.1f,%.1f,%.1f\n", n, global, device, miss);

	for (unsigned int i = 0; i < n; i++)
		cusemu_ioctl32_unregister(b->table[i].cmd, &owner);
	free_table(b->table);
	g_free(b);
}

int main(int argc, char **argv)
{
	gboolean quick = FALSE;
	GOptionEntry entries[] = {
		{ "quick", 'q', 0, G_OPTION_ARG_NONE, &quick,
		  "Measure each case for 20 ms instead of 300 ms", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL },
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GRand) rand = g_rand_new_with_seed(7);

	g_option_context_set_summary(ctx,
		"Nanoseconds per lookup of a 32-bit command, for 10 to 10000 "
		"registered\ncommands: in the global ioctl32 table (a hash "
		"under its reader-writer lock,\nwhat a 32-bit call pays under "
		"2.6.10) and in a device's compat table (a\nlinear scan), "
		"for commands in the table and, for the scan, one not in "
		"it.\nCSV on standard output.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
		fprintf(stderr, "cusemu-lookup: %s\n", error->message);
		return 2;
	}
	printf("commands,global_ns,device_ns,device_miss_ns\n");
	for (unsigned int i = 0; i < G_N_ELEMENTS(sizes); i++)
		measure(sizes[i], (quick ? 20 : 300) * 1000, rand);
	return 0;
}
