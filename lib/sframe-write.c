// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A small SFrame v3 writer for AMD64 or AArch64, freestanding (see
 * sframe-write.h).
 *
 * Layout written (binutils' libsframe/doc/sframe-spec.texi): the
 * 28-byte header (SORTED | FDE_FUNC_START_PCREL, fixed RA offset -8 on
 * AMD64 and none on AArch64, no auxiliary header), one 16-byte FDE index entry per function (s64 start
 * relative to the entry itself, u32 size, u32 offset of its attribute
 * record in the FRE sub-section), then per function its 5-byte attribute
 * record (u16 FREs, info, info2, rep size) followed by its FREs.  All
 * fields little-endian, unaligned.
 */
#include "sframe-write.h"

#define SFW_ATTR_SIZE		5
#define SFW_FDE_SIZE		16
#define SFW_FDE_TYPE_FLEX	1
#define SFW_MAX_WORDS		6
#define SFW_MAX_FLEX_REG	31	/* so control words fit a signed byte */

static int is_sp(uint16_t base)
{
	return base == SFRAME_BASE_SP || base == SFW_DWARF_SP;
}

static int is_fp(uint16_t base)
{
	return base == SFRAME_BASE_FP || base == SFW_DWARF_FP;
}

/* Is the RA where the ABI has it when an FRE says nothing of it? */
static int ra_default(const struct sframe_loc *l)
{
	if (!SFW_FIXED_RA)
		return l->kind == SFRAME_LOC_SAME;
	return l->kind == SFRAME_LOC_MEM && l->base == SFRAME_BASE_CFA &&
	       l->off == SFW_FIXED_RA;
}

static int at_cfa(const struct sframe_loc *l)
{
	return l->kind == SFRAME_LOC_MEM && l->base == SFRAME_BASE_CFA;
}

/* Does the row fit the DEFAULT encoding? */
static int row_default(const struct sframe_wrow *r)
{
	if (r->outermost)
		return 1;
	if (r->cfa.kind != SFRAME_LOC_VAL ||
	    !(is_sp(r->cfa.base) || is_fp(r->cfa.base)))
		return 0;
	if (SFW_FIXED_RA)
		return ra_default(&r->ra) &&
		       (r->fp.kind == SFRAME_LOC_SAME || at_cfa(&r->fp));
	/* No fixed RA offset: the FP's word follows an RA word. */
	if (r->fp.kind == SFRAME_LOC_SAME)
		return ra_default(&r->ra) || at_cfa(&r->ra);
	return at_cfa(&r->ra) && at_cfa(&r->fp);
}

/*
 * The FLEX control word of a location: bit 0 register-based, bit 1
 * dereference, bits 3 and up the DWARF register.  0 (the "default"
 * marker) when it cannot be encoded.
 */
static int32_t flex_ctrl(const struct sframe_loc *l)
{
	uint32_t reg, c;

	if (l->kind != SFRAME_LOC_VAL && l->kind != SFRAME_LOC_MEM)
		return 0;
	c = l->kind == SFRAME_LOC_MEM ? 2 : 0;
	if (l->base == SFRAME_BASE_CFA)
		return (int32_t)c;	/* a CFA-based VAL is 0: refused */
	if (is_sp(l->base))
		reg = SFW_DWARF_SP;
	else if (is_fp(l->base))
		reg = SFW_DWARF_FP;
	else if (l->base <= SFW_MAX_FLEX_REG)
		reg = l->base;
	else
		return 0;
	return (int32_t)(reg << 3 | c | 1);
}

/* The FLEX data words of a row, or -1 if it has none. */
static int row_flex_words(const struct sframe_wrow *r, int32_t *w)
{
	int n = 0, fp_same = r->fp.kind == SFRAME_LOC_SAME;

	if (r->outermost)
		return 0;
	w[n] = flex_ctrl(&r->cfa);
	if (!(w[n] & 1))		/* the CFA needs a base register */
		return -1;
	w[n + 1] = r->cfa.off;
	n += 2;
	if (!ra_default(&r->ra)) {
		w[n] = flex_ctrl(&r->ra);
		if (!w[n])
			return -1;
		w[n + 1] = r->ra.off;
		n += 2;
	} else if (!fp_same) {
		w[n++] = 0;		/* padding: RA at its default */
	}
	if (!fp_same) {
		w[n] = flex_ctrl(&r->fp);
		if (!w[n])
			return -1;
		w[n + 1] = r->fp.off;
		n += 2;
	}
	return n;
}

/* The data words of a row in its FDE's encoding. */
static int row_words(const struct sframe_wrow *r, int flex, int32_t *w)
{
	int n = 0;

	if (flex)
		return row_flex_words(r, w);
	if (r->outermost)
		return 0;
	w[n++] = r->cfa.off;
	if (!SFW_FIXED_RA && r->ra.kind == SFRAME_LOC_MEM)
		w[n++] = r->ra.off;
	if (r->fp.kind == SFRAME_LOC_MEM)
		w[n++] = r->fp.off;
	return n;
}

int sframe_wrow_ok(const struct sframe_wrow *row)
{
	int32_t w[SFW_MAX_WORDS];

	return row_default(row) || row_flex_words(row, w) >= 0;
}

/* 0, 1, 2: words of 1, 2, 4 bytes hold every signed value of @w. */
static uint8_t word_code(const int32_t *w, int n)
{
	uint8_t code = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (w[i] < -32768 || w[i] > 32767)
			return 2;
		if (w[i] < -128 || w[i] > 127)
			code = 1;
	}
	return code;
}

static void put(uint8_t *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* FRE start type: 0, 1, 2 for starts of 1, 2, 4 bytes. */
static uint8_t fre_type(uint32_t func_size)
{
	if (func_size <= 0x100)
		return 0;
	return func_size <= 0x10000 ? 1 : 2;
}

static int func_ok(const struct sframe_wfunc *f, const struct sframe_wrow *rows)
{
	uint32_t i;

	if (!f->nrows || f->nrows > SFW_MAX_FRES || !f->size ||
	    f->start + f->size < f->start)
		return 0;
	for (i = 0; i < f->nrows; i++) {
		const struct sframe_wrow *r = &rows[f->row + i];

		if (r->start >= f->size || (i && r->start <= r[-1].start) ||
		    !sframe_wrow_ok(r))
			return 0;
	}
	return 1;
}

uint64_t sframe_write(const struct sframe_wfunc *funcs, uint32_t nfuncs,
		      const struct sframe_wrow *rows, uint64_t sec_addr,
		      uint8_t *buf, uint64_t bufsize, uint32_t *nfres)
{
	uint64_t fres = SFRAME_HEADER_SIZE + (uint64_t)nfuncs * SFW_FDE_SIZE;
	uint64_t off = 0;	/* in the FRE sub-section */
	uint32_t i, j, total = 0;
	uint8_t *p;

	if (!nfuncs)
		return 0;
	/* First pass: check, and size. */
	for (i = 0; i < nfuncs; i++) {
		const struct sframe_wfunc *f = &funcs[i];
		uint8_t st = fre_type(f->size);
		int flex = 0;

		if (!func_ok(f, rows) ||
		    (i && funcs[i - 1].start + funcs[i - 1].size > f->start))
			return 0;
		for (j = 0; j < f->nrows; j++)
			flex |= !row_default(&rows[f->row + j]);
		off += SFW_ATTR_SIZE;
		for (j = 0; j < f->nrows; j++) {
			int32_t w[SFW_MAX_WORDS];
			int n = row_words(&rows[f->row + j], flex, w);

			if (n < 0)
				return 0;
			off += (1u << st) + 1 + (n << word_code(w, n));
		}
		total += f->nrows;
		if (off > 0xffffffffULL)
			return 0;
	}
	if (nfres)
		*nfres = total;
	if (!buf || bufsize < fres + off)
		return fres + off;

	/* Second pass: write. */
	put(buf, SFRAME_MAGIC, 2);
	buf[2] = SFRAME_VERSION_3;
	buf[3] = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	buf[4] = SFW_ABI;
	buf[5] = 0;			/* FP: no fixed offset */
	buf[6] = (uint8_t)SFW_FIXED_RA;	/* AMD64: RA at CFA - 8 */
	buf[7] = 0;			/* no auxiliary header */
	put(buf + 8, nfuncs, 4);
	put(buf + 12, total, 4);
	put(buf + 16, off, 4);
	put(buf + 20, 0, 4);
	put(buf + 24, (uint64_t)nfuncs * SFW_FDE_SIZE, 4);

	p = buf + fres;
	for (i = 0; i < nfuncs; i++) {
		const struct sframe_wfunc *f = &funcs[i];
		uint64_t at = SFRAME_HEADER_SIZE + (uint64_t)i * SFW_FDE_SIZE;
		uint8_t st = fre_type(f->size);
		int flex = 0;

		for (j = 0; j < f->nrows; j++)
			flex |= !row_default(&rows[f->row + j]);
		put(buf + at, f->start - (sec_addr + at), 8);
		put(buf + at + 8, f->size, 4);
		put(buf + at + 12, (uint64_t)(p - (buf + fres)), 4);
		put(p, f->nrows, 2);
		p[2] = (uint8_t)(st | (f->rep ? 0x10 : 0) |
				 (f->signal ? 0x80 : 0));
		p[3] = flex ? SFW_FDE_TYPE_FLEX : 0;
		p[4] = f->rep;			/* rep size: 0 for PCINC */
		p += SFW_ATTR_SIZE;
		for (j = 0; j < f->nrows; j++) {
			const struct sframe_wrow *r = &rows[f->row + j];
			int32_t w[SFW_MAX_WORDS];
			int n = row_words(r, flex, w), k;
			uint8_t code = word_code(w, n);
			int sp = !r->outermost && is_sp(r->cfa.base);

			put(p, r->start, 1 << st);
			p += 1 << st;
			*p++ = (uint8_t)(sp | n << 1 | code << 5);
			for (k = 0; k < n; k++) {
				put(p, (uint64_t)(int64_t)w[k], 1 << code);
				p += 1 << code;
			}
		}
	}
	return fres + off;
}
