// SPDX-License-Identifier: GPL-2.0
/*
 * The program the tracer tests (tests/vm/tracers.sh) trace: a chain of
 * nine frames, main -> tr_f1 -> ... -> tr_f7 -> tr_leaf, built like the
 * unwinding tests (v3: -fomit-frame-pointer with SFrame; fp: frame
 * pointers, no SFrame).  tr_leaf spins, or sleeps in raw nanosleep system
 * calls of its own (so that the pc at a context switch is in tr_leaf, not
 * in libc, which has neither SFrame nor frame pointers).
 *
 *   tracee [-r] [-s] [-d LIB]... SECONDS
 *                              run for SECONDS; -r: register every loaded
 *                              object with codectl first (libcodectl);
 *                              -s: sleep instead of spinning; -d: dlopen()
 *                              LIB first (before -r registers)
 *   tracee resolve             copy stdin to stdout, each address of this
 *                              program (0x1234abcd, or 8-16 bare hex
 *                              digits) replaced by its symbol's name: for
 *                              user stacks printed as bare addresses
 *                              (ftrace's; bpftrace's once the process is
 *                              gone), with ASLR off so that both runs load
 *                              at the same addresses
 *
 * Prints "tracee: ready PID registered N" on stderr before the chain.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <codectl.h>

#define NOIPA	__attribute__((noinline, noipa))

static volatile sig_atomic_t tr_done;
static volatile unsigned long tr_sink;
static int tr_sleep;

static void tr_alarm(int sig)
{
	tr_done = 1;
}

/* One millisecond, through a syscall instruction in this frame. */
static inline void tr_nanosleep(void)
{
	struct timespec ts = { 0, 1000000 };
#if defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_nanosleep;
	register long x0 __asm__("x0") = (long)&ts;
	register long x1 __asm__("x1") = 0;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1)
			 : "memory");
#else
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
#endif
}

NOIPA void tr_leaf(int depth)
{
	unsigned long i;

	while (!tr_done) {
		if (tr_sleep) {
			tr_nanosleep();
			continue;
		}
		for (i = 0; i < 100000; i++)
			tr_sink += i * depth;
	}
}

/* Each hop calls the next and does work after it: no tail calls. */
#define TR_HOP(n, next)					\
	NOIPA void tr_f##n(int depth)			\
	{						\
		next(depth + 1);			\
		tr_sink += depth;			\
	}

TR_HOP(7, tr_leaf)
TR_HOP(6, tr_f7)
TR_HOP(5, tr_f6)
TR_HOP(4, tr_f5)
TR_HOP(3, tr_f4)
TR_HOP(2, tr_f3)
TR_HOP(1, tr_f2)

/*
 * Replace each address of this program in the text (0x1234abcd, or 8 to 16
 * bare hex digits) by its symbol's name; leave everything else.
 */
static int tr_resolve(void)
{
	const char *hex = "0123456789abcdefABCDEF";
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		char *p = line;

		while (*p) {
			int prefixed = p[0] == '0' && p[1] == 'x';
			char *digits = prefixed ? p + 2 : p;
			size_t n = strspn(digits, hex);
			Dl_info info;

			if (n && n <= 16 && (prefixed || n >= 8) &&
			    (p == line || !strchr(hex, p[-1])) &&
			    dladdr((void *)strtoul(digits, NULL, 16), &info) &&
			    info.dli_sname && info.dli_saddr) {
				fputs(info.dli_sname, stdout);
				p = digits + n;
				continue;
			}
			n = (prefixed ? 2 : 0) + (n ? n : 1);
			fwrite(p, 1, n, stdout);
			p += n;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int reg = 0, registered = 0, opt, seconds;

	if (argc == 2 && !strcmp(argv[1], "resolve"))
		return tr_resolve();
	while ((opt = getopt(argc, argv, "rsd:")) != -1) {
		if (opt == 'r') {
			reg = 1;
		} else if (opt == 's') {
			tr_sleep = 1;
		} else if (opt == 'd') {
			if (!dlopen(optarg, RTLD_NOW)) {
				fprintf(stderr, "tracee: %s\n", dlerror());
				return 1;
			}
		} else {
			return 2;
		}
	}
	if (optind != argc - 1)
		return 2;
	seconds = atoi(argv[optind]);
	if (reg) {
		registered = codectl_register_self();
		if (registered < 0) {
			fprintf(stderr, "tracee: codectl_register_self: %s\n",
				strerror(errno));
			return 1;
		}
		/* Registrations belong to the address space: rmmod may go. */
		codectl_close();
	}
	signal(SIGALRM, tr_alarm);
	alarm(seconds);
	fprintf(stderr, "tracee: ready %d registered %d\n", (int)getpid(),
		registered);
	tr_f1(1);
	return 0;
}
