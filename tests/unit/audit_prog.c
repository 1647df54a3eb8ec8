// SPDX-License-Identifier: GPL-2.0
/*
 * audit_prog TWO_TEXT_SO: a program run under the audit module by
 * test_audit.sh: dlopen()s an object, calls into it, dlclose()s it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int (*far_fn)(int);
	void *h;

	if (argc != 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "audit_prog: %s\n", dlerror());
		return 1;
	}
	far_fn = (int (*)(int))dlsym(h, "far_fn");
	if (!far_fn)
		return 1;
	printf("far_fn(1) = %d\n", far_fn(1));
	dlclose(h);
	printf("done\n");
	return 3;
}
