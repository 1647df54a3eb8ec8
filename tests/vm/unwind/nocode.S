/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libnocode.so: one function without frame pointers, without SFrame and
 * without CFI (no rule anywhere for it), whose rbp holds anything but a
 * frame pointer while it runs, as in code built -fomit-frame-pointer:
 *
 *	void nc_spin(int mode, void *heap, unsigned long n);
 *
 * mode 0: rbp is @heap (a heap pointer, below the stack pointer);
 * mode 1: rbp points into its own stack frame, at a fake frame record
 *	   { saved rbp 0, return address @heap }, so that following rbp
 *	   gives @heap as a caller (not code) and then a zero frame pointer;
 * mode 2: rbp is 5 (a small integer).
 * It spins @n times, then sleeps 50 us (nanosleep, a context switch with
 * @heap on top of the stack, where a leaf's return address would be).
 * tests/vm/tracers.sh samples it through frames-tracee.c.
 */
	.text
	.globl	nc_spin
	.type	nc_spin, @function
nc_spin:
	push	%rbp
	push	%rbx
	sub	$56, %rsp
	mov	%rsi, 0(%rsp)		/* top of the stack: not a return address */
	mov	%rsi, 8(%rsp)
	movq	$0, 16(%rsp)		/* fake frame record: saved rbp 0 */
	mov	%rsi, 24(%rsp)		/* ... return address: the heap */
	movq	$0, 32(%rsp)		/* struct timespec { 0, 50000 } */
	movq	$50000, 40(%rsp)
	mov	%rdx, %rbx
	cmp	$1, %edi
	je	1f
	cmp	$2, %edi
	je	2f
	mov	%rsi, %rbp		/* mode 0: a heap pointer */
	jmp	3f
1:	lea	16(%rsp), %rbp		/* mode 1: the fake frame record */
	jmp	3f
2:	mov	$5, %ebp		/* mode 2: a small integer */
3:	dec	%rbx
	jnz	3b
	mov	$35, %eax		/* nanosleep(&ts, NULL) */
	lea	32(%rsp), %rdi
	xor	%esi, %esi
	syscall
	add	$56, %rsp
	pop	%rbx
	pop	%rbp
	ret
	.size	nc_spin, .-nc_spin
	.section .note.GNU-stack, "", @progbits
