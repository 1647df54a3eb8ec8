/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CFA kept in rbx, as glibc's _dl_runtime_resolve_xsavec keeps it
 * while it calls _dl_fixup, and a callee that saves rbx: built into
 * synth_xreg.so (gcc -shared -nostdlib) for test_synth.c's register
 * table test.  The offsets in the comments are from each function's
 * start.
 */
	.text

/*
 * 0: sp+8; 1: sp+16, rbx at cfa-16; 4 to 15: rbx+16 (the stack realigned);
 * 16: sp+16 again; 17: sp+8, rbx restored.
 */
	.globl	f_xcfa
	.type	f_xcfa, @function
	.p2align 4
f_xcfa:
	.cfi_startproc
	pushq	%rbx			/* 0, 1 byte */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	movq	%rsp, %rbx		/* 1, 3 bytes */
	.cfi_def_cfa_register %rbx
	andq	$-64, %rsp		/* 4, 4 bytes */
	call	.Lxsave			/* 8, 5 bytes */
	movq	%rbx, %rsp		/* 13, 3 bytes */
	.cfi_def_cfa_register %rsp
	popq	%rbx			/* 16, 1 byte */
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	ret				/* 17 */
	.cfi_endproc
	.size	f_xcfa, .-f_xcfa

/* 0: sp+8; 1: sp+16, rbx at cfa-16; 3: sp+8, rbx restored. */
	.globl	f_xsave
	.type	f_xsave, @function
	.p2align 4
f_xsave:
.Lxsave:
	.cfi_startproc
	pushq	%rbx			/* 0, 1 byte */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	xorl	%ebx, %ebx		/* 1, 2 bytes */
	popq	%rbx			/* 3, 1 byte */
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	ret				/* 4 */
	.cfi_endproc
	.size	f_xsave, .-f_xsave

	.section .note.GNU-stack, "", @progbits
