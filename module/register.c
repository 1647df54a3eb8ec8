// SPDX-License-Identifier: GPL-2.0
/*
 * Module, registration pipeline: everything between "here is an ELF object or
 * a JIT region" and "it is in the address space's registry", whoever asks
 * (the CODECTL_REGISTER_* ioctls, discovery, later imports).  Callers
 * hand over a description whose fields they have checked for their own
 * ABI; this unit checks what does not depend on where the description
 * came from (ranges consistent, mappings present), checks the SFrame
 * section, builds its flat table (or sets it up for decoding in place),
 * copies strings and the build id, and inserts under the mmap lock.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "arch.h"
#include "internal.h"
#include "sframe.h"

/*
 * Copy a user string of at most CODECTL_PATH_MAX bytes with its NUL.
 * Return: a kmalloc'ed copy, NULL for a 0 pointer, or an ERR_PTR:
 * -EFAULT, -ENAMETOOLONG, -EINVAL (empty), -ENOMEM.
 */
static char *codectl_strdup_user(u64 uptr)
{
	const char __user *ustr = u64_to_user_ptr(uptr);
	long len;
	char *s;

	if (!uptr)
		return NULL;
	len = strnlen_user(ustr, CODECTL_PATH_MAX);
	if (!len)
		return ERR_PTR(-EFAULT);
	if (len > CODECTL_PATH_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	s = kmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(s, ustr, len)) {
		kfree(s);
		return ERR_PTR(-EFAULT);
	}
	s[len - 1] = '\0';	/* the string may have changed under us */
	if (!s[0]) {
		kfree(s);
		return ERR_PTR(-EINVAL);
	}
	return s;
}

/* The decoder's codes are ABI through CODECTL_CHECK_SFRAME. */
#define CODECTL_SAME_CODE(x) static_assert(SFRAME_##x == CODECTL_SFRAME_##x)
CODECTL_SAME_CODE(OK);
CODECTL_SAME_CODE(E_TRUNCATED);
CODECTL_SAME_CODE(E_MAGIC);
CODECTL_SAME_CODE(E_VERSION);
CODECTL_SAME_CODE(E_ABI);
CODECTL_SAME_CODE(E_FLAGS);
CODECTL_SAME_CODE(E_AUXHDR);
CODECTL_SAME_CODE(E_NO_FDES);
CODECTL_SAME_CODE(E_FDES_BOUNDS);
CODECTL_SAME_CODE(E_FRES_BOUNDS);
CODECTL_SAME_CODE(E_OVERLAP);
CODECTL_SAME_CODE(E_FIXED_RA);
CODECTL_SAME_CODE(E_UNSORTED);
CODECTL_SAME_CODE(E_FDE_OVERLAP);
CODECTL_SAME_CODE(E_FUNC_RANGE);
CODECTL_SAME_CODE(E_FUNC_WRAP);
CODECTL_SAME_CODE(E_FDE_FRE_OFF);
CODECTL_SAME_CODE(E_FDE_INFO);
CODECTL_SAME_CODE(E_FDE_NO_FRES);
CODECTL_SAME_CODE(E_FRE_BOUNDS);
CODECTL_SAME_CODE(E_FRE_ORDER);
CODECTL_SAME_CODE(E_FRE_START);
CODECTL_SAME_CODE(E_FRE_SIZE);
CODECTL_SAME_CODE(E_FRE_COUNT);
CODECTL_SAME_CODE(E_FRE_FLEX);
CODECTL_SAME_CODE(E_FRE_TOTAL);
CODECTL_SAME_CODE(E_FRE_RANGE);
CODECTL_SAME_CODE(E_FDE_FRES);

/**
 * codectl_sframe_read() - the decoder's reader for a section in the
 *	caller's memory
 * @ctx:	the struct sframe_sec being read
 * @off:	offset in the section
 * @dst:	where the bytes go
 * @len:	how many
 *
 * Return: 0, or -1 when the memory cannot be read.
 */
static int codectl_sframe_read(void *ctx, u64 off, void *dst, u32 len)
{
	const struct sframe_sec *sec = ctx;

	return copy_from_user(dst, u64_to_user_ptr(sec->addr + off), len) ?
	       -1 : 0;
}

/*
 * The decoder's resched in loops over a whole section (validation, flat
 * table and index builds): a section in user memory can be of any size.
 */
static int codectl_sframe_resched(void)
{
	cond_resched();
	return fatal_signal_pending(current);
}

/*
 * The checks after the header's, on a section ready for lookups: with
 * @full, every FDE and FRE, and no function with more than
 * CODECTL_SFRAME_MAX_FRES FREs (the bound of an in-place lookup's scan).
 */
static int codectl_sframe_check_sec(struct sframe_sec *sec, u64 text_start,
				    u64 text_end, bool full)
{
	if (sec->hdr.abi != CODECTL_ARCH_SFRAME_ABI)
		return SFRAME_E_ABI;
	sec->text_start = text_start;
	sec->text_end = text_end;
	sec->max_fres = CODECTL_SFRAME_MAX_FRES;
	sec->resched = codectl_sframe_resched;
	return full ? sframe_validate(sec) : SFRAME_OK;
}

/**
 * codectl_sframe_check_user() - check an SFrame section in the caller's memory
 * @start:	the section
 * @end:	its end
 * @text_start:	functions must lie in [@text_start, @text_end), or 0
 * @text_end:	see @text_start (0, 0: anywhere)
 * @full:	walk every FDE and FRE, not only the header
 * @check:	if not NULL, gets the header's version and counts
 *
 * Its header, that it is for this machine, and with @full every FDE and
 * FRE.  Reads user memory: task context.
 *
 * Return: SFRAME_OK or the decoder's enum sframe_err code.
 */
int codectl_sframe_check_user(u64 start, u64 end, u64 text_start,
			      u64 text_end, bool full,
			      struct codectl_sframe_check *check)
{
	struct sframe_sec sec;
	int err;

	err = sframe_init(&sec, start, end - start, NULL, codectl_sframe_read,
			  &sec);
	if (err)
		return err;
	if (check) {
		check->version = sec.hdr.version;
		check->num_fdes = sec.hdr.num_fdes;
		check->num_fres = sec.hdr.num_fres;
	}
	return codectl_sframe_check_sec(&sec, text_start, text_end, full);
}

/**
 * codectl_sframe_summarize() - what QUERY says about a registration's section
 * @reg:	the registration, not yet inserted
 * @sec:	its section, set up (sframe_init()) and checked
 *
 * The header's version and counts, and the coverage: the bytes of the
 * text inside the functions of the FDEs, their union clipped to the
 * text.  FDEs are sorted and disjoint once validated; without
 * validation an unsorted or overlapping FDE only makes the figure larger,
 * and it is capped at the text's size.  Reads every FDE once (in user
 * memory for a section decoded there); an FDE that cannot be read ends
 * the count.
 */
static void codectl_sframe_summarize(struct codectl_reg *reg,
				     const struct sframe_sec *sec)
{
	u64 covered = 0, end = reg->text_start, s, e;
	struct sframe_fde fde;
	u32 i;

	reg->sframe_version = sec->hdr.version;
	reg->num_fdes = sec->hdr.num_fdes;
	reg->num_fres = sec->hdr.num_fres;
	for (i = 0; i < sec->hdr.num_fdes; i++) {
		if (sframe_fde_at(sec, i, &fde))
			break;
		s = max(fde.func_start, end);
		e = min(fde.func_start + fde.func_size, reg->text_end);
		if (s < e) {
			covered += e - s;
			end = e;
		}
		if (!(i & 1023))
			cond_resched();
	}
	reg->coverage = min(covered, reg->text_end - reg->text_start);
}

/* codectl_sframe_summarize() of a section given by its bytes or in place. */
static void codectl_sframe_summarize_mem(struct codectl_reg *reg,
					 const u8 *mem)
{
	struct sframe_sec sec;
	u64 size = reg->sframe_end - reg->sframe_start;

	if (sframe_init(&sec, reg->sframe_start, size, mem,
			mem ? NULL : codectl_sframe_read, &sec))
		return;
	codectl_sframe_summarize(reg, &sec);
}

/* Distinct rules a flat table may have (real sections have tens). */
#define CODECTL_FLAT_MAX_RULES	4096
#define CODECTL_FLAT_HASH_BITS	13

/*
 * Entries a flat table may have: CODECTL_FLAT_PER_BYTE per byte of its
 * section plus CODECTL_FLAT_EXTRA.  A PCINC FRE takes 2 bytes at least,
 * so only PCMASK FDEs (PLT stubs: one block of FREs repeated over the
 * function) expand beyond that; the allowance holds 21,000 PLT stubs.  A
 * table is at most 10 bytes per entry and 48 per rule (4096 at most): 20
 * bytes per byte of section plus 832 KiB.
 */
#define CODECTL_FLAT_PER_BYTE	2
#define CODECTL_FLAT_EXTRA	(64U << 10)

/*
 * The most bytes the flat table of @n entries can take: offsets and rule
 * numbers, an index of at most n / 2 + 2 words, the distinct rules.
 */
static u64 codectl_flat_bytes(u64 n)
{
	return sizeof(struct sframe_flat) + n * 2 * sizeof(u32) +
	       (n / 2 + 2) * sizeof(u32) +
	       min_t(u64, n, CODECTL_FLAT_MAX_RULES) *
	       sizeof(struct sframe_rule);
}

unsigned long codectl_sframe_flat_max = 4UL << 20;
module_param_named(sframe_flat_max, codectl_sframe_flat_max, ulong, 0644);
MODULE_PARM_DESC(sframe_flat_max,
		 "SFrame sections up to this size (default 4 MiB) get a flat lookup table in the kernel at registration (about 8 bytes per FRE, counted against max_bytes); larger ones, and any that would not fit max_bytes, are decoded at each unwind: in user memory, or synthesised ones (imports) in the kernel's copy");

/**
 * codectl_flat_free_arrays() - free what a flat table's arrays hold
 * @flat:	a table filled by codectl_flat_fill() (not the struct itself)
 */
void codectl_flat_free_arrays(struct sframe_flat *flat)
{
	kvfree(flat->offs);
	kvfree(flat->rule_of);
	kvfree(flat->rules);
	kvfree(flat->index);
	flat->offs = NULL;
	flat->rule_of = NULL;
	flat->rules = NULL;
	flat->index = NULL;
}

/*
 * Fill the flat lookup table @flat (zeroed) of a checked copy of a
 * section, if it fits in @room bytes and within the expansion bound: its
 * size is known before anything is allocated.  *@mem gets its bytes.
 * Return: 0, or -ENOMEM / -E2BIG when the section gets none (its arrays
 * are freed).
 */
static int codectl_flat_fill(const struct sframe_sec *sec, u64 room,
			     struct sframe_flat *flat, u64 *mem)
{
	struct sframe_rule *rules;
	u32 *hash, *index = NULL, n, words = 0;
	int ret = -ENOMEM;
	u8 shift;

	if (sframe_flat_count(sec, &n) ||
	    n > (u64)CODECTL_FLAT_PER_BYTE * sec->hdr.size + CODECTL_FLAT_EXTRA)
		return -E2BIG;
	if (codectl_flat_bytes(n) > room)
		return -ENOMEM;
	rules = kvmalloc_array(CODECTL_FLAT_MAX_RULES, sizeof(*rules),
			       GFP_KERNEL_ACCOUNT);
	hash = kvmalloc_array(1U << CODECTL_FLAT_HASH_BITS, sizeof(*hash),
			      GFP_KERNEL_ACCOUNT);
	flat->offs = kvmalloc_array(n, sizeof(*flat->offs), GFP_KERNEL_ACCOUNT);
	flat->rule_of = kvmalloc_array(n, sizeof(*flat->rule_of),
				       GFP_KERNEL_ACCOUNT);
	if (!rules || !hash || !flat->offs || !flat->rule_of)
		goto out;
	flat->rules = rules;
	if (sframe_flat_build(sec, flat, n, CODECTL_FLAT_MAX_RULES, hash,
			      CODECTL_FLAT_HASH_BITS)) {
		ret = -E2BIG;
		goto out;
	}
	/* Keep only the rules used. */
	flat->rules = kvmalloc_array(max(flat->nr_rules, 1U), sizeof(*rules),
				     GFP_KERNEL_ACCOUNT);
	if (!flat->rules)
		goto out;
	memcpy(flat->rules, rules, flat->nr_rules * sizeof(*rules));
	words = sframe_flat_index_words(flat, &shift);
	if (words) {
		index = kvmalloc_array(words, sizeof(*index),
				       GFP_KERNEL_ACCOUNT);
		if (!index)
			goto out;
		sframe_flat_index_build(flat, index, words, shift);
	}
	*mem = sframe_flat_mem(flat, words);
	ret = 0;
out:
	/* The scratch rules are freed below, not with the table. */
	if (flat->rules == rules)
		flat->rules = NULL;
	if (ret)
		codectl_flat_free_arrays(flat);
	kvfree(rules);
	kvfree(hash);
	return ret;
}

/*
 * Build the flat lookup table of a checked copy of a section into @reg,
 * if it fits in @room bytes (codectl_flat_fill()).
 * Return: 0, or -ENOMEM / -E2BIG when the section gets none (it is then
 * decoded in user memory at each unwind).
 */
static int codectl_sframe_flatten(struct codectl_reg *reg,
				  const struct sframe_sec *sec, u64 room)
{
	struct sframe_flat *flat;
	u64 mem;
	int ret;

	flat = kzalloc(sizeof(*flat), GFP_KERNEL_ACCOUNT);
	if (!flat)
		return -ENOMEM;
	ret = codectl_flat_fill(sec, room, flat, &mem);
	if (ret) {
		kfree(flat);
		return ret;
	}
	reg->sframe_flat = flat;
	reg->sframe_mem = mem;
	return 0;
}

/**
 * codectl_flat_of_copy() - check a kernel copy of a section and flatten it
 * @mem:	the section
 * @addr:	the address it is decoded at
 * @size:	its size
 * @text_start:	its functions must lie in [@text_start, @text_end), the
 *		table's offsets are from @text_start
 * @text_end:	see @text_start
 * @flat:	out: the table (zeroed before), its arrays allocated here
 *		(codectl_flat_free_arrays())
 * @bytes:	out: what its arrays hold
 *
 * The full checks of registration, then the flat table, which must fit
 * the expansion bound and CODECTL_FLAT_MAX_RULES: an import's register
 * table (regtab.c), which the unwinder looks up in flat tables only.
 * Task context.
 *
 * Return: 0, -ENOEXEC (refused), -E2BIG (no flat table), -ENOMEM.
 */
int codectl_flat_of_copy(const u8 *mem, u64 addr, u64 size, u64 text_start,
			 u64 text_end, struct sframe_flat *flat, u64 *bytes)
{
	struct sframe_sec sec;
	int err;

	err = sframe_init(&sec, addr, size, mem, NULL, NULL);
	if (!err)
		err = codectl_sframe_check_sec(&sec, text_start, text_end, true);
	if (err)
		return -ENOEXEC;
	return codectl_flat_fill(&sec, U64_MAX, flat, bytes);
}

/*
 * What is left of max_bytes in current's address space: the tables of a
 * new registration are sized against it before they are built (the
 * insertion checks the limit again, under the registry's lock).
 */
static u64 codectl_mm_room(void)
{
	u64 max = READ_ONCE(codectl_max_bytes);
	unsigned int nr;
	size_t bytes;

	codectl_mm_usage(codectl_mm_find(current->mm), &nr, &bytes);
	return bytes < max ? max - bytes : 0;
}

/* FDE index words at most (16 MiB): one per function or so. */
#define CODECTL_INDEX_MAX_WORDS	(4U << 20)

/*
 * Set up a section without a flat table for decoding where it is: in user
 * memory (@mem NULL), or in @mem, a kernel copy the registration now owns
 * (freed with its tables, counted in its sframe_mem).  Its header, once,
 * and an FDE index if one fits, so that a lookup reads one bucket of FDEs
 * instead of binary-searching them all.  Without memory for the set-up
 * the unwinder sets a section in user memory up at each walk.
 * Return: 0, or -ENOMEM when a kernel copy cannot be set up (it is freed).
 */
static int codectl_sframe_in_place(struct codectl_reg *reg, u8 *mem, u64 room)
{
	u64 size = reg->sframe_end - reg->sframe_start;
	struct sframe_sec *sec;
	u32 words, *index;
	u8 shift;

	sec = kmalloc(sizeof(*sec), GFP_KERNEL_ACCOUNT);
	if (!sec || sframe_init(sec, reg->sframe_start, size, mem,
				mem ? NULL : codectl_sframe_read, sec)) {
		kfree(sec);
		kvfree(mem);
		return mem ? -ENOMEM : 0;
	}
	sec->text_start = reg->text_start;
	sec->text_end = reg->text_end;
	sec->max_fres = CODECTL_SFRAME_MAX_FRES;
	reg->sframe_sec = sec;
	reg->sframe_mem = sizeof(*sec) + (mem ? size : 0);
	room = room > reg->sframe_mem ? room - reg->sframe_mem : 0;
	words = sframe_index_words(sec, &shift);
	if (!words || words > CODECTL_INDEX_MAX_WORDS ||
	    (u64)words * sizeof(*index) > room)
		return 0;
	index = kvmalloc_array(words, sizeof(*index), GFP_KERNEL_ACCOUNT);
	if (!index)
		return 0;
	sec->resched = codectl_sframe_resched;
	if (sframe_index_build(sec, index, words, shift)) {
		sec->resched = NULL;
		kvfree(index);
		return 0;
	}
	sec->resched = NULL;
	reg->sframe_mem += words * sizeof(*index);
	return 0;
}

/*
 * Bytes a synthesised section decoded in kernel memory holds at least: its
 * copy and set-up, without the optional FDE index.
 */
static u64 codectl_sframe_kernel_bytes(u64 size)
{
	return size + sizeof(struct sframe_sec);
}

bool codectl_validate_sframe = true;
module_param_named(validate_sframe, codectl_validate_sframe, bool, 0644);
MODULE_PARM_DESC(validate_sframe,
		 "Walk every FDE and FRE of an SFrame section at registration (default Y); N checks the header only");

/*
 * Admitting a registration's SFrame section: the checks of registration
 * (full walk unless validate_sframe is off), its summary for QUERY.  A
 * section of at most sframe_flat_max bytes is copied (or taken from
 * @ksframe, a copy the caller made, e.g. from the file), checked as
 * copied, and turned into the registration's flat lookup table; a larger
 * or partly unreadable one is checked, and later decoded, in user memory.
 * A synthesised section (CODECTL_ORIGIN_SYNTH) lives in a buffer the
 * caller frees after the call (or an import's, which may go): when it
 * gets no flat table (larger than sframe_flat_max, too many rules, an
 * expansion past the bound, a table over what is left of max_bytes) the
 * registration keeps a kernel copy of it, decoded there at each unwind
 * as in user memory, with the same bounds, and nothing read from user
 * memory.
 * Return: 0, -EFAULT when the section cannot be read, -ENOEXEC when it is
 * refused, -EFBIG when a synthesised section is larger than max_bytes
 * (no address space could hold it), -ENOMEM (no memory, or it does not fit
 * what is left of max_bytes).
 */
static int codectl_sframe_admit(struct codectl_reg *reg, const u8 *ksframe,
				struct codectl_share_key *share)
{
	u64 size = reg->sframe_end - reg->sframe_start;
	bool full = READ_ONCE(codectl_validate_sframe);
	bool synth = reg->origin & CODECTL_ORIGIN_SYNTH;
	u64 flat_max = READ_ONCE(codectl_sframe_flat_max);
	const u8 *mem = ksframe;
	struct sframe_sec sec;
	int err, flat = -E2BIG;
	u8 *copy = NULL;

	if (synth &&
	    codectl_sframe_kernel_bytes(size) > READ_ONCE(codectl_max_bytes))
		return -EFBIG;
	/*
	 * The same bytes of the same file are checked and flattened (or
	 * copied, for a synthesised section over sframe_flat_max) once.
	 */
	if (share && ksframe && (size <= flat_max || synth)) {
		if (share->size != size)
			codectl_share_key_content(share, ksframe, size);
		share->kernel = size > flat_max;
		if (codectl_share_attach(reg, share))
			return 0;
	} else {
		share = NULL;
	}
	/* A synthesised section decoded in kernel memory needs a copy. */
	if ((!mem && size <= flat_max) || (synth && size > flat_max)) {
		copy = kvmalloc(size, GFP_KERNEL_ACCOUNT);
		if (!copy)
			return -ENOMEM;
		if (mem) {
			memcpy(copy, mem, size);
		} else if (copy_from_user(copy,
					  u64_to_user_ptr(reg->sframe_start),
					  size)) {
			kvfree(copy);
			copy = NULL;
			if (synth)
				return -EFAULT;
		}
		mem = copy;
	}
	if (mem) {
		err = sframe_init(&sec, reg->sframe_start, size, mem, NULL,
				  NULL);
		if (!err)
			err = codectl_sframe_check_sec(&sec, reg->text_start,
						       reg->text_end, full);
		if (!err)
			codectl_sframe_summarize(reg, &sec);
		/* No table (too many rules, no memory): decode in place. */
		if (!err && size <= flat_max)
			flat = codectl_sframe_flatten(reg, &sec,
						      codectl_mm_room());
		if (!flat && share)
			codectl_share_publish(reg, share);
	} else {
		err = codectl_sframe_check_user(reg->sframe_start,
						reg->sframe_end, reg->text_start,
						reg->text_end, full, NULL);
		if (!err)
			codectl_sframe_summarize_mem(reg, NULL);
	}
	if (!err && !reg->sframe_flat) {
		u64 room = codectl_mm_room();

		if (!synth) {
			codectl_sframe_in_place(reg, NULL, room);
		} else if (codectl_sframe_kernel_bytes(size) > room) {
			err = -ENOMEM;
		} else {
			/* The copy is the registration's from here on. */
			if (!copy) {
				copy = kvmalloc(size, GFP_KERNEL_ACCOUNT);
				if (copy)
					memcpy(copy, mem, size);
			}
			err = copy ? codectl_sframe_in_place(reg, copy, room) :
				     -ENOMEM;
			copy = NULL;
			if (!err && share)
				codectl_share_publish(reg, share);
		}
	}
	kvfree(copy);
	if (err == -ENOMEM)
		return err;
	if (err == SFRAME_E_READ)
		return -EFAULT;
	if (err) {
		pr_debug("codectl: pid %d: SFrame at %llx refused: %s\n",
			 task_pid_nr(current), reg->sframe_start,
			 sframe_strerror(err));
		return -ENOEXEC;
	}
	return 0;
}

/**
 * codectl_sframe_check_copy() - would a kernel copy of a section register?
 * @mem:	the section
 * @addr:	the address it is decoded at
 * @size:	its size
 * @text_start:	its functions must lie in [@text_start, @text_end)
 * @text_end:	see @text_start
 *
 * The full checks of registration: what a synthesised section imported
 * for later registrations (import.c) must pass.  Registrations give it a
 * flat table or decode it in kernel memory (codectl_sframe_admit()):
 * either way it must fit max_bytes.
 *
 * Return: 0, -ENOEXEC (refused), -EFBIG (larger than max_bytes: no
 * address space could hold it).
 */
int codectl_sframe_check_copy(const u8 *mem, u64 addr, u64 size,
			      u64 text_start, u64 text_end)
{
	struct sframe_sec sec;
	int err;

	if (codectl_sframe_kernel_bytes(size) > READ_ONCE(codectl_max_bytes))
		return -EFBIG;
	err = sframe_init(&sec, addr, size, mem, NULL, NULL);
	if (!err)
		err = codectl_sframe_check_sec(&sec, text_start, text_end, true);
	return err ? -ENOEXEC : 0;
}

/* Is all of [start, end) mapped from @file's inode?  Under the mmap lock. */
static bool codectl_mapped_from(struct mm_struct *mm, u64 start, u64 end,
				const struct file *file)
{
	struct vm_area_struct *vma;
	u64 addr = start;

	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr || !vma->vm_file ||
		    file_inode(vma->vm_file) != codectl_file_inode(file))
			return false;
		addr = vma->vm_end;
	}
	return true;
}

/*
 * Insert a filled registration into the caller's registry, if its code is
 * mapped executable and its SFrame section or JIT table readable.  The
 * mappings are checked and the registration inserted under one hold of
 * the mmap lock: munmap takes it for writing, so it either drops the new
 * registration (its notifier runs after the insertion) or had unmapped
 * the range before the check.  Nothing here reads user memory, which
 * could fault under the lock.  With @file, the ranges must be mapped
 * from that file (the SFrame range unless synthesised, e.g. imported):
 * discovery's mappings must not have been replaced.
 */
static int codectl_add(struct codectl_reg *reg, const struct file *file)
{
	struct mm_struct *mm = current->mm;
	struct codectl_mm *cmm;
	int ret;

	cmm = codectl_mm_get_or_create(mm);
	if (IS_ERR(cmm))
		return PTR_ERR(cmm);
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = codectl_reg_mapped(mm, reg) ? 0 : -EFAULT;
	if (!ret && file &&
	    (!codectl_mapped_from(mm, reg->text_start, reg->text_end, file) ||
	     (reg->sframe_start && !(reg->origin & CODECTL_ORIGIN_SYNTH) &&
	      !codectl_mapped_from(mm, reg->sframe_start, reg->sframe_end,
				   file))))
		ret = -ESTALE;
	if (!ret)
		ret = codectl_mm_insert(cmm, reg);
	mmap_read_unlock(mm);
	return ret;
}

/*
 * The range checks every registration passes, whoever built it: the text
 * not empty, the SFrame range not empty, both inside the ELF span when
 * one is given (a synthesised section lies anywhere).  The ioctl has
 * checked these already, with its errnos; discovery builds its
 * description from a file and relies on this.
 */
static bool codectl_elf_ranges_ok(const struct codectl_elf_src *src)
{
	if (src->text_start >= src->text_end)
		return false;
	if (!src->sframe_start != !src->sframe_end ||
	    (src->sframe_start && src->sframe_start >= src->sframe_end))
		return false;
	if (!src->elf_start != !src->elf_end)
		return false;
	if ((src->origin & CODECTL_ORIGIN_SYNTH) && !src->sframe_start)
		return false;
	if (!src->elf_start)
		return true;
	return src->elf_start < src->elf_end &&
	       src->text_start >= src->elf_start &&
	       src->text_end <= src->elf_end &&
	       (!src->sframe_start || (src->origin & CODECTL_ORIGIN_SYNTH) ||
		(src->sframe_start >= src->elf_start &&
		 src->sframe_end <= src->elf_end));
}

/* A kernel string, or a copy of a user one (user pointer 0: none). */
static char *codectl_src_string(const char *kstr, u64 ustr)
{
	char *s;

	if (!kstr)
		return codectl_strdup_user(ustr);
	if (!kstr[0])
		return ERR_PTR(-EINVAL);
	s = kstrndup(kstr, CODECTL_PATH_MAX - 1, GFP_KERNEL_ACCOUNT);
	return s ?: ERR_PTR(-ENOMEM);
}

/**
 * codectl_register_elf() - register an ELF object in current's registry
 * @src:	what to register; its fields checked by the caller for its
 *		own ABI (the ioctl: codectl_check_elf_info())
 *
 * The pipeline of CODECTL_REGISTER_ELF, for every source: range checks,
 * strings and build id copied, the SFrame section checked and flattened,
 * the mappings checked and the registration inserted.  Charged to
 * current (its memory cgroup and its address space's max_bytes).
 *
 * Context: task context, current's own address space (sleeps, reads user
 * memory).
 * Return: 0 or the errnos documented for CODECTL_REGISTER_ELF in
 * uapi/linux/codectl.h; -ESTALE when @src->file is given and the ranges
 * are not (or no longer) mapped from it.
 */
int codectl_register_elf(const struct codectl_elf_src *src)
{
	struct codectl_reg *reg;
	int ret;

	if (!codectl_elf_ranges_ok(src))
		return -EINVAL;
	if (src->build_id_len > CODECTL_BUILD_ID_MAX)
		return -EMSGSIZE;
	reg = codectl_reg_alloc(CODECTL_KIND_ELF);
	if (!reg)
		return -ENOMEM;
	reg->text_start = src->text_start;
	reg->text_end = src->text_end;
	reg->elf_start = src->elf_start;
	reg->elf_end = src->elf_end;
	reg->sframe_start = src->sframe_start;
	reg->sframe_end = src->sframe_end;
	reg->debug_link_crc = src->debug_link_crc;
	reg->build_id_len = src->build_id_len;
	reg->origin = src->origin;
	reg->import_gen = src->import_gen;

	reg->pathname = codectl_src_string(src->kpathname, src->upathname);
	if (IS_ERR(reg->pathname)) {
		ret = PTR_ERR(reg->pathname);
		reg->pathname = NULL;
		goto out;
	}
	reg->debug_link = codectl_src_string(src->kdebug_link,
					     src->udebug_link);
	if (IS_ERR(reg->debug_link)) {
		ret = PTR_ERR(reg->debug_link);
		reg->debug_link = NULL;
		goto out;
	}
	if (src->kbuild_id) {
		memcpy(reg->build_id, src->kbuild_id, src->build_id_len);
	} else if (src->build_id_len &&
		   copy_from_user(reg->build_id,
				  u64_to_user_ptr(src->ubuild_id),
				  src->build_id_len)) {
		ret = -EFAULT;
		goto out;
	}
	if (src->sframe_start) {
		ret = codectl_sframe_admit(reg, src->ksframe, src->share);
		if (!ret && src->regtab)
			ret = codectl_regtab_attach(reg, src->regtab);
		if (ret)
			goto out;
	}

	ret = codectl_add(reg, src->file);
	if (ret == -ENOMEM && reg->sframe_mem &&
	    !(reg->origin & CODECTL_ORIGIN_SYNTH)) {
		/* Over max_bytes with its tables: decode without them. */
		codectl_reg_drop_sframe_tables(reg);
		ret = codectl_add(reg, src->file);
	}
	if (!ret)
		return 0;
out:
	codectl_reg_put(reg);
	return ret;
}

/**
 * codectl_jit_table_ok() - is a JIT unwind table header well formed?
 * @tab:	a copy of the header
 *
 * Return: true when its entry sizes, stride and lengths are consistent,
 * and it reserves at most CODECTL_JIT_MAX_RESERVED bytes.
 */
bool codectl_jit_table_ok(const struct codectl_jit_unwind_table *tab)
{
	return tab->fre_size >= CODECTL_JIT_FRE_SIZE_VER0 &&
	       tab->fre_stride >= tab->fre_size && !(tab->fre_stride % 4) &&
	       tab->reserved_len <= CODECTL_JIT_MAX_RESERVED &&
	       !(tab->reserved_len % tab->fre_stride) &&
	       tab->used_len <= tab->reserved_len && !tab->__reserved;
}

/*
 * Check the header of the first table of a JIT region; *@end gets the end
 * of the table's reserved area (checked mapped by codectl_add()).  The
 * header must be 8-byte aligned (used_len is read with one 8-byte load),
 * and the chain as it is now no longer than CODECTL_JIT_MAX_TABLES (a
 * table that cannot be read ends it: it may be mapped later).
 */
static int codectl_check_jit_table(u64 head, u64 *end)
{
	struct codectl_jit_unwind_table tab;
	unsigned int t;
	u64 next;

	if (copy_from_user(&tab, u64_to_user_ptr(head), sizeof(tab)))
		return -EFAULT;
	if (!codectl_jit_table_ok(&tab) || (head & 7))
		return -EINVAL;
	if (check_add_overflow(head, (u64)sizeof(tab), end) ||
	    check_add_overflow(*end, tab.reserved_len, end))
		return -EFAULT;
	next = tab.next;
	for (t = 1; next; t++) {
		if (t == CODECTL_JIT_MAX_TABLES)
			return -ELOOP;
		if (copy_from_user(&next, u64_to_user_ptr(next) +
				   offsetof(typeof(tab), next), sizeof(next)))
			break;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

/**
 * codectl_register_jit() - register a JIT region in current's registry
 * @text_start:	its code
 * @text_end:	end of it (> @text_start)
 * @unwind_head: its first table in current's memory
 *
 * Context: task context, current's own address space.
 * Return: 0 or the errnos documented for CODECTL_REGISTER_JIT.
 */
int codectl_register_jit(u64 text_start, u64 text_end, u64 unwind_head)
{
	struct codectl_reg *reg;
	u64 table_end;
	int ret;

	if (text_start >= text_end)
		return -EINVAL;
	ret = codectl_check_jit_table(unwind_head, &table_end);
	if (ret)
		return ret;
	reg = codectl_reg_alloc(CODECTL_KIND_JIT);
	if (!reg)
		return -ENOMEM;
	reg->text_start = text_start;
	reg->text_end = text_end;
	reg->unwind_head = unwind_head;
	reg->table_end = table_end;
	reg->origin = CODECTL_ORIGIN_REGISTERED;
	ret = codectl_add(reg, NULL);
	if (ret)
		codectl_reg_put(reg);
	return ret;
}
