/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One walk of a user stack, shared by everything that unwinds: the
 * ioctls and deferred traces (task context, faulting reads) and the
 * tracer hooks (NMI, IRQ or interrupts off: reads that never fault).
 *
 *	codectl_walk_start(&w, regs, flags, nofault);	(nofault: under RCU)
 *	while (!w.stop) {
 *		if (!store(w.f.ip, w.method))
 *			break;
 *		codectl_walk_next(&w);
 *	}
 *	codectl_walk_end(&w, counters);
 *
 * A consumer with an array may take a recursion's repeated frames in one
 * call after storing a frame: n = codectl_walk_repeats(&w, ips, room)
 * stores the next n frames' pcs and leaves @w at the last of them.
 *
 * Frame 0 is @regs' pc; every later frame passed the caller check (in
 * code, a return address after a call).  A consumer that has no room
 * breaks out; end then records CODECTL_STOP_DEPTH.
 */
#ifndef CODECTL_WALK_H
#define CODECTL_WALK_H

#include <linux/atomic.h>
#include <linux/types.h>

#include "sframe.h"

struct pt_regs;
struct codectl_reg;
struct codectl_set;

/*
 * Frames a walk in task context takes between scheduling points: the
 * ioctls' NOFAULT walk lets go of rcu_read_lock() there, the faultable
 * walks (a deferred delivery's, 7.x's unwind_user() hook when it may
 * fault) call cond_resched().  Those run on the way out to user space,
 * where a kernel without full preemption schedules only at such points:
 * up to 4096 frames must not keep ksoftirqd and RCU's kthreads from the
 * CPU.
 */
#define CODECTL_WALK_RESCHED_FRAMES	16

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
 * @fp_saved:	@fp was read from where a callee saved it, not taken from
 *		the registers of the innermost or a signal-interrupted frame
 *		(which code without frame pointers uses for anything)
 * @xreg:	the value of the register that register tables describe
 *		(x86-64: rbx, CODECTL_ARCH_DWARF_XREG), when @xreg_known
 * @xreg_known:	@xreg was carried from the innermost frame through the
 *		register tables of every frame since (regtab.c); the
 *		innermost and signal-interrupted frames have it in @regs and
 *		@sigctx instead
 */
struct codectl_uframe {
	u64 ip;
	u64 sp;
	u64 fp;
	const struct pt_regs *regs;
	u64 sigctx;
	u64 xreg;
	bool exact;
	bool fp_saved;
	bool xreg_known;
};

/**
 * struct codectl_sec_cache - an SFrame section in user memory, set up for
 *	one walk's reads
 * @reg:	whose section it is, or NULL for an empty slot
 * @walk:	the walk reading it (its read mode and budget)
 * @err:	sframe_init()'s verdict
 * @sec:	the decoder's view, reading through codectl_walk_sframe_read()
 */
struct codectl_sec_cache {
	const struct codectl_reg *reg;
	struct codectl_walk *walk;
	int err;
	struct sframe_sec sec;
};

/**
 * struct codectl_walk - one unwind of the current task's user stack
 * @f:		the current frame
 * @method:	how @f was found (CODECTL_FRAME_*)
 * @stop:	0 while there is a frame in @f, else why the walk ended
 *		(CODECTL_STOP_*)
 * @nofault:	read user memory without faulting, and @set under the
 *		caller's rcu_read_lock() instead of with a reference: NMI,
 *		IRQ, interrupts or page faults off
 * @uaccess_ok:	@nofault and a read checked by copy_from_user_nofault()
 *		worked: user memory is current's, the inline accessors may
 *		read it for the rest of the walk
 * @only_pc:	a 32-bit task: its pc and nothing more
 * @by_table:	the step being made applied a table's rule (SFrame or
 *		JIT), so that codectl_walk_next() may make it again
 *		without the table when the rule proves wrong
 * @flags:	CODECTL_UNWIND_NO_* methods to leave out
 * @set:	the address space's registrations, or NULL
 * @last:	the registration of the previous frame, or NULL
 * @nr_restorers: entries of @restorers, or -1 before they are looked up
 * @restorers:	the distinct signal-return trampolines the task's signal
 *		handlers return to
 * @rc_reg:	the registration of the last flat-table lookup, or NULL
 * @rc_pc:	the pc of that lookup
 * @rc_rule:	its answer (NULL: no rule): deep recursion repeats return
 *		addresses, and a repeated pc skips the search
 * @rc_shape:	@rc_rule's shape (CODECTL_SHAPE_* in unwind.c), so that
 *		the common ones are applied as constants
 * @ok_ra:	the last return address that passed the caller check (0:
 *		none), so that a repeated one is not checked again
 * @rep_ra:	the last caller that passed codectl_check_caller() as a
 *		return address, neither a handler's sa_restorer nor the
 *		kernel's trampoline (0: none): a frame at it is no signal
 *		trampoline, and a caller at it is code (a recursion's
 *		frames skip both questions)
 * @next:	the @cache slot to fill next
 * @cache:	the last registrations' sections decoded in user memory
 * @frames:	frames found, by CODECTL_FRAME_*
 * @fallbacks:	table steps that fell back to frame pointers: an SFrame
 *		section's page unreadable in @nofault mode, or a rule that
 *		proved wrong (codectl_walk_next())
 * @budget:	units of work left in user memory (CODECTL_WALK_BUDGET at
 *		the start): reads of sections and tables, FDEs probed, FREs
 *		scanned, JIT tables and entries read; at 0 the walk ends
 *		with CODECTL_STOP_BUDGET
 * @t0:		when codectl_walk_start() began (ktime_get_mono_fast_ns()),
 *		for the counters' time
 */
struct codectl_walk {
	struct codectl_uframe f;
	unsigned int method;
	unsigned int stop;
	bool nofault;
	bool uaccess_ok;
	bool only_pc;
	bool by_table;
	unsigned int flags;
	struct codectl_set *set;
	const struct codectl_reg *last;
	int nr_restorers;
	u64 restorers[4];
	const struct codectl_reg *rc_reg;
	u64 rc_pc;
	const struct sframe_rule *rc_rule;
	unsigned int rc_shape;
	u64 ok_ra;
	u64 rep_ra;
	unsigned int next;
	struct codectl_sec_cache cache[2];
	u32 frames[8];
	u32 fallbacks;
	u32 budget;
	u64 t0;
};

/**
 * struct codectl_walk_counters - what a family of walks found
 * @walks:	walks ended
 * @frames:	frames, by CODECTL_FRAME_*
 * @stops:	walks, by CODECTL_STOP_*
 * @fallbacks:	table steps that fell back to frame pointers (the
 *		section's page not resident in a non-faulting walk, or a
 *		rule whose caller is not code)
 * @ns:		time the walks took, from codectl_walk_start() to
 *		codectl_walk_end() (ktime_get_mono_fast_ns(): NMI-safe)
 */
struct codectl_walk_counters {
	atomic64_t walks;
	atomic64_t frames[8];
	atomic64_t stops[16];
	atomic64_t fallbacks;
	atomic64_t ns;
};

void codectl_walk_start(struct codectl_walk *w, const struct pt_regs *regs,
			unsigned int flags, bool nofault);
void codectl_walk_next(struct codectl_walk *w);
unsigned int codectl_walk_repeats(struct codectl_walk *w, u64 *ips,
				  unsigned int max);
void codectl_walk_end(struct codectl_walk *w,
		      struct codectl_walk_counters *c);
unsigned int codectl_walk_reference(struct codectl_walk *w,
				    const struct pt_regs *regs,
				    unsigned int max);

#endif /* CODECTL_WALK_H */
