/* SPDX-License-Identifier: MIT */
/*
 * cusemu-run: a command in a user, mount and PID namespace of its own,
 * where cusemud's devices sit at the paths the kernel gives them
 * (/dev/rtc0, /dev/input/event0...), served over FUSE: no root and no
 * CUSE needed. Nothing outlives the command: the mounts belong to the
 * namespace, and the end of its first process ends every other one.
 *
 * Three processes: this one (outside the PID namespace: it only waits
 * and passes signals on), the namespace's init (sets up /dev, starts the
 * daemon, binds its files, runs the command, answers its stat calls on
 * the devices as for character devices (chardev.c), reaps) and the command,
 * which runs in a user namespace nested in the first, as the user who
 * started cusemu-run and without capabilities.
 */
#define G_LOG_DOMAIN "cusemu-run"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "chardev.h"
#include "self.h"

/* In the namespace's own /dev: the daemon's mount, socket and log. */
#define RUN_DIR "/dev/.cusemu-run"
#define MOUNT_DIR RUN_DIR "/mnt"
/* In the mount: what the devices add to /sys and /run/udev, from / on. */
#define TREE_DIR MOUNT_DIR "/.root"
#define READY_TIMEOUT_S 30
#define STOP_TIMEOUT_S 5
/* The exit status of a failure of cusemu-run's own, as env(1) and
 * timeout(1) give 125: the command's own statuses stay its own. */
#define EXIT_SETUP 125

/* The host's nodes a program expects in /dev, bound into the new one. */
static const char *const kept_nodes[] = {
	"null", "zero", "full", "random", "urandom", "tty", "fuse",
};

static struct {
	char **devices;
	char **plugins;
	char *config;
	char *model;
	gboolean verbose;
	gboolean quiet;
	char **command;
} opt;

static struct {
	uid_t uid;		/* the user's, outside */
	gid_t gid;
	pid_t command;		/* in the namespace, once started */
} run;

G_GNUC_PRINTF(1, 2) G_GNUC_NORETURN
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cusemu-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_SETUP);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));
	int err = errno;

	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)strlen(text))
		die("cannot write '%s' to %s: %s", text, path, g_strerror(err));
}

/*
 * The calling process's user namespace maps inside to outside, one id
 * each: what an ordinary user may write without a setuid helper.
 */
static void map_ids(uid_t inside, uid_t outside, gid_t inside_gid,
		    gid_t outside_gid)
{
	g_autofree char *uids = g_strdup_printf("%u %u 1\n", inside, outside);
	g_autofree char *gids =
		g_strdup_printf("%u %u 1\n", inside_gid, outside_gid);

	write_file("/proc/self/uid_map", uids);
	write_file("/proc/self/setgroups", "deny");
	write_file("/proc/self/gid_map", gids);
}

static void enter_namespaces(void)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID))
		die("cannot make a user, mount and PID namespace: %s; "
		    "cusemu-run needs unprivileged user namespaces (sysctl "
		    "user.max_user_namespaces above 0, and "
		    "kernel.unprivileged_userns_clone=1 where it exists)",
		    g_strerror(errno));
	/* root inside: the daemon mounts FUSE and sets up /dev there. */
	map_ids(0, run.uid, 0, run.gid);
}

/* A new empty file or directory at path, to mount something on: 0, or
 * errno (EEXIST if something is there already). */
static int mount_point(const char *path, bool dir)
{
	int fd;

	if (dir)
		return mkdir(path, 0755) ? errno : 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Bind what fd names (a host node, opened before /dev was covered) at
 * path. */
static void bind_fd(int fd, const char *path, bool dir)
{
	g_autofree char *src = g_strdup_printf("/proc/self/fd/%d", fd);
	int err = mount_point(path, dir);

	if (err)
		die("cannot make %s: %s", path, g_strerror(err));
	if (mount(src, path, NULL, MS_BIND | (dir ? MS_REC : 0), NULL))
		die("cannot bind the host's %s: %s", path, g_strerror(errno));
}

static void symlink_or_die(const char *target, const char *path)
{
	if (symlink(target, path))
		die("cannot make %s: %s", path, g_strerror(errno));
}

/*
 * A /dev of the namespace's own (tmpfs), with what programs need of the
 * host's: the nodes above, the terminals (pts, ptmx, tty), fd and the
 * standard streams, and a fresh shm.
 */
static void make_dev(void)
{
	int fds[G_N_ELEMENTS(kept_nodes)];
	int pts = open("/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < G_N_ELEMENTS(kept_nodes); i++) {
		g_autofree char *path = g_strconcat("/dev/", kept_nodes[i],
						    NULL);

		fds[i] = open(path, O_PATH | O_CLOEXEC);
		if (fds[i] < 0 && !strcmp(kept_nodes[i], "fuse"))
			die("cannot open /dev/fuse: %s; cusemu-run serves "
			    "the devices over FUSE", g_strerror(errno));
	}
	if (mount("cusemu-run", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
		  "mode=0755,size=4m"))
		die("cannot mount a tmpfs over /dev: %s", g_strerror(errno));
	for (size_t i = 0; i < G_N_ELEMENTS(kept_nodes); i++) {
		g_autofree char *path = g_strconcat("/dev/", kept_nodes[i],
						    NULL);

		if (fds[i] >= 0) {
			bind_fd(fds[i], path, false);
			close(fds[i]);
		}
	}
	if (pts >= 0) {
		bind_fd(pts, "/dev/pts", true);
		close(pts);
		symlink_or_die("pts/ptmx", "/dev/ptmx");
	}
	if (mkdir("/dev/shm", 01777) ||
	    mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
		  "mode=1777"))
		die("cannot make /dev/shm: %s", g_strerror(errno));
	symlink_or_die("/proc/self/fd", "/dev/fd");
	symlink_or_die("/proc/self/fd/0", "/dev/stdin");
	symlink_or_die("/proc/self/fd/1", "/dev/stdout");
	symlink_or_die("/proc/self/fd/2", "/dev/stderr");
	if (mkdir("/dev/input", 0755) || mkdir(RUN_DIR, 0700) ||
	    mkdir(MOUNT_DIR, 0700))
		die("cannot make the directories of /dev: %s",
		    g_strerror(errno));
}

/*
 * An ordinary user's plugins, copied into the namespace's own /dev. The
 * daemon takes a plugin only from directories that root or its own user
 * owns; in the namespace the host's root shows as the overflow id, so
 * the user's plugin in /tmp or /home would be refused. The copy is read
 * with the user's rights and belongs to the daemon's user, as the user's
 * own file does outside. As root, ids keep their meaning: the daemon
 * checks the user's path itself.
 */
static void copy_plugins(void)
{
	if (run.uid == 0)
		return;
	for (guint i = 0; opt.plugins && opt.plugins[i]; i++) {
		g_autofree char *dir =
			g_strdup_printf(RUN_DIR "/plugins/%u", i);
		g_autofree char *base = g_path_get_basename(opt.plugins[i]);
		g_autofree char *copy = g_build_filename(dir, base, NULL);
		g_autofree char *image = NULL;
		g_autoptr(GError) error = NULL;
		gsize size;

		if (g_mkdir_with_parents(dir, 0700))
			die("cannot make %s: %s", dir, g_strerror(errno));
		if (!g_file_get_contents(opt.plugins[i], &image, &size,
					 &error) ||
		    !g_file_set_contents_full(copy, image, (gssize)size,
					      G_FILE_SET_CONTENTS_NONE,
					      0644, &error))
			die("cannot take the plugin %s: %s", opt.plugins[i],
			    error->message);
		g_free(opt.plugins[i]);
		opt.plugins[i] = g_steal_pointer(&copy);
	}
}

static char *daemon_program(void)
{
	const char *env = g_getenv("CUSEMU_DAEMON");

	if (env && *env)
		return g_strdup(env);
	if (cusemu_runs_installed(CUSEMU_BINDIR))
		return g_strdup(CUSEMU_SBINDIR "/cusemud");
	return g_strdup(CUSEMUD_BUILT);
}

static GPtrArray *daemon_argv(const char *program)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(argv, g_strdup(program));
	g_ptr_array_add(argv, g_strdup("--foreground"));
	g_ptr_array_add(argv, g_strdup("--control=" RUN_DIR "/control"));
	g_ptr_array_add(argv, g_strdup("--fuse=" MOUNT_DIR));
	if (opt.config)
		g_ptr_array_add(argv, g_strdup_printf("--config=%s",
						      opt.config));
	if (opt.model)
		g_ptr_array_add(argv, g_strdup_printf("--model=%s",
						      opt.model));
	for (char **p = opt.plugins; p && *p; p++)
		g_ptr_array_add(argv, g_strdup_printf("--plugin=%s", *p));
	for (char **d = opt.devices; d && *d; d++)
		g_ptr_array_add(argv, g_strdup_printf("--device=%s", *d));
	g_ptr_array_add(argv, NULL);
	return argv;
}

static void show_log(void)
{
	g_autofree char *log = NULL;

	if (g_file_get_contents(RUN_DIR "/log", &log, NULL, NULL) && *log)
		fputs(log, stderr);
}

/*
 * cusemud, told to say READY=1 on a socket of ours once every file
 * exists (the systemd notification it gives under Type=notify).
 */
static pid_t start_daemon(void)
{
	g_autofree char *program = daemon_program();
	g_autoptr(GPtrArray) argv = daemon_argv(program);
	struct sockaddr_un addr = { .sun_family = AF_UNIX,
				    .sun_path = RUN_DIR "/notify" };
	int sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	gint64 deadline;
	pid_t pid;

	if (sock < 0 || bind(sock, (struct sockaddr *)&addr, sizeof(addr)))
		die("cannot make the daemon's notification socket: %s",
		    g_strerror(errno));
	pid = fork();
	if (pid < 0)
		die("cannot start %s: %s", program, g_strerror(errno));
	if (pid == 0) {
		int log = opt.verbose ? -1
				      : open(RUN_DIR "/log",
					     O_WRONLY | O_CREAT | O_CLOEXEC,
					     0600);

		if (log >= 0)
			dup2(log, STDERR_FILENO);
		setenv("NOTIFY_SOCKET", addr.sun_path, 1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(program, (char **)argv->pdata);
		fprintf(stderr, "cusemu-run: cannot run %s: %s\n", program,
			g_strerror(errno));
		_exit(EXIT_SETUP);
	}
	deadline = g_get_monotonic_time() + READY_TIMEOUT_S * G_USEC_PER_SEC;
	for (;;) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		char msg[512];
		ssize_t n;
		int status;

		if (waitpid(pid, &status, WNOHANG) == pid) {
			show_log();
			die("cusemud ended before its devices were ready "
			    "(%s %d)",
			    WIFEXITED(status) ? "exit status" : "signal",
			    WIFEXITED(status) ? WEXITSTATUS(status)
					      : WTERMSIG(status));
		}
		if (g_get_monotonic_time() > deadline) {
			kill(pid, SIGKILL);
			show_log();
			die("cusemud was not ready within %d s",
			    READY_TIMEOUT_S);
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(sock, msg, sizeof(msg) - 1, 0);
		if (n <= 0)
			continue;
		msg[n] = '\0';
		if (strstr(msg, "READY=1"))
			break;
	}
	close(sock);
	return pid;
}

/*
 * Where the kernel puts the node of that name: the DEVNAME its uevent
 * file in /sys says (input/event0), from the class its model names; else
 * /dev/NAME. *number: its MAJOR and MINOR there, or 0 for a device of no
 * class.
 */
static char *kernel_path(const char *name, dev_t *number)
{
	g_autoptr(GDir) classes = g_dir_open(TREE_DIR "/sys/class", 0, NULL);
	const char *class;

	*number = 0;
	while (classes && (class = g_dir_read_name(classes))) {
		g_autofree char *uevent = g_strdup_printf(
			TREE_DIR "/sys/class/%s/%s/uevent", class, name);
		g_autofree char *text = NULL;
		const char *at, *major, *minor;

		if (!g_file_get_contents(uevent, &text, NULL, NULL))
			continue;
		major = strstr(text, "MAJOR=");
		minor = strstr(text, "MINOR=");
		if (major && minor)
			*number = makedev(strtoul(major + strlen("MAJOR="),
						  NULL, 10),
					  strtoul(minor + strlen("MINOR="),
						  NULL, 10));
		at = strstr(text, "DEVNAME=");
		if (at) {
			at += strlen("DEVNAME=");
			return g_strdup_printf("/dev/%.*s",
					       (int)strcspn(at, "\n"), at);
		}
	}
	return g_strconcat("/dev/", name, NULL);
}

/* Every file of the daemon's mount, bound at its kernel path. */
static void bind_devices(void)
{
	g_autoptr(GString) where = g_string_new(NULL);
	DIR *dir = opendir(MOUNT_DIR);
	struct dirent *e;

	if (!dir)
		die("cannot list the daemon's files: %s", g_strerror(errno));
	while ((e = readdir(dir))) {
		g_autofree char *src = NULL, *path = NULL, *parent = NULL;
		struct stat st;
		dev_t number;
		int err;

		if (e->d_name[0] == '.')
			continue;
		src = g_strconcat(MOUNT_DIR "/", e->d_name, NULL);
		path = kernel_path(e->d_name, &number);
		/* A device of a class is a character device to the command. */
		if (number && !stat(src, &st))
			cusemu_run_chardev_add(st.st_dev, st.st_ino,
					       major(number), minor(number));
		parent = g_path_get_dirname(path);
		if (g_mkdir_with_parents(parent, 0755))
			die("cannot make %s: %s", parent, g_strerror(errno));
		err = mount_point(path, false);
		if (err)
			die("cannot put device %s at %s: %s; give it another "
			    "name (name=)", e->d_name, path,
			    err == EEXIST ? "the path is one of /dev's own"
					  : g_strerror(err));
		if (mount(src, path, NULL, MS_BIND, NULL))
			die("cannot bind device %s at %s: %s", e->d_name,
			    path, g_strerror(errno));
		g_string_append_printf(where, " %s", path);
	}
	closedir(dir);
	if (!opt.quiet)
		fprintf(stderr, "cusemu-run: over FUSE (no CUSE):%s\n",
			where->len ? where->str : " no device");
}

/* One entry of a host directory, kept to be put back over a tmpfs. */
struct kept {
	char *name;
	int fd;			/* O_PATH, for a bind; -1 for a link */
	char *target;		/* a symbolic link's */
	bool dir;
};

static void kept_free(gpointer data)
{
	struct kept *k = data;

	if (k->fd >= 0)
		close(k->fd);
	g_free(k->target);
	g_free(k->name);
	g_free(k);
}

/* Puts at path what src is (an open file, or a link's target). */
static void put_back(const char *path, int fd, const char *target, bool dir)
{
	if (target)
		symlink_or_die(target, path);
	else
		bind_fd(fd, path, dir);
}

/*
 * Covers the host's directory dst with a tmpfs that holds the same
 * entries, each bound (or, for a link, made) again, but those named in
 * skip: the caller puts its own there. The host's directories of /sys
 * and /run are root's, where nothing can be added otherwise.
 */
static void shadow(const char *dst, GHashTable *skip)
{
	g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func(kept_free);
	g_autoptr(GDir) dir = g_dir_open(dst, 0, NULL);
	const char *name;

	while (dir && (name = g_dir_read_name(dir))) {
		g_autofree char *path = g_build_filename(dst, name, NULL);
		struct kept *k;
		struct stat st;

		if (g_hash_table_contains(skip, name) || lstat(path, &st))
			continue;
		k = g_new0(struct kept, 1);
		k->name = g_strdup(name);
		k->dir = S_ISDIR(st.st_mode);
		k->fd = S_ISLNK(st.st_mode)
				? -1
				: open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (S_ISLNK(st.st_mode))
			k->target = g_file_read_link(path, NULL);
		if (k->fd >= 0 || k->target)
			g_ptr_array_add(kept, k);
		else
			kept_free(k);
	}
	if (mount("cusemu-run", dst, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=1m"))
		die("cannot mount a tmpfs over %s: %s", dst, g_strerror(errno));
	for (guint i = 0; i < kept->len; i++) {
		struct kept *k = kept->pdata[i];
		g_autofree char *path = g_build_filename(dst, k->name, NULL);

		put_back(path, k->fd, k->target, k->dir);
	}
}

/* The class directories of /sys, and the device lists of its buses, hold
 * the daemon's devices alone. */
static bool replaced_whole(const char *dst)
{
	g_autofree char *parent = g_path_get_dirname(dst);

	return !strcmp(parent, "/sys/class") ||
	       !strcmp(parent, "/sys/devices/virtual") ||
	       (g_str_has_prefix(dst, "/sys/bus/") &&
		g_str_has_suffix(dst, "/devices"));
}

/*
 * The daemon's tree src, put at dst: a directory both have is merged
 * into, anything else of src's takes its place in dst, which is shadowed
 * for it.
 */
static void merge(const char *src, const char *dst)
{
	g_autoptr(GHashTable) place = g_hash_table_new_full(
		g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GDir) dir = g_dir_open(src, 0, NULL);
	GHashTableIter it;
	const char *name;

	while (dir && (name = g_dir_read_name(dir))) {
		g_autofree char *from = g_build_filename(src, name, NULL);
		g_autofree char *to = g_build_filename(dst, name, NULL);
		struct stat sf, st;

		if (!lstat(from, &sf) && S_ISDIR(sf.st_mode) &&
		    !lstat(to, &st) && S_ISDIR(st.st_mode) &&
		    !replaced_whole(to))
			merge(from, to);
		else
			g_hash_table_add(place, g_strdup(name));
	}
	if (!g_hash_table_size(place))
		return;
	shadow(dst, place);
	g_hash_table_iter_init(&it, place);
	while (g_hash_table_iter_next(&it, (gpointer *)&name, NULL)) {
		g_autofree char *from = g_build_filename(src, name, NULL);
		g_autofree char *to = g_build_filename(dst, name, NULL);
		g_autofree char *target = g_file_read_link(from, NULL);
		int fd = target ? -1 : open(from, O_PATH | O_CLOEXEC);
		struct stat sf;

		if (!target && (fd < 0 || fstat(fd, &sf)))
			die("cannot open %s: %s", from, g_strerror(errno));
		put_back(to, fd, target, !target && S_ISDIR(sf.st_mode));
		if (fd >= 0)
			close(fd);
	}
}

/* Room for one descriptor passed with SCM_RIGHTS, aligned as a cmsghdr. */
union control {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

/* The command's side: its stat calls go to the filter's descriptor,
 * sent to the first process; without a filter they stay its own. */
static void send_stat_calls(int sv[2])
{
	int listener = cusemu_run_chardev_filter();
	union control control = { 0 };
	struct iovec iov = { &listener, sizeof(listener) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;

	close(sv[0]);
	if (listener >= 0) {
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &listener, sizeof(int));
	}
	/* Nothing here may stat before the answers are served. */
	if (sendmsg(sv[1], &msg, 0) < 0)
		_exit(EXIT_SETUP);
	if (listener >= 0)
		close(listener);
	close(sv[1]);
}

/* The first process's side: serve them, or say why they stay files. */
static void serve_stat_calls(int sv[2])
{
	union control control;
	int got = -1, listener = -1;
	struct iovec iov = { &got, sizeof(got) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cmsg;
	int err;

	close(sv[1]);
	if (recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC) > 0 &&
	    (cmsg = CMSG_FIRSTHDR(&msg)) && cmsg->cmsg_type == SCM_RIGHTS)
		memcpy(&listener, CMSG_DATA(cmsg), sizeof(int));
	close(sv[0]);
	err = listener < 0 ? (got < 0 ? got : -EIO)
			   : cusemu_run_chardev_serve(listener);
	if (err)
		fprintf(stderr, "cusemu-run: the devices stay regular files "
				"to the command (no seccomp notification: %s)\n",
			g_strerror(-err));
}

/*
 * The command, in a user namespace nested in the first: the user's own
 * ids again, and no capability once it runs.
 */
static pid_t start_command(void)
{
	int sv[2] = { -1, -1 };
	pid_t pid;
	int err;

	if (cusemu_run_chardev_wanted() &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		die("cannot make a socket pair: %s", g_strerror(errno));
	pid = fork();
	if (pid < 0)
		die("cannot start %s: %s", opt.command[0], g_strerror(errno));
	if (pid) {
		if (sv[0] >= 0)
			serve_stat_calls(sv);
		return pid;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (sv[1] >= 0)
		send_stat_calls(sv);
	/*
	 * Root's too: the daemon, which holds no capability, may reach the
	 * memory of a process with capabilities in a namespace its own user
	 * owns, not in its own.
	 */
	if (unshare(CLONE_NEWUSER))
		die("cannot make the command's user namespace: %s",
		    g_strerror(errno));
	map_ids(run.uid, 0, run.gid, 0);
	/* The check of systemd's libudev that /sys is sysfs (our devices'
	 * directories are on FUSE), as umockdev turns it off. */
	setenv("SYSTEMD_DEVICE_VERIFY_SYSFS", "0", 1);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	execvp(opt.command[0], opt.command);
	err = errno;
	fprintf(stderr, "cusemu-run: cannot run %s: %s\n", opt.command[0],
		g_strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* A shell's status for a child's end: its exit status, 128 + a signal. */
static int status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static void on_stop_signal(int signo)
{
	if (run.command > 0)
		kill(run.command, signo);
}

static void stop_daemon(pid_t daemon)
{
	gint64 deadline = g_get_monotonic_time() +
			  STOP_TIMEOUT_S * G_USEC_PER_SEC;
	int status;

	kill(daemon, SIGTERM);
	while (waitpid(daemon, &status, WNOHANG) == 0) {
		if (g_get_monotonic_time() > deadline) {
			kill(daemon, SIGKILL);
			waitpid(daemon, &status, 0);
			break;
		}
		g_usleep(10 * 1000);
	}
}

/* The PID namespace's first process: its end ends all the others. */
static int init_main(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	pid_t daemon;
	int status = 0;

	/* Its parent is outside the namespace: getppid() says 0. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("cannot make the mounts private: %s", g_strerror(errno));
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL))
		die("cannot mount /proc for the namespace: %s",
		    g_strerror(errno));
	make_dev();
	copy_plugins();
	daemon = start_daemon();
	bind_devices();
	/* /sys and /run/udev as the kernel and udev would show the devices. */
	merge(TREE_DIR, "/");
	/* PID 1 gets only the signals it has handlers for: pass them on. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	cusemu_run_chardev_ids(run.uid, run.gid);
	run.command = start_command();
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		if (pid == run.command) {
			status = st;
			break;
		}
		if (pid == daemon) {
			fprintf(stderr, "cusemu-run: cusemud ended while the "
					"command ran\n");
			show_log();
			daemon = -1;
		}
	}
	if (daemon > 0)
		stop_daemon(daemon);
	return status_code(status);
}

static pid_t init_pid;

static void pass_signal(int signo)
{
	if (init_pid > 0)
		kill(init_pid, signo);
}

static void parse(int argc, char **argv)
{
	const GOptionEntry entries[] = {
		{ "device", 'd', 0, G_OPTION_ARG_STRING_ARRAY, &opt.devices,
		  "A device, as cusemud --device takes it (repeatable; "
		  "default: cusemud's default devices)", "SPEC" },
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &opt.config,
		  "A configuration file for cusemud", "FILE" },
		{ "plugin", 'p', 0, G_OPTION_ARG_FILENAME_ARRAY,
		  &opt.plugins, "A plugin of device models for cusemud "
		  "(repeatable)", "FILE" },
		{ "model", 'm', 0, G_OPTION_ARG_STRING, &opt.model,
		  "The kernel model cusemud plays (default: modern)",
		  "NAME" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opt.verbose,
		  "cusemud's log on standard error", NULL },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt.quiet,
		  "Say nothing of where the devices are", NULL },
		G_OPTION_ENTRY_NULL
	};
	g_autoptr(GOptionContext) ctx =
		g_option_context_new("[--] COMMAND [ARG]...");
	g_autoptr(GError) error = NULL;

	g_option_context_set_summary(
		ctx, "Runs COMMAND where cusemud's devices are at their "
		     "usual /dev paths (/dev/rtc0, /dev/watchdog0,\n"
		     "/dev/i2c-0, /dev/input/event0...) and in /sys and "
		     "udev's database, in a user,\nmount and PID namespace "
		     "of its own, served over FUSE: no root and no CUSE.\n"
		     "Exits with COMMAND's status (128 + the signal that "
		     "ended it), or 125 when\ncusemu-run itself fails.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	/* Options after COMMAND are COMMAND's. */
	g_option_context_set_strict_posix(ctx, TRUE);
	if (!g_option_context_parse(ctx, &argc, &argv, &error))
		die("%s (see --help)", error->message);
	if (argc > 1 && !strcmp(argv[1], "--")) {
		argc--;
		argv++;
	}
	if (argc < 2)
		die("no COMMAND to run (see --help)");
	opt.command = g_strdupv(argv + 1);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = pass_signal };
	int status;

	parse(argc, argv);
	run.uid = getuid();
	run.gid = getgid();
	enter_namespaces();
	init_pid = fork();
	if (init_pid < 0)
		die("cannot start the namespace's first process: %s",
		    g_strerror(errno));
	if (init_pid == 0)
		exit(init_main());
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(init_pid, &status, 0) < 0)
		if (errno != EINTR)
			die("lost the namespace's first process: %s",
			    g_strerror(errno));
	return status_code(status);
}
