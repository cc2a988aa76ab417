/* SPDX-License-Identifier: MIT */
/*
 * Client facts from /proc, read here or asked of the /proc helper: one
 * request and one answer per query on a SOCK_SEQPACKET socket pair, under
 * a lock, since worker threads ask at once. The helper only ever reads
 * /proc/PID/exe and /proc/PID/fd of the pid it is given.
 */
#define G_LOG_DOMAIN "cusemu-proc"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "cusemu/device.h"
#include "proc.h"

enum proc_op {
	PROC_SEAL,
	PROC_ELF_CLASS,
	PROC_FD_OF,
};

struct proc_request {
	uint32_t op;
	int32_t pid;
	uint32_t arg;
	char path[64];		/* PROC_FD_OF: a node, "/dev/NAME" */
};

static int helper_sock = -1;
static GMutex helper_lock;

static int read_elf_class(pid_t pid)
{
	unsigned char ident[EI_NIDENT];
	char path[32];
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, ident, sizeof(ident));
	close(fd);
	if (n != (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	return ident[EI_CLASS];
}

static int read_fd_of(pid_t pid, const char *path)
{
	char dir[32], target[PATH_MAX];
	struct dirent *entry;
	int found = -ENOENT;
	DIR *d;

	if (pid <= 0)
		return -EINVAL;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while (found < 0 && (entry = readdir(d))) {
		ssize_t n;

		if (entry->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), entry->d_name, target,
			       sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, path))
			found = atoi(entry->d_name);
	}
	closedir(d);
	return found;
}

/* One query to the helper; -EIO once it is gone (never /proc here). */
static int ask(const struct proc_request *rq)
{
	int32_t answer = -EIO;
	ssize_t n;

	g_mutex_lock(&helper_lock);
	if (send(helper_sock, rq, sizeof(*rq), MSG_NOSIGNAL) ==
	    (ssize_t)sizeof(*rq)) {
		do
			n = recv(helper_sock, &answer, sizeof(answer), 0);
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(answer))
			answer = -EIO;
	}
	g_mutex_unlock(&helper_lock);
	return answer;
}

int cusemu_proc_elf_class(pid_t pid)
{
	if (helper_sock < 0)
		return read_elf_class(pid);
	return ask(&(struct proc_request){ .op = PROC_ELF_CLASS, .pid = pid });
}

int cusemu_proc_fd_of(pid_t pid, const char *path)
{
	struct proc_request rq = { .op = PROC_FD_OF, .pid = pid };

	if (helper_sock < 0)
		return read_fd_of(pid, path);
	if (strlen(path) >= sizeof(rq.path))
		return -ENAMETOOLONG;
	strcpy(rq.path, path);
	return ask(&rq);
}

void cusemu_proc_use_helper(int sock)
{
	helper_sock = sock;
}

int cusemu_proc_seal(uint32_t arg)
{
	if (helper_sock < 0)
		return -ENOTCONN;
	return ask(&(struct proc_request){ .op = PROC_SEAL, .arg = arg });
}

void cusemu_proc_serve(int sock, int (*seal)(uint32_t arg))
{
	struct proc_request rq;
	int32_t answer;
	ssize_t n;

	for (;;) {
		n = recv(sock, &rq, sizeof(rq), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);	/* the daemon is gone */
		if (n != (ssize_t)sizeof(rq)) {
			answer = -EINVAL;
		} else if (rq.op == PROC_SEAL) {
			answer = seal(rq.arg);
		} else if (rq.op == PROC_ELF_CLASS) {
			answer = read_elf_class(rq.pid);
		} else if (rq.op == PROC_FD_OF) {
			rq.path[sizeof(rq.path) - 1] = '\0';
			answer = read_fd_of(rq.pid, rq.path);
		} else {
			answer = -EINVAL;
		}
		if (send(sock, &answer, sizeof(answer), MSG_NOSIGNAL) < 0)
			_exit(0);
	}
}
