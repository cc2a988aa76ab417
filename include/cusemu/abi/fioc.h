/* SPDX-License-Identifier: MIT */
/*
 * The fioc protocol of libfuse's CUSE example (example/ioctl.h), shared by
 * the fioc device model and its clients. The native names compile to the
 * caller's own ABI; the *32 names describe what an i386 caller built with
 * _FILE_OFFSET_BITS=64 sends, as the device's compat table sees it.
 */
#ifndef CUSEMU_ABI_FIOC_H
#define CUSEMU_ABI_FIOC_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/ioctl.h>

/* Historical types on purpose: size_t and pointers are what break on i386. */
enum {
	FIOC_GET_SIZE = _IOR('E', 0, size_t),
	FIOC_SET_SIZE = _IOW('E', 1, size_t),

	/* Not _IOC-encoded: they carry a pointer to struct fioc_rw_arg. */
	FIOC_READ = _IO('E', 2),
	FIOC_WRITE = _IO('E', 3),
};

struct fioc_rw_arg {
	off_t offset;
	void *buf;
	size_t size;
	size_t prev_size;	/* out: total size before the call */
	size_t new_size;	/* out: total size after the call */
};

/* The i386 view: size_t is 4 bytes, so GET/SET have other numbers. */
#define FIOC_GET_SIZE32 _IOR('E', 0, uint32_t)
#define FIOC_SET_SIZE32 _IOW('E', 1, uint32_t)

/* i386 aligns a 64-bit member to 4 bytes: no padding anywhere, 24 bytes. */
struct fioc_rw_arg32 {
	int64_t offset;
	uint32_t buf;
	uint32_t size;
	uint32_t prev_size;
	uint32_t new_size;
} __attribute__((packed, aligned(4)));

#endif
