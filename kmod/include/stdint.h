/* SPDX-License-Identifier: MIT */
/* <stdint.h> in a module that cusemu-kmod writes: uint8_t to uint64_t,
 * int8_t to int64_t and their limits, from the kernel's own headers. */
#ifndef CUSEMU_KMOD_STDINT_H
#define CUSEMU_KMOD_STDINT_H
#include <linux/limits.h>
#include <linux/types.h>

#define INT8_MIN S8_MIN
#define INT8_MAX S8_MAX
#define UINT8_MAX U8_MAX
#define INT16_MIN S16_MIN
#define INT16_MAX S16_MAX
#define UINT16_MAX U16_MAX
#define INT32_MIN S32_MIN
#define INT32_MAX S32_MAX
#define UINT32_MAX U32_MAX
#define INT64_MIN S64_MIN
#define INT64_MAX S64_MAX
#define UINT64_MAX U64_MAX
#endif
