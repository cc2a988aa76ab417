/* SPDX-License-Identifier: MIT */
/*
 * Files written for one user alone: the walk that follows no symbolic
 * link, and the checks of what it finds (private-file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "private-file.h"

static void close_fdp(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define autoclose __attribute__((cleanup(close_fdp)))

/* What st is, for a message: "a directory", "a symbolic link", ... */
static const char *kind_of(const struct stat *st)
{
	return S_ISLNK(st->st_mode)    ? "a symbolic link"
	       : S_ISDIR(st->st_mode)  ? "a directory"
	       : S_ISCHR(st->st_mode)  ? "a character device"
	       : S_ISBLK(st->st_mode)  ? "a block device"
	       : S_ISFIFO(st->st_mode) ? "a FIFO"
	       : S_ISSOCK(st->st_mode) ? "a socket"
	       : S_ISREG(st->st_mode)  ? "a regular file"
				       : "not a regular file";
}

static void set_errno(GError **error, int err, const char *fmt, ...)
	G_GNUC_PRINTF(3, 4);

static void set_errno(GError **error, int err, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *text = NULL;

	va_start(ap, fmt);
	text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error_literal(error, G_FILE_ERROR, g_file_error_from_errno(err),
			    text);
}

/*
 * The directory that holds path's last component, opened O_PATH with no
 * symbolic link on the way; *name is that component (in path). -1 with a
 * message.
 */
static int open_parent(const char *path, const char **name, GError **error)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	g_autoptr(GString) walked = g_string_new(path[0] == '/' ? "/" : "");
	int dir = open(path[0] == '/' ? "/" : ".",
		       O_PATH | O_DIRECTORY | O_CLOEXEC);
	guint n = g_strv_length(parts);
	struct stat st;

	*name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!**name || !strcmp(*name, ".") || !strcmp(*name, "..")) {
		set_errno(error, EISDIR, "it names a directory; give the path "
					 "of a file");
		goto fail;
	}
	for (guint i = 0; dir >= 0 && i + 1 < n; i++) {
		int next;

		if (!*parts[i] || !strcmp(parts[i], "."))
			continue;
		g_string_append_printf(walked, "%s%s",
				       walked->len && walked->str[walked->len -
								  1] != '/'
					       ? "/" : "",
				       parts[i]);
		next = openat(dir, parts[i],
			      O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next >= 0) {
			close(dir);
			dir = next;
			continue;
		}
		if (errno == ENOENT)
			set_errno(error, ENOENT,
				  "the directory %s does not exist: make it "
				  "first",
				  walked->str);
		else if (!fstatat(dir, parts[i], &st, AT_SYMLINK_NOFOLLOW) &&
			 S_ISLNK(st.st_mode))
			set_errno(error, ELOOP,
				  "%s on its path is a symbolic link, which is "
				  "never followed (whoever may write where it "
				  "is could point it elsewhere); give the path "
				  "without it",
				  walked->str);
		else
			set_errno(error, errno, "%s: %s", walked->str,
				  g_strerror(errno));
		goto fail;
	}
	if (dir < 0)
		set_errno(error, errno, "%s", g_strerror(errno));
	return dir;
fail:
	if (dir >= 0)
		close(dir);
	return -1;
}

/* What exists at name must be a regular file of this user, one link. */
static bool check_existing(const struct stat *st, GError **error)
{
	if (!S_ISREG(st->st_mode)) {
		set_errno(error, EEXIST,
			  "it is %s: only a regular file is written, and "
			  "replaced; give the path of a new or regular file "
			  "(the existing one is left untouched)",
			  kind_of(st));
		return false;
	}
	if (st->st_uid != geteuid()) {
		set_errno(error, EPERM,
			  "it belongs to uid %u, not to uid %u that writes "
			  "it: another user's file is never written into (its "
			  "owner could read and change what is written); "
			  "remove it, or give another path",
			  (unsigned int)st->st_uid, (unsigned int)geteuid());
		return false;
	}
	if (st->st_nlink != 1) {
		set_errno(error, EMLINK,
			  "it has %u names (hard links): a file with another "
			  "name is never written into; remove the others, or "
			  "give another path",
			  (unsigned int)st->st_nlink);
		return false;
	}
	return true;
}

/* name in dir: absent (*exists false), or checked. */
static bool check_at(int dir, const char *name, bool *exists, GError **error)
{
	struct stat st;

	*exists = !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW);
	if (!*exists && errno != ENOENT) {
		set_errno(error, errno, "%s", g_strerror(errno));
		return false;
	}
	return !*exists || check_existing(&st, error);
}

bool cusemu_private_file_check(const char *path, GError **error)
{
	autoclose int dir = -1;
	const char *name;
	bool exists;

	dir = open_parent(path, &name, error);
	return dir >= 0 && check_at(dir, name, &exists, error);
}

int cusemu_private_file_open(const char *path, enum cusemu_private_open how,
			     bool *created, GError **error)
{
	/* O_NONBLOCK: a FIFO made since the check does not hold the open. */
	const int flags = (how == CUSEMU_PRIVATE_MODEL ? O_RDWR
						       : O_WRONLY | O_APPEND) |
			  O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
	autoclose int dir = -1;
	const char *name;
	struct stat st;
	bool exists;
	int fd;

	if (created)
		*created = false;
	dir = open_parent(path, &name, error);
	/* A node is never opened: opening some starts the device. */
	if (dir < 0 || !check_at(dir, name, &exists, error))
		return -1;
	/* Made here, or there before: which one, the caller may ask. */
	fd = openat(dir, name, flags | O_CREAT | O_EXCL, 0600);
	if (fd >= 0 && created)
		*created = true;
	if (fd < 0 && errno == EEXIST)
		fd = openat(dir, name, flags);
	if (fd < 0) {
		set_errno(error, errno, "%s",
			  errno == ELOOP ? "it is a symbolic link, which is "
					   "never followed; give the path of a "
					   "new or regular file"
					 : g_strerror(errno));
		return -1;
	}
	/* What was opened is checked again: it may have changed since. */
	if (fstat(fd, &st) < 0 || !check_existing(&st, error) ||
	    (how == CUSEMU_PRIVATE_EMPTY && ftruncate(fd, 0) < 0)) {
		if (error && !*error)
			set_errno(error, errno, "%s", g_strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void cusemu_private_file_unmake(const char *path, int fd)
{
	autoclose int dir = -1;
	const char *name;
	struct stat mine, there;

	dir = open_parent(path, &name, NULL);
	if (dir >= 0 && !fstat(fd, &mine) && mine.st_size == 0 &&
	    !fstatat(dir, name, &there, AT_SYMLINK_NOFOLLOW) &&
	    there.st_dev == mine.st_dev && there.st_ino == mine.st_ino)
		unlinkat(dir, name, 0);
}

/* fd's status flags, when it is a regular file (else -1, error set): the
 * only kind a file handed over may be, which use says what it is for. */
static int handed_regular(int fd, const char *use, GError **error)
{
	struct stat st;
	int flags = fcntl(fd, F_GETFL);

	if (fstat(fd, &st) < 0 || flags < 0) {
		set_errno(error, errno, "%s", g_strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		set_errno(error, EINVAL, "the file handed over is %s: only a "
					 "regular file is %s",
			  kind_of(&st), use);
		return -1;
	}
	return flags;
}

bool cusemu_private_file_take(int fd, GError **error)
{
	int flags = handed_regular(fd, "written", error);

	if (flags < 0)
		return false;
	if ((flags & O_ACCMODE) == O_RDONLY) {
		set_errno(error, EBADF, "the file handed over is open for "
					"reading only");
		return false;
	}
	if (fcntl(fd, F_SETFL, flags | O_APPEND) < 0 || ftruncate(fd, 0) < 0) {
		set_errno(error, errno, "%s", g_strerror(errno));
		return false;
	}
	return true;
}

bool cusemu_private_file_take_model(int fd, GError **error)
{
	int flags = handed_regular(fd, "used", error);

	if (flags < 0)
		return false;
	if ((flags & O_ACCMODE) != O_RDWR || (flags & O_APPEND)) {
		set_errno(error, EBADF, "the file handed over is not open for "
					"reading and writing in place");
		return false;
	}
	return true;
}

/* Whether a key's name (NAME_file), or an option's (also file), names a
 * model's file. A key file= is replay's recording, which it only reads
 * and which a member may not give. */
static bool names_file(const char *name, size_t len, bool option)
{
	return (option && len == 4 && !strncmp(name, "file", 4)) ||
	       (len > 5 && !strncmp(name + len - 5, "_file", 5));
}

GPtrArray *cusemu_private_files_of_add(const char *text)
{
	GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
	const char *colon = strchr(text, ':');
	g_auto(GStrv) pairs = colon ? g_strsplit(colon + 1, ",", -1) : NULL;

	for (guint i = 0; pairs && pairs[i]; i++) {
		const char *eq = strchr(pairs[i], '=');
		g_auto(GStrv) options = NULL;

		if (!eq)
			continue;
		if (g_str_has_prefix(pairs[i], "record=")) {
			g_ptr_array_add(files, g_strconcat("r", eq + 1, NULL));
			continue;
		}
		if (names_file(pairs[i], (size_t)(eq - pairs[i]), false)) {
			if (eq[1])
				g_ptr_array_add(files,
						g_strconcat("m", eq + 1, NULL));
			continue;
		}
		options = g_strsplit_set(eq + 1, "+:;", -1);
		for (guint j = 0; options[j]; j++) {
			const char *oeq = strchr(options[j], '=');

			if (oeq && oeq[1] &&
			    names_file(options[j], (size_t)(oeq - options[j]),
				       true))
				g_ptr_array_add(files,
						g_strconcat("m", oeq + 1, NULL));
		}
	}
	return files;
}
