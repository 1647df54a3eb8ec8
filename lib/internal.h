/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcodectl internals, not installed. */
#ifndef LIBCODECTL_INTERNAL_H
#define LIBCODECTL_INTERNAL_H

#include "codectl.h"

/* Everything is hidden (-fvisibility=hidden) except what is marked. */
#define CODECTL_EXPORT	__attribute__((visibility("default")))

struct dl_phdr_info;

/*
 * codectl_sframe_synth() for the FDEs starting in [@lo, @hi) (link-time
 * addresses) only, each cut at @hi: one executable segment's functions.
 */
int codectl__sframe_synth_range(int fd, uint64_t bias, uint64_t lo,
				uint64_t hi, uint64_t sec_addr,
				unsigned int flags, void **sec, size_t *size,
				struct codectl_synth_stats *stats);

/* Is the file open at @fd the object @info describes (same phdrs)? */
int codectl__file_is_object(int fd, const struct dl_phdr_info *info);


#endif /* LIBCODECTL_INTERNAL_H */
