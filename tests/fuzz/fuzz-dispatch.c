/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the whole ioctl path, node and dispatcher, over the
 * in-process transport as tests/fake-cuse.h drives it. Each input picks a
 * device model and a kernel model, fills the client's memory, and sends a
 * few ioctls: some follow the retry protocol as the kernel does, with any
 * command, argument, ABI and thread; others are single requests with whatever flags, sizes
 * and data, retries no kernel would send. The daemon must answer every one
 * without crashing, and without a handler breaking the API's rules.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "cusemu/abi/slow.h"
#include "dispatch.h"
#include "fake-cuse.h"
#include "fake-kernel.h"
#include "fuzz-common.h"

#define NATIVE_BASE UINT64_C(0x7f5500000000)
#define COMPAT_BASE UINT64_C(0x08100000)
#define CLIENT_SIZE 4096
/* Bytes of the input that become the client's memory. */
#define CLIENT_SEEDED 512
#define MAX_OPS 8
#define MAX_THREADS 8
/* The flags a kernel may set: COMPAT, UNRESTRICTED, 32BIT, DIR. */
#define FLAG_BITS 0x1bu

/* Every model but slow's long holds; slow's SLOW_HOLD_US is skipped. */
static const char *const devices[] = {
	"fioc", "probe", "legacy", "slow:hold_us=0", "rtc", "watchdog", "i2c",
	"evdev",
};

struct instance {
	struct cusemu_device *dev;
	struct fake_cuse *cuse;
};

/* Every kernel model of the table, cusemud's (tests/fuzz/meson.build):
 * [device * n_models + model]. */
static unsigned int n_models;
static struct instance *instances;
static uint8_t client_mem[CLIENT_SIZE];
static struct fake_client native = {
	.base = NATIVE_BASE, .mem = client_mem, .size = CLIENT_SIZE,
};
static struct fake_client compat = {
	.base = COMPAT_BASE, .mem = client_mem, .size = CLIENT_SIZE,
	.compat = true,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_log_init();
	while (cusemu_kernel_models[n_models])
		n_models++;
	instances = g_new0(struct instance, G_N_ELEMENTS(devices) * n_models);
	return 0;
}

/* Made on first use: a session per device and kernel model. */
static struct instance *instance(unsigned int d, unsigned int m)
{
	struct instance *in = &instances[d * n_models + m];
	g_autofree char *arg = NULL;

	if (!in->dev) {
		arg = g_strdup_printf("%s%skernel=%s", devices[d],
				      strchr(devices[d], ':') ? "," : ":",
				      cusemu_kernel_models[m]->name);
		in->dev = fake_device_new(arg);
		in->cuse = fake_cuse_start(in->dev);
	}
	return in;
}

/* A command from the device's tables, or any 32 bits. */
static unsigned int pick_cmd(struct fuzz_input *in,
			     const struct cusemu_device_model *m)
{
	uint8_t how = fuzz_u8(in);
	const struct cusemu_ioctl *table = how & 1 ? m->compat_table
						   : m->native_table;
	unsigned int n = 0;

	if (how & 2 || !table)
		return fuzz_u32(in);
	while (table[n].name)
		n++;
	return n ? table[fuzz_u8(in) % n].cmd : fuzz_u32(in);
}

/* NULL, anything, or somewhere in the client's memory. */
static cusemu_uptr_t pick_arg(struct fuzz_input *in,
			      const struct fake_client *c)
{
	switch (fuzz_u8(in) % 4) {
	case 0:
		return 0;
	case 1:
		return c->compat ? fuzz_u32(in) : fuzz_u64(in);
	default:
		return c->base + fuzz_u16(in) % CLIENT_SIZE;
	}
}

/* One request with whatever the input says, answered or not. */
static void raw_request(struct fuzz_input *in, struct instance *inst, int fh,
			pid_t tid, unsigned int cmd, cusemu_uptr_t arg)
{
	static uint8_t data[CUSEMU_USER_MAX_BYTES];
	static struct cusemu_user_ranges rin, rout;
	struct fake_reply reply = { .in = &rin, .out = &rout };
	unsigned int flags = fuzz_u8(in) & FLAG_BITS;
	size_t in_size = fuzz_u16(in) % 8192;
	size_t out_size = fuzz_u32(in) % (CUSEMU_USER_MAX_BYTES + 1);

	fuzz_bytes(in, data, in_size);
	fake_cuse_request(inst->cuse, fh, tid, flags, cmd, arg, data, in_size,
			  out_size, &reply);
	if (reply.kind == FAKE_REPLY_IOCTL)
		g_assert_cmpuint(reply.size, <=, out_size);
	if (reply.kind == FAKE_REPLY_ERR)
		g_assert_cmpint(reply.error, >, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	unsigned int d = fuzz_u8(&in) % G_N_ELEMENTS(devices);
	struct instance *inst = instance(d, fuzz_u8(&in) % n_models);
	int fh = fake_cuse_open(inst->cuse, 1000);

	fuzz_bytes(&in, client_mem, CLIENT_SEEDED);
	memset(client_mem + CLIENT_SEEDED, 0, CLIENT_SIZE - CLIENT_SEEDED);
	for (unsigned int op = 0; op < MAX_OPS && in.size && fh >= 0; op++) {
		uint8_t how = fuzz_u8(&in);
		struct fake_client *c = how & 1 ? &compat : &native;
		pid_t tid = 1000 + fuzz_u8(&in) % MAX_THREADS;
		unsigned int cmd = pick_cmd(&in, inst->dev->model);
		cusemu_uptr_t arg = pick_arg(&in, c);
		unsigned int requests;
		long ret;

		if (cmd == SLOW_HOLD_US)
			continue;	/* up to a second of spinning */
		if (how & 2) {
			raw_request(&in, inst, fh, tid, cmd, arg);
			continue;
		}
		ret = fake_cuse_ioctl(inst->cuse, fh, c, tid, cmd, arg,
				      &requests);
		/* An errno the kernel passes on, never a kernel-internal one. */
		if (ret < 0)
			g_assert_cmpint(ret, >, -512);
	}
	if (fh >= 0)
		fake_cuse_release(inst->cuse, fh);
	return 0;
}
