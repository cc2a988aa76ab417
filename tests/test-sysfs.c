/* SPDX-License-Identifier: MIT */
/*
 * The /sys tree of devices (kernel/sysfs.c), without a transport: each
 * device of a class gets its directory with dev, uevent, subsystem and
 * its model's attributes, the class and dev/char links and udev's
 * database entry; device numbers follow the model's major and minor base
 * by the digits of the name, or the dynamic range a class at a time; a
 * model without a class adds nothing.
 */
#include <string.h>

#include <glib.h>

#include "sysfs.h"

static ssize_t show_nothing(struct cusemu_device *dev, char *buf,
			    size_t size)
{
	(void)dev;
	(void)buf;
	(void)size;
	return 0;
}

static const struct cusemu_attr gadget_attrs[] = {
	{ "level", show_nothing },
	{ "device/id/vendor", show_nothing },
	CUSEMU_ATTR_END
};

static void gadget_props(struct cusemu_device *dev, GString *props)
{
	g_string_append_printf(props, "ID_GADGET=1\nID_NAME=%s\n", dev->name);
}

/* A class with its own major and a directory under /dev. */
static const struct cusemu_device_model gadget = {
	.name = "gadget",
	.node_prefix = "gadget",
	.sysfs_class = "gadget",
	.devnode_dir = "gadgets",
	.major = 42,
	.minor_base = 16,
	.attrs = gadget_attrs,
	.udev_props = gadget_props,
};

/* Two classes of dynamic majors, and one model in no class. */
static const struct cusemu_device_model clock_model = {
	.name = "clock", .node_prefix = "clock", .sysfs_class = "clock",
};
static const struct cusemu_device_model dog_model = {
	.name = "dog", .node_prefix = "dog", .sysfs_class = "dog",
};
static const struct cusemu_device_model plain = {
	.name = "plain", .node_prefix = "plain",
};

/* A node under a parent of its class (evdev's event0 under input0), and
 * one under a parent on a bus (i2c-dev's i2c-0 under adapter i2c-0). */
static const struct cusemu_device_model knob_model = {
	.name = "knob", .node_prefix = "knob", .sysfs_class = "knob",
	.major = 50, .attrs = gadget_attrs, .sysfs_parent = "panel%u",
};
static const struct cusemu_device_model port_model = {
	.name = "port", .node_prefix = "port", .sysfs_class = "port-dev",
	.major = 51, .attrs = gadget_attrs, .sysfs_parent = "port-%u",
	.sysfs_bus = "portbus",
};

static struct cusemu_device devices[] = {
	{ .model = &gadget, .name = "gadget3" },
	{ .model = &plain, .name = "plain0" },
	{ .model = &clock_model, .name = "clock1" },
	{ .model = &dog_model, .name = "dog" },
	{ .model = &knob_model, .name = "knob2" },
	{ .model = &port_model, .name = "port1" },
};

static const struct cusemu_sysfs_entry *at(const struct cusemu_sysfs *fs,
					   const char *path)
{
	guint i = GPOINTER_TO_UINT(g_hash_table_lookup(fs->by_path, path));

	if (!i)
		g_error("%s is not in the tree", path);
	return cusemu_sysfs_entry(fs, i - 1);
}

static void assert_text(const struct cusemu_sysfs *fs, const char *path,
			enum cusemu_sysfs_kind kind, const char *text)
{
	const struct cusemu_sysfs_entry *e = at(fs, path);

	g_assert_cmpint(e->kind, ==, kind);
	g_assert_cmpstr(e->text, ==, text);
}

static struct cusemu_sysfs *tree(void)
{
	struct cusemu_device *list[G_N_ELEMENTS(devices)];

	for (guint i = 0; i < G_N_ELEMENTS(devices); i++)
		list[i] = &devices[i];
	return cusemu_sysfs_new(list, G_N_ELEMENTS(devices));
}

static void test_device_directory(void)
{
	struct cusemu_sysfs *fs = tree();
	const char *home = "sys/devices/virtual/gadget/gadget3";
	const struct cusemu_sysfs_entry *e;
	g_autofree char *path = NULL;

	g_assert_cmpint(at(fs, home)->kind, ==, CUSEMU_SYSFS_DIR);
	path = g_strconcat(home, "/dev", NULL);
	assert_text(fs, path, CUSEMU_SYSFS_TEXT, "42:19\n");
	g_free(path);
	path = g_strconcat(home, "/uevent", NULL);
	assert_text(fs, path, CUSEMU_SYSFS_TEXT,
		    "MAJOR=42\nMINOR=19\nDEVNAME=gadgets/gadget3\n");
	g_free(path);
	path = g_strconcat(home, "/subsystem", NULL);
	assert_text(fs, path, CUSEMU_SYSFS_LINK, "../../../../class/gadget");
	g_free(path);
	/* An attribute keeps the model's path, and its device's index. */
	path = g_strconcat(home, "/device/id/vendor", NULL);
	e = at(fs, path);
	g_assert_cmpint(e->kind, ==, CUSEMU_SYSFS_ATTR);
	g_assert_cmpstr(e->text, ==, "device/id/vendor");
	g_assert_cmpuint(e->device, ==, 0);
	g_assert_cmpstr(e->name, ==, "vendor");
	/* Its directories were made, each its parent's. */
	g_assert_cmpint(cusemu_sysfs_entry(fs, e->parent)->kind, ==,
			CUSEMU_SYSFS_DIR);
	g_assert_cmpstr(cusemu_sysfs_entry(fs, e->parent)->name, ==, "id");
	cusemu_sysfs_free(fs);
}

static void test_links_and_udev(void)
{
	struct cusemu_sysfs *fs = tree();

	assert_text(fs, "sys/class/gadget/gadget3", CUSEMU_SYSFS_LINK,
		    "../../devices/virtual/gadget/gadget3");
	assert_text(fs, "sys/dev/char/42:19", CUSEMU_SYSFS_LINK,
		    "../../devices/virtual/gadget/gadget3");
	g_assert_true(g_str_has_prefix(at(fs, "run/udev/data/c42:19")->text,
				       "I:"));
	g_assert_nonnull(strstr(at(fs, "run/udev/data/c42:19")->text,
				"\nE:ID_GADGET=1\nE:ID_NAME=gadget3\nV:1\n"));
	cusemu_sysfs_free(fs);
}

/* Dynamic majors from 254 down, a class at a time, in the order the
 * classes come; a name without digits is number 0. */
static void test_dynamic_majors(void)
{
	struct cusemu_sysfs *fs = tree();

	assert_text(fs, "sys/devices/virtual/clock/clock1/dev",
		    CUSEMU_SYSFS_TEXT, "254:1\n");
	assert_text(fs, "sys/devices/virtual/dog/dog/dev", CUSEMU_SYSFS_TEXT,
		    "253:0\n");
	assert_text(fs, "sys/devices/virtual/dog/dog/uevent",
		    CUSEMU_SYSFS_TEXT, "MAJOR=253\nMINOR=0\nDEVNAME=dog\n");
	cusemu_sysfs_free(fs);
}

static void test_no_class(void)
{
	struct cusemu_sysfs *fs = tree();

	for (guint i = 0; i < fs->entries->len; i++)
		g_assert_null(strstr(cusemu_sysfs_entry(fs, i)->path, "plain"));
	cusemu_sysfs_free(fs);
}

/*
 * Under a parent of its class: the node's directory is the parent's
 * child, with a device link to it; the parent has the "device/" files,
 * its own subsystem and class link.
 */
static void test_parent_of_class(void)
{
	struct cusemu_sysfs *fs = tree();

	assert_text(fs, "sys/devices/virtual/knob/panel2/knob2/dev",
		    CUSEMU_SYSFS_TEXT, "50:2\n");
	assert_text(fs, "sys/devices/virtual/knob/panel2/knob2/device",
		    CUSEMU_SYSFS_LINK,
		    "../../../../../devices/virtual/knob/panel2");
	assert_text(fs, "sys/devices/virtual/knob/panel2/knob2/subsystem",
		    CUSEMU_SYSFS_LINK, "../../../../../class/knob");
	assert_text(fs, "sys/devices/virtual/knob/panel2/knob2/level",
		    CUSEMU_SYSFS_ATTR, "level");
	assert_text(fs, "sys/devices/virtual/knob/panel2/id/vendor",
		    CUSEMU_SYSFS_ATTR, "device/id/vendor");
	g_assert_null(g_hash_table_lookup(
		fs->by_path, "sys/devices/virtual/knob/panel2/knob2/device/id"));
	assert_text(fs, "sys/devices/virtual/knob/panel2/subsystem",
		    CUSEMU_SYSFS_LINK, "../../../../class/knob");
	assert_text(fs, "sys/class/knob/panel2", CUSEMU_SYSFS_LINK,
		    "../../devices/virtual/knob/panel2");
	assert_text(fs, "sys/class/knob/knob2", CUSEMU_SYSFS_LINK,
		    "../../devices/virtual/knob/panel2/knob2");
	assert_text(fs, "sys/dev/char/50:2", CUSEMU_SYSFS_LINK,
		    "../../devices/virtual/knob/panel2/knob2");
	cusemu_sysfs_free(fs);
}

/* Under a parent on a bus: sys/devices/PARENT, the class's directory in
 * it, and the bus's list of devices. */
static void test_parent_on_bus(void)
{
	struct cusemu_sysfs *fs = tree();

	assert_text(fs, "sys/devices/port-1/port-dev/port1/dev",
		    CUSEMU_SYSFS_TEXT, "51:1\n");
	assert_text(fs, "sys/devices/port-1/port-dev/port1/device",
		    CUSEMU_SYSFS_LINK, "../../../../devices/port-1");
	assert_text(fs, "sys/devices/port-1/port-dev/port1/subsystem",
		    CUSEMU_SYSFS_LINK, "../../../../class/port-dev");
	assert_text(fs, "sys/devices/port-1/subsystem", CUSEMU_SYSFS_LINK,
		    "../../bus/portbus");
	assert_text(fs, "sys/devices/port-1/id/vendor", CUSEMU_SYSFS_ATTR,
		    "device/id/vendor");
	assert_text(fs, "sys/bus/portbus/devices/port-1", CUSEMU_SYSFS_LINK,
		    "../../../devices/port-1");
	assert_text(fs, "sys/class/port-dev/port1", CUSEMU_SYSFS_LINK,
		    "../../devices/port-1/port-dev/port1");
	g_assert_null(g_hash_table_lookup(fs->by_path,
					  "sys/class/port-dev/port-1"));
	cusemu_sysfs_free(fs);
}

/* Lookup by directory and name, as a file system walks it. */
static void test_lookup(void)
{
	struct cusemu_sysfs *fs = tree();
	guint sys = cusemu_sysfs_lookup(fs, 0, "sys");
	guint class = cusemu_sysfs_lookup(fs, sys, "class");
	guint link = cusemu_sysfs_lookup(fs, class, "gadget");

	g_assert_cmpuint(sys, !=, 0);
	g_assert_cmpstr(cusemu_sysfs_entry(fs, sys)->path, ==, "sys");
	g_assert_cmpstr(cusemu_sysfs_entry(fs, link)->path, ==,
			"sys/class/gadget");
	g_assert_cmpuint(cusemu_sysfs_lookup(fs, sys, "nothing"), ==, 0);
	g_assert_cmpuint(cusemu_sysfs_lookup(fs, sys, "class/gadget"), ==, 0);
	g_assert_cmpuint(cusemu_sysfs_lookup(fs, sys, ""), ==, 0);
	/* A file is no directory to look in. */
	g_assert_cmpuint(
		cusemu_sysfs_lookup(
			fs, GPOINTER_TO_UINT(g_hash_table_lookup(
				    fs->by_path, "sys/dev/char/42:19")) - 1,
			"x"),
		==, 0);
	cusemu_sysfs_free(fs);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sysfs/device-directory", test_device_directory);
	g_test_add_func("/sysfs/links-and-udev", test_links_and_udev);
	g_test_add_func("/sysfs/dynamic-majors", test_dynamic_majors);
	g_test_add_func("/sysfs/no-class", test_no_class);
	g_test_add_func("/sysfs/parent-of-class", test_parent_of_class);
	g_test_add_func("/sysfs/parent-on-bus", test_parent_on_bus);
	g_test_add_func("/sysfs/lookup", test_lookup);
	return g_test_run();
}
