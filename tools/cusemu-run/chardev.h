/* SPDX-License-Identifier: MIT */
/*
 * The command's stat() of the devices' files, answered as for character
 * devices (chardev.c): a seccomp user notification, served by a thread of
 * the namespace's first process.
 */
#ifndef CUSEMU_RUN_CHARDEV_H
#define CUSEMU_RUN_CHARDEV_H

#include <stdbool.h>
#include <sys/types.h>

/* The file (fs, ino) is a device numbered major:minor. */
void cusemu_run_chardev_add(dev_t fs, ino_t ino, unsigned int major,
			    unsigned int minor);

/* Whether any file was added. */
bool cusemu_run_chardev_wanted(void);

/* The ids the command's user namespace shows for this one's root. */
void cusemu_run_chardev_ids(uid_t uid, gid_t gid);

/*
 * In the command's process, before it leaves this user namespace: its
 * stat calls from now on go to the descriptor returned (or -errno).
 */
int cusemu_run_chardev_filter(void);

/* Answer them on a thread of this process: 0, or -errno. */
int cusemu_run_chardev_serve(int listener);

#endif
