// SPDX-License-Identifier: GPL-2.0
/*
 * two_text.so: an object with two executable segments (the Makefile
 * places .far_text at 4 MiB), for test_register_all.
 */
int near_fn(int x);
int far_fn(int x);

__attribute__((noinline)) int near_fn(int x)
{
	return x * 3 + 1;
}

__attribute__((section(".far_text"), noinline)) int far_fn(int x)
{
	return near_fn(x) * 5 + 2;
}
