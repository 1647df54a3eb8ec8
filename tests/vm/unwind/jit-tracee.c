// SPDX-License-Identifier: GPL-2.0
/*
 * An example JIT: a tiny compiler of postfix expressions over x, integer
 * constants, + - * and calls of a C function, leaf(v), emitting x86-64
 * machine code at run time, with its unwind rules registered through
 * libcodectl's JIT table builder (codectl_jit_*).  tests/vm/tracers.sh
 * samples it with perf and checks its own stack through the module's
 * synchronous unwinder.
 *
 *   jit-tracee [-n] [-t FRES] spin SECONDS
 *   jit-tracee [-n] [-t FRES] check
 *     -n       build the JIT's tables but do not register them
 *              (CODECTL_JIT_UNREGISTERED): the code is then unknown to
 *              the unwinder, which can only fall back to frame pointers
 *     -t FRES  entries per table (default 4, so that the chain has
 *              several tables)
 *     spin     call the compiled functions for SECONDS; jt_leaf spins
 *     check    call them once, jt_leaf asking the module for its own
 *              stack (codectl_unwind_self(), faulting and NOFAULT walks):
 *              prints the frames and "jit-check: ok"/"jit-check: FAIL"
 *              per walk, exit status 0 only if all are ok
 *
 * The chain is main -> jt_f1 -> jt_f2 -> jit_exprN (generated) -> jt_leaf.
 * The generated functions have no frame pointer (rbp is never touched):
 *
 *	push rbx; sub rsp, 8; mov rbx, rdi; ...; add rsp, 8; pop rbx; ret
 *
 * the expression evaluated with rax as the top of the stack and the rest
 * pushed on the machine stack, calls padded to keep rsp 16-byte aligned.
 * Each instruction that moves rsp starts a new code range with its own
 * rule (CFA = rsp + 8 at entry, + 16 after push rbx, + 24 after sub, + 8
 * for each value pushed...; the return address at CFA - 8); functions are
 * 16-byte aligned, the int3 padding between them left without a rule.
 * The code is written into a RW mapping, made RX (W^X), then registered.
 * A perf map (/tmp/perf-PID.map) names the functions for perf.
 *
 * Registers every loaded object with codectl_register_all() first (its own
 * SFrame, libc's synthesised), with or without -n.  Prints
 * "jit-tracee: ready PID jit START END fres N tables N registered N" on
 * stderr before the chain.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <codectl.h>
#include "../testmod/codectl_test.h"

#define NOIPA	__attribute__((noinline, noipa))

static volatile sig_atomic_t jt_done;
static volatile unsigned long jt_sink;
static int jt_check_mode;
static int jt_check_fail;
static int jt_checks;

/* ---- the compiler --------------------------------------------------- */

#define CODE_SIZE	8192
#define MAX_RANGES	256

struct range {
	uint32_t start, size;
	int32_t cfa;
};

struct jit {
	uint8_t *code;
	uint32_t len;
	uint32_t range_start;	/* of the current rule */
	int32_t cfa;		/* CFA - rsp at the current point */
	struct range ranges[MAX_RANGES];
	unsigned int nr_ranges;
};

static void emit(struct jit *j, const void *bytes, size_t n)
{
	if (j->len + n > CODE_SIZE) {
		fprintf(stderr, "jit-tracee: code buffer full\n");
		exit(1);
	}
	memcpy(j->code + j->len, bytes, n);
	j->len += n;
}

#define EMIT(j, ...) \
	do { \
		static const uint8_t b_[] = { __VA_ARGS__ }; \
		emit(j, b_, sizeof(b_)); \
	} while (0)

static void emit_imm64(struct jit *j, uint64_t v)
{
	emit(j, &v, 8);
}

/* The rule so far covers [range_start, len); from here on CFA = rsp + @cfa. */
static void end_range(struct jit *j)
{
	if (j->len == j->range_start)
		return;
	if (j->nr_ranges == MAX_RANGES) {
		fprintf(stderr, "jit-tracee: too many ranges\n");
		exit(1);
	}
	j->ranges[j->nr_ranges++] = (struct range){
		j->range_start, j->len - j->range_start, j->cfa
	};
	j->range_start = j->len;
}

static void set_cfa(struct jit *j, int32_t cfa)
{
	end_range(j);
	j->cfa = cfa;
}

static int64_t (*leaf_fn)(int64_t);

/*
 * Compile @expr (postfix, space separated: x, decimal constants, + - *,
 * leaf) into a function int64_t f(int64_t x); returns its offset.
 */
static uint32_t compile(struct jit *j, const char *expr)
{
	char buf[256], *tok, *save;
	uint32_t start;
	int depth = 0;		/* values on the stack, rax included */

	while (j->len % 16)
		EMIT(j, 0xcc);			/* int3: no rule */
	j->range_start = start = j->len;
	j->cfa = 8;				/* at entry */
	EMIT(j, 0x53);				/* push rbx */
	set_cfa(j, 16);
	EMIT(j, 0x48, 0x83, 0xec, 0x08);	/* sub rsp, 8 */
	set_cfa(j, 24);
	EMIT(j, 0x48, 0x89, 0xfb);		/* mov rbx, rdi */

	snprintf(buf, sizeof(buf), "%s", expr);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "x") || (tok[0] >= '0' && tok[0] <= '9')) {
			if (depth++) {
				EMIT(j, 0x50);		/* push rax */
				set_cfa(j, j->cfa + 8);
			}
			if (tok[0] == 'x') {
				EMIT(j, 0x48, 0x89, 0xd8);	/* mov rax, rbx */
			} else {
				EMIT(j, 0x48, 0xb8);	/* movabs rax, imm */
				emit_imm64(j, strtoull(tok, NULL, 10));
			}
		} else if (!strcmp(tok, "leaf")) {
			/* rsp 16-byte aligned at the call: CFA - rsp = 0 mod 16 */
			int pad = j->cfa % 16 ? 8 : 0;

			if (depth < 1)
				goto bad;
			if (pad) {
				EMIT(j, 0x48, 0x83, 0xec, 0x08); /* sub rsp, 8 */
				set_cfa(j, j->cfa + 8);
			}
			EMIT(j, 0x48, 0x89, 0xc7);	/* mov rdi, rax */
			EMIT(j, 0x49, 0xbb);		/* movabs r11, leaf */
			emit_imm64(j, (uint64_t)(uintptr_t)leaf_fn);
			EMIT(j, 0x41, 0xff, 0xd3);	/* call r11 */
			if (pad) {
				EMIT(j, 0x48, 0x83, 0xc4, 0x08); /* add rsp, 8 */
				set_cfa(j, j->cfa - 8);
			}
		} else if (strlen(tok) == 1 && strchr("+-*", tok[0])) {
			if (depth-- < 2)
				goto bad;
			EMIT(j, 0x59);			/* pop rcx */
			set_cfa(j, j->cfa - 8);
			if (tok[0] == '+')
				EMIT(j, 0x48, 0x01, 0xc8);	/* add rax, rcx */
			else if (tok[0] == '*')
				EMIT(j, 0x48, 0x0f, 0xaf, 0xc1); /* imul rax, rcx */
			else
				EMIT(j, 0x48, 0x29, 0xc1,	/* sub rcx, rax */
				     0x48, 0x89, 0xc8);		/* mov rax, rcx */
		} else {
			goto bad;
		}
	}
	if (depth != 1)
		goto bad;
	EMIT(j, 0x48, 0x83, 0xc4, 0x08);	/* add rsp, 8 */
	set_cfa(j, 16);
	EMIT(j, 0x5b);				/* pop rbx */
	set_cfa(j, 8);
	EMIT(j, 0xc3);				/* ret */
	end_range(j);
	return start;
bad:
	fprintf(stderr, "jit-tracee: bad expression \"%s\" at \"%s\"\n", expr,
		tok ? tok : "end");
	exit(2);
}

/* The same expressions, interpreted: the compiled code must agree. */
static int64_t interpret(const char *expr, int64_t x)
{
	int64_t st[64];
	char buf[256], *tok, *save;
	int sp = 0;

	snprintf(buf, sizeof(buf), "%s", expr);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "x"))
			st[sp++] = x;
		else if (tok[0] >= '0' && tok[0] <= '9')
			st[sp++] = strtoll(tok, NULL, 10);
		else if (!strcmp(tok, "leaf"))
			st[sp - 1] = leaf_fn(st[sp - 1]);
		else if (tok[0] == '+')
			sp--, st[sp - 1] += st[sp];
		else if (tok[0] == '-')
			sp--, st[sp - 1] -= st[sp];
		else
			sp--, st[sp - 1] *= st[sp];
	}
	return st[0];
}

/* Calls of leaf at stack depths with and without padding. */
static const char *const exprs[] = {
	"x leaf 3 *",
	"x 1 + leaf x leaf +",
	"7 x 2 * 5 - leaf x leaf * +",
	"1 2 3 x leaf + + -",
};
#define NR_EXPRS	(sizeof(exprs) / sizeof(exprs[0]))

static int64_t (*jit_fns[NR_EXPRS])(int64_t);
static uint8_t *jit_code;

/* ---- the C side ------------------------------------------------------ */

static int in_jit(uint64_t pc)
{
	return pc >= (uintptr_t)jit_code && pc < (uintptr_t)jit_code + CODE_SIZE;
}

static const char *sym_of(uint64_t pc, char *buf, size_t n)
{
	Dl_info di;

	if (in_jit(pc)) {
		snprintf(buf, n, "[jit +%#llx]",
			 (unsigned long long)(pc - (uintptr_t)jit_code));
		return buf;
	}
	if (dladdr((void *)(uintptr_t)(pc - 1), &di) && di.dli_sname)
		return di.dli_sname;
	return "?";
}

/*
 * The module's unwind of this very stack: after libcodectl's frame,
 * jt_unwind_check and jt_leaf, a JIT frame, then jt_f2 found by the JIT
 * table's rule (CODECTL_FRAME_JIT), jt_f1 and main.
 */
/*
 * CODECTL_UNWIND_NOFAULT (the hooks' walk) is the test module's only
 * (/dev/codectl_test): a syscall instruction here, as libcodectl's
 * codectl_unwind_self() has one, so frame 0 is here and frame 1 the
 * caller.
 */
NOIPA static int jt_test_unwind(struct codectl_unwind_args *a)
{
	static int fd = -1;
	long ret;

	if (fd < 0)
		fd = open(CODECTL_TEST_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_ioctl), "D"((long)fd),
			   "S"((long)CODECTL_TEST_IOC_UNWIND), "d"(a)
			 : "rcx", "r11", "memory");
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

NOIPA void jt_unwind_check(unsigned int flags)
{
	static const char *const want[] = { "jt_unwind_check", "jt_leaf", NULL,
					    "jt_f2", "jt_f1", "main" };
	uint64_t ips[64];
	uint8_t methods[64];
	struct codectl_unwind_args a = {
		.ips = (uintptr_t)ips, .methods = (uintptr_t)methods,
		.max_frames = 64, .flags = flags,
	};
	unsigned int i, k, jit_frames = 0, ok = 1;
	char buf[64];

	jt_checks++;
	if (flags & CODECTL_UNWIND_NOFAULT ? jt_test_unwind(&a) :
	    codectl_unwind_self(&a)) {
		printf("jit-check: FAIL (flags %#x): unwind: %s\n", flags,
		       strerror(errno));
		jt_check_fail = 1;
		return;
	}
	printf("# unwind (flags %#x): %u frames, stop %s:", flags, a.nr,
	       codectl_stop_name(a.stop));
	for (i = 0; i < a.nr; i++)
		printf(" %s/%s", sym_of(ips[i], buf, sizeof(buf)),
		       codectl_frame_name(methods[i]));
	printf("\n");
	/* Frame 0 is in libcodectl (or jt_test_unwind). */
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		i = k + 1;
		if (i >= a.nr) {
			ok = 0;
			break;
		}
		if (!want[k]) {
			ok &= in_jit(ips[i]);
			continue;
		}
		ok &= !strcmp(sym_of(ips[i], buf, sizeof(buf)), want[k]);
	}
	for (i = 0; i < a.nr; i++)
		jit_frames += methods[i] == CODECTL_FRAME_JIT;
	/* jt_f2's frame is the one the JIT table found. */
	ok &= a.nr > 4 && methods[4] == CODECTL_FRAME_JIT && jit_frames == 1;
	printf("jit-check: %s (flags %#x): %u frames, %u by the JIT table, %s main\n",
	       ok ? "ok" : "FAIL", flags, a.nr, jit_frames,
	       ok ? "reached" : "did not reach");
	jt_check_fail |= !ok;
}

NOIPA int64_t jt_leaf(int64_t v)
{
	unsigned long i;

	if (jt_check_mode) {
		jt_unwind_check(0);
		jt_unwind_check(CODECTL_UNWIND_NOFAULT);
	} else {
		for (i = 0; i < 200000 && !jt_done; i++)
			jt_sink += i ^ (unsigned long)v;
	}
	return 2 * v + 1;
}

NOIPA int64_t jt_f2(int64_t x)
{
	int64_t r = 0;
	unsigned int i;

	for (i = 0; i < NR_EXPRS; i++)
		r += jit_fns[i](x + i);
	jt_sink++;
	return r;
}

NOIPA int64_t jt_f1(int64_t x)
{
	int64_t r;

	do {
		r = jt_f2(x);
		x++;
	} while (!jt_done && !jt_check_mode);
	jt_sink++;
	return r;
}

static void jt_alarm(int sig)
{
	jt_done = 1;
}

int main(int argc, char **argv)
{
	unsigned int fres = 4, flags = 0, i, tables = 0;
	const struct codectl_jit_unwind_table *t;
	struct codectl_jit *cj;
	static struct jit j;
	char path[64];
	FILE *map;
	int opt, n, check;

	while ((opt = getopt(argc, argv, "nt:")) != -1) {
		if (opt == 'n')
			flags |= CODECTL_JIT_UNREGISTERED;
		else if (opt == 't')
			fres = atoi(optarg);
		else
			return 2;
	}
	if (optind >= argc)
		return 2;
	check = !strcmp(argv[optind], "check");
	if (!check && (strcmp(argv[optind], "spin") || optind + 1 >= argc))
		return 2;

	/* Without the module only -n runs (to try the compiler anywhere). */
	n = codectl_register_all(0);
	if (n < 0 && !(errno == ENODEV && flags)) {
		fprintf(stderr, "jit-tracee: register: %s\n", strerror(errno));
		return 1;
	}

	/* Write the code, then RX (W^X), then register its rules. */
	leaf_fn = jt_leaf;
	jit_code = j.code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (j.code == MAP_FAILED)
		return 1;
	memset(j.code, 0xcc, CODE_SIZE);
	for (i = 0; i < NR_EXPRS; i++)
		jit_fns[i] = (void *)(j.code + compile(&j, exprs[i]));
	if (mprotect(j.code, CODE_SIZE, PROT_READ | PROT_EXEC))
		return 1;
	cj = codectl_jit_create((uintptr_t)j.code, (uintptr_t)j.code + CODE_SIZE,
				fres, flags);
	if (!cj) {
		fprintf(stderr, "jit-tracee: codectl_jit_create: %s\n",
			strerror(errno));
		return 1;
	}
	for (i = 0; i < j.nr_ranges; i++) {
		struct codectl_jit_rule r = { j.ranges[i].cfa, -8, 0, 0 };

		if (codectl_jit_add(cj, (uintptr_t)j.code + j.ranges[i].start,
				    j.ranges[i].size, &r)) {
			fprintf(stderr, "jit-tracee: codectl_jit_add: %s\n",
				strerror(errno));
			return 1;
		}
	}
	for (t = codectl_jit_head(cj); t; t = (const void *)(uintptr_t)t->next)
		tables++;

	/* The perf map: perf names the generated functions from it. */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (map) {
		for (i = 0; i < NR_EXPRS; i++) {
			uint8_t *s = (uint8_t *)jit_fns[i];
			uint8_t *e = i + 1 < NR_EXPRS ? (uint8_t *)jit_fns[i + 1] :
				     j.code + j.len;

			fprintf(map, "%lx %lx jit_expr%u\n", (unsigned long)s,
				(unsigned long)(e - s), i);
		}
		fclose(map);
	}

	/* The compiled code agrees with the interpreter (leaf not spinning). */
	jt_done = 1;
	for (i = 0; i < NR_EXPRS; i++) {
		int64_t a = jit_fns[i](5 + i), b = interpret(exprs[i], 5 + i);

		if (a != b) {
			fprintf(stderr, "jit-tracee: \"%s\"(%u) = %lld, want %lld\n",
				exprs[i], 5 + i, (long long)a, (long long)b);
			return 1;
		}
	}
	jt_done = 0;

	codectl_close();
	jt_check_mode = check;
	if (!check) {
		signal(SIGALRM, jt_alarm);
		alarm(atoi(argv[optind + 1]));
	}
	fprintf(stderr, "jit-tracee: ready %d jit %lx %lx fres %u tables %u registered %d\n",
		(int)getpid(), (unsigned long)j.code,
		(unsigned long)j.code + CODE_SIZE, j.nr_ranges, tables, n);
	jt_f1(5);
	if (jt_check_mode) {
		/* Two walks per call of leaf: 6 calls in the expressions. */
		if (jt_checks != 12)
			jt_check_fail = 1;
		printf("jit-check: %s, %d walks\n", jt_check_fail ? "FAIL" : "ok",
		       jt_checks);
	}
	if (codectl_jit_destroy(cj))
		fprintf(stderr, "jit-tracee: codectl_jit_destroy: %s\n",
			strerror(errno));
	/* The perf map stays: perf script reads it after we are gone. */
	return jt_check_fail;
}
