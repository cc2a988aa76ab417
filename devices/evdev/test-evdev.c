/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the evdev model against the fake kernel (no CUSE): its
 * ioctls from both ABIs, injection through the control slot, and events
 * through the model's own read and poll slots in each ABI's layout.
 */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include <linux/input.h>

#include <glib.h>

#include "config.h"
#include "device.h"
#include "dispatch.h"
#include "fake-kernel.h"
#include "lock.h"

#define CLIENT_SIZE 4096
#define AT_ARG 0x100
#define FILL 0xAA

/* read()'s events, as each ABI lays them out. */
struct event64 {
	int64_t sec, usec;
	uint16_t type, code;
	int32_t value;
};

struct event32 {
	uint32_t sec, usec;
	uint16_t type, code;
	int32_t value;
};

struct fixture {
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client native, compat;
	gint wake_ups;
};

static void count_wake_up(void *data)
{
	g_atomic_int_inc((gint *)data);
}

static struct cusemu_device *new_device(const char *arg, GError **error)
{
	struct cusemu_config *config = cusemu_config_new();
	struct cusemu_device *dev = NULL;

	if (cusemu_config_add_device_arg(config, arg, error))
		dev = cusemu_device_new(config->devices->pdata[0], 0,
					cusemu_kernel_model_find("modern"),
					error);
	cusemu_config_free(config);
	return dev;
}

static void setup(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	f->dev = new_device(data ? data : "evdev", &error);
	g_assert_no_error(error);
	cusemu_dispatch_bind(f->dev, CUSEMU_LOCK_MODEL);
	cusemu_instance(f->dev)->serving.wake_up = count_wake_up;
	cusemu_instance(f->dev)->serving.wake_up_data = &f->wake_ups;
	f->file = (struct cusemu_file){ .dev = f->dev };
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	fake_client_init(&f->native, false, CLIENT_SIZE);
	fake_client_init(&f->compat, true, CLIENT_SIZE);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	f->dev->model->release(f->dev, &f->file);
	cusemu_dispatch_unbind(f->dev);
	cusemu_device_free(f->dev);
	g_free(f->native.mem);
	g_free(f->compat.mem);
}

static struct fake_client *client(struct fixture *f, bool compat)
{
	return compat ? &f->compat : &f->native;
}

/* The caller's argument area, prefilled so that untouched bytes show. */
static uint8_t *arg_area(struct fixture *f, bool compat, const void *in,
			 size_t len)
{
	uint8_t *p = client(f, compat)->mem + AT_ARG;

	memset(p, FILL, 256);
	if (in)
		memcpy(p, in, len);
	return p;
}

static long call_file(struct fixture *f, struct cusemu_file *file,
		      bool compat, unsigned int cmd, cusemu_uptr_t arg)
{
	unsigned int rt;

	return fake_ioctl(client(f, compat), f->dev, file, cmd, arg, &rt);
}

static long call(struct fixture *f, bool compat, unsigned int cmd,
		 cusemu_uptr_t arg)
{
	return call_file(f, &f->file, compat, cmd, arg);
}

static long call_at(struct fixture *f, bool compat, unsigned int cmd)
{
	return call(f, compat, cmd, client(f, compat)->base + AT_ARG);
}

/* A control request; its answer in *answer when wanted. */
static int control(struct fixture *f, const char *words, char **answer)
{
	g_auto(GStrv) argv = g_strsplit(words, " ", -1);
	g_autoptr(GString) out = g_string_new(NULL);
	int ret = f->dev->model->control(f->dev, argv, out);

	if (answer)
		*answer = g_strdup(out->str);
	return ret;
}

static void inject(struct fixture *f, const char *events)
{
	g_autofree char *words = g_strdup_printf("inject %s", events);

	g_assert_cmpint(control(f, words, NULL), ==, 0);
}

static ssize_t do_read(struct fixture *f, struct cusemu_file *file,
		       void *buf, size_t size)
{
	return f->dev->model->read(f->dev, file, buf, size);
}

static unsigned int do_poll(struct fixture *f, struct cusemu_file *file)
{
	return f->dev->model->poll(f->dev, file);
}

static bool test_bit(unsigned int nr, const uint8_t *bits)
{
	return bits[nr / 8] & (1u << (nr % 8));
}

/* A native event read back is this one. */
static void assert_event(const struct event64 *ev, unsigned int type,
			 unsigned int code, int value)
{
	g_assert_cmpuint(ev->type, ==, type);
	g_assert_cmpuint(ev->code, ==, code);
	g_assert_cmpint(ev->value, ==, value);
}

/* ---- identity */

static void test_identity(struct fixture *f, gconstpointer data)
{
	struct input_id id;
	uint8_t *p;
	int v;

	for (int compat = 0; compat < 2; compat++) {
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGVERSION), ==, 0);
		memcpy(&v, p, sizeof(v));
		g_assert_cmpint(v, ==, EV_VERSION);

		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGID), ==, 0);
		memcpy(&id, p, sizeof(id));
		g_assert_cmpuint(id.bustype, ==, BUS_VIRTUAL);
		g_assert_cmpuint(id.vendor, ==, 0x1d6b);
		g_assert_cmpuint(id.product, ==, 1);
		g_assert_cmpuint(id.version, ==, 1);

		/* str_to_user(): the string and its NUL, clipped. */
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGNAME(64)), ==,
				strlen("cusemu keyboard") + 1);
		g_assert_cmpstr((char *)p, ==, "cusemu keyboard");
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGNAME(4)), ==, 4);
		g_assert_cmpmem(p, 4, "cuse", 4);
		g_assert_cmpuint(p[4], ==, FILL);
		g_assert_cmpint(call_at(f, compat, EVIOCGNAME(0)), ==, 0);

		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGPHYS(64)), ==,
				strlen("cusemu/input0") + 1);
		g_assert_cmpstr((char *)p, ==, "cusemu/input0");
		g_assert_cmpint(call_at(f, compat, EVIOCGUNIQ(64)), ==,
				-ENOENT);
	}
}

static void test_identity_params(struct fixture *f, gconstpointer data)
{
	struct input_id id;
	uint8_t *p;

	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGNAME(64)), ==, 5);
	g_assert_cmpstr((char *)p, ==, "pad7");
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGUNIQ(64)), ==, 4);
	g_assert_cmpstr((char *)p, ==, "sn1");
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGID), ==, 0);
	memcpy(&id, p, sizeof(id));
	g_assert_cmpuint(id.bustype, ==, BUS_USB);
	g_assert_cmpuint(id.vendor, ==, 0x046d);
	g_assert_cmpuint(id.product, ==, 0xc52b);
	g_assert_cmpuint(id.version, ==, 0x0111);
}

static void test_bad_config(void)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev = new_device("evdev:profile=joystick",
					       &error);

	g_assert_null(dev);
	g_assert_nonnull(error);
	g_assert_nonnull(strstr(error->message, "not 'joystick'"));
}

/* ---- capabilities */

static void test_bits(struct fixture *f, gconstpointer data)
{
	uint8_t *p;

	/* bits_to_user(): whole longs of the caller's ABI, clipped. */
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGBIT(0, 64)), ==, 8);
	g_assert_true(test_bit(EV_SYN, p));
	g_assert_true(test_bit(EV_KEY, p));
	g_assert_true(test_bit(EV_MSC, p));
	g_assert_true(test_bit(EV_LED, p));
	g_assert_true(test_bit(EV_REP, p));
	g_assert_false(test_bit(EV_REL, p));
	g_assert_false(test_bit(EV_ABS, p));
	g_assert_cmpint(call_at(f, true, EVIOCGBIT(0, 64)), ==, 4);
	g_assert_cmpint(call_at(f, false, EVIOCGBIT(EV_SW, 64)), ==, 8);
	g_assert_cmpint(call_at(f, true, EVIOCGBIT(EV_SW, 64)), ==, 4);

	for (int compat = 0; compat < 2; compat++) {
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_KEY, 200)),
				==, 96);
		g_assert_true(test_bit(KEY_A, p));
		g_assert_true(test_bit(KEY_ESC, p));
		g_assert_true(test_bit(KEY_LEFTSHIFT, p));
		g_assert_true(test_bit(KEY_KPDOT, p));
		g_assert_false(test_bit(BTN_LEFT, p));
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_KEY, 3)), ==,
				3);
		g_assert_cmpuint(p[3], ==, FILL);
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_LED, 8)), ==,
				compat ? 4 : 8);
		g_assert_true(test_bit(LED_CAPSL, p));
		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_FF, 64)), ==,
				16);
		/* handle_eviocgbit() has no bitmap for these. */
		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_REP, 8)), ==,
				-EINVAL);
		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_PWR, 8)), ==,
				-EINVAL);
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGPROP(8)), ==,
				compat ? 4 : 8);
		g_assert_cmpuint(p[0], ==, 0);
		/* A keyboard has no axes. */
		g_assert_cmpint(call_at(f, compat, EVIOCGABS(ABS_X)), ==,
				-EINVAL);
		/* Unknown: -EINVAL, as evdev_do_ioctl() ends. */
		g_assert_cmpint(call_at(f, compat, _IOR('E', 0x99, int)), ==,
				-EINVAL);
		g_assert_cmpint(call_at(f, compat, _IOR('X', 0x01, int)), ==,
				-EINVAL);
	}
}

static void test_mouse(struct fixture *f, gconstpointer data)
{
	uint8_t *p;

	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGNAME(64)), ==, 13);
	g_assert_cmpstr((char *)p, ==, "cusemu mouse");
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGBIT(EV_REL, 8)), ==, 8);
	g_assert_true(test_bit(REL_X, p));
	g_assert_true(test_bit(REL_Y, p));
	g_assert_true(test_bit(REL_WHEEL, p));
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGBIT(EV_KEY, 96)), ==, 96);
	g_assert_true(test_bit(BTN_LEFT, p));
	g_assert_true(test_bit(BTN_MIDDLE, p));
	g_assert_false(test_bit(KEY_A, p));
	/* No EV_REP: evdev says -ENOSYS. */
	g_assert_cmpint(call_at(f, false, EVIOCGREP), ==, -ENOSYS);
	/*
	 * No EV_FF: the effect is read in the caller's layout (48 bytes, or
	 * i386's 44; another size or a bad pointer is EFAULT), then
	 * input_ff_upload() says -ENOSYS, as does input_ff_erase().
	 */
	g_assert_cmpint(call_at(f, false, EVIOCSFF), ==, -ENOSYS);
	g_assert_cmpint(call_at(f, true, _IOW('E', 0x80, char[44])), ==,
			-ENOSYS);
	g_assert_cmpint(call_at(f, true, EVIOCSFF), ==, -EFAULT);
	g_assert_cmpint(call(f, false, EVIOCSFF, 8), ==, -EFAULT);
	g_assert_cmpint(call(f, false, EVIOCRMFF, 3), ==, -ENOSYS);
}

static void test_abs(struct fixture *f, gconstpointer data)
{
	struct input_absinfo abs, set = {
		.value = 7, .minimum = -100, .maximum = 100, .fuzz = 1,
		.flat = 2, .resolution = 3,
	};
	uint8_t *p;

	for (int compat = 0; compat < 2; compat++) {
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGABS(ABS_X)), ==, 0);
		memcpy(&abs, p, sizeof(abs));
		g_assert_cmpint(abs.minimum, ==, 0);
		g_assert_cmpint(abs.maximum, ==, 4095);
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGABS(ABS_PRESSURE)),
				==, 0);
		memcpy(&abs, p, sizeof(abs));
		g_assert_cmpint(abs.maximum, ==, 255);
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGPROP(4)), ==, 4);
		g_assert_true(test_bit(INPUT_PROP_DIRECT, p));
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_ABS, 64)), ==,
				8);
		g_assert_true(test_bit(ABS_X, p));
		g_assert_true(test_bit(ABS_Y, p));
		g_assert_true(test_bit(ABS_PRESSURE, p));
		g_assert_false(test_bit(ABS_Z, p));
	}

	arg_area(f, true, &set, sizeof(set));
	g_assert_cmpint(call_at(f, true, EVIOCSABS(ABS_Y)), ==, 0);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGABS(ABS_Y)), ==, 0);
	g_assert_cmpmem(p, sizeof(set), &set, sizeof(set));
	arg_area(f, false, &set, sizeof(set));
	g_assert_cmpint(call_at(f, false, EVIOCSABS(ABS_MT_SLOT)), ==,
			-EINVAL);

	/* Injected positions show in EVIOCGABS. */
	inject(f, "EV_ABS ABS_X 1234 EV_KEY BTN_TOUCH 1");
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGABS(ABS_X)), ==, 0);
	memcpy(&abs, p, sizeof(abs));
	g_assert_cmpint(abs.value, ==, 1234);
}

static long set_rep(struct fixture *f, bool compat, int delay, int period)
{
	int rep[2] = { delay, period };

	arg_area(f, compat, rep, sizeof(rep));
	return call_at(f, compat, EVIOCSREP);
}

static void test_rep(struct fixture *f, gconstpointer data)
{
	int rep[2] = { 500, 50 };
	uint8_t *p;

	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGREP), ==, 0);
	g_assert_cmpmem(p, 8, ((int[]){ 250, 33 }), 8);
	arg_area(f, true, rep, sizeof(rep));
	g_assert_cmpint(call_at(f, true, EVIOCSREP), ==, 0);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGREP), ==, 0);
	g_assert_cmpmem(p, 8, rep, 8);
}

/*
 * EVIOCSREP is input_inject_event() of EV_REP REP_DELAY and REP_PERIOD:
 * each that changes goes to every reader with the next SYN_REPORT, with
 * the value asked, and atkbd rounds the rates to the keyboard's own.
 * Nothing changes while another file holds a grab.
 */
static void test_rep_events(struct fixture *f, gconstpointer data)
{
	struct cusemu_file reader = { .dev = f->dev, .flags = O_NONBLOCK };
	struct event64 ev[8];
	uint8_t *p;

	f->file.flags = O_NONBLOCK;
	g_assert_cmpint(f->dev->model->open(f->dev, &reader), ==, 0);
	for (int compat = 0; compat < 2; compat++) {
		int want[2] = { 500, 42 };

		g_assert_cmpint(set_rep(f, compat, 300, 40), ==, 0);
		p = arg_area(f, !compat, NULL, 0);
		g_assert_cmpint(call_at(f, !compat, EVIOCGREP), ==, 0);
		g_assert_cmpmem(p, 8, want, 8);
		/* Not a packet yet: readers see it with the next one. */
		g_assert_cmpint(do_read(f, &reader, ev, sizeof(ev)), ==,
				-EAGAIN);
		inject(f, compat ? "EV_KEY KEY_A 0" : "EV_KEY KEY_A 1");
		g_assert_cmpint(do_read(f, &reader, ev, sizeof(ev)), ==,
				4 * 24);
		assert_event(&ev[0], EV_REP, REP_DELAY, 300);
		assert_event(&ev[1], EV_REP, REP_PERIOD, 40);
		assert_event(&ev[2], EV_KEY, KEY_A, !compat);
		assert_event(&ev[3], EV_SYN, SYN_REPORT, 0);
		/* The writer hears it too, in the ABI of its last ioctl. */
		g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==,
				4 * (compat ? 24 : 16));
	}
	/* What changes nothing, or is negative, sends nothing. */
	g_assert_cmpint(set_rep(f, false, 500, 42), ==, 0);
	g_assert_cmpint(set_rep(f, true, -1, -5), ==, 0);
	g_assert_cmpint(set_rep(f, false, 250, 42), ==, 0);
	inject(f, "EV_KEY KEY_A 1");
	g_assert_cmpint(do_read(f, &reader, ev, sizeof(ev)), ==, 3 * 24);
	assert_event(&ev[0], EV_REP, REP_DELAY, 250);
	assert_event(&ev[1], EV_KEY, KEY_A, 1);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 3 * 24);
	/* While the reader holds a grab, the other file's EVIOCSREP is
	 * ignored by input_inject_event(). */
	g_assert_cmpint(call_file(f, &reader, false, EVIOCGRAB, 1), ==, 0);
	g_assert_cmpint(set_rep(f, false, 1000, 500), ==, 0);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGREP), ==, 0);
	g_assert_cmpmem(p, 8, ((int[]){ 250, 42 }), 8);
	f->dev->model->release(f->dev, &reader);
}

/* ---- per-file state: grab and clock */

static void test_grab(struct fixture *f, gconstpointer data)
{
	struct cusemu_file other = { .dev = f->dev, .flags = O_NONBLOCK };
	struct event64 ev[4];

	f->file.flags = O_NONBLOCK;
	g_assert_cmpint(f->dev->model->open(f->dev, &other), ==, 0);
	g_assert_cmpint(call(f, false, EVIOCGRAB, 1), ==, 0);
	/* Held, even against the holder: evdev_grab() checks only that. */
	g_assert_cmpint(call(f, false, EVIOCGRAB, 1), ==, -EBUSY);
	g_assert_cmpint(call_file(f, &other, true, EVIOCGRAB, 1), ==, -EBUSY);
	g_assert_cmpint(call_file(f, &other, false, EVIOCGRAB, 0), ==,
			-EINVAL);

	/* Only the holder hears. */
	inject(f, "EV_KEY KEY_A 1");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 48);
	g_assert_cmpint(do_read(f, &other, ev, sizeof(ev)), ==, -EAGAIN);
	g_assert_cmpuint(do_poll(f, &other), ==, 0);

	g_assert_cmpint(call(f, false, EVIOCGRAB, 0), ==, 0);
	g_assert_cmpint(call(f, false, EVIOCGRAB, 0), ==, -EINVAL);
	inject(f, "EV_KEY KEY_A 0");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 48);
	g_assert_cmpint(do_read(f, &other, ev, sizeof(ev)), ==, 48);

	/* A holder's release lets go of the grab. */
	g_assert_cmpint(call_file(f, &other, false, EVIOCGRAB, 1), ==, 0);
	f->dev->model->release(f->dev, &other);
	g_assert_cmpint(call(f, false, EVIOCGRAB, 1), ==, 0);
}

static void test_clock(struct fixture *f, gconstpointer data)
{
	struct timespec before, after;
	struct event64 ev[4];
	uint8_t *p;
	int clk;

	f->file.flags = O_NONBLOCK;
	for (int compat = 0; compat < 2; compat++) {
		clk = 99;
		arg_area(f, compat, &clk, sizeof(clk));
		g_assert_cmpint(call_at(f, compat, EVIOCSCLOCKID), ==,
				-EINVAL);
		clk = CLOCK_MONOTONIC_RAW;
		arg_area(f, compat, &clk, sizeof(clk));
		g_assert_cmpint(call_at(f, compat, EVIOCSCLOCKID), ==,
				-EINVAL);
		clk = CLOCK_BOOTTIME;
		arg_area(f, compat, &clk, sizeof(clk));
		g_assert_cmpint(call_at(f, compat, EVIOCSCLOCKID), ==, 0);
	}

	/* A change of clock drops what was queued, and says so. */
	inject(f, "EV_KEY KEY_B 1");
	clk = CLOCK_MONOTONIC;
	p = arg_area(f, false, &clk, sizeof(clk));
	g_assert_cmpint(call(f, false, EVIOCSCLOCKID, fake_addr(&f->native, p)),
			==, 0);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, -EAGAIN);
	inject(f, "EV_KEY KEY_B 0");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 72);
	g_assert_cmpuint(ev[0].type, ==, EV_SYN);
	g_assert_cmpuint(ev[0].code, ==, SYN_DROPPED);
	g_assert_cmpuint(ev[1].type, ==, EV_KEY);

	clock_gettime(CLOCK_MONOTONIC, &before);
	inject(f, "EV_KEY KEY_B 1");
	clock_gettime(CLOCK_MONOTONIC, &after);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 48);
	g_assert_cmpint(ev[0].sec * 1000000 + ev[0].usec, >=,
			before.tv_sec * 1000000 + before.tv_nsec / 1000);
	g_assert_cmpint(ev[0].sec * 1000000 + ev[0].usec, <=,
			after.tv_sec * 1000000 + after.tv_nsec / 1000);
}

/* ---- injection */

static void test_inject(struct fixture *f, gconstpointer data)
{
	struct event64 ev[8];
	char *answer;
	uint8_t *p;

	f->file.flags = O_NONBLOCK;
	/* Names and numbers mix; a SYN_REPORT ends the packet. */
	g_assert_cmpint(control(f, "inject EV_MSC MSC_SCAN 0x1e 1 KEY_A 1",
				&answer), ==, 0);
	g_assert_cmpstr(answer, ==, "injected 2 events\n");
	g_free(answer);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 3 * 24);
	assert_event(&ev[0], EV_MSC, MSC_SCAN, 0x1e);
	assert_event(&ev[1], EV_KEY, KEY_A, 1);
	assert_event(&ev[2], EV_SYN, SYN_REPORT, 0);
	/* One timestamp for the batch. */
	g_assert_cmpint(ev[0].sec, ==, ev[2].sec);
	g_assert_cmpint(ev[0].usec, ==, ev[2].usec);

	/* The device's state follows: EVIOCGKEY and EVIOCGLED. */
	inject(f, "EV_KEY KEY_LEFTSHIFT 1 EV_LED LED_CAPSL 1 EV_SYN "
		  "SYN_REPORT 0");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 3 * 24);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGKEY(96)), ==, 96);
	g_assert_true(test_bit(KEY_A, p));
	g_assert_true(test_bit(KEY_LEFTSHIFT, p));
	g_assert_false(test_bit(KEY_B, p));
	p = arg_area(f, true, NULL, 0);
	g_assert_cmpint(call_at(f, true, EVIOCGLED(64)), ==, 4);
	g_assert_true(test_bit(LED_CAPSL, p));
	g_assert_false(test_bit(LED_NUML, p));
	g_assert_cmpint(control(f, "state", &answer), ==, 0);
	g_assert_nonnull(strstr(answer, "keys: KEY_A KEY_LEFTSHIFT\n"));
	g_assert_nonnull(strstr(answer, "leds: LED_CAPSL\n"));
	g_free(answer);
	inject(f, "EV_KEY KEY_A 0");
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGKEY(8)), ==, 8);
	g_assert_false(test_bit(KEY_A, p));
}

static void assert_inject_error(struct fixture *f, const char *words,
				const char *message)
{
	char *answer;

	g_assert_cmpint(control(f, words, &answer), ==, -EINVAL);
	g_assert_nonnull(strstr(answer, message));
	g_free(answer);
}

static void test_inject_errors(struct fixture *f, gconstpointer data)
{
	struct event64 ev;

	f->file.flags = O_NONBLOCK;
	assert_inject_error(f, "inject EV_FOO KEY_A 1", "'EV_FOO'");
	assert_inject_error(f, "inject EV_KEY KEY_NOPE 1", "'KEY_NOPE'");
	assert_inject_error(f, "inject EV_KEY REL_X 1", "'REL_X'");
	assert_inject_error(f, "inject EV_REL REL_X 1", "EV_REL");
	assert_inject_error(f, "inject 2 0 1", "EV_REL");
	assert_inject_error(f, "inject EV_KEY BTN_LEFT 1", "BTN_LEFT");
	assert_inject_error(f, "inject EV_KEY KEY_F24 1", "KEY_F24");
	assert_inject_error(f, "inject EV_KEY 0x300 1", "'0x300'");
	assert_inject_error(f, "inject EV_KEY KEY_A x", "'x'");
	assert_inject_error(f, "inject EV_KEY KEY_A 4294967296",
			    "'4294967296'");
	assert_inject_error(f, "inject EV_KEY KEY_A", "TYPE CODE VALUE");
	assert_inject_error(f, "inject", "TYPE CODE VALUE");
	assert_inject_error(f, "bogus", "inject");
	/* A bad event anywhere queues none of them. */
	assert_inject_error(f, "inject EV_KEY KEY_A 1 EV_KEY KEY_NOPE 1",
			    "KEY_NOPE");
	g_assert_cmpint(do_read(f, &f->file, &ev, sizeof(ev)), ==, -EAGAIN);
	g_assert_cmpint(f->wake_ups, ==, 0);
}

/* ---- read and poll */

static void test_read_rules(struct fixture *f, gconstpointer data)
{
	struct event64 ev[3];
	uint8_t buf[64];

	f->file.flags = O_NONBLOCK;
	g_assert_cmpint(do_read(f, &f->file, buf, 1), ==, -EINVAL);
	g_assert_cmpint(do_read(f, &f->file, buf, 23), ==, -EINVAL);
	g_assert_cmpint(do_read(f, &f->file, buf, 24), ==, -EAGAIN);
	g_assert_cmpint(do_read(f, &f->file, buf, 0), ==, -EAGAIN);
	g_assert_cmpuint(do_poll(f, &f->file), ==, 0);

	inject(f, "EV_KEY KEY_Q 1");
	g_assert_cmpint(f->wake_ups, >, 0);
	g_assert_cmpuint(do_poll(f, &f->file), ==, POLLIN | POLLRDNORM);
	g_assert_cmpint(do_read(f, &f->file, buf, 0), ==, 0);
	/* Whole events only: 47 bytes hold one. */
	g_assert_cmpint(do_read(f, &f->file, ev, 47), ==, 24);
	g_assert_cmpuint(ev[0].code, ==, KEY_Q);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 24);
	g_assert_cmpuint(ev[0].code, ==, SYN_REPORT);
	g_assert_cmpuint(do_poll(f, &f->file), ==, 0);
}

/* An ioctl from a 32-bit caller makes the file's events 16 bytes. */
static void test_read_compat(struct fixture *f, gconstpointer data)
{
	struct event32 ev[3];
	struct timespec now;

	f->file.flags = O_NONBLOCK;
	arg_area(f, true, NULL, 0);
	g_assert_cmpint(call_at(f, true, EVIOCGVERSION), ==, 0);
	g_assert_cmpint(do_read(f, &f->file, ev, 15), ==, -EINVAL);
	inject(f, "EV_KEY KEY_Z 1");
	clock_gettime(CLOCK_REALTIME, &now);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 32);
	g_assert_cmpuint(ev[0].type, ==, EV_KEY);
	g_assert_cmpuint(ev[0].code, ==, KEY_Z);
	g_assert_cmpint(ev[0].value, ==, 1);
	g_assert_cmpuint(ev[1].type, ==, EV_SYN);
	g_assert_cmpuint(ev[1].code, ==, SYN_REPORT);
	g_assert_cmpuint(ev[0].sec, <=, (uint32_t)now.tv_sec);
	g_assert_cmpuint(ev[0].sec + 2, >=, (uint32_t)now.tv_sec);
	g_assert_cmpuint(ev[0].usec, <, 1000000);

	/* And a native ioctl makes them 24 again. */
	arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGVERSION), ==, 0);
	inject(f, "EV_KEY KEY_Z 0");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 48);
}

/* EVIOCGKEYCODE of scancode in one ABI: the keycode, or -errno. */
static long get_keycode(struct fixture *f, bool compat, unsigned int scancode)
{
	unsigned int pair[2] = { scancode, 0xdead };
	uint8_t *p = arg_area(f, compat, pair, sizeof(pair));
	long ret = call_at(f, compat, EVIOCGKEYCODE);

	memcpy(pair, p, sizeof(pair));
	return ret < 0 ? ret : (long)pair[1];
}

static long set_keycode(struct fixture *f, unsigned int scancode,
			unsigned int keycode)
{
	unsigned int pair[2] = { scancode, keycode };

	arg_area(f, false, pair, sizeof(pair));
	return call_at(f, false, EVIOCSKEYCODE);
}

/*
 * The keyboard's keymap, atkbd's behind the i8042's translation: the XT
 * scancodes a PC keyboard yields, 512 entries, the E0 keys from 0x80. By
 * scancode or by index (_V2), in both ABIs; a remap changes the keys
 * EVIOCGBIT reports and releases a key that goes away.
 */
static void test_keymap(struct fixture *f, gconstpointer data)
{
	struct input_keymap_entry ke = { .len = 4 }, got;
	unsigned int sc = 0x1e;
	struct event64 ev[4];
	uint8_t *p;

	for (int compat = 0; compat < 2; compat++) {
		g_assert_cmpint(get_keycode(f, compat, 0x1e), ==, KEY_A);
		g_assert_cmpint(get_keycode(f, compat, 0x1c), ==, KEY_ENTER);
		g_assert_cmpint(get_keycode(f, compat, 0x3a), ==, KEY_CAPSLOCK);
		g_assert_cmpint(get_keycode(f, compat, 0x80 | 0x48), ==, KEY_UP);
		g_assert_cmpint(get_keycode(f, compat, 0x80 | 0x1c), ==,
				KEY_KPENTER);
		g_assert_cmpint(get_keycode(f, compat, 0x80 | 0x5b), ==,
				KEY_LEFTMETA);
		/* atkbd's KEY_NULL (an E0 fake shift), and HANGEUL/HANJA,
		 * which send no release, at 0x172/0x171. */
		g_assert_cmpint(get_keycode(f, compat, 0x80 | 0x2a), ==, 255);
		g_assert_cmpint(get_keycode(f, compat, 0x172), ==, KEY_HANGEUL);
		g_assert_cmpint(get_keycode(f, compat, 0x171), ==, KEY_HANJA);
		g_assert_cmpint(get_keycode(f, compat, 0x60), ==, KEY_RESERVED);
		g_assert_cmpint(get_keycode(f, compat, 512), ==, -EINVAL);
		/* _V2 by scancode: the index and a 4-byte scancode back. */
		memcpy(ke.scancode, &sc, 4);
		p = arg_area(f, compat, &ke, sizeof(ke));
		g_assert_cmpint(call_at(f, compat, EVIOCGKEYCODE_V2), ==, 0);
		memcpy(&got, p, sizeof(got));
		g_assert_cmpuint(got.keycode, ==, KEY_A);
		g_assert_cmpuint(got.index, ==, 0x1e);
		g_assert_cmpuint(got.len, ==, 4);
		/* By index. */
		got = (struct input_keymap_entry){ .flags = INPUT_KEYMAP_BY_INDEX,
						   .index = 0x80 | 0x4b };
		p = arg_area(f, compat, &got, sizeof(got));
		g_assert_cmpint(call_at(f, compat, EVIOCGKEYCODE_V2), ==, 0);
		memcpy(&got, p, sizeof(got));
		g_assert_cmpuint(got.keycode, ==, KEY_LEFT);
		/* A scancode of 3 bytes, or longer than the field. */
		got = (struct input_keymap_entry){ .len = 3 };
		arg_area(f, compat, &got, sizeof(got));
		g_assert_cmpint(call_at(f, compat, EVIOCGKEYCODE_V2), ==, -EINVAL);
		got.len = 33;
		arg_area(f, compat, &got, sizeof(got));
		g_assert_cmpint(call_at(f, compat, EVIOCGKEYCODE_V2), ==, -EINVAL);
	}

	/* KEY_A held, then its scancode remapped: KEY_A goes, released.
	 * (A native ioctl first: the file reads 24-byte events again.) */
	f->file.flags = O_NONBLOCK;
	g_assert_cmpint(get_keycode(f, false, 0x1e), ==, KEY_A);
	inject(f, "EV_KEY KEY_A 1");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 2 * 24);
	g_assert_cmpint(set_keycode(f, 0x1e, KEY_F20), ==, 0);
	g_assert_cmpint(get_keycode(f, false, 0x1e), ==, KEY_F20);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 2 * 24);
	g_assert_cmpuint(ev[0].code, ==, KEY_A);
	g_assert_cmpint(ev[0].value, ==, 0);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGBIT(EV_KEY, 96)), ==, 96);
	g_assert_false(test_bit(KEY_A, p));
	g_assert_true(test_bit(KEY_F20, p));
	/* Back, and a key two scancodes give stays when one goes. */
	g_assert_cmpint(set_keycode(f, 0x1e, KEY_A), ==, 0);
	g_assert_cmpint(set_keycode(f, 0x60, KEY_B), ==, 0);
	g_assert_cmpint(set_keycode(f, 0x60, KEY_RESERVED), ==, 0);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGBIT(EV_KEY, 96)), ==, 96);
	g_assert_true(test_bit(KEY_A, p) && test_bit(KEY_B, p));
	g_assert_false(test_bit(KEY_F20, p) || test_bit(KEY_RESERVED, p));
	g_assert_cmpint(set_keycode(f, 0x1e, KEY_MAX + 1), ==, -EINVAL);
	g_assert_cmpint(set_keycode(f, 512, KEY_A), ==, -EINVAL);
	/* _V2 set by index. */
	ke = (struct input_keymap_entry){ .flags = INPUT_KEYMAP_BY_INDEX,
					  .index = 0x61, .keycode = KEY_C };
	arg_area(f, true, &ke, sizeof(ke));
	g_assert_cmpint(call_at(f, true, EVIOCSKEYCODE_V2), ==, 0);
	g_assert_cmpint(get_keycode(f, true, 0x61), ==, KEY_C);
}

/* atkbd's keys, as it registers them: 145, the PC's right-hand modifiers,
 * Windows and menu keys, keypad Enter and slash, SysRq, Pause, the 102nd
 * key and the media keys among them. */
static void test_keyset(struct fixture *f, gconstpointer data)
{
	static const unsigned int pc[] = {
		KEY_RIGHTCTRL, KEY_RIGHTALT, KEY_LEFTMETA, KEY_RIGHTMETA,
		KEY_COMPOSE, KEY_KPENTER, KEY_KPSLASH, KEY_SYSRQ, KEY_PAUSE,
		KEY_102ND, KEY_MUTE, KEY_VOLUMEDOWN, KEY_VOLUMEUP,
		KEY_PLAYPAUSE, KEY_HANGEUL, KEY_HANJA, KEY_F23, KEY_MEDIA,
	};

	for (int compat = 0; compat < 2; compat++) {
		uint8_t *p = arg_area(f, compat, NULL, 0);
		unsigned int n = 0;

		g_assert_cmpint(call_at(f, compat, EVIOCGBIT(EV_KEY, 96)), ==,
				96);
		for (unsigned int k = 0; k < 96 * 8; k++)
			n += test_bit(k, p) ? 1 : 0;
		g_assert_cmpuint(n, ==, 145);
		for (unsigned int i = 0; i < G_N_ELEMENTS(pc); i++)
			g_assert_true(test_bit(pc[i], p));
		g_assert_false(test_bit(KEY_RESERVED, p));
		g_assert_false(test_bit(255, p));	/* atkbd's KEY_NULL */
		g_assert_false(test_bit(KEY_F20, p));
	}
	/* A key it lacked before goes through. */
	inject(f, "EV_KEY KEY_RIGHTMETA 1");
}

/* A device without a keymap (dev->keycodesize 0): EINVAL. */
static void test_no_keymap(struct fixture *f, gconstpointer data)
{
	g_assert_cmpint(get_keycode(f, false, 1), ==, -EINVAL);
	g_assert_cmpint(set_keycode(f, 1, BTN_LEFT), ==, -EINVAL);
}

static ssize_t do_write(struct fixture *f, struct cusemu_file *file,
			const void *buf, size_t size)
{
	return f->dev->model->write(f->dev, file, buf, size);
}

/*
 * write(): input_inject_event() of each whole event in the writer's ABI.
 * Readers (the writer among them) see what changes the device's state,
 * LEDs become what EVIOCGLED reports; a write shorter than one event is
 * EINVAL, and after EVIOCREVOKE ENODEV.
 */
static void test_write(struct fixture *f, gconstpointer data)
{
	struct cusemu_file reader = { .dev = f->dev, .flags = O_NONBLOCK };
	struct event64 in[4] = {
		{ .type = EV_LED, .code = LED_CAPSL, .value = 1 },
		{ .type = EV_KEY, .code = KEY_A, .value = 1 },
		{ .type = EV_KEY, .code = KEY_A, .value = 1 },	/* no change */
		{ .type = EV_SYN, .code = SYN_REPORT },
	};
	struct event32 in32[2] = {
		{ .type = EV_LED, .code = LED_NUML, .value = 1 },
		{ .type = EV_SYN, .code = SYN_REPORT },
	};
	struct event64 out[8];
	struct event32 out32[4];
	uint8_t *p;

	g_assert_cmpint(f->dev->model->open(f->dev, &reader), ==, 0);
	f->file.flags = O_NONBLOCK;
	g_assert_cmpint(do_write(f, &f->file, in, 23), ==, -EINVAL);
	/* Whole events only: the 10 bytes after the fourth are left. */
	{
		char buf[sizeof(in) + 10] = { 0 };

		memcpy(buf, in, sizeof(in));
		g_assert_cmpint(do_write(f, &f->file, buf, sizeof(buf)), ==,
				sizeof(in));
	}
	g_assert_cmpint(do_read(f, &reader, out, sizeof(out)), ==, 3 * 24);
	g_assert_cmpuint(out[0].type, ==, EV_LED);
	g_assert_cmpuint(out[0].code, ==, LED_CAPSL);
	g_assert_cmpint(out[0].value, ==, 1);
	g_assert_cmpuint(out[1].code, ==, KEY_A);
	g_assert_cmpuint(out[2].type, ==, EV_SYN);
	g_assert_cmpint(out[0].sec, >, 0);
	/* The writer is a reader too. */
	g_assert_cmpint(do_read(f, &f->file, out, sizeof(out)), ==, 3 * 24);
	p = arg_area(f, false, NULL, 0);
	g_assert_cmpint(call_at(f, false, EVIOCGLED(8)), ==, 8);
	g_assert_true(test_bit(LED_CAPSL, p));
	g_assert_false(test_bit(LED_NUML, p));

	/* An i386 writer's events are 16 bytes. */
	arg_area(f, true, NULL, 0);
	g_assert_cmpint(call_at(f, true, EVIOCGVERSION), ==, 0);
	g_assert_cmpint(do_write(f, &f->file, in32, 15), ==, -EINVAL);
	g_assert_cmpint(do_write(f, &f->file, in32, sizeof(in32)), ==, 32);
	g_assert_cmpint(do_read(f, &f->file, out32, sizeof(out32)), ==, 32);
	g_assert_cmpuint(out32[0].code, ==, LED_NUML);
	g_assert_cmpint(do_read(f, &reader, out, sizeof(out)), ==, 48);
	p = arg_area(f, true, NULL, 0);
	g_assert_cmpint(call_at(f, true, EVIOCGLED(8)), ==, 4);	/* a compat long */
	g_assert_true(test_bit(LED_NUML, p) && test_bit(LED_CAPSL, p));

	/* Events the device does not send, or that change nothing, stop in
	 * the input core: a lone SYN_REPORT reaches nobody. */
	{
		struct event64 none[2] = {
			{ .type = EV_ABS, .code = ABS_X, .value = 5 },
			{ .type = EV_SYN, .code = SYN_REPORT },
		};

		arg_area(f, false, NULL, 0);
		g_assert_cmpint(call_at(f, false, EVIOCGVERSION), ==, 0);
		g_assert_cmpint(do_write(f, &f->file, none, sizeof(none)), ==,
				sizeof(none));
		g_assert_cmpint(do_read(f, &reader, out, sizeof(out)), ==,
				-EAGAIN);
	}
	f->dev->model->release(f->dev, &reader);
	g_assert_cmpint(call(f, false, EVIOCREVOKE, 0), ==, 0);
	g_assert_cmpint(do_write(f, &f->file, in, sizeof(in)), ==, -ENODEV);
}

/*
 * A written autorepeat (value 2) passes input_get_disposition() whether
 * the key is down or not, and leaves the key's state alone; in both ABIs
 * (the file's last ioctl sets the layout of its events).
 */
static void test_write_repeat(struct fixture *f, gconstpointer data)
{
	f->file.flags = O_NONBLOCK;
	for (int compat = 0; compat < 2; compat++) {
		size_t size = compat ? sizeof(struct event32)
				     : sizeof(struct event64);
		uint8_t buf[2 * sizeof(struct event64)] = { 0 };
		uint16_t syn_report[2] = { EV_SYN, SYN_REPORT };
		uint16_t key[2] = { EV_KEY, KEY_B };
		int32_t value = 2;
		uint8_t *p = arg_area(f, compat, NULL, 0);

		g_assert_cmpint(call_at(f, compat, EVIOCGVERSION), ==, 0);
		/* type, code and value end each event in both layouts. */
		memcpy(buf + size - 8, key, 4);
		memcpy(buf + size - 4, &value, 4);
		memcpy(buf + 2 * size - 8, syn_report, 4);
		g_assert_cmpint(do_write(f, &f->file, buf, 2 * size), ==,
				2 * size);
		memset(buf, 0, sizeof(buf));
		g_assert_cmpint(do_read(f, &f->file, buf, sizeof(buf)), ==,
				2 * size);
		g_assert_cmpmem(buf + size - 8, 4, key, 4);
		g_assert_cmpmem(buf + size - 4, 4, &value, 4);
		p = arg_area(f, compat, NULL, 0);
		g_assert_cmpint(call_at(f, compat, EVIOCGKEY(96)), ==, 96);
		g_assert_false(test_bit(KEY_B, p));
	}
}

/*
 * __pass_event(): a full queue keeps only the newest event, after a
 * SYN_DROPPED with that event's time.
 */
static void test_overflow(struct fixture *f, gconstpointer data)
{
	struct event64 ev[64];
	ssize_t n;
	int i;

	f->file.flags = O_NONBLOCK;
	for (i = 0; i < 40; i++) {
		g_autofree char *words = g_strdup_printf("EV_KEY KEY_A %d",
							 i % 2);

		inject(f, words);
	}
	n = do_read(f, &f->file, ev, sizeof(ev));
	g_assert_cmpint(n % 24, ==, 0);
	n /= 24;
	/*
	 * The 64th event filled the ring: SYN_DROPPED and that event (the
	 * 32nd SYN_REPORT) stayed, then the 16 events after them.
	 */
	g_assert_cmpint(n, ==, 2 + 16);
	g_assert_cmpuint(ev[0].type, ==, EV_SYN);
	g_assert_cmpuint(ev[0].code, ==, SYN_DROPPED);
	g_assert_cmpint(ev[0].sec, ==, ev[1].sec);
	g_assert_cmpint(ev[0].usec, ==, ev[1].usec);
	g_assert_cmpuint(ev[1].code, ==, SYN_REPORT);
	g_assert_cmpuint(ev[n - 2].type, ==, EV_KEY);
	g_assert_cmpint(ev[n - 2].value, ==, 1);
	g_assert_cmpuint(ev[n - 1].code, ==, SYN_REPORT);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, -EAGAIN);
	g_assert_cmpint(control(f, "inject EV_KEY KEY_A 0 EV_KEY KEY_B 1 "
				   "EV_KEY KEY_B 0",
				NULL), ==, 0);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 4 * 24);
}

struct reader {
	struct fixture *f;
	struct event64 ev[2];
	ssize_t ret;
};

static gpointer reader_thread(gpointer data)
{
	struct reader *r = data;

	r->ret = do_read(r->f, &r->f->file, r->ev, sizeof(r->ev));
	return NULL;
}

/* A blocking read waits for a packet. */
static void test_read_blocks(struct fixture *f, gconstpointer data)
{
	struct reader r = { .f = f };
	GThread *thread = g_thread_new("reader", reader_thread, &r);

	g_usleep(50 * G_TIME_SPAN_MILLISECOND);
	inject(f, "EV_KEY KEY_X 1");
	g_thread_join(thread);
	g_assert_cmpint(r.ret, ==, 48);
	g_assert_cmpuint(r.ev[0].code, ==, KEY_X);
}

static void test_revoke(struct fixture *f, gconstpointer data)
{
	struct event64 ev;

	g_assert_cmpint(call(f, false, EVIOCREVOKE, 1), ==, -EINVAL);
	g_assert_cmpint(call(f, false, EVIOCREVOKE, 0), ==, 0);
	g_assert_cmpint(do_read(f, &f->file, &ev, sizeof(ev)), ==, -ENODEV);
	g_assert_cmpuint(do_poll(f, &f->file), ==, POLLHUP | POLLERR);
	g_assert_cmpint(call_at(f, false, EVIOCGVERSION), ==, -ENODEV);
}

/* ---- event masks */

#define AT_CODES 0x800

/* EVIOCGMASK or EVIOCSMASK with the codes at AT_CODES (prefilled). */
static long mask_call(struct fixture *f, bool compat, unsigned int cmd,
		      unsigned int type, uint32_t codes_size)
{
	struct input_mask m = {
		.type = type,
		.codes_size = codes_size,
		.codes_ptr = client(f, compat)->base + AT_CODES,
	};

	arg_area(f, compat, &m, sizeof(m));
	return call_at(f, compat, cmd);
}

static uint8_t *codes(struct fixture *f, bool compat)
{
	return client(f, compat)->mem + AT_CODES;
}

static void test_mask(struct fixture *f, gconstpointer data)
{
	struct event64 ev[8];
	uint8_t *c;

	f->file.flags = O_NONBLOCK;
	/* No mask yet: all ones, the rest of the buffer zeroed. */
	c = codes(f, false);
	memset(c, FILL, 256);
	g_assert_cmpint(mask_call(f, false, EVIOCGMASK, EV_KEY, 128), ==, 0);
	for (unsigned int i = 0; i < 96; i++)
		g_assert_cmphex(c[i], ==, 0xff);
	for (unsigned int i = 96; i < 128; i++)
		g_assert_cmphex(c[i], ==, 0);
	g_assert_cmphex(c[128], ==, FILL);
	/* A type without masks: accepted, and only zeroes come back. */
	memset(c, FILL, 256);
	g_assert_cmpint(mask_call(f, false, EVIOCGMASK, EV_MAX, 16), ==, 0);
	g_assert_cmphex(c[0], ==, 0);
	g_assert_cmphex(c[15], ==, 0);
	g_assert_cmphex(c[16], ==, FILL);
	/* Beyond EV_MAX too: the type is any 32-bit number. */
	c = codes(f, true);
	memset(c, FILL, 256);
	g_assert_cmpint(mask_call(f, true, EVIOCGMASK, 60, 8), ==, 0);
	g_assert_cmphex(c[0], ==, 0);
	g_assert_cmphex(c[7], ==, 0);
	g_assert_cmphex(c[8], ==, FILL);
	g_assert_cmpint(mask_call(f, false, EVIOCSMASK, 0x10000, 8), ==,
			-EINVAL);

	/* A 32-bit caller lets only KEY_A through; both ABIs read it back. */
	c = codes(f, true);
	memset(c, 0, 256);
	c[KEY_A / 8] = 1u << (KEY_A % 8);
	g_assert_cmpint(mask_call(f, true, EVIOCSMASK, EV_KEY, 96), ==, 0);
	c = codes(f, false);
	memset(c, FILL, 256);
	g_assert_cmpint(mask_call(f, false, EVIOCGMASK, EV_KEY, 96), ==, 0);
	g_assert_true(test_bit(KEY_A, c));
	g_assert_false(test_bit(KEY_B, c));
	g_assert_cmphex(c[95], ==, 0);

	inject(f, "EV_KEY KEY_B 1 EV_KEY KEY_A 1");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 2 * 24);
	g_assert_cmpuint(ev[0].code, ==, KEY_A);
	g_assert_cmpuint(ev[1].type, ==, EV_SYN);
	/* A packet with nothing left but its SYN_REPORT is not sent. */
	inject(f, "EV_KEY KEY_B 0");
	g_assert_cmpuint(do_poll(f, &f->file), ==, 0);
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, -EAGAIN);

	/* Type 0 masks whole types: EV_KEY stays, EV_MSC goes. */
	c = codes(f, false);
	memset(c, 0, 256);
	c[0] = 1u << EV_KEY;
	g_assert_cmpint(mask_call(f, false, EVIOCSMASK, 0, 8), ==, 0);
	inject(f, "EV_MSC MSC_SCAN 0x1e EV_KEY KEY_A 0");
	g_assert_cmpint(do_read(f, &f->file, ev, sizeof(ev)), ==, 2 * 24);
	g_assert_cmpuint(ev[0].type, ==, EV_KEY);
	g_assert_cmpint(ev[0].value, ==, 0);

	/* Another file's mask is its own. */
	struct cusemu_file other = { .dev = f->dev, .flags = O_NONBLOCK };

	g_assert_cmpint(f->dev->model->open(f->dev, &other), ==, 0);
	inject(f, "EV_KEY KEY_B 1");
	g_assert_cmpint(do_read(f, &other, ev, sizeof(ev)), ==, 2 * 24);
	g_assert_cmpuint(ev[0].code, ==, KEY_B);
	f->dev->model->release(f->dev, &other);
}

static void test_mask_errors(struct fixture *f, gconstpointer data)
{
	struct input_mask m = { .type = EV_KEY, .codes_size = 96 };

	memset(codes(f, false), 0, 256);
	memset(codes(f, true), 0, 256);
	/* No mask for EV_REP or EV_MAX; a length in whole longs only. */
	g_assert_cmpint(mask_call(f, false, EVIOCSMASK, EV_REP, 8), ==,
			-EINVAL);
	g_assert_cmpint(mask_call(f, false, EVIOCSMASK, EV_MAX, 8), ==,
			-EINVAL);
	g_assert_cmpint(mask_call(f, false, EVIOCSMASK, EV_KEY, 12), ==,
			-EINVAL);
	g_assert_cmpint(mask_call(f, true, EVIOCSMASK, EV_KEY, 12), ==, 0);
	/* Codes nowhere: EFAULT, in either direction and either ABI. */
	m.codes_ptr = 0x1000;
	arg_area(f, false, &m, sizeof(m));
	g_assert_cmpint(call_at(f, false, EVIOCSMASK), ==, -EFAULT);
	g_assert_cmpint(call_at(f, false, EVIOCGMASK), ==, -EFAULT);
	m.codes_ptr = UINT64_C(0xfffffff0);
	arg_area(f, true, &m, sizeof(m));
	g_assert_cmpint(call_at(f, true, EVIOCGMASK), ==, -EFAULT);
	/* Above 4 GiB a 32-bit caller has nothing. */
	m.codes_ptr = UINT64_C(0x100000000);
	arg_area(f, true, &m, sizeof(m));
	g_assert_cmpint(call_at(f, true, EVIOCSMASK), ==, -EFAULT);
	/* 4 GiB of codes: refused before anything is allocated. */
	g_assert_cmpint(mask_call(f, false, EVIOCGMASK, EV_KEY, UINT32_MAX),
			==, -ENOMEM);
	/* The struct itself out of reach. */
	g_assert_cmpint(call(f, false, EVIOCGMASK, 8), ==, -EFAULT);
}

#define ADD(name, arg, fn) \
	g_test_add(name, struct fixture, arg, setup, fn, teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	ADD("/evdev/identity", NULL, test_identity);
	ADD("/evdev/identity/params",
	    "evdev:device_name=pad7,uniq=sn1,bustype=0x03,vendor=0x046d,"
	    "product=0xc52b,version=0x0111",
	    test_identity_params);
	g_test_add_func("/evdev/bad-config", test_bad_config);
	ADD("/evdev/bits", NULL, test_bits);
	ADD("/evdev/mouse", "evdev:profile=mouse", test_mouse);
	ADD("/evdev/abs", "evdev:profile=touchscreen", test_abs);
	ADD("/evdev/rep", NULL, test_rep);
	ADD("/evdev/rep/events", NULL, test_rep_events);
	ADD("/evdev/grab", NULL, test_grab);
	ADD("/evdev/clock", NULL, test_clock);
	ADD("/evdev/inject", NULL, test_inject);
	ADD("/evdev/inject/errors", NULL, test_inject_errors);
	ADD("/evdev/read/rules", NULL, test_read_rules);
	ADD("/evdev/read/compat", NULL, test_read_compat);
	ADD("/evdev/read/overflow", NULL, test_overflow);
	ADD("/evdev/read/blocks", NULL, test_read_blocks);
	ADD("/evdev/revoke", NULL, test_revoke);
	ADD("/evdev/write", NULL, test_write);
	ADD("/evdev/write/repeat", NULL, test_write_repeat);
	ADD("/evdev/keymap", NULL, test_keymap);
	ADD("/evdev/keymap/keys", NULL, test_keyset);
	ADD("/evdev/keymap/none", "evdev:profile=mouse", test_no_keymap);
	ADD("/evdev/mask", NULL, test_mask);
	ADD("/evdev/mask/errors", NULL, test_mask_errors);
	return g_test_run();
}
