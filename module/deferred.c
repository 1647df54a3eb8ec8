// SPDX-License-Identifier: GPL-2.0
/* STUB: to be written (deferred-unwind callback registry). */
#include <linux/errno.h>
#include <linux/module.h>
#include <codectl/unwind_deferred.h>
#include "codectl.h"

int codectl_unwind_deferred_init(struct codectl_unwind_work *work,
				 codectl_unwind_callback_t func)
{
	return -EOPNOTSUPP;
}
EXPORT_SYMBOL_GPL(codectl_unwind_deferred_init);

int codectl_unwind_deferred_request(struct codectl_unwind_work *work,
				    u64 *cookie)
{
	return -EOPNOTSUPP;
}
EXPORT_SYMBOL_GPL(codectl_unwind_deferred_request);

void codectl_unwind_deferred_cancel(struct codectl_unwind_work *work)
{
}
EXPORT_SYMBOL_GPL(codectl_unwind_deferred_cancel);

int codectl_deferred_init(void)
{
	return 0;
}

void codectl_deferred_exit(void)
{
}
