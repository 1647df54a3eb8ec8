// SPDX-License-Identifier: GPL-2.0
/*
 * Task works that module unload does not wait for.  A task blocked in the
 * kernel may not run a queued task_work for days, and none can be
 * cancelled; so every task_work of the module is a kmalloc'ed struct
 * codectl_twork, and module exit hands the queued ones over to their
 * tasks (ORPHAN, callback kfree()), waits with synchronize_rcu_tasks()
 * for callbacks that raced, and for running works as before.  States: 0,
 * QUEUED, ORPHAN; QUEUED -> 0 and QUEUED -> ORPHAN are one cmpxchg each.
 * Why this is safe (IBT, CFI): docs/design.md, "Deferred registry".
 */
#include <linux/atomic.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/task_work.h>

#include "internal.h"

#define CODECTL_TWORK_QUEUED	1
#define CODECTL_TWORK_ORPHAN	2

/**
 * codectl_twork_init() - set up a work for a callback
 * @w:		the work, in memory of its own from kmalloc() (see
 *		codectl_twork_orphan())
 * @fn:		its callback, which calls codectl_twork_start() first
 */
void codectl_twork_init(struct codectl_twork *w, task_work_func_t fn)
{
	BUILD_BUG_ON(offsetof(struct codectl_twork, cb));
	init_task_work(&w->cb, fn);
	atomic_set(&w->state, 0);
}

/**
 * codectl_twork_queued() - mark a work queued, before task_work_add()
 * @w:		the work, not queued
 *
 * Any context.  Call codectl_twork_unqueued() if task_work_add() fails.
 */
void codectl_twork_queued(struct codectl_twork *w)
{
	/* task_work_add()'s cmpxchg orders this before the queueing. */
	atomic_set(&w->state, CODECTL_TWORK_QUEUED);
}

/**
 * codectl_twork_unqueued() - task_work_add() of @w failed
 * @w:		the work
 */
void codectl_twork_unqueued(struct codectl_twork *w)
{
	atomic_set(&w->state, 0);
}

/**
 * codectl_twork_start() - the first statement of a work's callback
 * @w:		the work
 *
 * Return: true: run the callback.  False: module exit orphaned the work
 * after the task had read its callback; it is freed here, and the
 * callback must return at once, touching nothing (the module is going).
 * After true, @w may be queued again (on any task) and must not be
 * touched by this callback again.
 */
bool codectl_twork_start(struct codectl_twork *w)
{
	if (atomic_cmpxchg(&w->state, CODECTL_TWORK_QUEUED, 0) ==
	    CODECTL_TWORK_QUEUED)
		return true;
	kfree(w);
	return false;
}

/**
 * codectl_twork_orphan() - module exit: leave a queued work to its task
 * @w:		the work
 *
 * Requests must have stopped (nothing queues @w any more).
 *
 * Return: true when @w was queued and not started: it is the task's now,
 * which frees it; its owner drops what the work held and forgets @w.
 * False when it was not queued (idle, or its callback has started): the
 * caller waits for running callbacks as before, then frees it.  The
 * caller calls synchronize_rcu_tasks() after orphaning.
 */
bool codectl_twork_orphan(struct codectl_twork *w)
{
#ifdef CONFIG_CFI_CLANG
	return false;
#else
	if (atomic_cmpxchg(&w->state, CODECTL_TWORK_QUEUED,
			   CODECTL_TWORK_ORPHAN) != CODECTL_TWORK_QUEUED)
		return false;
	/*
	 * The task reads ->func just before calling it: either this
	 * (kfree(w)) or codectl_twork_start(), which sees ORPHAN.
	 */
	WRITE_ONCE(w->cb.func, (task_work_func_t)(void (*)(void))kfree);
	return true;
#endif
}
