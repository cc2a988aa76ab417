/* SPDX-License-Identifier: MIT */
/*
 * Known answers for cusemu-abicheck (tests/test-abicheck): one command per
 * finding kind, each on a member named after it, and commands that are
 * clean. Not an API: every mistake here is on purpose.
 */
#ifndef ABICHECK_FINDINGS_H
#define ABICHECK_FINDINGS_H

#include <linux/ioctl.h>
#include <linux/time.h>
#include <linux/types.h>

/* layout and align64: 16 bytes on x86_64, 12 on i386. */
struct fx_align64 {
	__u32 before;
	__u64 wide;
};

struct fx_pointer {
	__u32 count;
	__u32 reserved;
	void *buf;
};

struct fx_long {
	long value;
};

/* padding: three bytes after the flag. */
struct fx_padding {
	__u8 flag;
	__u32 value;
};

struct fx_time {
	struct timeval stamp;
};

struct fx_bitfield {
	__u32 low : 4;
	__u32 high : 28;
};

enum fx_mode { FX_MODE_A, FX_MODE_B };

struct fx_enum {
	enum fx_mode mode;
};

struct fx_char {
	char sign;
	__u8 pad[3];
};

struct fx_plain {
	__u32 a;
	__u32 b;
};

/* The 36 bytes of struct rtc_time: with 'p' and 9, RTC_RD_TIME's number. */
struct fx_nine {
	__s32 v[9];
};

/* 20000 bytes: more than the 14-bit size field holds. */
struct fx_huge {
	__u8 bytes[20000];
};

#define FX_ALIGN64	_IOR('X', 1, struct fx_align64)
#define FX_POINTER	_IOW('X', 2, struct fx_pointer)
#define FX_LONG		_IOR('X', 3, struct fx_long)
#define FX_PADDING	_IOW('X', 4, struct fx_padding)
#define FX_TIME		_IOR('X', 5, struct fx_time)
#define FX_BITFIELD	_IOW('X', 6, struct fx_bitfield)
#define FX_ENUM		_IOW('X', 7, struct fx_enum)
#define FX_CHAR		_IOW('X', 8, struct fx_char)
#define FX_SIZEOF	_IOR('X', 9, sizeof(struct fx_plain))
#define FX_HUGE		_IOR('X', 10, struct fx_huge)
#define FX_COLLISION	_IOR('p', 0x09, struct fx_nine)
/* _IO: a value or a pointer, the number does not say (BLKGETSIZE takes a
 * long *). */
#define FX_UNSIZED	_IO('X', 11)

/* Clean: one table row serves both ABIs, and nothing to say (the tests
 * say FX_CLEAN_NONE=value). */
#define FX_CLEAN_NONE	_IO('X', 20)
#define FX_CLEAN_STRUCT	_IOWR('X', 21, struct fx_plain)
#define FX_CLEAN_U64	_IOW('X', 22, __u64)

/* An enumerator is a command too. */
enum {
	FX_CLEAN_ENUM = _IOR('X', 23, __u32),
};

#endif
