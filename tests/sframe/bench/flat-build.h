/* SPDX-License-Identifier: GPL-2.0 */
/* The benchmarks' flat table, built as the module builds it (flat-build.c). */
#ifndef CODECTL_BENCH_FLAT_BUILD_H
#define CODECTL_BENCH_FLAT_BUILD_H

#include <stdint.h>

#include "sframe.h"

/*
 * Build @flat (zeroed first; its arrays malloc'ed) from @sec, with its
 * bucket index; *@index_words gets the index's size.
 * Return: SFRAME_OK or an enum sframe_err code (SFRAME_E_READ: no memory).
 */
int flat_build(const struct sframe_sec *sec, struct sframe_flat *flat,
	       uint32_t *index_words);

/* Free what flat_build() allocated. */
void flat_free(struct sframe_flat *flat);

#endif
