/* SPDX-License-Identifier: MIT */
/*
 * The command's stat() of a device's file, answered as the kernel answers
 * it for a character device. Over FUSE the devices are regular files;
 * programs that enumerate devices (libinput, libudev's udevadm on a node,
 * python-evdev's list_devices()) keep only character devices, or compare
 * the number of the node they opened with udev's. A seccomp filter on the
 * command sends its stat calls here (a user notification: nothing is
 * loaded into the command, so static and i386 programs are answered too);
 * a call on one of the devices' files is answered with that file's stat,
 * its type a character device and its number the one /sys gives; any
 * other goes on to the kernel unchanged.
 */
#define G_LOG_DOMAIN "cusemu-run"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <glib.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "chardev.h"

/* One device's file: where the kernel has it, and the number it shows. */
struct chardev {
	dev_t fs;
	ino_t ino;
	unsigned int major;
	unsigned int minor;
};

/* Filled before the command starts, read by the answering thread only. */
static GArray *chardevs;
/* The ids the command's namespace shows for this one's root, and for
 * any id it does not map. */
static uid_t command_uid, overflow_uid = 65534;
static gid_t command_gid, overflow_gid = 65534;

/* The stat calls the filter sends here, by name: both ABIs' spellings. */
static const char *const stat_calls[] = {
	"stat", "lstat", "fstat", "newfstatat",		/* x86-64 */
	"stat64", "lstat64", "fstat64", "fstatat64",	/* i386 */
	"statx",					/* both */
};

/* What the caller's buffer takes. */
enum layout {
	LAYOUT_STAT,		/* x86-64's struct stat */
	LAYOUT_STAT64_I386,	/* i386's struct stat64 */
	LAYOUT_STATX,		/* struct statx, the same in both */
};

/* i386's struct stat64 (arch/x86/include/uapi/asm/stat.h), packed. */
struct stat64_i386 {
	uint64_t st_dev;
	uint8_t pad0[4];
	uint32_t st_ino32;
	uint32_t st_mode;
	uint32_t st_nlink;
	uint32_t st_uid;
	uint32_t st_gid;
	uint64_t st_rdev;
	uint8_t pad3[4];
	int64_t st_size;
	uint32_t st_blksize;
	uint64_t st_blocks;
	uint32_t st_atime_, st_atime_nsec;
	uint32_t st_mtime_, st_mtime_nsec;
	uint32_t st_ctime_, st_ctime_nsec;
	uint64_t st_ino;
} __attribute__((packed));

G_STATIC_ASSERT(sizeof(struct stat64_i386) == 96);

/* One call, decoded. */
struct call {
	enum layout layout;
	int dirfd;
	uint64_t path;		/* 0: none (the file dirfd) */
	int flags;		/* AT_* */
	unsigned int mask;	/* statx's */
	uint64_t buf;
};

void cusemu_run_chardev_add(dev_t fs, ino_t ino, unsigned int major,
			    unsigned int minor)
{
	struct chardev c = { fs, ino, major, minor };

	if (!chardevs)
		chardevs = g_array_new(FALSE, FALSE, sizeof(c));
	g_array_append_val(chardevs, c);
}

void cusemu_run_chardev_ids(uid_t uid, gid_t gid)
{
	g_autofree char *u = NULL, *g = NULL;

	command_uid = uid;
	command_gid = gid;
	if (g_file_get_contents("/proc/sys/kernel/overflowuid", &u, NULL,
				NULL))
		overflow_uid = (uid_t)strtoul(u, NULL, 10);
	if (g_file_get_contents("/proc/sys/kernel/overflowgid", &g, NULL,
				NULL))
		overflow_gid = (gid_t)strtoul(g, NULL, 10);
}

/* An owner as the command's namespace shows it: this namespace's root
 * is the user there, any other id one it does not map. */
static uint32_t shown_uid(uid_t id)
{
	return id == 0 ? command_uid : overflow_uid;
}

static uint32_t shown_gid(gid_t id)
{
	return id == 0 ? command_gid : overflow_gid;
}

bool cusemu_run_chardev_wanted(void)
{
	return chardevs && chardevs->len;
}

int cusemu_run_chardev_filter(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int fd = -EINVAL, err = ctx ? 0 : -ENOMEM;

	/* The caller holds CAP_SYS_ADMIN in its namespace: no no_new_privs,
	 * which would change what the command's programs may do. */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!err && seccomp_arch_native() == SCMP_ARCH_X86_64)
		err = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	for (size_t i = 0; !err && i < G_N_ELEMENTS(stat_calls); i++) {
		int nr = seccomp_syscall_resolve_name(stat_calls[i]);

		if (nr != __NR_SCMP_ERROR)
			err = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
	}
	if (!err)
		err = seccomp_load(ctx);
	if (!err)
		fd = seccomp_notify_fd(ctx);
	if (ctx)
		seccomp_release(ctx);
	return err ? err : fd;
}

/* The call's arguments, by ABI and number; false for none of ours. */
static bool decode(const struct seccomp_notif *req, struct call *c)
{
	const __u64 *a = req->data.args;
	bool i386 = req->data.arch == SCMP_ARCH_X86;
	char *name = seccomp_syscall_resolve_num_arch(req->data.arch,
						      req->data.nr);
	bool known = true;

	if (!name)
		return false;
	*c = (struct call){ .layout = i386 ? LAYOUT_STAT64_I386 : LAYOUT_STAT,
			    .dirfd = AT_FDCWD };
	if (!strcmp(name, "stat") || !strcmp(name, "stat64") ||
	    !strcmp(name, "lstat") || !strcmp(name, "lstat64")) {
		c->path = a[0];
		c->buf = a[1];
		c->flags = name[0] == 'l' ? AT_SYMLINK_NOFOLLOW : 0;
		/* i386's own stat(), with its 16-bit numbers, is not ours. */
		known = !i386 || strstr(name, "64");
	} else if (!strcmp(name, "fstat") || !strcmp(name, "fstat64")) {
		c->dirfd = (int)a[0];
		c->buf = a[1];
		c->flags = AT_EMPTY_PATH;
		known = !i386 || strstr(name, "64");
	} else if (!strcmp(name, "newfstatat") ||
		   !strcmp(name, "fstatat64")) {
		c->dirfd = (int)a[0];
		c->path = a[1];
		c->buf = a[2];
		c->flags = (int)a[3];
	} else if (!strcmp(name, "statx")) {
		c->layout = LAYOUT_STATX;
		c->dirfd = (int)a[0];
		c->path = a[1];
		c->flags = (int)a[2];
		c->mask = (unsigned int)a[3];
		c->buf = a[4];
	} else {
		known = false;
	}
	free(name);
	return known;
}

/* The string at addr in process pid, up to PATH_MAX; NULL if unreadable. */
static char *read_path(pid_t pid, uint64_t addr)
{
	g_autofree char *path = g_malloc(PATH_MAX);
	size_t got = 0;

	/* A page at a time: the string may end just before one it lacks. */
	while (got < PATH_MAX) {
		size_t page = 4096 - ((addr + got) & 4095);
		size_t want = MIN(page, PATH_MAX - got);
		struct iovec local = { path + got, want };
		struct iovec remote = { (void *)(uintptr_t)(addr + got), want };

		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) !=
		    (ssize_t)want)
			return NULL;
		if (memchr(path + got, '\0', want))
			return g_steal_pointer(&path);
		got += want;
	}
	return NULL;
}

/* Where this process finds what the call names, through pid's /proc. */
static char *resolve(pid_t pid, const struct call *c, const char *path)
{
	g_autofree char *base =
		c->dirfd == AT_FDCWD
			? g_strdup_printf("/proc/%d/cwd", (int)pid)
			: g_strdup_printf("/proc/%d/fd/%d", (int)pid, c->dirfd);

	if (path && path[0] == '/')
		return g_strdup_printf("/proc/%d/root%s", (int)pid, path);
	if (path && *path)
		return g_strconcat(base, "/", path, NULL);
	if (path && !(c->flags & AT_EMPTY_PATH))
		return NULL;	/* "" without AT_EMPTY_PATH: ENOENT */
	return g_steal_pointer(&base);
}

static const struct chardev *find(dev_t fs, ino_t ino)
{
	for (guint i = 0; chardevs && i < chardevs->len; i++) {
		const struct chardev *c =
			&g_array_index(chardevs, struct chardev, i);

		if (c->fs == fs && c->ino == ino)
			return c;
	}
	return NULL;
}

/* The kernel's new_encode_dev(): the number a 32-bit field carries. */
static uint32_t encode_dev(unsigned int major, unsigned int minor)
{
	return (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
}

/*
 * The call's answer in its layout, as the kernel would give it for a
 * character device of that number, into out; its size, or -errno. st is
 * the file's stat already taken; statx asks for its own fields.
 */
static ssize_t answer(const struct call *c, const char *where,
		      const struct chardev *d, struct stat st, void *out)
{
	int follow = c->flags & AT_SYMLINK_NOFOLLOW;
	struct statx *sx = out;

	if (c->layout == LAYOUT_STATX) {
		if (statx(AT_FDCWD, where, follow | (c->flags & AT_STATX_SYNC_TYPE),
			  c->mask, sx))
			return -errno;
		sx->stx_mode = (uint16_t)((sx->stx_mode & ~S_IFMT) | S_IFCHR);
		sx->stx_mask |= STATX_TYPE;
		sx->stx_rdev_major = d->major;
		sx->stx_rdev_minor = d->minor;
		sx->stx_size = 0;
		sx->stx_blocks = 0;
		sx->stx_uid = shown_uid(sx->stx_uid);
		sx->stx_gid = shown_gid(sx->stx_gid);
		return sizeof(*sx);
	}
	st.st_mode = (st.st_mode & ~S_IFMT) | S_IFCHR;
	st.st_rdev = makedev(d->major, d->minor);
	st.st_size = 0;
	st.st_blocks = 0;
	st.st_uid = shown_uid(st.st_uid);
	st.st_gid = shown_gid(st.st_gid);
	if (c->layout == LAYOUT_STAT) {
		memcpy(out, &st, sizeof(st));
		return sizeof(st);
	}
	*(struct stat64_i386 *)out = (struct stat64_i386){
		.st_dev = encode_dev(major(st.st_dev), minor(st.st_dev)),
		.st_ino32 = (uint32_t)st.st_ino,
		.st_mode = st.st_mode,
		.st_nlink = (uint32_t)st.st_nlink,
		.st_uid = st.st_uid,
		.st_gid = st.st_gid,
		.st_rdev = encode_dev(d->major, d->minor),
		.st_blksize = (uint32_t)st.st_blksize,
		.st_atime_ = (uint32_t)st.st_atim.tv_sec,
		.st_atime_nsec = (uint32_t)st.st_atim.tv_nsec,
		.st_mtime_ = (uint32_t)st.st_mtim.tv_sec,
		.st_mtime_nsec = (uint32_t)st.st_mtim.tv_nsec,
		.st_ctime_ = (uint32_t)st.st_ctim.tv_sec,
		.st_ctime_nsec = (uint32_t)st.st_ctim.tv_nsec,
		.st_ino = st.st_ino,
	};
	return sizeof(struct stat64_i386);
}

/* One notification: answered here for a device's file, else let go on. */
static void serve_one(int fd, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	union {
		struct stat st;
		struct stat64_i386 st64;
		struct statx sx;
	} out;
	g_autofree char *path = NULL, *where = NULL;
	struct iovec local = { &out, 0 }, remote;
	const struct chardev *d;
	struct call c;
	struct stat st;
	ssize_t n;

	*resp = (struct seccomp_notif_resp){
		.id = req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE
	};
	if (!decode(req, &c))
		return;
	if (c.path && !(path = read_path(req->pid, c.path)))
		return;		/* the kernel says EFAULT */
	/* A descriptor is the file itself, not the link /proc shows. */
	if (!path || !*path)
		c.flags &= ~AT_SYMLINK_NOFOLLOW;
	where = resolve(req->pid, &c, path);
	if (!where || fstatat(AT_FDCWD, where, &st,
			      c.flags & AT_SYMLINK_NOFOLLOW) ||
	    !(d = find(st.st_dev, st.st_ino)))
		return;
	n = answer(&c, where, d, st, &out);
	/* The caller may have gone, and its pid be another's by now. */
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id))
		return;
	resp->flags = 0;
	if (n < 0) {
		resp->error = (int32_t)n;
		return;
	}
	local.iov_len = (size_t)n;
	remote = (struct iovec){ (void *)(uintptr_t)c.buf, (size_t)n };
	if (process_vm_writev(req->pid, &local, 1, &remote, 1, 0) != n)
		resp->error = -EFAULT;
}

/*
 * The kernel's own requests (libseccomp's wrappers want state that only a
 * process that loaded a filter has). When this thread ends, so does the
 * listener: the command's stat calls then fail with ENOSYS, and none waits
 * for an answer that cannot come.
 */
static void *serve(void *data)
{
	int fd = GPOINTER_TO_INT(data);
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		serve_one(fd, &req, &resp);
		/* ENOENT: the caller is gone meanwhile. */
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	close(fd);
	return NULL;
}

int cusemu_run_chardev_serve(int listener)
{
	pthread_t thread;
	int err = pthread_create(&thread, NULL, serve,
				 GINT_TO_POINTER(listener));

	if (!err)
		pthread_detach(thread);
	return -err;
}
