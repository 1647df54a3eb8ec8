// SPDX-License-Identifier: GPL-2.0
/*
 * bench-decoder: lookups per second of codectl's SFrame decoder against
 * libsframe's sframe_find_fre(), on every pc of an ELF file's functions,
 * measured side by side in one run.
 *
 *   bench-decoder ELF [SECONDS [PCS [SIDE]]]
 *
 * Each lookup yields a complete rule: ours is sframe_find() (binary
 * search, FRE scan, CFA/RA/FP decoded); libsframe's is sframe_find_fre()
 * plus the base register and the CFA, RA and FP offsets, which is what an
 * unwinder needs of it.  Ours runs with its FDE index
 * (sframe_index_build()), without for reference, and as the module's
 * unwinder uses it: the flat table (sframe_flat_build(), its bucket
 * index, sframe_flat_find()) built from the section.  Two more searches
 * of the flat table's own arrays are the reference its figure is judged
 * against: a plain binary search of its offsets (no bucket index, a
 * branch per probe), and the bucket index with the plain search in the
 * bucket (sframe_flat_find() before its search stopped branching).  The
 * pcs are
 * visited in a shuffled order (fixed seed), as samples would hit them.
 * The sides alternate in rounds of one pass over all pcs until each has
 * run SECONDS (default 2).  Prints the rates, "ratio: X" (the indexed
 * decoder / libsframe) and "flat ratio: X" (the flat table /
 * libsframe).  A benchmark, not a test: it fails only if our
 * configurations disagree.
 *
 * SECONDS 0 runs one pass of each side over the first PCS shuffled pcs
 * (0: all), and SIDE (a key of sd[] below, or "none") only that side:
 * what bench-cost.sh runs under cachegrind to count each side's
 * instructions and cache misses per lookup, as the difference between
 * a run of the side and a run of none.
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
static __attribute__((noinline)) size_t
pass_ours(const struct sframe_sec *sec, const uint64_t *pcs, size_t n,
	  int64_t *sum)
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
static __attribute__((noinline)) size_t
pass_flat(const struct sframe_flat *flat, const uint64_t *pcs, size_t n,
	  int64_t *sum)
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

/*
 * The references: the last entry at or below @off among entries
 * [@lo, @hi) of the flat table's offsets, by the textbook binary search
 * (a branch per probe); NULL as sframe_flat_find() says it.
 */
static inline const struct sframe_rule *
ref_search(const struct sframe_flat *flat, uint32_t lo, uint32_t hi,
	   uint32_t off)
{
	uint32_t rule;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (flat->offs[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	rule = flat->rule_of[lo - 1];
	return rule == SFRAME_FLAT_NONE ? NULL : &flat->rules[rule];
}

/* The plain binary search of all the offsets, no bucket index. */
static inline const struct sframe_rule *
ref_plain(const struct sframe_flat *flat, uint64_t pc)
{
	if (pc < flat->base || pc - flat->base > 0xffffffffULL)
		return NULL;
	return ref_search(flat, 0, flat->nr, (uint32_t)(pc - flat->base));
}

/* The bucket index, then the plain binary search in the bucket. */
static inline const struct sframe_rule *
ref_bucket(const struct sframe_flat *flat, uint64_t pc)
{
	uint32_t off, b, lo, hi;

	if (pc < flat->base || pc - flat->base > 0xffffffffULL)
		return NULL;
	off = (uint32_t)(pc - flat->base);
	b = off >> flat->index_shift;
	if (!flat->index || b >= flat->index_nb)
		return ref_search(flat, 0, flat->nr, off);
	lo = flat->index[b] ? flat->index[b] - 1 : 0;
	hi = flat->index[b + 1];
	if (hi > flat->nr || lo > hi)
		return NULL;
	return ref_search(flat, lo, hi, off);
}

#define PASS_REF(name, find)						\
static __attribute__((noinline)) size_t					\
name(const struct sframe_flat *flat, const uint64_t *pcs, size_t n,	\
     int64_t *sum)							\
{									\
	const struct sframe_rule *r;					\
	size_t i, found = 0;						\
									\
	for (i = 0; i < n; i++) {					\
		r = find(flat, pcs[i]);					\
		if (!r)							\
			continue;					\
		found++;						\
		*sum += r->cfa.off + r->ra.off + r->fp.off + r->cfa.base; \
	}								\
	return found;							\
}
PASS_REF(pass_plain_bsearch, ref_plain)
PASS_REF(pass_bucket_bsearch, ref_bucket)

/* One side of the benchmark: its time, rounds, pcs found and checksum. */
struct side {
	const char *name;
	const char *key;
	double t;
	uint64_t rounds;
	size_t found;
	int64_t sum;
};

static double rate(const struct side *s, size_t n)
{
	return s->rounds * n / s->t;
}

enum { OURS, PLAIN, FLAT, REF_PLAIN, REF_BUCKET, LIB, NR_SIDES };

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 2.0, t;
	size_t n = 0, cap = 1 << 20, i, k, limit;
	const char *only = argc > 4 ? argv[4] : NULL;
	struct side sd[NR_SIDES] = {
		[OURS] = { "ours, indexed:", "indexed" },
		[PLAIN] = { "ours, no index:", "noindex" },
		[FLAT] = { "ours, flat:", "flat" },
		[REF_PLAIN] = { "flat arrays, plain binary search:",
				"plain-bsearch" },
		[REF_BUCKET] = { "flat arrays, buckets + branching search:",
				 "bucket-bsearch" },
		[LIB] = { "libsframe:", "libsframe" },
	};
	uint64_t *pcs;
	struct sframe_flat flat;
	uint32_t flat_words;
	int err, done;
	uint32_t idx_words, *idx;
	struct elf_section es;
	struct sframe_sec sec, plain;
	uint8_t shift;
	void *d;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-decoder ELF [SECONDS [PCS [SIDE]]]\n");
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
	limit = argc > 3 ? strtoul(argv[3], NULL, 0) : 0;
	if (limit && limit < n)
		n = limit;
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
	printf("flat table: %u entries, %u rules, %u buckets of %u bytes, %llu bytes\n",
	       flat.nr, flat.nr_rules, flat.index_nb, 1u << flat.index_shift,
	       (unsigned long long)sframe_flat_mem(&flat, flat_words));

	/* Rounds of one pass per side, in turn, until each has run secs. */
	do {
		for (k = 0; k < NR_SIDES; k++) {
			struct side *s = &sd[k];

			if (only && strcmp(only, s->key)) {
				s->t = secs;	/* not run */
				continue;
			}
			t = now();
			switch (k) {
			case OURS:
				s->found = pass_ours(&sec, pcs, n, &s->sum);
				break;
			case PLAIN:
				s->found = pass_ours(&plain, pcs, n, &s->sum);
				break;
			case FLAT:
				s->found = pass_flat(&flat, pcs, n, &s->sum);
				break;
			case REF_PLAIN:
				s->found = pass_plain_bsearch(&flat, pcs, n,
							      &s->sum);
				break;
			case REF_BUCKET:
				s->found = pass_bucket_bsearch(&flat, pcs, n,
							       &s->sum);
				break;
			case LIB:
				s->found = lib_pass(d, es.addr, pcs, n, &s->sum);
				break;
			}
			s->t += now() - t;
			s->rounds++;
		}
		for (done = 1, k = 0; k < NR_SIDES; k++)
			done &= sd[k].t >= secs;
	} while (!done);
	if (only) {
		printf("only %s: one pass of %zu pcs\n", only, n);
		lib_close(d);
		flat_free(&flat);
		free(idx);
		free(pcs);
		return 0;
	}
	for (k = 0; k < NR_SIDES; k++)
		printf("%-42s %12.0f lookups/s (%zu of %zu pcs found)\n",
		       sd[k].name, rate(&sd[k], n), sd[k].found, n);
	printf("checksums:");
	for (k = 0; k < NR_SIDES; k++)
		printf(" %" PRId64, sd[k].sum);
	printf("\n");
	printf("ratio without index: %.2f\n",
	       rate(&sd[PLAIN], n) / rate(&sd[LIB], n));
	printf("ratio: %.2f\n", rate(&sd[OURS], n) / rate(&sd[LIB], n));
	printf("flat ratio: %.2f\n", rate(&sd[FLAT], n) / rate(&sd[LIB], n));
	printf("flat / plain binary search: %.2f\n",
	       rate(&sd[FLAT], n) / rate(&sd[REF_PLAIN], n));
	printf("flat / buckets + branching search: %.2f\n",
	       rate(&sd[FLAT], n) / rate(&sd[REF_BUCKET], n));
	lib_close(d);
	flat_free(&flat);
	free(idx);
	free(pcs);
	/* Ours must agree exactly; libsframe is compared elsewhere. */
	for (k = PLAIN; k < LIB; k++)
		if (sd[k].found != sd[OURS].found || sd[k].sum != sd[OURS].sum)
			return 1;
	return 0;
}
