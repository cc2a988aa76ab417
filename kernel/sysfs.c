/* SPDX-License-Identifier: MIT */
/*
 * The tree of sysfs.h. Every device of a class lives where the kernel puts
 * a device without a parent bus: sys/devices/virtual/CLASS/NAME, linked
 * from sys/class/CLASS/NAME and sys/dev/char/MAJOR:MINOR; under the
 * parent its model names, where the kernel puts the child of one. A model that
 * names no major gets one of the dynamic range, as a driver that asks the
 * kernel for one: 254 for the first class, 253 for the next...
 */
#include <stdbool.h>
#include <string.h>

#include "device.h"
#include "sysfs.h"

/* The first major the kernel hands out when a driver asks for any. */
#define DYNAMIC_MAJOR_FIRST 254

static void entry_free(gpointer data)
{
	struct cusemu_sysfs_entry *e = data;

	g_free(e->path);
	g_free(e->text);
	g_free(e);
}

/* The index of path, made with its directories if need be; path is a
 * directory unless kind says otherwise. An entry already there stays. */
static guint add(struct cusemu_sysfs *fs, const char *path,
		 enum cusemu_sysfs_kind kind)
{
	struct cusemu_sysfs_entry *e;
	const char *slash = strrchr(path, '/');
	guint i = GPOINTER_TO_UINT(g_hash_table_lookup(fs->by_path, path));
	g_autofree char *dir = NULL;

	if (i)
		return i - 1;
	e = g_new0(struct cusemu_sysfs_entry, 1);
	if (slash) {
		dir = g_strndup(path, (gsize)(slash - path));
		e->parent = add(fs, dir, CUSEMU_SYSFS_DIR);
	}
	e->path = g_strdup(path);
	e->name = slash ? e->path + (slash - path) + 1 : e->path;
	e->kind = kind;
	g_ptr_array_add(fs->entries, e);
	g_hash_table_insert(fs->by_path, e->path,
			    GUINT_TO_POINTER(fs->entries->len));
	return fs->entries->len - 1;
}

/* add(), with the entry's text; the entry. */
static struct cusemu_sysfs_entry *add_text(struct cusemu_sysfs *fs,
					   const char *path,
					   enum cusemu_sysfs_kind kind,
					   char *text)
{
	/* Found first: add() may move the array. */
	guint i = add(fs, path, kind);
	struct cusemu_sysfs_entry *e = g_ptr_array_index(fs->entries, i);

	g_free(e->text);
	e->text = text;
	return e;
}

/* The number a node's name ends with: rtc0 is 0, i2c-1 is 1; 0 if none. */
static unsigned int node_number(const char *name)
{
	size_t end = strlen(name), start = end;

	while (start > 0 && g_ascii_isdigit(name[start - 1]))
		start--;
	return start < end ? (unsigned int)g_ascii_strtoull(name + start,
							     NULL, 10)
			   : 0;
}

/* Where the device's node is under /dev: "input/event0", "rtc0". */
static char *devnode(const struct cusemu_device *dev)
{
	const char *dir = dev->model->devnode_dir;

	return dir ? g_strconcat(dir, "/", dev->name, NULL)
		   : g_strdup(dev->name);
}

/* The device's major: its model's, else the class's dynamic one. */
static unsigned int major_of(const struct cusemu_device_model *m,
			     GHashTable *dynamic)
{
	gpointer got;

	if (m->major)
		return m->major;
	got = g_hash_table_lookup(dynamic, m->sysfs_class);
	if (!got) {
		got = GUINT_TO_POINTER(DYNAMIC_MAJOR_FIRST -
				       g_hash_table_size(dynamic));
		g_hash_table_insert(dynamic, (gpointer)m->sysfs_class, got);
	}
	return GPOINTER_TO_UINT(got);
}

/* udev's database entry: its properties (E:), when it was made (I:) and
 * the version of the format (V:1), as systemd-udevd writes them. */
static char *udev_entry(struct cusemu_device *dev)
{
	g_autoptr(GString) props = g_string_new(NULL);
	GString *db = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;

	if (dev->model->udev_props)
		dev->model->udev_props(dev, props);
	g_string_append_printf(db, "I:%" G_GINT64_FORMAT "\n",
			       g_get_monotonic_time());
	lines = g_strsplit(props->str, "\n", -1);
	for (char **l = lines; *l; l++)
		if (strchr(*l, '='))
			g_string_append_printf(db, "E:%s\n", *l);
	g_string_append(db, "V:1\n");
	return g_string_free(db, FALSE);
}

/* add_text() of dir/name. */
static struct cusemu_sysfs_entry *add_in(struct cusemu_sysfs *fs,
					 const char *dir, const char *name,
					 enum cusemu_sysfs_kind kind,
					 char *text)
{
	g_autofree char *path = g_strconcat(dir, "/", name, NULL);

	return add_text(fs, path, kind, text);
}

/* The way up from a directory place levels under sys/ to sys/ itself. */
static char *up_from(const char *place)
{
	GString *up = g_string_new(NULL);

	for (const char *c = place; c; c = strchr(c + 1, '/'))
		g_string_append(up, "../");
	return g_string_free(up, FALSE);
}

/* An entry dir/name under sys/ that links to place (both paths from sys/
 * on). */
static void add_link(struct cusemu_sysfs *fs, const char *dir,
		     const char *name, const char *place)
{
	g_autofree char *at = g_strconcat("sys/", dir, NULL);
	g_autofree char *up = up_from(dir);

	add_in(fs, at, name, CUSEMU_SYSFS_LINK, g_strconcat(up, place, NULL));
}

/*
 * The parent the model names, for the node numbered number: its place
 * under sys/ (devices/virtual/CLASS/P, or devices/P on a bus), with its
 * subsystem link and the link of its class or bus. NULL: no parent.
 */
static char *add_parent(struct cusemu_sysfs *fs,
			const struct cusemu_device_model *m,
			unsigned int number)
{
	g_autofree char *name = NULL, *home = NULL;
	g_autofree char *subsystem = NULL, *list = NULL;
	char *place;

	if (!m->sysfs_parent)
		return NULL;
	/* The format is the model's own, a constant of its source. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	name = g_strdup_printf(m->sysfs_parent, number);
#pragma GCC diagnostic pop
	place = m->sysfs_bus ? g_strconcat("devices/", name, NULL)
			     : g_strdup_printf("devices/virtual/%s/%s",
					       m->sysfs_class, name);
	home = g_strconcat("sys/", place, NULL);
	/* Its subsystem is its bus or its class, and lists it. */
	subsystem = m->sysfs_bus ? g_strconcat("bus/", m->sysfs_bus, NULL)
				 : g_strconcat("class/", m->sysfs_class, NULL);
	list = m->sysfs_bus ? g_strconcat(subsystem, "/devices", NULL)
			    : g_strdup(subsystem);
	add(fs, home, CUSEMU_SYSFS_DIR);
	add_in(fs, home, "uevent", CUSEMU_SYSFS_TEXT, g_strdup(""));
	add_link(fs, place, "subsystem", subsystem);
	add_link(fs, list, name, place);
	return place;
}

static void add_device(struct cusemu_sysfs *fs, struct cusemu_device *dev,
		       guint index, GHashTable *dynamic)
{
	const struct cusemu_device_model *m = dev->model;
	unsigned int major = major_of(m, dynamic);
	unsigned int number = node_number(dev->name);
	unsigned int minor = m->minor_base + number;
	g_autofree char *node = devnode(dev);
	g_autofree char *parent = add_parent(fs, m, number);
	/*
	 * Its directory under sys/: devices/virtual/CLASS/NAME; under a
	 * parent of its class, PARENT/NAME; under one on a bus, in the
	 * class's directory there, PARENT/CLASS/NAME, as the kernel has them.
	 */
	g_autofree char *place =
		!parent		  ? g_strdup_printf("devices/virtual/%s/%s",
						    m->sysfs_class, dev->name)
		: !m->sysfs_bus ? g_strconcat(parent, "/", dev->name, NULL)
				  : g_strconcat(parent, "/", m->sysfs_class, "/",
						dev->name, NULL);
	g_autofree char *home = g_strconcat("sys/", place, NULL);
	g_autofree char *parent_home = g_strconcat("sys/", parent, NULL);
	g_autofree char *number_text = g_strdup_printf("%u:%u", major, minor);
	g_autofree char *class = g_strconcat("class/", m->sysfs_class, NULL);
	/* udev's name of its entry: c for a character device. */
	g_autofree char *db = g_strconcat("c", number_text, NULL);

	add(fs, home, CUSEMU_SYSFS_DIR);
	add_in(fs, home, "dev", CUSEMU_SYSFS_TEXT,
	       g_strconcat(number_text, "\n", NULL));
	add_in(fs, home, "uevent", CUSEMU_SYSFS_TEXT,
	       g_strdup_printf("MAJOR=%u\nMINOR=%u\nDEVNAME=%s\n", major,
			       minor, node));
	add_link(fs, place, "subsystem", class);
	if (parent)
		add_link(fs, place, "device", parent);
	for (const struct cusemu_attr *a = m->attrs; a && a->path; a++) {
		bool theirs = parent && g_str_has_prefix(a->path, "device/");

		add_in(fs, theirs ? parent_home : home,
		       theirs ? a->path + strlen("device/") : a->path,
		       CUSEMU_SYSFS_ATTR, g_strdup(a->path))
			->device = index;
	}
	add_link(fs, class, dev->name, place);
	add_link(fs, "dev/char", number_text, place);
	add_in(fs, "run/udev/data", db, CUSEMU_SYSFS_TEXT, udev_entry(dev));
}

struct cusemu_sysfs *cusemu_sysfs_new(struct cusemu_device *const *devices,
				      guint n)
{
	struct cusemu_sysfs *fs = g_new0(struct cusemu_sysfs, 1);
	g_autoptr(GHashTable) dynamic = g_hash_table_new(g_str_hash,
							 g_str_equal);
	struct cusemu_sysfs_entry *root = g_new0(struct cusemu_sysfs_entry, 1);

	fs->entries = g_ptr_array_new_with_free_func(entry_free);
	fs->by_path = g_hash_table_new(g_str_hash, g_str_equal);
	root->path = g_strdup("");
	root->name = root->path;
	g_ptr_array_add(fs->entries, root);
	for (guint i = 0; i < n; i++)
		if (devices[i]->model->sysfs_class)
			add_device(fs, devices[i], i, dynamic);
	return fs;
}

void cusemu_sysfs_free(struct cusemu_sysfs *fs)
{
	if (!fs)
		return;
	g_hash_table_unref(fs->by_path);
	g_ptr_array_unref(fs->entries);
	g_free(fs);
}

guint cusemu_sysfs_lookup(const struct cusemu_sysfs *fs, guint parent,
			  const char *name)
{
	const struct cusemu_sysfs_entry *dir = cusemu_sysfs_entry(fs, parent);
	g_autofree char *path = NULL;
	guint i;

	if (!dir || dir->kind != CUSEMU_SYSFS_DIR || !*name ||
	    strchr(name, '/'))
		return 0;
	path = *dir->path ? g_strconcat(dir->path, "/", name, NULL)
			  : g_strdup(name);
	i = GPOINTER_TO_UINT(g_hash_table_lookup(fs->by_path, path));
	return i ? i - 1 : 0;
}
