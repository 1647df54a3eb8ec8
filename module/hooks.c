// SPDX-License-Identifier: GPL-2.0
/*
 * codectl: the tracer hooks.  A kprobe on each of perf_callchain_user(),
 * arch_stack_walk_user() and, where the kernel has it, unwind_user()
 * redirects the call, for a task with registrations (or discovery on),
 * to the module's function of the same signature, which walks with
 * codectl's unwinder; every other call runs the kernel's code untouched.
 * The replacements run in NMI, hardirq or with interrupts off, so they
 * walk with walk.h's non-faulting reads (unwind_user() may fault when its
 * caller can).  Unload waits for the redirected calls in flight, then
 * for RCU and RCU tasks.  Why kprobes, IPMODIFY, IBT: docs/design.md,
 * "Tracer hooks".
 */
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "arch.h"
#include "internal.h"
#include "compat.h"
#include "walk.h"

enum codectl_hook_id {
	CODECTL_HOOK_PERF,
	CODECTL_HOOK_STACKTRACE,
	CODECTL_HOOK_UNWIND_USER,
	CODECTL_NR_HOOKS,
};

/**
 * struct codectl_hook - one kernel user-stack walker and its redirection
 * @kp:		the kprobe, reinitialised at each attach
 * @symbol:	the function, or NULL where this kernel has none
 * @target:	our function with its signature
 * @attached:	@kp is registered
 * @error:	the last failed attach's errno, or 0
 * @calls:	calls seen by the pre-handler
 * @redirected:	calls sent to @target
 * @declined:	calls left to the kernel
 * @missed:	calls kprobes missed while earlier attachments were live
 * @walk:	what the redirected calls' walks found
 * @harm_checked: walks compared with the kernel's (check_harm)
 * @harm_shorter: of them, walks that gave fewer frames than the kernel's
 *		valid prefix
 * @harm_last:	the last such walk: how its last frame was found
 *		(CODECTL_FRAME_*), its stop, frames given and the kernel's
 *		prefix, one byte each
 */
struct codectl_hook {
	struct kprobe kp;
	const char *symbol;
	void *target;
	bool attached;
	int error;
	atomic64_t calls;
	atomic64_t redirected;
	atomic64_t declined;
	u64 missed;
	struct codectl_walk_counters walk;
	atomic64_t harm_checked;
	atomic64_t harm_shorter;
	u32 harm_last;
};

static struct codectl_hook codectl_hooks[CODECTL_NR_HOOKS];

/* Redirected calls that have not left our replacement yet. */
static atomic_long_t codectl_hooks_inflight;

/* Serialises attach and detach (module parameter, init, exit). */
static DEFINE_MUTEX(codectl_hooks_lock);
static bool codectl_hooks_on = true;
static bool codectl_hooks_live;

/*
 * The no-harm check, a debugging aid (off by default: it walks every
 * stack twice): each redirected walk is compared with the kernel's own
 * frame-pointer walk from the same registers (codectl_walk_reference()),
 * and a walk that gives fewer frames than that walk's valid prefix is
 * counted (debugfs codectl/hooks, "harm").  A walk its consumer cut and
 * one that gave no frame (the pc of an exec's old program) are not
 * compared, nor one that reached the outermost frame where the kernel's
 * walk need not stop there (CODECTL_ARCH_FP_CHAIN_ENDS).
 */
static bool codectl_check_harm;
module_param_named(check_harm, codectl_check_harm, bool, 0644);
MODULE_PARM_DESC(check_harm,
		 "Count the hooks' stacks shorter than the kernel's frame-pointer walk (debug; default 0)");

static void codectl_hook_harm(struct codectl_hook *h, struct codectl_walk *w,
			      const struct pt_regs *regs, unsigned int given)
{
	unsigned int ref;

	if (!READ_ONCE(codectl_check_harm) || !given || !w->stop)
		return;
	if (!CODECTL_ARCH_FP_CHAIN_ENDS &&
	    (w->stop == CODECTL_STOP_OUTERMOST || w->stop == CODECTL_STOP_END))
		return;
	atomic64_inc(&h->harm_checked);
	ref = codectl_walk_reference(w, regs, given + 1);
	if (ref > given) {
		atomic64_inc(&h->harm_shorter);
		WRITE_ONCE(h->harm_last, w->method << 24 | w->stop << 16 |
			   min(given, 255U) << 8 | min(ref, 255U));
	}
}

/* The last statement of every replacement. */
static __always_inline void codectl_hook_leave(void)
{
	atomic_long_dec(&codectl_hooks_inflight);
}

/* ---- the replacements ------------------------------------------------- */

/*
 * perf_callchain_user(): the user part of a perf callchain.  As the
 * kernel's, frame 0 is the pc, and the walk stops when the entry is full
 * (perf_callchain_store() honours max_stack and contexts_maxed).
 */
static void codectl_perf_callchain_user(struct perf_callchain_entry_ctx *entry,
					struct pt_regs *regs)
{
	struct codectl_hook *h = &codectl_hooks[CODECTL_HOOK_PERF];
	struct codectl_walk w;
	unsigned int given = 0, n;

	rcu_read_lock();
	codectl_walk_start(&w, regs, 0, true);
	while (!w.stop) {
		if (perf_callchain_store(entry, w.f.ip))
			break;
		given++;
		/*
		 * A recursion's frames straight into the entry, as
		 * perf_callchain_store() would store them one by one (no
		 * context is stored meanwhile: contexts_maxed stays false).
		 */
		n = codectl_walk_repeats(&w, entry->entry->ip + entry->entry->nr,
					 entry->max_stack - entry->nr);
		entry->entry->nr += n;
		entry->nr += n;
		given += n;
		if (entry->nr >= entry->max_stack)
			break;
		codectl_walk_next(&w);
	}
	codectl_hook_harm(h, &w, regs, given);
	codectl_walk_end(&w, &h->walk);
	rcu_read_unlock();
	codectl_hook_leave();
}

/*
 * arch_stack_walk_user(): each pc to @consume_entry until it says stop.
 * @consume_entry is the kernel's own pointer (stack_trace_save_user()'s
 * consumer), whose address the kernel takes: an IBT-valid target.
 */
static void codectl_arch_stack_walk_user(stack_trace_consume_fn consume_entry,
					 void *cookie,
					 const struct pt_regs *regs)
{
	struct codectl_hook *h = &codectl_hooks[CODECTL_HOOK_STACKTRACE];
	struct codectl_walk w;
	unsigned int given = 0;

	rcu_read_lock();
	codectl_walk_start(&w, regs, 0, true);
	while (!w.stop) {
		if (!consume_entry(cookie, w.f.ip))
			break;
		given++;
		codectl_walk_next(&w);
	}
	codectl_hook_harm(h, &w, regs, given);
	codectl_walk_end(&w, &h->walk);
	rcu_read_unlock();
	codectl_hook_leave();
}

static void codectl_unwind_user_walk(struct unwind_stacktrace *trace,
				     unsigned int max_entries, bool nofault)
{
	struct codectl_hook *h = &codectl_hooks[CODECTL_HOOK_UNWIND_USER];
	struct codectl_walk w;
	unsigned int room;

	codectl_walk_start(&w, task_pt_regs(current), 0, nofault);
	while (!w.stop) {
		trace->entries[trace->nr++] = w.f.ip;
		/* A recursion's frames, up to the next scheduling point. */
		room = max_entries - trace->nr;
		if (!nofault)
			room = min(room, CODECTL_WALK_RESCHED_FRAMES - trace->nr %
				   CODECTL_WALK_RESCHED_FRAMES);
		trace->nr += codectl_walk_repeats(&w,
				(u64 *)(trace->entries + trace->nr), room);
		if (trace->nr >= max_entries)
			break;
		if (!nofault && !(trace->nr % CODECTL_WALK_RESCHED_FRAMES))
			cond_resched();
		codectl_walk_next(&w);
	}
	codectl_hook_harm(h, &w, task_pt_regs(current), trace->nr);
	codectl_walk_end(&w, &h->walk);
}

/*
 * unwind_user(): up to @max_entries pcs of current's user stack from its
 * entry registers, as the kernel's (-EINVAL for no room).  Faulting reads
 * only where the caller could fault itself (unwind_user_faultable()).
 */
static int codectl_unwind_user(struct unwind_stacktrace *trace,
			       unsigned int max_entries)
{
	int ret = 0;

	trace->nr = 0;
	if (!max_entries) {
		ret = -EINVAL;
	} else if (preemptible() && !faulthandler_disabled()) {
		codectl_unwind_user_walk(trace, max_entries, false);
	} else {
		rcu_read_lock();
		codectl_unwind_user_walk(trace, max_entries, true);
		rcu_read_unlock();
	}
	codectl_hook_leave();
	return ret;
}

/* ---- the self-test's NMI walks ---------------------------------------- */

struct codectl_hook_st_ctx {
	u64 *ips;
	unsigned int nr, max;
};

static bool codectl_hook_st_consume(void *cookie, unsigned long addr)
{
	struct codectl_hook_st_ctx *c = cookie;

	c->ips[c->nr++] = addr;
	return c->nr < c->max;
}

/**
 * codectl_hooks_selftest_walk() - a hook's own walk, from the self-test
 * @regs:	the user registers an NMI interrupted
 * @buf:	CODECTL_HOOKS_ST_MAX + 1 words: a perf callchain entry's nr,
 *		then the pcs
 * @perf:	run perf_callchain_user()'s replacement, else that of
 *		arch_stack_walk_user()
 *
 * Calls the replacement itself, as the kprobe would have had the kernel
 * do (counted in that hook's counters, in flight for unloading), so the
 * self-test exercises the tracer hooks' walk in a real NMI.
 *
 * Context: NMI (any).
 * Return: the number of pcs, at buf[1] on.
 */
unsigned int codectl_hooks_selftest_walk(struct pt_regs *regs, u64 *buf,
					 bool perf)
{
	struct perf_callchain_entry *e = (struct perf_callchain_entry *)buf;
	struct perf_callchain_entry_ctx ctx = {
		.entry = e, .max_stack = CODECTL_HOOKS_ST_MAX,
	};
	struct codectl_hook_st_ctx c = {
		.ips = buf + 1, .max = CODECTL_HOOKS_ST_MAX,
	};

	atomic_long_inc(&codectl_hooks_inflight);
	if (perf) {
		e->nr = 0;
		codectl_perf_callchain_user(&ctx, regs);
		return e->nr;
	}
	codectl_arch_stack_walk_user(codectl_hook_st_consume, &c, regs);
	return c.nr;
}

CODECTL_EXPORT_TEST(codectl_hooks_selftest_walk);

/* ---- the kprobes ------------------------------------------------------ */

/*
 * Does codectl's unwinder take this call?  Lock-free (NMI): only a 64-bit
 * task with user registers, registrations (its own or discovered) in its
 * address space or discovery on, outside a KVM guest.  PF_VCPU covers
 * every moment perf can attribute a sample to a guest (the kernel's
 * function then stores nothing): decline and let it decide.
 */
static bool codectl_hook_serves(struct pt_regs *uregs)
{
	struct mm_struct *mm = current->mm;
	struct codectl_set *set;
	bool serve;

	if (!uregs || !mm ||
	    (current->flags & (PF_KTHREAD | PF_EXITING | PF_VCPU)))
		return false;
	if (!user_mode(uregs) || !codectl_arch_native(uregs))
		return false;
	rcu_read_lock();
	set = codectl_mm_set_rcu(mm);
	serve = set && set->nr;
	rcu_read_unlock();
	/*
	 * Nothing registered or discovered yet: discovery (which then
	 * examines every executable file mapping) before the task returns to
	 * user space, and meanwhile codectl's walk, which gives only callers
	 * it finds in code (the executable's text until then), where the
	 * kernel's would follow rbp anywhere.  With discovery off, the
	 * kernel's own walk.  Lock-free.
	 */
	if (!serve && READ_ONCE(codectl_discover)) {
		codectl_discover_request(instruction_pointer(uregs));
		serve = true;
	}
	return serve;
}

/* The user registers the hooked function was called with. */
static struct pt_regs *codectl_hook_uregs(const struct codectl_hook *h,
					  const struct pt_regs *cregs)
{
	/* regs_get_kernel_argument() only reads, but takes no const. */
	struct pt_regs *regs = (struct pt_regs *)cregs;

	switch (h - codectl_hooks) {
	case CODECTL_HOOK_PERF:		/* (entry, regs) */
		return (struct pt_regs *)regs_get_kernel_argument(regs, 1);
	case CODECTL_HOOK_STACKTRACE:	/* (consume_entry, cookie, regs) */
		return (struct pt_regs *)regs_get_kernel_argument(regs, 2);
	default:			/* (trace, max): current's entry */
		return task_pt_regs(current);
	}
}

static int codectl_hook_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct codectl_hook *h = container_of(kp, struct codectl_hook, kp);

	atomic64_inc(&h->calls);
	if (!codectl_hook_serves(codectl_hook_uregs(h, regs))) {
		atomic64_inc(&h->declined);
		return 0;
	}
	/* Before the redirection: unload waits for it to come back. */
	atomic_long_inc(&codectl_hooks_inflight);
	atomic64_inc(&h->redirected);
	instruction_pointer_set(regs, (unsigned long)h->target);
	return 1;
}

/* A kprobe on the handler itself (or what it calls first) would recurse. */
NOKPROBE_SYMBOL(codectl_hook_pre);
NOKPROBE_SYMBOL(codectl_hook_uregs);
NOKPROBE_SYMBOL(codectl_hook_serves);

/*
 * Never called (the pre-handler's redirection skips it); its presence
 * keeps the kprobe unoptimised and makes it IPMODIFY on the ftrace site.
 */
static void codectl_hook_post(struct kprobe *kp, struct pt_regs *regs,
			      unsigned long flags)
{
}

static void codectl_hook_attach(struct codectl_hook *h)
{
	int ret;

	if (!h->symbol || h->attached)
		return;
	memset(&h->kp, 0, sizeof(h->kp));
	h->kp.symbol_name = h->symbol;
	h->kp.pre_handler = codectl_hook_pre;
	h->kp.post_handler = codectl_hook_post;
	ret = register_kprobe(&h->kp);
	h->error = ret;
	if (ret) {
		pr_warn("codectl: cannot attach to %s (%d): its user stacks stay frame pointers only\n",
			h->symbol, ret);
		return;
	}
	h->attached = true;
}

static void codectl_hook_detach(struct codectl_hook *h)
{
	if (!h->attached)
		return;
	unregister_kprobe(&h->kp);
	h->missed += h->kp.nmissed;
	h->attached = false;
}

static void codectl_hooks_set(bool on)
{
	unsigned int i;

	for (i = 0; i < CODECTL_NR_HOOKS; i++) {
		if (on)
			codectl_hook_attach(&codectl_hooks[i]);
		else
			codectl_hook_detach(&codectl_hooks[i]);
	}
}

/* ---- the "hooks" module parameter ------------------------------------- */

static int codectl_hooks_param_set(const char *val,
				   const struct kernel_param *kp)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	mutex_lock(&codectl_hooks_lock);
	codectl_hooks_on = on;
	/* At load, init attaches; at run time, now. */
	if (codectl_hooks_live)
		codectl_hooks_set(on);
	mutex_unlock(&codectl_hooks_lock);
	return 0;
}

static const struct kernel_param_ops codectl_hooks_param_ops = {
	.set	= codectl_hooks_param_set,
	.get	= param_get_bool,
};

module_param_cb(hooks, &codectl_hooks_param_ops, &codectl_hooks_on, 0644);
MODULE_PARM_DESC(hooks,
		 "Attach to the kernel's user-stack walkers (perf_callchain_user, arch_stack_walk_user, unwind_user) so that perf, BPF and ftrace get codectl's stacks for tasks with registrations (default Y; writable at run time)");

/**
 * codectl_hooks_init() - attach the tracer hooks (module parameter hooks)
 *
 * A hook that cannot attach is reported in the kernel log and in its
 * counters; the module works on without it.
 */
void codectl_hooks_init(void)
{
	static const struct {
		const char *symbol;
		void *target;
	} table[CODECTL_NR_HOOKS] = {
		[CODECTL_HOOK_PERF] = {
			CODECTL_HOOK_PERF_SYMBOL, codectl_perf_callchain_user,
		},
		[CODECTL_HOOK_STACKTRACE] = {
			CODECTL_HOOK_STACKTRACE_SYMBOL,
			codectl_arch_stack_walk_user,
		},
		[CODECTL_HOOK_UNWIND_USER] = {
			CODECTL_HOOK_UNWIND_USER_SYMBOL, codectl_unwind_user,
		},
	};
	unsigned int i;

	for (i = 0; i < CODECTL_NR_HOOKS; i++) {
		codectl_hooks[i].symbol = table[i].symbol;
		codectl_hooks[i].target = table[i].target;
	}
	mutex_lock(&codectl_hooks_lock);
	codectl_hooks_live = true;
	codectl_hooks_set(codectl_hooks_on);
	mutex_unlock(&codectl_hooks_lock);
}

/**
 * codectl_hooks_exit() - detach the hooks and wait for their calls
 *
 * After this no CPU runs, or will run, a replacement.
 */
void codectl_hooks_exit(void)
{
	mutex_lock(&codectl_hooks_lock);
	codectl_hooks_live = false;
	codectl_hooks_set(false);
	mutex_unlock(&codectl_hooks_lock);
	/* A faulting unwind_user() walk may sleep on a page: bounded. */
	while (atomic_long_read(&codectl_hooks_inflight))
		usleep_range(1000, 2000);
	synchronize_rcu();
	synchronize_rcu_tasks();
}

/* ---- counters ------------------------------------------------------- */

static void codectl_hook_stats_get(const struct codectl_hook *h,
				   struct codectl_hook_stats *s)
{
	unsigned int i;

	s->flags = 0;
	if (h->attached) {
		s->flags |= CODECTL_HOOK_ATTACHED;
		if (h->kp.flags & KPROBE_FLAG_FTRACE)
			s->flags |= CODECTL_HOOK_FTRACE;
	}
	s->error = h->error;
	strscpy(s->name, h->symbol ?: "", sizeof(s->name));
	s->calls = atomic64_read(&h->calls);
	s->redirected = atomic64_read(&h->redirected);
	s->declined = atomic64_read(&h->declined);
	s->missed = h->missed + (h->attached ? h->kp.nmissed : 0);
	s->walks = atomic64_read(&h->walk.walks);
	s->fallbacks = atomic64_read(&h->walk.fallbacks);
	for (i = 0; i < ARRAY_SIZE(s->frames); i++)
		s->frames[i] = atomic64_read(&h->walk.frames[i]);
	for (i = 0; i < ARRAY_SIZE(s->stops); i++)
		s->stops[i] = atomic64_read(&h->walk.stops[i]);
}

/* The hooks this kernel has functions for, in index order. */
static const struct codectl_hook *codectl_hook_nth(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < CODECTL_NR_HOOKS; i++)
		if (codectl_hooks[i].symbol && !n--)
			return &codectl_hooks[i];
	return NULL;
}

/**
 * codectl_hooks_ioctl() - CODECTL_IOC_HOOK_STATS
 * @uargs:	struct codectl_hook_stats with its index
 * @usize:	its size as the caller knows it
 *
 * Return: 0, -EFAULT, -EINVAL (reserved field), -E2BIG (a longer struct
 * with a non-zero tail), -ENOENT (no such hook).
 */
long codectl_hooks_ioctl(struct codectl_hook_stats __user *uargs,
			 size_t usize)
{
	const struct codectl_hook *h;
	struct codectl_hook_stats s;
	int ret;

	ret = copy_struct_from_user(&s, sizeof(s), uargs, usize);
	if (ret)
		return ret;
	if (s.__reserved)
		return -EINVAL;
	mutex_lock(&codectl_hooks_lock);
	h = codectl_hook_nth(s.index);
	if (h)
		codectl_hook_stats_get(h, &s);
	mutex_unlock(&codectl_hooks_lock);
	if (!h)
		return -ENOENT;
	return codectl_copy_out(uargs, usize, &s, sizeof(s));
}

/**
 * codectl_hooks_show() - debugfs codectl/hooks: one block per hook
 * @m:		the seq_file
 * @v:		unused
 *
 * Return: 0.
 */
int codectl_hooks_show(struct seq_file *m, void *v)
{
	struct codectl_hook_stats s;
	const struct codectl_hook *h;
	unsigned int n, i;

	mutex_lock(&codectl_hooks_lock);
	for (n = 0; (h = codectl_hook_nth(n)); n++) {
		codectl_hook_stats_get(h, &s);
		seq_printf(m, "%s attached %d ftrace %d error %d\n", s.name,
			   !!(s.flags & CODECTL_HOOK_ATTACHED),
			   !!(s.flags & CODECTL_HOOK_FTRACE), s.error);
		seq_printf(m, "%s calls %llu redirected %llu declined %llu missed %llu fallbacks %llu walks %llu ns %lld\n",
			   s.name, s.calls, s.redirected, s.declined, s.missed,
			   s.fallbacks, s.walks, atomic64_read(&h->walk.ns));
		seq_printf(m, "%s harm checked %lld shorter %lld last %x\n",
			   s.name, atomic64_read(&h->harm_checked),
			   atomic64_read(&h->harm_shorter),
			   READ_ONCE(h->harm_last));
		seq_printf(m, "%s frames", s.name);
		for (i = 1; i < ARRAY_SIZE(s.frames); i++)
			if (codectl_frame_names[i])
				seq_printf(m, " %s %llu", codectl_frame_names[i],
					   s.frames[i]);
		seq_printf(m, "\n%s stops", s.name);
		for (i = 1; i < ARRAY_SIZE(s.stops); i++)
			if (codectl_stop_names[i])
				seq_printf(m, " %s %llu", codectl_stop_names[i],
					   s.stops[i]);
		seq_puts(m, "\n");
	}
	mutex_unlock(&codectl_hooks_lock);
	return 0;
}
