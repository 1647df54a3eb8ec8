/* SPDX-License-Identifier: GPL-2.0 */
/*
 * codectl module internals shared between its source files.
 */
#ifndef CODECTL_INTERNAL_H
#define CODECTL_INTERNAL_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/elf.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/signal_types.h>
#include <linux/sizes.h>
#include <linux/task_work.h>
#include <linux/types.h>

struct file;
struct irq_work;
struct pt_regs;
struct inode;
struct codectl_shared_flat;
struct dentry;
struct seq_file;
struct poll_table_struct;
struct sframe_flat;
struct sframe_sec;

#include <linux/codectl.h>

/**
 * struct codectl_reg - one registered code range of an address space
 * @ref:	one per array holding it, one per reader using it
 * @charge:	bytes counted against the mm's max_bytes (0 until inserted)
 * @kind:	CODECTL_KIND_ELF or CODECTL_KIND_JIT
 * @origin:	CODECTL_ORIGIN_* bits: who registered it, and SYNTH when its
 *		SFrame section was a buffer copied at registration (its
 *		range is then neither checked mapped nor followed by munmap)
 * @build_id_len: bytes in @build_id
 * @debug_link_crc: CRC32 of the debug link file
 * @text_start:	start of the code, also the tree key
 * @text_end:	end of the code
 * @elf_start:	ELF mapping span, or 0
 * @elf_end:	ELF mapping span, or 0
 * @sframe_start: SFrame section in user memory, or 0
 * @sframe_end:	end of it, or 0
 * @unwind_head: first JIT table in user memory (JIT only)
 * @table_end:	end of that table's reserved area (JIT only)
 * @sframe_flat: the SFrame section's flat lookup table, built at
 *		registration from a checked copy, or NULL (then the unwinder
 *		decodes the section in user memory)
 * @sframe_sec:	without a flat table: the section set up for decoding in
 *		user memory, with its FDE index when one fitted, or NULL (then
 *		each walk sets it up)
 * @shared:	the holder of @sframe_flat's arrays when they are shared
 *		with other address spaces (share.c), or NULL
 * @xreg_flat:	the flat table of the register table imported with the
 *		section (its own header, @regtab's arrays), or NULL
 * @regtab:	that register table (regtab.c), a reference, or NULL
 * @sframe_mem: bytes the flat table or the set-up section holds
 * @sframe_version: the SFrame header's version, 0 without SFrame
 * @num_fdes:	FDEs the header declares
 * @num_fres:	FREs the header declares
 * @coverage:	bytes of the text inside the FDEs' functions (QUERY's
 *		coverage), counted at registration
 * @pathname:	kmalloc'ed NUL-terminated string, or NULL
 * @debug_link:	kmalloc'ed NUL-terminated string, or NULL
 * @build_id:	the build id bytes
 * @import_gen:	discovered without SFrame: codectl_import_gen when the
 *		object was examined (a later import may have its section);
 *		the one field that changes after insertion (a hint, read and
 *		written with READ_ONCE/WRITE_ONCE, see codectl_reg_stale())
 *
 * Everything but @ref and @import_gen is written before the registration
 * is inserted and never changes after, so registration arrays share it
 * and holders of a reference read it without a lock.
 */
struct codectl_reg {
	refcount_t ref;
	u32 kind;
	u32 origin;
	u32 build_id_len;
	u32 debug_link_crc;
	u64 text_start;
	u64 text_end;
	u64 elf_start;
	u64 elf_end;
	u64 sframe_start;
	u64 sframe_end;
	u64 unwind_head;
	u64 table_end;
	struct sframe_flat *sframe_flat;
	struct sframe_sec *sframe_sec;
	struct codectl_shared_flat *shared;
	struct sframe_flat *xreg_flat;
	struct codectl_regtab *regtab;
	u64 charge;
	u64 sframe_mem;
	u32 sframe_version;
	u32 num_fdes;
	u32 num_fres;
	u64 coverage;
	char *pathname;
	char *debug_link;
	u8 build_id[CODECTL_BUILD_ID_MAX];
	u32 import_gen;
};

/* import.c: bumped by every import; see codectl_reg_stale(). */
extern unsigned int codectl_import_gen;

/**
 * codectl_reg_stale() - may an import have come for this registration?
 * @reg:	a registration
 *
 * True for a discovered registration without SFrame made before the
 * latest import: the unwinder then asks discovery to look at the object
 * again.  Any context.
 */
static inline bool codectl_reg_stale(const struct codectl_reg *reg)
{
	return (reg->origin & CODECTL_ORIGIN_DISCOVERED) &&
	       !reg->sframe_start &&
	       READ_ONCE(reg->import_gen) != READ_ONCE(codectl_import_gen);
}

/**
 * struct codectl_set - the registrations of an address space at one moment
 * @ref:	the registry publishing it, fork snapshots, each one
 * @rcu:	frees it after the last reference
 * @nr:		number of registrations
 * @bytes:	sum of their charges
 * @regs:	the registrations, sorted by text range, disjoint
 *
 * Immutable once published: writers publish a new array.
 */
struct codectl_set {
	refcount_t ref;
	struct rcu_head rcu;
	unsigned int nr;
	size_t bytes;
	struct codectl_reg *regs[];
};

/**
 * struct codectl_mm - the registry of one address space
 * @mn:		our mmu_notifier_get() subscription on the mm; its
 *		->release empties the registry when the mm goes away and its
 *		->invalidate_range_start drops unmapped registrations
 * @hnode:	in the global table (RCU), keyed by the mm pointer; hashed
 *		while the table owns the subscription reference
 * @rcu:	frees it after lock-free lookups are done with it
 * @lock:	serialises writers of @set and @negs
 * @set:	the current registrations (RCU), NULL when there are none
 * @negs:	discovery's negative entries (RCU), or NULL
 * @put_node:	in the list of subscriptions to put, once released
 */
struct codectl_mm {
	struct mmu_notifier mn;
	struct hlist_node hnode;
	struct rcu_head rcu;
	struct mutex lock;		/* serialises writers of set, negs */
	struct codectl_set __rcu *set;
	struct codectl_negs __rcu *negs;
	struct llist_node put_node;	/* released, its put to come */
};

/* Negative entries per address space at most; the oldest goes first. */
#define CODECTL_MAX_NEGS	64

/**
 * struct codectl_negs - executable mappings discovery examined in vain
 * @rcu:	frees it after lock-free lookups
 * @nr:		entries
 * @r:		their address ranges (the mapping's [vm_start, vm_end)),
 *		oldest first; an unmap over one drops it
 *
 * Immutable once published, like struct codectl_set.
 */
struct codectl_negs {
	struct rcu_head rcu;
	unsigned int nr;
	struct {
		u64 start;
		u64 end;
	} r[];
};

/* Global live-object counters, shown in debugfs codectl/stats. */
struct codectl_stats {
	atomic_long_t mms;		/* address spaces with a registry */
	atomic_long_t mm_objects;	/* registries not yet freed */
	atomic_long_t registrations;	/* registration objects */
	atomic_long_t bytes;		/* charged by inserted registrations */
	atomic_long_t sets;		/* registration arrays */
	atomic_long_t works;		/* fork copies queued, not yet run */
	atomic_long_t fork_failures;	/* children that got no copy */
	atomic_long_t unmap_drops;	/* unmaps that dropped registrations */
	atomic_long_t unmap_nomem;	/* ... all of them, for want of memory */
	atomic_long_t unwind_tasks;	/* per-task deferred-unwind states */
	atomic_long_t unwind_works;	/* deferred unwinds queued, not yet run */
	atomic_long_t negatives;	/* discovery's negative entries */
	atomic_long_t shared_tables;	/* flat tables shared across mms */
	atomic_long_t shared_bytes;	/* memory they hold */
	atomic_long_t shared_hits;	/* event, debugfs discover: reuses */
	atomic_long_t discover_works;	/* discoveries queued, not yet run */
};

extern struct codectl_stats codectl_stats;

/* A line "name value" of a debugfs file. */
struct codectl_counter {
	const char *name;
	atomic_long_t *val;
};

/* stats.c */
void codectl_show_counters(struct seq_file *m,
			   const struct codectl_counter *rows, unsigned int n);
void codectl_stats_debugfs(struct dentry *dir);

/* Module parameters (main.c). */
extern unsigned int codectl_max_registrations;
extern unsigned long codectl_max_bytes;
extern bool codectl_validate_sframe;
extern unsigned long codectl_sframe_flat_max;

/* registry.c */
struct codectl_mm *codectl_mm_find(struct mm_struct *mm);
struct codectl_mm *codectl_mm_get_or_create(struct mm_struct *mm);
struct codectl_reg *codectl_reg_alloc(u32 kind);
int codectl_mm_insert(struct codectl_mm *cmm, struct codectl_reg *reg);
int codectl_mm_remove(struct codectl_mm *cmm, u64 text_start, u64 text_end);
struct codectl_reg *codectl_mm_next(struct codectl_mm *cmm, u64 addr);
void codectl_mm_usage(struct codectl_mm *cmm, unsigned int *nr,
		      size_t *bytes);
void codectl_reg_put(struct codectl_reg *reg);
void codectl_reg_drop_sframe_tables(struct codectl_reg *reg);
void codectl_set_put(struct codectl_set *set);
bool codectl_reg_mapped(struct mm_struct *mm, const struct codectl_reg *reg);
struct codectl_set *codectl_mm_snapshot(struct mm_struct *mm);
struct codectl_set *codectl_mm_set_rcu(struct mm_struct *mm);
struct codectl_reg *codectl_set_find(const struct codectl_set *set, u64 addr);
bool codectl_mm_negative(struct codectl_mm *cmm, u64 addr);
int codectl_mm_add_negative(struct codectl_mm *cmm, u64 start, u64 end);
int codectl_mm_adopt(struct mm_struct *mm, struct codectl_set *set);
void codectl_registry_exit(void);

/**
 * struct codectl_twork - a task_work that module unload need not wait for
 * @cb:		the callback_head, first: an orphaned work is kfree()d
 *		through it (twork.c)
 * @state:	0, QUEUED or ORPHAN (twork.c)
 * @data:	its owner's, for the callback
 */
struct codectl_twork {
	struct callback_head cb;
	atomic_t state;
	void *data;
};

/* twork.c */
void codectl_twork_init(struct codectl_twork *w, task_work_func_t fn);
void codectl_twork_queued(struct codectl_twork *w);
void codectl_twork_unqueued(struct codectl_twork *w);
bool codectl_twork_start(struct codectl_twork *w);
bool codectl_twork_orphan(struct codectl_twork *w);

/* taskslot.c: pools of per-task slots with their task_works */
#define CODECTL_TASKSLOT_QUEUED		BIT(BITS_PER_LONG - 2)
#define CODECTL_TASKSLOT_RELEASING	BIT(BITS_PER_LONG - 1)

/**
 * struct codectl_taskslot - the head of a per-task slot
 * @owner:	the task, or NULL when free (cmpxchg)
 * @state:	the user's bits, CODECTL_TASKSLOT_QUEUED and _RELEASING
 * @twork:	the slot's task_work; NULL once orphaned at unload
 */
struct codectl_taskslot {
	struct task_struct *owner;
	atomic_long_t state;
	struct codectl_twork *twork;
};

/**
 * struct codectl_taskslot_pool - slots of @size bytes, head first
 * @slots:	BIT(@bits) slots, NULL until codectl_taskslot_pool_init()
 * @size:	bytes of a slot: a structure starting with its
 *		struct codectl_taskslot
 * @bits:	log2 of the number of slots
 * @probe:	slots a task's lookups and claims look at
 * @works:	the counter of task_works queued or running
 * @what:	what the works are, in unload's messages
 * @kick:	per-CPU no-op irq_works before TWA_NMI_CURRENT, else NULL
 */
struct codectl_taskslot_pool {
	void *slots;
	size_t size;
	unsigned int bits;
	unsigned int probe;
	atomic_long_t *works;
	const char *what;
	struct irq_work __percpu *kick;
};

/*
 * A pool of BIT(@bits) slots of type @slot, @probe of them looked at per
 * task, counting its task_works in @works (an initialiser).
 */
#define CODECTL_TASKSLOT_POOL(slot, nbits, window, counter, name) {	\
	.size = sizeof(slot), .bits = (nbits), .probe = (window),	\
	.works = (counter), .what = (name),				\
}

static inline struct codectl_taskslot *
codectl_taskslot_at(struct codectl_taskslot_pool *pool, unsigned int i)
{
	return pool->slots + i * pool->size;
}

struct codectl_taskslot *
codectl_taskslot_lookup(struct codectl_taskslot_pool *pool,
			struct task_struct *t);
struct codectl_taskslot *
codectl_taskslot_claim(struct codectl_taskslot_pool *pool,
		       struct task_struct *t);
void codectl_taskslot_free(struct codectl_taskslot *s);
int codectl_taskslot_queue(struct codectl_taskslot_pool *pool,
			   struct codectl_taskslot *s);
int codectl_taskslot_pool_init(struct codectl_taskslot_pool *pool,
			       task_work_func_t fn);
void codectl_taskslot_pool_drain(struct codectl_taskslot_pool *pool);
void codectl_taskslot_pool_free(struct codectl_taskslot_pool *pool);

/* fork.c */
int codectl_fork_init(void);
void codectl_fork_exit(void);
void codectl_signals_hold(sigset_t *old);
void codectl_signals_restore(const sigset_t *old);

/**
 * struct codectl_file_id - which file, as discovery and imports key it
 * @ino:	its inode number
 * @dev:	its device
 * @gen:	its inode generation
 * @size:	its size
 * @mtime_sec:	its mtime (a write changes it)
 * @mtime_nsec:	nanoseconds of it
 * @__pad:	0
 *
 * What identifies the content, not the ctime: a hard link, chmod, chown
 * or touch -a moves the ctime (perf's build-id cache links every object
 * it samples) and leaves the content as it was.  Imports, which outlive
 * any process, also keep the ctime they were made at and check the
 * content again when only that moved (codectl_import_verify()).
 *
 * Compared with memcmp(): zero it before filling it (codectl_file_id()).
 */
struct codectl_file_id {
	u64 ino;
	u32 dev;
	u32 gen;
	s64 size;
	s64 mtime_sec;
	u32 mtime_nsec;
	u32 __pad;
};

/**
 * struct codectl_file_obj - an object file's executable segment
 * @id:		the file
 * @text_vaddr:	link-time start of the segment (p_vaddr)
 * @text_end:	link-time end of it
 * @build_id_len: bytes of @build_id (0: none)
 * @__pad:	0
 * @build_id:	the GNU build id
 *
 * The key of an import (import.c).  Compared with memcmp(): zero it.
 */
struct codectl_file_obj {
	struct codectl_file_id id;
	u64 text_vaddr;
	u64 text_end;
	u32 build_id_len;
	u32 __pad;
	u8 build_id[CODECTL_BUILD_ID_MAX];
};

/**
 * struct codectl_file_elf - what codectl_objfile_describe() read of a file
 * @obj:	its first executable segment, identity and build id
 * @load_end:	link-time end of its highest PT_LOAD
 * @has_sframe:	it has a PT_GNU_SFRAME segment
 */
struct codectl_file_elf {
	struct codectl_file_obj obj;
	u64 load_end;
	bool has_sframe;
};

/**
 * struct codectl_share_key - what a shared table was built from
 * @id:		the file
 * @build_id_len: bytes of @build_id
 * @__pad:	0
 * @sframe_off:	the section's file offset (0 for an imported section)
 * @size:	its size
 * @text_off:	text start minus section start (bias-independent)
 * @text_len:	text size
 * @content:	hash of the section's bytes as read (codectl_share_content();
 *		registration hashes the section unless @size
 *		is already its size: an import's was hashed once)
 * @kernel:	1 for a kernel copy of a synthesised section larger than
 *		sframe_flat_max (register.c), 0 for a flat table: the two
 *		never stand for each other
 * @build_id:	the build id
 *
 * Compared with memcmp(): zero it before filling it.
 */
struct codectl_share_key {
	struct codectl_file_id id;
	u32 build_id_len;
	u32 __pad;
	u64 sframe_off;
	u64 size;
	s64 text_off;
	u64 text_len;
	u32 content;
	u32 kernel;
	u8 build_id[CODECTL_BUILD_ID_MAX];
};

/**
 * struct codectl_elf_src - an ELF object to register, whoever found it
 * @elf_start:	span of its mappings, or 0 (see struct codectl_elf_info)
 * @elf_end:	end of it, or 0
 * @text_start:	its code
 * @text_end:	end of it
 * @sframe_start: its SFrame section in the caller's memory, or 0
 * @sframe_end:	end of it, or 0
 * @upathname:	user pointer to the pathname, or 0 (when @kpathname is NULL)
 * @udebug_link: user pointer to the debug link name, or 0 (ditto)
 * @ubuild_id:	user pointer to @build_id_len bytes (when @kbuild_id is NULL)
 * @kpathname:	kernel string, used instead of @upathname when not NULL
 * @kdebug_link: kernel string, used instead of @udebug_link when not NULL
 * @kbuild_id:	kernel bytes, used instead of @ubuild_id when not NULL
 * @ksframe:	a kernel copy of the SFrame section (e.g. read from the
 *		file), used instead of reading it from user memory, or NULL
 * @regtab:	the register table imported with it (regtab.c), or NULL:
 *		the registration takes a reference
 * @build_id_len: bytes of the build id (0: none)
 * @debug_link_crc: CRC32 of the debug link file
 * @share:	when not NULL (discovery, with @ksframe), the flat table
 *		may be shared with other address spaces under this key,
 *		whose content field register.c fills in
 * @file:	when not NULL, the code and SFrame ranges must be mapped
 *		from this file (discovery: the mappings it examined must not
 *		have been replaced meanwhile)
 * @origin:	CODECTL_ORIGIN_* bits: REGISTERED (the ABI) or DISCOVERED,
 *		SYNTH when the section is a synthesised buffer anywhere in
 *		the caller's memory, copied into a flat table at once
 * @import_gen:	discovery: codectl_import_gen before the object was examined
 */
struct codectl_elf_src {
	u64 elf_start;
	u64 elf_end;
	u64 text_start;
	u64 text_end;
	u64 sframe_start;
	u64 sframe_end;
	u64 upathname;
	u64 udebug_link;
	u64 ubuild_id;
	const char *kpathname;
	const char *kdebug_link;
	const u8 *kbuild_id;
	const u8 *ksframe;
	struct codectl_regtab *regtab;
	struct codectl_share_key *share;
	struct file *file;
	u32 build_id_len;
	u32 debug_link_crc;
	u32 origin;
	u32 import_gen;
};

/*
 * Why discovery did not register an object (debugfs codectl/discover);
 * reading the object file (objfile.c) returns the first ones.
 */
enum codectl_discovery_refusal {
	REFUSED_NOT_FILE = 1,	/* anonymous, special or not a regular file */
	REFUSED_WRITABLE,	/* the file is open for writing */
	REFUSED_READ,		/* I/O error or truncated file */
	REFUSED_EHDR,		/* not a 64-bit ELF object of this machine */
	REFUSED_PHDRS,		/* program headers out of bounds or too many */
	REFUSED_NO_LOAD,	/* the mapping is no executable PT_LOAD */
	REFUSED_LAYOUT,		/* segments and mappings disagree */
	REFUSED_SFRAME_OUTSIDE,	/* PT_GNU_SFRAME outside the file's PT_LOADs */
	REFUSED_CHANGED,	/* the file or mapping changed meanwhile */
	REFUSED_SFRAME_BAD,	/* the SFrame section is refused (ENOEXEC) */
	REFUSED_EXISTS,		/* overlaps an explicit registration */
	REFUSED_LIMIT,		/* max_registrations or max_bytes */
	REFUSED_NOMEM,		/* out of memory (no negative entry) */
	REFUSED_INTR,		/* interrupted (no negative entry) */
	REFUSED_OTHER,		/* any other error */
	NR_REFUSALS,
	DISCOVERY_LATER = NR_REFUSALS, /* no SFrame, no registry: see batch */
};

/**
 * struct codectl_objfile - an ELF object file, as read from the file
 * @file:	the file (its reference is the caller's)
 * @size:	its size when the reading started
 * @vm_start:	where the mapping read for starts
 * @vm_off:	the mapping's file offset
 * @eh:		the ELF header
 * @ph:		the program headers (kmalloc)
 * @bias:	load bias of the mapping
 * @src:	what a registration of it needs: ranges, build id, debug
 *		link, the section read from the file
 * @build_id:	the bytes of @src.kbuild_id
 * @key:	the sharing key @src.share points at
 * @debug_link:	the string of @src.kdebug_link (kmalloc)
 * @sframe:	the bytes of @src.ksframe when read from the file (kvmalloc)
 */
struct codectl_objfile {
	struct file *file;
	loff_t size;
	u64 vm_start;
	u64 vm_off;
	struct elf64_hdr eh;
	struct elf64_phdr *ph;
	u64 bias;
	struct codectl_elf_src src;
	u8 build_id[CODECTL_BUILD_ID_MAX];
	struct codectl_share_key key;
	char *debug_link;
	u8 *sframe;
};

/*
 * Bounds of what one unwind does in user memory, whatever the registered
 * tables say (codectl(4), BOUNDS):
 * CODECTL_SFRAME_MAX_FRES	FREs of one SFrame function: registration
 *				refuses a section with a function that has
 *				more (ENOEXEC, CODECTL_SFRAME_E_FDE_FRES); an
 *				in-place lookup scans no more
 * CODECTL_JIT_MAX_TABLES	JIT tables in a chain: registration refuses
 *				a longer chain (ELOOP); a lookup follows no
 *				more (CODECTL_STOP_TABLE)
 * CODECTL_JIT_MAX_RESERVED	bytes of entries of one JIT table (EINVAL)
 * CODECTL_WALK_BUDGET		units of work per walk in user memory: one
 *				per read of a section or table, per FDE
 *				probed, per FRE scanned, per JIT table or
 *				entry read; past it the walk ends with
 *				CODECTL_STOP_BUDGET
 */
#define CODECTL_SFRAME_MAX_FRES		4096
#define CODECTL_JIT_MAX_TABLES		64
#define CODECTL_JIT_MAX_RESERVED	SZ_1G
#define CODECTL_WALK_BUDGET		32768

/* register.c: the registration pipeline of every source */
int codectl_register_elf(const struct codectl_elf_src *src);
int codectl_register_jit(u64 text_start, u64 text_end, u64 unwind_head);
/*
 * SFrame sections are "checked": codectl_sframe_check_user() in the
 * caller's memory, codectl_sframe_check_copy() a kernel copy (register.c
 * has _check_sec(), a section set up).  A check's result is the
 * decoder's verdict (enum sframe_err; CODECTL_CHECK_SFRAME's "error"); the
 * version, counts and coverage QUERY reports are the section's summary.
 */
int codectl_sframe_check_user(u64 start, u64 end, u64 text_start,
			      u64 text_end, bool full,
			      struct codectl_sframe_check *check);
bool codectl_jit_table_ok(const struct codectl_jit_unwind_table *tab);
int codectl_sframe_check_copy(const u8 *mem, u64 addr, u64 size,
			      u64 text_start, u64 text_end);
int codectl_flat_of_copy(const u8 *mem, u64 addr, u64 size, u64 text_start,
			 u64 text_end, struct sframe_flat *flat, u64 *bytes);
void codectl_flat_free_arrays(struct sframe_flat *flat);

/* regtab.c: register tables, imported with a section */
struct codectl_regtab;
int codectl_regtab_build(const u8 *mem, u64 addr, u64 size, u64 text_start,
			 u64 text_end, struct codectl_regtab **out);
u64 codectl_regtab_bytes(const struct codectl_regtab *t);
int codectl_regtab_attach(struct codectl_reg *reg, struct codectl_regtab *t);
void codectl_regtab_put(struct codectl_regtab *t);

/* share.c */
u32 codectl_share_content(const u8 *mem, u64 size);
void codectl_share_key_content(struct codectl_share_key *k, const u8 *mem,
			       u64 size);
struct codectl_shared_flat *codectl_share_get(const struct codectl_share_key *k);
u64 codectl_share_bytes(const struct codectl_shared_flat *sh);
bool codectl_share_attach(struct codectl_reg *reg,
			  const struct codectl_share_key *k);
void codectl_share_publish(struct codectl_reg *reg,
			   const struct codectl_share_key *k);
void codectl_share_put(struct codectl_shared_flat *sh);

/* ioctl.c */
long codectl_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* query.c: CODECTL_QUERY, of the caller's or another process's registry */
int codectl_query_reg(struct codectl_query_info *q);

/**
 * struct codectl_trace - a trace being unwound into caller-owned arrays
 * @ips:	@max pcs
 * @methods:	@max CODECTL_FRAME_* bytes
 * @max:	capacity of both, at least 1
 * @nr:		out: frames found
 * @stop:	out: CODECTL_STOP_* reason
 */
struct codectl_trace {
	u64 *ips;
	u8 *methods;
	unsigned int max;
	unsigned int nr;
	unsigned int stop;
};

#include "walk.h"

/*
 * Module-wide counters of the ioctl and deferred unwinds
 * (CODECTL_IOC_UNWIND_STATS, debugfs codectl/unwind); the hooks count
 * their own (hooks.c).
 */
struct codectl_unwind_counters {
	struct codectl_walk_counters walk;
	atomic64_t requests;
	atomic64_t callbacks;
};

extern struct codectl_unwind_counters codectl_unwind_counters;
extern unsigned int codectl_max_frames;

/* copyout.c */
int codectl_copy_out(void __user *udst, size_t usize, const void *src,
		     size_t ksize);

/* unwind.c */
void codectl_unwind_current(struct codectl_trace *t, unsigned int flags);
long codectl_unwind_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg);
long codectl_unwind_stats_ioctl(void __user *ustats, size_t usize);
int codectl_unwind_show(struct seq_file *m, void *v);
extern const char * const codectl_frame_names[8];
extern const char * const codectl_stop_names[16];

/* pgtable.c */
#define CODECTL_PAGE_EXEC	0x1	/* present, user, executable */
#define CODECTL_PAGE_ANON	0x2	/* and anonymous memory */
unsigned int codectl_user_page(struct mm_struct *mm, unsigned long addr);

/* discover.c */
extern bool codectl_discover;
void codectl_discover_request(u64 pc);
int codectl_discover_init(void);
void codectl_discover_exit(void);
int codectl_discover_show(struct seq_file *m, void *v);
void codectl_discover_forget_files(void);

/* demand.c: the demand queue */
struct poll_table_struct;
bool codectl_demand_queue(struct file *file, u64 vm_start, u64 vm_end,
			  u64 vm_off);
long codectl_demand_attach(struct file *file);
void codectl_demand_release(struct file *file);
ssize_t codectl_demand_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos);
__poll_t codectl_demand_poll(struct file *file,
			     struct poll_table_struct *wait);
int codectl_demand_show(struct seq_file *m, void *v);

/* objfile.c */
int codectl_objfile_read_mapped(struct codectl_objfile *o);
void codectl_objfile_share_key(struct codectl_objfile *o);
void codectl_objfile_release(struct codectl_objfile *o);
int codectl_objfile_describe(struct file *file, struct codectl_file_elf *elf);
struct inode *codectl_file_inode(const struct file *file);
void codectl_file_id(const struct inode *inode, struct codectl_file_id *id);
int codectl_file_hash(struct file *file, u64 *hash);

/* import-budget.c: whom an import is charged to, and whether it fits */
#define CODECTL_OWNER_SYSTEM	U64_MAX		/* root's, root alone writes */
#define CODECTL_OWNER_SHARED	(U64_MAX - 1)	/* root's, others write */

/**
 * struct codectl_charge - an import's charge
 * @lru:	in the budget's list, least recently used first
 * @owner:	codectl_owner_of() its file
 * @bytes:	its size
 */
struct codectl_charge {
	struct list_head lru;
	u64 owner;
	u64 bytes;
};

/**
 * struct codectl_shortfall - bytes over each bound (<= 0: within it)
 * @owner:	whose import is to fit
 * @total:	over import_max_bytes
 * @users:	over half of it, for those not the system's
 * @own:	over import_user_max_bytes, for @owner's
 */
struct codectl_shortfall {
	u64 owner;
	s64 total;
	s64 users;
	s64 own;
};

u64 codectl_owner_of(const struct inode *inode);
struct list_head *codectl_budget_lru(void);
void codectl_budget_charge(struct codectl_charge *c);
void codectl_budget_uncharge(struct codectl_charge *c);
void codectl_budget_touch(struct codectl_charge *c);
void codectl_budget_shortfall(const struct codectl_charge *c,
			      struct codectl_shortfall *s);
bool codectl_budget_helps(struct codectl_shortfall *s,
			  const struct codectl_charge *c, bool take);
int codectl_budget_verdict(const struct codectl_shortfall *s);
u64 codectl_budget_max(void);
void codectl_budget_show(struct seq_file *m);

/* import.c */
struct codectl_import;
struct codectl_import *codectl_import_get(const struct codectl_file_obj *obj,
					  const u8 **sec, u64 *size,
					  u64 *vaddr, u32 *sec_hash);
void codectl_import_put(struct codectl_import *imp);
struct codectl_regtab *codectl_import_regtab(const struct codectl_import *imp);
bool codectl_import_verify(struct codectl_import *imp, struct file *file);
void codectl_import_keep_table(struct codectl_import *imp,
			       const struct codectl_share_key *k);
bool codectl_import_has_file(const struct codectl_file_id *id);
long codectl_import_ioctl(const void __user *uinfo, size_t usize);
int codectl_imports_show(struct seq_file *m, void *v);
void codectl_import_exit(void);

/* deferred.c */
int codectl_deferred_init(void);
void codectl_deferred_exit(void);
void codectl_deferred_flush(void);

/* mapped.c: discovery when executable code is mapped */
void codectl_mapped_init(void);
void codectl_mapped_exit(void);
int codectl_mapped_show(struct seq_file *m, void *v);

/* hooks.c: the tracer hooks */
void codectl_hooks_init(void);
void codectl_hooks_exit(void);
long codectl_hooks_ioctl(struct codectl_hook_stats __user *uargs,
			 size_t usize);
#define CODECTL_HOOKS_ST_MAX	128
unsigned int codectl_hooks_selftest_walk(struct pt_regs *regs, u64 *buf,
					 bool perf);
int codectl_hooks_show(struct seq_file *m, void *v);

/*
 * What the test module (tests/vm/testmod, codectl_test.ko) uses, exported
 * in the symbol namespace CODECTL_TEST, and nothing more: the tracer
 * hooks' walk on given registers (the self-test's NMIs), the deferred
 * unwinder's flush (its STOP), and CODECTL_IOC_UNWIND with
 * CODECTL_UNWIND_NOFAULT (the hooks' walk in the caller's context), which
 * the product's ioctl refuses.
 */
#define CODECTL_UNWIND_NOFAULT		0x8
long codectl_test_unwind(void __user *uargs, size_t usize);

#endif /* CODECTL_INTERNAL_H */
