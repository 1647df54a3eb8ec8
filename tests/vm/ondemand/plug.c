// SPDX-License-Identifier: GPL-2.0
/*
 * A plug-in of tests/vm/ondemand/many: no frame pointers, no SFrame,
 * only the .eh_frame every Debian object has.  The guest copies it many
 * times (each copy another file for the module and the daemon).
 */
volatile unsigned long plug_sink;

__attribute__((noinline)) static unsigned long plug_work(unsigned long n)
{
	unsigned long i, x = n;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

void plug_spin(unsigned long n)
{
	plug_sink += plug_work(n);
}
