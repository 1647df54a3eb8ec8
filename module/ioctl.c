// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/codectl ioctls: one per codectl option, each with the option's
 * info pointer, size and flags in struct codectl_args.  The argument
 * checks and their errnos are the ABI documented in uapi/linux/codectl.h;
 * keep the two in step.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "codectl.h"
#include "sframe.h"

/* The SFrame ABI of this machine's user space. */
#if defined(CONFIG_X86_64)
#define CODECTL_SFRAME_NATIVE_ABI	SFRAME_ABI_AMD64_LE
#elif defined(CONFIG_ARM64) && defined(CONFIG_CPU_BIG_ENDIAN)
#define CODECTL_SFRAME_NATIVE_ABI	SFRAME_ABI_AARCH64_BE
#elif defined(CONFIG_ARM64)
#define CODECTL_SFRAME_NATIVE_ABI	SFRAME_ABI_AARCH64_LE
#elif defined(CONFIG_S390)
#define CODECTL_SFRAME_NATIVE_ABI	SFRAME_ABI_S390X_BE
#else
#error "codectl: no SFrame ABI for this architecture"
#endif

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

/*
 * Copy a user string of at most CODECTL_PATH_MAX bytes with its NUL.
 * Return: a kmalloc'ed copy, NULL for a 0 pointer, or an ERR_PTR:
 * -EFAULT, -ENAMETOOLONG, -EINVAL (empty), -ENOMEM.
 */
static char *codectl_strdup_user(u64 uptr)
{
	const char __user *ustr = u64_to_user_ptr(uptr);
	long len;
	char *s;

	if (!uptr)
		return NULL;
	len = strnlen_user(ustr, CODECTL_PATH_MAX);
	if (!len)
		return ERR_PTR(-EFAULT);
	if (len > CODECTL_PATH_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	s = kmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(s, ustr, len)) {
		kfree(s);
		return ERR_PTR(-EFAULT);
	}
	s[len - 1] = '\0';	/* the string may have changed under us */
	if (!s[0]) {
		kfree(s);
		return ERR_PTR(-EINVAL);
	}
	return s;
}

/* The decoder's codes are ABI through CODECTL_CHECK_SFRAME. */
#define CODECTL_SAME_CODE(x) static_assert(SFRAME_##x == CODECTL_SFRAME_##x)
CODECTL_SAME_CODE(OK);
CODECTL_SAME_CODE(E_TRUNCATED);
CODECTL_SAME_CODE(E_MAGIC);
CODECTL_SAME_CODE(E_VERSION);
CODECTL_SAME_CODE(E_ABI);
CODECTL_SAME_CODE(E_FLAGS);
CODECTL_SAME_CODE(E_AUXHDR);
CODECTL_SAME_CODE(E_NO_FDES);
CODECTL_SAME_CODE(E_FDES_BOUNDS);
CODECTL_SAME_CODE(E_FRES_BOUNDS);
CODECTL_SAME_CODE(E_OVERLAP);
CODECTL_SAME_CODE(E_FIXED_RA);
CODECTL_SAME_CODE(E_UNSORTED);
CODECTL_SAME_CODE(E_FDE_OVERLAP);
CODECTL_SAME_CODE(E_FUNC_RANGE);
CODECTL_SAME_CODE(E_FUNC_WRAP);
CODECTL_SAME_CODE(E_FDE_FRE_OFF);
CODECTL_SAME_CODE(E_FDE_INFO);
CODECTL_SAME_CODE(E_FDE_NO_FRES);
CODECTL_SAME_CODE(E_FRE_BOUNDS);
CODECTL_SAME_CODE(E_FRE_ORDER);
CODECTL_SAME_CODE(E_FRE_START);
CODECTL_SAME_CODE(E_FRE_SIZE);
CODECTL_SAME_CODE(E_FRE_COUNT);
CODECTL_SAME_CODE(E_FRE_FLEX);
CODECTL_SAME_CODE(E_FRE_TOTAL);
CODECTL_SAME_CODE(E_FRE_RANGE);

/**
 * codectl_sframe_read() - the decoder's reader for a section in the
 *	caller's memory
 * @ctx:	the struct sframe_sec being read
 * @off:	offset in the section
 * @dst:	where the bytes go
 * @len:	how many
 *
 * Return: 0, or -1 when the memory cannot be read.
 */
int codectl_sframe_read(void *ctx, u64 off, void *dst, u32 len)
{
	const struct sframe_sec *sec = ctx;

	return copy_from_user(dst, u64_to_user_ptr(sec->addr + off), len) ?
	       -1 : 0;
}

/*
 * Check an SFrame section in the caller's memory: its header, that it is
 * for this machine, and with @full every FDE and FRE, with functions
 * inside [text_start, text_end) (0, 0: anywhere).  @check, if not NULL,
 * gets the header's version and counts.
 * Return: SFRAME_OK or the decoder's enum sframe_err code.
 */
/* The checks after the header's, on a section ready for lookups. */
static int codectl_sframe_judge(struct sframe_sec *sec, u64 text_start,
				u64 text_end, bool full)
{
	if (sec->hdr.abi != CODECTL_SFRAME_NATIVE_ABI)
		return SFRAME_E_ABI;
	sec->text_start = text_start;
	sec->text_end = text_end;
	return full ? sframe_validate(sec) : SFRAME_OK;
}

static int codectl_sframe_verdict(u64 start, u64 end, u64 text_start,
				  u64 text_end, bool full,
				  struct codectl_sframe_check *check)
{
	struct sframe_sec sec;
	int err;

	err = sframe_init(&sec, start, end - start, NULL, codectl_sframe_read,
			  &sec);
	if (err)
		return err;
	if (check) {
		check->version = sec.hdr.version;
		check->num_fdes = sec.hdr.num_fdes;
		check->num_fres = sec.hdr.num_fres;
	}
	return codectl_sframe_judge(&sec, text_start, text_end, full);
}

/* Distinct rules a flat table may have (real sections have tens). */
#define CODECTL_FLAT_MAX_RULES	4096
#define CODECTL_FLAT_HASH_BITS	13

/*
 * Build the flat lookup table of a checked copy of a section into @reg.
 * Return: 0, or -ENOMEM / -E2BIG when the section gets none (it is then
 * decoded in user memory at each unwind).
 */
static int codectl_sframe_flatten(struct codectl_reg *reg,
				  const struct sframe_sec *sec)
{
	struct sframe_flat *flat;
	struct sframe_rule *rules;
	u32 *hash, *index = NULL, n, words = 0;
	int ret = -ENOMEM;
	u8 shift;

	if (sframe_flat_count(sec, &n) || n > U32_MAX / 8)
		return -E2BIG;
	flat = kzalloc(sizeof(*flat), GFP_KERNEL_ACCOUNT);
	if (!flat)
		return -ENOMEM;
	/* From here on codectl_reg_drop_sframe_tables() frees what there is. */
	reg->sframe_flat = flat;
	rules = kvmalloc_array(CODECTL_FLAT_MAX_RULES, sizeof(*rules),
			       GFP_KERNEL);
	hash = kvmalloc_array(1U << CODECTL_FLAT_HASH_BITS, sizeof(*hash),
			      GFP_KERNEL);
	flat->offs = kvmalloc_array(n, sizeof(*flat->offs), GFP_KERNEL_ACCOUNT);
	flat->rule_of = kvmalloc_array(n, sizeof(*flat->rule_of),
				       GFP_KERNEL_ACCOUNT);
	if (!rules || !hash || !flat->offs || !flat->rule_of)
		goto out;
	flat->rules = rules;
	if (sframe_flat_build(sec, flat, n, CODECTL_FLAT_MAX_RULES, hash,
			      CODECTL_FLAT_HASH_BITS)) {
		ret = -E2BIG;
		goto out;
	}
	/* Keep only the rules used. */
	flat->rules = kvmalloc_array(max(flat->nr_rules, 1U), sizeof(*rules),
				     GFP_KERNEL_ACCOUNT);
	if (!flat->rules)
		goto out;
	memcpy(flat->rules, rules, flat->nr_rules * sizeof(*rules));
	words = sframe_flat_index_words(flat, &shift);
	if (words) {
		index = kvmalloc_array(words, sizeof(*index),
				       GFP_KERNEL_ACCOUNT);
		if (!index)
			goto out;
		sframe_flat_index_build(flat, index, words, shift);
	}
	reg->sframe_mem = sizeof(*flat) +
		n * (sizeof(*flat->offs) + sizeof(*flat->rule_of)) +
		flat->nr_rules * sizeof(*rules) + words * sizeof(*index);
	ret = 0;
out:
	/* The scratch rules are freed below, not with the table. */
	if (flat->rules == rules)
		flat->rules = NULL;
	if (ret)
		codectl_reg_drop_sframe_tables(reg);
	kvfree(rules);
	kvfree(hash);
	return ret;
}

/* FDE index words at most (16 MiB): one per function or so. */
#define CODECTL_INDEX_MAX_WORDS	(4U << 20)

/*
 * Set up a section without a flat table for decoding in user memory: its
 * header, once, and an FDE index if one fits, so that a lookup reads one
 * bucket of FDEs instead of binary-searching them all.  Without memory
 * the unwinder sets it up at each walk.
 */
static void codectl_sframe_in_place(struct codectl_reg *reg)
{
	struct sframe_sec *sec;
	u32 words, *index;
	u8 shift;

	sec = kmalloc(sizeof(*sec), GFP_KERNEL_ACCOUNT);
	if (!sec)
		return;
	if (sframe_init(sec, reg->sframe_start,
			reg->sframe_end - reg->sframe_start, NULL,
			codectl_sframe_read, sec)) {
		kfree(sec);
		return;
	}
	sec->text_start = reg->text_start;
	sec->text_end = reg->text_end;
	reg->sframe_sec = sec;
	reg->sframe_mem = sizeof(*sec);
	words = sframe_index_words(sec, &shift);
	if (!words || words > CODECTL_INDEX_MAX_WORDS)
		return;
	index = kvmalloc_array(words, sizeof(*index), GFP_KERNEL_ACCOUNT);
	if (!index)
		return;
	if (sframe_index_build(sec, index, words, shift)) {
		kvfree(index);
		return;
	}
	reg->sframe_mem += words * sizeof(*index);
}

/*
 * The SFrame checks of registration (full walk unless validate_sframe is
 * off).  A section of at most sframe_flat_max bytes is copied, checked as
 * copied, and turned into the registration's flat lookup table; a larger
 * or partly unreadable one is checked, and later decoded, in user memory.
 * Return: 0, -EFAULT when the section cannot be read, -ENOEXEC when it is
 * refused, -ENOMEM.
 */
static int codectl_check_sframe(struct codectl_reg *reg)
{
	u64 size = reg->sframe_end - reg->sframe_start;
	bool full = READ_ONCE(codectl_validate_sframe);
	struct sframe_sec sec;
	u8 *copy = NULL;
	int err;

	if (size <= READ_ONCE(codectl_sframe_flat_max)) {
		copy = kvmalloc(size, GFP_KERNEL);
		if (!copy)
			return -ENOMEM;
		if (copy_from_user(copy, u64_to_user_ptr(reg->sframe_start),
				   size)) {
			kvfree(copy);
			copy = NULL;
		}
	}
	if (copy) {
		err = sframe_init(&sec, reg->sframe_start, size, copy, NULL,
				  NULL);
		if (!err)
			err = codectl_sframe_judge(&sec, reg->text_start,
						   reg->text_end, full);
		/* No table (too many rules, no memory): decode in place. */
		if (!err)
			codectl_sframe_flatten(reg, &sec);
		kvfree(copy);
	} else {
		err = codectl_sframe_verdict(reg->sframe_start,
					     reg->sframe_end, reg->text_start,
					     reg->text_end, full, NULL);
	}
	if (!err && !reg->sframe_flat)
		codectl_sframe_in_place(reg);
	if (err == SFRAME_E_READ)
		return -EFAULT;
	if (err) {
		pr_debug("codectl: pid %d: SFrame at %llx refused: %s\n",
			 task_pid_nr(current), reg->sframe_start,
			 sframe_strerror(err));
		return -ENOEXEC;
	}
	return 0;
}

/*
 * Insert a filled registration into the caller's registry, if its code is
 * mapped executable and its SFrame section or JIT table readable.  The
 * mappings are checked and the registration inserted under one hold of
 * the mmap lock: munmap takes it for writing, so it either drops the new
 * registration (its notifier runs after the insertion) or had unmapped
 * the range before the check.  Nothing here reads user memory, which
 * could fault under the lock.
 */
static int codectl_add(struct codectl_reg *reg)
{
	struct mm_struct *mm = current->mm;
	struct codectl_mm *cmm;
	int ret;

	cmm = codectl_mm_get_or_create(mm);
	if (IS_ERR(cmm))
		return PTR_ERR(cmm);
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = codectl_reg_mapped(mm, reg) ? 0 : -EFAULT;
	if (!ret)
		ret = codectl_mm_insert(cmm, reg);
	mmap_read_unlock(mm);
	return ret;
}

/* The scalar checks of struct codectl_elf_info, in the documented order. */
static int codectl_check_elf_info(const struct codectl_elf_info *info)
{
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
		if (info->sframe_start &&
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

static long codectl_register_elf(const struct codectl_args *args)
{
	struct codectl_elf_info info;
	struct codectl_reg *reg;
	int ret;

	ret = codectl_copy_info(&info, sizeof(info),
				CODECTL_ELF_INFO_SIZE_VER0, args);
	if (ret)
		return ret;
	ret = codectl_check_elf_info(&info);
	if (ret)
		return ret;

	reg = codectl_reg_alloc(CODECTL_KIND_ELF);
	if (!reg)
		return -ENOMEM;
	reg->text_start = info.text_start;
	reg->text_end = info.text_end;
	reg->elf_start = info.elf_start;
	reg->elf_end = info.elf_end;
	reg->sframe_start = info.sframe_start;
	reg->sframe_end = info.sframe_end;
	reg->debug_link_crc = info.debug_link_crc;
	reg->build_id_len = info.build_id_len;

	reg->pathname = codectl_strdup_user(info.pathname);
	if (IS_ERR(reg->pathname)) {
		ret = PTR_ERR(reg->pathname);
		reg->pathname = NULL;
		goto out;
	}
	reg->debug_link = codectl_strdup_user(info.debug_link_pathname);
	if (IS_ERR(reg->debug_link)) {
		ret = PTR_ERR(reg->debug_link);
		reg->debug_link = NULL;
		goto out;
	}
	if (info.build_id_len &&
	    copy_from_user(reg->build_id, u64_to_user_ptr(info.build_id),
			   info.build_id_len)) {
		ret = -EFAULT;
		goto out;
	}
	if (info.sframe_start) {
		ret = codectl_check_sframe(reg);
		if (ret)
			goto out;
	}

	ret = codectl_add(reg);
	if (ret == -ENOMEM && reg->sframe_mem) {
		/* Over max_bytes with its tables: decode without them. */
		codectl_reg_drop_sframe_tables(reg);
		ret = codectl_add(reg);
	}
	if (!ret)
		return 0;
out:
	codectl_reg_put(reg);
	return ret;
}

/**
 * codectl_jit_table_ok() - is a JIT unwind table header well formed?
 * @tab:	a copy of the header
 *
 * Return: true when its entry sizes, stride and lengths are consistent.
 */
bool codectl_jit_table_ok(const struct codectl_jit_unwind_table *tab)
{
	return tab->fre_size >= CODECTL_JIT_FRE_SIZE_VER0 &&
	       tab->fre_stride >= tab->fre_size && !(tab->fre_stride % 4) &&
	       !(tab->reserved_len % tab->fre_stride) &&
	       tab->used_len <= tab->reserved_len && !tab->__reserved;
}

/*
 * Check the header of the first table of a JIT region; *@end gets the end
 * of the table's reserved area (checked mapped by codectl_add()).
 */
static int codectl_check_jit_table(u64 head, u64 *end)
{
	struct codectl_jit_unwind_table tab;

	if (copy_from_user(&tab, u64_to_user_ptr(head), sizeof(tab)))
		return -EFAULT;
	if (!codectl_jit_table_ok(&tab))
		return -EINVAL;
	if (check_add_overflow(head, (u64)sizeof(tab), end) ||
	    check_add_overflow(*end, tab.reserved_len, end))
		return -EFAULT;
	return 0;
}

static long codectl_register_jit(const struct codectl_args *args)
{
	struct codectl_jit_info info;
	struct codectl_reg *reg;
	u64 table_end;
	int ret;

	ret = codectl_copy_info(&info, sizeof(info),
				CODECTL_JIT_INFO_SIZE_VER0, args);
	if (ret)
		return ret;
	if (info.text_start >= info.text_end)
		return -EINVAL;
	ret = codectl_check_jit_table(info.unwind_head, &table_end);
	if (ret)
		return ret;

	reg = codectl_reg_alloc(CODECTL_KIND_JIT);
	if (!reg)
		return -ENOMEM;
	reg->text_start = info.text_start;
	reg->text_end = info.text_end;
	reg->unwind_head = info.unwind_head;
	reg->table_end = table_end;
	ret = codectl_add(reg);
	if (ret)
		codectl_reg_put(reg);
	return ret;
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

/*
 * Copy a string of the registration into the caller's buffer if it fits;
 * always report the size it needs in *@ulen.
 */
static int codectl_answer_string(const char *s, u64 ubuf, u32 *ulen)
{
	u32 need = s ? strlen(s) + 1 : 0;
	u32 have = *ulen;

	*ulen = need;
	if (!need || !ubuf || have < need)
		return 0;
	return copy_to_user(u64_to_user_ptr(ubuf), s, need) ? -EFAULT : 0;
}

static long codectl_query(const struct codectl_args *args)
{
	struct codectl_query_info q;
	struct codectl_reg *reg;
	struct codectl_mm *cmm;
	u32 build_id_room;
	int ret;

	ret = codectl_copy_info(&q, sizeof(q), CODECTL_QUERY_INFO_SIZE_VER0,
				args);
	if (ret)
		return ret;
	if (q.__reserved)
		return -EINVAL;
	cmm = codectl_mm_find(current->mm);
	reg = cmm ? codectl_mm_next(cmm, q.addr) : NULL;
	if (!reg)
		return -ENOENT;

	/* The registration is ours by reference; its fields are stable. */
	q.kind = reg->kind;
	q.text_start = reg->text_start;
	q.text_end = reg->text_end;
	q.elf_start = reg->elf_start;
	q.elf_end = reg->elf_end;
	q.sframe_start = reg->sframe_start;
	q.sframe_end = reg->sframe_end;
	q.unwind_head = reg->unwind_head;
	q.debug_link_crc = reg->debug_link_crc;
	build_id_room = q.build_id_len;
	q.build_id_len = reg->build_id_len;
	ret = codectl_answer_string(reg->pathname, q.pathname,
				    &q.pathname_len);
	if (!ret)
		ret = codectl_answer_string(reg->debug_link,
					    q.debug_link_pathname,
					    &q.debug_link_len);
	if (!ret && q.build_id && reg->build_id_len &&
	    build_id_room >= reg->build_id_len &&
	    copy_to_user(u64_to_user_ptr(q.build_id), reg->build_id,
			 reg->build_id_len))
		ret = -EFAULT;
	codectl_reg_put(reg);
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
	case CODECTL_IOC_UNWIND:
	case CODECTL_IOC_UNWIND_STATS:
		return codectl_unwind_ioctl(file, cmd, arg);
	case CODECTL_IOC_UNWIND_REQUEST:
		return codectl_harness_request(file, arg);
	case CODECTL_IOC_SELFTEST_START:
	case CODECTL_IOC_SELFTEST_STOP:
		return codectl_selftest_ioctl(file, cmd, arg);
	case CODECTL_IOC_HOOK_STATS:
		return codectl_hooks_ioctl((void __user *)arg);
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
		return codectl_register_elf(&args);
	case CODECTL_REGISTER_JIT:
		return codectl_register_jit(&args);
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
