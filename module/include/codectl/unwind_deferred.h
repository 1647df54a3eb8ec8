/* SPDX-License-Identifier: GPL-2.0 */
/*
 * codectl's deferred user-space unwinding, for other kernel modules.
 *
 * The same contract as upstream's unwind_deferred_init/request/cancel
 * (include/linux/unwind_deferred.h, Linux 6.17+), which no distro kernel
 * exports: a consumer asks, from task, IRQ or NMI context, for the user
 * stack of the current task; its callback runs once, in that task's
 * context before it returns to user space, with the trace and a cookie.
 * Every request made during one kernel entry of a task gets the same
 * cookie (never 0), and all consumers asking during that entry share one
 * unwind.  A request from an IRQ or NMI on the task's way out, after the
 * callbacks, while its user registers are still those they saw, gets
 * their cookie (1 if this consumer was called back with it): requests,
 * however fast, never keep a task from user space.  Record the cookie
 * with your sample and match it with the callback's.
 *
 * Build against codectl's Module.symvers (KBUILD_EXTRA_SYMBOLS) and add
 * this directory to your include path.
 */
#ifndef CODECTL_UNWIND_DEFERRED_H
#define CODECTL_UNWIND_DEFERRED_H

#include <linux/types.h>

/**
 * struct codectl_unwind_trace - a user stack trace
 * @nr:		frames in @ips
 * @stop:	CODECTL_STOP_* reason the unwind stopped (uapi/linux/codectl.h)
 * @flags:	CODECTL_TRACE_* bits: MOVED when the task ran user code
 *		between the request and the unwind (a request from an NMI or
 *		interrupt that hit user code)
 * @ips:	the pcs, innermost first: frame 0 is the interrupted or
 *		calling pc, the others are return addresses
 * @methods:	CODECTL_FRAME_* per frame: how each was found
 *
 * Valid only during the callback; copy what you keep.
 */
struct codectl_unwind_trace {
	unsigned int nr;
	unsigned int stop;
	unsigned int flags;
	const u64 *ips;
	const u8 *methods;
};

struct codectl_unwind_work;

/**
 * typedef codectl_unwind_callback_t - a consumer's callback
 * @work:	the consumer (embed it in your own structure)
 * @trace:	the current task's user stack
 * @cookie:	what the request(s) of this kernel entry returned
 *
 * Runs in the task's context with preemption enabled; may sleep briefly,
 * must not block for long (the task is on its way to user space).
 */
typedef void (*codectl_unwind_callback_t)(struct codectl_unwind_work *work,
					  const struct codectl_unwind_trace *trace,
					  u64 cookie);

/**
 * struct codectl_unwind_work - one consumer of deferred unwinds
 * @func:	its callback
 * @bit:	its slot in the per-task request masks (set by init)
 */
struct codectl_unwind_work {
	codectl_unwind_callback_t func;
	int bit;
};

int codectl_unwind_deferred_init(struct codectl_unwind_work *work,
				 codectl_unwind_callback_t func);
int codectl_unwind_deferred_request(struct codectl_unwind_work *work,
				    u64 *cookie);
void codectl_unwind_deferred_cancel(struct codectl_unwind_work *work);

#endif /* CODECTL_UNWIND_DEFERRED_H */
