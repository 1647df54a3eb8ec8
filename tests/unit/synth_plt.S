/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_synth's PLT: a function calling two functions of another object
 * through the PLT, bound lazily, so that ld writes a .plt (PLT0 and two
 * 16-byte entries) and its CFI: the expression that says where the CFA
 * is in each entry; and a function that keeps its CFA in rbx while it
 * calls (as glibc's _dl_runtime_resolve does), for codectl synth -r.
 */
	.text
	.globl	plt_user
	.type	plt_user, @function
plt_user:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	call	plt_ext1@PLT
	call	plt_ext2@PLT
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	plt_user, .-plt_user

	.globl	reg_cfa
	.type	reg_cfa, @function
reg_cfa:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	movq	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	andq	$-64, %rsp
	call	plt_ext1@PLT
	movq	%rbx, %rsp
	.cfi_def_cfa_register %rsp
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	reg_cfa, .-reg_cfa
	.section .note.GNU-stack,"",@progbits
