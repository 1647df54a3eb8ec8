// SPDX-License-Identifier: GPL-2.0
/*
 * synth-check: the differential test of SFrame synthesised from .eh_frame.
 *
 *   synth-check [--perturb] ELF...
 *   synth-check --dump-vdso FILE     write this process's vdso to FILE
 *
 * For each ELF file: libcodectl's codectl_sframe_synth() builds the
 * section; the project's decoder (shared/sframe.c, compiled in here: the
 * library's copy is internal to it) must accept it with sframe_init() + sframe_validate();
 * then at every pc of every FDE of the section, the rule sframe_find()
 * decodes must agree with the CFI that libdw reads for that pc
 * (dwarf_cfi_addrframe).
 *
 * "Agree" is checked by evaluation, not by comparing encodings: both
 * rules are evaluated on a made-up frame (every register a distinct
 * value, memory a hash of the address), and the CFA, the return address
 * and the caller's rbp they give must be equal (an undefined return
 * address must be an SFrame outermost frame).  The DWARF side is a small
 * stack machine over the operations libdw hands out, written here
 * independently of the library's conversion.  Conversely, every pc of
 * the executable sections that has CFI but no SFrame rule is counted,
 * and none may be a plain row (CFA = rsp/rbp + offset, RA at CFA - 8,
 * rbp unchanged or at a CFA offset), which any SFrame can express.
 *
 * --perturb changes one data word of one FRE in each synthesised section
 * (adds 1 to the CFA offset of the FRE in the middle of the section), so
 * every pc of that FRE must disagree: the run must then report failures.
 *
 * Prints "ok - FILE: ..." or "not ok - FILE: ..." per file and ends with
 * "N passed, N failed" (files).  Exit status 1 if anything failed.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include <codectl.h>
#include "sframe.h"

#define NREGS		17	/* x86-64 DWARF 0-15 and the RA column */
#define DWARF_RBP	6
#define DWARF_RSP	7

/* The made-up frame: register values, and memory as a hash. */
static uint64_t reg_val[NREGS];

static uint64_t mem_at(uint64_t addr)
{
	uint64_t x = addr * 0x9e3779b97f4a7c15ULL;

	return x ^ (x >> 29) ^ 0x5bd1e995;
}

static void frame_init(uint64_t pc)
{
	int i;

	for (i = 0; i < NREGS; i++)
		reg_val[i] = 0x7ffe00000000ULL + 0x10000ULL * i + 8 * (pc & 0xff);
	reg_val[16] = pc;
}

struct val {
	int ok;
	uint64_t v;
};

/*
 * Evaluate a DWARF expression; @cfa is pushed for DW_OP_call_frame_cfa.
 * *@is_value: it ended with DW_OP_stack_value.
 */
static int dw_eval(const Dwarf_Op *ops, size_t n, uint64_t cfa, uint64_t *out,
		   int *is_value)
{
	uint64_t st[64];
	size_t sp = 0, i;

	*is_value = 0;
	for (i = 0; i < n; i++) {
		const Dwarf_Op *o = &ops[i];
		uint8_t a = o->atom;

		if (sp >= 63)
			return -1;
		if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			if (a - DW_OP_breg0 >= NREGS)
				return -1;
			st[sp++] = reg_val[a - DW_OP_breg0] + o->number;
		} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			st[sp++] = a - DW_OP_lit0;
		} else if (a == DW_OP_bregx) {
			if (o->number >= NREGS)
				return -1;
			st[sp++] = reg_val[o->number] + o->number2;
		} else if (a == DW_OP_call_frame_cfa) {
			st[sp++] = cfa;
		} else if (a == DW_OP_const1u || a == DW_OP_const2u ||
			   a == DW_OP_const4u || a == DW_OP_const8u ||
			   a == DW_OP_const1s || a == DW_OP_const2s ||
			   a == DW_OP_const4s || a == DW_OP_const8s ||
			   a == DW_OP_constu || a == DW_OP_consts) {
			st[sp++] = o->number;
		} else if (a == DW_OP_deref) {
			if (!sp)
				return -1;
			st[sp - 1] = mem_at(st[sp - 1]);
		} else if (a == DW_OP_plus_uconst) {
			if (!sp)
				return -1;
			st[sp - 1] += o->number;
		} else if (a == DW_OP_plus || a == DW_OP_minus ||
			   a == DW_OP_and || a == DW_OP_shl || a == DW_OP_ge) {
			uint64_t y, x;

			if (sp < 2)
				return -1;
			y = st[--sp];
			x = st[sp - 1];
			if (a == DW_OP_plus)
				x += y;
			else if (a == DW_OP_minus)
				x -= y;
			else if (a == DW_OP_and)
				x &= y;
			else if (a == DW_OP_shl)
				x = y < 64 ? x << y : 0;
			else
				x = (int64_t)x >= (int64_t)y;
			st[sp - 1] = x;
		} else if ((a == DW_OP_regx || (a >= DW_OP_reg0 &&
						a <= DW_OP_reg31)) && n == 1) {
			/* in a register: its value */
			uint64_t r = a == DW_OP_regx ? o->number :
				     (uint64_t)(a - DW_OP_reg0);

			if (r >= NREGS)
				return -1;
			st[sp++] = reg_val[r];
			*is_value = 1;
		} else if (a == DW_OP_stack_value && i == n - 1) {
			*is_value = 1;
		} else {
			return -1;
		}
	}
	if (!sp)
		return -1;
	*out = st[sp - 1];
	return 0;
}

/* The caller's frame according to libdw's CFI at @pc. */
struct caller {
	int outermost;
	uint64_t cfa, ra, fp;
};

static int cfi_caller(Dwarf_CFI *cfi, uint64_t pc, struct caller *c,
		      const char **why)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Frame *fr;
	size_t n;
	int ra_reg, is_val, ret = -1;
	uint64_t v;

	memset(c, 0, sizeof(*c));
	if (dwarf_cfi_addrframe(cfi, pc, &fr)) {
		*why = "no CFI row";
		return -1;
	}
	ra_reg = dwarf_frame_info(fr, NULL, NULL, NULL);
	if (ra_reg < 0 || ra_reg >= NREGS) {
		*why = "no RA column";
		goto out;
	}
	if (dwarf_frame_register(fr, ra_reg, mem, &ops, &n)) {
		*why = "RA rule unreadable";
		goto out;
	}
	if (!n && ops) {
		c->outermost = 1;
		ret = 0;
		goto out;
	}
	if (!n) {
		*why = "RA same value";
		goto out;
	}
	if (dwarf_frame_cfa(fr, &ops, &n) || !n ||
	    dw_eval(ops, n, 0, &c->cfa, &is_val)) {
		*why = "CFA not evaluable";
		goto out;
	}
	if (dwarf_frame_register(fr, ra_reg, mem, &ops, &n) ||
	    dw_eval(ops, n, c->cfa, &v, &is_val)) {
		*why = "RA not evaluable";
		goto out;
	}
	c->ra = is_val ? v : mem_at(v);
	if (dwarf_frame_register(fr, DWARF_RBP, mem, &ops, &n)) {
		*why = "rbp rule unreadable";
		goto out;
	}
	if (!n && !ops) {
		c->fp = reg_val[DWARF_RBP];
	} else if (!n || dw_eval(ops, n, c->cfa, &v, &is_val)) {
		*why = "rbp undefined or not evaluable";
		goto out;
	} else {
		c->fp = is_val ? v : mem_at(v);
	}
	ret = 0;
out:
	free(fr);
	return ret;
}

/* The value of one SFrame location. */
static int sf_eval(const struct sframe_loc *l, uint64_t cfa, uint64_t same,
		   uint64_t *out)
{
	uint64_t base;

	if (l->kind == SFRAME_LOC_SAME) {
		*out = same;
		return 0;
	}
	if (l->kind != SFRAME_LOC_VAL && l->kind != SFRAME_LOC_MEM)
		return -1;
	if (l->base == SFRAME_BASE_SP)
		base = reg_val[DWARF_RSP];
	else if (l->base == SFRAME_BASE_FP)
		base = reg_val[DWARF_RBP];
	else if (l->base == SFRAME_BASE_CFA)
		base = cfa;
	else if (l->base < NREGS)
		base = reg_val[l->base];
	else
		return -1;
	base += (int64_t)l->off;
	*out = l->kind == SFRAME_LOC_MEM ? mem_at(base) : base;
	return 0;
}

static int sf_caller(const struct sframe_rule *r, struct caller *c)
{
	memset(c, 0, sizeof(*c));
	if (r->flags & SFRAME_RULE_OUTERMOST) {
		c->outermost = 1;
		return 0;
	}
	if (sf_eval(&r->cfa, 0, 0, &c->cfa) || r->cfa.base == SFRAME_BASE_CFA)
		return -1;
	if (r->ra.kind == SFRAME_LOC_SAME ||
	    sf_eval(&r->ra, c->cfa, 0, &c->ra))
		return -1;
	return sf_eval(&r->fp, c->cfa, reg_val[DWARF_RBP], &c->fp);
}

/*
 * Is the CFI row at @fr one of the plain kind every SFrame version has
 * (CFA = rsp/rbp + offset, RA at CFA - 8, rbp unchanged or at a CFA
 * offset)?  Such a row must never be left out.
 */
static int plain_row(Dwarf_Frame *fr)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int ra = dwarf_frame_info(fr, NULL, NULL, NULL);

	if (dwarf_frame_cfa(fr, &ops, &n) || n != 1 ||
	    ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != DWARF_RSP && ops[0].number != DWARF_RBP))
		return 0;
	if (ra < 0 || dwarf_frame_register(fr, ra, mem, &ops, &n) || n != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa ||
	    ops[1].atom != DW_OP_plus_uconst || (int64_t)ops[1].number != -8)
		return 0;
	if (dwarf_frame_register(fr, DWARF_RBP, mem, &ops, &n))
		return 0;
	if (!n)
		return !ops;		/* same value, not undefined */
	return n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	       ops[1].atom == DW_OP_plus_uconst;
}

/*
 * Walk the CFI rows of the executable sections: count the bytes without
 * an SFrame rule, and the plain rows (plain_row()) left out.
 */
static uint64_t left_out(Elf *elf, Dwarf_CFI *cfi,
			 const struct sframe_sec *dec, const char *path,
			 uint64_t *plain)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t bytes = 0;

	*plain = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		uint64_t pc, end;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		end = sh.sh_addr + sh.sh_size;
		for (pc = sh.sh_addr; pc < end;) {
			struct sframe_rule r;
			Dwarf_Frame *fr;
			Dwarf_Addr lo, hi;

			if (dwarf_cfi_addrframe(cfi, pc, &fr)) {
				pc++;
				continue;
			}
			if (dwarf_frame_info(fr, &lo, &hi, NULL) < 0 ||
			    hi <= pc) {
				free(fr);
				pc++;
				continue;
			}
			if (hi > end)
				hi = end;
			for (; pc < hi; pc++) {
				if (!sframe_find(dec, pc, &r))
					continue;
				bytes++;
				if (plain_row(fr) && (*plain)++ < 5)
					printf("# %s: pc 0x%" PRIx64 ": plain "
					       "CFI row left out\n", path, pc);
			}
			free(fr);
		}
	}
	return bytes;
}

/* Add 1 to the first data word of the FRE in the middle of the section. */
static int perturb(uint8_t *sec, size_t size)
{
	struct sframe_sec d;
	struct sframe_fde fde;
	uint32_t i;

	if (sframe_init(&d, 0, size, sec, NULL, NULL))
		return -1;
	for (i = d.hdr.num_fdes / 2; i < d.hdr.num_fdes; i++) {
		uint64_t at;
		uint8_t info;

		if (sframe_fde_at(&d, i, &fde) || !fde.num_fres)
			return -1;
		at = fde.fres_at + (1u << fde.fre_type);
		info = sec[at];
		if (!((info >> 1) & 0xf))
			continue;		/* outermost: no words */
		/* the CFA offset: word 0 (DEFAULT) or 1 (FLEX) */
		at += 1 + (fde.flex ? 1u << ((info >> 5) & 3) : 0);
		sec[at]++;
		return 0;
	}
	return -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Check one file. Return 0 if every pc agrees. */
static int check_file(const char *path, int do_perturb)
{
	struct codectl_synth_stats st;
	struct sframe_sec dec;
	uint64_t pcs = 0, bad = 0, gap, plain;
	Dwarf_CFI *cfi = NULL;
	Elf *elf = NULL;
	size_t size;
	void *sec;
	uint32_t i;
	int fd, err;
	double t;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("not ok - %s: %s\n", path, strerror(errno));
		return -1;
	}
	t = now();
	if (codectl_sframe_synth(fd, 0, 0, 0, &sec, &size, &st)) {
		printf("not ok - %s: codectl_sframe_synth: %s\n", path,
		       strerror(errno));
		close(fd);
		return -1;
	}
	t = now() - t;
	if (do_perturb && perturb(sec, size))
		printf("# %s: nothing to perturb\n", path);
	err = sframe_init(&dec, 0, size, sec, NULL, NULL);
	if (!err)
		err = sframe_validate(&dec);
	if (err) {
		printf("not ok - %s: decoder refuses the section: %s\n", path,
		       sframe_strerror(err));
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (!cfi) {
		printf("not ok - %s: libdw has no CFI\n", path);
		err = -1;
		goto out;
	}
	for (i = 0; i < dec.hdr.num_fdes; i++) {
		struct sframe_fde fde;
		uint64_t pc;

		if (sframe_fde_at(&dec, i, &fde)) {
			bad++;
			continue;
		}
		for (pc = fde.func_start; pc < fde.func_start + fde.func_size;
		     pc++) {
			struct sframe_rule r;
			struct caller want, got;
			const char *why = "";

			pcs++;
			frame_init(pc);
			err = sframe_find(&dec, pc, &r);
			if (err) {
				why = sframe_strerror(err);
			} else if (cfi_caller(cfi, pc, &want, &why)) {
				err = -1;
			} else if (sf_caller(&r, &got)) {
				why = "SFrame rule not evaluable";
				err = -1;
			} else if (want.outermost != got.outermost ||
				   want.cfa != got.cfa || want.ra != got.ra ||
				   want.fp != got.fp) {
				why = want.cfa != got.cfa ? "CFA differs" :
				      want.ra != got.ra ? "RA differs" :
				      want.fp != got.fp ? "rbp differs" :
				      "outermost differs";
				err = -1;
			}
			if (err && bad++ < 5)
				printf("# %s: pc 0x%" PRIx64 ": %s\n", path,
				       pc, why);
		}
	}
	gap = left_out(elf, cfi, &dec, path, &plain);
	err = bad || plain ? -1 : 0;
	printf("%s - %s: %" PRIu64 " pcs, %" PRIu64 " disagree, %" PRIu64
	       " with CFI but no rule (%" PRIu64 " of them plain); "
	       "%.1f%% of %" PRIu64 " text bytes and %u+%u of %u FDEs with "
	       "rules; %zu bytes, %u FDEs (%u FLEX), %u FREs, %.1f ms\n",
	       err ? "not ok" : "ok", path, pcs, bad, gap, plain,
	       st.text_bytes ? 100.0 * st.covered_bytes / st.text_bytes : 0.0,
	       st.text_bytes, st.fdes_full, st.fdes_partial, st.cfi_fdes,
	       size, st.sframe_fdes, st.flex_fdes, st.sframe_fres, t * 1e3);
out:
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	free(sec);
	close(fd);
	return err ? -1 : 0;
}

/* Write this process's vdso image (it has no file) to @path. */
static int dump_vdso(const char *path)
{
	const unsigned char *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)eh;
	uint64_t end = 0;
	FILE *f;
	int i;

	if (!eh || memcmp(eh, ELFMAG, SELFMAG))
		return 1;
	for (i = 0; i < e->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(eh + e->e_phoff +
						      i * sizeof(*ph));

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	if (e->e_shoff + (uint64_t)e->e_shnum * e->e_shentsize > end)
		end = e->e_shoff + (uint64_t)e->e_shnum * e->e_shentsize;
	f = fopen(path, "we");
	if (!f || fwrite(eh, 1, end, f) != end) {
		if (f)
			fclose(f);
		return 1;
	}
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	int i = 1, do_perturb = 0, pass = 0, fail = 0;

	if (argc == 3 && !strcmp(argv[1], "--dump-vdso"))
		return dump_vdso(argv[2]);

	if (argc > 1 && !strcmp(argv[1], "--perturb")) {
		do_perturb = 1;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: synth-check [--perturb] ELF... | "
			"--dump-vdso FILE\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (; i < argc; i++) {
		if (check_file(argv[i], do_perturb))
			fail++;
		else
			pass++;
	}
	printf("%d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
