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
	/* Open for reading and writing where it is, not appending, and left
	 * as it is: a model's file (an EEPROM's contents) handed over. */
	CUSEMU_PRIVATE_MODEL,
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
 * fd, handed over for a model's file (CUSEMU_PRIVATE_MODEL): a regular
 * file open for reading and writing, not appending. false with a message.
 */
bool cusemu_private_file_take_model(int fd, GError **error);

/*
 * The files an add's text (MODEL:key=value,...) names that its sender
 * opens with its own rights and hands over, in the order they go: the
 * value of record= (a recording), and every model's file: the value of a
 * key NAME_file= when not empty, and each option file=PATH or
 * NAME_file=PATH inside a value (options separated by '+', ':' or ';',
 * as i2c's chips=eeprom@0x50:file=PATH). cusemuctl opens them in this order, and
 * the daemon takes them so. Each is "r" or "m" followed by the path.
 */
GPtrArray *cusemu_private_files_of_add(const char *text);

/*
 * The file that cusemu_private_file_open() made at path and that fd holds
 * is removed, if it is still there under that name and still empty: a
 * refused request leaves no file behind it. Nothing is said.
 */
void cusemu_private_file_unmake(const char *path, int fd);

#endif
