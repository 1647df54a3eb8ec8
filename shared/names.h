/* SPDX-License-Identifier: GPL-2.0-only OR LGPL-2.1-or-later */
/*
 * The names of the unwinder's frame methods (CODECTL_FRAME_*) and stop
 * reasons (CODECTL_STOP_*), as debugfs, libcodectl and the tools spell
 * them: one table for the module and user space, which include this after
 * <linux/codectl.h>.  Initialisers, so that each user has its array.
 */
#ifndef CODECTL_NAMES_H
#define CODECTL_NAMES_H

#define CODECTL_FRAME_NAMES {				\
	[CODECTL_FRAME_REGS] = "regs",			\
	[CODECTL_FRAME_SFRAME] = "sframe",		\
	[CODECTL_FRAME_JIT] = "jit",			\
	[CODECTL_FRAME_FP] = "fp",			\
	[CODECTL_FRAME_FP_ENTRY] = "fp_entry",		\
	[CODECTL_FRAME_SIGNAL] = "signal",		\
}

#define CODECTL_STOP_NAMES {				\
	[CODECTL_STOP_OUTERMOST] = "outermost",		\
	[CODECTL_STOP_END] = "end",			\
	[CODECTL_STOP_DEPTH] = "depth",			\
	[CODECTL_STOP_FAULT] = "fault",			\
	[CODECTL_STOP_SP] = "sp",			\
	[CODECTL_STOP_ALIGN] = "align",			\
	[CODECTL_STOP_TABLE] = "table",			\
	[CODECTL_STOP_NO_USER] = "no_user",		\
	[CODECTL_STOP_NOMEM] = "nomem",			\
	[CODECTL_STOP_NOT_CODE] = "not_code",		\
	[CODECTL_STOP_NO_RULE] = "no_rule",		\
	[CODECTL_STOP_BUDGET] = "budget",		\
}

#endif /* CODECTL_NAMES_H */
