/* SPDX-License-Identifier: MIT */
/*
 * The user-space API of a sensor hub: a device that samples up to eight
 * channels at a common rate and queues the samples until they are read.
 *
 * Commands use ioctl type 0xBC, which Documentation/userspace-api/ioctl/
 * ioctl-number.rst leaves unassigned (0xB7 next door is shared by nsfs and
 * remoteproc, 0xB8 by mshv and the CN10K DPI driver).
 *
 * Fixed-width types only. One struct is not laid out alike by every ABI:
 * struct sensorhub_info has a __u64 after a __u32, which x86-64 aligns to
 * 8 bytes and i386 to 4, so its size, and with it the number of
 * SENSORHUB_IOC_INFO, differ between 64-bit and 32-bit x86 programs. A
 * driver serves both (see the model's compat table).
 */
#ifndef SENSORHUB_H
#define SENSORHUB_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SENSORHUB_IOC_TYPE 0xBC

/* The interface version SENSORHUB_IOC_INFO reports: major << 16 | minor. */
#define SENSORHUB_VERSION 0x00010000

/* The most samples one SENSORHUB_IOC_READ moves. */
#define SENSORHUB_READ_MAX 256

/* Sampling rates SENSORHUB_IOC_SET_RATE accepts, in Hz. */
#define SENSORHUB_RATE_MIN 1
#define SENSORHUB_RATE_MAX 1000

struct sensorhub_info {
	__u32 version;		/* SENSORHUB_VERSION */
	__u64 serial;		/* the hub's serial number, never 0 */
	__u32 channels;		/* channels sampled, 1 to 8 */
	__u32 rate_hz;		/* current sampling rate */
	char name[16];		/* the hub's name, NUL-terminated */
};

/*
 * One sample. Each scan of the hub yields one sample per channel, all
 * with the scan's time, so timestamps never decrease along the queue.
 */
struct sensorhub_sample {
	__u64 timestamp_ns;	/* CLOCK_MONOTONIC time of the scan */
	__s32 value;		/* the reading */
	__u32 channel;		/* 0 to channels - 1 */
};

/*
 * The argument of SENSORHUB_IOC_READ. samples is a pointer carried as a
 * __u64, e.g. (__u64)(uintptr_t)buf, so that the struct has one layout on
 * every ABI.
 */
struct sensorhub_read {
	__u64 samples;		/* in: struct sensorhub_sample[count] */
	__u32 count;		/* in: room in samples, at most
				 * SENSORHUB_READ_MAX */
	__u32 returned;		/* out: samples written */
};

/* Fills struct sensorhub_info. */
#define SENSORHUB_IOC_INFO _IOR(SENSORHUB_IOC_TYPE, 0x01, struct sensorhub_info)

/*
 * Moves up to count queued samples, oldest first, to samples and sets
 * returned: 0 when none is queued, as it does not wait (poll(2) reports
 * POLLIN while samples are queued). Fails with EINVAL when count exceeds
 * SENSORHUB_READ_MAX, EFAULT when samples cannot be written.
 */
#define SENSORHUB_IOC_READ _IOWR(SENSORHUB_IOC_TYPE, 0x02, struct sensorhub_read)

/*
 * The sampling rate in Hz: SENSORHUB_RATE_MIN to SENSORHUB_RATE_MAX, else
 * EINVAL. It goes back to its start-up value when the last open file of
 * the device is closed.
 */
#define SENSORHUB_IOC_SET_RATE _IOW(SENSORHUB_IOC_TYPE, 0x03, __u32)
#define SENSORHUB_IOC_GET_RATE _IOR(SENSORHUB_IOC_TYPE, 0x04, __u32)

#endif
