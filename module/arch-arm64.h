/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the unwinder knows of arm64 (AArch64, little-endian), as
 * arch-x86_64.h for x86-64: the ELF machine and SFrame ABI, registers,
 * frame records, the link register, pointer authentication, the signal
 * frame and trampoline, and the instructions the walk recognises.
 * Included through arch.h.
 *
 * A frame record is {x29, x30} and x29 points at it: with the CFA at
 * x29 + 16 the caller's x29 is at CFA - 16 and the return address at
 * CFA - 8, the layout of an x86-64 rbp frame.  Unlike x86-64, a call
 * leaves the return address in x30 (the link register): a function that
 * has not saved it, or never does (a leaf), has it there, which SFrame
 * says with no RA offset (SFRAME_LOC_SAME); it can then be read only in
 * the frames whose registers are known (the innermost one, and those a
 * signal interrupted).
 */
#ifndef CODECTL_ARCH_ARM64_H
#define CODECTL_ARCH_ARM64_H

#include <linux/elf.h>
#include <linux/sched.h>
#include <linux/signal.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/compiler.h>
#include <asm/pgtable.h>
#include <asm/ptrace.h>
#include <asm/ucontext.h>
#include <asm/vdso.h>

#include "sframe.h"

#define CODECTL_ARCH_ELF_MACHINE	EM_AARCH64
#define CODECTL_ARCH_SFRAME_ABI		SFRAME_ABI_AARCH64_LE

/* DWARF numbers of the registers SFrame FLEX rules name. */
#define CODECTL_ARCH_DWARF_FP		29	/* x29 */
#define CODECTL_ARCH_DWARF_LR		30	/* x30 */
#define CODECTL_ARCH_DWARF_SP		31	/* sp */
/* No register table (regtab.c): no CFA of AArch64's is in another register. */
#define CODECTL_ARCH_DWARF_XREG		(-1)

/* pt_regs offsets of the DWARF registers 0-31 (x0-x30, sp; an initialiser). */
#define CODECTL_ARCH_PT_REG(n)	offsetof(struct pt_regs, regs[n])
#define CODECTL_ARCH_DWARF_PT_REGS {					\
	CODECTL_ARCH_PT_REG(0), CODECTL_ARCH_PT_REG(1),			\
	CODECTL_ARCH_PT_REG(2), CODECTL_ARCH_PT_REG(3),			\
	CODECTL_ARCH_PT_REG(4), CODECTL_ARCH_PT_REG(5),			\
	CODECTL_ARCH_PT_REG(6), CODECTL_ARCH_PT_REG(7),			\
	CODECTL_ARCH_PT_REG(8), CODECTL_ARCH_PT_REG(9),			\
	CODECTL_ARCH_PT_REG(10), CODECTL_ARCH_PT_REG(11),		\
	CODECTL_ARCH_PT_REG(12), CODECTL_ARCH_PT_REG(13),		\
	CODECTL_ARCH_PT_REG(14), CODECTL_ARCH_PT_REG(15),		\
	CODECTL_ARCH_PT_REG(16), CODECTL_ARCH_PT_REG(17),		\
	CODECTL_ARCH_PT_REG(18), CODECTL_ARCH_PT_REG(19),		\
	CODECTL_ARCH_PT_REG(20), CODECTL_ARCH_PT_REG(21),		\
	CODECTL_ARCH_PT_REG(22), CODECTL_ARCH_PT_REG(23),		\
	CODECTL_ARCH_PT_REG(24), CODECTL_ARCH_PT_REG(25),		\
	CODECTL_ARCH_PT_REG(26), CODECTL_ARCH_PT_REG(27),		\
	CODECTL_ARCH_PT_REG(28), CODECTL_ARCH_PT_REG(29),		\
	CODECTL_ARCH_PT_REG(30), offsetof(struct pt_regs, sp),		\
}

/*
 * struct sigcontext words of the DWARF registers 0-31 (an initialiser):
 * fault_address, then regs[0..30], then sp.
 */
#define CODECTL_ARCH_DWARF_SIGCTX {					\
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,		\
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,	\
}

/* Frame layouts: the return address at CFA - 8, x29 saved below it. */
#define CODECTL_ARCH_RULE(cfa_base, cfa_off, fp_kind, fp_off) {	\
	.cfa = { SFRAME_LOC_VAL, SFRAME_BASE_##cfa_base, cfa_off },	\
	.ra = { SFRAME_LOC_MEM, SFRAME_BASE_CFA, -8 },			\
	.fp = { SFRAME_LOC_##fp_kind, SFRAME_BASE_CFA, fp_off },	\
}

/* A frame record: x29 -> saved x29, the return address above it. */
#define CODECTL_ARCH_RULE_FP		CODECTL_ARCH_RULE(FP, 16, MEM, -16)
/*
 * But the record may be anywhere in its frame (GCC puts it at the
 * bottom, locals above it): x29 + 16 is only a lower bound of the
 * caller's stack pointer, which rules on sp and signal frames cannot use.
 */
#define CODECTL_ARCH_FP_FINDS_SP	0
/*
 * The chain of frame records ends in a zeroed one (AAPCS64; glibc's
 * _start and thread start clear x29 and x30), where a complete walk ends
 * too: the no-harm check (hooks.c) compares complete walks, which on
 * arm64, whose objects keep frame records, are nearly all of them.
 */
#define CODECTL_ARCH_FP_CHAIN_ENDS	1

/*
 * At a function's first instruction: nothing pushed, the return address
 * in x30.
 */
#define CODECTL_ARCH_RULE_ENTRY {					\
	.cfa = { SFRAME_LOC_VAL, SFRAME_BASE_SP, 0 },			\
	.ra = { SFRAME_LOC_VAL, CODECTL_ARCH_DWARF_LR, 0 },		\
	.fp = { SFRAME_LOC_SAME, SFRAME_BASE_CFA, 0 },			\
}

/*
 * A leaf keeps its return address in x30 and its caller's sp: where it
 * has no rules (an object without SFrame) and x30 is a return address
 * into code that has them, the entry rule applies (codectl_step_leaf()).
 */
#define CODECTL_ARCH_LR_LEAF		1

/*
 * After stp x29, x30, [sp, #-N]! the record's place depends on N, which
 * this rule cannot say: codectl_arch_entry_kind() never answers PUSHED,
 * and this is the 16-byte case only, for the table's sake.
 */
#define CODECTL_ARCH_RULE_PUSHED	CODECTL_ARCH_RULE(SP, 16, MEM, -16)

/*
 * The return address of a rule, where the callee did not save it
 * (SFRAME_LOC_SAME): the link register's value.  @buf is the location
 * returned for it.
 */
static inline const struct sframe_loc *
codectl_arch_ra_loc(const struct sframe_loc *ra, struct sframe_loc *buf)
{
	if (ra->kind != SFRAME_LOC_SAME)
		return ra;
	buf->kind = SFRAME_LOC_VAL;
	buf->base = CODECTL_ARCH_DWARF_LR;
	buf->off = 0;
	return buf;
}

/*
 * A return address as code can use it: without the pointer
 * authentication code that code built with pac-ret signs it with (the
 * hint-space XPACLRI from 6.3, a mask of the user VA bits before; where
 * the CPU has no PAuth both leave it alone).
 */
static inline u64 codectl_arch_strip_ra(u64 ra)
{
#ifdef ptrauth_strip_user_insn_pac
	return ptrauth_strip_user_insn_pac(ra);
#else
	return ptrauth_strip_insn_pac(ra);
#endif
}

/*
 * May a caller's CFA be @cfa, for a frame at @sp?  Above it, or (a frame
 * whose registers are known, @exact, with the return address in x30)
 * equal: a leaf that has not moved sp.
 */
static inline bool codectl_arch_cfa_ok(u64 cfa, u64 sp, bool exact)
{
	return cfa > sp || (exact && cfa == sp);
}

/*
 * The rt_sigreturn trampoline (the vDSO's __kernel_rt_sigreturn, which
 * the kernel makes the handlers' return address unless SA_RESTORER,
 * and musl's __restore_rt): mov x8, #139; svc #0, the svc 4 bytes in.
 */
#define CODECTL_ARCH_SIGRETURN_CODE {					\
	0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4			\
}

#define CODECTL_ARCH_SIGRETURN_SYSCALL	4

/* Is @ip the vDSO's trampoline (at its first instruction)? */
static inline bool codectl_arch_vdso_sigtramp(u64 ip)
{
	struct mm_struct *mm = current->mm;
	void *vdso = mm ? READ_ONCE(mm->context.vdso) : NULL;

	return vdso && ip == (u64)(uintptr_t)VDSO_SYMBOL(vdso, sigtramp);
}

/*
 * Where struct rt_sigframe ({ siginfo, ucontext }) keeps the interrupted
 * registers, from the stack pointer at the trampoline (the handler
 * returned with sp at the frame): the sigcontext's pc, sp and x29.
 */
#define CODECTL_ARCH_SIGFRAME_MCONTEXT					\
	(sizeof(struct siginfo) + offsetof(struct ucontext, uc_mcontext))
#define CODECTL_ARCH_SIGFRAME_FP	(CODECTL_ARCH_SIGFRAME_MCONTEXT + \
					 offsetof(struct sigcontext, regs[29]))
#define CODECTL_ARCH_SIGFRAME_SP	(CODECTL_ARCH_SIGFRAME_MCONTEXT + \
					 offsetof(struct sigcontext, sp))
#define CODECTL_ARCH_SIGFRAME_PC	(CODECTL_ARCH_SIGFRAME_MCONTEXT + \
					 offsetof(struct sigcontext, pc))

/* The frame pointer of user registers. */
static inline unsigned long codectl_arch_user_fp(const struct pt_regs *regs)
{
	return regs->regs[29];
}

/*
 * The user register set a task entered the kernel with: pt_regs' user
 * part (x0-x30, sp, pc, pstate), without the kernel's own fields after
 * it (deferred.c compares two of them to know a user state again).
 */
#define CODECTL_ARCH_USER_REGS(regs)	((const void *)&(regs)->user_regs)
#define CODECTL_ARCH_USER_REGS_SIZE	sizeof(struct user_pt_regs)

/*
 * Page-table entry flags of a present, user, executable page (the PTE,
 * or a PMD or PUD block): valid, user-executable (no UXN).  A PROT_NONE
 * page is not valid (PTE_PROT_NONE instead) and has UXN; kernel pages
 * are not in a user address space's table.
 */
static inline bool codectl_arch_flags_user_exec(u64 flags)
{
	return (flags & (PTE_VALID | PTE_UXN)) == PTE_VALID;
}

#define codectl_arch_pte_user_exec(pte)	\
	codectl_arch_flags_user_exec(pte_val(pte))
#define codectl_arch_pmd_user_exec(pmd)	\
	codectl_arch_flags_user_exec(pmd_val(pmd))
#define codectl_arch_pud_user_exec(pud)	\
	codectl_arch_flags_user_exec(pud_val(pud))

/* User registers of native (AArch64) code: what the unwinder walks. */
static inline bool codectl_arch_native(struct pt_regs *regs)
{
	return !compat_user_mode(regs);
}

/* The instruction (little-endian) in 4 bytes. */
static inline u32 codectl_arch_insn(const u8 b[4])
{
	return b[0] | b[1] << 8 | b[2] << 16 | (u32)b[3] << 24;
}

/*
 * Do the 8 bytes before a return address end with a call: BL, BLR, or
 * one of the authenticating BLRAA, BLRAAZ, BLRAB, BLRABZ?
 */
static inline bool codectl_arch_call_before(const u8 b[8])
{
	u32 insn = codectl_arch_insn(b + 4);

	return (insn & 0xfc000000) == 0x94000000 ||	/* bl */
	       (insn & 0xfffffc1f) == 0xd63f0000 ||	/* blr */
	       (insn & 0xfffffb1f) == 0xd63f081f ||	/* blraaz, blrabz */
	       (insn & 0xfffffb00) == 0xd73f0800;	/* blraa, blrab */
}

/* What the code at a pc without a frame of its own says of its frame. */
enum codectl_arch_entry {
	CODECTL_ARCH_NO_ENTRY,
	CODECTL_ARCH_ENTRY,	/* CODECTL_ARCH_RULE_ENTRY applies */
	CODECTL_ARCH_PUSHED,	/* CODECTL_ARCH_RULE_PUSHED applies */
};

/*
 * The bytes codectl_arch_entry_kind() reads before the pc and from it:
 * five instructions each way, a PLT entry and the one before it.
 */
#define CODECTL_ARCH_ENTRY_BEFORE	20
#define CODECTL_ARCH_ENTRY_AFTER	20

/* The instruction @i instructions from @code (negative: before it). */
static inline u32 codectl_arch_insn_at(const u8 *code, int i)
{
	return codectl_arch_insn(code + 4 * i);
}

/*
 * Is the instruction at @code one of a PLT entry as GNU ld writes them
 * for AArch64: adrp x16, GOT page; ldr x17, [x16, #off]; add x16, x16,
 * #off (or a nop); autia1716 or autib1716 in a PAC PLT; br x17 (a bti c
 * before it is a first instruction already).  Nothing is pushed in one
 * and x30 is the caller's return address.  The lazy resolver's PLT0
 * pushes x16 and x30 (stp x16, x30, [sp, #-16]!) before its adrp: not
 * an entry.  @code has CODECTL_ARCH_ENTRY_BEFORE bytes before it and
 * CODECTL_ARCH_ENTRY_AFTER from it.
 */
static inline bool codectl_arch_plt(const u8 *code)
{
	int s, i;

	for (s = -4; s <= 0; s++) {
		if ((codectl_arch_insn_at(code, s) & 0x9f00001f) != 0x90000010 ||
		    codectl_arch_insn_at(code, s - 1) == 0xa9bf7bf0 ||
		    (codectl_arch_insn_at(code, s + 1) & 0xffc003ff) != 0xf9400211)
			continue;
		i = s + 2;
		if ((codectl_arch_insn_at(code, i) & 0xffc003ff) != 0x91000210 &&
		    codectl_arch_insn_at(code, i) != 0xd503201f)
			continue;
		i++;
		if (codectl_arch_insn_at(code, i) == 0xd503219f ||
		    codectl_arch_insn_at(code, i) == 0xd50321df)
			i++;
		if (i >= 0 && codectl_arch_insn_at(code, i) == 0xd61f0220)
			return true;
	}
	return false;
}

/*
 * @code: the code at the pc, @prev: the bytes before it (0 where
 * unreadable), which end where @code begins.  A function's first
 * instruction as compilers begin one: paciasp or pacibsp, bti c, or stp
 * x29, x30, [sp, #-N]! (nothing saved yet: the return address in x30,
 * the CFA at sp); or an instruction of a PLT entry.  Nothing else: a pc
 * right after svc may be in a function with a frame, and x30 then holds
 * the return address of its last call, a return address of itself.
 */
static inline enum codectl_arch_entry
codectl_arch_entry_kind(const u8 *code, const u8 *prev)
{
	u32 insn = codectl_arch_insn(code);

	if (insn == 0xd503233f ||			/* paciasp */
	    insn == 0xd503237f ||			/* pacibsp */
	    insn == 0xd503245f ||			/* bti c */
	    (insn & 0xffc07fff) == 0xa9807bfd ||	/* stp x29, x30, [sp, #-N]! */
	    codectl_arch_plt(code))
		return CODECTL_ARCH_ENTRY;
	return CODECTL_ARCH_NO_ENTRY;
}

#endif /* CODECTL_ARCH_ARM64_H */
