// SPDX-License-Identifier: GPL-2.0
/*
 * Unwinding correctness in the guest: CODECTL_IOC_UNWIND on known call
 * chains, frame for frame up to main, with the method of every frame and
 * the stop reason.
 *
 * This one source is built once per variant (tests/vm/unwind/Makefile):
 *   v1, v2, v3  -O2 -fomit-frame-pointer -Wa,--gsframe by binutils 2.40,
 *               2.44, 2.47 (SFrame v1, v2, v3); frames of our code are
 *               found with SFrame (CODECTL_FRAME_SFRAME)
 *   fp          -O2 -fno-omit-frame-pointer, no --gsframe (host binutils):
 *               frames are found with frame pointers (CODECTL_FRAME_FP)
 * together with libuwlib.so (the PLT case's library), built the same way.
 * Every object is registered with libcodectl (compiled in) before the
 * tests; glibc has no .sframe on Debian 12.
 *
 * Expected stacks come from the program's own symbols: every function on a
 * chain is global and noipa, the program is linked with -rdynamic, and
 * dladdr1() gives each function's [start, start + st_size).  A frame past
 * frame 0 is a return address: pc - 1 must lie in the expected function.
 * Frames past main (glibc) may be anything, but the unwind must stop there
 * with an end-of-stack reason, not at the frame limit.
 *
 *   unwind-test [-v] [TEST...]                 the tests (all by default)
 *   unwind-test --storm SECONDS [--reopen]     threads unwinding for the
 *                                              guest suite's rmmod checks,
 *                                              until SIGUSR1/SIGTERM
 *
 * Output is TAP-like ("ok N - unwind v3 chain"), ending with
 * "N passed, N failed" (", N skipped"); exit status 1 on failure.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <codectl.h>
#include "uw-common.h"

#ifndef UW_VARIANT
#define UW_VARIANT "v3"
#endif
/* SFrame version of the program and its library; 0 for the fp variant. */
#ifndef UW_SFRAME
#define UW_SFRAME 3
#endif

/* How the frames of our own code are found. */
#define M_OWN	(UW_SFRAME ? CODECTL_FRAME_SFRAME : CODECTL_FRAME_FP)
/*
 * How frame 1 is found from uw_unwind(), a leaf (gcc gives it no frame
 * even with -fno-omit-frame-pointer): in the fp build the return address
 * is on top of the stack at its syscall, which is what FP_ENTRY handles.
 */
#define M_LEAF	(UW_SFRAME ? CODECTL_FRAME_SFRAME : CODECTL_FRAME_FP_ENTRY)
/*
 * gas 2.40 and 2.44 emit no SFrame FDE for a DRAP function (CFA in r10,
 * then an expression): check-build.sh verifies that drap_fn has an FDE
 * exactly when this says so.
 */
#define DRAP_FDE	(UW_SFRAME >= 3)
/* The whole DRAP stack is expected: SFrame v3 FLEX FDEs, or rbp frames. */
#define DRAP_FULL	(DRAP_FDE || !UW_SFRAME)

#ifndef SA_RESTORER
#define SA_RESTORER	0x04000000	/* <asm/signal.h>; glibc hides it */
#endif

#define MAXF		CODECTL_UNWIND_MAX_FRAMES
#define ULL(x)		((unsigned long long)(x))

/* ---- harness ---------------------------------------------------------- */

static int verbose;
static int cur_failed;			/* failures of the running test */
static const char *cur_skip;
static void *cur_test_fn;		/* the running test's function */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	__atomic_add_fetch(&cur_failed, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&out_lock);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

#define EXPECT(cond, ...) ((cond) ? 1 : (fail(__VA_ARGS__), 0))

/* ---- expected stacks -------------------------------------------------- */

enum { EX_FUNC, EX_PC, EX_RANGE, EX_ANY };

struct exf {
	int kind;
	uint64_t lo, hi;	/* EX_FUNC, EX_RANGE: [lo, hi); EX_PC: lo */
	const char *name;
	int exact;		/* the pc itself, not a return address */
	uint8_t method;		/* expected CODECTL_FRAME_*, 0: any */
	uint32_t count;		/* repeated this many times */
};

struct expect {
	int n;
	struct exf f[32];
};

static void ex_add(struct expect *e, struct exf f)
{
	if (e->n == (int)(sizeof(e->f) / sizeof(e->f[0]))) {
		fail("test bug: expectation too long");
		return;
	}
	if (!f.count)
		f.count = 1;
	e->f[e->n++] = f;
}

static void ex_func_n(struct expect *e, const void *fn, int exact,
		      uint8_t method, uint32_t count)
{
	struct exf f = { .kind = EX_FUNC, .exact = exact, .method = method,
			 .count = count };

	if (!uw_func_range(fn, &f.lo, &f.hi, &f.name)) {
		fail("test setup: no sized symbol for %p", fn);
		f.kind = EX_ANY;
		f.name = "?";
	}
	ex_add(e, f);
}

/* A frame whose return address lies in @fn. */
static void ex_func(struct expect *e, const void *fn, uint8_t method)
{
	ex_func_n(e, fn, 0, method, 1);
}

/* A frame whose pc is exactly @pc. */
static void ex_pc(struct expect *e, uint64_t pc, const char *name,
		  uint8_t method)
{
	ex_add(e, (struct exf){ .kind = EX_PC, .lo = pc, .name = name,
				.exact = 1, .method = method });
}

NOIPA long uw_take(uint32_t max, uint32_t flags);
NOIPA int run_one(int i);
int main(int argc, char **argv);

/* Frame 0 in uw_unwind() (the syscall), frame 1 in uw_take(). */
static void ex_begin(struct expect *e)
{
	e->n = 0;
	ex_func_n(e, (void *)uw_unwind, 1, CODECTL_FRAME_REGS, 1);
	ex_func(e, (void *)uw_take, M_LEAF);
}

/* The test function, run_one(), main(). */
static void ex_tail(struct expect *e)
{
	ex_func(e, cur_test_fn, M_OWN);
	ex_func(e, (void *)run_one, M_OWN);
	ex_func(e, (void *)main, M_OWN);
}

static uint32_t ex_frames(const struct expect *e)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < e->n; i++)
		n += e->f[i].count;
	return n;
}

/* Expectation of frame @i (NULL past the end). */
static const struct exf *ex_at(const struct expect *e, uint32_t i)
{
	int k;

	for (k = 0; k < e->n; k++) {
		if (i < e->f[k].count)
			return &e->f[k];
		i -= e->f[k].count;
	}
	return NULL;
}

static int ex_match(const struct exf *f, uint64_t pc)
{
	uint64_t p = f->exact ? pc : pc - 1;

	switch (f->kind) {
	case EX_FUNC:
	case EX_RANGE:
		return p >= f->lo && p < f->hi;
	case EX_PC:
		return pc == f->lo;
	}
	return 1;
}

static const char *ex_desc(const struct exf *f, char *buf, size_t len)
{
	switch (f->kind) {
	case EX_FUNC:
		snprintf(buf, len, "%s%s [%#llx,%#llx)", f->exact ? "pc in " : "",
			 f->name, ULL(f->lo), ULL(f->hi));
		break;
	case EX_RANGE:
		snprintf(buf, len, "%s [%#llx,%#llx)", f->name, ULL(f->lo),
			 ULL(f->hi));
		break;
	case EX_PC:
		snprintf(buf, len, "pc %#llx (%s)", ULL(f->lo), f->name);
		break;
	default:
		snprintf(buf, len, "anything");
	}
	return buf;
}

/* One trace: the ioctl's answer and its arrays. */
struct trace {
	long rc;
	struct codectl_unwind_args a;
	uint64_t *ips;
	uint8_t *methods;
};

static void dump_frame(const struct trace *t, uint32_t i)
{
	char sym[160];

	printf("#     [%u] %#llx %-9s %s\n", i, ULL(t->ips[i]),
	       uw_method_name(t->methods[i]),
	       uw_sym(t->ips[i] - (i && t->methods[i] != CODECTL_FRAME_SIGNAL),
		      sym, sizeof(sym)));
}

static void dump_trace(const char *what, const struct trace *t)
{
	uint32_t i, nr = t->a.nr;

	pthread_mutex_lock(&out_lock);
	printf("#   %s: %u frames, stop %s (%u)\n", what, nr,
	       uw_stop_name(t->a.stop), t->a.stop);
	for (i = 0; i < nr; i++) {
		if (nr > 48 && i == 32) {
			printf("#     ... %u frames ...\n", nr - 42);
			i = nr - 10;
		}
		dump_frame(t, i);
	}
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* Normal ends of a stack that goes past main into code without tables. */
static int normal_stop(uint32_t stop)
{
	switch (stop) {
	case CODECTL_STOP_OUTERMOST:
	case CODECTL_STOP_END:
	case CODECTL_STOP_FAULT:
	case CODECTL_STOP_SP:
	case CODECTL_STOP_ALIGN:
	case CODECTL_STOP_TABLE:
	case CODECTL_STOP_NOT_CODE:
	case CODECTL_STOP_NO_RULE:
		return 1;
	}
	return 0;
}

enum {
	CHK_FULL,	/* every expected frame, then a normal stop */
	CHK_DEPTH,	/* nr == max_frames, stop DEPTH, each frame expected */
	CHK_PREFIX,	/* the expected frames; then any frames, any stop
			 * but DEPTH/NO_USER/NOMEM */
};

/*
 * Compare @t with @e.  Returns 1 when it matches; else records one failure
 * naming the first wrong frame, and dumps the trace.
 */
static int check_trace(const char *what, const struct trace *t,
		       const struct expect *e, int mode)
{
	uint32_t want = ex_frames(e), nr = t->a.nr, i;
	char d[200], sym[160];

	if (t->rc) {
		fail("%s: CODECTL_IOC_UNWIND: %s", what, strerror((int)-t->rc));
		return 0;
	}
	for (i = 0; i < nr && i < want; i++) {
		const struct exf *f = ex_at(e, i);

		if (!ex_match(f, t->ips[i])) {
			fail("%s: frame %u: expected %s, got %#llx (%s) method %s; %u frames, stop %s",
			     what, i, ex_desc(f, d, sizeof(d)), ULL(t->ips[i]),
			     uw_sym(t->ips[i] - !f->exact, sym, sizeof(sym)),
			     uw_method_name(t->methods[i]), nr,
			     uw_stop_name(t->a.stop));
			goto bad;
		}
		if (f->method && t->methods[i] != f->method) {
			fail("%s: frame %u (%s): method %s, expected %s; %u frames, stop %s",
			     what, i, ex_desc(f, d, sizeof(d)),
			     uw_method_name(t->methods[i]),
			     uw_method_name(f->method), nr,
			     uw_stop_name(t->a.stop));
			goto bad;
		}
	}
	switch (mode) {
	case CHK_DEPTH:
		if (nr != t->a.max_frames || t->a.stop != CODECTL_STOP_DEPTH) {
			fail("%s: %u frames, stop %s; expected %u frames (max_frames), stop DEPTH",
			     what, nr, uw_stop_name(t->a.stop), t->a.max_frames);
			goto bad;
		}
		break;
	case CHK_FULL:
		if (nr < want) {
			fail("%s: only %u frames of the %u expected; stop %s",
			     what, nr, want, uw_stop_name(t->a.stop));
			goto bad;
		}
		if (!normal_stop(t->a.stop) || nr >= t->a.max_frames) {
			fail("%s: after the %u expected frames, %u frames in all and stop %s: the unwind does not end (max_frames %u)",
			     what, want, nr, uw_stop_name(t->a.stop),
			     t->a.max_frames);
			goto bad;
		}
		break;
	case CHK_PREFIX:
		if (nr < want) {
			fail("%s: only %u frames of the %u expected; stop %s",
			     what, nr, want, uw_stop_name(t->a.stop));
			goto bad;
		}
		if (t->a.stop == CODECTL_STOP_DEPTH ||
		    t->a.stop == CODECTL_STOP_NO_USER ||
		    t->a.stop == CODECTL_STOP_NOMEM ||
		    t->a.stop == CODECTL_STOP_BUDGET || !t->a.stop ||
		    t->a.stop >= CODECTL_STOP_NR) {
			fail("%s: stop %s (%u) after %u frames", what,
			     uw_stop_name(t->a.stop), t->a.stop, nr);
			goto bad;
		}
		break;
	}
	if (verbose)
		dump_trace(what, t);
	return 1;
bad:
	dump_trace(what, t);
	return 0;
}

/* ---- taking a trace ----------------------------------------------------- */

static uint64_t g_ips[MAXF];
static uint8_t g_methods[MAXF];
static struct trace g_t = { .ips = g_ips, .methods = g_methods };

/* Unwind into g_t; frame 1 is here. */
NOIPA long uw_take(uint32_t max, uint32_t flags)
{
	long rc;

	memset(g_methods, 0, sizeof(g_methods));
	uw_args(&g_t.a, g_ips, g_methods, max, flags);
	rc = uw_unwind(&g_t.a);
	g_t.rc = rc;
	KEEP(rc);
	return rc;
}

/* ---- registered: the objects and their SFrame version ----------------- */

int uwlib_entry(int (*cb)(int), int x);
int uwlib_mid(int (*cb)(int), int x);

static void check_object(const char *what, const void *addr)
{
	struct codectl_query_info q;
	struct codectl_sframe_check c;
	int rc = uw_query((uintptr_t)addr, &q);

	if (!EXPECT(!rc, "%s: QUERY: no registration covers %p (%s)", what,
		    addr, strerror(-rc)))
		return;
	if (!UW_SFRAME) {
		EXPECT(!q.sframe_start, "%s: registered with SFrame %#llx, built without",
		       what, ULL(q.sframe_start));
		return;
	}
	if (!EXPECT(q.sframe_start, "%s: registered without SFrame (the kernel refused v%d?)",
		    what, UW_SFRAME))
		return;
	memset(&c, 0, sizeof(c));
	c.sframe_start = q.sframe_start;
	c.sframe_end = q.sframe_end;
	c.text_start = q.text_start;
	c.text_end = q.text_end;
	rc = codectl_check_sframe(&c) ? -errno : 0;
	if (EXPECT(!rc, "%s: CHECK_SFRAME: %s", what, strerror(-rc))) {
		EXPECT(c.error == CODECTL_SFRAME_OK, "%s: CHECK_SFRAME error %u",
		       what, c.error);
		EXPECT(c.version == UW_SFRAME, "%s: SFrame version %u, expected %d",
		       what, c.version, UW_SFRAME);
		if (verbose)
			note("%s: SFrame v%u, %u FDEs, %u FREs", what, c.version,
			     c.num_fdes, c.num_fres);
	}
}

NOIPA int t_registered(void)
{
	check_object("the program", (void *)main);
	check_object("libuwlib.so", (void *)uwlib_entry);
	return 0;
}

/* ---- a plain chain ---------------------------------------------------- */

NOIPA int chain_c(int x, uint32_t max)
{
	long r = uw_take(max, 0);

	KEEP(r);
	return x + (int)r;
}

NOIPA int chain_b(int x, uint32_t max)
{
	int r = chain_c(x + 1, max);

	KEEP(r);
	return r;
}

NOIPA int chain_a(int x, uint32_t max)
{
	int r = chain_b(x + 1, max);

	KEEP(r);
	return r;
}

static void ex_chain(struct expect *e)
{
	ex_begin(e);
	ex_func(e, (void *)chain_c, M_OWN);
	ex_func(e, (void *)chain_b, M_OWN);
	ex_func(e, (void *)chain_a, M_OWN);
	ex_tail(e);
}

NOIPA int t_chain(void)
{
	struct expect e;
	uint32_t n;
	int r;

	ex_chain(&e);
	r = chain_a(1, MAXF);
	KEEP(r);
	check_trace("chain to main", &g_t, &e, CHK_FULL);

	/* max_frames exactly up to main: all of them, stop DEPTH. */
	n = ex_frames(&e);
	r = chain_a(1, n);
	KEEP(r);
	check_trace("chain, max_frames = frames up to main", &g_t, &e, CHK_DEPTH);

	/* The same stack with iterations: the same answer, some time. */
	{
		struct codectl_unwind_args a;
		uint64_t ips[64];

		uw_args(&a, ips, NULL, 64, 0);
		a.iterations = 10;
		r = (int)uw_unwind(&a);
		EXPECT(!r, "iterations 10: %s", strerror(-r));
		EXPECT(!r && a.ns > 0, "iterations 10: ns %llu", ULL(a.ns));
		EXPECT(!r && a.nr >= 4, "iterations 10: %u frames", a.nr);
	}
	return 0;
}

/* ---- deep recursion --------------------------------------------------- */

#define REC_FRAMES	2000

NOIPA int rec_leaf(uint32_t max, uint32_t flags)
{
	long r = uw_take(max, flags);

	KEEP(r);
	return (int)r;
}

NOIPA int rec(int n, uint32_t max, uint32_t flags)
{
	int r;

	if (n == 0)
		r = rec_leaf(max, flags);
	else
		r = rec(n - 1, max, flags);
	KEEP(r);
	return r;
}

static void ex_rec(struct expect *e)
{
	ex_begin(e);
	ex_func(e, (void *)rec_leaf, M_OWN);
	ex_func_n(e, (void *)rec, 0, M_OWN, REC_FRAMES);
	ex_tail(e);
}

NOIPA int t_recursion_full(void)
{
	struct expect e;
	int r;

	ex_rec(&e);
	r = rec(REC_FRAMES - 1, MAXF, 0);
	KEEP(r);
	check_trace("2000 recursive frames, max_frames 4096", &g_t, &e, CHK_FULL);
	return 0;
}

NOIPA int t_recursion_depth(void)
{
	static const uint32_t maxes[] = { 1, 2, 3, 64, 1000, REC_FRAMES - 1 };
	struct expect e;
	char what[96];
	unsigned int i;
	int r;

	ex_rec(&e);
	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		/* Poison: frames beyond nr must not be written. */
		memset(g_ips, 0xa5, sizeof(g_ips));
		r = rec(REC_FRAMES - 1, maxes[i], 0);
		KEEP(r);
		snprintf(what, sizeof(what), "2000 recursive frames, max_frames %u",
			 maxes[i]);
		if (check_trace(what, &g_t, &e, CHK_DEPTH))
			EXPECT(g_ips[maxes[i]] == 0xa5a5a5a5a5a5a5a5ULL,
			       "%s: ips[%u] written past nr", what, maxes[i]);
	}
	return 0;
}

/* ---- through the PLT into a shared library and back ------------------- */

NOIPA int plt_cb(int x)
{
	long r = uw_take(MAXF, 0);

	KEEP(r);
	return x + (int)r;
}

NOIPA int plt_caller(int x)
{
	int r = uwlib_entry(plt_cb, x);	/* call uwlib_entry@plt */

	KEEP(r);
	return r;
}

NOIPA int t_plt(void)
{
	struct expect e;
	int r;

	ex_begin(&e);
	ex_func(&e, (void *)plt_cb, M_OWN);
	ex_func(&e, (void *)uwlib_mid, M_OWN);
	ex_func(&e, (void *)uwlib_entry, M_OWN);
	ex_func(&e, (void *)plt_caller, M_OWN);
	ex_tail(&e);
	r = plt_caller(3);
	KEEP(r);
	check_trace("program -> PLT -> libuwlib.so -> PLT -> libuwlib.so -> program",
		    &g_t, &e, CHK_FULL);
	return 0;
}

/* ---- realigned stacks ------------------------------------------------- */

NOIPA void sink(void *p, int n)
{
	__asm__ volatile("" : : "r"(p), "r"(n) : "memory");
}

NOIPA int realign_leaf(int *buf)
{
	long r = uw_take(MAXF, 0);

	KEEP(r);
	return buf[1] + (int)r;
}

/* An rbp frame with rsp aligned down to 64: CFA = rbp + 16. */
NOIPA int realign_fn(int n)
{
	__attribute__((aligned(64))) int buf[16];
	int r;

	memset(buf, n, sizeof(buf));
	sink(buf, n);
	r = realign_leaf(buf);
	KEEP(r);
	return r + buf[n & 15];
}

NOIPA int t_realign(void)
{
	struct expect e;
	int r;

	ex_begin(&e);
	ex_func(&e, (void *)realign_leaf, M_OWN);
	ex_func(&e, (void *)realign_fn, M_OWN);
	ex_tail(&e);
	r = realign_fn(5);
	KEEP(r);
	check_trace("aligned(64) local (rbp frame, realigned rsp)", &g_t, &e,
		    CHK_FULL);
	return 0;
}

NOIPA int drap_leaf(int *buf, char *vla)
{
	long r = uw_take(MAXF, 0);

	KEEP(r);
	return buf[2] + vla[0] + (int)r;
}

/*
 * A DRAP frame: realigned, with a VLA and a stack-passed argument, gcc
 * keeps the CFA in r10, then in *(rbp - 8).
 */
NOIPA int drap_fn(int n, int a, int b, int c, int d, int e, int stackarg)
{
	__attribute__((aligned(64))) int buf[16];
	char vla[n];
	int r;

	memset(vla, stackarg, n);
	memset(buf, a + b + c + d + e, sizeof(buf));
	sink(buf, 16);
	sink(vla, n);
	r = drap_leaf(buf, vla);
	KEEP(r);
	return r + buf[3] + vla[n - 1];
}

NOIPA int drap_caller(int n)
{
	int r = drap_fn(n, 1, 2, 3, 4, 5, 6);

	KEEP(r);
	return r;
}

NOIPA int t_drap(void)
{
	struct expect e;
	int r;

	ex_begin(&e);
	ex_func(&e, (void *)drap_leaf, M_OWN);
	ex_func(&e, (void *)drap_fn, M_OWN);
	if (DRAP_FULL) {
		ex_func(&e, (void *)drap_caller, M_OWN);
		ex_tail(&e);
	} else {
		/*
		 * No FDE for drap_fn: its frame is walked with frame pointers,
		 * which finds its return address but puts the caller's CFA at
		 * rbp + 16, below the real one (the frame was realigned), so
		 * the caller's SFrame rule reads the wrong slots: nothing past
		 * drap_caller can be expected.
		 */
		ex_func(&e, (void *)drap_caller, CODECTL_FRAME_FP);
	}
	r = drap_caller(40);
	KEEP(r);
	if (DRAP_FULL) {
		check_trace("DRAP function (VLA, aligned(64), stack argument)",
			    &g_t, &e, CHK_FULL);
	} else if (check_trace("DRAP function without an FDE (gas " UW_VARIANT
			       "): up to its caller", &g_t, &e, CHK_PREFIX)) {
		note("drap: gas of %s drops drap_fn's FDE; past drap_caller the walk gave %u frames in all, stop %s",
		     UW_VARIANT, g_t.a.nr, uw_stop_name(g_t.a.stop));
	}
	return 0;
}

/* ---- signal frames ---------------------------------------------------- */

static uint64_t sig_rip;		/* interrupted pc, from the ucontext */
static uintptr_t sig_stack;		/* an address on the handler's stack */
static volatile int sig_taken;

NOIPA void sig_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	long r;

	sig_rip = uc->uc_mcontext.gregs[REG_RIP];
	sig_stack = (uintptr_t)&r;
	r = uw_take(MAXF, 0);
	KEEP(r);
	sig_taken = 1;
	(void)sig;
	(void)si;
}

/* The signal arrives on return from this tgkill: interrupted pc here. */
NOIPA void sig_victim(int sig)
{
	long ret, pid = getpid(), tid = gettid();

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_tgkill), "D"(pid), "S"(tid),
			   "d"((long)sig)
			 : "rcx", "r11", "memory");
	KEEP(ret);
}

NOIPA int sig_caller(int sig)
{
	int r = 1;

	sig_victim(sig);
	KEEP(r);
	return r;
}

/*
 * sa_restorer glibc installed (__restore_rt), read back by sigaction.
 * @flags: more SA_* flags (SA_ONSTACK).
 */
static uint64_t install_flags(int sig, void (*fn)(int, siginfo_t *, void *),
			      int flags)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) || sigaction(sig, NULL, &old)) {
		fail("sigaction: %m");
		return 0;
	}
	if (!(old.sa_flags & SA_RESTORER) || !old.sa_restorer) {
		fail("sigaction: no SA_RESTORER/sa_restorer read back");
		return 0;
	}
	return (uintptr_t)old.sa_restorer;
}

static uint64_t install(int sig, void (*fn)(int, siginfo_t *, void *))
{
	return install_flags(sig, fn, 0);
}

/* Handler, the trampoline, the interrupted frame (by SIGNAL). */
static void ex_signal(struct expect *e, uint64_t restorer, const void *victim)
{
	ex_begin(e);
	ex_func(e, (void *)sig_handler, M_OWN);
	ex_pc(e, restorer, "__restore_rt", M_OWN);
	ex_pc(e, sig_rip, "interrupted pc", CODECTL_FRAME_SIGNAL);
	{
		uint64_t lo, hi;

		if (!uw_func_range(victim, &lo, &hi, NULL) || sig_rip < lo ||
		    sig_rip >= hi)
			fail("test: the signal interrupted %#llx, not the expected function",
			     ULL(sig_rip));
	}
}

NOIPA int t_signal(void)
{
	struct expect e;
	uint64_t restorer = install(SIGUSR1, sig_handler);
	int r;

	if (!restorer)
		return 0;
	sig_taken = 0;
	r = sig_caller(SIGUSR1);
	KEEP(r);
	if (!EXPECT(sig_taken, "the handler did not run"))
		return 0;
	ex_signal(&e, restorer, (void *)sig_victim);
	ex_func(&e, (void *)sig_caller, M_OWN);
	ex_tail(&e);
	check_trace("handler -> __restore_rt -> signal frame -> interrupted function",
		    &g_t, &e, CHK_FULL);
	signal(SIGUSR1, SIG_DFL);
	return 0;
}

/*
 * The handler on an alternate signal stack (sigaltstack, SA_ONSTACK): the
 * signal frame is on another stack than the interrupted code's, below or
 * above it; the walk must cross back through the saved registers.
 */
NOIPA int t_signal_altstack(void)
{
	size_t sz = 64 * 1024;
	stack_t ss = { .ss_size = sz }, old;
	struct expect e;
	uint64_t restorer;
	uintptr_t lo, hi;
	int r;

	ss.ss_sp = mmap(NULL, sz, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!EXPECT(ss.ss_sp != MAP_FAILED, "mmap: %m") ||
	    !EXPECT(!sigaltstack(&ss, &old), "sigaltstack: %m"))
		return 0;
	restorer = install_flags(SIGUSR1, sig_handler, SA_ONSTACK);
	if (restorer) {
		sig_taken = 0;
		r = sig_caller(SIGUSR1);
		KEEP(r);
		if (EXPECT(sig_taken, "the handler did not run")) {
			lo = (uintptr_t)ss.ss_sp;
			hi = lo + sz;
			EXPECT(sig_stack >= lo && sig_stack < hi,
			       "test: the handler did not run on the alternate stack");
			ex_signal(&e, restorer, (void *)sig_victim);
			ex_func(&e, (void *)sig_caller, M_OWN);
			ex_tail(&e);
			check_trace("handler on a sigaltstack -> __restore_rt -> interrupted function",
				    &g_t, &e, CHK_FULL);
			EXPECT((uintptr_t)&r < lo || (uintptr_t)&r >= hi,
			       "test: the main stack lies in the alternate one");
		}
	}
	signal(SIGUSR1, SIG_DFL);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	munmap(ss.ss_sp, sz);
	return 0;
}

/*
 * Signal trampolines of our own, given to the kernel as sa_restorer with
 * a raw rt_sigaction: with ordinary CFI and .cfi_signal_frame, so every
 * --gsframe build gives them an FDE (v3 with the signal bit, v1/v2 an
 * ordinary sp+8 rule that would mis-step).
 *  uw_restorer_std:   glibc's code (mov $15,%rax; syscall): the unwinder
 *                     knows it as a trampoline in every variant.
 *  uw_restorer_other: another encoding (mov $15,%eax): only v3's signal
 *                     FDE says what it is.
 * As in glibc, the CFI starts at a nop just before the trampoline: the
 * handler "returns" to the trampoline's first byte, and unwinders look
 * return addresses up at pc - 1.
 */
__asm__(
	"	.text\n"
	"	.cfi_startproc\n"
	"	.cfi_signal_frame\n"
	"	nop\n"
	"	.globl uw_restorer_std\n"
	"	.type uw_restorer_std, @function\n"
	"uw_restorer_std:\n"
	"	movq $15, %rax\n"
	"	syscall\n"
	"	.cfi_endproc\n"
	"	.size uw_restorer_std, .-uw_restorer_std\n"
	"	.cfi_startproc\n"
	"	.cfi_signal_frame\n"
	"	nop\n"
	"	.globl uw_restorer_other\n"
	"	.type uw_restorer_other, @function\n"
	"uw_restorer_other:\n"
	"	movl $15, %eax\n"
	"	syscall\n"
	"	.cfi_endproc\n"
	"	.size uw_restorer_other, .-uw_restorer_other\n");

void uw_restorer_std(void);
void uw_restorer_other(void);

/* The kernel's struct sigaction for rt_sigaction on x86-64. */
struct uw_ksigaction {
	void (*handler)(int, siginfo_t *, void *);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static int install_raw(int sig, void (*restorer)(void))
{
	struct uw_ksigaction ka = {
		.handler = sig_handler,
		.flags = SA_SIGINFO | SA_RESTORER,
		.restorer = restorer,
	};

	return EXPECT(!syscall(SYS_rt_sigaction, sig, &ka, NULL, 8),
		      "rt_sigaction with our own restorer: %m");
}

NOIPA int t_signal_restorer(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
		int exact;	/* the whole stack is checked */
	} rs[] = {
		{ "uw_restorer_std", uw_restorer_std, 1 },
		{ "uw_restorer_other", uw_restorer_other, UW_SFRAME == 3 },
	};
	struct expect e;
	unsigned int i;
	int r;

	for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
		if (!install_raw(SIGUSR1, rs[i].fn))
			return 0;
		sig_taken = 0;
		r = sig_caller(SIGUSR1);
		KEEP(r);
		signal(SIGUSR1, SIG_DFL);
		if (!EXPECT(sig_taken, "%s: the handler did not run", rs[i].name))
			return 0;
		if (!rs[i].exact) {
			/* v1/v2 mis-step or fp's frame pointers skip: a clean end. */
			EXPECT(g_t.rc == 0 && g_t.a.nr >= 3 && g_t.a.nr <= MAXF &&
			       g_t.a.stop > 0 && g_t.a.stop < CODECTL_STOP_NR,
			       "%s: rc %ld, %u frames, stop %u", rs[i].name,
			       g_t.rc, g_t.a.nr, g_t.a.stop);
			continue;
		}
		ex_signal(&e, (uintptr_t)rs[i].fn, (void *)sig_victim);
		ex_func(&e, (void *)sig_caller, M_OWN);
		ex_tail(&e);
		check_trace(rs[i].name, &g_t, &e, CHK_FULL);
	}
	return 0;
}

static volatile int spinning, stop_spin;

/* Does @fn begin with push %rbp (after an endbr64)? */
static int has_rbp_frame(const void *fn)
{
	const uint8_t *p = fn;

	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	return p[0] == 0x55;
}

NOIPA void spin_handler(int sig, siginfo_t *si, void *ucv)
{
	sig_handler(sig, si, ucv);
	stop_spin = 1;
}

/* A loop the signal interrupts anywhere (a leaf without a frame). */
NOIPA void spin_fn(void)
{
	spinning = 1;
	while (!stop_spin)
		__asm__ volatile("pause");
}

NOIPA int spin_caller(void)
{
	int r = 2;

	spin_fn();
	KEEP(r);
	return r;
}

static void *kicker(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	while (!spinning)
		sched_yield();
	nanosleep(&ts, NULL);
	pthread_kill(target, SIGUSR2);
	return NULL;
}

NOIPA int t_signal_async(void)
{
	struct expect e;
	uint64_t restorer = install(SIGUSR2, spin_handler);
	pthread_t self = pthread_self(), th;
	int r;

	if (!restorer)
		return 0;
	sig_taken = 0;
	spinning = 0;
	stop_spin = 0;
	if (pthread_create(&th, NULL, kicker, &self)) {
		fail("pthread_create");
		return 0;
	}
	r = spin_caller();
	KEEP(r);
	pthread_join(th, NULL);
	if (!EXPECT(sig_taken, "the handler did not run"))
		return 0;
	ex_begin(&e);
	/* spin_handler calls sig_handler, which takes the trace. */
	ex_func(&e, (void *)sig_handler, M_OWN);
	ex_func(&e, (void *)spin_handler, M_OWN);
	ex_pc(&e, restorer, "__restore_rt", M_OWN);
	ex_pc(&e, sig_rip, "interrupted pc", CODECTL_FRAME_SIGNAL);
	{
		uint64_t lo, hi;

		if (!uw_func_range((void *)spin_fn, &lo, &hi, NULL) ||
		    sig_rip < lo || sig_rip >= hi)
			fail("test: the signal interrupted %#llx, not spin_fn",
			     ULL(sig_rip));
	}
	/*
	 * Frame pointers cannot find the caller of an interrupted function
	 * that has no frame of its own: gcc gives the leaf spin_fn none
	 * even with -fno-omit-frame-pointer, so the fp build's walk skips
	 * spin_caller.  Whether it has one is read from its first bytes.
	 */
	if (UW_SFRAME || has_rbp_frame((void *)spin_fn))
		ex_func(&e, (void *)spin_caller, M_OWN);
	else
		note("signal_async: spin_fn has no rbp frame: spin_caller is skipped by the FP walk");
	ex_tail(&e);
	check_trace("signal from another thread interrupting a loop", &g_t, &e,
		    CHK_FULL);
	signal(SIGUSR2, SIG_DFL);
	return 0;
}

/* ---- JIT code ----------------------------------------------------------- */

/*
 * Region A (RWX), jit_a(cb, jit_b): an rbp frame with two words of 1
 * below it, calling jit_b:
 *   0: push %rbp  1: mov %rsp,%rbp  4: push $1  6: push $1
 *   8: call *%rsi  a: leave  b: ret
 * Region B (written RW, then flipped to RX), jit_b(cb): no frame pointer:
 *   0: sub $0x18,%rsp  4: call *%rdi  6: add $0x18,%rsp  a: ret
 */
static const uint8_t jit_a_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x6a, 0x01, 0x6a, 0x01, 0xff, 0xd6, 0xc9, 0xc3,
};
static const uint8_t jit_b_code[] = {
	0x48, 0x83, 0xec, 0x18, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x18, 0xc3,
};
#define JIT_A_RET	0xa	/* return address of jit_a's call */
#define JIT_B_RET	0x6

#define FRE(o, s, c, f, i) \
	{ .ip_off = (o), .size = (s), .cfa_off = (c), .ra_off = -8, \
	  .fp_off = (f), .info = (i) }

static const struct codectl_jit_unwind_fre jit_a_fres[] = {
	FRE(0, 1, 8, 0, 0),
	FRE(1, 3, 16, -16, CODECTL_JIT_FRE_FP_SAVED),
	FRE(4, 7, 16, -16, CODECTL_JIT_FRE_CFA_BASE_FP | CODECTL_JIT_FRE_FP_SAVED),
	FRE(0xb, 1, 8, 0, 0),
};
static const struct codectl_jit_unwind_fre jit_b_fres[] = {
	FRE(0, 4, 8, 0, 0),
	FRE(4, 6, 0x20, 0, 0),
	FRE(0xa, 1, 8, 0, 0),
};

#define FRE_SZ	((uint32_t)sizeof(struct codectl_jit_unwind_fre))
#define TBL_SZ	sizeof(struct codectl_jit_unwind_table)

struct jit {
	uint8_t *a, *b;			/* code pages */
	uint8_t *tabs;			/* tables page */
	struct codectl_jit_unwind_table *a1, *a2, *b1;
	int reg_a, reg_b;
};

static void jit_table(struct codectl_jit_unwind_table *t, uint32_t nr,
		      const struct codectl_jit_unwind_fre *fres,
		      uint32_t used, struct codectl_jit_unwind_table *next)
{
	uint32_t stride = 32;	/* more than the entry: room to grow */
	uint8_t *p = (uint8_t *)(t + 1);
	uint32_t i;

	memset(t, 0, TBL_SZ + (size_t)nr * stride);
	t->reserved_len = (uint64_t)nr * stride;
	t->fre_stride = stride;
	t->fre_size = FRE_SZ;
	t->next = (uintptr_t)next;
	for (i = 0; i < nr; i++)
		memcpy(p + (size_t)i * stride, &fres[i], FRE_SZ);
	__atomic_store_n(&t->used_len, (uint64_t)used * stride, __ATOMIC_RELEASE);
}

static void jit_destroy(struct jit *j)
{
	size_t pg = sysconf(_SC_PAGESIZE);

	if (j->reg_a)
		codectl_unregister((uintptr_t)j->a, (uintptr_t)j->a + pg);
	if (j->reg_b)
		codectl_unregister((uintptr_t)j->b, (uintptr_t)j->b + pg);
	if (j->a)
		munmap(j->a, pg);
	if (j->b)
		munmap(j->b, pg);
	if (j->tabs)
		munmap(j->tabs, pg);
	memset(j, 0, sizeof(*j));
}

static int jit_create(struct jit *j)
{
	size_t pg = sysconf(_SC_PAGESIZE);
	struct codectl_jit_info ji;
	void *p;

	memset(j, 0, sizeof(*j));
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		goto err;
	j->a = p;
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		goto err;
	j->b = p;
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		goto err;
	j->tabs = p;
	memset(j->a, 0xcc, pg);
	memset(j->b, 0xcc, pg);
	memcpy(j->a, jit_a_code, sizeof(jit_a_code));
	memcpy(j->b, jit_b_code, sizeof(jit_b_code));
	if (mprotect(j->b, pg, PROT_READ | PROT_EXEC))
		goto err;
	__builtin___clear_cache((char *)j->a, (char *)j->a + pg);

	/* A: a chain of two tables of two entries each. */
	j->a1 = (void *)j->tabs;
	j->a2 = (void *)(j->tabs + 512);
	j->b1 = (void *)(j->tabs + 1024);
	jit_table(j->a2, 2, jit_a_fres + 2, 2, NULL);
	jit_table(j->a1, 2, jit_a_fres, 2, j->a2);
	/* B: entries written, none published yet. */
	jit_table(j->b1, 3, jit_b_fres, 0, NULL);

	ji = (struct codectl_jit_info){ .text_start = (uintptr_t)j->a,
					.text_end = (uintptr_t)j->a + pg,
					.unwind_head = (uintptr_t)j->a1 };
	if (codectl_register_jit(&ji)) {
		fail("REGISTER_JIT of region A: %m");
		goto out;
	}
	j->reg_a = 1;
	ji = (struct codectl_jit_info){ .text_start = (uintptr_t)j->b,
					.text_end = (uintptr_t)j->b + pg,
					.unwind_head = (uintptr_t)j->b1 };
	if (codectl_register_jit(&ji)) {
		fail("REGISTER_JIT of region B: %m");
		goto out;
	}
	j->reg_b = 1;
	/* Publish B's entries after registration: read at unwind time. */
	__atomic_store_n(&j->b1->used_len, 3ULL * j->b1->fre_stride,
			 __ATOMIC_RELEASE);
	return 0;
err:
	fail("jit setup: %m");
out:
	jit_destroy(j);
	return -1;
}

static uint32_t jit_flags;

NOIPA int jit_cb(void)
{
	long r = uw_take(MAXF, jit_flags);

	KEEP(r);
	return (int)r + 7;
}

NOIPA int jit_caller(struct jit *j)
{
	int (*fa)(int (*)(void), void *) = (void *)j->a;
	int r = fa(jit_cb, j->b);

	KEEP(r);
	return r;
}

NOIPA int t_jit(void)
{
	struct expect e;
	struct jit j;
	int r;

	if (jit_create(&j))
		return 0;
	jit_flags = 0;
	r = jit_caller(&j);
	KEEP(r);
	EXPECT(r == 7, "the JIT code returned %d, expected 7", r);
	ex_begin(&e);
	ex_func(&e, (void *)jit_cb, M_OWN);
	ex_pc(&e, (uintptr_t)j.b + JIT_B_RET, "jit_b's call", M_OWN);
	ex_pc(&e, (uintptr_t)j.a + JIT_A_RET, "jit_a's call", CODECTL_FRAME_JIT);
	ex_func(&e, (void *)jit_caller, CODECTL_FRAME_JIT);
	ex_tail(&e);
	check_trace("C -> JIT (rbp frame, chained tables) -> JIT (W^X, no frame pointer) -> C",
		    &g_t, &e, CHK_FULL);

	/*
	 * Without the JIT tables: jit_b has no frame of its own, so the FP
	 * walk from it reads jit_a's frame and skips jit_a; jit_a's frame
	 * restores rbp and the CFA, and the rest is right again.
	 */
	jit_flags = CODECTL_UNWIND_NO_JIT;
	r = jit_caller(&j);
	KEEP(r);
	ex_begin(&e);
	ex_func(&e, (void *)jit_cb, M_OWN);
	ex_pc(&e, (uintptr_t)j.b + JIT_B_RET, "jit_b's call", M_OWN);
	ex_func(&e, (void *)jit_caller, CODECTL_FRAME_FP);
	ex_tail(&e);
	check_trace("the same with CODECTL_UNWIND_NO_JIT (FP walk skips jit_a)",
		    &g_t, &e, CHK_FULL);
	jit_flags = 0;
	jit_destroy(&j);
	return 0;
}

/*
 * JIT tables that say stop, lie or change: the walk ends at jit_b's call
 * with the documented reason, never past it, never with a wrong frame.
 */
static struct codectl_jit_unwind_fre *jit_entry(struct codectl_jit_unwind_table *t,
						 uint32_t i)
{
	return (void *)((uint8_t *)(t + 1) + (size_t)i * t->fre_stride);
}

/* The walk reached jit_b's call site and stopped there with @stop. */
static int jit_stops_at_b(const struct jit *j, uint32_t stop, const char *what)
{
	uint32_t n = g_t.a.nr;

	return EXPECT(g_t.rc == 0, "%s: the ioctl failed: %ld", what, g_t.rc) &&
	       EXPECT(n >= 3 && n <= MAXF && g_ips[n - 1] == (uintptr_t)j->b + JIT_B_RET,
		      "%s: %u frames, the last %#llx, expected jit_b's call %p",
		      what, n, n ? (unsigned long long)g_ips[n - 1] : 0ULL,
		      (void *)(j->b + JIT_B_RET)) &&
	       EXPECT(g_t.a.stop == stop, "%s: stop %u, expected %u", what,
		      g_t.a.stop, stop);
}

NOIPA int t_jit_edges(void)
{
	struct codectl_jit_unwind_fre e0, a0;
	struct expect ex;
	uint64_t used;
	struct jit j;
	int r;

	if (jit_create(&j))
		return 0;
	jit_flags = 0;

	/* 1. jit_b's call site marked outermost. */
	jit_entry(j.b1, 1)->info |= CODECTL_JIT_FRE_OUTERMOST;
	r = jit_caller(&j);
	KEEP(r);
	jit_stops_at_b(&j, CODECTL_STOP_OUTERMOST, "OUTERMOST entry");
	jit_entry(j.b1, 1)->info &= ~CODECTL_JIT_FRE_OUTERMOST;

	/* 2. used_len beyond reserved_len: the table is not trusted. */
	used = j.b1->used_len;
	__atomic_store_n(&j.b1->used_len, j.b1->reserved_len + j.b1->fre_stride,
			 __ATOMIC_RELEASE);
	r = jit_caller(&j);
	KEEP(r);
	jit_stops_at_b(&j, CODECTL_STOP_TABLE, "used_len past reserved_len");

	/* 3. used_len 0 again (entries withdrawn): no rule, the FP walk. */
	__atomic_store_n(&j.b1->used_len, 0, __ATOMIC_RELEASE);
	r = jit_caller(&j);
	KEEP(r);
	EXPECT(g_t.rc == 0 && g_t.a.nr >= 3 && g_t.a.nr <= MAXF &&
	       g_methods[2] != CODECTL_FRAME_JIT,
	       "no published entry: %u frames, frame 2 by method %u", g_t.a.nr,
	       g_methods[2]);
	__atomic_store_n(&j.b1->used_len, used, __ATOMIC_RELEASE);

	/*
	 * 4. Entries out of order, as a torn update could leave them: a
	 * clean end (any reason, no frame past the bounds), never a crash.
	 */
	e0 = *jit_entry(j.b1, 0);
	*jit_entry(j.b1, 0) = *jit_entry(j.b1, 2);
	*jit_entry(j.b1, 2) = e0;
	r = jit_caller(&j);
	KEEP(r);
	EXPECT(g_t.rc == 0 && g_t.a.nr >= 2 && g_t.a.nr <= MAXF &&
	       g_t.a.stop > 0 && g_t.a.stop < CODECTL_STOP_NR,
	       "unsorted entries: rc %ld, %u frames, stop %u", g_t.rc,
	       g_t.a.nr, g_t.a.stop);
	*jit_entry(j.b1, 2) = *jit_entry(j.b1, 0);
	*jit_entry(j.b1, 0) = e0;

	/*
	 * 5. A rule that lies: jit_a's call site said to have no frame (CFA
	 * at rsp + 8), so that its return address would be the word of 1 on
	 * top of its stack, not code.  The step is made again by the frame
	 * pointer, as the kernel's own walk makes it: jit_caller and the rest
	 * of the stack to main, never a walk shorter than the kernel's.
	 */
	a0 = *jit_entry(j.a2, 0);
	jit_entry(j.a2, 0)->cfa_off = 8;
	jit_entry(j.a2, 0)->fp_off = 0;
	jit_entry(j.a2, 0)->info = 0;
	r = jit_caller(&j);
	KEEP(r);
	ex_begin(&ex);
	ex_func(&ex, (void *)jit_cb, M_OWN);
	ex_pc(&ex, (uintptr_t)j.b + JIT_B_RET, "jit_b's call", M_OWN);
	ex_pc(&ex, (uintptr_t)j.a + JIT_A_RET, "jit_a's call", CODECTL_FRAME_JIT);
	ex_func(&ex, (void *)jit_caller, CODECTL_FRAME_FP);
	ex_tail(&ex);
	check_trace("a JIT rule whose caller is not code: the frame pointer's caller instead",
		    &g_t, &ex, CHK_FULL);
	*jit_entry(j.a2, 0) = a0;

	/*
	 * 6. Region A's chain looping onto itself, its second table empty:
	 * jit_a's call site is in no table, and the lookup gives up after a
	 * bounded number of tables with CODECTL_STOP_BUDGET.
	 */
	__atomic_store_n(&j.a2->used_len, 0, __ATOMIC_RELEASE);
	j.a2->next = (uintptr_t)j.a1;
	r = jit_caller(&j);
	KEEP(r);
	EXPECT(g_t.rc == 0 && g_t.a.nr >= 2 && g_t.a.nr <= MAXF &&
	       g_ips[g_t.a.nr - 1] == (uintptr_t)j.a + JIT_A_RET &&
	       g_t.a.stop == CODECTL_STOP_BUDGET,
	       "a looping chain: rc %ld, %u frames, the last %#llx (jit_a's call %p), stop %u",
	       g_t.rc, g_t.a.nr,
	       g_t.a.nr ? (unsigned long long)g_ips[g_t.a.nr - 1] : 0ULL,
	       (void *)(j.a + JIT_A_RET), g_t.a.stop);
	jit_destroy(&j);
	return 0;
}

/* ---- a syscall inside a function with an rbp frame, no unwind table -- */

/*
 * uw_asm_outer(fd, cmd, arg, word): an rbp frame holding @word at
 * rbp - 8, calling uw_asm_inner(fd, cmd, arg): an rbp frame, then the
 * ioctl syscall.  No CFI, so no SFrame FDE even in the --gsframe builds:
 * both frames are for the frame-pointer walk.
 */
__asm__(
	"	.text\n"
	"	.globl uw_asm_inner\n"
	"	.type uw_asm_inner, @function\n"
	"uw_asm_inner:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov $16, %eax\n"		/* SYS_ioctl */
	"	syscall\n"
	"	pop %rbp\n"
	"	ret\n"
	"	.size uw_asm_inner, .-uw_asm_inner\n"
	"	.globl uw_asm_outer\n"
	"	.type uw_asm_outer, @function\n"
	"uw_asm_outer:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	sub $16, %rsp\n"
	"	mov %rcx, -8(%rbp)\n"
	"	call uw_asm_inner\n"
	"	leave\n"
	"	ret\n"
	"	.size uw_asm_outer, .-uw_asm_outer\n");

long uw_asm_inner(long fd, unsigned long cmd, void *arg);
long uw_asm_outer(long fd, unsigned long cmd, void *arg, uint64_t word);

NOIPA long asm_caller(uint64_t word)
{
	long r;

	memset(g_methods, 0, sizeof(g_methods));
	uw_args(&g_t.a, g_ips, g_methods, MAXF, 0);
	r = uw_asm_outer(uw_ufd, uw_cmd, &g_t.a, word);
	g_t.rc = r;
	KEEP(r);
	return r;
}

NOIPA int t_syscall_in_fp_frame(void)
{
	/*
	 * At the syscall the top of the stack is uw_asm_inner's saved rbp,
	 * not a return address.  The second word puts 0xe8 (call rel32) 5
	 * bytes below the address that saved rbp holds, where an "is this a
	 * return address" check looks for the call instruction.
	 */
	static const uint64_t words[] = { 0, 0x00000000e8000000ULL };
	struct expect e;
	unsigned int i;
	char what[128];
	long r;

	for (i = 0; i < 2; i++) {
		e.n = 0;
		ex_func_n(&e, (void *)uw_asm_inner, 1, CODECTL_FRAME_REGS, 1);
		ex_func(&e, (void *)uw_asm_outer, CODECTL_FRAME_FP);
		ex_func(&e, (void *)asm_caller, CODECTL_FRAME_FP);
		ex_tail(&e);
		r = asm_caller(words[i]);
		KEEP(r);
		snprintf(what, sizeof(what),
			 "syscall in an rbp frame, no FDE, caller's word at rbp-8 = %#llx",
			 ULL(words[i]));
		check_trace(what, &g_t, &e, CHK_FULL);
	}
	return 0;
}

/* ---- glibc's ioctl(): frame 0 in libc, which has no SFrame ----------- */

NOIPA int libc_ioctl_caller(void)
{
	int r;

	memset(g_methods, 0, sizeof(g_methods));
	uw_args(&g_t.a, g_ips, g_methods, MAXF, 0);
	r = ioctl(uw_ufd, uw_cmd, &g_t.a);
	g_t.rc = r ? -errno : 0;
	KEEP(r);
	return r;
}

NOIPA int t_libc_ioctl(void)
{
	struct expect e;
	int r;

	r = libc_ioctl_caller();
	KEEP(r);
	/*
	 * glibc 2.36's ioctl() moves rsp (sub $0x58) for its va_list before
	 * the syscall, and has no table: frame 1 comes from the FP walk.
	 * With frame pointers that finds libc_ioctl_caller's own frame, whose
	 * return address is in t_libc_ioctl: libc_ioctl_caller is skipped.
	 * Without them rbp is anybody's: only a clean stop is expected.
	 */
	e.n = 0;
	ex_func_n(&e, (void *)ioctl, 1, CODECTL_FRAME_REGS, 1);
	if (!UW_SFRAME) {
		ex_tail(&e);
		e.f[1].method = CODECTL_FRAME_FP;
		check_trace("glibc ioctl() (FP walk skips its caller)", &g_t, &e,
			    CHK_FULL);
	} else if (check_trace("glibc ioctl(): frame 0", &g_t, &e, CHK_PREFIX)) {
		char sym[160];

		note("glibc ioctl() then %s by %s; %u frames, stop %s",
		     g_t.a.nr > 1 ? uw_sym(g_ips[1] - 1, sym, sizeof(sym)) : "-",
		     g_t.a.nr > 1 ? uw_method_name(g_methods[1]) : "-",
		     g_t.a.nr, uw_stop_name(g_t.a.stop));
	}
	return 0;
}

/* ---- unregistered: the fallback ---------------------------------------- */

static int find_main_obj(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name && !info->dlpi_name[0]) {
		*(struct dl_phdr_info *)data = *info;
		return 1;
	}
	return 0;
}

NOIPA int t_unregistered(void)
{
	struct dl_phdr_info self;
	struct codectl_query_info q;
	struct expect e;
	uint32_t i;
	int r;

	if (!dl_iterate_phdr(find_main_obj, &self)) {
		fail("dl_iterate_phdr: no main program");
		return 0;
	}
	r = uw_query((uintptr_t)main, &q);
	if (!EXPECT(!r, "QUERY main: %s", strerror(-r)))
		return 0;
	r = codectl_unregister(q.text_start, q.text_end) ? -errno : 0;
	if (!EXPECT(!r, "UNREGISTER the program: %s", strerror(-r)))
		return 0;

	ex_chain(&e);
	r = chain_a(1, MAXF);
	KEEP(r);
	if (!UW_SFRAME) {
		/* Frame pointers need no registration. */
		check_trace("chain, program unregistered (FP)", &g_t, &e, CHK_FULL);
	} else {
		/*
		 * uw_unwind is a leaf whose syscall leaves the return address
		 * on top of the stack: FP_ENTRY finds uw_take.  Past that rbp
		 * is not a frame pointer (-fomit-frame-pointer): anything,
		 * but no SFrame for the program's pcs, and a clean stop.
		 */
		e.n = 2;
		e.f[1].method = CODECTL_FRAME_FP_ENTRY;
		if (check_trace("chain, program unregistered (fallback)", &g_t,
				&e, CHK_PREFIX)) {
			for (i = 1; i < g_t.a.nr; i++) {
				uint64_t pc = g_ips[i - 1] - (i > 1);

				if (pc >= q.text_start && pc < q.text_end &&
				    g_methods[i] == CODECTL_FRAME_SFRAME) {
					fail("frame %u found by SFrame of the unregistered program",
					     i);
					dump_trace("unregistered", &g_t);
					break;
				}
			}
			note("unregistered: fallback gave %u frames, stop %s",
			     g_t.a.nr, uw_stop_name(g_t.a.stop));
			if (verbose || g_t.a.nr < 8)
				dump_trace("fallback", &g_t);
		}
	}

	/* Registered again: SFrame again. */
	r = codectl_register_object(&self) ? -errno : 0;
	if (!EXPECT(!r, "registering the program again: %s", strerror(-r)))
		return 0;
	ex_chain(&e);
	r = chain_a(1, MAXF);
	KEEP(r);
	check_trace("chain, program registered again", &g_t, &e, CHK_FULL);
	return 0;
}

/* ---- method flags and argument errors ----------------------------------- */

/* uw_take() with @flags, one frame below the test. */
NOIPA int chain_c_flags(uint32_t flags)
{
	long r = uw_take(MAXF, flags);

	KEEP(r);
	return (int)r;
}

NOIPA int t_flags(void)
{
	struct codectl_unwind_args a;
	struct expect e;
	uint64_t ips[8];
	uint32_t all;
	long r;

	uw_args(&a, ips, NULL, 0, 0);
	r = uw_unwind(&a);
	EXPECT(r == -EINVAL, "max_frames 0: %s, expected EINVAL",
	       strerror((int)-r));
	uw_args(&a, ips, NULL, MAXF + 1, 0);
	r = uw_unwind(&a);
	EXPECT(r == -EINVAL, "max_frames %u: %s, expected EINVAL", MAXF + 1,
	       strerror((int)-r));
	/* The product's flags; the test module's device adds NOFAULT. */
	all = uw_cmd == CODECTL_IOC_UNWIND ? CODECTL_UNWIND_FLAGS_ALL :
	      CODECTL_TEST_UNWIND_FLAGS_ALL;
	uw_args(&a, ips, NULL, 8, 0);
	a.flags = all + 1;
	r = uw_unwind(&a);
	EXPECT(r == -EINVAL, "flags %#x: %s, expected EINVAL", all + 1,
	       strerror((int)-r));
	if (uw_cmd == CODECTL_IOC_UNWIND) {
		/* NOFAULT (0x8) is the test module's since ABI 3. */
		uw_args(&a, ips, NULL, 8, 0);
		a.flags = CODECTL_UNWIND_NOFAULT;
		r = uw_unwind(&a);
		EXPECT(r == -EINVAL,
		       "flags %#x (NOFAULT) on " CODECTL_DEVICE ": %s, expected EINVAL",
		       CODECTL_UNWIND_NOFAULT, strerror((int)-r));
	}
	uw_args(&a, ips, NULL, 8, 0);
	a.__reserved = 1;
	r = uw_unwind(&a);
	EXPECT(r == -EINVAL, "__reserved 1: %s, expected EINVAL",
	       strerror((int)-r));
	uw_args(&a, (uint64_t *)0x1000, NULL, 8, 0);
	r = uw_unwind(&a);
	EXPECT(r == -EFAULT, "ips at 0x1000: %s, expected EFAULT",
	       strerror((int)-r));
	uw_args(&a, ips, (uint8_t *)0x1000, 8, 0);
	r = uw_unwind(&a);
	EXPECT(r == -EFAULT, "methods at 0x1000: %s, expected EFAULT",
	       strerror((int)-r));

	/* No method at all: frame 0 only, then a stop. */
	r = chain_c_flags(CODECTL_UNWIND_FLAGS_ALL);
	KEEP(r);
	e.n = 0;
	ex_func_n(&e, (void *)uw_unwind, 1, CODECTL_FRAME_REGS, 1);
	if (check_trace("flags NO_SFRAME|NO_JIT|NO_FP", &g_t, &e, CHK_FULL))
		EXPECT(g_t.a.nr == 1, "flags ALL: %u frames, expected 1 (stop %s)",
		       g_t.a.nr, uw_stop_name(g_t.a.stop));

	if (UW_SFRAME) {
		/*
		 * SFrame left out of -fomit-frame-pointer code: uw_unwind is a
		 * leaf with the return address on top of the stack at its
		 * syscall (FP_ENTRY finds uw_take); past that rbp is no frame
		 * pointer: anything, but a clean stop.
		 */
		r = chain_c_flags(CODECTL_UNWIND_NO_SFRAME);
		KEEP(r);
		ex_begin(&e);
		e.f[1].method = CODECTL_FRAME_FP_ENTRY;
		if (check_trace("CODECTL_UNWIND_NO_SFRAME on -fomit-frame-pointer code",
				&g_t, &e, CHK_PREFIX))
			note("NO_SFRAME: %u frames, stop %s", g_t.a.nr,
			     uw_stop_name(g_t.a.stop));
	} else {
		/* Frame pointers left out of code without tables. */
		r = chain_c_flags(CODECTL_UNWIND_NO_FP);
		KEEP(r);
		e.n = 0;
		ex_func_n(&e, (void *)uw_unwind, 1, CODECTL_FRAME_REGS, 1);
		if (check_trace("CODECTL_UNWIND_NO_FP on frame-pointer code",
				&g_t, &e, CHK_FULL))
			EXPECT(g_t.a.nr == 1, "NO_FP: %u frames, expected 1 (stop %s)",
			       g_t.a.nr, uw_stop_name(g_t.a.stop));
	}
	return 0;
}

/* SFrame only (or FP only), as the benchmark uses them: still to main. */
NOIPA int t_only_own_method(void)
{
	struct expect e;
	uint32_t flags = UW_SFRAME ?
		CODECTL_UNWIND_NO_FP | CODECTL_UNWIND_NO_JIT :
		CODECTL_UNWIND_NO_SFRAME | CODECTL_UNWIND_NO_JIT;
	int r;

	ex_begin(&e);
	ex_func(&e, (void *)chain_c_flags, M_OWN);
	ex_tail(&e);
	r = chain_c_flags(flags);
	KEEP(r);
	check_trace(UW_SFRAME ? "NO_FP|NO_JIT: SFrame only, to main"
			      : "NO_SFRAME|NO_JIT: FP only, to main",
		    &g_t, &e, CHK_FULL);
	return 0;
}

/* ---- the module's counters ---------------------------------------------- */

NOIPA int t_stats(void)
{
	struct codectl_unwind_stats s0, s1;
	struct codectl_unwind_args a;
	uint64_t ips[64];
	uint64_t own;
	long r;

	if (ioctl(uw_fd, CODECTL_IOC_UNWIND_STATS, &s0)) {
		fail("CODECTL_IOC_UNWIND_STATS: %m");
		return 0;
	}
	uw_args(&a, ips, NULL, 64, 0);
	a.iterations = 5;
	r = uw_unwind(&a);
	if (!EXPECT(!r, "unwind: %s", strerror((int)-r)))
		return 0;
	if (ioctl(uw_fd, CODECTL_IOC_UNWIND_STATS, &s1)) {
		fail("CODECTL_IOC_UNWIND_STATS: %m");
		return 0;
	}
	own = s1.frames[M_OWN] - s0.frames[M_OWN];
	EXPECT(s1.unwinds - s0.unwinds >= 5, "unwinds +%llu, expected >= 5",
	       ULL(s1.unwinds - s0.unwinds));
	EXPECT(s1.frames[CODECTL_FRAME_REGS] - s0.frames[CODECTL_FRAME_REGS] >= 5,
	       "frames[REGS] +%llu, expected >= 5",
	       ULL(s1.frames[CODECTL_FRAME_REGS] - s0.frames[CODECTL_FRAME_REGS]));
	EXPECT(own >= 5ULL * 3, "frames[%s] +%llu, expected >= 15",
	       uw_method_name(M_OWN), ULL(own));
	EXPECT(s1.stops[a.stop] - s0.stops[a.stop] >= 5,
	       "stops[%s] +%llu, expected >= 5", uw_stop_name(a.stop),
	       ULL(s1.stops[a.stop] - s0.stops[a.stop]));
	return 0;
}

/* ---- many threads at once ------------------------------------------------ */

#define THREADS		16
#define THREAD_ROUNDS	200

struct thr {
	int idx, depth, fd;
	int errors;
	pthread_barrier_t *bar;
	uint64_t ips[256];
	uint8_t methods[256];
	struct trace t;
	uint64_t unwinds;
	volatile int *stop;
	int storm, reopen, gone;
};

NOIPA long thr_leaf(struct thr *th, uint32_t iterations)
{
	long r;

	memset(th->methods, 0, sizeof(th->methods));
	uw_args(&th->t.a, th->ips, th->methods, 256, 0);
	th->t.a.iterations = iterations;
	r = uw_unwind_fd(th->fd, &th->t.a);
	th->t.rc = r;
	KEEP(r);
	return r;
}

NOIPA long thr_rec(struct thr *th, int n, uint32_t iterations)
{
	long r;

	if (n == 0)
		r = thr_leaf(th, iterations);
	else
		r = thr_rec(th, n - 1, iterations);
	KEEP(r);
	return r;
}

static void ex_thr(struct expect *e, const struct thr *th)
{
	e->n = 0;
	ex_func_n(e, (void *)uw_unwind_fd, 1, CODECTL_FRAME_REGS, 1);
	ex_func(e, (void *)thr_leaf, M_LEAF);
	ex_func_n(e, (void *)thr_rec, 0, M_OWN, th->depth + 1);
}

void *thr_main(void *arg);

NOIPA void *thr_main(void *arg)
{
	struct thr *th = arg;
	struct expect e;
	char what[64];
	int i;

	th->t.ips = th->ips;
	th->t.methods = th->methods;
	ex_thr(&e, th);
	ex_func(&e, (void *)thr_main, M_OWN);
	snprintf(what, sizeof(what), "thread %d (depth %d)", th->idx, th->depth);
	if (th->bar)
		pthread_barrier_wait(th->bar);
	for (i = 0; th->storm ? !*th->stop : i < THREAD_ROUNDS; i++) {
		long r;

		if (th->reopen) {
			th->fd = open(uw_dev, O_RDWR | O_CLOEXEC);
			if (th->fd < 0) {
				/* rmmod happened between two rounds */
				th->gone = errno;
				break;
			}
		}
		r = thr_rec(th, th->depth, th->storm ? 50 : 1);
		KEEP(r);
		if (th->reopen) {
			close(th->fd);
			/* leave rmmod windows with no descriptor open */
			usleep(1000);
		}
		if (th->storm && r == -EINTR)
			break;
		th->unwinds++;
		if (!check_trace(what, &th->t, &e, CHK_PREFIX)) {
			if (++th->errors >= 3)
				break;
		}
	}
	return NULL;
}

NOIPA int t_threads(void)
{
	static struct thr th[THREADS];
	pthread_barrier_t bar;
	pthread_t tid[THREADS];
	int i, n = 0;

	pthread_barrier_init(&bar, NULL, THREADS);
	for (i = 0; i < THREADS; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].idx = i;
		th[i].depth = 3 + 5 * i;
		th[i].bar = &bar;
		/* Half share uw_fd, half have their own descriptor. */
		th[i].fd = i & 1 ? open(uw_dev, O_RDWR | O_CLOEXEC) : uw_ufd;
		if (th[i].fd < 0) {
			fail("open: %m");
			th[i].fd = uw_ufd;
		}
	}
	for (i = 0; i < THREADS; i++) {
		if (pthread_create(&tid[i], NULL, thr_main, &th[i])) {
			fail("pthread_create: %m");
			/* the barrier would never open: give up */
			exit(1);
		}
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		n += th[i].unwinds;
		if (th[i].fd != uw_ufd)
			close(th[i].fd);
	}
	pthread_barrier_destroy(&bar);
	EXPECT(n == THREADS * THREAD_ROUNDS, "%d unwinds done, expected %d", n,
	       THREADS * THREAD_ROUNDS);
	return 0;
}

/* ---- storm mode (guest-suite.sh: rmmod while unwinds are in flight) ---- */

static volatile sig_atomic_t storm_stop_req;

static void storm_stop(int sig)
{
	storm_stop_req = sig;
}

/* Until SECONDS have passed, SIGUSR1 or SIGTERM arrives, or all saw rmmod. */
static int storm_main(int seconds, int reopen)
{
	static struct thr th[8];
	static volatile int stop;
	int nthreads = reopen ? 4 : 8;
	pthread_t tid[8];
	uint64_t total = 0;
	int i, t, errors = 0, gone = 0, pass = 0, failed = 0;

	for (i = 0; i < nthreads; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].idx = i;
		th[i].depth = 2 + 7 * i;
		th[i].storm = 1;
		th[i].reopen = reopen;
		th[i].stop = &stop;
		if (!reopen) {
			th[i].fd = open(uw_dev, O_RDWR | O_CLOEXEC);
			if (th[i].fd < 0) {
				printf("# open: %m\n");
				return 1;
			}
		}
		if (pthread_create(&tid[i], NULL, thr_main, &th[i])) {
			printf("# pthread_create failed\n");
			return 1;
		}
	}
	signal(SIGUSR1, storm_stop);
	signal(SIGTERM, storm_stop);
	printf("# ready: %d threads unwinding%s\n", nthreads,
	       reopen ? ", each opening and closing the device per call" : "");
	fflush(stdout);
	/* Until the time is up, or every thread saw the module go. */
	for (t = 0; t < seconds * 10 && !storm_stop_req; t++) {
		int alive = 0;

		for (i = 0; i < nthreads; i++)
			alive += !__atomic_load_n(&th[i].gone, __ATOMIC_RELAXED);
		if (!alive)
			break;
		usleep(100000);
	}
	stop = 1;
	for (i = 0; i < nthreads; i++) {
		pthread_join(tid[i], NULL);
		total += th[i].unwinds;
		errors += th[i].errors;
		gone += th[i].gone != 0;
		if (th[i].gone && th[i].gone != ENOENT && th[i].gone != ENODEV &&
		    th[i].gone != ENXIO) {
			printf("# thread %d: open failed: %s\n", i,
			       strerror(th[i].gone));
			errors++;
		}
		if (!reopen)
			close(th[i].fd);
	}
	printf("# storm: %llu unwinds of 50 iterations, %d of %d threads saw the module go\n",
	       ULL(total), gone, nthreads);
	if (errors || !total) {
		printf("not ok 1 - unwind storm: %d wrong traces, %llu unwinds\n",
		       errors, ULL(total));
		failed++;
	} else {
		printf("ok 1 - unwind storm: every trace right\n");
		pass++;
	}
	printf("%d passed, %d failed\n", pass, failed);
	return failed ? 1 : 0;
}

/* ---- main ----------------------------------------------------------------- */

struct test {
	const char *name;
	int (*fn)(void);
};

static const struct test tests[] = {
	{ "registered", t_registered },
	{ "chain", t_chain },
	{ "recursion_full", t_recursion_full },
	{ "recursion_depth", t_recursion_depth },
	{ "plt", t_plt },
	{ "realign", t_realign },
	{ "drap", t_drap },
	{ "signal", t_signal },
	{ "signal_async", t_signal_async },
	{ "signal_restorer", t_signal_restorer },
	{ "signal_altstack", t_signal_altstack },
	{ "jit", t_jit },
	{ "jit_edges", t_jit_edges },
	{ "syscall_in_fp_frame", t_syscall_in_fp_frame },
	{ "libc_ioctl", t_libc_ioctl },
	{ "only_own_method", t_only_own_method },
	{ "flags", t_flags },
	{ "stats", t_stats },
	{ "threads", t_threads },
	{ "unregistered", t_unregistered },
};
#define NTESTS	((int)(sizeof(tests) / sizeof(tests[0])))

static int n_pass, n_fail, n_skip, n_run;

NOIPA int run_one(int i)
{
	int r;

	cur_failed = 0;
	cur_skip = NULL;
	cur_test_fn = (void *)tests[i].fn;
	r = tests[i].fn();
	KEEP(r);
	n_run++;
	if (cur_skip) {
		printf("ok %d - unwind %s %s # SKIP %s\n", n_run, UW_VARIANT,
		       tests[i].name, cur_skip);
		n_skip++;
	} else if (cur_failed) {
		printf("not ok %d - unwind %s %s\n", n_run, UW_VARIANT,
		       tests[i].name);
		n_fail++;
	} else {
		printf("ok %d - unwind %s %s\n", n_run, UW_VARIANT, tests[i].name);
		n_pass++;
	}
	fflush(stdout);
	return r;
}

int main(int argc, char **argv)
{
	int i, k, r, any = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v")) {
			verbose = 1;
		} else if (!strcmp(argv[i], "--storm") && i + 1 < argc) {
			int secs = atoi(argv[++i]);
			int reopen = i + 1 < argc && !strcmp(argv[i + 1], "--reopen");

			if (uw_register_all() < 0) {
				printf("# registering: %m\n");
				return 1;
			}
			codectl_close();	/* only the threads' fds hold it */
			return storm_main(secs, reopen);
		} else {
			fprintf(stderr, "usage: %s [-v] [TEST...] | --storm SECONDS [--reopen]\n",
				argv[0]);
			return 2;
		}
	}
	printf("# unwind tests, variant %s (SFrame %s), pid %d\n", UW_VARIANT,
	       UW_SFRAME ? (UW_SFRAME == 1 ? "v1" : UW_SFRAME == 2 ? "v2" : "v3")
			 : "none: frame pointers", getpid());
	r = uw_open();
	if (r) {
		printf("not ok 1 - unwind %s open %s: %s\n", UW_VARIANT,
		       CODECTL_DEVICE, strerror(-r));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	r = uw_register_all();
	if (r < 0) {
		printf("not ok 1 - unwind %s register the loaded objects: %s\n",
		       UW_VARIANT, strerror(-r));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	for (k = 0; k < NTESTS; k++) {
		if (i < argc) {
			int j, want = 0;

			for (j = i; j < argc; j++)
				want |= !strcmp(argv[j], tests[k].name);
			if (!want)
				continue;
		}
		any = 1;
		run_one(k);
	}
	if (!any) {
		printf("not ok 1 - unwind %s: no test named %s\n", UW_VARIANT,
		       argv[i]);
		n_fail++;
	}
	if (n_skip)
		printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	else
		printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
