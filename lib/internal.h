/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcodectl internals, not installed. */
#ifndef LIBCODECTL_INTERNAL_H
#define LIBCODECTL_INTERNAL_H

#include "codectl.h"

/* Everything is hidden (-fvisibility=hidden) except what is marked. */
#define CODECTL_EXPORT	__attribute__((visibility("default")))


#endif /* LIBCODECTL_INTERNAL_H */
