// SPDX-License-Identifier: GPL-2.0
/*
 * The libsframe side of bench-decoder, in a translation unit of its own:
 * libsframe's sframe.h and codectl's declare the same names.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sframe-api.h>

#include "bench.h"

/*
 * The getters take the FDE type from binutils 2.46 (SFrame v3) on, whose
 * header alone defines SFRAME_FDE_TYPE_FLEX.
 */
#ifdef SFRAME_FDE_TYPE_FLEX
#define FDE_TYPE_ARG	SFRAME_FDE_TYPE_DEFAULT,
#else
#define FDE_TYPE_ARG
#endif

void *lib_open(const void *buf, size_t size)
{
	sframe_decoder_ctx *d;
	int err;

	d = sframe_decode((const char *)buf, size, &err);
	if (!d)
		fprintf(stderr, "bench-decoder: libsframe: %s\n", sframe_errmsg(err));
	return d;
}

size_t lib_pass(void *ctx, uint64_t sec_addr, const uint64_t *pcs, size_t n,
		int64_t *sum)
{
	sframe_decoder_ctx *d = ctx;
	sframe_frame_row_entry fre;
	size_t i, found = 0;
	int err;

	for (i = 0; i < n; i++) {
		if (sframe_find_fre(d, (int64_t)(pcs[i] - sec_addr), &fre))
			continue;
		found++;
		err = 0;
		*sum += sframe_fre_get_base_reg_id(&fre, &err);
		*sum += sframe_fre_get_cfa_offset(d, &fre, FDE_TYPE_ARG &err);
		*sum += sframe_fre_get_ra_offset(d, &fre, FDE_TYPE_ARG &err);
		err = 0;	/* no FP offset is a normal answer */
		*sum += sframe_fre_get_fp_offset(d, &fre, FDE_TYPE_ARG &err);
	}
	return found;
}

void lib_close(void *ctx)
{
	sframe_decoder_ctx *d = ctx;

	sframe_decoder_free(&d);
}
