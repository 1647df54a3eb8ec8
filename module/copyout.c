// SPDX-License-Identifier: GPL-2.0
/*
 * Copying a versioned struct back to user space whose caller may know it
 * at another size: the ioctls, the unwinder's and the hooks' answers.
 */
#include <linux/minmax.h>
#include <linux/uaccess.h>

#include "internal.h"

/**
 * codectl_copy_out() - write a struct back to a caller of another size
 * @udst:	the caller's struct
 * @usize:	its size as the caller knows it
 * @src:	ours
 * @ksize:	its size
 *
 * Writes min(@usize, @ksize) bytes, then zeroes the rest of the caller's.
 *
 * Return: 0 or -EFAULT.
 */
int codectl_copy_out(void __user *udst, size_t usize, const void *src,
		     size_t ksize)
{
	if (copy_to_user(udst, src, min(usize, ksize)))
		return -EFAULT;
	if (usize > ksize && clear_user(udst + ksize, usize - ksize))
		return -EFAULT;
	return 0;
}
