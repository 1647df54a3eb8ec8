/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcodectl internals, not installed. */
#ifndef LIBCODECTL_INTERNAL_H
#define LIBCODECTL_INTERNAL_H

#include "codectl.h"

/* Everything is hidden (-fvisibility=hidden) except what is marked. */
#define CODECTL_EXPORT	__attribute__((visibility("default")))

/* The process-wide descriptor of the device, opened on first use. */
int codectl_get_fd(void);

#endif /* LIBCODECTL_INTERNAL_H */
