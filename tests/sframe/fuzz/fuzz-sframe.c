// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the SFrame decoder (shared/sframe.c).
 *
 * Input: a 4-byte prefix, then the section's bytes (the section size is
 * what remains of the input).
 *
 *   p[0] bits 0-1  section address: 0x400000, 0, 2^64 - 0x100000,
 *                  0x7fff12345000
 *        bit 2     text range [addr + (int8)p[1] * 0x100,
 *                              + (p[2] + 1) * 0x200)
 *        bit 3     the reader fails its (p[3] + 1)th read (reader only)
 *        bit 4     the section changes after validation: byte
 *                  (p[1] << 8 | p[3]) % size is xored with p[2] | 1
 *        bit 5     with bit 4: it changes under the reader only, at its
 *                  (p[3] % 16 + 1)th read after validation (a race
 *                  inside a lookup; no mem/reader comparison)
 *
 * Every call runs twice, with the section in memory (libFuzzer's exact-size
 * heap copy, or an exact-size copy when it is mutated) and through a reader
 * that aborts when asked for bytes outside the section or more than
 * SFRAME_READ_MAX at once; both must agree exactly.  Then:
 * sframe_init, sframe_validate, sframe_fde_at on the FDEs (64 at most,
 * spread), sframe_find and sframe_fde_rule at pcs around and inside each
 * of them and at pcs taken from the input.  When the section validates
 * (and neither faults nor changes), every FDE decodes, and at each pc
 * inside FDE i sframe_find answers OK or NO_FRE exactly as
 * sframe_fde_rule(FDE i) does, and sframe_find_fde returns FDE i.
 *
 * A third copy of the section (in memory) gets an FDE index
 * (sframe_index_build(), when sframe_index_words() asks for at most
 * INDEX_MAX words): its lookups must be safe, and equal to those without
 * the index when the section validates and does not change.
 *
 * The memory copy also gets a flat lookup table (sframe_flat_build(), as
 * the module builds it, also without validation): it must stay sorted,
 * its lookups safe, and equal to sframe_find's when the section
 * validates and does not change.  Whatever the section expands to, the
 * count runs, and the table is built when the module would build it (at
 * most 2 entries per byte of section plus 65536, its expansion bound),
 * with a rescheduling callback that must be called every 4096 units of
 * work at least.
 *
 * The module's bounds (issue 23): a fourth view of the memory copy with
 * a limit of FREs per function (p[2] & 7 picks 0, 1, 2, 3, 8, 64, 4096,
 * 65535) and a lookup budget (p[3] units; 255: 1 << 20) answers every
 * lookup as the memory copy does or with SFRAME_E_BUDGET, never spends
 * more than its budget, and its validation refuses exactly the sections
 * with a function of more FREs than the limit (SFRAME_E_FDE_FRES).
 *
 * A broken property aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe.h"

#define PREFIX		4
#define MAX_FDES	64
#define MAX_PCS		24
#define INDEX_MAX	65536
/*
 * Flat tables: the module's expansion bound (CODECTL_FLAT_PER_BYTE and
 * _EXTRA in register.c), distinct rules and hash size (as the module's).
 */
#define FLAT_PER_BYTE	2
#define FLAT_EXTRA	65536
#define FLAT_RULES	4096
#define FLAT_HASH_BITS	13

#define FAIL(...)							\
	do {								\
		fprintf(stderr, "fuzz-sframe: " __VA_ARGS__);		\
		fputc('\n', stderr);					\
		abort();						\
	} while (0)

struct reader {
	uint8_t *buf;
	uint64_t size;
	long nreads, fail_at;	/* fail_at: 1-based, 0 never */
	long flip_at;		/* xor buf[flip_off] with flip before it */
	uint64_t flip_off;
	uint8_t flip;
};

static int rd_read(void *ctx, uint64_t off, void *dst, uint32_t len)
{
	struct reader *r = ctx;

	if (len > SFRAME_READ_MAX || off > r->size || len > r->size - off)
		FAIL("reader asked for [%llu, +%u) of a %llu-byte section",
		     (unsigned long long)off, len,
		     (unsigned long long)r->size);
	if (++r->nreads == r->fail_at)
		return 1;
	if (r->nreads == r->flip_at)
		r->buf[r->flip_off] ^= r->flip;
	memcpy(dst, r->buf + off, len);
	return 0;
}

struct ctx {
	struct sframe_sec mem, rd, idx;
	struct sframe_sec bud;		/* mem with max_fres and a budget */
	uint32_t budget, budget_max;
	int indexed;
	struct sframe_flat flat;	/* built from mem when !faulty */
	int flat_ok;
	struct reader reader;
	int faulty;		/* fault injection or race: no comparisons */
	int changed;		/* mutated after validation */
	int validated;
};

static unsigned long resched_calls;

static int count_resched(void)
{
	resched_calls++;
	return 0;
}

static void code_ok(int err, const char *what)
{
	if (err < 0 || err >= SFRAME_E_NR_CODES)
		FAIL("%s returned %d", what, err);
	if (!sframe_strerror(err))
		FAIL("sframe_strerror(%d) is NULL", err);
}

/* Two runs that must agree: codes, and the results when OK. */
static void same(int e1, int e2, const void *a, const void *b, size_t n,
		 const char *what, uint64_t arg)
{
	code_ok(e1, what);
	code_ok(e2, what);
	if (e1 != e2)
		FAIL("%s(0x%llx): %s vs %s", what, (unsigned long long)arg,
		     sframe_strerror(e1), sframe_strerror(e2));
	if (!e1 && a && memcmp(a, b, n))
		FAIL("%s(0x%llx): results differ", what,
		     (unsigned long long)arg);
}

static void rule_sane(const struct sframe_rule *r, const struct sframe_fde *f,
		      uint64_t pc)
{
	const struct sframe_loc *l[3] = { &r->cfa, &r->ra, &r->fp };
	int i;

	for (i = 0; i < 3; i++)
		if (l[i]->kind > SFRAME_LOC_MEM)
			FAIL("pc 0x%llx: location kind %u",
			     (unsigned long long)pc, l[i]->kind);
	if (f && (r->func_start != f->func_start ||
		  r->func_size != f->func_size))
		FAIL("pc 0x%llx: rule of another function",
		     (unsigned long long)pc);
	if (f && (pc < f->func_start || pc - f->func_start >= f->func_size))
		FAIL("pc 0x%llx: rule outside its function",
		     (unsigned long long)pc);
}

static int loc_eq(const struct sframe_loc *a, const struct sframe_loc *b)
{
	return a->kind == b->kind && a->base == b->base && a->off == b->off;
}

/* sframe_find() at @pc in both modes. */
static int find_both(struct ctx *c, uint64_t pc, struct sframe_rule *out)
{
	struct sframe_rule r1, r2;
	int e1, e2;

	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	e2 = sframe_find(&c->rd, pc, &r2);
	code_ok(e2, "find");
	if (c->faulty) {
		if (!e2)
			rule_sane(&r2, NULL, pc);
		*out = r2;
		return e2;
	}
	e1 = sframe_find(&c->mem, pc, &r1);
	same(e1, e2, &r1, &r2, sizeof(r1), "find mem/reader", pc);
	{
		/* Bounded: the same answer, or out of budget; within it. */
		struct sframe_rule r4;
		int e4;

		memset(&r4, 0, sizeof(r4));
		c->budget = c->budget_max;
		e4 = sframe_find(&c->bud, pc, &r4);
		code_ok(e4, "find (bounded)");
		if (c->budget > c->budget_max)
			FAIL("find(0x%llx) bounded: budget %u grew to %u",
			     (unsigned long long)pc, c->budget_max, c->budget);
		if (e4 != SFRAME_E_BUDGET)
			same(e1, e4, &r1, &r4, sizeof(r1),
			     "find unbounded/bounded", pc);
		else if (c->bud.max_fres == 0 && c->budget)
			FAIL("find(0x%llx): out of budget with %u left",
			     (unsigned long long)pc, c->budget);
	}
	if (c->indexed) {
		struct sframe_rule r3;
		int e3;

		memset(&r3, 0, sizeof(r3));
		e3 = sframe_find(&c->idx, pc, &r3);
		code_ok(e3, "find (index)");
		if (!e3)
			rule_sane(&r3, NULL, pc);
		if (c->validated && !c->changed)
			same(e1, e3, &r1, &r3, sizeof(r1),
			     "find without/with the index", pc);
	}
	if (c->flat_ok) {
		const struct sframe_rule *fr = sframe_flat_find(&c->flat, pc);

		if (fr)
			rule_sane(fr, NULL, pc);
		/* A validated, unchanged section: the same answers. */
		if (c->validated && !c->changed) {
			int ok = e1 == SFRAME_OK ?
				 fr && loc_eq(&fr->cfa, &r1.cfa) &&
				 loc_eq(&fr->ra, &r1.ra) &&
				 loc_eq(&fr->fp, &r1.fp) &&
				 fr->flags == r1.flags :
				 !fr && (e1 == SFRAME_E_NOT_FOUND ||
					 e1 == SFRAME_E_NO_FRE);

			if (!ok)
				FAIL("find(0x%llx) %d but the flat table %s",
				     (unsigned long long)pc, e1,
				     fr ? "has another rule" : "has none");
		}
	}
	if (!e1) {
		struct sframe_fde f;

		memset(&f, 0, sizeof(f));
		rule_sane(&r1, NULL, pc);
		if (pc < r1.func_start || pc - r1.func_start >= r1.func_size)
			FAIL("find(0x%llx): pc outside the rule's function",
			     (unsigned long long)pc);
		if (sframe_find_fde(&c->mem, pc, &f))
			FAIL("find(0x%llx) OK but find_fde fails",
			     (unsigned long long)pc);
	}
	*out = r1;
	return e1;
}

static int fde_rule_both(struct ctx *c, const struct sframe_fde *f,
			 uint64_t pc, struct sframe_rule *out)
{
	struct sframe_rule r1, r2;
	int e1, e2;

	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	e2 = sframe_fde_rule(&c->rd, f, pc, &r2);
	code_ok(e2, "fde_rule");
	if (!e2)
		rule_sane(&r2, f, pc);
	if (c->faulty) {
		*out = r2;
		return e2;
	}
	e1 = sframe_fde_rule(&c->mem, f, pc, &r1);
	same(e1, e2, &r1, &r2, sizeof(r1), "fde_rule mem/reader", pc);
	*out = r1;
	return e1;
}

static void check_pc(struct ctx *c, uint32_t i, const struct sframe_fde *f,
		     uint64_t pc)
{
	struct sframe_rule rf, rr;
	int ef, er;

	ef = find_both(c, pc, &rf);
	er = fde_rule_both(c, f, pc, &rr);

	if (!c->validated || c->faulty || c->changed)
		return;
	if (pc < f->func_start || pc - f->func_start >= f->func_size) {
		if (er != SFRAME_E_NOT_FOUND)
			FAIL("fde_rule(%u, 0x%llx) outside: %d", i,
			     (unsigned long long)pc, er);
		return;
	}
	/* Validated, pc inside FDE i. */
	if (ef != er)
		FAIL("validated: pc 0x%llx in FDE %u: find %d, fde_rule %d",
		     (unsigned long long)pc, i, ef, er);
	if (ef != SFRAME_OK && ef != SFRAME_E_NO_FRE)
		FAIL("validated: pc 0x%llx in FDE %u: %d",
		     (unsigned long long)pc, i, ef);
	if (!ef && memcmp(&rf, &rr, sizeof(rf)))
		FAIL("validated: pc 0x%llx in FDE %u: find and fde_rule "
		     "rules differ", (unsigned long long)pc, i);
	{
		struct sframe_fde g;

		memset(&g, 0, sizeof(g));
		if (sframe_find_fde(&c->mem, pc, &g) ||
		    memcmp(&g, f, sizeof(g)))
			FAIL("validated: find_fde(0x%llx) is not FDE %u",
			     (unsigned long long)pc, i);
	}
}

static void check_fde(struct ctx *c, uint32_t i)
{
	struct sframe_fde f1, f2;
	uint64_t pcs[MAX_PCS], step;
	int e1, e2, n = 0, k;

	memset(&f1, 0, sizeof(f1));
	memset(&f2, 0, sizeof(f2));
	e2 = sframe_fde_at(&c->rd, i, &f2);
	code_ok(e2, "fde_at");
	if (c->faulty) {
		f1 = f2;
		e1 = e2;
	} else {
		e1 = sframe_fde_at(&c->mem, i, &f1);
		same(e1, e2, &f1, &f2, sizeof(f1), "fde_at mem/reader", i);
	}
	if (c->validated && !c->faulty && !c->changed && e1)
		FAIL("validated, but fde_at(%u) = %d", i, e1);
	if (e1)
		return;

	pcs[n++] = f1.func_start - 1;
	pcs[n++] = f1.func_start;
	pcs[n++] = f1.func_start + 1;
	pcs[n++] = f1.func_start + f1.func_size / 2;
	pcs[n++] = f1.func_start + f1.func_size - 1;
	pcs[n++] = f1.func_start + f1.func_size;
	step = f1.func_size / 16 + 1;
	for (k = 1; n < MAX_PCS && step * k < f1.func_size; k++)
		pcs[n++] = f1.func_start + step * k;
	for (k = 0; k < n; k++)
		check_pc(c, i, &f1, pcs[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t addrs[4] = {
		0x400000, 0, 0ULL - 0x100000, 0x7fff12345000ULL,
	};
	struct ctx c;
	const uint8_t *sec;
	uint8_t *copy = NULL, *rcopy = NULL;
	uint32_t *index = NULL, *flat_hash = NULL, *flat_index = NULL;
	uint64_t len, addr;
	uint32_t i, nf;
	int e1, e2, k, race;

	if (size < PREFIX)
		return 0;
	memset(&c, 0, sizeof(c));
	sec = data + PREFIX;
	len = size - PREFIX;
	addr = addrs[data[0] & 3];
	c.faulty = !!(data[0] & 8);
	c.changed = !!(data[0] & 16) && len;
	race = c.changed && (data[0] & 32);
	if (race)
		c.faulty = 1;
	if (c.changed) {
		/* Exact-size copies, so ASan still sees reads past the end. */
		copy = malloc(len);
		rcopy = malloc(len);
		if (!copy || !rcopy)
			goto out;
		memcpy(copy, sec, len);
		memcpy(rcopy, sec, len);
	}
	c.reader.buf = c.changed ? rcopy : (uint8_t *)(uintptr_t)sec;
	c.reader.size = len;
	if (data[0] & 8)
		c.reader.fail_at = data[3] + 1;

	e2 = sframe_init(&c.rd, addr, len, NULL, rd_read, &c.reader);
	code_ok(e2, "init");
	e1 = sframe_init(&c.mem, addr, len, c.changed ? copy : sec, NULL,
			 NULL);
	code_ok(e1, "init");
	if (!c.faulty) {
		if (e1 != e2)
			FAIL("init: mem %d, reader %d", e1, e2);
		if (!e1 && memcmp(&c.mem.hdr, &c.rd.hdr, sizeof(c.mem.hdr)))
			FAIL("init: headers differ");
	}
	/* sframe_parse_header() alone, on exactly the bytes it may read. */
	{
		size_t hl = len < SFRAME_HEADER_SIZE ? len : SFRAME_HEADER_SIZE;
		uint8_t *hb = malloc(hl ? hl : 1);
		struct sframe_header h;
		int eh;

		if (hb) {
			memcpy(hb, sec, hl);
			memset(&h, 0, sizeof(h));
			eh = sframe_parse_header(hb, len, &h);
			code_ok(eh, "parse_header");
			if (eh != e1)
				FAIL("parse_header %d, init %d", eh, e1);
			if (!eh && memcmp(&h, &c.mem.hdr, sizeof(h)))
				FAIL("parse_header and init headers differ");
			free(hb);
		}
	}
	if (!e1 && c.mem.hdr.size > len)
		FAIL("init: header size %llu > section %llu",
		     (unsigned long long)c.mem.hdr.size,
		     (unsigned long long)len);
	if (e1 || e2)
		goto out;

	if (data[0] & 4) {
		uint64_t ts = addr + (uint64_t)((int64_t)(int8_t)data[1] * 0x100);

		c.mem.text_start = c.rd.text_start = ts;
		c.mem.text_end = c.rd.text_end = ts + (data[2] + 1) * 0x200ULL;
	}

	e2 = sframe_validate(&c.rd);
	code_ok(e2, "validate");
	if (!c.faulty) {
		e1 = sframe_validate(&c.mem);
		same(e1, e2, NULL, NULL, 0, "validate mem/reader", 0);
	} else {
		e1 = e2;
	}
	c.validated = e1 == SFRAME_OK;

	/* The bounded view, and its validation. */
	{
		static const uint32_t limits[8] = {
			0, 1, 2, 3, 8, 64, 4096, 65535,
		};
		uint32_t most = 0;

		c.bud = c.mem;
		c.bud.max_fres = limits[data[2] & 7];
		c.bud.budget = &c.budget;
		c.budget_max = data[3] == 255 ? 1U << 20 : data[3];
		k = sframe_validate(&c.bud);
		code_ok(k, "validate (bounded)");
		for (i = 0; c.validated && !c.faulty && i < c.mem.hdr.num_fdes;
		     i++) {
			struct sframe_fde f;

			if (!sframe_fde_at(&c.mem, i, &f) && f.num_fres > most)
				most = f.num_fres;
		}
		if (c.validated && !c.faulty &&
		    k != (c.bud.max_fres && most > c.bud.max_fres ?
			  SFRAME_E_FDE_FRES : SFRAME_OK))
			FAIL("validate with max_fres %u: %d, the most FREs %u",
			     c.bud.max_fres, k, most);
	}

	/* An index on a third copy of the section (memory). */
	if (!c.faulty) {
		uint8_t shift = 0;
		uint32_t words;

		c.idx = c.mem;
		words = sframe_index_words(&c.idx, &shift);
		if (c.validated && !words)
			FAIL("validated, but index_words is 0");
		if (words && words <= INDEX_MAX) {
			index = calloc(words, sizeof(*index));
			if (index) {
				k = sframe_index_build(&c.idx, index, words,
						       shift);
				code_ok(k, "index_build");
				if (c.validated && k)
					FAIL("validated, but index_build %d",
					     k);
				c.indexed = !k;
			}
		}
	}

	/*
	 * The flat table (the module builds it without the full walk when
	 * validate_sframe is off: it must be safe on any section).
	 */
	if (!c.faulty) {
		uint32_t n = 0;

		k = sframe_flat_count(&c.mem, &n);
		code_ok(k, "flat_count");
		if (!k && n <= FLAT_PER_BYTE * c.mem.hdr.size + FLAT_EXTRA) {
			c.flat.offs = calloc(n ? n : 1, sizeof(uint32_t));
			c.flat.rule_of = calloc(n ? n : 1, sizeof(uint32_t));
			c.flat.rules = calloc(FLAT_RULES, sizeof(*c.flat.rules));
			flat_hash = calloc(1U << FLAT_HASH_BITS, sizeof(uint32_t));
			if (c.flat.offs && c.flat.rule_of && c.flat.rules &&
			    flat_hash) {
				resched_calls = 0;
				c.mem.resched = count_resched;
				k = sframe_flat_build(&c.mem, &c.flat, n,
						      FLAT_RULES, flat_hash,
						      FLAT_HASH_BITS);
				c.mem.resched = NULL;
				code_ok(k, "flat_build");
				/* Every FDE or block of FREs is work. */
				if (!k && resched_calls < c.flat.nr / 2 /
				    SFRAME_RESCHED_EVERY)
					FAIL("flat_build of %u entries: %lu reschedules",
					     c.flat.nr, resched_calls);
				c.flat_ok = !k;
				for (i = 1; c.flat_ok && i < c.flat.nr; i++)
					if (c.flat.offs[i] < c.flat.offs[i - 1])
						FAIL("flat table not sorted at %u", i);
			}
			/* Half the inputs: with the bucket index. */
			if (c.flat_ok && data[1] & 1) {
				uint8_t sh = 0;
				uint32_t nw = sframe_flat_index_words(&c.flat,
								      &sh);

				flat_index = nw ? calloc(nw, sizeof(uint32_t)) :
						  NULL;
				if (flat_index)
					sframe_flat_index_build(&c.flat,
								flat_index,
								nw, sh);
			}
		}
	}

	if (c.changed) {
		uint64_t at = ((uint64_t)data[1] << 8 | data[3]) % len;

		if (race) {
			c.reader.flip_at = c.reader.nreads + data[3] % 16 + 1;
			c.reader.flip_off = at;
			c.reader.flip = data[2] | 1;
		} else {
			copy[at] ^= data[2] | 1;
			rcopy[at] ^= data[2] | 1;
		}
	}

	nf = c.mem.hdr.num_fdes;
	for (k = 0; k < MAX_FDES && (uint32_t)k < nf; k++) {
		/* Spread over the array, the first and the last included. */
		i = nf <= MAX_FDES ? (uint32_t)k :
			(uint32_t)((uint64_t)k * (nf - 1) / (MAX_FDES - 1));
		check_fde(&c, i);
	}
	{
		struct sframe_fde f;

		if (sframe_fde_at(&c.mem, nf, &f) != SFRAME_E_NOT_FOUND)
			FAIL("fde_at(num_fdes) is not NOT_FOUND");
	}

	/* pcs from the input itself. */
	for (k = 0; k < 4; k++) {
		struct sframe_rule r;
		uint64_t v = 0;
		size_t o = (size_t)k * 8;
		int b;

		if (o + 8 > size)
			break;
		for (b = 0; b < 8; b++)
			v |= (uint64_t)data[o + b] << (8 * b);
		find_both(&c, v, &r);
		find_both(&c, addr + (uint32_t)v, &r);
	}
	{
		struct sframe_rule r;

		find_both(&c, 0, &r);
		find_both(&c, ~0ULL, &r);
		find_both(&c, addr, &r);
	}
out:
	free(copy);
	free(rcopy);
	free(index);
	free(c.flat.offs);
	free(c.flat.rule_of);
	free(c.flat.rules);
	free(flat_hash);
	free(flat_index);
	return 0;
}
