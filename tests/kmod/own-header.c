/* SPDX-License-Identifier: MIT */
/* A model that includes a header of its own with <>, for test-kmod. */
#include <own-header.h>
