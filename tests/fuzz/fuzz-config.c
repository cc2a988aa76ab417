/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: what a person types or writes. The first byte picks a
 * --device argument or a configuration file; the rest is its text. A
 * --device argument that parses is brought up as a device of its model
 * (its probe parses the model's own keys, i2c's chips= among them) and
 * freed again, unless it names a file: fuzzing writes nothing.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>

#include "config.h"
#include "fake-kernel.h"
#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_log_init();
	return 0;
}

static void device_arg(const char *text)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev;

	if (strstr(text, "file") || strchr(text, '/')) {
		struct cusemu_config *config = cusemu_config_new();

		cusemu_config_add_device_arg(config, text, &error);
		cusemu_config_free(config);
		return;
	}
	dev = fake_device_try(NULL, text, &error);
	if (dev)
		fake_device_free(dev);
}

static void config_file(const char *text, size_t len)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_config *config;
	char path[64];
	int fd = memfd_create("cusemu.conf", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, text, len) == (ssize_t)len) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		config = cusemu_config_new();
		cusemu_config_load_file(config, path, &error);
		cusemu_config_free(config);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *text = NULL;

	if (!size)
		return 0;
	/* Arguments and files are text: a NUL ends them. */
	text = g_strndup((const char *)data + 1, size - 1);
	if (data[0] & 1)
		config_file(text, strlen(text));
	else
		device_arg(text);
	return 0;
}
