/* SPDX-License-Identifier: MIT */
/*
 * One pthread key for every libfuse session instead of one each: see
 * fuse-keys.c.
 */
#ifndef CUSEMU_FUSE_KEYS_H
#define CUSEMU_FUSE_KEYS_H

#include <stdbool.h>

/*
 * While on (on the calling thread only), the key libfuse's
 * fuse_session_new() asks for is the shared one.
 */
void cusemu_fuse_keys_share(bool on);

#endif
