// SPDX-License-Identifier: GPL-2.0
/*
 * codectl: the user-space stack unwinder.  Walks the current task's user
 * stack from its user registers (walk.h has the iterator), with faulting
 * reads in task context or non-faulting ones from the tracer hooks.  Each
 * step finds the caller from the callee by the first method that has a
 * rule: the signal trampoline, the registration's SFrame section (flat
 * table or decoded in place) or JIT tables, else frame pointers.  Every
 * caller is checked (stack grows up, aligned, in user space, in code
 * after a call); one that fails ends the walk, with a CODECTL_STOP_*
 * reason; each frame says its CODECTL_FRAME_* method.  Only x86-64 user
 * space.  More: docs/design.md, "Unwinding".
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "arch.h"
#include "internal.h"
#include "compat.h"
#include "names.h"
#include "sframe.h"
#include "walk.h"

struct codectl_unwind_counters codectl_unwind_counters;

/*
 * Debugging only: with check_callers off, callers are given without
 * checking that they are code (so that tests can show what the check
 * removes).  Never turn it off in production: stacks then carry frames
 * that are not code.
 */
static bool codectl_check_callers = true;
module_param_named(check_callers, codectl_check_callers, bool, 0644);
MODULE_PARM_DESC(check_callers,
		 "Debugging: check that every caller a walk gives is code, a return address after a call (default Y; N gives non-code frames)");

/* Step results other than CODECTL_STOP_* (which are > 0). */
#define STEP_OK		0
#define STEP_NO_RULE	(-1)	/* this method has nothing for the pc */

/* ---- reading user memory --------------------------------------------- */

/*
 * The walk's one way into user memory, in two modes.  Task context reads
 * with the ordinary accessors, which fault pages in.  The hooks' walks
 * (NMI, IRQ, interrupts off) never sleep: page faults are disabled, so a
 * page that is not resident is an error, as in the kernel's own
 * frame-pointer walk.  User memory may be read there only while the CPU
 * runs on current's page tables (nmi_uaccess_okay(), which a module
 * cannot call): copy_from_user_nofault() checks it.  Once one such read
 * worked, it holds for the rest of the walk, since nothing can switch
 * this CPU's mm under an NMI or with interrupts off, and the inline
 * accessors do the rest, like perf's own walk.
 */
static int codectl_copy(const struct codectl_walk *w, void *dst, u64 addr,
			size_t len)
{
	void __user *src = u64_to_user_ptr(addr);
	unsigned long left;

	if (!w->nofault)
		return copy_from_user(dst, src, len) ? -EFAULT : 0;
	if (!w->uaccess_ok)
		return copy_from_user_nofault(dst, src, len) ? -EFAULT : 0;
	/*
	 * Faults off first: with CONFIG_DEBUG_ATOMIC_SLEEP, access_ok()
	 * warns outside task context unless they are.
	 */
	pagefault_disable();
	left = access_ok(src, len) ?
	       __copy_from_user_inatomic(dst, src, len) : len;
	pagefault_enable();
	return left ? -EFAULT : 0;
}

/* A word read by copy_from_user_nofault(), and its error. */
struct codectl_word {
	u64 val;
	int err;
};

/*
 * codectl_read_u64()'s read before the walk knows that it may use the
 * inline accessors: out of line, and returning the word, so that no
 * caller's variable needs an address (nor the stack protector).
 */
static noinline struct codectl_word codectl_read_u64_checked(u64 addr)
{
	struct codectl_word r = { };

	r.err = copy_from_user_nofault(&r.val, u64_to_user_ptr(addr),
				       sizeof(r.val));
	return r;
}

/* One stack word: the walk's most frequent read, inline. */
static __always_inline int codectl_read_u64(const struct codectl_walk *w,
					    u64 addr, u64 *val)
{
	u64 __user *src = (u64 __user *)u64_to_user_ptr(addr);
	int err;

	if (addr & 7)
		return CODECTL_STOP_ALIGN;
	if (!w->nofault) {
		err = get_user(*val, src);
	} else if (!w->uaccess_ok) {
		struct codectl_word r = codectl_read_u64_checked(addr);

		*val = r.val;
		err = r.err;
	} else {
		/* Faults off before access_ok(), as in codectl_copy(). */
		pagefault_disable();
		err = -EFAULT;
		if (user_access_begin(src, sizeof(*val))) {
			unsafe_get_user(*val, src, end);
			err = 0;
end:
			user_access_end();
		}
		pagefault_enable();
	}
	return err ? CODECTL_STOP_FAULT : STEP_OK;
}

/*
 * Two stack words, @lo at @addr and @hi above it: a frame's saved frame
 * pointer and return address.  The hooks' walk reads both in one access
 * to user memory; the others read @hi first, as two reads would.
 */
static __always_inline int codectl_read_u64x2(const struct codectl_walk *w,
					      u64 addr, u64 *lo, u64 *hi)
{
	u64 __user *src = (u64 __user *)u64_to_user_ptr(addr);
	int err;

	if (addr & 7)
		return CODECTL_STOP_ALIGN;
	if (!w->uaccess_ok) {
		err = codectl_read_u64(w, addr + 8, hi);
		return err ?: codectl_read_u64(w, addr, lo);
	}
	pagefault_disable();
	err = -EFAULT;
	if (user_access_begin(src, 2 * sizeof(*src))) {
		unsafe_get_user(*lo, src, end);
		unsafe_get_user(*hi, src + 1, end);
		err = 0;
end:
		user_access_end();
	}
	pagefault_enable();
	return err ? CODECTL_STOP_FAULT : STEP_OK;
}

static bool codectl_user_addr(u64 addr)
{
	return addr && addr < TASK_SIZE_MAX;
}

/*
 * Spend @n units of the walk's budget (CODECTL_WALK_BUDGET): every read
 * of an unwind table in user memory and every entry looked at costs one,
 * so that a walk in NMI does a bounded amount of work whatever the
 * tables say.
 */
static inline int codectl_spend(struct codectl_walk *w, u32 n)
{
	if (w->budget < n) {
		w->budget = 0;
		return CODECTL_STOP_BUDGET;
	}
	w->budget -= n;
	return STEP_OK;
}

/* ---- applying a rule -------------------------------------------------- */

/*
 * Every method yields a rule (struct sframe_rule: the CFA from a base and
 * an offset, the return address and frame pointer from the CFA); one
 * evaluation applies it.
 */

/* pt_regs offsets of the DWARF registers (x86-64: 0-15, arm64: 0-31). */
static const unsigned int codectl_dwarf_regs[] = CODECTL_ARCH_DWARF_PT_REGS;

/* struct sigcontext words of the same registers. */
static const u8 codectl_dwarf_sigctx[] = CODECTL_ARCH_DWARF_SIGCTX;

/* The value of a rule's base register in the current frame, at CFA @cfa. */
static __always_inline int
codectl_base_value(const struct codectl_walk *w, u16 base, u64 cfa, u64 *val)
{
	const struct codectl_uframe *f = &w->f;

	switch (base) {
	case SFRAME_BASE_SP:
	case CODECTL_ARCH_DWARF_SP:
		/* Unknown after a frame-pointer step, on arm64 (arch-*.h). */
		if (!CODECTL_ARCH_FP_FINDS_SP && w->method == CODECTL_FRAME_FP)
			return STEP_NO_RULE;
		*val = f->sp;
		return STEP_OK;
	case SFRAME_BASE_FP:
	case CODECTL_ARCH_DWARF_FP:
		*val = f->fp;
		return STEP_OK;
	case SFRAME_BASE_CFA:
		*val = cfa;
		return STEP_OK;
	}
	/*
	 * Other registers are known only in the innermost frame and in
	 * frames a signal interrupted; the register tables' register also
	 * where the tables carried it (codectl_xreg_step()).
	 */
	if (base >= ARRAY_SIZE(codectl_dwarf_regs))
		return CODECTL_STOP_TABLE;
	if (f->regs) {
		*val = regs_get_register((struct pt_regs *)f->regs,
					 codectl_dwarf_regs[base]);
		return STEP_OK;
	}
	if (f->sigctx)
		return codectl_read_u64(w, f->sigctx +
					8 * codectl_dwarf_sigctx[base], val);
	if (CODECTL_ARCH_DWARF_XREG >= 0 && base == CODECTL_ARCH_DWARF_XREG &&
	    f->xreg_known) {
		*val = f->xreg;
		return STEP_OK;
	}
	return CODECTL_STOP_TABLE;
}

/* Evaluate one location of a rule (not SAME/UNDEF). */
static __always_inline int
codectl_loc_value(const struct codectl_walk *w, const struct sframe_loc *loc,
		  u64 cfa, u64 *val)
{
	u64 base;
	int ret;

	ret = codectl_base_value(w, loc->base, cfa, &base);
	if (ret)
		return ret;
	base += (s64)loc->off;
	if (loc->kind == SFRAME_LOC_VAL) {
		*val = base;
		return STEP_OK;
	}
	if (loc->kind == SFRAME_LOC_MEM)
		return codectl_read_u64(w, base, val);
	return CODECTL_STOP_TABLE;
}

/* The caller's frame as a rule gives it. */
struct codectl_caller {
	u64 cfa;
	u64 ra;
	u64 fp;
	u64 xreg;
	bool fp_saved;
	bool xreg_known;
};

static __always_inline int codectl_eval(const struct codectl_walk *w,
					const struct sframe_rule *rule,
					struct codectl_caller *c)
{
	const struct sframe_loc *ra;
	struct sframe_loc lr;
	int ret;

	if (rule->cfa.kind != SFRAME_LOC_VAL &&
	    rule->cfa.kind != SFRAME_LOC_MEM)
		return CODECTL_STOP_TABLE;
	c->fp = w->f.fp;
	c->fp_saved = w->f.fp_saved;
	c->xreg_known = false;	/* unless a register table says (SFrame) */
	ret = codectl_loc_value(w, &rule->cfa, 0, &c->cfa);
	if (ret)
		return ret;
	/* An RA the callee did not save is the link register's (arch-*.h). */
	ra = codectl_arch_ra_loc(&rule->ra, &lr);
	/* The frame pointer saved right below the return address: one read. */
	if (ra->kind == SFRAME_LOC_MEM && ra->base == SFRAME_BASE_CFA &&
	    rule->fp.kind == SFRAME_LOC_MEM &&
	    rule->fp.base == SFRAME_BASE_CFA &&
	    (s64)rule->fp.off + 8 == (s64)ra->off) {
		ret = codectl_read_u64x2(w, c->cfa + (s64)rule->fp.off, &c->fp,
					 &c->ra);
		c->fp_saved = true;
	} else {
		ret = codectl_loc_value(w, ra, c->cfa, &c->ra);
		if (!ret && rule->fp.kind != SFRAME_LOC_SAME) {
			ret = codectl_loc_value(w, &rule->fp, c->cfa, &c->fp);
			c->fp_saved = true;
		}
	}
	if (!ret)
		c->ra = codectl_arch_strip_ra(c->ra);
	return ret;
}

/* Move to the caller, whose frame starts at the CFA, found by @how. */
static __always_inline int codectl_to_caller(struct codectl_walk *w,
					     const struct codectl_caller *c,
					     unsigned int how)
{
	if (!codectl_arch_cfa_ok(c->cfa, w->f.sp, w->f.exact))
		return CODECTL_STOP_SP;
	w->f.ip = c->ra;
	w->f.sp = c->cfa;
	w->f.fp = c->fp;
	w->f.fp_saved = c->fp_saved;
	w->f.xreg = c->xreg;
	w->f.xreg_known = c->xreg_known;
	w->method = how;
	return STEP_OK;
}

static __always_inline int codectl_apply(struct codectl_walk *w,
					 const struct sframe_rule *rule,
					 unsigned int how)
{
	struct codectl_caller c;
	int ret;

	ret = codectl_eval(w, rule, &c);
	if (ret)
		return ret;
	return codectl_to_caller(w, &c, how);
}

/* The frame layouts the fallbacks assume (arch-*.h). */
static const struct sframe_rule codectl_rule_fp = CODECTL_ARCH_RULE_FP;
static const struct sframe_rule codectl_rule_entry = CODECTL_ARCH_RULE_ENTRY;
static const struct sframe_rule codectl_rule_pushed = CODECTL_ARCH_RULE_PUSHED;

/* ---- signal frames --------------------------------------------------- */

/* The rt_sigreturn trampoline's code (arch-*.h). */
static const u8 codectl_sigreturn_code[] = CODECTL_ARCH_SIGRETURN_CODE;

/*
 * The trampolines the task's handlers return to (sa_restorer, which x86-64
 * requires), so that only a pc equal to one of them costs a read of its
 * code.  Read without the siglock (lock-free, so NMI-safe): a handler
 * changing meanwhile can only make a frame miss the check, and the code
 * is checked anyway.  The running task's sighand cannot be freed under it.
 */
static void codectl_walk_restorers(struct codectl_walk *w)
{
	struct sighand_struct *sighand;
	int i, j;

	w->nr_restorers = 0;
	rcu_read_lock();
	sighand = rcu_dereference(current->sighand);
	for (i = 0; sighand && i < _NSIG; i++) {
		struct k_sigaction *ka = &sighand->action[i];
		u64 r = (u64)(uintptr_t)READ_ONCE(ka->sa.sa_restorer);

		if (!(READ_ONCE(ka->sa.sa_flags) & SA_RESTORER) || !r)
			continue;
		for (j = 0; j < w->nr_restorers && w->restorers[j] != r; j++)
			;
		if (j == w->nr_restorers &&
		    w->nr_restorers < ARRAY_SIZE(w->restorers))
			w->restorers[w->nr_restorers++] = r;
	}
	rcu_read_unlock();
}

static bool codectl_is_sigreturn_code(const struct codectl_walk *w, u64 addr)
{
	u8 code[sizeof(codectl_sigreturn_code)];

	return !codectl_copy(w, code, addr, sizeof(code)) &&
	       !memcmp(code, codectl_sigreturn_code, sizeof(code));
}

/* Is the pc the trampoline's first instruction (or, if exact, its syscall)? */
static bool codectl_at_sigreturn(struct codectl_walk *w)
{
	const struct codectl_uframe *f = &w->f;
	int i;

	/* The kernel's own trampoline, where it has one (arch-*.h). */
	if (codectl_arch_vdso_sigtramp(f->ip))
		return codectl_is_sigreturn_code(w, f->ip);
	if (f->exact &&
	    codectl_arch_vdso_sigtramp(f->ip - CODECTL_ARCH_SIGRETURN_SYSCALL))
		return codectl_is_sigreturn_code(w, f->ip -
						CODECTL_ARCH_SIGRETURN_SYSCALL);
	if (w->nr_restorers < 0)
		codectl_walk_restorers(w);
	for (i = 0; i < w->nr_restorers; i++) {
		if (f->ip == w->restorers[i])
			return codectl_is_sigreturn_code(w, f->ip);
		/* Interrupted at the syscall, after what precedes it. */
		if (f->exact &&
		    f->ip == w->restorers[i] + CODECTL_ARCH_SIGRETURN_SYSCALL)
			return codectl_is_sigreturn_code(w, f->ip -
						CODECTL_ARCH_SIGRETURN_SYSCALL);
	}
	return false;
}

/* The interrupted frame, from the signal frame at the stack pointer. */
static int codectl_step_signal(struct codectl_walk *w)
{
	struct codectl_uframe *f = &w->f;
	u64 ip, sp, fp;
	int ret;

	/* The frame is at the stack pointer: unknown after an FP step there. */
	if (!CODECTL_ARCH_FP_FINDS_SP && w->method == CODECTL_FRAME_FP)
		return CODECTL_STOP_NO_RULE;
	ret = codectl_read_u64(w, f->sp + CODECTL_ARCH_SIGFRAME_PC, &ip);
	if (!ret)
		ret = codectl_read_u64(w, f->sp + CODECTL_ARCH_SIGFRAME_SP, &sp);
	if (!ret)
		ret = codectl_read_u64(w, f->sp + CODECTL_ARCH_SIGFRAME_FP, &fp);
	if (ret)
		return ret;
	/* The interrupted stack may be another one (sigaltstack). */
	f->sigctx = f->sp + CODECTL_ARCH_SIGFRAME_MCONTEXT;
	f->ip = ip;
	f->sp = sp;
	f->fp = fp;
	f->fp_saved = false;
	f->xreg_known = false;	/* in the sigcontext */
	f->regs = NULL;
	f->exact = true;
	w->method = CODECTL_FRAME_SIGNAL;
	return STEP_OK;
}

/* ---- SFrame ---------------------------------------------------------- */

/*
 * The decoder's reader for a section in user memory, in the walk's mode,
 * within the walk's budget (an exhausted budget fails the read; the
 * caller tells it from a fault by the budget left).
 */
static int codectl_walk_sframe_read(void *ctx, u64 off, void *dst, u32 len)
{
	struct codectl_sec_cache *c =
		container_of((struct sframe_sec *)ctx, struct codectl_sec_cache,
			     sec);

	if (codectl_spend(c->walk, 1))
		return -1;
	return codectl_copy(c->walk, dst, c->sec.addr + off, len) ? -1 : 0;
}

/* Lookups in a section in user memory: within the walk's budget. */
static void codectl_walk_sec_bound(struct codectl_walk *w,
				   struct sframe_sec *sec)
{
	sec->max_fres = CODECTL_SFRAME_MAX_FRES;
	sec->budget = &w->budget;
	sec->resched = NULL;
}

/*
 * A registration's section in user memory, read through this walk: the
 * set-up made at registration (with its FDE index) when there is one, else
 * set up here from the section's header.
 */
static const struct sframe_sec *
codectl_walk_sec(struct codectl_walk *w, const struct codectl_reg *reg)
{
	struct codectl_sec_cache *c;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(w->cache); i++)
		if (w->cache[i].reg == reg)
			return w->cache[i].err ? NULL : &w->cache[i].sec;
	c = &w->cache[w->next];
	w->next = (w->next + 1) % ARRAY_SIZE(w->cache);
	c->reg = reg;
	c->walk = w;
	if (reg->sframe_sec) {
		c->sec = *reg->sframe_sec;
		c->sec.read = codectl_walk_sframe_read;
		c->sec.ctx = &c->sec;
		codectl_walk_sec_bound(w, &c->sec);
		c->err = 0;
		return &c->sec;
	}
	c->err = sframe_init(&c->sec, reg->sframe_start,
			     reg->sframe_end - reg->sframe_start, NULL,
			     codectl_walk_sframe_read, &c->sec);
	if (c->err)
		return NULL;
	c->sec.text_start = reg->text_start;
	c->sec.text_end = reg->text_end;
	codectl_walk_sec_bound(w, &c->sec);
	return &c->sec;
}

/* The rule for @pc from a section in user memory, into @buf. */
static int codectl_sframe_decode(struct codectl_walk *w,
				 const struct codectl_reg *reg, u64 pc,
				 struct sframe_rule *buf)
{
	const struct sframe_sec *sec = codectl_walk_sec(w, reg);
	int err;

	if (!w->budget)
		return CODECTL_STOP_BUDGET;
	if (!sec) {
		if (!w->nofault)
			return CODECTL_STOP_TABLE;
		/* Perhaps only its header's page is not resident. */
		w->fallbacks++;
		return STEP_NO_RULE;
	}
	err = sframe_find(sec, pc, buf);
	if (err == SFRAME_E_NOT_FOUND || err == SFRAME_E_NO_FRE)
		return STEP_NO_RULE;
	if (err == SFRAME_E_BUDGET || (err == SFRAME_E_READ && !w->budget))
		return CODECTL_STOP_BUDGET;
	if (err == SFRAME_E_READ) {
		if (!w->nofault)
			return CODECTL_STOP_FAULT;
		/* Never wait for the page: frame pointers may still do. */
		w->fallbacks++;
		return STEP_NO_RULE;
	}
	return err ? CODECTL_STOP_TABLE : STEP_OK;
}

/*
 * The shapes of rule a compiler gives almost every pc, which the walk
 * applies with constant bases and kinds (what codectl_apply() does with
 * any rule, without its switches): a frame-pointer frame, and a frame
 * addressed from the stack pointer with rbp untouched or saved below
 * the return address.
 */
enum {
	CODECTL_SHAPE_ANY,
	CODECTL_SHAPE_FP,	/* codectl_rule_fp */
	CODECTL_SHAPE_SP,	/* CFA = rsp + off, rbp the same */
	CODECTL_SHAPE_SP_FP,	/* CFA = rsp + off, rbp at CFA - 16 */
};

static unsigned int codectl_rule_shape(const struct sframe_rule *r)
{
	if (!r || (r->flags & (SFRAME_RULE_SIGNAL | SFRAME_RULE_OUTERMOST)) ||
	    r->cfa.kind != SFRAME_LOC_VAL || r->ra.kind != SFRAME_LOC_MEM ||
	    r->ra.base != SFRAME_BASE_CFA || r->ra.off != -8)
		return CODECTL_SHAPE_ANY;
	if (r->cfa.base == SFRAME_BASE_FP)
		return r->cfa.off == 16 && r->fp.kind == SFRAME_LOC_MEM &&
		       r->fp.base == SFRAME_BASE_CFA && r->fp.off == -16 ?
		       CODECTL_SHAPE_FP : CODECTL_SHAPE_ANY;
	if (r->cfa.base != SFRAME_BASE_SP)
		return CODECTL_SHAPE_ANY;
	if (r->fp.kind == SFRAME_LOC_SAME)
		return CODECTL_SHAPE_SP;
	return r->fp.kind == SFRAME_LOC_MEM && r->fp.base == SFRAME_BASE_CFA &&
	       r->fp.off == -16 ? CODECTL_SHAPE_SP_FP : CODECTL_SHAPE_ANY;
}

/* Evaluate the last lookup's rule, of a shape other than ANY, into @c. */
static __always_inline int codectl_eval_shape(const struct codectl_walk *w,
					      struct codectl_caller *c)
{
	const struct sframe_rule *rule = w->rc_rule;

	switch (w->rc_shape) {
	case CODECTL_SHAPE_FP:
		return codectl_eval(w, &codectl_rule_fp, c);
	case CODECTL_SHAPE_SP: {
		const struct sframe_rule r =
			CODECTL_ARCH_RULE(SP, rule->cfa.off, SAME, 0);

		return codectl_eval(w, &r, c);
	}
	case CODECTL_SHAPE_SP_FP: {
		const struct sframe_rule r =
			CODECTL_ARCH_RULE(SP, rule->cfa.off, MEM, -16);

		return codectl_eval(w, &r, c);
	}
	}
	return CODECTL_STOP_TABLE;
}

/*
 * The register a register table describes (regtab.c), in the caller @c
 * the rule for @pc of @reg gave (its CFA computed): as the table's rule
 * for @pc says, from this frame's value or where this frame saved it.
 * Unknown where @reg has no table or the table no rule: it matters only
 * for a CFA based on that register further up (glibc's lazy-binding
 * trampoline), which is then cut as without tables.  A failed read only
 * makes it unknown.  One flat-table lookup, for objects with a table.
 */
static __always_inline void codectl_xreg_step(const struct codectl_walk *w,
					      const struct codectl_reg *reg,
					      u64 pc, struct codectl_caller *c)
{
	const struct sframe_rule *r;

	if (CODECTL_ARCH_DWARF_XREG < 0 || !reg->xreg_flat)
		return;
	r = sframe_flat_find(reg->xreg_flat, pc);
	if (!r)
		return;
	if (r->fp.kind == SFRAME_LOC_SAME)
		c->xreg_known = !codectl_base_value(w, CODECTL_ARCH_DWARF_XREG,
						    c->cfa, &c->xreg);
	else
		c->xreg_known = !codectl_loc_value(w, &r->fp, c->cfa,
						   &c->xreg);
}

/* An SFrame rule's caller @c (its eval's @ret), @reg's register too. */
static __always_inline int
codectl_sframe_to_caller(struct codectl_walk *w, const struct codectl_reg *reg,
			 u64 pc, struct codectl_caller *c, int ret)
{
	if (ret)
		return ret;
	codectl_xreg_step(w, reg, pc, c);
	return codectl_to_caller(w, c, CODECTL_FRAME_SFRAME);
}

static __always_inline int
codectl_step_sframe(struct codectl_walk *w, const struct codectl_reg *reg,
		    u64 pc)
{
	const struct sframe_rule *rule;
	struct sframe_rule decoded;
	struct codectl_caller c;
	int ret;

	if (reg->sframe_flat) {
		/*
		 * Built at registration: one binary search, nothing read,
		 * and none for the pc of the previous lookup.
		 */
		if (pc != w->rc_pc || reg != w->rc_reg) {
			w->rc_rule = sframe_flat_find(reg->sframe_flat, pc);
			w->rc_shape = codectl_rule_shape(w->rc_rule);
			w->rc_pc = pc;
			w->rc_reg = reg;
		}
		rule = w->rc_rule;
		if (w->rc_shape != CODECTL_SHAPE_ANY) {
			return codectl_sframe_to_caller(w, reg, pc, &c,
							codectl_eval_shape(w, &c));
		}
		if (!rule)
			return STEP_NO_RULE;
	} else {
		ret = codectl_sframe_decode(w, reg, pc, &decoded);
		if (ret)
			return ret;
		rule = &decoded;
	}
	if (rule->flags & SFRAME_RULE_SIGNAL)
		return codectl_step_signal(w);
	if (rule->flags & SFRAME_RULE_OUTERMOST ||
	    rule->ra.kind == SFRAME_LOC_UNDEF)
		return CODECTL_STOP_OUTERMOST;
	return codectl_sframe_to_caller(w, reg, pc, &c,
					codectl_eval(w, rule, &c));
}

/* ---- JIT tables ------------------------------------------------------ */

/* Read entry @i of a table: the known part, the rest of ours zeroed. */
static int codectl_jit_entry(struct codectl_walk *w, u64 fres,
			     const struct codectl_jit_unwind_table *tab,
			     u64 i, struct codectl_jit_unwind_fre *e)
{
	size_t len = min_t(size_t, tab->fre_size, sizeof(*e));

	if (codectl_spend(w, 1))
		return CODECTL_STOP_BUDGET;
	memset(e, 0, sizeof(*e));
	if (codectl_copy(w, e, fres + i * tab->fre_stride, len))
		return CODECTL_STOP_FAULT;
	/* Reserved bytes set: not an entry of this ABI. */
	if (e->__pad[0] | e->__pad[1] | e->__pad[2])
		return CODECTL_STOP_TABLE;
	return STEP_OK;
}

/*
 * Read a JIT table's header.  used_len, which user space publishes with
 * a 64-bit store-release, is read first with one aligned 8-byte load (a
 * bulk copy may tear it), then the rest of the header and the entries it
 * covers: acquire.
 */
static int codectl_jit_header(struct codectl_walk *w, u64 head,
			      struct codectl_jit_unwind_table *tab)
{
	u64 used;
	int ret;

	ret = codectl_spend(w, 1);
	if (!ret)
		ret = codectl_read_u64(w, head + offsetof(typeof(*tab),
							  used_len), &used);
	if (ret)
		return ret;
	/* Pairs with user space's store-release of used_len: acquire. */
	smp_rmb();
	if (codectl_copy(w, tab, head, sizeof(*tab)))
		return CODECTL_STOP_FAULT;
	tab->used_len = used;
	return codectl_jit_table_ok(tab) ? STEP_OK : CODECTL_STOP_TABLE;
}

/*
 * Find the entry covering offset @off of a JIT region.  Only entries below
 * each table's used_len, read with acquire ordering, are looked at; an
 * entry order that does not hold (the table changed under us) ends the
 * walk.  At most CODECTL_JIT_MAX_TABLES tables, within the walk's budget.
 */
static int codectl_jit_find(struct codectl_walk *w,
			    const struct codectl_reg *reg, u64 off,
			    struct codectl_jit_unwind_fre *e)
{
	struct codectl_jit_unwind_table tab;
	u64 head = reg->unwind_head;
	unsigned int t;

	for (t = 0; head && t < CODECTL_JIT_MAX_TABLES; t++) {
		u64 fres = head + sizeof(tab), lo = 0, hi, n;
		int ret;

		ret = codectl_jit_header(w, head, &tab);
		if (ret)
			return ret;
		n = div_u64(tab.used_len, tab.fre_stride);
		hi = n;
		while (lo < hi) {
			u64 mid = lo + (hi - lo) / 2;

			ret = codectl_jit_entry(w, fres, &tab, mid, e);
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
			ret = codectl_jit_entry(w, fres, &tab, n - 1, e);
			if (ret)
				return ret;
			if (off < (u64)e->ip_off + e->size)
				return STEP_NO_RULE;
		}
		head = tab.next;
	}
	return head ? CODECTL_STOP_BUDGET : STEP_NO_RULE;
}

static int codectl_step_jit(struct codectl_walk *w,
			    const struct codectl_reg *reg, u64 pc)
{
	struct codectl_jit_unwind_fre e;
	struct sframe_rule rule = { };
	int ret;

	ret = codectl_jit_find(w, reg, pc - reg->text_start, &e);
	if (ret)
		return ret;
	if (e.info & CODECTL_JIT_FRE_OUTERMOST)
		return CODECTL_STOP_OUTERMOST;
	rule.cfa = (struct sframe_loc) {
		SFRAME_LOC_VAL,
		e.info & CODECTL_JIT_FRE_CFA_BASE_FP ? SFRAME_BASE_FP :
						       SFRAME_BASE_SP,
		e.cfa_off,
	};
	rule.ra = (struct sframe_loc) {
		SFRAME_LOC_MEM, SFRAME_BASE_CFA, e.ra_off
	};
	if (e.info & CODECTL_JIT_FRE_FP_SAVED)
		rule.fp = (struct sframe_loc) {
			SFRAME_LOC_MEM, SFRAME_BASE_CFA, e.fp_off
		};
	return codectl_apply(w, &rule, CODECTL_FRAME_JIT);
}

/* ---- frame pointers -------------------------------------------------- */

/*
 * Is @addr in code?  First what is known without locks (NMI): registered,
 * discovered and imported ranges (the walk's snapshot), the executable's
 * text (which exec recorded in the mm), and the executable mappings
 * discovery examined in vain (its negative entries).  That covers every
 * executable file mapping once discovery has swept the address space.
 * Then the page tables, also lock-free: a present page the CPU would
 * execute is code whatever maps it (JIT code in anonymous memory, an
 * object not examined yet).  Walks that may fault (task context) also
 * look up the mapping, under the mmap lock, for a page not resident; the
 * others never take it.
 */
static bool codectl_in_code(const struct codectl_walk *w, u64 addr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct codectl_mm *cmm;
	bool exec;

	if (!codectl_user_addr(addr))
		return false;
	if (w->set && codectl_set_find(w->set, addr))
		return true;
	if (addr >= READ_ONCE(mm->start_code) &&
	    addr < READ_ONCE(mm->end_code))
		return true;
	cmm = codectl_mm_find(mm);
	if (cmm && codectl_mm_negative(cmm, addr))
		return true;
	if (codectl_user_page(mm, addr) & CODECTL_PAGE_EXEC)
		return true;
	if (w->nofault)
		return false;
	if (mmap_read_lock_killable(mm))
		return false;
	vma = find_vma(mm, addr);
	exec = vma && vma->vm_start <= addr && (vma->vm_flags & VM_EXEC);
	mmap_read_unlock(mm);
	return exec;
}

/*
 * codectl_in_code(), asking discovery to examine a mapping at @addr when
 * it is not (an executable mapping it has not seen yet: anonymous code,
 * the vDSO, an object mapped since the sweep).  Lock-free.
 */
static bool codectl_code_or_ask(const struct codectl_walk *w, u64 addr)
{
	if (codectl_in_code(w, addr))
		return true;
	codectl_discover_request(addr);
	return false;
}

/* The call before @ra, without asking whether it is code. */
static int codectl_after_call(const struct codectl_walk *w, u64 ra)
{
	u8 b[8];

	if (codectl_copy(w, b, ra - sizeof(b), sizeof(b)))
		return CODECTL_STOP_FAULT;
	return codectl_arch_call_before(b) ? STEP_OK : CODECTL_STOP_NOT_CODE;
}

/*
 * Is @ra a return address?  Its call's last byte must be code, and the
 * call right before it (codectl_arch_call_before()).  (The bytes alone
 * are not enough: stack data can look like a call.)  Returns 0,
 * CODECTL_STOP_NOT_CODE, or CODECTL_STOP_FAULT when the code cannot be
 * read (not resident, in the hooks' walks).
 */
static int codectl_check_ra_code(const struct codectl_walk *w, u64 ra)
{
	if (ra <= 8 || !codectl_code_or_ask(w, ra - 1))
		return CODECTL_STOP_NOT_CODE;
	return codectl_after_call(w, ra);
}

/* The same, once per distinct return address in a row of a walk. */
static __always_inline int codectl_check_ra(struct codectl_walk *w, u64 ra)
{
	int ret;

	if (ra == w->ok_ra)
		return STEP_OK;
	ret = codectl_check_ra_code(w, ra);
	if (!ret)
		w->ok_ra = ra;
	return ret;
}

/*
 * Is @ip the sa_restorer of one of the task's signal handlers, or the
 * kernel's trampoline (arch-*.h)?
 */
static bool codectl_is_restorer(struct codectl_walk *w, u64 ip)
{
	int i;

	if (codectl_arch_vdso_sigtramp(ip))
		return true;
	if (w->nr_restorers < 0)
		codectl_walk_restorers(w);
	for (i = 0; i < w->nr_restorers; i++)
		if (ip == w->restorers[i])
			return true;
	return false;
}

/*
 * A return address that no call precedes, in a frame record of JIT code:
 * HotSpot's interpreter pushes the address of its return entry and jumps
 * to the method it invokes, so every frame an interpreted method called
 * returns there.  Taken from a frame-pointer step only, when the address
 * is in an executable page of anonymous memory (a code cache, not a
 * file), and when the frame pointer that came with it carries the chain
 * on: zero, or aligned and not below the caller's stack pointer.  A
 * function pointer stored in data is not in such memory in C programs,
 * and a wrong frame pointer in native code rarely leads to one.
 */
static bool codectl_pushed_ra(const struct codectl_walk *w)
{
	const unsigned int jit = CODECTL_PAGE_EXEC | CODECTL_PAGE_ANON;

	if (w->method != CODECTL_FRAME_FP ||
	    (codectl_user_page(current->mm, w->f.ip) & jit) != jit)
		return false;
	return !w->f.fp || (!(w->f.fp & 7) && w->f.fp >= w->f.sp);
}

/*
 * May the walk give the frame it just found?  Its pc must be code: where a
 * signal interrupted it, a handler's sa_restorer (which no call precedes:
 * the kernel put its address there as the handler's return address), or
 * a return address after a call.  Lock-free and without faults in the
 * hooks' walks.
 */
static int codectl_check_caller(struct codectl_walk *w)
{
	int ret;

	if (w->method == CODECTL_FRAME_SIGNAL ||
	    codectl_is_restorer(w, w->f.ip))
		return codectl_code_or_ask(w, w->f.ip) ? STEP_OK :
							 CODECTL_STOP_NOT_CODE;
	ret = codectl_check_ra(w, w->f.ip);
	if (!ret)
		w->rep_ra = w->f.ip;
	else if (ret == CODECTL_STOP_NOT_CODE && codectl_pushed_ra(w))
		ret = STEP_OK;
	return ret;
}

/*
 * The innermost frame where the function has no frame of its own yet,
 * as codectl_arch_entry_kind() tells from the code around the pc: at its
 * first instruction, in a PLT entry (libraries' and programs' PLTs have
 * no unwind rules SFrame can express), and on x86-64 right after the
 * push of rbp or in a leaf system call wrapper.  The return address
 * this guesses must follow a call in code.
 */
static int codectl_step_entry(struct codectl_walk *w)
{
	const struct sframe_rule *rule;
	struct codectl_caller c;
	u64 ip = w->f.ip;
	/* One window: the bytes before the pc, then those from it on. */
	u8 buf[CODECTL_ARCH_ENTRY_BEFORE + CODECTL_ARCH_ENTRY_AFTER];
	u8 *prev = buf, *code = buf + CODECTL_ARCH_ENTRY_BEFORE;

	/* The code may end within the window: then its first 4 bytes. */
	if (codectl_copy(w, code, ip, CODECTL_ARCH_ENTRY_AFTER)) {
		memset(code, 0, CODECTL_ARCH_ENTRY_AFTER);
		if (codectl_copy(w, code, ip, 4))
			return STEP_NO_RULE;
	}
	if (codectl_copy(w, prev, ip - CODECTL_ARCH_ENTRY_BEFORE,
			 CODECTL_ARCH_ENTRY_BEFORE))
		memset(prev, 0, CODECTL_ARCH_ENTRY_BEFORE);
	switch (codectl_arch_entry_kind(code, prev)) {
	case CODECTL_ARCH_ENTRY:
		rule = &codectl_rule_entry;
		break;
	case CODECTL_ARCH_PUSHED:
		rule = &codectl_rule_pushed;
		break;
	default:
		return STEP_NO_RULE;
	}
	if (codectl_eval(w, rule, &c) || codectl_check_ra(w, c.ra))
		return STEP_NO_RULE;
	return codectl_to_caller(w, &c, CODECTL_FRAME_FP_ENTRY);
}

/* Has @pc a rule in the SFrame section of the registration covering it? */
static bool codectl_has_rule(struct codectl_walk *w, u64 pc)
{
	const struct codectl_reg *reg;
	struct sframe_rule buf;

	if (!w->set || (w->flags & CODECTL_UNWIND_NO_SFRAME))
		return false;
	reg = codectl_set_find(w->set, pc);
	if (!reg || !reg->sframe_start)
		return false;
	if (reg->sframe_flat)
		return sframe_flat_find(reg->sframe_flat, pc);
	return codectl_sframe_decode(w, reg, pc, &buf) == STEP_OK;
}

/*
 * Words above the stack pointer where a function that saved the return
 * address register may have put it (a frame record pushed by stp x29,
 * x30, [sp, #-N]! is at sp), in codectl_step_leaf().
 */
#define CODECTL_LEAF_SCAN	8

/*
 * The innermost frame, or one a signal interrupted, in a leaf without
 * rules (arm64, arch-*.h: CODECTL_ARCH_LR_LEAF): an object without SFrame
 * (Debian's libc: its memcpy, memmove) called from code that has it.  The
 * return address is in the link register and the stack pointer is the
 * caller's, CODECTL_ARCH_RULE_ENTRY, where the frame pointer's chain
 * would skip the caller (code without frame records leaves x29 as libc's
 * record of __libc_start_main).  Taken only where that is what the
 * registers say: the link register is a return address after a call (a
 * function that has called since its entry has one of itself there, and
 * it has no rule) into code with an SFrame rule, and the function has not
 * saved it: it is neither above x29 nor in the first words above sp,
 * where a prologue that moved sp puts it.  Bounded: a lookup and nine
 * reads.
 */
static int codectl_step_leaf(struct codectl_walk *w)
{
	const struct codectl_uframe *f = &w->f;
	struct codectl_caller c;
	u64 lr, v;
	int i;

	if (!CODECTL_ARCH_LR_LEAF || w->flags & CODECTL_UNWIND_NO_SFRAME)
		return STEP_NO_RULE;
	if (codectl_eval(w, &codectl_rule_entry, &c) ||
	    codectl_loc_value(w, &codectl_rule_entry.ra, c.cfa, &lr) ||
	    c.ra <= 8 || !codectl_has_rule(w, c.ra - 1))
		return STEP_NO_RULE;
	if (f->fp >= f->sp && !codectl_read_u64(w, f->fp + 8, &v) && v == lr)
		return STEP_NO_RULE;
	for (i = 0; i < CODECTL_LEAF_SCAN; i++)
		if (!codectl_read_u64(w, f->sp + 8 * i, &v) && v == lr)
			return STEP_NO_RULE;
	if (codectl_check_ra(w, c.ra))
		return STEP_NO_RULE;
	return codectl_to_caller(w, &c, CODECTL_FRAME_FP_ENTRY);
}

/*
 * No table covers the pc: follow the frame pointer.  Code built without
 * frame pointers uses rbp for anything (a heap or stack address, a
 * count), so a frame pointer that cannot be one ends the walk as a pc
 * without a rule, and one that can is followed only to a caller that
 * passes codectl_check_caller().  A zero frame pointer is the top of a
 * thread only where a callee saved it (the innermost frame's rbp, or a
 * signal-interrupted frame's, may be anything).
 */
static int codectl_step_fp(struct codectl_walk *w)
{
	const struct codectl_uframe *f = &w->f;
	int ret;

	if (!f->fp)
		return f->fp_saved ? CODECTL_STOP_END : CODECTL_STOP_NO_RULE;
	if ((f->fp & 7) || f->fp < f->sp)
		return CODECTL_STOP_NO_RULE;
	ret = codectl_apply(w, &codectl_rule_fp, CODECTL_FRAME_FP);
	return ret == CODECTL_STOP_SP ? CODECTL_STOP_NO_RULE : ret;
}

/*
 * Without a table's rule: the entry heuristic, a leaf's link register
 * (arm64), then the frame pointer.
 */
static int codectl_step_no_table(struct codectl_walk *w)
{
	if (w->flags & CODECTL_UNWIND_NO_FP)
		return CODECTL_STOP_NO_RULE;
	if (w->f.exact && (codectl_step_entry(w) == STEP_OK ||
			   codectl_step_leaf(w) == STEP_OK))
		return STEP_OK;
	return codectl_step_fp(w);
}

/* ---- the walk -------------------------------------------------------- */

/* From the current frame to its caller. */
static __always_inline int codectl_step(struct codectl_walk *w)
{
	u64 pc = w->f.exact ? w->f.ip : w->f.ip - 1;
	const struct codectl_reg *reg = NULL;
	int ret = STEP_NO_RULE;

	/*
	 * A return address met before in this walk (a recursion's), whose
	 * rule the last flat-table lookup gave: no signal trampoline
	 * (@w->rep_ra is none), its registration the last one (the lookup's,
	 * whose text holds the pc), with SFrame (so not stale) and not left
	 * out (else there had been no lookup).  What the steps below would
	 * find, without asking.  Not when that lookup found no rule: the
	 * steps below then step without the table, where this would end
	 * the walk with STEP_NO_RULE, which is no stop reason.
	 */
	if (pc == w->rc_pc && w->rc_reg && w->rc_reg == w->last &&
	    w->rc_rule && !w->f.exact && w->f.ip == w->rep_ra) {
		w->by_table = true;
		return codectl_step_sframe(w, w->rc_reg, pc);
	}
	w->by_table = false;
	/*
	 * A handler's sa_restorer with the sigreturn code is a signal frame
	 * whatever tables say: v1 and v2 cannot mark one, and a trampoline
	 * with ordinary CFI gets an ordinary FDE there.
	 */
	if (codectl_at_sigreturn(w))
		return codectl_step_signal(w);
	/* Callers are often in the same object: try its range first. */
	if (w->last && pc >= w->last->text_start && pc < w->last->text_end)
		reg = w->last;
	else if (w->set)
		reg = codectl_set_find(w->set, pc);
	w->last = reg;
	if (!reg || unlikely(codectl_reg_stale(reg)))
		codectl_discover_request(pc);
	if (reg && reg->sframe_start && !(w->flags & CODECTL_UNWIND_NO_SFRAME))
		ret = codectl_step_sframe(w, reg, pc);
	else if (reg && reg->kind == CODECTL_KIND_JIT &&
		 !(w->flags & CODECTL_UNWIND_NO_JIT))
		ret = codectl_step_jit(w, reg, pc);
	if (ret != STEP_NO_RULE) {
		w->by_table = true;
		return ret;
	}
	return codectl_step_no_table(w);
}

/*
 * A scheduling point in a walk under rcu_read_lock() in task context (the
 * ioctl's CODECTL_UNWIND_NOFAULT walk): the registrations read under the
 * lock are let go and read again afterwards.
 */
static void codectl_walk_resched(struct codectl_walk *w)
	__must_hold(RCU)
{
	unsigned int i;

	rcu_read_unlock();
	cond_resched();
	rcu_read_lock();
	w->set = codectl_mm_set_rcu(current->mm);
	w->last = NULL;
	w->rc_reg = NULL;
	for (i = 0; i < ARRAY_SIZE(w->cache); i++)
		w->cache[i].reg = NULL;
}

/**
 * codectl_walk_start() - begin a walk of the current task's user stack
 * @w:		the walk
 * @regs:	the task's user registers (frame 0 is their pc)
 * @flags:	CODECTL_UNWIND_NO_* methods to leave out
 * @nofault:	never fault or sleep: for NMI, IRQ, interrupts or page faults
 *		off.  The caller then holds rcu_read_lock() from here to
 *		codectl_walk_end(), under which the registrations are read;
 *		else the walk takes a reference to them and may sleep
 *
 * Lock-free and allocation-free in @nofault mode.  On return @w->f is
 * frame 0, or @w->stop says why there is none (CODECTL_STOP_NO_USER: a
 * kernel thread, an exiting task, no user registers; NOT_CODE: in an
 * exec, between the new mm and the new registers, the pc is not in code).
 */
void codectl_walk_start(struct codectl_walk *w, const struct pt_regs *regs,
			unsigned int flags, bool nofault)
{
	/* user_mode() and codectl_arch_native() only read, but take no const. */
	struct pt_regs *r = (struct pt_regs *)regs;

	w->t0 = ktime_get_mono_fast_ns();
	w->stop = 0;
	w->nofault = nofault;
	w->uaccess_ok = false;
	w->flags = flags;
	w->set = NULL;
	w->last = NULL;
	w->nr_restorers = -1;
	w->rc_reg = NULL;
	w->rc_pc = 0;
	w->rc_rule = NULL;
	w->rc_shape = CODECTL_SHAPE_ANY;
	w->ok_ra = 0;
	w->rep_ra = 0;
	w->next = 0;
	w->cache[0].reg = NULL;
	w->cache[1].reg = NULL;
	memset(w->frames, 0, sizeof(w->frames));
	w->fallbacks = 0;
	w->budget = CODECTL_WALK_BUDGET;
	if ((current->flags & (PF_KTHREAD | PF_EXITING)) || !current->mm ||
	    !r || !user_mode(r)) {
		w->stop = CODECTL_STOP_NO_USER;
		return;
	}
	w->f = (struct codectl_uframe) {
		.ip = instruction_pointer(r), .sp = user_stack_pointer(r),
		.fp = codectl_arch_user_fp(r), .regs = r, .exact = true,
		.fp_saved = false,
	};
	w->method = CODECTL_FRAME_REGS;
	w->frames[CODECTL_FRAME_REGS]++;
	/* 32-bit code: its pc, and no unwinder for it. */
	w->only_pc = !codectl_arch_native(r);
	if (w->only_pc)
		return;
	if (nofault) {
		u64 top;

		w->set = codectl_mm_set_rcu(current->mm);
		/* One checked read: the inline accessors for the rest. */
		w->uaccess_ok = !copy_from_user_nofault(&top,
				u64_to_user_ptr(r->sp & ~7ULL), sizeof(top));
	} else {
		w->set = codectl_mm_snapshot(current->mm);
	}
	/*
	 * Frame 0 is where the task entered the kernel: code, except during
	 * an exec, when the registers are still the old program's while the
	 * mm is the new one.  Then it is checked as callers are.  (Not at
	 * other times: a process nothing is registered for knows only its
	 * executable's text as code, and its leaf in a library would go.)
	 */
	if (current->in_execve && READ_ONCE(codectl_check_callers) &&
	    !codectl_code_or_ask(w, w->f.ip)) {
		w->frames[CODECTL_FRAME_REGS] = 0;
		w->stop = CODECTL_STOP_NOT_CODE;
	}
}

/* Whether the caller a step found (@ret 0) may be given. */
static __always_inline int codectl_verdict(struct codectl_walk *w, int ret)
{
	if (!ret && !w->f.ip)
		ret = CODECTL_STOP_END;
	if (!ret && !codectl_user_addr(w->f.ip))
		ret = CODECTL_STOP_NOT_CODE;
	/*
	 * The entry heuristic checked its return address already, and
	 * codectl_check_caller() the last return address it passed.
	 */
	if (!ret && w->method != CODECTL_FRAME_FP_ENTRY &&
	    (w->f.ip != w->rep_ra || w->method == CODECTL_FRAME_SIGNAL) &&
	    READ_ONCE(codectl_check_callers))
		ret = codectl_check_caller(w);
	return ret;
}

/*
 * The repeated step from a frame that has all codectl_walk_repeat() asks
 * for (its pc the return address, the last rule and registration, not
 * exact): the caller is the same pc again, so only the stack and frame
 * pointers move.
 */
static __always_inline bool codectl_walk_repeat_again(struct codectl_walk *w,
						      struct codectl_caller *c)
{
	if (codectl_eval_shape(w, c) || c->ra != w->f.ip ||
	    !codectl_arch_cfa_ok(c->cfa, w->f.sp, false))
		return false;
	w->f.sp = c->cfa;
	w->f.fp = c->fp;
	w->f.fp_saved = c->fp_saved;
	w->frames[CODECTL_FRAME_SFRAME]++;
	return true;
}

/*
 * A recursion's repeated frame whose caller is the same return address
 * again: codectl_step()'s first case and the verdict it then gets
 * (codectl_verdict(): @w->rep_ra passed the caller check), without the
 * full step's frame and what its fallback keeps, so that a deep
 * recursion's frames cost about what the frame-pointer walk's do.  True
 * when the step was made; else @w is untouched and the full step makes
 * it.
 */
static __always_inline bool codectl_walk_repeat(struct codectl_walk *w)
{
	struct codectl_caller c;

	if (w->only_pc || w->f.exact || w->f.ip != w->rep_ra ||
	    w->f.ip - 1 != w->rc_pc || !w->rc_reg || w->rc_reg != w->last ||
	    w->rc_shape == CODECTL_SHAPE_ANY)
		return false;
	if (!codectl_walk_repeat_again(w, &c))
		return false;
	/* The pc stays: it is the return address found again. */
	w->f.sigctx = 0;
	w->f.regs = NULL;
	w->method = CODECTL_FRAME_SFRAME;
	return true;
}

/**
 * codectl_walk_repeats() - a recursion's repeated frames, in a row
 * @w:		a walk whose @w->stop is 0
 * @ips:	where to store the pc of each frame found
 * @max:	find at most this many
 *
 * The frames codectl_walk_next() would find one by one while the caller
 * of the current frame is the current frame's own pc again, by the same
 * rule (a recursion): each step checks only what moves, the stack and
 * frame pointers.  Stops before any other step, which codectl_walk_next()
 * then makes.  A faultable walk's caller bounds @max by its next
 * scheduling point.
 *
 * Return: the frames found, their pcs in @ips; @w->f is the last.
 */
unsigned int codectl_walk_repeats(struct codectl_walk *w, u64 *ips,
				  unsigned int max)
{
	/* Out of the loop: its initialisation (INIT_STACK_ALL_ZERO) too. */
	struct codectl_caller c;
	unsigned int n = 0;

	if (!max || !codectl_walk_repeat(w))
		return 0;
	do
		ips[n++] = w->f.ip;
	while (n < max && codectl_walk_repeat_again(w, &c));
	return n;
}

/* Any step: codectl_walk_next()'s. */
static noinline void codectl_walk_step(struct codectl_walk *w)
{
	/* What a step changes (codectl_to_caller()), for the fallback. */
	const u64 ip = w->f.ip, sp = w->f.sp, fp = w->f.fp, xreg = w->f.xreg;
	const bool fp_saved = w->f.fp_saved, xreg_known = w->f.xreg_known;
	const unsigned int method = w->method;
	int ret;

	if (w->only_pc) {
		w->stop = CODECTL_STOP_TABLE;
		return;
	}
	ret = codectl_verdict(w, codectl_step(w));
	/*
	 * A table's rule that proved wrong: its caller is not code, or its
	 * CFA is not above the stack pointer, misaligned or unreadable
	 * (the table is wrong for this pc: a compiler's or a synthesis's
	 * error, or a table of other bytes than those mapped now; or a JIT
	 * table's page not resident).  The step is made again from the same
	 * frame without it, by the frame pointer as the kernel's own walk
	 * makes it (upstream's unwinder falls back from SFrame to frame
	 * pointers likewise), so that no walk gives fewer frames than that
	 * one.  The table's verdict stands if that finds no caller either.
	 */
	if (w->by_table &&
	    (ret == CODECTL_STOP_NOT_CODE || ret == CODECTL_STOP_SP ||
	     ret == CODECTL_STOP_ALIGN || ret == CODECTL_STOP_FAULT)) {
		w->f.ip = ip;
		w->f.sp = sp;
		w->f.fp = fp;
		w->f.fp_saved = fp_saved;
		w->f.xreg = xreg;
		w->f.xreg_known = xreg_known;
		w->method = method;
		if (!codectl_verdict(w, codectl_step_no_table(w))) {
			w->fallbacks++;
			ret = STEP_OK;
		}
	}
	if (ret) {
		w->stop = ret;
		return;
	}
	if (w->method != CODECTL_FRAME_SIGNAL) {
		w->f.exact = false;
		w->f.sigctx = 0;
	}
	w->f.regs = NULL;
	w->frames[w->method]++;
}

/**
 * codectl_walk_next() - step to the caller of the current frame
 * @w:		a walk whose @w->stop is 0
 *
 * On return @w->f is the caller and @w->method how it was found, or
 * @w->stop says why the walk ended.
 */
void codectl_walk_next(struct codectl_walk *w)
{
	if (codectl_walk_repeat(w))
		return;
	codectl_walk_step(w);
}

/**
 * codectl_walk_end() - finish a walk and count it
 * @w:		the walk; a walk still running was stopped by its consumer,
 *		which had no room: CODECTL_STOP_DEPTH
 * @c:		the counters to add it to
 */
void codectl_walk_end(struct codectl_walk *w, struct codectl_walk_counters *c)
{
	unsigned int i;

	if (!w->stop)
		w->stop = CODECTL_STOP_DEPTH;
	if (!w->nofault)
		codectl_set_put(w->set);
	w->set = NULL;
	atomic64_inc(&c->walks);
	atomic64_inc(&c->stops[w->stop]);
	for (i = 0; i < ARRAY_SIZE(w->frames); i++)
		if (w->frames[i])
			atomic64_add(w->frames[i], &c->frames[i]);
	if (w->fallbacks)
		atomic64_add(w->fallbacks, &c->fallbacks);
	atomic64_add(ktime_get_mono_fast_ns() - w->t0, &c->ns);
}

/**
 * codectl_walk_reference() - how far the kernel's frame-pointer walk gets
 * @w:		a walk begun by codectl_walk_start() on @regs and not ended:
 *		its read mode and registrations are used, its frame is not
 * @regs:	the user registers it began with
 * @max:	count no further than this
 *
 * The no-harm check (the hooks' module parameter check_harm): the walk
 * the kernel makes without codectl (perf_callchain_user(), unwind_user()'s
 * frame-pointer step: the pc, then the return address above each saved
 * frame pointer, up the stack, an aligned frame pointer) as far as its
 * frames are right: up to the first return address that is not in an
 * executable page (the page tables, not what codectl knows of code) right
 * after a call.  codectl's own walk must give at least as many frames.
 * Lock-free in @w's nofault mode.
 *
 * Return: the frames of that valid prefix, frame 0 included, at most @max.
 */
unsigned int codectl_walk_reference(struct codectl_walk *w,
				    const struct pt_regs *regs,
				    unsigned int max)
{
	struct codectl_uframe f = w->f;
	unsigned int method = w->method;
	struct codectl_caller c;
	unsigned int n = 1;

	if (w->only_pc || w->stop == CODECTL_STOP_NO_USER)
		return 0;
	w->f = (struct codectl_uframe) {
		.sp = user_stack_pointer((struct pt_regs *)regs),
		.fp = codectl_arch_user_fp(regs),
	};
	while (n < max) {
		if (!w->f.fp || (w->f.fp & 7) ||
		    codectl_eval(w, &codectl_rule_fp, &c) ||
		    codectl_to_caller(w, &c, CODECTL_FRAME_FP) ||
		    !codectl_user_addr(c.ra) || c.ra <= 8 ||
		    !(codectl_user_page(current->mm, c.ra - 1) &
		      CODECTL_PAGE_EXEC) ||
		    codectl_after_call(w, c.ra))
			break;
		n++;
	}
	w->f = f;
	w->method = method;
	return n;
}

static void codectl_unwind_trace(struct codectl_trace *t, unsigned int flags,
				 bool nofault)
{
	struct codectl_walk w;

	t->nr = 0;
	codectl_walk_start(&w, task_pt_regs(current), flags, nofault);
	while (!w.stop) {
		t->ips[t->nr] = w.f.ip;
		t->methods[t->nr] = w.method;
		if (++t->nr == t->max)
			break;
		if (!(t->nr % CODECTL_WALK_RESCHED_FRAMES)) {
			if (nofault)
				codectl_walk_resched(&w);
			else
				cond_resched();
		}
		codectl_walk_next(&w);
	}
	codectl_walk_end(&w, &codectl_unwind_counters.walk);
	t->stop = w.stop;
}

/**
 * codectl_unwind_current() - unwind the current task's user stack
 * @t:		the arrays to fill (@t->max >= 1); gets nr and stop
 * @flags:	CODECTL_UNWIND_NO_* methods to leave out, and
 *		CODECTL_UNWIND_NOFAULT for the tracer hooks' walk
 *
 * The stack is the one the task had when it entered the kernel (its user
 * registers).  Task context only: reads user memory and may sleep, unless
 * CODECTL_UNWIND_NOFAULT.
 */
void codectl_unwind_current(struct codectl_trace *t, unsigned int flags)
{
	if (flags & CODECTL_UNWIND_NOFAULT) {
		/* Let go at a scheduling point every few frames. */
		rcu_read_lock();
		codectl_unwind_trace(t, flags, true);
		rcu_read_unlock();
	} else {
		codectl_unwind_trace(t, flags, false);
	}
}

/* ---- ioctls and debugfs ---------------------------------------------- */

static long codectl_unwind_self(struct codectl_unwind_args __user *uargs,
				size_t usize, unsigned int flags_all)
{
	struct codectl_unwind_args args;
	struct codectl_trace t = { };
	unsigned int i, iterations;
	long ret = 0;
	u64 ns = 0;

	ret = copy_struct_from_user(&args, sizeof(args), uargs, usize);
	if (ret)
		return ret;
	if (!args.max_frames || args.max_frames > CODECTL_UNWIND_MAX_FRAMES ||
	    args.flags & ~flags_all || args.__reserved)
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
	    codectl_copy_out(uargs, usize, &args, sizeof(args)))
		ret = -EFAULT;
out:
	kvfree(t.ips);
	kvfree(t.methods);
	return ret;
}

/* Names of CODECTL_FRAME_* and CODECTL_STOP_* in debugfs. */
const char * const codectl_frame_names[8] = CODECTL_FRAME_NAMES;
const char * const codectl_stop_names[16] = CODECTL_STOP_NAMES;

static void codectl_unwind_stats_get(struct codectl_unwind_stats *s)
{
	struct codectl_unwind_counters *c = &codectl_unwind_counters;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->unwinds = atomic64_read(&c->walk.walks);
	for (i = 0; i < ARRAY_SIZE(s->frames); i++)
		s->frames[i] = atomic64_read(&c->walk.frames[i]);
	for (i = 0; i < ARRAY_SIZE(s->stops); i++)
		s->stops[i] = atomic64_read(&c->walk.stops[i]);
	s->requests = atomic64_read(&c->requests);
	s->callbacks = atomic64_read(&c->callbacks);
}

/**
 * codectl_unwind_ioctl() - CODECTL_IOC_UNWIND
 * @file:	the open device
 * @cmd:	the ioctl, of any size ioctl.c accepts
 * @arg:	user pointer to its argument
 *
 * Return: 0 or a negative errno, as documented in uapi/linux/codectl.h.
 */
long codectl_unwind_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	return codectl_unwind_self((void __user *)arg, _IOC_SIZE(cmd),
				   CODECTL_UNWIND_FLAGS_ALL);
}

/**
 * codectl_test_unwind() - CODECTL_IOC_UNWIND for the test module, with
 *	CODECTL_UNWIND_NOFAULT: the tracer hooks' walk in the caller's context
 * @uargs:	the caller's struct codectl_unwind_args
 * @usize:	its size as the caller knows it
 *
 * Context: task context.
 * Return: 0 or a negative errno, as for CODECTL_IOC_UNWIND.
 */
long codectl_test_unwind(void __user *uargs, size_t usize)
{
	return codectl_unwind_self(uargs, usize,
				   CODECTL_UNWIND_FLAGS_ALL |
				   CODECTL_UNWIND_NOFAULT);
}

CODECTL_EXPORT_TEST(codectl_test_unwind);

/**
 * codectl_unwind_stats_ioctl() - CODECTL_IOC_UNWIND_STATS
 * @ustats:	the caller's struct codectl_unwind_stats
 * @usize:	its size as the caller knows it
 *
 * Return: 0 or -EFAULT.
 */
long codectl_unwind_stats_ioctl(void __user *ustats, size_t usize)
{
	struct codectl_unwind_stats s;

	codectl_unwind_stats_get(&s);
	return codectl_copy_out(ustats, usize, &s, sizeof(s));
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
	struct codectl_unwind_stats s;
	unsigned int i;

	codectl_unwind_stats_get(&s);
	seq_printf(m, "unwinds %llu\nrequests %llu\ncallbacks %llu\n",
		   s.unwinds, s.requests, s.callbacks);
	for (i = 1; i < ARRAY_SIZE(codectl_frame_names); i++)
		if (codectl_frame_names[i])
			seq_printf(m, "frames_%s %llu\n", codectl_frame_names[i],
				   s.frames[i]);
	for (i = 1; i < ARRAY_SIZE(codectl_stop_names); i++)
		if (codectl_stop_names[i])
			seq_printf(m, "stop_%s %llu\n", codectl_stop_names[i],
				   s.stops[i]);
	return 0;
}
