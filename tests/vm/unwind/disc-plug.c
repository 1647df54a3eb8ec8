// SPDX-License-Identifier: GPL-2.0
/*
 * The dlopen'd plugin of disc-test: built with --gsframe and without
 * frame pointers like the program, and never registered by anyone but
 * the module's discovery.  plug_entry() -> plug_mid() -> the program's
 * callback.
 */
#define NOIPA __attribute__((noipa))

NOIPA int plug_mid(int (*cb)(int), int x)
{
	int r = cb(x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");	/* no tail call */
	return r;
}

NOIPA int plug_entry(int (*cb)(int), int x)
{
	int r = plug_mid(cb, x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");
	return r;
}
