/* SPDX-License-Identifier: MIT */
/*
 * passthrough: a node in front of a real device. Open, read, write, poll,
 * ioctl and release go to the device, opened with the caller's flags as
 * the daemon's user. An ioctl's memory is copied in and out as the
 * caller's ABI lays it out (passthrough-layouts.c says what it reaches),
 * into memory of the daemon's with every pointer between its parts
 * rewritten, and the real call is made on that. An i386 caller's call
 * reaches the driver as a 32-bit one (its compat_ioctl) through the 32-bit
 * entry (passthrough-sys32.c), or, where the driver answers that with
 * ENOTTY (it has no compat_ioctl) or with compat=translate, as the native
 * call a uapi header's two layouts convert it to: the compat shim such a
 * driver lacks.
 */
#define G_LOG_DOMAIN "cusemu-passthrough"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>

#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"
#include "passthrough.h"

/* How long a blocking read or write naps between looks at the device. */
#define PT_WAIT_MS 2

enum pt_compat {
	PT_COMPAT_AUTO,		/* the 32-bit entry; the shim on ENOTTY */
	PT_COMPAT_SYSCALL,	/* the 32-bit entry only */
	PT_COMPAT_TRANSLATE,	/* the shim only */
};

struct pt_dev {
	char *path;
	struct pt_layouts *layouts;
	enum pt_compat compat;
	bool sys32;		/* the kernel has the 32-bit entry */
	GMutex lock;
	GHashTable *said;	/* command and ABI: said in the log once */
};

struct pt_file {
	int fd;
	bool abi32;		/* the opener is an i386 program */
	GMutex lock;
	GSource *watch;		/* wakes pollers when the device is ready */
};

/* How an i386 call reaches the driver. */
enum pt_route { PT_ENTRY32, PT_SHIM, PT_SAME };

/* ---- the log, once per command ---- */

/*
 * Whether what is said of cmd is said for the first time: for the first
 * PT_SAID_MAX commands and ways, as the dispatcher's hints are (a client
 * can make up commands without end).
 */
#define PT_SAID_MAX 256

static bool first_time(struct pt_dev *p, unsigned int cmd, unsigned int what)
{
	gint64 key = (gint64)cmd << 8 | what;
	bool first;

	g_mutex_lock(&p->lock);
	first = g_hash_table_size(p->said) < PT_SAID_MAX &&
		!g_hash_table_contains(p->said, &key);
	if (first)
		g_hash_table_add(p->said, g_memdup2(&key, sizeof(key)));
	g_mutex_unlock(&p->lock);
	return first;
}

static void say_route(struct cusemu_device *dev, unsigned int cmd,
		      const struct pt_cmd *c, enum pt_route route,
		      const struct pt_translation *t)
{
	struct pt_dev *p = dev->priv;
	char num[16];
	/* "NAME (0x...)", or the number alone. */
	g_autofree char *name = NULL;

	if (!first_time(p, cmd, 1 + route))
		return;
	g_snprintf(num, sizeof(num), "0x%08x", cmd);
	name = c->name ? g_strdup_printf("%s (%s)", c->name, num)
		       : g_strdup(num);
	switch (route) {
	case PT_ENTRY32:
		g_message("%s: i386 %s: the driver's compat_ioctl, through "
			  "the 32-bit entry",
			  dev->name, name);
		break;
	case PT_SHIM:
		g_message("%s: i386 %s: converted to x86_64 0x%08x by the "
			  "layouts of its header, and the driver's ioctl (the "
			  "compat shim)",
			  dev->name, name, t->native_cmd);
		break;
	case PT_SAME:
		g_message("%s: i386 %s: laid out as on x86_64: the driver's "
			  "ioctl (this kernel has no 32-bit entry)",
			  dev->name, name);
		break;
	}
}

static long no_layout(struct cusemu_device *dev, unsigned int cmd,
		      bool compat, const char *what)
{
	struct pt_dev *p = dev->priv;

	if (first_time(p, cmd, compat ? 8 : 9))
		g_warning("%s: %s command 0x%08x: %s; answered EOPNOTSUPP. "
			  "Give like=MODEL (%s) or layouts=HEADER with the "
			  "header that defines it",
			  dev->name, compat ? "i386" : "x86_64", cmd, what,
			  pt_layouts_models());
	return -EOPNOTSUPP;
}

/* ---- what a call reaches ---- */

/* The layout of cmd; commands no layout names follow their _IOC bits. */
static struct pt_cmd lookup(struct pt_dev *p, unsigned int cmd, bool compat)
{
	struct pt_cmd c = pt_layout_lookup(p->layouts, cmd, compat);

	if (c.kind == PT_UNKNOWN && !c.why && _IOC_DIR(cmd) != _IOC_NONE &&
	    _IOC_SIZE(cmd))
		c.kind = PT_IOC;
	return c;
}

/* The route of an i386 call before it is tried. */
static int route_of(struct pt_dev *p, const struct pt_cmd *c,
		    unsigned int cmd, struct pt_translation *t,
		    const char **why)
{
	bool shim = pt_translation_find(p->layouts, cmd, t, why);
	struct pt_cmd native;

	if (p->compat == PT_COMPAT_TRANSLATE || (!p->sys32 && shim))
		return shim ? PT_SHIM : -1;
	if (p->sys32)
		return PT_ENTRY32;
	/* No entry: what is laid out alike on both ABIs is the same call. */
	native = lookup(p, cmd, false);
	if (c->kind != PT_UNKNOWN && c->kind != PT_HEADER &&
	    c->kind != PT_CHASE && native.kind == c->kind)
		return PT_SAME;
	*why = "this kernel has no 32-bit entry, and no header given with "
	       "layouts= converts it";
	return -1;
}

static int shim_graph(struct pt_graph *g, const struct pt_translation *t,
		      unsigned int cmd, cusemu_uptr_t arg)
{
	int r;

	if (!t->size32)
		return 0;
	r = pt_graph_range(g, arg, _IOC_DIR(cmd) & _IOC_WRITE ? t->size32 : 0,
			   _IOC_DIR(cmd) & _IOC_READ ? t->size32 : 0);
	return r < 0 ? r : 0;
}

/*
 * The memory of a call, as the route it takes lays it out. For the fetch
 * step and the handler alike: with the memory that has arrived, the same
 * graph.
 */
static int graph_of(struct cusemu_device *dev, unsigned int cmd,
		    cusemu_uptr_t arg, struct pt_graph *g, struct pt_cmd *c,
		    int *route, struct pt_translation *t)
{
	struct pt_dev *p = dev->priv;
	const char *why = NULL;

	g->compat = cusemu_in_compat_syscall();
	*c = lookup(p, cmd, g->compat);
	*route = -1;
	/* t->header stays NULL when no header converts cmd. */
	*t = (struct pt_translation){ 0 };
	if (g->compat) {
		*route = route_of(p, c, cmd, t, &why);
		if (*route < 0)
			return no_layout(dev, cmd, true,
					 c->kind != PT_UNKNOWN ? why
					 : c->why	       ? c->why
							       : "no layout says "
								 "what its argument "
								 "is");
		if (*route == PT_SHIM)
			return shim_graph(g, t, cmd, arg);
	}
	if (c->kind == PT_UNKNOWN)
		return no_layout(dev, cmd, g->compat,
				 c->why ? c->why
					: "no layout says what its argument "
					  "is (_IO, or a plain number)");
	return pt_layout_chase(c, g, cmd, arg);
}

/* ---- commands no layout names: asking the driver first ---- */

/*
 * A command no layout names is fetched as its _IOC bits say, and the
 * kernel reads that memory before the daemon sees the call: where it is
 * not there, the caller gets EFAULT, where the driver, which does not know
 * the command, answers without touching it (ENOTTY; evdev's EINVAL).
 * The built-in models' drivers (rtc, watchdog core, i2c-dev, evdev) answer
 * a command they do not know before they read anything, and read a known
 * command's argument before they act on it. So in front of one of them
 * (like=), such a command is first made with an argument that points at
 * memory no one maps: any answer but EFAULT is the driver's, and ends the
 * call with nothing fetched; EFAULT says the driver reads the argument,
 * and the command is fetched and made as its bits say, with no such probe
 * again. In front of another driver nothing is probed: one could act on a
 * command before reading its argument, and would act twice.
 */
#define PT_GUARD_BYTES (64u * 1024u)

/* Mapped with no access, below 2 GiB, where the 32-bit entry reaches. */
static void *guard_area(void)
{
	static gsize once;
	static void *area;

	if (g_once_init_enter(&once)) {
		void *m = mmap(NULL, PT_GUARD_BYTES, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT |
				       MAP_NORESERVE,
			       -1, 0);

		area = m == MAP_FAILED ? NULL : m;
		g_once_init_leave(&once, 1);
	}
	return area;
}

/*
 * A probe that answered with a result, not an error, was the call: the
 * handler, which runs right after the fetch step on the same thread (the
 * handler contract), returns it. The model API gives the two steps no
 * shared record of the call.
 */
static __thread bool probe_done;
static __thread long probe_result;

/* Whether the driver is known to read cmd's argument (in this ABI); mark: it is. */
static bool reads_argument(struct pt_dev *p, unsigned int cmd, bool compat,
			   bool mark)
{
	gint64 key = (gint64)cmd << 8 | (compat ? 0x20 : 0x21);
	bool known;

	g_mutex_lock(&p->lock);
	known = g_hash_table_contains(p->said, &key);
	if (!known && mark && g_hash_table_size(p->said) < PT_SAID_MAX)
		g_hash_table_add(p->said, g_memdup2(&key, sizeof(key)));
	g_mutex_unlock(&p->lock);
	return known;
}

/* Whether cmd is made first with an argument no one maps (above). */
static bool probes_first(struct pt_dev *p, unsigned int cmd, bool compat)
{
	struct pt_cmd c = lookup(p, cmd, compat);
	struct pt_translation t;
	const char *why;

	if (!pt_layouts_have_model(p->layouts) || c.kind != PT_IOC || c.name)
		return false;
	/* An i386 call goes to compat_ioctl, unless a header converts it. */
	if (compat && (!p->sys32 || p->compat == PT_COMPAT_TRANSLATE ||
		       pt_translation_find(p->layouts, cmd, &t, &why)))
		return false;
	return !reads_argument(p, cmd, compat, false);
}

/* The driver's answer to cmd with an argument it cannot reach. */
static long probe(struct pt_file *f, unsigned int cmd, bool compat)
{
	void *area = guard_area();
	long ret;

	if (!area)
		return -EFAULT;
	if (compat)
		return pt_sys32_ioctl(f->fd, cmd, (uint32_t)(uintptr_t)area);
	ret = ioctl(f->fd, cmd, area);
	return ret < 0 ? -errno : ret;
}

static int pt_fetch(struct cusemu_device *dev, struct cusemu_file *file,
		    unsigned int cmd, unsigned long arg)
{
	g_autofree struct pt_graph *g = g_new0(struct pt_graph, 1);
	struct pt_dev *p = dev->priv;
	struct pt_translation t;
	struct pt_cmd c;
	int route;
	bool compat = cusemu_in_compat_syscall();
	cusemu_uptr_t uptr = compat ? cusemu_compat_ptr((uint32_t)arg) : arg;

	probe_done = false;
	if (probes_first(p, cmd, compat)) {
		long ret = probe(file->private_data, cmd, compat);

		if (ret == -EFAULT) {
			reads_argument(p, cmd, compat, true);
		} else if (ret < 0) {
			return (int)ret;
		} else {
			probe_done = true;
			probe_result = ret;
			return 0;
		}
	}
	g->naming = true;
	return graph_of(dev, cmd, uptr, g, &c, &route, &t);
}

/* ---- the call ---- */

static uint64_t range_end(const struct pt_range *r)
{
	return r->addr + MAX(r->in, r->out);
}

/*
 * Where each range's copy sits in buf; the total. Ranges that overlap in
 * the caller's memory overlap the same way in the copy (two I2C_RDWR
 * messages on one buffer), so that the driver, which copies each part in
 * and out in its own order, leaves there what it leaves in the caller's
 * memory when called directly, and a buffer shared by several parts is
 * held once. Each run of overlapping ranges starts 8-byte aligned.
 */
static size_t lay_out(const struct pt_graph *g, uint32_t *off)
{
	g_autofree unsigned int *by_addr = g_new(unsigned int, MAX(g->nr, 1));
	size_t total = 0, run_off = 0;
	uint64_t run_start = 0, run_end = 0;

	for (unsigned int i = 0; i < g->nr; i++) {
		unsigned int j = i;

		for (; j > 0 && g->r[by_addr[j - 1]].addr > g->r[i].addr; j--)
			by_addr[j] = by_addr[j - 1];
		by_addr[j] = i;
	}
	for (unsigned int k = 0; k < g->nr; k++) {
		const struct pt_range *r = &g->r[by_addr[k]];

		if (k == 0 || r->addr >= run_end) {
			total = (total + 7u) & ~(size_t)7;
			run_off = total;
			run_start = r->addr;
			run_end = r->addr;
		}
		off[by_addr[k]] = (uint32_t)(run_off + (r->addr - run_start));
		if (range_end(r) > run_end) {
			run_end = range_end(r);
			total = run_off + (size_t)(run_end - run_start);
		}
	}
	return (total + 7u) & ~(size_t)7;
}

static void put_pointer(uint8_t *slot, unsigned int width, uint64_t value)
{
	uint32_t v32 = (uint32_t)value;

	if (width == 4)
		memcpy(slot, &v32, 4);
	else
		memcpy(slot, &value, 8);
}

/*
 * What goes back of range i: what the driver wrote. Where its result is
 * that count, the bytes past it were never written, and need not even be
 * writable: a buffer that ends early works as it does on the device.
 */
static uint32_t out_bytes(const struct pt_graph *g, unsigned int i, long ret)
{
	if (i == 0 && g->out_is_result)
		return (uint32_t)MIN((unsigned long)ret, g->r[0].out);
	return g->r[i].out;
}

/*
 * Copy the caller's memory in, point its pointers at the copies, make the
 * call, copy back what the driver wrote, with the caller's own pointers
 * put back where they were.
 */
static long call_graph(struct pt_file *f, const struct pt_graph *g,
		       unsigned int cmd, unsigned long arg, bool via32)
{
	g_autofree uint32_t *off = g_new(uint32_t, MAX(g->nr, 1));
	g_autofree uint8_t *heap = NULL;
	size_t total = lay_out(g, off);
	uint8_t *buf;
	uint64_t argp = arg;
	long ret;

	if (via32) {
		buf = pt_low_buffer();
		if (!buf || total > PT_LOW_BYTES)
			return -ENOMEM;
		memset(buf, 0, total);
	} else {
		buf = heap = g_malloc0(MAX(total, 1));
	}
	for (unsigned int i = 0; i < g->nr; i++)
		if (g->r[i].in &&
		    cusemu_copy_from_user(buf + off[i], g->r[i].addr,
					  g->r[i].in))
			return -EFAULT;
	for (unsigned int i = 0; i < g->np; i++)
		put_pointer(buf + off[g->p[i].from] + g->p[i].off,
			    g->p[i].width,
			    (uint64_t)(uintptr_t)(buf + off[g->p[i].to]));
	if (g->nr)
		argp = (uint64_t)(uintptr_t)(buf + off[0]);
	if (via32) {
		ret = pt_sys32_ioctl(f->fd, cmd, (uint32_t)argp);
	} else {
		ret = ioctl(f->fd, cmd, (unsigned long)argp);
		if (ret < 0)
			ret = -errno;
	}
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < g->np; i++) {
		const struct pt_range *from = &g->r[g->p[i].from];

		if (cusemu_copy_from_user(buf + off[g->p[i].from] + g->p[i].off,
					  from->addr + g->p[i].off,
					  g->p[i].width))
			return -EFAULT;
	}
	for (unsigned int i = 0; i < g->nr; i++)
		if (g->r[i].out &&
		    cusemu_copy_to_user(g->r[i].addr, buf + off[i],
					out_bytes(g, i, ret)))
			return -EFAULT;
	return ret;
}

/* The compat shim: the i386 payload converted, the native call made. */
static long call_shim(struct pt_file *f, const struct pt_translation *t,
		      unsigned int cmd, cusemu_uptr_t uptr, unsigned long arg)
{
	g_autofree uint8_t *p32 = NULL, *p64 = NULL;
	long ret;

	if (!t->size32) {
		ret = ioctl(f->fd, t->native_cmd, arg);
		return ret < 0 ? -errno : ret;
	}
	p32 = g_malloc0(t->size32);
	p64 = g_malloc0(t->size64);
	if ((_IOC_DIR(cmd) & _IOC_WRITE) &&
	    cusemu_copy_from_user(p32, uptr, t->size32))
		return -EFAULT;
	pt_translate(t, true, p32, p64);
	ret = ioctl(f->fd, t->native_cmd, p64);
	if (ret < 0)
		return -errno;
	if (_IOC_DIR(cmd) & _IOC_READ) {
		pt_translate(t, false, p64, p32);
		if (cusemu_copy_to_user(uptr, p32, t->size32))
			return -EFAULT;
	}
	return ret;
}

static long pt_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg)
{
	struct pt_dev *p = dev->priv;
	struct pt_file *f = file->private_data;
	g_autofree struct pt_graph *g = g_new0(struct pt_graph, 1);
	struct pt_translation t;
	struct pt_cmd c;
	int route;
	long ret;
	bool compat = cusemu_in_compat_syscall();
	cusemu_uptr_t uptr = compat ? cusemu_compat_ptr((uint32_t)arg) : arg;

	if (probe_done) {
		probe_done = false;
		return probe_result;
	}
	ret = graph_of(dev, cmd, uptr, g, &c, &route, &t);
	if (ret)
		return ret;
	if (!compat)
		return call_graph(f, g, cmd, arg, false);
	if (route == PT_SHIM) {
		say_route(dev, cmd, &c, PT_SHIM, &t);
		return call_shim(f, &t, cmd, uptr, arg);
	}
	if (route == PT_SAME) {
		say_route(dev, cmd, &c, PT_SAME, NULL);
		return call_graph(f, g, cmd, uptr, false);
	}
	ret = call_graph(f, g, cmd, (uint32_t)arg, true);
	/* A driver without compat_ioctl: the kernel's own answer. The
	 * header's translation, if any, was found with the route. */
	if (ret == -ENOTTY && p->compat == PT_COMPAT_AUTO && t.header) {
		say_route(dev, cmd, &c, PT_SHIM, &t);
		return call_shim(f, &t, cmd, uptr, arg);
	}
	say_route(dev, cmd, &c, PT_ENTRY32, NULL);
	return ret;
}

/* ---- open, read, write, poll, release ---- */

/* Who a process is to the file system: its fsuid, fsgid and groups. */
struct pt_creds {
	unsigned int uid, gid;
	GArray *groups;		/* of unsigned int */
};

/* The "Uid:" or "Gid:" line's fourth id, the one file access goes by. */
static bool fs_id(const char *line, unsigned int *id)
{
	unsigned int real, effective, saved;

	return sscanf(line, "%u %u %u %u", &real, &effective, &saved, id) == 4;
}

/* From /proc/PID/status, which everyone may read; false if it is gone. */
static bool creds_of(pid_t pid, struct pt_creds *c)
{
	g_autofree char *path = g_strdup_printf("/proc/%d/status", (int)pid);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	int found = 0;

	if (pid <= 0 || !g_file_get_contents(path, &text, NULL, NULL))
		return false;
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		if (g_str_has_prefix(*l, "Uid:"))
			found += fs_id(*l + 4, &c->uid);
		else if (g_str_has_prefix(*l, "Gid:"))
			found += fs_id(*l + 4, &c->gid);
		else if (g_str_has_prefix(*l, "Groups:")) {
			g_auto(GStrv) ids = g_strsplit_set(*l + 7, " \t", -1);

			for (char **id = ids; *id; id++)
				if (**id) {
					unsigned int g = (unsigned int)
						g_ascii_strtoull(*id, NULL, 10);

					g_array_append_val(c->groups, g);
				}
		}
	}
	return found == 2;
}

static bool in_groups(const struct pt_creds *c, unsigned int gid)
{
	if (c->gid == gid)
		return true;
	for (guint i = 0; i < c->groups->len; i++)
		if (g_array_index(c->groups, unsigned int, i) == gid)
			return true;
	return false;
}

/*
 * May the opener open the real device as it asks, by the device's mode,
 * owner and group, as the kernel would let it? The daemon opens it with
 * its own rights (root's, often), and a node is never more open than the
 * device behind it: a mode= of 0666 in front of a 0600 device lets no one
 * in whom the device keeps out. Root goes by its capabilities, as in the
 * kernel; POSIX ACLs are not read, so a user whom only an ACL lets in is
 * kept out (docs/passthrough.md).
 */
static int caller_may_open(const char *path, pid_t opener, int flags)
{
	struct pt_creds c = { .groups = g_array_new(FALSE, FALSE,
						    sizeof(unsigned int)) };
	unsigned int want = 0, shift;
	struct stat st;
	int ret = 0;

	if ((flags & O_ACCMODE) != O_WRONLY)
		want |= 4;
	if ((flags & O_ACCMODE) != O_RDONLY)
		want |= 2;
	if (stat(path, &st) < 0)
		ret = -errno;
	else if (!creds_of(opener, &c))
		ret = -EACCES;
	else if (c.uid != 0) {
		shift = c.uid == st.st_uid	  ? 6
			: in_groups(&c, st.st_gid) ? 3
						   : 0;
		if (((st.st_mode >> shift) & want) != want)
			ret = -EACCES;
	}
	g_array_unref(c.groups);
	return ret;
}

static int pt_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct pt_dev *p = dev->priv;
	struct pt_file *f;
	/* Waits are the daemon's, so that a client can give up on one. */
	int flags = (file->flags & (O_ACCMODE | O_APPEND | O_SYNC | O_DSYNC)) |
		    O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
	int fd, err = caller_may_open(p->path, file->opener, flags);

	if (err)
		return err;
	fd = open(p->path, flags);
	if (fd < 0)
		return -errno;
	f = g_new0(struct pt_file, 1);
	f->fd = fd;
	f->abi32 = p->sys32 && cusemu_process_is_32bit(file->opener);
	g_mutex_init(&f->lock);
	file->private_data = f;
	return 0;
}

static void pt_release(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct pt_file *f = file->private_data;

	if (f->watch) {
		g_source_destroy(f->watch);
		g_source_unref(f->watch);
	}
	close(f->fd);
	g_mutex_clear(&f->lock);
	g_free(f);
}

/* Until the device is ready for events, or the caller gives up. */
static int wait_for(struct pt_file *f, short events)
{
	struct pollfd pfd = { .fd = f->fd, .events = events };

	while (poll(&pfd, 1, 0) == 0) {
		if (cusemu_signal_pending())
			return -EINTR;
		cusemu_msleep(PT_WAIT_MS);
	}
	return 0;
}

/* One read or write, through the 32-bit entry for an i386 opener. */
static ssize_t transfer(struct pt_file *f, char *buf, size_t size,
			bool writing)
{
	uint8_t *low;
	ssize_t n;

	if (!f->abi32) {
		n = writing ? write(f->fd, buf, size) : read(f->fd, buf, size);
		return n < 0 ? -errno : n;
	}
	low = pt_low_buffer();
	if (!low)
		return -ENOMEM;
	size = MIN(size, PT_LOW_BYTES);
	if (writing) {
		memcpy(low, buf, size);
		return pt_sys32_write(f->fd, (uint32_t)(uintptr_t)low,
				      (uint32_t)size);
	}
	n = pt_sys32_read(f->fd, (uint32_t)(uintptr_t)low, (uint32_t)size);
	if (n > 0)
		memcpy(buf, low, (size_t)n);
	return n;
}

/* The device is non-blocking; a blocking caller waits here. */
static ssize_t transfer_waiting(struct cusemu_file *file, char *buf,
				size_t size, bool writing)
{
	struct pt_file *f = file->private_data;

	for (;;) {
		ssize_t n = transfer(f, buf, size, writing);
		int err;

		if (n != -EAGAIN || (file->flags & O_NONBLOCK))
			return n;
		err = wait_for(f, writing ? POLLOUT : POLLIN);
		if (err)
			return err;
	}
}

static ssize_t pt_read(struct cusemu_device *dev, struct cusemu_file *file,
		       char *buf, size_t size)
{
	return transfer_waiting(file, buf, size, false);
}

static ssize_t pt_write(struct cusemu_device *dev, struct cusemu_file *file,
			const char *buf, size_t size)
{
	return transfer_waiting(file, (char *)buf, size, true);
}

static gboolean on_ready(gint fd, GIOCondition condition, gpointer data)
{
	cusemu_device_wake_up(data);
	return G_SOURCE_REMOVE;
}

/*
 * What the device is ready for now. When it is not ready to be read (or
 * written), the daemon's main loop watches it and wakes the pollers once
 * it is.
 */
static unsigned int pt_poll(struct cusemu_device *dev,
			    struct cusemu_file *file)
{
	struct pt_file *f = file->private_data;
	struct pollfd pfd = { .fd = f->fd,
			      .events = POLLIN | POLLPRI | POLLOUT };

	if (poll(&pfd, 1, 0) < 0)
		return POLLERR;
	if (pfd.revents & (POLLIN | POLLPRI | POLLERR | POLLHUP))
		return pfd.revents;
	g_mutex_lock(&f->lock);
	if (f->watch && g_source_is_destroyed(f->watch))
		g_clear_pointer(&f->watch, g_source_unref);
	if (!f->watch) {
		GIOCondition wanted = G_IO_IN | G_IO_PRI | G_IO_ERR | G_IO_HUP;

		if (!(pfd.revents & POLLOUT))
			wanted |= G_IO_OUT;
		f->watch = g_unix_fd_source_new(f->fd, wanted);
		g_source_set_callback(f->watch, G_SOURCE_FUNC(on_ready), dev,
				      NULL);
		g_source_attach(f->watch, NULL);
	}
	g_mutex_unlock(&f->lock);
	return pfd.revents;
}

/* ---- the device ---- */

/* The model whose ABI a device's path says, as like=auto finds it. */
static const char *like_of(const char *path)
{
	g_autofree char *real = realpath(path, NULL);
	g_autofree char *base = g_path_get_basename(real ? real : path);
	static const struct {
		const char *prefix, *model;
	} names[] = {
		{ "rtc", "rtc" },
		{ "watchdog", "watchdog" },
		{ "i2c-", "i2c" },
		{ "event", "evdev" },
	};

	/* rtc0, watchdog1, i2c-3, event2; /dev/watchdog, the first one. */
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		const char *rest = base + strlen(names[i].prefix);

		if (g_str_has_prefix(base, names[i].prefix) &&
		    (g_ascii_isdigit(*rest) || !strcmp(base, "watchdog")))
			return names[i].model;
	}
	return NULL;
}

static int pt_probe(struct cusemu_device *dev, char **why)
{
	const char *path = cusemu_device_param_str(dev, "path");
	const char *like = cusemu_device_param_str(dev, "like");
	const char *headers = cusemu_device_param_str(dev, "layouts");
	const char *compat = cusemu_device_param_str(dev, "compat");
	const char *commands = cusemu_device_param_str(dev, "commands");
	const char *pointees = cusemu_device_param_str(dev, "pointees");
	g_auto(GStrv) header_list = NULL, command_list = NULL;
	g_auto(GStrv) pointee_list = NULL;
	g_autoptr(GError) error = NULL;
	struct pt_dev *p;
	struct stat st;

	if (!*path) {
		*why = g_strdup("give the real device: path=/dev/NODE");
		return -EINVAL;
	}
	if (stat(path, &st)) {
		*why = g_strdup_printf("path=%s: %s", path, g_strerror(errno));
		return -errno;
	}
	if (!S_ISCHR(st.st_mode)) {
		*why = g_strdup_printf("path=%s is not a character device",
				       path);
		return -ENODEV;
	}
	if (!strcmp(like, "auto"))
		like = like_of(path);
	else if (!strcmp(like, "none"))
		like = NULL;
	else if (!pt_layouts_model_known(like)) {
		*why = g_strdup_printf("like=%s: no such model; give one of "
				       "%s, auto or none",
				       like, pt_layouts_models());
		return -EINVAL;
	}
	if (strcmp(compat, "auto") && strcmp(compat, "syscall") &&
	    strcmp(compat, "translate")) {
		*why = g_strdup_printf("compat=%s: give auto, syscall or "
				       "translate", compat);
		return -EINVAL;
	}
	p = g_new0(struct pt_dev, 1);
	if (*headers)
		header_list = g_strsplit(headers, ":", -1);
	if (*commands)
		command_list = g_strsplit(commands, ":", -1);
	if (*pointees)
		pointee_list = g_strsplit(pointees, ":", -1);
	p->layouts = pt_layouts_new(like, header_list, command_list,
				    pointee_list, &error);
	if (!p->layouts) {
		*why = g_strdup_printf("layouts=%s: %s", headers,
				       error->message);
		g_free(p);
		return -EINVAL;
	}
	p->path = g_strdup(path);
	p->compat = !strcmp(compat, "syscall")	 ? PT_COMPAT_SYSCALL
		    : !strcmp(compat, "translate") ? PT_COMPAT_TRANSLATE
						   : PT_COMPAT_AUTO;
	p->sys32 = p->compat != PT_COMPAT_TRANSLATE && pt_sys32_available();
	if (p->compat == PT_COMPAT_SYSCALL && !p->sys32) {
		*why = g_strdup("compat=syscall: this kernel takes no 32-bit "
				"system call from a 64-bit process (no IA32 "
				"emulation); give compat=auto or translate");
		pt_layouts_free(p->layouts);
		g_free(p->path);
		g_free(p);
		return -EOPNOTSUPP;
	}
	/* Mapped before the sandbox, which may forbid it later. */
	if (pt_layouts_have_model(p->layouts))
		guard_area();
	g_mutex_init(&p->lock);
	p->said = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
					NULL);
	dev->priv = p;
	g_message("%s: in front of %s; layouts of %s%s%s; i386 callers: %s",
		  dev->name, path, like ? like : "no model",
		  *headers ? " and " : "", headers,
		  p->sys32 ? "the 32-bit entry"
			   : "the compat shim (no 32-bit entry)");
	return 0;
}

static void pt_remove(struct cusemu_device *dev)
{
	struct pt_dev *p = dev->priv;

	pt_layouts_free(p->layouts);
	g_hash_table_unref(p->said);
	g_mutex_clear(&p->lock);
	g_free(p->path);
	g_free(p);
}

static const struct cusemu_param pt_params[] = {
	{ .key = "path", .type = CUSEMU_PARAM_PATH, .default_value = "",
	  .help = "the real device node, e.g. /dev/rtc0 (required)" },
	{ .key = "like", .type = CUSEMU_PARAM_STRING, .default_value = "auto",
	  .help = "the built-in model whose ABI the device has: rtc, "
		  "watchdog, i2c, evdev; auto: from the path's name; none" },
	{ .key = "layouts", .type = CUSEMU_PARAM_PATH, .default_value = "",
	  .help = "uapi headers (':' between several) whose commands' "
		  "layouts, in both ABIs, say what a call reaches" },
	{ .key = "commands", .type = CUSEMU_PARAM_STRING, .default_value = "",
	  .help = "for the headers' _IO commands and plain numbers, what "
		  "they take (':' between several): NAME=value, or NAME=TYPE "
		  "for what the argument points to" },
	{ .key = "pointees", .type = CUSEMU_PARAM_STRING,
	  .default_value = "",
	  .help = "what the headers' members point to (':' between "
		  "several): TAG.MEMBER=TYPE, or TAG.MEMBER=TYPE[COUNT] for "
		  "as many TYPE as the member COUNT beside it says (a __u64 "
		  "or a pointer, and a count)" },
	{ .key = "compat", .type = CUSEMU_PARAM_STRING,
	  .default_value = "auto",
	  .help = "i386 callers: syscall (the driver's compat_ioctl, through "
		  "the 32-bit entry), translate (converted to the native "
		  "call by the layouts), auto (the first; the second when "
		  "the driver answers ENOTTY)" },
	CUSEMU_PARAM_END
};

const struct cusemu_device_model cusemu_model_passthrough = {
	.name = "passthrough",
	.summary = "a real device behind the node: its calls go there, in "
		   "either ABI",
	.node_prefix = "passthrough",
	.params = pt_params,
	.probe = pt_probe,
	.remove = pt_remove,
	.open = pt_open,
	.release = pt_release,
	.read = pt_read,
	.write = pt_write,
	.poll = pt_poll,
	.ioctl = pt_ioctl,
	.unlocked_ioctl = pt_ioctl,
	.compat_ioctl = pt_ioctl,
	.ioctl_native = pt_ioctl,
	.ioctl_compat = pt_ioctl,
	.ioctl_fetch = pt_fetch,
};
