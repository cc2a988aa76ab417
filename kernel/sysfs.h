/* SPDX-License-Identifier: MIT */
/*
 * What the devices add to the file system beside their nodes, as the
 * kernel's driver core and udev would: each device's directory in /sys
 * (devices/virtual/CLASS/NAME with dev, uevent, subsystem and the model's
 * attributes), its links in /sys/class/CLASS and /sys/dev/char, and its
 * entry in udev's database (/run/udev/data/cMAJOR:MINOR). A transport
 * shows the tree (the FUSE one in a hidden directory of its mount, for
 * cusemu-run); what a model's attribute holds is read when it is read.
 */
#ifndef CUSEMU_KERNEL_SYSFS_H
#define CUSEMU_KERNEL_SYSFS_H

#include <glib.h>

#include "cusemu/device.h"

enum cusemu_sysfs_kind {
	CUSEMU_SYSFS_DIR,
	CUSEMU_SYSFS_TEXT,	/* a file whose text is fixed */
	CUSEMU_SYSFS_ATTR,	/* a model's attribute, read by its show() */
	CUSEMU_SYSFS_LINK,
};

struct cusemu_sysfs_entry {
	char *path;		/* from the root: "sys/class/rtc/rtc0" */
	const char *name;	/* its last part, in path; "" for the root */
	enum cusemu_sysfs_kind kind;
	guint parent;		/* its directory's index; the root's is 0 */
	/* TEXT: the file's; LINK: the target; ATTR: the attribute's path
	 * in the model (struct cusemu_attr), found again when it is read,
	 * since a reload may have changed the model. */
	char *text;
	guint device;		/* ATTR: the index of its device */
};

/*
 * The tree of some devices: entries[0] is the root, a directory comes
 * before what it holds. Devices whose model names no class add nothing.
 */
struct cusemu_sysfs {
	GPtrArray *entries;	/* struct cusemu_sysfs_entry */
	GHashTable *by_path;	/* path -> index + 1 */
};

/* The tree of the n devices; free it with cusemu_sysfs_free(). */
struct cusemu_sysfs *cusemu_sysfs_new(struct cusemu_device *const *devices,
				      guint n);
void cusemu_sysfs_free(struct cusemu_sysfs *fs);

static inline const struct cusemu_sysfs_entry *
cusemu_sysfs_entry(const struct cusemu_sysfs *fs, guint i)
{
	return i < fs->entries->len ? g_ptr_array_index(fs->entries, i) : NULL;
}

/* The index of the entry called name in directory parent; 0 if none. */
guint cusemu_sysfs_lookup(const struct cusemu_sysfs *fs, guint parent,
			  const char *name);

#endif
