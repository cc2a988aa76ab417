/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: reading the input as a stream of fields, and
 * a log policy under which a model bug aborts (so the fuzzer reports it)
 * while the daemon's ordinary messages stay quiet.
 */
#ifndef CUSEMU_FUZZ_COMMON_H
#define CUSEMU_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The fuzzer's bytes, consumed front to back; zeros once they run out. */
struct fuzz_input {
	const uint8_t *data;
	size_t size;
};

uint8_t fuzz_u8(struct fuzz_input *in);
uint16_t fuzz_u16(struct fuzz_input *in);
uint32_t fuzz_u32(struct fuzz_input *in);
uint64_t fuzz_u64(struct fuzz_input *in);
/* Copy up to n bytes (the rest zero); returns how many were left. */
size_t fuzz_bytes(struct fuzz_input *in, void *to, size_t n);

/*
 * Criticals (a failed g_return_if_fail) and the transport's warnings (a
 * handler returning a non-errno, asking for memory it cannot have) abort;
 * everything else is dropped.
 */
void fuzz_log_init(void);

/* libFuzzer's entry points, also driven by fuzz-standalone.c. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
