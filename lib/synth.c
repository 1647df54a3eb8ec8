// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SFrame synthesised from an object's .eh_frame (codectl_sframe_synth()).
 *
 * The CFI is read by elfutils' libdw, not by a parser of ours: the FDEs
 * are enumerated from the .eh_frame_hdr search table (PT_GNU_EH_FRAME),
 * and each FDE's rows are walked with dwarf_cfi_addrframe(), the row
 * holding a pc, whose dwarf_frame_info() range [start, end) gives the
 * next row's first pc.  Each row becomes an SFrame row when SFrame can
 * say what the CFI says about the CFA, the return address (x86-64: DWARF
 * 16; arm64: x30, DWARF 30) and the frame pointer (rbp, DWARF 6; x29,
 * DWARF 29); rows it cannot (DWARF expressions other than *(reg +
 * off), RA or rbp rules without an equivalent) end the SFrame function
 * there, so those pcs have no FDE and unwinders fall back.  One
 * expression SFrame says otherwise: ld's for x86-64 PLT entries (the CFA
 * 8 bytes further once the entry has pushed its index) becomes a PCMASK
 * function, as ld writes it in .sframe (plt_rows()).  And one CFA
 * SFrame would take as the caller's stack pointer wrongly, below the
 * return address's slot (AArch64 ld.so's lazy binding), is raised above
 * it (raise_cfa()).  With CODECTL_SYNTH_REGS the frame-pointer column
 * describes the register SFrame has no column for (x86-64: rbx, in which
 * glibc's lazy-binding trampoline keeps its CFA): the register table.
 * The section is written by sframe-write.c and checked with the project's decoder
 * (sframe_validate()) before it is returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "internal.h"
#include "sframe-write.h"

#define EH_PE_OMIT	0xff
#define EH_PE_UDATA4	0x03
#define EH_PE_SDATA4	0x0b
#define EH_PE_PCREL	0x10
#define EH_PE_DATAREL	0x30

/* The functions and rows of one section being built. */
struct synth_tab {
	struct sframe_wfunc *funcs;
	uint32_t nfuncs, funcs_cap;
	struct sframe_wrow *rows;
	uint32_t nrows, rows_cap;
	int open;		/* funcs[nfuncs - 1] takes more rows */
};

struct synth {
	struct synth_tab tab;	/* the section */
	struct synth_tab regs;	/* the register table, with @want_regs */
	int want_regs;
	uint32_t xcfa_rows;	/* rows with the CFA in SFW_DWARF_XREG */
	uint64_t bias;
	uint64_t lo, hi;	/* link-time range of the FDEs taken */
	struct codectl_synth_stats *st;
};

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static int elf_ok;

static void elf_init(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

static int grow(void **p, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 256;
	void *q;

	if (n < *cap)
		return 0;
	if (c < *cap) {
		errno = ENOMEM;
		return -1;
	}
	q = realloc(*p, (size_t)c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/*
 * A DWARF operation naming a register and an offset: DW_OP_bregx (what
 * libdw gives for a CFA of register + offset) or DW_OP_breg0-31.
 */
static int breg(const Dwarf_Op *op, uint16_t *reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		if (op->number >= SFRAME_BASE_SP)	/* not a register */
			return 0;
		*reg = (uint16_t)op->number;
		*off = (int64_t)op->number2;
		return 1;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = (uint16_t)(op->atom - DW_OP_breg0);
		*off = (int64_t)op->number;
		return 1;
	}
	return 0;
}

static uint16_t sp_fp_base(uint16_t reg)
{
	if (reg == SFW_DWARF_SP)
		return SFRAME_BASE_SP;
	if (reg == SFW_DWARF_FP)
		return SFRAME_BASE_FP;
	return reg;
}

static int set_loc(struct sframe_loc *l, uint8_t kind, uint16_t base,
		   int64_t off)
{
	if (off != (int32_t)off)
		return 0;
	l->kind = kind;
	l->base = base;
	l->off = (int32_t)off;
	return 1;
}

/* The CFA expression: reg + off, or *(reg + off). */
static int cfa_loc(const Dwarf_Op *ops, size_t n, struct sframe_loc *l)
{
	uint16_t reg;
	int64_t off;

	if (!n || !breg(&ops[0], &reg, &off))
		return 0;
	if (n == 1)
		return set_loc(l, SFRAME_LOC_VAL, sp_fp_base(reg), off);
	if (n == 2 && ops[1].atom == DW_OP_deref)
		return set_loc(l, SFRAME_LOC_MEM, sp_fp_base(reg), off);
	return 0;
}

/*
 * A register's rule, as dwarf_frame_register() gives it: a location
 * (saved at CFA + off or at reg + off) or, ending in DW_OP_stack_value, a
 * value (reg + off).  Same value and undefined are told apart by the
 * caller.
 */
static int reg_loc(const Dwarf_Op *ops, size_t n, struct sframe_loc *l)
{
	uint8_t kind = SFRAME_LOC_MEM;
	uint16_t base;
	int64_t off = 0;

	/* In a register (libdw's "register" rule): its value. */
	if (n == 1 && (ops[0].atom == DW_OP_regx ||
		       (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
		uint64_t reg = ops[0].atom == DW_OP_regx ? ops[0].number :
			       (uint64_t)(ops[0].atom - DW_OP_reg0);

		return reg < SFRAME_BASE_SP &&
		       set_loc(l, SFRAME_LOC_VAL, (uint16_t)reg, 0);
	}
	if (n && ops[n - 1].atom == DW_OP_stack_value) {
		kind = SFRAME_LOC_VAL;
		n--;
	}
	/*
	 * DW_CFA_expression rules start with the CFA libdw pushes (as DWARF
	 * says); an expression that then pushes reg + off leaves the CFA
	 * unused below it.
	 */
	if (n >= 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    breg(&ops[1], &base, &off)) {
		ops++;
		n--;
	}
	if (!n)
		return 0;
	if (ops[0].atom == DW_OP_call_frame_cfa)
		base = SFRAME_BASE_CFA;
	else if (!breg(&ops[0], &base, &off))
		return 0;
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
		off += (int64_t)ops[1].number;	/* negative ones wrap */
	else if (n != 1)
		return 0;
	return set_loc(l, kind, base, off);
}

enum { ROW_OK, ROW_CFA, ROW_RA, ROW_FP, ROW_PLT };

/*
 * A CFA below the return address's slot (AArch64 glibc's
 * _dl_runtime_resolve and _dl_runtime_profile, entered from PLT0 after
 * its push of {x16, x30}: their CFI takes the CFA to be the stack
 * pointer after that push, x30 at CFA + 8).  Unwinders take the caller's
 * stack pointer to be the CFA, so the caller would be found 16 bytes low,
 * its return address read from PLT0's x30: the caller twice, then a cut
 * walk (the startup check's arm64 samples in lazy binding).  The caller's
 * stack pointer is just above its return address's slot: the CFA moves
 * there, and what is addressed from it moves with it.
 */
static void raise_cfa(struct sframe_wrow *r)
{
	int32_t d;

	if (SFW_FIXED_RA || r->outermost || r->cfa.kind != SFRAME_LOC_VAL ||
	    r->ra.kind != SFRAME_LOC_MEM || r->ra.base != SFRAME_BASE_CFA ||
	    r->ra.off < 0 || r->ra.off > 64)
		return;
	d = r->ra.off + 8;
	r->cfa.off += d;
	r->ra.off -= d;
	if ((r->fp.kind == SFRAME_LOC_MEM || r->fp.kind == SFRAME_LOC_VAL) &&
	    r->fp.base == SFRAME_BASE_CFA)
		r->fp.off -= d;
}

/* A row whose CFA is based on the register a register table describes. */
static int is_xcfa(const struct sframe_wrow *r)
{
	return SFW_DWARF_XREG >= 0 && !r->outermost &&
	       r->cfa.base == (uint16_t)SFW_DWARF_XREG;
}

/*
 * The SFrame row of one CFI row, or why there is none; its frame-pointer
 * column describes DWARF register @fp_reg (the frame pointer, or in a
 * register table the register SFrame has no column for).
 */
static int row_of(Dwarf_Frame *fr, int ra_reg, int fp_reg,
		  struct sframe_wrow *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	memset(r, 0, sizeof(*r));
	if (dwarf_frame_register(fr, ra_reg, mem, &ops, &n))
		return ROW_RA;
	if (!n && ops) {		/* undefined: the outermost frame */
		r->outermost = 1;
		return ROW_OK;
	}
	/*
	 * Same value: still in the link register (AArch64, where SFrame
	 * says so with no RA word); x86-64's return address is never there.
	 */
	if (!n && !SFW_FIXED_RA)
		r->ra.kind = SFRAME_LOC_SAME;
	else if (!n || !reg_loc(ops, n, &r->ra))
		return ROW_RA;
	if (dwarf_frame_cfa(fr, &ops, &n) || !cfa_loc(ops, n, &r->cfa))
		return ROW_CFA;
	if (dwarf_frame_register(fr, fp_reg, mem, &ops, &n))
		return ROW_FP;
	/*
	 * Same value; or, for the register table's register (callee-saved
	 * in the psABI), undefined: libdw's x86-64 ABI defaults give DWARF
	 * register 0 the same-value rule meant for rbx ("%rbx"), so rbx is
	 * undefined wherever the CFI does not say it was saved.
	 */
	if (!n && (!ops || fp_reg != SFW_DWARF_FP))
		r->fp.kind = SFRAME_LOC_SAME;
	else if (!n || !reg_loc(ops, n, &r->fp))
		return ROW_FP;
	raise_cfa(r);
	if (!sframe_wrow_ok(r))
		return ROW_RA;	/* a location SFrame cannot encode */
	return ROW_OK;
}

static int same_loc(const struct sframe_loc *a, const struct sframe_loc *b)
{
	return a->kind == b->kind && a->base == b->base && a->off == b->off;
}

static int same_row(const struct sframe_wrow *a, const struct sframe_wrow *b)
{
	if (a->outermost || b->outermost)
		return a->outermost == b->outermost;
	return same_loc(&a->cfa, &b->cfa) && same_loc(&a->ra, &b->ra) &&
	       same_loc(&a->fp, &b->fp);
}

/*
 * ld's CFA expression for the entries of an x86-64 PLT (elf_x86_64
 * eh_frame_plt: DW_OP_breg7 (rsp) A; DW_OP_breg16 (rip) 0; DW_OP_lit15;
 * DW_OP_and; DW_OP_litK; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus):
 * rsp + A in each 16-byte entry until offset K (its push), rsp + A + 8
 * from there.  The two rows of that PCMASK function in @r, or 0.
 */
static int plt_rows(Dwarf_Frame *fr, struct sframe_wrow r[2])
{
	static const uint8_t tail[] = {
		DW_OP_lit15, DW_OP_and, 0, DW_OP_ge, DW_OP_lit3, DW_OP_shl,
		DW_OP_plus
	};
	Dwarf_Op *ops;
	size_t n, i;
	int k;

	if (!SFW_FIXED_RA || dwarf_frame_cfa(fr, &ops, &n) || n != 9 ||
	    ops[0].atom != DW_OP_breg0 + SFW_DWARF_SP ||
	    ops[1].atom != DW_OP_breg0 + SFW_DWARF_RA || ops[1].number ||
	    (int64_t)ops[0].number < 8 || (int64_t)ops[0].number > 64)
		return 0;
	for (i = 0; i < sizeof(tail); i++)
		if (i != 2 && ops[2 + i].atom != tail[i])
			return 0;
	k = ops[4].atom - DW_OP_lit0;
	if (k < 1 || k > 15)
		return 0;
	memset(r, 0, 2 * sizeof(*r));
	for (i = 0; i < 2; i++) {
		r[i].start = i ? (uint32_t)k : 0;
		r[i].cfa.kind = SFRAME_LOC_VAL;
		r[i].cfa.base = SFRAME_BASE_SP;
		r[i].cfa.off = (int32_t)ops[0].number + 8 * (int32_t)i;
		r[i].ra.kind = SFRAME_LOC_MEM;
		r[i].ra.base = SFRAME_BASE_CFA;
		r[i].ra.off = SFW_FIXED_RA;
		r[i].fp.kind = SFRAME_LOC_SAME;
		if (!sframe_wrow_ok(&r[i]))
			return 0;
	}
	return 1;
}

/* A PCMASK function of 16-byte blocks for [start, end), rows @r. */
static int add_plt(const struct synth *s, struct synth_tab *t,
		   const struct sframe_wrow r[2], uint64_t start, uint64_t end)
{
	struct sframe_wfunc *f;

	t->open = 0;
	if (end - start > UINT32_MAX || end - start < 16)
		return 0;
	if (grow((void **)&t->funcs, &t->funcs_cap, t->nfuncs,
		 sizeof(*t->funcs)) ||
	    grow((void **)&t->rows, &t->rows_cap, t->nrows + 1,
		 sizeof(*t->rows)))
		return -1;
	f = &t->funcs[t->nfuncs++];
	memset(f, 0, sizeof(*f));
	f->start = s->bias + start;
	f->size = (uint32_t)(end - start);
	f->row = t->nrows;
	f->nrows = 2;
	f->rep = 16;
	t->rows[t->nrows++] = r[0];
	t->rows[t->nrows++] = r[1];
	return 1;
}

/* Add the row for [start, end) of one FDE. */
static int add_row(const struct synth *s, struct synth_tab *t,
		   const struct sframe_wrow *r, uint64_t start, uint64_t end,
		   int signal)
{
	struct sframe_wfunc *f = t->open ? &t->funcs[t->nfuncs - 1] : NULL;
	uint64_t fstart;

	if (f && f->start + f->size != s->bias + start)
		f = NULL;
	if (f && same_row(&t->rows[t->nrows - 1], r) &&
	    end - start <= UINT32_MAX - f->size) {
		f->size += (uint32_t)(end - start);
		return 0;
	}
	/* A new FDE: none open, a full one, or one that would grow too big. */
	if (f && (f->nrows == SFW_MAX_FRES ||
		  end - start > UINT32_MAX - f->size || f->signal != signal))
		f = NULL;
	if (!f) {
		if (end - start > UINT32_MAX)
			return 0;	/* not a function: leave it out */
		if (grow((void **)&t->funcs, &t->funcs_cap, t->nfuncs,
			 sizeof(*t->funcs)))
			return -1;
		f = &t->funcs[t->nfuncs++];
		f->start = s->bias + start;
		f->size = 0;
		f->row = t->nrows;
		f->nrows = 0;
		f->signal = (uint8_t)signal;
		f->rep = 0;
		t->open = 1;
	}
	if (grow((void **)&t->rows, &t->rows_cap, t->nrows, sizeof(*t->rows)))
		return -1;
	fstart = f->start - s->bias;
	t->rows[t->nrows] = *r;
	t->rows[t->nrows].start = (uint32_t)(start - fstart);
	t->nrows++;
	f->nrows++;
	f->size += (uint32_t)(end - start);
	return 0;
}

/*
 * The register table's row for [start, end): the CFI row's with its
 * frame-pointer column describing SFW_DWARF_XREG (a PLT's rows are added
 * with the section's: the register is untouched there).
 */
static int add_regs_row(struct synth *s, Dwarf_Frame *fr, int ra,
			uint64_t start, uint64_t end, int signal)
{
	struct sframe_wrow x;

	if (row_of(fr, ra, SFW_DWARF_XREG, &x) != ROW_OK) {
		s->regs.open = 0;
		return 0;
	}
	return add_row(s, &s->regs, &x, start, end, signal);
}

/*
 * Walk the rows of the FDE starting at @start, up to @limit (the next
 * FDE's start).
 */
static int walk_fde(struct synth *s, Dwarf_CFI *cfi, uint64_t start,
		    uint64_t limit)
{
	struct codectl_synth_stats *st = s->st;
	uint64_t pc = start, kept = 0;
	int ret = 0;

	s->tab.open = 0;
	s->regs.open = 0;
	while (pc < limit) {
		Dwarf_Frame *fr;
		Dwarf_Addr lo, hi;
		struct sframe_wrow r, plt[2];
		bool signal = false;
		int ra, why;

		if (dwarf_cfi_addrframe(cfi, pc, &fr))
			break;
		ra = dwarf_frame_info(fr, &lo, &hi, &signal);
		if (ra < 0 || hi <= pc || lo > pc) {
			free(fr);
			break;
		}
		if (hi > limit)
			hi = limit;
		why = row_of(fr, ra, SFW_DWARF_FP, &r);
		if (why == ROW_CFA && plt_rows(fr, plt)) {
			int added = add_plt(s, &s->tab, plt, pc, hi);

			if (added > 0 && s->want_regs)
				added = add_plt(s, &s->regs, plt, pc, hi);
			if (added < 0) {
				free(fr);
				ret = -1;
				break;
			}
			if (added)
				why = ROW_PLT;
		} else if (s->want_regs &&
			   add_regs_row(s, fr, ra, pc, hi, signal)) {
			free(fr);
			ret = -1;
			break;
		}
		free(fr);
		st->rows++;
		st->cfi_bytes += hi - pc;
		switch (why) {
		case ROW_OK:
			s->xcfa_rows += is_xcfa(&r);
			if (add_row(s, &s->tab, &r, pc, hi, signal)) {
				ret = -1;
				break;
			}
			st->rows_kept++;
			st->outermost_rows += r.outermost;
			kept += hi - pc;
			break;
		case ROW_PLT:
			st->rows_kept++;	/* a PLT's entries */
			kept += hi - pc;
			break;
		case ROW_CFA:
			st->rows_cfa++;
			s->tab.open = 0;
			break;
		case ROW_RA:
			st->rows_ra++;
			s->tab.open = 0;
			break;
		default:
			st->rows_fp++;
			s->tab.open = 0;
			break;
		}
		if (ret)
			break;
		pc = hi;
	}
	st->cfi_fdes++;
	if (pc > start) {
		st->covered_bytes += kept;
		if (kept == pc - start)
			st->fdes_full++;
		else if (kept)
			st->fdes_partial++;
	}
	return ret;
}

/* A 4-byte little-endian field. */
static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * The FDE starts of the .eh_frame_hdr search table at @hdr (@size bytes,
 * at @vaddr), as link-time addresses, sorted.  Only the encodings ld
 * writes (table: datarel sdata4; count: udata4) are read.
 */
static int fde_starts(const unsigned char *hdr, uint64_t size, uint64_t vaddr,
		      uint64_t **out, uint32_t *n)
{
	const unsigned char *t;
	uint32_t count, i;
	uint64_t *v;

	if (size < 12 || hdr[0] != 1 || hdr[2] != EH_PE_UDATA4 ||
	    hdr[3] != (EH_PE_DATAREL | EH_PE_SDATA4) ||
	    (hdr[1] & 0x0f) != EH_PE_SDATA4) {
		errno = ENOENT;
		return -1;
	}
	count = le32(hdr + 8);
	if (!count || count > (size - 12) / 8) {
		errno = ENOENT;
		return -1;
	}
	v = malloc((size_t)count * sizeof(*v));
	if (!v)
		return -1;
	t = hdr + 12;
	for (i = 0; i < count; i++) {
		v[i] = vaddr + (int64_t)(int32_t)le32(t + 8 * i);
		if (i && v[i] < v[i - 1]) {
			free(v);
			errno = ENOENT;
			return -1;
		}
	}
	*out = v;
	*n = count;
	return 0;
}

/* Bytes of executable sections (or, without sections, of PF_X segments). */
static uint64_t text_bytes(Elf *elf, size_t phnum)
{
	uint64_t sum = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    (sh.sh_flags & SHF_ALLOC) && sh.sh_type == SHT_PROGBITS)
			sum += sh.sh_size;
	if (sum)
		return sum;
	for (i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X))
			sum += ph.p_memsz;
	return sum;
}

/*
 * The section from the rows collected in @t, checked by the decoder;
 * @st (the section's, not the register table's) gets its counts.
 */
static int emit(const struct synth_tab *t, uint64_t sec_addr,
		unsigned int flags, void **sec, size_t *size,
		struct codectl_synth_stats *st)
{
	struct sframe_sec dec;
	uint64_t need;
	uint8_t *buf;
	uint32_t nfres = 0, i;

	if (!t->nfuncs) {
		errno = ENODATA;
		return -1;
	}
	need = sframe_write(t->funcs, t->nfuncs, t->rows, 0, NULL, 0, &nfres);
	if (!need || need > SIZE_MAX) {
		errno = EOVERFLOW;
		return -1;
	}
	buf = malloc(need);
	if (!buf)
		return -1;
	if (flags & CODECTL_SYNTH_AT_BUFFER)
		sec_addr = (uintptr_t)buf;
	if (sframe_write(t->funcs, t->nfuncs, t->rows, sec_addr, buf, need,
			 NULL) != need ||
	    sframe_init(&dec, sec_addr, need, buf, NULL, NULL) ||
	    sframe_validate(&dec)) {
		free(buf);
		errno = EPROTO;
		return -1;
	}
	if (st) {
		st->sframe_fdes = t->nfuncs;
		st->sframe_fres = nfres;
		for (i = 0; i < t->nfuncs; i++) {
			struct sframe_fde fde;

			if (!sframe_fde_at(&dec, i, &fde) && fde.flex)
				st->flex_fdes++;
		}
	}
	*sec = buf;
	*size = (size_t)need;
	return 0;
}

/*
 * Where a synthesis puts what it makes: the section (@sec, @size) and/or
 * the register table (@regs, @regs_size: NULL and 0 when the object
 * needs none; with no section asked for, ENODATA then).
 */
struct synth_out {
	void **sec;
	size_t *size;
	void **regs;
	size_t *regs_size;
};

/* Both tables from the rows collected. */
static int emit_all(struct synth *s, uint64_t sec_addr, unsigned int flags,
		    const struct synth_out *o)
{
	int saved;

	if (!o->sec) {
		if (!s->xcfa_rows) {
			errno = ENODATA;	/* no CFA there: none needed */
			return -1;
		}
		return emit(&s->regs, sec_addr, flags, o->regs, o->regs_size,
			    NULL);
	}
	if (emit(&s->tab, sec_addr, flags, o->sec, o->size, s->st))
		return -1;
	if (!o->regs)
		return 0;
	*o->regs = NULL;
	*o->regs_size = 0;
	if (!s->xcfa_rows ||
	    !emit(&s->regs, sec_addr, flags, o->regs, o->regs_size, NULL))
		return 0;
	saved = errno;
	free(*o->sec);
	*o->sec = NULL;
	errno = saved;
	return -1;
}

static int synth_elf(Elf *elf, struct synth *s, uint64_t sec_addr,
		     unsigned int flags, const struct synth_out *o)
{
	const unsigned char *raw;
	uint64_t *starts = NULL;
	uint32_t nstarts = 0, i;
	Dwarf_CFI *cfi;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t phnum, rawsize;
	int found = 0, ret = -1;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != CODECTL_ELF_MACHINE ||
	    elf_getphdrnum(elf, &phnum)) {
		errno = ENOEXEC;
		return -1;
	}
	s->st->text_bytes = text_bytes(elf, phnum);
	raw = (const unsigned char *)elf_rawfile(elf, &rawsize);
	for (i = 0; raw && i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) ||
		    ph.p_type != PT_GNU_EH_FRAME)
			continue;
		if (ph.p_offset > rawsize || ph.p_filesz > rawsize - ph.p_offset)
			break;
		if (fde_starts(raw + ph.p_offset, ph.p_filesz, ph.p_vaddr,
			       &starts, &nstarts))
			return -1;
		found = 1;
		break;
	}
	if (!found) {
		errno = ENOENT;
		return -1;
	}
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi) {
		free(starts);
		errno = ENOENT;
		return -1;
	}
	for (i = 0; i < nstarts; i++) {
		uint64_t limit = i + 1 < nstarts ? starts[i + 1] : UINT64_MAX;

		if (limit == starts[i])
			continue;	/* a duplicate entry */
		if (starts[i] < s->lo || starts[i] >= s->hi)
			continue;
		if (limit > s->hi)
			limit = s->hi;
		if (walk_fde(s, cfi, starts[i], limit))
			goto out;
	}
	ret = emit_all(s, sec_addr, flags, o);
out:
	dwarf_cfi_end(cfi);
	free(starts);
	return ret;
}

/* Synthesise from the file at @fd, or else from the image at @mem. */
static int synth_any(int fd, const void *mem, size_t memsize, uint64_t bias,
		     uint64_t lo, uint64_t hi, uint64_t sec_addr,
		     unsigned int flags, const struct synth_out *o,
		     struct codectl_synth_stats *stats)
{
	struct codectl_synth_stats local;
	struct synth_out sec_only;
	struct synth s = { 0 };
	int ret, saved = errno;
	Elf *elf;

	if (fd < 0 && !mem) {
		errno = EINVAL;
		return -1;
	}
	/* No register table where there is no such register: none made. */
	if (o->regs && SFW_DWARF_XREG < 0) {
		if (!o->sec) {
			errno = ENODATA;
			return -1;
		}
		*o->regs = NULL;
		*o->regs_size = 0;
		sec_only = (struct synth_out){ o->sec, o->size, NULL, NULL };
		o = &sec_only;
	}
	s.st = stats ? stats : &local;
	memset(s.st, 0, sizeof(*s.st));
	s.want_regs = !!o->regs;
	s.bias = bias;
	s.lo = lo;
	s.hi = hi;
	pthread_once(&elf_once, elf_init);
	if (!elf_ok) {
		errno = ENOTSUP;
		return -1;
	}
	/* libelf only reads an image opened with elf_memory(). */
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) :
	      elf_memory((char *)(uintptr_t)mem, memsize);
	if (!elf) {
		errno = ENOEXEC;
		return -1;
	}
	ret = synth_elf(elf, &s, sec_addr, flags, o);
	if (ret)
		saved = errno;
	elf_end(elf);
	free(s.tab.funcs);
	free(s.tab.rows);
	free(s.regs.funcs);
	free(s.regs.rows);
	errno = saved;
	return ret;
}

/* The outputs @flags and the caller's pointers ask for, or -1 (EINVAL). */
static int out_of(unsigned int flags, void **sec, size_t *size,
		  struct synth_out *o)
{
	if (!sec || !size ||
	    (flags & ~(CODECTL_SYNTH_AT_BUFFER | CODECTL_SYNTH_REGS))) {
		errno = EINVAL;
		return -1;
	}
	if (flags & CODECTL_SYNTH_REGS)
		*o = (struct synth_out){ NULL, NULL, sec, size };
	else
		*o = (struct synth_out){ sec, size, NULL, NULL };
	return 0;
}

int codectl__sframe_synth_range(int fd, uint64_t bias, uint64_t lo,
				uint64_t hi, uint64_t sec_addr,
				unsigned int flags, void **sec, size_t *size,
				struct codectl_synth_stats *stats)
{
	struct synth_out o;

	if (fd < 0 || out_of(flags, sec, size, &o)) {
		errno = EINVAL;
		return -1;
	}
	return synth_any(fd, NULL, 0, bias, lo, hi, sec_addr, flags, &o,
			 stats);
}

int codectl__sframe_synth_both(int fd, uint64_t lo, uint64_t hi,
			       uint64_t sec_addr, void **sec, size_t *size,
			       void **regs, size_t *regs_size,
			       struct codectl_synth_stats *stats)
{
	struct synth_out o = { sec, size, regs, regs_size };

	if (fd < 0 || !sec || !size || !regs || !regs_size) {
		errno = EINVAL;
		return -1;
	}
	return synth_any(fd, NULL, 0, 0, lo, hi, sec_addr, 0, &o, stats);
}

int codectl__sframe_synth_mem(const void *image, size_t image_size,
			      uint64_t bias, uint64_t lo, uint64_t hi,
			      unsigned int flags, void **sec, size_t *size)
{
	struct synth_out o;

	if (!image || !image_size || out_of(flags, sec, size, &o)) {
		errno = EINVAL;
		return -1;
	}
	return synth_any(-1, image, image_size, bias, lo, hi, 0, flags, &o,
			 NULL);
}

CODECTL_EXPORT int codectl_sframe_synth(int fd, uint64_t bias,
					uint64_t sec_addr, unsigned int flags,
					void **sec, size_t *size,
					struct codectl_synth_stats *stats)
{
	return codectl__sframe_synth_range(fd, bias, 0, UINT64_MAX, sec_addr,
					   flags, sec, size, stats);
}
