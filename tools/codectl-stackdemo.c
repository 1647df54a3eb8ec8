// SPDX-License-Identifier: GPL-2.0
/*
 * codectl-stackdemo: a program built like a distribution's (-O2, no frame
 * pointers, SFrame from gas --gsframe) asks the kernel for its own user
 * stack deep inside a recursion, twice: with the module's unwinder as it
 * runs for tracers (SFrame first), and with frame pointers only, as the
 * kernel's own user-stack code would do.  Each frame is printed with the
 * function it lies in and how the kernel found it.
 *
 *   codectl-stackdemo [DEPTH]      (default 3)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codectl.h>

#define MAX_FRAMES 64

__attribute__((noinline)) void print_stack(const char *title, unsigned int flags)
{
	uint64_t ips[MAX_FRAMES];
	uint8_t methods[MAX_FRAMES];
	struct codectl_unwind_args a = {
		.ips = (uintptr_t)ips,
		.methods = (uintptr_t)methods,
		.max_frames = MAX_FRAMES,
		.flags = flags,
	};

	if (codectl_unwind_self(&a)) {
		fprintf(stderr, "codectl-stackdemo: unwind: %s\n",
			strerror(errno));
		exit(1);
	}
	printf("%s: %u frames, stop: %s\n", title, a.nr,
	       codectl_stop_name(a.stop));
	for (unsigned int i = 0; i < a.nr; i++) {
		/* A return address may be just past its function: look up ip-1. */
		uintptr_t pc = ips[i] - (i ? 1 : 0);
		const char *obj = "?", *sym = "??";
		Dl_info d;

		if (dladdr((void *)pc, &d)) {
			if (d.dli_sname)
				sym = d.dli_sname;
			if (d.dli_fname) {
				obj = strrchr(d.dli_fname, '/');
				obj = obj ? obj + 1 : d.dli_fname;
			}
		}
		printf("  #%-2u %#014" PRIx64 "  %-9s %s (%s)\n", i, ips[i],
		       codectl_frame_name(methods[i]), sym, obj);
	}
}

/* Exported (-rdynamic) and kept out of line so the frames have names. */
__attribute__((noinline)) void leaf(void)
{
	print_stack("kernel unwinder (SFrame, JIT, then frame pointers)", 0);
	putchar('\n');
	print_stack("frame pointers only",
		    CODECTL_UNWIND_NO_SFRAME | CODECTL_UNWIND_NO_JIT);
	__asm__ volatile ("" ::: "memory");
}

__attribute__((noinline)) int eval(int depth)
{
	int r;

	if (!depth) {
		leaf();
		return 1;
	}
	r = eval(depth - 1) * 2;
	__asm__ volatile ("" ::: "memory");
	return r;
}

__attribute__((noinline)) int run(int depth)
{
	int r = eval(depth) + 1;

	__asm__ volatile ("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 3;

	if (depth < 0 || depth > 40) {
		fprintf(stderr, "usage: codectl-stackdemo [DEPTH 0..40]\n");
		return 2;
	}
	if (codectl_register_self() < 0) {
		fprintf(stderr, "codectl-stackdemo: register: %s\n",
			strerror(errno));
		return 1;
	}
	return run(depth) > 0 ? 0 : 1;
}
