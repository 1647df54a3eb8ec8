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

#include "internal.h"
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
	return codectl_copy_out(u64_to_user_ptr(args->info), args->info_size,
				src, ksize);
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
	ret = codectl_sframe_check_user(c.sframe_start, c.sframe_end,
					c.text_start, c.text_end, true, &c);
	if (ret == SFRAME_E_READ)
		return -EFAULT;
	c.error = ret;
	return codectl_copy_answer(args, &c, sizeof(c));
}

static long codectl_version(const struct codectl_args *args)
{
	struct codectl_version v;
	unsigned int nr, words;
	size_t bytes;
	u64 map;
	int ret;

	ret = codectl_copy_info(&v, sizeof(v), CODECTL_VERSION_SIZE_VER0, args);
	if (ret)
		return ret;
	/* VER1's inputs; the VER0 fields are all output. */
	map = v.options_map;
	words = v.options_map_words;
	if (words > CODECTL_OPTIONS_MAP_WORDS_MAX || !map != !words)
		return -EINVAL;
	codectl_mm_usage(codectl_mm_find(current->mm), &nr, &bytes);
	memset(&v, 0, sizeof(v));
	v.abi_version = CODECTL_ABI_VERSION;
	v.options = BIT_ULL(CODECTL_NR_OPTIONS) - 1;
	v.max_registrations = READ_ONCE(codectl_max_registrations);
	v.max_bytes = READ_ONCE(codectl_max_bytes);
	v.nr_registrations = nr;
	v.bytes = bytes;
	v.options_map = map;
	v.options_map_words = words;
	v.nr_options = CODECTL_NR_OPTIONS;
	if (words) {
		/* Options are numbered from 0 without gaps: word 0 says all. */
		u64 known[DIV_ROUND_UP(CODECTL_NR_OPTIONS, 64)] = { v.options };

		ret = codectl_copy_out(u64_to_user_ptr(map),
				       words * sizeof(u64), known,
				       sizeof(known));
		if (ret)
			return ret;
	}
	return codectl_copy_answer(args, &v, sizeof(v));
}

/*
 * The ioctls outside the option space are matched without their size
 * field: the caller's struct may be of any size from the struct's VER0 up
 * to CODECTL_INFO_SIZE_MAX (uapi/linux/codectl.h, "Extensibility").
 */
#define CODECTL_IOC_NOSIZE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static bool codectl_ioc_size_ok(unsigned int cmd, size_t ver0)
{
	return _IOC_SIZE(cmd) >= ver0 &&
	       _IOC_SIZE(cmd) <= CODECTL_INFO_SIZE_MAX;
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

	/*
	 * Unwinding ioctls: not codectl(2) options, numbers above them;
	 * size-extensible, their struct's size is _IOC_SIZE(cmd).
	 */
	switch (CODECTL_IOC_NOSIZE(cmd)) {
	case CODECTL_IOC_NOSIZE(CODECTL_IOC_UNWIND_STATS):
		if (!codectl_ioc_size_ok(cmd, CODECTL_UNWIND_STATS_SIZE_VER0))
			return -ENOTTY;
		/* System-wide counts of everyone's unwinds: as for perf. */
		if (!perfmon_capable())
			return -EPERM;
		return codectl_unwind_stats_ioctl((void __user *)arg,
						  _IOC_SIZE(cmd));
	case CODECTL_IOC_NOSIZE(CODECTL_IOC_UNWIND):
		if (!codectl_ioc_size_ok(cmd, CODECTL_UNWIND_ARGS_SIZE_VER0))
			return -ENOTTY;
		return codectl_unwind_ioctl(file, cmd, arg);
	case CODECTL_IOC_NOSIZE(CODECTL_IOC_HOOK_STATS):
		if (!codectl_ioc_size_ok(cmd, CODECTL_HOOK_STATS_SIZE_VER0))
			return -ENOTTY;
		if (!perfmon_capable())
			return -EPERM;
		return codectl_hooks_ioctl((void __user *)arg, _IOC_SIZE(cmd));
	case CODECTL_IOC_NOSIZE(CODECTL_IOC_DEMAND):
		if (cmd != CODECTL_IOC_DEMAND)
			return -ENOTTY;
		return codectl_demand_attach(file);
	case CODECTL_IOC_NOSIZE(CODECTL_IOC_IMPORT):
		if (!codectl_ioc_size_ok(cmd, CODECTL_IMPORT_INFO_SIZE_VER0))
			return -ENOTTY;
		return codectl_import_ioctl((void __user *)arg, _IOC_SIZE(cmd));
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
