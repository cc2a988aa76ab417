/* SPDX-License-Identifier: MIT */
/*
 * What is outside the portable surface, named in the words of cusemu-kmod:
 * the headers that stand in for libc's in a module's tree, the uses a
 * model's sources show before the build, and kbuild's errors read back.
 */
#ifndef CUSEMU_KMOD_OUTSIDE_H
#define CUSEMU_KMOD_OUTSIDE_H

#include <stdbool.h>

#include <glib.h>

/*
 * Write what stands in for libc's headers in the tree's include/, and an
 * error for each header of headers (the names of kmod_scan()), which
 * the kernel does not have either. false, said, when a file cannot be
 * written.
 */
bool kmod_write_libc_headers(const char *dir, GPtrArray *headers);

/*
 * Read a model's sources before the build, for what the compiler would
 * stop at or misread: each header included with <> that neither the
 * tree's stand-ins, the kernel, the SDK nor the source's include_dirs
 * (include_dirs[i] for sources[i]) have, added to headers for
 * kmod_write_libc_headers(), which turns each into an error that the
 * compile goes on after; and each spelling the kernel's macros break
 * (__attribute__((noinline))), a "FILE:LINE: ..." line added to out,
 * and the function such a line declares to broken (a set of names).
 * Follows the model's own headers that its includes name.
 */
void kmod_scan(char **sources, int n, GPtrArray **include_dirs,
	       GPtrArray *headers, GPtrArray *out, GHashTable *broken);

/*
 * kbuild's errors (log) in the words of this tool: each use outside the
 * surface a "FILE:LINE: ..." line added to out, with what to use
 * instead; *other gets how many errors it did not know, calls to the
 * functions of broken among them (their declarations were said).
 * Returns how many uses it named.
 */
unsigned int kmod_name_outside(const char *log, unsigned int *other,
			       GPtrArray *out, GHashTable *broken);

/*
 * The errors of log that kmod_name_outside() did not know, each said with
 * the model's line it comes from (the first of its include chain's) and
 * what to do; the frame's and the kernel's own are said as theirs.
 */
void kmod_name_other_errors(const char *log, char **sources, int n);

#endif
