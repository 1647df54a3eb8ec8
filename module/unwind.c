// SPDX-License-Identifier: GPL-2.0
/*
 * codectl: the user-space stack unwinder.
 *
 * Runs in the context of the task whose stack it walks (a task_work on the
 * way back to user space, or the task's own ioctl), so it reads user
 * memory with the ordinary faulting accessors.  Each step finds the
 * caller's frame from the callee's:
 *
 *  1. the signal trampoline (a handler's sa_restorer, checked by its
 *     code), whose frame holds the interrupted registers;
 *  2. else the registration covering the pc, from one snapshot of the
 *     address space's registrations taken for the whole walk, and its
 *     SFrame section (the flat lookup table built at registration, else
 *     decoded in place in user memory by sframe.c, which re-checks every
 *     byte it reads; a v3 signal FDE is a signal frame too), or its JIT
 *     tables;
 *  3. else frame pointers, with the function-entry cases of the innermost
 *     frame.
 *
 * Every step checks what it derives: the caller's stack pointer must lie
 * above the callee's (except across a signal frame, which may come from
 * another stack), addresses must be aligned and in user space, and the walk
 * ends at a table's outermost marker, a zero return address or frame
 * pointer, an unreadable address, or the frame limit.  The reason is
 * reported with the trace (CODECTL_STOP_*), and each frame says which
 * method found it (CODECTL_FRAME_*).
 *
 * Only x86-64 user space is unwound; the SFrame decoder itself knows the
 * other ABIs.
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "codectl.h"
#include "compat.h"
#include "sframe.h"

struct codectl_unwind_counters codectl_unwind_counters;

/* DWARF numbers of the x86-64 registers SFrame FLEX rules name. */
#define DWARF_RBP	6
#define DWARF_RSP	7

/* Chained JIT tables followed per lookup, at most. */
#define CODECTL_JIT_MAX_TABLES	256

/**
 * struct codectl_uframe - the registers of one frame during a walk
 * @ip:		its pc
 * @sp:		its stack pointer
 * @fp:		its frame pointer (rbp) as far as it is known
 * @regs:	all registers, for the innermost frame only (else NULL)
 * @sigctx:	user address of the struct sigcontext the frame was restored
 *		from, for a frame interrupted by a signal (else 0): its other
 *		registers are there
 * @exact:	@ip is where the frame was interrupted or called the kernel,
 *		not a return address: look it up as it is, not @ip - 1
 */
struct codectl_uframe {
	u64 ip;
	u64 sp;
	u64 fp;
	const struct pt_regs *regs;
	u64 sigctx;
	bool exact;
};

/* An SFrame section set up for one registration, cached during a walk. */
struct codectl_sec_cache {
	const struct codectl_reg *reg;
	int err;
	struct sframe_sec sec;
};

/**
 * struct codectl_walk - one unwind
 * @set:	the registrations (a reference), or NULL
 * @flags:	CODECTL_UNWIND_NO_* bits
 * @cache:	the last registrations' SFrame sections
 * @next:	the cache slot to fill next
 * @nr_restorers: entries of @restorers, or -1 before they are looked up
 * @restorers:	the distinct signal-return trampolines the task's signal
 *		handlers return to
 * @frames:	frames found, by CODECTL_FRAME_*
 * @last:	the registration of the previous frame, or NULL
 */
struct codectl_walk {
	struct codectl_set *set;
	const struct codectl_reg *last;
	unsigned int flags;
	struct codectl_sec_cache cache[2];
	unsigned int next;
	int nr_restorers;
	u64 restorers[4];
	u32 frames[8];
};

/* Step results other than CODECTL_STOP_* (which are > 0). */
#define STEP_OK		0
#define STEP_NO_RULE	(-1)	/* this method has nothing for the pc */

static __always_inline int codectl_read_u64(u64 addr, u64 *val)
{
	if (addr & 7)
		return CODECTL_STOP_ALIGN;
	if (get_user(*val, (u64 __user *)u64_to_user_ptr(addr)))
		return CODECTL_STOP_FAULT;
	return STEP_OK;
}

static bool codectl_user_addr(u64 addr)
{
	return addr && addr < TASK_SIZE_MAX;
}

/* ---- signal frames --------------------------------------------------- */

/*
 * The x86-64 rt_sigreturn trampoline (glibc's __restore_rt, musl's
 * __restore_rt): mov $15,%rax; syscall.
 */
static const u8 codectl_sigreturn_code[9] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05
};

/*
 * Where struct rt_sigframe's ucontext keeps the interrupted registers,
 * from the stack pointer at the trampoline (the handler's return popped
 * pretcode): uc_mcontext is 40 bytes into struct ucontext, and rbp, rsp
 * and rip are words 10, 15 and 16 of struct sigcontext.
 */
#define SIGFRAME_MCONTEXT	40
#define SIGFRAME_RBP	(SIGFRAME_MCONTEXT + 10 * 8)
#define SIGFRAME_RSP	(SIGFRAME_MCONTEXT + 15 * 8)
#define SIGFRAME_RIP	(SIGFRAME_MCONTEXT + 16 * 8)

/*
 * The trampolines the task's handlers return to (sa_restorer, which x86-64
 * requires), so that only a pc equal to one of them costs a read of its
 * code.  Read without the siglock: a handler changing meanwhile can only
 * make a frame miss the check, and the code is checked anyway.
 */
static void codectl_walk_restorers(struct codectl_walk *w)
{
	struct k_sigaction *ka;
	int i, j;

	w->nr_restorers = 0;
	rcu_read_lock();
	ka = rcu_dereference(current->sighand)->action;
	for (i = 0; i < _NSIG; i++) {
		u64 r = (u64)(uintptr_t)READ_ONCE(ka[i].sa.sa_restorer);

		if (!(READ_ONCE(ka[i].sa.sa_flags) & SA_RESTORER) || !r)
			continue;
		for (j = 0; j < w->nr_restorers && w->restorers[j] != r; j++)
			;
		if (j == w->nr_restorers &&
		    w->nr_restorers < ARRAY_SIZE(w->restorers))
			w->restorers[w->nr_restorers++] = r;
	}
	rcu_read_unlock();
}

static bool codectl_is_sigreturn_code(u64 addr)
{
	u8 code[sizeof(codectl_sigreturn_code)];

	return !copy_from_user(code, u64_to_user_ptr(addr), sizeof(code)) &&
	       !memcmp(code, codectl_sigreturn_code, sizeof(code));
}

/* Is @f->ip the trampoline's first instruction (or, if exact, its syscall)? */
static bool codectl_at_sigreturn(struct codectl_walk *w,
				 const struct codectl_uframe *f)
{
	int i;

	if (w->nr_restorers < 0)
		codectl_walk_restorers(w);
	for (i = 0; i < w->nr_restorers; i++) {
		if (f->ip == w->restorers[i])
			return codectl_is_sigreturn_code(f->ip);
		/* Interrupted between the mov and the syscall. */
		if (f->exact && f->ip == w->restorers[i] + 7)
			return codectl_is_sigreturn_code(f->ip - 7);
	}
	return false;
}

/* The interrupted frame, from the signal frame at @f->sp. */
static int codectl_step_signal(struct codectl_uframe *f)
{
	u64 ip, sp, fp;
	int ret;

	ret = codectl_read_u64(f->sp + SIGFRAME_RIP, &ip);
	if (!ret)
		ret = codectl_read_u64(f->sp + SIGFRAME_RSP, &sp);
	if (!ret)
		ret = codectl_read_u64(f->sp + SIGFRAME_RBP, &fp);
	if (ret)
		return ret;
	/* The interrupted stack may be another one (sigaltstack). */
	f->sigctx = f->sp + SIGFRAME_MCONTEXT;
	f->ip = ip;
	f->sp = sp;
	f->fp = fp;
	f->regs = NULL;
	f->exact = true;
	return STEP_OK;
}

/*
 * Move @f to its caller, whose frame starts at @cfa (its stack pointer
 * after the return), found by method @how.
 */
static __always_inline int
codectl_to_caller(struct codectl_uframe *f, u64 cfa, u64 ra, u64 fp,
		  unsigned int how, unsigned int *method)
{
	if (cfa <= f->sp)
		return CODECTL_STOP_SP;
	f->ip = ra;
	f->sp = cfa;
	f->fp = fp;
	*method = how;
	return STEP_OK;
}

/* ---- SFrame ---------------------------------------------------------- */

/* pt_regs offsets of the x86-64 DWARF registers 0-15 (6, 7: rbp, rsp). */
static const unsigned int codectl_dwarf_regs[16] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),
	offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
};

/* struct sigcontext words of the x86-64 DWARF registers 0-15. */
static const u8 codectl_dwarf_sigctx[16] = {
	13, 12, 14, 11, 9, 8, 10, 15, 0, 1, 2, 3, 4, 5, 6, 7,
};

/* The value of a rule's base register in frame @f, at CFA @cfa. */
static __always_inline int
codectl_base_value(const struct codectl_uframe *f, u16 base, u64 cfa, u64 *val)
{
	switch (base) {
	case SFRAME_BASE_SP:
	case DWARF_RSP:
		*val = f->sp;
		return STEP_OK;
	case SFRAME_BASE_FP:
	case DWARF_RBP:
		*val = f->fp;
		return STEP_OK;
	case SFRAME_BASE_CFA:
		*val = cfa;
		return STEP_OK;
	}
	/*
	 * Other registers are known only in the innermost frame and in
	 * frames a signal interrupted.
	 */
	if (base >= ARRAY_SIZE(codectl_dwarf_regs))
		return CODECTL_STOP_TABLE;
	if (f->regs) {
		*val = regs_get_register((struct pt_regs *)f->regs,
					 codectl_dwarf_regs[base]);
		return STEP_OK;
	}
	if (f->sigctx)
		return codectl_read_u64(f->sigctx +
					8 * codectl_dwarf_sigctx[base], val);
	return CODECTL_STOP_TABLE;
}

/* Evaluate one location of a rule (not SAME/UNDEF). */
static __always_inline int
codectl_loc_value(const struct codectl_uframe *f, const struct sframe_loc *loc,
		  u64 cfa, u64 *val)
{
	u64 base;
	int ret;

	ret = codectl_base_value(f, loc->base, cfa, &base);
	if (ret)
		return ret;
	base += (s64)loc->off;
	if (loc->kind == SFRAME_LOC_VAL) {
		*val = base;
		return STEP_OK;
	}
	if (loc->kind == SFRAME_LOC_MEM)
		return codectl_read_u64(base, val);
	return CODECTL_STOP_TABLE;
}

static const struct sframe_sec *
codectl_walk_sec(struct codectl_walk *w, const struct codectl_reg *reg)
{
	struct codectl_sec_cache *c;
	unsigned int i;

	/* Set up at registration, with its FDE index if it had room. */
	if (reg->sframe_sec)
		return reg->sframe_sec;
	for (i = 0; i < ARRAY_SIZE(w->cache); i++)
		if (w->cache[i].reg == reg)
			return w->cache[i].err ? NULL : &w->cache[i].sec;
	c = &w->cache[w->next];
	w->next = (w->next + 1) % ARRAY_SIZE(w->cache);
	c->reg = reg;
	c->err = sframe_init(&c->sec, reg->sframe_start,
			     reg->sframe_end - reg->sframe_start, NULL,
			     codectl_sframe_read, &c->sec);
	if (c->err)
		return NULL;
	c->sec.text_start = reg->text_start;
	c->sec.text_end = reg->text_end;
	return &c->sec;
}

static int codectl_step_sframe(struct codectl_walk *w,
			       const struct codectl_reg *reg,
			       struct codectl_uframe *f, u64 pc,
			       unsigned int *method)
{
	const struct sframe_rule *rule;
	const struct sframe_sec *sec;
	struct sframe_rule decoded;
	u64 cfa, ra, fp = f->fp;
	int err, ret;

	if (reg->sframe_flat) {
		/* Built at registration: one binary search, nothing read. */
		rule = sframe_flat_find(reg->sframe_flat, pc);
		if (!rule)
			return STEP_NO_RULE;
	} else {
		sec = codectl_walk_sec(w, reg);
		if (!sec)
			return CODECTL_STOP_TABLE;
		err = sframe_find(sec, pc, &decoded);
		if (err == SFRAME_E_NOT_FOUND || err == SFRAME_E_NO_FRE)
			return STEP_NO_RULE;
		if (err == SFRAME_E_READ)
			return CODECTL_STOP_FAULT;
		if (err)
			return CODECTL_STOP_TABLE;
		rule = &decoded;
	}
	if (rule->flags & SFRAME_RULE_SIGNAL) {
		*method = CODECTL_FRAME_SIGNAL;
		return codectl_step_signal(f);
	}
	if (rule->flags & SFRAME_RULE_OUTERMOST ||
	    rule->ra.kind == SFRAME_LOC_UNDEF)
		return CODECTL_STOP_OUTERMOST;
	if (rule->cfa.kind != SFRAME_LOC_VAL &&
	    rule->cfa.kind != SFRAME_LOC_MEM)
		return CODECTL_STOP_TABLE;
	ret = codectl_loc_value(f, &rule->cfa, 0, &cfa);
	if (!ret)
		ret = codectl_loc_value(f, &rule->ra, cfa, &ra);
	if (!ret && rule->fp.kind != SFRAME_LOC_SAME)
		ret = codectl_loc_value(f, &rule->fp, cfa, &fp);
	if (ret)
		return ret;
	return codectl_to_caller(f, cfa, ra, fp, CODECTL_FRAME_SFRAME, method);
}

/* ---- JIT tables ------------------------------------------------------ */

/* Read entry @i of a table: the known part, the rest of ours zeroed. */
static int codectl_jit_entry(u64 fres, const struct codectl_jit_unwind_table *tab,
			     u64 i, struct codectl_jit_unwind_fre *e)
{
	size_t len = min_t(size_t, tab->fre_size, sizeof(*e));

	memset(e, 0, sizeof(*e));
	if (copy_from_user(e, u64_to_user_ptr(fres + i * tab->fre_stride), len))
		return CODECTL_STOP_FAULT;
	return STEP_OK;
}

/*
 * Find the entry covering offset @off of a JIT region.  Only entries below
 * each table's used_len, read with acquire ordering, are looked at; an
 * entry order that does not hold (the table changed under us) ends the
 * walk.
 */
static int codectl_jit_find(const struct codectl_reg *reg, u64 off,
			    struct codectl_jit_unwind_fre *e)
{
	struct codectl_jit_unwind_table tab;
	u64 head = reg->unwind_head;
	unsigned int t;

	for (t = 0; head && t < CODECTL_JIT_MAX_TABLES; t++) {
		u64 fres = head + sizeof(tab), lo = 0, hi, n;
		int ret;

		if (copy_from_user(&tab, u64_to_user_ptr(head), sizeof(tab)))
			return CODECTL_STOP_FAULT;
		/* used_len, then the entries it covers: acquire. */
		smp_rmb();
		if (!codectl_jit_table_ok(&tab))
			return CODECTL_STOP_TABLE;
		n = div_u64(tab.used_len, tab.fre_stride);
		hi = n;
		while (lo < hi) {
			u64 mid = lo + (hi - lo) / 2;

			ret = codectl_jit_entry(fres, &tab, mid, e);
			if (ret)
				return ret;
			if (off < e->ip_off)
				hi = mid;
			else if (off - e->ip_off >= e->size)
				lo = mid + 1;
			else
				return STEP_OK;
		}
		/* Below this table's last entry: no later table covers it. */
		if (n) {
			ret = codectl_jit_entry(fres, &tab, n - 1, e);
			if (ret)
				return ret;
			if (off < (u64)e->ip_off + e->size)
				return STEP_NO_RULE;
		}
		head = tab.next;
	}
	return head ? CODECTL_STOP_TABLE : STEP_NO_RULE;
}

static int codectl_step_jit(const struct codectl_reg *reg,
			    struct codectl_uframe *f, u64 pc,
			    unsigned int *method)
{
	struct codectl_jit_unwind_fre e;
	u64 cfa, ra, fp = f->fp;
	int ret;

	ret = codectl_jit_find(reg, pc - reg->text_start, &e);
	if (ret)
		return ret;
	if (e.info & CODECTL_JIT_FRE_OUTERMOST)
		return CODECTL_STOP_OUTERMOST;
	cfa = (e.info & CODECTL_JIT_FRE_CFA_BASE_FP ? f->fp : f->sp) +
	      (s64)e.cfa_off;
	ret = codectl_read_u64(cfa + (s64)e.ra_off, &ra);
	if (!ret && e.info & CODECTL_JIT_FRE_FP_SAVED)
		ret = codectl_read_u64(cfa + (s64)e.fp_off, &fp);
	if (ret)
		return ret;
	return codectl_to_caller(f, cfa, ra, fp, CODECTL_FRAME_JIT, method);
}

/* ---- frame pointers -------------------------------------------------- */

/* Is @addr in registered code or in an executable mapping? */
static bool codectl_in_code(struct codectl_walk *w, u64 addr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool exec;

	if (w->set && codectl_set_find(w->set, addr))
		return true;
	if (mmap_read_lock_killable(mm))
		return false;
	vma = find_vma(mm, addr);
	exec = vma && vma->vm_start <= addr && (vma->vm_flags & VM_EXEC);
	mmap_read_unlock(mm);
	return exec;
}

/*
 * Is this a return address?  It must point into code, after a call:
 * e8 rel32, or ff /2 with a ModRM of 2, 3, 4, 6 or 7 bytes in all.  (The
 * bytes alone are not enough: stack data can look like a call.)
 */
static bool codectl_after_call(struct codectl_walk *w, u64 ra)
{
	u8 b[8];
	unsigned int len;

	if (ra < sizeof(b) || !codectl_in_code(w, ra) ||
	    copy_from_user(b, u64_to_user_ptr(ra - 8), 8))
		return false;
	if (b[3] == 0xe8)
		return true;
	for (len = 2; len <= 7; len++) {
		u8 modrm = b[8 - len + 1];

		if (b[8 - len] == 0xff && ((modrm >> 3) & 7) == 2)
			return true;
	}
	return false;
}

/*
 * The innermost frame where the function has no frame of its own yet:
 * at its first instruction (push %rbp, or endbr64 before it), right after
 * the push (mov %rsp,%rbp), or in a leaf system call wrapper (the pc
 * right after a syscall instruction, the return address on top of the
 * stack).
 */
static int codectl_step_entry(struct codectl_walk *w, struct codectl_uframe *f,
			      unsigned int *method)
{
	u8 code[4], prev[3];
	u64 ra, fp = f->fp, cfa;

	if (copy_from_user(code, u64_to_user_ptr(f->ip), sizeof(code)))
		return STEP_NO_RULE;
	if (copy_from_user(prev, u64_to_user_ptr(f->ip - 3), sizeof(prev)))
		memset(prev, 0, sizeof(prev));
	if (code[0] == 0x55 ||
	    (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
	     code[3] == 0xfa)) {
		cfa = f->sp + 8;
	} else if (code[0] == 0x48 && code[1] == 0x89 && code[2] == 0xe5 &&
		   prev[2] == 0x55) {
		if (codectl_read_u64(f->sp, &fp))
			return STEP_NO_RULE;
		cfa = f->sp + 16;
	} else if (prev[1] == 0x0f && prev[2] == 0x05) {
		cfa = f->sp + 8;
	} else {
		return STEP_NO_RULE;
	}
	if (codectl_read_u64(cfa - 8, &ra) || !codectl_after_call(w, ra))
		return STEP_NO_RULE;
	return codectl_to_caller(f, cfa, ra, fp, CODECTL_FRAME_FP_ENTRY,
				 method);
}

static int codectl_step_fp(struct codectl_uframe *f, unsigned int *method)
{
	u64 ra, fp;
	int ret;

	if (!f->fp)
		return CODECTL_STOP_END;
	if (f->fp & 7)
		return CODECTL_STOP_ALIGN;
	if (f->fp < f->sp)
		return CODECTL_STOP_SP;
	ret = codectl_read_u64(f->fp + 8, &ra);
	if (!ret)
		ret = codectl_read_u64(f->fp, &fp);
	if (ret)
		return ret;
	return codectl_to_caller(f, f->fp + 16, ra, fp, CODECTL_FRAME_FP,
				 method);
}

/* ---- the walk -------------------------------------------------------- */

/* From frame @f to its caller; *@method says how. */
static int codectl_step(struct codectl_walk *w, struct codectl_uframe *f,
			unsigned int *method)
{
	u64 pc = f->exact ? f->ip : f->ip - 1;
	const struct codectl_reg *reg = NULL;
	int ret = STEP_NO_RULE;

	/*
	 * A handler's sa_restorer with the sigreturn code is a signal frame
	 * whatever tables say: v1 and v2 cannot mark one, and a trampoline
	 * with ordinary CFI gets an ordinary FDE there.
	 */
	if (codectl_at_sigreturn(w, f)) {
		*method = CODECTL_FRAME_SIGNAL;
		return codectl_step_signal(f);
	}
	/* Callers are often in the same object: try its range first. */
	if (w->last && pc >= w->last->text_start && pc < w->last->text_end)
		reg = w->last;
	else if (w->set)
		reg = codectl_set_find(w->set, pc);
	w->last = reg;
	if (reg && reg->sframe_start && !(w->flags & CODECTL_UNWIND_NO_SFRAME))
		ret = codectl_step_sframe(w, reg, f, pc, method);
	else if (reg && reg->kind == CODECTL_KIND_JIT &&
		 !(w->flags & CODECTL_UNWIND_NO_JIT))
		ret = codectl_step_jit(reg, f, pc, method);
	if (ret != STEP_NO_RULE)
		return ret;
	if (w->flags & CODECTL_UNWIND_NO_FP)
		return CODECTL_STOP_TABLE;
	if (f->exact && codectl_step_entry(w, f, method) == STEP_OK)
		return STEP_OK;
	return codectl_step_fp(f, method);
}

static void codectl_walk_done(struct codectl_walk *w, struct codectl_trace *t)
{
	unsigned int i;

	codectl_set_put(w->set);
	atomic64_inc(&codectl_unwind_counters.unwinds);
	atomic64_inc(&codectl_unwind_counters.stops[t->stop]);
	for (i = 0; i < ARRAY_SIZE(w->frames); i++)
		if (w->frames[i])
			atomic64_add(w->frames[i],
				     &codectl_unwind_counters.frames[i]);
}

/**
 * codectl_unwind_current() - unwind the current task's user stack
 * @t:		the arrays to fill (@t->max >= 1); gets nr and stop
 * @flags:	CODECTL_UNWIND_NO_* methods to leave out
 *
 * The stack is the one the task had when it entered the kernel (its user
 * registers).  Task context only: reads user memory and may sleep.
 */
void codectl_unwind_current(struct codectl_trace *t, unsigned int flags)
{
	struct pt_regs *regs = task_pt_regs(current);
	struct codectl_walk w = { .flags = flags, .nr_restorers = -1 };
	struct codectl_uframe f;
	unsigned int method = CODECTL_FRAME_REGS;
	int ret;

	t->nr = 0;
	if ((current->flags & (PF_KTHREAD | PF_EXITING)) || !current->mm ||
	    !user_mode(regs)) {
		t->stop = CODECTL_STOP_NO_USER;
		codectl_walk_done(&w, t);
		return;
	}
	/* 32-bit code: its pc, and no unwinder for it. */
	if (!user_64bit_mode(regs)) {
		t->ips[t->nr] = regs->ip;
		t->methods[t->nr++] = CODECTL_FRAME_REGS;
		w.frames[CODECTL_FRAME_REGS]++;
		t->stop = CODECTL_STOP_TABLE;
		codectl_walk_done(&w, t);
		return;
	}
	w.set = codectl_mm_snapshot(current->mm);
	f = (struct codectl_uframe) {
		.ip = regs->ip, .sp = regs->sp, .fp = regs->bp,
		.regs = regs, .exact = true,
	};
	for (;;) {
		t->ips[t->nr] = f.ip;
		t->methods[t->nr] = method;
		w.frames[method]++;
		if (++t->nr == t->max) {
			t->stop = CODECTL_STOP_DEPTH;
			break;
		}
		ret = codectl_step(&w, &f, &method);
		if (ret) {
			t->stop = ret;
			break;
		}
		if (!f.ip) {
			t->stop = CODECTL_STOP_END;
			break;
		}
		if (!codectl_user_addr(f.ip)) {
			t->stop = CODECTL_STOP_SP;
			break;
		}
		if (method != CODECTL_FRAME_SIGNAL) {
			f.exact = false;
			f.sigctx = 0;
		}
		f.regs = NULL;
	}
	codectl_walk_done(&w, t);
}

/* ---- ioctls and debugfs ---------------------------------------------- */

static long codectl_unwind_self(struct codectl_unwind_args __user *uargs)
{
	struct codectl_unwind_args args;
	struct codectl_trace t = { };
	unsigned int i, iterations;
	long ret = 0;
	u64 ns = 0;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	if (!args.max_frames || args.max_frames > CODECTL_UNWIND_MAX_FRAMES ||
	    args.flags & ~CODECTL_UNWIND_FLAGS_ALL || args.__reserved)
		return -EINVAL;
	t.max = args.max_frames;
	t.ips = kvmalloc_array(t.max, sizeof(*t.ips), GFP_KERNEL_ACCOUNT);
	t.methods = kvmalloc(t.max, GFP_KERNEL_ACCOUNT);
	if (!t.ips || !t.methods) {
		ret = -ENOMEM;
		goto out;
	}
	iterations = args.iterations ?: 1;
	for (i = 0; i < iterations; i++) {
		u64 start = ktime_get_ns();

		codectl_unwind_current(&t, args.flags);
		ns += ktime_get_ns() - start;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out;
		}
		cond_resched();
	}
	args.nr = t.nr;
	args.stop = t.stop;
	args.ns = ns;
	if (copy_to_user(u64_to_user_ptr(args.ips), t.ips,
			 t.nr * sizeof(*t.ips)) ||
	    (args.methods && copy_to_user(u64_to_user_ptr(args.methods),
					  t.methods, t.nr)) ||
	    copy_to_user(uargs, &args, sizeof(args)))
		ret = -EFAULT;
out:
	kvfree(t.ips);
	kvfree(t.methods);
	return ret;
}

static void codectl_unwind_stats_get(struct codectl_unwind_stats *s)
{
	struct codectl_unwind_counters *c = &codectl_unwind_counters;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->unwinds = atomic64_read(&c->unwinds);
	for (i = 0; i < ARRAY_SIZE(s->frames); i++)
		s->frames[i] = atomic64_read(&c->frames[i]);
	for (i = 0; i < ARRAY_SIZE(s->stops); i++)
		s->stops[i] = atomic64_read(&c->stops[i]);
	s->requests = atomic64_read(&c->requests);
	s->callbacks = atomic64_read(&c->callbacks);
}

/**
 * codectl_unwind_ioctl() - CODECTL_IOC_UNWIND and CODECTL_IOC_UNWIND_STATS
 * @file:	the open device
 * @cmd:	the ioctl
 * @arg:	user pointer to its argument
 *
 * Return: 0 or a negative errno, as documented in uapi/linux/codectl.h.
 */
long codectl_unwind_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct codectl_unwind_stats s;

	if (cmd == CODECTL_IOC_UNWIND)
		return codectl_unwind_self((void __user *)arg);
	codectl_unwind_stats_get(&s);
	return copy_to_user((void __user *)arg, &s, sizeof(s)) ? -EFAULT : 0;
}

/**
 * codectl_unwind_show() - debugfs codectl/unwind: the unwinder counters
 * @m:		the seq_file
 * @v:		unused
 *
 * Return: 0.
 */
int codectl_unwind_show(struct seq_file *m, void *v)
{
	static const char * const frames[] = {
		[CODECTL_FRAME_REGS] = "regs",
		[CODECTL_FRAME_SFRAME] = "sframe",
		[CODECTL_FRAME_JIT] = "jit",
		[CODECTL_FRAME_FP] = "fp",
		[CODECTL_FRAME_FP_ENTRY] = "fp_entry",
		[CODECTL_FRAME_SIGNAL] = "signal",
	};
	static const char * const stops[] = {
		[CODECTL_STOP_OUTERMOST] = "outermost",
		[CODECTL_STOP_END] = "end",
		[CODECTL_STOP_DEPTH] = "depth",
		[CODECTL_STOP_FAULT] = "fault",
		[CODECTL_STOP_SP] = "sp",
		[CODECTL_STOP_ALIGN] = "align",
		[CODECTL_STOP_TABLE] = "table",
		[CODECTL_STOP_NO_USER] = "no_user",
		[CODECTL_STOP_NOMEM] = "nomem",
	};
	struct codectl_unwind_stats s;
	unsigned int i;

	codectl_unwind_stats_get(&s);
	seq_printf(m, "unwinds %llu\nrequests %llu\ncallbacks %llu\n",
		   s.unwinds, s.requests, s.callbacks);
	for (i = 1; i < ARRAY_SIZE(frames); i++)
		seq_printf(m, "frames_%s %llu\n", frames[i], s.frames[i]);
	for (i = 1; i < ARRAY_SIZE(stops); i++)
		seq_printf(m, "stop_%s %llu\n", stops[i], s.stops[i]);
	return 0;
}
