/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/vm/ondemand/startup and its library: STARTUP_EACH(M) expands M(n)
 * for each of the library's functions (STARTUP_FUNCS of them).
 */
#ifndef STARTUP_H
#define STARTUP_H

#define STARTUP_SPIN	200000UL	/* each constructor's iterations */

#define STARTUP_E8(M, a) M(a##0) M(a##1) M(a##2) M(a##3) M(a##4) M(a##5) \
	M(a##6) M(a##7)
#define STARTUP_E64(M, a) STARTUP_E8(M, a##0) STARTUP_E8(M, a##1) \
	STARTUP_E8(M, a##2) STARTUP_E8(M, a##3) STARTUP_E8(M, a##4) \
	STARTUP_E8(M, a##5) STARTUP_E8(M, a##6) STARTUP_E8(M, a##7)
#define STARTUP_EACH(M) STARTUP_E64(M, 1) STARTUP_E64(M, 2) \
	STARTUP_E64(M, 3) STARTUP_E64(M, 4) STARTUP_E64(M, 5) \
	STARTUP_E64(M, 6)
#define STARTUP_FUNCS	(6 * 64)

#define STARTUP_DECL(n) unsigned long startup_f##n(unsigned long x);
STARTUP_EACH(STARTUP_DECL)
extern unsigned long (*const startup_funcs[])(unsigned long);

#endif
