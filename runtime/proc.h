/* SPDX-License-Identifier: MIT */
/*
 * What only /proc tells about a client: the ELF class of its program and
 * its descriptor for a node. Answered by the /proc helper process when the
 * daemon has one (see sandbox.h), else read here.
 */
#ifndef CUSEMU_PROC_H
#define CUSEMU_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* ELFCLASS32 or ELFCLASS64 of /proc/PID/exe, or -errno. */
int cusemu_proc_elf_class(pid_t pid);

/*
 * The name of PID's program, /proc/PID/comm without its newline, in buf;
 * its length, or -errno. Read here: every process may read any comm.
 */
int cusemu_proc_comm(pid_t pid, char *buf, size_t size);

/*
 * How long thread TID of process PID ran on a CPU, in ns (the first field
 * of /proc/PID/task/TID/schedstat), or -errno. Read here: every process
 * may read any schedstat.
 */
int64_t cusemu_proc_thread_cpu_ns(pid_t pid, pid_t tid);

/*
 * The state of process PID as /proc/PID/stat gives it ('R', 'S', 'D', 'T'
 * when stopped, 't' when stopped by a tracer, ...), or -errno. Read here:
 * every process may read any stat.
 */
int cusemu_proc_state(pid_t pid);

/* The descriptor of PID whose link in /proc/PID/fd is path, or -errno. */
int cusemu_proc_fd_of(pid_t pid, const char *path);

/*
 * From now on ask the helper on sock (a SOCK_SEQPACKET socket) and never
 * read /proc here: the sandbox that follows may forbid it.
 */
void cusemu_proc_use_helper(int sock);

/*
 * The helper's side: answer the queries that arrive on sock until the
 * daemon closes it, then exit. A seal request (cusemu_proc_seal()) runs
 * seal(arg) and answers with its result.
 */
__attribute__((noreturn)) void cusemu_proc_serve(int sock, int (*seal)(uint32_t arg));

/* Have the helper run its seal function with arg; its result, or -errno. */
int cusemu_proc_seal(uint32_t arg);

/*
 * Before cusemu_proc_seal() only: let the helper, which keeps
 * CAP_SYS_PTRACE, read and write the memory of a process while one of its
 * threads is blocked in ioctl(2) on a file of device dev (a FUSE mount's
 * st_dev): what CUSE's retry lets a server do to its callers, and no more.
 * For a root daemon over FUSE, which drops that capability itself. 0, or
 * -errno (-EPERM once sealed).
 */
int cusemu_proc_allow_reach(dev_t dev);

/* Whether cusemu_proc_allow_reach() was granted. */
bool cusemu_proc_reaches(void);

/*
 * len bytes of process pid at the count ranges of remote, read into buf or
 * written from it by this process itself (process_vm_readv/writev): 0;
 * -EFAULT for memory the process does not have; -errno when this process
 * may not reach it (EPERM, ESRCH).
 */
int cusemu_proc_vm(pid_t pid, void *buf, size_t len,
		   const struct iovec *remote, unsigned int count, bool write);

/*
 * len bytes of the process of thread tid, which is blocked in an ioctl on
 * the mount, at the count ranges of remote in turn: read into buf, or
 * written from it, by the helper (as many ranges as fit in one query
 * each). 0; -EFAULT for memory the process does not have; -EPERM when the
 * thread is not so blocked or the helper may not reach it; -EAGAIN or
 * -ETIMEDOUT when the helper is late, -EIO when it is gone.
 */
int cusemu_proc_reach(pid_t tid, const struct iovec *remote,
		      unsigned int count, void *buf, size_t len, bool write);

#endif
