/* SPDX-License-Identifier: GPL-2.0 */
/* bench-decoder: the libsframe side (bench-libsframe.c). */
#ifndef CODECTL_BENCH_H
#define CODECTL_BENCH_H

#include <stddef.h>
#include <stdint.h>

void *lib_open(const void *buf, size_t size);
/* One pass over @pcs; returns how many were found. */
size_t lib_pass(void *ctx, uint64_t sec_addr, const uint64_t *pcs, size_t n,
		int64_t *sum);
void lib_close(void *ctx);

#endif
