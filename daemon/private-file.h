/* SPDX-License-Identifier: MIT */
/*
 * Files written for one user alone (recordings): found without following
 * a symbolic link, of that user, made 0600. The daemon opens its own
 * record= files so, and cusemuctl those it hands the daemon for its user.
 */
#ifndef CUSEMU_PRIVATE_FILE_H
#define CUSEMU_PRIVATE_FILE_H

#include <stdbool.h>

#include <glib.h>

/* What cusemu_private_file_open() does to a file that is there. */
enum cusemu_private_open {
	CUSEMU_PRIVATE_EMPTY,	/* empties it: the daemon's own record= */
	CUSEMU_PRIVATE_KEEP,	/* leaves it: whoever takes it empties it */
};

/*
 * path opened for appending: a regular file of this process's effective
 * user with no other name (hard link), or a new one made 0600 (*created
 * says which, when created is not NULL). No component of path may be a
 * symbolic link (each directory is opened from the last with O_NOFOLLOW,
 * as openat2's RESOLVE_NO_SYMLINKS does), so no one who can write a
 * directory on the way can send the write elsewhere. A node is never
 * opened. With check_only, nothing is opened or made: only the checks.
 * -1 (or false) with a message that says what path is and what to do,
 * the file left as it was; the caller prefixes whose path it is.
 */
int cusemu_private_file_open(const char *path, enum cusemu_private_open how,
			     bool *created, GError **error);
bool cusemu_private_file_check(const char *path, GError **error);

/*
 * fd, handed over by a client that opened it: a regular file open for
 * writing, which is made append-only and emptied. false with a message.
 */
bool cusemu_private_file_take(int fd, GError **error);

/*
 * The file that cusemu_private_file_open() made at path and that fd holds
 * is removed, if it is still there under that name and still empty: a
 * refused request leaves no file behind it. Nothing is said.
 */
void cusemu_private_file_unmake(const char *path, int fd);

#endif
