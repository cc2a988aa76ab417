/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the watchdog model against the fake kernel (no CUSE): every
 * WDIOC_* command from native and i386 callers, open, write and release, the
 * magic close, nowayout, and the emulated pretimeout and expiry.
 */
#include <string.h>

#include <glib.h>
#include <linux/watchdog.h>

#include "config.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"
#include "stats.h"

#define NATIVE_BASE UINT64_C(0x7f0000000000)
#define COMPAT_BASE UINT64_C(0x08000000)
#define CLIENT_SIZE 4096u
#define AT_ARG 0x100
/* Never mapped in the fake client: every access to it faults. */
#define BAD_ADDR 8
/* Prefill, so that bytes the device did not write can be told apart. */
#define FILL 0xAA

#define WD_DEFAULT_OPTIONS                                             \
	(WDIOF_SETTIMEOUT | WDIOF_KEEPALIVEPING | WDIOF_MAGICCLOSE |   \
	 WDIOF_PRETIMEOUT | WDIOF_CARDRESET)

/* What the model logged, from any thread (the timer thread logs too). */
static GMutex log_lock;
static GPtrArray *log_lines;

static void capture_log(const gchar *domain, GLogLevelFlags level,
			const gchar *message, gpointer data)
{
	g_mutex_lock(&log_lock);
	g_ptr_array_add(log_lines, g_strdup(message));
	g_mutex_unlock(&log_lock);
}

static unsigned int logged(const char *needle)
{
	unsigned int n = 0;

	g_mutex_lock(&log_lock);
	for (guint i = 0; i < log_lines->len; i++)
		if (strstr(log_lines->pdata[i], needle))
			n++;
	g_mutex_unlock(&log_lock);
	return n;
}

struct fixture {
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client client;
	bool open;
};

/* One test in one ABI: the device description and the caller. */
struct run {
	const char *device;
	bool compat;
};

static void setup(struct fixture *f, gconstpointer data)
{
	const struct run *r = data;

	g_mutex_lock(&log_lock);
	g_ptr_array_set_size(log_lines, 0);
	g_mutex_unlock(&log_lock);
	f->dev = fake_device_new(r->device);
	f->file = (struct cusemu_file){ .dev = f->dev };
	f->client.compat = r->compat;
	f->client.base = r->compat ? COMPAT_BASE : NATIVE_BASE;
	f->client.size = CLIENT_SIZE;
	f->client.mem = g_malloc0(CLIENT_SIZE);
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	f->open = true;
}

static void wd_release(struct fixture *f)
{
	f->dev->model->release(f->dev, &f->file);
	f->open = false;
}

static ssize_t wd_write(struct fixture *f, const char *data)
{
	return f->dev->model->write(f->dev, &f->file, data, strlen(data));
}

static void teardown(struct fixture *f, gconstpointer data)
{
	if (f->open) {
		wd_write(f, "V");
		wd_release(f);
	}
	fake_device_free(f->dev);
	g_free(f->client.mem);
}

static cusemu_uptr_t at(struct fixture *f, size_t off)
{
	return f->client.base + off;
}

static long do_ioctl(struct fixture *f, unsigned int cmd, cusemu_uptr_t arg)
{
	unsigned int rt;

	return fake_ioctl(&f->client, f->dev, &f->file, cmd, arg, &rt);
}

/* An _IOR int command: its value, with the bytes past the int unmoved. */
static int get_int(struct fixture *f, unsigned int cmd)
{
	int v;

	memset(f->client.mem + AT_ARG, FILL, 8);
	g_assert_cmpint(do_ioctl(f, cmd, at(f, AT_ARG)), ==, 0);
	g_assert_cmphex(f->client.mem[AT_ARG + 4], ==, FILL);
	memcpy(&v, f->client.mem + AT_ARG, sizeof(v));
	return v;
}

/* An int in, the result out, *back the int as the caller sees it after. */
static long set_int(struct fixture *f, unsigned int cmd, int v, int *back)
{
	long ret;

	memcpy(f->client.mem + AT_ARG, &v, sizeof(v));
	ret = do_ioctl(f, cmd, at(f, AT_ARG));
	if (back)
		memcpy(back, f->client.mem + AT_ARG, sizeof(*back));
	return ret;
}

/* GETSTATUS without the PRETIMEOUT bit, which is always there. */
static unsigned int status(struct fixture *f)
{
	unsigned int s = (unsigned int)get_int(f, WDIOC_GETSTATUS);

	g_assert_cmphex(s & WDIOF_PRETIMEOUT, ==, WDIOF_PRETIMEOUT);
	return s & ~WDIOF_PRETIMEOUT;
}

static int timeleft(struct fixture *f)
{
	return get_int(f, WDIOC_GETTIMELEFT);
}

static uint64_t events(struct fixture *f, const char *event)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_autofree char *key = g_strdup_printf("\"%s\":", event);
	const char *p;

	cusemu_stats_append_json(cusemu_instance(f->dev)->stats, s);
	p = strstr(s->str, "\"events\":");
	p = p ? strstr(p, key) : NULL;
	return p ? g_ascii_strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Poll for an event count, up to ms milliseconds: no fixed sleeps. */
static bool wait_event(struct fixture *f, const char *event, uint64_t n,
		       unsigned int ms)
{
	gint64 end = g_get_monotonic_time() + ms * G_TIME_SPAN_MILLISECOND;

	while (events(f, event) < n) {
		if (g_get_monotonic_time() > end)
			return false;
		g_usleep(10 * G_TIME_SPAN_MILLISECOND);
	}
	return true;
}

static void test_support(struct fixture *f, gconstpointer data)
{
	struct watchdog_info info;
	uint8_t want_id[32] = "unit dog";

	memset(f->client.mem + AT_ARG, FILL, sizeof(info) + 4);
	g_assert_cmpint(do_ioctl(f, WDIOC_GETSUPPORT, at(f, AT_ARG)), ==, 0);
	memcpy(&info, f->client.mem + AT_ARG, sizeof(info));
	g_assert_cmphex(info.options, ==, WD_DEFAULT_OPTIONS);
	g_assert_cmphex(info.firmware_version, ==, 0x123);
	g_assert_cmpmem(info.identity, sizeof(info.identity), want_id,
			sizeof(want_id));
	/* 40 bytes on both ABIs, nothing past them. */
	g_assert_cmphex(f->client.mem[AT_ARG + sizeof(info)], ==, FILL);
}

static void test_no_temp(struct fixture *f, gconstpointer data)
{
	struct watchdog_info info;

	/* Not the driver's command: what an unknown one gets. */
	memset(f->client.mem + AT_ARG, FILL, 4);
	g_assert_cmpint(do_ioctl(f, WDIOC_GETTEMP, at(f, AT_ARG)), ==,
			-ENOTTY);
	g_assert_cmphex(f->client.mem[AT_ARG], ==, FILL);
	/* Decided before the argument is looked at. */
	g_assert_cmpint(do_ioctl(f, WDIOC_GETTEMP, BAD_ADDR), ==, -ENOTTY);
	g_assert_cmpint(do_ioctl(f, WDIOC_GETSUPPORT, at(f, AT_ARG)), ==, 0);
	memcpy(&info, f->client.mem + AT_ARG, sizeof(info));
	g_assert_cmphex(info.options & WDIOF_OVERHEAT, ==, 0);
}

static void test_temp(struct fixture *f, gconstpointer data)
{
	struct watchdog_info info;

	g_assert_cmpint(get_int(f, WDIOC_GETTEMP), ==, 150);
	g_assert_cmpint(do_ioctl(f, WDIOC_GETTEMP, BAD_ADDR), ==, -EFAULT);
	g_assert_cmpint(do_ioctl(f, WDIOC_GETSUPPORT, at(f, AT_ARG)), ==, 0);
	memcpy(&info, f->client.mem + AT_ARG, sizeof(info));
	g_assert_cmphex(info.options, ==, WD_DEFAULT_OPTIONS | WDIOF_OVERHEAT);
	/* The framework's SETOPTIONS knows no TEMPPANIC. */
	g_assert_cmpint(set_int(f, WDIOC_SETOPTIONS, WDIOS_TEMPPANIC, NULL),
			==, -ENOTTY);
}

static void test_timeout(struct fixture *f, gconstpointer data)
{
	int back;

	g_assert_cmpint(get_int(f, WDIOC_GETTIMEOUT), ==, 30);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 10, &back), ==, 0);
	g_assert_cmpint(back, ==, 10);
	g_assert_cmpint(get_int(f, WDIOC_GETTIMEOUT), ==, 10);
	g_assert_cmpint(timeleft(f), ==, 10);

	/* min_timeout=2, max_timeout=100; the argument is left as it was. */
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 1, &back), ==, -EINVAL);
	g_assert_cmpint(back, ==, 1);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 0, NULL), ==, -EINVAL);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 101, NULL), ==, -EINVAL);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, -1, NULL), ==, -EINVAL);
	g_assert_cmpint(get_int(f, WDIOC_GETTIMEOUT), ==, 10);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 100, &back), ==, 0);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 2, &back), ==, 0);
	g_assert_cmpint(back, ==, 2);
}

static void test_set_timeout_pings(struct fixture *f, gconstpointer data)
{
	status(f);
	g_assert_cmphex(status(f) & WDIOF_KEEPALIVEPING, ==, 0);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 20, NULL), ==, 0);
	g_assert_cmphex(status(f) & WDIOF_KEEPALIVEPING, ==,
			WDIOF_KEEPALIVEPING);
}

static void test_pretimeout(struct fixture *f, gconstpointer data)
{
	int back;

	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 3);
	g_assert_cmpint(set_int(f, WDIOC_SETPRETIMEOUT, 10, NULL), ==, -EINVAL);
	g_assert_cmpint(set_int(f, WDIOC_SETPRETIMEOUT, 11, NULL), ==, -EINVAL);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 3);
	/* _IOWR, yet nothing is written back: the caller's int stays. */
	g_assert_cmpint(set_int(f, WDIOC_SETPRETIMEOUT, 9, &back), ==, 0);
	g_assert_cmpint(back, ==, 9);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 9);
	/* A timeout the pretimeout no longer fits under turns it off. */
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 9, NULL), ==, 0);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 0);
	g_assert_cmpint(set_int(f, WDIOC_SETPRETIMEOUT, 5, NULL), ==, 0);
	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 6, NULL), ==, 0);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 5);
	g_assert_cmpint(set_int(f, WDIOC_SETPRETIMEOUT, 0, NULL), ==, 0);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 0);
}

static void test_status(struct fixture *f, gconstpointer data)
{
	/* The open started it: a keepalive, read once. */
	g_assert_cmphex(status(f), ==, WDIOF_KEEPALIVEPING);
	g_assert_cmphex(status(f), ==, 0);
	g_assert_cmpint(get_int(f, WDIOC_GETBOOTSTATUS), ==, 0);
	/* KEEPALIVE ignores its argument: 0 is fine. */
	g_assert_cmpint(do_ioctl(f, WDIOC_KEEPALIVE, 0), ==, 0);
	g_assert_cmphex(status(f), ==, WDIOF_KEEPALIVEPING);
	g_assert_cmpint(wd_write(f, "abcVd"), ==, 5);
	g_assert_cmphex(status(f), ==, WDIOF_KEEPALIVEPING | WDIOF_MAGICCLOSE);
	g_assert_cmphex(status(f), ==, WDIOF_MAGICCLOSE);
	/* A later write without 'V' takes the magic back. */
	g_assert_cmpint(wd_write(f, "x"), ==, 1);
	g_assert_cmphex(status(f), ==, WDIOF_KEEPALIVEPING);
	/* An empty write does nothing, not even a ping. */
	g_assert_cmpint(f->dev->model->write(f->dev, &f->file, "", 0), ==, 0);
	g_assert_cmphex(status(f), ==, 0);
}

static void test_options(struct fixture *f, gconstpointer data)
{
	/* Neither DISABLECARD nor ENABLECARD: watchdog_dev.c's "not mine". */
	g_assert_cmpint(set_int(f, WDIOC_SETOPTIONS, 0, NULL), ==, -ENOTTY);
	g_assert_cmpint(set_int(f, WDIOC_SETOPTIONS, 0x8, NULL), ==, -ENOTTY);
	g_assert_cmpint(timeleft(f), ==, 30);

	g_assert_cmpint(set_int(f, WDIOC_SETOPTIONS, WDIOS_DISABLECARD, NULL),
			==, 0);
	g_assert_cmpint(timeleft(f), ==, 0);
	/* A stopped watchdog ignores pings. */
	status(f);
	g_assert_cmpint(do_ioctl(f, WDIOC_KEEPALIVE, 0), ==, 0);
	g_assert_cmpint(wd_write(f, "x"), ==, 1);
	g_assert_cmphex(status(f), ==, 0);
	g_assert_cmpint(timeleft(f), ==, 0);

	g_assert_cmpint(set_int(f, WDIOC_SETOPTIONS, WDIOS_ENABLECARD, NULL),
			==, 0);
	g_assert_cmpint(timeleft(f), ==, 30);
	g_assert_cmphex(status(f), ==, WDIOF_KEEPALIVEPING);
	/* Stop, then start: running, unknown bits ignored. */
	g_assert_cmpint(set_int(f, WDIOC_SETOPTIONS,
				WDIOS_DISABLECARD | WDIOS_ENABLECARD | 0x100,
				NULL), ==, 0);
	g_assert_cmpint(timeleft(f), ==, 30);
}

static void test_single_open(struct fixture *f, gconstpointer data)
{
	struct cusemu_file second = { .dev = f->dev };

	g_assert_cmpint(f->dev->model->open(f->dev, &second), ==, -EBUSY);
	wd_write(f, "V");
	wd_release(f);
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	f->open = true;
}

/*
 * After a release the fixture's file still reaches the handlers, which the
 * kernel would not allow: a way to look at the state the close left.
 */
static void test_release_no_magic(struct fixture *f, gconstpointer data)
{
	wd_release(f);
	g_assert_cmpuint(logged("watchdog0: watchdog did not stop!"), ==, 1);
	g_assert_cmpint(timeleft(f), ==, 30);
	/* The release pinged it. */
	g_assert_cmphex(status(f), ==, WDIOF_KEEPALIVEPING);
}

static void test_magic_close(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(wd_write(f, "V"), ==, 1);
	wd_release(f);
	g_assert_cmpuint(logged("did not stop"), ==, 0);
	g_assert_cmpint(timeleft(f), ==, 0);
	/* The next open starts it afresh. */
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	f->open = true;
	g_assert_cmpint(timeleft(f), ==, 30);
}

static void test_magic_taken_back(struct fixture *f, gconstpointer data)
{
	wd_write(f, "V");
	wd_write(f, "no magic");
	wd_release(f);
	g_assert_cmpuint(logged("did not stop"), ==, 1);
	g_assert_cmpint(timeleft(f), ==, 30);
}

static void test_nowayout(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(set_int(f, WDIOC_SETOPTIONS, WDIOS_DISABLECARD, NULL),
			==, -EBUSY);
	g_assert_cmpuint(logged("nowayout prevents watchdog being stopped!"),
			 ==, 1);
	g_assert_cmpint(timeleft(f), ==, 30);
	/* The 'V' is taken, and shown, but cannot stop it. */
	wd_write(f, "V");
	g_assert_cmphex(status(f) & WDIOF_MAGICCLOSE, ==, WDIOF_MAGICCLOSE);
	wd_release(f);
	g_assert_cmpuint(logged("nowayout prevents"), ==, 2);
	g_assert_cmpuint(logged("did not stop"), ==, 1);
	g_assert_cmpint(timeleft(f), ==, 30);
	/* The device is removed with its watchdog running. */
}

static void test_bad_pointers(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(do_ioctl(f, WDIOC_GETSUPPORT, BAD_ADDR), ==, -EFAULT);
	g_assert_cmpint(do_ioctl(f, WDIOC_GETSTATUS, BAD_ADDR), ==, -EFAULT);
	g_assert_cmpint(do_ioctl(f, WDIOC_GETTIMELEFT, BAD_ADDR), ==, -EFAULT);
	g_assert_cmpint(do_ioctl(f, WDIOC_SETTIMEOUT, BAD_ADDR), ==, -EFAULT);
	g_assert_cmpint(get_int(f, WDIOC_GETTIMEOUT), ==, 30);
	g_assert_cmpint(do_ioctl(f, WDIOC_SETPRETIMEOUT, BAD_ADDR), ==,
			-EFAULT);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 0);
	/* SETOPTIONS fetches its int itself: a fault leaves it running. */
	g_assert_cmpint(do_ioctl(f, WDIOC_SETOPTIONS, BAD_ADDR), ==, -EFAULT);
	g_assert_cmpint(timeleft(f), ==, 30);
	/* An int that ends past the client's memory. */
	g_assert_cmpint(do_ioctl(f, WDIOC_GETTIMEOUT, at(f, CLIENT_SIZE - 2)),
			==, -EFAULT);
}

static void test_unknown(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(do_ioctl(f, _IOR('W', 99, int), at(f, AT_ARG)), ==,
			-ENOTTY);
	/* KEEPALIVE's number with other size bits is another command. */
	g_assert_cmpint(do_ioctl(f, _IO('W', 5), 0), ==, -ENOTTY);
	g_assert_cmpint(do_ioctl(f, _IOR('W', 7, long long), at(f, AT_ARG)),
			==, -ENOTTY);
}

/*
 * timeout=3, pretimeout=1, SETTIMEOUT 2: pings keep both off; without them
 * the pretimeout comes a second before the expiry, and the expiry is an
 * emulated reset that stops the watchdog and restores the configuration.
 */
static void test_expiry(struct fixture *f, gconstpointer data)
{
	gint64 end;

	g_assert_cmpint(set_int(f, WDIOC_SETTIMEOUT, 2, NULL), ==, 0);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 1);
	end = g_get_monotonic_time() + 1500 * G_TIME_SPAN_MILLISECOND;
	for (unsigned int i = 0; g_get_monotonic_time() < end; i++) {
		g_usleep(200 * G_TIME_SPAN_MILLISECOND);
		if (i % 2)
			g_assert_cmpint(do_ioctl(f, WDIOC_KEEPALIVE, 0), ==, 0);
		else
			g_assert_cmpint(wd_write(f, "ping"), ==, 4);
	}
	g_assert_cmpuint(events(f, "pretimeout"), ==, 0);
	g_assert_cmpuint(events(f, "expired"), ==, 0);
	g_assert_cmpint(get_int(f, WDIOC_GETBOOTSTATUS), ==, 0);

	g_assert_true(wait_event(f, "pretimeout", 1, 3000));
	if (!events(f, "expired"))
		g_assert_cmpint(timeleft(f), ==, 1);
	g_assert_cmpuint(logged("watchdog0: pretimeout event"), ==, 1);
	g_assert_true(wait_event(f, "expired", 1, 3000));
	g_assert_cmpuint(logged("watchdog0: timeout expired: emulated reset"),
			 ==, 1);

	g_assert_cmpint(get_int(f, WDIOC_GETBOOTSTATUS), ==, WDIOF_CARDRESET);
	g_assert_cmphex(status(f), ==, WDIOF_CARDRESET);
	g_assert_cmpint(timeleft(f), ==, 0);
	g_assert_cmpint(get_int(f, WDIOC_GETTIMEOUT), ==, 3);
	g_assert_cmpint(get_int(f, WDIOC_GETPRETIMEOUT), ==, 1);
	/* Stopped by the reset: a ping does not bring it back. */
	g_assert_cmpint(do_ioctl(f, WDIOC_KEEPALIVE, 0), ==, 0);
	g_assert_cmpint(timeleft(f), ==, 0);

	/* Nothing to stop at the close; the next open starts it again. */
	wd_release(f);
	g_assert_cmpuint(logged("did not stop"), ==, 0);
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	f->open = true;
	g_assert_cmpint(timeleft(f), ==, 3);
	g_assert_cmpint(get_int(f, WDIOC_GETBOOTSTATUS), ==, WDIOF_CARDRESET);
	g_assert_cmpuint(events(f, "expired"), ==, 1);
	g_assert_cmpuint(events(f, "pretimeout"), ==, 1);
}

/* A close without the magic leaves it running into the expiry. */
static void test_expiry_after_close(struct fixture *f, gconstpointer data)
{
	wd_release(f);
	g_assert_true(wait_event(f, "expired", 1, 3000));
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	f->open = true;
	g_assert_cmpint(get_int(f, WDIOC_GETBOOTSTATUS), ==, WDIOF_CARDRESET);
	g_assert_cmpint(timeleft(f), ==, 1);
}

static const char *const bad_configs[][2] = {
	{ "watchdog:timeout=5,pretimeout=5", "pretimeout 5 is not below" },
	{ "watchdog:min_timeout=10,max_timeout=5", "is above max_timeout" },
	{ "watchdog:timeout=4000", "is outside min_timeout..max_timeout" },
	{ "watchdog:timeout=5,min_timeout=6", "is outside" },
	{ "watchdog:identity=an identity of thirty-two chars.",
	  "longer than 31" },
	{ "watchdog:temp=1001", "out of range" },
};

static void test_bad_config(void)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(bad_configs); i++) {
		struct cusemu_config *config = cusemu_config_new();
		g_autoptr(GError) error = NULL;
		struct cusemu_device *dev;

		g_assert_true(cusemu_config_add_device_arg(
			config, bad_configs[i][0], &error));
		dev = cusemu_device_new(config->devices->pdata[0], 0,
					cusemu_kernel_model_find("modern"),
					&error);
		g_assert_null(dev);
		g_assert_nonnull(error);
		g_assert_nonnull(strstr(error->message, bad_configs[i][1]));
		cusemu_config_free(config);
	}
}

/* What an unknown command gives under the kernel models, from each ABI. */
static long call_under(const char *kernel, bool compat, unsigned int cmd)
{
	g_autofree char *arg = g_strdup_printf("watchdog:kernel=%s", kernel);
	struct cusemu_device *dev = fake_device_new(arg);
	struct fake_client c = {
		.base = compat ? COMPAT_BASE : NATIVE_BASE,
		.size = CLIENT_SIZE,
		.compat = compat,
	};
	struct cusemu_file file = { .dev = dev };
	unsigned int rt;
	long ret;

	c.mem = g_malloc0(CLIENT_SIZE);
	ret = fake_ioctl(&c, dev, &file, cmd, c.base, &rt);
	if (cmd == WDIOC_GETTIMEOUT && ret == 0)
		ret = *(int *)c.mem;
	g_free(c.mem);
	fake_device_free(dev);
	return ret;
}

static void test_kernel_models(void)
{
	static const struct {
		const char *kernel;
		long native, compat;	/* for an unknown command */
		/* For a known one whose handler says "not mine". */
		long compat_not_mine;
	} cells[] = {
		{ "modern", -ENOTTY, -ENOTTY, -ENOTTY },
		{ "2.6.11", -EINVAL, -EINVAL, -EINVAL },
		{ "2.6.10", -ENOTTY, -EINVAL, -ENOTTY },
	};
	unsigned int unknown = _IOR('W', 99, int);

	for (unsigned int i = 0; i < G_N_ELEMENTS(cells); i++) {
		g_test_message("kernel %s", cells[i].kernel);
		/* The compatible rows serve i386 callers in every model. */
		g_assert_cmpint(call_under(cells[i].kernel, false,
					   WDIOC_GETTIMEOUT), ==, 60);
		g_assert_cmpint(call_under(cells[i].kernel, true,
					   WDIOC_GETTIMEOUT), ==, 60);
		g_assert_cmpint(call_under(cells[i].kernel, false, unknown),
				==, cells[i].native);
		g_assert_cmpint(call_under(cells[i].kernel, true, unknown),
				==, cells[i].compat);
		/* The handlers' "not mine" is mapped the same way. */
		for (unsigned int abi = 0; abi < 2; abi++) {
			g_assert_cmpint(call_under(cells[i].kernel, abi,
						   WDIOC_SETOPTIONS), ==,
					abi ? cells[i].compat_not_mine
					    : cells[i].native);
			g_assert_cmpint(call_under(cells[i].kernel, abi,
						   WDIOC_GETTEMP), ==,
					abi ? cells[i].compat_not_mine
					    : cells[i].native);
		}
	}
}

#define DEV_30 "watchdog:timeout=30"

static const struct {
	const char *name;
	const char *device;
	void (*fn)(struct fixture *, gconstpointer);
} cases[] = {
	{ "support", "watchdog:identity=unit dog,firmware_version=0x123",
	  test_support },
	{ "no-temp", "watchdog", test_no_temp },
	{ "temp", "watchdog:temp=150", test_temp },
	{ "timeout", "watchdog:timeout=30,min_timeout=2,max_timeout=100",
	  test_timeout },
	{ "set-timeout-pings", DEV_30, test_set_timeout_pings },
	{ "pretimeout", "watchdog:timeout=10,pretimeout=3", test_pretimeout },
	{ "status", DEV_30, test_status },
	{ "options", DEV_30, test_options },
	{ "single-open", DEV_30, test_single_open },
	{ "release-no-magic", DEV_30, test_release_no_magic },
	{ "magic-close", DEV_30, test_magic_close },
	{ "magic-taken-back", DEV_30, test_magic_taken_back },
	{ "nowayout", DEV_30 ",nowayout=true", test_nowayout },
	{ "bad-pointers", DEV_30, test_bad_pointers },
	{ "unknown-command", DEV_30, test_unknown },
	{ "expiry", "watchdog:timeout=3,pretimeout=1", test_expiry },
	{ "expiry-after-close", "watchdog:timeout=1",
	  test_expiry_after_close },
};

int main(int argc, char **argv)
{
	static struct run runs[2 * G_N_ELEMENTS(cases)];

	g_test_init(&argc, &argv, NULL);
	log_lines = g_ptr_array_new_with_free_func(g_free);
	g_log_set_handler("cusemu-watchdog", G_LOG_LEVEL_MESSAGE, capture_log,
			  NULL);

	/* Every case in both ABIs, as a pair. */
	for (unsigned int i = 0; i < G_N_ELEMENTS(cases); i++) {
		for (unsigned int abi = 0; abi < 2; abi++) {
			struct run *r = &runs[2 * i + abi];
			g_autofree char *name = g_strdup_printf(
				"/watchdog/%s/%s", abi ? "compat" : "native",
				cases[i].name);

			*r = (struct run){ cases[i].device, abi == 1 };
			g_test_add(name, struct fixture, r, setup,
				   cases[i].fn, teardown);
		}
	}
	g_test_add_func("/watchdog/bad-config", test_bad_config);
	g_test_add_func("/watchdog/kernel-models", test_kernel_models);
	return g_test_run();
}
