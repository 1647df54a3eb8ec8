/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the unwinder knows of x86-64 (as upstream's asm/unwind_user.h):
 * the ELF machine and SFrame ABI, registers, frame layouts, the signal
 * frame and trampoline, and the instructions the walk recognises.
 * Included through arch.h; another architecture is another such file.
 */
#ifndef CODECTL_ARCH_X86_64_H
#define CODECTL_ARCH_X86_64_H

#include <linux/elf.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/pgtable.h>
#include <asm/ptrace.h>

#include "sframe.h"

#define CODECTL_ARCH_ELF_MACHINE	EM_X86_64
#define CODECTL_ARCH_SFRAME_ABI		SFRAME_ABI_AMD64_LE

/* DWARF numbers of the registers SFrame FLEX rules name. */
#define CODECTL_ARCH_DWARF_FP		6	/* rbp */
#define CODECTL_ARCH_DWARF_SP		7	/* rsp */
/*
 * The register an import's register table describes (regtab.c): rbx,
 * in which glibc's _dl_runtime_resolve_xsavec keeps its CFA.
 */
#define CODECTL_ARCH_DWARF_XREG		3

/* pt_regs offsets of the DWARF registers 0-15 (an initialiser). */
#define CODECTL_ARCH_DWARF_PT_REGS {					\
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),	\
	offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),	\
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),	\
	offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),	\
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),	\
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),	\
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),	\
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),	\
}

/* struct sigcontext words of the DWARF registers 0-15 (an initialiser). */
#define CODECTL_ARCH_DWARF_SIGCTX {					\
	13, 12, 14, 11, 9, 8, 10, 15, 0, 1, 2, 3, 4, 5, 6, 7,		\
}

/* Frame layouts: the return address at CFA - 8, rbp saved below it. */
#define CODECTL_ARCH_RULE(cfa_base, cfa_off, fp_kind, fp_off) {	\
	.cfa = { SFRAME_LOC_VAL, SFRAME_BASE_##cfa_base, cfa_off },	\
	.ra = { SFRAME_LOC_MEM, SFRAME_BASE_CFA, -8 },			\
	.fp = { SFRAME_LOC_##fp_kind, SFRAME_BASE_CFA, fp_off },	\
}

/* A frame-pointer frame: rbp -> saved rbp, return address above it. */
#define CODECTL_ARCH_RULE_FP		CODECTL_ARCH_RULE(FP, 16, MEM, -16)
/* Its CFA, rbp + 16, is the caller's stack pointer. */
#define CODECTL_ARCH_FP_FINDS_SP	1
/*
 * rbp at the top of a thread is whatever its start code left there (the
 * ABI asks a zero only of _start), so the kernel's frame-pointer walk may
 * go on past a complete walk's last frame: the no-harm check (hooks.c)
 * does not compare complete walks.
 */
#define CODECTL_ARCH_FP_CHAIN_ENDS	0
/* At a function's first instruction, or just after a syscall in a leaf. */
#define CODECTL_ARCH_RULE_ENTRY		CODECTL_ARCH_RULE(SP, 8, SAME, 0)
/*
 * No link register: a leaf's return address is at rsp like any other's,
 * and the entry heuristic's cases are all there is (codectl_step_leaf()).
 */
#define CODECTL_ARCH_LR_LEAF		0
/* After push %rbp, before mov %rsp,%rbp. */
#define CODECTL_ARCH_RULE_PUSHED	CODECTL_ARCH_RULE(SP, 16, MEM, -16)

/*
 * The return address of a rule, where the callee did not save it: x86-64
 * has no link register (its SFrame always has a fixed RA offset), and
 * such a rule fails to evaluate.  (@buf: for architectures that have one.)
 */
static inline const struct sframe_loc *
codectl_arch_ra_loc(const struct sframe_loc *ra, struct sframe_loc *buf)
{
	return ra;
}

/* A return address as code can use it: as it is. */
static inline u64 codectl_arch_strip_ra(u64 ra)
{
	return ra;
}

/*
 * May a caller's CFA be @cfa, for a frame at @sp?  Only above it: a call
 * pushes the return address.
 */
static inline bool codectl_arch_cfa_ok(u64 cfa, u64 sp, bool exact)
{
	return cfa > sp;
}

/*
 * The rt_sigreturn trampoline (glibc's __restore_rt, musl's
 * __restore_rt): mov $15,%rax; syscall, the syscall 7 bytes in.
 */
#define CODECTL_ARCH_SIGRETURN_CODE {					\
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05		\
}

#define CODECTL_ARCH_SIGRETURN_SYSCALL	7

/* Is @ip a trampoline of the kernel's?  x86-64 requires SA_RESTORER. */
static inline bool codectl_arch_vdso_sigtramp(u64 ip)
{
	return false;
}

/*
 * Where struct rt_sigframe's ucontext keeps the interrupted registers,
 * from the stack pointer at the trampoline (the handler's return popped
 * pretcode): uc_mcontext is 40 bytes into struct ucontext, and rbp, rsp
 * and rip are words 10, 15 and 16 of struct sigcontext.
 */
#define CODECTL_ARCH_SIGFRAME_MCONTEXT	40
#define CODECTL_ARCH_SIGFRAME_FP	(CODECTL_ARCH_SIGFRAME_MCONTEXT + 10 * 8)
#define CODECTL_ARCH_SIGFRAME_SP	(CODECTL_ARCH_SIGFRAME_MCONTEXT + 15 * 8)
#define CODECTL_ARCH_SIGFRAME_PC	(CODECTL_ARCH_SIGFRAME_MCONTEXT + 16 * 8)

/* The frame pointer of user registers. */
static inline unsigned long codectl_arch_user_fp(const struct pt_regs *regs)
{
	return regs->bp;
}

/*
 * The user register set a task entered the kernel with: all of pt_regs
 * (deferred.c compares two of them to know a user state again).
 */
#define CODECTL_ARCH_USER_REGS(regs)	((const void *)(regs))
#define CODECTL_ARCH_USER_REGS_SIZE	sizeof(struct pt_regs)

/*
 * Page-table entry flags of a present, user, executable page (the PTE,
 * or a PMD or PUD that maps a huge page): present and user, no NX.  A
 * PROT_NONE page (_PAGE_PROTNONE, no _PAGE_USER) is not.
 */
static inline bool codectl_arch_flags_user_exec(u64 flags)
{
	return (flags & (_PAGE_PRESENT | _PAGE_USER | _PAGE_NX)) ==
	       (_PAGE_PRESENT | _PAGE_USER);
}

#define codectl_arch_pte_user_exec(pte)	\
	codectl_arch_flags_user_exec(pte_flags(pte))
#define codectl_arch_pmd_user_exec(pmd)	\
	codectl_arch_flags_user_exec(pmd_flags(pmd))
#define codectl_arch_pud_user_exec(pud)	\
	codectl_arch_flags_user_exec(pud_flags(pud))

/* User registers of native (64-bit) code: what the unwinder walks. */
static inline bool codectl_arch_native(struct pt_regs *regs)
{
	return user_64bit_mode(regs) && !(regs->flags & X86_VM_MASK);
}

/*
 * Do the 8 bytes before a return address end with a call: e8 rel32, or
 * ff /2 with a ModRM of 2, 3, 4, 6 or 7 bytes in all?
 */
static inline bool codectl_arch_call_before(const u8 b[8])
{
	unsigned int len;

	if (b[3] == 0xe8)
		return true;
	for (len = 2; len <= 7; len++) {
		u8 modrm = b[8 - len + 1];

		if (b[8 - len] == 0xff && ((modrm >> 3) & 7) == 2)
			return true;
	}
	return false;
}

/* What the code at a pc without a frame of its own says of its frame. */
enum codectl_arch_entry {
	CODECTL_ARCH_NO_ENTRY,
	CODECTL_ARCH_ENTRY,	/* CODECTL_ARCH_RULE_ENTRY applies */
	CODECTL_ARCH_PUSHED,	/* CODECTL_ARCH_RULE_PUSHED applies */
};

/* The bytes codectl_arch_entry_kind() reads before the pc and from it. */
#define CODECTL_ARCH_ENTRY_BEFORE	3
#define CODECTL_ARCH_ENTRY_AFTER	4

/*
 * @code: the 4 bytes at the pc, @prev: the 3 before it (0 if unreadable).
 * A function's first instruction (push %rbp, or endbr64 before it), a
 * PLT entry (jmp *GOT(%rip), with or without bnd), right after the push
 * (mov %rsp,%rbp), or right after a syscall instruction.
 */
static inline enum codectl_arch_entry
codectl_arch_entry_kind(const u8 *code, const u8 *prev)
{
	if (code[0] == 0x55 ||
	    (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
	     code[3] == 0xfa) ||
	    (code[0] == 0xff && code[1] == 0x25) ||
	    (code[0] == 0xf2 && code[1] == 0xff && code[2] == 0x25))
		return CODECTL_ARCH_ENTRY;
	if (code[0] == 0x48 && code[1] == 0x89 && code[2] == 0xe5 &&
	    prev[2] == 0x55)
		return CODECTL_ARCH_PUSHED;
	if (prev[1] == 0x0f && prev[2] == 0x05)
		return CODECTL_ARCH_ENTRY;
	return CODECTL_ARCH_NO_ENTRY;
}

#endif /* CODECTL_ARCH_X86_64_H */
