// SPDX-License-Identifier: GPL-2.0
/*
 * flat-check: the flat lookup table (sframe_flat_build/sframe_flat_find,
 * what the module unwinds with) against the decoder's own lookup,
 * sframe_find(), at every pc of every function of an ELF file's .sframe
 * section and at the byte on either side of each function.
 *
 *   flat-check ELF...
 *
 * Prints one line per file and "N passed, N failed".  Sections the
 * validation walk refuses count as failures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe.h"
#include "elfsec.h"

static int loc_eq(const struct sframe_loc *a, const struct sframe_loc *b)
{
	return a->kind == b->kind && a->base == b->base && a->off == b->off;
}

static int rule_eq(const struct sframe_rule *a, const struct sframe_rule *b)
{
	return loc_eq(&a->cfa, &b->cfa) && loc_eq(&a->ra, &b->ra) &&
	       loc_eq(&a->fp, &b->fp) && a->flags == b->flags;
}

/* Compare at @pc; returns 1 when they agree. */
static int agree(const struct sframe_sec *sec, const struct sframe_flat *flat,
		 uint64_t pc, const char *path)
{
	const struct sframe_rule *f = sframe_flat_find(flat, pc);
	struct sframe_flat plain = *flat;
	struct sframe_rule r;
	int err = sframe_find(sec, pc, &r);

	/* Without the index, the same entry. */
	plain.index = NULL;
	if (flat->index && sframe_flat_find(&plain, pc) != f) {
		printf("not ok - %s: pc 0x%" PRIx64 ": the index changes the answer\n",
		       path, pc);
		return 0;
	}
	if (err == SFRAME_OK ? f && rule_eq(f, &r) :
	    !f && (err == SFRAME_E_NOT_FOUND || err == SFRAME_E_NO_FRE))
		return 1;
	printf("not ok - %s: pc 0x%" PRIx64 ": decoder %s, flat %s\n", path,
	       pc, sframe_strerror(err), f ? "a different rule" : "none");
	return 0;
}

static int check(const char *path)
{
	struct sframe_flat flat;
	struct elf_section es;
	struct sframe_sec sec;
	uint32_t n, i, *hash, bits = 1, *index = NULL, words;
	uint8_t shift = 0;
	uint64_t pcs = 0;
	int err;

	if (elf_find_sframe(path, &es) ||
	    sframe_init(&sec, es.addr, es.size, es.data, NULL, NULL)) {
		printf("not ok - %s: no usable .sframe\n", path);
		return 0;
	}
	err = sframe_validate(&sec);
	if (!err)
		err = sframe_flat_count(&sec, &n);
	if (err) {
		printf("not ok - %s: %s\n", path, sframe_strerror(err));
		return 0;
	}
	while ((1U << bits) <= n)
		bits++;
	flat.offs = calloc(n, sizeof(*flat.offs));
	flat.rule_of = calloc(n, sizeof(*flat.rule_of));
	flat.rules = calloc(n, sizeof(*flat.rules));
	hash = calloc(1U << bits, sizeof(*hash));
	if (!flat.offs || !flat.rule_of || !flat.rules || !hash) {
		perror("flat-check");
		exit(2);
	}
	err = sframe_flat_build(&sec, &flat, n, n, hash, bits);
	if (err) {
		printf("not ok - %s: flat build: %s\n", path,
		       sframe_strerror(err));
		return 0;
	}
	words = sframe_flat_index_words(&flat, &shift);
	if (words) {
		index = calloc(words, sizeof(*index));
		if (!index) {
			perror("flat-check");
			exit(2);
		}
		sframe_flat_index_build(&flat, index, words, shift);
	}
	for (i = 0; i < sec.hdr.num_fdes; i++) {
		struct sframe_fde fde;
		uint64_t pc;

		if (sframe_fde_at(&sec, i, &fde))
			return 0;
		for (pc = fde.func_start - 1;
		     pc <= fde.func_start + fde.func_size; pc++, pcs++)
			if (!agree(&sec, &flat, pc, path))
				return 0;
	}
	printf("ok - %s: %" PRIu64 " pcs agree (%u entries, %u rules for %u FREs, %u buckets)\n",
	       path, pcs, flat.nr, flat.nr_rules, sec.hdr.num_fres,
	       flat.index_nb);
	free(flat.offs);
	free(flat.rule_of);
	free(flat.rules);
	free(hash);
	free(index);
	return 1;
}

int main(int argc, char **argv)
{
	int i, passed = 0, failed = 0;

	for (i = 1; i < argc; i++) {
		if (check(argv[i]))
			passed++;
		else
			failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
