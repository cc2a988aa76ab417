/* SPDX-License-Identifier: MIT */
/* <time.h> is outside cusemu's portable surface: a model that includes it cannot build as a module. */
#error "<time.h> is outside cusemu's portable surface, which a kernel module is built on: clock_gettime and nanosleep: use cusemu_time_ns() and cusemu_usleep() of <cusemu/sched.h>"
