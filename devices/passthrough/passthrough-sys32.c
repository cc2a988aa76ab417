/* SPDX-License-Identifier: MIT */
/*
 * The 32-bit system call entry, from a 64-bit process: int $0x80 with the
 * i386 numbers (asm/unistd_32.h) and arguments in ebx, ecx and edx. The
 * kernel then serves the call as it serves an i386 program's: the driver's
 * compat_ioctl, in_compat_syscall() in its read and write. Every address
 * passed must be below 4 GiB: the memory of such a call is laid in a
 * per-thread buffer mapped with MAP_32BIT.
 */
#define G_LOG_DOMAIN "cusemu-passthrough"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "passthrough.h"

/* asm/unistd_32.h */
#define NR32_READ 3
#define NR32_WRITE 4
#define NR32_GETPID 20
#define NR32_IOCTL 54

#if defined(__x86_64__)
static long sys32(long nr, uint32_t a, uint32_t b, uint32_t c)
{
	long ret;

	/* The entry clears r8 to r11 on the way back. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11", "cc");
	/* The result is the 32-bit one, sign-extended. */
	return (long)(int32_t)ret;
}
#else
static long sys32(long nr, uint32_t a, uint32_t b, uint32_t c)
{
	return -ENOSYS;
}
#endif

static bool probe_sys32(void)
{
	pid_t child = fork();
	int status;

	if (child < 0)
		return false;
	if (child == 0) {
		/* A kernel without IA32 emulation kills this with SIGSEGV. */
		signal(SIGSEGV, SIG_DFL);
		_exit(sys32(NR32_GETPID, 0, 0, 0) == getpid() ? 0 : 1);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool pt_filtered(void)
{
	g_autofree char *status = NULL;
	const char *line;

	if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
		return false;
	line = strstr(status, "\nSeccomp:");
	return line && atoi(line + strlen("\nSeccomp:")) != 0;
}

bool pt_sys32_available(void)
{
	static gsize once;
	static bool available;

	if (g_once_init_enter(&once)) {
		if (pt_filtered())
			g_warning("passthrough: the first passthrough device "
				  "came after the sandbox was in place: its "
				  "32-bit callers get the compat shim only; "
				  "give the device at start-up instead");
		else
			available = probe_sys32();
		g_once_init_leave(&once, 1);
	}
	return available;
}

long pt_sys32_ioctl(int fd, uint32_t cmd, uint32_t arg)
{
	return sys32(NR32_IOCTL, (uint32_t)fd, cmd, arg);
}

long pt_sys32_read(int fd, uint32_t buf, uint32_t count)
{
	return sys32(NR32_READ, (uint32_t)fd, buf, count);
}

long pt_sys32_write(int fd, uint32_t buf, uint32_t count)
{
	return sys32(NR32_WRITE, (uint32_t)fd, buf, count);
}

static void unmap_low(gpointer p)
{
	munmap(p, PT_LOW_BYTES);
}

static GPrivate low_buffer = G_PRIVATE_INIT(unmap_low);

void *pt_low_buffer(void)
{
	void *p = g_private_get(&low_buffer);

	if (p)
		return p;
	p = mmap(NULL, PT_LOW_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	g_private_set(&low_buffer, p);
	return p;
}
