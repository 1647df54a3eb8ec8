// SPDX-License-Identifier: GPL-2.0
/*
 * An object without SFrame for disc-test (host toolchain, no --gsframe,
 * frame pointers): discovery registers it without an SFrame section.
 */
#define NOIPA __attribute__((noipa))

NOIPA int nosf_entry(int (*cb)(int), int x)
{
	int r = cb(x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");
	return r;
}
