/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small SFrame v3 writer (AMD64, or AArch64 when built for arm64: the
 * machine whose objects libcodectl synthesises for), freestanding like the decoder beside
 * it (shared/sframe.[ch]): no libc, fixed-width types only, the output
 * buffer is the caller's.
 *
 * Why not binutils' libsframe encoder: Debian bookworm's binutils 2.40
 * (binutils-dev) has a libsframe that writes SFrame v1 only, and the v3
 * encoder (libsframe-dev 2.47) is packaged only in sid, built against
 * sid's glibc.  The writer needs about 250 lines, shares its rule type
 * (struct sframe_loc) with the decoder, and every section it writes is
 * checked by that decoder's full validation (sframe_validate()) before
 * libcodectl hands it out.
 */
#ifndef LIBCODECTL_SFRAME_WRITE_H
#define LIBCODECTL_SFRAME_WRITE_H

#include "../shared/sframe.h"

#if defined(__aarch64__) || defined(SFW_AARCH64)
/*
 * AArch64: no fixed RA offset; an FRE without an RA word has the return
 * address in the link register (SFRAME_LOC_SAME), and one saved on the
 * stack takes the second data word.  DWARF numbers of x29, sp and x30.
 * SFW_AARCH64 selects it on another host (the unit tests).
 */
#define SFW_ABI			SFRAME_ABI_AARCH64_LE
#define SFW_DWARF_FP		29
#define SFW_DWARF_SP		31
#define SFW_DWARF_RA		30
#define SFW_FIXED_RA		0
#define SFW_DWARF_XREG		(-1)	/* no register table (synth.c) */
#else
/* DWARF numbers of the x86-64 registers the AMD64 rules name. */
#define SFW_DWARF_RBP		6
#define SFW_DWARF_RSP		7
#define SFW_DWARF_RA		16
#define SFW_ABI			SFRAME_ABI_AMD64_LE
#define SFW_DWARF_FP		SFW_DWARF_RBP
#define SFW_DWARF_SP		SFW_DWARF_RSP
#define SFW_FIXED_RA		(-8)	/* the RA at CFA - 8 */
/*
 * rbx: glibc's lazy-binding trampolines keep the CFA in it while they
 * call _dl_fixup, which saves it; synth.c's register table describes it.
 */
#define SFW_DWARF_XREG		3
#endif

/* Most FREs one v3 FDE can hold (its attribute record's u16). */
#define SFW_MAX_FRES		0xffff

/**
 * struct sframe_wrow - one row of a function to write
 * @start:	offset of the row's first pc from the function's start
 * @outermost:	1: no caller (RA undefined); @cfa, @ra and @fp are ignored
 * @cfa:	SFRAME_LOC_VAL or _MEM of SFRAME_BASE_SP, _FP or a DWARF
 *		register number (0-31)
 * @ra:		SFRAME_LOC_MEM of SFRAME_BASE_CFA - 8 (the AMD64 default),
 *		another _MEM of the CFA or a register, or _VAL of a register;
 *		AArch64: also SFRAME_LOC_SAME (in the link register, its
 *		default)
 * @fp:		SFRAME_LOC_SAME, or as @ra
 */
struct sframe_wrow {
	uint32_t start;
	uint8_t outermost;
	struct sframe_loc cfa;
	struct sframe_loc ra;
	struct sframe_loc fp;
};

/**
 * struct sframe_wfunc - one function (one FDE) to write
 * @start:	its run-time address
 * @size:	its size in bytes
 * @row:	index of its first row in the row array
 * @nrows:	its rows (1 to SFW_MAX_FRES), starts strictly increasing from
 *		0 and below @size
 * @signal:	1 for a signal frame (the v3 FDE's signal bit)
 * @rep:	0 (PCINC), or the size of the blocks its rows repeat in
 *		(PCMASK: a row holds from its start within each block, as in
 *		a PLT's entries)
 */
struct sframe_wfunc {
	uint64_t start;
	uint32_t size;
	uint32_t row;
	uint32_t nrows;
	uint8_t signal;
	uint8_t rep;
};

/**
 * sframe_wrow_ok() - can a row be written?
 * @row:	the row
 *
 * Return: 1 if sframe_write() can encode it (as a DEFAULT or a FLEX FRE),
 * else 0.
 */
int sframe_wrow_ok(const struct sframe_wrow *row);

/**
 * sframe_write() - write an SFrame v3 section
 * @funcs:	the functions, sorted by start, not overlapping
 * @nfuncs:	how many (at least 1)
 * @rows:	their rows
 * @sec_addr:	run-time address the section will be decoded at (function
 *		starts are stored relative to each FDE's address)
 * @buf:	where to write, or NULL to only compute the size
 * @bufsize:	bytes at @buf
 * @nfres:	out, may be NULL: FREs written
 *
 * A function whose rows all fit the ABI's DEFAULT encoding (CFA = SP/FP
 * + offset, RA at CFA - 8 (AMD64) or in x30 or at a CFA offset (AArch64),
 * FP same or at a CFA offset (AArch64: the RA at one too), or outermost)
 * gets a DEFAULT FDE, any other a FLEX FDE.  Every row must pass
 * sframe_wrow_ok().
 *
 * Return: the section's size in bytes (written when @buf is not NULL and
 * @bufsize is large enough), or 0 when the input cannot be written.
 */
uint64_t sframe_write(const struct sframe_wfunc *funcs, uint32_t nfuncs,
		      const struct sframe_wrow *rows, uint64_t sec_addr,
		      uint8_t *buf, uint64_t bufsize, uint32_t *nfres);

#endif /* LIBCODECTL_SFRAME_WRITE_H */
