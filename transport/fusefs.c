/* SPDX-License-Identifier: MIT */
/*
 * The FUSE transport: instead of CUSE nodes, one FUSE file system mounted
 * at a directory, with one file per device (DIR/rtc0, DIR/event0, ...);
 * cusemu_fusefs_ops is its table (transport.h), with its settings, the
 * directory and allow_other. Its requests go to the same nodes (node.h)
 * and pool as CUSE sessions. The kernel passes ioctls on FUSE files
 * restricted: it copies what the _IOC bits describe, and takes no retry.
 *
 * The mount goes away when the daemon ends, however it ends, but for a
 * kill of the unmounter too (kill -9 of the process group): a child
 * process forked at start unmounts it then, and only it: not what a
 * symbolic link or another mount put at the directory since. A file
 * removed at run time (cusemuctl remove) loses its name; every later call
 * on a file open on it fails with ENODEV, and once no request is inside
 * it, its open files are released through the model.
 *
 * The file system: inode 1 is the directory, inode 2 + i the i-th file
 * made. Files come at start-up and with cusemuctl add; a file removed
 * keeps its inode number, never given again, and fails every call; the
 * kernel is told to forget its name. The kernel may cache names and
 * attributes for good otherwise.
 *
 * Beside the files, the directory .root holds what the devices made at
 * start-up add to /sys and /run/udev (sysfs.h), for cusemu-run to bind at
 * those places: entry i of that tree is inode TREE_INO + i. Its files
 * are read-only and read each time (direct I/O): a model's attribute
 * asks the model.
 */
#define G_LOG_DOMAIN "cusemu-fusefs"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuse-common.h"

#include <glib.h>

#include "device.h"
#include "dispatch.h"
#include "node.h"
#include "pool.h"
#include "proc.h"
#include "sandbox.h"
#include "sysfs.h"
#include "transport.h"

#define ROOT_INO 1
#define FIRST_FILE_INO 2
#define TREE_NAME ".root"
/*
 * Every inode number below 2^32: an i386 program built without large
 * file support (i2c-tools' i2cdetect -l reading /sys) gets EOVERFLOW from
 * stat() and readdir() for a larger one. Files count up from
 * FIRST_FILE_INO (n_files, a gint, stays below 2^31); the tree's entries
 * from TREE_INO, TREE_ENTRIES_MAX of them at most.
 */
#define TREE_INO ((fuse_ino_t)3 << 30)
#define TREE_ENTRIES_MAX (1u << 30)
/* What a file of the tree shows as its size: a page, as sysfs's do. */
#define TREE_FILE_SIZE 4096
/* The files never change: the kernel keeps what it learnt. */
#define CACHE_S 86400.0
#define STOP_TIMEOUT_S 10

/* Its table, at the end; the list of transports.c names it. */
extern const struct cusemu_transport_ops cusemu_fusefs_ops;

/* Its settings: where to mount, and whether others may use the files. */
struct fusefs_settings {
	char *dir;
	bool allow_other;
};

struct cusemu_mount_options {
	const char *dir;	/* an existing directory */
	bool allow_other;	/* other users may use the files */
	bool debug;		/* libfuse's request trace */
	/* As root: what the unmounter keeps (sandbox.h); NULL otherwise. */
	const struct cusemu_unmounter_seal *seal;
};

/* A device's file. Kept until the mount is freed, removed or not. */
struct file {
	struct cusemu_node node;
	char *name;
	mode_t mode;
	uid_t uid;		/* what it shows */
	gid_t gid;
	gint inside;		/* requests in its node */
	gint gone;		/* removed: calls fail with ENODEV */
};

/* The files by inode; replaced whole when it grows, old ones kept. */
struct files {
	guint capacity;
	struct file *slot[];
};

/* The transport: one mount. */
struct cusemu_mount {
	struct cusemu_fuse_conn fuse;	/* first: its /dev/fuse connection */
	struct cusemu_transport pub;
	char *dir;
	/* Workers read these without a lock: a file is in its slot before
	 * n_files counts it, and a table is never freed while mounted. */
	struct files *files;
	gint n_files;
	GPtrArray *old_tables;	/* the main thread's */
	GMutex names_lock;
	GHashTable *by_name;	/* name -> index + 1, of files not removed */
	uid_t uid;		/* what the files show */
	gid_t gid;
	GArray *groups;		/* the daemon's supplementary groups */
	time_t mounted;
	pid_t unmounter;
	struct cusemu_sysfs *tree;	/* of the devices made at start-up */
};

static struct cusemu_mount *mount_of(const struct cusemu_transport *t)
{
	return (struct cusemu_mount *)((char *)t -
				       offsetof(struct cusemu_mount, pub));
}

/*
 * The mount point, found again without a path: its parent directory, open
 * since before the mount, its name there, and the id of the mount there
 * before ours and of ours. A symbolic link swapped in for a directory on
 * the way later changes none of it.
 */
struct mount_point {
	int parent;		/* an O_PATH descriptor */
	char *base;
	uint64_t before;
	uint64_t id;
};

/* The file of ino, or NULL for the directory and unknown ones. */
static struct file *file_of_ino(struct cusemu_mount *m, fuse_ino_t ino)
{
	guint n = (guint)g_atomic_int_get(&m->n_files);
	struct files *t = g_atomic_pointer_get(&m->files);

	if (ino < FIRST_FILE_INO || ino - FIRST_FILE_INO >= n)
		return NULL;
	return t->slot[ino - FIRST_FILE_INO];
}

static bool in_groups(const struct cusemu_mount *m, gid_t gid)
{
	for (guint i = 0; i < m->groups->len; i++)
		if (g_array_index(m->groups, gid_t, i) == gid)
			return true;
	return false;
}

/*
 * The owner and group a device's file shows: the device's where the
 * daemon may give them, as root, and as an ordinary user for a group of
 * its own; else the daemon's. The kernel checks them (default_permissions).
 * From what the mount learnt before the sandbox, which allows no getegid
 * or getgroups.
 */
static void pick_owner(struct cusemu_mount *m, struct file *f)
{
	const struct cusemu_instance *dp = cusemu_instance(f->node.dev);

	f->uid = m->uid;
	f->gid = m->gid;
	if (m->uid == 0) {
		f->uid = dp->made.owner;
		f->gid = dp->made.group;
	} else if (dp->made.group == m->gid || in_groups(m, dp->made.group)) {
		f->gid = dp->made.group;
	}
}

/* The tree's entry of ino, or NULL if it is none of the tree's. */
static const struct cusemu_sysfs_entry *entry_of_ino(struct cusemu_mount *m,
						     fuse_ino_t ino)
{
	if (ino < TREE_INO || ino - TREE_INO >= TREE_ENTRIES_MAX)
		return NULL;
	return cusemu_sysfs_entry(m->tree, (guint)(ino - TREE_INO));
}

static mode_t entry_mode(const struct cusemu_sysfs_entry *e)
{
	switch (e->kind) {
	case CUSEMU_SYSFS_DIR:
		return S_IFDIR | 0755;
	case CUSEMU_SYSFS_LINK:
		return S_IFLNK | 0777;
	default:
		return S_IFREG | 0444;
	}
}

static void fill_entry_attr(const struct cusemu_sysfs_entry *e,
			    struct stat *st)
{
	st->st_mode = entry_mode(e);
	st->st_nlink = e->kind == CUSEMU_SYSFS_DIR ? 2 : 1;
	st->st_size = e->kind == CUSEMU_SYSFS_LINK ? (off_t)strlen(e->text)
		      : e->kind == CUSEMU_SYSFS_DIR ? 0
						    : TREE_FILE_SIZE;
}

static void fill_attr(struct cusemu_mount *m, fuse_ino_t ino, struct stat *st)
{
	struct file *f = file_of_ino(m, ino);
	const struct cusemu_sysfs_entry *e = entry_of_ino(m, ino);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_atime = st->st_mtime = st->st_ctime = m->mounted;
	if (e) {
		fill_entry_attr(e, st);
		return;
	}
	if (!f) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return;
	}
	st->st_mode = S_IFREG | f->mode;
	st->st_nlink = g_atomic_int_get(&f->gone) ? 0 : 1;
	st->st_uid = f->uid;
	st->st_gid = f->gid;
}

/* The inode of name in directory parent; 0 if there is none. */
static fuse_ino_t lookup_ino(struct cusemu_mount *m, fuse_ino_t parent,
			     const char *name)
{
	guint i;

	if (entry_of_ino(m, parent)) {
		i = cusemu_sysfs_lookup(m->tree, (guint)(parent - TREE_INO),
					name);
		return i ? TREE_INO + i : 0;
	}
	if (parent != ROOT_INO)
		return 0;
	if (!strcmp(name, TREE_NAME))
		return TREE_INO;
	g_mutex_lock(&m->names_lock);
	i = GPOINTER_TO_UINT(g_hash_table_lookup(m->by_name, name));
	g_mutex_unlock(&m->names_lock);
	return i ? FIRST_FILE_INO + i - 1 : 0;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cusemu_mount *m = fuse_req_userdata(req);
	struct fuse_entry_param e = {
		.attr_timeout = CACHE_S,
		.entry_timeout = CACHE_S,
		.ino = lookup_ino(m, parent, name),
	};

	if (!e.ino) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(m, e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct cusemu_mount *m = fuse_req_userdata(req);
	struct stat st;

	(void)fi;
	fill_attr(m, ino, &st);
	fuse_reply_attr(req, &st, CACHE_S);
}

/* Truncation and times are accepted and change nothing, as on a device
 * node; mode and owner are the configuration's. */
static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	(void)attr;
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
		      FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fs_getattr(req, ino, fi);
}

/* Adds an entry to a readdir reply's buf (used of size bytes): false
 * when it is full. */
static bool add_dirent(fuse_req_t req, char *buf, size_t size, size_t *used,
		       const char *name, fuse_ino_t ino, mode_t mode,
		       off_t next)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t len = fuse_add_direntry(req, buf + *used, size - *used, name,
				       &st, next);

	if (len > size - *used)
		return false;
	*used += len;
	return true;
}

/* The tree's directory ino: entry k is ".", "..", then entry k - 2 of
 * the tree if it is in this directory; an entry's offset is k + 1. */
static size_t tree_readdir(fuse_req_t req, struct cusemu_mount *m,
			   fuse_ino_t ino, char *buf, size_t size, off_t off)
{
	const struct cusemu_sysfs_entry *dir = entry_of_ino(m, ino);
	guint n = m->tree->entries->len;
	size_t used = 0;

	for (off_t k = off; k < (off_t)n + 2; k++) {
		const struct cusemu_sysfs_entry *e =
			k < 2 ? dir : cusemu_sysfs_entry(m->tree, (guint)k - 2);
		fuse_ino_t entry = k < 2 ? ino : TREE_INO + (fuse_ino_t)k - 2;

		if (k == 1 && ino == TREE_INO)
			entry = ROOT_INO;
		else if (k == 1)
			entry = TREE_INO + dir->parent;
		if (k >= 2 && (k == 2 || e->parent != ino - TREE_INO))
			continue;	/* the root, or another's */
		if (!add_dirent(req, buf, size, &used,
				k == 0 ? "." : k == 1 ? ".." : e->name, entry,
				k < 2 ? S_IFDIR : entry_mode(e), k + 1))
			break;
	}
	return used;
}

/* The directory: entry k is ".", "..", the tree, then the file of
 * inode FIRST_FILE_INO + k - 3; an entry's offset is k + 1. */
static size_t root_readdir(fuse_req_t req, struct cusemu_mount *m, char *buf,
			   size_t size, off_t off)
{
	off_t n = g_atomic_int_get(&m->n_files);
	size_t used = 0;

	for (off_t k = off; k < n + 3; k++) {
		const char *name = k == 0 ? "." : k == 1 ? ".." : TREE_NAME;
		fuse_ino_t entry = k < 2 ? ROOT_INO
				   : k == 2 ? TREE_INO
					    : (fuse_ino_t)(FIRST_FILE_INO + k - 3);
		struct file *f = file_of_ino(m, entry);

		if (f && g_atomic_int_get(&f->gone))
			continue;
		if (f)
			name = f->name;
		if (!add_dirent(req, buf, size, &used, name, entry,
				k < 3 ? S_IFDIR : S_IFREG, k + 1))
			break;
	}
	return used;
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct cusemu_mount *m = fuse_req_userdata(req);
	const struct cusemu_sysfs_entry *e = entry_of_ino(m, ino);
	g_autofree char *buf = g_malloc(size);
	size_t used;

	(void)fi;
	if (ino == ROOT_INO)
		used = root_readdir(req, m, buf, size, off);
	else if (e && e->kind == CUSEMU_SYSFS_DIR)
		used = tree_readdir(req, m, ino, buf, size, off);
	else {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	fuse_reply_buf(req, buf, used);
}

static void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	const struct cusemu_sysfs_entry *e =
		entry_of_ino(fuse_req_userdata(req), ino);

	if (e && e->kind == CUSEMU_SYSFS_LINK)
		fuse_reply_readlink(req, e->text);
	else
		fuse_reply_err(req, EINVAL);
}

/*
 * The file's node, counted inside it until leave(); or NULL after an
 * error reply: a request on the directory, or on a removed file, which
 * fails as after a revoke (a release of one succeeds: its model already
 * let it go).
 */
static struct file *enter(fuse_req_t req, fuse_ino_t ino, bool release)
{
	struct file *f = file_of_ino(fuse_req_userdata(req), ino);

	if (!f) {
		fuse_reply_err(req, ino == ROOT_INO ? EISDIR : ENOENT);
		return NULL;
	}
	g_atomic_int_inc(&f->inside);
	if (!g_atomic_int_get(&f->gone))
		return f;
	g_atomic_int_dec_and_test(&f->inside);
	fuse_reply_err(req, release ? 0 : ENODEV);
	return NULL;
}

static void leave(struct file *f)
{
	g_atomic_int_dec_and_test(&f->inside);
}

/* A file of the tree: opened for reading only, read each time anew. */
static void tree_open(fuse_req_t req, const struct cusemu_sysfs_entry *e,
		      struct fuse_file_info *fi)
{
	if (e->kind == CUSEMU_SYSFS_DIR || e->kind == CUSEMU_SYSFS_LINK) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

/* Reads of a tree file: its text at off, a model's attribute asked
 * anew each time, as sysfs calls show() on each read from 0. */
static void tree_read(fuse_req_t req, const struct cusemu_sysfs_entry *e,
		      size_t size, off_t off)
{
	g_autofree char *shown = NULL;
	const char *text = e->text;
	ssize_t len;

	if (e->kind == CUSEMU_SYSFS_TEXT) {
		len = (ssize_t)strlen(text);
	} else {
		struct file *f = enter(req, FIRST_FILE_INO + e->device, false);

		if (!f)
			return;
		text = shown = g_malloc(TREE_FILE_SIZE);
		len = cusemu_node_show(&f->node, e->text,
				       fuse_req_ctx(req)->pid, shown,
				       TREE_FILE_SIZE);
		leave(f);
	}
	if (len < 0) {
		fuse_reply_err(req, (int)-len);
		return;
	}
	if (off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	fuse_reply_buf(req, text + off, MIN(size, (size_t)(len - off)));
}

/* libfuse's requests on a file, each turned into the node's (req.h) on
 * the stack. */
static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const struct cusemu_sysfs_entry *e =
		entry_of_ino(fuse_req_userdata(req), ino);
	struct cusemu_fuse_req fr;
	struct file *f;

	if (e) {
		tree_open(req, e, fi);
		return;
	}
	f = enter(req, ino, false);
	if (!f)
		return;
	cusemu_node_open(&f->node, cusemu_fuse_req(&fr, req, fi));
	leave(f);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct cusemu_fuse_req fr;
	struct file *f;

	if (entry_of_ino(fuse_req_userdata(req), ino)) {
		fuse_reply_err(req, 0);
		return;
	}
	f = enter(req, ino, true);
	if (!f)
		return;
	cusemu_node_release(&f->node, cusemu_fuse_req(&fr, req, fi));
	leave(f);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	const struct cusemu_sysfs_entry *e =
		entry_of_ino(fuse_req_userdata(req), ino);
	struct cusemu_fuse_req fr;
	struct cusemu_req *r;
	struct file *f;

	if (e) {
		tree_read(req, e, size, off);
		return;
	}
	f = enter(req, ino, false);
	if (!f)
		return;
	r = cusemu_fuse_req(&fr, req, fi);
	r->size = size;
	cusemu_node_read(&f->node, r);
	leave(f);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct file *f = enter(req, ino, false);
	struct cusemu_fuse_req fr;
	struct cusemu_req *r;

	(void)off;
	if (!f)
		return;
	r = cusemu_fuse_req(&fr, req, fi);
	r->buf = buf;
	r->size = size;
	cusemu_node_write(&f->node, r);
	leave(f);
}

static void fs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned int flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct file *f = enter(req, ino, false);
	struct cusemu_fuse_req fr;
	struct cusemu_req *r;

	if (!f)
		return;
	r = cusemu_fuse_ioctl_req(&fr, req, fi, cmd, arg, flags, in_buf,
				  in_bufsz, out_bufsz);
	fr.inside = &f->inside;	/* a kept request stays inside */
	cusemu_node_ioctl(&f->node, r);
	leave(f);
}

static void fs_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct file *f = enter(req, ino, false);
	struct cusemu_fuse_req fr;
	struct cusemu_req *r;

	if (!f) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		return;
	}
	r = cusemu_fuse_req(&fr, req, fi);
	r->poll = ph;
	cusemu_node_poll(&f->node, r);
	leave(f);
}

/*
 * On a FUSE file the kernel copies what the _IOC bits describe, whatever
 * the row says: a row that takes arg as a value is served too unless the
 * kernel would read from it as an address first (_IOC_WRITE). A daemon
 * that reaches its callers' memory (cusemu_reaches_callers()) serves the
 * rest too: pointers inside, data the other way.
 */
static bool row_fits_fuse(const struct cusemu_ioctl *row, bool reach)
{
	if (row->payload == CUSEMU_PAYLOAD_NONE)
		return !(_IOC_DIR(row->cmd) & _IOC_WRITE) ||
		       !_IOC_SIZE(row->cmd);
	return reach || cusemu_row_restricted(row);
}

/*
 * The commands of m that cannot serve on a FUSE file: their names
 * appended to names (", " between), and their count; -1 for hand-written
 * methods, which tables do not tell.
 */
static int fuse_gaps(const struct cusemu_device_model *m, bool reach,
		     GString *names)
{
	int gaps = 0;

	if (cusemu_model_by_hand(m))
		return -1;
	for (const struct cusemu_ioctl *row = m->native_table; row && row->name;
	     row++) {
		if (row_fits_fuse(row, reach))
			continue;
		g_string_append_printf(names, "%s%s", gaps++ ? ", " : "",
				       row->name);
	}
	for (const struct cusemu_ioctl *row = m->compat_table; row && row->name;
	     row++) {
		if (!row->handler || row_fits_fuse(row, reach))
			continue;
		g_string_append_printf(names, "%s%s (32-bit)",
				       gaps++ ? ", " : "", row->name);
	}
	return gaps;
}

/* Whether this daemon reaches its callers' memory: its own (cusemu-run's
 * daemon), or root's, through its /proc helper (allow_reach()). */
static bool fuse_reach(void)
{
	return cusemu_reaches_callers() || cusemu_proc_reaches() ||
	       geteuid() == 0;
}

/*
 * What a client asks a device's file, to learn what it may call there
 * rather than assume it (fioc-client --fuse-file does): the commands of its
 * model that need CUSE on this mount, named as the start-up line and
 * `cusemuctl list` name them (", " between); empty when the file serves
 * fully, "*" for hand-written methods without the callers' memory (only
 * what the _IOC bits describe serves). The directory and the tree have no
 * attributes, and files no others.
 */
#define NEEDS_CUSE_XATTR "user.cusemu.needs-cuse"

static void fs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct cusemu_mount *m = fuse_req_userdata(req);
	g_autoptr(GString) names = g_string_new(NULL);
	struct file *f;

	if (ino == ROOT_INO || entry_of_ino(m, ino) ||
	    strcmp(name, NEEDS_CUSE_XATTR) != 0) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	f = enter(req, ino, false);
	if (!f)
		return;
	if (fuse_gaps(f->node.dev->model, fuse_reach(), names) < 0)
		g_string_assign(names, "*");
	leave(f);
	if (!size)
		fuse_reply_xattr(req, names->len);
	else if (size < names->len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, names->str, names->len);
}

static void fs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	static const char list[] = NEEDS_CUSE_XATTR;	/* with its NUL */
	struct cusemu_mount *m = fuse_req_userdata(req);
	struct file *f;

	if (ino == ROOT_INO || entry_of_ino(m, ino)) {
		fuse_reply_xattr(req, 0);
		return;
	}
	f = enter(req, ino, false);
	if (!f)
		return;
	leave(f);
	if (!size)
		fuse_reply_xattr(req, sizeof(list));
	else if (size < sizeof(list))
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, sizeof(list));
}

/* An open with O_TRUNC is an open, not a setattr first. */
static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.readdir = fs_readdir,
	.readlink = fs_readlink,
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.write = fs_write,
	.ioctl = fs_ioctl,
	.poll = fs_poll,
	.getxattr = fs_getxattr,
	.listxattr = fs_listxattr,
};

static void mount_ended(struct cusemu_conn *c, int res)
{
	struct cusemu_mount *m = (struct cusemu_mount *)c;

	g_message("%s: the mount ended (%s)", m->dir,
		  res < 0 ? g_strerror(-res) : "unmounted");
}

static void mount_end_waits(struct cusemu_conn *c)
{
	struct cusemu_mount *m = (struct cusemu_mount *)c;

	for (guint i = 0; i < (guint)g_atomic_int_get(&m->n_files); i++)
		cusemu_waiters_end(&m->files->slot[i]->node.waiters);
}

/*
 * The id of the mount at base in parent, and whether base is the root of a
 * mount, from what the kernel knows (AT_STATX_DONT_SYNC): never a request
 * to a FUSE server, which may be dead or not serving yet. Async-signal-safe.
 */
static int mount_id_at(int parent, const char *base, uint64_t *id,
		       bool *is_root)
{
	struct statx stx;

	if (statx(parent, base, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_MNT_ID, &stx))
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
	*id = stx.stx_mnt_id;
	if (is_root)
		*is_root = stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT &&
			   stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
	return 0;
}

static void point_clear(struct mount_point *p)
{
	if (p->parent >= 0)
		close(p->parent);
	p->parent = -1;
	g_clear_pointer(&p->base, g_free);
}

/* Before the mount: where it goes, and what is there now. */
static gboolean point_open(struct mount_point *p, const char *dir,
			   GError **error)
{
	g_autofree char *real = realpath(dir, NULL);
	g_autofree char *parent = NULL;
	bool is_root = false;
	int err;

	p->parent = -1;
	if (!real || !strcmp(real, "/")) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "cannot mount at %s: %s", dir,
			    real ? "it is the root directory"
				 : g_strerror(errno));
		return FALSE;
	}
	parent = g_path_get_dirname(real);
	p->base = g_path_get_basename(real);
	p->parent = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = p->parent < 0 ? -errno
			    : mount_id_at(p->parent, p->base, &p->before,
					  &is_root);
	if (err) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(-err),
			    "cannot mount at %s: %s", dir, g_strerror(-err));
		point_clear(p);
		return FALSE;
	}
	if (is_root)
		g_message("%s is already a mount point: the daemon mounts over "
			  "it, and at its end unmounts only its own mount, "
			  "leaving the one below", dir);
	return TRUE;
}

/* After the mount: ours is the one there now, or the path moved. */
static gboolean point_mounted(struct mount_point *p, const char *dir,
			      GError **error)
{
	int err = mount_id_at(p->parent, p->base, &p->id, NULL);

	if (!err && p->id != p->before)
		return TRUE;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
		    "the mount at %s is not where it was made (%s); did a "
		    "directory on the way change?", dir,
		    err ? g_strerror(-err) : "no new mount there");
	return FALSE;
}

/*
 * The unmounter, once the daemon is gone: from the mount point's parent,
 * held open, and only when the mount there is still ours (not after a
 * lazy unmount, not under another mount made since). Root unmounts itself
 * (UMOUNT_NOFOLLOW); an ordinary user through fusermount3. Async-signal-
 * safe, all prepared before.
 */
static G_GNUC_NORETURN void unmount_ours(const struct mount_point *p,
					 char *fusermount, bool as_root)
{
	char *argv[] = { fusermount, "-u", "-z", "-q", p->base, NULL };
	uint64_t id;

	if (mount_id_at(4, p->base, &id, NULL) || id != p->id)
		_exit(0);
	if (as_root)
		_exit(umount2(p->base, MNT_DETACH | UMOUNT_NOFOLLOW) ? 1 : 0);
	execv(fusermount, argv);
	_exit(127);
}

/*
 * The child that unmounts the mount once the daemon is gone, however it
 * ends: it waits for the end of a pipe whose other end only the daemon
 * holds. fusermount3's own auto_unmount cannot serve: before libfuse 3.17
 * it checks the dead mount as root, is refused (EACCES) on a mount without
 * allow_other, and leaves it. Root's keeps only what unmounting needs
 * (seal). Forked while the pool may have threads, so the child does only
 * async-signal-safe work, all prepared before.
 */
static pid_t start_unmounter(const struct mount_point *p, const char *dir,
			     const struct cusemu_unmounter_seal *seal,
			     GError **error)
{
	g_autofree char *fusermount = g_find_program_in_path("fusermount3");
	bool as_root = geteuid() == 0;
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	int pipefd[2];
	pid_t pid;

	if (!as_root && !fusermount) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "fusermount3 is not in PATH: install the fuse3 "
			    "package, which unmounts %s for an ordinary user",
			    dir);
		return -1;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot make a pipe: %s", g_strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot start the process that unmounts %s: %s",
			    dir, g_strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		int in = fcntl(pipefd[0], F_DUPFD, 10);
		int at = fcntl(p->parent, F_DUPFD, 10);
		char c;

		/* Nothing of the daemon's, /dev/fuse least of all, stays. */
		dup2(in, 3);
		dup2(at, 4);
		close_range(5, ~0u, 0);
		/* The process group's signals leave it; kill -9 does not. */
		sigaction(SIGINT, &ignore, NULL);
		sigaction(SIGTERM, &ignore, NULL);
		sigaction(SIGHUP, &ignore, NULL);
		prctl(PR_SET_NAME, "cusemud-umount");
		if (fchdir(4) || (seal && cusemu_sandbox_unmounter_seal(seal)))
			_exit(126);
		while (read(3, &c, 1) < 0 && errno == EINTR)
			;
		unmount_ours(p, fusermount, as_root);
	}
	close(pipefd[0]);
	/* Kept open, and closed by the exit alone. */
	return pid;
}

static void free_mount(struct cusemu_mount *m)
{
	if (!m)
		return;
	guint n = (guint)m->n_files;

	for (guint i = 0; i < n; i++) {
		cusemu_node_clear(&m->files->slot[i]->node);
		g_free(m->files->slot[i]->name);
		g_free(m->files->slot[i]);
	}
	g_free(m->files);
	g_ptr_array_unref(m->old_tables);
	g_clear_pointer(&m->by_name, g_hash_table_unref);
	g_mutex_clear(&m->names_lock);
	g_array_unref(m->groups);
	cusemu_sysfs_free(m->tree);
	g_free(m->dir);
	g_free(m);
}

/* Room for one more file; the table it replaces stays for the workers. */
static void make_room(struct cusemu_mount *m)
{
	guint n = (guint)m->n_files;
	struct files *t;

	if (m->files && n < m->files->capacity)
		return;
	t = g_malloc0(sizeof(*t) + 2 * MAX(n, 8u) * sizeof(t->slot[0]));
	t->capacity = 2 * MAX(n, 8u);
	if (m->files) {
		memcpy(t->slot, m->files->slot, n * sizeof(t->slot[0]));
		g_ptr_array_add(m->old_tables, m->files);
	}
	g_atomic_pointer_set(&m->files, t);
}

/* A file for dev: first in its slot, then counted, then found by name. */
static struct file *add_file(struct cusemu_mount *m, struct cusemu_device *dev)
{
	struct file *f = g_new0(struct file, 1);
	guint n = (guint)m->n_files;

	cusemu_node_init(&f->node, dev, CUSEMU_NODE_FILE);
	f->name = g_strdup(dev->name);
	f->mode = cusemu_instance(dev)->made.mode;
	pick_owner(m, f);
	make_room(m);
	m->files->slot[n] = f;
	g_atomic_int_set(&m->n_files, (gint)n + 1);
	g_mutex_lock(&m->names_lock);
	g_hash_table_insert(m->by_name, f->name, GUINT_TO_POINTER(n + 1));
	g_mutex_unlock(&m->names_lock);
	return f;
}

static void learn_groups(struct cusemu_mount *m)
{
	int n = getgroups(0, NULL);

	m->groups = g_array_new(FALSE, TRUE, sizeof(gid_t));
	if (n <= 0)
		return;
	g_array_set_size(m->groups, n);
	n = getgroups(n, (gid_t *)(void *)m->groups->data);
	g_array_set_size(m->groups, MAX(n, 0));
}

static void conn_free(struct cusemu_conn *c);

static struct cusemu_mount *mount_start(GPtrArray *devices,
					const struct cusemu_mount_options *opts,
					GError **error)
{
	g_autofree char *mount_opts = g_strdup_printf(
		"default_permissions,fsname=cusemu,subtype=cusemu%s",
		opts->allow_other ? ",allow_other" : "");
	char *argv[] = { "cusemud", "-o", mount_opts,
			 opts->debug ? "-d" : NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(opts->debug ? 4 : 3, argv);
	struct mount_point point = { .parent = -1 };
	struct cusemu_mount *m;

	if (!point_open(&point, opts->dir, error))
		return NULL;
	m = g_new0(struct cusemu_mount, 1);

	m->pub.ops = &cusemu_fusefs_ops;
	m->dir = g_strdup(opts->dir);
	m->fuse.conn.what = m->dir;
	m->fuse.conn.end_waits = mount_end_waits;
	m->fuse.conn.ended = mount_ended;
	m->fuse.conn.free = conn_free;
	m->uid = geteuid();
	m->gid = getegid();
	learn_groups(m);
	m->mounted = time(NULL);
	m->old_tables = g_ptr_array_new_with_free_func(g_free);
	g_mutex_init(&m->names_lock);
	m->by_name = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < devices->len; i++)
		add_file(m, devices->pdata[i]);
	make_room(m);
	/* Entry i's device is the file of inode FIRST_FILE_INO + i. */
	m->tree = cusemu_sysfs_new((struct cusemu_device *const *)devices->pdata,
				   devices->len);
	cusemu_fuse_log();
	m->fuse.se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), m);
	if (!m->fuse.se || fuse_session_mount(m->fuse.se, m->dir)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "cannot mount a FUSE file system at %s (see "
			    "libfuse's message above; as an ordinary user "
			    "this needs fusermount3, from the fuse3 package)",
			    m->dir);
		if (m->fuse.se)
			fuse_session_destroy(m->fuse.se);
		point_clear(&point);
		free_mount(m);
		return NULL;
	}
	if (point_mounted(&point, m->dir, error))
		m->unmounter = start_unmounter(&point, m->dir, opts->seal,
					       error);
	point_clear(&point);
	if (m->unmounter <= 0) {
		fuse_session_unmount(m->fuse.se);
		fuse_session_destroy(m->fuse.se);
		free_mount(m);
		return NULL;
	}
	if (!cusemu_fuse_conn_serve(&m->fuse, error)) {
		fuse_session_destroy(m->fuse.se);
		m->fuse.se = NULL;
		cusemu_conn_release(&m->fuse.conn);
		return NULL;
	}
	return m;
}

/* The file of dev, not removed yet; on the main thread. */
static struct file *file_of_dev(struct cusemu_mount *m,
				const struct cusemu_device *dev)
{
	for (guint i = 0; i < (guint)m->n_files; i++) {
		struct file *f = m->files->slot[i];

		if (f->node.dev == dev && !f->gone)
			return f;
	}
	return NULL;
}

/*
 * No request is inside f's node any more: the ones waiting in the sleep
 * helpers are interrupted, as if their clients had given up, each round
 * for one between its check and its wait. False after STOP_TIMEOUT_S.
 */
static bool end_file_requests(struct file *f)
{
	gint64 deadline = g_get_monotonic_time() +
			  STOP_TIMEOUT_S * G_TIME_SPAN_SECOND;

	while (g_atomic_int_get(&f->inside)) {
		cusemu_waiters_end(&f->node.waiters);
		if (g_get_monotonic_time() > deadline)
			return false;
		poll(NULL, 0, 1);	/* not nanosleep: the sandbox has poll */
	}
	return true;
}

static bool mount_remove(struct cusemu_mount *m, struct cusemu_device *dev)
{
	struct file *f = file_of_dev(m, dev);
	int err;

	if (!f)
		return true;
	g_mutex_lock(&m->names_lock);
	g_hash_table_remove(m->by_name, f->name);
	g_mutex_unlock(&m->names_lock);
	g_atomic_int_set(&f->gone, 1);
	/* The kernel cached the name for CACHE_S: it forgets it now. */
	err = fuse_lowlevel_notify_inval_entry(m->fuse.se, ROOT_INO, f->name,
					       strlen(f->name));
	if (err && err != -ENOENT)
		g_message("%s/%s: the kernel may show the name a while "
			  "longer: %s",
			  m->dir, f->name, g_strerror(-err));
	if (!end_file_requests(f)) {
		g_warning("%s/%s: requests do not end; the device is left as "
			  "it is",
			  m->dir, f->name);
		return false;
	}
	/* The kernel's releases of these find the file gone. */
	cusemu_node_close_files(&f->node);
	return true;
}

static void conn_free(struct cusemu_conn *c)
{
	free_mount((struct cusemu_mount *)c);
}

/* The transport's end: its requests and its connection; its files then
 * fail with ENOTCONN until the daemon has exited and the mount is gone. */
static void fusefs_stop(struct cusemu_transport *t)
{
	struct cusemu_mount *m = mount_of(t);

	if (!cusemu_conn_stop(&m->fuse.conn))
		return;
	/*
	 * Not fuse_session_unmount(): as an ordinary user it would start
	 * fusermount3, which the sandbox forbids. Closing the connection
	 * fails every request; fusermount3 unmounts once the daemon is gone.
	 */
	fuse_session_destroy(m->fuse.se);
	m->fuse.se = NULL;
	for (guint i = 0; i < (guint)m->n_files; i++)
		if (!m->files->slot[i]->gone)
			cusemu_node_close_files(&m->files->slot[i]->node);
}

static void fusefs_free(struct cusemu_transport *t)
{
	cusemu_conn_release(&mount_of(t)->fuse.conn);
}

/* Whether m serves fully as a file on a FUSE mount: a line for people. */
static char *fusefs_fitness(const struct cusemu_device_model *m)
{
	g_autoptr(GString) names = g_string_new(NULL);
	bool reach = fuse_reach();
	int gaps = fuse_gaps(m, reach, names);

	if (gaps < 0)
		return g_strdup(reach ? "hand-written methods: _IOC payloads, "
					"and pointers through the caller's "
					"memory"
				      : "hand-written methods: only _IOC "
					"payloads");
	if (!gaps)
		return g_strdup("serves fully");
	return g_strdup_printf("all but %s (need CUSE)", names->str);
}

/* Warn of the model's commands that the VFS answers for a FUSE file. */
static void warn_vfs_commands(const struct cusemu_device *dev)
{
	const struct cusemu_ioctl *tables[] = { dev->model->native_table,
						dev->model->compat_table };

	for (unsigned int t = 0; t < G_N_ELEMENTS(tables); t++) {
		for (const struct cusemu_ioctl *row = tables[t];
		     row && row->name; row++) {
			const char *vfs = cusemu_vfs_command(row->cmd, true);

			if (vfs && !cusemu_vfs_command(row->cmd, false))
				g_warning("%s: %s (%08x) never reaches the model "
					  "on a FUSE mount: the kernel answers "
					  "%s itself for regular files",
					  dev->name, row->name, row->cmd, vfs);
		}
	}
}

/* The kernel's FUSE, and a directory to mount on. */
static gboolean fusefs_check(const struct cusemu_transport_settings *settings,
			     GPtrArray *devices, GError **error)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	const struct fusefs_settings *fs = settings->own;
	const char *dir = fs->dir;
	struct stat st = { 0 };

	if (fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot open /dev/fuse: %s; --fuse needs the "
			    "kernel's FUSE (modprobe fuse, or give a container "
			    "the device /dev/fuse)",
			    g_strerror(errno));
		return FALSE;
	}
	close(fd);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		const char *why = S_ISDIR(st.st_mode) || errno
					  ? g_strerror(errno)
					  : "not a directory";

		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR,
			    "--fuse %s: %s; give an existing directory to "
			    "mount the device files on (mkdir -p %s)",
			    dir, why, dir);
		return FALSE;
	}
	return TRUE;
}

/* dev's file, there once the kernel answers a stat of it (the mount's
 * INIT done by a worker); said in the log. */
static gboolean announce_file(struct cusemu_mount *m,
			      struct cusemu_device *dev, const char *added,
			      GError **error)
{
	g_autofree char *path = g_build_filename(m->dir, dev->name, NULL);
	g_autofree char *fitness = fusefs_fitness(dev->model);
	struct stat st;

	if (stat(path, &st)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s did not appear on the mount: %s", path,
			    g_strerror(errno));
		return FALSE;
	}
	g_message("serving %s: %s, kernel model %s, mode %04o, over FUSE: "
		  "%s%s",
		  path, dev->model->name, cusemu_instance(dev)->dispatch.kmodel->name,
		  (unsigned int)(st.st_mode & 07777), fitness, added);
	warn_vfs_commands(dev);
	return TRUE;
}

/*
 * A root daemon drops CAP_SYS_PTRACE with the rest; its /proc helper
 * keeps it, and may reach the memory of the mount's callers while they
 * wait in an ioctl on it. In a user namespace of its own the daemon
 * reaches them itself.
 */
static void allow_reach(const char *dir)
{
	struct stat st;
	int err;

	if (geteuid() != 0 || cusemu_reaches_callers())
		return;
	err = stat(dir, &st) ? -errno : cusemu_proc_allow_reach(st.st_dev);
	if (err)
		g_warning("the /proc helper may not reach callers' memory (%s): "
			  "commands with pointers inside their payload get "
			  "EOPNOTSUPP",
			  g_strerror(-err));
}

/* One mount with a file per device. */
static gboolean fusefs_start(const struct cusemu_transport_settings *settings,
			     GPtrArray *devices, struct cusemu_transport **t,
			     GError **error)
{
	const struct fusefs_settings *fs = settings->own;
	struct cusemu_mount_options mo = {
		.dir = fs->dir,
		.allow_other = fs->allow_other,
		.debug = settings->debug,
	};
	struct cusemu_unmounter_seal seal;
	struct cusemu_mount *m;

	/* Root's unmounter keeps only what unmounting needs. */
	if (geteuid() == 0) {
		if (!cusemu_sandbox_unmounter_prepare(settings->sandbox,
						      fs->dir, &seal, error))
			return FALSE;
		mo.seal = &seal;
	}
	m = mount_start(devices, &mo, error);
	if (mo.seal)
		cusemu_sandbox_unmounter_clear(&seal);
	if (!m)
		return FALSE;
	*t = &m->pub;
	settings->sandbox->unmounter_pid = m->unmounter;
	for (guint i = 0; i < devices->len; i++)
		if (!announce_file(m, devices->pdata[i], "", error))
			return FALSE;
	allow_reach(fs->dir);
	return TRUE;
}

static gboolean fusefs_serve(struct cusemu_transport *t,
			     struct cusemu_device *dev, GError **error)
{
	struct cusemu_mount *m = mount_of(t);

	add_file(m, dev);
	if (announce_file(m, dev, "; added", error))
		return TRUE;
	mount_remove(m, dev);
	return FALSE;
}

static bool fusefs_unserve(struct cusemu_transport *t,
			   struct cusemu_device *dev)
{
	return mount_remove(mount_of(t), dev);
}

static char *fusefs_path(const struct cusemu_transport *t,
			 const struct cusemu_device *dev)
{
	return g_build_filename(mount_of(t)->dir, dev->name, NULL);
}

static const char *fusefs_ioctls(const struct cusemu_device *dev)
{
	return "fuse";
}

/* NAME, /dev/NAME or DIR/NAME. */
static const char *fusefs_name(const struct cusemu_transport *t,
			       const char *path)
{
	const char *dir = mount_of(t)->dir;

	if (g_str_has_prefix(path, "/dev/"))
		return path + strlen("/dev/");
	if (g_str_has_prefix(path, dir) && path[strlen(dir)] == '/')
		return path + strlen(dir) + 1;
	return path;
}

static char *fusefs_lost(struct cusemu_transport *t)
{
	struct cusemu_mount *m = mount_of(t);

	if (!cusemu_conn_done(&m->fuse.conn))
		return NULL;
	return g_strdup_printf("the FUSE mount at %s ended (unmounted?)",
			       m->dir);
}

static char *fusefs_stopping(const struct cusemu_transport *t, unsigned int n)
{
	return g_strdup_printf("unmounting %s (%u file(s))", mount_of(t)->dir,
			       n);
}

static const struct cusemu_transport_key fusefs_keys[] = {
	{ .key = "fuse", .option = "fuse", .filename = true, .arg = "DIR",
	  .help = "Serve the devices as files DIR/NAME on a FUSE mount "
		  "instead of CUSE nodes: no /dev/cuse, no root needed" },
	{ .key = "allow_other", .option = "allow-other", .flag = true,
	  .help = "With --fuse: let other users reach the files (as an "
		  "ordinary user, needs user_allow_other in /etc/fuse.conf)" },
	{ NULL }
};

static void fusefs_settings_free(void *own)
{
	struct fusefs_settings *fs = own;

	g_free(fs->dir);
	g_free(fs);
}

/* Asked for by a directory (fuse=, --fuse). */
static gboolean fusefs_configure(const struct cusemu_transport_settings *s,
				 const struct cusemu_transport_value *values,
				 void **own, GError **error)
{
	const char *dir = values[0].value;
	gboolean allow_other = FALSE;
	struct fusefs_settings *fs;

	if (!cusemu_setting_bool(values[1].value, values[1].origin,
				 "allow_other", &allow_other, error))
		return FALSE;
	if (dir && !*dir)
		dir = NULL;
	if (allow_other && !dir) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: allow_other is for a FUSE mount; give --fuse "
			    "DIR (or fuse= in [daemon]) too",
			    values[1].origin);
		return FALSE;
	}
	if (dir && s->sandbox && s->sandbox->user && geteuid() != 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "user= needs a daemon started as root; an ordinary "
			    "user's daemon already runs as that user");
		return FALSE;
	}
	if (!dir)
		return TRUE;
	fs = g_new0(struct fusefs_settings, 1);
	fs->dir = g_strdup(dir);
	fs->allow_other = allow_other;
	*own = fs;
	return TRUE;
}

const struct cusemu_transport_ops cusemu_fusefs_ops = {
	.kind = "fuse",
	.keys = fusefs_keys,
	.help = "With --fuse DIR the devices are files DIR/NAME on a FUSE "
		"mount, without CUSE\nand without root; the kernel then passes "
		"only what _IOC bits describe.\n",
	.configure = fusefs_configure,
	.settings_free = fusefs_settings_free,
	.fitness = fusefs_fitness,
	.fitness_label = "over --fuse",
	.check = fusefs_check,
	.start = fusefs_start,
	.serve = fusefs_serve,
	.unserve = fusefs_unserve,
	.path = fusefs_path,
	.ioctls = fusefs_ioctls,
	.name = fusefs_name,
	.lost = fusefs_lost,
	.stopping = fusefs_stopping,
	.stop = fusefs_stop,
	.free = fusefs_free,
};
