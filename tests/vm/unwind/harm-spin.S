/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harm-tracee's hot function, whose SFrame is wrong on purpose (issue 42,
 * the no-harm check's fallback):
 *
 *	void hm_spin(unsigned long n);
 *
 * It keeps a frame pointer (push %rbp; mov %rsp,%rbp), as the kernel's
 * frame-pointer walk needs, and spins @n times with two words on top of
 * its stack: a stack address where its return address and saved rbp
 * would be if its CFA were %rsp + 16.  Its CFI says so in the loop, and
 * only there (the two words are stored before): %rsp + 16, where the
 * truth is %rbp + 16 (%rsp + 32), as a compiler's error would.  gas
 * --gsframe turns that into the loop's SFrame row (CFA = SP + 16, RA at
 * CFA - 8, FP at CFA - 16), whose return address is that stack address:
 * not code.  A walk by the table alone stops there (not_code, after 1
 * frame); the kernel's frame-pointer walk goes on to hm_outer and main.
 */
	.text
	.globl	hm_spin
	.type	hm_spin, @function
hm_spin:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub	$16, %rsp
	mov	%rsp, 8(%rsp)		/* where the table has the return address */
	mov	%rsp, 0(%rsp)		/* ... and the saved rbp */
	/* Wrong from here to the loop's end: the CFA is %rsp + 32. */
	.cfi_def_cfa %rsp, 16
1:	dec	%rdi
	jnz	1b
	.cfi_def_cfa %rbp, 16
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	hm_spin, .-hm_spin
	.section .note.GNU-stack, "", @progbits
