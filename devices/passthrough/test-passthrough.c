/* SPDX-License-Identifier: MIT */
/*
 * The passthrough model on real devices of this machine, through the fake
 * kernel (no FUSE): a pseudo-terminal master's _IOC-encoded ioctls, native
 * and through the 32-bit entry; a command no layout names; the probe's
 * refusals. And the compat shim's conversion of a header's i386 payload to
 * the x86_64 one and back, member by member. What evdev and i2c-dev copy in
 * and out, with a driver of the test's behind /dev/null.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/input.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "layout.h"
#include "device.h"
#include "fake-kernel.h"
#include "passthrough.h"

#define CLIENT_SIZE 4096

#define SHIM_HEADER SOURCE_DIR "/tests/passthrough/shim.h"

struct fixture {
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client native, compat;
};

static void setup(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	f->dev = fake_device_try(NULL, "passthrough:path=/dev/ptmx", &error);
	g_assert_no_error(error);
	f->file = (struct cusemu_file){ .dev = f->dev, .flags = O_RDWR,
					.opener = getpid() };
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	fake_client_init(&f->native, false, CLIENT_SIZE);
	fake_client_init(&f->compat, true, CLIENT_SIZE);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	f->dev->model->release(f->dev, &f->file);
	fake_device_free(f->dev);
	g_free(f->native.mem);
	g_free(f->compat.mem);
}

static long call(struct fixture *f, bool compat, unsigned int cmd,
		 unsigned int *round_trips)
{
	struct fake_client *c = compat ? &f->compat : &f->native;

	return fake_ioctl(c, f->dev, &f->file, cmd, c->base + 64, round_trips);
}

static uint32_t pty_number(struct fixture *f, bool compat)
{
	struct fake_client *c = compat ? &f->compat : &f->native;
	unsigned int rt = 0;
	uint32_t n;

	memset(c->mem + 64, 0xa5, 4);
	g_assert_cmpint(call(f, compat, TIOCGPTN, &rt), ==, 0);
	/* Unrestricted: the payload arrives with the one retry. */
	g_assert_cmpuint(rt, ==, 1);
	memcpy(&n, c->mem + 64, 4);
	return n;
}

/* TIOCGPTN reaches the pty driver: the number names a slave that exists. */
static void test_native(struct fixture *f, gconstpointer data)
{
	uint32_t n = pty_number(f, false);
	g_autofree char *slave = g_strdup_printf("/dev/pts/%u", n);

	g_assert_true(g_file_test(slave, G_FILE_TEST_EXISTS));
}

/* The same through the 32-bit entry: the driver's compat_ioctl. */
static void test_compat(struct fixture *f, gconstpointer data)
{
	if (!pt_sys32_available()) {
		g_test_skip("no 32-bit system call from a 64-bit process "
			    "here: a kernel without IA32 emulation, or "
			    "valgrind, which does not run int $0x80");
		return;
	}
	g_assert_cmpuint(pty_number(f, true), ==, pty_number(f, false));
}

/* A plain number no layout names: EOPNOTSUPP, and a line saying so. */
static void test_unknown(struct fixture *f, gconstpointer data)
{
	unsigned int rt;

	g_test_expect_message("cusemu-passthrough", G_LOG_LEVEL_WARNING,
			      "*x86_64 command 0x00005401: no layout says "
			      "what its argument is*Give like=MODEL*");
	g_assert_cmpint(call(f, false, TCGETS, &rt), ==, -EOPNOTSUPP);
	g_test_assert_expected_messages();
	/* Once per command: the second call is quiet. */
	g_assert_cmpint(call(f, false, TCGETS, &rt), ==, -EOPNOTSUPP);
}

static void expect_refused(const char *spec, const char *why)
{
	g_autoptr(GError) error = NULL;
	struct cusemu_device *dev = fake_device_try(NULL, spec, &error);

	g_assert_null(dev);
	g_assert_nonnull(error);
	if (!strstr(error->message, why))
		g_error("%s: '%s' does not say '%s'", spec, error->message,
			why);
}

static void test_refusals(void)
{
	expect_refused("passthrough", "give the real device: path=");
	expect_refused("passthrough:path=/nonexistent/x",
		       "No such file or directory");
	expect_refused("passthrough:path=/tmp", "not a character device");
	expect_refused("passthrough:path=/dev/null,like=tty",
		       "like=tty: no such model; give one of rtc, watchdog, "
		       "i2c, evdev");
	expect_refused("passthrough:path=/dev/null,compat=maybe",
		       "give auto, syscall or translate");
	expect_refused("passthrough:path=/dev/null,layouts=" SHIM_HEADER
		       ",commands=SHIM_RAW",
		       "'SHIM_RAW' is not NAME=value or NAME=TYPE");
	expect_refused("passthrough:path=/dev/null,commands=SHIM_RAW=value",
		       "none is given");
}

/* ---- who may open it ---- */

/* A process of nobody's (gid 65534), there until *release is closed. */
static pid_t nobody_process(int *release)
{
	int fds[2];
	pid_t pid;
	char c;

	g_assert_cmpint(pipe(fds), ==, 0);
	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		close(fds[1]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 ||
		    setuid(65534) < 0)
			_exit(2);
		/* Its ids are in /proc/PID/status as soon as it reads. */
		_exit(read(fds[0], &c, 1) < 0);
	}
	close(fds[0]);
	*release = fds[1];
	/* The ids are set before the child blocks: wait for them. */
	for (int i = 0; i < 1000; i++) {
		g_autofree char *status = g_strdup_printf("/proc/%d/status",
							  (int)pid);
		g_autofree char *text = NULL;

		if (g_file_get_contents(status, &text, NULL, NULL) &&
		    strstr(text, "\nUid:\t65534\t"))
			break;
		g_usleep(1000);
	}
	return pid;
}

/* open(2) of dev by pid, with flags: 0 or -errno. */
static int open_as(struct cusemu_device *dev, pid_t pid, int flags)
{
	struct cusemu_file file = { .dev = dev, .flags = flags,
				    .opener = pid };
	int ret = dev->model->open(dev, &file);

	if (!ret)
		dev->model->release(dev, &file);
	return ret;
}

/*
 * A node is never more open than the device behind it is to its caller:
 * the daemon opens the device with its own rights, so it asks the
 * device's mode, owner and group first, for the caller.
 */
static void test_caller_rights(void)
{
	g_autofree char *dir = g_dir_make_tmp("cusemu-pt-XXXXXX", NULL);
	g_autofree char *node = g_build_filename(dir, "null", NULL);
	g_autofree char *spec = g_strdup_printf("passthrough:path=%s,mode=0666",
						node);
	struct cusemu_device *dev;
	int release, status;
	pid_t nobody;

	if (geteuid() != 0) {
		g_test_skip("making a device node and a process of nobody's "
			    "needs root");
		rmdir(dir);
		return;
	}
	/* /dev/null's numbers, at mode 0600 of root's. */
	g_assert_cmpint(mknod(node, S_IFCHR | 0600, makedev(1, 3)), ==, 0);
	dev = fake_device_new(spec);
	nobody = nobody_process(&release);
	g_assert_cmpint(open_as(dev, getpid(), O_RDWR), ==, 0);
	g_assert_cmpint(open_as(dev, nobody, O_RDWR), ==, -EACCES);
	g_assert_cmpint(open_as(dev, nobody, O_RDONLY), ==, -EACCES);
	/* Its group may read, not write. */
	g_assert_cmpint(chown(node, 0, 65534), ==, 0);
	g_assert_cmpint(chmod(node, 0640), ==, 0);
	g_assert_cmpint(open_as(dev, nobody, O_RDONLY), ==, 0);
	g_assert_cmpint(open_as(dev, nobody, O_RDWR), ==, -EACCES);
	g_assert_cmpint(open_as(dev, nobody, O_WRONLY), ==, -EACCES);
	/* Its owner may do what the owner's bits say. */
	g_assert_cmpint(chown(node, 65534, 0), ==, 0);
	g_assert_cmpint(chmod(node, 0600), ==, 0);
	g_assert_cmpint(open_as(dev, nobody, O_RDWR), ==, 0);
	/* A caller that is gone is kept out. */
	close(release);
	g_assert_cmpint(waitpid(nobody, &status, 0), ==, nobody);
	g_assert_cmpint(open_as(dev, nobody, O_RDONLY), ==, -EACCES);
	fake_device_free(dev);
	unlink(node);
	rmdir(dir);
}

/* ---- the compat shim ---- */

static const struct command *find_command(GPtrArray *commands,
					  const char *name)
{
	for (guint i = 0; i < commands->len; i++) {
		const struct command *c = commands->pdata[i];

		if (!strcmp(c->name, name))
			return c;
	}
	g_error("the header defines no %s", name);
}

static GPtrArray *probe_shim(void)
{
	g_autoptr(GPtrArray) cflags = g_ptr_array_new();
	g_autoptr(GPtrArray) given = g_ptr_array_new();
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	char *cc[] = { "gcc", NULL };
	char *headers[] = { SHIM_HEADER, NULL };
	struct probe_options o = { .cc = cc, .cflags = cflags };
	GPtrArray *commands = NULL;

	g_assert_true(probe_headers(&o, headers, given, &commands, notes,
				    &error));
	g_assert_no_error(error);
	return commands;
}

static void put(uint8_t *buf, const struct layout *l, const char *path,
		uint64_t v)
{
	const struct member *m = layout_find(l, path);

	g_assert_nonnull(m);
	memcpy(buf + m->offset, &v, m->size);
}

static uint64_t get(const uint8_t *buf, const struct layout *l,
		    const char *path)
{
	const struct member *m = layout_find(l, path);
	uint64_t v = 0;

	g_assert_nonnull(m);
	memcpy(&v, buf + m->offset, MIN(m->size, 8));
	return v;
}

/*
 * Signed members widen with their sign, unsigned ones with zeros, arrays
 * element by element, unions as bytes, bitfields by their bits; back to
 * i386, the bytes are those the caller gave.
 */
static void test_translate(void)
{
	g_autoptr(GPtrArray) commands = probe_shim();
	const struct command *c = find_command(commands, "SHIM_SET");
	const struct layout *l32 = &c->layout[ABI_I386];
	const struct layout *l64 = &c->layout[ABI_X86_64];
	char *headers[] = { SHIM_HEADER, NULL };
	g_autoptr(GError) error = NULL;
	struct pt_layouts *l = pt_layouts_new(NULL, headers, NULL, NULL, &error);
	uint8_t in[256] = { 0 }, native[256], back[256];
	const struct member *arr64 = layout_find(l64, "arr");
	struct pt_translation t;
	const char *why = NULL;
	int64_t elem;

	g_assert_no_error(error);
	g_assert_cmphex(c->number[ABI_I386], !=, c->number[ABI_X86_64]);
	g_assert_true(pt_translation_find(l, c->number[ABI_I386], &t, &why));
	g_assert_cmphex(t.native_cmd, ==, c->number[ABI_X86_64]);
	g_assert_cmpuint(t.size32, ==, 44);
	g_assert_cmpuint(t.size64, ==, 72);

	put(in, l32, "l", (uint32_t)-5);
	put(in, l32, "ul", 0xfffffffeu);
	put(in, l32, "i", (uint32_t)-7);
	put(in, l32, "s", (uint16_t)-3);
	put(in, l32, "u64", 0x1122334455667788ull);
	for (int i = 0; i < 3; i++) {
		const struct member *a = layout_find(l32, "arr");
		int32_t v = i == 1 ? 2 : -(i + 1);

		memcpy(in + a->offset + i * a->elem_size, &v, 4);
	}
	put(in, l32, "u.a", (uint32_t)-9);
	/* low:3 = 5, high:5 = 17, in the word the bitfields share. */
	put(in, l32, "low", 5u | 17u << 3);

	memset(native, 0xee, sizeof(native));
	pt_translate(&t, true, in, native);
	g_assert_cmpint((int64_t)get(native, l64, "l"), ==, -5);
	g_assert_cmphex(get(native, l64, "ul"), ==, 0xfffffffeu);
	g_assert_cmpint((int32_t)get(native, l64, "i"), ==, -7);
	g_assert_cmpint((int16_t)get(native, l64, "s"), ==, -3);
	g_assert_cmphex(get(native, l64, "u64"), ==, 0x1122334455667788ull);
	memcpy(&elem, native + arr64->offset + 2 * arr64->elem_size, 8);
	g_assert_cmpint(elem, ==, -3);
	g_assert_cmpint((int32_t)get(native, l64, "u.a"), ==, -9);
	g_assert_cmphex(get(native, l64, "low") & 0xff, ==, 5u | 17u << 3);

	pt_translate(&t, false, native, back);
	g_assert_cmpmem(back, t.size32, in, t.size32);
	pt_layouts_free(l);
}

/*
 * A header's array of pointers: each element is followed and its struct
 * fetched from the caller, never handed to the driver as it is (a driver
 * would follow it in the daemon's memory). An element pointing at memory
 * the caller has not mapped gives EFAULT; with every element readable, the
 * call reaches the pty, which does not know it.
 */
static void test_pointer_array(gconstpointer data)
{
	bool compat = GPOINTER_TO_INT(data);
	g_autoptr(GPtrArray) commands = probe_shim();
	const struct command *nodes = find_command(commands, "SHIM_NODES");
	struct fake_client c;
	struct cusemu_device *dev;
	struct cusemu_file file;
	unsigned int width = compat ? 4 : 8, rt = 0;
	cusemu_uptr_t arg;

	dev = fake_device_new("passthrough:path=/dev/ptmx,layouts=" SHIM_HEADER);
	file = (struct cusemu_file){ .dev = dev, .flags = O_RDWR,
				     .opener = getpid() };
	g_assert_cmpint(dev->model->open(dev, &file), ==, 0);
	fake_client_init(&c, compat, CLIENT_SIZE);
	arg = c.base + 64;
	for (unsigned int i = 0; i < 4; i++) {
		/* Element 2 is NULL: nothing to follow. */
		uint64_t p = i == 2 ? 0 : c.base + 512 + 16 * i;

		memcpy(c.mem + 64 + i * width, &p, width);
	}
	if (compat && !pt_sys32_available()) {
		/* No 32-bit entry (valgrind runs no int $0x80): the shim,
		 * which follows no pointer, refuses it with a log line. */
		g_test_expect_message("cusemu-passthrough", G_LOG_LEVEL_WARNING,
				      "*i386 command*answered EOPNOTSUPP*");
		g_assert_cmpint(fake_ioctl(&c, dev, &file,
					   nodes->number[ABI_I386], arg, &rt),
				==, -EOPNOTSUPP);
		g_test_assert_expected_messages();
		goto out;
	}
	g_assert_cmpint(fake_ioctl(&c, dev, &file,
				   nodes->number[compat ? ABI_I386
							: ABI_X86_64],
				   arg, &rt),
			==, -ENOTTY);
	/* Element 3 beyond the caller's memory. */
	{
		uint64_t bad = c.base + CLIENT_SIZE + 4096;

		memcpy(c.mem + 64 + 3 * width, &bad, width);
	}
	g_assert_cmpint(fake_ioctl(&c, dev, &file,
				   nodes->number[compat ? ABI_I386
							: ABI_X86_64],
				   arg, &rt),
			==, -EFAULT);
out:
	dev->model->release(dev, &file);
	fake_device_free(dev);
	g_free(c.mem);
}

/* What the shim and the lookup refuse, and what commands= gives. */
static void test_header_rules(void)
{
	g_autoptr(GPtrArray) commands = probe_shim();
	const struct command *ptr = find_command(commands, "SHIM_PTR");
	const struct command *raw = find_command(commands, "SHIM_RAW");
	char *headers[] = { SHIM_HEADER, NULL };
	char *values[] = { "SHIM_RAW=value", NULL };
	g_autoptr(GError) error = NULL;
	struct pt_layouts *l = pt_layouts_new(NULL, headers, NULL, NULL, &error);
	struct pt_layouts *lv;
	struct pt_translation t;
	const char *why = NULL;
	struct pt_cmd found;

	g_assert_no_error(error);
	g_assert_false(pt_translation_find(l, ptr->number[ABI_I386], &t,
					   &why));
	g_assert_nonnull(strstr(why, "pointer"));
	/* _IO says nothing of the argument: no guess. */
	found = pt_layout_lookup(l, raw->number[ABI_X86_64], false);
	g_assert_cmpint(found.kind, ==, PT_UNKNOWN);
	g_assert_nonnull(strstr(found.why, "commands=NAME=value"));
	lv = pt_layouts_new(NULL, headers, values, NULL, &error);
	g_assert_no_error(error);
	found = pt_layout_lookup(lv, raw->number[ABI_X86_64], false);
	g_assert_cmpint(found.kind, ==, PT_VALUE);
	/* A pointer member is followed: the header's own layout. */
	found = pt_layout_lookup(l, ptr->number[ABI_X86_64], false);
	g_assert_cmpint(found.kind, ==, PT_HEADER);
	pt_layouts_free(l);
	pt_layouts_free(lv);
}

/* ---- a driver of the test's, behind /dev/null ---- */

/*
 * The binary is linked with --wrap=ioctl: the passthrough's calls on
 * /dev/null reach driver, which does with the daemon's copy what the real
 * driver does with the caller's memory.
 */
typedef long (*fake_driver_fn)(unsigned long cmd, void *arg);
static fake_driver_fn driver;
static unsigned int driver_calls;

int __real_ioctl(int fd, unsigned long cmd, ...);
int __wrap_ioctl(int fd, unsigned long cmd, ...);

int __wrap_ioctl(int fd, unsigned long cmd, ...)
{
	struct stat st;
	va_list ap;
	void *arg;
	long ret;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!driver || fstat(fd, &st) || !S_ISCHR(st.st_mode) ||
	    st.st_rdev != makedev(1, 3))
		return __real_ioctl(fd, cmd, arg);
	driver_calls++;
	ret = driver(cmd, arg);
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return (int)ret;
}

#define DRIVER_CLIENT_SIZE (64 * 1024)

struct driver_fixture {
	struct cusemu_device *dev;
	struct cusemu_file file;
	struct fake_client c;
};

static void driver_setup(struct driver_fixture *f, const char *like,
			 fake_driver_fn fn)
{
	g_autofree char *spec =
		g_strdup_printf("passthrough:path=/dev/null,like=%s", like);

	f->dev = fake_device_new(spec);
	f->file = (struct cusemu_file){ .dev = f->dev, .flags = O_RDWR,
					.opener = getpid() };
	g_assert_cmpint(f->dev->model->open(f->dev, &f->file), ==, 0);
	fake_client_init(&f->c, false, DRIVER_CLIENT_SIZE);
	driver = fn;
	driver_calls = 0;
}

static void driver_teardown(struct driver_fixture *f)
{
	driver = NULL;
	f->dev->model->release(f->dev, &f->file);
	fake_device_free(f->dev);
	g_free(f->c.mem);
}

static long driver_call(struct driver_fixture *f, unsigned int cmd,
			uint32_t at)
{
	unsigned int rt;

	return fake_ioctl(&f->c, f->dev, &f->file, cmd, f->c.base + at, &rt);
}

/* ---- evdev ---- */

static const char evdev_name[] = "Fake keyboard";
/* BITS_TO_LONGS(KEY_MAX) longs: what EVIOCGBIT(EV_KEY) copies at most. */
#define EVDEV_KEY_BYTES 96

/*
 * copy_to_user() for a fake driver: 0, or -EFAULT where the memory is not
 * there (as the passthrough's probe gives it, the kernel's would say so).
 */
static long copy_to(void *to, const void *from, size_t n)
{
	struct iovec local = { (void *)from, n }, remote = { to, n };

	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) ==
			       (ssize_t)n
		       ? 0
		       : -EFAULT;
}

/* What EVIOCSMASK read last. */
static uint8_t evdev_mask[EVDEV_KEY_BYTES];

/* str_to_user() and bits_to_user(): as much as there is, its length. */
static long fake_evdev(unsigned long cmd, void *arg)
{
	uint32_t size = _IOC_SIZE(cmd), len;

	if ((cmd & ~IOCSIZE_MASK) == EVIOCGNAME(0)) {
		len = MIN((uint32_t)sizeof(evdev_name), size);
		memcpy(arg, evdev_name, len);
		return len;
	}
	if ((cmd & ~IOCSIZE_MASK) == EVIOCGBIT(EV_KEY, 0)) {
		len = MIN((uint32_t)EVDEV_KEY_BYTES, size);
		memset(arg, 0x3c, len);
		return len;
	}
	if (cmd == EVIOCSMASK) {
		const struct input_mask *m = arg;

		/* evdev_set_mask() and bits_from_user() for EV_KEY, or a
		 * type it has no mask for. */
		if (m->type != EV_KEY)
			return 0;
		if (m->codes_size % sizeof(long))
			return -EINVAL;
		memcpy(evdev_mask, (void *)(uintptr_t)m->codes_ptr,
		       MIN(m->codes_size, EVDEV_KEY_BYTES));
		return 0;
	}
	if ((cmd & ~(ABS_MAX << _IOC_NRSHIFT)) == EVIOCGABS(0)) {
		struct input_absinfo abs = { .value = 5, .maximum = 100 };

		return copy_to(arg, &abs, MIN(sizeof(abs), size));
	}
	if ((cmd & ~IOCSIZE_MASK) == EVIOCGMTSLOTS(0)) {
		int32_t *ip = arg, slots[2] = { 11, 22 };

		/* evdev_handle_mt_request(): the code first. */
		if (ip[0] != ABS_MT_POSITION_X)
			return -EINVAL;
		memcpy(ip + 1, slots, MIN(sizeof(slots), size - 4));
		return 0;
	}
	return -EINVAL;
}

static void assert_untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xa5)
			g_error("byte %zu the driver never wrote is 0x%02x",
				i, p[i]);
}

/*
 * A string or a bitmap goes back as long as the driver's result says: the
 * rest of the caller's buffer keeps its bytes, and a buffer that ends
 * before its size works as it does on the device.
 */
static void test_evdev_result_length(void)
{
	struct driver_fixture f;
	uint32_t end = DRIVER_CLIENT_SIZE - 16;

	driver_setup(&f, "evdev", fake_evdev);
	memset(f.c.mem, 0xa5, DRIVER_CLIENT_SIZE);
	g_assert_cmpint(driver_call(&f, EVIOCGNAME(256), 64), ==,
			sizeof(evdev_name));
	g_assert_cmpstr((char *)f.c.mem + 64, ==, evdev_name);
	assert_untouched(f.c.mem + 64 + sizeof(evdev_name),
			 256 - sizeof(evdev_name));

	g_assert_cmpint(driver_call(&f, EVIOCGBIT(EV_KEY, 16383), 1024), ==,
			EVDEV_KEY_BYTES);
	g_assert_cmphex(f.c.mem[1024 + EVDEV_KEY_BYTES - 1], ==, 0x3c);
	assert_untouched(f.c.mem + 1024 + EVDEV_KEY_BYTES,
			 16383 - EVDEV_KEY_BYTES);

	/* 16 bytes of the caller's memory, 16383 asked for. */
	g_assert_cmpint(driver_call(&f, EVIOCGNAME(16383), end), ==,
			sizeof(evdev_name));
	g_assert_cmpstr((char *)f.c.mem + end, ==, evdev_name);
	driver_teardown(&f);
}

/* EVIOCSMASK with the mask at 64, its codes at codes. */
static long set_mask(struct driver_fixture *f, uint32_t type, uint32_t size,
		     uint32_t codes)
{
	struct input_mask m = { .type = type, .codes_size = size,
				.codes_ptr = f->c.base + codes };

	memcpy(f->c.mem + 64, &m, sizeof(m));
	return driver_call(f, EVIOCSMASK, 64);
}

/*
 * EVIOCSMASK's codes are fetched as far as the driver reads them, and
 * not before it has checked what it checks first: a size that is not
 * whole longs is EINVAL, a type without a mask reads nothing, and a size
 * larger than the mask reads the mask's bytes alone.
 */
static void test_evdev_set_mask(void)
{
	struct driver_fixture f;
	uint32_t unmapped = DRIVER_CLIENT_SIZE + 4096;
	uint32_t last = DRIVER_CLIENT_SIZE - EVDEV_KEY_BYTES;

	driver_setup(&f, "evdev", fake_evdev);
	g_assert_cmpint(set_mask(&f, EV_KEY, 10, unmapped), ==, -EINVAL);
	g_assert_cmpint(set_mask(&f, EV_CNT - 1, 4096, unmapped), ==, 0);
	memset(f.c.mem + last, 0x77, EVDEV_KEY_BYTES);
	g_assert_cmpint(set_mask(&f, EV_KEY, 4096, last), ==, 0);
	g_assert_cmphex(evdev_mask[0], ==, 0x77);
	g_assert_cmphex(evdev_mask[EVDEV_KEY_BYTES - 1], ==, 0x77);
	g_assert_cmpint(set_mask(&f, EV_KEY, 8, unmapped), ==, -EFAULT);
	driver_teardown(&f);
}

/*
 * A command the driver does not know is answered as the driver answers it
 * (evdev: EINVAL) even where its _IOC size runs into memory the caller
 * has not mapped: the driver is asked first, with an argument it cannot
 * reach. One it knows that no layout names (EVIOCGABS) is then fetched
 * and made, and made at once from then on.
 */
static void test_evdev_unknown_command(void)
{
	struct driver_fixture f;
	uint32_t end = DRIVER_CLIENT_SIZE - 64;
	struct input_absinfo abs;
	unsigned int foreign = _IOC(_IOC_READ | _IOC_WRITE, 'T', 0x7f, 16383);

	driver_setup(&f, "evdev", fake_evdev);
	g_assert_cmpint(driver_call(&f, foreign, end), ==, -EINVAL);
	g_assert_cmpuint(driver_calls, ==, 1);
	driver_calls = 0;
	g_assert_cmpint(driver_call(&f, EVIOCGABS(ABS_X), 64), ==, 0);
	g_assert_cmpuint(driver_calls, ==, 2);
	memcpy(&abs, f.c.mem + 64, sizeof(abs));
	g_assert_cmpint(abs.value, ==, 5);
	g_assert_cmpint(abs.maximum, ==, 100);
	driver_calls = 0;
	g_assert_cmpint(driver_call(&f, EVIOCGABS(ABS_X), 64), ==, 0);
	g_assert_cmpuint(driver_calls, ==, 1);
	driver_teardown(&f);
}

/* EVIOCGMTSLOTS is _IOR, and the driver reads the code at its start. */
static void test_evdev_mtslots(void)
{
	struct driver_fixture f;
	int32_t req[3] = { ABS_MT_POSITION_X, 0, 0 };

	driver_setup(&f, "evdev", fake_evdev);
	memcpy(f.c.mem + 64, req, sizeof(req));
	g_assert_cmpint(driver_call(&f, EVIOCGMTSLOTS(sizeof(req)), 64), ==,
			0);
	memcpy(req, f.c.mem + 64, sizeof(req));
	g_assert_cmpint(req[0], ==, ABS_MT_POSITION_X);
	g_assert_cmpint(req[1], ==, 11);
	g_assert_cmpint(req[2], ==, 22);
	driver_teardown(&f);
}

/* ---- a pointer and a count, from a header ---- */

struct shim_node {
	uint32_t v;
};

struct shim_span {
	uint64_t elems;
	uint32_t n;
	uint32_t pad;
};

struct shim_bytes {
	uint8_t *buf;
	uint16_t len;
};

/* tests/passthrough/shim.h's numbers, for x86_64. */
#define SHIM_SPAN _IOWR('S', 6, struct shim_span)
#define SHIM_BYTES _IOW('S', 7, struct shim_bytes)

/* Sums what the pointer and the count reach; doubles SHIM_SPAN's nodes. */
static long fake_shim(unsigned long cmd, void *arg)
{
	long sum = 0;

	if (cmd == SHIM_SPAN) {
		struct shim_span *s = arg;
		struct shim_node *e = (void *)(uintptr_t)s->elems;

		for (uint32_t i = 0; i < s->n; i++) {
			sum += e[i].v;
			e[i].v *= 2;
		}
		return sum;
	}
	if (cmd == SHIM_BYTES) {
		struct shim_bytes *b = arg;

		for (uint16_t i = 0; i < b->len; i++)
			sum += b->buf[i];
		return sum;
	}
	return -ENOTTY;
}

/*
 * pointees=TAG.MEMBER=TYPE[COUNT]: a __u64 and a count of structs, a
 * pointer and a length of bytes, fetched as many as the count says (one
 * more than the caller's memory holds is EFAULT), and the structs
 * written back.
 */
static void test_pointer_count(void)
{
	struct driver_fixture f;
	struct cusemu_device *dev = fake_device_new(
		"passthrough:path=/dev/null,like=none,layouts=" SHIM_HEADER
		",pointees=shim_span.elems=struct shim_node[n]:"
		"shim_bytes.buf=__u8[len]");
	struct shim_span span = { .elems = 0, .n = 3 };
	struct shim_bytes bytes = { .len = 5 };
	uint32_t v[3] = { 1, 2, 3 };
	uint32_t end = DRIVER_CLIENT_SIZE - sizeof(v);

	f.dev = dev;
	f.file = (struct cusemu_file){ .dev = dev, .flags = O_RDWR,
				       .opener = getpid() };
	g_assert_cmpint(dev->model->open(dev, &f.file), ==, 0);
	fake_client_init(&f.c, false, DRIVER_CLIENT_SIZE);
	driver = fake_shim;

	span.elems = f.c.base + end;
	memcpy(f.c.mem + end, v, sizeof(v));
	memcpy(f.c.mem + 64, &span, sizeof(span));
	g_assert_cmpint(driver_call(&f, SHIM_SPAN, 64), ==, 6);
	memcpy(v, f.c.mem + end, sizeof(v));
	g_assert_cmpuint(v[0], ==, 2);
	g_assert_cmpuint(v[2], ==, 6);
	span.n = 4;
	memcpy(f.c.mem + 64, &span, sizeof(span));
	g_assert_cmpint(driver_call(&f, SHIM_SPAN, 64), ==, -EFAULT);

	bytes.buf = (void *)(uintptr_t)(f.c.base + 1024);
	memcpy(f.c.mem + 1024, (uint8_t[]){ 1, 2, 3, 4, 5, 100 }, 6);
	memcpy(f.c.mem + 128, &bytes, sizeof(bytes));
	g_assert_cmpint(driver_call(&f, SHIM_BYTES, 128), ==, 15);
	driver_teardown(&f);
}

/* ---- i2c-dev ---- */

/*
 * i2cdev_ioctl_rdwr(): every message's buffer copied in, the transfer
 * (message i reads bytes of 0x10 + i), the read ones copied back from the
 * last to the first.
 */
static long fake_i2c(unsigned long cmd, void *arg)
{
	struct i2c_rdwr_ioctl_data *d = arg;
	uint8_t *copies[I2C_RDWR_IOCTL_MAX_MSGS];

	if (cmd != I2C_RDWR)
		return -ENOTTY;
	if (d->nmsgs > I2C_RDWR_IOCTL_MAX_MSGS)
		return -EINVAL;
	for (uint32_t i = 0; i < d->nmsgs; i++) {
		if (d->msgs[i].len > 8192)
			return -EINVAL;
		copies[i] = g_memdup2(d->msgs[i].buf, d->msgs[i].len);
		if (d->msgs[i].flags & I2C_M_RD)
			memset(copies[i], 0x10 + i, d->msgs[i].len);
	}
	for (uint32_t i = d->nmsgs; i-- > 0;) {
		if (d->msgs[i].flags & I2C_M_RD)
			memcpy(d->msgs[i].buf, copies[i], d->msgs[i].len);
		g_free(copies[i]);
	}
	return d->nmsgs;
}

/* The messages at 64, their struct at 512: above them, as on a stack. */
static long i2c_rdwr(struct driver_fixture *f, const struct i2c_msg *msgs,
		     uint32_t n)
{
	struct i2c_rdwr_ioctl_data d = {
		.msgs = (void *)(uintptr_t)(f->c.base + 64), .nmsgs = n
	};

	memcpy(f->c.mem + 512, &d, sizeof(d));
	memcpy(f->c.mem + 64, msgs, n * sizeof(*msgs));
	return driver_call(f, I2C_RDWR, 512);
}

static struct i2c_msg read_msg(struct driver_fixture *f, uint32_t at,
			       uint16_t len)
{
	return (struct i2c_msg){ .addr = 0x50, .flags = I2C_M_RD, .len = len,
				 .buf = (void *)(uintptr_t)(f->c.base + at) };
}

/*
 * Messages that share a buffer share it in the driver's hands too: two
 * reads into one buffer leave the first one's bytes, as i2c-dev copies
 * them back from the last; sixteen reads of nearly 8 KiB into four buffers
 * move four buffers' bytes, not sixteen.
 */
static void test_i2c_shared_buffers(void)
{
	struct driver_fixture f;
	struct i2c_msg msgs[16];

	driver_setup(&f, "i2c", fake_i2c);
	msgs[0] = read_msg(&f, 1024, 4);
	msgs[1] = read_msg(&f, 1024, 8);
	msgs[2] = read_msg(&f, 1024, 4);
	g_assert_cmpint(i2c_rdwr(&f, msgs, 3), ==, 3);
	for (int i = 0; i < 8; i++)
		g_assert_cmphex(f.c.mem[1024 + i], ==, i < 4 ? 0x10 : 0x11);

	/* Each buffer read four times, each time a byte longer: counted
	 * once per message, more than a call can carry. */
	for (uint32_t i = 0; i < 16; i++)
		msgs[i] = read_msg(&f, 4096 + (i % 4) * 8192,
				   (uint16_t)(8192 - (3 - i / 4)));
	g_assert_cmpint(i2c_rdwr(&f, msgs, 16), ==, 16);
	for (uint32_t k = 0; k < 4; k++) {
		const uint8_t *b = f.c.mem + 4096 + k * 8192;

		g_assert_cmphex(b[0], ==, 0x10 + k);
		g_assert_cmphex(b[8188], ==, 0x10 + k);
		g_assert_cmphex(b[8189], ==, 0x10 + k + 4);
		g_assert_cmphex(b[8190], ==, 0x10 + k + 8);
		g_assert_cmphex(b[8191], ==, 0x10 + k + 12);
	}
	driver_teardown(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/passthrough/pty/native", struct fixture, NULL, setup,
		   test_native, teardown);
	g_test_add("/passthrough/pty/compat", struct fixture, NULL, setup,
		   test_compat, teardown);
	g_test_add("/passthrough/pty/unknown", struct fixture, NULL, setup,
		   test_unknown, teardown);
	g_test_add_func("/passthrough/refusals", test_refusals);
	g_test_add_func("/passthrough/caller-rights", test_caller_rights);
	g_test_add_data_func("/passthrough/pointer-array/x86_64",
			     GINT_TO_POINTER(0), test_pointer_array);
	g_test_add_data_func("/passthrough/pointer-array/i386",
			     GINT_TO_POINTER(1), test_pointer_array);
	g_test_add_func("/passthrough/evdev/result-length",
			test_evdev_result_length);
	g_test_add_func("/passthrough/evdev/mtslots", test_evdev_mtslots);
	g_test_add_func("/passthrough/evdev/set-mask", test_evdev_set_mask);
	g_test_add_func("/passthrough/evdev/unknown-command",
			test_evdev_unknown_command);
	g_test_add_func("/passthrough/i2c/shared-buffers",
			test_i2c_shared_buffers);
	g_test_add_func("/passthrough/header/pointer-count",
			test_pointer_count);
	g_test_add_func("/passthrough/shim/translate", test_translate);
	g_test_add_func("/passthrough/shim/header-rules", test_header_rules);
	return g_test_run();
}
