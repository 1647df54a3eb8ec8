// SPDX-License-Identifier: GPL-2.0
/*
 * Canaries for the debug kernel's checkers: `insmod codectl_test.ko
 * canary=NAME` makes one defect of the kind each checker exists for, at
 * load, and the load then fails (ECANCELED).  scripts/check.sh --debug
 * loads each in a guest of its own and requires the checker's report and
 * scripts/vm-run.sh's verdict on it (exit 125): the proof that a clean
 * log of that kernel means the checkers ran and found nothing, not that
 * their reports went unseen.  Never used otherwise: without canary=
 * nothing here runs.
 *
 *   kasan    a read one byte past a kmalloc()ed object
 *   sleep    a GFP_KERNEL allocation with preemption disabled
 *            (DEBUG_ATOMIC_SLEEP: the allocation may sleep)
 *   lockdep  two mutexes taken in both orders
 *   leak     a kmalloc()ed object whose last pointer is dropped
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "testmod.h"

static char *canary;
module_param(canary, charp, 0444);
MODULE_PARM_DESC(canary, "kasan, sleep, lockdep or leak: a defect for the debug kernel's checkers, then the load fails (tests only)");

static DEFINE_MUTEX(canary_a);
static DEFINE_MUTEX(canary_b);
static void *canary_leaked;

static noinline void canary_kasan(void)
{
	char *p = kmalloc(8, GFP_KERNEL);
	size_t i = 8;

	OPTIMIZER_HIDE_VAR(i);	/* no compile-time bounds warning */
	if (p)
		pr_info("codectl_test: canary kasan read %d\n",
			READ_ONCE(p[i]));
	kfree(p);
}

static noinline void canary_sleep(void)
{
	void *p;

	preempt_disable();
	p = kmalloc(64, GFP_KERNEL);
	preempt_enable();
	kfree(p);
}

static noinline void canary_lockdep(void)
{
	mutex_lock(&canary_a);
	mutex_lock(&canary_b);
	mutex_unlock(&canary_b);
	mutex_unlock(&canary_a);
	mutex_lock(&canary_b);
	mutex_lock(&canary_a);
	mutex_unlock(&canary_a);
	mutex_unlock(&canary_b);
}

static noinline void canary_leak(void)
{
	canary_leaked = kmalloc(64, GFP_KERNEL);
	/* The only pointer goes: kmemleak finds nothing referring to it. */
	WRITE_ONCE(canary_leaked, NULL);
}

/* Return: 0 without canary=, else -ECANCELED after it (-EINVAL: unknown). */
int codectl_test_canary(void)
{
	if (!canary)
		return 0;
	if (!strcmp(canary, "kasan"))
		canary_kasan();
	else if (!strcmp(canary, "sleep"))
		canary_sleep();
	else if (!strcmp(canary, "lockdep"))
		canary_lockdep();
	else if (!strcmp(canary, "leak"))
		canary_leak();
	else
		return -EINVAL;
	pr_info("codectl_test: canary %s done\n", canary);
	return -ECANCELED;
}
