// SPDX-License-Identifier: GPL-2.0
/*
 * Flat tables shared across address spaces.  A flat table built from a
 * file's bytes (discovered or imported registrations only) is the same in
 * every process mapping the file, so its arrays live in a refcounted
 * holder found in a global hash by the file's identity and the section's
 * content; each registration keeps its own struct sframe_flat header and
 * a reference.  So does the kernel copy of an imported section without a
 * flat table (and its FDE index): each registration keeps its own struct
 * sframe_sec over the holder's bytes.  Every address space is charged the full size in
 * max_bytes; shared_bytes counts what is held.  The key and the charging
 * rules: docs/design.md, "Sharing flat tables".
 */
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/once.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "internal.h"
#include "sframe.h"

#define CODECTL_SHARE_BITS	8

static bool codectl_share = true;
module_param_named(share, codectl_share, bool, 0644);
MODULE_PARM_DESC(share,
		 "Share the flat tables of discovered objects across address spaces (default Y)");

/**
 * struct codectl_shared_flat - a flat table's arrays, or a section's
 *	kernel copy, shared
 * @ref:	one per registration using it
 * @node:	in codectl_share_table
 * @key:	what it was built from
 * @flat:	the arrays (its base is not used), or all 0 with @sec
 * @sec:	or the kernel copy: its bytes, FDE index and set-up (its
 *		addresses those of the registration that published it)
 * @mem:	bytes the arrays hold
 * @version:	the section's SFrame version,
 * @num_fdes:	FDEs,
 * @num_fres:	FREs,
 * @coverage:	and coverage of the text (struct codectl_reg): the same for
 *		every registration of the key, so an attached registration
 *		takes them from here instead of reading every FDE again
 */
struct codectl_shared_flat {
	refcount_t ref;
	struct hlist_node node;
	struct codectl_share_key key;
	struct sframe_flat flat;
	struct sframe_sec *sec;
	u64 mem;
	u32 version;
	u32 num_fdes;
	u32 num_fres;
	u64 coverage;
};

static DEFINE_HASHTABLE(codectl_share_table, CODECTL_SHARE_BITS);
/* Taken from RCU callbacks too (the last put): irqsave. */
static DEFINE_SPINLOCK(codectl_share_lock);

static u32 codectl_share_hash(const struct codectl_share_key *k)
{
	static u32 seed __read_mostly;

	/* Seeded: a user who picks file identities cannot pick a bucket. */
	get_random_once(&seed, sizeof(seed));
	return jhash(k, sizeof(*k), seed);
}

/**
 * codectl_share_key_content() - complete a key with a section's bytes
 * @k:		the key, its file fields filled
 * @mem:	the section as read from the file
 * @size:	its size
 */
void codectl_share_key_content(struct codectl_share_key *k, const u8 *mem,
			       u64 size)
{
	k->size = size;
	k->content = codectl_share_content(mem, size);
}

/**
 * codectl_share_content() - the hash of a section's bytes in a key
 * @mem:	the section
 * @size:	its size
 *
 * For a section that does not change (an import's), computed once.
 * Return: the hash.
 */
u32 codectl_share_content(const u8 *mem, u64 size)
{
	return jhash(mem, size, 0x5f3759df);
}

static struct sframe_flat *codectl_share_header(const struct sframe_flat *f,
						u64 base)
{
	struct sframe_flat *h = kmemdup(f, sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (h)
		h->base = base;
	return h;
}

/*
 * A registration's own set-up of a shared kernel copy @t, for its own
 * addresses: the text lies at the same offset from the section (the key).
 */
static struct sframe_sec *codectl_share_sec(const struct sframe_sec *t,
					    const struct codectl_reg *reg)
{
	struct sframe_sec *s = kmemdup(t, sizeof(*t), GFP_KERNEL_ACCOUNT);

	if (!s)
		return NULL;
	s->index_base += reg->sframe_start - t->addr;
	s->addr = reg->sframe_start;
	s->text_start = reg->text_start;
	s->text_end = reg->text_end;
	return s;
}

/**
 * codectl_share_get() - the shared table of a key, if there is one
 * @k:		the complete key of a section
 *
 * Context: any but NMI; takes a spinlock.
 * Return: the holder, with a reference for codectl_share_put(), or NULL
 * (none, or sharing is off).
 */
struct codectl_shared_flat *codectl_share_get(const struct codectl_share_key *k)
{
	struct codectl_shared_flat *sh, *found = NULL;
	unsigned long flags;

	if (!READ_ONCE(codectl_share))
		return NULL;
	spin_lock_irqsave(&codectl_share_lock, flags);
	hash_for_each_possible(codectl_share_table, sh, node,
			       codectl_share_hash(k)) {
		if (!memcmp(&sh->key, k, sizeof(*k)) &&
		    refcount_inc_not_zero(&sh->ref)) {
			found = sh;
			break;
		}
	}
	spin_unlock_irqrestore(&codectl_share_lock, flags);
	return found;
}

/**
 * codectl_share_bytes() - what a shared table holds
 * @sh:		the holder
 *
 * Return: the bytes of its arrays (or its kernel copy and index).
 */
u64 codectl_share_bytes(const struct codectl_shared_flat *sh)
{
	return sh->mem;
}

/**
 * codectl_share_attach() - give a registration a shared table if one fits
 * @reg:	a discovered registration being built, without tables
 * @k:		the complete key of its section
 *
 * Return: true when @reg got the shared table (its own header, the
 * holder's arrays) and the section's summary, false when there is none
 * (or no memory).
 */
bool codectl_share_attach(struct codectl_reg *reg,
			  const struct codectl_share_key *k)
{
	struct codectl_shared_flat *found = codectl_share_get(k);
	struct sframe_flat *h;

	if (!found)
		return false;
	if (found->sec) {
		reg->sframe_sec = codectl_share_sec(found->sec, reg);
		if (!reg->sframe_sec) {
			codectl_share_put(found);
			return false;
		}
	} else {
		h = codectl_share_header(&found->flat, reg->text_start);
		if (!h) {
			codectl_share_put(found);
			return false;
		}
		reg->sframe_flat = h;
	}
	reg->shared = found;
	reg->sframe_mem = found->mem;
	reg->sframe_version = found->version;
	reg->num_fdes = found->num_fdes;
	reg->num_fres = found->num_fres;
	reg->coverage = found->coverage;
	atomic_long_inc(&codectl_stats.shared_hits);
	return true;
}

/**
 * codectl_share_publish() - make a registration's new flat table (or
 *	kernel copy) shared
 * @reg:	a discovered registration being built, with its own flat table
 *		or kernel copy of its section, and its section's summary
 * @key:	the complete key of its section (its @kernel is set here)
 *
 * The arrays (or the copy and its index) move into a new holder, which
 * @reg refers to; should another task have published the same key
 * meanwhile, @reg takes that one and its own are freed.  Without memory
 * @reg keeps its table unshared.
 */
void codectl_share_publish(struct codectl_reg *reg,
			   const struct codectl_share_key *key)
{
	struct codectl_shared_flat *sh, *found = NULL;
	struct sframe_flat *own = reg->sframe_flat;
	struct sframe_sec *ksec = reg->sframe_sec;
	struct codectl_share_key k = *key;
	unsigned long flags;
	u32 hash;

	if (ksec && !ksec->mem)
		ksec = NULL;	/* decoded in user memory: nothing to share */
	if ((!own && !ksec) || reg->shared || !READ_ONCE(codectl_share))
		return;
	k.kernel = !own;
	hash = codectl_share_hash(&k);
	sh = kzalloc(sizeof(*sh), GFP_KERNEL_ACCOUNT);
	if (!sh)
		return;
	if (!own) {
		sh->sec = kmemdup(ksec, sizeof(*ksec), GFP_KERNEL_ACCOUNT);
		if (!sh->sec) {
			kfree(sh);
			return;
		}
	}
	refcount_set(&sh->ref, 1);
	sh->key = k;
	if (own)
		sh->flat = *own;
	sh->mem = reg->sframe_mem;
	sh->version = reg->sframe_version;
	sh->num_fdes = reg->num_fdes;
	sh->num_fres = reg->num_fres;
	sh->coverage = reg->coverage;
	spin_lock_irqsave(&codectl_share_lock, flags);
	hash_for_each_possible(codectl_share_table, found, node, hash)
		if (!memcmp(&found->key, &k, sizeof(k)) &&
		    refcount_inc_not_zero(&found->ref))
			break;
	if (!found)
		hash_add(codectl_share_table, &sh->node, hash);
	spin_unlock_irqrestore(&codectl_share_lock, flags);
	if (found) {
		/* Another task published it first: use that one. */
		if (own) {
			kvfree(own->offs);
			kvfree(own->rule_of);
			kvfree(own->rules);
			kvfree(own->index);
			*own = found->flat;
			own->base = reg->text_start;
		} else {
			/* The same key: the same kind, the same bytes. */
			kvfree(ksec->mem);
			kvfree(ksec->index);
			ksec->mem = found->sec->mem;
			ksec->index = found->sec->index;
			ksec->index_nb = found->sec->index_nb;
			ksec->index_shift = found->sec->index_shift;
			ksec->index_base = found->sec->index_base +
					   ksec->addr - found->sec->addr;
		}
		reg->sframe_mem = found->mem;
		reg->shared = found;
		atomic_long_inc(&codectl_stats.shared_hits);
		kfree(sh->sec);
		kfree(sh);
		return;
	}
	atomic_long_inc(&codectl_stats.shared_tables);
	atomic_long_add(sh->mem, &codectl_stats.shared_bytes);
	/* reg's header stays its own; the arrays (bytes) are the holder's. */
	reg->shared = sh;
}

/**
 * codectl_share_put() - drop a registration's reference to a shared table
 * @sh:		the holder
 *
 * The last reference frees the arrays.  Any context but NMI (RCU
 * callbacks free registrations).
 */
void codectl_share_put(struct codectl_shared_flat *sh)
{
	unsigned long flags;

	if (!refcount_dec_and_test(&sh->ref))
		return;
	/* Look-ups skip it from now on (refcount_inc_not_zero() fails). */
	spin_lock_irqsave(&codectl_share_lock, flags);
	hash_del(&sh->node);
	spin_unlock_irqrestore(&codectl_share_lock, flags);
	atomic_long_dec(&codectl_stats.shared_tables);
	atomic_long_sub(sh->mem, &codectl_stats.shared_bytes);
	kvfree(sh->flat.offs);
	kvfree(sh->flat.rule_of);
	kvfree(sh->flat.rules);
	kvfree(sh->flat.index);
	if (sh->sec) {
		kvfree(sh->sec->mem);
		kvfree(sh->sec->index);
		kfree(sh->sec);
	}
	kfree(sh);
}
