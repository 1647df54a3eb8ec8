// SPDX-License-Identifier: GPL-2.0
/*
 * tests/vm/tracers.sh's program for the no-harm check's fallback (issue
 * 42): built with frame pointers AND --gsframe (binutils 2.47, SFrame
 * v3), its time spent in hm_spin (harm-spin.S), whose SFrame rule in the
 * loop gives a return address that is not code while its frame pointer
 * is right.  Complete stacks are hm_spin, hm_outer, main.
 *
 *   harm-tracee SECONDS
 *
 * Registers nothing: discovery finds its SFrame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void hm_spin(unsigned long n);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Not inlined, so that it has a frame of its own between hm_spin and main. */
__attribute__((noinline)) void hm_outer(double secs)
{
	double end = now() + secs;

	while (now() < end)
		hm_spin(2000000);
	/* Keep the call above a call (no tail call to hm_spin). */
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	hm_outer(argc > 1 ? atof(argv[1]) : 3);
	puts("done");
	return 0;
}
