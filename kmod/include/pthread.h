/* SPDX-License-Identifier: MIT */
/* <pthread.h> is outside cusemu's portable surface: a model that includes it cannot build as a module. */
#error "<pthread.h> is outside cusemu's portable surface, which a kernel module is built on: threads: use a timer (cusemu_timer) or a wait queue (cusemu_waitq) of <cusemu/sched.h>, and struct cusemu_mutex of <cusemu/lock.h>"
