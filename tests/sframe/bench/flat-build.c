// SPDX-License-Identifier: GPL-2.0
/* The benchmarks' flat table, built as the module builds it. */
#include <stdlib.h>
#include <string.h>

#include "flat-build.h"

int flat_build(const struct sframe_sec *sec, struct sframe_flat *flat,
	       uint32_t *index_words)
{
	uint32_t n, bits = 1, *hash;
	uint8_t shift = 0;
	int err;

	memset(flat, 0, sizeof(*flat));
	*index_words = 0;
	err = sframe_flat_count(sec, &n);
	if (err)
		return err;
	while ((1U << bits) <= n)
		bits++;
	flat->offs = calloc(n, sizeof(*flat->offs));
	flat->rule_of = calloc(n, sizeof(*flat->rule_of));
	flat->rules = calloc(n, sizeof(*flat->rules));
	hash = calloc(1U << bits, sizeof(*hash));
	err = SFRAME_E_READ;
	if (flat->offs && flat->rule_of && flat->rules && hash)
		err = sframe_flat_build(sec, flat, n, n, hash, bits);
	free(hash);
	if (err)
		return err;
	*index_words = sframe_flat_index_words(flat, &shift);
	if (*index_words) {
		uint32_t *index = calloc(*index_words, sizeof(*index));

		if (!index)
			return SFRAME_E_READ;
		sframe_flat_index_build(flat, index, *index_words, shift);
	}
	return SFRAME_OK;
}

void flat_free(struct sframe_flat *flat)
{
	free(flat->offs);
	free(flat->rule_of);
	free(flat->rules);
	free(flat->index);
}
