/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The test interface of codectl-consumer.ko (tests/vm/consumer), a module
 * outside codectl that uses codectl's exported deferred-unwind API the way
 * another tracer would.  /dev/codectl_consumer, root only.
 */
#ifndef CODECTL_CONSUMER_H
#define CODECTL_CONSUMER_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * struct codectl_consumer_req - CONSUMER_IOC_REQUEST
 * @times:	in: requests to make in this one kernel entry (1 or 2)
 * @ret:	out: what each codectl_unwind_deferred_request() returned
 * @cookie:	out: the cookie each returned
 */
struct codectl_consumer_req {
	__u32 times;
	__s32 ret[2];
	__u32 __pad;
	__u64 cookie[2];
};

/**
 * struct codectl_consumer_last - CONSUMER_IOC_LAST: the last callback
 * @callbacks:	callbacks run since the module was loaded
 * @nr:		frames of the last trace
 * @stop:	its CODECTL_STOP_* reason
 * @flags:	its CODECTL_TRACE_* flags
 * @cookie:	its cookie
 * @ips:	its first frames
 */
struct codectl_consumer_last {
	__u64 callbacks;
	__u32 nr;
	__u32 stop;
	__u32 flags;
	__u32 __pad;
	__u64 cookie;
	__u64 ips[8];
};

#define CONSUMER_IOC_REQUEST	_IOWR('C', 1, struct codectl_consumer_req)
#define CONSUMER_IOC_LAST	_IOR('C', 2, struct codectl_consumer_last)

#endif
