// SPDX-License-Identifier: GPL-2.0
/*
 * CODECTL_QUERY: read one registration of the caller's address space, or
 * of another process's when the caller may read that process's
 * /proc/PID/maps.  ptrace_may_access() is not exported, so procfs makes
 * the check: the caller passes an fd of /proc/PID/maps, the module checks
 * it and opens "maps" again in that directory with the caller's
 * credentials; the mm is taken before and compared after (an exec in
 * between is noticed).  No lock of the target is held.  Why each step:
 * docs/design.md, "The ABI".
 */
#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/path.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "internal.h"
#include "sframe.h"

/* Is @d named by @name? */
static bool codectl_dentry_is(struct dentry *d, const char *name)
{
	struct name_snapshot n;
	bool same;

	take_dentry_name_snapshot(&n, d);
	same = !strcmp(n.name.name, name);
	release_dentry_name_snapshot(&n);
	return same;
}

/*
 * The directory of a maps file that is procfs's /proc/@nr/maps or
 * /proc/PID/task/@nr/maps in a procfs of current's pid namespace, with a
 * reference, or NULL.
 */
static struct dentry *codectl_query_maps_dir(struct file *f, pid_t nr)
{
	struct dentry *d = f->f_path.dentry, *dir, *up;
	struct super_block *sb = d->d_sb;
	char num[16];
	bool ok;

	if (sb->s_magic != PROC_SUPER_MAGIC ||
	    proc_pid_ns(sb) != task_active_pid_ns(current) ||
	    !S_ISREG(file_inode(f)->i_mode) || !codectl_dentry_is(d, "maps"))
		return NULL;
	snprintf(num, sizeof(num), "%d", nr);
	dir = dget_parent(d);
	up = dget_parent(dir);
	/* /proc/N, or /proc/P/task/N (procfs renames nothing) */
	ok = codectl_dentry_is(dir, num) &&
	     (up == sb->s_root ||
	      (codectl_dentry_is(up, "task") && up->d_parent != up &&
	       up->d_parent->d_parent == sb->s_root));
	dput(up);
	if (!ok) {
		dput(dir);
		return NULL;
	}
	return dir;
}

/**
 * codectl_query_may_read() - may current read a process's registrations?
 * @nr:		its pid, in current's pid namespace
 * @maps_fd:	the caller's fd of /proc/@nr/maps (or of a thread's)
 *
 * What opening /proc/@nr/maps now says: procfs checks ptrace access
 * (PTRACE_MODE_READ_FSCREDS, LSMs included) and its hidepid option.  The
 * module opens "maps" in the directory of @maps_fd, which must be the
 * directory of @nr in a procfs of current's pid namespace, on @maps_fd's
 * mount, and checks that nothing mounted over it redirected the open.
 * The directory stands for one process (a struct pid): if the process
 * died and @nr went to another one, the open fails.
 *
 * Context: task context, no locks held (opens a file).
 * Return: 0, -EBADF (@maps_fd is not an open file), -EACCES (it is not
 * procfs's maps of @nr in current's pid namespace, or the check fails),
 * -ESRCH (the process is gone), or the open's other errors (-EPERM with
 * hidepid=noaccess, -EINTR, -ENOMEM).
 */
static int codectl_query_may_read(pid_t nr, int maps_fd)
{
	struct dentry *dir;
	struct file *f, *g;
	struct path at;
	int ret = 0;

	f = maps_fd < 0 ? NULL : fget(maps_fd);
	if (!f)
		return -EBADF;
	dir = codectl_query_maps_dir(f, nr);
	if (!dir) {
		fput(f);
		return -EACCES;
	}
	at.mnt = f->f_path.mnt;
	at.dentry = dir;
	g = codectl_file_open_root(&at, "maps", O_RDONLY | O_LARGEFILE, 0);
	if (IS_ERR(g)) {
		ret = PTR_ERR(g) == -ENOENT ? -ESRCH : PTR_ERR(g);
	} else {
		if (g->f_path.mnt != f->f_path.mnt ||
		    g->f_path.dentry->d_parent != dir)
			ret = -EACCES;
		fput(g);
	}
	dput(dir);
	fput(f);
	return ret;
}

/**
 * codectl_query_get_mm() - the address space a QUERY reads
 * @nr:		0 for current's, else a pid in current's pid namespace
 * @maps_fd:	with @nr, the caller's fd of /proc/@nr/maps
 *
 * Context: task context, no locks held.
 * Return: the address space with a reference (mm_users) the caller drops
 * with mmput(), or an ERR_PTR: -EINVAL (negative @nr), -ESRCH (no such
 * process, or it has no address space: kernel thread, zombie, exiting),
 * -EAGAIN (it exec'ed during the check), or codectl_query_may_read()'s.
 */
static struct mm_struct *codectl_query_get_mm(pid_t nr, int maps_fd)
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
		ret = codectl_query_may_read(nr, maps_fd);
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
	if (reg->sframe_sec && reg->sframe_sec->mem)
		return CODECTL_TABLE_KERNEL;	/* shared or not */
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

	mm = codectl_query_get_mm(q->pid, q->maps_fd);
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
