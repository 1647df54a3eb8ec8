// SPDX-License-Identifier: GPL-2.0
/*
 * The library of tests/vm/ondemand/startup: STARTUP_FUNCS functions the
 * program calls once each through its PLT (lazy binding: ld.so's
 * _dl_runtime_resolve and _dl_fixup on each first call), a table of them
 * (a symbol relocation each, interposable, at load), and a constructor that ld.so's
 * _dl_init runs before main.  Built as Debian builds: no frame pointers,
 * no SFrame, .eh_frame only.
 */
#include "startup.h"

volatile unsigned long startup_sink;

/* Work in the constructor's own code, under ld.so's _dl_init. */
__attribute__((constructor)) static void startup_lib_ctor(void)
{
	unsigned long i, x = 1;

	for (i = 0; i < STARTUP_SPIN; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	startup_sink = x;
}

#define F(n) unsigned long startup_f##n(unsigned long x) { return x * n + 1; }
STARTUP_EACH(F)

#define ADDR(n) startup_f##n,
unsigned long (*const startup_funcs[])(unsigned long) = { STARTUP_EACH(ADDR) };
