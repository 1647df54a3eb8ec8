// SPDX-License-Identifier: GPL-2.0
/*
 * The demand queue: files discovery met with neither SFrame nor an import,
 * for the privileged helper (codectl daemon) that synthesises SFrame from
 * their .eh_frame and imports it.  Discovery queues them in task context
 * (its task_work: never in NMI, never waiting for the helper); the helper
 * attaches an open /dev/codectl with CODECTL_IOC_DEMAND, then read()s and
 * poll()s records on it.  A ring of DEMAND_RING records under a spinlock;
 * counters in debugfs codectl/demand.  The rules on overflow and on attach
 * (nothing lost: uapi/linux/codectl.h, "On-demand synthesis").
 *
 * Fair shares: records of files that are not system objects (import-budget.c's
 * codectl_owner_of(): a user's files, or root's that others may write,
 * charged to the uid of the process that met them) hold at most
 * DEMAND_USERS of the ring, and those of one uid at most DEMAND_USER: a
 * user's flood leaves room for everybody else's and always for the
 * system's.  A record refused for its share is dropped as if the ring were
 * full (the reader hears of the loss and looks at the processes itself).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "internal.h"

#define DEMAND_RING	256
#define DEMAND_USERS	(DEMAND_RING * 3 / 4)	/* records not the system's */
#define DEMAND_USER	32			/* records of one uid */

static struct codectl_demand demand_ring[DEMAND_RING];
static u64 demand_owner[DEMAND_RING];	/* whom each record is charged to */
static unsigned int demand_head;	/* oldest record */
static unsigned int demand_len;		/* records queued */
static struct file *demand_reader;	/* the attached file, or NULL */
static pid_t demand_reader_pid;		/* who attached it */
static bool demand_lost;		/* records lost since the last read */
static DEFINE_SPINLOCK(demand_lock);
static DECLARE_WAIT_QUEUE_HEAD(demand_wait);

static struct {
	atomic64_t queued;		/* records queued */
	atomic64_t duplicates;		/* files already in the queue */
	atomic64_t dropped;		/* full, reader attached: not queued */
	atomic64_t overwritten;		/* full, no reader: the oldest went */
	atomic64_t over_share;		/* its uid's share full: not queued */
	atomic64_t read;		/* records read */
	atomic64_t attached;		/* attaches */
} demand_stats;

/* Same file as @d? */
static bool demand_same(const struct codectl_demand *a,
			const struct codectl_demand *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->gen == b->gen &&
	       a->size == b->size && a->mtime_sec == b->mtime_sec &&
	       a->mtime_nsec == b->mtime_nsec;
}

/* Whom a record of @inode, met by current, is charged to. */
static u64 demand_owner_of(const struct inode *inode)
{
	u64 owner = codectl_owner_of(inode);

	if (owner == CODECTL_OWNER_SHARED)
		owner = from_kuid(&init_user_ns, current_uid());
	return owner;
}

/* Would a record charged to @owner exceed a share (under the lock)? */
static bool demand_over_share(u64 owner)
{
	unsigned int i, users = 0, own = 0;
	u64 o;

	if (owner == CODECTL_OWNER_SYSTEM)
		return false;
	for (i = 0; i < demand_len; i++) {
		o = demand_owner[(demand_head + i) % DEMAND_RING];
		users += o != CODECTL_OWNER_SYSTEM;
		own += o == owner;
	}
	return users >= DEMAND_USERS || own >= DEMAND_USER;
}

/**
 * codectl_demand_queue() - queue a file for the helper
 * @file:	the file, mapped executable by current
 * @vm_start:	start of that mapping
 * @vm_end:	its end
 * @vm_off:	its file offset in bytes
 *
 * Context: task (discovery's task_work); takes a spinlock, allocates
 * nothing but a path buffer, which it may do without.
 * Return: false when a reader is attached and the queue is full, or
 * when the share of the file's owner is (the file is not queued: the
 * caller must not remember it as hopeless, so that it is queued again
 * when met), else true.
 */
bool codectl_demand_queue(struct file *file, u64 vm_start, u64 vm_end,
			  u64 vm_off)
{
	struct codectl_demand d = {};
	struct codectl_file_id id;
	unsigned int i;
	char *buf, *path;
	bool ok = true;
	u64 owner = demand_owner_of(file_inode(file));

	codectl_file_id(file_inode(file), &id);
	d.ino = id.ino;
	d.dev = new_encode_dev(id.dev);
	d.gen = id.gen;
	d.size = id.size;
	d.mtime_sec = id.mtime_sec;
	d.mtime_nsec = id.mtime_nsec;
	d.pid = task_tgid_nr(current);
	d.vm_start = vm_start;
	d.vm_end = vm_end;
	d.vm_pgoff = vm_off;
	buf = kmalloc(PATH_MAX, GFP_KERNEL_ACCOUNT);
	if (buf) {
		path = d_path(&file->f_path, buf, PATH_MAX);
		if (!IS_ERR(path) && strlen(path) < sizeof(d.path))
			strscpy(d.path, path, sizeof(d.path));
		else
			d.flags |= CODECTL_DEMAND_PATH_CUT;
		kfree(buf);
	} else {
		d.flags |= CODECTL_DEMAND_PATH_CUT;
	}

	spin_lock(&demand_lock);
	for (i = 0; i < demand_len; i++) {
		if (demand_same(&demand_ring[(demand_head + i) % DEMAND_RING],
				&d)) {
			atomic64_inc(&demand_stats.duplicates);
			goto out;
		}
	}
	if (demand_over_share(owner)) {
		demand_lost = true;
		atomic64_inc(&demand_stats.over_share);
		ok = false;
		goto out;
	}
	if (demand_len == DEMAND_RING) {
		demand_lost = true;
		if (demand_reader) {
			atomic64_inc(&demand_stats.dropped);
			ok = false;
			goto out;
		}
		atomic64_inc(&demand_stats.overwritten);
		demand_head = (demand_head + 1) % DEMAND_RING;
		demand_len--;
	}
	demand_ring[(demand_head + demand_len) % DEMAND_RING] = d;
	demand_owner[(demand_head + demand_len) % DEMAND_RING] = owner;
	demand_len++;
	atomic64_inc(&demand_stats.queued);
out:
	spin_unlock(&demand_lock);
	if (ok)
		wake_up_interruptible(&demand_wait);
	return ok;
}

/**
 * codectl_demand_attach() - CODECTL_IOC_DEMAND: make @file the reader
 * @file:	an open /dev/codectl
 *
 * Return: 0, -EPERM, -EBUSY or -EOPNOTSUPP (uapi/linux/codectl.h).
 */
long codectl_demand_attach(struct file *file)
{
	int ret = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (task_active_pid_ns(current) != &init_pid_ns)
		return -EOPNOTSUPP;
	spin_lock(&demand_lock);
	if (!demand_reader) {
		demand_reader = file;
		demand_reader_pid = task_tgid_nr(current);
	} else if (demand_reader != file) {
		ret = -EBUSY;
	}
	spin_unlock(&demand_lock);
	if (ret)
		return ret;
	atomic64_inc(&demand_stats.attached);
	/* What nobody could help before is worth a look now. */
	codectl_discover_forget_files();
	return 0;
}

/**
 * codectl_demand_release() - the file is closed: detach it if attached
 * @file:	an open /dev/codectl being released
 */
void codectl_demand_release(struct file *file)
{
	spin_lock(&demand_lock);
	if (demand_reader == file) {
		demand_reader = NULL;
		demand_reader_pid = 0;
	}
	spin_unlock(&demand_lock);
}

/* Something to read: a record, or the news that some were lost. */
static bool demand_readable(void)
{
	return READ_ONCE(demand_len) || READ_ONCE(demand_lost);
}

/**
 * codectl_demand_read() - read() of /dev/codectl: records for the reader
 * @file:	the file
 * @ubuf:	the buffer
 * @count:	its size: records that fit whole are returned
 * @ppos:	unused
 *
 * Return: bytes read, -EINVAL (not the reader, or @count less than a
 * record), -EAGAIN (O_NONBLOCK, nothing queued), -ERESTARTSYS or -EFAULT.
 */
ssize_t codectl_demand_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	struct codectl_demand d;
	size_t done = 0;
	int ret;

	if (READ_ONCE(demand_reader) != file || count < sizeof(d))
		return -EINVAL;
	for (;;) {
		if (demand_readable())
			break;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(demand_wait, demand_readable());
		if (ret)
			return ret;
	}
	while (done + sizeof(d) <= count) {
		spin_lock(&demand_lock);
		if (demand_reader != file) {
			spin_unlock(&demand_lock);
			break;
		}
		if (demand_len) {
			d = demand_ring[demand_head];
			demand_head = (demand_head + 1) % DEMAND_RING;
			demand_len--;
		} else if (demand_lost) {
			memset(&d, 0, sizeof(d));
			d.flags = CODECTL_DEMAND_OVERFLOW;
			demand_lost = false;
		} else {
			spin_unlock(&demand_lock);
			break;
		}
		spin_unlock(&demand_lock);
		if (copy_to_user(ubuf + done, &d, sizeof(d)))
			/* The record is lost: say so at the next read. */
			goto fault;
		atomic64_inc(&demand_stats.read);
		done += sizeof(d);
	}
	return done ?: -EINVAL;
fault:
	spin_lock(&demand_lock);
	demand_lost = true;
	spin_unlock(&demand_lock);
	return done ?: -EFAULT;
}

/**
 * codectl_demand_poll() - poll() of /dev/codectl
 * @file:	the file
 * @wait:	the poll table
 *
 * Return: EPOLLIN when the attached reader has something to read; EPOLLERR
 * for a file that is not the reader.
 */
__poll_t codectl_demand_poll(struct file *file, poll_table *wait)
{
	if (READ_ONCE(demand_reader) != file)
		return EPOLLERR;
	poll_wait(file, &demand_wait, wait);
	return demand_readable() ? EPOLLIN | EPOLLRDNORM : 0;
}

/**
 * codectl_demand_show() - debugfs codectl/demand
 * @m:		the seq_file
 * @v:		unused
 *
 * Return: 0.
 */
int codectl_demand_show(struct seq_file *m, void *v)
{
	unsigned int len;
	pid_t pid;

	spin_lock(&demand_lock);
	len = demand_len;
	pid = demand_reader_pid;
	spin_unlock(&demand_lock);
	seq_printf(m, "reader %d\n", pid);
	seq_printf(m, "pending %u\n", len);
	seq_printf(m, "capacity %u\n", DEMAND_RING);
	seq_printf(m, "queued %lld\n", atomic64_read(&demand_stats.queued));
	seq_printf(m, "duplicates %lld\n",
		   atomic64_read(&demand_stats.duplicates));
	seq_printf(m, "dropped %lld\n", atomic64_read(&demand_stats.dropped));
	seq_printf(m, "overwritten %lld\n",
		   atomic64_read(&demand_stats.overwritten));
	seq_printf(m, "over_share %lld\n",
		   atomic64_read(&demand_stats.over_share));
	seq_printf(m, "read %lld\n", atomic64_read(&demand_stats.read));
	seq_printf(m, "attached %lld\n", atomic64_read(&demand_stats.attached));
	return 0;
}
