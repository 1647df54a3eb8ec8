// SPDX-License-Identifier: GPL-2.0
/*
 * codectl_sframe_synth(): arguments and errors, the exact rules of
 * functions with hand-written CFI (synth_asm.so), load bias and section
 * address, statistics on Debian's libc, and concurrent calls.  Sections
 * are decoded with the project's decoder (shared/sframe.c).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <codectl.h>
#include "sframe.h"

#define ASM_SO		"./synth_asm.so"
#define NOEH_SO		"./synth_noeh.so"
#define PLT_SO		"./synth_plt.so"
#define XREG_SO		"./synth_xreg.so"
#define LIBC		"/lib/x86_64-linux-gnu/libc.so.6"

static int open_or_fail(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static void test_args(void **state)
{
	size_t size;
	void *sec;
	int fd = open_or_fail(LIBC);

	(void)state;
	errno = 0;
	assert_int_equal(codectl_sframe_synth(-1, 0, 0, 0, &sec, &size, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, NULL, &size, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sec, NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 4, &sec, &size, NULL), -1);
	assert_int_equal(errno, EINVAL);
	close(fd);
}

static void test_not_elf(void **state)
{
	int fd = memfd_create("not-elf", MFD_CLOEXEC);
	size_t size;
	void *sec;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sec, &size, NULL), -1);
	assert_int_equal(errno, ENOEXEC);
	close(fd);
	fd = open_or_fail("/dev/null");
	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sec, &size, NULL), -1);
	assert_int_equal(errno, ENOEXEC);
	close(fd);
}

static void test_no_eh_frame_hdr(void **state)
{
	int fd = open_or_fail(NOEH_SO);
	size_t size;
	void *sec;

	(void)state;
	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sec, &size, NULL), -1);
	assert_int_equal(errno, ENOENT);
	close(fd);
}

/* The rule at @pc, which must exist. */
static void rule_at(const struct sframe_sec *s, uintptr_t pc,
		    struct sframe_rule *r)
{
	assert_int_equal(sframe_find(s, pc, r), SFRAME_OK);
}

static void assert_loc(const struct sframe_loc *l, int kind, int base,
		       int off)
{
	assert_int_equal(l->kind, kind);
	if (kind == SFRAME_LOC_VAL || kind == SFRAME_LOC_MEM) {
		assert_int_equal(l->base, base);
		assert_int_equal(l->off, off);
	}
}

/* CFA = @base + @off, RA at CFA - 8, rbp unchanged. */
static void assert_plain(const struct sframe_sec *s, uintptr_t pc, int base,
			 int off)
{
	struct sframe_rule r;

	rule_at(s, pc, &r);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, base, off);
	assert_loc(&r.ra, SFRAME_LOC_MEM, SFRAME_BASE_CFA, -8);
	assert_loc(&r.fp, SFRAME_LOC_SAME, 0, 0);
}

static uintptr_t sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	assert_non_null(p);
	return (uintptr_t)p;
}

/*
 * synth_asm.so, loaded: synthesised with its load bias at the buffer's
 * own address, its functions are found at their run-time addresses with
 * exactly the rules their CFI says.
 */
static void test_rules(void **state)
{
	struct codectl_synth_stats st;
	struct sframe_rule r;
	struct sframe_sec s;
	uintptr_t f;
	Dl_info dli;
	size_t size;
	void *sec, *h;
	int fd;

	(void)state;
	h = dlopen(ASM_SO, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	f = sym(h, "f_frame");
	assert_true(dladdr((void *)f, &dli));
	fd = open_or_fail(ASM_SO);
	assert_int_equal(codectl_sframe_synth(fd, (uintptr_t)dli.dli_fbase, 0,
					      CODECTL_SYNTH_AT_BUFFER, &sec,
					      &size, &st), 0);
	close(fd);
	assert_int_equal(sframe_init(&s, (uintptr_t)sec, size, sec, NULL, NULL),
			 SFRAME_OK);
	assert_int_equal(sframe_validate(&s), SFRAME_OK);
	assert_int_equal(s.hdr.version, SFRAME_VERSION_3);

	/* f_frame */
	assert_plain(&s, f, SFRAME_BASE_SP, 8);
	rule_at(&s, f + 1, &r);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, SFRAME_BASE_SP, 16);
	assert_loc(&r.fp, SFRAME_LOC_MEM, SFRAME_BASE_CFA, -16);
	rule_at(&s, f + 4, &r);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, SFRAME_BASE_FP, 16);
	assert_loc(&r.ra, SFRAME_LOC_MEM, SFRAME_BASE_CFA, -8);
	assert_loc(&r.fp, SFRAME_LOC_MEM, SFRAME_BASE_CFA, -16);
	rule_at(&s, f + 6, &r);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, SFRAME_BASE_SP, 8);
	assert_int_equal(r.func_start, f);
	assert_int_equal(r.func_size, 7);
	assert_int_equal(r.flags, 0);

	/* f_outermost */
	f = sym(h, "f_outermost");
	rule_at(&s, f + 2, &r);
	assert_true(r.flags & SFRAME_RULE_OUTERMOST);

	/* f_expr: the expression rows have no rule, a new FDE after them */
	f = sym(h, "f_expr");
	assert_plain(&s, f, SFRAME_BASE_SP, 8);
	assert_int_equal(sframe_find(&s, f + 1, &r), SFRAME_E_NOT_FOUND);
	assert_int_equal(sframe_find(&s, f + 2, &r), SFRAME_E_NOT_FOUND);
	assert_plain(&s, f + 3, SFRAME_BASE_SP, 8);
	rule_at(&s, f + 3, &r);
	assert_int_equal(r.func_start, f + 3);
	assert_int_equal(r.func_size, 1);

	/* f_ra_reg: FLEX, RA is rax's value at pc 1 */
	f = sym(h, "f_ra_reg");
	rule_at(&s, f + 1, &r);
	assert_true(r.flags & SFRAME_RULE_FLEX);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, 7, 8);	/* rsp in FLEX */
	assert_loc(&r.ra, SFRAME_LOC_VAL, 0, 0);
	rule_at(&s, f + 2, &r);
	assert_loc(&r.ra, SFRAME_LOC_MEM, SFRAME_BASE_CFA, -8);

	/* f_signal */
	f = sym(h, "f_signal");
	rule_at(&s, f, &r);
	assert_true(r.flags & SFRAME_RULE_SIGNAL);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, SFRAME_BASE_SP, 8);

	/* f_nocfi: nothing */
	f = sym(h, "f_nocfi");
	assert_int_equal(sframe_find(&s, f, &r), SFRAME_E_NOT_FOUND);

	/* the counts: 5 FDEs in the CFI, 2 rows of f_expr left out */
	assert_int_equal(st.cfi_fdes, 5);
	assert_int_equal(st.fdes_full, 4);
	assert_int_equal(st.fdes_partial, 1);
	assert_int_equal(st.rows_cfa, 1);
	assert_int_equal(st.rows_ra + st.rows_fp, 0);
	assert_int_equal(st.outermost_rows, 1);
	assert_int_equal(st.sframe_fdes, 6);	/* f_expr is split in two */
	assert_int_equal(st.flex_fdes, 1);
	/* f_frame 7, f_outermost 3, f_expr 2 of 4, f_ra_reg 3, f_signal 2 */
	assert_int_equal(st.cfi_bytes, 19);
	assert_int_equal(st.covered_bytes, 17);
	assert_int_equal(st.rows, 12);	/* 4 + 1 + 3 + 3 + 1 */
	free(sec);
	dlclose(h);
}

/* Bias and section address only move the functions. */
static void test_addresses(void **state)
{
	const uint64_t bias = 0x7f1234560000ULL, at = 0x5500000000ULL;
	struct sframe_sec a, b;
	size_t na, nb;
	void *sa, *sb;
	uint32_t i;
	int fd = open_or_fail(LIBC);

	(void)state;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sa, &na, NULL), 0);
	assert_int_equal(codectl_sframe_synth(fd, bias, at, 0, &sb, &nb, NULL), 0);
	close(fd);
	assert_int_equal(na, nb);
	assert_int_equal(sframe_init(&a, 0, na, sa, NULL, NULL), SFRAME_OK);
	assert_int_equal(sframe_init(&b, at, nb, sb, NULL, NULL), SFRAME_OK);
	assert_int_equal(sframe_validate(&b), SFRAME_OK);
	assert_int_equal(a.hdr.num_fdes, b.hdr.num_fdes);
	for (i = 0; i < a.hdr.num_fdes; i++) {
		struct sframe_fde fa, fb;
		struct sframe_rule ra, rb;

		assert_int_equal(sframe_fde_at(&a, i, &fa), SFRAME_OK);
		assert_int_equal(sframe_fde_at(&b, i, &fb), SFRAME_OK);
		assert_int_equal(fb.func_start, fa.func_start + bias);
		assert_int_equal(fb.func_size, fa.func_size);
		assert_int_equal(sframe_find(&a, fa.func_start, &ra), SFRAME_OK);
		assert_int_equal(sframe_find(&b, fb.func_start, &rb), SFRAME_OK);
		assert_int_equal(ra.cfa.kind, rb.cfa.kind);
		assert_int_equal(ra.cfa.base, rb.cfa.base);
		assert_int_equal(ra.cfa.off, rb.cfa.off);
	}
	/* the FRE sub-sections are the same bytes */
	assert_memory_equal((char *)sa + a.fres, (char *)sb + b.fres,
			    na - a.fres);
	free(sa);
	free(sb);
}

/* The counts add up, on a real library. */
static void test_stats_libc(void **state)
{
	struct codectl_synth_stats st;
	struct sframe_sec s;
	size_t size;
	void *sec;
	int fd = open_or_fail(LIBC), saved;

	(void)state;
	errno = 12345;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sec, &size, &st), 0);
	saved = errno;
	close(fd);
	assert_int_equal(saved, 12345);	/* errno kept on success */
	assert_true(st.text_bytes > 0);
	assert_true(st.covered_bytes <= st.cfi_bytes);
	assert_true(st.cfi_bytes <= st.text_bytes);
	assert_true(st.fdes_full + st.fdes_partial <= st.cfi_fdes);
	assert_int_equal(st.rows, st.rows_kept + st.rows_cfa + st.rows_ra +
				  st.rows_fp);
	assert_true(st.sframe_fres <= st.rows_kept);
	assert_true(st.sframe_fdes >= st.fdes_full + st.fdes_partial);
	/* libc's CFI is nearly all plain rules: most of it is kept */
	assert_true(st.covered_bytes > st.cfi_bytes / 2);
	assert_int_equal(sframe_init(&s, 0, size, sec, NULL, NULL), SFRAME_OK);
	assert_int_equal(sframe_validate(&s), SFRAME_OK);
	assert_int_equal(s.hdr.num_fdes, st.sframe_fdes);
	assert_int_equal(s.hdr.num_fres, st.sframe_fres);
	free(sec);
}

/* The link-time address and size of @path's section @name, or 0. */
static uint64_t section(const char *path, const char *name, uint64_t *size)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh[64], *str;
	char names[4096];
	uint64_t addr = 0;
	int fd = open_or_fail(path), i;

	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_true(eh.e_shnum <= 64 && eh.e_shstrndx < eh.e_shnum);
	assert_int_equal(pread(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff),
			 eh.e_shnum * sizeof(*sh));
	str = &sh[eh.e_shstrndx];
	assert_true(str->sh_size < sizeof(names));
	assert_int_equal(pread(fd, names, str->sh_size, str->sh_offset),
			 str->sh_size);
	names[str->sh_size] = 0;
	for (i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_name < str->sh_size &&
		    !strcmp(names + sh[i].sh_name, name)) {
			addr = sh[i].sh_addr;
			*size = sh[i].sh_size;
		}
	close(fd);
	return addr;
}

/*
 * ld's CFI of a PLT's entries is an expression (the CFA is 8 bytes
 * further from each entry's push on): synthesised, as ld writes it in
 * .sframe, a PCMASK function of 16-byte blocks, rsp + 8 before the push
 * at offset 11 and rsp + 16 from it, in every entry.
 */
static void test_plt(void **state)
{
	struct codectl_synth_stats st;
	struct sframe_sec s;
	uint64_t plt, size, e;
	size_t secsize;
	void *sec;
	int fd = open_or_fail(PLT_SO);

	(void)state;
	plt = section(PLT_SO, ".plt", &size);
	assert_true(plt && size == 48);	/* PLT0 and two entries */
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sec, &secsize, &st), 0);
	close(fd);
	assert_int_equal(st.rows_cfa, 0);
	assert_int_equal(sframe_init(&s, 0, secsize, sec, NULL, NULL), SFRAME_OK);
	assert_int_equal(sframe_validate(&s), SFRAME_OK);
	assert_plain(&s, plt, SFRAME_BASE_SP, 16);	/* PLT0: pushed */
	for (e = plt + 16; e < plt + size; e += 16) {
		assert_plain(&s, e, SFRAME_BASE_SP, 8);		/* jmp *GOT */
		assert_plain(&s, e + 10, SFRAME_BASE_SP, 8);	/* push */
		assert_plain(&s, e + 11, SFRAME_BASE_SP, 16);	/* jmp PLT0 */
		assert_plain(&s, e + 15, SFRAME_BASE_SP, 16);
	}
	free(sec);
}

/* The rule at @pc: CFA = @base + @off, RA at CFA - 8, "fp" as given. */
static void assert_xrow(const struct sframe_sec *s, uintptr_t pc, int base,
			int off, int fp_kind, int fp_off)
{
	struct sframe_rule r;

	rule_at(s, pc, &r);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, base, off);
	assert_loc(&r.ra, SFRAME_LOC_MEM, SFRAME_BASE_CFA, -8);
	assert_loc(&r.fp, fp_kind, SFRAME_BASE_CFA, fp_off);
}

/*
 * The register table (CODECTL_SYNTH_REGS): synth_xreg.so's
 * f_xcfa keeps its CFA in rbx (DWARF 3) while it calls f_xsave, which
 * saves rbx.  The ordinary section has that CFA (a FLEX FDE) but cannot
 * say where f_xsave put rbx; the register table has the same rows with
 * the frame-pointer column describing rbx.  An object without such a CFA
 * (synth_asm.so) needs no table: ENODATA.
 */
static void test_regs(void **state)
{
	struct codectl_synth_stats st;
	struct sframe_sec s, x;
	struct sframe_rule r;
	uint64_t f, g;
	size_t size, xsize;
	void *sec, *xsec, *h;
	int fd = open_or_fail(XREG_SO), fd2 = open_or_fail(ASM_SO);
	Dl_info dli;

	(void)state;
	h = dlopen(XREG_SO, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_true(dladdr((void *)sym(h, "f_xcfa"), &dli));
	f = sym(h, "f_xcfa") - (uintptr_t)dli.dli_fbase;	/* link-time */
	g = sym(h, "f_xsave") - (uintptr_t)dli.dli_fbase;
	dlclose(h);
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &sec, &size, &st), 0);
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, CODECTL_SYNTH_REGS,
					      &xsec, &xsize, NULL), 0);
	assert_int_equal(sframe_init(&s, 0, size, sec, NULL, NULL), SFRAME_OK);
	assert_int_equal(sframe_init(&x, 0, xsize, xsec, NULL, NULL), SFRAME_OK);
	assert_int_equal(sframe_validate(&x), SFRAME_OK);

	/* The ordinary section: the CFA in rbx, rbp untouched. */
	rule_at(&s, f + 8, &r);
	assert_true(r.flags & SFRAME_RULE_FLEX);
	assert_loc(&r.cfa, SFRAME_LOC_VAL, 3, 16);
	assert_loc(&r.fp, SFRAME_LOC_SAME, 0, 0);
	rule_at(&s, g + 1, &r);
	assert_loc(&r.fp, SFRAME_LOC_SAME, 0, 0);	/* rbx's save: unsaid */

	/* The register table: rbx's rule in the frame-pointer column. */
	/* (a FLEX FDE: rsp is DWARF 7 there) */
	assert_xrow(&x, f, 7, 8, SFRAME_LOC_SAME, 0);
	assert_xrow(&x, f + 1, 7, 16, SFRAME_LOC_MEM, -16);
	assert_xrow(&x, f + 4, 3, 16, SFRAME_LOC_MEM, -16);
	assert_xrow(&x, f + 8, 3, 16, SFRAME_LOC_MEM, -16);
	assert_xrow(&x, f + 15, 3, 16, SFRAME_LOC_MEM, -16);
	assert_xrow(&x, f + 16, 7, 16, SFRAME_LOC_MEM, -16);
	assert_xrow(&x, f + 17, 7, 8, SFRAME_LOC_SAME, 0);
	assert_xrow(&x, g, SFRAME_BASE_SP, 8, SFRAME_LOC_SAME, 0);
	assert_xrow(&x, g + 1, SFRAME_BASE_SP, 16, SFRAME_LOC_MEM, -16);
	assert_xrow(&x, g + 3, SFRAME_BASE_SP, 16, SFRAME_LOC_MEM, -16);
	assert_xrow(&x, g + 4, SFRAME_BASE_SP, 8, SFRAME_LOC_SAME, 0);
	free(sec);
	free(xsec);

	/* Bias and section address as for the ordinary section. */
	assert_int_equal(codectl_sframe_synth(fd, 0x10000, 0x5000,
					      CODECTL_SYNTH_REGS, &xsec, &xsize,
					      NULL), 0);
	assert_int_equal(sframe_init(&x, 0x5000, xsize, xsec, NULL, NULL),
			 SFRAME_OK);
	assert_xrow(&x, 0x10000 + g + 1, SFRAME_BASE_SP, 16, SFRAME_LOC_MEM, -16);
	free(xsec);
	close(fd);

	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd2, 0, 0, CODECTL_SYNTH_REGS,
					      &xsec, &xsize, NULL), -1);
	assert_int_equal(errno, ENODATA);
	close(fd2);
}

struct job {
	int fd;
	void *sec;
	size_t size;
	int ret;
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	j->ret = codectl_sframe_synth(j->fd, 0, 0, 0, &j->sec, &j->size, NULL);
	return NULL;
}

/* Concurrent calls, on one descriptor, give what one call gives. */
static void test_threads(void **state)
{
	struct job jobs[4];
	pthread_t t[4];
	size_t size;
	void *ref;
	int fd = open_or_fail(LIBC), i;

	(void)state;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, 0, &ref, &size, NULL), 0);
	for (i = 0; i < 4; i++) {
		jobs[i].fd = fd;
		assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(jobs[i].ret, 0);
		assert_int_equal(jobs[i].size, size);
		assert_memory_equal(jobs[i].sec, ref, size);
		free(jobs[i].sec);
	}
	close(fd);
	free(ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_no_eh_frame_hdr),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_stats_libc),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_regs),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
