// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user-space unwinding: the consumers' registry, the per-task
 * request state and the task_work that unwinds once per kernel entry and
 * calls every consumer that asked (the contract of upstream's
 * unwind_deferred_*, which no distro kernel exports).  Per-task state is
 * a slot of a pool allocated at load (taskslot.c); only the owner task
 * touches an owned slot, so the races are nesting on one CPU.  A slot's
 * life (free, claimed, requested, delivering, released) and why a
 * request always gets the cookie its callback sees: docs/design.md,
 * "Deferred registry"; the claim protocol: deferred_slot_get().
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/hardirq.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/string.h>
#include <linux/task_work.h>

#include <codectl/unwind_deferred.h>
#include "arch.h"
#include "internal.h"
#include "compat.h"

/* state: one request bit per consumer, then the pool's two bits. */
#define DEFERRED_CONSUMERS	(BITS_PER_LONG - 2)
#define DEFERRED_REQUEST_MASK	(CODECTL_TASKSLOT_QUEUED - 1)

unsigned int codectl_max_frames = 512;
module_param_named(max_frames, codectl_max_frames, uint, 0644);
MODULE_PARM_DESC(max_frames,
		 "Frames per deferred user stack trace (default 512, at most 4096); deeper stacks stop with CODECTL_STOP_DEPTH");

/**
 * struct deferred_slot - the deferred-unwind state of one task
 * @ts:		the owner, the task_work (queued once per requested state)
 *		and the state: request bits, CODECTL_TASKSLOT_QUEUED and
 *		CODECTL_TASKSLOT_RELEASING
 * @cookie:	of the current entry, 0 until the first request
 * @req_ip:	user pc at the request that assigned @cookie
 * @req_sp:	user stack pointer then
 * @delivered:	consumer bits already called back with @cookie
 * @traced:	@trace holds this entry's unwind (owner's task context only)
 * @moved:	the user registers differed from @req_ip/@req_sp at the unwind
 * @trace:	the unwind, into a buffer allocated for the entry's delivery
 *		and freed with the slot
 */
struct deferred_slot {
	struct codectl_taskslot ts;
	atomic64_t cookie;
	unsigned long req_ip;
	unsigned long req_sp;
	atomic_long_t delivered;
	bool traced;
	bool moved;
	struct codectl_trace trace;
};

/* 4096 slots; lookups and claims scan a window of 64 of them. */
static struct codectl_taskslot_pool deferred_slots =
	CODECTL_TASKSLOT_POOL(struct deferred_slot, 12, 64,
			      &codectl_stats.unwind_works, "deferred unwinds");

/* Consumers by bit; callbacks run under deferred_srcu. */
static struct codectl_unwind_work __rcu *deferred_consumers[DEFERRED_CONSUMERS];
/* bits handed out, under deferred_lock */
static unsigned long deferred_bits_used;
static DEFINE_MUTEX(deferred_lock);
static struct srcu_struct deferred_srcu;

/* Per-CPU state of a slot claim; see deferred_slot_get(). */
struct deferred_claim {
	struct deferred_slot *result;
	int active;
};

static DEFINE_PER_CPU(struct deferred_claim, deferred_claim);
static DEFINE_PER_CPU(u32, deferred_cookie_seq);

/**
 * struct deferred_last - the last delivery on a CPU
 * @task:	whose (never dereferenced); NULL while the others change
 * @cookie:	the cookie it delivered
 * @when:	jiffies at its end
 * @delivered:	consumer bits called back with @cookie
 * @regs:	the task's user registers then (CODECTL_ARCH_USER_REGS)
 *
 * A task's slot is released when its task_work has delivered, but the
 * task is still in the kernel, on its way out to user space.  Without
 * this record a request from an interrupt or NMI there (a profiler's
 * timer) would start a new cookie, and queue a task_work that runs
 * before the task gets out, whose delivery takes long enough for the next
 * request to come in, and so on: a task kept from user space for as long
 * as requests come faster than deliveries (issue 43).  With it, such a
 * request finds the user state it asks about already delivered and
 * shares its cookie: the task gets out.  Only this CPU's contexts touch
 * it (and cancel(), which clears a consumer's bit in @delivered): the
 * task_work writes it with preemption off, and the requests that read it
 * interrupt the writer or run between writes.
 */
struct deferred_last {
	struct task_struct *task;
	u64 cookie;
	unsigned long when;
	atomic_long_t delivered;
	u8 regs[CODECTL_ARCH_USER_REGS_SIZE] __aligned(8);
};

static DEFINE_PER_CPU(struct deferred_last, deferred_last);

/* The record holds current's user state, within the last second. */
static bool deferred_last_is_current(const struct deferred_last *l)
{
	return READ_ONCE(l->task) == current &&
	       time_before(jiffies, READ_ONCE(l->when) + HZ) &&
	       !memcmp(l->regs, CODECTL_ARCH_USER_REGS(task_pt_regs(current)),
		       sizeof(l->regs));
}

/*
 * After a delivery of @cookie to @bits, in current's task context: record
 * it on this CPU (or add @bits, when it is the same user state again).
 */
static void deferred_last_set(u64 cookie, unsigned long bits)
{
	struct deferred_last *l;

	preempt_disable();
	l = this_cpu_ptr(&deferred_last);
	if (deferred_last_is_current(l) && l->cookie == cookie) {
		atomic_long_or(bits, &l->delivered);
		WRITE_ONCE(l->when, jiffies);
	} else {
		WRITE_ONCE(l->task, NULL);
		barrier();	/* interrupts see NULL until the fields are set */
		l->cookie = cookie;
		l->when = jiffies;
		atomic_long_set(&l->delivered, bits);
		memcpy(l->regs, CODECTL_ARCH_USER_REGS(task_pt_regs(current)),
		       sizeof(l->regs));
		barrier();
		WRITE_ONCE(l->task, current);
	}
	preempt_enable();
}

/*
 * A request from an interrupt or NMI, current having no slot: is it about
 * the user state this CPU last delivered for current?  Return: its
 * cookie, with *@done set when consumer @bit was called back with it; 0
 * when not.  Preemption disabled.
 */
static u64 deferred_last_match(int bit, bool *done)
{
	const struct deferred_last *l = this_cpu_ptr(&deferred_last);

	if (in_task() || !deferred_last_is_current(l))
		return 0;
	*done = atomic_long_read(&l->delivered) & BIT(bit);
	return l->cookie;
}

/*
 * A new cookie: this CPU's sequence number (odd, so never 0) in the high
 * half, cpu + 1 in the low half.  this_cpu_add_return() is one
 * instruction on x86, so NMIs cannot tear it.  Preemption disabled.
 */
static u64 deferred_cookie_new(void)
{
	u32 seq = this_cpu_add_return(deferred_cookie_seq, 2) | 1;

	return ((u64)seq << 32) | (smp_processor_id() + 1);
}

static struct deferred_slot *deferred_slot(struct codectl_taskslot *ts)
{
	return ts ? container_of(ts, struct deferred_slot, ts) : NULL;
}

static struct deferred_slot *deferred_slot_at(unsigned int i)
{
	return deferred_slot(codectl_taskslot_at(&deferred_slots, i));
}

/* The slot @t owns and does not release, or NULL. */
static struct deferred_slot *deferred_slot_lookup(struct task_struct *t)
{
	return deferred_slot(codectl_taskslot_lookup(&deferred_slots, t));
}

/*
 * Claim a free slot for current (codectl_taskslot_claim()).  Until its
 * state is set lookups (of nested contexts) skip it.  Any context,
 * preemption disabled.
 */
static struct deferred_slot *deferred_slot_claim_new(void)
{
	struct deferred_slot *s;

	s = deferred_slot(codectl_taskslot_claim(&deferred_slots, current));
	if (s)
		atomic_long_inc(&codectl_stats.unwind_tasks);
	return s;
}

/* Free a slot whose state is RELEASING: reset it, then publish it free. */
static void deferred_slot_free(struct deferred_slot *s)
{
	atomic64_set(&s->cookie, 0);
	atomic_long_set(&s->delivered, 0);
	s->traced = false;
	codectl_taskslot_free(&s->ts);
	atomic_long_dec(&codectl_stats.unwind_tasks);
}

/* Give back a slot claimed in vain (no request bit was ever set on it). */
static void deferred_slot_abandon(struct deferred_slot *s)
{
	/* If a bit was set after all, its task_work releases the slot. */
	if (!atomic_long_cmpxchg(&s->ts.state, 0, CODECTL_TASKSLOT_RELEASING))
		deferred_slot_free(s);
}

/* A nested context claims while an outer one is claiming for current. */
static struct deferred_slot *deferred_slot_claim_nested(void)
{
	struct deferred_slot *s, *won;

	s = deferred_slot_claim_new();
	if (!s)
		return this_cpu_read(deferred_claim.result);
	won = this_cpu_cmpxchg(deferred_claim.result, NULL, s);
	if (won) {
		/* A context nested deeper in ours claimed first. */
		deferred_slot_abandon(s);
		return won;
	}
	return s;
}

/**
 * deferred_slot_get() - find or claim current's slot
 *
 * Called with preemption disabled, from task, IRQ or NMI context.  The
 * danger is nesting on one CPU (task -> IRQ -> NMI, all with the same
 * current, since preemption is off in the task's claim): two contexts
 * that both miss in the lookup would claim two slots for one task, and
 * the task's requests would be split between two cookies.  Per-CPU
 * claim state, only ever touched by this CPU:
 *
 *  (1) claim.active and claim.result set: an interrupted claim for
 *      current has already got a slot from a nested context: use it.
 *  (2) lookup owner == current (not RELEASING): use it.  A slot being
 *      claimed is still RELEASING, so it is not found here.
 *  (3) claim.active (we interrupted a claim for current, which has not
 *      found anything yet): claim a slot and install it in claim.result
 *      with cmpxchg(NULL -> ours); if a context nested in ours installed
 *      one first, abandon ours and use it.  The cmpxchg (rather than a
 *      plain store, as first planned) matters with three levels: task
 *      claims, IRQ claims, NMI claims, and the IRQ must not overwrite
 *      the NMI's result, whose slot carries the NMI's request bit.
 *  (4) outermost: result = NULL, active = 1, then look up AGAIN: a
 *      context that interrupted us between (2) and active = 1 ran a
 *      whole claim of its own, which (2) could not see (a hole in the
 *      first plan: two slots).  Then claim, install in claim.result
 *      with the same cmpxchg (a nested claim wins), active = 0 and
 *      result = NULL, in this order: a context interrupting in between
 *      is an outermost claim and clears result itself first.
 *
 * Nested contexts see the outer claim frozen (it cannot run while they
 * do), so every context of the nest ends up with the slot the first
 * completed claim installed or the one the lookup finds, never two.
 *
 * Return: current's slot, or NULL when its window has no free slot.
 */
static struct deferred_slot *deferred_slot_get(void)
{
	struct deferred_slot *s, *won;

	if (this_cpu_read(deferred_claim.active)) {
		s = this_cpu_read(deferred_claim.result);
		if (s)
			return s;
	}
	s = deferred_slot_lookup(current);
	if (s)
		return s;
	if (this_cpu_read(deferred_claim.active))
		return deferred_slot_claim_nested();

	this_cpu_write(deferred_claim.result, NULL);
	barrier();
	this_cpu_write(deferred_claim.active, 1);
	barrier();
	s = deferred_slot_lookup(current);
	if (!s) {
		s = deferred_slot_claim_new();
		barrier();
		if (s) {
			won = this_cpu_cmpxchg(deferred_claim.result, NULL, s);
			if (won) {
				deferred_slot_abandon(s);
				s = won;
			}
		} else {
			s = this_cpu_read(deferred_claim.result);
		}
	}
	barrier();
	this_cpu_write(deferred_claim.active, 0);
	barrier();
	this_cpu_write(deferred_claim.result, NULL);
	return s;
}

/* An unwind that ends before it starts, counted like the others. */
static void deferred_slot_stopped(struct codectl_trace *t, unsigned int stop)
{
	t->stop = stop;
	atomic64_inc(&codectl_unwind_counters.walk.walks);
	atomic64_inc(&codectl_unwind_counters.walk.stops[stop]);
}

/* Unwind current's user stack once for this entry, into the slot. */
static void deferred_slot_unwind(struct deferred_slot *s)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned int max = clamp_t(unsigned int, READ_ONCE(codectl_max_frames),
				   1, CODECTL_UNWIND_MAX_FRAMES);
	struct codectl_trace *t = &s->trace;

	s->traced = true;
	t->nr = 0;
	if (!current->mm || (current->flags & PF_EXITING)) {
		/* task_works run from do_exit too, after exit_mm(). */
		deferred_slot_stopped(t, CODECTL_STOP_NO_USER);
		return;
	}
	/*
	 * A request from an NMI or interrupt that hit user code is served at
	 * the next kernel exit, after the task ran on for a while: unwind
	 * what is there now, and say so.
	 */
	s->moved = instruction_pointer(regs) != s->req_ip ||
		   user_stack_pointer(regs) != s->req_sp;
	if (t->max != max) {
		kfree(t->ips);
		t->ips = kmalloc_array(max, sizeof(u64) + sizeof(u8),
				       GFP_KERNEL_ACCOUNT);
		t->methods = t->ips ? (u8 *)(t->ips + max) : NULL;
		t->max = t->ips ? max : 0;
	}
	if (!t->ips) {
		deferred_slot_stopped(t, CODECTL_STOP_NOMEM);
		return;
	}
	codectl_unwind_current(t, 0);
}

/**
 * deferred_slot_deliver() - call back the consumers of one kernel entry
 * @s:		current's slot
 * @final:	the task_work: release the slot when done; else (a flush
 *		from the task's own ioctl) leave it to the queued task_work
 *
 * Calls back every consumer whose bit is set and not yet delivered, with
 * one unwind for the entry.  A consumer that asks again meanwhile finds
 * its bit set (request returns 1: its callback covers it); one that asks
 * for the first time during the callbacks is called back in a further
 * pass with the same trace, since the task has not left the kernel (its
 * user state is the same).  Every pass calls back at least one consumer
 * for the first time, so there are at most DEFERRED_CONSUMERS passes and
 * one unwind, however fast requests come; requests after the release are
 * deferred_last's.  Owner's task context.
 */
static void deferred_slot_deliver(struct deferred_slot *s, bool final)
{
	u64 cookie = atomic64_read(&s->cookie);
	struct codectl_unwind_trace trace;
	struct codectl_unwind_work *work;
	unsigned long state, todo;
	int bit, idx;

	for (;;) {
		state = atomic_long_read(&s->ts.state);
		todo = state & DEFERRED_REQUEST_MASK &
		       ~atomic_long_read(&s->delivered);
		if (!todo) {
			if (!final)
				return;
			/* Before the release: no request finds neither. */
			idx = srcu_read_lock(&deferred_srcu);
			deferred_last_set(cookie,
					  atomic_long_read(&s->delivered));
			srcu_read_unlock(&deferred_srcu, idx);
			/* Nothing new: no request can join this state any more. */
			if (atomic_long_try_cmpxchg(&s->ts.state, &state,
						    CODECTL_TASKSLOT_RELEASING))
				break;
			continue;
		}
		if (!s->traced)
			deferred_slot_unwind(s);
		trace.nr = s->trace.nr;
		trace.stop = s->trace.stop;
		trace.flags = s->moved ? CODECTL_TRACE_MOVED : 0;
		trace.ips = s->trace.ips;
		trace.methods = s->trace.methods;
		idx = srcu_read_lock(&deferred_srcu);
		for_each_set_bit(bit, &todo, DEFERRED_CONSUMERS) {
			work = srcu_dereference(deferred_consumers[bit],
						&deferred_srcu);
			if (!work)
				continue;
			work->func(work, &trace, cookie);
			atomic64_inc(&codectl_unwind_counters.callbacks);
		}
		/* Inside the SRCU section: cancel() clears it after. */
		atomic_long_or(todo, &s->delivered);
		srcu_read_unlock(&deferred_srcu, idx);
	}
	/*
	 * The trace buffer goes with the entry: a pool that held one per
	 * slot ever used would keep up to 4096 of them (18 MB at 512
	 * frames) after a burst of threads.
	 */
	kfree(s->trace.ips);
	s->trace.ips = NULL;
	s->trace.methods = NULL;
	s->trace.max = 0;
	deferred_slot_free(s);
}

static void deferred_slot_twork(struct callback_head *head)
{
	struct codectl_twork *w = container_of(head, struct codectl_twork, cb);

	/* Orphaned at unload (freed): touch nothing. */
	if (!codectl_twork_start(w))
		return;
	deferred_slot_deliver(deferred_slot(w->data), true);
	/* Last: module exit waits for 0, then for RCU tasks. */
	atomic_long_dec(&codectl_stats.unwind_works);
}

/**
 * codectl_unwind_deferred_request() - ask for current's user stack
 * @work:	the consumer, initialised with codectl_unwind_deferred_init()
 * @cookie:	out: the cookie of this kernel entry of current (never 0)
 *
 * Callable from task, IRQ and NMI context: no allocation, no lock.  The
 * consumer's callback runs once, in current's context before it returns
 * to user space (or at its exit), with the trace and *@cookie.  Every
 * request made during one kernel entry, by any consumer, gets the same
 * cookie and shares one unwind.  A request from task context made after
 * the callbacks (still in the same entry) starts a new cookie; one from an
 * interrupt or NMI made then, while the task's user registers are still
 * those the callbacks saw (within a second, on that CPU), gets their
 * cookie: returning to user space is never held up by requests, however
 * fast they come.
 *
 * Return: 0 when queued; 1 when this consumer has already asked for this
 * user state (its one callback is queued or has run, with *@cookie);
 * -EINVAL when current has no user context (kernel thread, exiting, no
 * mm, not entered from user mode); -ENOENT for a consumer not
 * initialised or cancelled; -ENOSPC when no per-task slot is free.
 */
int codectl_unwind_deferred_request(struct codectl_unwind_work *work,
				    u64 *cookie)
{
	struct pt_regs *regs = task_pt_regs(current);
	struct deferred_slot *s;
	unsigned long old, mask;
	u64 c, new, last;
	bool done = false;
	int bit, ret;

	if ((current->flags & (PF_KTHREAD | PF_EXITING)) || !current->mm ||
	    !user_mode(regs))
		return -EINVAL;
	bit = READ_ONCE(work->bit);
	if (bit < 0 || bit >= DEFERRED_CONSUMERS)
		return -ENOENT;

	/*
	 * Preemption off: current stays on this CPU during the claim, and
	 * cancel()'s synchronize_rcu() waits for the whole request.
	 */
	preempt_disable();
	if (rcu_access_pointer(deferred_consumers[bit]) != work) {
		ret = -ENOENT;
		goto out;
	}
	/*
	 * From an interrupt on current's way out to user space, after its
	 * delivery: the same user state, the same cookie (deferred_last).
	 */
	last = deferred_last_match(bit, &done);
	if (last && deferred_slot_lookup(current))
		last = 0;	/* a new entry's slot: its cookie */
	if (last && done) {
		*cookie = last;
		ret = 1;
		goto out;
	}
	s = deferred_slot_get();
	if (!s) {
		ret = -ENOSPC;
		goto out;
	}

	c = atomic64_read(&s->cookie);
	if (!c) {
		new = last ?: deferred_cookie_new();
		c = atomic64_cmpxchg(&s->cookie, 0, new);
		if (!c) {
			/* Read only by the task_work, after we are done. */
			c = new;
			s->req_ip = instruction_pointer(regs);
			s->req_sp = user_stack_pointer(regs);
		}
	}
	*cookie = c;

	mask = BIT(bit);
	old = atomic_long_read(&s->ts.state);
	do {
		if (old & CODECTL_TASKSLOT_RELEASING) {
			/* Cannot happen: only the owner's task_work releases. */
			ret = -EBUSY;
			goto out;
		}
		if (old & mask) {
			ret = 1;
			goto out;
		}
	} while (!atomic_long_try_cmpxchg(&s->ts.state, &old,
					  old | mask | CODECTL_TASKSLOT_QUEUED));
	ret = 0;
	atomic64_inc(&codectl_unwind_counters.requests);
	if (old & CODECTL_TASKSLOT_QUEUED)
		goto out;

	ret = codectl_taskslot_queue(&deferred_slots, &s->ts);
	if (ret) {
		/*
		 * Cannot happen either: task_work_add() fails only after
		 * exit_task_work(), long after PF_EXITING.  Leave no bit
		 * that would wait for a task_work forever.
		 */
		atomic_long_andnot(DEFERRED_REQUEST_MASK | CODECTL_TASKSLOT_QUEUED,
				   &s->ts.state);
	}
out:
	preempt_enable();
	return ret;
}
EXPORT_SYMBOL_GPL(codectl_unwind_deferred_request);

/**
 * codectl_unwind_deferred_init() - register a consumer
 * @work:	the consumer (embedded in the caller's structure)
 * @func:	its callback
 *
 * Context: process context (sleeps).
 * Return: 0, or -EBUSY when all BITS_PER_LONG - 2 consumer bits are taken.
 */
int codectl_unwind_deferred_init(struct codectl_unwind_work *work,
				 codectl_unwind_callback_t func)
{
	int bit;

	mutex_lock(&deferred_lock);
	bit = find_first_zero_bit(&deferred_bits_used, DEFERRED_CONSUMERS);
	if (bit >= DEFERRED_CONSUMERS) {
		mutex_unlock(&deferred_lock);
		work->bit = -1;
		return -EBUSY;
	}
	__set_bit(bit, &deferred_bits_used);
	work->func = func;
	WRITE_ONCE(work->bit, bit);
	rcu_assign_pointer(deferred_consumers[bit], work);
	mutex_unlock(&deferred_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(codectl_unwind_deferred_init);

/**
 * codectl_unwind_deferred_cancel() - unregister a consumer
 * @work:	the consumer
 *
 * After it returns no callback of @work runs or will run, its requests
 * still pending are forgotten (the tasks' task_works find nothing for
 * it) and its bit may be given to another consumer.  Requests racing
 * with it fail with -ENOENT.  Harmless on a consumer not initialised or
 * already cancelled.
 *
 * Context: process context (sleeps: waits for RCU and for callbacks).
 */
void codectl_unwind_deferred_cancel(struct codectl_unwind_work *work)
{
	unsigned int i;
	int bit, cpu;

	mutex_lock(&deferred_lock);
	bit = work->bit;
	if (bit < 0 || bit >= DEFERRED_CONSUMERS ||
	    rcu_access_pointer(deferred_consumers[bit]) != work) {
		mutex_unlock(&deferred_lock);
		return;
	}
	WRITE_ONCE(work->bit, -1);
	RCU_INIT_POINTER(deferred_consumers[bit], NULL);
	/* Requests run with preemption off: none is still setting the bit. */
	synchronize_rcu();
	for (i = 0; i < BIT(deferred_slots.bits); i++)
		atomic_long_andnot(BIT(bit), &deferred_slot_at(i)->ts.state);
	/* Callbacks still running, and their 'delivered' updates, are done. */
	synchronize_srcu(&deferred_srcu);
	for (i = 0; i < BIT(deferred_slots.bits); i++)
		atomic_long_andnot(BIT(bit), &deferred_slot_at(i)->delivered);
	for_each_possible_cpu(cpu)
		atomic_long_andnot(BIT(bit),
				   &per_cpu(deferred_last, cpu).delivered);
	__clear_bit(bit, &deferred_bits_used);
	mutex_unlock(&deferred_lock);
}
EXPORT_SYMBOL_GPL(codectl_unwind_deferred_cancel);

/*
 * Deliver now, from current's own ioctl, what is pending for its current
 * entry (the self-test's STOP: its own entry's requests would otherwise
 * be delivered only after it returned).  Same entry, same cookie and user
 * registers as the task_work would see; the task_work, still queued,
 * delivers later requests and releases the slot.
 */
void codectl_deferred_flush(void)
{
	struct deferred_slot *s;

	preempt_disable();
	s = deferred_slot_lookup(current);
	preempt_enable();
	/* Only current's task context releases it: s stays ours. */
	if (s && (atomic_long_read(&s->ts.state) & CODECTL_TASKSLOT_QUEUED))
		deferred_slot_deliver(s, false);
}

CODECTL_EXPORT_TEST(codectl_deferred_flush);

int codectl_deferred_init(void)
{
	int ret, cpu;

	ret = init_srcu_struct(&deferred_srcu);
	if (ret)
		return ret;
	ret = codectl_taskslot_pool_init(&deferred_slots, deferred_slot_twork);
	if (ret) {
		cleanup_srcu_struct(&deferred_srcu);
		return ret;
	}
	for_each_possible_cpu(cpu)
		per_cpu(deferred_cookie_seq, cpu) = 1;
	return 0;
}

void codectl_deferred_exit(void)
{
	unsigned int i;

	/*
	 * Every consumer is cancelled: the task_works still queued would
	 * find nothing to deliver.  Those not started are left to their
	 * tasks, the running ones are waited for.
	 */
	codectl_taskslot_pool_drain(&deferred_slots);
	for (i = 0; i < BIT(deferred_slots.bits); i++)
		kfree(deferred_slot_at(i)->trace.ips);
	codectl_taskslot_pool_free(&deferred_slots);
	cleanup_srcu_struct(&deferred_srcu);
}
