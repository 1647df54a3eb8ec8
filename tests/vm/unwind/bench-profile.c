// SPDX-License-Identifier: GPL-2.0
/*
 * bench-profile's workload: a fixed amount of work at the bottom of
 * stacks 5, 50 and 500 frames deep, built -O2 -fomit-frame-pointer
 * --gsframe (no frame pointers; its own SFrame section, which codectl's
 * discovery finds: nothing is registered).
 *
 *   bench-profile ROUNDS
 *
 * Each round calls bp_leaf() at the bottom of each of the three depths;
 * the recursion goes through a volatile function pointer, so that it is
 * neither inlined nor turned into a loop, and every frame holds a return
 * address and a little data.  Prints "bench-profile: NS ns" (monotonic
 * time of the whole run) on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
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

static NOIPA void bp_run(long rounds)
{
	static const int depth[] = { 5, 50, 500 };
	unsigned long x = 1;
	long r;
	int i;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < 3; i++)
			x += bp_rec(depth[i], x);
	bp_sink = x;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	bp_run(rounds);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("bench-profile: %lld ns\n",
	       (long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
	       (b.tv_nsec - a.tv_nsec));
	return 0;
}
