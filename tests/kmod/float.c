/* SPDX-License-Identifier: MIT */
/* A model's line that builds in user space alone, which cusemu-kmod
 * knows by no name, for test-kmod. */
#include "cusemu/device.h"

double float_half(int x);

double float_half(int x)
{
	return x / 2.0;
}
