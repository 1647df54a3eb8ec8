// SPDX-License-Identifier: GPL-2.0
/*
 * malformed-test: valid and hostile SFrame sections against the decoder
 * (shared/sframe.c).
 *
 * A small encoder, written from the format description (binutils'
 * sframe-spec.texi and sframe.h) rather than from the decoder, builds sections in
 * code: v1, v2 (with and without FDE_FUNC_START_PCREL), v3 (DEFAULT and
 * FLEX FDEs), AMD64, AArch64 (both byte orders) and s390x.  The valid ones
 * must pass sframe_init() and sframe_validate() and give the hand-computed
 * rules at chosen pcs; each named defect must be refused with its exact
 * enum sframe_err code.
 *
 * Every case runs three times: with the section in memory (its bytes end
 * at a PROT_NONE guard page, so any read past the end faults), through the
 * reader callback, which aborts if the decoder asks for bytes outside the
 * section or more than SFRAME_READ_MAX at once, and through the reader with
 * an FDE index (sframe_index_build()).  Memory and reader runs must give
 * the same results; the indexed run too when the section validates (else
 * it need only be safe).  Validated sections are also checked
 * exhaustively: sframe_find() and sframe_fde_at() + sframe_fde_rule()
 * agree at every pc of every function, and answer only OK or NO_FRE.
 *
 * Lookups in defective sections assert an exact code only where the
 * format leaves no choice (the FRE that answers is the broken one); where
 * it depends on how far the walk looks ahead, any code, or any error.
 *
 *   malformed-test [-v] [--seeds DIR]
 *
 * Prints "ok N - name" / "not ok N - name: ...", then "N passed, N
 * failed"; exits 1 on any failure.  --seeds DIR also writes every case's
 * section as a fuzzer seed (tests/sframe/fuzz: 4-byte prefix + bytes).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframe.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* The encoder                                                         */
/* ------------------------------------------------------------------ */

#define MAXFDE	8
#define MAXFRE	8
#define MAXW	15
#define BUFSZ	4096

/* One FRE.  wsz: 0/1/2 for 1/2/4-byte data words (3 encodes 4 bytes). */
struct fre_spec {
	uint32_t start;
	uint8_t sp;		/* CFA base: 1 SP, 0 FP */
	uint8_t wsz;
	uint8_t n;		/* data words */
	uint8_t mangled;
	int32_t w[MAXW];
};

/* One FDE.  start is the absolute run-time address of the function. */
struct fde_spec {
	uint64_t start;
	uint32_t size;
	uint8_t fre_type;	/* 0/1/2; > 2 encodes 1-byte starts */
	uint8_t pcmask;
	uint8_t rep;		/* v2/v3 repetition block (PCMASK) */
	uint8_t keyb;
	uint8_t signal;		/* v3 */
	uint8_t info2;		/* v3: FDE type (1 FLEX) */
	int nfre;
	struct fre_spec fre[MAXFRE];
};

struct sec_spec {
	uint8_t version, flags, abi;
	int8_t fixed_fp, fixed_ra;
	uint8_t auxlen;
	uint32_t fdes_gap;	/* bytes between headers and FDEs */
	uint32_t fres_gap;	/* bytes between FDEs and FREs */
	uint32_t blk_gap;	/* bytes between FRE blocks */
	uint64_t addr;		/* section run-time address */
	int nfde;
	int order[MAXFDE];	/* block order in the FRE sub-section */
	int has_order;
	struct fde_spec fde[MAXFDE];
};

/* The encoded bytes and where each structure landed. */
struct enc {
	uint8_t b[BUFSZ];
	size_t len;
	int be;
	uint8_t version;
	size_t hdr_end, fdes, fres, fres_end, fde_size;
	size_t fde_off[MAXFDE];
	size_t blk_off[MAXFDE];		/* v3: attribute record, else 1st FRE */
	size_t fre_off[MAXFDE][MAXFRE];	/* FRE start field */
	size_t data_off[MAXFDE][MAXFRE];	/* its first data word */
	uint64_t addr;
};

static void put8(struct enc *e, size_t off, uint8_t v)
{
	if (off >= BUFSZ) {
		fprintf(stderr, "encoder overflow\n");
		abort();
	}
	e->b[off] = v;
}

static void putn(struct enc *e, size_t off, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		put8(e, off + i, (uint8_t)(v >> (8 * (e->be ? n - 1 - i : i))));
}

#define put16(e, o, v)	putn(e, o, (uint16_t)(v), 2)
#define put32(e, o, v)	putn(e, o, (uint32_t)(v), 4)
#define put64(e, o, v)	putn(e, o, (uint64_t)(v), 8)

/* Header field offsets. */
enum {
	H_MAGIC = 0, H_VERSION = 2, H_FLAGS = 3, H_ABI = 4, H_FIXED_FP = 5,
	H_FIXED_RA = 6, H_AUXLEN = 7, H_NUM_FDES = 8, H_NUM_FRES = 12,
	H_FRE_LEN = 16, H_FDES_OFF = 20, H_FRES_OFF = 24,
};

/* FDE field offsets, v1/v2 and v3 (index entry, attribute record). */
enum {
	F2_START = 0, F2_SIZE = 4, F2_FRE_OFF = 8, F2_NUM_FRES = 12,
	F2_INFO = 16, F2_REP = 17,
	F3_START = 0, F3_SIZE = 8, F3_FRE_OFF = 12,
	A3_NUM_FRES = 0, A3_INFO = 2, A3_INFO2 = 3, A3_REP = 4,
};

static int word_bytes(uint8_t wsz)
{
	return wsz == 0 ? 1 : wsz == 1 ? 2 : 4;
}

static int start_bytes(uint8_t fre_type)
{
	return fre_type == 1 ? 2 : fre_type == 2 ? 4 : 1;
}

static uint8_t fre_info(const struct fre_spec *f)
{
	return (uint8_t)((f->sp & 1) | (f->n & 0xf) << 1 | (f->wsz & 3) << 5 |
			 (f->mangled & 1) << 7);
}

static uint8_t fde_info(const struct sec_spec *s, const struct fde_spec *d)
{
	uint8_t info = (uint8_t)((d->fre_type & 0xf) | (d->pcmask & 1) << 4 |
				 (d->keyb & 1) << 5);

	if (s->version == 3)
		info |= (uint8_t)((d->signal & 1) << 7);
	return info;
}

static void encode(const struct sec_spec *s, struct enc *e)
{
	size_t pos, nfres = 0;
	int i, k, j, bi;

	memset(e, 0, sizeof(*e));
	e->be = s->abi == SFRAME_ABI_AARCH64_BE || s->abi == SFRAME_ABI_S390X_BE;
	e->version = s->version;
	e->addr = s->addr;
	e->fde_size = s->version == 1 ? 17 : s->version == 2 ? 20 : 16;
	e->hdr_end = SFRAME_HEADER_SIZE + s->auxlen;
	e->fdes = e->hdr_end + s->fdes_gap;
	e->fres = e->fdes + s->nfde * e->fde_size + s->fres_gap;

	/* Headers, and filler bytes in the aux header and the gaps. */
	memset(e->b + SFRAME_HEADER_SIZE, 0xa5, e->fres - SFRAME_HEADER_SIZE);
	put16(e, H_MAGIC, SFRAME_MAGIC);
	put8(e, H_VERSION, s->version);
	put8(e, H_FLAGS, s->flags);
	put8(e, H_ABI, s->abi);
	put8(e, H_FIXED_FP, (uint8_t)s->fixed_fp);
	put8(e, H_FIXED_RA, (uint8_t)s->fixed_ra);
	put8(e, H_AUXLEN, s->auxlen);

	/* FRE blocks. */
	pos = e->fres;
	for (bi = 0; bi < s->nfde; bi++) {
		const struct fde_spec *d;

		i = s->has_order ? s->order[bi] : bi;
		d = &s->fde[i];
		if (bi && s->blk_gap) {
			memset(e->b + pos, 0x5a, s->blk_gap);
			pos += s->blk_gap;
		}
		e->blk_off[i] = pos;
		if (s->version == 3) {
			put16(e, pos + A3_NUM_FRES, d->nfre);
			put8(e, pos + A3_INFO, fde_info(s, d));
			put8(e, pos + A3_INFO2, d->info2);
			put8(e, pos + A3_REP, d->rep);
			pos += 5;
		}
		for (k = 0; k < d->nfre; k++) {
			const struct fre_spec *f = &d->fre[k];
			int sb = start_bytes(d->fre_type), wb = word_bytes(f->wsz);

			e->fre_off[i][k] = pos;
			putn(e, pos, f->start, sb);
			pos += sb;
			put8(e, pos++, fre_info(f));
			e->data_off[i][k] = pos;
			for (j = 0; j < f->n; j++) {
				putn(e, pos, (uint32_t)f->w[j], wb);
				pos += wb;
			}
		}
		nfres += d->nfre;
	}
	e->fres_end = pos;
	e->len = pos;

	/* FDEs. */
	for (i = 0; i < s->nfde; i++) {
		const struct fde_spec *d = &s->fde[i];
		size_t o = e->fdes + i * e->fde_size;
		uint64_t base = s->addr;

		e->fde_off[i] = o;
		if (s->flags & SFRAME_F_FDE_FUNC_START_PCREL)
			base += o;
		if (s->version == 3) {
			put64(e, o + F3_START, d->start - base);
			put32(e, o + F3_SIZE, d->size);
			put32(e, o + F3_FRE_OFF, e->blk_off[i] - e->fres);
		} else {
			put32(e, o + F2_START, (uint32_t)(d->start - base));
			put32(e, o + F2_SIZE, d->size);
			put32(e, o + F2_FRE_OFF, e->blk_off[i] - e->fres);
			put32(e, o + F2_NUM_FRES, d->nfre);
			put8(e, o + F2_INFO, fde_info(s, d));
			if (s->version == 2) {
				put8(e, o + F2_REP, d->rep);
				put16(e, o + F2_REP + 1, 0);
			}
		}
	}

	put32(e, H_NUM_FDES, s->nfde);
	put32(e, H_NUM_FRES, nfres);
	put32(e, H_FRE_LEN, e->fres_end - e->fres);
	put32(e, H_FDES_OFF, e->fdes - e->hdr_end);
	put32(e, H_FRES_OFF, e->fres - e->hdr_end);
}

/* Patch helpers (after encode()). */
#define HDR32(e, field, v)	put32(e, field, v)
#define FDE8(e, i, field, v)	put8(e, (e)->fde_off[i] + (field), v)
#define FDE32(e, i, field, v)	put32(e, (e)->fde_off[i] + (field), v)
#define FDE64(e, i, field, v)	put64(e, (e)->fde_off[i] + (field), v)
#define ATTR8(e, i, field, v)	put8(e, (e)->blk_off[i] + (field), v)
#define ATTR16(e, i, field, v)	put16(e, (e)->blk_off[i] + (field), v)
#define FRE_INFO(e, i, k)	((e)->data_off[i][k] - 1)

/* Set the FRE sub-section's length (and the section's) to end at @end. */
static void cut_fres(struct enc *e, size_t end)
{
	put32(e, H_FRE_LEN, end - e->fres);
	e->len = end;
}

/* ------------------------------------------------------------------ */
/* The valid sections                                                  */
/* ------------------------------------------------------------------ */

#define SEC	0x10000ULL

#define FRE1(st, base_sp, size, w0) \
	{ .start = (st), .sp = (base_sp), .wsz = (size), .n = 1, .w = { w0 } }
#define FRE2(st, base_sp, size, w0, w1) \
	{ .start = (st), .sp = (base_sp), .wsz = (size), .n = 2, \
	  .w = { w0, w1 } }
#define FRE3(st, base_sp, size, w0, w1, w2) \
	{ .start = (st), .sp = (base_sp), .wsz = (size), .n = 3, \
	  .w = { w0, w1, w2 } }
#define FRE0(st) { .start = (st) }

/* AMD64, three FDEs: PCINC 1-byte starts, PCINC 2-byte starts, PLT. */
static struct sec_spec amd64_v2(uint8_t version)
{
	struct sec_spec s = {
		.version = version, .flags = SFRAME_F_FDE_SORTED,
		.abi = SFRAME_ABI_AMD64_LE, .fixed_ra = -8, .addr = SEC,
		.nfde = 3, .has_order = 1, .order = { 2, 1, 0 },
		.fde = {
			{ .start = 0x11000, .size = 0x40, .fre_type = 0,
			  .nfre = 4, .fre = {
				FRE1(0, 1, 0, 8),
				FRE2(1, 1, 0, 16, -16),
				FRE2(4, 0, 0, 16, -16),
				FRE1(0x3f, 1, 0, 8) } },
			{ .start = 0x11040, .size = 0x300, .fre_type = 1,
			  .nfre = 2, .fre = {
				FRE1(0, 1, 1, 8),
				FRE2(0x200, 1, 1, 0x1010, -16) } },
			{ .start = 0x12000, .size = 0x40, .fre_type = 0,
			  .pcmask = 1, .rep = 16, .nfre = 2, .fre = {
				FRE1(0, 1, 0, 8),
				FRE1(11, 1, 0, 16) } },
		},
	};
	return s;
}

/* v2 + PCREL: adjacent 4-byte functions, so raw start fields decrease. */
static struct sec_spec amd64_v2_pcrel(void)
{
	struct sec_spec s = {
		.version = 2,
		.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
		.abi = SFRAME_ABI_AMD64_LE, .fixed_ra = -8, .addr = SEC,
		.nfde = 3,
		.fde = {
			{ .start = 0x11000, .size = 4, .nfre = 1, .fre = {
				FRE1(0, 1, 0, 8) } },
			{ .start = 0x11004, .size = 4, .nfre = 2, .fre = {
				FRE1(0, 1, 0, 8),
				FRE2(1, 1, 0, 16, -16) } },
			{ .start = 0x11008, .size = 8, .fre_type = 2,
			  .nfre = 2, .fre = {
				FRE2(0, 0, 2, 16, -16),
				FRE1(5, 1, 2, 8) } },
		},
	};
	return s;
}

#define FLEXW(st, size, nw, ...) \
	{ .start = (st), .wsz = (size), .n = (nw), .w = { __VA_ARGS__ } }

/* v3 AMD64: DEFAULT FDEs of each FRE type, PCMASK, FLEX, NO_FRE. */
static struct sec_spec amd64_v3(void)
{
	struct sec_spec s = {
		.version = 3,
		.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
		.abi = SFRAME_ABI_AMD64_LE, .fixed_ra = -8, .addr = SEC,
		.nfde = 6, .has_order = 1, .order = { 0, 1, 3, 4, 5, 2 },
		.fde = {
			{ .start = 0x11000, .size = 0x20, .fre_type = 0,
			  .nfre = 3, .fre = {
				FRE1(0, 1, 0, 8),
				FRE2(1, 1, 0, 16, -16),
				FRE2(4, 0, 0, 16, -16) } },
			{ .start = 0x11100, .size = 0x10000, .fre_type = 1,
			  .nfre = 3, .fre = {
				FRE1(0, 1, 1, 8),
				FRE1(0x1234, 1, 2, 0x12345),
				FRE0(0xfff0) } },
			{ .start = 0x21100, .size = 0x20000, .fre_type = 2,
			  .signal = 1, .nfre = 2, .fre = {
				FRE1(0, 1, 2, 8),
				FRE2(0x10000, 0, 2, 16, -16) } },
			{ .start = 0x41100, .size = 0x30, .pcmask = 1,
			  .rep = 16, .nfre = 2, .fre = {
				FRE1(0, 1, 0, 8),
				FRE1(11, 1, 0, 16) } },
			{ .start = 0x41200, .size = 0x40, .info2 = 1,
			  .nfre = 6, .fre = {
				FLEXW(0, 0, 2, 0x51, 0),
				FLEXW(8, 1, 5, 0x33, -8, 0, 0x33, 0),
				FLEXW(16, 2, 6, 0x39, 16, 0x2, -8, 0x2, -16),
				FLEXW(24, 0, 4, 0x39, 8, 0x51, 0),
				FLEXW(32, 0, 6, 0x39, 8, 0x2, -8, 0, 0),
				FRE0(40) } },
			{ .start = 0x41300, .size = 0x10, .nfre = 1, .fre = {
				FRE1(4, 1, 0, 8) } },
		},
	};
	return s;
}

/* v3 with adjacent 2-byte functions: raw PCREL starts decrease. */
static struct sec_spec amd64_v3_adjacent(void)
{
	struct sec_spec s = {
		.version = 3,
		.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
		.abi = SFRAME_ABI_AMD64_LE, .fixed_ra = -8, .addr = SEC,
		.nfde = 4,
		.fde = {
			{ .start = 0x11000, .size = 2, .nfre = 1,
			  .fre = { FRE1(0, 1, 0, 8) } },
			{ .start = 0x11002, .size = 2, .nfre = 2,
			  .fre = { FRE1(0, 1, 0, 8), FRE1(1, 1, 0, 16) } },
			{ .start = 0x11004, .size = 2, .nfre = 1,
			  .fre = { FRE1(0, 1, 0, 24) } },
			{ .start = 0x11006, .size = 2, .nfre = 1,
			  .fre = { FRE1(1, 1, 0, 32) } },
		},
	};
	return s;
}

/* AArch64 (no fixed RA): key B, mangled RA, RA and FP tracked. */
static struct sec_spec aarch64(uint8_t version, uint8_t abi)
{
	uint8_t ft = version == 3 ? 0 : 1, ws = version == 3 ? 0 : 1;
	struct sec_spec s = {
		.version = version, .flags = SFRAME_F_FDE_SORTED,
		.abi = abi, .addr = SEC, .nfde = 2,
		.fde = {
			{ .start = 0x11000, .size = 0x40, .fre_type = ft,
			  .keyb = 1, .nfre = 3, .fre = {
				FRE1(0, 1, ws, 0),
				FRE3(4, 1, ws, 16, -8, -16),
				FRE2(8, 0, ws, 32, -24) } },
			{ .start = 0x11040, .size = 0x20, .fre_type = ft,
			  .nfre = 1, .fre = { FRE1(0, 1, ws, 0) } },
		},
	};

	if (version == 3)
		s.flags |= SFRAME_F_FDE_FUNC_START_PCREL;
	s.fde[0].fre[1].mangled = 1;
	s.fde[0].fre[2].mangled = 1;
	return s;
}

/* s390x v2: CFA = v * 8 + 160, RA in a register (odd value), padding. */
static struct sec_spec s390x(void)
{
	struct sec_spec s = {
		.version = 2, .flags = SFRAME_F_FDE_SORTED,
		.abi = SFRAME_ABI_S390X_BE, .addr = SEC, .nfde = 1,
		.fde = {
			{ .start = 0x11000, .size = 0x40, .fre_type = 1,
			  .nfre = 3, .fre = {
				FRE1(0, 1, 0, 0),
				FRE3(6, 1, 0, 1, 5, -72),
				FRE3(12, 0, 1, 2, 0, -48) } },
		},
	};
	return s;
}

/* ------------------------------------------------------------------ */
/* Running a case                                                      */
/* ------------------------------------------------------------------ */

#define ANY	(-2)	/* any code (only: no crash, in range) */
#define NA	(-1)	/* not reached */
#define ERR	(-3)	/* any error code (which one depends on the walk) */
#define MAXLK	48
#define RULESZ	256

struct lookup {
	uint64_t pc;
	int err;
	const char *rule;	/* expected when err is SFRAME_OK */
};

struct opts {
	uint64_t addr;		/* 0: the spec's */
	int addr_set;
	uint64_t size;		/* section size; 0: the encoded length */
	uint64_t text_start, text_end;
	int reader_only;	/* the case needs the reader (faults, races) */
	int no_reader;		/* mem == NULL and read == NULL */
	long fail_read;		/* fail the Nth read of the run (1-based) */
	int fail_lookups;	/* fail every read after validation */
	const uint8_t *alt;	/* the section's bytes after validation */
	long alt_from;		/* reader: alt from the Nth read of the lookups */
	int skip_exhaustive;
};

struct reader {
	const uint8_t *buf;	/* the bytes that exist */
	uint64_t avail;
	uint64_t size;		/* the section size given to sframe_init */
	const uint8_t *alt;
	int use_alt;
	long nreads, fail_at, alt_from;
	int phase_lookup, fail_lookups;
};

static int rd_read(void *ctx, uint64_t off, void *dst, uint32_t len)
{
	struct reader *r = ctx;
	const uint8_t *src = r->buf;

	if (len > SFRAME_READ_MAX || off > r->size || len > r->size - off ||
	    off > r->avail || len > r->avail - off) {
		fprintf(stderr, "BUG: reader asked for [%" PRIu64 ", +%u) of a"
			" %" PRIu64 "-byte section (%" PRIu64 " bytes exist)\n",
			off, len, r->size, r->avail);
		abort();
	}
	r->nreads++;
	if (r->fail_at && r->nreads == r->fail_at)
		return -EFAULT;
	if (r->phase_lookup && r->fail_lookups)
		return -EFAULT;
	if (r->alt && (r->use_alt || (r->alt_from && r->nreads >= r->alt_from)))
		src = r->alt;
	memcpy(dst, src + off, len);
	return 0;
}

/*
 * Memory whose last byte is followed by an inaccessible page, so reading
 * past the section faults in every build (ASan or not).
 */
struct guarded {
	uint8_t *map;
	size_t maplen;
	uint8_t *p;
};

static void guarded_alloc(struct guarded *g, const uint8_t *src, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t data_pages = (len + pg - 1) / pg + 1;

	g->maplen = (data_pages + 1) * pg;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	if (mprotect(g->map + data_pages * pg, pg, PROT_NONE)) {
		perror("mprotect");
		exit(2);
	}
	g->p = g->map + data_pages * pg - len;
	memcpy(g->p, src, len);
}

static void guarded_free(struct guarded *g)
{
	munmap(g->map, g->maplen);
}

static const char *const code_names[] = {
	"SFRAME_OK", "SFRAME_E_TRUNCATED", "SFRAME_E_MAGIC",
	"SFRAME_E_VERSION", "SFRAME_E_ABI", "SFRAME_E_FLAGS",
	"SFRAME_E_AUXHDR", "SFRAME_E_NO_FDES", "SFRAME_E_FDES_BOUNDS",
	"SFRAME_E_FRES_BOUNDS", "SFRAME_E_OVERLAP", "SFRAME_E_FIXED_RA",
	"SFRAME_E_UNSORTED", "SFRAME_E_FDE_OVERLAP", "SFRAME_E_FUNC_RANGE",
	"SFRAME_E_FUNC_WRAP", "SFRAME_E_FDE_FRE_OFF", "SFRAME_E_FDE_INFO",
	"SFRAME_E_FDE_NO_FRES", "SFRAME_E_FRE_BOUNDS", "SFRAME_E_FRE_ORDER",
	"SFRAME_E_FRE_START", "SFRAME_E_FRE_SIZE", "SFRAME_E_FRE_COUNT",
	"SFRAME_E_FRE_FLEX", "SFRAME_E_FRE_TOTAL", "SFRAME_E_FRE_RANGE",
	"SFRAME_E_READ",
	"SFRAME_E_NOT_FOUND", "SFRAME_E_NO_FRE", "SFRAME_E_FDE_FRES",
	"SFRAME_E_BUDGET",
};

_Static_assert(ARRAY_SIZE(code_names) == SFRAME_E_NR_CODES,
	       "code_names out of date");

static const char *cname(int err)
{
	static char buf[8][32];
	static int k;

	if (err == NA)
		return "(not reached)";
	if (err == ANY)
		return "(any code)";
	if (err == ERR)
		return "(any error)";
	if (err >= 0 && err < SFRAME_E_NR_CODES)
		return code_names[err];
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "invalid code %d", err);
	return buf[k];
}

static void loc_str(char *b, size_t n, const struct sframe_loc *l)
{
	char base[16];

	switch (l->kind) {
	case SFRAME_LOC_SAME:
		snprintf(b, n, "same");
		return;
	case SFRAME_LOC_UNDEF:
		snprintf(b, n, "undef");
		return;
	case SFRAME_LOC_VAL:
	case SFRAME_LOC_MEM:
		break;
	default:
		snprintf(b, n, "kind%u", l->kind);
		return;
	}
	if (l->base == SFRAME_BASE_SP)
		snprintf(base, sizeof(base), "sp");
	else if (l->base == SFRAME_BASE_FP)
		snprintf(base, sizeof(base), "fp");
	else if (l->base == SFRAME_BASE_CFA)
		snprintf(base, sizeof(base), "cfa");
	else
		snprintf(base, sizeof(base), "r%u", l->base);
	if (l->kind == SFRAME_LOC_MEM)
		snprintf(b, n, "*(%s%+d)", base, l->off);
	else
		snprintf(b, n, "%s%+d", base, l->off);
}

static void rule_str(char *b, size_t n, const struct sframe_rule *r)
{
	char cfa[40], ra[40], fp[40];

	loc_str(cfa, sizeof(cfa), &r->cfa);
	loc_str(ra, sizeof(ra), &r->ra);
	loc_str(fp, sizeof(fp), &r->fp);
	snprintf(b, n, "f=0x%" PRIx64 "+0x%x cfa=%s ra=%s fp=%s%s%s%s%s%s",
		 r->func_start, r->func_size, cfa, ra, fp,
		 r->flags & SFRAME_RULE_MANGLED_RA ? " mangled" : "",
		 r->flags & SFRAME_RULE_SIGNAL ? " signal" : "",
		 r->flags & SFRAME_RULE_OUTERMOST ? " outermost" : "",
		 r->flags & SFRAME_RULE_FLEX ? " flex" : "",
		 r->flags & SFRAME_RULE_PAUTH_KEY_B ? " keyb" : "");
}

/* What one run (one access mode) saw. */
struct result {
	int init, val;
	uint32_t nfde;
	int fde_err[MAXFDE];
	struct sframe_fde fde[MAXFDE];
	int lk_err[MAXLK];
	char lk_rule[MAXLK][RULESZ];
	char problem[512];	/* a broken invariant, if any */
	int indexed;
	uint32_t index_words;
};

static int verbose;
static int n_pass, n_fail, n_test;
static const char *seed_dir;

static void problem(struct result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(res->problem, sizeof(res->problem), fmt, ap);
	va_end(ap);
}

static int code_ok(int err)
{
	return err >= 0 && err < SFRAME_E_NR_CODES;
}

/* One pc of a validated section's FDE @i: find() and fde_rule() agree. */
static int consistent_at(const struct sframe_sec *sec, uint32_t i,
			 const struct sframe_fde *fde, uint64_t pc,
			 struct result *res)
{
	struct sframe_rule r1, r2;
	struct sframe_fde f2;
	char s1[RULESZ], s2[RULESZ];
	int e1, e2, err;

	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	memset(&f2, 0, sizeof(f2));
	e1 = sframe_find(sec, pc, &r1);
	e2 = sframe_fde_rule(sec, fde, pc, &r2);
	if (e1 != e2) {
		problem(res, "pc 0x%" PRIx64 ": find %s, fde_rule %s", pc,
			cname(e1), cname(e2));
		return 0;
	}
	if (e1 != SFRAME_OK && e1 != SFRAME_E_NO_FRE) {
		problem(res, "validated, pc 0x%" PRIx64 " in fde %u: %s", pc,
			i, cname(e1));
		return 0;
	}
	if (!e1) {
		rule_str(s1, sizeof(s1), &r1);
		rule_str(s2, sizeof(s2), &r2);
		if (strcmp(s1, s2)) {
			problem(res, "pc 0x%" PRIx64 ": find '%s', fde_rule "
				"'%s'", pc, s1, s2);
			return 0;
		}
	}
	err = sframe_find_fde(sec, pc, &f2);
	if (err || memcmp(&f2, fde, sizeof(f2))) {
		problem(res, "pc 0x%" PRIx64 ": find_fde %s or not FDE %u", pc,
			cname(err), i);
		return 0;
	}
	return 1;
}

/*
 * For a validated section: at every pc of every function (the first and
 * last 256 bytes of large ones), sframe_find() agrees with sframe_fde_at()
 * + sframe_fde_rule() and only answers OK or NO_FRE.
 */
static void exhaustive(const struct sframe_sec *sec, struct result *res)
{
	uint32_t i;

	for (i = 0; i < sec->hdr.num_fdes; i++) {
		struct sframe_fde fde;
		uint64_t pc, lo[2], hi[2];
		int err, part;

		memset(&fde, 0, sizeof(fde));
		err = sframe_fde_at(sec, i, &fde);
		if (err) {
			problem(res, "validated, but fde_at(%u) = %s", i,
				cname(err));
			return;
		}
		lo[0] = fde.func_start;
		hi[0] = fde.func_start + fde.func_size;
		lo[1] = hi[1] = 0;
		if (fde.func_size > 0x400) {
			hi[0] = lo[0] + 0x100;
			lo[1] = fde.func_start + fde.func_size - 0x100;
			hi[1] = fde.func_start + fde.func_size;
		}
		for (part = 0; part < 2; part++)
			for (pc = lo[part]; pc < hi[part]; pc++)
				if (!consistent_at(sec, i, &fde, pc, res))
					return;
	}
}

#define M_MEM		0
#define M_READER	1	/* through the bounds-asserting reader */
#define M_INDEX		2	/* with an FDE index (sframe_index_build) */
#define INDEX_MAX_WORDS	(1U << 20)

static void run_mode(int mode, const struct enc *e, const struct opts *o,
		     const struct lookup *lk, int nlk, struct result *res)
{
	int reader = mode & M_READER;
	uint32_t *index = NULL;
	uint64_t size = o->size ? o->size : e->len;
	uint64_t addr = o->addr_set ? o->addr : e->addr;
	size_t avail = e->len < size ? e->len : (size_t)size;
	struct guarded g = { 0 };
	struct reader rd = {
		.buf = e->b, .avail = avail, .size = size,
		.fail_at = o->fail_read, .fail_lookups = o->fail_lookups,
	};
	struct sframe_sec sec;
	uint32_t i;
	int j;

	memset(res, 0, sizeof(*res));
	res->val = NA;
	for (j = 0; j < nlk; j++)
		res->lk_err[j] = NA;

	if (reader) {
		res->init = sframe_init(&sec, addr, size, NULL,
					o->no_reader ? NULL : rd_read, &rd);
	} else {
		guarded_alloc(&g, e->b, avail);
		res->init = sframe_init(&sec, addr, size, g.p, NULL, NULL);
	}
	if (!code_ok(res->init))
		problem(res, "init returned %d", res->init);
	if (res->init)
		goto out;
	sec.text_start = o->text_start;
	sec.text_end = o->text_end;

	res->val = sframe_validate(&sec);
	if (!code_ok(res->val))
		problem(res, "validate returned %d", res->val);

	if (mode & M_INDEX) {
		uint8_t shift = 0;
		uint32_t words = sframe_index_words(&sec, &shift);
		int err;

		res->index_words = words;
		if (words > INDEX_MAX_WORDS) {
			/* Too big to build here: see index_size(). */
		} else if (words) {
			index = calloc(words, sizeof(*index));
			if (!index)
				exit(2);
			err = sframe_index_build(&sec, index, words, shift);
			if (!code_ok(err))
				problem(res, "index_build returned %d", err);
			if (!err)
				res->indexed = 1;
			else if (res->val == SFRAME_OK && !o->fail_read)
				problem(res, "validated, but index_build: %s",
					cname(err));
		} else if (res->val == SFRAME_OK && !o->fail_read) {
			problem(res, "validated, but no index");
		}
	}

	/* The section changes after validation. */
	if (o->alt) {
		if (reader) {
			rd.alt = o->alt;
			rd.use_alt = !o->alt_from;
		} else {
			memcpy(g.p, o->alt, avail);
		}
	}
	rd.phase_lookup = 1;

	res->nfde = sec.hdr.num_fdes < MAXFDE ? sec.hdr.num_fdes : MAXFDE;
	for (i = 0; i < res->nfde; i++) {
		res->fde_err[i] = sframe_fde_at(&sec, i, &res->fde[i]);
		if (res->fde_err[i])
			memset(&res->fde[i], 0, sizeof(res->fde[i]));
		if (!code_ok(res->fde_err[i]))
			problem(res, "fde_at(%u) returned %d", i,
				res->fde_err[i]);
	}
	if (o->alt_from)	/* a race inside the lookups */
		rd.alt_from = rd.nreads + o->alt_from;
	for (j = 0; j < nlk; j++) {
		struct sframe_rule r;

		memset(&r, 0, sizeof(r));
		res->lk_err[j] = sframe_find(&sec, lk[j].pc, &r);
		if (!code_ok(res->lk_err[j]))
			problem(res, "find(0x%" PRIx64 ") returned %d",
				lk[j].pc, res->lk_err[j]);
		if (!res->lk_err[j])
			rule_str(res->lk_rule[j], RULESZ, &r);
	}
	if (res->val == SFRAME_OK && !o->alt && !o->fail_lookups &&
	    !o->skip_exhaustive)
		exhaustive(&sec, res);
out:
	if (!reader)
		guarded_free(&g);
	free(index);
}

static int same_result(const struct result *a, const struct result *b,
		       int nlk, char *why, size_t n)
{
	uint32_t i;
	int j;

	if (a->init != b->init || a->val != b->val) {
		snprintf(why, n, "mem: init %s validate %s; reader: init %s "
			 "validate %s", cname(a->init), cname(a->val),
			 cname(b->init), cname(b->val));
		return 0;
	}
	if (a->nfde != b->nfde) {
		snprintf(why, n, "num_fdes differ");
		return 0;
	}
	for (i = 0; i < a->nfde; i++) {
		if (a->fde_err[i] != b->fde_err[i] ||
		    memcmp(&a->fde[i], &b->fde[i], sizeof(a->fde[i]))) {
			snprintf(why, n, "fde_at(%u): mem %s, reader %s", i,
				 cname(a->fde_err[i]), cname(b->fde_err[i]));
			return 0;
		}
	}
	for (j = 0; j < nlk; j++) {
		if (a->lk_err[j] != b->lk_err[j] ||
		    strcmp(a->lk_rule[j], b->lk_rule[j])) {
			snprintf(why, n, "lookup %d: mem %s '%s', reader %s "
				 "'%s'", j, cname(a->lk_err[j]), a->lk_rule[j],
				 cname(b->lk_err[j]), b->lk_rule[j]);
			return 0;
		}
	}
	return 1;
}

static int match(int exp, int got)
{
	if (exp == ANY)
		return code_ok(got) || got == NA;
	if (exp == ERR)
		return code_ok(got) && got != SFRAME_OK;
	return exp == got;
}

/* Compare one run with the expectations; describe the first mismatch. */
static int expected(const struct result *r, int exp_init, int exp_val,
		    const struct lookup *lk, int nlk, char *why, size_t n)
{
	int j;

	if (!match(exp_init, r->init)) {
		snprintf(why, n, "init: expected %s got %s", cname(exp_init),
			 cname(r->init));
		return 0;
	}
	if (!match(exp_val, r->val)) {
		snprintf(why, n, "validate: expected %s got %s",
			 cname(exp_val), cname(r->val));
		return 0;
	}
	for (j = 0; j < nlk; j++) {
		if (!match(lk[j].err, r->lk_err[j])) {
			snprintf(why, n, "find(0x%" PRIx64 "): expected %s got"
				 " %s", lk[j].pc, cname(lk[j].err),
				 cname(r->lk_err[j]));
			return 0;
		}
		if (lk[j].err == SFRAME_OK && lk[j].rule &&
		    strcmp(lk[j].rule, r->lk_rule[j])) {
			snprintf(why, n, "find(0x%" PRIx64 "): expected '%s' "
				 "got '%s'", lk[j].pc, lk[j].rule,
				 r->lk_rule[j]);
			return 0;
		}
	}
	if (r->problem[0]) {
		snprintf(why, n, "%s", r->problem);
		return 0;
	}
	return 1;
}

static void write_seed(const char *name, const struct enc *e,
		       const struct opts *o)
{
	char path[4096], *q;
	uint8_t prefix[4] = { 0, 0, 0, 0 };
	size_t len = e->len;
	FILE *f;

	if (o->size && o->size < len)
		len = (size_t)o->size;
	if (o->no_reader)
		return;
	snprintf(path, sizeof(path), "%s/malformed-", seed_dir);
	q = path + strlen(path);
	snprintf(q, sizeof(path) - (q - path), "%s.bin", name);
	for (; *q; q++)
		if (*q == '/' || *q == ' ')
			*q = '_';
	f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(2);
	}
	fwrite(prefix, 1, sizeof(prefix), f);
	fwrite(e->b, 1, len, f);
	fclose(f);
}

static void check(const char *name, const struct enc *e, const struct opts *o,
		  int exp_init, int exp_val, const struct lookup *lk, int nlk)
{
	static struct result rm, rr, ri;
	static const struct opts none;
	const char *mode;
	char why[1024] = "";
	int ok;

	if (!o)
		o = &none;
	if (nlk > MAXLK) {
		fprintf(stderr, "%s: too many lookups\n", name);
		exit(2);
	}
	if (seed_dir)
		write_seed(name, e, o);
	n_test++;

	run_mode(M_READER, e, o, lk, nlk, &rr);
	mode = "(reader) ";
	ok = expected(&rr, exp_init, exp_val, lk, nlk, why, sizeof(why));
	if (ok && !o->reader_only) {
		run_mode(M_MEM, e, o, lk, nlk, &rm);
		mode = "(mem) ";
		ok = expected(&rm, exp_init, exp_val, lk, nlk, why,
			      sizeof(why));
		if (ok) {
			mode = "(mem vs reader) ";
			ok = same_result(&rm, &rr, nlk, why, sizeof(why));
		}
	}
	/*
	 * With an index: the same answers for a validated, unchanged
	 * section; for any other, only safe ones.
	 */
	if (ok) {
		run_mode(M_READER | M_INDEX, e, o, lk, nlk, &ri);
		mode = "(reader + index) ";
		if (ri.problem[0]) {
			snprintf(why, sizeof(why), "%s", ri.problem);
			ok = 0;
		} else if (rr.val == SFRAME_OK && !o->alt && !o->fail_read &&
			   !o->fail_lookups) {
			ok = expected(&ri, exp_init, exp_val, lk, nlk, why,
				      sizeof(why)) &&
			     same_result(&ri, &rr, nlk, why, sizeof(why));
		} else if (ri.init != rr.init || ri.val != rr.val) {
			snprintf(why, sizeof(why), "init/validate differ");
			ok = 0;
		}
	}
	if (ok) {
		n_pass++;
		printf("ok %d - %s\n", n_test, name);
	} else {
		n_fail++;
		printf("not ok %d - %s: %s%s\n", n_test, name, mode, why);
	}
	if (verbose && rr.init == SFRAME_OK)
		printf("#   init %s, validate %s\n", cname(rr.init),
		       cname(rr.val));
}

#define CHECK(name, e, o, ei, ev, ...)					\
	do {								\
		static const struct lookup lk_[] = { __VA_ARGS__ };	\
		check(name, e, o, ei, ev, lk_, ARRAY_SIZE(lk_));	\
	} while (0)
#define CHECK0(name, e, o, ei, ev)	check(name, e, o, ei, ev, NULL, 0)

#define OK	SFRAME_OK
#define NF	SFRAME_E_NOT_FOUND

/* ------------------------------------------------------------------ */
/* Valid sections and their rules                                      */
/* ------------------------------------------------------------------ */

#define RA8	"ra=*(cfa-8)"
#define F0	"f=0x11000+0x40 "
#define F1	"f=0x11040+0x300 "
#define F2	"f=0x12000+0x40 "

#define AMD64_V2_LOOKUPS \
	{ 0x10fff, NF, NULL },						\
	{ 0x11000, OK, F0 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11001, OK, F0 "cfa=sp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x11003, OK, F0 "cfa=sp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x11004, OK, F0 "cfa=fp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x1103e, OK, F0 "cfa=fp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x1103f, OK, F0 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11040, OK, F1 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x1123f, OK, F1 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11240, OK, F1 "cfa=sp+4112 " RA8 " fp=*(cfa-16)" },		\
	{ 0x1133f, OK, F1 "cfa=sp+4112 " RA8 " fp=*(cfa-16)" },		\
	{ 0x11340, NF, NULL },						\
	{ 0x11fff, NF, NULL },						\
	{ 0x12000, OK, F2 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x1200a, OK, F2 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x1200b, OK, F2 "cfa=sp+16 " RA8 " fp=same" },		\
	{ 0x1200f, OK, F2 "cfa=sp+16 " RA8 " fp=same" },		\
	{ 0x12010, OK, F2 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x1201b, OK, F2 "cfa=sp+16 " RA8 " fp=same" },		\
	{ 0x1203f, OK, F2 "cfa=sp+16 " RA8 " fp=same" },		\
	{ 0x12040, NF, NULL },						\
	{ 0, NF, NULL },						\
	{ ~0ULL, NF, NULL }

#define G0	"f=0x11000+0x4 "
#define G1	"f=0x11004+0x4 "
#define G2	"f=0x11008+0x8 "
#define PCREL_LOOKUPS \
	{ 0x10fff, NF, NULL },						\
	{ 0x11000, OK, G0 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11003, OK, G0 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11004, OK, G1 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11005, OK, G1 "cfa=sp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x11007, OK, G1 "cfa=sp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x11008, OK, G2 "cfa=fp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x1100c, OK, G2 "cfa=fp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x1100d, OK, G2 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x1100f, OK, G2 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11010, NF, NULL }

#define V0	"f=0x11000+0x20 "
#define V1	"f=0x11100+0x10000 "
#define V2	"f=0x21100+0x20000 "
#define V3	"f=0x41100+0x30 "
#define V4	"f=0x41200+0x40 "
#define V5	"f=0x41300+0x10 "
#define V3_LOOKUPS \
	{ 0x10fff, NF, NULL },						\
	{ 0x11000, OK, V0 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x11001, OK, V0 "cfa=sp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x11004, OK, V0 "cfa=fp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x1101f, OK, V0 "cfa=fp+16 " RA8 " fp=*(cfa-16)" },		\
	{ 0x11020, NF, NULL },						\
	{ 0x110ff, NF, NULL },						\
	{ 0x11100, OK, V1 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x12333, OK, V1 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x12334, OK, V1 "cfa=sp+74565 " RA8 " fp=same" },		\
	{ 0x210ef, OK, V1 "cfa=sp+74565 " RA8 " fp=same" },		\
	{ 0x210f0, OK, V1 "cfa=undef ra=undef fp=same outermost" },	\
	{ 0x210ff, OK, V1 "cfa=undef ra=undef fp=same outermost" },	\
	{ 0x21100, OK, V2 "cfa=sp+8 " RA8 " fp=same signal" },		\
	{ 0x310ff, OK, V2 "cfa=sp+8 " RA8 " fp=same signal" },		\
	{ 0x31100, OK, V2 "cfa=fp+16 " RA8 " fp=*(cfa-16) signal" },	\
	{ 0x410ff, OK, V2 "cfa=fp+16 " RA8 " fp=*(cfa-16) signal" },	\
	{ 0x41100, OK, V3 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x4110a, OK, V3 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x4110b, OK, V3 "cfa=sp+16 " RA8 " fp=same" },		\
	{ 0x41110, OK, V3 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x4112f, OK, V3 "cfa=sp+16 " RA8 " fp=same" },		\
	{ 0x41130, NF, NULL },						\
	{ 0x41200, OK, V4 "cfa=r10+0 " RA8 " fp=same flex" },		\
	{ 0x41207, OK, V4 "cfa=r10+0 " RA8 " fp=same flex" },		\
	{ 0x41208, OK, V4 "cfa=*(r6-8) " RA8 " fp=*(r6+0) flex" },	\
	{ 0x41210, OK, V4 "cfa=r7+16 " RA8 " fp=*(cfa-16) flex" },	\
	{ 0x41218, OK, V4 "cfa=r7+8 ra=r10+0 fp=same flex" },		\
	{ 0x41220, OK, V4 "cfa=r7+8 " RA8 " fp=same flex" },		\
	{ 0x41228, OK, V4 "cfa=undef ra=undef fp=same outermost flex" }, \
	{ 0x4123f, OK, V4 "cfa=undef ra=undef fp=same outermost flex" }, \
	{ 0x41240, NF, NULL },						\
	{ 0x41300, SFRAME_E_NO_FRE, NULL },				\
	{ 0x41303, SFRAME_E_NO_FRE, NULL },				\
	{ 0x41304, OK, V5 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x4130f, OK, V5 "cfa=sp+8 " RA8 " fp=same" },			\
	{ 0x41310, NF, NULL },						\
	{ ~0ULL, NF, NULL }

#define ADJ_LOOKUPS \
	{ 0x11000, OK, "f=0x11000+0x2 cfa=sp+8 " RA8 " fp=same" },	\
	{ 0x11001, OK, "f=0x11000+0x2 cfa=sp+8 " RA8 " fp=same" },	\
	{ 0x11002, OK, "f=0x11002+0x2 cfa=sp+8 " RA8 " fp=same" },	\
	{ 0x11003, OK, "f=0x11002+0x2 cfa=sp+16 " RA8 " fp=same" },	\
	{ 0x11004, OK, "f=0x11004+0x2 cfa=sp+24 " RA8 " fp=same" },	\
	{ 0x11006, SFRAME_E_NO_FRE, NULL },				\
	{ 0x11007, OK, "f=0x11006+0x2 cfa=sp+32 " RA8 " fp=same" },	\
	{ 0x11008, NF, NULL }

#define A0	"f=0x11000+0x40 "
#define A1	"f=0x11040+0x20 "
#define AARCH64_LOOKUPS \
	{ 0x11000, OK, A0 "cfa=sp+0 ra=same fp=same keyb" },		\
	{ 0x11003, OK, A0 "cfa=sp+0 ra=same fp=same keyb" },		\
	{ 0x11004, OK, A0 "cfa=sp+16 ra=*(cfa-8) fp=*(cfa-16) mangled keyb" }, \
	{ 0x11008, OK, A0 "cfa=fp+32 ra=*(cfa-24) fp=same mangled keyb" }, \
	{ 0x1103f, OK, A0 "cfa=fp+32 ra=*(cfa-24) fp=same mangled keyb" }, \
	{ 0x11040, OK, A1 "cfa=sp+0 ra=same fp=same" },			\
	{ 0x1105f, OK, A1 "cfa=sp+0 ra=same fp=same" },			\
	{ 0x11060, NF, NULL }

#define S390X_LOOKUPS \
	{ 0x11000, OK, A0 "cfa=sp+160 ra=same fp=same" },		\
	{ 0x11006, OK, A0 "cfa=sp+168 ra=r2+0 fp=*(cfa-72)" },		\
	{ 0x1100c, OK, A0 "cfa=fp+176 ra=same fp=*(cfa-48)" },		\
	{ 0x1103f, OK, A0 "cfa=fp+176 ra=same fp=*(cfa-48)" },		\
	{ 0x11040, NF, NULL }

static void valid_sections(void)
{
	struct sec_spec s;
	struct enc e;
	struct opts o;

	s = amd64_v2(1);
	encode(&s, &e);
	CHECK("valid v1 amd64 (PCINC, PCMASK, 1/2-byte starts)", &e, NULL,
	      OK, OK, AMD64_V2_LOOKUPS);

	s = amd64_v2(2);
	encode(&s, &e);
	CHECK("valid v2 amd64 (FREs not in FDE order)", &e, NULL, OK, OK,
	      AMD64_V2_LOOKUPS);

	s = amd64_v2(2);
	s.flags |= SFRAME_F_FRAME_POINTER;
	encode(&s, &e);
	CHECK("valid v2 amd64 with FRAME_POINTER flag", &e, NULL, OK, OK,
	      AMD64_V2_LOOKUPS);

	s = amd64_v2(2);
	s.flags |= SFRAME_F_FDE_FUNC_START_PCREL;
	s.auxlen = 8;
	s.fdes_gap = 4;
	s.fres_gap = 3;
	encode(&s, &e);
	CHECK("valid v2 PCREL with aux header and gaps", &e, NULL, OK, OK,
	      AMD64_V2_LOOKUPS);

	s = amd64_v2(1);
	s.auxlen = 3;
	s.fres_gap = 1;
	encode(&s, &e);
	CHECK("valid v1 with aux header", &e, NULL, OK, OK,
	      AMD64_V2_LOOKUPS);

	s = amd64_v2(2);
	encode(&s, &e);
	memset(&o, 0, sizeof(o));
	o.size = e.len + 100;	/* segment larger than the section */
	CHECK("valid v2 in a larger segment", &e, &o, OK, OK,
	      AMD64_V2_LOOKUPS);

	s = amd64_v2(2);
	encode(&s, &e);
	memset(&o, 0, sizeof(o));
	o.text_start = 0x11000;
	o.text_end = 0x12040;
	CHECK("valid v2 inside an exact text range", &e, &o, OK, OK,
	      AMD64_V2_LOOKUPS);

	s = amd64_v2_pcrel();
	encode(&s, &e);
	CHECK("valid v2 PCREL, raw starts non-monotonic, absolute sorted",
	      &e, NULL, OK, OK, PCREL_LOOKUPS);

	s = amd64_v3();
	encode(&s, &e);
	CHECK("valid v3 amd64 DEFAULT/FLEX, PCINC/PCMASK, 1/2/4-byte "
	      "starts and words", &e, NULL, OK, OK, V3_LOOKUPS);

	s = amd64_v3_adjacent();
	encode(&s, &e);
	CHECK("valid v3, raw starts non-monotonic, absolute sorted", &e,
	      NULL, OK, OK, ADJ_LOOKUPS);

	s = amd64_v3();
	s.auxlen = 12;
	s.fdes_gap = 8;
	s.fres_gap = 2;
	encode(&s, &e);
	CHECK("valid v3 with aux header and gaps", &e, NULL, OK, OK,
	      V3_LOOKUPS);

	s = amd64_v3();
	s.addr = 0x7fff00000000ULL;
	{
		int i;

		for (i = 0; i < s.nfde; i++)
			s.fde[i].start += 0x7fff00000000ULL - SEC - 0x100000;
	}
	encode(&s, &e);
	CHECK("valid v3, functions 1 MiB below the section", &e, NULL, OK,
	      OK, { 0x7ffefff01000ULL, OK,
		    "f=0x7ffefff01000+0x20 cfa=sp+8 " RA8 " fp=same" },
	      { 0x7ffefff31200ULL, OK,
		"f=0x7ffefff31200+0x40 cfa=r10+0 " RA8 " fp=same flex" },
	      { 0x7ffefff00fffULL, NF, NULL });

	s = aarch64(3, SFRAME_ABI_AARCH64_LE);
	encode(&s, &e);
	CHECK("valid v3 aarch64 LE (key B, mangled RA)", &e, NULL, OK, OK,
	      AARCH64_LOOKUPS);

	s = aarch64(2, SFRAME_ABI_AARCH64_BE);
	encode(&s, &e);
	CHECK("valid v2 aarch64 BE (2-byte starts and words)", &e, NULL, OK,
	      OK, AARCH64_LOOKUPS);

	s = s390x();
	encode(&s, &e);
	CHECK("valid v2 s390x BE (CFA encoding, RA register, padding)", &e,
	      NULL, OK, OK, S390X_LOOKUPS);
}

/* ------------------------------------------------------------------ */
/* Defects                                                             */
/* ------------------------------------------------------------------ */

static struct opts sized(uint64_t size)
{
	struct opts o;

	memset(&o, 0, sizeof(o));
	o.size = size;
	return o;
}

static void header_defects(void)
{
	struct sec_spec s2 = amd64_v2(2), s3 = amd64_v3();
	struct enc e, e3;
	struct opts o;

	encode(&s2, &e);
	encode(&s3, &e3);

	/* Truncations at every structural boundary. */
	o = sized(0);
	o.size = 0;
	{
		struct enc t = e;

		t.len = 0;
		o.size = 0;
		CHECK0("trunc: empty section", &t, &o, SFRAME_E_TRUNCATED,
		       NA);
	}
	o = sized(1);
	CHECK0("trunc: 1 byte", &e, &o, SFRAME_E_TRUNCATED, NA);
	o = sized(SFRAME_HEADER_SIZE - 1);
	CHECK0("trunc: header minus 1 byte", &e, &o, SFRAME_E_TRUNCATED, NA);
	o = sized(SFRAME_HEADER_SIZE);
	CHECK0("trunc: header only", &e, &o, SFRAME_E_FDES_BOUNDS, NA);
	{
		struct sec_spec sa = amd64_v2(2);
		struct enc ea;

		sa.auxlen = 16;
		encode(&sa, &ea);
		o = sized(SFRAME_HEADER_SIZE + 15);
		CHECK0("trunc: inside the aux header", &ea, &o,
		       SFRAME_E_AUXHDR, NA);
		o = sized(SFRAME_HEADER_SIZE + 16);
		CHECK0("trunc: after the aux header", &ea, &o,
		       SFRAME_E_FDES_BOUNDS, NA);
	}
	o = sized(e.fdes + 27);
	CHECK0("trunc: inside the 2nd FDE", &e, &o, SFRAME_E_FDES_BOUNDS, NA);
	o = sized(e.fres - 1);
	CHECK0("trunc: last byte of the FDE array", &e, &o,
	       SFRAME_E_FDES_BOUNDS, NA);
	o = sized(e.fres);
	CHECK0("trunc: at the FRE sub-section", &e, &o, SFRAME_E_FRES_BOUNDS,
	       NA);
	o = sized(e.fre_off[0][2] + 1);
	CHECK0("trunc: mid-FRE (header fre_len kept)", &e, &o,
	       SFRAME_E_FRES_BOUNDS, NA);
	o = sized(e3.len - 1);
	CHECK0("trunc: v3 last byte (header fre_len kept)", &e3, &o,
	       SFRAME_E_FRES_BOUNDS, NA);
	o = sized(e3.fdes + 8);
	CHECK0("trunc: v3 inside the 1st FDE index entry", &e3, &o,
	       SFRAME_E_FDES_BOUNDS, NA);

	/*
	 * Consistent truncations: the header's fre_len and the section end
	 * together, inside the last FRE block (v3 FDE 2: 4-byte starts and
	 * words, placed last).
	 */
	{
		struct enc t;

		t = e3;
		cut_fres(&t, t.blk_off[2] + 2);
		CHECK0("trunc: v3 mid attribute record", &t, NULL, OK,
		       SFRAME_E_FDE_FRE_OFF);
		t = e3;
		cut_fres(&t, t.blk_off[2] + 5);
		CHECK0("trunc: v3 after the attribute record", &t, NULL, OK,
		       SFRAME_E_FDE_FRE_OFF);
		t = e3;
		cut_fres(&t, t.fre_off[2][0] + 2);
		CHECK0("trunc: v3 mid 4-byte FRE start", &t, NULL, OK,
		       SFRAME_E_FRE_BOUNDS);
		t = e3;
		cut_fres(&t, t.fre_off[2][1] + 4);
		CHECK0("trunc: v3 before the FRE info byte", &t, NULL, OK,
		       SFRAME_E_FRE_BOUNDS);
		t = e3;
		cut_fres(&t, t.data_off[2][1]);
		CHECK0("trunc: v3 before the data words", &t, NULL, OK,
		       SFRAME_E_FRE_BOUNDS);
		t = e3;
		cut_fres(&t, t.data_off[2][1] + 2);
		CHECK0("trunc: v3 mid data word", &t, NULL, OK,
		       SFRAME_E_FRE_BOUNDS);
		t = e3;
		cut_fres(&t, t.data_off[2][1] + 7);
		CHECK("trunc: v3 last data word short by 1 byte", &t, NULL,
		      OK, SFRAME_E_FRE_BOUNDS,
		      { 0x21100, ANY, NULL },	/* the next FRE is cut */
		      { 0x31100, SFRAME_E_FRE_BOUNDS, NULL });
		t = e;		/* v2: FDE 0's block is last */
		cut_fres(&t, t.fre_off[0][3]);
		CHECK0("trunc: v2 at an FRE boundary (FDE count kept)", &t,
		       NULL, OK, SFRAME_E_FRE_BOUNDS);
		t = e;
		cut_fres(&t, t.data_off[0][2] + 1);
		CHECK0("trunc: v2 mid data words", &t, NULL, OK,
		       SFRAME_E_FRE_BOUNDS);
	}

	/* Magic, version, ABI, byte order. */
	{
		struct enc t;

		t = e;
		put16(&t, H_MAGIC, 0);
		CHECK0("magic 0", &t, NULL, SFRAME_E_MAGIC, NA);
		t = e;
		put16(&t, H_MAGIC, 0xdee3);
		CHECK0("magic 0xdee3", &t, NULL, SFRAME_E_MAGIC, NA);
		t = e;
		put16(&t, H_MAGIC, 0xe2de);	/* big-endian magic */
		CHECK0("big-endian magic with AMD64", &t, NULL, SFRAME_E_ABI,
		       NA);
		t = e;
		put8(&t, H_VERSION, 0);
		CHECK0("version 0", &t, NULL, SFRAME_E_VERSION, NA);
		t = e;
		put8(&t, H_VERSION, 4);
		CHECK0("version 4", &t, NULL, SFRAME_E_VERSION, NA);
		t = e;
		put8(&t, H_VERSION, 0xff);
		CHECK0("version 255", &t, NULL, SFRAME_E_VERSION, NA);
		t = e;
		put8(&t, H_ABI, 0);
		CHECK0("ABI 0", &t, NULL, SFRAME_E_ABI, NA);
		t = e;
		put8(&t, H_ABI, 5);
		CHECK0("ABI 5", &t, NULL, SFRAME_E_ABI, NA);
		t = e;
		put8(&t, H_ABI, SFRAME_ABI_AARCH64_BE);
		CHECK0("ABI aarch64-BE with little-endian magic", &t, NULL,
		       SFRAME_E_ABI, NA);
		t = e;
		put8(&t, H_ABI, SFRAME_ABI_S390X_BE);
		CHECK0("ABI s390x with little-endian magic", &t, NULL,
		       SFRAME_E_ABI, NA);
	}
	{
		struct sec_spec sb = aarch64(2, SFRAME_ABI_AARCH64_BE);
		struct enc t;

		encode(&sb, &t);
		put8(&t, H_ABI, SFRAME_ABI_AARCH64_LE);
		CHECK0("ABI aarch64-LE with big-endian magic", &t, NULL,
		       SFRAME_E_ABI, NA);
		put8(&t, H_ABI, SFRAME_ABI_AMD64_LE);
		CHECK0("ABI AMD64 with big-endian magic", &t, NULL,
		       SFRAME_E_ABI, NA);
	}

	/* Flags per version. */
	{
		struct sec_spec s1 = amd64_v2(1);
		struct enc t1, t;

		encode(&s1, &t1);
		t = t1;
		put8(&t, H_FLAGS, 0x5);
		CHECK0("flags: v1 with FUNC_START_PCREL", &t, NULL,
		       SFRAME_E_FLAGS, NA);
		t = t1;
		put8(&t, H_FLAGS, 0x9);
		CHECK0("flags: v1 with 0x8", &t, NULL, SFRAME_E_FLAGS, NA);
		t = e;
		put8(&t, H_FLAGS, 0x9);
		CHECK0("flags: v2 with 0x8", &t, NULL, SFRAME_E_FLAGS, NA);
		t = e;
		put8(&t, H_FLAGS, 0x81);
		CHECK0("flags: v2 with 0x80", &t, NULL, SFRAME_E_FLAGS, NA);
		t = e3;
		put8(&t, H_FLAGS, 0x1);
		CHECK0("flags: v3 without PCREL", &t, NULL, SFRAME_E_FLAGS,
		       NA);
		t = e3;
		put8(&t, H_FLAGS, 0x4);
		CHECK0("flags: v3 without SORTED", &t, NULL, SFRAME_E_FLAGS,
		       NA);
		t = e3;
		put8(&t, H_FLAGS, 0x7);
		CHECK0("flags: v3 with FRAME_POINTER", &t, NULL,
		       SFRAME_E_FLAGS, NA);
		t = e3;
		put8(&t, H_FLAGS, 0);
		CHECK0("flags: v3 with none", &t, NULL, SFRAME_E_FLAGS, NA);
		t = e;
		put8(&t, H_FLAGS, 0);
		CHECK("flags: v2 not SORTED (valid header, no lookups)", &t,
		      NULL, OK, SFRAME_E_UNSORTED,
		      { 0x11000, SFRAME_E_UNSORTED, NULL });
	}

	/* Fixed RA offset. */
	{
		struct enc t;

		t = e;
		put8(&t, H_FIXED_RA, 0);
		CHECK0("fixed RA: v2 AMD64 missing", &t, NULL,
		       SFRAME_E_FIXED_RA, NA);
		t = e3;
		put8(&t, H_FIXED_RA, 0);
		CHECK0("fixed RA: v3 AMD64 missing", &t, NULL,
		       SFRAME_E_FIXED_RA, NA);
	}
	{
		struct sec_spec sa = aarch64(3, SFRAME_ABI_AARCH64_LE);
		struct sec_spec sz = s390x();
		struct enc t;

		/*
		 * Only a missing AMD64 offset is refused; a fixed RA offset
		 * elsewhere is taken as given (RA at CFA + it, FP the 2nd
		 * word).
		 */
		encode(&sa, &t);
		put8(&t, H_FIXED_RA, (uint8_t)-8);
		CHECK("fixed RA: set on aarch64 (accepted)", &t, NULL, OK, OK,
		      { 0x11000, OK, A0 "cfa=sp+0 " RA8 " fp=same keyb" });
		encode(&sz, &t);
		put8(&t, H_FIXED_RA, (uint8_t)-8);
		CHECK("fixed RA: set on s390x (accepted)", &t, NULL, OK, OK,
		      { 0x11000, OK, A0 "cfa=sp+160 " RA8 " fp=same" });
	}

	/* Counts and offsets. */
	{
		struct enc t;

		t = e;
		HDR32(&t, H_NUM_FDES, 0);
		CHECK0("num_fdes 0", &t, NULL, SFRAME_E_NO_FDES, NA);
		t = e;
		HDR32(&t, H_NUM_FRES, 0);
		CHECK0("num_fres 0", &t, NULL, SFRAME_E_NO_FDES, NA);
		t = e3;
		HDR32(&t, H_NUM_FRES, 0);
		HDR32(&t, H_NUM_FDES, 0);
		CHECK0("v3 num_fdes and num_fres 0", &t, NULL,
		       SFRAME_E_NO_FDES, NA);
		t = e;
		put8(&t, H_AUXLEN, 0xff);
		CHECK0("auxhdr_len 255 past the end", &t, NULL,
		       SFRAME_E_AUXHDR, NA);
		t = e;
		HDR32(&t, H_FDES_OFF, t.len);
		CHECK0("fdes_off past the end", &t, NULL,
		       SFRAME_E_FDES_BOUNDS, NA);
		t = e;
		HDR32(&t, H_FDES_OFF, 0xffffffff);
		CHECK0("fdes_off 0xffffffff", &t, NULL, SFRAME_E_FDES_BOUNDS,
		       NA);
		t = e;
		HDR32(&t, H_NUM_FDES, 0xffffffff);
		CHECK0("num_fdes 0xffffffff", &t, NULL, SFRAME_E_FDES_BOUNDS,
		       NA);
		t = e3;
		HDR32(&t, H_NUM_FDES, 0x10000000);	/* * 16 = 2^32 */
		CHECK0("v3 num_fdes * 16 = 2^32", &t, NULL,
		       SFRAME_E_FDES_BOUNDS, NA);
		t = e;
		HDR32(&t, H_FRES_OFF, 0xffffffff);
		CHECK0("fres_off 0xffffffff", &t, NULL, SFRAME_E_FRES_BOUNDS,
		       NA);
		t = e;
		HDR32(&t, H_FRE_LEN, 0xffffffff);
		CHECK0("fre_len 0xffffffff", &t, NULL, SFRAME_E_FRES_BOUNDS,
		       NA);
		t = e;
		HDR32(&t, H_FRES_OFF, 0x80000000);
		HDR32(&t, H_FRE_LEN, 0x80000000);
		CHECK0("fres_off + fre_len = 2^32 (32-bit wrap to 0)", &t,
		       NULL, SFRAME_E_FRES_BOUNDS, NA);
		t = e;
		HDR32(&t, H_FRES_OFF, 0xfffffff0);
		HDR32(&t, H_FRE_LEN, 0x20);
		CHECK0("fres_off + fre_len wraps 32 bits to a small value", &t,
		       NULL, SFRAME_E_FRES_BOUNDS, NA);
		t = e;
		HDR32(&t, H_NUM_FDES, 0xffffffff);
		HDR32(&t, H_NUM_FRES, 0xffffffff);
		HDR32(&t, H_FRE_LEN, 0xffffffff);
		HDR32(&t, H_FDES_OFF, 0xffffffff);
		HDR32(&t, H_FRES_OFF, 0xffffffff);
		CHECK0("every u32 field 0xffffffff", &t, NULL,
		       SFRAME_E_FDES_BOUNDS, NA);
		put8(&t, H_AUXLEN, 0xff);
		o = sized(UINT64_MAX);
		o.skip_exhaustive = 1;
		CHECK0("every field 0xff..., section size 2^64-1 (no 64-bit "
		       "wrap)", &t, &o, SFRAME_E_OVERLAP, NA);
		t = e;
		HDR32(&t, H_FRES_OFF, 0);
		CHECK0("FRE sub-section at the FDE array", &t, NULL,
		       SFRAME_E_OVERLAP, NA);
		t = e;
		HDR32(&t, H_FRES_OFF, t.fres - t.hdr_end - 1);
		CHECK0("FRE sub-section 1 byte into the FDEs", &t, NULL,
		       SFRAME_E_OVERLAP, NA);
		t = e;
		HDR32(&t, H_NUM_FDES, 4);	/* 4th FDE = the FREs */
		CHECK0("num_fdes one too many (FDEs run into the FREs)", &t,
		       NULL, SFRAME_E_OVERLAP, NA);
		t = e;
		HDR32(&t, H_NUM_FDES, 2);
		CHECK0("num_fdes one short", &t, NULL, OK,
		       SFRAME_E_FRE_TOTAL);
		t = e;
		HDR32(&t, H_NUM_FRES, 9);
		CHECK0("header num_fres one too many", &t, NULL, OK,
		       SFRAME_E_FRE_TOTAL);
		t = e3;
		HDR32(&t, H_NUM_FRES, 16);
		CHECK0("v3 header num_fres one short", &t, NULL, OK,
		       SFRAME_E_FRE_TOTAL);
		t = e3;
		HDR32(&t, H_FRE_LEN, t.fres_end - t.fres + 1);
		t.b[t.len++] = 0;
		CHECK0("v3 fre_len one byte more than the FREs", &t, NULL, OK,
		       SFRAME_E_FRE_TOTAL);
	}
	{
		struct sec_spec sg = amd64_v3();
		struct enc t;

		sg.blk_gap = 1;
		encode(&sg, &t);
		CHECK0("v3 unreferenced byte between FRE blocks", &t, NULL,
		       OK, SFRAME_E_FRE_TOTAL);
	}
}

static void fde_defects(void)
{
	struct sec_spec s2 = amd64_v2(2), s3 = amd64_v3(), s;
	struct enc e2, e3, t;
	struct opts o;

	encode(&s2, &e2);
	encode(&s3, &e3);

	/* Order. */
	t = e2;
	FDE32(&t, 1, F2_START, 0x0f00);
	CHECK0("v2 FDEs unsorted (raw)", &t, NULL, OK, SFRAME_E_UNSORTED);
	s = amd64_v2_pcrel();
	encode(&s, &t);
	put8(&t, H_FLAGS, SFRAME_F_FDE_SORTED);
	CHECK0("v2 same raw starts without PCREL: unsorted", &t, NULL, OK,
	       SFRAME_E_UNSORTED);
	s = amd64_v3_adjacent();
	encode(&s, &t);
	FDE64(&t, 2, F3_START, 0x11001 - (SEC + t.fde_off[2]));
	CHECK0("v3 absolute starts unsorted", &t, NULL, OK,
	       SFRAME_E_UNSORTED);
	s = amd64_v3_adjacent();
	encode(&s, &t);
	FDE64(&t, 1, F3_START, 0x11000 - (SEC + t.fde_off[1]) + 0x100);
	CHECK0("v3 raw starts increasing, absolute unsorted", &t, NULL, OK,
	       SFRAME_E_UNSORTED);

	/* Overlap. */
	t = e2;
	FDE32(&t, 0, F2_SIZE, 0x41);
	CHECK("v2 functions overlap by 1 byte", &t, NULL, OK,
	      SFRAME_E_FDE_OVERLAP,
	      { 0x11040, OK, F1 "cfa=sp+8 " RA8 " fp=same" });
	s = amd64_v3();
	s.fde[1].start = 0x11010;
	encode(&s, &t);
	CHECK0("v3 function starts inside the previous one", &t, NULL, OK,
	       SFRAME_E_FDE_OVERLAP);
	s = amd64_v3_adjacent();
	s.fde[1].start = 0x11000;
	encode(&s, &t);
	CHECK0("v3 two functions at the same address", &t, NULL, OK,
	       SFRAME_E_FDE_OVERLAP);

	/* Wrap. */
	s = amd64_v3();
	s.fde[5].start = 0xffffffffffffff00ULL;
	s.fde[5].size = 0x101;
	encode(&s, &t);
	CHECK("v3 function start + size wraps 2^64", &t, NULL, OK,
	      SFRAME_E_FUNC_WRAP,
	      { 0xffffffffffffff80ULL, SFRAME_E_FUNC_WRAP, NULL },
	      { 0x11000, OK, V0 "cfa=sp+8 " RA8 " fp=same" });
	s = amd64_v3();
	s.fde[5].start = 0xffffffffffffff00ULL;
	s.fde[5].size = 0x100;
	encode(&s, &t);
	CHECK0("v3 function ends exactly at 2^64", &t, NULL, OK,
	       SFRAME_E_FUNC_WRAP);
	memset(&o, 0, sizeof(o));
	o.addr_set = 1;
	o.addr = 0ULL - 0x2020;	/* FDE 2 at 2^64 - 0x20, size 0x40 */
	CHECK0("v2 section near 2^64: function wraps", &e2, &o, OK,
	       SFRAME_E_FUNC_WRAP);

	/* Text range. */
	memset(&o, 0, sizeof(o));
	o.text_start = 0x11001;
	o.text_end = 0x12040;
	CHECK("function starts before the text range", &e2, &o, OK,
	      SFRAME_E_FUNC_RANGE, { 0x11000, SFRAME_E_FUNC_RANGE, NULL },
	      { 0x12000, OK, F2 "cfa=sp+8 " RA8 " fp=same" });
	o.text_start = 0x11000;
	o.text_end = 0x1203f;
	CHECK("function ends after the text range", &e2, &o, OK,
	      SFRAME_E_FUNC_RANGE, { 0x11000, OK, NULL },
	      { 0x12000, SFRAME_E_FUNC_RANGE, NULL });
	o.text_start = 0x11000;
	o.text_end = 0x11340;
	CHECK("function wholly outside the text range", &e2, &o, OK,
	      SFRAME_E_FUNC_RANGE, { 0x12000, SFRAME_E_FUNC_RANGE, NULL });
	o.text_start = 0x20000;
	o.text_end = 0x30000;
	CHECK0("v3 text range misses every function", &e3, &o, OK,
	       SFRAME_E_FUNC_RANGE);

	/* Where the FREs are. */
	t = e2;
	FDE32(&t, 0, F2_FRE_OFF, t.fres_end - t.fres);
	CHECK("v2 FDE fre_off = fre_len", &t, NULL, OK, SFRAME_E_FDE_FRE_OFF,
	      { 0x11000, SFRAME_E_FDE_FRE_OFF, NULL });
	t = e2;
	FDE32(&t, 0, F2_FRE_OFF, t.fres_end - t.fres + 1);
	CHECK0("v2 FDE fre_off past fre_len", &t, NULL, OK,
	       SFRAME_E_FDE_FRE_OFF);
	t = e2;
	FDE32(&t, 1, F2_FRE_OFF, 0xffffffff);
	CHECK0("v2 FDE fre_off 0xffffffff", &t, NULL, OK,
	       SFRAME_E_FDE_FRE_OFF);
	t = e3;
	FDE32(&t, 0, F3_FRE_OFF, t.fres_end - t.fres - 3);
	CHECK0("v3 attribute record straddles the end", &t, NULL, OK,
	       SFRAME_E_FDE_FRE_OFF);
	t = e3;
	FDE32(&t, 0, F3_FRE_OFF, t.fres_end - t.fres - 5);
	CHECK0("v3 attribute record ends the sub-section, FREs none", &t,
	       NULL, OK, SFRAME_E_FDE_FRE_OFF);
	t = e3;
	FDE32(&t, 3, F3_FRE_OFF, 0xffffffff);
	CHECK("v3 FDE fre_off 0xffffffff", &t, NULL, OK,
	      SFRAME_E_FDE_FRE_OFF, { 0x41100, SFRAME_E_FDE_FRE_OFF, NULL },
	      { 0x41200, OK, V4 "cfa=r10+0 " RA8 " fp=same flex" });
	t = e3;
	FDE32(&t, 1, F3_FRE_OFF, t.blk_off[0] - t.fres);
	CHECK0("v3 two FDEs share an FRE block", &t, NULL, OK,
	       SFRAME_E_FRE_TOTAL);

	/* FDE info. */
	t = e2;
	FDE8(&t, 0, F2_INFO, 3);
	CHECK("v2 FRE type 3", &t, NULL, OK, SFRAME_E_FDE_INFO,
	      { 0x11000, SFRAME_E_FDE_INFO, NULL });
	t = e3;
	ATTR8(&t, 1, A3_INFO, 0x0f);
	CHECK0("v3 FRE type 15", &t, NULL, OK, SFRAME_E_FDE_INFO);
	t = e3;
	ATTR8(&t, 0, A3_INFO2, 2);
	CHECK0("v3 FDE type 2 in info2", &t, NULL, OK, SFRAME_E_FDE_INFO);
	t = e3;
	ATTR8(&t, 0, A3_INFO2, 0x1f);
	CHECK0("v3 FDE type 31 in info2", &t, NULL, OK, SFRAME_E_FDE_INFO);
	t = e2;
	FDE8(&t, 2, F2_REP, 0);
	CHECK("v2 PCMASK with rep_size 0", &t, NULL, OK, SFRAME_E_FDE_INFO,
	      { 0x12000, SFRAME_E_FDE_INFO, NULL });
	t = e3;
	ATTR8(&t, 3, A3_REP, 0);
	CHECK0("v3 PCMASK with rep_size 0", &t, NULL, OK, SFRAME_E_FDE_INFO);
	/* FDEs without FREs are valid (gas 2.47 emits them). */
	s = amd64_v2(2);
	s.fde[1].nfre = 0;
	encode(&s, &t);
	CHECK("valid v2 FDE with 0 FREs", &t, NULL, OK, OK,
	      { 0x11040, SFRAME_E_NO_FRE, NULL },
	      { 0x1133f, SFRAME_E_NO_FRE, NULL },
	      { 0x11000, OK, F0 "cfa=sp+8 " RA8 " fp=same" });
	s = amd64_v3();
	s.fde[2].nfre = 0;	/* its attribute record ends the section */
	s.fde[5].nfre = 0;
	encode(&s, &t);
	CHECK("valid v3 FDEs with 0 FREs (one attribute record last)", &t,
	      NULL, OK, OK, { 0x21100, SFRAME_E_NO_FRE, NULL },
	      { 0x41300, SFRAME_E_NO_FRE, NULL },
	      { 0x41200, OK, V4 "cfa=r10+0 " RA8 " fp=same flex" });
	t = e2;
	FDE32(&t, 1, F2_NUM_FRES, 0);
	CHECK("v2 FDE num_fres 0 with its FREs left over", &t, NULL, OK,
	      SFRAME_E_FRE_TOTAL, { 0x11040, SFRAME_E_NO_FRE, NULL });
	t = e3;
	ATTR16(&t, 5, A3_NUM_FRES, 0);
	CHECK0("v3 FDE num_fres 0 with its FREs left over", &t, NULL, OK,
	       SFRAME_E_FRE_TOTAL);
	t = e2;
	FDE32(&t, 0, F2_NUM_FRES, 5);	/* FDE 0's block is last */
	CHECK("v2 FDE num_fres runs past the sub-section", &t, NULL, OK,
	      SFRAME_E_FRE_BOUNDS,
	      { 0x1103f, SFRAME_E_FRE_BOUNDS, NULL },
	      { 0x11004, OK, F0 "cfa=fp+16 " RA8 " fp=*(cfa-16)" });
	t = e3;
	ATTR16(&t, 2, A3_NUM_FRES, 0xffff);	/* FDE 2's block is last */
	CHECK0("v3 attribute num_fres 0xffff", &t, NULL, OK,
	       SFRAME_E_FRE_BOUNDS);
}

static void fre_defects(void)
{
	struct sec_spec s;
	struct enc t;

	/* Order and start. */
	s = amd64_v2(2);
	s.fde[0].fre[2].start = 1;
	encode(&s, &t);
	CHECK("v2 FRE starts equal", &t, NULL, OK, SFRAME_E_FRE_ORDER,
	      { 0x11000, OK, F0 "cfa=sp+8 " RA8 " fp=same" },
	      { 0x11001, SFRAME_E_FRE_ORDER, NULL },
	      { 0x11004, SFRAME_E_FRE_ORDER, NULL });
	s = amd64_v2(2);
	s.fde[0].fre[2].start = 0;
	encode(&s, &t);
	CHECK0("v2 FRE starts decreasing", &t, NULL, OK, SFRAME_E_FRE_ORDER);
	s = amd64_v3();
	s.fde[2].fre[1].start = 0;
	encode(&s, &t);
	CHECK0("v3 4-byte FRE starts equal", &t, NULL, OK,
	       SFRAME_E_FRE_ORDER);
	s = amd64_v2(2);
	s.fde[0].fre[3].start = 0x40;
	encode(&s, &t);
	CHECK("v2 FRE start = function size", &t, NULL, OK,
	      SFRAME_E_FRE_START, { 0x1103f, ANY, NULL },
	      { 0x11000, OK, F0 "cfa=sp+8 " RA8 " fp=same" });
	s = amd64_v3();
	s.fde[0].fre[2].start = 0xff;
	encode(&s, &t);
	CHECK0("v3 FRE start past the function", &t, NULL, OK,
	       SFRAME_E_FRE_START);
	s = amd64_v3();
	s.fde[2].fre[1].start = 0xffffffff;
	encode(&s, &t);
	CHECK0("v3 4-byte FRE start 0xffffffff", &t, NULL, OK,
	       SFRAME_E_FRE_START);
	s = amd64_v2(2);
	s.fde[2].fre[1].start = 16;
	encode(&s, &t);
	CHECK("v2 PCMASK FRE start = rep_size", &t, NULL, OK,
	      SFRAME_E_FRE_START, { 0x12000, ANY, NULL },
	      { 0x1200f, ANY, NULL });
	s = amd64_v2(1);
	s.fde[2].fre[1].start = 0x20;	/* < size, >= the implied 16 */
	encode(&s, &t);
	CHECK0("v1 PCMASK FRE start past the implied 16-byte block", &t,
	       NULL, OK, SFRAME_E_FRE_START);
	s = amd64_v3();
	s.fde[3].fre[1].start = 0x20;
	encode(&s, &t);
	CHECK0("v3 PCMASK FRE start past rep_size (inside the function)",
	       &t, NULL, OK, SFRAME_E_FRE_START);

	/* Data words. */
	s = amd64_v2(2);
	s.fde[0].fre[0].wsz = 3;
	encode(&s, &t);
	CHECK("v2 data word size 3", &t, NULL, OK, SFRAME_E_FRE_SIZE,
	      { 0x11000, SFRAME_E_FRE_SIZE, NULL });
	s = amd64_v3();
	s.fde[4].fre[2].wsz = 3;
	encode(&s, &t);
	CHECK("v3 FLEX data word size 3", &t, NULL, OK, SFRAME_E_FRE_SIZE,
	      { 0x41200, OK, NULL }, { 0x41208, ANY, NULL },
	      { 0x41210, SFRAME_E_FRE_SIZE, NULL });
	s = amd64_v2(2);
	s.fde[0].fre[1].n = 3;
	s.fde[0].fre[1].w[2] = -24;
	encode(&s, &t);
	CHECK("v2 AMD64 3 data words", &t, NULL, OK, SFRAME_E_FRE_COUNT,
	      { 0x11001, SFRAME_E_FRE_COUNT, NULL });
	s = amd64_v3();
	s.fde[0].fre[0].n = 15;
	encode(&s, &t);
	CHECK0("v3 AMD64 15 data words", &t, NULL, OK, SFRAME_E_FRE_COUNT);
	s = aarch64(3, SFRAME_ABI_AARCH64_LE);
	s.fde[0].fre[1].n = 4;
	encode(&s, &t);
	CHECK0("v3 aarch64 4 data words", &t, NULL, OK, SFRAME_E_FRE_COUNT);
	s = s390x();
	s.fde[0].fre[2].n = 4;
	encode(&s, &t);
	CHECK0("v2 s390x 4 data words", &t, NULL, OK, SFRAME_E_FRE_COUNT);

	/* FLEX. */
	s = amd64_v3();
	s.fde[4].fre[0].n = 1;
	encode(&s, &t);
	CHECK("FLEX N=1", &t, NULL, OK, SFRAME_E_FRE_FLEX,
	      { 0x41200, SFRAME_E_FRE_FLEX, NULL },
	      { 0x41208, OK, V4 "cfa=*(r6-8) " RA8 " fp=*(r6+0) flex" });
	s = amd64_v3();
	s.fde[4].fre[0].w[0] = 0x50;	/* r10, not register-based */
	encode(&s, &t);
	CHECK0("FLEX CFA control without reg_p", &t, NULL, OK,
	       SFRAME_E_FRE_FLEX);
	s = amd64_v3();
	s.fde[4].fre[1].w[0] = 0;
	encode(&s, &t);
	CHECK0("FLEX CFA control 0", &t, NULL, OK, SFRAME_E_FRE_FLEX);
	s = amd64_v3();
	s.fde[4].fre[3].n = 3;	/* 0x39, 8, 0x51 and no RA offset */
	encode(&s, &t);
	CHECK("FLEX RA pair truncated", &t, NULL, OK, SFRAME_E_FRE_FLEX,
	      { 0x41218, SFRAME_E_FRE_FLEX, NULL });
	s = amd64_v3();
	s.fde[4].fre[1].n = 4;	/* 0x33, -8, 0, 0x33 and no FP offset */
	encode(&s, &t);
	CHECK0("FLEX FP pair truncated after RA padding", &t, NULL, OK,
	       SFRAME_E_FRE_FLEX);
	s = amd64_v3();
	s.fde[4].fre[2].n = 7;
	s.fde[4].fre[2].w[6] = 5;
	encode(&s, &t);
	CHECK0("FLEX dangling 7th word", &t, NULL, OK, SFRAME_E_FRE_FLEX);
	s = amd64_v3();
	s.fde[4].fre[1].n = 6;
	s.fde[4].fre[1].w[5] = 9;
	encode(&s, &t);
	CHECK0("FLEX dangling word after padding and FP pair", &t, NULL, OK,
	       SFRAME_E_FRE_FLEX);
	s = amd64_v3();
	s.fde[4].fre[4].wsz = 2;
	s.fde[4].fre[4].w[0] = (int32_t)0x80000007;	/* huge register */
	encode(&s, &t);
	CHECK("FLEX 4-byte control word, reg_p, large register number", &t,
	      NULL, OK, ANY, { 0x41220, ANY, NULL });

}

/*
 * Cases that, when the decoder is wrong, fail only under UBSan (which then
 * stops the run): last, so that everything else has run first.
 */
static void ub_cases(void)
{
	struct sec_spec s;
	struct enc t;

	/* s390x CFA offsets near the 32-bit limits (v * 8 + 160). */
	s = s390x();
	s.fde[0].fre[1].wsz = 2;
	s.fde[0].fre[1].w[0] = 0x7fffffff;
	s.fde[0].fre[2].wsz = 2;
	s.fde[0].fre[2].w[0] = (int32_t)0x80000000;
	encode(&s, &t);
	CHECK("s390x CFA word 0x7fffffff / 0x80000000 (no signed overflow)",
	      &t, NULL, OK, SFRAME_E_FRE_RANGE,
	      { 0x11006, SFRAME_E_FRE_RANGE, NULL },
	      { 0x1100c, ANY, NULL });

	/* The same in a v3 FLEX FDE (CFA = r15 + scaled offset). */
	s = s390x();
	s.version = 3;
	s.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	s.fde[0].info2 = 1;
	s.fde[0].nfre = 1;
	s.fde[0].fre[0] = (struct fre_spec)FLEXW(0, 2, 2, 0x79, 0x7fffffff);
	encode(&s, &t);
	CHECK("s390x FLEX CFA word 0x7fffffff (no signed overflow)", &t,
	      NULL, OK, SFRAME_E_FRE_RANGE,
	      { 0x11000, SFRAME_E_FRE_RANGE, NULL });
}

/* Lookups after the section changed under a validated sframe_sec. */
static void mutation_defects(void)
{
	struct sec_spec s3 = amd64_v3();
	struct enc e3, m;
	struct opts o;

	encode(&s3, &e3);
	memset(&o, 0, sizeof(o));
	o.alt = m.b;
	o.skip_exhaustive = 1;

	m = e3;
	FDE32(&m, 0, F3_FRE_OFF, 0xffffffff);
	CHECK("after validation: FDE fre_off 0xffffffff", &e3, &o, OK, OK,
	      { 0x11000, SFRAME_E_FDE_FRE_OFF, NULL },
	      { 0x11100, OK, V1 "cfa=sp+8 " RA8 " fp=same" });
	m = e3;
	put8(&m, FRE_INFO(&e3, 0, 0), e3.b[FRE_INFO(&e3, 0, 0)] | 0x60);
	CHECK("after validation: data word size 3", &e3, &o, OK, OK,
	      { 0x11000, SFRAME_E_FRE_SIZE, NULL },
	      { 0x11001, SFRAME_E_FRE_SIZE, NULL });
	m = e3;
	put8(&m, FRE_INFO(&e3, 0, 1), e3.b[FRE_INFO(&e3, 0, 1)] | 0x1e);
	CHECK("after validation: 15 data words", &e3, &o, OK, OK,
	      { 0x11000, ANY, NULL }, { 0x11001, ERR, NULL });
	m = e3;
	ATTR8(&m, 0, A3_INFO, 3);
	CHECK("after validation: FRE type 3", &e3, &o, OK, OK,
	      { 0x11000, SFRAME_E_FDE_INFO, NULL });
	m = e3;
	ATTR8(&m, 3, A3_REP, 0);
	CHECK("after validation: PCMASK rep_size 0", &e3, &o, OK, OK,
	      { 0x41100, SFRAME_E_FDE_INFO, NULL });
	m = e3;
	put8(&m, e3.fre_off[0][1], 0);
	CHECK("after validation: FRE starts equal", &e3, &o, OK, OK,
	      { 0x11000, ANY, NULL },
	      { 0x11001, SFRAME_E_FRE_ORDER, NULL });
	m = e3;
	put8(&m, e3.data_off[4][0], 0);
	CHECK("after validation: FLEX CFA control 0", &e3, &o, OK, OK,
	      { 0x41200, SFRAME_E_FRE_FLEX, NULL });
	m = e3;
	FDE32(&m, 0, F3_SIZE, 0xffffffff);
	CHECK("after validation: function size 0xffffffff", &e3, &o, OK, OK,
	      { 0x11000, OK, "f=0x11000+0xffffffff cfa=sp+8 " RA8
		" fp=same" });
	m = e3;
	ATTR16(&m, 2, A3_NUM_FRES, 0xffff);	/* the last block */
	CHECK("after validation: num_fres 0xffff in the last block", &e3,
	      &o, OK, OK, { 0x31100, SFRAME_E_FRE_BOUNDS, NULL },
	      { 0x21100, OK, V2 "cfa=sp+8 " RA8 " fp=same signal" });
	m = e3;
	HDR32(&m, H_NUM_FDES, 0xffffffff);
	HDR32(&m, H_FRE_LEN, 0xffffffff);
	CHECK("after init: header fields are not re-read", &e3, &o, OK, OK,
	      V3_LOOKUPS);
	m = e3;
	memset(m.b + e3.fres, 0xff, e3.fres_end - e3.fres);
	CHECK("after validation: FRE sub-section all 0xff", &e3, &o, OK, OK,
	      { 0x11000, ANY, NULL }, { 0x21100, ANY, NULL },
	      { 0x41200, ANY, NULL }, { 0x41304, ANY, NULL });
	m = e3;
	memset(m.b + e3.fdes, 0, e3.fres - e3.fdes);
	CHECK("after validation: FDE array zeroed", &e3, &o, OK, OK,
	      { 0x11000, ANY, NULL }, { SEC + 0x1c, ANY, NULL });

	/*
	 * A race the binary search alone cannot see: FDE 1's start is read
	 * once by the search (above pc), then lowered below FDE 0's before
	 * the check of the next FDE re-reads it.  Reader only.
	 */
	{
		struct sec_spec sa = amd64_v3_adjacent();
		struct enc ea;

		sa.nfde = 2;
		encode(&sa, &ea);
		m = ea;
		FDE64(&m, 1, F3_START, 0x10000 - (SEC + ea.fde_off[1]));
		o.reader_only = 1;
		o.alt_from = 2;
		CHECK("reader: next FDE re-read lower than the found one", &ea,
		      &o, OK, OK, { 0x11000, SFRAME_E_UNSORTED, NULL });
		o.reader_only = 0;
		o.alt_from = 0;
	}
}

/* The FDE index (sframe_index_words() and sframe_index_build()). */
static void index_cases(void)
{
	struct sec_spec s = amd64_v3_adjacent();
	struct enc e;
	int i;

	/*
	 * Three functions in the last 256 bytes below 2^64: the buckets
	 * past the last function start at base + (b << shift), which wraps.
	 * Every case also runs with an index, so this one checks the
	 * lookups with it against the hand-computed answers.
	 */
	s.nfde = 3;
	for (i = 0; i < 3; i++)
		s.fde[i].size = 0x20;
	s.fde[0].start = 0xffffffffffffff00ULL;
	s.fde[1].start = 0xffffffffffffff80ULL;
	s.fde[2].start = 0xffffffffffffffc0ULL;
	s.fde[1].nfre = 1;
	s.fde[3].nfre = 0;
	s.fde[2].fre[0].w[0] = 24;
	encode(&s, &e);
	CHECK("index: functions just below 2^64", &e, NULL, OK, OK,
	      { 0xffffffffffffff00ULL, OK,
		"f=0xffffffffffffff00+0x20 cfa=sp+8 " RA8 " fp=same" },
	      { 0xffffffffffffff84ULL, OK,
		"f=0xffffffffffffff80+0x20 cfa=sp+8 " RA8 " fp=same" },
	      { 0xffffffffffffffc4ULL, OK,
		"f=0xffffffffffffffc0+0x20 cfa=sp+24 " RA8 " fp=same" },
	      { 0xffffffffffffffe0ULL, NF, NULL },
	      { 0xffffffffffffff20ULL, NF, NULL });

	/*
	 * "About one bucket per function": a valid section of two
	 * functions far apart must not ask for a huge index.
	 */
	{
		struct sframe_sec sec;
		uint8_t shift = 0;
		uint32_t words;
		int err;

		s = amd64_v3_adjacent();
		s.nfde = 2;
		s.fde[1].start = 0xffffffff00000000ULL;
		encode(&s, &e);
		CHECK("index: two functions 2^64 - 2^32 apart", &e, NULL, OK,
		      OK, { 0x11001, OK, "f=0x11000+0x2 cfa=sp+8 " RA8
			    " fp=same" },
		      { 0xffffffff00000001ULL, OK, "f=0xffffffff00000000+0x2 "
			"cfa=sp+16 " RA8 " fp=same" },
		      { 0x8000000000000000ULL, NF, NULL });
		err = sframe_init(&sec, e.addr, e.len, e.b, NULL, NULL);
		if (!err)
			err = sframe_validate(&sec);
		words = err ? 0 : sframe_index_words(&sec, &shift);
		n_test++;
		if (!err && words <= sec.hdr.num_fdes + 1) {
			n_pass++;
			printf("ok %d - index: size bounded by the FDE count\n",
			       n_test);
		} else {
			n_fail++;
			printf("not ok %d - index: size bounded by the FDE "
			       "count: validate %s, %u words (%llu bytes) for "
			       "%u FDEs, shift %u\n", n_test, cname(err), words,
			       (unsigned long long)words * 4, sec.hdr.num_fdes,
			       shift);
		}
	}
}

static void reader_defects(void)
{
	struct sec_spec s3 = amd64_v3();
	struct enc e3;
	struct opts o;

	encode(&s3, &e3);
	memset(&o, 0, sizeof(o));
	o.reader_only = 1;
	o.skip_exhaustive = 1;

	o.fail_read = 1;
	CHECK0("reader fails on the header", &e3, &o, SFRAME_E_READ, NA);
	o.fail_read = 2;
	CHECK0("reader fails on the 1st FDE", &e3, &o, OK, SFRAME_E_READ);
	o.fail_read = 4;
	CHECK0("reader fails during validation", &e3, &o, OK, SFRAME_E_READ);
	o.fail_read = 0;
	o.fail_lookups = 1;
	CHECK("reader fails during lookups", &e3, &o, OK, OK,
	      { 0x11000, SFRAME_E_READ, NULL },
	      { 0x41200, SFRAME_E_READ, NULL });
	o.fail_lookups = 0;
	o.no_reader = 1;
	CHECK0("no memory and no reader", &e3, &o, SFRAME_E_READ, NA);
}

/*
 * Every byte of each valid section replaced by 0x00, 0xff, b ^ 0x01 and
 * b ^ 0x80, before and after validation: no crash, no read outside the
 * section, codes in range, both access modes identical, and a section
 * that still validates still answers consistently.
 */
static void sweep(const char *name, const struct sec_spec *s,
		  const struct lookup *lk, int nlk)
{
	static const int ops[] = { 0x000, 0x0ff, 0x101, 0x180 };
	struct enc e, t;
	struct opts o;
	struct result rm, rr, ri;
	char why[1024] = "", msg[256];
	size_t p;
	unsigned int k;
	int ok = 1, validated = 0;

	encode(s, &e);
	for (p = 0; p < e.len && ok; p++) {
		for (k = 0; k < ARRAY_SIZE(ops) && ok; k++) {
			int after;

			t = e;
			t.b[p] = ops[k] & 0x100 ? e.b[p] ^ (ops[k] & 0xff) :
						  (uint8_t)ops[k];
			for (after = 0; after < 2 && ok; after++) {
				memset(&o, 0, sizeof(o));
				if (after)
					o.alt = t.b;
				run_mode(M_MEM, after ? &e : &t, &o, lk, nlk,
					 &rm);
				run_mode(M_READER, after ? &e : &t, &o, lk, nlk,
					 &rr);
				run_mode(M_MEM | M_INDEX, after ? &e : &t, &o,
					 lk, nlk, &ri);
				if (rm.problem[0] || rr.problem[0] ||
				    ri.problem[0]) {
					snprintf(why, sizeof(why), "%s%s",
						 rm.problem[0] ? rm.problem :
						 rr.problem[0] ? rr.problem :
						 ri.problem,
						 ri.problem[0] ? " (index)" :
						 "");
					ok = 0;
				} else if (!same_result(&rm, &rr, nlk, why,
							sizeof(why))) {
					ok = 0;
				} else if (!after && rm.val == SFRAME_OK &&
					   !same_result(&rm, &ri, nlk, why,
							sizeof(why))) {
					ok = 0;
				}
				if (!ok)
					snprintf(msg, sizeof(msg), "byte %zu "
						 "op 0x%x%s: ", p, ops[k],
						 after ? " after validation" :
							 "");
				if (!after && !rm.val)
					validated++;
			}
		}
	}
	n_test++;
	if (ok) {
		n_pass++;
		printf("ok %d - sweep %s (%d mutants still valid)\n", n_test,
		       name, validated);
	} else {
		n_fail++;
		printf("not ok %d - sweep %s: %s%s\n", n_test, name, msg, why);
	}
}

#define SWEEP(name, spec, ...)						\
	do {								\
		static const struct lookup lk_[] = { __VA_ARGS__ };	\
		struct sec_spec s_ = spec;				\
		sweep(name, &s_, lk_, ARRAY_SIZE(lk_));			\
	} while (0)

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v")) {
			verbose = 1;
		} else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
			seed_dir = argv[++i];
			if (mkdir(seed_dir, 0777) && errno != EEXIST) {
				perror(seed_dir);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: malformed-test [-v] "
				"[--seeds DIR]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	valid_sections();
	header_defects();
	fde_defects();
	fre_defects();
	mutation_defects();
	reader_defects();
	index_cases();
	SWEEP("v1 amd64", amd64_v2(1), AMD64_V2_LOOKUPS);
	SWEEP("v2 amd64", amd64_v2(2), AMD64_V2_LOOKUPS);
	SWEEP("v2 PCREL", amd64_v2_pcrel(), PCREL_LOOKUPS);
	SWEEP("v3 amd64", amd64_v3(), V3_LOOKUPS);
	SWEEP("v3 aarch64", aarch64(3, SFRAME_ABI_AARCH64_LE),
	      AARCH64_LOOKUPS);
	SWEEP("v2 aarch64 BE", aarch64(2, SFRAME_ABI_AARCH64_BE),
	      AARCH64_LOOKUPS);
	SWEEP("v2 s390x", s390x(), S390X_LOOKUPS);
	ub_cases();

	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
