/* SPDX-License-Identifier: MIT */
/* <unistd.h> is outside cusemu's portable surface: a model that includes it cannot build as a module. */
#error "<unistd.h> is outside cusemu's portable surface, which a kernel module is built on: unistd: sleep with cusemu_usleep() of <cusemu/sched.h>; a module has no files of its own"
