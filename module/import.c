// SPDX-License-Identifier: GPL-2.0
/*
 * Module, imports: synthesised SFrame sections for object files,
 * system-wide.  CODECTL_IOC_IMPORT (CAP_SYS_ADMIN) hands over a section
 * built from an object's .eh_frame for its link-time addresses; it is
 * checked against the file (objfile.c) and kept, keyed by the file's
 * identity, build id and segment, for discovery (discover.c) to register
 * in any address space, its flat table shared (share.c).  A file whose
 * ctime alone moved is hashed again (codectl_import_verify()).  A small
 * refcounted hash table under a spinlock; no NMI or interrupt context.
 * More: docs/design.md, "System-wide imports".
 */
#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/moduleparam.h>
#include <linux/once.h>
#include <linux/random.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/uaccess.h>

#include "internal.h"
#include "compat.h"

#define CODECTL_IMPORT_BITS	8

/**
 * struct codectl_import - one imported section
 * @ref:	the store's and each user's
 * @node:	in codectl_import_table, hashed by the file's identity
 * @obj:	the object it was imported for
 * @pathname:	the file's path at import, or NULL
 * @by_path:	@pathname led to the file in the importer's namespace at
 *		import: it replaces another file's import by that path
 * @sframe_vaddr: the link-time address the section was built for
 * @size:	bytes of @sec
 * @sec:	the section
 * @sec_hash:	codectl_share_content() of @sec, computed once
 * @content:	codectl_file_hash() of the file at import
 * @hashed:	@content is known: computed after the insertion (by the
 *		ioctl that made the import, before it returns), so that
 *		discovery need not wait for the whole file to be read
 * @ctime:	the file's ctime when @content was last found equal (at
 *		import: when the file was described and its section checked)
 * @gone:	unhashed (replaced, removed, evicted, or its file changed)
 * @table:	the shared flat table (or kernel copy) registrations built
 *		from @sec, kept while the import lives, or NULL
 * @regtab:	the register table imported with @sec (regtab.c), or NULL;
 *		set before insertion, never changed
 * @charge:	what it costs its owner (import-budget.c): @size, and
 *		@table's bytes once kept
 */
struct codectl_import {
	refcount_t ref;
	struct hlist_node node;
	struct codectl_file_obj obj;
	char *pathname;
	bool by_path;
	u64 sframe_vaddr;
	u64 size;
	u8 *sec;
	u32 sec_hash;
	u64 content;
	bool hashed;
	struct timespec64 ctime;
	bool gone;
	struct codectl_shared_flat *table;
	struct codectl_regtab *regtab;
	struct codectl_charge charge;
};

/* Bumped after each import is inserted: see codectl_reg_stale(). */
unsigned int codectl_import_gen;

static DEFINE_HASHTABLE(codectl_import_table, CODECTL_IMPORT_BITS);
static DEFINE_SPINLOCK(codectl_import_lock);
static unsigned long codectl_import_bytes;	/* under the lock */
static unsigned long codectl_import_count;	/* under the lock */
/* Content checks after a ctime change: found the same, found changed. */
static atomic64_t codectl_import_rechecked = ATOMIC64_INIT(0);
static atomic64_t codectl_import_changed = ATOMIC64_INIT(0);
/* Evicted to make room; refused for want of it. */
static atomic64_t codectl_import_evicted = ATOMIC64_INIT(0);
static atomic64_t codectl_import_refused = ATOMIC64_INIT(0);
/* Tables not kept by imports for want of room. */
static atomic64_t codectl_import_tables_unkept = ATOMIC64_INIT(0);

static u32 codectl_import_hash(const struct codectl_file_id *id)
{
	static u32 seed __read_mostly;

	/* Seeded: a user who picks file identities cannot pick a bucket. */
	get_random_once(&seed, sizeof(seed));
	return jhash(id, sizeof(*id), seed);
}

static void codectl_import_free(struct codectl_import *imp)
{
	if (imp->table)
		codectl_share_put(imp->table);
	codectl_regtab_put(imp->regtab);
	kvfree(imp->sec);
	kfree(imp->pathname);
	kfree(imp);
}

/**
 * codectl_import_regtab() - the register table imported with a section
 * @imp:	an import, from codectl_import_get()
 *
 * Return: the table, valid while the caller holds @imp, or NULL.
 */
struct codectl_regtab *codectl_import_regtab(const struct codectl_import *imp)
{
	return imp->regtab;
}

/**
 * codectl_import_put() - drop a reference to an import
 * @imp:	from codectl_import_get()
 */
void codectl_import_put(struct codectl_import *imp)
{
	if (refcount_dec_and_test(&imp->ref))
		codectl_import_free(imp);
}

/* Unhash @imp (under the lock); the caller puts the store's reference. */
static void codectl_import_unhash(struct codectl_import *imp)
{
	hash_del(&imp->node);
	imp->gone = true;
	codectl_budget_uncharge(&imp->charge);
	codectl_import_bytes -= imp->size;
	codectl_import_count--;
}

/**
 * codectl_import_get() - the import of an object discovery examines
 * @obj:	the object: file identity, build id, executable segment (its
 *		link-time start and end)
 * @sec:	out: the section
 * @size:	out: its size
 * @vaddr:	out: the link-time address it was built for
 * @sec_hash:	out: the section's hash for a sharing key (share.c)
 *
 * Context: any but NMI; takes a spinlock.
 * Return: the import, with a reference the caller drops with
 * codectl_import_put() once done with @sec, or NULL.
 */
struct codectl_import *codectl_import_get(const struct codectl_file_obj *obj,
					  const u8 **sec, u64 *size,
					  u64 *vaddr, u32 *sec_hash)
{
	struct codectl_import *imp, *found = NULL;

	spin_lock(&codectl_import_lock);
	hash_for_each_possible(codectl_import_table, imp, node,
			       codectl_import_hash(&obj->id)) {
		if (!memcmp(&imp->obj, obj, sizeof(*obj))) {
			refcount_inc(&imp->ref);
			codectl_budget_touch(&imp->charge);
			found = imp;
			break;
		}
	}
	spin_unlock(&codectl_import_lock);
	if (found) {
		*sec = found->sec;
		*size = found->size;
		*vaddr = found->sframe_vaddr;
		*sec_hash = found->sec_hash;
	}
	return found;
}

/**
 * codectl_import_keep_table() - keep the table registrations share
 * @imp:	an import, from codectl_import_get()
 * @k:		the sharing key of a registration just made from it
 *
 * A registration built from @imp's section publishes a shared flat table
 * (share.c), which lives as long as some registration uses it: in a
 * workload of short processes, each one built it again.  The import
 * keeps a reference instead, for as long as it lives, charged to its
 * owner with the section (import-budget.c); when that does not fit, it
 * is not kept (registrations build it again, nothing else changes).
 *
 * Context: task context; takes spinlocks.
 */
void codectl_import_keep_table(struct codectl_import *imp,
			       const struct codectl_share_key *k)
{
	struct codectl_shared_flat *sh;
	struct codectl_charge more;
	struct codectl_shortfall s;

	if (READ_ONCE(imp->table) || READ_ONCE(imp->gone))
		return;
	sh = codectl_share_get(k);
	if (!sh)
		return;
	more.owner = imp->charge.owner;
	more.bytes = codectl_share_bytes(sh);
	spin_lock(&codectl_import_lock);
	if (!imp->table && !imp->gone) {
		codectl_budget_shortfall(&more, &s);
		if (!codectl_budget_verdict(&s)) {
			codectl_budget_uncharge(&imp->charge);
			imp->charge.bytes += more.bytes;
			codectl_budget_charge(&imp->charge);
			imp->table = sh;
			sh = NULL;
		} else {
			atomic64_inc(&codectl_import_tables_unkept);
		}
	}
	spin_unlock(&codectl_import_lock);
	if (sh)
		codectl_share_put(sh);
}

/**
 * codectl_import_has_file() - is there an import for this file?
 * @id:		the file
 *
 * Context: any but NMI; takes a spinlock.
 * Return: true when some import was made for the file (any segment).
 */
bool codectl_import_has_file(const struct codectl_file_id *id)
{
	struct codectl_import *imp;
	bool found = false;

	spin_lock(&codectl_import_lock);
	hash_for_each_possible(codectl_import_table, imp, node,
			       codectl_import_hash(id))
		if (!memcmp(&imp->obj.id, id, sizeof(*id)))
			found = true;
	spin_unlock(&codectl_import_lock);
	return found;
}

/**
 * codectl_import_verify() - is @file's content still what was imported?
 * @imp:	from codectl_import_get() for @file's identity
 * @file:	the object file discovery examines
 *
 * The identity matched; if the ctime also did, yes.  Otherwise hash the
 * file again: the same content records the new ctime (the next look-up
 * is cheap again); other content drops the import, whose rules must
 * never apply to it.  An import whose own hash is not done yet (its
 * ioctl still reading the file) does not apply to a file whose ctime
 * moved: nothing says its content is the same.
 *
 * Context: task context; may read the whole file.
 * Return: true when the import applies to @file.
 */
bool codectl_import_verify(struct codectl_import *imp, struct file *file)
{
	struct inode *inode = codectl_file_inode(file);
	struct timespec64 ct = codectl_inode_ctime(inode), now;
	bool same, hashed;
	u64 hash;

	spin_lock(&codectl_import_lock);
	same = timespec64_equal(&imp->ctime, &ct);
	hashed = imp->hashed;
	spin_unlock(&codectl_import_lock);
	if (same)
		return true;
	if (!hashed || inode_is_open_for_write(inode) ||
	    codectl_file_hash(file, &hash))
		return false;
	if (hash != imp->content) {
		atomic64_inc(&codectl_import_changed);
		spin_lock(&codectl_import_lock);
		same = imp->gone;
		if (!same)
			codectl_import_unhash(imp);
		spin_unlock(&codectl_import_lock);
		if (!same)
			codectl_import_put(imp);	/* the store's */
		return false;
	}
	atomic64_inc(&codectl_import_rechecked);
	now = codectl_inode_ctime(inode);
	/* Not written meanwhile: the new ctime stands for this content. */
	if (!timespec64_equal(&now, &ct) || inode_is_open_for_write(inode))
		return true;
	spin_lock(&codectl_import_lock);
	imp->ctime = ct;
	spin_unlock(&codectl_import_lock);
	return true;
}

/* Drop every import; or those of @id's file when @id is not NULL. */
static unsigned int codectl_import_drop(const struct codectl_file_id *id)
{
	struct codectl_import *imp;
	struct hlist_node *tmp;
	HLIST_HEAD(dead);
	unsigned int n = 0, bkt;

	spin_lock(&codectl_import_lock);
	hash_for_each_safe(codectl_import_table, bkt, tmp, imp, node) {
		if (id && memcmp(&imp->obj.id, id, sizeof(*id)))
			continue;
		codectl_import_unhash(imp);
		hlist_add_head(&imp->node, &dead);
		n++;
	}
	spin_unlock(&codectl_import_lock);
	hlist_for_each_entry_safe(imp, tmp, &dead, node)
		codectl_import_put(imp);
	return n;
}

/* Does @imp's path still lead to its file (the caller's namespace)? */
static bool codectl_import_exists(const struct codectl_import *imp)
{
	struct codectl_file_id id;
	struct path path;
	bool same;

	if (!imp->pathname)
		return true;	/* nothing to look at: kept */
	if (kern_path(imp->pathname, LOOKUP_FOLLOW, &path))
		return false;
	codectl_file_id(d_inode(path.dentry), &id);
	same = !memcmp(&id, &imp->obj.id, sizeof(id));
	path_put(&path);
	return same;
}

/* CODECTL_IMPORT_PRUNE: drop imports of files gone; how many. */
static long codectl_import_prune(void)
{
	struct codectl_import **v, *imp;
	unsigned int n = 0, max, i, bkt;
	long dropped = 0;

	spin_lock(&codectl_import_lock);
	max = codectl_import_count;
	spin_unlock(&codectl_import_lock);
	v = kvcalloc(max ?: 1, sizeof(*v), GFP_KERNEL_ACCOUNT);
	if (!v)
		return -ENOMEM;
	spin_lock(&codectl_import_lock);
	hash_for_each(codectl_import_table, bkt, imp, node) {
		if (n == max)
			break;	/* imported meanwhile: the next prune's */
		refcount_inc(&imp->ref);
		v[n++] = imp;
	}
	spin_unlock(&codectl_import_lock);
	for (i = 0; i < n; i++) {
		bool drop = false;

		imp = v[i];
		if (!fatal_signal_pending(current) &&
		    !codectl_import_exists(imp)) {
			spin_lock(&codectl_import_lock);
			if (!imp->gone) {
				codectl_import_unhash(imp);
				drop = true;
				dropped++;
			}
			spin_unlock(&codectl_import_lock);
		}
		if (drop)
			codectl_import_put(imp);	/* the store's */
		codectl_import_put(imp);
	}
	kvfree(v);
	return dropped;
}

/*
 * Does @new replace @imp: the same file, or the same pathname (an
 * upgraded library renamed over the old one)?  By pathname only when
 * that path leads to @new's file where the importer looks: d_path() of
 * a file mapped in another mount namespace (a user's bind mount of a
 * copy over /usr/bin/python3.11, in a user namespace of theirs) names
 * it by its path there, and it must not displace the import of the
 * file that path leads to here.
 */
static bool codectl_import_replaces(const struct codectl_import *new,
				    const struct codectl_import *imp)
{
	return !memcmp(&imp->obj.id, &new->obj.id, sizeof(new->obj.id)) ||
	       (new->by_path && imp->pathname &&
		!strcmp(imp->pathname, new->pathname));
}

/* @new's shortfall (import-budget.c), less what it replaces (under the lock). */
static int codectl_import_fits(const struct codectl_import *new,
			       struct codectl_shortfall *s)
{
	struct codectl_import *imp;
	unsigned int bkt;

	codectl_budget_shortfall(&new->charge, s);
	hash_for_each(codectl_import_table, bkt, imp, node)
		if (codectl_import_replaces(new, imp))
			codectl_budget_helps(s, &imp->charge, true);
	return codectl_budget_verdict(s);
}

/* Does any process map @imp's file (as its path leads to it here)? */
static bool codectl_import_mapped(const struct codectl_import *imp)
{
	struct codectl_file_id id;
	struct path path;
	bool mapped;

	if (!imp->pathname)
		return true;	/* nothing to look at: in use */
	if (kern_path(imp->pathname, LOOKUP_FOLLOW, &path))
		return false;
	codectl_file_id(d_inode(path.dentry), &id);
	mapped = !memcmp(&id, &imp->obj.id, sizeof(id)) &&
		 mapping_mapped(d_inode(path.dentry)->i_mapping);
	path_put(&path);
	return mapped;
}

/* A candidate for eviction: the import, and whether its file is mapped. */
struct codectl_import_victim {
	struct codectl_import *imp;
	bool mapped;
};

/*
 * Room for @new: evict, least recently used first, the imports whose
 * files no process maps and whose going reduces @new's shortfall; for a
 * system object, then those of other owners, mapped or not (users hold
 * at most half of import_max_bytes).  A registration keeps its own copy
 * of the rules: an import evicted is imported again, from the daemon's
 * cache, when a process maps its file once more.
 */
static void codectl_import_make_room(const struct codectl_import *new)
{
	bool system = new->charge.owner == CODECTL_OWNER_SYSTEM;
	struct codectl_import_victim *v;
	struct codectl_shortfall s;
	struct codectl_charge *c;
	struct codectl_import *imp;
	unsigned int n = 0, max, i, pass;
	struct hlist_node *tmp;
	HLIST_HEAD(dead);

	spin_lock(&codectl_import_lock);
	max = codectl_import_count;
	spin_unlock(&codectl_import_lock);
	v = kvcalloc(max ?: 1, sizeof(*v), GFP_KERNEL_ACCOUNT);
	if (!v)
		return;
	spin_lock(&codectl_import_lock);
	codectl_import_fits(new, &s);
	list_for_each_entry(c, codectl_budget_lru(), lru) {
		if (n == max)
			break;
		if (!codectl_budget_helps(&s, c, false))
			continue;
		imp = container_of(c, struct codectl_import, charge);
		refcount_inc(&imp->ref);
		v[n++].imp = imp;
	}
	spin_unlock(&codectl_import_lock);
	for (i = 0; i < n; i++)
		v[i].mapped = fatal_signal_pending(current) ||
			      codectl_import_mapped(v[i].imp);
	spin_lock(&codectl_import_lock);
	codectl_import_fits(new, &s);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n && codectl_budget_verdict(&s); i++) {
			imp = v[i].imp;
			if (imp->gone || (pass == 0 && v[i].mapped) ||
			    (pass == 1 && (!system || !v[i].mapped ||
					   imp->charge.owner ==
					   CODECTL_OWNER_SYSTEM)) ||
			    !codectl_budget_helps(&s, &imp->charge, true))
				continue;
			codectl_import_unhash(imp);
			hlist_add_head(&imp->node, &dead);
			atomic64_inc(&codectl_import_evicted);
		}
	}
	spin_unlock(&codectl_import_lock);
	hlist_for_each_entry_safe(imp, tmp, &dead, node)
		codectl_import_put(imp);	/* the store's */
	for (i = 0; i < n; i++)
		codectl_import_put(v[i].imp);
	kvfree(v);
}

/*
 * Insert @new, replacing the imports codectl_import_replaces() names,
 * after making room for it if it does not fit.
 */
static int codectl_import_insert(struct codectl_import *new)
{
	struct codectl_shortfall s;
	struct codectl_import *imp;
	struct hlist_node *tmp;
	bool evicted = false;
	HLIST_HEAD(dead);
	unsigned int bkt;
	int ret;

again:
	spin_lock(&codectl_import_lock);
	ret = codectl_import_fits(new, &s);
	if (ret && !evicted) {
		spin_unlock(&codectl_import_lock);
		codectl_import_make_room(new);
		evicted = true;
		goto again;
	}
	if (ret) {
		atomic64_inc(&codectl_import_refused);
		goto out;
	}
	hash_for_each_safe(codectl_import_table, bkt, tmp, imp, node) {
		if (!codectl_import_replaces(new, imp))
			continue;
		codectl_import_unhash(imp);
		hlist_add_head(&imp->node, &dead);
	}
	hash_add(codectl_import_table, &new->node,
		 codectl_import_hash(&new->obj.id));
	codectl_budget_charge(&new->charge);
	codectl_import_bytes += new->size;
	codectl_import_count++;
	/* After the insertion: discovery samples it before its look-up. */
	WRITE_ONCE(codectl_import_gen, codectl_import_gen + 1);
out:
	spin_unlock(&codectl_import_lock);
	hlist_for_each_entry_safe(imp, tmp, &dead, node)
		codectl_import_put(imp);
	return ret;
}

/* The checks of struct codectl_import_info that need no file. */
static int codectl_import_args_ok(const struct codectl_import_info *info)
{
	u64 end;

	if (!info->sframe_vaddr || !PAGE_ALIGNED(info->sframe_vaddr) ||
	    !info->sframe_size ||
	    check_add_overflow(info->sframe_vaddr, info->sframe_size, &end) ||
	    end > TASK_SIZE_MAX)
		return -EINVAL;
	if (!info->regs != !info->regs_size)
		return -EINVAL;
	if (info->sframe_size > codectl_budget_max() ||
	    info->regs_size > codectl_budget_max())
		return -EFBIG;	/* could never be held */
	return 0;
}

/*
 * Is @inode still the file identified as @was, its ctime @ct, and not
 * open for writing?
 */
static bool codectl_import_file_unchanged(struct inode *inode,
					  const struct codectl_file_id *was,
					  const struct timespec64 *ct)
{
	struct codectl_file_id id;
	struct timespec64 now = codectl_inode_ctime(inode);

	codectl_file_id(inode, &id);
	return !memcmp(&id, was, sizeof(id)) && timespec64_equal(&now, ct) &&
	       !inode_is_open_for_write(inode);
}

/*
 * The whole content of @file (@inode: codectl_file_inode()'s), just
 * imported as @imp (the caller's reference, put here), once @imp is in
 * use: discovery uses it meanwhile wherever the file's ctime is still @ct
 * (codectl_import_verify()), as it would after.  In a TCG guest, reading
 * python3.11's 6.8 MB here before the insertion kept its first profile's
 * samples waiting.  A file changed meanwhile (identity, ctime) or opened
 * for writing drops the import.
 */
static int codectl_import_hash_content(struct codectl_import *imp,
				       struct file *file, struct inode *inode,
				       const struct codectl_file_id *was,
				       const struct timespec64 *ct)
{
	bool unhashed = false;
	u64 content;
	int ret;

	ret = codectl_file_hash(file, &content);
	if (ret == -EIO)
		ret = -ENOEXEC;
	if (!ret && !codectl_import_file_unchanged(inode, was, ct))
		ret = -ETXTBSY;
	spin_lock(&codectl_import_lock);
	if (!ret) {
		imp->content = content;
		imp->hashed = true;
	} else if (!imp->gone) {
		codectl_import_unhash(imp);
		unhashed = true;
	}
	spin_unlock(&codectl_import_lock);
	if (unhashed)
		codectl_import_put(imp);	/* the store's */
	codectl_import_put(imp);		/* ours */
	return ret;
}

/* Import @info's section for @file. */
static int codectl_import_add(struct file *file,
			      const struct codectl_import_info *info)
{
	struct inode *inode = codectl_file_inode(file);
	struct timespec64 ct = codectl_inode_ctime(inode);
	struct codectl_import *imp;
	struct codectl_file_elf elf;
	char *buf, *path;
	u8 *regs = NULL;
	int ret;

	ret = codectl_import_args_ok(info);
	if (ret)
		return ret;
	ret = codectl_objfile_describe(file, &elf);
	if (ret)
		return ret;
	if (elf.has_sframe)
		return -EEXIST;
	if (info->sframe_vaddr < elf.load_end)
		return -ENOEXEC;

	imp = kzalloc(sizeof(*imp), GFP_KERNEL_ACCOUNT);
	if (!imp)
		return -ENOMEM;
	refcount_set(&imp->ref, 1);
	imp->obj = elf.obj;
	imp->ctime = ct;
	imp->sframe_vaddr = info->sframe_vaddr;
	imp->size = info->sframe_size;
	INIT_LIST_HEAD(&imp->charge.lru);
	imp->charge.owner = codectl_owner_of(inode);
	imp->charge.bytes = imp->size;
	imp->sec = kvmalloc(imp->size, GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!imp->sec)
		goto out;
	ret = -EFAULT;
	if (copy_from_user(imp->sec, u64_to_user_ptr(info->sframe), imp->size))
		goto out;
	if (info->regs) {
		regs = kvmalloc(info->regs_size, GFP_KERNEL_ACCOUNT);
		ret = -ENOMEM;
		if (!regs)
			goto out;
		ret = -EFAULT;
		if (copy_from_user(regs, u64_to_user_ptr(info->regs),
				   info->regs_size))
			goto out;
	}
	ret = codectl_sframe_check_copy(imp->sec, imp->sframe_vaddr, imp->size,
					elf.obj.text_vaddr, elf.obj.text_end);
	if (ret)
		goto out;
	if (regs) {
		ret = codectl_regtab_build(regs, imp->sframe_vaddr,
					   info->regs_size, elf.obj.text_vaddr,
					   elf.obj.text_end, &imp->regtab);
		kvfree(regs);
		regs = NULL;
		if (ret)
			goto out;
		imp->charge.bytes += codectl_regtab_bytes(imp->regtab);
	}
	imp->sec_hash = codectl_share_content(imp->sec, imp->size);

	/* The section was checked against the file identified, unwritten. */
	ret = -ETXTBSY;
	if (!codectl_import_file_unchanged(inode, &elf.obj.id, &ct))
		goto out;

	buf = kmalloc(PATH_MAX, GFP_KERNEL_ACCOUNT);
	if (buf) {
		path = d_path(&file->f_path, buf, PATH_MAX);
		if (!IS_ERR(path))
			imp->pathname = kstrdup(path, GFP_KERNEL_ACCOUNT);
		kfree(buf);
	}
	imp->by_path = imp->pathname && codectl_import_exists(imp);
	refcount_inc(&imp->ref);	/* ours, until it is hashed */
	ret = codectl_import_insert(imp);
	if (ret) {
		refcount_dec(&imp->ref);
		goto out;
	}
	return codectl_import_hash_content(imp, file, inode, &elf.obj.id, &ct);
out:
	kvfree(regs);
	codectl_import_free(imp);
	return ret;
}

/**
 * codectl_import_ioctl() - CODECTL_IOC_IMPORT
 * @uinfo:	user pointer to struct codectl_import_info
 * @usize:	its size as the caller knows it (VER0 or more)
 *
 * Context: task context.
 * Return: 0 or the errnos documented in uapi/linux/codectl.h.
 */
long codectl_import_ioctl(const void __user *uinfo, size_t usize)
{
	struct codectl_import_info info;
	struct codectl_file_id id;
	struct file *file;
	long ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = copy_struct_from_user(&info, sizeof(info), uinfo, usize);
	if (ret)
		return ret;
	if ((info.flags & ~CODECTL_IMPORT_FLAGS_ALL) ||
	    hweight32(info.flags) > 1 || info.__reserved ||
	    (info.flags && (info.regs || info.regs_size)))
		return -EINVAL;
	if (info.flags & CODECTL_IMPORT_CLEAR) {
		codectl_import_drop(NULL);
		return 0;
	}
	if (info.flags & CODECTL_IMPORT_PRUNE)
		return codectl_import_prune();
	file = fget(info.fd);
	if (!file)
		return -EBADF;
	if (info.flags & CODECTL_IMPORT_REMOVE) {
		codectl_file_id(codectl_file_inode(file), &id);
		ret = codectl_import_drop(&id) ? 0 : -ENOENT;
	} else {
		ret = codectl_import_add(file, &info);
	}
	fput(file);
	return ret;
}

/**
 * codectl_imports_show() - debugfs codectl/imports
 * @m:		the seq_file
 * @v:		unused
 *
 * A line per import: device, inode, build id, link-time text range,
 * section address and size, its register table's bytes (0: none),
 * pathname; then the totals (the tables kept summed here).
 *
 * Return: 0.
 */
int codectl_imports_show(struct seq_file *m, void *v)
{
	unsigned long tables = 0, table_bytes = 0;
	struct codectl_import *imp;
	unsigned int bkt, i;

	spin_lock(&codectl_import_lock);
	hash_for_each(codectl_import_table, bkt, imp, node) {
		if (imp->table) {
			tables++;
			table_bytes += codectl_share_bytes(imp->table);
		}
		seq_printf(m, "%u:%u %llu ", MAJOR(imp->obj.id.dev),
			   MINOR(imp->obj.id.dev), imp->obj.id.ino);
		for (i = 0; i < imp->obj.build_id_len; i++)
			seq_printf(m, "%02x", imp->obj.build_id[i]);
		if (!imp->obj.build_id_len)
			seq_puts(m, "-");
		seq_printf(m, " %llx-%llx %llx %llu %llu %s\n",
			   imp->obj.text_vaddr, imp->obj.text_end,
			   imp->sframe_vaddr, imp->size,
			   imp->regtab ? codectl_regtab_bytes(imp->regtab) : 0,
			   imp->pathname ?: "-");
	}
	seq_printf(m, "imports %lu\nbytes %lu\n", codectl_import_count,
		   codectl_import_bytes);
	seq_printf(m, "tables_kept %lu\ntable_bytes %lu\n", tables,
		   table_bytes);
	codectl_budget_show(m);
	spin_unlock(&codectl_import_lock);
	seq_printf(m, "rechecked %lld\nchanged %lld\n",
		   atomic64_read(&codectl_import_rechecked),
		   atomic64_read(&codectl_import_changed));
	seq_printf(m, "evicted %lld\nrefused %lld\ntables_unkept %lld\n",
		   atomic64_read(&codectl_import_evicted),
		   atomic64_read(&codectl_import_refused),
		   atomic64_read(&codectl_import_tables_unkept));
	return 0;
}

/**
 * codectl_import_exit() - drop every import (module unload)
 *
 * Discovery is stopped by then: nobody holds a reference.
 */
void codectl_import_exit(void)
{
	codectl_import_drop(NULL);
}
