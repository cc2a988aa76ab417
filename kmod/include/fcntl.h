/* SPDX-License-Identifier: MIT */
/* <fcntl.h> is outside cusemu's portable surface: a model that includes it cannot build as a module. */
#error "<fcntl.h> is outside cusemu's portable surface, which a kernel module is built on: files: a module has no files of its own to open"
