/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harm-tracee's hot functions, whose SFrame is wrong on purpose (issue
 * 42, the no-harm check's fallback), one per way a wrong rule can end a
 * walk by the table alone:
 *
 *	void hm_spin(unsigned long n);		not_code
 *	void hm_spin_align(unsigned long n);	align
 *	void hm_spin_sp(unsigned long n);	sp
 *	void hm_spin_fault(unsigned long n);	fault
 *
 * Each keeps a frame pointer (push %rbp; mov %rsp,%rbp), as the kernel's
 * frame-pointer walk needs, and spins @n times with two words on top of
 * its stack (a stack address, where its return address and saved rbp
 * would be if its CFA were %rsp + 16) and two zeros below it, in the red
 * zone (where they would be if its CFA were %rsp).  Its CFI says, in the
 * loop and only there (the words are stored before), a CFA that is wrong
 * where the truth is %rbp + 16 (%rsp + 32), as a compiler's error would;
 * gas --gsframe turns that into the loop's SFrame row (RA at CFA - 8, FP
 * at CFA - 16):
 *
 *	hm_spin		%rsp + 16: the return address read is the stack
 *			address, not code (not_code)
 *	hm_spin_align	%rsp + 12: the reads are misaligned (align)
 *	hm_spin_sp	%rsp + 0: the reads (the zeros) succeed, but the CFA
 *			is not above the stack pointer (sp)
 *	hm_spin_fault	%rsp + 1 GiB: the reads are past the stack's top,
 *			where nothing is mapped (fault)
 *
 * A walk by the table alone stops there, after 1 frame; the kernel's
 * frame-pointer walk goes on to hm_outer and main.  (The Makefile checks
 * that each row is in the built program's .sframe.)
 */
	.text
	/* A function's start, with its frame pointer and true CFI. */
	.macro	hm_enter name
	.globl	\name
	.type	\name, @function
\name:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	.endm

	.macro	hm_wrong name, cfa_off
	hm_enter \name
	sub	$16, %rsp
	mov	%rsp, 8(%rsp)		/* the return address at %rsp + 16 - 8 */
	mov	%rsp, 0(%rsp)		/* ... and the saved rbp */
	movq	$0, -8(%rsp)		/* the return address at %rsp - 8 */
	movq	$0, -16(%rsp)		/* ... and the saved rbp */
	/* Wrong from here to the loop's end: the CFA is %rsp + 32. */
	.cfi_def_cfa %rsp, \cfa_off
1:	dec	%rdi
	jnz	1b
	.cfi_def_cfa %rbp, 16
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	\name, .-\name
	.endm

	hm_wrong hm_spin, 16
	hm_wrong hm_spin_align, 12
	hm_wrong hm_spin_sp, 0
	hm_wrong hm_spin_fault, 0x40000000

/*
 *	void hm_spin_norow(unsigned long n);	a recursion without rows
 *
 * hm_norow(n, depth) has no CFI, so no SFrame row: a gap in the
 * program's table between the functions around it.  It keeps a frame
 * pointer, calls itself @depth times, and the innermost spins @n times,
 * so that a walk meets the same return address in it, without a rule,
 * frame after frame (the frame-pointer step each time).  A walk that
 * remembered the lookup's "no rule" for that return address once ended
 * there with no stop reason a walk may have (-1), counted out of bounds.
 * hm_spin_norow calls it 4 deep.
 */
	.globl	hm_norow
	.type	hm_norow, @function
hm_norow:
	push	%rbp
	mov	%rsp, %rbp
	test	%rsi, %rsi
	jz	2f
	dec	%rsi
	call	hm_norow
	jmp	3f
2:	dec	%rdi
	jnz	2b
3:	pop	%rbp
	ret
	.size	hm_norow, .-hm_norow

	hm_enter hm_spin_norow
	mov	$4, %esi
	call	hm_norow
	pop	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	hm_spin_norow, .-hm_spin_norow

	.section .note.GNU-stack, "", @progbits
