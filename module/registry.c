// SPDX-License-Identifier: GPL-2.0
/*
 * The per-address-space registry of code ranges.
 *
 * Each mm that registered something has one struct codectl_mm, found
 * through a global hash table keyed by the mm pointer.  It is the
 * container of an mmu_notifier_get() subscription: the subscription pins
 * the mm_struct (so the key cannot be reused while hashed) and its
 * ->release callback empties the registry when the address space is torn
 * down (exit, and the old mm after exec).  The table holds the one
 * subscription reference; whoever unhashes the entry (->release or module
 * exit) empties it and drops that reference, and free_notifier frees it
 * after an SRCU grace period.
 *
 * Registrations of one mm are disjoint ranges in an rbtree ordered by
 * address, so insertion with its overlap check and lookup by address are
 * O(log n).  The per-mm mutex is never held across user memory accesses:
 * a fault could need an mmu notifier, and readers take a reference on the
 * registration instead.
 */
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "codectl.h"

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

/* Kernel memory a registration holds, counted against max_bytes. */
static size_t codectl_reg_size(const struct codectl_reg *reg)
{
	size_t size = sizeof(*reg);

	if (reg->pathname)
		size += strlen(reg->pathname) + 1;
	if (reg->debug_link)
		size += strlen(reg->debug_link) + 1;
	return size;
}

/**
 * codectl_reg_put() - drop a reference to a registration
 * @reg:	the registration
 *
 * Frees it with its strings when the last reference goes.
 */
void codectl_reg_put(struct codectl_reg *reg)
{
	if (!refcount_dec_and_test(&reg->ref))
		return;
	atomic_long_sub(reg->charge, &codectl_stats.bytes);
	atomic_long_dec(&codectl_stats.registrations);
	kfree(reg->pathname);
	kfree(reg->debug_link);
	kfree(reg);
}

/* Remove every registration; the caller owns @cmm exclusively. */
static void codectl_mm_empty(struct codectl_mm *cmm)
{
	struct codectl_reg *reg, *tmp;

	mutex_lock(&cmm->lock);
	rbtree_postorder_for_each_entry_safe(reg, tmp, &cmm->regs, node)
		codectl_reg_put(reg);
	cmm->regs = RB_ROOT;
	cmm->nr = 0;
	cmm->bytes = 0;
	mutex_unlock(&cmm->lock);
}

/* Take @cmm out of the table; true if this caller did (and owns it). */
static bool codectl_mm_unhash(struct codectl_mm *cmm)
{
	bool owner;

	spin_lock(&codectl_mm_table_lock);
	owner = hash_hashed(&cmm->hnode);
	if (owner)
		hash_del(&cmm->hnode);
	spin_unlock(&codectl_mm_table_lock);
	return owner;
}

static struct mmu_notifier *codectl_mn_alloc(struct mm_struct *mm)
{
	struct codectl_mm *cmm;

	cmm = kzalloc(sizeof(*cmm), GFP_KERNEL_ACCOUNT);
	if (!cmm)
		return ERR_PTR(-ENOMEM);
	INIT_HLIST_NODE(&cmm->hnode);
	mutex_init(&cmm->lock);
	cmm->regs = RB_ROOT;
	atomic_long_inc(&codectl_stats.mms);
	return &cmm->mn;
}

static void codectl_mn_free(struct mmu_notifier *mn)
{
	struct codectl_mm *cmm = to_cmm(mn);

	mutex_destroy(&cmm->lock);
	kfree(cmm);
	atomic_long_dec(&codectl_stats.mms);
}

/*
 * The address space is going away.  No task can use it any more, so no
 * ioctl can be working on this registry; module exit may have taken it
 * first, which codectl_mm_unhash() settles.
 */
static void codectl_mn_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct codectl_mm *cmm = to_cmm(mn);

	if (!codectl_mm_unhash(cmm))
		return;
	codectl_mm_empty(cmm);
	mmu_notifier_put(mn);
}

static const struct mmu_notifier_ops codectl_mn_ops = {
	.release	= codectl_mn_release,
	.alloc_notifier	= codectl_mn_alloc,
	.free_notifier	= codectl_mn_free,
};

/**
 * codectl_mm_find() - the registry of an address space, if it has one
 * @mm:		the address space, which the caller keeps alive
 *
 * Return: the registry, or NULL.  It stays valid while @mm has users.
 */
struct codectl_mm *codectl_mm_find(struct mm_struct *mm)
{
	struct codectl_mm *cmm, *found = NULL;

	spin_lock(&codectl_mm_table_lock);
	hash_for_each_possible(codectl_mm_table, cmm, hnode, (unsigned long)mm) {
		if (cmm->mn.mm == mm) {
			found = cmm;
			break;
		}
	}
	spin_unlock(&codectl_mm_table_lock);
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
	if (!hashed)
		hash_add(codectl_mm_table, &cmm->hnode, (unsigned long)mm);
	spin_unlock(&codectl_mm_table_lock);
	if (hashed)
		mmu_notifier_put(mn);	/* another thread's get owns it */
	return cmm;
}

/**
 * codectl_mm_insert() - add a registration
 * @cmm:	the registry
 * @reg:	a new registration holding one reference, which the tree
 *		takes over on success; the caller keeps it on failure
 *
 * The registration is charged its size (struct and strings) against the
 * address space's max_bytes, and counts against max_registrations.
 *
 * Return: 0, -EEXIST if its text range overlaps another registration,
 * -ENOSPC past max_registrations, -ENOMEM past max_bytes.
 */
int codectl_mm_insert(struct codectl_mm *cmm, struct codectl_reg *reg)
{
	struct rb_node **link = &cmm->regs.rb_node, *parent = NULL;
	size_t charge = codectl_reg_size(reg);
	int ret = 0;

	mutex_lock(&cmm->lock);
	if (cmm->nr >= READ_ONCE(codectl_max_registrations)) {
		ret = -ENOSPC;
		goto out;
	}
	if (cmm->bytes + charge > READ_ONCE(codectl_max_bytes)) {
		ret = -ENOMEM;
		goto out;
	}
	/*
	 * The ranges in the tree are disjoint and ordered, so a range that
	 * overlaps any of them meets it on this descent.
	 */
	while (*link) {
		struct codectl_reg *cur = rb_entry(*link, struct codectl_reg, node);

		parent = *link;
		if (reg->text_end <= cur->text_start) {
			link = &parent->rb_left;
		} else if (reg->text_start >= cur->text_end) {
			link = &parent->rb_right;
		} else {
			ret = -EEXIST;
			goto out;
		}
	}
	rb_link_node(&reg->node, parent, link);
	rb_insert_color(&reg->node, &cmm->regs);
	reg->charge = charge;
	cmm->nr++;
	cmm->bytes += reg->charge;
	atomic_long_add(reg->charge, &codectl_stats.bytes);
out:
	mutex_unlock(&cmm->lock);
	return ret;
}

/**
 * codectl_mm_remove() - remove the registration of exactly this range
 * @cmm:	the registry
 * @text_start:	its text_start
 * @text_end:	its text_end
 *
 * Return: 0 or -ENOENT.
 */
int codectl_mm_remove(struct codectl_mm *cmm, u64 text_start, u64 text_end)
{
	struct rb_node *n;
	struct codectl_reg *reg = NULL;

	mutex_lock(&cmm->lock);
	n = cmm->regs.rb_node;
	while (n) {
		struct codectl_reg *cur = rb_entry(n, struct codectl_reg, node);

		if (text_start < cur->text_start) {
			n = n->rb_left;
		} else if (text_start > cur->text_start) {
			n = n->rb_right;
		} else {
			if (cur->text_end == text_end)
				reg = cur;
			break;
		}
	}
	if (reg) {
		rb_erase(&reg->node, &cmm->regs);
		cmm->nr--;
		cmm->bytes -= reg->charge;
	}
	mutex_unlock(&cmm->lock);

	if (!reg)
		return -ENOENT;
	codectl_reg_put(reg);
	return 0;
}

/**
 * codectl_mm_next() - the first registration that ends above an address
 * @cmm:	the registry
 * @addr:	the address
 *
 * This is the lookup by address too: the result covers @addr when its
 * text_start <= @addr.
 *
 * Return: the registration with a reference the caller drops with
 * codectl_reg_put(), or NULL.
 */
struct codectl_reg *codectl_mm_next(struct codectl_mm *cmm, u64 addr)
{
	struct rb_node *n;
	struct codectl_reg *found = NULL;

	mutex_lock(&cmm->lock);
	n = cmm->regs.rb_node;
	while (n) {
		struct codectl_reg *cur = rb_entry(n, struct codectl_reg, node);

		if (cur->text_end > addr) {
			found = cur;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	if (found)
		refcount_inc(&found->ref);
	mutex_unlock(&cmm->lock);
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
	*nr = 0;
	*bytes = 0;
	if (!cmm)
		return;
	mutex_lock(&cmm->lock);
	*nr = cmm->nr;
	*bytes = cmm->bytes;
	mutex_unlock(&cmm->lock);
}

/**
 * codectl_registry_exit() - drop every registry at module unload
 *
 * No file is open (the module could not be unloaded otherwise), so only
 * ->release of dying address spaces can race with this; the table decides
 * who owns each entry.  The caller then waits for the subscriptions to be
 * freed with mmu_notifier_synchronize().
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
			hash_del(&cmm->hnode);
		spin_unlock(&codectl_mm_table_lock);
		if (!cmm)
			break;
		codectl_mm_empty(cmm);
		mmu_notifier_put(&cmm->mn);
	}
}
