/* SPDX-License-Identifier: MIT */
/*
 * For models that tell their clients how a call reached them (probe, legacy,
 * slow): the report of <cusemu/abi/report.h> for the current call.
 */
#ifndef CUSEMU_REPORT_H
#define CUSEMU_REPORT_H

#include "cusemu/abi/report.h"
#include "cusemu/uaccess.h"

/* The method, the big lock depth and the ABI of the current call. */
struct cusemu_ioctl_report cusemu_report_current(void);

/* Copy that report to the client at uptr: 0 or -EFAULT. */
long cusemu_put_report(cusemu_uptr_t uptr);

#endif
