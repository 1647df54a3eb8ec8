/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_synth's PLT: a function calling two functions of another object
 * through the PLT, bound lazily, so that ld writes a .plt (PLT0 and two
 * 16-byte entries) and its CFI: the expression that says where the CFA
 * is in each entry.
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
	.section .note.GNU-stack,"",@progbits
