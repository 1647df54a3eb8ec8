// SPDX-License-Identifier: GPL-2.0
/*
 * Shared by codectl-ioctl-fuzz and codectl-storm: random numbers, the
 * documented errnos, and arenas of memory that change under the calls
 * (see arena.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "arena.h"

struct arena arenas[NR_ARENAS];
uint8_t sf_tmpl[4][256];
size_t sf_tmpl_len[4];

/* ---- random numbers: xoshiro256** ------------------------------------- */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rnd(struct rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* ---- the errnos each option may answer -------------------------------- */

const char *const kind_name[NR_KINDS] = {
	[CODECTL_UNREGISTER] = "UNREGISTER",
	[CODECTL_REGISTER_ELF] = "REGISTER_ELF",
	[CODECTL_REGISTER_JIT] = "REGISTER_JIT",
	[CODECTL_QUERY] = "QUERY",
	[CODECTL_VERSION] = "VERSION",
	[CODECTL_CHECK_SFRAME] = "CHECK_SFRAME",
	[K_UNKNOWN] = "unknown command",
	[K_UNWIND] = "UNWIND",
	[K_UNWIND_REQUEST] = "UNWIND_REQUEST",
	[K_UNWIND_STATS] = "UNWIND_STATS",
	[K_IMPORT] = "IMPORT",
};

/* From the header: common errors, then each option's own. */
#define COMMON EFAULT, EINVAL, E2BIG, EINTR
static const int ok_unregister[] = { COMMON, ENOENT, 0 };
static const int ok_elf[] = { COMMON, ENAMETOOLONG, EMSGSIZE, ENOEXEC, EFBIG,
			      EEXIST, ENOSPC, ENOMEM, 0 };
static const int ok_jit[] = { COMMON, ELOOP, EEXIST, ENOSPC, ENOMEM, 0 };
static const int ok_query[] = { COMMON, ENOENT, ESRCH, EACCES, EPERM, EAGAIN,
				EINVAL, EBADF, 0 };
static const int ok_version[] = { COMMON, 0 };
static const int ok_check[] = { COMMON, 0 };
static const int ok_unknown[] = { ENOTTY, 0 };
static const int ok_unwind[] = { EINVAL, EFAULT, EINTR, ENOMEM, 0 };
static const int ok_request[] = { EFAULT, ENOMEM, EBUSY, ENOSPC, EINVAL, 0 };
static const int ok_stats[] = { EFAULT, EPERM, 0 };
static const int ok_import[] = { EPERM, EINVAL, EBADF, EFAULT, ENOEXEC, EEXIST,
				 ETXTBSY, EFBIG, ENOSPC, ENOENT, ENOMEM, 0 };
static const int *const allowed[NR_KINDS] = {
	[CODECTL_UNREGISTER] = ok_unregister,
	[CODECTL_REGISTER_ELF] = ok_elf,
	[CODECTL_REGISTER_JIT] = ok_jit,
	[CODECTL_QUERY] = ok_query,
	[CODECTL_VERSION] = ok_version,
	[CODECTL_CHECK_SFRAME] = ok_check,
	[K_UNKNOWN] = ok_unknown,
	[K_UNWIND] = ok_unwind,
	[K_UNWIND_REQUEST] = ok_request,
	[K_UNWIND_STATS] = ok_stats,
	[K_IMPORT] = ok_import,
};

bool documented(int kind, int err)
{
	const int *e;

	for (e = allowed[kind]; *e; e++)
		if (*e == err)
			return true;
	return false;
}

/* Kernel, non-canonical and never-mappable addresses. */
static const uint64_t wild[] = {
	0, 1, 0x1000, 0xfff, 0x10000 - 8,
	0x00007ffffffff000ULL, 0x00007ffffffffff8ULL,	/* above TASK_SIZE */
	0x0000800000000000ULL, 0x8000000000000000ULL,
	0xdead000000000000ULL, 0xffff800000000000ULL, 0xffff888000000000ULL,
	0xffffffff81000000ULL, 0xfffffffffffff000ULL, 0xffffffffffffffffULL,
};

uint64_t pick_wild(struct rng *r)
{
	return wild[below(r, sizeof(wild) / sizeof(wild[0]))];
}

/* ---- arenas ----------------------------------------------------------- */

static bool arena_map(uint8_t *at, size_t pages, int flags)
{
	void *p = mmap(at, pages * g_page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED)
		return false;
	if (p != at) {
		munmap(p, pages * g_page);
		return false;
	}
	return true;
}

/* Write page @pg of arena @a (mapped RW by the caller), then protect it. */
static void arena_fill_page(struct rng *r, struct arena *a, int pg)
{
	uint8_t *p = a->base + pg * g_page;

	switch (pg) {
	case 0:
		memset(p, 0xc3, g_page);
		mprotect(p, g_page, PROT_READ | PROT_EXEC);
		break;
	case 1: {
		int v = 1 + below(r, 3);

		memset(p, 0, g_page);
		memcpy(p, sf_tmpl[v], sf_tmpl_len[v]);
		/* Corrupt one in three: bytes, header fields, counts. */
		if (one_in(r, 3)) {
			int k, n = 1 + below(r, 4);

			for (k = 0; k < n; k++)
				p[below(r, sf_tmpl_len[v] + 8)] = rnd(r);
		}
		if (one_in(r, 8))
			memcpy(p + 8 + 4 * below(r, 5), &(uint32_t){ (uint32_t)rnd(r) }, 4);
		mprotect(p, g_page, PROT_READ);
		break;
	}
	case 2: {
		struct codectl_jit_unwind_table *t = (void *)p;
		uint32_t size, stride, nr;

		memset(p, 0, g_page);
		size = one_in(r, 4) ? below(r, 40) : 21 + below(r, 8);
		stride = one_in(r, 4) ? below(r, 64) : ((size + 3) & ~3U) + 4 * below(r, 3);
		nr = below(r, 200);
		if (stride >= size && stride && stride % 4 == 0 && size >= 21 &&
		    sizeof(*t) + (uint64_t)nr * stride <= g_page)
			jit_table_init(t, size, stride, nr, below(r, nr + 1));
		else {
			t->fre_size = size;
			t->fre_stride = stride;
			t->reserved_len = (uint64_t)nr * stride;
		}
		switch (below(r, 10)) {
		case 0: t->reserved_len = rnd(r); break;
		case 1: t->reserved_len = 2 * g_page; break;	/* into [3] */
		case 2: t->used_len = t->reserved_len + 8; break;
		case 3: t->__reserved = rnd(r); break;
		case 4: t->next = (uintptr_t)p; break;		/* a loop */
		case 5: t->next = pick_wild(r); break;
		}
		mprotect(p, g_page, one_in(r, 2) ? PROT_READ : PROT_READ | PROT_WRITE);
		break;
	}
	}
}

/* A fresh arena at a->base (pages 0-2 mapped RW, page 3 PROT_NONE). */
static void arena_fill(struct rng *r, struct arena *a)
{
	int pg;

	for (pg = 0; pg < 3; pg++)
		arena_fill_page(r, a, pg);
}

/*
 * Something that unmaps or changes (part of) the arena: the kernel must
 * drop what was registered there, or keep it for mprotect/madvise.
 */
bool arena_remap(struct rng *r)
{
	bool changed = false;
	struct arena *a = &arenas[below(r, NR_ARENAS)];
	int pg = below(r, 3), what = below(r, 8);
	uint8_t *p;

	pthread_mutex_lock(&a->lock);
	if (a->lost)
		goto out;
	p = a->base + pg * g_page;
	changed = true;
	switch (what) {
	case 0:		/* munmap one page, map it again */
	case 1:
		munmap(p, g_page);
		if (!arena_map(p, 1, MAP_FIXED_NOREPLACE)) {
			a->lost = true;
			goto out;
		}
		arena_fill_page(r, a, pg);
		break;
	case 2:		/* MAP_FIXED over one page */
		if (!arena_map(p, 1, MAP_FIXED))
			a->lost = true;
		else
			arena_fill_page(r, a, pg);
		break;
	case 3: {	/* mremap one page away (to the twin), refill */
		uint8_t *to = a->twin + pg * g_page;

		if (mremap(p, g_page, g_page, MREMAP_MAYMOVE | MREMAP_FIXED, to) != to)
			goto out;	/* nothing changed */
		if (!arena_map(p, 1, MAP_FIXED_NOREPLACE)) {
			a->lost = true;
			goto out;
		}
		arena_fill_page(r, a, pg);
		/* The twin page is ours: reserve it again. */
		mmap(to, g_page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		break;
	}
	case 4:		/* SFrame and table pages as one mapping, shrunk */
		mprotect(a->base + g_page, 2 * g_page, PROT_READ);
		if (mremap(a->base + g_page, 2 * g_page, g_page, 0) != a->base + g_page) {
			mprotect(a->base + 2 * g_page, g_page, PROT_READ | PROT_WRITE);
			arena_fill_page(r, a, 2);
			goto out;	/* not one mapping: nothing shrunk */
		}
		if (!arena_map(a->base + 2 * g_page, 1, MAP_FIXED_NOREPLACE)) {
			a->lost = true;
			goto out;
		}
		arena_fill_page(r, a, 2);
		break;
	case 5:		/* mprotect away and back */
		mprotect(p, g_page, PROT_NONE);
		mprotect(p, g_page, pg == 0 ? PROT_READ | PROT_EXEC : PROT_READ);
		break;
	case 6:		/* rewrite in place */
		mprotect(p, g_page, PROT_READ | PROT_WRITE);
		arena_fill_page(r, a, pg);
		break;
	case 7:		/* MADV_DONTNEED, then rewrite */
		madvise(p, g_page, MADV_DONTNEED);
		mprotect(p, g_page, PROT_READ | PROT_WRITE);
		arena_fill_page(r, a, pg);
		break;
	}
out:
	pthread_mutex_unlock(&a->lock);
	return changed;
}

bool arenas_create(uint64_t seed)
{
	struct rng r;
	int i;

	rng_seed(&r, seed, 999);
	for (i = 0; i < NR_ARENAS; i++) {
		struct arena *a = &arenas[i];

		pthread_mutex_init(&a->lock, NULL);
		a->base = mmap(NULL, ARENA_PAGES * g_page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		a->twin = mmap(NULL, ARENA_PAGES * g_page, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a->base == MAP_FAILED || a->twin == MAP_FAILED)
			return false;
		mprotect(a->base + 3 * g_page, g_page, PROT_NONE);
		arena_fill(&r, a);
	}
	return true;
}

bool templates_create(void)
{
	int v;

	for (v = 1; v <= 3; v++) {
		struct sfr_obj o;

		if (!sframe_host_abi() || sfr_obj_create(&o, v))
			return false;
		sf_tmpl_len[v] = o.sframe_end - o.sframe;
		if (sf_tmpl_len[v] > sizeof(sf_tmpl[v]) || o.sframe != o.text + g_page)
			return false;
		memcpy(sf_tmpl[v], (void *)(uintptr_t)o.sframe, sf_tmpl_len[v]);
		sfr_obj_destroy(&o);
	}
	return true;
}

/* Base addresses of arena pages are read without the lock: a snapshot. */
uint64_t arena_page(struct rng *r, int pg)
{
	struct arena *a = &arenas[below(r, NR_ARENAS)];

	return (uintptr_t)__atomic_load_n(&a->base, __ATOMIC_RELAXED) + pg * g_page;
}

