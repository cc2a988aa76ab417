/* SPDX-License-Identifier: MIT */
/*
 * The fetch steps cusemu-abicheck --emit-compat writes, in use: the bufs
 * plugin (tests/plugins/buffers.c), loaded as cusemud loads plugins and
 * called by native and i386 callers of the fake kernel (no CUSE) with the
 * layouts of their ABI. Samples written come back right, a buffer past
 * the caller's memory is EFAULT, an oversized count an error, and none of
 * them has a side effect.
 */
#include <string.h>

#include <glib.h>

#include "abicheck/buffers.h"
#include "device.h"
#include "fake-kernel.h"
#include "plugin.h"

#define CLIENT_SIZE (512u * 1024u)
/* Client memory: the payload, then buffers. */
#define AT_ARG 0x100
#define AT_BUF 0x1000
/* Prefill, so that bytes the device did not write can be told apart. */
#define FILL 0xAA

/* What i386 callers pass: i386 aligns a __u64 to 4 bytes, and a pointer
 * and a long are 4 bytes. */
struct bufs_sample32 {
	uint32_t channel;
	uint64_t timestamp_ns;
	int32_t value;
} __attribute__((packed));

struct bufs_read32 {
	uint64_t buf;
	uint32_t count;
} __attribute__((packed));

/* bufs_read_ptr and bufs_write */
struct bufs_ptr32 {
	uint32_t buf;
	uint32_t len;
};

G_STATIC_ASSERT(sizeof(struct bufs_sample32) == 16);
G_STATIC_ASSERT(sizeof(struct bufs_read32) == 12);
G_STATIC_ASSERT(sizeof(struct bufs_ptr32) == 8);
G_STATIC_ASSERT(sizeof(struct bufs_sample) == 24);
G_STATIC_ASSERT(sizeof(struct bufs_read) == 16);

#define BUFS_READ32 _IOWR(BUFS_IOC_TYPE, 1, struct bufs_read32)
#define BUFS_READ_PTR32 _IOWR(BUFS_IOC_TYPE, 2, struct bufs_ptr32)
#define BUFS_WRITE32 _IOW(BUFS_IOC_TYPE, 3, struct bufs_ptr32)

struct fixture {
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client client;
};

static void setup(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	/* In this process: the fake kernel drives the model's code itself
	 * (a model host's calls are host-isolation's, over FUSE). */
	f->dev = fake_device_try(NULL, "bufs:isolation=none", &error);
	g_assert_no_error(error);
	f->file = (struct cusemu_file){ .dev = f->dev };
	fake_client_init(&f->client, GPOINTER_TO_INT(data), CLIENT_SIZE);
	memset(f->client.mem, FILL, CLIENT_SIZE);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	fake_device_free(f->dev);
	g_free(f->client.mem);
}

static cusemu_uptr_t at(struct fixture *f, size_t off)
{
	return f->client.base + off;
}

/* Just past the caller's memory. */
static cusemu_uptr_t past(struct fixture *f)
{
	return f->client.base + f->client.size;
}

static long call(struct fixture *f, unsigned int cmd, unsigned int *rt)
{
	unsigned int dummy;

	return fake_ioctl(&f->client, f->dev, &f->file, cmd, at(f, AT_ARG),
			  rt ? rt : &dummy);
}

/* The sample a test writes as the i-th. */
static struct bufs_sample sample(unsigned int i)
{
	return (struct bufs_sample){ i % 8, 0x1122334455667700ull + i,
				     -1000 * (int32_t)i - 7 };
}

/* Sample i of a buffer at off, in the caller's layout. */
static void put_sample(struct fixture *f, size_t off, unsigned int i,
		       struct bufs_sample s)
{
	if (f->client.compat) {
		struct bufs_sample32 c = { s.channel, s.timestamp_ns, s.value };

		memcpy(f->client.mem + off + i * sizeof(c), &c, sizeof(c));
	} else {
		memcpy(f->client.mem + off + i * sizeof(s), &s, sizeof(s));
	}
}

static struct bufs_sample get_sample(struct fixture *f, size_t off,
				     unsigned int i)
{
	struct bufs_sample s;
	struct bufs_sample32 c;

	if (!f->client.compat) {
		memcpy(&s, f->client.mem + off + i * sizeof(s), sizeof(s));
		return s;
	}
	memcpy(&c, f->client.mem + off + i * sizeof(c), sizeof(c));
	return (struct bufs_sample){ c.channel, c.timestamp_ns, c.value };
}

static size_t sample_size(struct fixture *f)
{
	return f->client.compat ? sizeof(struct bufs_sample32)
				: sizeof(struct bufs_sample);
}

static void assert_sample(struct bufs_sample got, struct bufs_sample want)
{
	g_assert_cmpuint(got.channel, ==, want.channel);
	g_assert_cmphex(got.timestamp_ns, ==, want.timestamp_ns);
	g_assert_cmpint(got.value, ==, want.value);
}

/* BUFS_WRITE of n samples from the i-th on, at buf. */
static long write_samples(struct fixture *f, unsigned int first,
			  unsigned int n, cusemu_uptr_t buf, unsigned int *rt)
{
	/* Counts past what a call moves point at fewer. */
	for (unsigned int i = 0; i < MIN(n, 4096u) && buf == at(f, AT_BUF);
	     i++)
		put_sample(f, AT_BUF, i, sample(first + i));
	if (f->client.compat) {
		struct bufs_ptr32 w = { (uint32_t)buf, n };

		memcpy(f->client.mem + AT_ARG, &w, sizeof(w));
		return call(f, BUFS_WRITE32, rt);
	}
	struct bufs_write w = { (const void *)(uintptr_t)buf, n };

	memcpy(f->client.mem + AT_ARG, &w, sizeof(w));
	return call(f, BUFS_WRITE, rt);
}

/* BUFS_READ (a __u64 and a count) or BUFS_READ_PTR (a pointer and a
 * length) of room samples into buf; *got is what the count became. */
static long read_samples(struct fixture *f, bool ptr, uint32_t room,
			 cusemu_uptr_t buf, uint32_t *got, unsigned int *rt)
{
	long ret;

	if (f->client.compat && ptr) {
		struct bufs_ptr32 r = { (uint32_t)buf, room };

		memcpy(f->client.mem + AT_ARG, &r, sizeof(r));
		ret = call(f, BUFS_READ_PTR32, rt);
		memcpy(&r, f->client.mem + AT_ARG, sizeof(r));
		*got = r.len;
	} else if (f->client.compat) {
		struct bufs_read32 r = { buf, room };

		memcpy(f->client.mem + AT_ARG, &r, sizeof(r));
		ret = call(f, BUFS_READ32, rt);
		memcpy(&r, f->client.mem + AT_ARG, sizeof(r));
		*got = r.count;
	} else if (ptr) {
		struct bufs_read_ptr r = { (void *)(uintptr_t)buf, room };

		memcpy(f->client.mem + AT_ARG, &r, sizeof(r));
		ret = call(f, BUFS_READ_PTR, rt);
		memcpy(&r, f->client.mem + AT_ARG, sizeof(r));
		*got = r.len;
	} else {
		struct bufs_read r = { buf, room };

		memcpy(f->client.mem + AT_ARG, &r, sizeof(r));
		ret = call(f, BUFS_READ, rt);
		memcpy(&r, f->client.mem + AT_ARG, sizeof(r));
		*got = r.count;
	}
	return ret;
}

/* Samples written come back, oldest first, through either command, in
 * the caller's layout; what a read does not fill keeps its bytes. */
static void test_samples(struct fixture *f, gconstpointer data)
{
	unsigned int rt;
	uint32_t got;
	const uint8_t *rest;

	/* The payload, then the buffer: two round trips. */
	g_assert_cmpint(write_samples(f, 0, 5, at(f, AT_BUF), &rt), ==, 0);
	g_assert_cmpuint(rt, ==, 2);
	memset(f->client.mem + AT_BUF, FILL, 64 * sizeof(struct bufs_sample));
	g_assert_cmpint(read_samples(f, false, 3, at(f, AT_BUF), &got, &rt),
			==, 0);
	g_assert_cmpuint(rt, ==, 2);
	g_assert_cmpuint(got, ==, 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_sample(get_sample(f, AT_BUF, i), sample(i));
	rest = f->client.mem + AT_BUF + 3 * sample_size(f);
	g_assert_cmphex(rest[0], ==, FILL);
	/* Room for 10, 2 queued: the other 8 are left as they were. */
	memset(f->client.mem + AT_BUF, FILL, 64 * sizeof(struct bufs_sample));
	g_assert_cmpint(read_samples(f, true, 10, at(f, AT_BUF), &got, &rt),
			==, 0);
	g_assert_cmpuint(got, ==, 2);
	assert_sample(get_sample(f, AT_BUF, 0), sample(3));
	assert_sample(get_sample(f, AT_BUF, 1), sample(4));
	rest = f->client.mem + AT_BUF + 2 * sample_size(f);
	for (size_t i = 0; i < 8 * sample_size(f); i++)
		g_assert_cmphex(rest[i], ==, FILL);
	/* None queued: 0 of them, and one round trip (nothing to name). */
	g_assert_cmpint(read_samples(f, false, 0, at(f, AT_BUF), &got, &rt),
			==, 0);
	g_assert_cmpuint(rt, ==, 1);
	g_assert_cmpint(read_samples(f, true, 4, at(f, AT_BUF), &got, &rt),
			==, 0);
	g_assert_cmpuint(got, ==, 0);
	/* The queue is full at BUFS_MAX: the driver's EINVAL. */
	g_assert_cmpint(write_samples(f, 0, BUFS_MAX, at(f, AT_BUF), &rt), ==,
			0);
	g_assert_cmpint(write_samples(f, 0, 1, at(f, AT_BUF), &rt), ==,
			-EINVAL);
	g_assert_cmpint(read_samples(f, true, BUFS_MAX, at(f, AT_BUF), &got,
				     &rt), ==, 0);
	g_assert_cmpuint(got, ==, BUFS_MAX);
	assert_sample(get_sample(f, AT_BUF, BUFS_MAX - 1),
		      sample(BUFS_MAX - 1));
}

/* A buffer past the caller's memory: EFAULT, and nothing moved. */
static void test_efault(struct fixture *f, gconstpointer data)
{
	uint32_t got = 99;

	g_assert_cmpint(write_samples(f, 0, 2, past(f), NULL), ==, -EFAULT);
	g_assert_cmpint(write_samples(f, 0, 2, at(f, AT_BUF), NULL), ==, 0);
	for (unsigned int ptr = 0; ptr < 2; ptr++) {
		g_assert_cmpint(read_samples(f, ptr, 2, past(f), &got, NULL),
				==, -EFAULT);
		/* Inside, and ending past it. */
		g_assert_cmpint(read_samples(f, ptr, 2, past(f) -
					     sample_size(f), &got, NULL),
				==, -EFAULT);
	}
	if (f->client.compat) {
		/* A __u64 above what an i386 caller can name. */
		struct bufs_read32 r = { UINT64_C(1) << 32, 2 };

		memcpy(f->client.mem + AT_ARG, &r, sizeof(r));
		g_assert_cmpint(call(f, BUFS_READ32, NULL), ==, -EFAULT);
	}
	/* The samples are still queued. */
	g_assert_cmpint(read_samples(f, false, 4, at(f, AT_BUF), &got, NULL),
			==, 0);
	g_assert_cmpuint(got, ==, 2);
	assert_sample(get_sample(f, AT_BUF, 1), sample(1));
}

/* Counts past the driver's limit or past what a call moves: refused
 * before the buffer is named, nothing moved. */
static void test_oversized(struct fixture *f, gconstpointer data)
{
	unsigned int rt;
	uint32_t got;

	g_assert_cmpint(write_samples(f, 0, 1, at(f, AT_BUF), NULL), ==, 0);
	for (unsigned int ptr = 0; ptr < 2; ptr++) {
		g_assert_cmpint(read_samples(f, ptr, BUFS_MAX + 1, at(f, AT_BUF),
					     &got, &rt), ==, -EINVAL);
		g_assert_cmpuint(rt, ==, 1);
		g_assert_cmpint(read_samples(f, ptr, UINT32_MAX, at(f, AT_BUF),
					     &got, &rt), ==, -EINVAL);
	}
	/* BUFS_WRITE's fetch step takes up to what a call moves: 128 KiB
	 * of samples in the caller's layout, ENOMEM past them. */
	g_assert_cmpint(write_samples(f, 0, UINT32_MAX, at(f, AT_BUF), &rt),
			==, -ENOMEM);
	g_assert_cmpuint(rt, ==, 1);
	g_assert_cmpint(write_samples(f, 0, CUSEMU_USER_MAX_BYTES /
				      sample_size(f) + 1, at(f, AT_BUF), &rt),
			==, -ENOMEM);
	/* Within it, the driver's own limit: EINVAL once it has them. */
	g_assert_cmpint(write_samples(f, 0, 2000, at(f, AT_BUF), &rt), ==,
			-EINVAL);
	g_assert_cmpuint(rt, ==, 2);
	g_assert_cmpint(read_samples(f, false, 4, at(f, AT_BUF), &got, NULL),
			==, 0);
	g_assert_cmpuint(got, ==, 1);
}

/* A buffer of longs: 4 bytes each for i386, and EOVERFLOW for one that
 * does not fit them; the payload is laid out alike, one number serves. */
static void test_levels(struct fixture *f, gconstpointer data)
{
	size_t size = f->client.compat ? 4 : 8;
	struct bufs_levels l = { at(f, AT_BUF), 4, 0 };

	memcpy(f->client.mem + AT_ARG, &l, sizeof(l));
	g_assert_cmpint(call(f, BUFS_LEVELS, NULL), ==, 0);
	for (unsigned int i = 0; i < 4; i++) {
		int64_t v = 0;

		memcpy(&v, f->client.mem + AT_BUF + i * size, size);
		g_assert_cmpint(size == 4 ? (int32_t)v : v, ==,
				-1000 * (int64_t)i);
	}
	g_assert_cmphex(f->client.mem[AT_BUF + 4 * size], ==, FILL);
	/* Channel 7's is 2^33. */
	l.n = 8;
	memcpy(f->client.mem + AT_ARG, &l, sizeof(l));
	if (f->client.compat) {
		g_assert_cmpint(call(f, BUFS_LEVELS, NULL), ==, -EOVERFLOW);
	} else {
		int64_t v;

		g_assert_cmpint(call(f, BUFS_LEVELS, NULL), ==, 0);
		memcpy(&v, f->client.mem + AT_BUF + 7 * size, size);
		g_assert_cmpint(v, ==, INT64_C(1) << 33);
	}
	l.n = 9;
	memcpy(f->client.mem + AT_ARG, &l, sizeof(l));
	g_assert_cmpint(call(f, BUFS_LEVELS, NULL), ==, -EINVAL);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(struct fixture *, gconstpointer);
	} cases[] = {
		{ "samples", test_samples },
		{ "efault", test_efault },
		{ "oversized", test_oversized },
		{ "levels", test_levels },
	};
	const char *plugin = g_getenv("CUSEMU_BUFFERS_PLUGIN");
	g_autoptr(GError) error = NULL;

	g_test_init(&argc, &argv, NULL);
	if (!plugin || !cusemu_plugin_load(plugin, &error)) {
		g_printerr("the bufs plugin: %s\n", error ? error->message
				: "CUSEMU_BUFFERS_PLUGIN is not set");
		return 1;
	}
	for (unsigned int i = 0; i < G_N_ELEMENTS(cases); i++)
		for (int compat = 0; compat < 2; compat++) {
			g_autofree char *name = g_strdup_printf(
				"/buffers/%s/%s", compat ? "compat" : "native",
				cases[i].name);

			g_test_add(name, struct fixture,
				   GINT_TO_POINTER(compat), setup,
				   cases[i].fn, teardown);
		}
	return g_test_run();
}
