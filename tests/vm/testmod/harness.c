// SPDX-License-Identifier: GPL-2.0
/*
 * CODECTL_TEST_IOC_UNWIND_REQUEST, read() and poll() on /dev/codectl_test
 * (the test module, tests/vm/testmod): a program sees what a
 * deferred-unwind consumer gets for its own stack.
 *
 * One consumer for the whole module.  A request records (task, file,
 * cookie, tid) in a small hash of pending requests; the callback, running
 * in that task's context on its way back to user space, turns every
 * pending request of the task with that cookie into a record on the
 * request's file.  Each open file has a queue of at most
 * CODECTL_TRACE_QUEUE_MAX records; pending requests hold a reference to
 * the file's context, so a file closed in between is safe.
 */
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/poll.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <codectl/unwind_deferred.h>
#include "codectl_test.h"
#include "testmod.h"

/* Requests pending on one file (one per thread in its ioctl, in practice). */
#define CODECTL_HPENDING_MAX	4096

/**
 * struct harness_file - the deferred-trace side of one open file
 * @ref:	the file, one per pending request
 * @lock:	protects everything below
 * @wq:		readers and pollers
 * @records:	queued struct harness_record, oldest first
 * @nr:		records queued
 * @lost:	records dropped since the last one read
 * @pending:	requests not yet called back
 * @closed:	released: records arriving now are dropped
 */
struct harness_file {
	refcount_t ref;
	spinlock_t lock;		/* protects the fields below */
	wait_queue_head_t wq;
	struct list_head records;
	unsigned int nr;
	unsigned int lost;
	unsigned int pending;
	bool closed;
};

/* One queued record: struct codectl_trace_record, pcs, methods, padding. */
struct harness_record {
	struct list_head node;
	u32 size;
	u64 data[];
};

/* A request waiting for its callback. */
struct harness_pending {
	struct hlist_node node;
	const struct task_struct *task;	/* key only, never dereferenced */
	struct harness_file *hf;
	u64 cookie;
	pid_t tid;
};

static DEFINE_SPINLOCK(harness_pending_lock);
static DEFINE_HASHTABLE(harness_pending_table, 6);
static struct codectl_unwind_work harness_work;

static void harness_record_free(struct harness_record *rec)
{
	kfree(rec);
	atomic_long_dec(&codectl_test_trace_records);
}

static void harness_file_put(struct harness_file *hf)
{
	if (refcount_dec_and_test(&hf->ref))
		kfree(hf);
}

static void harness_file_queue(struct harness_file *hf,
			       const struct codectl_unwind_trace *t, u64 cookie,
			       pid_t tid, size_t size)
{
	struct codectl_trace_record *r;
	struct harness_record *rec;
	bool queued = false;
	u8 *methods;

	rec = kzalloc(sizeof(*rec) + size, GFP_KERNEL_ACCOUNT);
	if (rec) {
		rec->size = size;
		r = (struct codectl_trace_record *)rec->data;
		r->cookie = cookie;
		r->size = size;
		r->tid = tid;
		r->nr = t->nr;
		r->stop = t->stop;
		r->flags = t->flags;
		if (t->nr) {
			memcpy(r + 1, t->ips, t->nr * sizeof(u64));
			methods = (u8 *)(r + 1) + t->nr * sizeof(u64);
			memcpy(methods, t->methods, t->nr);
		}
	}
	spin_lock(&hf->lock);
	if (!hf->closed) {
		if (rec && hf->nr < CODECTL_TRACE_QUEUE_MAX) {
			list_add_tail(&rec->node, &hf->records);
			hf->nr++;
			atomic_long_inc(&codectl_test_trace_records);
			queued = true;
		} else {
			hf->lost++;
		}
	}
	hf->pending--;
	spin_unlock(&hf->lock);
	if (queued)
		wake_up_interruptible_poll(&hf->wq, EPOLLIN | EPOLLRDNORM);
	else
		kfree(rec);
}

/* The consumer's callback: current's requests with this cookie. */
static void codectl_harness_callback(struct codectl_unwind_work *work,
				     const struct codectl_unwind_trace *t,
				     u64 cookie)
{
	struct harness_pending *p;
	struct hlist_node *tmp;
	HLIST_HEAD(mine);
	size_t size;

	spin_lock(&harness_pending_lock);
	hash_for_each_possible_safe(harness_pending_table, p, tmp, node,
				    (unsigned long)current) {
		if (p->task == current && p->cookie == cookie) {
			hash_del(&p->node);
			hlist_add_head(&p->node, &mine);
		}
	}
	spin_unlock(&harness_pending_lock);

	size = ALIGN(sizeof(struct codectl_trace_record) +
		     t->nr * (sizeof(u64) + 1), 8);
	hlist_for_each_entry_safe(p, tmp, &mine, node) {
		harness_file_queue(p->hf, t, cookie, p->tid, size);
		harness_file_put(p->hf);
		kfree(p);
	}
}

/**
 * codectl_harness_request() - CODECTL_TEST_IOC_UNWIND_REQUEST
 * @file:	the file the record will be queued on
 * @arg:	user pointer to a __u64 for the cookie
 *
 * Return: 0, or -EBUSY (too many requests pending on the file), -ENOMEM,
 * -EFAULT (the record comes all the same), or the deferred request's
 * error (-ENOSPC: no per-task slot free).
 */
long codectl_harness_request(struct file *file, unsigned long arg)
{
	struct harness_file *hf = file->private_data;
	struct harness_pending *p;
	u64 cookie;
	int ret;

	p = kmalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	spin_lock(&hf->lock);
	if (hf->pending >= CODECTL_HPENDING_MAX) {
		spin_unlock(&hf->lock);
		kfree(p);
		return -EBUSY;
	}
	hf->pending++;
	spin_unlock(&hf->lock);

	/* The callback runs on our way out of this ioctl, not before. */
	ret = codectl_unwind_deferred_request(&harness_work, &cookie);
	if (ret < 0) {
		spin_lock(&hf->lock);
		hf->pending--;
		spin_unlock(&hf->lock);
		kfree(p);
		return ret;
	}
	refcount_inc(&hf->ref);
	p->task = current;
	p->hf = hf;
	p->cookie = cookie;
	p->tid = task_pid_vnr(current);
	spin_lock(&harness_pending_lock);
	hash_add(harness_pending_table, &p->node, (unsigned long)current);
	spin_unlock(&harness_pending_lock);

	if (put_user(cookie, (u64 __user *)arg))
		return -EFAULT;
	return 0;
}

int codectl_harness_open(struct inode *inode, struct file *file)
{
	struct harness_file *hf;

	hf = kzalloc(sizeof(*hf), GFP_KERNEL_ACCOUNT);
	if (!hf)
		return -ENOMEM;
	refcount_set(&hf->ref, 1);
	spin_lock_init(&hf->lock);
	init_waitqueue_head(&hf->wq);
	INIT_LIST_HEAD(&hf->records);
	file->private_data = hf;
	return nonseekable_open(inode, file);
}

int codectl_harness_release(struct inode *inode, struct file *file)
{
	struct harness_file *hf = file->private_data;
	struct harness_record *rec, *tmp;
	LIST_HEAD(drop);

	spin_lock(&hf->lock);
	hf->closed = true;
	list_splice_init(&hf->records, &drop);
	hf->nr = 0;
	spin_unlock(&hf->lock);
	list_for_each_entry_safe(rec, tmp, &drop, node)
		harness_record_free(rec);
	harness_file_put(hf);
	return 0;
}

static bool harness_file_ready(struct harness_file *hf)
{
	return READ_ONCE(hf->nr) != 0;
}

ssize_t codectl_harness_read(struct file *file, char __user *buf,
			     size_t len, loff_t *ppos)
{
	struct harness_file *hf = file->private_data;
	struct codectl_trace_record *r;
	struct harness_record *rec;
	unsigned int lost;
	int ret;

	for (;;) {
		spin_lock(&hf->lock);
		rec = list_first_entry_or_null(&hf->records,
					       struct harness_record, node);
		if (rec) {
			if (rec->size > len) {
				spin_unlock(&hf->lock);
				return -EINVAL;
			}
			list_del(&rec->node);
			hf->nr--;
			lost = hf->lost;
			hf->lost = 0;
			spin_unlock(&hf->lock);
			break;
		}
		spin_unlock(&hf->lock);
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(hf->wq, harness_file_ready(hf));
		if (ret)
			return ret;
	}

	r = (struct codectl_trace_record *)rec->data;
	r->lost = lost;
	if (copy_to_user(buf, rec->data, rec->size)) {
		/* Nothing consumed: put it back in front. */
		spin_lock(&hf->lock);
		list_add(&rec->node, &hf->records);
		hf->nr++;
		hf->lost += lost;
		spin_unlock(&hf->lock);
		return -EFAULT;
	}
	ret = rec->size;
	harness_record_free(rec);
	return ret;
}

__poll_t codectl_harness_poll(struct file *file, struct poll_table_struct *pt)
{
	struct harness_file *hf = file->private_data;

	poll_wait(file, &hf->wq, pt);
	return harness_file_ready(hf) ? EPOLLIN | EPOLLRDNORM : 0;
}

int codectl_harness_init(void)
{
	return codectl_unwind_deferred_init(&harness_work,
					    codectl_harness_callback);
}

void codectl_harness_exit(void)
{
	struct harness_pending *p;
	struct hlist_node *tmp;
	unsigned int b;

	/* No callback after this; requests still pending are dropped. */
	codectl_unwind_deferred_cancel(&harness_work);
	hash_for_each_safe(harness_pending_table, b, tmp, p, node) {
		hash_del(&p->node);
		harness_file_put(p->hf);
		kfree(p);
	}
}
