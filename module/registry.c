// SPDX-License-Identifier: GPL-2.0
/*
 * Module, registry: the per-address-space registry of code ranges.  Each
 * mm with registrations has a struct codectl_mm in a global hash, the
 * container of an mmu_notifier_get() subscription (->release empties it,
 * ->invalidate_range_start drops unmapped registrations).  Registrations
 * are an immutable sorted array (struct codectl_set) published with RCU:
 * writers serialise on the mm's mutex and replace it, readers search it
 * under rcu_read_lock() alone, fork snapshots it with one reference.
 * More: docs/design.md, "The registry".
 */
#include <linux/delay.h>
#include <linux/hashtable.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "sframe.h"

/* The limits of one address space's registry (VERSION reports them). */
unsigned int codectl_max_registrations = 16384;
module_param_named(max_registrations, codectl_max_registrations, uint, 0644);
MODULE_PARM_DESC(max_registrations,
		 "Registrations per address space (default 16384); more fail with ENOSPC");

unsigned long codectl_max_bytes = 16UL << 20;
module_param_named(max_bytes, codectl_max_bytes, ulong, 0644);
MODULE_PARM_DESC(max_bytes,
		 "Kernel memory for registrations per address space, in bytes (default 16 MiB); more fails with ENOMEM");

#define CODECTL_MM_HASH_BITS	8

static DEFINE_HASHTABLE(codectl_mm_table, CODECTL_MM_HASH_BITS);
static DEFINE_SPINLOCK(codectl_mm_table_lock);

static inline struct codectl_mm *to_cmm(struct mmu_notifier *mn)
{
	return container_of(mn, struct codectl_mm, mn);
}

/**
 * codectl_reg_alloc() - a new, empty registration
 * @kind:	CODECTL_KIND_ELF or CODECTL_KIND_JIT
 *
 * Charged to the caller's memory cgroup.
 *
 * Return: the registration holding one reference, or NULL.
 */
struct codectl_reg *codectl_reg_alloc(u32 kind)
{
	struct codectl_reg *reg;

	reg = kzalloc(sizeof(*reg), GFP_KERNEL_ACCOUNT);
	if (!reg)
		return NULL;
	refcount_set(&reg->ref, 1);
	reg->kind = kind;
	atomic_long_inc(&codectl_stats.registrations);
	return reg;
}

/**
 * codectl_reg_put() - drop a reference to a registration
 * @reg:	the registration
 *
 * Frees it with its strings when the last reference goes.  Safe in RCU
 * callbacks.
 */
void codectl_reg_put(struct codectl_reg *reg)
{
	if (!refcount_dec_and_test(&reg->ref))
		return;
	atomic_long_sub(reg->charge, &codectl_stats.bytes);
	atomic_long_dec(&codectl_stats.registrations);
	kfree(reg->pathname);
	kfree(reg->debug_link);
	codectl_reg_drop_sframe_tables(reg);
	kfree(reg);
}

/**
 * codectl_reg_drop_sframe_tables() - free a registration's SFrame lookup
 *	data (flat table, or set-up section, its kernel copy, FDE index;
 *	its register table)
 * @reg:	a registration not yet inserted (or being freed)
 *
 * The unwinder then sets the section up at each walk and decodes it in
 * user memory.
 */
void codectl_reg_drop_sframe_tables(struct codectl_reg *reg)
{
	struct sframe_flat *flat = reg->sframe_flat;

	if (reg->shared) {
		/* Our own headers; the arrays or the copy are the holder's. */
		kfree(flat);
		kfree(reg->sframe_sec);
		reg->sframe_sec = NULL;
		codectl_share_put(reg->shared);
		reg->shared = NULL;
	} else if (flat) {
		codectl_flat_free_arrays(flat);
		kfree(flat);
	}
	/* Our own header; the arrays are the register table's. */
	kfree(reg->xreg_flat);
	codectl_regtab_put(reg->regtab);
	reg->xreg_flat = NULL;
	reg->regtab = NULL;
	if (reg->sframe_sec) {
		kvfree(reg->sframe_sec->mem);	/* a kernel copy, or NULL */
		kvfree(reg->sframe_sec->index);
		kfree(reg->sframe_sec);
	}
	reg->sframe_flat = NULL;
	reg->sframe_sec = NULL;
	reg->sframe_mem = 0;
}

/* Kernel memory a registration holds, counted against max_bytes. */
static u64 codectl_reg_size(const struct codectl_reg *reg)
{
	u64 size = sizeof(*reg);

	if (reg->pathname)
		size += strlen(reg->pathname) + 1;
	if (reg->debug_link)
		size += strlen(reg->debug_link) + 1;
	size += reg->sframe_mem;
	return size;
}

static bool codectl_overlaps(u64 s1, u64 e1, u64 s2, u64 e2)
{
	return s1 < e2 && s2 < e1;
}

/* Does the registration rely on its SFrame section's mapping? */
static bool codectl_reg_sframe_mapped(const struct codectl_reg *reg)
{
	return reg->sframe_start && !(reg->origin & CODECTL_ORIGIN_SYNTH);
}

/*
 * Does unmapping [start, end) take away something @reg relies on: its
 * code, its SFrame section, or its first JIT table?
 */
static bool codectl_reg_hit(const struct codectl_reg *reg, u64 start, u64 end)
{
	return codectl_overlaps(reg->text_start, reg->text_end, start, end) ||
	       (codectl_reg_sframe_mapped(reg) &&
		codectl_overlaps(reg->sframe_start, reg->sframe_end, start,
				 end)) ||
	       (reg->unwind_head &&
		codectl_overlaps(reg->unwind_head, reg->table_end, start, end));
}

/*
 * Is [start, end) of @mm covered by mappings with all of @flags?  Under
 * the mmap lock, in task context: a range may span up to
 * vm.max_map_count mappings, and fork adoption checks every registration
 * of the parent, so each mapping is a scheduling point.
 */
static bool codectl_mapped(struct mm_struct *mm, u64 start, u64 end,
			   unsigned long flags)
{
	struct vm_area_struct *vma;
	u64 addr = start;

	while (addr < end) {
		cond_resched();
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr ||
		    (vma->vm_flags & flags) != flags)
			return false;
		addr = vma->vm_end;
	}
	return true;
}

/**
 * codectl_reg_mapped() - is everything a registration relies on mapped?
 * @mm:		the address space, whose mmap lock the caller holds
 * @reg:	the registration
 *
 * Return: true if its code is mapped executable and its SFrame section
 * (unless synthesised) or first JIT table readable.
 */
bool codectl_reg_mapped(struct mm_struct *mm, const struct codectl_reg *reg)
{
	return codectl_mapped(mm, reg->text_start, reg->text_end, VM_EXEC) &&
	       (!codectl_reg_sframe_mapped(reg) ||
		codectl_mapped(mm, reg->sframe_start, reg->sframe_end,
			       VM_READ)) &&
	       (!reg->unwind_head ||
		codectl_mapped(mm, reg->unwind_head, reg->table_end, VM_READ));
}

/* ---- registration arrays --------------------------------------------- */

static struct codectl_set *codectl_set_alloc(unsigned int nr, gfp_t gfp)
{
	struct codectl_set *set;

	set = kmalloc(struct_size(set, regs, nr), gfp);
	if (!set)
		return NULL;
	refcount_set(&set->ref, 1);
	set->nr = nr;
	set->bytes = 0;
	atomic_long_inc(&codectl_stats.sets);
	return set;
}

static void codectl_set_free_rcu(struct rcu_head *rcu)
{
	struct codectl_set *set = container_of(rcu, struct codectl_set, rcu);
	unsigned int i;

	for (i = 0; i < set->nr; i++)
		codectl_reg_put(set->regs[i]);
	kfree(set);
	atomic_long_dec(&codectl_stats.sets);
}

/**
 * codectl_set_put() - drop a reference to a registration array
 * @set:	the array, or NULL
 *
 * The last reference frees it, and drops its registrations, after an RCU
 * grace period: lookups may still be walking it.
 */
void codectl_set_put(struct codectl_set *set)
{
	if (set && refcount_dec_and_test(&set->ref))
		call_rcu(&set->rcu, codectl_set_free_rcu);
}

/* Free an array that was never published (it holds no references). */
static void codectl_set_discard(struct codectl_set *set)
{
	if (!set)
		return;
	kfree(set);
	atomic_long_dec(&codectl_stats.sets);
}

/*
 * An array of @nr slots for a writer holding @cmm->lock, which
 * invalidate_range_start takes too: reclaim may invalidate, so nothing
 * allocated under the lock may enter reclaim (lockdep: fs_reclaim).  The
 * spare its caller allocated before taking the lock, if it is large
 * enough, else one allocated without reclaim.  Failing both, and without
 * a spare yet: the lock is dropped, a spare of @nr allocated with
 * GFP_KERNEL_ACCOUNT into @spare, and the caller starts again.
 *
 * Return: 0 with the array in @setp; -EAGAIN, the lock dropped; -ENOMEM
 * (the lock held, as with 0).
 */
static int codectl_set_locked(struct codectl_mm *cmm,
			      struct codectl_set **spare, unsigned int nr,
			      struct codectl_set **setp)
{
	struct codectl_set *set = *spare;

	if (set && set->nr >= nr) {
		*spare = NULL;
		set->nr = nr;
	} else {
		set = codectl_set_alloc(nr, GFP_NOWAIT | __GFP_NOWARN |
					__GFP_ACCOUNT);
	}
	*setp = set;
	if (set)
		return 0;
	if (*spare)
		return -ENOMEM;
	mutex_unlock(&cmm->lock);
	*spare = codectl_set_alloc(nr, GFP_KERNEL_ACCOUNT);
	if (*spare)
		return -EAGAIN;
	mutex_lock(&cmm->lock);
	return -ENOMEM;
}

/*
 * Fill @set with the registrations of @old for which @keep says so (all
 * if @keep is NULL); the copies hold their own references.
 */
static void codectl_set_fill(struct codectl_set *set,
			     const struct codectl_set *old,
			     bool (*keep)(const struct codectl_reg *, u64, u64),
			     u64 start, u64 end)
{
	unsigned int i, n = 0, nr = old ? old->nr : 0;

	for (i = 0; i < nr; i++) {
		struct codectl_reg *reg = old->regs[i];

		if (keep && !keep(reg, start, end))
			continue;
		refcount_inc(&reg->ref);
		set->regs[n++] = reg;
		set->bytes += reg->charge;
	}
	set->nr = n;
}

/*
 * Copy the registrations of @old for which @keep says so (all if @keep is
 * NULL), with @extra more slots; the copies hold their own references.
 */
static struct codectl_set *
codectl_set_copy(const struct codectl_set *old, unsigned int extra,
		 bool (*keep)(const struct codectl_reg *, u64, u64),
		 u64 start, u64 end, gfp_t gfp)
{
	unsigned int nr = old ? old->nr : 0;
	struct codectl_set *set;

	set = codectl_set_alloc(nr + extra, gfp);
	if (!set)
		return NULL;
	codectl_set_fill(set, old, keep, start, end);
	return set;
}

/* Index of the first registration in @set whose text ends above @addr. */
static unsigned int codectl_set_search(const struct codectl_set *set, u64 addr)
{
	unsigned int lo = 0, hi = set->nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (set->regs[mid]->text_end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/**
 * codectl_set_find() - the registration whose text holds an address
 * @set:	registrations, held by the caller
 * @addr:	user address
 *
 * Return: the registration (no reference taken), or NULL.
 */
struct codectl_reg *codectl_set_find(const struct codectl_set *set, u64 addr)
{
	unsigned int at = codectl_set_search(set, addr);

	if (at < set->nr && set->regs[at]->text_start <= addr)
		return set->regs[at];
	return NULL;
}

static struct codectl_set *codectl_mm_set(struct codectl_mm *cmm)
{
	return rcu_dereference_protected(cmm->set, lockdep_is_held(&cmm->lock));
}

/* Publish @set (or an empty registry for NULL) and drop the old array. */
static void codectl_mm_publish(struct codectl_mm *cmm, struct codectl_set *set)
{
	struct codectl_set *old = codectl_mm_set(cmm);

	if (set && !set->nr) {
		codectl_set_put(set);
		set = NULL;
	}
	rcu_assign_pointer(cmm->set, set);
	codectl_set_put(old);
}

/* ---- discovery's negative entries ------------------------------------ */

static struct codectl_negs *codectl_mm_negs(struct codectl_mm *cmm)
{
	return rcu_dereference_protected(cmm->negs, lockdep_is_held(&cmm->lock));
}

static void codectl_negs_free_rcu(struct rcu_head *rcu)
{
	struct codectl_negs *n = container_of(rcu, struct codectl_negs, rcu);

	atomic_long_sub(n->nr, &codectl_stats.negatives);
	kfree(n);
}

/* Publish @n (or none) and free the old entries after a grace period. */
static void codectl_mm_publish_negs(struct codectl_mm *cmm,
				    struct codectl_negs *n)
{
	struct codectl_negs *old = codectl_mm_negs(cmm);

	if (n && !n->nr) {
		kfree(n);
		n = NULL;
	}
	if (n)
		atomic_long_add(n->nr, &codectl_stats.negatives);
	rcu_assign_pointer(cmm->negs, n);
	if (old)
		call_rcu(&old->rcu, codectl_negs_free_rcu);
}

/* Does an unmap of [start, end) hit a negative entry? */
static bool codectl_negs_hit(const struct codectl_negs *n, u64 start, u64 end)
{
	unsigned int i;

	for (i = 0; n && i < n->nr; i++)
		if (codectl_overlaps(n->r[i].start, n->r[i].end, start, end))
			return true;
	return false;
}

/* Drop the negative entries an unmap of [start, end) hits.  Under lock. */
static void codectl_mm_unmap_negs(struct codectl_mm *cmm, u64 start, u64 end)
{
	struct codectl_negs *old = codectl_mm_negs(cmm), *n;
	unsigned int i;

	if (!codectl_negs_hit(old, start, end))
		return;
	/* Under the mmap lock: GFP_NOWAIT; without memory drop them all. */
	n = kmalloc(struct_size(n, r, old->nr),
		    GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
	if (n) {
		n->nr = 0;
		for (i = 0; i < old->nr; i++)
			if (!codectl_overlaps(old->r[i].start, old->r[i].end,
					      start, end))
				n->r[n->nr++] = old->r[i];
	}
	codectl_mm_publish_negs(cmm, n);
}

/**
 * codectl_mm_negative() - did discovery examine this address in vain?
 * @cmm:	the registry
 * @addr:	a user address
 *
 * Lock-free (RCU): callable in any context, NMI included.
 *
 * Return: true when @addr lies in a negative entry.
 */
bool codectl_mm_negative(struct codectl_mm *cmm, u64 addr)
{
	const struct codectl_negs *n;
	bool found = false;
	unsigned int i;

	rcu_read_lock();
	n = rcu_dereference(cmm->negs);
	for (i = 0; n && i < n->nr && !found; i++)
		found = addr >= n->r[i].start && addr < n->r[i].end;
	rcu_read_unlock();
	return found;
}

/**
 * codectl_mm_add_negative() - remember a mapping discovery examined in vain
 * @cmm:	the registry
 * @start:	the mapping's start
 * @end:	its end
 *
 * At most CODECTL_MAX_NEGS entries: the oldest goes to make room.  The
 * caller holds the mmap lock for reading (so an unmap cannot pass
 * between its check of the mapping and this), as for insertions.
 *
 * Return: 0 or -ENOMEM.
 */
int codectl_mm_add_negative(struct codectl_mm *cmm, u64 start, u64 end)
{
	struct codectl_negs *old, *n;
	unsigned int i, skip;

	/* Before the lock, for the most there can be: no reclaim under it. */
	n = kmalloc(struct_size(n, r, CODECTL_MAX_NEGS), GFP_KERNEL_ACCOUNT);
	if (!n)
		return -ENOMEM;
	mutex_lock(&cmm->lock);
	old = codectl_mm_negs(cmm);
	skip = old && old->nr >= CODECTL_MAX_NEGS ? 1 : 0;
	n->nr = 0;
	for (i = skip; old && i < old->nr; i++)
		n->r[n->nr++] = old->r[i];
	n->r[n->nr].start = start;
	n->r[n->nr++].end = end;
	codectl_mm_publish_negs(cmm, n);
	mutex_unlock(&cmm->lock);
	return 0;
}

/* ---- the mm's subscription ------------------------------------------- */

/* Take a hashed @cmm out of the table, under codectl_mm_table_lock. */
static void codectl_mm_unhash_locked(struct codectl_mm *cmm)
{
	hash_del_rcu(&cmm->hnode);
	atomic_long_dec(&codectl_stats.mms);
}

/* Take @cmm out of the table; true if this caller did (and owns it). */
static bool codectl_mm_unhash(struct codectl_mm *cmm)
{
	bool owner;

	spin_lock(&codectl_mm_table_lock);
	owner = hash_hashed(&cmm->hnode);
	if (owner)
		codectl_mm_unhash_locked(cmm);
	spin_unlock(&codectl_mm_table_lock);
	return owner;
}

/*
 * Subscriptions of released address spaces are put in batches, a while
 * later.  A put queues an SRCU callback, and exit_mmap() waits for an SRCU
 * grace period after the ->release callbacks (mn_hlist_release()): with a
 * callback pending that is a full grace period (measured: 14 ms under
 * TCG, at every exit of a process that had a registry), without one the
 * kernel expedites it.
 */
#define CODECTL_PUT_DELAY	(HZ / 4)

static LLIST_HEAD(codectl_mm_puts);
static atomic_t codectl_mm_releasing = ATOMIC_INIT(0);

static void codectl_mm_put_fn(struct work_struct *work)
{
	struct llist_node *n = llist_del_all(&codectl_mm_puts);
	struct codectl_mm *cmm, *t;

	/* As many as exited in CODECTL_PUT_DELAY: a scheduling point each. */
	llist_for_each_entry_safe(cmm, t, n, put_node) {
		mmu_notifier_put(&cmm->mn);
		cond_resched();
	}
}

static DECLARE_DELAYED_WORK(codectl_mm_put_work, codectl_mm_put_fn);

/*
 * Empty the registry of an unhashed @cmm and drop the table's reference:
 * at once (@later false), or in the next batch.
 */
static void codectl_mm_retire(struct codectl_mm *cmm, bool later)
{
	mutex_lock(&cmm->lock);
	codectl_mm_publish(cmm, NULL);
	codectl_mm_publish_negs(cmm, NULL);
	mutex_unlock(&cmm->lock);
	if (!later)
		mmu_notifier_put(&cmm->mn);
	else if (llist_add(&cmm->put_node, &codectl_mm_puts))
		schedule_delayed_work(&codectl_mm_put_work, CODECTL_PUT_DELAY);
}

static struct mmu_notifier *codectl_mn_alloc(struct mm_struct *mm)
{
	struct codectl_mm *cmm;

	cmm = kzalloc(sizeof(*cmm), GFP_KERNEL_ACCOUNT);
	if (!cmm)
		return ERR_PTR(-ENOMEM);
	INIT_HLIST_NODE(&cmm->hnode);
	mutex_init(&cmm->lock);
	RCU_INIT_POINTER(cmm->set, NULL);
	RCU_INIT_POINTER(cmm->negs, NULL);
	atomic_long_inc(&codectl_stats.mm_objects);
	return &cmm->mn;
}

static void codectl_mn_free(struct mmu_notifier *mn)
{
	struct codectl_mm *cmm = to_cmm(mn);

	mutex_destroy(&cmm->lock);
	/* Lock-free lookups (codectl_mm_find()) may still be on its node. */
	kfree_rcu(cmm, rcu);
	atomic_long_dec(&codectl_stats.mm_objects);
}

/*
 * The address space is going away.  No task can use it any more, so no
 * ioctl can be working on this registry; module exit may have taken it
 * first, which codectl_mm_unhash() settles.
 */
static void codectl_mn_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct codectl_mm *cmm = to_cmm(mn);

	/* Before the table: module exit waits for this once it has it. */
	atomic_inc(&codectl_mm_releasing);
	if (codectl_mm_unhash(cmm))
		codectl_mm_retire(cmm, true);
	atomic_dec(&codectl_mm_releasing);
}

static bool codectl_keep_unhit(const struct codectl_reg *reg, u64 start,
			       u64 end)
{
	return !codectl_reg_hit(reg, start, end);
}

/*
 * munmap, mremap and MAP_FIXED over a registration's code or tables
 * (MMU_NOTIFY_UNMAP): drop it before the range can be mapped again, so a
 * new mapping at the same address is never unwound with stale rules.
 * Every invalidation of the mm comes here, so other events and ranges
 * that hit nothing return at once, without a lock.  Only the OOM reaper
 * unmaps without being allowed to block; its mm is dying and ->release
 * will empty the registry.
 */
static int codectl_mn_invalidate_range_start(struct mmu_notifier *mn,
					     const struct mmu_notifier_range *range)
{
	struct codectl_mm *cmm = to_cmm(mn);
	struct codectl_set *set;
	bool hit = false, neg;
	unsigned int i;

	if (range->event != MMU_NOTIFY_UNMAP)
		return 0;
	rcu_read_lock();
	set = rcu_dereference(cmm->set);
	for (i = 0; set && i < set->nr && !hit; i++)
		hit = codectl_reg_hit(set->regs[i], range->start, range->end);
	neg = codectl_negs_hit(rcu_dereference(cmm->negs), range->start,
			       range->end);
	rcu_read_unlock();
	if ((!hit && !neg) || !mmu_notifier_range_blockable(range))
		return 0;

	mutex_lock(&cmm->lock);
	/* An object mapped again here is examined again. */
	if (neg)
		codectl_mm_unmap_negs(cmm, range->start, range->end);
	if (hit) {
		/* Under the mmap lock: no reclaim that could wait on this mm. */
		set = codectl_set_copy(codectl_mm_set(cmm), 0,
				       codectl_keep_unhit, range->start,
				       range->end,
				       GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
		if (!set)	/* better nothing than stale rules */
			atomic_long_inc(&codectl_stats.unmap_nomem);
		codectl_mm_publish(cmm, set);
		atomic_long_inc(&codectl_stats.unmap_drops);
	}
	mutex_unlock(&cmm->lock);
	return 0;
}

static const struct mmu_notifier_ops codectl_mn_ops = {
	.release		= codectl_mn_release,
	.invalidate_range_start	= codectl_mn_invalidate_range_start,
	.alloc_notifier		= codectl_mn_alloc,
	.free_notifier		= codectl_mn_free,
};

/**
 * codectl_mm_find() - the registry of an address space, if it has one
 * @mm:		the address space, which the caller keeps alive
 *
 * Lock-free (RCU), so callable in any context, NMI included: the table's
 * writers hold a spinlock, entries leave it with hash_del_rcu() and are
 * freed after an RCU grace period.
 *
 * Return: the registry, or NULL.  It stays valid while @mm has users.
 */
struct codectl_mm *codectl_mm_find(struct mm_struct *mm)
{
	struct codectl_mm *cmm, *found = NULL;

	rcu_read_lock();
	hash_for_each_possible_rcu(codectl_mm_table, cmm, hnode,
				   (unsigned long)mm) {
		if (READ_ONCE(cmm->mn.mm) == mm) {
			found = cmm;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * codectl_mm_get_or_create() - the registry of an address space
 * @mm:		the caller's address space (current->mm)
 *
 * Creates the registry and its mmu notifier subscription on first use.
 * Concurrent first users of one mm get the same subscription from
 * mmu_notifier_get(); the one that hashes it keeps the reference.
 *
 * Return: the registry or an ERR_PTR (-ENOMEM, -EINTR).
 */
struct codectl_mm *codectl_mm_get_or_create(struct mm_struct *mm)
{
	struct mmu_notifier *mn;
	struct codectl_mm *cmm;
	bool hashed;

	cmm = codectl_mm_find(mm);
	if (cmm)
		return cmm;

	mn = mmu_notifier_get(&codectl_mn_ops, mm);
	if (IS_ERR(mn))
		return ERR_CAST(mn);
	cmm = to_cmm(mn);

	spin_lock(&codectl_mm_table_lock);
	hashed = hash_hashed(&cmm->hnode);
	/*
	 * Counted while hashed: the address spaces with a registry, not the
	 * retired ones whose subscription waits for its batched put.
	 */
	if (!hashed) {
		hash_add_rcu(codectl_mm_table, &cmm->hnode, (unsigned long)mm);
		atomic_long_inc(&codectl_stats.mms);
	}
	spin_unlock(&codectl_mm_table_lock);
	if (hashed)
		mmu_notifier_put(mn);	/* another thread's get owns it */
	return cmm;
}

/*
 * May @reg take the place of @old, which its text range overlaps?  An
 * explicit registration replaces discovered ones; a discovered one with
 * an SFrame section (an import that came later) replaces a discovered
 * one without.
 */
static bool codectl_replaces(const struct codectl_reg *reg,
			     const struct codectl_reg *old)
{
	if (!(old->origin & CODECTL_ORIGIN_DISCOVERED))
		return false;
	return !(reg->origin & CODECTL_ORIGIN_DISCOVERED) ||
	       (reg->sframe_start && !old->sframe_start);
}

/**
 * codectl_mm_insert() - add a registration
 * @cmm:	the registry
 * @reg:	a new registration holding one reference, which the registry
 *		takes over on success; the caller keeps it on failure
 *
 * The registration is charged its size (struct and strings) against the
 * address space's max_bytes, and counts against max_registrations.  An
 * explicit registration (not CODECTL_ORIGIN_DISCOVERED) whose text
 * overlaps only discovered ones replaces them, and so does a discovered
 * one with SFrame overlapping discovered ones without (codectl_replaces());
 * any other overlap fails.
 *
 * Return: 0, -EEXIST if its text range overlaps another registration
 * (see above), -ENOSPC past max_registrations, -ENOMEM past max_bytes or
 * without memory.
 */
int codectl_mm_insert(struct codectl_mm *cmm, struct codectl_reg *reg)
{
	struct codectl_set *old, *set, *spare = NULL;
	u64 charge = codectl_reg_size(reg);
	unsigned int at, last, nr, i, n;
	u64 bytes, freed;
	int ret;

again:
	ret = 0;
	freed = 0;
	mutex_lock(&cmm->lock);
	old = codectl_mm_set(cmm);
	nr = old ? old->nr : 0;
	bytes = old ? old->bytes : 0;
	/* The ranges are disjoint and sorted: the overlapped ones follow. */
	at = old ? codectl_set_search(old, reg->text_start) : 0;
	for (last = at; last < nr && old->regs[last]->text_start < reg->text_end;
	     last++) {
		if (!codectl_replaces(reg, old->regs[last])) {
			ret = -EEXIST;
			goto out;
		}
		freed += old->regs[last]->charge;
	}
	if (nr - (last - at) >= READ_ONCE(codectl_max_registrations)) {
		ret = -ENOSPC;
		goto out;
	}
	if (charge > READ_ONCE(codectl_max_bytes) ||
	    bytes - freed > READ_ONCE(codectl_max_bytes) - charge) {
		ret = -ENOMEM;
		goto out;
	}

	ret = codectl_set_locked(cmm, &spare, nr - (last - at) + 1, &set);
	if (ret == -EAGAIN)
		goto again;
	if (ret)
		goto out;
	reg->charge = charge;
	atomic_long_add(charge, &codectl_stats.bytes);
	n = 0;
	for (i = 0; i < at; i++)
		set->regs[n++] = old->regs[i];
	set->regs[n++] = reg;
	for (i = last; i < nr; i++)
		set->regs[n++] = old->regs[i];
	for (i = 0; i < set->nr; i++) {
		if (set->regs[i] != reg)
			refcount_inc(&set->regs[i]->ref);
		set->bytes += set->regs[i]->charge;
	}
	codectl_mm_publish(cmm, set);
out:
	mutex_unlock(&cmm->lock);
	codectl_set_discard(spare);
	return ret;
}

static bool codectl_keep_other(const struct codectl_reg *reg, u64 start,
			       u64 end)
{
	return reg->text_start != start || reg->text_end != end;
}

/**
 * codectl_mm_remove() - remove the registration of exactly this range
 * @cmm:	the registry
 * @text_start:	its text_start
 * @text_end:	its text_end
 *
 * Return: 0, -ENOENT, or -ENOMEM (nothing changed).
 */
int codectl_mm_remove(struct codectl_mm *cmm, u64 text_start, u64 text_end)
{
	struct codectl_set *old, *set, *spare = NULL;
	unsigned int at;
	int ret;

again:
	ret = 0;
	mutex_lock(&cmm->lock);
	old = codectl_mm_set(cmm);
	at = old ? codectl_set_search(old, text_start) : 0;
	if (!old || at >= old->nr || old->regs[at]->text_start != text_start ||
	    old->regs[at]->text_end != text_end) {
		ret = -ENOENT;
		goto out;
	}
	/* Not under the lock with reclaim: see codectl_set_locked(). */
	ret = codectl_set_locked(cmm, &spare, old->nr, &set);
	if (ret == -EAGAIN)
		goto again;
	if (ret)
		goto out;
	codectl_set_fill(set, old, codectl_keep_other, text_start, text_end);
	codectl_mm_publish(cmm, set);
out:
	mutex_unlock(&cmm->lock);
	codectl_set_discard(spare);
	return ret;
}

/**
 * codectl_mm_next() - the first registration that ends above an address
 * @cmm:	the registry
 * @addr:	the address
 *
 * This is the lookup by address too: the result covers @addr when its
 * text_start <= @addr.  O(log n), lock-free.
 *
 * Return: the registration with a reference the caller drops with
 * codectl_reg_put(), or NULL.
 */
struct codectl_reg *codectl_mm_next(struct codectl_mm *cmm, u64 addr)
{
	struct codectl_reg *found = NULL;
	struct codectl_set *set;
	unsigned int at;

	rcu_read_lock();
	set = rcu_dereference(cmm->set);
	if (set) {
		at = codectl_set_search(set, addr);
		if (at < set->nr) {
			found = set->regs[at];
			refcount_inc(&found->ref);
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * codectl_mm_usage() - how much an address space has registered
 * @cmm:	the registry, or NULL for none
 * @nr:		out: number of registrations
 * @bytes:	out: bytes charged for them
 */
void codectl_mm_usage(struct codectl_mm *cmm, unsigned int *nr, size_t *bytes)
{
	struct codectl_set *set;

	*nr = 0;
	*bytes = 0;
	if (!cmm)
		return;
	rcu_read_lock();
	set = rcu_dereference(cmm->set);
	if (set) {
		*nr = set->nr;
		*bytes = set->bytes;
	}
	rcu_read_unlock();
}

/**
 * codectl_mm_snapshot() - take a reference to an mm's registrations
 * @mm:		the address space, kept alive by the caller
 *
 * For fork: callable in atomic context, O(1).
 *
 * Return: the array of registrations, or NULL if there are none; drop it
 * with codectl_set_put() or hand it to codectl_mm_adopt().
 */
struct codectl_set *codectl_mm_snapshot(struct mm_struct *mm)
{
	struct codectl_mm *cmm = codectl_mm_find(mm);
	struct codectl_set *set;

	if (!cmm)
		return NULL;
	rcu_read_lock();
	/* A writer may be dropping the array we see: take the next. */
	do {
		set = rcu_dereference(cmm->set);
	} while (set && !refcount_inc_not_zero(&set->ref));
	rcu_read_unlock();
	return set;
}

/**
 * codectl_mm_set_rcu() - an mm's registrations, for a reader under RCU
 * @mm:		the address space, kept alive by the caller
 *
 * For walks that cannot sleep or take references they would have to drop
 * with call_rcu() (NMI): lock-free, no reference.  Call under
 * rcu_read_lock(); the array and its registrations stay valid until
 * rcu_read_unlock(), since arrays are freed after a grace period and
 * registrations only after the arrays holding them.
 *
 * Return: the array of registrations, or NULL if there are none.
 */
struct codectl_set *codectl_mm_set_rcu(struct mm_struct *mm)
{
	struct codectl_mm *cmm = codectl_mm_find(mm);

	return cmm ? rcu_dereference(cmm->set) : NULL;
}

static bool codectl_keep_mapped(const struct codectl_reg *reg, u64 start,
				u64 end)
{
	return codectl_reg_mapped(current->mm, reg);
}

/**
 * codectl_mm_adopt() - give an address space the registrations of a snapshot
 * @mm:		the caller's address space (a forked child's, before it
 *		first runs in user space)
 * @set:	a snapshot from codectl_mm_snapshot(); the reference is
 *		consumed in every case
 *
 * The arrays are immutable, so the child normally publishes its parent's
 * array of the moment of fork; both then go their own ways.  But the
 * snapshot is taken after dup_mmap() copied the parent's mappings, so a
 * thread of the parent may have mapped and registered new code in
 * between, which the child does not have: registrations whose code or
 * tables are not mapped in the child are left out, under the child's
 * mmap lock.  (Code unmapped, mapped again at the same address and
 * registered anew in that window would still pass this check.)
 *
 * Return: 0 or -errno (the child then has no registrations).
 */
int codectl_mm_adopt(struct mm_struct *mm, struct codectl_set *set)
{
	struct codectl_set *mine = set;
	struct codectl_mm *cmm;
	unsigned int i;
	int ret = 0;

	cmm = codectl_mm_get_or_create(mm);
	if (IS_ERR(cmm)) {
		codectl_set_put(set);
		return PTR_ERR(cmm);
	}
	if (mmap_read_lock_killable(mm)) {
		codectl_set_put(set);
		return -EINTR;
	}
	for (i = 0; i < set->nr; i++) {
		/* A child SIGKILLed meanwhile needs none of them. */
		if (fatal_signal_pending(current)) {
			codectl_set_put(set);
			mine = NULL;
			ret = -EINTR;
			break;
		}
		if (codectl_reg_mapped(mm, set->regs[i]))
			continue;
		mine = codectl_set_copy(set, 0, codectl_keep_mapped, 0, 0,
					GFP_KERNEL_ACCOUNT);
		codectl_set_put(set);
		if (!mine)
			ret = -ENOMEM;
		break;
	}
	mutex_lock(&cmm->lock);
	if (!mine) {
		/* nothing to publish */
	} else if (codectl_mm_set(cmm)) {
		ret = -EEXIST;		/* cannot happen before the child runs */
		codectl_set_put(mine);
	} else {
		codectl_mm_publish(cmm, mine);
	}
	mutex_unlock(&cmm->lock);
	mmap_read_unlock(mm);
	return ret;
}

/**
 * codectl_registry_exit() - drop every registry at module unload
 *
 * No file is open (the module could not be unloaded otherwise) and the
 * fork hook is gone, so only ->release of dying address spaces can race
 * with this; the table decides who owns each entry.  The puts a ->release
 * left for later are made now, once no ->release that took an entry
 * before this is still running.  The caller then waits for the
 * subscriptions and arrays to be freed.
 */
void codectl_registry_exit(void)
{
	for (;;) {
		struct codectl_mm *cmm = NULL;
		unsigned int bkt;

		spin_lock(&codectl_mm_table_lock);
		hash_for_each(codectl_mm_table, bkt, cmm, hnode)
			break;
		if (cmm)
			codectl_mm_unhash_locked(cmm);
		spin_unlock(&codectl_mm_table_lock);
		if (!cmm)
			break;
		codectl_mm_retire(cmm, false);
		cond_resched();
	}
	/* A ->release may sleep (cmm->lock): let it run. */
	while (atomic_read(&codectl_mm_releasing))
		msleep(20);
	cancel_delayed_work_sync(&codectl_mm_put_work);
	codectl_mm_put_fn(NULL);
}
