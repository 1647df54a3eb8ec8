/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels codectl builds against (5.10 .. 7.3),
 * in one place.  The HAVE_* macros come from probe.sh, which tests the
 * kernel's headers; no code outside this file looks at kernel versions.
 */
#ifndef CODECTL_COMPAT_H
#define CODECTL_COMPAT_H

#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/sched.h>
#include <linux/task_work.h>

#include "version.h"

/*
 * An irq_work that runs in hard interrupt context, PREEMPT_RT included:
 * IRQ_WORK_INIT_HARD() (5.11+).  5.10 has the flag but not the
 * initializer, nor PREEMPT_RT (the flag is what 5.11's sets).
 */
#ifdef IRQ_WORK_INIT_HARD
#define CODECTL_IRQ_WORK_INIT_HARD(fn)	IRQ_WORK_INIT_HARD(fn)
#else
#define CODECTL_IRQ_WORK_INIT_HARD(fn)	((struct irq_work){		\
	.flags = ATOMIC_INIT(IRQ_WORK_HARD_IRQ), .func = (fn) })
#endif

/**
 * codectl_task_work_add_nmi() - queue a task_work on current from NMI
 * @head:	the callback_head, not pending
 * @kick:	this CPU's no-op IRQ_WORK_INIT_HARD irq_work (unused where the
 *		kernel has TWA_NMI_CURRENT)
 *
 * An NMI that interrupted user space returns to it without looking at
 * TIF_NOTIFY_RESUME; a self-interrupt gives the task an interrupt exit
 * that runs the work before any further user instruction.  That is what
 * TWA_NMI_CURRENT does inside the kernel (6.12+); before it, queue with
 * TWA_RESUME (lock-free: a cmpxchg and a thread flag) and raise the
 * interrupt with our own irq_work.
 *
 * Return: 0, or task_work_add()'s error (-ESRCH: the task is exiting),
 * or -EBUSY (a CONFIG_KASAN kernel without TWA_NMI_CURRENT).
 */
static inline int codectl_task_work_add_nmi(struct callback_head *head,
					    struct irq_work *kick)
{
#ifdef HAVE_TWA_NMI_CURRENT
	return task_work_add(current, head, TWA_NMI_CURRENT);
#elif defined(CONFIG_KASAN)
	/*
	 * Before TWA_NMI_CURRENT, task_work_add() records a KASAN stack
	 * (stack depot: locks, allocation), which NMI may not: debug
	 * kernels drop requests from NMI (the caller counts them).
	 */
	return -EBUSY;
#else
	int ret = task_work_add(current, head, TWA_RESUME);

	if (!ret)
		irq_work_queue(kick);
	return ret;
#endif
}

/* The inode's ctime: inode_get_ctime() (6.6+) replaced ->i_ctime. */
static inline struct timespec64 codectl_inode_ctime(const struct inode *inode)
{
#ifdef HAVE_INODE_GET_CTIME
	return inode_get_ctime(inode);
#else
	return inode->i_ctime;
#endif
}

/* The inode's mtime: inode_get_mtime() (6.7+) replaced ->i_mtime. */
static inline struct timespec64 codectl_inode_mtime(const struct inode *inode)
{
#ifdef HAVE_INODE_GET_MTIME
	return inode_get_mtime(inode);
#else
	return inode->i_mtime;
#endif
}

/* file_open_root() takes a struct path (5.12+); 5.10 its two halves. */
static inline struct file *codectl_file_open_root(const struct path *root,
						  const char *name, int flags,
						  umode_t mode)
{
#ifdef HAVE_FILE_OPEN_ROOT_PATH
	return file_open_root(root, name, flags, mode);
#else
	return file_open_root(root->dentry, root->mnt, name, flags, mode);
#endif
}

/* hrtimer_setup() (6.13+) replaced hrtimer_init() and ->function. */
static inline void codectl_hrtimer_setup(struct hrtimer *timer,
					 enum hrtimer_restart (*fn)(struct hrtimer *),
					 clockid_t clock, enum hrtimer_mode mode)
{
#ifdef HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/*
 * NMIs for the self-test: an NMI IPI to a CPU (this one included) through
 * the APIC driver (the x2APIC self-IPI register cannot send NMIs, so not
 * send_IPI_self).  `apic` is exported (GPL) on 6.1, 6.12 and 7.2.  Call
 * with preemption disabled.
 */
#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>
#include <asm/nmi.h>
#define CODECTL_HAVE_SELF_NMI	1
static inline void codectl_send_nmi(int cpu)
{
	apic->send_IPI_mask(cpumask_of(cpu), NMI_VECTOR);
}
#else
#define CODECTL_HAVE_SELF_NMI	0
static inline void codectl_send_nmi(int cpu)
{
}
#endif

/*
 * The kernel functions the tracer hooks (hooks.c) attach to.  The
 * deferred unwinder's walker, unwind_user(), exists only where the kernel
 * has deferred unwinding: its header (HAVE_UNWIND_USER) and
 * CONFIG_UNWIND_USER, which only architectures with a user unwinder
 * select (7.2's x86-64 does, its arm64 does not).  Elsewhere its hook
 * has no symbol and is not listed, and, without the header, this
 * layout-compatible type lets its replacement compile.
 */
#define CODECTL_HOOK_PERF_SYMBOL	"perf_callchain_user"
/* arm64 has arch_stack_walk_user() only with USER_STACKTRACE_SUPPORT. */
#ifdef CONFIG_USER_STACKTRACE_SUPPORT
#define CODECTL_HOOK_STACKTRACE_SYMBOL	"arch_stack_walk_user"
#else
#define CODECTL_HOOK_STACKTRACE_SYMBOL	NULL
#endif
#ifdef HAVE_UNWIND_USER
#include <linux/unwind_user_types.h>
#else
struct unwind_stacktrace {
	unsigned int nr;
	unsigned long *entries;
};
#endif
#if defined(HAVE_UNWIND_USER) && IS_ENABLED(CONFIG_UNWIND_USER)
#define CODECTL_HOOK_UNWIND_USER_SYMBOL	"unwind_user"
#else
#define CODECTL_HOOK_UNWIND_USER_SYMBOL	NULL
#endif

/*
 * What the test module (tests/vm/testmod) uses is exported in the symbol
 * namespace CODECTL_TEST.  Namespaces are string literals from 6.13 on,
 * bare words before (HAVE_NS_STRING, probe.sh).
 */
#include <linux/export.h>
#include <linux/module.h>
#ifdef HAVE_NS_STRING
#define CODECTL_EXPORT_TEST(sym)	EXPORT_SYMBOL_NS_GPL(sym, "CODECTL_TEST")
#define CODECTL_IMPORT_TEST()		MODULE_IMPORT_NS("CODECTL_TEST")
#else
#define CODECTL_EXPORT_TEST(sym)	EXPORT_SYMBOL_NS_GPL(sym, CODECTL_TEST)
#define CODECTL_IMPORT_TEST()		MODULE_IMPORT_NS(CODECTL_TEST)
#endif

/*
 * A PMD read once, as GUP-fast reads it.  6.1 has no pmdp_get_lockless():
 * there a 64-bit PMD is one word, and READ_ONCE() reads it whole.
 */
#include <linux/pgtable.h>
#ifdef pmdp_get_lockless
#define codectl_pmdp_get_lockless(pmdp)	pmdp_get_lockless(pmdp)
#else
#define codectl_pmdp_get_lockless(pmdp)	READ_ONCE(*(pmdp))
#endif

/*
 * A PTE read once, as GUP-fast reads it: ptep_get_lockless() (5.12+).
 * 5.10's GUP-fast reads a 64-bit PTE, one word, with READ_ONCE(), which
 * is its ptep_get().
 */
#ifdef HAVE_PTEP_GET_LOCKLESS
#define codectl_ptep_get_lockless(ptep)	ptep_get_lockless(ptep)
#else
#define codectl_ptep_get_lockless(ptep)	ptep_get(ptep)
#endif

/*
 * Has @t per-task perf events (perf record -- CMD, -p PID, inherited by
 * its children)?  One context pointer (6.2+); before, one per kind of
 * context (HAVE_PERF_EVENT_CTXP_ARRAY).
 */
#ifdef CONFIG_PERF_EVENTS
#ifdef HAVE_PERF_EVENT_CTXP_ARRAY
static inline bool codectl_task_perf(struct task_struct *t)
{
	int i;

	for (i = 0; i < perf_nr_task_contexts; i++)
		if (READ_ONCE(t->perf_event_ctxp[i]))
			return true;
	return false;
}
#else
static inline bool codectl_task_perf(struct task_struct *t)
{
	return READ_ONCE(t->perf_event_ctxp);
}
#endif
#else
static inline bool codectl_task_perf(struct task_struct *t)
{
	return false;
}
#endif

#endif /* CODECTL_COMPAT_H */
