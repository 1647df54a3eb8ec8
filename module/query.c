// SPDX-License-Identifier: GPL-2.0
/*
 * CODECTL_QUERY: read one registration of the caller's address space, or
 * of another process's when the caller may read that process's
 * /proc/PID/maps.
 *
 * The kernel's check for that, ptrace_may_access() in mode
 * PTRACE_MODE_READ_FSCREDS, is not exported to modules (not on 6.1, 6.12
 * nor 7.2), and a copy of it would lack the LSM hook.  So procfs makes it:
 * the module opens /proc/PID/maps with the caller's credentials, whose
 * open runs mm_access() on the process, and keeps nothing of the file.
 * The address space itself is taken with get_task_mm() before the check
 * and compared after it, so an exec in between (a set-user-ID program,
 * say) is noticed; the registry is read lock-free (RCU) and no lock of the
 * target is held at any point.
 */
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "codectl.h"
#include "sframe.h"

/**
 * codectl_query_may_read() - may current read a process's registrations?
 * @nr:		its pid, in current's pid namespace
 *
 * What opening /proc/@nr/maps says: procfs checks ptrace access
 * (PTRACE_MODE_READ_FSCREDS, LSMs included) and its hidepid option.  The
 * /proc must be a procfs of current's pid namespace, or @nr would name
 * another process.
 *
 * Context: task context, no locks held (opens a file).
 * Return: 0, -ESRCH when /proc does not show the process, -EACCES when
 * the check fails or /proc is not current's procfs, or the open's other
 * errors (-EPERM with hidepid=noaccess, -EINTR, -ENOMEM).
 */
static int codectl_query_may_read(pid_t nr)
{
	struct super_block *sb;
	struct file *f;
	char path[32];
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", nr);
	f = filp_open(path, O_RDONLY | O_LARGEFILE, 0);
	if (IS_ERR(f))
		return PTR_ERR(f) == -ENOENT ? -ESRCH : PTR_ERR(f);
	sb = file_inode(f)->i_sb;
	if (sb->s_magic != PROC_SUPER_MAGIC ||
	    proc_pid_ns(sb) != task_active_pid_ns(current))
		ret = -EACCES;
	fput(f);
	return ret;
}

/**
 * codectl_query_get_mm() - the address space a QUERY reads
 * @nr:		0 for current's, else a pid in current's pid namespace
 *
 * Context: task context, no locks held.
 * Return: the address space with a reference (mm_users) the caller drops
 * with mmput(), or an ERR_PTR: -EINVAL (negative @nr), -ESRCH (no such
 * process, or it has no address space: kernel thread, zombie, exiting),
 * -EAGAIN (it exec'ed during the check), or codectl_query_may_read()'s.
 */
static struct mm_struct *codectl_query_get_mm(pid_t nr)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct pid *pid;
	int ret = 0;

	if (!nr) {
		mmget(current->mm);
		return current->mm;
	}
	if (nr < 0)
		return ERR_PTR(-EINVAL);
	pid = find_get_pid(nr);
	task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (!task)
		return ERR_PTR(-ESRCH);
	mm = get_task_mm(task);
	if (!mm) {
		ret = -ESRCH;
	} else if (mm != current->mm) {
		ret = codectl_query_may_read(nr);
		/*
		 * Still attached to its pid, the task was the one the check
		 * saw; still on @mm, it has not exec'ed since we took it.
		 */
		if (!ret && (!pid_alive(task) || !READ_ONCE(task->mm)))
			ret = -ESRCH;
		else if (!ret && READ_ONCE(task->mm) != mm)
			ret = -EAGAIN;
	}
	put_task_struct(task);
	if (ret) {
		if (mm)
			mmput(mm);
		return ERR_PTR(ret);
	}
	return mm;
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

/* codectl_query_info.sframe_table of a registration. */
static u32 codectl_query_table(const struct codectl_reg *reg)
{
	if (reg->shared)
		return CODECTL_TABLE_FLAT_SHARED;
	if (reg->sframe_flat)
		return CODECTL_TABLE_FLAT;
	if (!reg->sframe_start)
		return CODECTL_TABLE_NONE;
	if (reg->sframe_sec && reg->sframe_sec->index)
		return CODECTL_TABLE_USER_INDEX;
	return CODECTL_TABLE_USER;
}

/* Fill @q's outputs from @reg, the strings and build id included. */
static int codectl_query_fill(struct codectl_query_info *q,
			      const struct codectl_reg *reg)
{
	u32 build_id_room = q->build_id_len;
	int ret;

	q->kind = reg->kind;
	q->text_start = reg->text_start;
	q->text_end = reg->text_end;
	q->elf_start = reg->elf_start;
	q->elf_end = reg->elf_end;
	q->sframe_start = reg->sframe_start;
	q->sframe_end = reg->sframe_end;
	q->unwind_head = reg->unwind_head;
	q->debug_link_crc = reg->debug_link_crc;
	q->origin = reg->origin;
	q->sframe_version = reg->sframe_version;
	q->num_fdes = reg->num_fdes;
	q->num_fres = reg->num_fres;
	q->coverage = reg->coverage;
	q->sframe_table = codectl_query_table(reg);
	q->charge = min_t(u64, reg->charge, U32_MAX);
	q->build_id_len = reg->build_id_len;
	ret = codectl_answer_string(reg->pathname, q->pathname,
				    &q->pathname_len);
	if (!ret)
		ret = codectl_answer_string(reg->debug_link,
					    q->debug_link_pathname,
					    &q->debug_link_len);
	if (!ret && q->build_id && reg->build_id_len &&
	    build_id_room >= reg->build_id_len &&
	    copy_to_user(u64_to_user_ptr(q->build_id), reg->build_id,
			 reg->build_id_len))
		ret = -EFAULT;
	return ret;
}

/**
 * codectl_query_reg() - answer a CODECTL_QUERY
 * @q:		the caller's struct, its inputs checked for the ABI
 *		(reserved fields); gets the outputs
 *
 * The registration of @q->pid's address space (0: current's) with the
 * lowest text_start whose text_end is above @q->addr.  The strings and
 * build id go straight to the caller's buffers; the caller copies @q
 * back.
 *
 * Context: task context, no locks held.
 * Return: 0, -ENOENT, -EFAULT, or codectl_query_get_mm()'s errors.
 */
int codectl_query_reg(struct codectl_query_info *q)
{
	struct codectl_reg *reg = NULL;
	struct codectl_mm *cmm;
	struct mm_struct *mm;
	int ret = -ENOENT;

	mm = codectl_query_get_mm(q->pid);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	/* The registry stays while we hold a user of the mm. */
	cmm = codectl_mm_find(mm);
	if (cmm)
		reg = codectl_mm_next(cmm, q->addr);
	if (reg) {
		/* Ours by reference; its fields never change. */
		ret = codectl_query_fill(q, reg);
		codectl_reg_put(reg);
	}
	mmput(mm);
	return ret;
}
