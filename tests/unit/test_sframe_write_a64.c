// SPDX-License-Identifier: GPL-2.0
/*
 * lib/sframe-write.c built for AArch64 (SFW_AARCH64, as libcodectl is on
 * arm64): the header says AArch64 with no fixed RA offset; the rows
 * synthesis gives there (the RA in x30 at entry and after the epilogue,
 * saved at a CFA offset in the body, x29 saved with it) are DEFAULT FREs
 * of 1, 2 and 3 data words, and x29 saved while the RA is in x30 takes a
 * FLEX FDE; each decodes with the project's decoder to what was written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sframe-write.h"

#define SEC_ADDR	0x10000000ULL

static struct sframe_loc loc(uint8_t kind, uint16_t base, int32_t off)
{
	struct sframe_loc l = { kind, base, off };

	return l;
}

#define SAME		loc(SFRAME_LOC_SAME, 0, 0)
#define SP(off)		loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, off)
#define AT_CFA(off)	loc(SFRAME_LOC_MEM, SFRAME_BASE_CFA, off)

static struct sframe_wrow row(uint32_t start, struct sframe_loc cfa,
			      struct sframe_loc ra, struct sframe_loc fp)
{
	struct sframe_wrow r;

	memset(&r, 0, sizeof(r));
	r.start = start;
	r.cfa = cfa;
	r.ra = ra;
	r.fp = fp;
	return r;
}

/* Write @f's rows, validate, and check each row decodes as written. */
static void write_check(const struct sframe_wfunc *f,
			const struct sframe_wrow *rows, int flex,
			uint16_t flex_sp)
{
	uint64_t size = sframe_write(f, 1, rows, SEC_ADDR, NULL, 0, NULL);
	struct sframe_sec s;
	uint8_t *buf;
	uint32_t i;

	assert_true(size > SFRAME_HEADER_SIZE);
	buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(sframe_write(f, 1, rows, SEC_ADDR, buf, size, NULL),
			 size);
	assert_int_equal(sframe_init(&s, SEC_ADDR, size, buf, NULL, NULL),
			 SFRAME_OK);
	assert_int_equal(sframe_validate(&s), SFRAME_OK);
	assert_int_equal(s.hdr.abi, SFRAME_ABI_AARCH64_LE);
	assert_int_equal(s.hdr.cfa_fixed_ra_offset, 0);
	for (i = 0; i < f->nrows; i++) {
		const struct sframe_wrow *r = &rows[f->row + i];
		struct sframe_rule got;

		assert_int_equal(sframe_find(&s, f->start + r->start, &got),
				 SFRAME_OK);
		assert_int_equal(!!(got.flags & SFRAME_RULE_FLEX), flex);
		assert_int_equal(got.cfa.kind, r->cfa.kind);
		assert_int_equal(got.cfa.base, flex ? flex_sp : r->cfa.base);
		assert_int_equal(got.cfa.off, r->cfa.off);
		assert_int_equal(got.ra.kind, r->ra.kind);
		if (r->ra.kind != SFRAME_LOC_SAME) {
			assert_int_equal(got.ra.base, r->ra.base);
			assert_int_equal(got.ra.off, r->ra.off);
		}
		assert_int_equal(got.fp.kind, r->fp.kind);
		if (r->fp.kind != SFRAME_LOC_SAME) {
			assert_int_equal(got.fp.base, r->fp.base);
			assert_int_equal(got.fp.off, r->fp.off);
		}
	}
	free(buf);
}

/*
 * stp x29, x30, [sp, #-32]!; body; ldp x29, x30, [sp], #32; ret: the RA
 * in x30, then both saved, then the RA in x30 again; and a frame that
 * saves x30 alone (str x30, [sp, #-16]!).
 */
static void test_default(void **state)
{
	struct sframe_wrow rows[] = {
		row(0, SP(0), SAME, SAME),
		row(4, SP(32), AT_CFA(-24), AT_CFA(-32)),
		row(40, SP(0), SAME, SAME),
		row(44, SP(16), AT_CFA(-16), SAME),
	};
	struct sframe_wfunc f = { 0x400000, 64, 0, 4, 0, 0 };

	(void)state;
	assert_true(sframe_wrow_ok(&rows[0]));
	write_check(&f, rows, 0, 0);
}

/* x29 saved, the RA still in x30: no DEFAULT FRE says that. */
static void test_flex(void **state)
{
	struct sframe_wrow rows[] = {
		row(0, SP(0), SAME, SAME),
		row(4, SP(16), SAME, AT_CFA(-16)),
	};
	struct sframe_wfunc f = { 0x400000, 16, 0, 2, 0, 0 };

	(void)state;
	assert_true(sframe_wrow_ok(&rows[1]));
	write_check(&f, rows, 1, SFW_DWARF_SP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_flex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
