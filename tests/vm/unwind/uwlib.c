// SPDX-License-Identifier: GPL-2.0
/*
 * The shared library of the unwinding tests' PLT case: the program calls
 * uwlib_entry() through its PLT, which calls uwlib_mid() through the
 * library's own PLT (default visibility, -fPIC: interposable), which calls
 * back into the program.  Built by the same toolchain and flags as the
 * program (--gsframe, or frame pointers for the fp variant).
 */
#define NOIPA __attribute__((noipa))

NOIPA int uwlib_mid(int (*cb)(int), int x)
{
	int r = cb(x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");	/* no tail call */
	return r;
}

NOIPA int uwlib_entry(int (*cb)(int), int x)
{
	int r = uwlib_mid(cb, x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");
	return r;
}
