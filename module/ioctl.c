// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/codectl ioctls: one per codectl option, each with the option's
 * info pointer, size and flags in struct codectl_args.  The argument
 * checks and their errnos are the ABI documented in uapi/linux/codectl.h;
 * keep the two in step.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "codectl.h"
#include "sframe.h"

/*
 * Copy an option's info from user space: at least its VER0 size, at most
 * CODECTL_INFO_SIZE_MAX, with copy_struct_from_user() for the difference
 * between the caller's size and ours.
 */
static int codectl_copy_info(void *dst, size_t ksize, size_t ver0,
			     const struct codectl_args *args)
{
	if (args->info_size < ver0)
		return -EINVAL;
	if (args->info_size > CODECTL_INFO_SIZE_MAX)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, u64_to_user_ptr(args->info),
				     args->info_size);
}

/* Write an answer back: min(caller's size, ours), then zero the rest. */
static int codectl_copy_answer(const struct codectl_args *args,
			       const void *src, size_t ksize)
{
	void __user *uinfo = u64_to_user_ptr(args->info);
	size_t n = min_t(size_t, args->info_size, ksize);

	if (copy_to_user(uinfo, src, n))
		return -EFAULT;
	if (args->info_size > ksize &&
	    clear_user(uinfo + ksize, args->info_size - ksize))
		return -EFAULT;
	return 0;
}

/* The scalar checks of struct codectl_elf_info, in the documented order. */
static int codectl_check_elf_info(const struct codectl_elf_info *info)
{
	bool synth = info->flags & CODECTL_ELF_SFRAME_SYNTH;

	if ((info->flags & ~CODECTL_ELF_FLAGS_ALL) || info->__reserved2)
		return -EINVAL;
	if (synth && !info->sframe_start)
		return -EINVAL;
	if (info->text_start >= info->text_end)
		return -EINVAL;
	if (!info->sframe_start != !info->sframe_end)
		return -EINVAL;
	if (info->sframe_start && info->sframe_start >= info->sframe_end)
		return -EINVAL;
	if (!info->elf_start != !info->elf_end)
		return -EINVAL;
	if (info->elf_start) {
		if (info->elf_start >= info->elf_end ||
		    info->text_start < info->elf_start ||
		    info->text_end > info->elf_end)
			return -EINVAL;
		if (info->sframe_start && !synth &&
		    (info->sframe_start < info->elf_start ||
		     info->sframe_end > info->elf_end))
			return -EINVAL;
	}
	if (!info->build_id != !info->build_id_len)
		return -EINVAL;
	if (info->debug_link_crc && !info->debug_link_pathname)
		return -EINVAL;
	if (info->build_id_len > CODECTL_BUILD_ID_MAX)
		return -EMSGSIZE;
	return 0;
}

static long codectl_ioc_register_elf(const struct codectl_args *args)
{
	struct codectl_elf_info info;
	struct codectl_elf_src src = {};
	int ret;

	ret = codectl_copy_info(&info, sizeof(info),
				CODECTL_ELF_INFO_SIZE_VER0, args);
	if (ret)
		return ret;
	ret = codectl_check_elf_info(&info);
	if (ret)
		return ret;
	src.elf_start = info.elf_start;
	src.elf_end = info.elf_end;
	src.text_start = info.text_start;
	src.text_end = info.text_end;
	src.sframe_start = info.sframe_start;
	src.sframe_end = info.sframe_end;
	src.upathname = info.pathname;
	src.ubuild_id = info.build_id;
	src.udebug_link = info.debug_link_pathname;
	src.build_id_len = info.build_id_len;
	src.debug_link_crc = info.debug_link_crc;
	src.origin = CODECTL_ORIGIN_REGISTERED;
	if (info.flags & CODECTL_ELF_SFRAME_SYNTH)
		src.origin |= CODECTL_ORIGIN_SYNTH;
	return codectl_register_elf(&src);
}

static long codectl_ioc_register_jit(const struct codectl_args *args)
{
	struct codectl_jit_info info;
	int ret;

	ret = codectl_copy_info(&info, sizeof(info),
				CODECTL_JIT_INFO_SIZE_VER0, args);
	if (ret)
		return ret;
	if (info.text_start >= info.text_end)
		return -EINVAL;
	return codectl_register_jit(info.text_start, info.text_end,
				    info.unwind_head);
}

static long codectl_unregister(const struct codectl_args *args)
{
	struct codectl_unregister_info info;
	struct codectl_mm *cmm;
	int ret;

	ret = codectl_copy_info(&info, sizeof(info),
				CODECTL_UNREGISTER_INFO_SIZE_VER0, args);
	if (ret)
		return ret;
	if (info.text_start >= info.text_end)
		return -EINVAL;
	cmm = codectl_mm_find(current->mm);
	if (!cmm)
		return -ENOENT;
	return codectl_mm_remove(cmm, info.text_start, info.text_end);
}

static long codectl_query(const struct codectl_args *args)
{
	struct codectl_query_info q;
	int ret;

	ret = codectl_copy_info(&q, sizeof(q), CODECTL_QUERY_INFO_SIZE_VER0,
				args);
	if (ret)
		return ret;
	if (q.__reserved || q.__reserved2 || q.__reserved3)
		return -EINVAL;
	/* Callers that do not know maps_fd cannot name another process. */
	if (args->info_size < CODECTL_QUERY_INFO_SIZE_VER3)
		q.maps_fd = -1;
	ret = codectl_query_reg(&q);
	if (ret)
		return ret;
	return codectl_copy_answer(args, &q, sizeof(q));
}

static long codectl_check_sframe_option(const struct codectl_args *args)
{
	struct codectl_sframe_check c;
	int ret;

	ret = codectl_copy_info(&c, sizeof(c), CODECTL_SFRAME_CHECK_SIZE_VER0,
				args);
	if (ret)
		return ret;
	if (c.sframe_start >= c.sframe_end ||
	    !c.text_start != !c.text_end ||
	    (c.text_start && c.text_start >= c.text_end))
		return -EINVAL;
	c.version = 0;
	c.num_fdes = 0;
	c.num_fres = 0;
	ret = codectl_sframe_verdict(c.sframe_start, c.sframe_end,
				     c.text_start, c.text_end, true, &c);
	if (ret == SFRAME_E_READ)
		return -EFAULT;
	c.error = ret;
	return codectl_copy_answer(args, &c, sizeof(c));
}

static long codectl_version(const struct codectl_args *args)
{
	struct codectl_version v;
	unsigned int nr;
	size_t bytes;
	int ret;

	ret = codectl_copy_info(&v, sizeof(v), CODECTL_VERSION_SIZE_VER0, args);
	if (ret)
		return ret;
	codectl_mm_usage(codectl_mm_find(current->mm), &nr, &bytes);
	memset(&v, 0, sizeof(v));
	v.abi_version = CODECTL_ABI_VERSION;
	v.options = BIT_ULL(CODECTL_NR_OPTIONS) - 1;
	v.max_registrations = READ_ONCE(codectl_max_registrations);
	v.max_bytes = READ_ONCE(codectl_max_bytes);
	v.nr_registrations = nr;
	v.bytes = bytes;
	return codectl_copy_answer(args, &v, sizeof(v));
}

/**
 * codectl_ioctl() - the /dev/codectl ioctl entry point
 * @file:	the open device
 * @cmd:	CODECTL_IOC(option)
 * @arg:	user pointer to struct codectl_args
 *
 * Return: 0 or a negative errno, as documented in uapi/linux/codectl.h.
 */
long codectl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct codectl_args args;

	/* Unwinding ioctls: not codectl(2) options, numbers above them. */
	switch (cmd) {
	case CODECTL_IOC_UNWIND_STATS:
		/* System-wide counts of everyone's unwinds: as for perf. */
		if (!perfmon_capable())
			return -EPERM;
		fallthrough;
	case CODECTL_IOC_UNWIND:
		return codectl_unwind_ioctl(file, cmd, arg);
	case CODECTL_IOC_UNWIND_REQUEST:
		return codectl_harness_request(file, arg);
	case CODECTL_IOC_SELFTEST_START:
	case CODECTL_IOC_SELFTEST_STOP:
		return codectl_selftest_ioctl(file, cmd, arg);
	case CODECTL_IOC_HOOK_STATS:
		if (!perfmon_capable())
			return -EPERM;
		return codectl_hooks_ioctl((void __user *)arg);
	case CODECTL_IOC_IMPORT:
		return codectl_import_ioctl((void __user *)arg);
	}

	/* An option this module lacks is ENOTTY, whatever its argument. */
	if (_IOC_TYPE(cmd) != CODECTL_IOC_MAGIC ||
	    cmd != CODECTL_IOC(_IOC_NR(cmd)) ||
	    _IOC_NR(cmd) >= CODECTL_NR_OPTIONS)
		return -ENOTTY;
	if (copy_from_user(&args, (void __user *)arg, sizeof(args)))
		return -EFAULT;
	if (args.flags || args.__reserved)
		return -EINVAL;

	switch (_IOC_NR(cmd)) {
	case CODECTL_UNREGISTER:
		return codectl_unregister(&args);
	case CODECTL_REGISTER_ELF:
		return codectl_ioc_register_elf(&args);
	case CODECTL_REGISTER_JIT:
		return codectl_ioc_register_jit(&args);
	case CODECTL_QUERY:
		return codectl_query(&args);
	case CODECTL_VERSION:
		return codectl_version(&args);
	case CODECTL_CHECK_SFRAME:
		return codectl_check_sframe_option(&args);
	default:
		return -ENOTTY;
	}
}
