/* SPDX-License-Identifier: MIT */
/*
 * Every cell of the kernel-model table against the fake kernel: which method
 * served the call, whether the big lock was held, and each model's errno
 * for "not mine"; the version each model gives a device; and the global
 * ioctl32 table's rules.
 */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "cusemu/abi/fioc.h"
#include "cusemu/abi/probe.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"
#include "ioctl32.h"
/* After <cusemu/device.h>: the kernel's KERNEL_VERSION() is the SDK's. */
#include <linux/version.h>

#define CLIENT_SIZE 4096

/* One ioctl from a client of the given ABI; the report, or -errno. */
static long probe_call(struct cusemu_device *dev, bool compat,
		       unsigned int cmd, struct cusemu_ioctl_report *r)
{
	struct fake_client c = {
		.base = compat ? 0x08000000 : UINT64_C(0x7f0000000000),
		.size = CLIENT_SIZE,
		.compat = compat,
	};
	struct cusemu_file file = { .dev = dev };
	unsigned int rt;
	uint32_t who;
	long ret;

	c.mem = g_malloc0(CLIENT_SIZE);
	ret = fake_ioctl(&c, dev, &file, cmd, c.base, &rt);
	if (ret >= 0 && (cmd == PROBE_WHO || cmd == PROBE_WHO32)) {
		memcpy(&who, c.mem, sizeof(who));
		*r = (struct cusemu_ioctl_report){
			.method = PROBE_WHO_METHOD(who),
			.big_lock_depth = PROBE_WHO_DEPTH(who),
			.compat = PROBE_WHO_COMPAT(who),
		};
	} else if (ret >= 0) {
		memcpy(r, c.mem, sizeof(*r));
	}
	g_free(c.mem);
	return ret;
}

struct cell {
	const char *kernel;
	const char *methods;	/* the probe device's methods= */
	bool compat;
	unsigned int cmd;
	enum cusemu_method method;	/* expected, or 0 with errno */
	unsigned int depth;
	int err;
};

#define UNKNOWN_CMD _IOR('P', 99, int)
#define N false
#define C true
#define M(x) CUSEMU_METHOD_##x

static const struct cell cells[] = {
	/* 2.6.10: the legacy method under the big lock; the global table. */
	{ "2.6.10", "all", N, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "2.6.10", "unlocked_ioctl", N, PROBE_REPORT, 0, 0, ENOTTY },
	{ "2.6.10", "all", N, UNKNOWN_CMD, 0, 0, ENOTTY },
	{ "2.6.10", "all", C, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "2.6.10", "all", C, PROBE_WHO32, M(IOCTL32_HANDLER), 1, 0 },
	{ "2.6.10", "all", C, PROBE_NATIVE_ONLY, 0, 0, EINVAL },
	/* The patch: unlocked_ioctl without the lock, else ioctl with it. */
	{ "unlocked", "all", N, PROBE_REPORT, M(UNLOCKED_IOCTL), 0, 0 },
	{ "unlocked", "ioctl", N, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "unlocked", "all", C, PROBE_REPORT, M(UNLOCKED_IOCTL), 0, 0 },
	{ "unlocked", "ioctl", C, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "unlocked", "all", C, PROBE_WHO32, M(IOCTL32_HANDLER), 1, 0 },
	{ "unlocked", "all", C, PROBE_NATIVE_ONLY, 0, 0, EINVAL },
	/* split: the two methods without lock; old devices as 2.6.10. */
	{ "split", "all", N, PROBE_REPORT, M(IOCTL_NATIVE), 0, 0 },
	{ "split", "all", N, UNKNOWN_CMD, 0, 0, ENOTTY },
	{ "split", "all", C, PROBE_REPORT, M(IOCTL_COMPAT), 0, 0 },
	{ "split", "all", C, PROBE_WHO32, M(IOCTL_COMPAT), 0, 0 },
	{ "split", "all", C, PROBE_NATIVE_ONLY, 0, 0, EINVAL },
	{ "split", "ioctl", N, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "split", "ioctl", C, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "split", "ioctl", C, PROBE_WHO32, M(IOCTL32_HANDLER), 1, 0 },
	/* 2.6.11: not mine is EINVAL; compat_ioctl, then the table. */
	{ "2.6.11", "all", N, PROBE_REPORT, M(UNLOCKED_IOCTL), 0, 0 },
	{ "2.6.11", "ioctl", N, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "2.6.11", "all", N, UNKNOWN_CMD, 0, 0, EINVAL },
	{ "2.6.11", "all", C, PROBE_REPORT, M(COMPAT_IOCTL), 0, 0 },
	{ "2.6.11", "all", C, PROBE_WHO32, M(COMPAT_IOCTL), 0, 0 },
	{ "2.6.11", "all", C, PROBE_NATIVE_ONLY, 0, 0, EINVAL },
	{ "2.6.11", "ioctl", C, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "2.6.11", "ioctl", C, PROBE_WHO32, M(IOCTL32_HANDLER), 1, 0 },
	/* modern: no table, no lock; not mine is ENOTTY. */
	{ "modern", "all", N, PROBE_REPORT, M(UNLOCKED_IOCTL), 0, 0 },
	{ "modern", "all", N, UNKNOWN_CMD, 0, 0, ENOTTY },
	{ "modern", "all", C, PROBE_REPORT, M(COMPAT_IOCTL), 0, 0 },
	{ "modern", "all", C, PROBE_WHO32, M(COMPAT_IOCTL), 0, 0 },
	{ "modern", "all", C, PROBE_NATIVE_ONLY, 0, 0, ENOTTY },
	{ "modern", "ioctl", N, PROBE_REPORT, 0, 0, ENOTTY },
	{ "modern", "ioctl", C, PROBE_REPORT, 0, 0, ENOTTY },
	/*
	 * test-locked-compat, of test_kernel_models: 2.6.11's native
	 * methods, not mine EOPNOTSUPP; compat_ioctl under the big lock, no
	 * table behind it.
	 */
	{ "test-locked-compat", "all", N, PROBE_REPORT, M(UNLOCKED_IOCTL), 0,
	  0 },
	{ "test-locked-compat", "ioctl", N, PROBE_REPORT, M(IOCTL), 1, 0 },
	{ "test-locked-compat", "all", N, UNKNOWN_CMD, 0, 0, EOPNOTSUPP },
	{ "test-locked-compat", "all", C, PROBE_REPORT, M(COMPAT_IOCTL), 1, 0 },
	{ "test-locked-compat", "all", C, PROBE_WHO32, M(COMPAT_IOCTL), 1, 0 },
	{ "test-locked-compat", "all", C, PROBE_NATIVE_ONLY, 0, 0, ENOTTY },
	{ "test-locked-compat", "ioctl", C, PROBE_REPORT, 0, 0, ENOTTY },
};

static void test_cell(gconstpointer data)
{
	const struct cell *cell = data;
	g_autofree char *arg = g_strdup_printf("probe:kernel=%s,methods=%s",
					       cell->kernel, cell->methods);
	struct cusemu_device *dev = fake_device_new(arg);
	struct cusemu_ioctl_report r = { 0 };
	long ret = probe_call(dev, cell->compat, cell->cmd, &r);

	if (cell->err) {
		g_assert_cmpint(ret, ==, -cell->err);
	} else {
		g_assert_cmpint(ret, >=, 0);
		g_assert_cmpstr(cusemu_method_name(r.method), ==,
				cusemu_method_name(cell->method));
		g_assert_cmpuint(r.big_lock_depth, ==, cell->depth);
		g_assert_cmpuint(r.compat, ==, cell->compat);
	}
	fake_device_free(dev);
}

static void test_lock_override(void)
{
	struct cusemu_device *dev;
	struct cusemu_ioctl_report r;

	/* --lock=global takes the big lock even where modern would not. */
	dev = fake_device_new("probe:kernel=modern");
	cusemu_dispatch_unbind(dev);
	cusemu_dispatch_bind(dev, CUSEMU_LOCK_GLOBAL);
	g_assert_cmpint(probe_call(dev, false, PROBE_REPORT, &r), ==, 0);
	g_assert_cmpuint(r.big_lock_depth, ==, 1);
	fake_device_free(dev);
	/* --lock=none drops it where 2.6.10 would take it. */
	dev = fake_device_new("probe:kernel=2.6.10");
	cusemu_dispatch_unbind(dev);
	cusemu_dispatch_bind(dev, CUSEMU_LOCK_NONE);
	g_assert_cmpint(probe_call(dev, false, PROBE_REPORT, &r), ==, 0);
	g_assert_cmpstr(cusemu_method_name(r.method), ==, "ioctl");
	g_assert_cmpuint(r.big_lock_depth, ==, 0);
	fake_device_free(dev);
}

static void test_duplicate_registration(void)
{
	struct cusemu_device *probe, *fioc;
	struct cusemu_ioctl_report r;
	uint8_t buf[64] = { 0 };
	struct fake_client c = {
		.base = 0x08000000, .mem = buf, .size = sizeof(buf),
		.compat = true,
	};
	struct cusemu_file file;
	unsigned int rt;

	/* probe comes first and takes fioc's FIOC_READ number. */
	probe = fake_device_new("probe:kernel=2.6.10");
	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to register duplicated ioctl32 handler 4502");
	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "/dev/fioc0 (fioc) lost FIOC_READ (00004502) in the "
			      "global ioctl32 table to /dev/probe0 (probe)*");
	fioc = fake_device_new("fioc:kernel=2.6.10");
	g_test_assert_expected_messages();

	/* A 32-bit FIOC_READ on fioc finds probe's handler: not run. */
	file = (struct cusemu_file){ .dev = fioc };
	g_assert_cmpint(fake_ioctl(&c, fioc, &file, FIOC_READ, c.base, &rt), ==,
			-EINVAL);
	/* fioc's other commands are its own. */
	g_assert_cmpint(fake_ioctl(&c, fioc, &file, FIOC_GET_SIZE32, c.base,
				   &rt),
			==, 0);
	/* On probe's own node the claimed number is probe's. */
	file = (struct cusemu_file){ .dev = probe };
	g_assert_cmpint(probe_call(probe, true, PROBE_CLAIM_FIOC_READ, &r), >,
			0);

	fake_device_free(fioc);
	fake_device_free(probe);
}

static void test_unregister_unknown(void)
{
	struct cusemu_device *dev = fake_device_new("probe:kernel=modern");

	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to free unknown 32bit ioctl handler 1234");
	g_assert_cmpint(cusemu_ioctl32_unregister(0x1234, dev), ==, -EINVAL);
	g_test_assert_expected_messages();
	fake_device_free(dev);
}

static void test_register_twice(void)
{
	struct cusemu_device *dev = fake_device_new("probe:kernel=modern");
	static const struct cusemu_ioctl row = CUSEMU_COMPAT_SAME(0x4321);

	g_assert_cmpint(cusemu_ioctl32_register(&row, dev), ==, 0);
	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to register duplicated ioctl32 handler 4321");
	g_assert_cmpint(cusemu_ioctl32_register(&row, dev), ==, -EINVAL);
	g_test_assert_expected_messages();
	g_assert_cmpint(cusemu_ioctl32_unregister(0x4321, dev), ==, 0);
	fake_device_free(dev);
}

/* A device as cusemuctl add makes it: bound all or none. */
static struct cusemu_device *added_device(const char *arg, GError **error)
{
	struct cusemu_config *config = cusemu_config_new();
	struct cusemu_device *dev;

	g_assert_true(cusemu_config_add_device_arg(config, arg, NULL));
	dev = cusemu_device_new(config->devices->pdata[0], 0,
				cusemu_kernel_model_find("modern"), NULL);
	g_assert_nonnull(dev);
	cusemu_config_free(config);
	if (cusemu_dispatch_bind_added(dev, CUSEMU_LOCK_MODEL, error))
		return dev;
	cusemu_device_free(dev);
	return NULL;
}

/* An add whose command another model holds is refused whole. */
static void test_add_refused(void)
{
	struct cusemu_device *probe = fake_device_new("probe:kernel=2.6.11");
	struct cusemu_device *fioc, *later;
	g_autoptr(GError) error = NULL;

	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to register duplicated ioctl32 handler 4502");
	fioc = added_device("fioc:kernel=2.6.11", &error);
	g_test_assert_expected_messages();
	g_assert_null(fioc);
	g_assert_nonnull(strstr(error->message, "FIOC_READ (00004502)"));
	g_assert_nonnull(strstr(error->message, "/dev/probe0 (probe)"));
	/* What it registered before the refusal was taken back: a later fioc
	 * registers every row again, once probe is gone. */
	fake_device_free(probe);
	later = added_device("fioc:kernel=2.6.11", &error);
	g_assert_nonnull(later);
	cusemu_dispatch_unplug(later);
	cusemu_dispatch_unbind(later);
	cusemu_device_free(later);
}

/* A removal unregisters every entry once; the unbind after it none. */
static void test_remove(void)
{
	struct cusemu_device *fioc = added_device("fioc:kernel=2.6.10", NULL);
	struct cusemu_device *second = added_device("fioc:kernel=2.6.10", NULL);

	/* The entries are the model's: they stay while a device has it. */
	cusemu_dispatch_unplug(fioc);
	cusemu_dispatch_unbind(fioc);
	cusemu_device_free(fioc);
	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to register duplicated ioctl32 handler 80044500");
	g_assert_cmpint(cusemu_ioctl32_register(
				cusemu_ioctl_lookup(second->model->compat_table,
						    FIOC_GET_SIZE32),
				second),
			==, -EINVAL);
	g_test_assert_expected_messages();
	cusemu_dispatch_unplug(second);
	/* Gone: freeing one again is 2.6.11's unknown entry. */
	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to free unknown 32bit ioctl handler 80044500");
	g_assert_cmpint(cusemu_ioctl32_unregister(FIOC_GET_SIZE32, second), ==,
			-EINVAL);
	g_test_assert_expected_messages();
	cusemu_dispatch_unbind(second);
	cusemu_device_free(second);
}

/* A removal frees what the device lost at start-up: EINVAL and the log. */
static void test_remove_lost(void)
{
	struct cusemu_device *probe = fake_device_new("probe:kernel=2.6.10");
	struct cusemu_ioctl_report r;
	struct cusemu_device *fioc;

	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to register duplicated ioctl32 handler 4502");
	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "/dev/fioc0 (fioc) lost FIOC_READ*");
	fioc = fake_device_new("fioc:kernel=2.6.10");
	g_test_assert_expected_messages();
	g_test_expect_message("cusemu-ioctl32", G_LOG_LEVEL_WARNING,
			      "Trying to free unknown 32bit ioctl handler 4502");
	cusemu_dispatch_unplug(fioc);
	g_test_assert_expected_messages();
	/* probe keeps its entry. */
	g_assert_cmpint(probe_call(probe, true, PROBE_CLAIM_FIOC_READ, &r), >,
			0);
	fake_device_free(fioc);
	fake_device_free(probe);
}

/*
 * The version each generation gives a device model, in the table's order:
 * a generation added to the lists of kernel/meson.build without its line
 * here fails.
 */
static const struct {
	const char *name;
	unsigned int version;
} versions[] = {
	{ "2.6.10", KERNEL_VERSION(2, 6, 10) },
	/* The December 2004 patches: trees that said 2.6.10. */
	{ "unlocked", KERNEL_VERSION(2, 6, 10) },
	{ "split", KERNEL_VERSION(2, 6, 10) },
	{ "2.6.11", KERNEL_VERSION(2, 6, 11) },
	{ "modern", KERNEL_VERSION(5, 5, 0) },
	/* Of the tests alone: today's, after the installed models. */
	{ "test-locked-compat", KERNEL_VERSION(5, 5, 0) },
};

/* A device under each kernel model sees its version, in the kernel's
 * encoding; a later generation never has a lower one. */
static void test_versions(void)
{
	unsigned int i, last = 0;

	g_assert_cmphex(KERNEL_VERSION(2, 6, 11), ==, 0x02060b);
	for (i = 0; cusemu_kernel_models[i]; i++) {
		const struct cusemu_kernel_model *km = cusemu_kernel_models[i];
		g_autofree char *arg = g_strdup_printf("probe:kernel=%s",
						       km->name);
		struct cusemu_device *dev;

		g_assert_cmpuint(i, <, G_N_ELEMENTS(versions));
		g_assert_cmpstr(km->name, ==, versions[i].name);
		dev = fake_device_new(arg);
		g_assert_cmpstr(cusemu_device_kernel_model(dev), ==, km->name);
		g_assert_cmphex(cusemu_device_kernel_version(dev), ==,
				versions[i].version);
		fake_device_free(dev);
		g_assert_cmphex(km->version, >=, last);
		last = km->version;
	}
	g_assert_cmpuint(i, ==, G_N_ELEMENTS(versions));
	/* The generations before the merge are below 2.6.11, the merged
	 * one and today's at or above it, as a model asks. */
	g_assert_cmphex(cusemu_kernel_model_find("split")->version, <,
			KERNEL_VERSION(2, 6, 11));
	g_assert_cmphex(cusemu_kernel_model_find("2.6.11")->version, >=,
			KERNEL_VERSION(2, 6, 11));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	for (unsigned int i = 0; i < G_N_ELEMENTS(cells); i++) {
		const struct cell *c = &cells[i];
		g_autofree char *name = g_strdup_printf(
			"/models/%s/%s/%s/%08x", c->kernel, c->methods,
			c->compat ? "i386" : "x86_64", c->cmd);

		g_test_add_data_func(name, c, test_cell);
	}
	g_test_add_func("/models/lock-override", test_lock_override);
	g_test_add_func("/models/versions", test_versions);
	g_test_add_func("/ioctl32/duplicate-registration",
			test_duplicate_registration);
	g_test_add_func("/ioctl32/unregister-unknown", test_unregister_unknown);
	g_test_add_func("/ioctl32/register-twice", test_register_twice);
	g_test_add_func("/ioctl32/add-refused", test_add_refused);
	g_test_add_func("/ioctl32/remove", test_remove);
	g_test_add_func("/ioctl32/remove-lost", test_remove_lost);
	return g_test_run();
}
