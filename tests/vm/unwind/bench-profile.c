// SPDX-License-Identifier: GPL-2.0
/*
 * bench-profile's workloads, built twice: -O2 -fomit-frame-pointer
 * --gsframe (no frame pointers; its own SFrame section, which codectl's
 * discovery finds: nothing is registered), and -O2
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer without SFrame
 * (what a distribution built with frame pointers runs).
 *
 *   bench-profile ROUNDS [deep|calls]
 *
 * deep (the default): a fixed amount of work at the bottom of stacks 5,
 * 50 and 500 frames deep.  Each round calls bp_leaf() at the bottom of
 * each of the three depths; the recursion goes through a volatile
 * function pointer, so that it is neither inlined nor turned into a
 * loop, and every frame holds a return address and a little data.  The
 * three come in an order drawn for each round (a fixed-seed generator):
 * under QEMU's -icount the sampling timer falls at instruction counts
 * fixed by the workload and by each sample's cost, and with one order
 * the samples locked onto some depths (the mean frames per sample of
 * rows of one run went from 211 to 478).  Few
 * calls: about one per 110 instructions, most of them in bp_leaf()'s
 * loop, so frame pointers cost it little.
 *
 * calls: call-heavy, as code made of small functions is: under a chain of
 * 24 frames, a binary tree of calls 11 deep (4095 calls per round), each
 * a few dozen instructions of arithmetic; stacks 28 to 39 frames deep.
 *
 * Prints "bench-profile: NS ns" (monotonic time of the whole run) and
 * "bench-profile: N calls" (the workload's function calls) on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOIPA	__attribute__((noinline, noipa))

static volatile unsigned long bp_sink;

/* About 20,000 instructions of arithmetic. */
static NOIPA unsigned long bp_leaf(unsigned long x)
{
	int i;

	for (i = 0; i < 4000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static unsigned long bp_rec(int d, unsigned long x);
static unsigned long (*volatile bp_next)(int, unsigned long) = bp_rec;

static NOIPA unsigned long bp_rec(int d, unsigned long x)
{
	volatile unsigned long pad[2] = { x, d };

	if (!d)
		return bp_leaf(x);
	return bp_next(d - 1, x + pad[1]) + pad[0];
}

static unsigned long bp_calls;

static NOIPA void bp_run(long rounds)
{
	static const int depth[6][3] = {
		{ 5, 50, 500 }, { 5, 500, 50 }, { 50, 5, 500 },
		{ 50, 500, 5 }, { 500, 5, 50 }, { 500, 50, 5 },
	};
	unsigned long x = 1;
	unsigned int seed = 1;
	const int *d;
	long r;
	int i;

	for (r = 0; r < rounds; r++) {
		seed = seed * 1103515245 + 12345;
		d = depth[(seed >> 16) % 6];
		for (i = 0; i < 3; i++)
			x += bp_rec(d[i], x);
	}
	bp_sink = x;
	bp_calls = rounds * (3 + 6 + 51 + 501);
}

#define BC_CHAIN	24
#define BC_TREE		11

/* The tree's leaves: a little arithmetic, no calls. */
static NOIPA unsigned long bc_leaf(unsigned long x)
{
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9UL;
	return x ^ (x >> 32);
}

/* A node of the tree: a little arithmetic, then two subtrees. */
static NOIPA unsigned long bc_node(int d, unsigned long x)
{
	unsigned long y = x ^ (x >> 31);

	if (!d)
		return bc_leaf(y);
	return bc_node(d - 1, y) + (bc_node(d - 1, y + 1) ^ x);
}

static unsigned long bc_chain(int d, unsigned long x);
static unsigned long (*volatile bc_next)(int, unsigned long) = bc_chain;

static NOIPA unsigned long bc_chain(int d, unsigned long x)
{
	volatile unsigned long pad[2] = { x, d };

	if (!d)
		return bc_node(BC_TREE, x);
	return bc_next(d - 1, x + pad[1]) + pad[0];
}

static NOIPA void bc_run(long rounds)
{
	unsigned long x = 1;
	long r;

	for (r = 0; r < rounds; r++)
		x += bc_chain(BC_CHAIN, x);
	bp_sink = x;
	bp_calls = rounds * (1 + BC_CHAIN + (3UL << BC_TREE) - 1);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	int calls = argc > 2 && !strcmp(argv[2], "calls");
	struct timespec a, b;

	if (argc > 2 && !calls && strcmp(argv[2], "deep")) {
		fprintf(stderr, "usage: bench-profile ROUNDS [deep|calls]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (calls)
		bc_run(rounds);
	else
		bp_run(rounds);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("bench-profile: %lld ns\n",
	       (long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
	       (b.tv_nsec - a.tv_nsec));
	printf("bench-profile: %lu calls\n", bp_calls);
	return 0;
}
