/* SPDX-License-Identifier: MIT */
/* <glib.h> is outside cusemu's portable surface: a model that includes it cannot build as a module. */
#error "<glib.h> is outside cusemu's portable surface, which a kernel module is built on: glib: use <cusemu/lock.h> (struct cusemu_mutex), <cusemu/sched.h> (cusemu_timer, cusemu_waitq, cusemu_time_ns), <cusemu/memory.h> (cusemu_zalloc, cusemu_strscpy) and <cusemu/log.h>"
