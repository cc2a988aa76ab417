/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: one device model's 32-bit translations (FUZZ_DEVICE names
 * it), through the fake kernel of tests/fake-kernel.h. An i386 client's
 * memory comes from the input, with 32-bit pointers that the fuzzer learns
 * to aim into it; the commands are those of the compat table, with their
 * _IOC size bits sometimes changed, or any 32 bits. Reads in the caller's
 * ABI are fuzzed too, where the model has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "dispatch.h"
#include "fake-kernel.h"
#include "fuzz-common.h"

#ifndef FUZZ_DEVICE
#error "FUZZ_DEVICE names the device model, e.g. \"i2c\""
#endif

#define COMPAT_BASE UINT64_C(0x00100000)
#define CLIENT_SIZE 4096
/* Bytes of the input that become the client's memory; the rest is zero. */
#define CLIENT_SEEDED 512
#define MAX_OPS 6

static struct cusemu_device *dev;
static uint8_t client_mem[CLIENT_SIZE];
static struct fake_client client = {
	.base = COMPAT_BASE, .mem = client_mem, .size = CLIENT_SIZE,
	.compat = true,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_log_init();
	dev = fake_device_new(FUZZ_DEVICE);
	return 0;
}

static unsigned int compat_rows(void)
{
	const struct cusemu_ioctl *t = dev->model->compat_table;
	unsigned int n = 0;

	while (t && t[n].name)
		n++;
	return n;
}

/* A compat row's command, maybe with other size bits, or any 32 bits. */
static unsigned int pick_cmd(struct fuzz_input *in)
{
	uint8_t how = fuzz_u8(in);
	unsigned int n = compat_rows();
	unsigned int cmd;

	if (!n || how % 4 == 0)
		return fuzz_u32(in);
	cmd = dev->model->compat_table[fuzz_u8(in) % n].cmd;
	if (how % 4 == 1)
		cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
			   fuzz_u16(in) & _IOC_SIZEMASK);
	return cmd;
}

static void fuzz_read(struct fuzz_input *in, struct cusemu_file *file)
{
	static char buf[4096];
	size_t size = fuzz_u16(in) % (sizeof(buf) + 1);
	ssize_t ret;

	if (!dev->model->read)
		return;
	ret = dev->model->read(dev, file, buf, size);
	/* More than asked would overrun the kernel's buffer. */
	g_assert_cmpint(ret, <=, (ssize_t)size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	/* Reads must not wait for events that never come. */
	struct cusemu_file file = { .dev = dev, .flags = O_RDWR | O_NONBLOCK };

	if (dev->model->open && dev->model->open(dev, &file))
		return 0;
	fuzz_bytes(&in, client_mem, CLIENT_SEEDED);
	memset(client_mem + CLIENT_SEEDED, 0, CLIENT_SIZE - CLIENT_SEEDED);
	for (unsigned int op = 0; op < MAX_OPS && in.size; op++) {
		uint8_t how = fuzz_u8(&in);
		unsigned int cmd, requests;
		cusemu_uptr_t arg;
		long ret;

		if (how % 8 == 0) {
			fuzz_read(&in, &file);
			continue;
		}
		cmd = pick_cmd(&in);
		arg = how & 8 ? fuzz_u32(&in)
			      : COMPAT_BASE + fuzz_u16(&in) % CLIENT_SIZE;
		ret = fake_ioctl(&client, dev, &file, cmd, arg, &requests);
		if (ret < 0)
			g_assert_cmpint(ret, >, -512);
	}
	if (dev->model->release)
		dev->model->release(dev, &file);
	return 0;
}
