/* SPDX-License-Identifier: GPL-2.0-only OR LGPL-2.1-or-later */
/*
 * SFrame decoding, freestanding: no libc, no kernel API.  The same source
 * is compiled into the codectl module and into user space (library, tools,
 * tests, fuzzer), so it only uses fixed-width integer types and NULL,
 * from the kernel's headers or from the freestanding <stdint.h> and
 * <stddef.h> of C99.
 *
 * The section's bytes are either directly addressable (user space) or
 * read through a bounded reader callback (the kernel reads user memory
 * with it).  Every read is bounds-checked against the section size first,
 * and every value read during a lookup is checked again, so a section
 * that changes after validation can only make a lookup fail, never read
 * outside the section.
 *
 * Fields are decoded byte by byte in the section's byte order, so the
 * code runs on any host and needs no alignment.
 *
 * Layout facts: binutils' libsframe/doc/sframe-spec.texi; the toolchains'
 * known defects: tests/sframe/KNOWN-DIFFERENCES.md.
 */
#ifndef CODECTL_SFRAME_H
#define CODECTL_SFRAME_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

#define SFRAME_MAGIC		0xdee2
#define SFRAME_HEADER_SIZE	28

#define SFRAME_VERSION_1	1
#define SFRAME_VERSION_2	2
#define SFRAME_VERSION_3	3

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4

#define SFRAME_ABI_AARCH64_BE	1
#define SFRAME_ABI_AARCH64_LE	2
#define SFRAME_ABI_AMD64_LE	3
#define SFRAME_ABI_S390X_BE	4

/*
 * Why a section, an FDE or an FRE was refused.  0 is success.  The values
 * are ABI: CODECTL_CHECK_SFRAME reports them (CODECTL_SFRAME_E_* in
 * uapi/linux/codectl.h, checked equal at build time): append only.
 */
enum sframe_err {
	SFRAME_OK = 0,
	/* header */
	SFRAME_E_TRUNCATED,	/* section shorter than its header */
	SFRAME_E_MAGIC,		/* bad magic in either byte order */
	SFRAME_E_VERSION,	/* version not 1, 2 or 3 */
	SFRAME_E_ABI,		/* unknown ABI, or byte order not the ABI's */
	SFRAME_E_FLAGS,		/* unknown flags, or flags the version forbids */
	SFRAME_E_AUXHDR,	/* auxiliary header runs past the section */
	SFRAME_E_NO_FDES,	/* num_fdes or num_fres is 0 */
	SFRAME_E_FDES_BOUNDS,	/* FDE array outside the section */
	SFRAME_E_FRES_BOUNDS,	/* FRE sub-section outside the section */
	SFRAME_E_OVERLAP,	/* FRE sub-section starts inside the FDEs */
	SFRAME_E_FIXED_RA,	/* fixed RA offset missing (AMD64) */
	/* FDEs */
	SFRAME_E_UNSORTED,	/* FDEs not sorted by address (or flag unset) */
	SFRAME_E_FDE_OVERLAP,	/* a function overlaps the next one */
	SFRAME_E_FUNC_RANGE,	/* function outside the registered text */
	SFRAME_E_FUNC_WRAP,	/* function start + size overflows */
	SFRAME_E_FDE_FRE_OFF,	/* FDE's FREs (or v3 attributes) out of bounds */
	SFRAME_E_FDE_INFO,	/* bad FRE type, pc type, FDE type or rep size */
	SFRAME_E_FDE_NO_FRES,	/* unused: gas 2.47 emits FDEs without FREs */
	/* FREs */
	SFRAME_E_FRE_BOUNDS,	/* FRE runs past the FRE sub-section */
	SFRAME_E_FRE_ORDER,	/* FRE starts not strictly increasing */
	SFRAME_E_FRE_START,	/* FRE starts at or past the function's end */
	SFRAME_E_FRE_SIZE,	/* data word size 3 (undefined) */
	SFRAME_E_FRE_COUNT,	/* data word count invalid for ABI/FDE type */
	SFRAME_E_FRE_FLEX,	/* FLEX data words inconsistent */
	SFRAME_E_FRE_TOTAL,	/* FRE count or bytes differ from the header */
	SFRAME_E_FRE_RANGE,	/* decoded offset or register out of range */
	/* lookups */
	SFRAME_E_READ,		/* the reader failed (user memory fault) */
	SFRAME_E_NOT_FOUND,	/* no FDE covers the pc: a normal answer */
	SFRAME_E_NO_FRE,	/* pc before the first FRE of its function */
	SFRAME_E_FDE_FRES,	/* an FDE has more FREs than sec->max_fres */
	SFRAME_E_BUDGET,	/* a lookup ran out of sec->budget */
	SFRAME_E_NR_CODES
};

/**
 * struct sframe_header - the decoded fixed header
 * @version:		1, 2 or 3
 * @flags:		SFRAME_F_* bits
 * @abi:		SFRAME_ABI_*
 * @big_endian:		1 if the section's fields are big-endian
 * @cfa_fixed_fp_offset: FP saved at CFA + this when fixed by the ABI, else 0
 * @cfa_fixed_ra_offset: RA saved at CFA + this when fixed (-8 on AMD64)
 * @auxhdr_len:		bytes of auxiliary header after the fixed header
 * @num_fdes:		function descriptor entries
 * @num_fres:		frame row entries
 * @fre_len:		bytes of the FRE sub-section
 * @fdes_off:		FDE array, from the end of the headers
 * @fres_off:		FRE sub-section, from the end of the headers
 * @fde_size:		bytes of one FDE (index entry in v3)
 * @size:		bytes the section needs: headers + the end of the
 *			FRE sub-section
 */
struct sframe_header {
	uint8_t version;
	uint8_t flags;
	uint8_t abi;
	uint8_t big_endian;
	int8_t cfa_fixed_fp_offset;
	int8_t cfa_fixed_ra_offset;
	uint8_t auxhdr_len;
	uint32_t num_fdes;
	uint32_t num_fres;
	uint32_t fre_len;
	uint32_t fdes_off;
	uint32_t fres_off;
	uint32_t fde_size;
	uint64_t size;
};

/**
 * typedef sframe_read_fn - read bytes of a section that is not addressable
 * @ctx:	the reader's context
 * @off:	offset in the section; off + len <= the section size
 * @dst:	where to put the bytes
 * @len:	at most SFRAME_READ_MAX
 *
 * Return: 0, or non-zero when the bytes cannot be read.
 */
typedef int (*sframe_read_fn)(void *ctx, uint64_t off, void *dst,
			      uint32_t len);

/* Largest single read the decoder asks of a reader. */
#define SFRAME_READ_MAX		128

/**
 * struct sframe_sec - a section ready for lookups
 * @hdr:	its decoded header
 * @addr:	run-time address of the section's first byte
 * @size:	bytes the section may occupy (registered range or segment)
 * @mem:	the section's bytes when addressable, else NULL
 * @read:	the reader when @mem is NULL
 * @ctx:	the reader's context
 * @text_start:	functions must lie in [text_start, text_end); both 0: anywhere
 * @text_end:	see @text_start
 * @fdes:	offset of the FDE array in the section
 * @fres:	offset of the FRE sub-section in the section
 * @fres_end:	end of the FRE sub-section
 * @index:	optional FDE index (sframe_index_build()), or NULL
 * @index_base:	address of the index's first bucket
 * @index_nb:	buckets in the index
 * @index_shift: log2 of the bytes of text per bucket
 * @max_fres:	0, or the most FREs a function may have: sframe_validate()
 *		refuses an FDE with more (SFRAME_E_FDE_FRES), and a lookup
 *		scans no more than that (SFRAME_E_BUDGET past it)
 * @budget:	NULL, or work a lookup may still do, which it decrements:
 *		one unit per FDE it reads and per FRE it scans; a lookup
 *		that would go below 0 fails with SFRAME_E_BUDGET.  With
 *		@max_fres this bounds a lookup's time whatever the section
 *		says (the kernel walks stacks in NMI)
 * @resched:	NULL, or called every few thousand FDEs or entries by the
 *		loops over a whole section (validation, counting, flat table
 *		and FDE index builds); non-zero stops them with SFRAME_E_READ
 *		(the kernel reschedules there and stops for a fatal signal)
 *
 * Filled by sframe_init() and sframe_index_build(); the caller sets
 * nothing else but the text range, @max_fres, @budget and @resched.
 */
struct sframe_sec {
	struct sframe_header hdr;
	uint64_t addr;
	uint64_t size;
	const uint8_t *mem;
	sframe_read_fn read;
	void *ctx;
	uint64_t text_start;
	uint64_t text_end;
	uint64_t fdes;
	uint64_t fres;
	uint64_t fres_end;
	const uint32_t *index;
	uint64_t index_base;
	uint32_t index_nb;
	uint8_t index_shift;
	uint32_t max_fres;
	uint32_t *budget;
	int (*resched)(void);
};

/* Loops over a whole section call sframe_sec.resched this often. */
#define SFRAME_RESCHED_EVERY	4096

/**
 * struct sframe_fde - one function descriptor, decoded
 * @func_start:	run-time address of the function
 * @func_size:	its size in bytes
 * @fres_at:	offset in the section of its first FRE
 * @num_fres:	its number of FREs
 * @fre_type:	0, 1, 2: FRE starts are 1, 2 or 4 bytes
 * @pc_mask:	1 for PCMASK (repeated blocks of @rep_size bytes), 0 PCINC
 * @flex:	1 for a v3 FLEX FDE
 * @signal:	1 for a v3 signal-frame FDE
 * @pauth_key_b: 1 when AArch64 return addresses are signed with key B
 * @rep_size:	repetition block size for PCMASK
 */
struct sframe_fde {
	uint64_t func_start;
	uint32_t func_size;
	uint64_t fres_at;
	uint32_t num_fres;
	uint8_t fre_type;
	uint8_t pc_mask;
	uint8_t flex;
	uint8_t signal;
	uint8_t pauth_key_b;
	uint8_t rep_size;
};

/* Where a recovered value comes from (struct sframe_loc.kind). */
enum sframe_loc_kind {
	SFRAME_LOC_SAME = 0,	/* unchanged: the callee did not save it */
	SFRAME_LOC_UNDEF,	/* undefined: there is no caller */
	SFRAME_LOC_VAL,		/* base + off */
	SFRAME_LOC_MEM,		/* the memory at base + off */
};

/* Bases (struct sframe_loc.base) other than a DWARF register number. */
#define SFRAME_BASE_SP		0x1000	/* the ABI's stack pointer */
#define SFRAME_BASE_FP		0x1001	/* the ABI's frame pointer */
#define SFRAME_BASE_CFA		0x1002	/* the CFA just computed */

/**
 * struct sframe_loc - how to recover one value
 * @kind:	enum sframe_loc_kind
 * @base:	SFRAME_BASE_* or a DWARF register number (FLEX, s390x v2)
 * @off:	byte offset added to the base
 */
struct sframe_loc {
	uint8_t kind;
	uint16_t base;
	int32_t off;
};

/* struct sframe_rule.flags */
#define SFRAME_RULE_MANGLED_RA	0x1	/* AArch64: RA is PAC-signed */
#define SFRAME_RULE_SIGNAL	0x2	/* v3 signal frame */
#define SFRAME_RULE_OUTERMOST	0x4	/* no caller (RA undefined) */
#define SFRAME_RULE_FLEX	0x8	/* from a FLEX FDE */
#define SFRAME_RULE_PAUTH_KEY_B	0x10	/* AArch64: key B, else key A */

/**
 * struct sframe_rule - how to find the caller's frame at one pc
 * @cfa:	the CFA (SFRAME_LOC_VAL or _MEM of SP, FP or a register)
 * @ra:		the return address
 * @fp:		the caller's frame pointer
 * @flags:	SFRAME_RULE_* bits
 * @func_start:	start of the function the pc is in
 * @func_size:	its size
 */
struct sframe_rule {
	struct sframe_loc cfa;
	struct sframe_loc ra;
	struct sframe_loc fp;
	uint8_t flags;
	uint64_t func_start;
	uint32_t func_size;
};

/**
 * sframe_parse_header() - decode and check an SFrame section's header
 * @buf:	the first min(@section_size, SFRAME_HEADER_SIZE) bytes
 * @section_size: bytes the section may occupy (registered range or segment)
 * @hdr:	out: the decoded header, valid when SFRAME_OK is returned
 *
 * Checks everything the header alone can tell: magic, version, ABI and
 * byte order, flags, fixed offsets, and that the auxiliary header, the
 * FDE array and the FRE sub-section lie inside @section_size without
 * overflow.
 *
 * Return: SFRAME_OK or the enum sframe_err code of the first defect.
 */
int sframe_parse_header(const uint8_t *buf, uint64_t section_size,
			struct sframe_header *hdr);

/**
 * sframe_init() - prepare a section for lookups
 * @sec:	out: the section
 * @addr:	run-time address of the section
 * @size:	bytes it may occupy
 * @mem:	its bytes, or NULL to use @read
 * @read:	reader for a section that is not addressable, else NULL
 * @ctx:	the reader's context
 *
 * Reads and checks the header (sframe_parse_header()).  Lookups need the
 * FDEs sorted (SFRAME_F_FDE_SORTED), which every linked binary has;
 * sframe_fde_at() works on unsorted sections too.  Set @sec->text_start
 * and @sec->text_end afterwards to confine functions to a text range.
 *
 * Return: SFRAME_OK or an enum sframe_err code.
 */
int sframe_init(struct sframe_sec *sec, uint64_t addr, uint64_t size,
		const uint8_t *mem, sframe_read_fn read, void *ctx);

/**
 * sframe_index_words() - the size of an FDE index for a section
 * @sec:	the section (sorted)
 * @shift:	out: log2 of the bytes of text per bucket to pass to
 *		sframe_index_build()
 *
 * The index has about one bucket per function: each bucket holds the
 * number of the last FDE starting at or before the bucket, so a lookup
 * searches only the FDEs of one bucket instead of the whole array.
 *
 * Return: the number of uint32_t words the index needs, or 0 when the
 * section cannot have one (unsorted, unreadable).
 */
uint32_t sframe_index_words(const struct sframe_sec *sec, uint8_t *shift);

/**
 * sframe_index_build() - build the FDE index of a section
 * @sec:	the section; its lookups use the index from now on
 * @words:	memory for the index, which must outlive @sec's use
 * @nwords:	sframe_index_words()
 * @shift:	as sframe_index_words() said
 *
 * Reads every FDE's start once.  The index only narrows the binary
 * search, whose results are checked as without it, so an index of a
 * section that changed afterwards can make lookups fail, never go wrong
 * or out of bounds.
 *
 * Return: SFRAME_OK or an enum sframe_err code (no index is used then).
 */
int sframe_index_build(struct sframe_sec *sec, uint32_t *words,
		       uint32_t nwords, uint8_t shift);

/**
 * sframe_fde_at() - decode the FDE at an index
 * @sec:	the section
 * @i:		index, below hdr.num_fdes
 * @fde:	out: the FDE
 *
 * Checks what one FDE can tell: its info bits, function range and where
 * its FREs are.
 *
 * Return: SFRAME_OK or an enum sframe_err code.
 */
int sframe_fde_at(const struct sframe_sec *sec, uint32_t i,
		  struct sframe_fde *fde);

/**
 * sframe_find_fde() - the FDE of the function holding a pc
 * @sec:	the section (sorted)
 * @pc:		run-time address
 * @fde:	out: the FDE
 *
 * A binary search over the FDEs' absolute start addresses: O(log n).
 *
 * Return: SFRAME_OK, SFRAME_E_NOT_FOUND when no function holds @pc, or
 * another enum sframe_err code.
 */
int sframe_find_fde(const struct sframe_sec *sec, uint64_t pc,
		    struct sframe_fde *fde);

/**
 * sframe_fde_rule() - the rule at a pc of a function
 * @sec:	the section
 * @fde:	the function's FDE (from sframe_fde_at() or sframe_find_fde())
 * @pc:		run-time address inside the function
 * @rule:	out: the rule
 *
 * Scans the function's FREs (at most num_fres, each bounds-checked) for
 * the last one starting at or before @pc, and decodes it for the ABI.
 *
 * Return: SFRAME_OK or an enum sframe_err code (SFRAME_E_NO_FRE for a pc
 * before the first FRE).
 */
int sframe_fde_rule(const struct sframe_sec *sec,
		    const struct sframe_fde *fde, uint64_t pc,
		    struct sframe_rule *rule);

/**
 * sframe_find() - the rule at a pc: sframe_find_fde() + sframe_fde_rule()
 * @sec:	the section
 * @pc:		run-time address
 * @rule:	out: the rule
 *
 * Return: SFRAME_OK, SFRAME_E_NOT_FOUND, or another enum sframe_err code.
 */
int sframe_find(const struct sframe_sec *sec, uint64_t pc,
		struct sframe_rule *rule);

/**
 * sframe_validate() - walk every FDE and FRE once
 * @sec:	the section
 *
 * Everything sframe_fde_at() and sframe_fde_rule() check, for all FDEs
 * and FREs, plus: FDEs sorted by absolute address and not overlapping,
 * FRE starts strictly increasing and inside their function (an FDE may
 * have no FRE: gas emits such FDEs), and the FREs
 * counted and their bytes summed equal the header's num_fres and fre_len
 * (every declared value is consumed).  O(FDEs + FREs) time, O(1) memory.
 *
 * Return: SFRAME_OK or the enum sframe_err code of the first defect.
 */
int sframe_validate(const struct sframe_sec *sec);

/*
 * A flat lookup table: every FRE of a section as one sorted array of pc
 * offsets, each pointing at a decoded rule, with the rules shared.  Built
 * once from a validated, addressable section (the kernel's copy made at
 * registration); a lookup is then one binary search over 32-bit offsets,
 * with nothing to decode.  The rules it returns have func_start and
 * func_size 0.
 */
#define SFRAME_FLAT_NONE	0xffffffffU	/* no rule from here on */

/**
 * struct sframe_flat - a flat lookup table
 * @base:	address the offsets count from
 * @nr:		entries
 * @nr_rules:	distinct rules
 * @offs:	@nr offsets from @base, non-decreasing
 * @rule_of:	@nr indexes into @rules, or SFRAME_FLAT_NONE
 * @rules:	the rules
 * @index:	optional (sframe_flat_index_build()): entry number of the
 *		first offset at or above each bucket's start, @index_nb + 1
 *		words, or NULL
 * @index_nb:	buckets
 * @index_shift: log2 of the bytes of text per bucket
 */
struct sframe_flat {
	uint64_t base;
	uint32_t nr;
	uint32_t nr_rules;
	uint32_t *offs;
	uint32_t *rule_of;
	struct sframe_rule *rules;
	uint32_t *index;
	uint32_t index_nb;
	uint8_t index_shift;
};

/**
 * sframe_flat_count() - entries a flat table of a section needs
 * @sec:	the section, validated
 * @nr:		out: the number of entries (at most UINT32_MAX - 1)
 *
 * One per FRE (per FRE and repetition for PCMASK FDEs) plus one per
 * function end.
 *
 * Return: SFRAME_OK, SFRAME_E_FRE_TOTAL when more than UINT32_MAX - 1
 * would be needed, or another enum sframe_err code.
 */
int sframe_flat_count(const struct sframe_sec *sec, uint32_t *nr);

/**
 * sframe_flat_build() - fill a flat table
 * @sec:	the section, validated and addressable
 * @flat:	@offs and @rule_of with room for @max_entries, @rules for
 *		@max_rules; out: everything else
 * @max_entries: sframe_flat_count()
 * @max_rules:	room in @flat->rules
 * @hash:	scratch: 1 << @hash_bits words, for sharing rules
 * @hash_bits:	log2 of the words of @hash; 1 << @hash_bits must be larger
 *		than @max_rules
 *
 * Functions must lie within 4 GiB above the first one (or above
 * @sec->text_start when set).
 *
 * Return: SFRAME_OK; SFRAME_E_FRE_TOTAL when the entries or distinct
 * rules do not fit; SFRAME_E_FUNC_RANGE when functions span 4 GiB or
 * more; or another enum sframe_err code.
 */
int sframe_flat_build(const struct sframe_sec *sec, struct sframe_flat *flat,
		      uint32_t max_entries, uint32_t max_rules,
		      uint32_t *hash, uint8_t hash_bits);

/**
 * sframe_flat_index_words() - the size of a flat table's bucket index
 * @flat:	the table
 * @shift:	out: log2 of the bytes per bucket to pass on
 *
 * About one bucket per two entries, so that a lookup looks at a few
 * entries instead of searching them all.
 *
 * Return: the number of uint32_t words the index needs (0: none needed).
 */
uint32_t sframe_flat_index_words(const struct sframe_flat *flat,
				 uint8_t *shift);

/**
 * sframe_flat_index_build() - build the bucket index of a flat table
 * @flat:	the table; its lookups use the index from now on
 * @words:	memory for the index
 * @nwords:	sframe_flat_index_words()
 * @shift:	as sframe_flat_index_words() said
 */
void sframe_flat_index_build(struct sframe_flat *flat, uint32_t *words,
			     uint32_t nwords, uint8_t shift);

/**
 * sframe_flat_mem() - the bytes a built flat table holds
 * @flat:	the table
 * @index_words: words of its bucket index (0: none)
 *
 * The header, the offsets and rule numbers of its entries, its distinct
 * rules and its index: what the module charges for it.
 *
 * Return: the size in bytes.
 */
static inline uint64_t sframe_flat_mem(const struct sframe_flat *flat,
				       uint32_t index_words)
{
	return sizeof(*flat) +
	       (uint64_t)flat->nr * (sizeof(*flat->offs) +
				     sizeof(*flat->rule_of)) +
	       (uint64_t)flat->nr_rules * sizeof(*flat->rules) +
	       (uint64_t)index_words * sizeof(*flat->index);
}

/**
 * sframe_flat_find() - the rule at a pc, from a flat table
 * @flat:	the table
 * @pc:		run-time address
 *
 * Inline: it is the unwinder's per-frame lookup.
 *
 * Return: the rule, or NULL when no FRE covers @pc (where sframe_find()
 * says SFRAME_E_NOT_FOUND or SFRAME_E_NO_FRE).
 */
static inline const struct sframe_rule *
sframe_flat_find(const struct sframe_flat *flat, uint64_t pc)
{
	uint32_t lo = 0, n = flat->nr, off, rule, b, half;
	const uint32_t *p;

	if (pc < flat->base || pc - flat->base > 0xffffffffULL)
		return NULL;
	off = (uint32_t)(pc - flat->base);
	b = off >> flat->index_shift;
	if (flat->index && b < flat->index_nb) {
		/*
		 * Entries below words[b] lie below the bucket, those from
		 * words[b + 1] on above @off: the answer is in between,
		 * or is the entry just below.
		 */
		lo = flat->index[b] ? flat->index[b] - 1 : 0;
		if (flat->index[b + 1] > flat->nr || lo > flat->index[b + 1])
			return NULL;
		n = flat->index[b + 1] - lo;
	}
	if (!n)
		return NULL;
	/*
	 * The last entry at or below @off (later entries win ties), by a
	 * search whose steps select instead of branch: the pcs a profile
	 * looks up are random, so a branch on each comparison would be
	 * mispredicted half the time, and a few mispredictions cost more
	 * than the search's loads.  @p stays on the last entry at or below
	 * @off if there is one in range, else on the first.
	 */
	p = flat->offs + lo;
	while (n > 1) {
		half = n / 2;
		p = p[half] <= off ? p + half : p;
		n -= half;
	}
	if (*p > off)
		return NULL;
	rule = flat->rule_of[p - flat->offs];
	return rule == SFRAME_FLAT_NONE ? NULL : &flat->rules[rule];
}

/**
 * sframe_strerror() - a short description of an enum sframe_err code
 * @err:	the code
 *
 * Return: a static string, never NULL.
 */
const char *sframe_strerror(int err);

#endif /* CODECTL_SFRAME_H */
