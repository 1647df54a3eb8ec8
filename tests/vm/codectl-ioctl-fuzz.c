// SPDX-License-Identifier: GPL-2.0
/*
 * codectl-ioctl-fuzz: random and mutated /dev/codectl ioctls from several
 * threads, while the memory they name is unmapped, remapped, moved and
 * rewritten under them.  Run inside a guest with the codectl module.
 *
 *   codectl-ioctl-fuzz [-n CALLS] [-j THREADS] [-s SEED] [-m N] [-v]
 *
 *   -n   ioctl calls in all (default 100000, or $CODECTL_FUZZ_CALLS)
 *   -j   threads (default 4)
 *   -s   seed (default: from the clock; printed, so a run can be redone)
 *   -m   one remap of an arena per N draws (default 100; 0: none).  Each
 *        remap costs TLB shootdowns, which are slow under QEMU/TCG
 *   -v   print every undocumented answer, not only the first 20
 *
 * Every call is drawn from the thread's own generator (seeded from the
 * seed and the thread's number) and from nothing else, so a seed gives
 * each thread the same calls again.  The program re-executes itself
 * without address space randomisation (unless $CODECTL_FUZZ_ASLR is set),
 * so with -j 1 a seed gives the same answers too; with more threads they
 * differ where the threads race.  The calls: every option (and unknown ones, and commands
 * of the wrong size or direction), info sizes from 0 to 8192 and around
 * each VER0 size, info and inner pointers that are NULL, unmapped,
 * kernel, non-canonical, odd, read-only or straddling into a hole, random
 * flags and reserved fields, huge lengths and counts, ranges over real
 * code (mmap'ed pages and this program's own text), valid and corrupted
 * SFrame sections, PCMASK sections that expand without limit over up to
 * 64 MiB of code and chains of up to 80 JIT tables (issue 23's bounds:
 * ELOOP past 64 tables, and no registration may take more than 2 s
 * of the thread's CPU time), JIT tables with random headers, IMPORTs for files
 * with and without SFrame and for no file at all; and, between calls,
 * munmap/mmap/mremap/MAP_FIXED/mprotect/madvise of that memory.
 *
 * Checked: each answer is an errno uapi/linux/codectl.h documents for the
 * option (ENOTTY only for unknown commands); calls that must fail (flags,
 * reserved, info_size out of bounds) fail; successful QUERY, VERSION and
 * CHECK_SFRAME answers make sense; at the end everything is unregistered
 * and the debugfs counters (all of them) are back at their baseline once
 * the fuzzing process is gone.
 *
 * The kernel is only ever told to write into the calling thread's scratch
 * (or where nothing can be mapped): no thread remaps it, and its last two
 * pages, read-only and PROT_NONE, stop any write that runs off it.  Every
 * call is checked for that before it is issued (stray_out()); a mutated
 * QUERY's output pointers are put back there.  $CODECTL_FUZZ_STRAYS set
 * leaves them as mutated (the cause of issue 23's finding 10: the kernel
 * wrote the answer's strings into other threads' memory), issues such
 * calls and counts them wrong, and lists where they pointed.
 * $CODECTL_FUZZ_AIM=N adds a mutation of those pointers to one QUERY in N
 * (see query_aim()), to show what strays do, with and without the fix.
 *
 * A SIGSEGV or SIGBUS in the fuzzing process prints "# FAULT: ..." lines:
 * the address, pc and sp and which of the fuzzer's memory they lie in,
 * every thread's last call, and /proc/self/maps ("#   map: ...").
 *
 * Output is TAP-like, like codectl-abi-test's, and ends with
 * "N passed, N failed".  Exit status 1 when a check failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arena.h"

#define ULL(x) ((unsigned long long)(x))

/* ---- what util.c needs from a harness --------------------------------- */

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static int nr_failed;

void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fail_lock);
	if (nr_failed++ < 50) {
		printf("#   FAIL %s:%d: ", file, line);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	pthread_mutex_unlock(&fail_lock);
}

void t_set_skip(const char *fmt, ...)
{
	(void)fmt;
}

int t_nr_failed(void)
{
	int n;

	pthread_mutex_lock(&fail_lock);
	n = nr_failed;
	pthread_mutex_unlock(&fail_lock);
	return n;
}

/* ---- memory the calls name -------------------------------------------- */

static struct self_image self;
static bool have_self;

/*
 * Per thread: [0..7] RW scratch, [8] R--, [9] PROT_NONE.  Everything the
 * kernel may write (info of QUERY/VERSION/CHECK_SFRAME and QUERY's
 * buffers) points here, or nowhere writable.
 */
#define SCRATCH_RW 8
#define SCRATCH_PAGES 10
#define ALTSTACK_SIZE (64 << 10)

struct fuzz_thread {
	int idx;
	pthread_t th;
	struct rng rng;
	struct rng rng_aim;	/* CODECTL_FUZZ_AIM's draws, apart */
	uint8_t *scratch;
	uint8_t *bounds;	/* BOUNDS_PAGES RW: PCMASK sections, JIT chains */
	unsigned long bounds_calls[3], bounds_ok[3];
	uint64_t bounds_max_ns;
	unsigned long calls, target, remaps, undocumented, wrong;
	unsigned long strays;	/* QUERY output pointers out of scratch */
	unsigned long hist[NR_KINDS][MAX_ERRNO + 1];
	/* What it is doing, for the SIGSEGV report (see on_fault()). */
	volatile int doing;		/* 0, 'i' (ioctl), 'r' (remap), 'm' (make) */
	volatile int kind;
	volatile unsigned long cmd;
	pid_t tid;
	uint64_t stack_lo, stack_hi;
	void *altstack;			/* ALTSTACK_SIZE, for on_fault() */
	volatile uint64_t args, info, info_size;
};

static int fuzz_fd = -1;
static unsigned int remap_one_in = 100;	/* -m: a remap every N calls */
static bool verbose;
static unsigned long bad_printed;

/* ---- building calls --------------------------------------------------- */

/*
 * Issue 23's bounds: PCMASK sections over up to BIG_CODE bytes of code
 * (R-X, never touched: no memory), in each thread's own BOUNDS_PAGES
 * pages, and chains of JIT tables there.  Such a registration is removed
 * again at once (the memory is reused), and may not take more than
 * BOUNDS_CPU_MS of the thread's CPU time (the table of 8M entries of
 * rep_size 1 over 4 MiB took 3.8-6.2 s of wall-clock time to build before
 * the bounds; with them the slowest took 264 ms of CPU time in a 7.2 run
 * on a busy host), times CODECTL_TIME_SCALE (time_scale()): a TCG guest's
 * CPU time runs with the host's clock, so a slow kernel (the debug RT one,
 * 2.4-8.7 s with three guests on two host CPUs) or a busy host stretches
 * it, as it does the wall-clock bounds.
 */
#define BIG_CODE	(64ULL << 20)
#define BOUNDS_PAGES	4
#define BOUNDS_CPU_MS	2000
#define JIT_CHAIN_MAX	64	/* the module's CODECTL_JIT_MAX_TABLES */
static uint8_t *big_code;

enum { B_NONE, B_PCMASK, B_CHAIN };

static const uint64_t lens[] = {
	1, 2, 15, 16, 17, 48, 64, 255, 256, 512, 1000, 4095, 4096, 4097, 8192,
	12288, 1ULL << 20, 1ULL << 32, 1ULL << 63, ~0ULL,
};

static uint64_t pick_len(struct rng *r)
{
	return lens[below(r, sizeof(lens) / sizeof(lens[0]))];
}

/* A code range: mostly slots of arena code pages, else anything. */
static void pick_text(struct rng *r, __u64 *s, __u64 *e)
{
	uint64_t base, len;

	switch (below(r, 10)) {
	case 0:		/* this program's text */
		if (have_self) {
			uint64_t span = self.text_end - self.text_start;

			*s = self.text_start + (below(r, 4) ? 0 : below(r, span) & ~15ULL);
			*e = below(r, 3) ? self.text_end : *s + pick_len(r);
			return;
		}
		/* fall through */
	case 1:		/* wild */
		*s = one_in(r, 2) ? pick_wild(r) : rnd(r);
		*e = *s + pick_len(r);
		if (one_in(r, 4))
			*e = rnd(r);
		return;
	case 2:		/* a whole arena, code and data */
		base = arena_page(r, 0);
		*s = base;
		*e = base + (1 + below(r, 4)) * g_page;
		return;
	default:	/* 16 slots of 256 bytes in a code page */
		base = arena_page(r, one_in(r, 12) ? 1 + below(r, 3) : 0);
		*s = base + 256 * below(r, 16) + (one_in(r, 8) ? below(r, 256) : 0);
		len = one_in(r, 6) ? pick_len(r) : 256 * (1 + below(r, 2));
		*e = *s + len;
		if (one_in(r, 20))
			*e = *s - below(r, 2);	/* empty or reversed */
		return;
	}
}

static const char long_name[CODECTL_PATH_MAX + 8] = { [0 ... CODECTL_PATH_MAX + 6] = 'x' };

/* A pointer to a string for the kernel to read (never written). */
static uint64_t pick_string(struct fuzz_thread *t)
{
	static const char *const names[] = {
		"/usr/lib/" MULTIARCH "/libc.so.6", "a", "/fuzz/lib.so",
		"", "libfoo.so.debug",
	};
	struct rng *r = &t->rng;
	uint8_t *ro = t->scratch + SCRATCH_RW * g_page;

	switch (below(r, 10)) {
	case 0:
		return 0;
	case 1:		/* exactly CODECTL_PATH_MAX with its NUL, or one more */
		return (uintptr_t)long_name + (one_in(r, 2) ? 8 : 7);
	case 2:		/* no NUL before the PROT_NONE page */
		return (uintptr_t)ro + g_page - 1 - below(r, 64);
	case 3:
		return pick_wild(r);
	case 4:		/* code or SFrame bytes */
		return arena_page(r, below(r, 3)) + below(r, g_page);
	default:
		return (uintptr_t)names[below(r, sizeof(names) / sizeof(names[0]))];
	}
}

/*
 * A v2 PCMASK section in t->bounds: one FDE over 16 bytes to 64 MiB of
 * big_code, rep_size 1-16, as many FREs as fit a block, after a hole of
 * up to 3 pages (a larger section: the bound is relative to its size);
 * as a synthesised buffer half the time.
 */
static void fill_pcmask(struct fuzz_thread *t, struct codectl_elf_info *ei)
{
	struct rng *r = &t->rng;
	uint8_t *sec = t->bounds, *fre;
	uint32_t rep = 1 + below(r, 16), nfres = 1 + below(r, rep), k;
	uint32_t gap = one_in(r, 2) ? 0 : below(r, 3 * g_page);
	uint64_t len = 16ULL << below(r, 23);
	uint8_t fde[20] = { 0 };
	int32_t start = (int32_t)((uintptr_t)big_code - (uintptr_t)sec);
	uint32_t hdr[5] = { 1, nfres, 3 * nfres, gap, gap + 20 };

	memset(sec, 0, 28 + gap + 20 + 3 * nfres);
	sec[0] = 0xe2;
	sec[1] = 0xde;
	sec[2] = 2;		/* version */
	sec[3] = 1;		/* sorted */
	sec[4] = 3;		/* AMD64 */
	sec[6] = (uint8_t)-8;	/* fixed RA offset */
	memcpy(sec + 8, hdr, sizeof(hdr));
	memcpy(fde, &start, 4);
	memcpy(fde + 4, &(uint32_t){ (uint32_t)len }, 4);
	memcpy(fde + 12, &nfres, 4);
	fde[16] = 0x10;		/* PCMASK, 1-byte starts */
	fde[17] = rep;
	memcpy(sec + 28 + gap, fde, sizeof(fde));
	fre = sec + 28 + gap + 20;
	for (k = 0; k < nfres; k++, fre += 3) {
		fre[0] = k;
		fre[1] = 0x03;	/* CFA = SP + 1-byte word */
		fre[2] = 8 + 8 * k;
	}
	ei->text_start = (uintptr_t)big_code;
	ei->text_end = (uintptr_t)big_code + len;
	ei->sframe_start = (uintptr_t)sec;
	ei->sframe_end = (uintptr_t)fre;
	ei->flags = one_in(r, 2) ? CODECTL_ELF_SFRAME_SYNTH : 0;
	ei->pathname = (uintptr_t)"/fuzz/pcmask.so";
}

static int fill_elf(struct fuzz_thread *t, struct codectl_elf_info *ei)
{
	struct rng *r = &t->rng;
	uint64_t code, sf;
	int v = 1 + below(r, 3);

	memset(ei, 0, sizeof(*ei));
	if (big_code && t->bounds && one_in(r, 10)) {
		fill_pcmask(t, ei);
		return B_PCMASK;
	}
	if (one_in(r, 3)) {
		/* An arena's object: its code, its SFrame section. */
		code = arena_page(r, 0);
		sf = code + g_page;
		ei->text_start = code;
		ei->text_end = code + 256 * (1 + below(r, 16));
		ei->sframe_start = sf;
		ei->sframe_end = sf + sf_tmpl_len[v] + (one_in(r, 4) ? below(r, 64) : 0);
		if (one_in(r, 2)) {
			ei->elf_start = code;
			ei->elf_end = code + 3 * g_page;
		}
	} else if (have_self && one_in(r, 6)) {
		ei->elf_start = self.elf_start;
		ei->elf_end = self.elf_end;
		ei->text_start = self.text_start;
		ei->text_end = self.text_end;
		ei->sframe_start = self.sframe_start;
		ei->sframe_end = self.sframe_end;
		ei->build_id = (uintptr_t)self.build_id;
		ei->build_id_len = self.build_id_len;
	} else {
		pick_text(r, &ei->text_start, &ei->text_end);
		switch (below(r, 6)) {
		case 0:
			ei->sframe_start = arena_page(r, 1);
			ei->sframe_end = ei->sframe_start + below(r, 300);
			break;
		case 1:
			ei->sframe_start = pick_wild(r);
			ei->sframe_end = ei->sframe_start + pick_len(r);
			break;
		case 2:
			ei->sframe_start = self.sframe_start;
			ei->sframe_end = self.sframe_end;
			break;
		}
		if (one_in(r, 6)) {
			ei->elf_start = ei->text_start - below(r, 2) * g_page;
			ei->elf_end = ei->text_end + below(r, 2) * g_page;
		}
	}
	if (one_in(r, 2)) {
		/* Well-formed metadata: the call gets past the scalar checks. */
		ei->pathname = (uintptr_t)"/fuzz/object.so";
		if (one_in(r, 2)) {
			ei->debug_link_pathname = (uintptr_t)"object.so.debug";
			ei->debug_link_crc = rnd(r);
		}
		return B_NONE;
	}
	ei->pathname = below(r, 3) ? pick_string(t) : 0;
	if (one_in(r, 3))
		ei->debug_link_pathname = pick_string(t);
	if (one_in(r, 3))
		ei->debug_link_crc = one_in(r, 4) ? 0 : rnd(r);
	if (one_in(r, 3)) {
		ei->build_id = one_in(r, 4) ? pick_wild(r) : (uintptr_t)long_name;
		ei->build_id_len = one_in(r, 4) ? rnd(r) : below(r, 70);
	}
	return B_NONE;
}

/*
 * A chain of 1-80 JIT tables in t->bounds, one entry each, over this
 * thread's 4 KiB of big_code; one in 8 loops back.  *@n gets the number
 * of tables (0 for a loop).
 */
static void fill_chain(struct fuzz_thread *t, struct codectl_jit_info *ji,
		       uint32_t *n)
{
	struct rng *r = &t->rng;
	uint32_t nr = 1 + below(r, 80), i;
	size_t tsz = sizeof(struct codectl_jit_unwind_table) +
		     sizeof(struct codectl_jit_unwind_fre);
	uint8_t *b = t->bounds;

	for (i = 0; i < nr; i++) {
		struct codectl_jit_unwind_table *tab = (void *)(b + i * tsz);
		struct codectl_jit_unwind_fre *e = (void *)(tab + 1);

		memset(tab, 0, tsz);
		tab->reserved_len = sizeof(*e);
		tab->fre_stride = sizeof(*e);
		tab->fre_size = sizeof(*e);
		tab->next = i + 1 < nr ? (uintptr_t)(b + (i + 1) * tsz) : 0;
		e->ip_off = 16 * i;
		e->size = 16;
		e->cfa_off = 16;
		e->ra_off = -8;
		__atomic_store_n(&tab->used_len, sizeof(*e), __ATOMIC_RELEASE);
	}
	*n = nr;
	if (one_in(r, 8)) {
		((struct codectl_jit_unwind_table *)(b + (nr - 1) * tsz))->next =
			(uintptr_t)(b + below(r, nr) * tsz);
		*n = 0;
	}
	ji->text_start = (uintptr_t)big_code + BIG_CODE - (t->idx + 1) * 4096ULL;
	ji->text_end = ji->text_start + 4096;
	ji->unwind_head = (uintptr_t)b;
}

static int fill_jit(struct fuzz_thread *t, struct codectl_jit_info *ji,
		    uint32_t *chain)
{
	struct rng *r = &t->rng;

	if (big_code && t->bounds && one_in(r, 10)) {
		fill_chain(t, ji, chain);
		return B_CHAIN;
	}

	pick_text(r, &ji->text_start, &ji->text_end);
	switch (below(r, 8)) {
	case 0:
		ji->unwind_head = pick_wild(r);
		break;
	case 1:		/* header straddling into PROT_NONE */
		ji->unwind_head = arena_page(r, 3) - below(r, 48);
		break;
	case 2:
		ji->unwind_head = arena_page(r, below(r, 3)) + below(r, g_page);
		break;
	case 3:		/* read-only scratch page: an 'AAAA' header (EINVAL) */
		ji->unwind_head = (uintptr_t)t->scratch + SCRATCH_RW * g_page;
		break;
	default:
		ji->unwind_head = arena_page(r, 2);
		break;
	}
	return B_NONE;
}

/* Where the kernel may write: scratch, or nothing writable. */
static uint64_t pick_out_ptr(struct fuzz_thread *t)
{
	struct rng *r = &t->rng;
	uint8_t *s = t->scratch;

	switch (below(r, 12)) {
	case 0:
		return 0;
	case 1:
		return pick_wild(r);
	case 2:		/* read-only */
		return (uintptr_t)s + SCRATCH_RW * g_page + below(r, g_page);
	case 3:		/* straddling into the read-only page */
		return (uintptr_t)s + SCRATCH_RW * g_page - 1 - below(r, 64);
	case 4:		/* PROT_NONE */
		return (uintptr_t)s + (SCRATCH_RW + 1) * g_page + below(r, g_page);
	default:
		return (uintptr_t)s + 2 * g_page + below(r, (SCRATCH_RW - 2) * g_page);
	}
}

static uint32_t pick_u32_len(struct rng *r)
{
	switch (below(r, 5)) {
	case 0:
		return 0;
	case 1:
		return rnd(r);
	case 2:
		return below(r, 80);
	default:
		return below(r, 2 * CODECTL_PATH_MAX);
	}
}

static void fill_query(struct fuzz_thread *t, struct codectl_query_info *q)
{
	struct rng *r = &t->rng;

	memset(q, 0, sizeof(*q));
	switch (below(r, 4)) {
	case 0:
		q->addr = 0;
		break;
	case 1:
		q->addr = rnd(r);
		break;
	default:
		q->addr = arena_page(r, below(r, 3)) + below(r, g_page);
		break;
	}
	if (below(r, 3)) {
		q->pathname = pick_out_ptr(t);
		q->pathname_len = pick_u32_len(r);
	}
	if (one_in(r, 2)) {
		q->debug_link_pathname = pick_out_ptr(t);
		q->debug_link_len = pick_u32_len(r);
	}
	if (one_in(r, 2)) {
		q->build_id = pick_out_ptr(t);
		q->build_id_len = pick_u32_len(r);
	}
	if (one_in(r, 30))
		q->__reserved = rnd(r) | 1;
	switch (below(r, 12)) {	/* VER2: whose registrations */
	case 0:
		q->pid = getpid();
		break;
	case 1:
		q->pid = getppid();
		break;
	case 2:
		q->pid = 1 + below(r, 3);	/* init, kthreadd, ... */
		break;
	case 3:
		q->pid = rnd(r);		/* negative, absent, ... */
		break;
	default:
		break;
	}
	if (one_in(r, 10))	/* outputs pre-filled with garbage */
		q->text_start = q->text_end = q->kind = q->coverage =
			q->sframe_version = q->sframe_table = rnd(r);
}

static void fill_check(struct fuzz_thread *t, struct codectl_sframe_check *c)
{
	struct rng *r = &t->rng;
	int v = 1 + below(r, 3);

	memset(c, 0, sizeof(*c));
	if (below(r, 3)) {
		c->sframe_start = arena_page(r, 1);
		c->sframe_end = c->sframe_start + sf_tmpl_len[v] +
				(one_in(r, 3) ? below(r, 400) : 0);
		if (one_in(r, 2)) {
			c->text_start = c->sframe_start - g_page;
			c->text_end = c->text_start + 256 * below(r, 17);
		}
	} else if (have_self && one_in(r, 2)) {
		c->sframe_start = self.sframe_start;
		c->sframe_end = self.sframe_end;
	} else {
		c->sframe_start = one_in(r, 2) ? pick_wild(r) : rnd(r);
		c->sframe_end = c->sframe_start + pick_len(r);
		if (one_in(r, 3))
			pick_text(r, &c->text_start, &c->text_end);
	}
	if (one_in(r, 10))
		c->error = c->version = rnd(r);
}

static const size_t ksize[CODECTL_NR_OPTIONS] = {
	[CODECTL_UNREGISTER] = sizeof(struct codectl_unregister_info),
	[CODECTL_REGISTER_ELF] = sizeof(struct codectl_elf_info),
	[CODECTL_REGISTER_JIT] = sizeof(struct codectl_jit_info),
	[CODECTL_QUERY] = sizeof(struct codectl_query_info),
	[CODECTL_VERSION] = sizeof(struct codectl_version),
	[CODECTL_CHECK_SFRAME] = sizeof(struct codectl_sframe_check),
};
static const size_t ver0[CODECTL_NR_OPTIONS] = {
	[CODECTL_UNREGISTER] = CODECTL_UNREGISTER_INFO_SIZE_VER0,
	[CODECTL_REGISTER_ELF] = CODECTL_ELF_INFO_SIZE_VER0,
	[CODECTL_REGISTER_JIT] = CODECTL_JIT_INFO_SIZE_VER0,
	[CODECTL_QUERY] = CODECTL_QUERY_INFO_SIZE_VER0,
	[CODECTL_VERSION] = CODECTL_VERSION_SIZE_VER0,
	[CODECTL_CHECK_SFRAME] = CODECTL_SFRAME_CHECK_SIZE_VER0,
};

static uint64_t pick_info_size(struct rng *r, int opt, bool *nonzero_tail)
{
	size_t k = ksize[opt], v = ver0[opt];

	*nonzero_tail = false;
	switch (below(r, 16)) {
	case 0:
		return below(r, 8193);
	case 1:
		return v - 1 - below(r, v);		/* below VER0 */
	case 2:
		return v + below(r, 8);			/* around VER0 */
	case 3:
		*nonzero_tail = one_in(r, 2);
		return k + 1 + below(r, 64);		/* a longer struct */
	case 4:
		return CODECTL_INFO_SIZE_MAX + below(r, 2);
	case 5:
		return one_in(r, 2) ? rnd(r) : ~0ULL - below(r, 2);
	default:
		return k;
	}
}

struct call {
	unsigned long cmd;
	int kind;		/* option, or K_UNKNOWN */
	uint64_t args_ptr;
	struct codectl_args a;
	bool must_fail;
	int mutated;
	int bounds;		/* B_*: a PCMASK section or a JIT chain */
	uint32_t chain;		/* B_CHAIN: tables, 0 for a loop */
	uint64_t text_start, text_end;
};

/*
 * The unwinding ioctls: CODECTL_IOC_UNWIND with arrays anywhere, sizes and
 * flags in and out of range; UNWIND_STATS writing to
 * scratch, the read-only page or wild addresses.
 */
static void make_unwind_call(struct fuzz_thread *t, struct call *c, int kind)
{
	static const uint32_t frames[] = {
		0, 1, 2, 3, 64, 512, CODECTL_UNWIND_MAX_FRAMES,
		CODECTL_UNWIND_MAX_FRAMES + 1, 0xffffffff,
	};
	struct rng *r = &t->rng;
	uint8_t *s = t->scratch, *ro = s + SCRATCH_RW * g_page;
	struct codectl_unwind_args *a;

	c->kind = kind;
	c->cmd = kind == K_UNWIND ? CODECTL_IOC_UNWIND :
		 CODECTL_IOC_UNWIND_STATS;
	switch (below(r, 6)) {
	case 0:
		c->args_ptr = pick_wild(r);
		c->must_fail = true;
		return;
	case 1:		/* read-only: the answer cannot be written back */
		c->args_ptr = (uintptr_t)ro;
		c->must_fail = true;
		return;
	default:
		c->args_ptr = (uintptr_t)s + 8 * below(r, 64);
		break;
	}
	if (kind != K_UNWIND)
		return;
	a = (void *)(uintptr_t)c->args_ptr;
	memset(a, 0, sizeof(*a));
	a->max_frames = frames[below(r, sizeof(frames) / sizeof(frames[0]))];
	a->flags = one_in(r, 4) ? rnd(r) & 0xf : below(r, 8);
	a->iterations = one_in(r, 8) ? below(r, 100) : below(r, 3);
	a->__reserved = one_in(r, 16) ? 1 : 0;
	/* The pcs: scratch after the struct, the read-only page, or wild. */
	switch (below(r, 4)) {
	case 0:
		a->ips = pick_wild(r);
		break;
	case 1:
		a->ips = (uintptr_t)ro;
		break;
	default:
		a->ips = (uintptr_t)s + 1024 + 8 * below(r, 64);
		break;
	}
	a->methods = one_in(r, 2) ? 0 : one_in(r, 2) ? pick_wild(r) :
		     (uintptr_t)s + SCRATCH_RW * g_page - 4096;
	if (!a->max_frames || a->max_frames > CODECTL_UNWIND_MAX_FRAMES ||
	    a->flags & ~CODECTL_UNWIND_FLAGS_ALL || a->__reserved)
		c->must_fail = true;
}

/*
 * CODECTL_IOC_IMPORT (the fuzzer runs as root): files with and without
 * SFrame, not ELF, closed or wild descriptors; sections from the
 * templates, this program's own, or anywhere; addresses and flags in and
 * out of range.  At the end the fuzzer clears every import.
 */
static int import_fds[3] = { -1, -1, -1 };	/* libc, ourselves, /dev/null */

static void make_import_call(struct fuzz_thread *t, struct call *c)
{
	struct rng *r = &t->rng;
	struct codectl_import_info *ii;
	int v = 1 + below(r, 3);

	c->kind = K_IMPORT;
	c->cmd = CODECTL_IOC_IMPORT;
	if (one_in(r, 8)) {
		c->args_ptr = pick_wild(r);
		c->must_fail = true;
		return;
	}
	c->args_ptr = (uintptr_t)t->scratch + 8 * below(r, 64);
	ii = (void *)(uintptr_t)c->args_ptr;
	memset(ii, 0, sizeof(*ii));
	ii->fd = one_in(r, 8) ? (int)rnd(r) : below(r, 5) < 3 ?
		 import_fds[below(r, 3)] : -1;
	switch (below(r, 4)) {
	case 0:
		ii->sframe = arena_page(r, 1);
		ii->sframe_size = sf_tmpl_len[v] + (one_in(r, 3) ? below(r, 64) : 0);
		break;
	case 1:
		if (have_self) {
			ii->sframe = self.sframe_start;
			ii->sframe_size = self.sframe_end - self.sframe_start;
			break;
		}
		/* fall through */
	case 2:
		ii->sframe = pick_wild(r);
		ii->sframe_size = pick_len(r);
		break;
	default:
		ii->sframe = (uintptr_t)t->scratch + 1024;
		ii->sframe_size = below(r, 2048);
		break;
	}
	switch (below(r, 4)) {
	case 0:
		ii->sframe_vaddr = rnd(r);
		break;
	case 1:
		ii->sframe_vaddr = (uint64_t)below(r, 1 << 20) << 12;
		break;
	default:
		ii->sframe_vaddr = 0x40000000ULL + ((uint64_t)below(r, 16) << 12);
		break;
	}
	ii->flags = one_in(r, 8) ? rnd(r) : one_in(r, 6) ? CODECTL_IMPORT_REMOVE :
		    one_in(r, 20) ? CODECTL_IMPORT_CLEAR : 0;
	/* One flag at most (PRUNE, ABI 4, returns a count). */
	if ((ii->flags & ~CODECTL_IMPORT_FLAGS_ALL) ||
	    __builtin_popcount(ii->flags) > 1)
		c->must_fail = true;
}

/*
 * The ioctls outside the option space accept any size from their VER0 up
 * to CODECTL_INFO_SIZE_MAX (ABI 2): such a number is a real one.
 */
static bool sized_ioctl(unsigned long cmd)
{
	static const struct { unsigned long cmd; unsigned int ver0; } k[] = {
		{ CODECTL_IOC_UNWIND, CODECTL_UNWIND_ARGS_SIZE_VER0 },
		{ CODECTL_IOC_UNWIND_STATS, CODECTL_UNWIND_STATS_SIZE_VER0 },
		{ CODECTL_IOC_HOOK_STATS, CODECTL_HOOK_STATS_SIZE_VER0 },
		{ CODECTL_IOC_IMPORT, CODECTL_IMPORT_INFO_SIZE_VER0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (_IOC_DIR(cmd) == _IOC_DIR(k[i].cmd) &&
		    _IOC_TYPE(cmd) == CODECTL_IOC_MAGIC &&
		    _IOC_NR(cmd) == _IOC_NR(k[i].cmd) &&
		    _IOC_SIZE(cmd) >= k[i].ver0 &&
		    _IOC_SIZE(cmd) <= CODECTL_INFO_SIZE_MAX)
			return true;
	return false;
}

/*
 * Where the kernel may write for a thread: its scratch (whose RW pages
 * end at the read-only and PROT_NONE pages, which stop any write running
 * off them), or where nothing of this process is mapped: NULL and the low
 * pages below mmap_min_addr's usual 64 KiB, and from the top of the user
 * address space on (pick_wild()'s addresses).
 */
#define LOW_UNMAPPED	0x10000ULL
#define USER_TOP	0x00007ffffffff000ULL

static bool out_ours(const struct fuzz_thread *t, uint64_t p)
{
	uint64_t s = (uintptr_t)t->scratch;

	return p < LOW_UNMAPPED || p >= USER_TOP ||
	       (p >= s && p - s < SCRATCH_PAGES * g_page);
}

/*
 * CODECTL_FUZZ_STRAYS set: leave them, as before issue 23's finding 10
 * was explained; each such call is then issued, counted wrong and listed.
 */
static bool keep_strays;

/*
 * CODECTL_FUZZ_AIM=N: one QUERY in N gets one more mutation, a random
 * byte in one of the low six bytes of one of its output pointers: the
 * same operator as make_call()'s mutations, aimed, so that strays are
 * common enough to show what they do (with N 1, some 30 times as many).
 * Drawn from a generator of its own: the other calls stay the seed's.
 */
static unsigned int aim_one_in;

static void query_aim(struct fuzz_thread *t, struct codectl_query_info *q)
{
	__u64 *out[] = { &q->pathname, &q->debug_link_pathname, &q->build_id };
	struct rng *r = &t->rng_aim;
	uint8_t *b;

	if (!aim_one_in || !one_in(r, aim_one_in))
		return;
	b = (uint8_t *)out[below(r, sizeof(out) / sizeof(out[0]))];
	b[below(r, 6)] = rnd(r);
}

/*
 * Issue 23, finding 10: a mutation of a QUERY's struct may flip a bit of
 * its pathname, debug_link_pathname or build_id pointer, which then names
 * any memory of this process (another thread's stack and TLS, libc's
 * data, the heap).  The kernel writes the answer's strings there, as it
 * must: the caller said so.  Put such a pointer back in scratch (where
 * pick_out_ptr() puts them), without drawing, so that a seed still gives
 * the same calls.  Return: the pointers that strayed.
 */
static unsigned int query_outs_ours(struct fuzz_thread *t,
				    struct codectl_query_info *q)
{
	__u64 *out[] = { &q->pathname, &q->debug_link_pathname, &q->build_id };
	unsigned int i, n = 0;

	for (i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		if (out_ours(t, *out[i]))
			continue;
		n++;
		if (!keep_strays)
			*out[i] = (uintptr_t)t->scratch + 2 * g_page;
	}
	return n;
}

/* Draw one call; its info is written into the thread's scratch. */
static void make_call(struct fuzz_thread *t, struct call *c)
{
	struct rng *r = &t->rng;
	uint8_t *s = t->scratch;
	union {
		struct codectl_elf_info elf;
		struct codectl_jit_info jit;
		struct codectl_unregister_info un;
		struct codectl_query_info q;
		struct codectl_version v;
		struct codectl_sframe_check chk;
		uint8_t raw[256];
	} u;
	bool write_opt, tail;
	uint64_t info, size;
	uint8_t *at;
	int opt;

	memset(c, 0, sizeof(*c));
	memset(&u, 0, sizeof(u));
	/* Weights: registering and removing most, unknown commands least. */
	switch (below(r, 24)) {
	case 23:
		make_import_call(t, c);
		return;
	case 0 ... 5:	opt = CODECTL_REGISTER_ELF; break;
	case 6 ... 9:	opt = CODECTL_REGISTER_JIT; break;
	case 10 ... 12:	opt = CODECTL_UNREGISTER; break;
	case 13 ... 14:	opt = CODECTL_QUERY; break;
	case 15:	opt = CODECTL_VERSION; break;
	case 16 ... 17:	opt = CODECTL_CHECK_SFRAME; break;
	case 18 ... 19:	opt = -1; break;
	default:
		/* UNWIND_REQUEST is the test module's now (ABI 3). */
		make_unwind_call(t, c, one_in(r, 2) ? K_UNWIND : K_UNWIND_STATS);
		return;
	}
	if (opt < 0) {
		/* Unknown: other options, wrong sizes and directions, magic. */
		unsigned int nr = below(r, 256), dir = below(r, 4), sz = below(r, 64);

		switch (below(r, 4)) {
		case 0:
			nr = CODECTL_NR_OPTIONS + below(r, 256 - CODECTL_NR_OPTIONS);
			c->cmd = CODECTL_IOC(nr);
			break;
		case 1:		/* a known option with another size */
			if (sz == sizeof(struct codectl_args))
				sz++;
			c->cmd = _IOC(_IOC_WRITE, CODECTL_IOC_MAGIC, nr % CODECTL_NR_OPTIONS, sz);
			break;
		case 2:		/* or another direction */
			if (dir == _IOC_WRITE)
				dir = _IOC_READ | _IOC_WRITE;
			c->cmd = _IOC(dir, CODECTL_IOC_MAGIC, nr % CODECTL_NR_OPTIONS,
				      sizeof(struct codectl_args));
			break;
		default:	/* another magic, or anything with ours */
			c->cmd = one_in(r, 2) ?
				_IOC(dir, CODECTL_IOC_MAGIC + 1 - 2 * below(r, 2), nr, sz) :
				(((unsigned long)rnd(r) & ~0xff00UL) | (CODECTL_IOC_MAGIC << 8));
			break;
		}
		c->cmd &= 0xffffffffUL;		/* the kernel's unsigned int */
		if ((c->cmd == CODECTL_IOC(_IOC_NR(c->cmd)) &&
		     _IOC_NR(c->cmd) < CODECTL_NR_OPTIONS) || sized_ioctl(c->cmd) ||
		    c->cmd == CODECTL_IOC_DEMAND)
			c->cmd ^= 1UL << 30;	/* would be a real one */
		c->kind = K_UNKNOWN;
		c->a.info = one_in(r, 2) ? pick_wild(r) : (uintptr_t)s;
		c->a.info_size = rnd(r);
		c->args_ptr = one_in(r, 3) ? pick_wild(r) : (uintptr_t)&c->a;
		return;
	}
	c->kind = opt;
	c->cmd = CODECTL_IOC(opt);
	switch (opt) {
	case CODECTL_REGISTER_ELF:
		c->bounds = fill_elf(t, &u.elf);
		break;
	case CODECTL_REGISTER_JIT:
		c->bounds = fill_jit(t, &u.jit, &c->chain);
		break;
	case CODECTL_UNREGISTER:
		pick_text(r, &u.un.text_start, &u.un.text_end);
		break;
	case CODECTL_QUERY:
		fill_query(t, &u.q);
		break;
	case CODECTL_VERSION:
		if (one_in(r, 4))	/* VER0: all output */
			memset(&u.v, 0xff, CODECTL_VERSION_SIZE_VER0);
		if (one_in(r, 4)) {	/* VER1: options_map in scratch */
			u.v.options_map = (uintptr_t)s + 2048 + 8 * below(r, 32);
			u.v.options_map_words = below(r, 4);
		}
		break;
	case CODECTL_CHECK_SFRAME:
		fill_check(t, &u.chk);
		break;
	}
	/* Mutations of the well-formed struct. */
	if (one_in(r, 6)) {
		int k, n = 1 + below(r, 3);

		for (k = 0; k < n; k++) {
			size_t off = below(r, ksize[opt]);

			if (one_in(r, 2))
				u.raw[off] ^= 1 << below(r, 8);
			else
				u.raw[off] = rnd(r);
		}
		c->mutated = n;
	}
	if (opt == CODECTL_QUERY) {
		query_aim(t, &u.q);
		t->strays += query_outs_ours(t, &u.q);
	}
	/* A mutated options_map points nowhere we chose: keep it ours. */
	if (opt == CODECTL_VERSION && u.v.options_map &&
	    (u.v.options_map < (uintptr_t)s + 2048 ||
	     u.v.options_map >= (uintptr_t)s + 2048 + 8 * 32))
		u.v.options_map = (uintptr_t)s + 2048;
	c->text_start = opt == CODECTL_REGISTER_JIT ? u.jit.text_start :
			u.elf.text_start;
	c->text_end = opt == CODECTL_REGISTER_JIT ? u.jit.text_end :
		      u.elf.text_end;
	size = pick_info_size(r, opt, &tail);
	write_opt = opt == CODECTL_QUERY || opt == CODECTL_VERSION ||
		    opt == CODECTL_CHECK_SFRAME;

	/* Place the info: scratch (odd, unaligned, before a hole), or wild. */
	switch (below(r, 12)) {
	case 0:
		info = pick_wild(r);
		break;
	case 1:		/* straddling into the read-only page */
		at = s + SCRATCH_RW * g_page - 1 - below(r, ksize[opt]);
		info = (uintptr_t)at;
		break;
	case 2:		/* ending right before PROT_NONE (read-only page) */
		info = (uintptr_t)s + (SCRATCH_RW + 1) * g_page - ksize[opt] -
		       below(r, 3);
		break;
	case 3:		/* real memory, for options that only read it */
		info = write_opt ? (uintptr_t)s + 1 :
		       one_in(r, 2) ? arena_page(r, below(r, 3)) + below(r, g_page) :
		       (uintptr_t)self.text_start + below(r, 4096);
		break;
	default:
		info = (uintptr_t)s + below(r, 2 * g_page);
		if (one_in(r, 3))
			info &= ~7ULL;
		break;
	}
	/* Write the struct where it lands in scratch RW (and its tail). */
	if (info >= (uintptr_t)s && info < (uintptr_t)s + SCRATCH_RW * g_page) {
		size_t room = (uintptr_t)s + SCRATCH_RW * g_page - info;
		size_t n = ksize[opt] < room ? ksize[opt] : room;
		size_t tl = size > ksize[opt] && size - ksize[opt] < 256 ?
			    size - ksize[opt] : 64;

		memcpy((void *)(uintptr_t)info, &u, n);
		if (n < room) {
			size_t m = room - n < tl ? room - n : tl;

			memset((void *)(uintptr_t)info + n, 0, m);
			if (tail && m)
				((uint8_t *)(uintptr_t)info)[n + below(r, m)] = 1 + below(r, 255);
		}
	}
	c->a.info = info;
	c->a.info_size = size;
	if (one_in(r, 40))
		c->a.flags = 1U << below(r, 32);
	if (one_in(r, 40))
		c->a.__reserved = rnd(r) | 1;
	c->must_fail = c->a.flags || c->a.__reserved || size < ver0[opt] ||
		       size > CODECTL_INFO_SIZE_MAX;
	/* The args struct itself: usually fine, sometimes not readable. */
	switch (below(r, 30)) {
	case 0:
		c->args_ptr = pick_wild(r);
		c->must_fail = true;
		break;
	case 1:		/* the read-only page's last 8 bytes, then PROT_NONE */
		c->args_ptr = (uintptr_t)s + (SCRATCH_RW + 1) * g_page - 8;
		c->must_fail = true;
		break;
	default:
		c->args_ptr = (uintptr_t)&c->a;
		break;
	}
	/* The read-only page may be the info itself: keep it read-only. */
	(void)write_opt;
}

/* ---- where the kernel may write ---------------------------------------- */

/* @len bytes at @p lie in the thread's scratch up to its read-only page. */
static bool scratch_readable(const struct fuzz_thread *t, uint64_t p,
			     size_t len)
{
	uint64_t s = (uintptr_t)t->scratch;

	return p >= s && p - s <= (SCRATCH_RW + 1) * g_page - len;
}

/* QUERY's outputs the kernel writes through, and the lengths it checks. */
static const struct {
	size_t ptr, len;
} query_outs[] = {
	{ offsetof(struct codectl_query_info, pathname),
	  offsetof(struct codectl_query_info, pathname_len) },
	{ offsetof(struct codectl_query_info, debug_link_pathname),
	  offsetof(struct codectl_query_info, debug_link_len) },
	{ offsetof(struct codectl_query_info, build_id),
	  offsetof(struct codectl_query_info, build_id_len) },
};

/* A __u64 or __u32 field of the struct at @info. */
static uint64_t field64(uint64_t info, size_t off)
{
	uint64_t v;

	memcpy(&v, (const void *)(uintptr_t)(info + off), sizeof(v));
	return v;
}

static uint32_t field32(uint64_t info, size_t off)
{
	uint32_t v;

	memcpy(&v, (const void *)(uintptr_t)(info + off), sizeof(v));
	return v;
}

/*
 * Every address the kernel may write through for @c, as the kernel will
 * read it (from the info in scratch, fields past info_size being zero),
 * is out_ours().  Return: the first that is not, or 0; *@out gets its
 * index in query_outs[] for a QUERY's, else -1.
 */
static uint64_t stray_out(const struct fuzz_thread *t, const struct call *c,
			  int *out)
{
	uint64_t info = c->a.info, size = c->a.info_size;

	*out = -1;

	if (c->kind == K_UNWIND || c->kind == K_UNWIND_STATS) {
		const struct codectl_unwind_args *a =
			(const void *)(uintptr_t)c->args_ptr;

		if (!out_ours(t, c->args_ptr))
			return c->args_ptr;
		if (c->kind == K_UNWIND_STATS ||
		    !scratch_readable(t, c->args_ptr, sizeof(*a)))
			return 0;
		if (!out_ours(t, a->ips))
			return a->ips;
		return out_ours(t, a->methods) ? 0 : a->methods;
	}
	if ((c->kind != CODECTL_QUERY && c->kind != CODECTL_VERSION &&
	     c->kind != CODECTL_CHECK_SFRAME) ||
	    c->args_ptr != (uintptr_t)&c->a)
		return 0;
	if (!out_ours(t, info))
		return info;
	if (c->kind == CODECTL_QUERY &&
	    scratch_readable(t, info, sizeof(struct codectl_query_info))) {
		unsigned int i;
		uint64_t p;

		for (i = 0; i < sizeof(query_outs) / sizeof(query_outs[0]); i++) {
			p = field64(info, query_outs[i].ptr);
			if (query_outs[i].ptr + 8 <= size && !out_ours(t, p)) {
				*out = i;
				return p;
			}
		}
	}
	if (c->kind == CODECTL_VERSION &&
	    scratch_readable(t, info, sizeof(struct codectl_version))) {
		const struct codectl_version *v = (const void *)(uintptr_t)info;

		if (offsetof(struct codectl_version, options_map) + 8 <= size &&
		    !out_ours(t, v->options_map))
			return v->options_map;
	}
	return 0;
}

/*
 * With CODECTL_FUZZ_STRAYS: the calls that named memory outside the
 * thread's scratch, summed up at the end with the mappings they fell in.
 * @wrote: 1 the kernel wrote there (a successful QUERY whose answer
 * needed no more than the length given), 0 it did not (an error before
 * any output, or a string that did not fit), -1 perhaps (EFAULT).
 */
#define STRAYS_LOGGED 4096

static struct stray {
	int thread, kind, rc, wrote;
	unsigned long call;
	uint64_t addr;
} strays[STRAYS_LOGGED];
static unsigned int nr_strays;

static void stray_log(const struct fuzz_thread *t, const struct call *c,
		      uint64_t addr, int out, uint32_t have, int rc)
{
	unsigned int i = __atomic_fetch_add(&nr_strays, 1, __ATOMIC_RELAXED);
	int wrote = rc == -EFAULT ? -1 : 0;

	if (!rc && out >= 0) {
		uint32_t need = field32(c->a.info, query_outs[out].len);

		wrote = need && have >= need;
	}
	if (i < STRAYS_LOGGED)
		strays[i] = (struct stray){ t->idx, c->kind, rc, wrote,
					    t->calls, addr };
}

/* ---- checking answers ------------------------------------------------- */

static void describe(struct fuzz_thread *t, const struct call *c, int err,
		     const char *why)
{
	pthread_mutex_lock(&fail_lock);
	if (verbose || bad_printed++ < 20)
		printf("#   thread %d call %lu: %s: %s (cmd %#lx, args at %#llx%s: info %#llx, info_size %#llx, flags %#x, reserved %#x%s)\n",
		       t->idx, t->calls, kind_name[c->kind], why, c->cmd,
		       ULL(c->args_ptr), c->args_ptr == (uintptr_t)&c->a ? "" : " (unreadable)",
		       ULL(c->a.info), ULL(c->a.info_size), c->a.flags,
		       c->a.__reserved, c->mutated ? ", mutated" : "");
	(void)err;
	pthread_mutex_unlock(&fail_lock);
}

/* The last CODECTL_SFRAME_E_* code this header knows. */
#if defined(CODECTL_SFRAME_E_FDE_FRES)
#define SFRAME_E_LAST CODECTL_SFRAME_E_FDE_FRES
#elif defined(CODECTL_SFRAME_E_FRE_RANGE)
#define SFRAME_E_LAST CODECTL_SFRAME_E_FRE_RANGE
#else
#define SFRAME_E_LAST CODECTL_SFRAME_E_FRE_TOTAL
#endif

/* Sanity of a successful answer that the kernel wrote into scratch. */
static void check_answer(struct fuzz_thread *t, const struct call *c)
{
	uint8_t *s = t->scratch;
	char why[160];
	uint64_t info = c->a.info;

	if (c->kind == K_UNWIND) {
		const struct codectl_unwind_args *a =
			(const void *)(uintptr_t)c->args_ptr;

		if (!a->nr || a->nr > a->max_frames || !a->stop ||
		    a->stop >= CODECTL_STOP_NR) {
			snprintf(why, sizeof(why), "UNWIND answered nr %u of %u, stop %u",
				 a->nr, a->max_frames, a->stop);
			t->wrong++;
			describe(t, c, 0, why);
		}
		return;
	}
	if (c->kind > K_UNKNOWN)
		return;
	if (info < (uintptr_t)s || info + c->a.info_size > (uintptr_t)s + SCRATCH_RW * g_page)
		return;
	why[0] = 0;
	if (c->kind == CODECTL_QUERY && c->a.info_size >= sizeof(struct codectl_query_info)) {
		struct codectl_query_info q;

		memcpy(&q, (void *)(uintptr_t)info, sizeof(q));
		if (q.text_start >= q.text_end || (q.kind != CODECTL_KIND_ELF &&
						   q.kind != CODECTL_KIND_JIT) ||
		    (q.kind == CODECTL_KIND_JIT && (q.elf_start || q.sframe_start)) ||
		    (q.kind == CODECTL_KIND_ELF && q.unwind_head))
			snprintf(why, sizeof(why),
				 "QUERY answered kind %u [%#llx,%#llx) elf %#llx sframe %#llx head %#llx",
				 q.kind, ULL(q.text_start), ULL(q.text_end),
				 ULL(q.elf_start), ULL(q.sframe_start), ULL(q.unwind_head));
		else if (q.sframe_version > 3 || q.sframe_table > CODECTL_TABLE_KERNEL ||
			 q.coverage > q.text_end - q.text_start ||
			 (!q.sframe_start && (q.sframe_version || q.coverage ||
					      q.sframe_table)))
			snprintf(why, sizeof(why),
				 "QUERY answered SFrame v%u, %u FDEs, coverage %llu of %llu, table %u",
				 q.sframe_version, q.num_fdes, ULL(q.coverage),
				 ULL(q.text_end - q.text_start), q.sframe_table);
	} else if (c->kind == CODECTL_VERSION && c->a.info_size >= sizeof(struct codectl_version)) {
		struct codectl_version v;

		memcpy(&v, (void *)(uintptr_t)info, sizeof(v));
		if (v.abi_version != CODECTL_ABI_VERSION || v.__reserved ||
		    (v.options & 0x3f) != 0x3f || v.nr_registrations > v.max_registrations)
			snprintf(why, sizeof(why), "VERSION answered abi %u options %#llx nr %llu of %llu",
				 v.abi_version, ULL(v.options), ULL(v.nr_registrations),
				 ULL(v.max_registrations));
	} else if (c->kind == CODECTL_CHECK_SFRAME &&
		   c->a.info_size >= sizeof(struct codectl_sframe_check)) {
		struct codectl_sframe_check k;

		memcpy(&k, (void *)(uintptr_t)info, sizeof(k));
		if (k.error > SFRAME_E_LAST ||
		    (k.error == CODECTL_SFRAME_OK && (k.version < 1 || k.version > 3)))
			snprintf(why, sizeof(why), "CHECK_SFRAME answered error %u version %u",
				 k.error, k.version);
	}
	if (why[0]) {
		t->wrong++;
		describe(t, c, 0, why);
	}
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * After a PCMASK or JIT chain registration: it took at most BOUNDS_CPU_MS
 * of the thread's CPU time (kernel time included, preemption not); a
 * chain longer than JIT_CHAIN_MAX or a loop was refused (unless the
 * struct was mutated: it may then name another table); a registration is
 * removed again, as its memory is reused.
 */
static void bounds_check(struct fuzz_thread *t, const struct call *c, int rc,
			 uint64_t cpu_ns)
{
	char why[128];

	t->bounds_calls[c->bounds]++;
	t->bounds_ok[c->bounds] += !rc;
	if (cpu_ns > t->bounds_max_ns)
		t->bounds_max_ns = cpu_ns;
	if (cpu_ns > BOUNDS_CPU_MS * 1000000ULL * time_scale()) {
		t->wrong++;
		snprintf(why, sizeof(why), "%s took %llu ms of CPU time",
			 c->bounds == B_PCMASK ? "a PCMASK registration" :
			 "a JIT chain registration", ULL(cpu_ns / 1000000));
		describe(t, c, rc < 0 ? errno : 0, why);
	}
	if (rc)
		return;
	if (c->bounds == B_CHAIN && !c->mutated &&
	    (!c->chain || c->chain > JIT_CHAIN_MAX)) {
		t->wrong++;
		snprintf(why, sizeof(why), "a JIT chain of %u tables%s registered",
			 c->chain, c->chain ? "" : " (a loop)");
		describe(t, c, 0, why);
	}
	cc_unregister(fuzz_fd, c->text_start, c->text_end);
}

static void fault_thread_init(struct fuzz_thread *t);

static void *fuzz_thread_main(void *p)
{
	struct fuzz_thread *t = p;
	uint64_t cpu = 0;
	uint32_t have = 0;
	uint64_t stray;
	struct call c;
	int rc, err, out;

	fault_thread_init(t);
	while (t->calls < t->target) {
		if (remap_one_in && one_in(&t->rng, remap_one_in)) {
			t->doing = 'r';
			t->remaps += arena_remap(&t->rng);
			t->doing = 0;
			continue;
		}
		t->doing = 'm';
		make_call(t, &c);
		t->kind = c.kind;
		t->cmd = c.cmd;
		t->args = c.args_ptr;
		t->info = c.a.info;
		t->info_size = c.a.info_size;
		/* Only scratch for the kernel's writes (issue 23, finding 10). */
		stray = stray_out(t, &c, &out);
		if (out >= 0)
			have = field32(c.a.info, query_outs[out].len);
		if (stray) {
			t->wrong++;
			describe(t, &c, 0, keep_strays ?
				 "the call names memory outside the thread's scratch for the kernel to write" :
				 "the call names memory outside the thread's scratch for the kernel to write (not issued)");
			if (!keep_strays) {
				t->calls++;
				continue;
			}
		}
		t->doing = 'i';
		if (c.bounds)
			cpu = thread_cpu_ns();
		rc = ioctl(fuzz_fd, c.cmd, (void *)(uintptr_t)c.args_ptr);
		err = rc < 0 ? errno : 0;
		t->doing = 0;
		if (stray)
			stray_log(t, &c, stray, out, have, rc < 0 ? -err : rc);
		if (c.bounds) {
			bounds_check(t, &c, rc, thread_cpu_ns() - cpu);
			errno = err;
		}
		t->calls++;
		t->hist[c.kind][err > MAX_ERRNO ? MAX_ERRNO : err]++;
		if (rc < 0 && !documented(c.kind, err)) {
			char why[64];

			t->undocumented++;
			snprintf(why, sizeof(why), "undocumented errno %s", ename(err));
			describe(t, &c, err, why);
		} else if (rc == 0 && c.kind == K_UNKNOWN) {
			t->undocumented++;
			describe(t, &c, 0, "an unknown command succeeded");
		} else if (rc == 0 && c.must_fail) {
			t->wrong++;
			describe(t, &c, 0, "succeeded with bad flags, reserved, size or args");
		} else if (rc == 0) {
			check_answer(t, &c);
		}
	}
	return NULL;
}

/* ---- a crash: say where, then die of it -------------------------------- */

static struct fuzz_thread *fault_threads;
static int fault_nthreads;

/*
 * What an address is, for on_fault() and the strays: one of the fuzzer's
 * own ranges (a thread's scratch, bounds or stack, an arena or its twin,
 * big_code, this program), @*idx its thread or arena, @*off the offset.
 * Comparisons only: async-signal-safe.  NULL: none of them.
 */
static const char *region(uint64_t a, int *idx, uint64_t *off)
{
	const struct {
		const char *name;
		uint64_t base, len;
		int idx;
	} *r, fixed[] = {
		{ "big_code", (uintptr_t)big_code, big_code ? BIG_CODE : 0, -1 },
		{ "this program", self.elf_start, self.elf_end - self.elf_start, -1 },
	};
	unsigned int i;

	for (i = 0; i < (unsigned int)fault_nthreads; i++) {
		const struct fuzz_thread *t = &fault_threads[i];

		*idx = i;
		*off = a - (uintptr_t)t->scratch;
		if (t->scratch && *off < SCRATCH_PAGES * g_page)
			return "scratch";
		*off = a - (uintptr_t)t->bounds;
		if (t->bounds && *off < BOUNDS_PAGES * g_page)
			return "bounds";
		*off = a - t->stack_lo;
		if (t->stack_lo && *off < t->stack_hi - t->stack_lo)
			return "stack";
		*off = a - (uintptr_t)t->altstack;
		if (t->altstack && *off < ALTSTACK_SIZE)
			return "signal stack";
	}
	for (i = 0; i < NR_ARENAS; i++) {
		*idx = i;
		*off = a - (uintptr_t)arenas[i].base;
		if (arenas[i].base && *off < ARENA_PAGES * g_page)
			return arenas[i].lost ? "arena (lost)" : "arena";
		*off = a - (uintptr_t)arenas[i].twin;
		if (arenas[i].twin && *off < ARENA_PAGES * g_page)
			return "arena twin";
	}
	for (r = fixed; r < fixed + sizeof(fixed) / sizeof(fixed[0]); r++) {
		*idx = r->idx;
		*off = a - r->base;
		if (r->len && *off < r->len)
			return r->name;
	}
	return NULL;
}

/* write(2)-only formatting for the signal handler. */
struct wbuf {
	char b[512];
	size_t n;
};

static void w_str(struct wbuf *w, const char *s)
{
	while (*s && w->n < sizeof(w->b) - 1)
		w->b[w->n++] = *s++;
}

static void w_num(struct wbuf *w, uint64_t v, unsigned int base)
{
	char d[24];
	int i = 0;

	if (base == 16)
		w_str(w, "0x");
	do {
		d[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (i && w->n < sizeof(w->b) - 1)
		w->b[w->n++] = d[--i];
}

static void w_flush(struct wbuf *w)
{
	w_str(w, "\n");
	if (write(1, w->b, w->n) < 0)
		w->n = 0;
	w->n = 0;
}

/* " (thread 2's stack+0x1f08)", or " (none of the fuzzer's)". */
static void w_region(struct wbuf *w, uint64_t a)
{
	uint64_t off;
	const char *name;
	int idx;

	name = region(a, &idx, &off);
	if (!name) {
		w_str(w, " (none of the fuzzer's ranges)");
		return;
	}
	w_str(w, " (");
	if (idx >= 0) {
		w_str(w, strncmp(name, "arena", 5) ? "thread " : "arena ");
		w_num(w, idx, 10);
		w_str(w, "'s ");
	}
	w_str(w, name);
	w_str(w, "+");
	w_num(w, off, 16);
	w_str(w, ")");
}

/* /proc/self/maps, each line as "#   map: ...": open/read/write only. */
static void w_maps(void)
{
	struct wbuf w = { .n = 0 };
	char c, in[256];
	ssize_t n, i;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, in, sizeof(in))) > 0)
		for (i = 0; i < n; i++) {
			c = in[i];
			if (!w.n)
				w_str(&w, "#   map: ");
			if (c == '\n')
				w_flush(&w);
			else if (w.n < sizeof(w.b) - 2)
				w.b[w.n++] = c;
		}
	close(fd);
}

/*
 * SIGSEGV or SIGBUS in the fuzzing process (issue 23, finding 10: one run
 * died of SIGSEGV and said nothing more).  The kernel's faults on user
 * memory are EFAULT, never a signal: this is a user-space access, the
 * fuzzer's or libc's.  Said: the signal, its code and address, the pc and
 * sp, the thread, which of the fuzzer's ranges the address and the pc lie
 * in, what every thread was doing (its last call), and the process's
 * mappings (addresses are the same on every run, without ASLR).  Then the
 * process dies of the signal.  On each thread's own signal stack, with
 * write(2) only: the fault may be a clobbered stack or TLS.
 */
static void on_fault(int sig, siginfo_t *si, void *uctx)
{
	const ucontext_t *uc = uctx;
#if defined(__aarch64__)
	uint64_t pc = uc->uc_mcontext.pc;
	uint64_t sp = uc->uc_mcontext.sp;
#else
	uint64_t pc = uc->uc_mcontext.gregs[REG_RIP];
	uint64_t sp = uc->uc_mcontext.gregs[REG_RSP];
#endif
	pid_t tid = syscall(SYS_gettid);
	struct wbuf w = { .n = 0 };
	int i;

	w_str(&w, "# FAULT: signal ");
	w_num(&w, sig, 10);
	w_str(&w, sig == SIGSEGV ? " (SIGSEGV) code " : " (SIGBUS) code ");
	w_num(&w, si->si_code, 10);
	if (si->si_code <= 0) {
		/* Sent (kill, tgkill): no address. */
		w_str(&w, " (sent by pid ");
		w_num(&w, si->si_pid, 10);
		w_str(&w, ")");
	} else {
		w_str(&w, sig != SIGSEGV ? "" :
			  si->si_code == SEGV_MAPERR ? " (MAPERR)" :
			  si->si_code == SEGV_ACCERR ? " (ACCERR)" : "");
		w_str(&w, " at ");
		w_num(&w, (uintptr_t)si->si_addr, 16);
		w_region(&w, (uintptr_t)si->si_addr);
	}
	w_flush(&w);
	w_str(&w, "#   pc ");
	w_num(&w, pc, 16);
	w_region(&w, pc);
	w_str(&w, ", sp ");
	w_num(&w, sp, 16);
	w_region(&w, sp);
	w_str(&w, ", tid ");
	w_num(&w, tid, 10);
	w_str(&w, tid == getpid() ? " (the main thread)" : "");
	w_flush(&w);
	for (i = 0; i < fault_nthreads; i++) {
		const struct fuzz_thread *t = &fault_threads[i];

		w_str(&w, "#   thread ");
		w_num(&w, i, 10);
		w_str(&w, t->tid == tid ? " (this one): call " : ": call ");
		w_num(&w, t->calls, 10);
		w_str(&w, ", doing ");
		w_str(&w, t->doing == 'i' ? "ioctl" : t->doing == 'r' ? "remap" :
			  t->doing == 'm' ? "make_call" : "checks");
		w_str(&w, ", last ");
		w_str(&w, t->kind >= 0 && t->kind < NR_KINDS &&
			  kind_name[t->kind] ? kind_name[t->kind] : "?");
		w_str(&w, " cmd ");
		w_num(&w, t->cmd, 16);
		w_str(&w, " args ");
		w_num(&w, t->args, 16);
		w_str(&w, " info ");
		w_num(&w, t->info, 16);
		w_str(&w, " size ");
		w_num(&w, t->info_size, 16);
		w_str(&w, "; scratch ");
		w_num(&w, (uintptr_t)t->scratch, 16);
		w_str(&w, " stack ");
		w_num(&w, t->stack_lo, 16);
		w_str(&w, "-");
		w_num(&w, t->stack_hi, 16);
		w_flush(&w);
	}
	w_maps();
	/* SA_RESETHAND: a fault again, of the default action; a kill too. */
	if (si->si_code <= 0)
		syscall(SYS_tgkill, getpid(), tid, sig);
}

/* Each thread's stack range (for region()) and signal stack. */
static void fault_thread_init(struct fuzz_thread *t)
{
	pthread_attr_t attr;
	stack_t ss = { .ss_size = ALTSTACK_SIZE };
	void *lo;
	size_t len;

	t->tid = syscall(SYS_gettid);
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		if (!pthread_attr_getstack(&attr, &lo, &len)) {
			t->stack_lo = (uintptr_t)lo;
			t->stack_hi = (uintptr_t)lo + len;
		}
		pthread_attr_destroy(&attr);
	}
	ss.ss_sp = t->altstack;
	if (ss.ss_sp)
		sigaltstack(&ss, NULL);
}

/* ---- main ------------------------------------------------------------- */

static int tap_n, tap_pass, tap_fail;

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (ok)
		tap_pass++;
	else
		tap_fail++;
	printf("%s %d - ", ok ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

struct shared_result {
	int n, pass, fail;
};

static void print_histogram(struct fuzz_thread *th, int nthreads, double secs,
			    unsigned long calls, unsigned long remaps)
{
	unsigned long tot[MAX_ERRNO + 1] = { 0 }, per[NR_KINDS][MAX_ERRNO + 1];
	char line[2048];
	size_t off;
	int k, e, i;

	memset(per, 0, sizeof(per));
	for (i = 0; i < nthreads; i++)
		for (k = 0; k < NR_KINDS; k++)
			for (e = 0; e <= MAX_ERRNO; e++) {
				per[k][e] += th[i].hist[k][e];
				tot[e] += th[i].hist[k][e];
			}
	off = snprintf(line, sizeof(line), "# calls %lu, duration %.1f s, errno histogram:",
		       calls, secs);
	for (e = 0; e <= MAX_ERRNO; e++)
		if (tot[e])
			off += snprintf(line + off, sizeof(line) - off, " %s %lu",
					e ? ename(e) : "success", tot[e]);
	printf("%s\n", line);
	{
		int lost = 0;

		for (i = 0; i < NR_ARENAS; i++)
			lost += arenas[i].lost;
		printf("# %lu remaps (munmap/mmap/mremap/MAP_FIXED/mprotect/madvise) between the calls; %d of %d arenas lost\n",
		       remaps, lost, NR_ARENAS);
	}
	for (k = 0; k < NR_KINDS; k++) {
		off = snprintf(line, sizeof(line), "#   %-16s", kind_name[k]);
		for (e = 0; e <= MAX_ERRNO; e++)
			if (per[k][e])
				off += snprintf(line + off, sizeof(line) - off, " %s %lu",
						e ? ename(e) : "success", per[k][e]);
		printf("%s\n", line);
	}
}

/*
 * Read every trace record queued on @fd (non-blocking), checking each
 * header.  Return: the number read, or -1 on a malformed record or an
 * error other than EAGAIN.
 */
/*
 * The product's device has no read() since the test facilities (trace
 * records) moved to the test module: EINVAL, as for any file without it.
 */
static int read_refused(int fd)
{
	uint64_t buf[8];

	return read(fd, buf, sizeof(buf)) < 0 && errno == EINVAL;
}

/* The line of /proc/self/maps that holds @a, or "" (no mapping). */
static void maps_line(uint64_t a, char *line, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long lo, hi;

	line[0] = 0;
	while (f && fgets(line, len, f)) {
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && a >= lo && a < hi) {
			line[strcspn(line, "\n")] = 0;
			fclose(f);
			return;
		}
	}
	line[0] = 0;
	if (f)
		fclose(f);
}

/*
 * The output pointers a mutation sent out of the thread's scratch (issue
 * 23, finding 10); with CODECTL_FUZZ_STRAYS, how many fell in a mapping,
 * a writable one, and were written by the kernel, and each of those.
 */
static void print_strays(struct fuzz_thread *th, int nthreads)
{
	unsigned long n = 0, mapped = 0, rw = 0, wrote = 0, maybe = 0;
	unsigned int i, printed = 0;
	char line[256];

	for (i = 0; i < (unsigned int)nthreads; i++)
		n += th[i].strays;
	printf("# %lu QUERY output pointers a mutation sent outside the thread's scratch %s\n",
	       n, keep_strays ? "left there (CODECTL_FUZZ_STRAYS)" : "put back in it");
	for (i = 0; i < nr_strays && i < STRAYS_LOGGED; i++) {
		const struct stray *x = &strays[i];
		const char *name, *perm;
		char who[24] = "";
		uint64_t off = 0;
		int idx;

		maps_line(x->addr, line, sizeof(line));
		if (!line[0])
			continue;
		perm = strchr(line, ' ');
		mapped++;
		if (perm && perm[1] == 'r' && perm[2] == 'w') {
			rw++;
			wrote += x->wrote > 0;
			maybe += x->wrote < 0;
		}
		name = region(x->addr, &idx, &off);
		if (name && idx >= 0)
			snprintf(who, sizeof(who), "%s %d's ",
				 strncmp(name, "arena", 5) ? "thread" : "arena", idx);
		/* Every one written, and the first others. */
		if (x->wrote || printed++ < 100)
			printf("# stray: thread %d call %lu %s named %#llx for the kernel to write, answer %s, %s; in %s%s+%#llx; maps: %s\n",
			       x->thread, x->call, kind_name[x->kind], ULL(x->addr),
			       x->rc < 0 ? ename(-x->rc) : "success",
			       x->wrote > 0 ? "written" : x->wrote < 0 ? "perhaps written" : "not written",
			       who, name ? name : "none of the fuzzer's ranges",
			       ULL(name ? off : 0), line);
	}
	if (keep_strays)
		printf("# strays: %u logged, %lu in a mapping, %lu in a writable one, the kernel wrote %lu of those (%lu perhaps)\n",
		       nr_strays < STRAYS_LOGGED ? nr_strays : STRAYS_LOGGED,
		       mapped, rw, wrote, maybe);
}

/* The fuzzing process: its TAP lines go into *res. */
static int fuzz_main(unsigned long calls, int nthreads, uint64_t seed,
		     struct shared_result *res, bool stats_ok,
		     const struct cstats_all *base)
{
	/*
	 * The fuzzer's own address space: its registry, and discovery's
	 * negative entries there (its UNWINDs ask for discoveries).
	 */
	static const char *const own[] = { "mms", "sets", "negatives", NULL };
	struct fuzz_thread *th;
	unsigned long total = 0, undoc = 0, wrong = 0, remaps = 0;
	struct timespec t0, t1;
	struct codectl_version v;
	struct cstats_all now;
	long removed;
	double secs;
	int i, rc;

	fuzz_fd = cc_open();
	if (fuzz_fd < 0) {
		tap(false, "open " CODECTL_DEVICE ": %s", ename(fuzz_fd));
		goto out;
	}
	g_fd = fuzz_fd;
	have_self = !self_image_get(&self);
	import_fds[0] = open(LIBC, O_RDONLY | O_CLOEXEC);
	import_fds[1] = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	import_fds[2] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	big_code = mmap(NULL, BIG_CODE, PROT_READ | PROT_EXEC,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (big_code == MAP_FAILED)
		big_code = NULL;
	if (!templates_create() || !arenas_create(seed)) {
		tap(false, "setting up memory");
		goto out;
	}
	th = calloc(nthreads, sizeof(*th));
	if (!th) {
		tap(false, "calloc");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nthreads; i++) {
		th[i].idx = i;
		rng_seed(&th[i].rng, seed, i + 1);
		rng_seed(&th[i].rng_aim, seed, nthreads + i + 1);
		th[i].target = calls / nthreads + (i < (int)(calls % nthreads));
		th[i].scratch = mmap(NULL, SCRATCH_PAGES * g_page, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (th[i].scratch == MAP_FAILED) {
			tap(false, "mmap scratch");
			goto out;
		}
		th[i].bounds = mmap(NULL, BOUNDS_PAGES * g_page,
				    PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (th[i].bounds == MAP_FAILED)
			th[i].bounds = NULL;
		th[i].altstack = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (th[i].altstack == MAP_FAILED)
			th[i].altstack = NULL;
		/* Read-only: no NUL anywhere, so strings run into PROT_NONE. */
		memset(th[i].scratch + SCRATCH_RW * g_page, 'A', g_page);
		mprotect(th[i].scratch + SCRATCH_RW * g_page, g_page, PROT_READ);
		mprotect(th[i].scratch + (SCRATCH_RW + 1) * g_page, g_page, PROT_NONE);
	}
	fault_threads = th;
	fault_nthreads = nthreads;
	{
		struct sigaction sa = {
			.sa_sigaction = on_fault,
			.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK,
		};

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
	}
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i].th, NULL, fuzz_thread_main, &th[i])) {
			tap(false, "pthread_create");
			fflush(stdout);
			_exit(1);
		}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i].th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (i = 0; i < nthreads; i++) {
		total += th[i].calls;
		undoc += th[i].undocumented;
		wrong += th[i].wrong;
		remaps += th[i].remaps;
	}
	print_histogram(th, nthreads, secs, total, remaps);
	print_strays(th, nthreads);
	{
		unsigned long n[3] = { 0 }, ok[3] = { 0 };
		uint64_t most = 0;
		int b;

		for (i = 0; i < nthreads; i++) {
			for (b = B_PCMASK; b <= B_CHAIN; b++) {
				n[b] += th[i].bounds_calls[b];
				ok[b] += th[i].bounds_ok[b];
			}
			if (th[i].bounds_max_ns > most)
				most = th[i].bounds_max_ns;
		}
		printf("# bounds: %lu PCMASK registrations (%lu registered), %lu JIT chains (%lu registered), the slowest %.1f ms of CPU time\n",
		       n[B_PCMASK], ok[B_PCMASK], n[B_CHAIN], ok[B_CHAIN],
		       most / 1e6);
	}
	tap(!undoc, "every answer is an errno the header documents for its option (%lu calls, %lu not)",
	    total, undoc);
	tap(!wrong, "calls that must fail failed, successful answers make sense (%lu wrong)",
	    wrong);

	tap(read_refused(fuzz_fd), "read() of " CODECTL_DEVICE " is EINVAL (no trace records in the product)");
	/* Clean up: whatever is still registered is removed, and imported. */
	{
		struct codectl_import_info ii = { .fd = -1, .flags = CODECTL_IMPORT_CLEAR };

		rc = cc_ioctl(fuzz_fd, CODECTL_IOC_IMPORT, &ii);
		tap(!rc || (rc == -EPERM && geteuid()), "IMPORT CLEAR after the calls (%s)",
		    ename(rc));
	}
	removed = cc_unregister_all(fuzz_fd);
	rc = cc_version(fuzz_fd, &v);
	tap(removed >= 0 && !rc && !v.nr_registrations && !v.bytes,
	    "unregistering the %ld left over leaves nothing (nr_registrations %llu, bytes %llu, %s)",
	    removed, ULL(v.nr_registrations), ULL(v.bytes), ename(rc < 0 ? rc : removed < 0 ? removed : 0));
	if (stats_ok) {
		bool back = stats_wait_eq(base, own, 5000, &now);

		stats_print_all("with everything unregistered", &now);
		if (!back)
			stats_report_diff("with everything unregistered", base, &now, own);
		tap(back, "debugfs counters but mms and sets back at the baseline while the fuzzer lives");
	}
out:
	res->n = tap_n;
	res->pass = tap_pass;
	res->fail = tap_fail;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: codectl-ioctl-fuzz [-n CALLS] [-j THREADS] [-s SEED] [-m N] [-v]\n");
}

int main(int argc, char **argv)
{
	unsigned long calls = 100000;
	struct shared_result *res;
	struct cstats_all base, now;
	int nthreads = 4, opt, status, st;
	bool stats_ok;
	uint64_t seed;
	const char *env;
	pid_t pid;

	/* The same addresses every run: a seed then means the same calls. */
	opt = personality(0xffffffff);
	if (opt != -1 && !(opt & ADDR_NO_RANDOMIZE) && !getenv("CODECTL_FUZZ_ASLR") &&
	    personality(opt | ADDR_NO_RANDOMIZE) != -1) {
		execv("/proc/self/exe", argv);
		personality(opt);	/* carry on with randomisation */
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	g_page = sysconf(_SC_PAGESIZE);
	time_scale();	/* read (and said) once, before any thread */
	seed = (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid() << 20;
	keep_strays = getenv("CODECTL_FUZZ_STRAYS");
	env = getenv("CODECTL_FUZZ_AIM");
	if (env)
		aim_one_in = strtoul(env, NULL, 0);
	env = getenv("CODECTL_FUZZ_CALLS");
	if (env && strtoul(env, NULL, 0))
		calls = strtoul(env, NULL, 0);
	while ((opt = getopt(argc, argv, "n:j:s:m:vh")) != -1) {
		switch (opt) {
		case 'n':
			calls = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			nthreads = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			remap_one_in = atoi(optarg);
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || nthreads < 1 || nthreads > 64 || !calls) {
		usage(stderr);
		return 2;
	}
	printf("TAP version 13\n# codectl-ioctl-fuzz: seed %#llx, %d threads, %lu calls (redo with -s %#llx -j %d -n %lu)\n",
	       ULL(seed), nthreads, calls, ULL(seed), nthreads, calls);

	st = stats_available();
	stats_ok = st == T_PASS && !stats_settle_all(&base);
	if (stats_ok) {
		stats_print_all("baseline", &base);
		stats_check_required(&base);
	} else {
		printf("# debugfs stats not available: counters not checked\n");
	}
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	memset(res, 0, sizeof(*res));
	fflush(stdout);
	pid = fork();
	if (!pid) {
		fuzz_main(calls, nthreads, seed, res, stats_ok, &base);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("not ok 1 - fork/wait: %m\n0 passed, 1 failed\n");
		return 1;
	}
	tap_n = res->n;
	tap_pass = res->pass;
	tap_fail = res->fail;
	tap(WIFEXITED(status) && !WEXITSTATUS(status),
	    "the fuzzing process exited normally (%s %d)",
	    WIFSIGNALED(status) ? "signal" : "status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (stats_ok) {
		bool back = stats_wait_eq(&base, NULL, 5000, &now);

		stats_print_all("after the fuzzer exited", &now);
		if (!back)
			stats_report_diff("after the fuzzer exited", &base, &now, NULL);
		tap(back, "every debugfs counter back at the baseline after the fuzzer exited");
	}
	/* Failures recorded outside a TAP check (stats_report_diff, ...). */
	if (nr_failed && !tap_fail)
		tap(false, "%d failures recorded (see above)", nr_failed);
	printf("%d passed, %d failed\n", tap_pass, tap_fail);
	return tap_fail ? 1 : 0;
}
