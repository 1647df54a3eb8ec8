/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels codectl builds against (6.1 .. 7.2),
 * in one place.  The HAVE_* macros come from probe.sh, which tests the
 * kernel's headers; no code outside this file looks at kernel versions.
 */
#ifndef CODECTL_COMPAT_H
#define CODECTL_COMPAT_H

#include "version.h"

#endif /* CODECTL_COMPAT_H */
