// SPDX-License-Identifier: GPL-2.0
/*
 * bench-decoder: lookups per second of codectl's SFrame decoder against
 * libsframe's sframe_find_fre(), on every pc of an ELF file's functions,
 * measured side by side in one run.
 *
 *   bench-decoder ELF [SECONDS]
 *
 * Each lookup yields a complete rule: ours is sframe_find() (binary
 * search, FRE scan, CFA/RA/FP decoded); libsframe's is sframe_find_fre()
 * plus the base register and the CFA, RA and FP offsets, which is what an
 * unwinder needs of it.  Ours runs with its FDE index
 * (sframe_index_build()), without for reference, and as the module's
 * unwinder uses it: the flat table (sframe_flat_build(), its bucket
 * index, sframe_flat_find()) built from the section.  The pcs are
 * visited in a shuffled order (fixed seed), as samples would hit them.
 * The sides alternate in rounds of one pass over all pcs until each has
 * run SECONDS (default 2).  Prints the rates, "ratio: X" (the indexed
 * decoder / libsframe) and "flat ratio: X" (the flat table /
 * libsframe).  A benchmark, not a test: it fails only if our
 * configurations disagree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "elfsec.h"
#include "flat-build.h"
#include "sframe.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One pass of ours; returns the number of pcs found. */
static size_t pass_ours(const struct sframe_sec *sec, const uint64_t *pcs,
			size_t n, int64_t *sum)
{
	struct sframe_rule r;
	size_t i, found = 0;

	for (i = 0; i < n; i++) {
		if (sframe_find(sec, pcs[i], &r))
			continue;
		found++;
		*sum += r.cfa.off + r.ra.off + r.fp.off + r.cfa.base;
	}
	return found;
}

/* One pass of the flat table; returns the number of pcs found. */
static size_t pass_flat(const struct sframe_flat *flat, const uint64_t *pcs,
			size_t n, int64_t *sum)
{
	const struct sframe_rule *r;
	size_t i, found = 0;

	for (i = 0; i < n; i++) {
		r = sframe_flat_find(flat, pcs[i]);
		if (!r)
			continue;
		found++;
		*sum += r->cfa.off + r->ra.off + r->fp.off + r->cfa.base;
	}
	return found;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 2.0, t_ours = 0, t_lib = 0;
	double t_plain = 0, t_flat = 0, t;
	size_t n = 0, cap = 1 << 20, i, found_ours = 0, found_lib = 0;
	size_t found_plain = 0, found_flat = 0;
	uint64_t rounds_ours = 0, rounds_lib = 0, rounds_plain = 0, *pcs;
	uint64_t rounds_flat = 0;
	int64_t sum_ours = 0, sum_lib = 0, sum_plain = 0, sum_flat = 0;
	struct sframe_flat flat;
	uint32_t flat_words;
	int err;
	uint32_t idx_words, *idx;
	struct elf_section es;
	struct sframe_sec sec, plain;
	uint8_t shift;
	void *d;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-decoder ELF [SECONDS]\n");
		return 2;
	}
	if (elf_find_sframe(argv[1], &es) ||
	    sframe_init(&sec, es.addr, es.size, es.data, NULL, NULL)) {
		fprintf(stderr, "bench-decoder: %s: no usable .sframe\n", argv[1]);
		return 2;
	}
	d = lib_open(es.data, es.size);
	if (!d)
		return 2;
	pcs = malloc(cap * sizeof(*pcs));
	for (uint32_t f = 0; f < sec.hdr.num_fdes; f++) {
		struct sframe_fde fde;

		if (sframe_fde_at(&sec, f, &fde))
			continue;
		for (uint64_t pc = fde.func_start;
		     pc < fde.func_start + fde.func_size; pc++) {
			if (n == cap)
				pcs = realloc(pcs, (cap *= 2) * sizeof(*pcs));
			pcs[n++] = pc;
		}
	}
	for (i = n; i > 1; i--) {	/* Fisher-Yates */
		size_t j = next_rand() % i;
		uint64_t tmp = pcs[i - 1];

		pcs[i - 1] = pcs[j];
		pcs[j] = tmp;
	}
	printf("%s: SFrame v%u, %u FDEs, %u FREs, %zu pcs, %.1f s per side\n",
	       argv[1], sec.hdr.version, sec.hdr.num_fdes, sec.hdr.num_fres, n,
	       secs);

	/* Ours as the module uses it: with the FDE index. */
	idx_words = sframe_index_words(&sec, &shift);
	idx = calloc(idx_words ? idx_words : 1, sizeof(*idx));
	plain = sec;
	if (!idx_words || sframe_index_build(&sec, idx, idx_words, shift)) {
		fprintf(stderr, "bench-decoder: cannot index the FDEs\n");
		return 2;
	}
	printf("FDE index: %u words (%zu bytes), %u bytes of text per bucket\n",
	       idx_words, idx_words * sizeof(*idx), 1u << shift);
	err = flat_build(&sec, &flat, &flat_words);
	if (err) {
		fprintf(stderr, "bench-decoder: flat table: %s\n",
			sframe_strerror(err));
		return 2;
	}
	printf("flat table: %u entries, %u rules, %u buckets\n", flat.nr,
	       flat.nr_rules, flat.index_nb);

	while (t_ours < secs || t_lib < secs || t_plain < secs ||
	       t_flat < secs) {
		t = now();
		found_ours = pass_ours(&sec, pcs, n, &sum_ours);
		t_ours += now() - t;
		rounds_ours++;
		t = now();
		found_plain = pass_ours(&plain, pcs, n, &sum_plain);
		t_plain += now() - t;
		rounds_plain++;
		t = now();
		found_flat = pass_flat(&flat, pcs, n, &sum_flat);
		t_flat += now() - t;
		rounds_flat++;
		t = now();
		found_lib = lib_pass(d, es.addr, pcs, n, &sum_lib);
		t_lib += now() - t;
		rounds_lib++;
	}
	printf("ours, indexed:  %12.0f lookups/s (%zu of %zu pcs found)\n",
	       rounds_ours * n / t_ours, found_ours, n);
	printf("ours, no index: %12.0f lookups/s (%zu of %zu pcs found)\n",
	       rounds_plain * n / t_plain, found_plain, n);
	printf("ours, flat:     %12.0f lookups/s (%zu of %zu pcs found)\n",
	       rounds_flat * n / t_flat, found_flat, n);
	printf("libsframe:      %12.0f lookups/s (%zu of %zu pcs found)\n",
	       rounds_lib * n / t_lib, found_lib, n);
	printf("checksums: %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n",
	       sum_ours, sum_plain, sum_flat, sum_lib);
	printf("ratio without index: %.2f\n",
	       (rounds_plain / t_plain) / (rounds_lib / t_lib));
	printf("ratio: %.2f\n", (rounds_ours / t_ours) / (rounds_lib / t_lib));
	printf("flat ratio: %.2f\n",
	       (rounds_flat / t_flat) / (rounds_lib / t_lib));
	lib_close(d);
	free(idx);
	/* Ours must agree exactly; libsframe is compared elsewhere. */
	return found_ours == found_plain && sum_ours == sum_plain &&
	       found_ours == found_flat && sum_ours == sum_flat ? 0 : 1;
}
