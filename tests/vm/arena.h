/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by codectl-ioctl-fuzz and codectl-storm: a seeded random number
 * generator, the errnos the header documents for each option, and arenas
 * of code, SFrame and JIT table pages that are unmapped, moved and
 * rewritten while other threads hand their addresses to the kernel.
 */
#ifndef CODECTL_ARENA_H
#define CODECTL_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codectl-test.h"

/* ---- random numbers: xoshiro256** ------------------------------------- */

struct rng {
	uint64_t s[4];
};

/* Stream @stream of seed @seed (e.g. one per thread). */
void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rnd(struct rng *r);

/* Uniform in [0, n). */
static inline uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* True with probability 1/n. */
static inline bool one_in(struct rng *r, unsigned int n)
{
	return below(r, n) == 0;
}

/* ---- the errnos each option may answer -------------------------------- */

#define MAX_ERRNO 134				/* histogram buckets */
/* The options, unknown commands, then the unwinding ioctls. */
#define K_UNKNOWN CODECTL_NR_OPTIONS
#define K_UNWIND (K_UNKNOWN + 1)
#define K_UNWIND_REQUEST (K_UNKNOWN + 2)
#define K_UNWIND_STATS (K_UNKNOWN + 3)
#define K_IMPORT (K_UNKNOWN + 4)
#define NR_KINDS (K_UNKNOWN + 5)

extern const char *const kind_name[NR_KINDS];
/* Does uapi/linux/codectl.h document @err (> 0) for this option? */
bool documented(int kind, int err);

/* ---- addresses -------------------------------------------------------- */

/* Kernel, non-canonical, never-mappable, NULL and low addresses. */
uint64_t pick_wild(struct rng *r);

/* ---- arenas ----------------------------------------------------------- */

/*
 * Arenas, shared by all threads: [0] code (R-X), [1] an SFrame section
 * for a function at the start of [0] (R--), [2] a JIT table (R-- or RW-),
 * [3] PROT_NONE.  A twin reservation of 4 pages is where mremap moves
 * pages to.  Only the thread holding an arena's lock touches its memory;
 * the others only hand its addresses to the kernel, which may find
 * anything there.  Holes are refilled with MAP_FIXED_NOREPLACE, so
 * nothing else of this process is ever clobbered; an arena whose hole was
 * taken by another mapping meanwhile is abandoned (lost).
 */
#define NR_ARENAS 16
#define ARENA_PAGES 4

struct arena {
	pthread_mutex_t lock;
	uint8_t *base, *twin;
	bool lost;
};

extern struct arena arenas[NR_ARENAS];

/* SFrame sections of versions 1-3 for a function at the page before. */
extern uint8_t sf_tmpl[4][256];
extern size_t sf_tmpl_len[4];

/* Both true on success (failures are recorded). */
bool templates_create(void);
bool arenas_create(uint64_t seed);

/*
 * One unmap or change of (part of) a random arena: munmap and map again,
 * MAP_FIXED over, mremap away, shrink, mprotect, madvise or rewrite.
 * True when it changed something.
 */
bool arena_remap(struct rng *r);

/* Page @pg of a random arena, read without its lock: a snapshot. */
uint64_t arena_page(struct rng *r, int pg);

#endif /* CODECTL_ARENA_H */
