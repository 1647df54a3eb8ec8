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
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/wait.h>

#include "internal.h"

/*
 * @tw first: an orphaned work is freed whole (twork.c).  @node: in
 * codectl_fork_works until its callback starts or unload orphans it.
 */
struct codectl_fork_work {
	struct codectl_twork tw;
	struct codectl_set *set;
	struct list_head node;
};

static struct tracepoint *codectl_fork_tp;
static DECLARE_WAIT_QUEUE_HEAD(codectl_works_wq);
static LIST_HEAD(codectl_fork_works);
static DEFINE_SPINLOCK(codectl_fork_lock);

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
	struct codectl_fork_work *w = container_of(cb, typeof(*w), tw.cb);

	/* Orphaned at unload (freed): touch nothing. */
	if (!codectl_twork_start(&w->tw))
		return;
	spin_lock(&codectl_fork_lock);
	list_del(&w->node);
	spin_unlock(&codectl_fork_lock);
	/* Also run from do_exit() after exit_mm(): then there is no mm. */
	if (current->mm && !(current->flags & PF_EXITING) &&
	    !fatal_signal_pending(current))
		codectl_fork_adopt(w->set);
	else
		codectl_set_put(w->set);
	kfree(w);
	if (atomic_long_dec_and_test(&codectl_stats.works))
		wake_up(&codectl_works_wq);
}

static void codectl_fork_probe(void *data, struct task_struct *parent,
			       struct task_struct *child)
{
	struct codectl_fork_work *w;
	struct codectl_set *set;

	if (!child->mm || child->mm == parent->mm)
		return;
	set = codectl_mm_snapshot(parent->mm);
	if (!set)
		return;
	w = kmalloc(sizeof(*w), GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!w) {
		codectl_set_put(set);
		atomic_long_inc(&codectl_stats.fork_failures);
		return;
	}
	codectl_twork_init(&w->tw, codectl_fork_work_run);
	w->set = set;
	atomic_long_inc(&codectl_stats.works);
	codectl_twork_queued(&w->tw);
	spin_lock(&codectl_fork_lock);
	list_add(&w->node, &codectl_fork_works);
	spin_unlock(&codectl_fork_lock);
	if (task_work_add(child, &w->tw.cb, TWA_RESUME)) {
		/* The child is already exiting: it will never run. */
		spin_lock(&codectl_fork_lock);
		list_del(&w->node);
		spin_unlock(&codectl_fork_lock);
		atomic_long_dec(&codectl_stats.works);
		codectl_set_put(set);
		kfree(w);
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
	for_each_kernel_tracepoint(codectl_find_tp, &codectl_fork_tp);
	if (!codectl_fork_tp)
		return -ENOENT;
	return tracepoint_probe_register(codectl_fork_tp, codectl_fork_probe,
					 NULL);
}

/**
 * codectl_fork_exit() - stop, leave the children's pending copies
 *
 * Children that have not run yet still hold works of this module, which
 * cannot be cancelled.  A child stopped before its first instruction
 * (ptrace), or blocked, may not run for long: its work is left to it
 * (twork.c), without the snapshot (dropped here).  Copies already
 * running are waited for.
 */
void codectl_fork_exit(void)
{
	struct codectl_fork_work *w, *tmp;
	unsigned int left = 0;
	LIST_HEAD(orphans);

	tracepoint_probe_unregister(codectl_fork_tp, codectl_fork_probe, NULL);
	tracepoint_synchronize_unregister();
	spin_lock(&codectl_fork_lock);
	list_for_each_entry_safe(w, tmp, &codectl_fork_works, node) {
		if (codectl_twork_orphan(&w->tw))
			list_move(&w->node, &orphans);
	}
	spin_unlock(&codectl_fork_lock);
	/* Ours until here: the task frees only the memory. */
	list_for_each_entry_safe(w, tmp, &orphans, node) {
		list_del(&w->node);
		codectl_set_put(w->set);
		atomic_long_dec(&codectl_stats.works);
		left++;
		cond_resched();
	}
	if (left)
		pr_info("codectl: unload leaves %u queued fork copies to their children\n",
			left);
	wait_event(codectl_works_wq, !atomic_long_read(&codectl_stats.works));
	/* The last work may still be returning through this module's text. */
	synchronize_rcu_tasks();
}
