// SPDX-License-Identifier: GPL-2.0-only OR LGPL-2.1-or-later
/*
 * SFrame decoding, freestanding (see sframe.h).
 *
 * Reading.  All bytes come through sf_get(), which bounds-checks the
 * request against a limit inside the section and then either points into
 * the addressable section or fills a small window through the reader.
 * Nothing read is trusted: a lookup re-checks every offset, count and
 * order it relies on, so a section that changed since sframe_validate()
 * only makes the lookup fail.
 */
#include "sframe.h"

#define SFRAME_V3_ATTR_SIZE	5	/* u16 num_fres, info, info2, rep_size */

/* FDE info (all versions) */
#define FDE_FRE_TYPE(info)	((info) & 0xf)
#define FDE_PC_MASK(info)	(((info) >> 4) & 0x1)
#define FDE_PAUTH_KEY(info)	(((info) >> 5) & 0x1)
#define FDE_SIGNAL(info)	(((info) >> 7) & 0x1)	/* v3 */
/* FDE info2 (v3) */
#define FDE_TYPE(info2)		((info2) & 0x1f)
#define FDE_TYPE_DEFAULT	0
#define FDE_TYPE_FLEX		1
/* FRE info */
#define FRE_BASE_SP(info)	((info) & 0x1)
#define FRE_COUNT(info)		(((info) >> 1) & 0xf)
#define FRE_WORD_SIZE(info)	(((info) >> 5) & 0x3)
#define FRE_MANGLED_RA(info)	(((info) >> 7) & 0x1)
/* FLEX control words */
#define FLEX_REG_P(c)		((c) & 0x1)
#define FLEX_DEREF_P(c)		(((c) >> 1) & 0x1)
#define FLEX_REGNUM(c)		((c) >> 3)
/* s390x encodings (default FDEs) */
#define S390X_IS_REGNUM(v)	((v) & 1)
#define S390X_REGNUM(v)		((uint32_t)(v) >> 1)

/* DWARF register numbers stay below the special bases (SFRAME_BASE_*). */
#define SF_MAX_REGNUM		(SFRAME_BASE_SP - 1)

/*
 * A CFA offset of the FRE: s390x stores it scaled, (v * 8) + 160, which
 * must still fit the rule's 32 bits.
 */
static int sf_cfa_off(const struct sframe_sec *sec, int32_t v, int32_t *off)
{
	int64_t o = v;

	if (sec->hdr.abi == SFRAME_ABI_S390X_BE)
		o = o * 8 + 160;
	if ((int64_t)(int32_t)o != o)
		return SFRAME_E_FRE_RANGE;
	*off = (int32_t)o;
	return SFRAME_OK;
}

/* v1 FDEs have no repetition block size; PLT stubs are 16 bytes. */
#define SFRAME_V1_REP_SIZE	16

/*
 * A read window: bytes [off, off + avail) of the section are at p.  For
 * addressable sections p points into them and nothing is copied.
 */
struct sf_win {
	const struct sframe_sec *s;
	uint64_t off;
	uint32_t avail;
	const uint8_t *p;
	uint8_t buf[SFRAME_READ_MAX];
};

static void sf_win_init(struct sf_win *w, const struct sframe_sec *s)
{
	w->s = s;
	w->off = 0;
	w->avail = 0;
	w->p = NULL;
}

/* The kernel defines noinline; freestanding user-space builds do not. */
#ifndef noinline
#define noinline __attribute__((__noinline__))
#endif

/* sf_get() through the reader: fill the window at @off. */
static noinline int
sf_get_slow(struct sf_win *w, uint64_t off, uint32_t n, uint64_t lim,
	    const uint8_t **out)
{
	const struct sframe_sec *s = w->s;
	uint64_t len;

	if (w->avail && off >= w->off && off + n <= w->off + w->avail) {
		*out = w->p + (off - w->off);
		return SFRAME_OK;
	}
	len = lim - off;
	if (len > SFRAME_READ_MAX)
		len = SFRAME_READ_MAX;
	if (s->read(s->ctx, off, w->buf, (uint32_t)len)) {
		w->avail = 0;
		return SFRAME_E_READ;
	}
	w->off = off;
	w->avail = (uint32_t)len;
	w->p = w->buf;
	*out = w->buf;
	return SFRAME_OK;
}

/*
 * Point *@out at @n bytes at section offset @off, which must lie below
 * @lim (itself inside the section).  @n is at most SFRAME_READ_MAX.
 * Addressable sections take the inline path: a bounds check and an add.
 */
static inline int sf_get(struct sf_win *w, uint64_t off, uint32_t n,
			 uint64_t lim, const uint8_t **out, int bounds_err)
{
	if (off > lim || n > lim - off)
		return bounds_err;
	if (w->s->mem) {
		*out = w->s->mem + off;
		return SFRAME_OK;
	}
	return sf_get_slow(w, off, n, lim, out);
}

/*
 * Fields in the section's byte order (@be), loaded whole and swapped when
 * the host's order differs.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SF_SWAP(be)	(be)
#else
#define SF_SWAP(be)	(!(be))
#endif

static inline uint16_t get16(const uint8_t *p, int be)
{
	uint16_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return SF_SWAP(be) ? __builtin_bswap16(v) : v;
}

static inline uint32_t get32(const uint8_t *p, int be)
{
	uint32_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return SF_SWAP(be) ? __builtin_bswap32(v) : v;
}

static inline uint64_t get64(const uint8_t *p, int be)
{
	uint64_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return SF_SWAP(be) ? __builtin_bswap64(v) : v;
}

/* An unsigned field of 1, 2 or 4 bytes. */
static uint32_t getu(const uint8_t *p, uint32_t size, int be)
{
	if (size == 1)
		return p[0];
	if (size == 2)
		return get16(p, be);
	return get32(p, be);
}

/* A signed field of 1, 2 or 4 bytes. */
static int32_t gets(const uint8_t *p, uint32_t size, int be)
{
	if (size == 1)
		return (int8_t)p[0];
	if (size == 2)
		return (int16_t)get16(p, be);
	return (int32_t)get32(p, be);
}

/* Bytes of one FDE (v3: of one FDE index entry), by version. */
static uint32_t sframe_fde_size(uint8_t version)
{
	switch (version) {
	case SFRAME_VERSION_1:
		return 17;
	case SFRAME_VERSION_2:
		return 20;
	default:
		return 16;
	}
}

int sframe_parse_header(const uint8_t *buf, uint64_t section_size,
			struct sframe_header *hdr)
{
	uint64_t hdr_end, fdes_end, fres_end;
	uint8_t allowed;
	int be;

	if (section_size < SFRAME_HEADER_SIZE)
		return SFRAME_E_TRUNCATED;

	/* The magic tells the byte order of every other field. */
	if (get16(buf, 0) == SFRAME_MAGIC)
		be = 0;
	else if (get16(buf, 1) == SFRAME_MAGIC)
		be = 1;
	else
		return SFRAME_E_MAGIC;

	hdr->version = buf[2];
	hdr->flags = buf[3];
	hdr->abi = buf[4];
	hdr->big_endian = (uint8_t)be;
	hdr->cfa_fixed_fp_offset = (int8_t)buf[5];
	hdr->cfa_fixed_ra_offset = (int8_t)buf[6];
	hdr->auxhdr_len = buf[7];
	hdr->num_fdes = get32(buf + 8, be);
	hdr->num_fres = get32(buf + 12, be);
	hdr->fre_len = get32(buf + 16, be);
	hdr->fdes_off = get32(buf + 20, be);
	hdr->fres_off = get32(buf + 24, be);

	if (hdr->version < SFRAME_VERSION_1 || hdr->version > SFRAME_VERSION_3)
		return SFRAME_E_VERSION;
	hdr->fde_size = sframe_fde_size(hdr->version);

	switch (hdr->abi) {
	case SFRAME_ABI_AARCH64_BE:
	case SFRAME_ABI_S390X_BE:
		if (!be)
			return SFRAME_E_ABI;
		break;
	case SFRAME_ABI_AARCH64_LE:
	case SFRAME_ABI_AMD64_LE:
		if (be)
			return SFRAME_E_ABI;
		break;
	default:
		return SFRAME_E_ABI;
	}

	/*
	 * v1 and v2 define SORTED, FRAME_POINTER and (v2 erratum, binutils
	 * 2.45) FUNC_START_PCREL; v3 requires SORTED and PCREL and nothing else.
	 */
	allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER;
	if (hdr->version >= SFRAME_VERSION_2)
		allowed |= SFRAME_F_FDE_FUNC_START_PCREL;
	if (hdr->flags & ~allowed)
		return SFRAME_E_FLAGS;
	if (hdr->version == SFRAME_VERSION_3 &&
	    hdr->flags != (SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL))
		return SFRAME_E_FLAGS;

	/* AMD64 always saves the RA at a fixed CFA offset. */
	if (hdr->abi == SFRAME_ABI_AMD64_LE && !hdr->cfa_fixed_ra_offset)
		return SFRAME_E_FIXED_RA;

	hdr_end = SFRAME_HEADER_SIZE + (uint64_t)hdr->auxhdr_len;
	if (hdr_end > section_size)
		return SFRAME_E_AUXHDR;

	if (!hdr->num_fdes || !hdr->num_fres)
		return SFRAME_E_NO_FDES;

	/* 64-bit sums of 32-bit values: no overflow possible. */
	fdes_end = hdr_end + hdr->fdes_off +
		   (uint64_t)hdr->num_fdes * hdr->fde_size;
	if (fdes_end > section_size)
		return SFRAME_E_FDES_BOUNDS;
	fres_end = hdr_end + hdr->fres_off + (uint64_t)hdr->fre_len;
	if (fres_end > section_size)
		return SFRAME_E_FRES_BOUNDS;
	if (hdr_end + hdr->fres_off < fdes_end)
		return SFRAME_E_OVERLAP;

	hdr->size = fres_end;
	return SFRAME_OK;
}

int sframe_init(struct sframe_sec *sec, uint64_t addr, uint64_t size,
		const uint8_t *mem, sframe_read_fn read, void *ctx)
{
	uint8_t buf[SFRAME_HEADER_SIZE];
	const uint8_t *p = buf;
	uint64_t hdr_end;
	int err;

	sec->addr = addr;
	sec->size = size;
	sec->mem = mem;
	sec->read = read;
	sec->ctx = ctx;
	sec->text_start = 0;
	sec->text_end = 0;
	sec->index = NULL;
	sec->max_fres = 0;
	sec->budget = NULL;
	sec->resched = NULL;

	if (size < SFRAME_HEADER_SIZE)
		return SFRAME_E_TRUNCATED;
	if (mem)
		p = mem;
	else if (!read || read(ctx, 0, buf, SFRAME_HEADER_SIZE))
		return SFRAME_E_READ;
	err = sframe_parse_header(p, size, &sec->hdr);
	if (err)
		return err;

	hdr_end = SFRAME_HEADER_SIZE + (uint64_t)sec->hdr.auxhdr_len;
	sec->fdes = hdr_end + sec->hdr.fdes_off;
	sec->fres = hdr_end + sec->hdr.fres_off;
	sec->fres_end = sec->fres + sec->hdr.fre_len;
	return SFRAME_OK;
}

/*
 * Spend @n units of a lookup's budget (sframe_sec.budget).
 * Return: 0, or SFRAME_E_BUDGET when there are not that many left.
 */
static inline int sf_spend(const struct sframe_sec *sec, uint32_t n)
{
	if (!sec->budget)
		return SFRAME_OK;
	if (*sec->budget < n) {
		*sec->budget = 0;
		return SFRAME_E_BUDGET;
	}
	*sec->budget -= n;
	return SFRAME_OK;
}

/*
 * Count @n units of work of a loop over a whole section and call the
 * section's resched every SFRAME_RESCHED_EVERY of them.
 * Return: 0, or SFRAME_E_READ when resched says stop.
 */
static int sf_resched(const struct sframe_sec *sec, uint64_t *work, uint64_t n)
{
	*work += n;
	if (*work < SFRAME_RESCHED_EVERY)
		return SFRAME_OK;
	*work = 0;
	return sec->resched && sec->resched() ? SFRAME_E_READ : SFRAME_OK;
}

/* Section offset of FDE @i; i < num_fdes, so it lies inside the section. */
static uint64_t sf_fde_off(const struct sframe_sec *sec, uint32_t i)
{
	return sec->fdes + (uint64_t)i * sec->hdr.fde_size;
}

/* The absolute start address of FDE @i from its first field. */
static uint64_t sf_func_start(const struct sframe_sec *sec, uint32_t i,
			      const uint8_t *p)
{
	int be = sec->hdr.big_endian;
	uint64_t base = sec->addr;

	/*
	 * Without PCREL (every v1, v2 up to binutils 2.44) the field counts
	 * from the start of the section; with it (2.45 v2, all v3), from the
	 * field itself, the first of its FDE.
	 */
	if (sec->hdr.flags & SFRAME_F_FDE_FUNC_START_PCREL)
		base += sf_fde_off(sec, i);
	if (sec->hdr.version == SFRAME_VERSION_3)
		return base + get64(p, be);
	return base + (uint64_t)(int64_t)(int32_t)get32(p, be);
}

static int sf_fde_decode(const struct sframe_sec *sec, struct sf_win *w,
			 uint32_t i, struct sframe_fde *fde)
{
	const struct sframe_header *h = &sec->hdr;
	int be = h->big_endian;
	uint32_t fre_off;
	const uint8_t *p;
	uint8_t info = 0, info2 = FDE_TYPE_DEFAULT;
	int err;

	err = sf_get(w, sf_fde_off(sec, i), h->fde_size, sec->fres,
		     &p, SFRAME_E_FDES_BOUNDS);
	if (err)
		return err;

	fde->func_start = sf_func_start(sec, i, p);
	if (h->version == SFRAME_VERSION_3) {
		fde->func_size = get32(p + 8, be);
		fre_off = get32(p + 12, be);
	} else {
		fde->func_size = get32(p + 4, be);
		fre_off = get32(p + 8, be);
		fde->num_fres = get32(p + 12, be);
		info = p[16];
		fde->rep_size = h->version == SFRAME_VERSION_2 ?
				p[17] : SFRAME_V1_REP_SIZE;
	}

	if (fde->func_start + fde->func_size < fde->func_start)
		return SFRAME_E_FUNC_WRAP;
	if (sec->text_end &&
	    (fde->func_start < sec->text_start ||
	     fde->func_start + fde->func_size > sec->text_end))
		return SFRAME_E_FUNC_RANGE;

	fde->fres_at = sec->fres + fre_off;
	if (h->version == SFRAME_VERSION_3) {
		/* The attribute record precedes the function's FREs. */
		err = sf_get(w, fde->fres_at, SFRAME_V3_ATTR_SIZE,
			     sec->fres_end, &p, SFRAME_E_FDE_FRE_OFF);
		if (err)
			return err;
		fde->num_fres = get16(p, be);
		info = p[2];
		info2 = p[3];
		fde->rep_size = p[4];
		fde->fres_at += SFRAME_V3_ATTR_SIZE;
	}
	if (fde->fres_at > sec->fres_end ||
	    (fde->num_fres && fde->fres_at == sec->fres_end))
		return SFRAME_E_FDE_FRE_OFF;

	fde->fre_type = FDE_FRE_TYPE(info);
	fde->pc_mask = FDE_PC_MASK(info);
	fde->pauth_key_b = FDE_PAUTH_KEY(info);
	fde->signal = h->version == SFRAME_VERSION_3 ? FDE_SIGNAL(info) : 0;
	fde->flex = FDE_TYPE(info2) == FDE_TYPE_FLEX;
	if (fde->fre_type > 2 || FDE_TYPE(info2) > FDE_TYPE_FLEX ||
	    (fde->pc_mask && !fde->rep_size))
		return SFRAME_E_FDE_INFO;
	return SFRAME_OK;
}

int sframe_fde_at(const struct sframe_sec *sec, uint32_t i,
		  struct sframe_fde *fde)
{
	struct sf_win w;

	if (i >= sec->hdr.num_fdes)
		return SFRAME_E_NOT_FOUND;
	sf_win_init(&w, sec);
	return sf_fde_decode(sec, &w, i, fde);
}

/* The start address of FDE @i, through @w. */
static int sf_start_at(const struct sframe_sec *sec, struct sf_win *w,
		       uint32_t i, uint64_t *start)
{
	uint32_t size = sec->hdr.version == SFRAME_VERSION_3 ? 8 : 4;
	const uint8_t *p;
	int err;

	err = sf_get(w, sf_fde_off(sec, i), size, sec->fres, &p,
		     SFRAME_E_FDES_BOUNDS);
	if (!err)
		*start = sf_func_start(sec, i, p);
	return err;
}

uint32_t sframe_index_words(const struct sframe_sec *sec, uint8_t *shift)
{
	uint32_t n = sec->hdr.num_fdes;
	uint64_t first, last, span;
	struct sf_win w;
	uint8_t s = 4;

	if (!(sec->hdr.flags & SFRAME_F_FDE_SORTED))
		return 0;
	sf_win_init(&w, sec);
	if (sf_start_at(sec, &w, 0, &first) ||
	    sf_start_at(sec, &w, n - 1, &last) || last < first)
		return 0;
	span = last - first;
	/*
	 * About one function per bucket, buckets of 16 bytes at least: at
	 * most num_fdes + 1 words whatever the span.
	 */
	while (s < 63 && (span >> s) >= n)
		s++;
	*shift = s;
	return (uint32_t)(span >> s) + 2;
}

int sframe_index_build(struct sframe_sec *sec, uint32_t *words,
		       uint32_t nwords, uint8_t shift)
{
	uint32_t n = sec->hdr.num_fdes, i = 0, b;
	uint64_t base, next, work = 0;
	struct sf_win w;
	int err;

	sec->index = NULL;
	if (nwords < 2)
		return SFRAME_E_NOT_FOUND;
	sf_win_init(&w, sec);
	err = sf_start_at(sec, &w, 0, &base);
	if (err)
		return err;
	/* words[b]: the last FDE starting at or before bucket b's start. */
	for (b = 0; b < nwords; b++) {
		/* Buckets past the end of the address space start at its end. */
		uint64_t at = b > (~base >> shift) ? ~(uint64_t)0 :
			      base + ((uint64_t)b << shift);

		while (i + 1 < n) {
			err = sf_start_at(sec, &w, i + 1, &next);
			if (!err)
				err = sf_resched(sec, &work, 1);
			if (err)
				return err;
			if (next > at)
				break;
			i++;
		}
		words[b] = i;
		err = sf_resched(sec, &work, 1);
		if (err)
			return err;
	}
	sec->index = words;
	sec->index_base = base;
	sec->index_nb = nwords - 1;
	sec->index_shift = shift;
	return SFRAME_OK;
}

int sframe_find_fde(const struct sframe_sec *sec, uint64_t pc,
		    struct sframe_fde *fde)
{
	uint32_t lo = 0, hi = sec->hdr.num_fdes;
	uint64_t next_start;
	struct sf_win w;
	int err;

	if (!(sec->hdr.flags & SFRAME_F_FDE_SORTED))
		return SFRAME_E_UNSORTED;
	sf_win_init(&w, sec);

	/* The index narrows the search to the FDEs of pc's bucket. */
	if (sec->index && pc >= sec->index_base) {
		uint64_t b = (pc - sec->index_base) >> sec->index_shift;

		if (b < sec->index_nb) {
			lo = sec->index[b];
			hi = sec->index[b + 1] + 1;
			if (lo >= hi || hi > sec->hdr.num_fdes)
				return SFRAME_E_NOT_FOUND;
		} else {
			lo = sec->index[sec->index_nb];
			if (lo >= hi)
				return SFRAME_E_NOT_FOUND;
		}
	}
	err = sf_spend(sec, 2);
	if (err)
		return err;

	/*
	 * The last FDE whose function starts at or below pc: at most 32
	 * probes, and the FDE and the next one's start, within the budget.
	 */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		err = sf_spend(sec, 1);
		if (!err)
			err = sf_start_at(sec, &w, mid, &start);
		if (err)
			return err;
		if (start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	err = sf_fde_decode(sec, &w, lo, fde);
	if (err)
		return err;
	if (pc < fde->func_start || pc - fde->func_start >= fde->func_size)
		return SFRAME_E_NOT_FOUND;
	/* In a sorted section the next function does not start lower. */
	if (lo + 1 < sec->hdr.num_fdes) {
		err = sf_start_at(sec, &w, lo + 1, &next_start);
		if (err)
			return err;
		if (next_start < fde->func_start)
			return SFRAME_E_UNSORTED;
	}
	return SFRAME_OK;
}

/* A decoded FRE header: where its data words are and how to read them. */
struct sf_fre {
	uint32_t start;
	uint8_t info;
	uint8_t count;		/* data words */
	uint8_t word;		/* bytes per data word */
	uint64_t data;		/* section offset of the data words */
};

/* Is @n data words a valid DEFAULT FRE for the ABI? (FLEX: checked later) */
static int sf_count_ok(const struct sframe_sec *sec, uint8_t n)
{
	if (sec->hdr.abi == SFRAME_ABI_AMD64_LE)
		return n <= 2;
	return n <= 3;
}

static void sf_loc(struct sframe_loc *loc, uint8_t kind, uint16_t base,
		   int32_t off)
{
	loc->kind = kind;
	loc->base = base;
	loc->off = off;
}

/* The RA and FP rules that apply when an FRE says nothing about them. */
static void sf_default_ra_fp(const struct sframe_sec *sec,
			     struct sframe_rule *rule)
{
	const struct sframe_header *h = &sec->hdr;

	if (h->cfa_fixed_ra_offset)
		sf_loc(&rule->ra, SFRAME_LOC_MEM, SFRAME_BASE_CFA,
		       h->cfa_fixed_ra_offset);
	else
		sf_loc(&rule->ra, SFRAME_LOC_SAME, 0, 0);
	if (h->cfa_fixed_fp_offset)
		sf_loc(&rule->fp, SFRAME_LOC_MEM, SFRAME_BASE_CFA,
		       h->cfa_fixed_fp_offset);
	else
		sf_loc(&rule->fp, SFRAME_LOC_SAME, 0, 0);
}

/* A saved RA or FP of a DEFAULT FRE: on the stack, or (s390x) a register. */
static int sf_saved(const struct sframe_sec *sec, struct sframe_loc *loc,
		    int32_t v)
{
	if (sec->hdr.abi == SFRAME_ABI_S390X_BE && S390X_IS_REGNUM(v)) {
		if (S390X_REGNUM(v) > SF_MAX_REGNUM)
			return SFRAME_E_FRE_RANGE;
		sf_loc(loc, SFRAME_LOC_VAL, (uint16_t)S390X_REGNUM(v), 0);
	} else {
		sf_loc(loc, SFRAME_LOC_MEM, SFRAME_BASE_CFA, v);
	}
	return SFRAME_OK;
}

static int sf_decode_default(const struct sframe_sec *sec,
			     const struct sf_fre *fre, const uint8_t *p,
			     struct sframe_rule *rule)
{
	const struct sframe_header *h = &sec->hdr;
	int be = h->big_endian, s390x = h->abi == SFRAME_ABI_S390X_BE;
	uint32_t fp_idx = h->cfa_fixed_ra_offset ? 1 : 2;
	int32_t w[3] = { 0, 0, 0 }, cfa;
	uint32_t i;
	int err;

	for (i = 0; i < fre->count; i++)
		w[i] = gets(p + i * fre->word, fre->word, be);

	err = sf_cfa_off(sec, w[0], &cfa);
	if (err)
		return err;
	sf_loc(&rule->cfa, SFRAME_LOC_VAL,
	       FRE_BASE_SP(fre->info) ? SFRAME_BASE_SP : SFRAME_BASE_FP, cfa);
	sf_default_ra_fp(sec, rule);
	/* Without a fixed RA offset, the RA is the second word. */
	if (!h->cfa_fixed_ra_offset && fre->count >= 2 && !(s390x && !w[1])) {
		err = sf_saved(sec, &rule->ra, w[1]);
		if (err)
			return err;
	}
	if (fre->count > fp_idx)
		return sf_saved(sec, &rule->fp, w[fp_idx]);
	return SFRAME_OK;
}

/* One FLEX (control, offset) pair. */
static int sf_flex_loc(struct sframe_loc *loc, uint32_t ctrl, int32_t off)
{
	if (FLEX_REG_P(ctrl) && FLEX_REGNUM(ctrl) > SF_MAX_REGNUM)
		return SFRAME_E_FRE_RANGE;
	sf_loc(loc, FLEX_DEREF_P(ctrl) ? SFRAME_LOC_MEM : SFRAME_LOC_VAL,
	       FLEX_REG_P(ctrl) ? (uint16_t)FLEX_REGNUM(ctrl) : SFRAME_BASE_CFA,
	       off);
	return SFRAME_OK;
}

/*
 * FLEX data words: (control, offset) pairs for CFA, RA, FP.  A control of
 * 0 in place of the RA pair is a single padding word (RA at its default),
 * and a control of 0 means "default" for FP too.  Every word must be used.
 */
static int sf_decode_flex(const struct sframe_sec *sec,
			  const struct sf_fre *fre, const uint8_t *p,
			  struct sframe_rule *rule)
{
	int be = sec->hdr.big_endian, err;
	uint32_t n = fre->count, idx, ctrl;
	int32_t cfa;

#define WORD_U(k)	getu(p + (k) * fre->word, fre->word, be)
#define WORD_S(k)	gets(p + (k) * fre->word, fre->word, be)
	if (n < 2)
		return SFRAME_E_FRE_FLEX;
	ctrl = WORD_U(0);
	if (!FLEX_REG_P(ctrl))		/* the CFA needs a base register */
		return SFRAME_E_FRE_FLEX;
	/* s390x scales CFA offsets in FLEX FDEs as in DEFAULT ones. */
	err = sf_cfa_off(sec, WORD_S(1), &cfa);
	if (!err)
		err = sf_flex_loc(&rule->cfa, ctrl, cfa);
	if (err)
		return err;
	sf_default_ra_fp(sec, rule);
	idx = 2;
	if (n > idx) {
		ctrl = WORD_U(idx);
		if (!ctrl) {
			idx += 1;
		} else {
			if (n < idx + 2)
				return SFRAME_E_FRE_FLEX;
			err = sf_flex_loc(&rule->ra, ctrl, WORD_S(idx + 1));
			if (err)
				return err;
			idx += 2;
		}
	}
	if (n > idx) {
		if (n < idx + 2)
			return SFRAME_E_FRE_FLEX;
		ctrl = WORD_U(idx);
		if (ctrl) {
			err = sf_flex_loc(&rule->fp, ctrl, WORD_S(idx + 1));
			if (err)
				return err;
		}
		idx += 2;
	}
#undef WORD_U
#undef WORD_S
	return idx == n ? SFRAME_OK : SFRAME_E_FRE_FLEX;
}

static int sf_decode_rule(const struct sframe_sec *sec, struct sf_win *w,
			  const struct sframe_fde *fde,
			  const struct sf_fre *fre, struct sframe_rule *rule)
{
	const uint8_t *p = NULL;
	int err;

	rule->func_start = fde->func_start;
	rule->func_size = fde->func_size;
	rule->flags = 0;
	if (fde->signal)
		rule->flags |= SFRAME_RULE_SIGNAL;
	if (fde->flex)
		rule->flags |= SFRAME_RULE_FLEX;
	if (sec->hdr.abi == SFRAME_ABI_AARCH64_BE ||
	    sec->hdr.abi == SFRAME_ABI_AARCH64_LE) {
		if (FRE_MANGLED_RA(fre->info))
			rule->flags |= SFRAME_RULE_MANGLED_RA;
		if (fde->pauth_key_b)
			rule->flags |= SFRAME_RULE_PAUTH_KEY_B;
	}

	if (!fre->count) {
		/* No data words: the outermost frame, RA undefined. */
		rule->flags |= SFRAME_RULE_OUTERMOST;
		sf_loc(&rule->cfa, SFRAME_LOC_UNDEF, 0, 0);
		sf_loc(&rule->ra, SFRAME_LOC_UNDEF, 0, 0);
		sf_loc(&rule->fp, SFRAME_LOC_SAME, 0, 0);
		return SFRAME_OK;
	}
	/* DEFAULT FREs have at most 2 (AMD64) or 3 data words. */
	if (!fde->flex && !sf_count_ok(sec, fre->count))
		return SFRAME_E_FRE_COUNT;
	err = sf_get(w, fre->data, (uint32_t)fre->count * fre->word,
		     sec->fres_end, &p, SFRAME_E_FRE_BOUNDS);
	if (err)
		return err;
	if (fde->flex)
		return sf_decode_flex(sec, fre, p, rule);
	return sf_decode_default(sec, fre, p, rule);
}

/*
 * Point *@p at the bytes from @off on, *@avail of them: up to @lim for an
 * addressable section, a window of up to SFRAME_READ_MAX through the
 * reader.
 */
static int sf_span(struct sf_win *w, uint64_t off, uint64_t lim,
		   const uint8_t **p, uint64_t *avail)
{
	uint64_t n = lim - off;
	int err;

	if (off >= lim) {
		*avail = 0;
		return SFRAME_OK;
	}
	if (!w->s->mem && n > SFRAME_READ_MAX)
		n = SFRAME_READ_MAX;
	err = sf_get(w, off, (uint32_t)(w->s->mem ? 1 : n), lim, p,
		     SFRAME_E_FRE_BOUNDS);
	*avail = n;
	return err;
}

/* The largest FRE: a 4-byte start, the info byte, 15 words of 4 bytes. */
#define SF_FRE_MAX	(4 + 1 + 15 * 4)

/*
 * Walk the FREs of @fde up to the last one starting at or below @target
 * (all of them for a @target of ~0), into *@hit, and *@bytes the bytes of
 * the FREs walked.  Every FRE is bounds-checked, its data word size and
 * its start checked (increasing, inside the function); @check_data (the
 * validation walk) also decodes each FRE's data words.
 *
 * This loop is the hot path of a lookup: it works on a span of bytes (the
 * whole FRE sub-section for addressable sections) and refills a reader
 * window only when an FRE could cross its end.
 */
typedef int (*sf_each_fn)(void *ctx, uint32_t start,
			  const struct sframe_rule *rule);

static int sf_walk(const struct sframe_sec *sec, struct sf_win *w,
		   const struct sframe_fde *fde, uint64_t target,
		   struct sf_fre *hit, uint64_t *bytes, int check_data,
		   sf_each_fn each, void *ctx)
{
	uint32_t ss = 1U << fde->fre_type, start = 0, prev = 0, k;
	uint64_t off = fde->fres_at, limit, avail, len;
	int be = sec->hdr.big_endian, found = 0, err;
	struct sframe_rule tmp;
	const uint8_t *p;

	limit = fde->pc_mask ? fde->rep_size : fde->func_size;
	err = sf_span(w, off, sec->fres_end, &p, &avail);
	if (err)
		return err;
	for (k = 0; k < fde->num_fres; k++) {
		uint8_t info;

		/*
		 * A function with more FREs than the limit is refused by
		 * validation; a lookup stops there (the section changed
		 * since, or was not validated), and within its budget.
		 */
		if (sec->max_fres && k >= sec->max_fres)
			return check_data ? SFRAME_E_FDE_FRES : SFRAME_E_BUDGET;
		if (!check_data) {
			err = sf_spend(sec, 1);
			if (err)
				return err;
		}

		if (avail < SF_FRE_MAX && off + avail < sec->fres_end) {
			err = sf_span(w, off, sec->fres_end, &p, &avail);
			if (err)
				return err;
		}
		if (avail < ss + 1)
			return SFRAME_E_FRE_BOUNDS;
		start = ss == 1 ? p[0] : ss == 2 ? get16(p, be) : get32(p, be);
		info = p[ss];
		if (FRE_WORD_SIZE(info) > 2)
			return SFRAME_E_FRE_SIZE;
		len = ss + 1 + (FRE_COUNT(info) << FRE_WORD_SIZE(info));
		if (len > avail)
			return SFRAME_E_FRE_BOUNDS;
		if (k && start <= prev)
			return SFRAME_E_FRE_ORDER;
		if (limit ? start >= limit : start != 0)
			return SFRAME_E_FRE_START;
		if (start > target)
			break;
		hit->start = start;
		hit->info = info;
		hit->count = FRE_COUNT(info);
		hit->word = (uint8_t)(1U << FRE_WORD_SIZE(info));
		hit->data = off + ss + 1;
		found = 1;
		prev = start;
		p += len;
		off += len;
		avail -= len;
		if (check_data) {
			err = sf_decode_rule(sec, w, fde, hit, &tmp);
			if (!err && each)
				err = each(ctx, start, &tmp);
			if (err)
				return err;
			/* Decoding may have moved the reader window. */
			err = sf_span(w, off, sec->fres_end, &p, &avail);
			if (err)
				return err;
		}
	}
	if (bytes)
		*bytes = off - fde->fres_at;
	return found ? SFRAME_OK : SFRAME_E_NO_FRE;
}

int sframe_fde_rule(const struct sframe_sec *sec,
		    const struct sframe_fde *fde, uint64_t pc,
		    struct sframe_rule *rule)
{
	struct sf_win w;
	struct sf_fre fre;
	uint64_t target;
	int err;

	if (pc < fde->func_start || pc - fde->func_start >= fde->func_size)
		return SFRAME_E_NOT_FOUND;
	target = pc - fde->func_start;
	if (fde->pc_mask)
		target %= fde->rep_size;

	sf_win_init(&w, sec);
	err = sf_walk(sec, &w, fde, target, &fre, NULL, 0, NULL, NULL);
	if (err)
		return err;
	return sf_decode_rule(sec, &w, fde, &fre, rule);
}

int sframe_find(const struct sframe_sec *sec, uint64_t pc,
		struct sframe_rule *rule)
{
	struct sframe_fde fde;
	int err;

	err = sframe_find_fde(sec, pc, &fde);
	if (err)
		return err;
	return sframe_fde_rule(sec, &fde, pc, rule);
}

int sframe_validate(const struct sframe_sec *sec)
{
	uint64_t fres = 0, bytes = 0, prev_start = 0, prev_end = 0, n;
	uint64_t work = 0;
	struct sframe_fde fde;
	struct sf_fre last;
	struct sf_win w;
	uint32_t i;
	int err;

	if (!(sec->hdr.flags & SFRAME_F_FDE_SORTED))
		return SFRAME_E_UNSORTED;
	sf_win_init(&w, sec);
	for (i = 0; i < sec->hdr.num_fdes; i++) {
		err = sf_fde_decode(sec, &w, i, &fde);
		if (!err && sec->max_fres && fde.num_fres > sec->max_fres)
			err = SFRAME_E_FDE_FRES;
		if (!err)
			err = sf_resched(sec, &work, 1 + (uint64_t)fde.num_fres);
		if (err)
			return err;
		if (i && fde.func_start < prev_start)
			return SFRAME_E_UNSORTED;
		if (i && fde.func_start < prev_end)
			return SFRAME_E_FDE_OVERLAP;
		prev_start = fde.func_start;
		prev_end = fde.func_start + fde.func_size;
		/* gas 2.47 emits FDEs without FREs: nothing to walk. */
		if (!fde.num_fres) {
			if (sec->hdr.version == SFRAME_VERSION_3)
				bytes += SFRAME_V3_ATTR_SIZE;
			continue;
		}

		err = sf_walk(sec, &w, &fde, ~(uint64_t)0, &last, &n, 1, NULL,
			      NULL);
		if (err)
			return err;
		fres += fde.num_fres;
		bytes += n;
		if (sec->hdr.version == SFRAME_VERSION_3)
			bytes += SFRAME_V3_ATTR_SIZE;
	}
	if (fres != sec->hdr.num_fres || bytes != sec->hdr.fre_len)
		return SFRAME_E_FRE_TOTAL;
	return SFRAME_OK;
}

/* ---- flat tables ----------------------------------------------------- */

/* How many times a PCMASK FDE's block repeats over its function. */
static uint64_t sf_reps(const struct sframe_fde *fde)
{
	if (!fde->pc_mask)
		return 1;
	return ((uint64_t)fde->func_size + fde->rep_size - 1) / fde->rep_size;
}

int sframe_flat_count(const struct sframe_sec *sec, uint32_t *nr)
{
	struct sframe_fde fde;
	struct sf_win w;
	uint64_t n = 0, work = 0;
	uint32_t i;
	int err;

	sf_win_init(&w, sec);
	for (i = 0; i < sec->hdr.num_fdes; i++) {
		err = sf_fde_decode(sec, &w, i, &fde);
		if (!err)
			err = sf_resched(sec, &work, 1);
		if (err)
			return err;
		/* PCMASK blocks also get a NONE entry at their start. */
		n += sf_reps(&fde) * (fde.num_fres + fde.pc_mask) + 1;
		if (n >= 0xffffffffULL)
			return SFRAME_E_FRE_TOTAL;
	}
	*nr = (uint32_t)n;
	return SFRAME_OK;
}

static int sf_rule_eq(const struct sframe_rule *a, const struct sframe_rule *b)
{
	const struct sframe_loc *la[3] = { &a->cfa, &a->ra, &a->fp };
	const struct sframe_loc *lb[3] = { &b->cfa, &b->ra, &b->fp };
	int i;

	for (i = 0; i < 3; i++)
		if (la[i]->kind != lb[i]->kind || la[i]->base != lb[i]->base ||
		    la[i]->off != lb[i]->off)
			return 0;
	return a->flags == b->flags;
}

static uint32_t sf_rule_hash(const struct sframe_rule *r)
{
	const struct sframe_loc *l[3] = { &r->cfa, &r->ra, &r->fp };
	uint32_t h = r->flags;
	int i;

	for (i = 0; i < 3; i++) {
		h = (h ^ l[i]->kind) * 0x9e3779b1U;
		h = (h ^ l[i]->base) * 0x9e3779b1U;
		h = (h ^ (uint32_t)l[i]->off) * 0x9e3779b1U;
	}
	return h;
}

/* The state of one sframe_flat_build(). */
struct sf_flat_ctx {
	struct sframe_flat *flat;
	uint32_t max_entries;
	uint32_t max_rules;
	uint32_t *hash;
	uint32_t mask;
	uint64_t at;		/* offset of the current block from base */
	uint64_t end;		/* offset of the current function's end */
};

static int sf_flat_add(struct sf_flat_ctx *c, uint64_t off, uint32_t rule)
{
	struct sframe_flat *f = c->flat;

	if (off > 0xffffffffULL)
		return SFRAME_E_FUNC_RANGE;
	if (f->nr == c->max_entries)
		return SFRAME_E_FRE_TOTAL;
	/* Keep the array sorted whatever the section says. */
	if (f->nr && off < f->offs[f->nr - 1])
		return SFRAME_E_UNSORTED;
	f->offs[f->nr] = (uint32_t)off;
	f->rule_of[f->nr++] = rule;
	return SFRAME_OK;
}

/* sf_walk()'s callback: one FRE of the current block. */
static int sf_flat_fre(void *ctx, uint32_t start, const struct sframe_rule *r)
{
	struct sf_flat_ctx *c = ctx;
	struct sframe_flat *f = c->flat;
	uint32_t h = sf_rule_hash(r) & c->mask, id;

	/* The last PCMASK block may run past the function's end. */
	if (c->at + start >= c->end)
		return SFRAME_OK;
	/* Share the rule: open addressing, slots hold id + 1. */
	for (;;) {
		id = c->hash[h];
		if (!id)
			break;
		if (sf_rule_eq(&f->rules[id - 1], r))
			return sf_flat_add(c, c->at + start, id - 1);
		h = (h + 1) & c->mask;
	}
	if (f->nr_rules == c->max_rules)
		return SFRAME_E_FRE_TOTAL;
	id = f->nr_rules++;
	f->rules[id] = *r;
	f->rules[id].func_start = 0;
	f->rules[id].func_size = 0;
	c->hash[h] = id + 1;
	return sf_flat_add(c, c->at + start, id);
}

int sframe_flat_build(const struct sframe_sec *sec, struct sframe_flat *flat,
		      uint32_t max_entries, uint32_t max_rules,
		      uint32_t *hash, uint8_t hash_bits)
{
	struct sf_flat_ctx c = {
		.flat = flat, .max_entries = max_entries,
		.max_rules = max_rules, .hash = hash,
	};
	struct sframe_fde fde;
	struct sf_fre last;
	struct sf_win w;
	uint64_t r, work = 0;
	uint32_t i;
	int err;

	if (hash_bits >= 32 || max_rules >= (1U << hash_bits))
		return SFRAME_E_FRE_TOTAL;
	c.mask = (1U << hash_bits) - 1;
	for (i = 0; i <= c.mask; i++)
		hash[i] = 0;
	flat->nr = 0;
	flat->nr_rules = 0;
	flat->base = sec->text_end ? sec->text_start : 0;
	sf_win_init(&w, sec);
	for (i = 0; i < sec->hdr.num_fdes; i++) {
		err = sf_fde_decode(sec, &w, i, &fde);
		if (err)
			return err;
		if (!sec->text_end && !i)
			flat->base = fde.func_start;
		if (fde.func_start < flat->base)
			return SFRAME_E_UNSORTED;
		c.end = fde.func_start - flat->base + fde.func_size;
		for (r = 0; fde.num_fres && r < sf_reps(&fde); r++) {
			c.at = fde.func_start - flat->base + r * fde.rep_size;
			/* Before a block's first FRE there is no rule. */
			err = fde.pc_mask ?
			      sf_flat_add(&c, c.at, SFRAME_FLAT_NONE) : 0;
			if (!err)
				err = sf_walk(sec, &w, &fde, ~(uint64_t)0,
					      &last, NULL, 1, sf_flat_fre, &c);
			if (!err)
				err = sf_resched(sec, &work, 1 + (uint64_t)fde.num_fres);
			if (err)
				return err;
		}
		/* The function ends here, unless the next starts here. */
		err = sf_flat_add(&c, c.end, SFRAME_FLAT_NONE);
		if (!err)
			err = sf_resched(sec, &work, 1);
		if (err)
			return err;
	}
	return SFRAME_OK;
}

uint32_t sframe_flat_index_words(const struct sframe_flat *flat,
				 uint8_t *shift)
{
	uint64_t span;
	uint8_t sh = 0;

	if (flat->nr < 8)
		return 0;
	/* The last entry is the end of the last function. */
	span = (uint64_t)flat->offs[flat->nr - 1] + 1;
	while (sh < 31 && (span >> sh) > flat->nr / 2)
		sh++;
	*shift = sh;
	return (uint32_t)(span >> sh) + 2;
}

void sframe_flat_index_build(struct sframe_flat *flat, uint32_t *words,
			     uint32_t nwords, uint8_t shift)
{
	uint32_t b, e = 0;

	/* words[b]: the first entry whose offset is at least b << shift. */
	for (b = 0; b < nwords; b++) {
		uint64_t start = (uint64_t)b << shift;

		while (e < flat->nr && flat->offs[e] < start)
			e++;
		words[b] = e;
	}
	flat->index_shift = shift;
	flat->index_nb = nwords - 1;
	flat->index = words;
}

const char *sframe_strerror(int err)
{
	static const char *const msg[SFRAME_E_NR_CODES] = {
		[SFRAME_OK]		= "valid",
		[SFRAME_E_TRUNCATED]	= "section shorter than its header",
		[SFRAME_E_MAGIC]	= "bad magic",
		[SFRAME_E_VERSION]	= "unsupported version",
		[SFRAME_E_ABI]		= "unknown ABI or wrong byte order",
		[SFRAME_E_FLAGS]	= "invalid flags",
		[SFRAME_E_AUXHDR]	= "auxiliary header past the end",
		[SFRAME_E_NO_FDES]	= "no FDEs or no FREs",
		[SFRAME_E_FDES_BOUNDS]	= "FDE array out of bounds",
		[SFRAME_E_FRES_BOUNDS]	= "FRE sub-section out of bounds",
		[SFRAME_E_OVERLAP]	= "FREs overlap the FDE array",
		[SFRAME_E_FIXED_RA]	= "missing fixed RA offset",
		[SFRAME_E_UNSORTED]	= "FDEs not sorted",
		[SFRAME_E_FDE_OVERLAP]	= "functions overlap",
		[SFRAME_E_FUNC_RANGE]	= "function outside the text range",
		[SFRAME_E_FUNC_WRAP]	= "function range wraps",
		[SFRAME_E_FDE_FRE_OFF]	= "FDE's FREs out of bounds",
		[SFRAME_E_FDE_INFO]	= "invalid FDE info",
		[SFRAME_E_FDE_NO_FRES]	= "FDE without FREs (not reported)",
		[SFRAME_E_FRE_BOUNDS]	= "FRE out of bounds",
		[SFRAME_E_FRE_ORDER]	= "FRE starts not increasing",
		[SFRAME_E_FRE_START]	= "FRE starts past the function",
		[SFRAME_E_FRE_SIZE]	= "invalid FRE data word size",
		[SFRAME_E_FRE_COUNT]	= "invalid FRE data word count",
		[SFRAME_E_FRE_FLEX]	= "inconsistent FLEX data words",
		[SFRAME_E_FRE_TOTAL]	= "FRE count or length differs from header",
		[SFRAME_E_FRE_RANGE]	= "FRE offset or register out of range",
		[SFRAME_E_READ]		= "cannot read the section",
		[SFRAME_E_NOT_FOUND]	= "pc not covered",
		[SFRAME_E_NO_FRE]	= "pc before the function's first FRE",
		[SFRAME_E_FDE_FRES]	= "function with too many FREs",
		[SFRAME_E_BUDGET]	= "lookup over its budget",
	};

	if (err < 0 || err >= SFRAME_E_NR_CODES)
		return "unknown error";
	return msg[err];
}
