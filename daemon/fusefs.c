/* SPDX-License-Identifier: MIT */
/*
 * A FUSE file system of device files: inode 1 is the directory, inode
 * 2 + i the file of device i. Nothing else exists; the set never changes
 * while mounted, so the kernel may cache names and attributes for good.
 */
#define G_LOG_DOMAIN "cusemu-fusefs"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "node.h"

#include <glib.h>

#include "device.h"
#include "fusefs.h"
#include "pool.h"
#include "transport.h"

#define ROOT_INO 1
#define FIRST_FILE_INO 2
/* The files never change: the kernel keeps what it learnt. */
#define CACHE_S 86400.0
#define STOP_TIMEOUT_S 10

struct cusemu_mount {
	struct cusemu_pool_source source;	/* its /dev/fuse descriptor */
	struct fuse_session *se;
	char *dir;
	struct cusemu_node *nodes;
	struct {
		uid_t uid;
		gid_t gid;
	} *owners;			/* what each file shows */
	guint n_nodes;
	GHashTable *by_name;	/* name -> index + 1 */
	uid_t uid;		/* what the files show */
	gid_t gid;
	time_t mounted;
	gint ended;
	bool stuck;
};

/* The device file of ino, or NULL for the directory and unknown ones. */
static struct cusemu_node *node_of(struct cusemu_mount *m, fuse_ino_t ino)
{
	if (ino < FIRST_FILE_INO || ino - FIRST_FILE_INO >= m->n_nodes)
		return NULL;
	return &m->nodes[ino - FIRST_FILE_INO];
}

/*
 * The owner and group a device's file shows: the device's where the
 * daemon may give them, as root, and as an ordinary user for a group of
 * its own; else the daemon's. The kernel checks them (default_permissions).
 * Worked out before the sandbox, which allows no getegid or getgroups.
 */
static void pick_owner(struct cusemu_mount *m, guint i)
{
	const struct cusemu_instance *dp = cusemu_instance(m->nodes[i].dev);

	m->owners[i].uid = m->uid;
	m->owners[i].gid = m->gid;
	if (m->uid == 0) {
		m->owners[i].uid = dp->owner;
		m->owners[i].gid = dp->group;
	} else if (dp->group == m->gid || group_member(dp->group)) {
		m->owners[i].gid = dp->group;
	}
}

static void fill_attr(struct cusemu_mount *m, fuse_ino_t ino, struct stat *st)
{
	struct cusemu_node *n = node_of(m, ino);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_atime = st->st_mtime = st->st_ctime = m->mounted;
	if (!n) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return;
	}
	st->st_mode = S_IFREG | cusemu_instance(n->dev)->mode;
	st->st_nlink = 1;
	st->st_uid = m->owners[ino - FIRST_FILE_INO].uid;
	st->st_gid = m->owners[ino - FIRST_FILE_INO].gid;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cusemu_mount *m = fuse_req_userdata(req);
	struct fuse_entry_param e = {
		.attr_timeout = CACHE_S,
		.entry_timeout = CACHE_S,
	};
	guint i = parent == ROOT_INO
			  ? GPOINTER_TO_UINT(g_hash_table_lookup(m->by_name, name))
			  : 0;

	if (!i) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = FIRST_FILE_INO + i - 1;
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

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct cusemu_mount *m = fuse_req_userdata(req);
	g_autofree char *buf = g_malloc(size);
	size_t used = 0;

	(void)fi;
	if (ino != ROOT_INO) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* Entry k: ".", "..", then the files; an entry's offset is k + 1. */
	for (off_t k = off; k < (off_t)m->n_nodes + 2; k++) {
		struct stat st = { 0 };
		const char *name = k == 0 ? "." : k == 1 ? ".." : NULL;
		size_t len;

		st.st_ino = k < 2 ? ROOT_INO : (fuse_ino_t)(FIRST_FILE_INO + k - 2);
		st.st_mode = k < 2 ? S_IFDIR : S_IFREG;
		if (!name)
			name = m->nodes[k - 2].dev->name;
		len = fuse_add_direntry(req, buf + used, size - used, name, &st,
					k + 1);
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
}

/* The file's node, or an error reply (a request on the directory). */
static struct cusemu_node *file_node(fuse_req_t req, fuse_ino_t ino)
{
	struct cusemu_node *n = node_of(fuse_req_userdata(req), ino);

	if (!n)
		fuse_reply_err(req, ino == ROOT_INO ? EISDIR : ENOENT);
	return n;
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cusemu_node *n = file_node(req, ino);

	if (n)
		cusemu_node_open(n, req, fi);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct cusemu_node *n = file_node(req, ino);

	if (n)
		cusemu_node_release(n, req, fi);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct cusemu_node *n = file_node(req, ino);

	(void)off;
	if (n)
		cusemu_node_read(n, req, size, fi);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct cusemu_node *n = file_node(req, ino);

	(void)off;
	if (n)
		cusemu_node_write(n, req, buf, size, fi);
}

static void fs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned int flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct cusemu_node *n = file_node(req, ino);

	if (n)
		cusemu_node_ioctl(n, req, cmd, arg, fi, flags,
				  in_buf, in_bufsz, out_bufsz);
}

static void fs_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct cusemu_node *n = file_node(req, ino);

	if (n)
		cusemu_node_poll(n, req, fi, ph);
	else if (ph)
		fuse_pollhandle_destroy(ph);
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
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.write = fs_write,
	.ioctl = fs_ioctl,
	.poll = fs_poll,
};

static void mount_ready(struct cusemu_pool_source *src)
{
	struct cusemu_mount *m = (struct cusemu_mount *)src;
	int res;

	if (cusemu_node_serve(m->se, src, &res))
		return;
	cusemu_pool_remove(src);
	if (!g_atomic_int_exchange(&m->ended, 1))
		g_message("%s: the mount ended (%s)", m->dir,
			  res < 0 ? g_strerror(-res) : "unmounted");
}

/*
 * The child that unmounts dir once the daemon is gone, however it ends:
 * it waits for the end of a pipe whose other end only the daemon holds.
 * fusermount3's own auto_unmount cannot serve: before libfuse 3.17 it
 * checks the dead mount as root, is refused (EACCES) on a mount without
 * allow_other, and leaves it. Forked while the pool may have threads, so
 * the child does only async-signal-safe work, all prepared before.
 */
static gboolean start_unmounter(const char *dir, GError **error)
{
	g_autofree char *fusermount = g_find_program_in_path("fusermount3");
	char *argv[] = { fusermount, "-u", "-z", "-q", (char *)dir, NULL };
	bool as_root = geteuid() == 0;
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	int pipefd[2];
	pid_t pid;

	if (!as_root && !fusermount) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "fusermount3 is not in PATH: install the fuse3 "
			    "package, which unmounts %s for an ordinary user",
			    dir);
		return FALSE;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot make a pipe: %s", g_strerror(errno));
		return FALSE;
	}
	pid = fork();
	if (pid < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot start the process that unmounts %s: %s",
			    dir, g_strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return FALSE;
	}
	if (pid == 0) {
		char c;

		/* Nothing of the daemon's, /dev/fuse least of all, stays. */
		dup2(pipefd[0], 3);
		close_range(4, ~0u, 0);
		sigaction(SIGINT, &ignore, NULL);
		sigaction(SIGTERM, &ignore, NULL);
		sigaction(SIGHUP, &ignore, NULL);
		while (read(3, &c, 1) < 0 && errno == EINTR)
			;
		if (as_root)
			_exit(umount2(dir, MNT_DETACH) ? 1 : 0);
		execv(fusermount, argv);
		_exit(127);
	}
	close(pipefd[0]);
	/* Kept open, and closed by the exit alone. */
	return TRUE;
}

static void free_mount(struct cusemu_mount *m)
{
	for (guint i = 0; i < m->n_nodes; i++)
		cusemu_node_clear(&m->nodes[i]);
	g_free(m->nodes);
	g_free(m->owners);
	g_clear_pointer(&m->by_name, g_hash_table_unref);
	g_free(m->dir);
	g_free(m);
}

struct cusemu_mount *cusemu_mount_start(GPtrArray *devices,
					const struct cusemu_mount_options *opts,
					GError **error)
{
	g_autofree char *mount_opts = g_strdup_printf(
		"default_permissions,fsname=cusemu,subtype=cusemu%s",
		opts->allow_other ? ",allow_other" : "");
	char *argv[] = { "cusemud", "-o", mount_opts,
			 opts->debug ? "-d" : NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(opts->debug ? 4 : 3, argv);
	struct cusemu_mount *m = g_new0(struct cusemu_mount, 1);

	m->dir = g_strdup(opts->dir);
	m->uid = geteuid();
	m->gid = getegid();
	m->mounted = time(NULL);
	m->n_nodes = devices->len;
	m->nodes = g_new0(struct cusemu_node, devices->len);
	m->owners = g_malloc0_n(devices->len, sizeof(*m->owners));
	m->by_name = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < devices->len; i++) {
		struct cusemu_device *dev = devices->pdata[i];

		cusemu_node_init(&m->nodes[i], dev, CUSEMU_NODE_FILE);
		pick_owner(m, i);
		g_hash_table_insert(m->by_name, (char *)dev->name,
				    GUINT_TO_POINTER(i + 1));
	}
	cusemu_node_log_libfuse();
	m->se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), m);
	if (!m->se || fuse_session_mount(m->se, m->dir)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "cannot mount a FUSE file system at %s (see "
			    "libfuse's message above; as an ordinary user "
			    "this needs fusermount3, from the fuse3 package)",
			    m->dir);
		if (m->se)
			fuse_session_destroy(m->se);
		free_mount(m);
		return NULL;
	}
	if (!start_unmounter(m->dir, error)) {
		fuse_session_unmount(m->se);
		fuse_session_destroy(m->se);
		free_mount(m);
		return NULL;
	}
	m->source.ready = mount_ready;
	if (!cusemu_transport_serve(&m->source, fuse_session_fd(m->se), m->dir,
				    error)) {
		fuse_session_destroy(m->se);
		free_mount(m);
		return NULL;
	}
	return m;
}

bool cusemu_mount_ended(struct cusemu_mount *m)
{
	return g_atomic_int_get(&m->ended);
}

void cusemu_mount_stop(struct cusemu_mount *m)
{
	gint64 deadline = g_get_monotonic_time() +
			  STOP_TIMEOUT_S * G_TIME_SPAN_SECOND;

	fuse_session_exit(m->se);
	cusemu_pool_remove(&m->source);
	while (g_atomic_int_get(&m->source.active)) {
		for (guint i = 0; i < m->n_nodes; i++)
			cusemu_waiters_end(&m->nodes[i].waiters);
		if (g_get_monotonic_time() > deadline) {
			g_warning("%s: requests do not end; leaving them",
				  m->dir);
			m->stuck = true;
			return;
		}
		poll(NULL, 0, 1);	/* not nanosleep: the sandbox has poll */
	}
	g_atomic_int_set(&m->ended, 1);
	/*
	 * Not fuse_session_unmount(): as an ordinary user it would start
	 * fusermount3, which the sandbox forbids. Closing the connection
	 * fails every request; fusermount3 unmounts once the daemon is gone.
	 */
	fuse_session_destroy(m->se);
	m->se = NULL;
	for (guint i = 0; i < m->n_nodes; i++)
		cusemu_node_close_files(&m->nodes[i]);
}

void cusemu_mount_free(struct cusemu_mount *m)
{
	if (m && !m->stuck && !cusemu_pool_running())
		free_mount(m);
}
