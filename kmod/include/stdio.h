/* SPDX-License-Identifier: MIT */
/* <stdio.h> is outside cusemu's portable surface: a model that includes it cannot build as a module. */
#error "<stdio.h> is outside cusemu's portable surface, which a kernel module is built on: stdio: log with cusemu_dev_info() and the rest of <cusemu/log.h>"
