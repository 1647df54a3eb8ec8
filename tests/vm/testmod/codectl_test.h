/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * codectl_test: the test facilities of codectl, not part of its ABI.
 *
 * The test module codectl_test.ko (tests/vm/testmod, built and loaded by
 * the tests only, never packaged) uses what codectl.ko exports in the
 * symbol namespace CODECTL_TEST and offers, on /dev/codectl_test (mode
 * 0666):
 *
 *   CODECTL_TEST_IOC_UNWIND          CODECTL_IOC_UNWIND of the caller's
 *                                    stack, also with
 *                                    CODECTL_UNWIND_NOFAULT: the tracer
 *                                    hooks' walk (the same code)
 *   CODECTL_TEST_IOC_UNWIND_REQUEST  a deferred trace of the caller's
 *                                    stack, read() back as a struct
 *                                    codectl_trace_record (poll() works)
 *   CODECTL_TEST_IOC_SELFTEST_START, _STOP  the kernel self-test of the
 *                                    deferred-unwind API (hrtimer, NMI)
 *
 * Until ABI 2 these were ioctls of /dev/codectl (0x40, 0x41, 0x43, 0x44
 * with the NOFAULT flag 0x8 of CODECTL_IOC_UNWIND).
 */
#ifndef _CODECTL_TEST_H
#define _CODECTL_TEST_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/codectl.h>

#define CODECTL_TEST_DEVICE		"/dev/codectl_test"
#define CODECTL_TEST_IOC_MAGIC		0xCE

/*
 * codectl_unwind_args.flags, with CODECTL_TEST_IOC_UNWIND only: walk as
 * the tracer hooks do from NMI and interrupts, never faulting or sleeping
 * (a page that is not resident ends the step that needed it), the
 * registrations read under RCU.
 */
#define CODECTL_UNWIND_NOFAULT		0x8
#define CODECTL_TEST_UNWIND_FLAGS_ALL	(CODECTL_UNWIND_FLAGS_ALL | \
					 CODECTL_UNWIND_NOFAULT)

/**
 * struct codectl_trace_record - one deferred trace, as read() returns it
 * @cookie:	the cookie CODECTL_TEST_IOC_UNWIND_REQUEST returned; every
 *		request made during one kernel entry of a thread gets the same
 *		cookie, and it is never 0
 * @size:	bytes of this record: the header, @nr __u64 pcs, @nr __u8
 *		methods, padded to a multiple of 8
 * @tid:	thread id (in the reader's pid namespace as of the request)
 * @nr:		frames
 * @stop:	CODECTL_STOP_* reason the unwind stopped
 * @lost:	records this file dropped since the previous record read,
 *		because its queue was full
 * @flags:	CODECTL_TRACE_* bits
 *
 * CODECTL_TEST_IOC_UNWIND_REQUEST (no argument but the cookie it writes)
 * asks, from the calling thread, for its user stack as it will be when it
 * returns to user space from the ioctl; the module unwinds it on the way
 * out through the deferred-unwind API and queues the record on the file
 * the request was made on (up to 64 records).  read() returns one record
 * per call: EAGAIN when none is queued and O_NONBLOCK is set (else it
 * waits; poll() says POLLIN), EINVAL when the buffer cannot hold the next
 * record (nothing is consumed).  A thread that exits before returning to
 * user space still gets its record, with nr 0 and stop
 * CODECTL_STOP_NO_USER.  Records of requests made on a file that is
 * closed before they arrive are dropped.
 *
 * Errors of CODECTL_TEST_IOC_UNWIND_REQUEST: EFAULT (the cookie cannot be
 * written; the record comes all the same), ENOMEM, EBUSY (4096 requests
 * pending on the file), ENOSPC (no per-thread request slot free: too
 * many threads with requests pending at once), EINVAL (no user context).
 */
struct codectl_trace_record {
	__u64 cookie;
	__u32 size;
	__u32 tid;
	__u32 nr;
	__u32 stop;
	__u32 lost;
	__u32 flags;
	/* __u64 ips[nr]; __u8 methods[nr]; padding */
};

#define CODECTL_TRACE_QUEUE_MAX		64

/**
 * struct codectl_selftest_args - CODECTL_TEST_IOC_SELFTEST_START / _STOP
 * @period_us:	in (START): hrtimer period, 10 .. 1000000 microseconds
 * @max_frames:	in (STOP): entries of @ips
 * @ips:	in (STOP): __u64 array for the last trace delivered, or 0
 * @irq_requests: out: requests queued from the hrtimer (hard IRQ); a
 *		second request of a consumer during one kernel entry returns
 *		1 (the one callback covers it) and is not counted
 * @nmi_requests: out: requests queued from the self-NMI the hrtimer sends
 * @irq_callbacks: out: callbacks run for the hrtimer consumer
 * @nmi_callbacks: out: callbacks run for the NMI consumer
 * @entries:	out: kernel entries (distinct cookies) that got both callbacks
 * @cookie_mismatches: out: an NMI request got another cookie than the
 *		hrtimer request of the same entry, or a callback's cookie
 *		differed from its request's
 * @trace_mismatches: out: the two consumers got different traces for one
 *		cookie
 * @refused:	out: requests refused while the target thread ran (not in a
 *		user context any more: it was exiting); ticks landing on
 *		other tasks are not requests
 * @nr:		out (STOP): frames of the last trace delivered for a request
 *		that interrupted user code (hrtimer's; the NMI's with REMOTE)
 *		(0: none)
 * @stop:	out (STOP): its CODECTL_STOP_* reason
 * @flags:	in (START): CODECTL_SELFTEST_REMOTE: the hrtimer runs on
 *		another CPU and only sends NMIs to the caller's CPU, so that
 *		they interrupt the caller's user code (as PMU overflows do);
 *		only the NMI consumer requests.  Needs two online CPUs
 *		(EOPNOTSUPP).  CODECTL_SELFTEST_SLOW: no NMI (any
 *		architecture); each callback of the hrtimer consumer
 *		queues a task_work on the target that runs after the
 *		delivery, on the target's way out to user space, until
 *		the timer has requested 3 more times (at most 20 ms): a
 *		slow way out (other task_works, signal delivery) while
 *		requests go on.  REMOTE with SLOW, or unknown flags:
 *		EINVAL
 * @moved:	out: callbacks whose trace had CODECTL_TRACE_MOVED
 * @nmi_user:	out: NMI requests made while user code ran
 * @nmi_walks:	out (REMOTE): NMIs that interrupted user code and ran a
 *		tracer hook's own walk on the registers they interrupted
 *		(perf_callchain_user's and arch_stack_walk_user's
 *		replacements in turn; counted in their HOOK_STATS too)
 * @nmi_walk_frames: out (REMOTE): the frames those walks gave
 * @nmi_walk_compared: out (REMOTE): NMI walks whose request's callback
 *		ran before the next NMI walk: compared with the callback's
 *		trace (the walk in task context)
 * @nmi_walk_equal: out (REMOTE): of those, the same callers (frames 1 on;
 *		frame 0 may have moved) and the same number of frames
 * @slow_works:	out (SLOW): the spinning task_works that ran
 * @repeats:	out: requests that returned 1 (the consumer had asked
 *		for that user state already)
 *
 * A kernel self-test of the deferred-unwind API with two consumers, one
 * requesting from an hrtimer on the caller's CPU while the calling thread
 * runs, the other from an NMI the timer handler sends to its own CPU.
 * START arms the timer for the calling thread (pin it to one CPU first);
 * the thread then runs user code; STOP disarms, waits for callbacks still
 * queued, and reports.  One self-test runs at a time (EBUSY); both need
 * CAP_SYS_ADMIN (EPERM).  EOPNOTSUPP when the architecture has no self-NMI.
 *
 * What STOP waits for: once disarmed no request is made; every kernel
 * entry of the target thread before STOP's own has ended, so its
 * callbacks have run.  When the target thread calls STOP, the requests
 * made during STOP's own entry are delivered by STOP itself before it
 * reports (same entry, same cookie, same stack), so the callbacks equal
 * the requests.  When another thread calls STOP, it waits up to 2 s for
 * the target's callbacks (a target blocked in the kernel delivers only
 * when it returns); a target that exited has had them all.  STOP ends
 * the test (a second STOP is EINVAL).  STOP without a test: EINVAL.
 * START's period_us outside 10 .. 1000000: EINVAL.
 */
struct codectl_selftest_args {
	__u32 period_us;
	__u32 max_frames;
	__u64 ips;
	__u64 irq_requests;
	__u64 nmi_requests;
	__u64 irq_callbacks;
	__u64 nmi_callbacks;
	__u64 entries;
	__u64 cookie_mismatches;
	__u64 trace_mismatches;
	__u64 refused;
	__u32 nr;
	__u32 stop;
	__u32 flags;
	__u32 moved;
	__u64 nmi_user;
	__u64 nmi_walks;
	__u64 nmi_walk_frames;
	__u64 nmi_walk_compared;
	__u64 nmi_walk_equal;
	__u64 slow_works;
	__u64 repeats;
};

#define CODECTL_SELFTEST_REMOTE		0x1
#define CODECTL_SELFTEST_SLOW		0x2

#define CODECTL_TEST_IOC_UNWIND		_IOWR(CODECTL_TEST_IOC_MAGIC, 0x40, \
					      struct codectl_unwind_args)
#define CODECTL_TEST_IOC_UNWIND_REQUEST	_IOR(CODECTL_TEST_IOC_MAGIC, 0x41, __u64)
#define CODECTL_TEST_IOC_SELFTEST_START	_IOW(CODECTL_TEST_IOC_MAGIC, 0x43, \
					     struct codectl_selftest_args)
#define CODECTL_TEST_IOC_SELFTEST_STOP	_IOWR(CODECTL_TEST_IOC_MAGIC, 0x44, \
					      struct codectl_selftest_args)

#endif /* _CODECTL_TEST_H */
