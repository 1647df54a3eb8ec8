/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions with hand-written CFI whose SFrame rules test_synth.c knows
 * exactly: built into synth_asm.so (gcc -shared -nostdlib).  The offsets
 * in the comments are from each function's start.
 */
	.text

/* 0: sp+8; 1: sp+16, rbp at cfa-16; 4: rbp+16; 6: sp+8 (after leave) */
	.globl	f_frame
	.type	f_frame, @function
	.p2align 4
f_frame:
	.cfi_startproc
	pushq	%rbp			/* 0, 1 byte */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp		/* 1, 3 bytes */
	.cfi_def_cfa_register %rbp
	nop				/* 4 */
	leave				/* 5 */
	.cfi_def_cfa %rsp, 8
	ret				/* 6 */
	.cfi_endproc
	.size	f_frame, .-f_frame

/* The outermost frame: RA undefined everywhere. */
	.globl	f_outermost
	.type	f_outermost, @function
	.p2align 4
f_outermost:
	.cfi_startproc
	.cfi_undefined %rip
	nop
	nop
	hlt
	.cfi_endproc
	.size	f_outermost, .-f_outermost

/* 0: sp+8; 1 and 2: a DWARF expression CFA (left out); 3: sp+8 again. */
	.globl	f_expr
	.type	f_expr, @function
	.p2align 4
f_expr:
	.cfi_startproc
	nop				/* 0 */
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 8, DW_OP_lit0, DW_OP_plus */
	.cfi_escape 0x0f, 0x04, 0x77, 0x08, 0x30, 0x22
	nop				/* 1 */
	nop				/* 2 */
	.cfi_def_cfa %rsp, 8
	ret				/* 3 */
	.cfi_endproc
	.size	f_expr, .-f_expr

/* 0: sp+8; 1: RA in rax (FLEX ra = r0); 2: sp+8 */
	.globl	f_ra_reg
	.type	f_ra_reg, @function
	.p2align 4
f_ra_reg:
	.cfi_startproc
	nop				/* 0 */
	.cfi_register %rip, %rax
	nop				/* 1 */
	.cfi_restore %rip
	ret				/* 2 */
	.cfi_endproc
	.size	f_ra_reg, .-f_ra_reg

/* A signal frame (the v3 signal bit): sp+8 */
	.globl	f_signal
	.type	f_signal, @function
	.p2align 4
f_signal:
	.cfi_startproc
	.cfi_signal_frame
	nop
	ret
	.cfi_endproc
	.size	f_signal, .-f_signal

/* No CFI at all. */
	.globl	f_nocfi
	.type	f_nocfi, @function
	.p2align 4
f_nocfi:
	nop
	ret
	.size	f_nocfi, .-f_nocfi

	.section .note.GNU-stack, "", @progbits
