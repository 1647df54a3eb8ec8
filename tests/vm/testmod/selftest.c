// SPDX-License-Identifier: GPL-2.0
/*
 * CODECTL_TEST_IOC_SELFTEST_START/STOP (the test module, tests/vm/testmod):
 * a kernel self-test of the deferred
 * unwind API with two consumers.  An hrtimer pinned to the caller's CPU
 * requests (hard IRQ) whenever it interrupts the caller's thread, then
 * sends an NMI to its own CPU, whose handler requests with the second
 * consumer.  Checked: the NMI's cookie is the hrtimer's of the same
 * entry; each callback's cookie is its request's; both consumers got the
 * same trace for one cookie.
 *
 * With CODECTL_SELFTEST_REMOTE the hrtimer runs on another CPU and only
 * sends NMIs to the caller's CPU: they interrupt its user code, as PMU
 * overflows do, which the first mode (an NMI inside the timer's
 * interrupt) never does.  Only the NMI consumer requests then, and its
 * traces come with CODECTL_TRACE_MOVED when the task ran on before the
 * task_work did.  Each of those NMIs also runs a tracer hook's own walk
 * on the registers it interrupted (perf_callchain_user()'s replacement
 * and arch_stack_walk_user()'s in turn, codectl_hooks_selftest_walk()):
 * no faults, no locks, in a real NMI.  The callback compares its callers
 * (frame 0 may have moved) with the trace the task-context walk gave.
 *
 * With CODECTL_SELFTEST_SLOW there is no NMI: the hrtimer consumer's
 * callback queues a task_work that spins after the delivery, on the
 * target's way out to user space, while the timer goes on requesting:
 * requests come faster than deliveries, and the target must still get
 * back to user space.
 *
 * Protocol of STOP (documented in codectl_test.h): disarm (timer cancelled, NMI
 * handler unregistered: no request after this), deliver the caller's own
 * pending requests of this entry (if the caller is the target thread, the
 * requests made during STOP's own kernel entry would otherwise be
 * delivered only after STOP returns; every earlier entry of the target
 * has ended, and its callbacks have run), wait (at most 2 s) for the
 * target's callbacks still queued when STOP comes from another thread,
 * then report and unregister the consumers.
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/irq_regs.h>

#include <codectl/unwind_deferred.h>
#include "internal.h"
#include "compat.h"
#include "codectl_test.h"
#include "testmod.h"

#define CODECTL_ST_RING		16
#define CODECTL_ST_IRQ		0
#define CODECTL_ST_NMI		1

/* The first callback seen for a cookie, to compare with the other's. */
struct codectl_st_seen {
	u64 cookie;
	u32 hash;
	u32 nr;
	u32 stop;
	u32 which;	/* consumers seen: BIT(CODECTL_ST_IRQ) | BIT(...NMI) */
};

struct codectl_st_consumer {
	struct codectl_unwind_work work;
	atomic64_t requests;	/* queued (request returned 0) */
	atomic64_t callbacks;
	atomic64_t cookie;	/* what the last request returned */
};

static struct {
	struct mutex lock;		/* START, STOP, module exit */
	bool running;			/* between START and STOP */
	bool armed;			/* the timer and NMI may request */
	struct task_struct *target;	/* the START caller, referenced */
	bool remote;			/* CODECTL_SELFTEST_REMOTE */
	bool slow;			/* CODECTL_SELFTEST_SLOW */
	int target_cpu;			/* remote: where the NMIs go */
	int timer_cpu;			/* remote: where the timer runs */
	ktime_t period;
	struct hrtimer timer;
	struct codectl_st_consumer c[2];
	atomic64_t nmi_walks;
	atomic64_t nmi_walk_frames;
	atomic64_t nmi_walk_compared;
	atomic64_t nmi_walk_equal;
	atomic64_t entries;
	atomic64_t cookie_mismatches;
	atomic64_t trace_mismatches;
	atomic64_t refused;
	atomic64_t moved;		/* callbacks with CODECTL_TRACE_MOVED */
	atomic64_t repeats;		/* requests that returned 1 */
	atomic64_t slow_works;		/* SLOW's task_works run */
	atomic64_t nmi_user;		/* NMI requests that hit user code */
	atomic64_t user_cookie;		/* last request from user mode */
	wait_queue_head_t wq;		/* callbacks wake STOP */
	spinlock_t seen_lock;		/* ring and last trace; task context */
	struct codectl_st_seen seen[CODECTL_ST_RING];
	unsigned int seen_next;
	u64 *last_ips;
	u32 last_nr;
	u32 last_stop;
} codectl_st = {
	.lock = __MUTEX_INITIALIZER(codectl_st.lock),
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER(codectl_st.wq),
	.seen_lock = __SPIN_LOCK_UNLOCKED(codectl_st.seen_lock),
};

/*
 * The last NMI walk of a CPU, for the callback of its cookie: written in
 * the NMI, cookie last; read by the callback, cookie first and last.
 */
struct codectl_st_walk {
	u64 cookie;
	u32 nr;
	u32 hash;
	u64 buf[CODECTL_HOOKS_ST_MAX + 1];
};

static DEFINE_PER_CPU(struct codectl_st_walk, codectl_st_walk);

/* The hrtimer handler of this CPU is waiting for its NMI. */
static DEFINE_PER_CPU(int, codectl_st_expected);
static DEFINE_PER_CPU(int, codectl_st_in_timer);
static DEFINE_PER_CPU(int, codectl_st_nmi_seen);
static DEFINE_PER_CPU(u64, codectl_st_timer_cookie);

/* Count a request of consumer @i that returned @ret and @cookie. */
static void codectl_st_requested(int i, int ret, u64 cookie)
{
	struct codectl_st_consumer *c = &codectl_st.c[i];

	if (ret < 0) {
		atomic64_inc(&codectl_st.refused);
		return;
	}
	if (ret == 0) {
		atomic64_set(&c->cookie, cookie);
		atomic64_inc(&c->requests);
		return;
	}
	atomic64_inc(&codectl_st.repeats);
	/* Asked again for one user state: the same cookie as before. */
	if (atomic64_read(&c->cookie) != cookie)
		atomic64_inc(&codectl_st.cookie_mismatches);
}

/*
 * SLOW: after each delivery to the hrtimer consumer, a task_work of its
 * own (one per delivery) that runs on the target's way out and does not
 * end before the timer has requested three more times (or 20 ms): the
 * target stays in the kernel while requests come.  Module exit waits for
 * those still queued (the target's own way out, or its exit, runs them).
 */
#define CODECTL_ST_SLOW_REQUESTS	3
#define CODECTL_ST_SLOW_MAX_US		20000

static atomic_t codectl_st_slow_pending = ATOMIC_INIT(0);

/* Requests the hrtimer made that did not fail. */
static u64 codectl_st_irq_asked(void)
{
	return atomic64_read(&codectl_st.c[CODECTL_ST_IRQ].requests) +
	       atomic64_read(&codectl_st.repeats);
}

static void codectl_st_slow_fn(struct callback_head *head)
{
	u64 asked = codectl_st_irq_asked();
	unsigned int us;

	kfree(head);
	for (us = 0; us < CODECTL_ST_SLOW_MAX_US &&
	     codectl_st_irq_asked() - asked < CODECTL_ST_SLOW_REQUESTS &&
	     READ_ONCE(codectl_st.armed); us += 10)
		udelay(10);
	atomic64_inc(&codectl_st.slow_works);
	wake_up(&codectl_st.wq);
	/* Last: module exit waits for 0, then for RCU tasks. */
	atomic_dec(&codectl_st_slow_pending);
}

static void codectl_st_slow_queue(void)
{
	struct callback_head *cb = kmalloc(sizeof(*cb), GFP_KERNEL);

	if (!cb)
		return;
	init_task_work(cb, codectl_st_slow_fn);
	atomic_inc(&codectl_st_slow_pending);
	if (task_work_add(current, cb, TWA_RESUME)) {
		atomic_dec(&codectl_st_slow_pending);
		kfree(cb);
	}
}

static u64 codectl_st_outstanding(void)
{
	u64 n = 0;
	int i;

	for (i = 0; i < 2; i++)
		n += atomic64_read(&codectl_st.c[i].requests) -
		     atomic64_read(&codectl_st.c[i].callbacks);
	return n;
}

/* A hash of the callers (frame 0 is where the task was). */
static u32 codectl_st_callers_hash(const u64 *ips, u32 nr)
{
	return nr > 1 ? jhash(ips + 1, (nr - 1) * sizeof(u64), nr) : nr;
}

/*
 * The NMI consumer's trace of @cookie against the hook's walk the NMI
 * made: the same callers (the deferred trace is cut at the NMI walk's
 * room).  Not compared when a later NMI replaced that walk.
 */
static void codectl_st_compare(const struct codectl_unwind_trace *t,
			       u64 cookie)
{
	const struct codectl_st_walk *w =
		per_cpu_ptr(&codectl_st_walk, codectl_st.target_cpu);
	u32 nr, hash, tnr = min_t(u32, t->nr, CODECTL_HOOKS_ST_MAX);

	if (READ_ONCE(w->cookie) != cookie)
		return;
	smp_rmb();	/* the fields after the cookie: codectl_st_nmi_walk() */
	nr = w->nr;
	hash = w->hash;
	smp_rmb();	/* and the cookie again: not replaced meanwhile */
	if (READ_ONCE(w->cookie) != cookie)
		return;
	atomic64_inc(&codectl_st.nmi_walk_compared);
	if (nr == tnr && hash == codectl_st_callers_hash(t->ips, tnr))
		atomic64_inc(&codectl_st.nmi_walk_equal);
}

static void codectl_st_callback(struct codectl_unwind_work *work,
				const struct codectl_unwind_trace *t,
				u64 cookie)
{
	struct codectl_st_consumer *c =
		container_of(work, struct codectl_st_consumer, work);
	int i = c - codectl_st.c;
	struct codectl_st_seen *e = NULL;
	unsigned int k;
	u32 hash;

	if (atomic64_read(&c->cookie) != cookie)
		atomic64_inc(&codectl_st.cookie_mismatches);
	if (i == CODECTL_ST_NMI && codectl_st.remote)
		codectl_st_compare(t, cookie);
	hash = jhash(t->ips, t->nr * sizeof(u64), t->nr);
	hash = jhash(t->methods, t->nr, hash);

	spin_lock(&codectl_st.seen_lock);
	for (k = 0; k < CODECTL_ST_RING; k++) {
		if (codectl_st.seen[k].which &&
		    codectl_st.seen[k].cookie == cookie) {
			e = &codectl_st.seen[k];
			break;
		}
	}
	if (!e) {
		e = &codectl_st.seen[codectl_st.seen_next++ % CODECTL_ST_RING];
		e->cookie = cookie;
		e->hash = hash;
		e->nr = t->nr;
		e->stop = t->stop;
		e->which = BIT(i);
	} else if (!(e->which & BIT(i))) {
		if (e->hash != hash || e->nr != t->nr || e->stop != t->stop)
			atomic64_inc(&codectl_st.trace_mismatches);
		e->which |= BIT(i);
		if (e->which == (BIT(CODECTL_ST_IRQ) | BIT(CODECTL_ST_NMI)))
			atomic64_inc(&codectl_st.entries);
	}
	if (t->flags & CODECTL_TRACE_MOVED)
		atomic64_inc(&codectl_st.moved);
	if (i == (codectl_st.remote ? CODECTL_ST_NMI : CODECTL_ST_IRQ) &&
	    codectl_st.last_ips &&
	    cookie == atomic64_read(&codectl_st.user_cookie)) {
		codectl_st.last_nr = t->nr;
		codectl_st.last_stop = t->stop;
		if (t->nr)
			memcpy(codectl_st.last_ips, t->ips,
			       t->nr * sizeof(u64));
	}
	spin_unlock(&codectl_st.seen_lock);

	/* Not under seen_lock: it allocates (GFP_KERNEL). */
	if (codectl_st.slow && i == CODECTL_ST_IRQ && current->mm &&
	    !(current->flags & PF_EXITING))
		codectl_st_slow_queue();
	atomic64_inc(&c->callbacks);
	wake_up(&codectl_st.wq);
}

#if CODECTL_HAVE_SELF_NMI
/* In the NMI that interrupted the target's user code: a hook's walk. */
static void codectl_st_nmi_walk(struct pt_regs *regs, u64 cookie)
{
	struct codectl_st_walk *w = this_cpu_ptr(&codectl_st_walk);
	bool perf = atomic64_inc_return(&codectl_st.nmi_walks) & 1;
	u32 nr;

	WRITE_ONCE(w->cookie, 0);
	smp_wmb();	/* the cookie cleared before the fields change */
	nr = codectl_hooks_selftest_walk(regs, w->buf, perf);
	atomic64_add(nr, &codectl_st.nmi_walk_frames);
	w->nr = nr;
	w->hash = codectl_st_callers_hash(w->buf + 1, nr);
	smp_wmb();	/* the fields before the cookie: codectl_st_compare() */
	WRITE_ONCE(w->cookie, cookie);
}

static int codectl_st_nmi(unsigned int type, struct pt_regs *regs)
{
	u64 cookie;
	int ret;

	if (!this_cpu_read(codectl_st_expected))
		return NMI_DONE;
	this_cpu_write(codectl_st_expected, 0);
	if (READ_ONCE(codectl_st.armed) &&
	    current == READ_ONCE(codectl_st.target)) {
		ret = codectl_unwind_deferred_request(&codectl_st.c[CODECTL_ST_NMI].work,
						      &cookie);
		codectl_st_requested(CODECTL_ST_NMI, ret, cookie);
		/* Within the hrtimer handler: the same kernel entry. */
		if (ret >= 0 && this_cpu_read(codectl_st_in_timer) &&
		    cookie != this_cpu_read(codectl_st_timer_cookie))
			atomic64_inc(&codectl_st.cookie_mismatches);
		if (ret >= 0 && user_mode(regs)) {
			atomic64_inc(&codectl_st.nmi_user);
			atomic64_set(&codectl_st.user_cookie, cookie);
			if (codectl_st.remote && ret == 0)
				codectl_st_nmi_walk(regs, cookie);
		}
	}
	this_cpu_write(codectl_st_nmi_seen, 1);
	return NMI_HANDLED;
}
#endif

static enum hrtimer_restart codectl_st_timer(struct hrtimer *timer)
{
	struct pt_regs *regs = get_irq_regs();
	u64 cookie;
	int ret, i;

	if (!READ_ONCE(codectl_st.armed))
		return HRTIMER_NORESTART;
	if (codectl_st.remote) {
		/* Whoever runs there: the handler asks only for the target. */
		WRITE_ONCE(per_cpu(codectl_st_expected, codectl_st.target_cpu),
			   1);
		/* The flag before the IPI: the handler must see it set. */
		smp_wmb();
		codectl_send_nmi(codectl_st.target_cpu);
	} else if (current == READ_ONCE(codectl_st.target)) {
		/* Ticks landing on other tasks are not requests. */
		ret = codectl_unwind_deferred_request(&codectl_st.c[CODECTL_ST_IRQ].work,
						      &cookie);
		codectl_st_requested(CODECTL_ST_IRQ, ret, cookie);
		if (ret >= 0 && regs && user_mode(regs))
			atomic64_set(&codectl_st.user_cookie, cookie);
		if (ret >= 0 && !codectl_st.slow) {
			this_cpu_write(codectl_st_timer_cookie, cookie);
			this_cpu_write(codectl_st_nmi_seen, 0);
			this_cpu_write(codectl_st_in_timer, 1);
			this_cpu_write(codectl_st_expected, 1);
			barrier();
			codectl_send_nmi(smp_processor_id());
			/* The NMI comes at once; do not wait forever. */
			for (i = 0; i < 100000; i++) {
				if (this_cpu_read(codectl_st_nmi_seen))
					break;
				cpu_relax();
			}
			barrier();
			this_cpu_write(codectl_st_in_timer, 0);
		}
	}
	hrtimer_forward_now(timer, codectl_st.period);
	return HRTIMER_RESTART;
}

/* Start the timer on the CPU this runs on (smp_call_function_single). */
static void codectl_st_arm_timer(void *unused)
{
	hrtimer_start(&codectl_st.timer, codectl_st.period,
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/* No request after this returns.  Under codectl_st.lock. */
static void codectl_st_disarm(void)
{
	WRITE_ONCE(codectl_st.armed, false);
	hrtimer_cancel(&codectl_st.timer);
#if CODECTL_HAVE_SELF_NMI
	/* Waits for a handler running on another CPU (synchronize_rcu). */
	if (!codectl_st.slow)
		unregister_nmi_handler(NMI_LOCAL, "codectl_selftest");
#endif
}

/* After disarming: consumers gone, target released.  Under the lock. */
static void codectl_st_teardown(void)
{
	int cpu;

	codectl_unwind_deferred_cancel(&codectl_st.c[CODECTL_ST_IRQ].work);
	codectl_unwind_deferred_cancel(&codectl_st.c[CODECTL_ST_NMI].work);
	for_each_possible_cpu(cpu)
		per_cpu(codectl_st_expected, cpu) = 0;
	put_task_struct(codectl_st.target);
	codectl_st.target = NULL;
	kvfree(codectl_st.last_ips);
	codectl_st.last_ips = NULL;
	codectl_st.running = false;
}

static long codectl_st_start(void __user *uargs)
{
	struct codectl_selftest_args a;
	u64 *ips;
	int ret, i;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&a, uargs, sizeof(a)))
		return -EFAULT;
	if (a.period_us < 10 || a.period_us > 1000000 ||
	    a.flags & ~(CODECTL_SELFTEST_REMOTE | CODECTL_SELFTEST_SLOW) ||
	    a.flags == (CODECTL_SELFTEST_REMOTE | CODECTL_SELFTEST_SLOW))
		return -EINVAL;
	/* Arguments first: their errors are the same everywhere. */
	if (!CODECTL_HAVE_SELF_NMI && !(a.flags & CODECTL_SELFTEST_SLOW))
		return -EOPNOTSUPP;
	ips = kvmalloc_array(CODECTL_UNWIND_MAX_FRAMES, sizeof(u64),
			     GFP_KERNEL_ACCOUNT);
	if (!ips)
		return -ENOMEM;

	mutex_lock(&codectl_st.lock);
	if (codectl_st.running) {
		ret = -EBUSY;
		goto err;
	}
	for (i = 0; i < 2; i++) {
		atomic64_set(&codectl_st.c[i].requests, 0);
		atomic64_set(&codectl_st.c[i].callbacks, 0);
		atomic64_set(&codectl_st.c[i].cookie, 0);
	}
	atomic64_set(&codectl_st.entries, 0);
	atomic64_set(&codectl_st.nmi_walks, 0);
	atomic64_set(&codectl_st.nmi_walk_frames, 0);
	atomic64_set(&codectl_st.nmi_walk_compared, 0);
	atomic64_set(&codectl_st.nmi_walk_equal, 0);
	atomic64_set(&codectl_st.cookie_mismatches, 0);
	atomic64_set(&codectl_st.trace_mismatches, 0);
	atomic64_set(&codectl_st.refused, 0);
	atomic64_set(&codectl_st.moved, 0);
	atomic64_set(&codectl_st.repeats, 0);
	atomic64_set(&codectl_st.slow_works, 0);
	atomic64_set(&codectl_st.nmi_user, 0);
	atomic64_set(&codectl_st.user_cookie, 0);
	memset(codectl_st.seen, 0, sizeof(codectl_st.seen));
	codectl_st.seen_next = 0;
	codectl_st.last_nr = 0;
	codectl_st.last_stop = 0;
	codectl_st.last_ips = ips;

	ret = codectl_unwind_deferred_init(&codectl_st.c[CODECTL_ST_IRQ].work,
					   codectl_st_callback);
	if (ret)
		goto err;
	ret = codectl_unwind_deferred_init(&codectl_st.c[CODECTL_ST_NMI].work,
					   codectl_st_callback);
	if (ret)
		goto err_irq;
	codectl_st.remote = a.flags & CODECTL_SELFTEST_REMOTE;
	codectl_st.slow = a.flags & CODECTL_SELFTEST_SLOW;
#if CODECTL_HAVE_SELF_NMI
	if (!codectl_st.slow) {
		ret = register_nmi_handler(NMI_LOCAL, codectl_st_nmi, 0,
					   "codectl_selftest");
		if (ret)
			goto err_nmi;
	}
#endif
	cpus_read_lock();
	codectl_st.target_cpu = get_cpu();
	put_cpu();
	codectl_st.timer_cpu = codectl_st.target_cpu;
	if (codectl_st.remote) {
		codectl_st.timer_cpu = cpumask_any_but(cpu_online_mask,
						       codectl_st.target_cpu);
		if (codectl_st.timer_cpu >= nr_cpu_ids) {
			cpus_read_unlock();
			ret = -EOPNOTSUPP;
			goto err_cpus;
		}
	}
	codectl_st.target = get_task_struct(current);
	codectl_st.period = ns_to_ktime((u64)a.period_us * NSEC_PER_USEC);
	codectl_st.running = true;
	WRITE_ONCE(codectl_st.armed, true);
	codectl_hrtimer_setup(&codectl_st.timer, codectl_st_timer,
			      CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	/*
	 * Pinned to the CPU it is started on: the caller's (pin the thread
	 * there first), or the other one for REMOTE.
	 */
	smp_call_function_single(codectl_st.timer_cpu, codectl_st_arm_timer,
				 NULL, 1);
	cpus_read_unlock();
	mutex_unlock(&codectl_st.lock);
	return 0;

err_cpus:
#if CODECTL_HAVE_SELF_NMI
	if (!codectl_st.slow)
		unregister_nmi_handler(NMI_LOCAL, "codectl_selftest");
err_nmi:
#endif
	codectl_unwind_deferred_cancel(&codectl_st.c[CODECTL_ST_NMI].work);
err_irq:
	codectl_unwind_deferred_cancel(&codectl_st.c[CODECTL_ST_IRQ].work);
err:
	codectl_st.last_ips = NULL;
	mutex_unlock(&codectl_st.lock);
	kvfree(ips);
	return ret;
}

static long codectl_st_stop(void __user *uargs)
{
	struct codectl_selftest_args a;
	u32 n;
	int ret = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&a, uargs, sizeof(a)))
		return -EFAULT;

	mutex_lock(&codectl_st.lock);
	if (!codectl_st.running) {
		mutex_unlock(&codectl_st.lock);
		return -EINVAL;
	}
	codectl_st_disarm();
	if (current == codectl_st.target)
		codectl_deferred_flush();
	wait_event_timeout(codectl_st.wq, !codectl_st_outstanding() &&
			   (current == codectl_st.target ||
			    !atomic_read(&codectl_st_slow_pending)), 2 * HZ);

	a.irq_requests = atomic64_read(&codectl_st.c[CODECTL_ST_IRQ].requests);
	a.nmi_requests = atomic64_read(&codectl_st.c[CODECTL_ST_NMI].requests);
	/* Consumers are still registered: read callbacks under the lock. */
	spin_lock(&codectl_st.seen_lock);
	a.irq_callbacks = atomic64_read(&codectl_st.c[CODECTL_ST_IRQ].callbacks);
	a.nmi_callbacks = atomic64_read(&codectl_st.c[CODECTL_ST_NMI].callbacks);
	a.entries = atomic64_read(&codectl_st.entries);
	a.cookie_mismatches = atomic64_read(&codectl_st.cookie_mismatches);
	a.trace_mismatches = atomic64_read(&codectl_st.trace_mismatches);
	a.refused = atomic64_read(&codectl_st.refused);
	a.moved = atomic64_read(&codectl_st.moved);
	a.nmi_user = atomic64_read(&codectl_st.nmi_user);
	a.nmi_walks = atomic64_read(&codectl_st.nmi_walks);
	a.nmi_walk_frames = atomic64_read(&codectl_st.nmi_walk_frames);
	a.nmi_walk_compared = atomic64_read(&codectl_st.nmi_walk_compared);
	a.nmi_walk_equal = atomic64_read(&codectl_st.nmi_walk_equal);
	a.repeats = atomic64_read(&codectl_st.repeats);
	a.slow_works = atomic64_read(&codectl_st.slow_works);
	a.nr = codectl_st.last_nr;
	a.stop = codectl_st.last_stop;
	spin_unlock(&codectl_st.seen_lock);
	/* No callback can change last_ips once the consumers are gone. */
	codectl_unwind_deferred_cancel(&codectl_st.c[CODECTL_ST_IRQ].work);
	codectl_unwind_deferred_cancel(&codectl_st.c[CODECTL_ST_NMI].work);
	n = min(a.nr, a.max_frames);
	if (a.ips && n &&
	    copy_to_user(u64_to_user_ptr(a.ips), codectl_st.last_ips,
			 n * sizeof(u64)))
		ret = -EFAULT;
	codectl_st_teardown();
	mutex_unlock(&codectl_st.lock);
	if (!ret && copy_to_user(uargs, &a, sizeof(a)))
		ret = -EFAULT;
	return ret;
}

/**
 * codectl_selftest_ioctl() - CODECTL_TEST_IOC_SELFTEST_START and _STOP
 * @file:	the device file
 * @cmd:	the ioctl
 * @arg:	user pointer to struct codectl_selftest_args
 *
 * Return: 0 or a negative errno, as documented in codectl_test.h.
 */
long codectl_selftest_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	void __user *uargs = (void __user *)arg;

	switch (cmd) {
	case CODECTL_TEST_IOC_SELFTEST_START:
		return codectl_st_start(uargs);
	case CODECTL_TEST_IOC_SELFTEST_STOP:
		return codectl_st_stop(uargs);
	}
	return -ENOTTY;
}

/* Module unload: disarm a test left running (its caller may be gone). */
void codectl_selftest_exit(void)
{
	mutex_lock(&codectl_st.lock);
	if (codectl_st.running) {
		codectl_st_disarm();
		/* Pending requests are forgotten: their task_works find none. */
		codectl_st_teardown();
	}
	mutex_unlock(&codectl_st.lock);
	/* SLOW's task_works, queued on a target not yet out: their text is ours. */
	while (atomic_read(&codectl_st_slow_pending))
		msleep(20);
	synchronize_rcu_tasks();
}
