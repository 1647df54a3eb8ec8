// SPDX-License-Identifier: GPL-2.0
/*
 * A program that is all startup, for the on-demand stage's startup check
 * (tests/vm/ondemand.sh): at load ld.so relocates its library's table of
 * its STARTUP_FUNCS functions (a symbol look-up each), runs the library's
 * constructor (_dl_init), then the program's own (from libc's
 * __libc_start_main); main calls each function once through the PLT,
 * linked with -z lazy (ld.so's _dl_runtime_resolve and _dl_fixup on each
 * first call), and returns.  Built as Debian builds: no frame pointers,
 * no SFrame, .eh_frame only.
 */
#include "startup.h"

static volatile unsigned long sink;

__attribute__((constructor)) static void startup_ctor(void)
{
	unsigned long i, x = 2;

	for (i = 0; i < STARTUP_SPIN; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

#define CALL(n) x += startup_f##n(x);

int main(void)
{
	unsigned long x = sink;

	STARTUP_EACH(CALL)
	sink = x + (unsigned long)startup_funcs[sink & 63];
	return 0;
}
