/* SPDX-License-Identifier: MIT */
/*
 * The ABI of "rogue", the test model whose bugs a model host must contain
 * (tests/plugins/rogue.c), shared with its client
 * (client-tests/rogue-client.c). The same layout on both ABIs.
 */
#ifndef CUSEMU_TEST_ROGUE_H
#define CUSEMU_TEST_ROGUE_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct rogue_pair {
	__u32 in;
	__u32 out;		/* in * 2 + 1 */
};

/* The device's size= (a FIOC_GET_SIZE of its own). */
#define ROGUE_IOC_GET_SIZE _IOR('R', 1, __u64)
#define ROGUE_IOC_PAIR _IOWR('R', 2, struct rogue_pair)
/* The bugs: each never returns, or returns once the host is gone. */
#define ROGUE_IOC_NULL _IO('R', 3)		/* a NULL dereference */
#define ROGUE_IOC_DOUBLE_FREE _IO('R', 4)	/* of a 2000-byte chunk */
#define ROGUE_IOC_HEAP _IO('R', 5)		/* a write past a chunk, then free */
#define ROGUE_IOC_SPIN _IO('R', 6)		/* for ever, never sleeping */
#define ROGUE_IOC_DEADLOCK _IO('R', 7)		/* its own mutex, twice */
#define ROGUE_IOC_BLOCK _IO('R', 8)		/* a wait nothing ends */
#define ROGUE_IOC_EXIT _IO('R', 9)		/* exit(0) */
#define ROGUE_IOC_LEAK _IO('R', 10)		/* 1 GiB, a MiB at a time */
#define ROGUE_IOC_FORK _IO('R', 11)		/* fork() */
#define ROGUE_IOC_STACK _IO('R', 12)		/* recursion without end */
/* Returns 0 and writes nothing: the forgotten copy_to_user. */
#define ROGUE_IOC_FORGET _IOR('R', 13, __u64)
/* Sleeps arg milliseconds in the helpers, then returns 0. */
#define ROGUE_IOC_WAIT _IO('R', 14)
/* Writes over its host's call channels (the memory the daemon shares with
 * it), then waits until its caller gives up. */
#define ROGUE_IOC_SCRIBBLE _IO('R', 15)

/* What a model host may reach of the machine: PATH opened in the host
 * (O_RDONLY or O_RDWR, as flags says) and closed again; 0 or -errno. */
struct rogue_open {
	__u32 flags;
	char path[252];
};
#define ROGUE_IOC_OPEN _IOW('R', 16, struct rogue_open)
/* A copy of the next call channel the daemon hands its host (the
 * descriptor of the memory the two share), truncated: 0 when it was, else
 * -errno of ftruncate(), -ETIMEDOUT when no channel came within arg ms. */
#define ROGUE_IOC_TRUNCATE _IO('R', 17)

#endif
