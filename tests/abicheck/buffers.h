/* SPDX-License-Identifier: MIT */
/*
 * A pointer and a count in a payload, the drivers' most common pattern,
 * for cusemu-abicheck --emit-compat's fetch steps (tests/test-abicheck,
 * tests/test-abicheck-compat) and the model that uses them
 * (tests/plugins/buffers.c). Not an API. The pointees:
 *   --pointee 'bufs_read.buf=struct bufs_sample[count]'
 *   --pointee 'bufs_read_ptr.buf=struct bufs_sample[len]'
 *   --pointee 'bufs_write.buf=struct bufs_sample[len]'
 *   --pointee 'bufs_levels.levels=long[n]'
 */
#ifndef ABICHECK_BUFFERS_H
#define ABICHECK_BUFFERS_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define BUFS_IOC_TYPE 0xBE

/* The most samples the device queues, and one call moves. */
#define BUFS_MAX 64

/* x86_64 aligns timestamp_ns to 8 bytes, i386 to 4: 24 bytes, and 16. */
struct bufs_sample {
	__u32 channel;
	__u64 timestamp_ns;
	__s32 value;
};

/* buf carries a pointer in a __u64; count: in, the room in buf; out, the
 * samples written. 16 bytes, and 12 on i386. */
struct bufs_read {
	__u64 buf;
	__u32 count;
};

/* A pointer and a length: 16 bytes, and 8 on i386. */
struct bufs_read_ptr {
	struct bufs_sample *buf;
	__u32 len;
};

struct bufs_write {
	const struct bufs_sample *buf;
	__u32 len;
};

/* n levels, each a long: 8 bytes, and 4 on i386. The payload is laid out
 * alike. */
struct bufs_levels {
	__u64 levels;
	__u32 n;
	__u32 pad;
};

/* Moves up to count queued samples, oldest first, to buf; EINVAL above
 * BUFS_MAX. */
#define BUFS_READ _IOWR(BUFS_IOC_TYPE, 1, struct bufs_read)
/* The same, len for count. */
#define BUFS_READ_PTR _IOWR(BUFS_IOC_TYPE, 2, struct bufs_read_ptr)
/* Queues len samples from buf; EINVAL above the room left. */
#define BUFS_WRITE _IOW(BUFS_IOC_TYPE, 3, struct bufs_write)
/* n levels, one per channel: channel i's is i * -1000, channel 7's 2^33
 * (too big for i386: EOVERFLOW). */
#define BUFS_LEVELS _IOR(BUFS_IOC_TYPE, 4, struct bufs_levels)

#endif
