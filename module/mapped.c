// SPDX-License-Identifier: GPL-2.0
/*
 * Discovery when code is mapped, not at the first sample taken in it.
 *
 * Discovery (discover.c) examines an object when an unwind first meets a
 * pc in it, after that unwind: its sample is cut.  A process is new at
 * exec (its program and the dynamic loader mapped) and gets every library
 * the loader maps after, so each of them costs a cut sample, and in a
 * process that lives a few milliseconds, or a library's constructor, that
 * is a good part of its samples.  perf is told of every executable
 * mapping: perf_event_mmap() is called for each mmap() or mprotect() that
 * makes a file mapping executable, with the mmap lock held, in the task
 * that maps it.  A kprobe there asks discovery for the new mapping; its
 * task_work runs before the task returns to user space, so before any of
 * the new code runs.
 *
 * Only for a task perf samples by itself: one with per-task perf events
 * (perf record -- CMD, perf record -p PID, and the children they inherit
 * to), which also keeps processes nobody profiles from being registered
 * (a registry costs their exit and forks: design.md, "Discovery").  A
 * system-wide profile (perf record -a) keeps discovery at the first
 * unwind.  Otherwise a mapping costs the kprobe and these tests.
 * Counters: debugfs codectl/mapped.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/seq_file.h>

#include "internal.h"
#include "compat.h"

static bool codectl_mapped = true;
module_param_named(discover_mapped, codectl_mapped, bool, 0644);
MODULE_PARM_DESC(discover_mapped,
		 "Examine executable file mappings when they are made, in tasks perf samples by themselves (default Y; with discover)");

static struct {
	atomic64_t mappings;	/* executable file mappings seen */
	atomic64_t requests;	/* of them, examined: the task perf's */
} mapped_stats;

static bool mapped_attached;
static int mapped_error;

/* perf_event_mmap(vma): its caller holds the mmap lock. */
static int codectl_mapped_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma;

	vma = (struct vm_area_struct *)regs_get_kernel_argument(regs, 0);
	if (!vma || !(vma->vm_flags & VM_EXEC) || !vma->vm_file ||
	    vma->vm_mm != current->mm)
		return 0;
	atomic64_inc(&mapped_stats.mappings);
	if (!READ_ONCE(codectl_mapped) || !codectl_task_perf(current))
		return 0;
	atomic64_inc(&mapped_stats.requests);
	codectl_discover_request(vma->vm_start);
	return 0;
}

/* A kprobe on the handler, or what it calls first, would recurse. */
NOKPROBE_SYMBOL(codectl_mapped_pre);

static struct kprobe mapped_kp = {
	.symbol_name = "perf_event_mmap",
	.pre_handler = codectl_mapped_pre,
};

/**
 * codectl_mapped_init() - examine new executable mappings from now on
 *
 * A kernel without perf_event_mmap() to probe (no CONFIG_PERF_EVENTS)
 * keeps discovery at the first unwind only: said once, not an error.
 */
void codectl_mapped_init(void)
{
	mapped_error = register_kprobe(&mapped_kp);
	if (mapped_error) {
		pr_warn("codectl: cannot probe perf_event_mmap (%d): objects are examined at the first unwind that meets them\n",
			mapped_error);
		return;
	}
	mapped_attached = true;
}

/**
 * codectl_mapped_exit() - no new requests from mappings
 *
 * Before discovery's exit: unregister_kprobe() waits for running
 * handlers.
 */
void codectl_mapped_exit(void)
{
	if (!mapped_attached)
		return;
	unregister_kprobe(&mapped_kp);
	mapped_attached = false;
}

/* debugfs codectl/mapped */
int codectl_mapped_show(struct seq_file *m, void *v)
{
	seq_printf(m, "attached %d\n", mapped_attached);
	seq_printf(m, "error %d\n", mapped_error);
	seq_printf(m, "enabled %d\n", READ_ONCE(codectl_mapped));
	seq_printf(m, "mappings %lld\n",
		   (long long)atomic64_read(&mapped_stats.mappings));
	seq_printf(m, "requests %lld\n",
		   (long long)atomic64_read(&mapped_stats.requests));
	return 0;
}
