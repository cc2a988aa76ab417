/* SPDX-License-Identifier: MIT */
/* <stdlib.h> is outside cusemu's portable surface: a model that includes it cannot build as a module. */
#error "<stdlib.h> is outside cusemu's portable surface, which a kernel module is built on: malloc and free: use cusemu_zalloc() and cusemu_free() of <cusemu/memory.h>"
