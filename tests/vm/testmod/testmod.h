/* SPDX-License-Identifier: GPL-2.0 */
/* codectl_test.ko: what its files share. */
#ifndef CODECTL_TESTMOD_H
#define CODECTL_TESTMOD_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/poll.h>

/* Trace records queued on open files (0 again at unload). */
extern atomic_long_t codectl_test_trace_records;

/* harness.c: CODECTL_TEST_IOC_UNWIND_REQUEST, read() and poll() */
int codectl_harness_init(void);
void codectl_harness_exit(void);
int codectl_harness_open(struct inode *inode, struct file *file);
int codectl_harness_release(struct inode *inode, struct file *file);
ssize_t codectl_harness_read(struct file *file, char __user *buf,
			     size_t len, loff_t *ppos);
__poll_t codectl_harness_poll(struct file *file, struct poll_table_struct *pt);
long codectl_harness_request(struct file *file, unsigned long arg);

/* selftest.c: CODECTL_TEST_IOC_SELFTEST_START/STOP */
long codectl_selftest_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg);
void codectl_selftest_exit(void);

/* canary.c: the canary= parameter (the debug kernel's checkers) */
int codectl_test_canary(void);

#endif /* CODECTL_TESTMOD_H */
