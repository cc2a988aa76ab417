/* SPDX-License-Identifier: MIT */
/*
 * What memory a passthrough's command reaches, in the caller's ABI: from
 * the tables of a built-in model of the driver's ABI (its rows say which
 * commands take values and which a payload), from the pointer chases
 * written here for the commands with pointers inside (I2C_RDWR's messages,
 * I2C_SMBUS's data, EVIOCGMASK's codes), and from uapi headers laid out
 * as cusemu-abicheck lays them out (one level of pointers followed). The
 * headers also give the compat shim: an i386 payload converted member by
 * member to the x86_64 one.
 */
#define G_LOG_DOMAIN "cusemu-passthrough"

#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/input.h>
#include <linux/ioctl.h>
#include <linux/rtc.h>
#include <linux/watchdog.h>
#include <string.h>

#include "layout.h"
#include "cusemu/device.h"
#include "passthrough.h"

extern const struct cusemu_device_model cusemu_model_rtc;
extern const struct cusemu_device_model cusemu_model_watchdog;
extern const struct cusemu_device_model cusemu_model_i2c;
extern const struct cusemu_device_model cusemu_model_evdev;

/* ---- the graph ---- */

int pt_graph_range(struct pt_graph *g, cusemu_uptr_t addr, uint32_t in,
		   uint32_t out)
{
	if (g->nr == PT_RANGES_MAX)
		return -E2BIG;
	if (g->naming && !g->deferred) {
		int err = cusemu_fetch_range(addr, in, out);

		if (err)
			return err;
	}
	g->r[g->nr] = (struct pt_range){ addr, in, out };
	return (int)g->nr++;
}

int pt_graph_pointer(struct pt_graph *g, int from, uint32_t off, int to,
		     unsigned int width)
{
	if (from < 0 || to < 0)
		return from < 0 ? from : to;
	if (g->np == PT_RANGES_MAX || off + width > g->r[from].in)
		return -E2BIG;
	g->p[g->np++] = (struct pt_pointer){ (uint16_t)from, (uint16_t)to,
					     off, (uint8_t)width };
	return 0;
}

static uint32_t range_len(const struct pt_range *r, bool reading)
{
	return reading ? r->in : r->out;
}

/*
 * Names what ranges [first, nr) reach one way: each run of ranges that
 * overlap or touch, once. Parts of a call that share a buffer (I2C_RDWR's
 * messages) then move it once, not once per part.
 */
static int name_runs(const struct pt_graph *g, unsigned int first,
		     bool reading)
{
	unsigned int idx[PT_RANGES_MAX], n = 0;
	cusemu_uptr_t start = 0, end = 0;
	int err = 0;

	for (unsigned int i = first; i < g->nr; i++) {
		unsigned int j = n++;

		if (!range_len(&g->r[i], reading)) {
			n--;
			continue;
		}
		for (; j > 0 && g->r[idx[j - 1]].addr > g->r[i].addr; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	for (unsigned int k = 0; !err && k <= n; k++) {
		const struct pt_range *r = k < n ? &g->r[idx[k]] : NULL;

		if (k > 0 && (!r || r->addr > end))
			err = cusemu_fetch_range(start, reading ? end - start : 0,
						 reading ? 0 : end - start);
		if (!r)
			break;
		if (k == 0 || r->addr > end)
			start = end = r->addr;
		end = MAX(end, r->addr + range_len(r, reading));
	}
	return err;
}

int pt_graph_name_runs(struct pt_graph *g, unsigned int first)
{
	if (!g->naming)
		return 0;
	return name_runs(g, first, true) ?: name_runs(g, first, false);
}

/* A pointer of width bytes at addr, read from the caller. */
static int read_pointer(cusemu_uptr_t addr, unsigned int width,
			cusemu_uptr_t *out)
{
	uint32_t p32;
	uint64_t p64;

	if (width == 4) {
		if (cusemu_copy_from_user(&p32, addr, 4))
			return -EFAULT;
		*out = p32;
		return 0;
	}
	if (cusemu_copy_from_user(&p64, addr, 8))
		return -EFAULT;
	*out = p64;
	return 0;
}

/* ---- the chases ---- */

static int chase_both(struct pt_graph *g, unsigned int cmd,
		      cusemu_uptr_t arg)
{
	int r = pt_graph_range(g, arg, _IOC_SIZE(cmd), _IOC_SIZE(cmd));

	return r < 0 ? r : 0;
}

/* I2C_FUNCS: an unsigned long written, 8 or 4 bytes. */
static int chase_i2c_funcs(struct pt_graph *g, unsigned int cmd,
			   cusemu_uptr_t arg)
{
	int r = pt_graph_range(g, arg, 0, g->compat ? 4 : 8);

	return r < 0 ? r : 0;
}

/* The buffer of each of n messages of I2C_RDWR's array, at msgs. */
static int chase_i2c_bufs(struct pt_graph *g, int array, cusemu_uptr_t msgs,
			  uint32_t n)
{
	unsigned int width = g->compat ? 4 : 8;
	unsigned int msize = g->compat ? 12 : 16;
	int err = 0;

	for (uint32_t i = 0; !err && i < n; i++) {
		uint16_t hdr[3];
		cusemu_uptr_t buf;

		if (cusemu_copy_from_user(hdr, msgs + i * msize, sizeof(hdr)))
			return -EFAULT;
		err = read_pointer(msgs + i * msize + 8, width, &buf);
		if (err)
			return err;
		if (hdr[2] > 8192)
			return -EINVAL;
		/* i2c-dev copies every buffer in, reads too. */
		err = pt_graph_pointer(g, array, i * msize + 8,
				       pt_graph_range(g, buf, hdr[2],
						      hdr[1] & I2C_M_RD
							      ? hdr[2] : 0),
				       width);
	}
	return err;
}

/*
 * struct i2c_rdwr_ioctl_data { struct i2c_msg *msgs; __u32 nmsgs; }: 16
 * bytes, or 8 on i386; each struct i2c_msg { __u16 addr, flags, len;
 * __u8 *buf; }: 16 bytes with buf at 8, or 12 on i386 with buf at 8.
 */
static int chase_i2c_rdwr(struct pt_graph *g, unsigned int cmd,
			  cusemu_uptr_t arg)
{
	unsigned int width = g->compat ? 4 : 8;
	unsigned int msize = g->compat ? 12 : 16;
	int root = pt_graph_range(g, arg, g->compat ? 8 : 16, 0);
	cusemu_uptr_t msgs;
	unsigned int first;
	uint32_t n;
	int array, err;

	if (root < 0)
		return root;
	err = read_pointer(arg, width, &msgs);
	if (err || cusemu_copy_from_user(&n, arg + width, 4))
		return err ? err : -EFAULT;
	if (!msgs || !n || n > I2C_RDWR_IOCTL_MAX_MSGS)
		return -EINVAL;
	array = pt_graph_range(g, msgs, n * msize, 0);
	err = pt_graph_pointer(g, root, 0, array, width);
	if (err)
		return err;
	/* Buffers shared by messages are named once, below. */
	first = g->nr;
	g->deferred = true;
	err = chase_i2c_bufs(g, array, msgs, n);
	g->deferred = false;
	return err ?: pt_graph_name_runs(g, first);
}

/*
 * struct i2c_smbus_ioctl_data { __u8 read_write, command; __u32 size;
 * union i2c_smbus_data *data; }: 16 bytes, or 12 on i386; data at 8. How
 * much of the data moves, each way, as i2cdev_ioctl_smbus() decides.
 */
static int chase_i2c_smbus(struct pt_graph *g, unsigned int cmd,
			   cusemu_uptr_t arg)
{
	unsigned int width = g->compat ? 4 : 8;
	int root = pt_graph_range(g, arg, g->compat ? 12 : 16, 0);
	uint8_t rw_cmd[2];
	uint32_t size, len;
	cusemu_uptr_t data;
	bool in, out;
	int err;

	if (root < 0)
		return root;
	if (cusemu_copy_from_user(rw_cmd, arg, 2) ||
	    cusemu_copy_from_user(&size, arg + 4, 4))
		return -EFAULT;
	err = read_pointer(arg + 8, width, &data);
	if (err)
		return err;
	if (!data || size == I2C_SMBUS_QUICK ||
	    (size == I2C_SMBUS_BYTE && rw_cmd[0] == I2C_SMBUS_WRITE))
		return 0;	/* no data; the driver checks the rest */
	if (size == I2C_SMBUS_BYTE_DATA || size == I2C_SMBUS_BYTE)
		len = 1;
	else if (size == I2C_SMBUS_WORD_DATA || size == I2C_SMBUS_PROC_CALL)
		len = 2;
	else
		len = I2C_SMBUS_BLOCK_MAX + 2;
	in = size == I2C_SMBUS_PROC_CALL || size == I2C_SMBUS_BLOCK_PROC_CALL ||
	     size == I2C_SMBUS_I2C_BLOCK_DATA ||
	     rw_cmd[0] == I2C_SMBUS_WRITE;
	out = size == I2C_SMBUS_PROC_CALL || size == I2C_SMBUS_BLOCK_PROC_CALL ||
	      rw_cmd[0] == I2C_SMBUS_READ;
	return pt_graph_pointer(g, root, 8,
				pt_graph_range(g, data, in ? len : 0,
					       out ? len : 0),
				width);
}

/*
 * The codes of an event type's mask, as evdev_get_mask_cnt() counts them;
 * 0 for a type it has no mask for.
 */
static uint32_t evdev_mask_count(uint32_t type)
{
	static const uint16_t counts[EV_CNT] = {
		[EV_SYN] = EV_CNT, [EV_KEY] = KEY_CNT, [EV_REL] = REL_CNT,
		[EV_ABS] = ABS_CNT, [EV_MSC] = MSC_CNT, [EV_SW] = SW_CNT,
		[EV_LED] = LED_CNT, [EV_SND] = SND_CNT, [EV_FF] = FF_CNT,
	};

	return type < EV_CNT ? counts[type] : 0;
}

/*
 * What EVIOCSMASK reads of the codes, as evdev_set_mask() and
 * bits_from_user() decide before they read any: nothing for a type
 * without a mask, EINVAL for a size that is not a whole number of the
 * caller's longs, else no more than the mask's longs hold.
 */
static int evdev_smask_bytes(const struct pt_graph *g, uint32_t type,
			     uint32_t size, uint32_t *bytes)
{
	uint32_t cnt = evdev_mask_count(type);
	uint32_t chunk = g->compat ? 4 : 8;

	*bytes = 0;
	if (!cnt)
		return 0;
	if (size % chunk)
		return -EINVAL;
	/* bits_from_user(mask, cnt - 1, ...): cnt - 1 bits, rounded up. */
	*bytes = MIN(size, (cnt - 1 + chunk * 8 - 1) / (chunk * 8) * chunk);
	return 0;
}

/*
 * struct input_mask { __u32 type, codes_size; __u64 codes_ptr; }.
 * EVIOCGMASK writes all of codes_size; EVIOCSMASK reads what
 * evdev_smask_bytes() says, so that the driver's EINVAL comes before any
 * fetch that would fault.
 */
static int chase_evdev_mask(struct pt_graph *g, unsigned int cmd,
			    cusemu_uptr_t arg)
{
	int root = pt_graph_range(g, arg, 16, 0);
	uint32_t type, size, in = 0;
	cusemu_uptr_t codes;
	int err;

	if (root < 0)
		return root;
	if (cusemu_copy_from_user(&type, arg, 4) ||
	    cusemu_copy_from_user(&size, arg + 4, 4))
		return -EFAULT;
	err = read_pointer(arg + 8, 8, &codes);
	if (err || !size)
		return err;
	if (cmd == EVIOCSMASK) {
		err = evdev_smask_bytes(g, type, size, &in);
		/* Nothing read: the driver does not follow the pointer. */
		if (err || !in)
			return err;
	} else if (size > CUSEMU_USER_MAX_BYTES) {
		return -EINVAL;
	}
	return pt_graph_pointer(g, root, 8,
				pt_graph_range(g, codes, in,
					       cmd == EVIOCGMASK ? size : 0),
				8);
}

/*
 * EVIOCGMTSLOTS(len): struct input_mt_request_layout { __u32 code; __s32
 * values[]; }. The code is read, whatever len says, the values written.
 */
static int chase_evdev_mtslots(struct pt_graph *g, unsigned int cmd,
			       cusemu_uptr_t arg)
{
	int r = pt_graph_range(g, arg, 4, _IOC_SIZE(cmd));

	return r < 0 ? r : 0;
}

/* ---- the built-in models' ABIs ---- */

/*
 * A command whose row the model's tables lack, or get differently. A row
 * of a variable-length command holds the commands its number takes with
 * any size (and, for EVIOCGBIT, any type): those bits are out of mask.
 */
struct pt_row {
	unsigned int cmd;
	unsigned int mask;
	const char *name;
	enum pt_kind kind;
	pt_chase_fn chase;
};

#define ROW(c, k, fn) { (c), ~0u, #c, (k), (fn) }
#define ROW_SIZED(c, name, k, fn) { (c), ~IOCSIZE_MASK, (name), (k), (fn) }

static const struct pt_row rtc_rows[] = {
	/* _IOW, but dev.c writes the struct back. */
	ROW(RTC_PARAM_GET, PT_BOTH, NULL),
	{ 0 }
};

static const struct pt_row watchdog_rows[] = {
	/* Both _IOR; SETOPTIONS is read, not written. */
	ROW(WDIOC_GETTEMP, PT_IOC, NULL),
	ROW(WDIOC_SETOPTIONS, PT_BOTH, NULL),
	{ 0 }
};

static const struct pt_row i2c_rows[] = {
	ROW(I2C_FUNCS, PT_CHASE, chase_i2c_funcs),
	ROW(I2C_RDWR, PT_CHASE, chase_i2c_rdwr),
	ROW(I2C_SMBUS, PT_CHASE, chase_i2c_smbus),
	{ 0 }
};

/*
 * evdev's methods are written by hand: every other 'E' command is _IOC.
 * Its strings and bitmaps are copied out as long as they are, up to the
 * size, and the call returns the bytes it copied (str_to_user(),
 * bits_to_user() in drivers/input/evdev.c).
 */
static const struct pt_row evdev_rows[] = {
	ROW_SIZED(EVIOCGNAME(0), "EVIOCGNAME", PT_IOC_LEN, NULL),
	ROW_SIZED(EVIOCGPHYS(0), "EVIOCGPHYS", PT_IOC_LEN, NULL),
	ROW_SIZED(EVIOCGUNIQ(0), "EVIOCGUNIQ", PT_IOC_LEN, NULL),
	ROW_SIZED(EVIOCGPROP(0), "EVIOCGPROP", PT_IOC_LEN, NULL),
	ROW_SIZED(EVIOCGKEY(0), "EVIOCGKEY", PT_IOC_LEN, NULL),
	ROW_SIZED(EVIOCGLED(0), "EVIOCGLED", PT_IOC_LEN, NULL),
	ROW_SIZED(EVIOCGSND(0), "EVIOCGSND", PT_IOC_LEN, NULL),
	ROW_SIZED(EVIOCGSW(0), "EVIOCGSW", PT_IOC_LEN, NULL),
	{ EVIOCGBIT(0, 0), ~(IOCSIZE_MASK | EV_MAX << _IOC_NRSHIFT),
	  "EVIOCGBIT", PT_IOC_LEN, NULL },
	/* _IOR, but the code at its start is read. */
	ROW_SIZED(EVIOCGMTSLOTS(0), "EVIOCGMTSLOTS", PT_CHASE,
		  chase_evdev_mtslots),
	ROW(EVIOCGRAB, PT_VALUE, NULL),
	ROW(EVIOCREVOKE, PT_VALUE, NULL),
	ROW(EVIOCRMFF, PT_VALUE, NULL),
	ROW(EVIOCGKEYCODE, PT_BOTH, NULL),
	ROW(EVIOCGKEYCODE_V2, PT_BOTH, NULL),
	ROW(EVIOCGMASK, PT_CHASE, chase_evdev_mask),
	ROW(EVIOCSMASK, PT_CHASE, chase_evdev_mask),
	{ 0 }
};

struct pt_model {
	const char *name;
	const struct cusemu_device_model *model;
	const struct pt_row *rows;
	/* Commands of this _IOC type that no row names follow their bits. */
	char ioc_type;
};

static const struct pt_model models[] = {
	{ "rtc", &cusemu_model_rtc, rtc_rows, 0 },
	{ "watchdog", &cusemu_model_watchdog, watchdog_rows, 0 },
	{ "i2c", &cusemu_model_i2c, i2c_rows, 0 },
	{ "evdev", &cusemu_model_evdev, evdev_rows, 'E' },
};

const char *pt_layouts_models(void)
{
	return "rtc, watchdog, i2c, evdev";
}

bool pt_layouts_model_known(const char *name)
{
	for (size_t i = 0; i < G_N_ELEMENTS(models); i++)
		if (!strcmp(models[i].name, name))
			return true;
	return false;
}

struct pt_layouts {
	const struct pt_model *model;
	GPtrArray *commands;	/* struct command *, of the headers */
};

static void given_free(struct given_command *g)
{
	g_free(g->name);
	g_free(g->type);
	g_free(g->count);
	g_free(g);
}

/* "NAME=value" or "NAME=TYPE", as cusemu-abicheck's --command. */
static bool parse_given(char **commands, GPtrArray *given, GError **error)
{
	for (char **c = commands; c && *c; c++) {
		const char *eq = strchr(*c, '=');
		struct given_command *g;

		if (!eq || eq == *c || !eq[1]) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "commands=: '%s' is not NAME=value or "
				    "NAME=TYPE",
				    *c);
			return false;
		}
		g = g_new0(struct given_command, 1);
		g->name = g_strndup(*c, eq - *c);
		g->type = g_strdup(eq + 1);
		g_ptr_array_add(given, g);
	}
	return true;
}

/* "TAG.MEMBER=TYPE" or "TAG.MEMBER=TYPE[COUNT]", as cusemu-abicheck's
 * --pointee. */
static bool parse_pointees(char **specs, GPtrArray *pointees,
			   GError **error)
{
	for (char **c = specs; c && *c; c++) {
		const char *eq = strchr(*c, '=');
		const char *dot = eq ? memchr(*c, '.', eq - *c) : NULL;
		struct given_command *g;

		if (!dot || dot == *c || dot + 1 == eq || !eq[1]) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "pointees=: '%s' is not TAG.MEMBER=TYPE "
				    "or TAG.MEMBER=TYPE[COUNT]",
				    *c);
			return false;
		}
		g = g_new0(struct given_command, 1);
		g->name = g_strndup(*c, eq - *c);
		g->type = g_strdup(eq + 1);
		g_ptr_array_add(pointees, g);
		if (!given_pointee_count(g)) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "pointees=: '%s': COUNT in TYPE[COUNT] "
				    "names the member that holds how many "
				    "TYPE the pointer reaches",
				    *c);
			return false;
		}
	}
	return true;
}

/*
 * Headers read so far, by their paths and commands=: reading one runs the
 * compiler, which the daemon's sandbox forbids once it serves (its filter
 * would kill the daemon for the fork). A device added or reloaded then
 * takes the layouts read at start-up; others are refused with the reason.
 */
static GMutex probed_lock;
static GHashTable *probed;	/* key -> GPtrArray of struct command */

static char *probed_key(char **absolute, char **commands, char **pointees)
{
	g_autofree char *h = g_strjoinv(":", absolute);
	g_autofree char *c = commands ? g_strjoinv(":", commands) : NULL;
	g_autofree char *p = pointees ? g_strjoinv(":", pointees) : NULL;

	return g_strdup_printf("%s|%s|%s", h, c ? c : "", p ? p : "");
}

static bool probe_or_recall(const struct probe_options *o, char **absolute,
			    char **commands, char **pointees,
			    GPtrArray *given, GPtrArray **out,
			    GPtrArray *notes, GError **error)
{
	g_autofree char *key = probed_key(absolute, commands, pointees);
	GPtrArray *known;

	g_mutex_lock(&probed_lock);
	if (!probed)
		probed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					       (GDestroyNotify)g_ptr_array_unref);
	known = g_hash_table_lookup(probed, key);
	if (known)
		*out = g_ptr_array_ref(known);
	g_mutex_unlock(&probed_lock);
	if (known)
		return true;
	if (pt_filtered()) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "these headers were not read when the daemon "
			    "started, and reading one runs the compiler, "
			    "which the daemon's sandbox forbids once it "
			    "serves: give this layouts= at start-up (the "
			    "configuration, or --device), where a device "
			    "added or reloaded later finds it");
		return false;
	}
	if (!probe_headers(o, absolute, given, out, notes, error))
		return false;
	g_mutex_lock(&probed_lock);
	g_hash_table_replace(probed, g_steal_pointer(&key),
			     g_ptr_array_ref(*out));
	g_mutex_unlock(&probed_lock);
	return true;
}

struct pt_layouts *pt_layouts_new(const char *like, char **headers,
				  char **commands, char **pointees,
				  GError **error)
{
	struct pt_layouts *l = g_new0(struct pt_layouts, 1);
	g_autoptr(GPtrArray) cflags = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) given =
		g_ptr_array_new_with_free_func((GDestroyNotify)given_free);
	g_autoptr(GPtrArray) pointed =
		g_ptr_array_new_with_free_func((GDestroyNotify)given_free);
	g_auto(GStrv) cc = g_strsplit("gcc", " ", -1);
	g_auto(GStrv) absolute = g_strdupv(headers);
	struct probe_options o = { .cc = cc, .cflags = cflags,
				   .pointees = pointed };

	for (size_t i = 0; like && i < G_N_ELEMENTS(models); i++)
		if (!strcmp(models[i].name, like))
			l->model = &models[i];
	if (!headers || !*headers) {
		if ((commands && *commands) || (pointees && *pointees)) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_BAD_VALUE,
				    "%s names members of the headers of "
				    "layouts=, and none is given",
				    commands && *commands ? "commands="
							  : "pointees=");
			pt_layouts_free(l);
			return NULL;
		}
		return l;
	}
	if (!parse_given(commands, given, error) ||
	    !parse_pointees(pointees, pointed, error)) {
		pt_layouts_free(l);
		return NULL;
	}
	/* The probe compiles elsewhere: relative paths are made whole. */
	for (char **h = absolute; *h; h++) {
		char *whole = g_canonicalize_filename(*h, NULL);

		g_free(*h);
		*h = whole;
	}
	/*
	 * A header includes its neighbours, and headers by their path in its
	 * tree ("cusemu/abi/report.h", <linux/mine.h>): each directory above
	 * it is searched too, after the system's.
	 */
	for (char **h = absolute; *h; h++) {
		g_autofree char *dir = g_path_get_dirname(*h);

		g_ptr_array_add(cflags, g_strconcat("-I", dir, NULL));
		for (;;) {
			char *up = g_path_get_dirname(dir);

			g_free(dir);
			dir = up;
			if (!strcmp(dir, "/") || !strcmp(dir, "."))
				break;
			g_ptr_array_add(cflags,
					g_strconcat("-idirafter", dir, NULL));
		}
	}
	if (!probe_or_recall(&o, absolute, commands, pointees, given,
			     &l->commands, notes, error)) {
		pt_layouts_free(l);
		return NULL;
	}
	return l;
}

bool pt_layouts_have_model(const struct pt_layouts *l)
{
	return l->model != NULL;
}

void pt_layouts_free(struct pt_layouts *l)
{
	if (!l)
		return;
	if (l->commands)
		g_ptr_array_unref(l->commands);
	g_free(l);
}

static const struct cusemu_ioctl *table_row(const struct cusemu_ioctl *t,
					    unsigned int cmd)
{
	for (; t && t->name; t++)
		if (t->cmd == cmd)
			return t;
	return NULL;
}

static struct pt_cmd model_lookup(const struct pt_model *m, unsigned int cmd,
				  bool compat)
{
	const struct cusemu_ioctl *row = NULL;

	for (const struct pt_row *r = m->rows; r->name; r++)
		if ((cmd & r->mask) == r->cmd)
			return (struct pt_cmd){ .kind = r->kind, .name = r->name,
						.chase = r->chase };
	if (compat)
		row = table_row(m->model->compat_table, cmd);
	if (!row && (!compat || m->model->compat_ptr_ioctl))
		row = table_row(m->model->native_table, cmd);
	if (row && row->payload == CUSEMU_PAYLOAD_NONE)
		return (struct pt_cmd){ .kind = PT_VALUE, .name = row->name };
	if (row && row->payload == CUSEMU_PAYLOAD_IOC)
		return (struct pt_cmd){ .kind = PT_IOC, .name = row->name };
	if (m->ioc_type && _IOC_TYPE(cmd) == (unsigned char)m->ioc_type &&
	    _IOC_DIR(cmd) != _IOC_NONE && _IOC_SIZE(cmd))
		return (struct pt_cmd){ .kind = PT_IOC };
	return (struct pt_cmd){ .kind = PT_UNKNOWN };
}

static const struct command *header_command(const struct pt_layouts *l,
					    unsigned int cmd, enum abi abi)
{
	for (guint i = 0; l->commands && i < l->commands->len; i++) {
		const struct command *c = l->commands->pdata[i];

		/* A header's own NAME32 of another command is not the
		 * command an i386 caller means: the other is. */
		if (!c->unresolved && !c->row_only && !c->compat_of &&
		    c->number[abi] == cmd)
			return c;
	}
	return NULL;
}

struct pt_cmd pt_layout_lookup(const struct pt_layouts *l, unsigned int cmd,
			       bool compat)
{
	const struct command *c =
		header_command(l, cmd, compat ? ABI_I386 : ABI_X86_64);
	struct pt_cmd found = { .kind = PT_UNKNOWN };

	if (l->model)
		found = model_lookup(l->model, cmd, compat);
	if (found.kind != PT_UNKNOWN || !c)
		return found;
	if (c->by_value)
		return (struct pt_cmd){ .kind = PT_VALUE, .name = c->name };
	if (c->layout[compat ? ABI_I386 : ABI_X86_64].present)
		return (struct pt_cmd){ .kind = PT_HEADER, .name = c->name,
					.header = c };
	/*
	 * _IO, or a plain number: a pointer the driver follows may still be
	 * there, and only a person knows. Passed as a value, a caller's
	 * pointer would be followed in the daemon's own memory.
	 */
	return (struct pt_cmd){ .kind = PT_UNKNOWN, .name = c->name,
				.why = "its header defines it with _IO or as a "
				       "plain number, which says nothing of its "
				       "argument: give commands=NAME=value, or "
				       "NAME=TYPE for what it points to" };
}

/*
 * The bytes a pointer member reaches: its pointee, or, with a count member
 * (pointees=TAG.MEMBER=TYPE[COUNT]), as many of them as the caller's
 * payload says, read from it now.
 */
static int pointee_bytes(const struct layout *l, const struct member *m,
			 cusemu_uptr_t arg, uint32_t *bytes)
{
	const struct member *pointee = m->pointee->pdata[0];
	const struct member *cm;
	uint64_t n = 0;

	*bytes = (uint32_t)pointee->size;
	if (!m->pointee_count)
		return 0;
	cm = l->members->pdata[m->pointee_count];
	if (cm->size > 8 || (cm->flags & MEMBER_ARRAY))
		return -EOPNOTSUPP;
	if (cusemu_copy_from_user(&n, arg + cm->offset, cm->size))
		return -EFAULT;
	/* A call carries no more: the kernel's own limit for CUSE. */
	if (pointee->size && n > CUSEMU_USER_MAX_BYTES / pointee->size)
		return -ENOMEM;
	*bytes = (uint32_t)(n * pointee->size);
	return 0;
}

/*
 * A pointer member (a pointer, or an integer that pointees= names), or
 * each element of an array of pointers, with what it points to: none
 * reaches the driver as the caller wrote it.
 */
static int chase_member(struct pt_graph *g, int root, const struct layout *l,
			const struct member *m, cusemu_uptr_t arg)
{
	bool array = m->flags & MEMBER_ARRAY;
	uint64_t n = array ? m->count : 1;
	unsigned int width = (unsigned int)(array ? m->elem_size : m->size);
	uint32_t bytes;
	int err;

	if (width != 4 && width != 8)
		return -EOPNOTSUPP;
	err = pointee_bytes(l, m, arg, &bytes);
	for (uint64_t k = 0; !err && k < n; k++) {
		uint32_t off = (uint32_t)(m->offset + k * width);
		cusemu_uptr_t p;

		err = read_pointer(arg + off, width, &p);
		if (!err && p)
			err = pt_graph_pointer(g, root, off,
					       pt_graph_range(g, p, bytes,
							      bytes),
					       width);
	}
	return err;
}

/* What the header lays out at arg, with the structs its pointers reach. */
static int chase_header(struct pt_graph *g, const struct command *c,
			cusemu_uptr_t arg)
{
	const struct layout *l = &c->layout[g->compat ? ABI_I386 : ABI_X86_64];
	const struct member *top = l->members->pdata[0];
	bool pointers = false;
	uint32_t size = (uint32_t)top->size;
	int root, err = 0;

	for (guint i = 1; i < l->members->len; i++) {
		const struct member *m = l->members->pdata[i];

		pointers |= (m->flags & MEMBER_POINTER) || m->pointee;
	}
	/* A type given with commands= has no direction: both ways. */
	bool in = c->dir == DIR_WRITE || c->dir == DIR_BOTH ||
		  c->dir == DIR_NONE || c->dir == DIR_UNKNOWN;
	bool out = c->dir == DIR_READ || c->dir == DIR_BOTH ||
		   c->dir == DIR_NONE || c->dir == DIR_UNKNOWN;

	/* Pointers are read before the call, whatever the direction. */
	root = pt_graph_range(g, arg, pointers || in ? size : 0,
			      out ? size : 0);
	if (root < 0)
		return root;
	for (guint i = 1; !err && i < l->members->len; i++) {
		const struct member *m = l->members->pdata[i];

		if (!(m->flags & MEMBER_POINTER) && !m->pointee)
			continue;
		if (strstr(m->path, "[]") || !m->pointee ||
		    !m->pointee->len)
			return -EOPNOTSUPP;
		err = chase_member(g, root, l, m, arg);
	}
	return err;
}

int pt_layout_chase(const struct pt_cmd *c, struct pt_graph *g,
		    unsigned int cmd, cusemu_uptr_t arg)
{
	int r;

	switch (c->kind) {
	case PT_VALUE:
	case PT_UNKNOWN:
		return 0;
	case PT_IOC:
		r = pt_graph_range(g, arg,
				   _IOC_DIR(cmd) & _IOC_WRITE ? _IOC_SIZE(cmd)
							      : 0,
				   _IOC_DIR(cmd) & _IOC_READ ? _IOC_SIZE(cmd)
							     : 0);
		return r < 0 ? r : 0;
	case PT_IOC_LEN:
		g->out_is_result = true;
		r = pt_graph_range(g, arg, 0, _IOC_SIZE(cmd));
		return r < 0 ? r : 0;
	case PT_BOTH:
		return chase_both(g, cmd, arg);
	case PT_CHASE:
		return c->chase(g, cmd, arg);
	case PT_HEADER:
		return chase_header(g, c->header, arg);
	}
	return -EINVAL;
}

/* ---- the compat shim ---- */

static bool inside_union(const struct layout *l, const struct member *m)
{
	for (int p = m->parent; p > 0;) {
		const struct member *up = l->members->pdata[p];

		if (up->flags & MEMBER_UNION)
			return true;
		p = up->parent;
	}
	return false;
}

static bool has_children(const struct layout *l, guint i)
{
	return i + 1 < l->members->len &&
	       ((const struct member *)l->members->pdata[i + 1])->parent ==
		       (int)i;
}

bool pt_translation_find(const struct pt_layouts *l, unsigned int cmd32,
			 struct pt_translation *t, const char **why)
{
	return pt_translation_find_abi(l, cmd32, true, t, why);
}

bool pt_translation_find_abi(const struct pt_layouts *l, unsigned int cmd,
			     bool compat, struct pt_translation *t,
			     const char **why)
{
	const struct command *c =
		header_command(l, cmd, compat ? ABI_I386 : ABI_X86_64);
	const struct layout *l32, *l64;
	uint64_t size32, size64;

	if (!c) {
		*why = "no header given with layouts= defines it";
		return false;
	}
	l32 = &c->layout[ABI_I386];
	l64 = &c->layout[ABI_X86_64];
	if (!l32->present || !l64->present) {
		*t = (struct pt_translation){ c->number[ABI_X86_64],
					      c->number[ABI_I386], 0, 0, c };
		return true;
	}
	for (guint i = 1; i < l32->members->len; i++) {
		const struct member *m = l32->members->pdata[i];

		if (m->flags & MEMBER_POINTER) {
			*why = "its payload holds a pointer, which the shim "
			       "does not follow";
			return false;
		}
		if (strstr(m->path, "[]") && !inside_union(l32, m)) {
			*why = "its payload holds an array of structs, which "
			       "the shim does not convert";
			return false;
		}
		if (!has_children(l32, i) && !layout_find(l64, m->path)) {
			*why = "a member of the i386 layout is missing from the "
			       "x86_64 one";
			return false;
		}
	}
	size32 = ((const struct member *)l32->members->pdata[0])->size;
	size64 = ((const struct member *)l64->members->pdata[0])->size;
	if (size32 > CUSEMU_USER_MAX_BYTES || size64 > CUSEMU_USER_MAX_BYTES) {
		*why = "its payload is larger than a call can carry";
		return false;
	}
	/* *t is written only for a translation that can be made. */
	*t = (struct pt_translation){ c->number[ABI_X86_64],
				      c->number[ABI_I386], (uint32_t)size32,
				      (uint32_t)size64, c };
	return true;
}

static uint64_t load(const uint8_t *p, uint64_t size, bool sign)
{
	uint64_t v = 0;

	memcpy(&v, p, MIN(size, 8));
	if (sign && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ull << (size * 8);
	return v;
}

static void store(uint8_t *p, uint64_t size, uint64_t v)
{
	memcpy(p, &v, MIN(size, 8));
}

/* One scalar member, or each element of an array of them. */
static void convert_scalar(const struct member *from_m,
			   const struct member *to_m, const uint8_t *from,
			   uint8_t *to)
{
	uint64_t n = from_m->flags & MEMBER_ARRAY ? MIN(from_m->count,
							to_m->count)
						  : 1;
	uint64_t fs = from_m->flags & MEMBER_ARRAY ? from_m->elem_size
						   : from_m->size;
	uint64_t ts = to_m->flags & MEMBER_ARRAY ? to_m->elem_size
						 : to_m->size;
	bool sign = from_m->flags & MEMBER_SIGNED;

	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *f = from + from_m->offset + i * fs;
		uint8_t *t = to + to_m->offset + i * ts;

		if ((from_m->flags & MEMBER_FLOAT) || fs > 8 || ts > 8)
			memcpy(t, f, MIN(fs, ts));
		else
			store(t, ts, load(f, fs, sign));
	}
}

static void convert_bits(const struct member *fm, const struct member *tm,
			 const uint8_t *from, uint8_t *to)
{
	uint64_t mask = fm->bit_size >= 64 ? ~0ull
					   : (1ull << fm->bit_size) - 1;
	uint64_t fv = load(from + fm->offset, MIN(fm->size, 8), false);
	uint64_t tv = load(to + tm->offset, MIN(tm->size, 8), false);
	uint64_t bits = (fv >> fm->bit_offset) & mask;

	tv &= ~(mask << tm->bit_offset);
	tv |= bits << tm->bit_offset;
	store(to + tm->offset, MIN(tm->size, 8), tv);
}

void pt_translate(const struct pt_translation *t, bool to_native,
		  const uint8_t *from, uint8_t *to)
{
	const struct command *c = t->header;
	const struct layout *lf = &c->layout[to_native ? ABI_I386 : ABI_X86_64];
	const struct layout *lt = &c->layout[to_native ? ABI_X86_64 : ABI_I386];

	memset(to, 0, to_native ? t->size64 : t->size32);
	for (guint i = 1; i < lf->members->len; i++) {
		const struct member *fm = lf->members->pdata[i];
		const struct member *tm;

		if (inside_union(lf, fm))
			continue;
		tm = layout_find(lt, fm->path);
		if (!tm)
			continue;
		if (fm->flags & MEMBER_UNION)
			memcpy(to + tm->offset, from + fm->offset,
			       MIN(fm->size, tm->size));
		else if (has_children(lf, i))
			continue;
		else if (fm->flags & MEMBER_BITFIELD)
			convert_bits(fm, tm, from, to);
		else
			convert_scalar(fm, tm, from, to);
	}
	if (lf->members->len == 1) {
		/* The payload is a scalar itself: an int, a long. */
		convert_scalar(lf->members->pdata[0], lt->members->pdata[0],
			       from, to);
	}
}
