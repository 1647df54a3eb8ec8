// SPDX-License-Identifier: GPL-2.0
/*
 * tests/vm/tracers.sh's program for the no-harm check's fallback (issue
 * 42): built with frame pointers AND --gsframe (binutils 2.47, SFrame
 * v3), its time spent in one of harm-spin.S's functions, whose SFrame
 * rule in the loop is wrong (KIND: the stop a walk by the table alone
 * makes there) while its frame pointer is right.  Complete stacks are
 * that function, hm_outer, main.
 *
 *   harm-tracee KIND SECONDS	KIND: not_code, align, sp, fault or norow
 *
 * Registers nothing: discovery finds its SFrame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hm_spin(unsigned long n);
void hm_spin_align(unsigned long n);
void hm_spin_sp(unsigned long n);
void hm_spin_fault(unsigned long n);
void hm_spin_norow(unsigned long n);

static const struct {
	const char *kind;
	void (*spin)(unsigned long n);
} kinds[] = {
	{ "not_code", hm_spin },
	{ "align", hm_spin_align },
	{ "sp", hm_spin_sp },
	{ "fault", hm_spin_fault },
	{ "norow", hm_spin_norow },
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Not inlined, so that it has a frame of its own between the spin and main. */
__attribute__((noinline)) void hm_outer(void (*spin)(unsigned long n),
					double secs)
{
	double end = now() + secs;

	while (now() < end)
		spin(2000000);
	/* Keep the call above a call (no tail call to the spin). */
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	size_t i;

	for (i = 0; argc == 3 && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(argv[1], kinds[i].kind))
			break;
	if (argc != 3 || i == sizeof(kinds) / sizeof(kinds[0])) {
		fprintf(stderr, "usage: harm-tracee not_code|align|sp|fault|norow SECONDS\n");
		return 2;
	}
	hm_outer(kinds[i].spin, atof(argv[2]));
	puts("done");
	return 0;
}
