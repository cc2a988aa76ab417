/* SPDX-License-Identifier: MIT */
/*
 * cusemuctl trace's side: the daemon's trace lines (JSON, docs/daemon.md)
 * read back and told for people, one line each in the shape of strace,
 * ioctl payloads decoded member by member in the caller's ABI when a
 * uapi header's layouts are given (abicheck's probe).
 */
#ifndef CUSEMU_TRACE_PRINT_H
#define CUSEMU_TRACE_PRINT_H

#include <stdbool.h>

#include <glib.h>

/*
 * Append the text of one trace line to out, ending in '\n'. commands is
 * NULL, or what probe_headers() found (struct command *): their layouts
 * decode the payloads. The header line appends nothing. False when line
 * is not a trace line (then out is unchanged).
 */
bool cusemu_trace_print(GString *out, const char *line, GPtrArray *commands);

#endif
