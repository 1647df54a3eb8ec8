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

static const char *const method_names[] = {
	[CODECTL_FRAME_REGS] = "regs",
	[CODECTL_FRAME_SFRAME] = "sframe",
	[CODECTL_FRAME_JIT] = "jit",
	[CODECTL_FRAME_FP] = "fp",
	[CODECTL_FRAME_FP_ENTRY] = "fp-entry",
	[CODECTL_FRAME_SIGNAL] = "signal",
};

static const char *const stop_names[] = {
	[CODECTL_STOP_OUTERMOST] = "outermost frame",
	[CODECTL_STOP_END] = "end of the stack",
	[CODECTL_STOP_DEPTH] = "frame limit",
	[CODECTL_STOP_FAULT] = "unreadable stack",
	[CODECTL_STOP_SP] = "implausible caller frame",
	[CODECTL_STOP_ALIGN] = "misaligned stack or frame pointer",
	[CODECTL_STOP_TABLE] = "no usable unwind table",
	[CODECTL_STOP_NO_USER] = "no user context",
	[CODECTL_STOP_STALE] = "stale request",
	[CODECTL_STOP_NOMEM] = "out of memory",
};

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
	printf("%s: %u frames, stopped: %s\n", title, a.nr,
	       a.stop < sizeof(stop_names) / sizeof(stop_names[0]) &&
	       stop_names[a.stop] ? stop_names[a.stop] : "?");
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
		       methods[i] < sizeof(method_names) / sizeof(method_names[0]) &&
		       method_names[methods[i]] ? method_names[methods[i]] : "?",
		       sym, obj);
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
