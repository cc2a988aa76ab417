/* SPDX-License-Identifier: MIT */
/*
 * The chips on the i2c model's buses: a 24C02 EEPROM kept in a file and an
 * LM75A temperature sensor, each a byte-level state machine as the real
 * part's datasheet describes it.
 */
#define G_LOG_DOMAIN "cusemu-i2c"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "cusemu/device.h"
#include "i2c-chips.h"

/* ---- 24C02 EEPROM */

#define EEPROM_SIZE 256
#define EEPROM_PAGE 8

struct eeprom {
	struct i2c_chip chip;
	uint8_t mem[EEPROM_SIZE];
	/* The address counter: where the next read starts, wrapping at 256. */
	uint8_t counter;
	/* A write in progress: its word address came, data waits for STOP. */
	bool writing, have_offset;
	uint8_t page[EEPROM_PAGE];
	uint8_t page_valid;		/* bit i: page[i] was written */
	char *file;			/* NULL: contents live in memory only */
	/* The file as the one who added the device opened it and handed it
	 * over (cusemu_device_param_fd): read and written in place, never
	 * found again by its path; -1: by the path. */
	int fd;
	mode_t mode;			/* the file's, kept by every save */
	bool dirty;			/* mem differs from the file */
	uint8_t unsaved[EEPROM_SIZE / 8];	/* bit i: byte i is not in it */
};

static struct eeprom *to_eeprom(struct i2c_chip *chip)
{
	return (struct eeprom *)chip;
}

/*
 * A handed-over file is written in place: its 256 bytes in one write at
 * its start, then fsync. What its path names now is never touched.
 */
static bool eeprom_save_fd(struct eeprom *e, char **why)
{
	ssize_t n;

	if (lseek(e->fd, 0, SEEK_SET) < 0) {
		*why = g_strdup_printf("%s: %s", e->file, g_strerror(errno));
		return false;
	}
	do
		n = write(e->fd, e->mem, sizeof(e->mem));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(e->mem) || fsync(e->fd) < 0) {
		*why = g_strdup_printf("%s: %s", e->file,
				       n < 0 || n == (ssize_t)sizeof(e->mem)
					       ? g_strerror(errno)
					       : "a short write");
		return false;
	}
	e->dirty = false;
	memset(e->unsaved, 0, sizeof(e->unsaved));
	return true;
}

/* Temp file and rename: a crash never leaves half a file behind. */
static bool eeprom_save(struct eeprom *e, char **why)
{
	g_autoptr(GError) error = NULL;

	if (e->fd >= 0)
		return eeprom_save_fd(e, why);
	if (!g_file_set_contents_full(e->file, (const char *)e->mem,
				      sizeof(e->mem),
				      G_FILE_SET_CONTENTS_CONSISTENT,
				      (int)e->mode, &error)) {
		*why = g_strdup(error->message);
		return false;
	}
	e->dirty = false;
	memset(e->unsaved, 0, sizeof(e->unsaved));
	return true;
}

static unsigned int eeprom_unsaved(const struct eeprom *e)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < sizeof(e->unsaved); i++)
		n += (unsigned int)__builtin_popcount(e->unsaved[i]);
	return n;
}

/*
 * The file itself, never what a symbolic link points to, and only a
 * regular file: a FIFO would hang the start and /dev/zero never end. A
 * file that does not exist yet is an erased part; it is created by the
 * save once the start has succeeded (i2c_chips_save from ->sandboxed).
 */
static bool eeprom_load(struct eeprom *e, char **why)
{
	uint8_t data[EEPROM_SIZE + 1];
	struct stat st;
	ssize_t len;
	int fd = e->fd >= 0 ? fcntl(e->fd, F_DUPFD_CLOEXEC, 0)
			    : open(e->file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
						    O_CLOEXEC);

	e->mode = 0644;
	/* A handed-over file made empty for it is an erased part. */
	if (fd >= 0 && e->fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    st.st_size == 0) {
		close(fd);
		memset(e->mem, 0xff, sizeof(e->mem));
		e->dirty = true;
		return true;
	}
	if (fd >= 0 && e->fd >= 0 && lseek(fd, 0, SEEK_SET) < 0) {
		*why = g_strdup_printf("%s: %s", e->file, g_strerror(errno));
		close(fd);
		return false;
	}
	if (fd < 0) {
		if (errno == ENOENT) {
			memset(e->mem, 0xff, sizeof(e->mem));
			e->dirty = true;
			return true;
		}
		*why = errno == ELOOP
			? g_strdup_printf("%s is a symbolic link: give the "
					  "path of the file itself", e->file)
			: g_strdup_printf("cannot open %s: %s", e->file,
					  g_strerror(errno));
		return false;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = g_strdup_printf("%s is not a regular file (a device, a "
				       "FIFO or a directory): give a file of "
				       "%u bytes, or a path that does not "
				       "exist yet", e->file, EEPROM_SIZE);
		close(fd);
		return false;
	}
	len = st.st_size == EEPROM_SIZE ? read(fd, data, sizeof(data)) : -1;
	close(fd);
	if (len != EEPROM_SIZE) {
		*why = g_strdup_printf("the EEPROM file %s holds %jd bytes, a "
				       "24C02 holds %u: give a file of that "
				       "size, or a path that does not exist "
				       "yet for an erased EEPROM",
				       e->file, (intmax_t)st.st_size,
				       EEPROM_SIZE);
		return false;
	}
	memcpy(e->mem, data, sizeof(e->mem));
	e->mode = st.st_mode & 0777;
	return true;
}

/* A write starts with the word address; a read goes on from the counter. */
static void eeprom_start(struct i2c_chip *chip, bool read)
{
	struct eeprom *e = to_eeprom(chip);

	e->writing = !read;
	e->have_offset = false;
	e->page_valid = 0;
}

/*
 * Data bytes fill the page buffer; past the end of the page the address
 * rolls over to its start, so a long write overwrites its own beginning.
 */
static bool eeprom_write(struct i2c_chip *chip, uint8_t byte, uint8_t pec)
{
	struct eeprom *e = to_eeprom(chip);
	uint8_t row = e->counter & ~(EEPROM_PAGE - 1);

	if (!e->have_offset) {
		e->counter = byte;
		e->have_offset = true;
		return true;
	}
	e->page[e->counter % EEPROM_PAGE] = byte;
	e->page_valid |= 1u << (e->counter % EEPROM_PAGE);
	e->counter = row | ((e->counter + 1) % EEPROM_PAGE);
	return true;
}

static uint8_t eeprom_read(struct i2c_chip *chip, uint8_t pec)
{
	struct eeprom *e = to_eeprom(chip);

	return e->mem[e->counter++];
}

/*
 * Only a STOP starts the write cycle: a repeated START instead aborts the
 * write, as on the real part, and the data bytes are lost.
 */
static void eeprom_end(struct i2c_chip *chip, bool stop)
{
	struct eeprom *e = to_eeprom(chip);
	uint8_t row = e->counter & ~(EEPROM_PAGE - 1);

	if (stop && e->writing) {
		for (unsigned int i = 0; i < EEPROM_PAGE; i++) {
			if (!(e->page_valid & (1u << i)) ||
			    e->mem[row + i] == e->page[i])
				continue;
			e->mem[row + i] = e->page[i];
			e->unsaved[(row + i) / 8] |= 1u << ((row + i) % 8);
			e->dirty = true;
		}
	}
	e->writing = false;
	e->page_valid = 0;
}

/* After every transfer that changed it: a killed daemon loses nothing. */
static void eeprom_sync(struct i2c_chip *chip)
{
	struct eeprom *e = to_eeprom(chip);
	g_autofree char *why = NULL;

	if (!e->file || !e->dirty)
		return;
	if (!eeprom_save(e, &why))
		g_warning("eeprom@0x%02x: cannot save its contents, will try "
			  "again after the next write: %s",
			  chip->addr, why);
}

static void eeprom_free(struct i2c_chip *chip)
{
	struct eeprom *e = to_eeprom(chip);

	if (e->fd >= 0)
		close(e->fd);
	g_free(e->file);
	g_free(e);
}

static const struct i2c_chip_ops eeprom_ops = {
	.start = eeprom_start,
	.write = eeprom_write,
	.read = eeprom_read,
	.end = eeprom_end,
	.sync = eeprom_sync,
	.free = eeprom_free,
};

/* ---- LM75A temperature sensor */

#define LM75_TEMP_MIN (-55000)
#define LM75_TEMP_MAX 125000
/* Reset values of Thyst and Tos: 75 and 80 degrees. */
#define LM75_THYST_RESET 0x4b00
#define LM75_TOS_RESET 0x5000
/* Configuration bits 7..5 are reserved and read as 0. */
#define LM75_CONF_MASK 0x1f
/* Temperatures have 9 bits, left-justified: 0.5 degree steps. */
#define LM75_TEMP_MASK 0xff80
/* What the LM75A answers in register 7, and in 4..6. */
#define LM75A_ID 0xa1
#define LM75A_UNUSED 0xff

enum { LM75_TEMP, LM75_CONF, LM75_THYST, LM75_TOS };

struct lm75 {
	struct i2c_chip chip;
	uint16_t temp, thyst, tos;
	uint8_t conf;
	bool pec;		/* speaks SMBus PEC */
	/* The pointer register: which register reads and writes reach. */
	uint8_t ptr;
	/* The transaction in progress. */
	bool writing;
	unsigned int count;	/* bytes so far, the pointer byte included */
	uint8_t data[2];
	bool bad_pec;
};

static struct lm75 *to_lm75(struct i2c_chip *chip)
{
	return (struct lm75 *)chip;
}

/*
 * The bytes of a register, most significant first; returns how many. Only
 * three pointer bits decode, so registers repeat every 8 addresses: the
 * kernel's lm75_detect() checks for exactly that.
 */
static unsigned int lm75_reg(const struct lm75 *l, uint8_t ptr, uint8_t *b)
{
	uint16_t word;

	switch (ptr & 7) {
	case LM75_TEMP:
		word = l->temp;
		break;
	case LM75_THYST:
		word = l->thyst;
		break;
	case LM75_TOS:
		word = l->tos;
		break;
	case LM75_CONF:
		b[0] = l->conf;
		return 1;
	case 7:
		b[0] = LM75A_ID;
		return 1;
	default:
		b[0] = LM75A_UNUSED;
		return 1;
	}
	b[0] = word >> 8;
	b[1] = word & 0xff;
	return 2;
}

static void lm75_start(struct i2c_chip *chip, bool read)
{
	struct lm75 *l = to_lm75(chip);

	l->writing = !read;
	l->count = 0;
	l->bad_pec = false;
}

/*
 * The first byte sets the pointer, the register's bytes follow. With PEC,
 * the byte after them is the CRC of the transaction: a wrong one is NAKed
 * and the write dropped, as SMBus devices do.
 */
static bool lm75_write(struct i2c_chip *chip, uint8_t byte, uint8_t pec)
{
	struct lm75 *l = to_lm75(chip);
	uint8_t reg[2];
	unsigned int width, k;

	if (l->count++ == 0) {
		l->ptr = byte & 7;
		return true;
	}
	width = lm75_reg(l, l->ptr, reg);
	k = l->count - 2;
	if (k < width)
		l->data[k] = byte;
	else if (l->pec && k == width && byte != pec)
		l->bad_pec = true;
	return !l->bad_pec;
}

/*
 * A read goes on past the register's bytes: a PEC chip sends its CRC and
 * then lets the bus float (0xff); the plain part repeats the register.
 */
static uint8_t lm75_read(struct i2c_chip *chip, uint8_t pec)
{
	struct lm75 *l = to_lm75(chip);
	unsigned int k = l->count++;
	uint8_t reg[2];
	unsigned int width = lm75_reg(l, l->ptr, reg);

	if (k < width)
		return reg[k];
	if (l->pec)
		return k == width ? pec : 0xff;
	return reg[k % width];
}

/* A write takes effect with its last byte: a PEC chip wants the PEC too. */
static void lm75_end(struct i2c_chip *chip, bool stop)
{
	struct lm75 *l = to_lm75(chip);
	uint8_t reg[2];
	unsigned int width = lm75_reg(l, l->ptr, reg);
	uint16_t word = (uint16_t)(l->data[0] << 8 | l->data[1]);

	if (!l->writing || l->bad_pec ||
	    l->count < 1 + width + (l->pec ? 1 : 0))
		return;
	switch (l->ptr) {
	case LM75_CONF:
		l->conf = l->data[0] & LM75_CONF_MASK;
		break;
	case LM75_THYST:
		l->thyst = word & LM75_TEMP_MASK;
		break;
	case LM75_TOS:
		l->tos = word & LM75_TEMP_MASK;
		break;
	default:
		/* The temperature and the unused registers are read-only. */
		break;
	}
	l->writing = false;
}

static void lm75_free(struct i2c_chip *chip)
{
	g_free(to_lm75(chip));
}

static const struct i2c_chip_ops lm75_ops = {
	.start = lm75_start,
	.write = lm75_write,
	.read = lm75_read,
	.end = lm75_end,
	.free = lm75_free,
};

bool i2c_lm75_parse_temp(const char *s, int *mc)
{
	char *end;
	gint64 v;

	errno = 0;
	v = g_ascii_strtoll(s, &end, 10);
	if (!*s || *end || errno || v < LM75_TEMP_MIN || v > LM75_TEMP_MAX)
		return false;
	*mc = (int)v;
	return true;
}

/* The register value of a temperature, rounded to 0.5 degree as lm75.c. */
static uint16_t lm75_temp_reg(int mc)
{
	int halves = mc >= 0 ? (mc * 2 + 500) / 1000 : (mc * 2 - 500) / 1000;

	return (uint16_t)(halves * 128);
}

/* ---- the `chips` key */

/* The options one chip entry gave. */
struct chip_options {
	const char *file;
	const char *temp;
	bool pec;
	bool bound;
};

struct chip_type {
	const char *name;
	const char *options;	/* for messages */
	struct i2c_chip *(*create)(const struct chip_options *o,
				   const struct i2c_chip_defaults *d,
				   char **why);
};

static struct i2c_chip *eeprom_create(const struct chip_options *o,
				      const struct i2c_chip_defaults *d,
				      char **why)
{
	struct eeprom *e = g_new0(struct eeprom, 1);

	e->chip.ops = &eeprom_ops;
	e->fd = -1;
	memset(e->mem, 0xff, sizeof(e->mem));
	if (o->file && !*o->file) {
		*why = g_strdup("file= needs a path");
		goto fail;
	}
	if (o->file) {
		e->file = g_strdup(o->file);
		e->fd = d->dev ? cusemu_device_param_fd(d->dev, o->file) : -1;
		if (!eeprom_load(e, why))
			goto fail;
	}
	return &e->chip;

fail:
	eeprom_free(&e->chip);
	return NULL;
}

static struct i2c_chip *lm75_create(const struct chip_options *o,
				    const struct i2c_chip_defaults *d,
				    char **why)
{
	struct lm75 *l;
	int mc = d->lm75_temp;

	if (o->temp && !i2c_lm75_parse_temp(o->temp, &mc)) {
		*why = g_strdup_printf("temp=%s: write millidegrees Celsius "
				       "from %d to %d, e.g. temp=-5500",
				       o->temp, LM75_TEMP_MIN, LM75_TEMP_MAX);
		return NULL;
	}
	l = g_new0(struct lm75, 1);
	l->chip.ops = &lm75_ops;
	l->temp = lm75_temp_reg(mc);
	l->thyst = LM75_THYST_RESET;
	l->tos = LM75_TOS_RESET;
	l->pec = o->pec;
	return &l->chip;
}

static const struct chip_type chip_types[] = {
	{ "eeprom", "file=PATH and bound", eeprom_create },
	{ "lm75", "temp=MILLIDEGREES, pec and bound", lm75_create },
};

static const struct chip_type *find_type(const char *name)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(chip_types); i++)
		if (!strcmp(chip_types[i].name, name))
			return &chip_types[i];
	return NULL;
}

/*
 * 7-bit addresses as i2c_check_addr_validity() takes them (not the general
 * call 0x00); 10-bit ones with the 0xa000 offset of the kernel's new_device.
 */
static bool parse_addr(const char *s, uint16_t *addr, bool *ten)
{
	char *end;
	guint64 v;

	errno = 0;
	v = g_ascii_strtoull(s, &end, 0);
	if (!*s || *end || errno)
		return false;
	*ten = v >= 0xa000 && v <= 0xa3ff;
	if (*ten)
		v -= 0xa000;
	else if (v < 0x01 || v > 0x7f)
		return false;
	*addr = (uint16_t)v;
	return true;
}

static bool parse_options(const struct chip_type *t, char **opts,
			  struct chip_options *o, char **why)
{
	bool eeprom = !strcmp(t->name, "eeprom");

	for (; *opts; opts++) {
		const char *opt = *opts;

		if (!strcmp(opt, "bound")) {
			o->bound = true;
		} else if (eeprom && g_str_has_prefix(opt, "file=")) {
			o->file = opt + strlen("file=");
		} else if (!eeprom && g_str_has_prefix(opt, "temp=")) {
			o->temp = opt + strlen("temp=");
		} else if (!eeprom && !strcmp(opt, "pec")) {
			o->pec = true;
		} else {
			*why = g_strdup_printf("unknown option '%s' for %s; it "
					       "takes %s",
					       opt, t->name, t->options);
			return false;
		}
	}
	return true;
}

/* One TYPE@ADDRESS[:OPTION...] entry; *file_claimed: eeprom_file is used. */
static struct i2c_chip *parse_chip(const char *entry,
				   const struct i2c_chip_defaults *d,
				   bool *file_claimed, char **why)
{
	g_auto(GStrv) parts = g_strsplit(entry, ":", 0);
	struct chip_options o = { 0 };
	const struct chip_type *t;
	struct i2c_chip *chip;
	char *at = strchr(parts[0], '@');
	uint16_t addr;
	bool ten;

	if (!at) {
		*why = g_strdup("write TYPE@ADDRESS, e.g. eeprom@0x50");
		return NULL;
	}
	*at = '\0';
	t = find_type(parts[0]);
	if (!t) {
		*why = g_strdup_printf("unknown chip type '%s'; the types are "
				       "eeprom and lm75", parts[0]);
		return NULL;
	}
	if (!parse_addr(at + 1, &addr, &ten)) {
		*why = g_strdup_printf("bad address '%s': write 0x01 to 0x7f, "
				       "or 0xa000 plus a 10-bit address "
				       "(0xa000 to 0xa3ff)", at + 1);
		return NULL;
	}
	if (!parse_options(t, parts + 1, &o, why))
		return NULL;
	if (!strcmp(t->name, "eeprom") && !*file_claimed) {
		/* eeprom_file belongs to the first EEPROM. */
		*file_claimed = true;
		if (o.file && *d->eeprom_file) {
			*why = g_strdup("eeprom_file and file= of the first "
					"EEPROM both name its file; keep one");
			return NULL;
		}
		if (*d->eeprom_file)
			o.file = d->eeprom_file;
	}
	chip = t->create(&o, d, why);
	if (!chip) {
		if (o.file && o.file == d->eeprom_file) {
			char *inner = *why;

			*why = g_strdup_printf("eeprom_file: %s", inner);
			g_free(inner);
		}
		return NULL;
	}
	chip->type = t->name;
	chip->addr = addr;
	chip->ten = ten;
	chip->bound = o.bound;
	return chip;
}

static void chip_free(gpointer p)
{
	struct i2c_chip *chip = p;

	chip->ops->free(chip);
}

/* The file an EEPROM lives in, or NULL. */
static const char *chip_file(const struct i2c_chip *chip)
{
	if (chip->ops != &eeprom_ops)
		return NULL;
	return ((const struct eeprom *)chip)->file;
}

/* A second chip at an address, or two EEPROMs in one file. */
static bool clashes(GPtrArray *chips, const struct i2c_chip *chip, char **why)
{
	for (guint i = 0; i < chips->len; i++) {
		const struct i2c_chip *other = chips->pdata[i];
		unsigned int addr = chip->addr + (chip->ten ? 0xa000 : 0);

		if (other->addr == chip->addr && other->ten == chip->ten) {
			*why = g_strdup_printf("two chips at address 0x%02x",
					       addr);
			return true;
		}
		if (chip_file(chip) && chip_file(other) &&
		    !strcmp(chip_file(chip), chip_file(other))) {
			*why = g_strdup_printf("two EEPROMs in the file %s",
					       chip_file(chip));
			return true;
		}
	}
	return false;
}

GPtrArray *i2c_chips_new(const char *spec,
			 const struct i2c_chip_defaults *defaults, char **why)
{
	g_autoptr(GPtrArray) chips = g_ptr_array_new_with_free_func(chip_free);
	g_auto(GStrv) entries = NULL;
	bool file_claimed = false;
	g_autofree char *reason = NULL;

	if (!*spec)
		spec = I2C_CHIPS_DEFAULT;
	if (!strcmp(spec, "none"))
		return g_steal_pointer(&chips);
	entries = g_strsplit(spec, "+", 0);
	for (char **e = entries; *e; e++) {
		struct i2c_chip *chip;

		if (!**e) {
			*why = g_strdup_printf("chips: '%s' has an empty entry; "
					       "join TYPE@ADDRESS entries with "
					       "one '+', e.g. "
					       "eeprom@0x50+lm75@0x48", spec);
			return NULL;
		}
		chip = parse_chip(*e, defaults, &file_claimed, &reason);

		if (chip && clashes(chips, chip, &reason)) {
			chip_free(chip);
			chip = NULL;
		}
		if (!chip) {
			*why = g_strdup_printf("chips: '%s': %s", *e, reason);
			return NULL;
		}
		g_ptr_array_add(chips, chip);
	}
	if (*defaults->eeprom_file && !file_claimed) {
		*why = g_strdup("eeprom_file is set but chips has no eeprom");
		return NULL;
	}
	return g_steal_pointer(&chips);
}

/* Whether the rights the daemon runs with now can still read the file
 * it read as root at start-up; a file not there yet is fine. */
static bool eeprom_readable(const struct eeprom *e, char **why)
{
	int fd;

	if (e->fd >= 0)
		return true;
	fd = open(e->file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (errno == ENOENT)
		return true;
	*why = g_strdup_printf("cannot open %s: %s", e->file, g_strerror(errno));
	return false;
}

bool i2c_chips_save(GPtrArray *chips, char **why)
{
	for (guint i = 0; i < chips->len; i++) {
		struct i2c_chip *chip = chips->pdata[i];
		g_autofree char *inner = NULL;

		if (chip->ops != &eeprom_ops || !to_eeprom(chip)->file ||
		    (eeprom_readable(to_eeprom(chip), &inner) &&
		     eeprom_save(to_eeprom(chip), &inner)))
			continue;
		*why = g_strdup_printf("eeprom@0x%02x: %s", chip->addr, inner);
		return false;
	}
	return true;
}

bool i2c_chips_flush(GPtrArray *chips, char **why)
{
	g_autoptr(GString) lost = g_string_new(NULL);

	for (guint i = 0; i < chips->len; i++) {
		struct i2c_chip *chip = chips->pdata[i];
		struct eeprom *e;
		g_autofree char *inner = NULL;
		unsigned int n;

		if (chip->ops != &eeprom_ops || !to_eeprom(chip)->file ||
		    !to_eeprom(chip)->dirty)
			continue;
		e = to_eeprom(chip);
		n = eeprom_unsaved(e);
		/* Nothing a client wrote (an erased part never saved): no
		 * loss, whether or not its file can be made. */
		if (!n || eeprom_save(e, &inner))
			continue;
		g_string_append_printf(lost, "%seeprom@0x%02x: %u byte%s written "
				       "since its last save are not in %s: %s",
				       lost->len ? "; " : "", chip->addr, n,
				       n == 1 ? "" : "s", e->file, inner);
	}
	if (!lost->len)
		return true;
	*why = g_string_free(g_steal_pointer(&lost), FALSE);
	return false;
}

void i2c_chips_free(GPtrArray *chips)
{
	g_ptr_array_unref(chips);
}
