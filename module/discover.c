// SPDX-License-Identifier: GPL-2.0
/*
 * Discovery: the first time an unwind meets a pc in an executable file
 * mapping that no registration covers, codectl_discover_request() (any
 * context, NMI included) notes the pc in a per-task slot (taskslot.c) and
 * queues its task_work.  There, in task context, the object is read from
 * the file (objfile.c) and registered as CODECTL_REGISTER_ELF would
 * (register.c) with origin CODECTL_ORIGIN_DISCOVERED, with or without
 * SFrame, or with an import (import.c); then the other unregistered
 * executable mappings are swept.  Refusals leave negative entries, per mm
 * and per file.  Counters: debugfs codectl/discover.  The details (what
 * is read from the file and why, negatives, unload): docs/design.md,
 * "Discovery".
 */
#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/irqflags.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/once.h>
#include <linux/overflow.h>
#include <linux/preempt.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/task_work.h>

#include "internal.h"
#include "compat.h"

bool codectl_discover = true;
module_param_named(discover, codectl_discover, bool, 0644);
MODULE_PARM_DESC(discover,
		 "Find the SFrame section of unregistered executable file mappings at the first unwind that meets them (default Y)");

/* pcs a slot notes before its task_work runs */
#define DISCOVERY_PCS		4

/* state: number of pcs noted, CODECTL_TASKSLOT_QUEUED and _RELEASING */
#define DISCOVERY_COUNT	0xffUL

#define DISCOVERY_MAX_FILES	16	/* mappings of one file examined */

/**
 * struct discovery_slot - pcs a task asked to be examined
 * @ts:		the slot's owner, task_work and state: the count of @pcs
 *		and CODECTL_TASKSLOT_* bits; queued once per QUEUED state
 * @pcs:	the pcs, written after the count is taken
 *
 * Only the owner touches an owned slot (its task context and the
 * interrupts and NMIs that nest in it): every race is nesting on one
 * CPU, where the inner context runs to completion.  A nested request
 * that misses a slot being claimed claims a second one: two task_works
 * then examine their own pcs, which costs a duplicate look at worst.
 */
struct discovery_slot {
	struct codectl_taskslot ts;
	u64 pcs[DISCOVERY_PCS];
};

static struct codectl_taskslot_pool discovery_slots =
	CODECTL_TASKSLOT_POOL(struct discovery_slot, 10, 32,
			      &codectl_stats.discover_works, "discoveries");

static bool discovery_stopping;

static const char *const discovery_refusal_names[NR_REFUSALS] = {
	[REFUSED_NOT_FILE] = "not_file", [REFUSED_WRITABLE] = "writable",
	[REFUSED_READ] = "read", [REFUSED_EHDR] = "ehdr",
	[REFUSED_PHDRS] = "phdrs", [REFUSED_NO_LOAD] = "no_load",
	[REFUSED_LAYOUT] = "layout",
	[REFUSED_SFRAME_OUTSIDE] = "sframe_outside",
	[REFUSED_CHANGED] = "changed", [REFUSED_SFRAME_BAD] = "sframe_bad",
	[REFUSED_EXISTS] = "exists", [REFUSED_LIMIT] = "limit",
	[REFUSED_NOMEM] = "nomem", [REFUSED_INTR] = "intr",
	[REFUSED_OTHER] = "other",
};

static struct {
	atomic64_t requests;		/* requests noted */
	atomic64_t pending_fallbacks;	/* requests while one was pending */
	atomic64_t negative_hits;	/* requests answered by a negative */
	atomic64_t file_negative_hits;	/* objects answered by a file's */
	atomic64_t dropped;		/* no slot, or the slot was full */
	atomic64_t not_code;		/* pcs in no executable file mapping */
	atomic64_t examined;		/* objects examined */
	atomic64_t with_sframe;		/* registered with SFrame */
	atomic64_t imported;		/* registered with an imported one */
	atomic64_t upgraded;		/* of them, replacing one without */
	atomic64_t without_sframe;	/* registered without SFrame */
	atomic64_t unregistered;	/* without SFrame, no registry made */
	atomic64_t covered;		/* already registered when examined */
	atomic64_t refused[NR_REFUSALS];
	atomic64_t ns;			/* time spent examining */
} discovery_stats;

/* ---- requests (any context) ------------------------------------------ */

static struct discovery_slot *discovery_slot(struct codectl_taskslot *ts)
{
	return ts ? container_of(ts, struct discovery_slot, ts) : NULL;
}

/*
 * Is there an executable file mapping at @pc to examine?  Only looked at
 * in task context when the mmap lock is free (trylock: the unwinder may
 * hold it); elsewhere the task_work looks.  Frames a walk got wrong (a
 * fallback through code without frame pointers) have pcs anywhere: this
 * keeps them from queueing a task_work at every unwind.
 */
static bool discovery_worth(u64 pc)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool worth;

	if (!in_task() || irqs_disabled() || !mmap_read_trylock(mm))
		return true;
	vma = find_vma(mm, pc);
	worth = vma && vma->vm_start <= pc && (vma->vm_flags & VM_EXEC) &&
		vma->vm_file;
	mmap_read_unlock(mm);
	return worth;
}

/**
 * codectl_discover_request() - ask for the object at a pc to be examined
 * @pc:		a user pc of current that no registration covers
 *
 * Any context, NMI included: no allocation, no lock.  Notes @pc in
 * current's slot and queues its task_work, which examines the object
 * before current returns to user space.  Does nothing when the module
 * parameter discover is off, for kernel threads and exiting tasks, and
 * for pcs in a negative entry.
 */
void codectl_discover_request(u64 pc)
{
	struct discovery_slot *s;
	struct codectl_mm *cmm;
	unsigned long old, n;
	unsigned int i;

	if (!READ_ONCE(codectl_discover) || READ_ONCE(discovery_stopping) ||
	    !discovery_slots.slots)
		return;
	if ((current->flags & (PF_KTHREAD | PF_EXITING)) || !current->mm ||
	    pc >= TASK_SIZE_MAX)
		return;
	cmm = codectl_mm_find(current->mm);
	if (cmm && codectl_mm_negative(cmm, pc)) {
		atomic64_inc(&discovery_stats.negative_hits);
		return;
	}
	if (!discovery_worth(pc)) {
		atomic64_inc(&discovery_stats.not_code);
		return;
	}
	s = discovery_slot(codectl_taskslot_lookup(&discovery_slots, current));
	if (!s)
		s = discovery_slot(codectl_taskslot_claim(&discovery_slots,
							  current));
	if (!s) {
		atomic64_inc(&discovery_stats.dropped);
		return;
	}
	old = atomic_long_read(&s->ts.state);
	do {
		n = old & DISCOVERY_COUNT;
		if (old & CODECTL_TASKSLOT_QUEUED)
			atomic64_inc(&discovery_stats.pending_fallbacks);
		/* One look per page of code is enough. */
		for (i = 0; i < n && i < DISCOVERY_PCS; i++)
			if ((READ_ONCE(s->pcs[i]) >> PAGE_SHIFT) ==
			    (pc >> PAGE_SHIFT))
				return;
		if (n >= DISCOVERY_PCS) {
			atomic64_inc(&discovery_stats.dropped);
			return;
		}
	} while (!atomic_long_try_cmpxchg(&s->ts.state, &old,
					  (old + 1) | CODECTL_TASKSLOT_QUEUED));
	WRITE_ONCE(s->pcs[n], pc);
	atomic64_inc(&discovery_stats.requests);
	if (old & CODECTL_TASKSLOT_QUEUED)
		return;

	if (codectl_taskslot_queue(&discovery_slots, &s->ts)) {
		/* Exiting: nothing will run the work; give the slot back. */
		atomic_long_set(&s->ts.state, CODECTL_TASKSLOT_RELEASING);
		codectl_taskslot_free(&s->ts);
	}
}

/* ---- files nothing can be done for ------------------------------------ */

/*
 * Files discovery found neither SFrame nor an import for, or refused for
 * what they contain, keyed by their identity and the import generation.
 * A process without a registry (no registration of any kind) that maps
 * one gets nothing per mm: no registry, so no mmu notifier subscription
 * (taken with mm_take_all_locks(), and whose release waits for an SRCU
 * grace period at every exit), and the next process that meets the file
 * pays a look-up, not a read.  At most MAX_FILE_NEGATIVES, the oldest
 * going first; an import makes them all stale.
 */
#define FILE_NEGATIVE_BITS	8
#define MAX_FILE_NEGATIVES	4096

struct file_negative {
	struct hlist_node node;
	struct list_head lru;
	struct codectl_file_id id;
	unsigned int gen;
};

static DEFINE_HASHTABLE(file_negatives, FILE_NEGATIVE_BITS);
static LIST_HEAD(file_negative_lru);
static DEFINE_SPINLOCK(file_negative_lock);
static unsigned int nr_file_negatives;

static u32 file_negative_hash(const struct codectl_file_id *id)
{
	static u32 seed __read_mostly;

	/* Seeded: a user who picks file identities cannot pick a bucket. */
	get_random_once(&seed, sizeof(seed));
	return jhash(id, sizeof(*id), seed);
}

/* The entry of @id, or NULL.  Under file_negative_lock. */
static struct file_negative *
file_negative_find(const struct codectl_file_id *id)
{
	struct file_negative *f;

	hash_for_each_possible(file_negatives, f, node,
			       file_negative_hash(id))
		if (!memcmp(&f->id, id, sizeof(*id)))
			return f;
	return NULL;
}

static void file_negative_del(struct file_negative *f)
{
	hash_del(&f->node);
	list_del(&f->lru);
	nr_file_negatives--;
	kfree(f);
}

/* Is @file known to get nothing from discovery, as of import @gen? */
static bool file_negative_has(struct file *file, unsigned int gen)
{
	struct file_negative *f;
	struct codectl_file_id id;
	bool has = false;

	codectl_file_id(file_inode(file), &id);
	spin_lock(&file_negative_lock);
	f = file_negative_find(&id);
	if (f && f->gen == gen)
		has = true;
	else if (f)
		file_negative_del(f);	/* an import came since */
	spin_unlock(&file_negative_lock);
	return has;
}

/* Remember that @file got nothing from discovery as of import @gen. */
static void file_negative_add(struct file *file, unsigned int gen)
{
	struct file_negative *n, *f;

	n = kmalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
	if (!n)
		return;
	codectl_file_id(file_inode(file), &n->id);
	n->gen = gen;
	spin_lock(&file_negative_lock);
	f = file_negative_find(&n->id);
	if (f) {
		f->gen = gen;
		list_move_tail(&f->lru, &file_negative_lru);
	} else {
		if (nr_file_negatives >= MAX_FILE_NEGATIVES)
			file_negative_del(list_first_entry(&file_negative_lru,
							   struct file_negative,
							   lru));
		hash_add(file_negatives, &n->node,
			 file_negative_hash(&n->id));
		list_add_tail(&n->lru, &file_negative_lru);
		nr_file_negatives++;
		n = NULL;
	}
	spin_unlock(&file_negative_lock);
	kfree(n);
}

static void file_negative_clear(void)
{
	struct file_negative *f, *t;

	spin_lock(&file_negative_lock);
	list_for_each_entry_safe(f, t, &file_negative_lru, lru)
		file_negative_del(f);
	spin_unlock(&file_negative_lock);
}

/**
 * codectl_discover_forget_files() - forget the files nothing could cover
 *
 * A helper attached to the demand queue (demand.c): files met while
 * none was are examined, and queued, again.
 */
void codectl_discover_forget_files(void)
{
	file_negative_clear();
}

/* Refusals that depend on the file's content alone. */
static bool discovery_reason_of_file(int r)
{
	return r == REFUSED_EHDR || r == REFUSED_PHDRS ||
	       r == REFUSED_NO_LOAD || r == REFUSED_LAYOUT ||
	       r == REFUSED_SFRAME_OUTSIDE ||
	       r == REFUSED_SFRAME_BAD;
}

/* ---- reading the object ---------------------------------------------- */

/* What discovery found out about one object. */
struct discovery_obj {
	struct codectl_objfile of;	/* vm_start, vm_off: the mapping */
	u64 pc;
	u64 vm_end;			/* the mapping holding pc */
	struct codectl_import *imp;	/* the section imported for it */
	struct codectl_reg *stale;	/* its registration, made before an import */
	unsigned int gen;		/* codectl_import_gen at the start */
	char *pathbuf;
	struct list_head later;		/* in a batch's later list */
	bool queued;			/* for the helper, when examined */
	bool queue_took;		/* and the queue took it */
};

/*
 * One task_work's examinations.  Objects without SFrame found while the
 * mm has no registry are queued for the helper at once and wait in
 * @later until the end: registered if by then the mm has a registry (an
 * object of the batch had SFrame), else remembered by their files
 * (file_negative_add()).
 */
struct discovery_batch {
	struct mm_struct *mm;
	struct list_head later;
};

/*
 * No PT_GNU_SFRAME: the section imported for this file and segment, if
 * any (import.c), lying at the bias plus the address it was built for.
 */
static void discovery_import(struct discovery_obj *o)
{
	struct codectl_file_obj obj = {};
	const u8 *sec;
	u64 size, vaddr, start, end;
	u32 hash;

	codectl_file_id(file_inode(o->of.file), &obj.id);
	obj.text_vaddr = o->of.src.text_start - o->of.bias;
	obj.text_end = o->of.src.text_end - o->of.bias;
	obj.build_id_len = o->of.src.build_id_len;
	memcpy(obj.build_id, o->of.build_id, o->of.src.build_id_len);
	o->imp = codectl_import_get(&obj, &sec, &size, &vaddr, &hash);
	if (!o->imp)
		return;
	if (!codectl_import_verify(o->imp, o->of.file) ||
	    check_add_overflow(o->of.bias, vaddr, &start) ||
	    check_add_overflow(start, size, &end) || end > TASK_SIZE_MAX) {
		codectl_import_put(o->imp);
		o->imp = NULL;
		return;
	}
	o->of.src.sframe_start = start;
	o->of.src.sframe_end = end;
	o->of.src.ksframe = sec;
	o->of.src.regtab = codectl_import_regtab(o->imp);
	o->of.src.origin |= CODECTL_ORIGIN_SYNTH;
	/* The sharing key's content part, hashed once at import. */
	o->of.key.size = size;
	o->of.key.content = hash;
}

/* Map a registration error to a reason. */
static int discovery_reason_of(int err)
{
	switch (err) {
	case -ENOEXEC:
		return REFUSED_SFRAME_BAD;
	case -EEXIST:
		return REFUSED_EXISTS;
	case -ENOSPC:
		return REFUSED_LIMIT;
	case -ENOMEM:
		return REFUSED_NOMEM;
	case -EINTR:
		return REFUSED_INTR;
	case -ESTALE:
	case -EFAULT:
		return REFUSED_CHANGED;
	default:
		return REFUSED_OTHER;
	}
}

/*
 * Is there an import for the file of @vma, which @reg covers?  If not,
 * @reg is up to date with imports up to @gen (no need to look again).
 */
static bool discovery_import_for(struct vm_area_struct *vma,
				 struct codectl_reg *reg, unsigned int gen)
{
	struct codectl_file_id id;

	if (vma->vm_file && S_ISREG(file_inode(vma->vm_file)->i_mode)) {
		codectl_file_id(file_inode(vma->vm_file), &id);
		if (codectl_import_has_file(&id))
			return true;
	}
	WRITE_ONCE(reg->import_gen, gen);
	return false;
}

/*
 * Find the mapping at @o->pc and take its file.  Returns 0, a reason, or
 * -1 when there is nothing to examine (no mapping: no entry either).
 */
static int discovery_vma(struct mm_struct *mm, struct discovery_obj *o)
{
	struct vm_area_struct *vma;
	struct codectl_mm *cmm;
	int r = 0;

	if (mmap_read_lock_killable(mm))
		return -1;
	cmm = codectl_mm_find(mm);
	vma = find_vma(mm, o->pc);
	if (!vma || vma->vm_start > o->pc || !(vma->vm_flags & VM_EXEC)) {
		r = -1;
		goto out;
	}
	o->of.vm_start = vma->vm_start;
	o->vm_end = vma->vm_end;
	/* Registered meanwhile (another pc of the object, or the ABI)? */
	if (cmm) {
		struct codectl_reg *reg = codectl_mm_next(cmm, o->pc);
		bool covered = reg && reg->text_start <= o->pc;

		/* Discovered without SFrame, and an import came since? */
		if (covered && codectl_reg_stale(reg) &&
		    discovery_import_for(vma, reg, o->gen)) {
			o->stale = reg;
			covered = false;
		} else if (reg) {
			codectl_reg_put(reg);
		}
		if (covered || codectl_mm_negative(cmm, o->pc)) {
			atomic64_inc(&discovery_stats.covered);
			r = -1;
			goto out;
		}
	}
	if (!vma->vm_file || !S_ISREG(file_inode(vma->vm_file)->i_mode)) {
		r = REFUSED_NOT_FILE;
		goto out;
	}
	o->of.vm_off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	o->of.file = get_file(vma->vm_file);
out:
	mmap_read_unlock(mm);
	/* Without a registry: is the file known to get nothing? */
	if (!r && !cmm && file_negative_has(o->of.file, o->gen)) {
		atomic64_inc(&discovery_stats.file_negative_hits);
		r = -1;
	}
	return r;
}

static int discovery_register(struct discovery_obj *o);

/*
 * Registered without SFrame: queued for the helper (demand.c), which may
 * import a section synthesised from its .eh_frame.  If the queue had no
 * room, the helper hears of the loss and looks at the running processes
 * itself, this one among them.
 */
static void discovery_without_sframe(struct discovery_obj *o)
{
	atomic64_inc(&discovery_stats.without_sframe);
	if (!o->queued)
		codectl_demand_queue(o->of.file, o->of.vm_start, o->vm_end,
				     o->of.vm_off);
}

/*
 * Examine the object at @o->pc of @mm; 0 when registered, DISCOVERY_LATER when
 * it has no SFrame and @mm no registry, else a reason.
 */
static int discovery_examine(struct mm_struct *mm, struct discovery_obj *o)
{
	int r;

	r = codectl_objfile_read_mapped(&o->of);
	if (r)
		return r;
	if (!o->of.src.sframe_start)
		discovery_import(o);
	/* Again after an import: only to replace it with the import's. */
	if (o->stale && !o->imp)
		return REFUSED_EXISTS;
	if (!o->of.src.sframe_start && !codectl_mm_find(mm))
		return DISCOVERY_LATER;
	return discovery_register(o);
}

/* Register the object examined: 0 or a reason. */
static int discovery_register(struct discovery_obj *o)
{
	char *path;
	int r;

	codectl_objfile_share_key(&o->of);

	o->pathbuf = kmalloc(PATH_MAX, GFP_KERNEL_ACCOUNT);
	if (!o->pathbuf)
		return REFUSED_NOMEM;
	path = d_path(&o->of.file->f_path, o->pathbuf, PATH_MAX);
	if (!IS_ERR(path) && strlen(path) < CODECTL_PATH_MAX)
		o->of.src.kpathname = path;
	o->of.src.file = o->of.file;
	o->of.src.origin |= CODECTL_ORIGIN_DISCOVERED;
	o->of.src.import_gen = o->gen;
	r = codectl_register_elf(&o->of.src);
	if (r == -EEXIST) {
		/* Only the explicit registration of another part of it? */
		return REFUSED_EXISTS;
	}
	if (r)
		return discovery_reason_of(r);
	if (o->stale)
		atomic64_inc(&discovery_stats.upgraded);
	if (o->imp) {
		atomic64_inc(&discovery_stats.imported);
		codectl_import_keep_table(o->imp, &o->of.key);
	} else if (o->of.src.sframe_start) {
		atomic64_inc(&discovery_stats.with_sframe);
	} else {
		discovery_without_sframe(o);
	}
	return 0;
}

/* What a refusal leaves behind: a negative entry, per mm or per file. */
static void discovery_refused(struct mm_struct *mm, struct discovery_obj *o,
			      int r)
{
	struct codectl_mm *cmm;

	if (r == REFUSED_NOMEM || r == REFUSED_INTR) {
		/* Transient: the next unwind that meets it asks again. */
		atomic64_inc(&discovery_stats.refused[r]);
		return;
	}
	if (o->stale) {
		/* It keeps its registration; not again until the next import. */
		WRITE_ONCE(o->stale->import_gen, o->gen);
		return;
	}
	atomic64_inc(&discovery_stats.refused[r]);
	cmm = codectl_mm_find(mm);
	if (!cmm) {
		/* No registry is made for a refusal. */
		if (o->of.file && discovery_reason_of_file(r))
			file_negative_add(o->of.file, o->gen);
		return;
	}
	/*
	 * Under the mmap lock, as insertions: an unmap either comes after
	 * the entry (and drops it) or before the check.
	 */
	if (!mmap_read_lock_killable(mm)) {
		struct vm_area_struct *vma = find_vma(mm, o->pc);

		if (vma && vma->vm_start == o->of.vm_start &&
		    vma->vm_end == o->vm_end)
			codectl_mm_add_negative(cmm, o->of.vm_start, o->vm_end);
		mmap_read_unlock(mm);
	}
}

static void discovery_obj_free(struct discovery_obj *o)
{
	if (o->of.file)
		fput(o->of.file);
	codectl_objfile_release(&o->of);
	if (o->imp)
		codectl_import_put(o->imp);
	if (o->stale)
		codectl_reg_put(o->stale);
	kfree(o->pathbuf);
	kfree(o);
}

/* Examine the object at @pc: false when there was nothing to examine. */
static bool discovery_one(struct discovery_batch *b, u64 pc)
{
	struct discovery_obj *o;
	u64 t0 = ktime_get_ns();
	int r;

	o = kzalloc(sizeof(*o), GFP_KERNEL_ACCOUNT);
	if (!o)
		return false;
	o->pc = pc;
	/* Before any look-up: an import after this is seen next time. */
	o->gen = READ_ONCE(codectl_import_gen);
	r = discovery_vma(b->mm, o);
	if (r < 0) {
		discovery_obj_free(o);
		return false;
	}
	atomic64_inc(&discovery_stats.examined);
	if (!r)
		r = discovery_examine(b->mm, o);
	if (r == DISCOVERY_LATER) {
		/*
		 * Queued now, not at the batch's end: the helper imports it
		 * while the sweep examines the other mappings (their files
		 * read; under TCG the daemon began on python3.11 0.11 s after
		 * its first sample).
		 */
		o->queued = true;
		o->queue_took = codectl_demand_queue(o->of.file,
						     o->of.vm_start,
						     o->vm_end, o->of.vm_off);
		list_add_tail(&o->later, &b->later);
		o = NULL;
	} else if (r) {
		discovery_refused(b->mm, o, r);
	}
	atomic64_add(ktime_get_ns() - t0, &discovery_stats.ns);
	if (o)
		discovery_obj_free(o);
	return true;
}

/* Does a registration of @mm cover @pc (the sweep registered it)? */
static bool discovery_covered(struct codectl_mm *cmm, u64 pc)
{
	struct codectl_reg *reg = codectl_mm_next(cmm, pc);
	bool covered = reg && reg->text_start <= pc;

	if (reg)
		codectl_reg_put(reg);
	return covered;
}

/*
 * The batch's objects without SFrame: registered if the mm now has a
 * registry, else remembered by their files.  One the sweep registered
 * meanwhile (it examined the object again once the mm had a registry)
 * is left as it is: a refusal would leave a negative entry over it, and
 * that would keep it from an import forever.
 */
static void discovery_finish(struct discovery_batch *b)
{
	struct codectl_mm *cmm = codectl_mm_find(b->mm);
	struct discovery_obj *o, *t;
	int r;

	list_for_each_entry_safe(o, t, &b->later, later) {
		list_del(&o->later);
		if (!cmm) {
			/* Not remembered when the queue had no room for it. */
			if (o->queue_took)
				file_negative_add(o->of.file, o->gen);
			atomic64_inc(&discovery_stats.unregistered);
		} else if (discovery_covered(cmm, o->pc)) {
			atomic64_inc(&discovery_stats.covered);
		} else {
			r = discovery_register(o);
			if (r)
				discovery_refused(b->mm, o, r);
		}
		discovery_obj_free(o);
	}
}

/* Executable mappings examined per sweep at most. */
#define DISCOVERY_SWEEP	64
/* Mappings the sweep looks at between scheduling points. */
#define DISCOVERY_SWEEP_RESCHED	256

/*
 * After the pcs asked for: every other executable file mapping that no
 * registration covers and no negative entry holds, so that one fallback
 * is enough for the whole stack (its callers' objects are not reached
 * by a walk that could not unwind the first one).
 */
static void discovery_sweep(struct discovery_batch *b)
{
	struct mm_struct *mm = b->mm;
	struct codectl_mm *cmm = codectl_mm_find(mm);
	u64 starts[DISCOVERY_SWEEP];
	struct vm_area_struct *vma;
	unsigned int n = 0, seen = 0, i;

	if (mmap_read_lock_killable(mm))
		return;
	/*
	 * Every mapping (up to vm.max_map_count): a scheduling point every
	 * DISCOVERY_SWEEP_RESCHED.
	 */
	for (vma = find_vma(mm, 0); vma && n < DISCOVERY_SWEEP;
	     vma = find_vma(mm, vma->vm_end)) {
		struct codectl_reg *reg;
		bool covered;

		if (!(++seen % DISCOVERY_SWEEP_RESCHED)) {
			if (fatal_signal_pending(current))
				break;
			cond_resched();
		}
		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		if (cmm) {
			reg = codectl_mm_next(cmm, vma->vm_start);
			covered = reg && reg->text_start < vma->vm_end;
			if (reg)
				codectl_reg_put(reg);
			if (covered || codectl_mm_negative(cmm, vma->vm_start))
				continue;
		}
		starts[n++] = vma->vm_start;
	}
	mmap_read_unlock(mm);
	for (i = 0; i < n && !fatal_signal_pending(current); i++)
		discovery_one(b, starts[i]);
}

/* In the task, on its way back to user space (or at its exit). */
static void discovery_twork(struct callback_head *cb)
{
	struct codectl_twork *w = container_of(cb, struct codectl_twork, cb);
	struct discovery_slot *s = discovery_slot(w->data);
	u64 pcs[DISCOVERY_PCS];
	unsigned long old;
	unsigned int i, n;

	/* Orphaned at unload (freed): touch nothing. */
	if (!codectl_twork_start(w))
		return;
	old = atomic_long_xchg(&s->ts.state, CODECTL_TASKSLOT_RELEASING);
	n = min_t(unsigned long, old & DISCOVERY_COUNT, DISCOVERY_PCS);
	for (i = 0; i < n; i++)
		pcs[i] = READ_ONCE(s->pcs[i]);
	codectl_taskslot_free(&s->ts);

	/* Also run from do_exit() after exit_mm(): then there is no mm. */
	if (current->mm && !(current->flags & PF_EXITING) &&
	    !fatal_signal_pending(current)) {
		struct discovery_batch b = { .mm = current->mm };
		sigset_t old_mask;
		bool any = false;

		INIT_LIST_HEAD(&b.later);
		/* See codectl_signals_hold(): never SIGKILL nor SIGSTOP. */
		codectl_signals_hold(&old_mask);
		for (i = 0; i < n && !fatal_signal_pending(current); i++)
			any |= discovery_one(&b, pcs[i]);
		/* Not for pcs outside any executable mapping (garbage frames). */
		if (any)
			discovery_sweep(&b);
		discovery_finish(&b);
		codectl_signals_restore(&old_mask);
	}
	/* The last statement: module exit waits for this count. */
	atomic_long_dec(&codectl_stats.discover_works);
}

/* ---- debugfs, init, exit ---------------------------------------------- */

/**
 * codectl_discover_show() - debugfs codectl/discover
 * @m:		the seq_file
 * @v:		unused
 *
 * Return: 0.
 */
int codectl_discover_show(struct seq_file *m, void *v)
{
	static const struct {
		const char *name;
		atomic64_t *v;
	} counters[] = {
#define DISCOVERY_COUNTER(f) { #f, &discovery_stats.f }
		DISCOVERY_COUNTER(requests), DISCOVERY_COUNTER(pending_fallbacks),
		DISCOVERY_COUNTER(negative_hits),
		DISCOVERY_COUNTER(file_negative_hits), DISCOVERY_COUNTER(dropped),
		DISCOVERY_COUNTER(not_code), DISCOVERY_COUNTER(examined),
		DISCOVERY_COUNTER(with_sframe), DISCOVERY_COUNTER(imported),
		DISCOVERY_COUNTER(upgraded), DISCOVERY_COUNTER(without_sframe),
		DISCOVERY_COUNTER(unregistered), DISCOVERY_COUNTER(covered),
#undef DISCOVERY_COUNTER
	};
	static const struct codectl_counter shared[] = {
		{ "shared_tables", &codectl_stats.shared_tables },
		{ "shared_bytes", &codectl_stats.shared_bytes },
		{ "shared_hits", &codectl_stats.shared_hits },
	};
	unsigned int i;

	seq_printf(m, "discover %d\n", READ_ONCE(codectl_discover));
	for (i = 0; i < ARRAY_SIZE(counters); i++)
		seq_printf(m, "%s %lld\n", counters[i].name,
			   atomic64_read(counters[i].v));
	for (i = REFUSED_NOT_FILE; i < NR_REFUSALS; i++)
		seq_printf(m, "refused_%s %lld\n", discovery_refusal_names[i],
			   atomic64_read(&discovery_stats.refused[i]));
	seq_printf(m, "negatives %ld\n",
		   atomic_long_read(&codectl_stats.negatives));
	seq_printf(m, "file_negatives %u\n", READ_ONCE(nr_file_negatives));
	seq_printf(m, "pending %ld\n",
		   atomic_long_read(&codectl_stats.discover_works));
	seq_printf(m, "ns %lld\n", atomic64_read(&discovery_stats.ns));
	codectl_show_counters(m, shared, ARRAY_SIZE(shared));
	return 0;
}

/**
 * codectl_discover_init() - allocate the request slots
 *
 * Return: 0 or -ENOMEM.
 */
int codectl_discover_init(void)
{
	discovery_stopping = false;
	return codectl_taskslot_pool_init(&discovery_slots, discovery_twork);
}

/**
 * codectl_discover_exit() - stop requests, leave the queued discoveries
 *
 * Callers of codectl_discover_request() (the unwinder) are gone or going:
 * the flag stops the rest.  Queued discoveries are left to their tasks,
 * the running ones waited for (codectl_taskslot_pool_drain()).
 */
void codectl_discover_exit(void)
{
	WRITE_ONCE(discovery_stopping, true);
	/* Requests in flight have seen the flag or queued their work. */
	synchronize_rcu();
	codectl_taskslot_pool_drain(&discovery_slots);
	codectl_taskslot_pool_free(&discovery_slots);
	file_negative_clear();
}
