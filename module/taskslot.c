// SPDX-License-Identifier: GPL-2.0
/*
 * Pools of per-task slots: codectl's stand-in for upstream's
 * current->unwind_info, for state a task needs from any context (NMI
 * included) until a task_work of its own runs.
 *
 * A pool is allocated at load.  A task's slot is found by owner ==
 * current in a window of slots from hash_ptr(current), claimed with a
 * cmpxchg on the owner: no task_struct field, no allocation, no lock.
 * Each slot has its task_work (twork.c), queued from NMI too; unload
 * leaves the queued ones to their tasks and waits for the running ones.
 *
 * A slot's state word is its user's, but for two bits of the pool's: a
 * free slot is CODECTL_TASKSLOT_RELEASING, and CODECTL_TASKSLOT_QUEUED is
 * the users' mark of a queued task_work.  Only the owner touches an owned
 * slot (its task context and the interrupts and NMIs nested in it), but
 * for a child's, which its parent claims and fills in fork before the
 * child runs.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/task_work.h>

#include "internal.h"
#include "compat.h"

#ifndef HAVE_TWA_NMI_CURRENT
static void codectl_taskslot_kick_fn(struct irq_work *w)
{
	/* The interrupt exit is the point: it runs TIF_NOTIFY_RESUME work. */
}
#endif

/* The slot at window position @i of hash @h. */
static struct codectl_taskslot *
codectl_taskslot_near(struct codectl_taskslot_pool *pool, unsigned int h,
		      unsigned int i)
{
	return codectl_taskslot_at(pool, (h + i) & (BIT(pool->bits) - 1));
}

/**
 * codectl_taskslot_lookup() - the slot a task owns and does not release
 * @pool:	the pool
 * @t:		the task (current, or the owner's own context)
 *
 * Any context.
 * Return: the slot, or NULL.
 */
struct codectl_taskslot *
codectl_taskslot_lookup(struct codectl_taskslot_pool *pool,
			struct task_struct *t)
{
	unsigned int h = hash_ptr(t, pool->bits), i;
	struct codectl_taskslot *s;

	for (i = 0; i < pool->probe; i++) {
		s = codectl_taskslot_near(pool, h, i);
		if (READ_ONCE(s->owner) == t &&
		    !(atomic_long_read(&s->state) & CODECTL_TASKSLOT_RELEASING))
			return s;
	}
	return NULL;
}

/**
 * codectl_taskslot_claim() - claim a free slot for a task
 * @pool:	the pool
 * @t:		current, or a task that has not run yet and for which no
 *		other context claims (a child in its parent's fork)
 *
 * A cmpxchg on its owner, then its state is set to 0 (from RELEASING,
 * which it kept while free: until then lookups skip it).  Any context.
 * Return: the slot, or NULL when @t's window has no free slot.
 */
struct codectl_taskslot *
codectl_taskslot_claim(struct codectl_taskslot_pool *pool,
		       struct task_struct *t)
{
	unsigned int h = hash_ptr(t, pool->bits), i;
	struct codectl_taskslot *s;

	for (i = 0; i < pool->probe; i++) {
		s = codectl_taskslot_near(pool, h, i);
		if (READ_ONCE(s->owner) || cmpxchg(&s->owner, NULL, t))
			continue;
		/* cmpxchg() ordered this after the releaser's resets. */
		atomic_long_set(&s->state, 0);
		return s;
	}
	return NULL;
}

/**
 * codectl_taskslot_free() - publish a slot free
 * @s:		the slot, its state RELEASING, its user's fields reset
 */
void codectl_taskslot_free(struct codectl_taskslot *s)
{
	/* Pairs with the claimant's cmpxchg: it sees the slot's resets. */
	smp_store_release(&s->owner, NULL);
}

/**
 * codectl_taskslot_queue() - queue the slot's task_work on its owner
 * @pool:	the pool
 * @s:		the slot of current, or of a task not yet run (fork), its
 *		task_work not queued
 *
 * Any context, NMI included for current's slot (see
 * codectl_task_work_add_nmi(), which a KASAN kernel's atomic contexts use
 * too).  Counts the work in @pool->works, uncounted again when it fails.
 * Return: 0 or task_work_add()'s error (the slot is then the caller's
 * to give back).
 */
int codectl_taskslot_queue(struct codectl_taskslot_pool *pool,
			   struct codectl_taskslot *s)
{
	struct task_struct *t = READ_ONCE(s->owner);
	int ret;

	atomic_long_inc(pool->works);
	codectl_twork_queued(s->twork);
	/*
	 * From NMI, and on a KASAN kernel wherever the caller may not
	 * sleep: there task_work_add(TWA_RESUME) records the caller's stack
	 * in the stack depot, which allocates (before 6.13), and on
	 * PREEMPT_RT the page allocator's zone lock sleeps: lockdep saw it
	 * taken under the runqueue lock (ftrace's user stack trace on
	 * sched_switch, debug-6.12-rt).  Another task's work (a child at
	 * fork, not in NMI) has no such way: TWA_RESUME.
	 */
	if (t == current &&
	    (in_nmi() || (IS_ENABLED(CONFIG_KASAN) && !preemptible())))
		ret = codectl_task_work_add_nmi(&s->twork->cb,
						pool->kick ?
						this_cpu_ptr(pool->kick) : NULL);
	else
		ret = task_work_add(t, &s->twork->cb, TWA_RESUME);
	if (ret) {
		codectl_twork_unqueued(s->twork);
		atomic_long_dec(pool->works);
	}
	return ret;
}

/**
 * codectl_taskslot_pool_init() - allocate a pool and publish it
 * @pool:	size, bits, probe, works and what set; the rest zeroed
 * @fn:		the slots' task_work callback; it gets the slot in the
 *		codectl_twork's data
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int codectl_taskslot_pool_init(struct codectl_taskslot_pool *pool,
			       task_work_func_t fn)
{
	unsigned int nr = BIT(pool->bits), i;
	void *slots;
	int cpu;

	slots = kvcalloc(nr, pool->size, GFP_KERNEL);
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct codectl_taskslot *s = slots + i * pool->size;

		atomic_long_set(&s->state, CODECTL_TASKSLOT_RELEASING);
		/* Its own allocation: unload may leave it to a task. */
		s->twork = kmalloc(sizeof(*s->twork), GFP_KERNEL);
		if (!s->twork)
			goto nomem;
		codectl_twork_init(s->twork, fn);
		s->twork->data = s;
	}
#ifndef HAVE_TWA_NMI_CURRENT
	/*
	 * Set up at init, not by a static initializer: a module's per-CPU
	 * data is copied from its section without relocations, so a
	 * function pointer there would be NULL (found by the REMOTE
	 * self-test on 6.1).
	 */
	pool->kick = alloc_percpu(struct irq_work);
	if (!pool->kick)
		goto nomem;
	for_each_possible_cpu(cpu) {
		struct irq_work *kick = per_cpu_ptr(pool->kick, cpu);

		*kick = CODECTL_IRQ_WORK_INIT_HARD(codectl_taskslot_kick_fn);
	}
#else
	(void)cpu;
#endif
	/* Users look at the pointer: publish the initialised slots. */
	smp_store_release(&pool->slots, slots);
	return 0;
nomem:
	while (i--)
		kfree(((struct codectl_taskslot *)(slots + i * pool->size))->twork);
	kvfree(slots);
	return -ENOMEM;
}

/**
 * codectl_taskslot_pool_drain() - leave queued works, wait for running ones
 * @pool:	the pool, its users stopped: nothing queues any more
 *
 * A task_work queued on a task that has not run it yet (it may be asleep
 * in the kernel for days) is left to the task, which frees it (twork.c);
 * the running ones are waited for, and those that read the callback
 * before it was redirected.  Then the user may free its slots' fields
 * and codectl_taskslot_pool_free() the pool.
 *
 * Context: process context (sleeps).
 */
void codectl_taskslot_pool_drain(struct codectl_taskslot_pool *pool)
{
	unsigned int nr = BIT(pool->bits), waited = 0, left = 0, i;
	int cpu;

	for (i = 0; i < nr; i++) {
		struct codectl_taskslot *s = codectl_taskslot_at(pool, i);

		if (!codectl_twork_orphan(s->twork))
			continue;
		s->twork = NULL;
		atomic_long_dec(pool->works);
		left++;
	}
	if (left)
		pr_info("codectl: unload leaves %u queued %s to their tasks\n",
			left, pool->what);
	while (atomic_long_read(pool->works)) {
		if (!(++waited % 500))
			pr_info("codectl: unload waits for %ld running %s\n",
				atomic_long_read(pool->works), pool->what);
		msleep(20);
	}
	/* The last statement of the task_works has run; let them return. */
	synchronize_rcu_tasks();
	if (pool->kick)
		for_each_possible_cpu(cpu)
			irq_work_sync(per_cpu_ptr(pool->kick, cpu));
}

/**
 * codectl_taskslot_pool_free() - free a drained pool
 * @pool:	the pool
 */
void codectl_taskslot_pool_free(struct codectl_taskslot_pool *pool)
{
	unsigned int i;

	for (i = 0; i < BIT(pool->bits); i++)
		kfree(codectl_taskslot_at(pool, i)->twork);
	kvfree(pool->slots);
	pool->slots = NULL;
	free_percpu(pool->kick);
	pool->kick = NULL;
}
