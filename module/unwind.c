// SPDX-License-Identifier: GPL-2.0
/* STUB: being written by the lead (the user-space unwinder). */
#include <linux/seq_file.h>
#include "codectl.h"

struct codectl_unwind_counters codectl_unwind_counters;

void codectl_unwind_current(struct codectl_trace *t, unsigned int flags)
{
	t->nr = 0;
	t->stop = CODECTL_STOP_NO_USER;
}

long codectl_unwind_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	return -EOPNOTSUPP;
}

int codectl_unwind_show(struct seq_file *m, void *v)
{
	return 0;
}
