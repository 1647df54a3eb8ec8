// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-oracle: print the canonical rule dump (tests/sframe/FORMAT.md) of
 * an ELF file's .sframe section, as one binutils release's libsframe reads
 * it.  Compiled once per release against that release's libsframe.a:
 *
 *   gcc -DORACLE_REL='"2.47"' -I<binutils-2.47>/sframe/include \
 *       sframe-oracle.c <binutils-2.47>/sframe/lib/libsframe.a
 *
 * The API generation is told apart by the headers: SFRAME_VERSION_3 (2.46+:
 * 64-bit pcs, getters take the FDE type, FLEX FDEs), SFRAME_VERSION_2
 * (2.41-2.45: sframe_decoder_get_funcdesc_v2), else 2.40 (v1 only).
 *
 * For every pc of every FDE the rule comes from sframe_find_fre(), which
 * takes the pc relative to the section's address in every release.  Each
 * lookup is also redone from the raw FREs (sframe_decoder_get_fre() and the
 * FDE's PCINC/PCMASK rule, see raw_lookup()); where the two disagree:
 *   - in the cases listed in known_broken() (libsframe bugs, documented in
 *     tests/sframe/KNOWN-DIFFERENCES.md) the raw result is printed;
 *   - anywhere else find_fre's result is printed, and the disagreement is
 *     reported on stderr and in a "# oracle: disagree" comment, and the
 *     exit status is 3 (so that the self-check notices).
 *
 *   sframe-oracle [-q] [-f] ELF  -q: no stderr report of disagreements
 *                                -f: find_fre's result everywhere, even
 *                                    where known to be wrong (diagnostics)
 * Exit: 0 ok, 1 usage/IO/ELF error, 2 no .sframe or libsframe rejects it,
 * 3 dump printed but with unexplained find_fre/raw disagreements.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe-api.h"

#ifndef ORACLE_REL
#error "define ORACLE_REL"
#endif

#if defined(SFRAME_VERSION_3)
#define API 3
#define FRE_BYTES(f) ((f)->fre_datawords)
typedef int64_t pc_t;
#elif defined(SFRAME_VERSION_2)
#define API 2
#define FRE_BYTES(f) ((f)->fre_offsets)
typedef int32_t pc_t;
#else
#define API 1
#define FRE_BYTES(f) ((f)->fre_offsets)
typedef int32_t pc_t;
#endif

#ifndef SFRAME_FRE_RA_OFFSET_INVALID
#define SFRAME_FRE_RA_OFFSET_INVALID 0	/* s390x RA padding (2.45+) */
#endif

#define SHT_GNU_SFRAME_ 0x6ffffff4u
#define SHF_EXECINSTR_ 0x4u
#define PCREL_FLAG 0x4
#define FLEX_TYPE 1

/* ---- minimal ELF reader (32/64-bit, either byte order) ---- */

struct elf {
	const unsigned char *buf;
	size_t size;
	bool is64, be;
};

static uint64_t rd(const struct elf *e, size_t off, int n)
{
	uint64_t v = 0;

	if (off + n > e->size) {
		fprintf(stderr, "sframe-oracle: truncated ELF\n");
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		int k = e->be ? i : n - 1 - i;

		v = (v << 8) | e->buf[off + k];
	}
	return v;
}

struct shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
};

static struct shdr get_shdr(const struct elf *e, uint64_t shoff,
			    unsigned int shentsize, unsigned int i)
{
	size_t b = shoff + (uint64_t)i * shentsize;
	struct shdr s;

	s.name = rd(e, b, 4);
	s.type = rd(e, b + 4, 4);
	if (e->is64) {
		s.flags = rd(e, b + 8, 8);
		s.addr = rd(e, b + 16, 8);
		s.offset = rd(e, b + 24, 8);
		s.size = rd(e, b + 32, 8);
	} else {
		s.flags = rd(e, b + 8, 4);
		s.addr = rd(e, b + 12, 4);
		s.offset = rd(e, b + 16, 4);
		s.size = rd(e, b + 20, 4);
	}
	return s;
}

/* ---- rule formatting ---- */

static const char *fmt_val(char *buf, size_t n, const char *base, int32_t off,
			   bool deref)
{
	if (deref)
		snprintf(buf, n, "*(%s%+" PRId32 ")", base, off);
	else
		snprintf(buf, n, "%s%+" PRId32, base, off);
	return buf;
}

struct ctx {
	sframe_decoder_ctx *d;
	unsigned char abi;
	int8_t fixed_ra, fixed_fp;
	int ver;
};

static bool is_aarch64(const struct ctx *c)
{
	return c->abi == SFRAME_ABI_AARCH64_ENDIAN_BIG ||
	       c->abi == SFRAME_ABI_AARCH64_ENDIAN_LITTLE;
}

static bool is_s390x(const struct ctx *c)
{
	return c->abi == 4;
}

static int32_t get_cfa(const struct ctx *c, sframe_frame_row_entry *f,
		       unsigned int fde_type, int *err)
{
#if API == 3
	return sframe_fre_get_cfa_offset(c->d, f, fde_type, err);
#else
	(void)fde_type;
	return sframe_fre_get_cfa_offset(c->d, f, err);
#endif
}

static int32_t get_fp(const struct ctx *c, sframe_frame_row_entry *f,
		      unsigned int fde_type, int *err)
{
#if API == 3
	return sframe_fre_get_fp_offset(c->d, f, fde_type, err);
#else
	(void)fde_type;
	return sframe_fre_get_fp_offset(c->d, f, err);
#endif
}

static int32_t get_ra(const struct ctx *c, sframe_frame_row_entry *f,
		      unsigned int fde_type, int *err)
{
#if API == 3
	return sframe_fre_get_ra_offset(c->d, f, fde_type, err);
#else
	(void)fde_type;
	return sframe_fre_get_ra_offset(c->d, f, err);
#endif
}

#if API == 3
/* The ABI's default RA rule, when the FRE says nothing about RA. */
static void ra_default(const struct ctx *c, char *buf, size_t n)
{
	if (c->fixed_ra != 0)
		fmt_val(buf, n, "cfa", c->fixed_ra, true);
	else
		snprintf(buf, n, "same");
}

static void fp_default(const struct ctx *c, char *buf, size_t n)
{
	if (c->fixed_fp != 0)
		fmt_val(buf, n, "cfa", c->fixed_fp, true);
	else
		snprintf(buf, n, "same");
}

/* FLEX: one (control word, offset) pair as an expression. */
static void flex_expr(char *buf, size_t n, uint32_t ctl, int32_t off)
{
	char base[32];

	if (SFRAME_V3_FLEX_FDE_CTRLWORD_REG_P(ctl))
		snprintf(base, sizeof(base), "r%u",
			 (unsigned int)SFRAME_V3_FLEX_FDE_CTRLWORD_REGNUM(ctl));
	else
		snprintf(base, sizeof(base), "cfa");
	fmt_val(buf, n, base, off, SFRAME_V3_FLEX_FDE_CTRLWORD_DEREF_P(ctl));
}

static int format_flex(const struct ctx *c, sframe_frame_row_entry *f,
		       char *out, size_t n)
{
	char cfa[48], ra[48], fp[48];
	int e1 = 0, e2 = 0, e3 = 0, e4 = 0;
	uint32_t ctl;
	int32_t off;
	int fp_idx = 4;

	ctl = sframe_get_fre_udata(f, 0, &e1);
	off = get_cfa(c, f, FLEX_TYPE, &e2);
	if (e1 || e2)
		return -1;
	flex_expr(cfa, sizeof(cfa), ctl, off);

	ctl = sframe_get_fre_udata(f, 2, &e1);
	if (e1 || ctl == 0) {
		ra_default(c, ra, sizeof(ra));
		if (!e1)
			fp_idx = 3;	/* RA padding word */
	} else {
		off = get_ra(c, f, FLEX_TYPE, &e2);
		if (e2)
			return -1;
		flex_expr(ra, sizeof(ra), ctl, off);
	}

	ctl = sframe_get_fre_udata(f, fp_idx, &e3);
	if (e3 || ctl == 0) {
		fp_default(c, fp, sizeof(fp));
	} else {
		off = get_fp(c, f, FLEX_TYPE, &e4);
		if (e4)
			return -1;
		flex_expr(fp, sizeof(fp), ctl, off);
	}
	snprintf(out, n, "cfa=%s ra=%s fp=%s", cfa, ra, fp);
	return 0;
}
#endif

/* Format FRE f of an FDE with the given type and info: 0, or -1. */
static int format_rule(const struct ctx *c, sframe_frame_row_entry *f,
		       unsigned int fde_type, unsigned char info, char *out,
		       size_t n)
{
	char cfa[48], ra[48], fp[48];
	unsigned int nwords = SFRAME_V1_FRE_OFFSET_COUNT(f->fre_info);
	int err = 0;
	int32_t off;
	size_t len;

	if (nwords == 0) {
		/* Outermost frame (v3; RA undefined). */
		snprintf(out, n, "cfa=undef ra=undef fp=same");
	} else if (fde_type == FLEX_TYPE) {
#if API == 3
		if (format_flex(c, f, out, n))
			return -1;
#else
		return -1;
#endif
	} else {
		int base = sframe_fre_get_base_reg_id(f, &err);

		if (err)
			return -1;
		off = get_cfa(c, f, 0, &err);
		if (err)
			return -1;
		fmt_val(cfa, sizeof(cfa), base == SFRAME_BASE_REG_SP ? "sp" : "fp",
			off, false);

		off = get_ra(c, f, 0, &err);
		if (c->fixed_ra != 0)
			fmt_val(ra, sizeof(ra), "cfa", c->fixed_ra, true);
		else if (err || off == SFRAME_FRE_RA_OFFSET_INVALID)
			snprintf(ra, sizeof(ra), "same");
		else if (is_s390x(c) && c->ver == 2 && (off & 1))
			snprintf(ra, sizeof(ra), "r%d+0", off >> 1);
		else
			fmt_val(ra, sizeof(ra), "cfa", off, true);

		off = get_fp(c, f, 0, &err);
		if (err)
			snprintf(fp, sizeof(fp), "same");
		else if (is_s390x(c) && c->ver == 2 && (off & 1))
			snprintf(fp, sizeof(fp), "r%d+0", off >> 1);
		else
			fmt_val(fp, sizeof(fp), "cfa", off, true);
		snprintf(out, n, "cfa=%s ra=%s fp=%s", cfa, ra, fp);
	}
	len = strlen(out);
	if (is_aarch64(c) && sframe_fre_get_ra_mangled_p(c->d, f, &err))
		len += snprintf(out + len, n - len, " mangled");
	if (c->ver >= 3 && (info & 0x80))
		snprintf(out + len, n - len, " signal");
	return 0;
}

/* ---- FDEs ---- */

struct fde {
	unsigned int idx;
	uint32_t num_fres, size;
	uint64_t start;		/* absolute */
	unsigned char info, info2, rep;
};

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The raw lookup, independent of sframe_find_fre(): the FDE's FREs one by
 * one (sframe_decoder_get_fre), the last whose start is <= the pc's offset
 * in the function (PCINC), or <= (offset % rep_size) (PCMASK, v2/v3).
 * v1 has no rep_size field: its PCMASK FDEs (ld's x86-64 .plt) are read
 * with a block size of 16, the PLT entry size (FORMAT.md, Decisions).  The
 * rule written in 2.40's sframe.h, "(PC & FRE_START_ADDR_AS_MASK) >=
 * FRE_START_ADDR_AS_MASK", would make 0xc-0xe of each PLT entry sp+8,
 * which .eh_frame contradicts.
 */
static int raw_lookup(const struct ctx *c, const struct fde *fd,
		      const sframe_frame_row_entry *fres, int nfres,
		      uint64_t off, sframe_frame_row_entry *out)
{
	bool mask = (fd->info >> 4) & 1;
	unsigned int rep = c->ver == 1 ? 16 : fd->rep;
	int found = -1;

	if (nfres < 0 || (mask && rep == 0))
		return -1;
	if (mask)
		off %= rep;
	for (int j = 0; j < nfres; j++) {
		if (fres[j].fre_start_addr <= off)
			found = j;
		else if (!mask)
			break;
	}
	if (found < 0)
		return -1;
	*out = fres[found];
	return 0;
}

/* The FDE's FREs, in order, through sframe_decoder_get_fre(); -1 if one of
 * them cannot be read. */
static int load_fres(const struct ctx *c, const struct fde *fd,
		     sframe_frame_row_entry **out)
{
	sframe_frame_row_entry *v = calloc(fd->num_fres + 1, sizeof(*v));

	*out = v;
	if (!v)
		return -1;
	for (uint32_t j = 0; j < fd->num_fres; j++)
		if (sframe_decoder_get_fre(c->d, fd->idx, j, &v[j]))
			return -1;
	return (int)fd->num_fres;
}

static bool same_fre(const sframe_frame_row_entry *a,
		     const sframe_frame_row_entry *b)
{
	return a->fre_start_addr == b->fre_start_addr &&
	       a->fre_info == b->fre_info &&
	       !memcmp(FRE_BYTES(a), FRE_BYTES(b), sizeof(FRE_BYTES(a)));
}

/*
 * Where this release's sframe_find_fre() is known to be wrong, the raw
 * result is printed instead (see KNOWN-DIFFERENCES.md).
 */
static const char *known_broken(const struct ctx *c, const struct fde *fd)
{
	bool mask = (fd->info >> 4) & 1;

	(void)c;
#if API == 1
	if (mask)
		return "libsframe 2.40 sframe_find_fre ignores PCMASK (reads it as PCINC)";
#elif API == 2
	if (mask)
		return "libsframe 2.44 sframe_find_fre: PCMASK lookup";
#endif
	(void)mask;
	return NULL;
}

static int load_fdes(const struct ctx *c, uint64_t sec_addr,
		     unsigned int hdr_size, struct fde **out)
{
	unsigned int n = sframe_decoder_get_num_fidx(c->d);
	struct fde *v = calloc(n ? n : 1, sizeof(*v));
	unsigned char flags = 0;

	if (!v)
		return -1;
	(void)hdr_size;
	for (unsigned int i = 0; i < n; i++) {
		struct fde *fd = &v[i];
		int r;

		fd->idx = i;
#if API == 3
		if (c->ver == 3) {
			int64_t st;

			r = sframe_decoder_get_funcdesc_v3(c->d, i, &fd->num_fres,
				&fd->size, &st, &fd->info, &fd->info2, &fd->rep);
			/* v3 starts are relative to the field itself */
			fd->start = sec_addr + st +
				sframe_decoder_get_offsetof_fde_start_addr(c->d, i, NULL);
		} else {
			int32_t st;

			r = sframe_decoder_get_funcdesc_v2(c->d, i, &fd->num_fres,
				&fd->size, &st, &fd->info, &fd->rep);
			flags = sframe_decoder_get_flags(c->d);
			fd->start = sec_addr + st;
			if (flags & PCREL_FLAG)
				fd->start += sframe_decoder_get_offsetof_fde_start_addr(c->d, i, NULL);
		}
#elif API == 2
		{
			int32_t st;

			r = sframe_decoder_get_funcdesc_v2(c->d, i, &fd->num_fres,
				&fd->size, &st, &fd->info, &fd->rep);
			fd->start = sec_addr + st;
		}
#else
		{
			int32_t st;

			r = sframe_decoder_get_funcdesc(c->d, i, &fd->num_fres,
				&fd->size, &st, &fd->info);
			fd->start = sec_addr + st;
		}
#endif
		if (r) {
			fprintf(stderr, "sframe-oracle: cannot read FDE %u\n", i);
			free(v);
			return -1;
		}
	}
	(void)flags;
	qsort(v, n, sizeof(*v), cmp_fde);
	*out = v;
	return (int)n;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	bool quiet = false, findfre_only = false;
	struct elf e = { 0 };
	FILE *fp;
	long fsz;
	unsigned char *buf;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q"))
			quiet = true;
		else if (!strcmp(argv[i], "-f"))
			findfre_only = true;
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path) {
		fprintf(stderr, "usage: %s [-q] [-f] ELF\n", argv[0]);
		return 1;
	}

	fp = fopen(path, "rb");
	if (!fp || fseek(fp, 0, SEEK_END) || (fsz = ftell(fp)) < 0 ||
	    fseek(fp, 0, SEEK_SET)) {
		fprintf(stderr, "sframe-oracle: %s: %s\n", path, strerror(errno));
		return 1;
	}
	buf = malloc(fsz ? fsz : 1);
	if (!buf || fread(buf, 1, fsz, fp) != (size_t)fsz) {
		fprintf(stderr, "sframe-oracle: %s: read error\n", path);
		return 1;
	}
	fclose(fp);
	e.buf = buf;
	e.size = fsz;
	if (fsz < 52 || memcmp(buf, "\177ELF", 4)) {
		fprintf(stderr, "sframe-oracle: %s: not ELF\n", path);
		return 1;
	}
	e.is64 = buf[4] == 2;
	e.be = buf[5] == 2;

	uint64_t shoff = e.is64 ? rd(&e, 0x28, 8) : rd(&e, 0x20, 4);
	unsigned int shentsize = rd(&e, e.is64 ? 0x3a : 0x2e, 2);
	unsigned int shnum = rd(&e, e.is64 ? 0x3c : 0x30, 2);
	unsigned int shstrndx = rd(&e, e.is64 ? 0x3e : 0x32, 2);

	if (!shoff || !shnum || shstrndx >= shnum) {
		fprintf(stderr, "sframe-oracle: %s: no section headers\n", path);
		return 1;
	}
	struct shdr strs = get_shdr(&e, shoff, shentsize, shstrndx);
	struct shdr sf = { 0 };
	bool have = false;

	for (unsigned int i = 0; i < shnum && !have; i++) {
		struct shdr s = get_shdr(&e, shoff, shentsize, i);
		const char *nm = (const char *)buf + strs.offset + s.name;

		if (strs.offset + s.name >= e.size)
			continue;
		if (s.type == SHT_GNU_SFRAME_ || !strcmp(nm, ".sframe")) {
			sf = s;
			have = true;
		}
	}
	if (!have || sf.offset + sf.size > e.size || sf.size == 0) {
		fprintf(stderr, "sframe-oracle: %s: no .sframe section\n", path);
		return 2;
	}

	int err = 0;
	struct ctx c = { 0 };

	c.d = sframe_decode((const char *)buf + sf.offset, sf.size, &err);
	if (!c.d) {
		fprintf(stderr, "sframe-oracle: %s: sframe_decode: %s\n", path,
			sframe_errmsg(err));
		return 2;
	}
	/* Header fields straight from the section (2.40 has no getters). */
	const unsigned char *h = buf + sf.offset;

	c.ver = h[2];
	c.abi = sframe_decoder_get_abi_arch(c.d);
	c.fixed_fp = sframe_decoder_get_fixed_fp_offset(c.d);
	c.fixed_ra = sframe_decoder_get_fixed_ra_offset(c.d);

	struct fde *fdes;
	int nfdes = load_fdes(&c, sf.addr, sframe_decoder_get_hdr_size(c.d), &fdes);

	if (nfdes < 0)
		return 2;

	printf("# oracle libsframe %s: %s\n", ORACLE_REL, path);
	printf("# sframe v%d abi %u flags 0x%x fdes %d section 0x%" PRIx64 "+0x%" PRIx64 "\n",
	       c.ver, c.abi, h[3], nfdes, sf.addr, sf.size);
	for (unsigned int i = 0; i < shnum; i++) {
		struct shdr s = get_shdr(&e, shoff, shentsize, i);

		if ((s.flags & SHF_EXECINSTR_) && s.size &&
		    strs.offset + s.name < e.size)
			printf("# section %s 0x%" PRIx64 "-0x%" PRIx64 "\n",
			       (const char *)buf + strs.offset + s.name, s.addr,
			       s.addr + s.size);
	}

	unsigned long unexplained = 0;

	for (int k = 0; k < nfdes; k++) {
		const struct fde *fd = &fdes[k];
		unsigned int fde_type = c.ver >= 3 ? (fd->info2 & 0x1f) : 0;
		const char *broken = findfre_only ? NULL : known_broken(&c, fd);
		unsigned long disagree = 0, used_raw = 0;
		char prev[160] = "", cur[160];
		uint64_t run = fd->start;
		sframe_frame_row_entry *fres;
		int nfres = load_fres(&c, fd, &fres);

		for (uint64_t pc = fd->start; pc < fd->start + fd->size; pc++) {
			sframe_frame_row_entry f1, f2;
			int r1, r2;

			memset(&f1, 0, sizeof(f1));
			memset(&f2, 0, sizeof(f2));
			r1 = sframe_find_fre(c.d, (pc_t)(pc - sf.addr), &f1);
			r2 = raw_lookup(&c, fd, fres, nfres, pc - fd->start, &f2);
			if ((r1 == 0) != (r2 == 0) || (r1 == 0 && !same_fre(&f1, &f2))) {
				disagree++;
				if (broken) {
					used_raw++;
					r1 = r2;
					f1 = f2;
				}
			}
			if (r1 || format_rule(&c, &f1, fde_type, fd->info, cur, sizeof(cur)))
				snprintf(cur, sizeof(cur), "none");
			if (pc != fd->start && strcmp(cur, prev)) {
				printf("0x%" PRIx64 "-0x%" PRIx64 " %s\n", run, pc, prev);
				run = pc;
			}
			memcpy(prev, cur, sizeof(prev));
		}
		if (fd->size)
			printf("0x%" PRIx64 "-0x%" PRIx64 " %s\n", run,
			       fd->start + fd->size, prev);
		free(fres);
		if (fd->num_fres == 0)
			printf("# empty-fde 0x%" PRIx64 "-0x%" PRIx64 "\n",
			       fd->start, fd->start + fd->size);
		if (disagree && broken) {
			printf("# oracle: known: %s: raw FREs used at %lu pcs of FDE 0x%" PRIx64 "\n",
			       broken, used_raw, fd->start);
		} else if (disagree) {
			unexplained += disagree;
			printf("# oracle: disagree: find_fre vs raw FREs at %lu pcs of FDE 0x%" PRIx64 "\n",
			       disagree, fd->start);
			if (!quiet)
				fprintf(stderr, "sframe-oracle: %s: find_fre and the raw FREs disagree at %lu pcs of FDE 0x%" PRIx64 "\n",
					path, disagree, fd->start);
		}
	}
	sframe_decoder_free(&c.d);
	free(fdes);
	free(buf);
	return unexplained ? 3 : 0;
}
