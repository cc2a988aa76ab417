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

/*
 * path opened for appending and emptied: a regular file of this process's
 * effective user with no other name (hard link), or a new one made 0600.
 * No component of path may be a symbolic link (each directory is opened
 * from the last with O_NOFOLLOW, as openat2's RESOLVE_NO_SYMLINKS does), so
 * no one who can write a directory on the way can send the write elsewhere.
 * A node is never opened. With check_only, nothing is opened or made: only
 * the checks. -1 (or false) with a message that says what path is and
 * what to do, the file left as it was; the caller prefixes whose path it
 * is.
 */
int cusemu_private_file_open(const char *path, GError **error);
bool cusemu_private_file_check(const char *path, GError **error);

/*
 * fd, handed over by a client that opened it: a regular file open for
 * writing, which is made append-only and emptied. false with a message.
 */
bool cusemu_private_file_take(int fd, GError **error);

#endif
