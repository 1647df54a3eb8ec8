// SPDX-License-Identifier: GPL-2.0
/* STUB: to be written (hrtimer + NMI self-test consumers). */
#include <linux/errno.h>
#include "codectl.h"

long codectl_selftest_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	return -EOPNOTSUPP;
}

void codectl_selftest_exit(void)
{
}
