/* SPDX-License-Identifier: MIT */
/*
 * What both ends of the model host's sockets do alike (proto.h): messages
 * with descriptors, and a call's ranges of user memory in shared memory.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

ssize_t host_recv_fds(int sock, void *buf, size_t len, int *fds, int n_fds,
		      int flags)
{
	char control[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control,
			      .msg_controllen = sizeof(control) };
	struct cmsghdr *c;
	ssize_t got;

	for (int i = 0; i < n_fds; i++)
		fds[i] = -1;
	do
		got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags);
	while (got < 0 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&msg); got >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (int i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (i < n_fds)
				fds[i] = fd;
			else
				close(fd);
		}
	}
	return got;
}

bool host_send_fds(int sock, const void *buf, size_t len, const int *fds,
		   int n_fds)
{
	char control[CMSG_SPACE(sizeof(int) * 2)] = { 0 };
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (n_fds > 2)
		return false;
	if (n_fds) {
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

void host_ranges_put(struct host_range *to,
		     const struct cusemu_user_ranges *from)
{
	for (unsigned int i = 0; i < from->count; i++)
		to[i] = (struct host_range){ from->r[i].addr, from->r[i].len,
					     from->r[i].off };
}

void host_ranges_get(struct cusemu_user_ranges *to,
		     const struct host_range *from, unsigned int count)
{
	to->count = count;
	for (unsigned int i = 0; i < count; i++)
		to->r[i] = (struct cusemu_user_range){ from[i].addr,
						       from[i].len,
						       from[i].off };
}
