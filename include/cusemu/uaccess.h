/* SPDX-License-Identifier: MIT */
/*
 * User memory for ioctl handlers, in the style of the kernel's uaccess.h.
 * Over CUSE the daemon cannot read a client's memory: it names the ranges it
 * needs and the kernel sends the call again with them (FUSE_IOCTL_RETRY).
 * The helpers hide that; they act on the call the current thread serves, as
 * the kernel's act on `current`. A fetch step names memory and reads what has
 * arrived; a handler copies only what its fetch step named (the handler
 * contract of <cusemu/device.h>).
 */
#ifndef CUSEMU_UACCESS_H
#define CUSEMU_UACCESS_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

/* An address in the calling process. */
typedef uint64_t cusemu_uptr_t;

/*
 * Per call and direction, the most CUSE moves: 128 KiB, in at most 256
 * ranges for both directions together. Asking for more fails the call with
 * -ENOMEM, as the kernel would.
 */
#define CUSEMU_USER_MAX_BYTES (128u * 1024u)
#define CUSEMU_USER_MAX_RANGES 256u

/*
 * Copy n bytes from the client. Returns the number of bytes NOT copied (0 on
 * success), like the kernel's: `if (cusemu_copy_from_user(...)) return
 * -EFAULT;` is right in a fetch step whether the bytes are missing for now
 * (they are named, and the call is retried with them whatever the step
 * returns) or can never be read. In a handler, bytes the fetch step did not
 * name fail the call with -EIO.
 *
 * The client's memory is read once per call: the bytes of every range the
 * fetch step read or named for reading are those the handler copies, in
 * cusemud (what CUSE's retry brought) and in a kernel module (what the
 * fetch step copied in). A handler that copies its struct in again gets
 * what the fetch step checked, even if another thread of the client
 * changed it meanwhile: no double fetch, whichever way a model is written.
 */
unsigned long cusemu_copy_from_user(void *to, cusemu_uptr_t from,
				    unsigned long n);

/*
 * Copy n bytes to the client, from a handler, into a range its fetch step
 * named for writing. They reach its memory when the handler returns >= 0;
 * bytes of a range that the handler leaves unwritten keep their value when
 * the range was also read, and are cleared otherwise. A fetch step that
 * writes fails the call with -EIO.
 */
unsigned long cusemu_copy_to_user(cusemu_uptr_t to, const void *from,
				  unsigned long n);

/*
 * For fetch steps: name ranges the handler will need, without copying, so
 * that one round trip fetches every range of one level (the messages of an
 * I2C_RDWR, say). Return 0 when the range is already there, -EAGAIN when it
 * will come with the retry, -EFAULT or -ENOMEM when it never can.
 */
int cusemu_user_want_read(cusemu_uptr_t addr, size_t len);
int cusemu_user_want_write(cusemu_uptr_t addr, size_t len);

/* True while some named range is still to be fetched. */
bool cusemu_user_pending(void);

/* True when the call comes from a 32-bit process (the kernel's name). */
bool cusemu_in_compat_syscall(void);

/* A 32-bit caller's pointer, widened. */
static inline cusemu_uptr_t cusemu_compat_ptr(uint32_t uptr)
{
	return (cusemu_uptr_t)uptr;
}

#define cusemu_get_user(x, uptr)                                        \
	({                                                              \
		__typeof__(x) __gu_val;                                 \
		int __gu_err = cusemu_copy_from_user(&__gu_val, (uptr), \
						     sizeof(__gu_val))  \
				       ? -EFAULT                        \
				       : 0;                             \
		if (!__gu_err)                                          \
			(x) = __gu_val;                                 \
		__gu_err;                                               \
	})

#define cusemu_put_user(x, uptr)                                        \
	({                                                              \
		__typeof__(x) __pu_val = (x);                           \
		cusemu_copy_to_user((uptr), &__pu_val, sizeof(__pu_val)) \
			? -EFAULT                                       \
			: 0;                                            \
	})

#endif
