// SPDX-License-Identifier: GPL-2.0
/*
 * codectl-consumer: a test module outside codectl that uses codectl's
 * exported deferred-unwind API (<codectl/unwind_deferred.h>) as another
 * tracer would, built against codectl's Module.symvers.  Its device asks
 * for the caller's user stack (once or twice in one kernel entry) and
 * reports the last callback.
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include <codectl/unwind_deferred.h>
#include "consumer.h"

static struct codectl_unwind_work consumer_work;
static DEFINE_SPINLOCK(consumer_lock);
static struct codectl_consumer_last consumer_last;

static void consumer_callback(struct codectl_unwind_work *work,
			      const struct codectl_unwind_trace *t, u64 cookie)
{
	unsigned int n = min_t(unsigned int, t->nr,
			       ARRAY_SIZE(consumer_last.ips));

	spin_lock(&consumer_lock);
	consumer_last.callbacks++;
	consumer_last.nr = t->nr;
	consumer_last.stop = t->stop;
	consumer_last.flags = t->flags;
	consumer_last.cookie = cookie;
	memset(consumer_last.ips, 0, sizeof(consumer_last.ips));
	memcpy(consumer_last.ips, t->ips, n * sizeof(u64));
	spin_unlock(&consumer_lock);
}

static long consumer_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct codectl_consumer_last last;
	struct codectl_consumer_req req;
	unsigned int i;

	switch (cmd) {
	case CONSUMER_IOC_REQUEST:
		if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
			return -EFAULT;
		if (req.times < 1 || req.times > 2)
			return -EINVAL;
		for (i = 0; i < req.times; i++)
			req.ret[i] = codectl_unwind_deferred_request(&consumer_work,
								     &req.cookie[i]);
		return copy_to_user((void __user *)arg, &req, sizeof(req)) ?
		       -EFAULT : 0;
	case CONSUMER_IOC_LAST:
		spin_lock(&consumer_lock);
		last = consumer_last;
		spin_unlock(&consumer_lock);
		return copy_to_user((void __user *)arg, &last, sizeof(last)) ?
		       -EFAULT : 0;
	}
	return -ENOTTY;
}

static const struct file_operations consumer_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= consumer_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice consumer_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "codectl_consumer",
	.fops	= &consumer_fops,
	.mode	= 0600,
};

static int __init consumer_init(void)
{
	int ret = codectl_unwind_deferred_init(&consumer_work,
					       consumer_callback);

	if (ret)
		return ret;
	ret = misc_register(&consumer_misc);
	if (ret)
		codectl_unwind_deferred_cancel(&consumer_work);
	return ret;
}

static void __exit consumer_exit(void)
{
	misc_deregister(&consumer_misc);
	/* No callback runs after this: the consumer's memory may go. */
	codectl_unwind_deferred_cancel(&consumer_work);
}

module_init(consumer_init);
module_exit(consumer_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("codectl test: a consumer of the exported deferred-unwind API");
