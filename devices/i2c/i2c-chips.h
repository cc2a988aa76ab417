/* SPDX-License-Identifier: MIT */
/*
 * The simulated chips of the i2c model (i2c-chips.c): what a slave sees of a
 * transfer, byte by byte, and the `chips` key that places them on a bus.
 */
#ifndef CUSEMU_I2C_CHIPS_H
#define CUSEMU_I2C_CHIPS_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

struct i2c_chip;

/*
 * A slave's side of the bus. The bus calls these with its lock held, in the
 * order of the wire: start, bytes, end; a repeated START ends the chip's
 * part and starts again (the same chip or another).
 */
struct i2c_chip_ops {
	/* Addressed for reading or writing; the chip acknowledges. */
	void (*start)(struct i2c_chip *chip, bool read);
	/*
	 * A byte from the master: true to acknowledge it. pec is the SMBus
	 * CRC-8 of the transaction before this byte, for chips that check a
	 * PEC byte.
	 */
	bool (*write)(struct i2c_chip *chip, uint8_t byte, uint8_t pec);
	/* The next byte to the master; pec as for write. */
	uint8_t (*read)(struct i2c_chip *chip, uint8_t pec);
	/* The chip's part ended: by a STOP (stop), or by a repeated START. */
	void (*end)(struct i2c_chip *chip, bool stop);
	/*
	 * Write back what must survive the daemon (an EEPROM's file), if it
	 * changed. May be NULL.
	 */
	void (*sync)(struct i2c_chip *chip);
	void (*free)(struct i2c_chip *chip);
};

/* The part of every chip the bus knows; each chip type embeds it first. */
struct i2c_chip {
	const struct i2c_chip_ops *ops;
	const char *type;		/* "eeprom", "lm75" */
	uint16_t addr;			/* 0..0x7f, or 0..0x3ff when ten */
	bool ten;			/* answers 10-bit addressing only */
	/* A kernel driver is bound to it (option bound): I2C_SLAVE there
	 * is EBUSY, as i2cdev_check() says, and i2cdetect shows UU. */
	bool bound;
};

/* What the device keys give the chips that do not say for themselves. */
struct cusemu_device;

struct i2c_chip_defaults {
	/* Whose files they are: an EEPROM's file handed over by the one who
	 * added it is used through its descriptor; NULL: by path alone. */
	const struct cusemu_device *dev;
	const char *eeprom_file;	/* the first EEPROM's file, or "" */
	int lm75_temp;			/* millidegrees Celsius */
};

/*
 * The chips of a `chips` value ("eeprom@0x50+lm75@0x48:pec", see
 * I2C_CHIPS_HELP), loaded and ready; "" gives I2C_CHIPS_DEFAULT and "none"
 * an empty bus. NULL with a message for the user in *why.
 */
GPtrArray *i2c_chips_new(const char *spec,
			 const struct i2c_chip_defaults *defaults,
			 char **why);

/*
 * Saves every EEPROM that has a file, changed or not: whether they can
 * still be saved. false with a message for the user in *why.
 */
bool i2c_chips_save(GPtrArray *chips, char **why);
/*
 * The last save of every changed EEPROM, at shutdown: false when one
 * failed, with what is lost (the file, how many bytes, why) in *why.
 */
bool i2c_chips_flush(GPtrArray *chips, char **why);
/* Frees the chips of i2c_chips_new(); i2c_chips_flush() saves first. */
void i2c_chips_free(GPtrArray *chips);

/* Parses "25000" or "-5500" (millidegrees): false when out of range. */
bool i2c_lm75_parse_temp(const char *s, int *mc);

#define I2C_CHIPS_DEFAULT "eeprom@0x50+lm75@0x48"

#define I2C_CHIPS_HELP                                                       \
	"the chips on the bus, '+'-separated TYPE@ADDRESS[:OPTION...] with "  \
	"TYPE eeprom (a 24C02: 256 bytes, 8-byte pages; option file=PATH) "   \
	"or lm75 (an LM75A sensor; options temp=MILLIDEGREES, pec: it "      \
	"sends and checks SMBus PEC); either also takes bound: a kernel "     \
	"driver holds it, so I2C_SLAVE there is EBUSY (UU in i2cdetect) and " \
	"only I2C_SLAVE_FORCE reaches it; ADDRESS 0x01-0x7f, or 0xa000 plus " \
	"a 10-bit address as the kernel's new_device takes it; none for an "  \
	"empty bus"

#endif
