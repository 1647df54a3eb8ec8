// SPDX-License-Identifier: GPL-2.0
/*
 * fork: a child has its parent's address space, so it has its parent's
 * registrations.  The sched_process_fork tracepoint (found by name) fires
 * in the parent after the child is created: the parent's registration
 * array is snapshotted with one reference and a task_work on the child
 * makes it the child's registry before its first user instruction.
 * CLONE_VM children share the registry.  Unload leaves queued works to
 * their children (twork.c).  IBT and the rest: docs/design.md, "The
 * registry".
 */
#include <linux/bits.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>

#include "internal.h"

/*
 * The probe runs with preemption disabled, where a PREEMPT_RT kernel's
 * spinlock_t and the slab allocator may sleep: so it takes a slot from a
 * pool allocated at load (taskslot.c), claimed with a cmpxchg for the
 * child, and no lock.  The slot holds the snapshot until the child's
 * task_work takes it.
 */
struct fork_slot {
	struct codectl_taskslot ts;
	struct codectl_set *set;
};

/* Children copied and not yet run: 4096, any 64 of them per child. */
static struct codectl_taskslot_pool fork_slots =
	CODECTL_TASKSLOT_POOL(struct fork_slot, 12, 64,
			      &codectl_stats.works, "fork copies");

static struct tracepoint *codectl_fork_tp;

/**
 * codectl_signals_hold() - hold off the signals a task may ignore for now
 * @old:	out: the mask to give to codectl_signals_restore()
 *
 * A first registry subscription runs mm_take_all_locks(), which gives up
 * with -EINTR while any signal is pending, and the task_works of fork and
 * discovery run on the way to deliver one as often as not.  So they block
 * the signals that can wait, but never SIGKILL and SIGSTOP: the kernel's
 * sigprocmask() would block them too (only the system call takes them out
 * of the mask), and a task with SIGKILL blocked is not woken by kill -9
 * from a killable sleep (a read from a stalled mount, say).  A pending
 * SIGKILL or SIGSTOP thus still makes a subscription fail: the dying task
 * needs nothing, a discovery is asked again at the next unwind, and
 * codectl_fork_adopt() lets a stop pending since fork wait until the mask
 * is restored (a SIGSTOP sent during the adoption itself still costs the
 * child its registrations, counted in fork_failures).
 */
void codectl_signals_hold(sigset_t *old)
{
	sigset_t set;

	sigfillset(&set);
	sigdelsetmask(&set, sigmask(SIGKILL) | sigmask(SIGSTOP));
	sigprocmask(SIG_BLOCK, &set, old);
}

/**
 * codectl_signals_restore() - give back the mask codectl_signals_hold() took
 * @old:	that mask
 */
void codectl_signals_restore(const sigset_t *old)
{
	sigset_t set = *old;

	sigprocmask(SIG_SETMASK, &set, NULL);
}

/* Attempts of an adoption a stop keeps interrupting. */
#define CODECTL_ADOPT_TRIES	4

/* The mask is restored before the child sees it.  Consumes @set. */
static void codectl_fork_adopt(struct codectl_set *set)
{
	unsigned int tries = 0;
	sigset_t old;
	int err;

	codectl_signals_hold(&old);
	/*
	 * A stop pending since fork (SIGSTOP, a group stop, a ptrace trap),
	 * or sent while the subscription takes the mm's locks, would make it
	 * give up, and the child would go without its registrations: the
	 * stop waits until the mask is restored, which recomputes
	 * TIF_SIGPENDING (the child stops then), and an adoption a stop
	 * interrupted is made again, a few times at most.  A fatal signal is
	 * left as it is: the child dies, needing nothing.
	 */
	do {
		err = -EINTR;
		if (fatal_signal_pending(current))
			break;
		clear_thread_flag(TIF_SIGPENDING);
		refcount_inc(&set->ref);	/* the adoption consumes one */
		err = codectl_mm_adopt(current->mm, set);
	} while (err == -EINTR && ++tries < CODECTL_ADOPT_TRIES);
	codectl_set_put(set);
	codectl_signals_restore(&old);
	if (err && !fatal_signal_pending(current))
		atomic_long_inc(&codectl_stats.fork_failures);
}

/* In the child, before it returns to user space for the first time. */
static void codectl_fork_work_run(struct callback_head *cb)
{
	struct codectl_twork *w = container_of(cb, struct codectl_twork, cb);
	struct fork_slot *s = container_of(w->data, struct fork_slot, ts);
	struct codectl_set *set;

	/* Orphaned at unload (freed): touch nothing. */
	if (!codectl_twork_start(w))
		return;
	set = s->set;
	s->set = NULL;
	atomic_long_set(&s->ts.state, CODECTL_TASKSLOT_RELEASING);
	codectl_taskslot_free(&s->ts);
	/* Also run from do_exit() after exit_mm(): then there is no mm. */
	if (current->mm && !(current->flags & PF_EXITING) &&
	    !fatal_signal_pending(current))
		codectl_fork_adopt(set);
	else
		codectl_set_put(set);
	/* The last statement: module exit waits for this count. */
	atomic_long_dec(&codectl_stats.works);
}

/*
 * In the parent, preemption disabled: no allocation, no lock (on
 * PREEMPT_RT both may sleep).  codectl_set_put() frees through call_rcu().
 */
static void codectl_fork_probe(void *data, struct task_struct *parent,
			       struct task_struct *child)
{
	struct codectl_taskslot *ts;
	struct fork_slot *s;
	struct codectl_set *set;

	if (!child->mm || child->mm == parent->mm)
		return;
	set = codectl_mm_snapshot(parent->mm);
	if (!set)
		return;
	ts = codectl_taskslot_claim(&fork_slots, child);
	if (!ts) {
		codectl_set_put(set);
		atomic_long_inc(&codectl_stats.fork_failures);
		return;
	}
	s = container_of(ts, struct fork_slot, ts);
	s->set = set;
	if (codectl_taskslot_queue(&fork_slots, ts)) {
		/* The child is already exiting: it will never run. */
		s->set = NULL;
		atomic_long_set(&ts->state, CODECTL_TASKSLOT_RELEASING);
		codectl_taskslot_free(ts);
		codectl_set_put(set);
	}
}

static void codectl_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		*(struct tracepoint **)priv = tp;
}

/**
 * codectl_fork_init() - start copying registrations into forked children
 *
 * Return: 0 or -errno (-ENOENT if the kernel has no sched_process_fork).
 */
int codectl_fork_init(void)
{
	int ret;

	for_each_kernel_tracepoint(codectl_find_tp, &codectl_fork_tp);
	if (!codectl_fork_tp)
		return -ENOENT;
	ret = codectl_taskslot_pool_init(&fork_slots, codectl_fork_work_run);
	if (ret)
		return ret;
	ret = tracepoint_probe_register(codectl_fork_tp, codectl_fork_probe,
					NULL);
	if (ret)
		codectl_taskslot_pool_free(&fork_slots);
	return ret;
}

/**
 * codectl_fork_exit() - stop, leave the children's pending copies
 *
 * Children that have not run yet still hold works of this module, which
 * cannot be cancelled.  A child stopped before its first instruction
 * (ptrace), or blocked, may not run for long: its work is left to it
 * (twork.c), without the snapshot (dropped here).  Copies already
 * running are waited for (codectl_taskslot_pool_drain()).
 */
void codectl_fork_exit(void)
{
	unsigned int i;

	if (!fork_slots.slots)
		return;
	tracepoint_probe_unregister(codectl_fork_tp, codectl_fork_probe, NULL);
	tracepoint_synchronize_unregister();
	codectl_taskslot_pool_drain(&fork_slots);
	/* Left to their children: the works only, the snapshots are ours. */
	for (i = 0; i < BIT(fork_slots.bits); i++) {
		struct fork_slot *s = (struct fork_slot *)
			codectl_taskslot_at(&fork_slots, i);

		if (!s->ts.twork && s->set) {
			codectl_set_put(s->set);
			s->set = NULL;
		}
		if (!(i % 256))
			cond_resched();
	}
	codectl_taskslot_pool_free(&fork_slots);
}
