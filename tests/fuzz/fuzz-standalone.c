/* SPDX-License-Identifier: MIT */
/*
 * Runs a fuzz target without libFuzzer: how the normal build replays every
 * crash ever found (tests/fuzz/regressions/) as a unit test, and runs a fixed
 * series of pseudo-random inputs. Arguments are files or directories of
 * files, and --random N. Prints TAP: a line per file, one for the series.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "fuzz-common.h"

static unsigned int count;

static void run_file(const char *path)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *data = NULL;
	gsize size;

	if (!g_file_get_contents(path, &data, &size, &error)) {
		printf("not ok %u - %s: %s\n", ++count, path, error->message);
		return;
	}
	/* A crash aborts the program: the test fails without this line. */
	LLVMFuzzerTestOneInput((const uint8_t *)data, size);
	printf("ok %u - %s runs without a crash or a leak of the daemon's "
	       "invariants\n",
	       ++count, path);
	fflush(stdout);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void run_path(const char *path)
{
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GPtrArray) names = NULL;
	const char *name;

	if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
		run_file(path);
		return;
	}
	dir = g_dir_open(path, 0, NULL);
	names = g_ptr_array_new_with_free_func(g_free);
	while (dir && (name = g_dir_read_name(dir)))
		if (name[0] != '.')
			g_ptr_array_add(names, g_build_filename(path, name, NULL));
	g_ptr_array_sort(names, compare_names);
	for (guint i = 0; i < names->len; i++)
		run_file(names->pdata[i]);
}

/* The same n inputs on every run: a fixed seed, lengths up to 2 KiB. */
static void run_random(unsigned int n)
{
	static uint8_t buf[2048];
	GRand *rand = g_rand_new_with_seed(20041215);

	for (unsigned int i = 0; i < n; i++) {
		size_t len = g_rand_int_range(rand, 0, sizeof(buf) + 1);

		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)g_rand_int(rand);
		LLVMFuzzerTestOneInput(buf, len);
	}
	g_rand_free(rand);
	printf("ok %u - %u pseudo-random inputs run without a crash\n",
	       ++count, n);
}

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--random") && i + 1 < argc)
			run_random((unsigned int)atoi(argv[++i]));
		else
			run_path(argv[i]);
	}
	printf("1..%u\n", count);
	return 0;
}
