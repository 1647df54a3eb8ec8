// SPDX-License-Identifier: GPL-2.0
/*
 * lib/sframe-write.c, the SFrame v3 writer, on its own: every kind of row
 * it can encode (DEFAULT and FLEX, the padding word, 1-, 2- and 4-byte
 * data words and FRE starts, outermost and signal frames) decodes with the
 * project's decoder to exactly what was written; what it cannot encode,
 * or input that is not sorted or too large, is refused.
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

#define RA_DEFAULT	loc(SFRAME_LOC_MEM, SFRAME_BASE_CFA, -8)
#define SAME		loc(SFRAME_LOC_SAME, 0, 0)

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

/* Write, check sizes agree, validate; returns the section (free it). */
static uint8_t *write_ok(const struct sframe_wfunc *f, uint32_t nf,
			 const struct sframe_wrow *rows, struct sframe_sec *s)
{
	uint64_t size = sframe_write(f, nf, rows, SEC_ADDR, NULL, 0, NULL);
	uint32_t nfres = 0;
	uint8_t *buf;

	assert_true(size > SFRAME_HEADER_SIZE);
	buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(sframe_write(f, nf, rows, SEC_ADDR, buf, size, &nfres),
			 size);
	assert_int_equal(sframe_init(s, SEC_ADDR, size, buf, NULL, NULL),
			 SFRAME_OK);
	assert_int_equal(sframe_validate(s), SFRAME_OK);
	assert_int_equal(s->hdr.version, SFRAME_VERSION_3);
	assert_int_equal(s->hdr.num_fdes, nf);
	assert_int_equal(s->hdr.num_fres, nfres);
	return buf;
}

static void assert_loc(const struct sframe_loc *got,
		       const struct sframe_loc *want)
{
	assert_int_equal(got->kind, want->kind);
	if (want->kind == SFRAME_LOC_SAME)
		return;
	assert_int_equal(got->base, want->base);
	assert_int_equal(got->off, want->off);
}

/* FLEX rules name rsp and rbp by DWARF number. */
static struct sframe_loc flexed(struct sframe_loc l)
{
	if (l.base == SFRAME_BASE_SP)
		l.base = SFW_DWARF_RSP;
	else if (l.base == SFRAME_BASE_FP)
		l.base = SFW_DWARF_RBP;
	return l;
}

/* Every row of @f decodes, at its first and last pc, to what it says. */
static void check_rows(const struct sframe_sec *s, const struct sframe_wfunc *f,
		       const struct sframe_wrow *rows, int flex)
{
	uint32_t i;

	for (i = 0; i < f->nrows; i++) {
		const struct sframe_wrow *r = &rows[f->row + i];
		uint32_t end = i + 1 < f->nrows ? r[1].start : f->size;
		uint64_t pcs[2] = { f->start + r->start, f->start + end - 1 };
		struct sframe_loc cfa, ra, fp;
		struct sframe_rule got;
		int k;

		cfa = flex ? flexed(r->cfa) : r->cfa;
		ra = flex ? flexed(r->ra) : r->ra;
		fp = flex ? flexed(r->fp) : r->fp;
		for (k = 0; k < 2; k++) {
			assert_int_equal(sframe_find(s, pcs[k], &got), SFRAME_OK);
			assert_int_equal(got.func_start, f->start);
			assert_int_equal(got.func_size, f->size);
			assert_int_equal(!!(got.flags & SFRAME_RULE_FLEX), flex);
			assert_int_equal(!!(got.flags & SFRAME_RULE_SIGNAL),
					 f->signal);
			if (r->outermost) {
				assert_true(got.flags & SFRAME_RULE_OUTERMOST);
				continue;
			}
			assert_loc(&got.cfa, &cfa);
			assert_loc(&got.ra, &ra);
			assert_loc(&got.fp, &fp);
		}
	}
}

/* DEFAULT rows, data words of 1, 2 and 4 bytes, FRE starts of 1, 2, 4. */
static void test_default(void **state)
{
	static const uint32_t sizes[] = { 0x100, 0x101, 0x10000, 0x10001 };
	struct sframe_wrow rows[16];
	struct sframe_wfunc f[4];
	struct sframe_sec s;
	uint32_t i, n = 0;
	uint64_t at = 0x400000;
	uint8_t *buf;

	(void)state;
	for (i = 0; i < 4; i++) {
		uint32_t last = sizes[i] - 1;

		f[i].start = at;
		f[i].size = sizes[i];
		f[i].row = n;
		f[i].nrows = 4;
		f[i].signal = i == 3;
		f[i].rep = 0;
		rows[n++] = row(0, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 8),
				RA_DEFAULT, SAME);
		rows[n++] = row(1, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 1000),
				RA_DEFAULT,
				loc(SFRAME_LOC_MEM, SFRAME_BASE_CFA, -16));
		rows[n++] = row(last / 2, loc(SFRAME_LOC_VAL, SFRAME_BASE_FP,
					       100000), RA_DEFAULT,
				loc(SFRAME_LOC_MEM, SFRAME_BASE_CFA, -100000));
		rows[n] = row(last, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 8),
			      RA_DEFAULT, SAME);
		rows[n++].outermost = i == 2;
		at += sizes[i] + 16;
	}
	buf = write_ok(f, 4, rows, &s);
	for (i = 0; i < 4; i++)
		check_rows(&s, &f[i], rows, 0);
	free(buf);
}

/* FLEX: registers, dereferences, RA elsewhere, the padding word. */
static void test_flex(void **state)
{
	struct sframe_wrow rows[6];
	struct sframe_wfunc f = { 0x500000, 0x60, 0, 6, 1, 0 };
	struct sframe_sec s;
	uint8_t *buf;

	(void)state;
	rows[0] = row(0, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 8), RA_DEFAULT,
		      SAME);
	/* CFA in r10; RA default, rbp saved: the single padding word */
	rows[1] = row(4, loc(SFRAME_LOC_VAL, 10, 0), RA_DEFAULT,
		      loc(SFRAME_LOC_MEM, SFRAME_BASE_CFA, -16));
	/* CFA = *(rbp - 8), rbp = *(rbp) */
	rows[2] = row(8, loc(SFRAME_LOC_MEM, SFRAME_BASE_FP, -8), RA_DEFAULT,
		      loc(SFRAME_LOC_MEM, SFW_DWARF_RBP, 0));
	/* RA in rax, rbp in r9 */
	rows[3] = row(0x10, loc(SFRAME_LOC_VAL, 5, 0), loc(SFRAME_LOC_VAL, 0, 0),
		      loc(SFRAME_LOC_VAL, 9, 0));
	/* a signal frame's rules: all through rsp, large offsets */
	rows[4] = row(0x20, loc(SFRAME_LOC_MEM, SFRAME_BASE_SP, 160),
		      loc(SFRAME_LOC_MEM, SFW_DWARF_RSP, 168),
		      loc(SFRAME_LOC_MEM, SFW_DWARF_RSP, 40000));
	/* RA at another CFA offset */
	rows[5] = row(0x40, loc(SFRAME_LOC_VAL, 1, 0),
		      loc(SFRAME_LOC_MEM, SFRAME_BASE_CFA, 168), SAME);
	buf = write_ok(&f, 1, rows, &s);
	check_rows(&s, &f, rows, 1);
	free(buf);
}

/* Rows it cannot write, and input it refuses. */
static void test_refused(void **state)
{
	struct sframe_wrow r[3];
	struct sframe_wfunc f[2] = { { 0x1000, 0x10, 0, 1, 0, 0 },
				     { 0x1008, 0x10, 1, 1, 0, 0 } };

	(void)state;
	r[0] = row(0, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 8), RA_DEFAULT, SAME);
	/* the RA as a CFA-based value: FLEX has no such control word */
	r[1] = row(0, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 8),
		   loc(SFRAME_LOC_VAL, SFRAME_BASE_CFA, 8), SAME);
	assert_false(sframe_wrow_ok(&r[1]));
	/* a CFA based on the CFA */
	r[1] = row(0, loc(SFRAME_LOC_VAL, SFRAME_BASE_CFA, 8), RA_DEFAULT, SAME);
	assert_false(sframe_wrow_ok(&r[1]));
	/* register 32 and up */
	r[1] = row(0, loc(SFRAME_LOC_VAL, 32, 8), RA_DEFAULT, SAME);
	assert_false(sframe_wrow_ok(&r[1]));
	/* RA same or undefined (outermost is the way to say undefined) */
	r[1] = row(0, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 8), SAME, SAME);
	assert_false(sframe_wrow_ok(&r[1]));
	r[1] = row(0, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP, 8), RA_DEFAULT,
		   loc(SFRAME_LOC_UNDEF, 0, 0));
	assert_false(sframe_wrow_ok(&r[1]));

	/* overlapping functions */
	r[1] = r[0];
	assert_int_equal(sframe_write(f, 2, r, 0, NULL, 0, NULL), 0);
	f[1].start = 0x1010;
	assert_true(sframe_write(f, 2, r, 0, NULL, 0, NULL) > 0);
	/* rows not increasing, or past the function */
	f[0].nrows = 2;
	r[1] = r[0];
	assert_int_equal(sframe_write(f, 1, r, 0, NULL, 0, NULL), 0);
	r[1].start = 0x10;
	assert_int_equal(sframe_write(f, 1, r, 0, NULL, 0, NULL), 0);
	/* no function, no row, too many rows */
	assert_int_equal(sframe_write(f, 0, r, 0, NULL, 0, NULL), 0);
	f[0].nrows = 0;
	assert_int_equal(sframe_write(f, 1, r, 0, NULL, 0, NULL), 0);
	f[0].nrows = SFW_MAX_FRES + 1;
	f[0].size = 0x20000;
	assert_int_equal(sframe_write(f, 1, r, 0, NULL, 0, NULL), 0);
}

/* The most rows one FDE holds, and a buffer too small is not written. */
static void test_limits(void **state)
{
	struct sframe_wrow *rows = calloc(SFW_MAX_FRES, sizeof(*rows));
	struct sframe_wfunc f = { 0x800000, SFW_MAX_FRES * 2, 0, SFW_MAX_FRES, 0, 0 };
	struct sframe_sec s;
	uint8_t small[64];
	uint64_t size;
	uint8_t *buf;
	uint32_t i;

	(void)state;
	assert_non_null(rows);
	for (i = 0; i < SFW_MAX_FRES; i++)
		rows[i] = row(2 * i, loc(SFRAME_LOC_VAL, SFRAME_BASE_SP,
					 8 + 8 * (i & 1)), RA_DEFAULT, SAME);
	buf = write_ok(&f, 1, rows, &s);
	check_rows(&s, &f, rows, 0);
	free(buf);
	size = sframe_write(&f, 1, rows, 0, NULL, 0, NULL);
	memset(small, 0xaa, sizeof(small));
	assert_int_equal(sframe_write(&f, 1, rows, 0, small, sizeof(small),
				      NULL), size);
	for (i = 0; i < sizeof(small); i++)
		assert_int_equal(small[i], 0xaa);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_flex),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
