// SPDX-License-Identifier: GPL-2.0
/* STUB: to be written (CODECTL_IOC_UNWIND_REQUEST, read and poll). */
#include <linux/fs.h>
#include <linux/poll.h>
#include "codectl.h"

int codectl_harness_init(void)
{
	return 0;
}

void codectl_harness_exit(void)
{
}

int codectl_harness_open(struct inode *inode, struct file *file)
{
	return nonseekable_open(inode, file);
}

int codectl_harness_release(struct inode *inode, struct file *file)
{
	return 0;
}

ssize_t codectl_harness_read(struct file *file, char __user *buf,
			     size_t len, loff_t *ppos)
{
	return -EAGAIN;
}

__poll_t codectl_harness_poll(struct file *file, struct poll_table_struct *pt)
{
	return 0;
}

long codectl_harness_request(struct file *file, unsigned long arg)
{
	return -EOPNOTSUPP;
}
