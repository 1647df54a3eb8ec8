// SPDX-License-Identifier: GPL-2.0
/*
 * bench-unwind: the kernel's cost per unwound frame, SFrame walk against
 * frame-pointer walk, on the same stacks in the same run (a benchmark: it
 * prints figures, it asserts nothing about time).
 *
 * Built -O2 -fno-omit-frame-pointer -Wa,--gsframe (tests/vm/unwind/Makefile,
 * one binary per binutils/SFrame version), so that both methods find the
 * same frames; registered with libcodectl (compiled in).  For stacks 10, 100
 * and 1000 frames deep up to main, CODECTL_IOC_UNWIND runs `iterations`
 * unwinds in the kernel with CODECTL_UNWIND_NO_FP|NO_JIT (SFrame only) and
 * with CODECTL_UNWIND_NO_SFRAME|NO_JIT (FP only), alternating, several
 * rounds; the kernel's `ns` over the iterations gives the cost of one
 * unwind (the median round), and divided by the frames of that unwind the
 * cost of one frame.  The frames up to main must be the same by both
 * methods (else exit 1: the comparison would be meaningless).
 *
 *   bench-unwind [-r ROUNDS] [-m MS_PER_MEASUREMENT] [-l LABEL] [DEPTH...]
 *
 * LABEL names the run in the output instead of the variant (e.g. a run
 * with SFrame decoded in user memory, sframe_flat_max=0).
 *
 * Prints a table and "sframe/fp: X", the ratio of the per-frame costs at
 * the deepest stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <codectl.h>
#include "uw-common.h"

#ifndef UW_VARIANT
#define UW_VARIANT "v3"
#endif

#define MAXF		CODECTL_UNWIND_MAX_FRAMES
#define MAXROUNDS	31
#define ULL(x)		((unsigned long long)(x))

#define FLAGS_SF	(CODECTL_UNWIND_NO_FP | CODECTL_UNWIND_NO_JIT)
#define FLAGS_FP	(CODECTL_UNWIND_NO_SFRAME | CODECTL_UNWIND_NO_JIT)

int main(int argc, char **argv);
struct result;
int b_measure(struct result *res);

struct result {
	int depth;
	uint32_t nr_sf, nr_fp, iterations;
	double ns_sf, ns_fp;		/* per unwind, median round */
	int ok;
};

static int rounds = 7;
static const char *label = UW_VARIANT;
static double target_ms = 30;

static uint64_t ips_sf[MAXF], ips_fp[MAXF];
static uint8_t m_sf[MAXF], m_fp[MAXF];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Frame @i the same in both traces: the same pc, or (for the frame in
 * b_measure, whose call to b_one gcc may duplicate) the same function.
 */
static int same_frame(uint32_t i, uint64_t a, uint64_t b)
{
	uint64_t lo, hi;

	if (a == b)
		return 1;
	return i == 2 && uw_func_range((void *)b_measure, &lo, &hi, NULL) &&
	       a - 1 >= lo && a - 1 < hi && b - 1 >= lo && b - 1 < hi;
}

/* One unwind request: which method, how many iterations, into what. */
struct job {
	uint32_t flags, iterations;
	uint64_t *ips;
	uint8_t *m;
	struct codectl_unwind_args a;
};

/*
 * Frame 1 of every trace; frame 2 is b_measure(), the rest the same
 * recursion for both methods.
 */
NOIPA long b_one(struct job *j)
{
	long r;

	uw_args(&j->a, j->ips, j->m, MAXF, j->flags);
	j->a.iterations = j->iterations;
	r = uw_unwind(&j->a);
	KEEP(r);
	return r;
}

/*
 * The measurements at one depth: steps of (method, iterations), each run
 * through the single b_one() call below.  Step 0, 1: one unwind by each
 * method (compared frame by frame); 2: calibration; then the rounds.
 */
NOIPA int b_measure(struct result *res)
{
	struct job sfj = { .flags = FLAGS_SF, .ips = ips_sf, .m = m_sf };
	struct job fpj = { .flags = FLAGS_FP, .ips = ips_fp, .m = m_fp };
	double sf[MAXROUNDS], fp[MAXROUNDS], t1;
	uint32_t i, main_at = res->depth - 1, iters = 1;
	int step, nsteps = 3 + 2 * rounds;
	uint64_t lo, hi;
	long r;

	res->ok = 0;
	if (!uw_func_range((void *)main, &lo, &hi, NULL))
		return -1;
	for (step = 0; step < nsteps; step++) {
		struct job *j;
		int k = (step - 3) / 2;

		if (step < 3) {
			j = step == 1 ? &fpj : &sfj;
			j->iterations = step == 2 ? 20 : 1;
		} else {
			/* Alternate which method goes first in a round. */
			j = ((step - 3) & 1) ^ (k & 1) ? &fpj : &sfj;
			j->iterations = iters;
		}
		r = b_one(j);
		if (r) {
			printf("# depth %d: CODECTL_IOC_UNWIND: %s\n",
			       res->depth, strerror((int)-r));
			return -1;
		}
		if (step == 1) {
			/* Correctness: the same frames up to main. */
			struct codectl_unwind_args *a = &sfj.a, *b = &fpj.a;

			if (a->nr <= main_at || b->nr <= main_at ||
			    ips_sf[main_at] - 1 < lo || ips_sf[main_at] - 1 >= hi) {
				printf("# depth %d: SFrame walk %u frames (stop %s), FP walk %u frames (stop %s); main expected at frame %u\n",
				       res->depth, a->nr, uw_stop_name(a->stop),
				       b->nr, uw_stop_name(b->stop), main_at);
				return -1;
			}
			for (i = 0; i <= main_at; i++) {
				if (!same_frame(i, ips_sf[i], ips_fp[i]) ||
				    (i && (m_sf[i] != CODECTL_FRAME_SFRAME ||
					   (m_fp[i] != CODECTL_FRAME_FP &&
					    m_fp[i] != CODECTL_FRAME_FP_ENTRY)))) {
					char s1[128], s2[128];

					printf("# depth %d: frame %u differs: SFrame %#llx %s (%s), FP %#llx %s (%s)\n",
					       res->depth, i, ULL(ips_sf[i]),
					       uw_sym(ips_sf[i] - !!i, s1, sizeof(s1)),
					       uw_method_name(m_sf[i]), ULL(ips_fp[i]),
					       uw_sym(ips_fp[i] - !!i, s2, sizeof(s2)),
					       uw_method_name(m_fp[i]));
					return -1;
				}
			}
			res->nr_sf = a->nr;
			res->nr_fp = b->nr;
		} else if (step == 2) {
			/* Iterations for about target_ms per measurement. */
			t1 = (double)sfj.a.ns / 20;
			iters = t1 > 0 ? (uint32_t)(target_ms * 1e6 / t1) : 1000;
			if (iters < 1)
				iters = 1;
			if (iters > 1000000)
				iters = 1000000;
			res->iterations = iters;
		} else if (step > 2) {
			if (j->a.nr != (j == &sfj ? res->nr_sf : res->nr_fp)) {
				printf("# depth %d: frame counts changed: %u/%u, then %u (%s)\n",
				       res->depth, res->nr_sf, res->nr_fp, j->a.nr,
				       j == &sfj ? "SFrame" : "FP");
				return -1;
			}
			if (j == &sfj)
				sf[k] = (double)j->a.ns / iters;
			else
				fp[k] = (double)j->a.ns / iters;
		}
	}
	qsort(sf, rounds, sizeof(sf[0]), cmp_double);
	qsort(fp, rounds, sizeof(fp[0]), cmp_double);
	res->ns_sf = sf[rounds / 2];
	res->ns_fp = fp[rounds / 2];
	res->ok = 1;
	return 0;
}

NOIPA int b_rec(int n, struct result *res)
{
	int r;

	if (n == 0)
		r = b_measure(res);
	else
		r = b_rec(n - 1, res);
	KEEP(r);
	return r;
}

/*
 * Frames up to main: uw_unwind, b_one, b_measure, b_rec x (n + 1), b_depth,
 * main: n + 6.
 */
NOIPA int b_depth(struct result *res)
{
	int r = b_rec(res->depth - 6, res);

	KEEP(r);
	return r;
}

int main(int argc, char **argv)
{
	int depths[16] = { 10, 100, 1000 }, nd = 3, i, opt, bad = 0;
	struct result res[16];
	struct utsname u;
	int r;

	while ((opt = getopt(argc, argv, "r:m:l:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > MAXROUNDS)
				rounds = 7;
			break;
		case 'm':
			target_ms = atof(optarg);
			break;
		case 'l':
			label = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-r ROUNDS] [-m MS] [-l LABEL] [DEPTH...]\n",
				argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		for (nd = 0; optind < argc && nd < 16; optind++) {
			int d = atoi(argv[optind]);

			if (d < 7 || d > MAXF - 16) {
				fprintf(stderr, "depth %d: 7 .. %d\n", d, MAXF - 16);
				return 2;
			}
			depths[nd++] = d;
		}
	}
	r = uw_open();
	if (r || uw_register_all() < 0) {
		printf("bench-unwind: %s: %s\n", CODECTL_DEVICE,
		       strerror(r ? -r : errno));
		return 1;
	}
	uname(&u);
	printf("# bench-unwind %s: SFrame %s + frame pointers, kernel %s, %d rounds of ~%.0f ms, median\n",
	       label, UW_VARIANT, u.release, rounds, target_ms);
	printf("%-8s %6s %14s %10s %10s %10s %10s %8s\n", "variant", "depth",
	       "frames sf/fp", "iters", "sf ns/uw", "fp ns/uw", "sf ns/fr",
	       "fp ns/fr");
	for (i = 0; i < nd; i++) {
		res[i].depth = depths[i];
		if (b_depth(&res[i]) || !res[i].ok) {
			printf("%-8s %6d  failed\n", label, depths[i]);
			bad = 1;
			continue;
		}
		printf("%-8s %6d %8u/%-5u %10u %10.0f %10.0f %10.1f %10.1f   sframe/fp %.2f\n",
		       label, res[i].depth, res[i].nr_sf, res[i].nr_fp,
		       res[i].iterations, res[i].ns_sf, res[i].ns_fp,
		       res[i].ns_sf / res[i].nr_sf, res[i].ns_fp / res[i].nr_fp,
		       (res[i].ns_sf / res[i].nr_sf) / (res[i].ns_fp / res[i].nr_fp));
	}
	if (!bad) {
		const struct result *lo = &res[0], *hi = &res[nd - 1];
		double sf = hi->ns_sf / hi->nr_sf, fp = hi->ns_fp / hi->nr_fp;

		if (nd > 1 && hi->nr_sf > lo->nr_sf && hi->nr_fp > lo->nr_fp) {
			double dsf = (hi->ns_sf - lo->ns_sf) / (hi->nr_sf - lo->nr_sf);
			double dfp = (hi->ns_fp - lo->ns_fp) / (hi->nr_fp - lo->nr_fp);

			printf("# marginal cost per frame (depth %d to %d): sframe %.1f ns, fp %.1f ns, ratio %.2f\n",
			       lo->depth, hi->depth, dsf, dfp, dfp > 0 ? dsf / dfp : 0);
		}
		printf("sframe/fp: %.2f (%s, per-frame cost at depth %d)\n",
		       fp > 0 ? sf / fp : 0, label, hi->depth);
	}
	return bad;
}
