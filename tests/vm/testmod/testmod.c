// SPDX-License-Identifier: GPL-2.0
/*
 * codectl_test.ko: codectl's test facilities, out of the product.  Built
 * and loaded by the tests only (scripts/build-module.sh --consumer, the
 * guest suite, tracers.sh), never packaged.  It uses what codectl.ko
 * exports in the symbol namespace CODECTL_TEST and its deferred-unwind
 * API, and offers /dev/codectl_test (codectl_test.h): CODECTL_IOC_UNWIND
 * with CODECTL_UNWIND_NOFAULT (the tracer hooks' walk), deferred trace
 * requests read back with read()/poll(), and the deferred-unwind
 * self-test.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "internal.h"
#include "compat.h"
#include "codectl_test.h"
#include "testmod.h"

atomic_long_t codectl_test_trace_records;

/* debugfs codectl_test/stats: "trace_records N". */
static int codectl_test_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "trace_records %ld\n",
		   atomic_long_read(&codectl_test_trace_records));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(codectl_test_stats);

static struct dentry *codectl_test_debugfs;

static long codectl_test_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	switch (cmd) {
	case CODECTL_TEST_IOC_UNWIND_REQUEST:
		return codectl_harness_request(file, arg);
	case CODECTL_TEST_IOC_SELFTEST_START:
	case CODECTL_TEST_IOC_SELFTEST_STOP:
		return codectl_selftest_ioctl(file, cmd, arg);
	}
	/* CODECTL_IOC_UNWIND's sizes (codectl(4)), NOFAULT allowed. */
	if (_IOC_DIR(cmd) == _IOC_DIR(CODECTL_TEST_IOC_UNWIND) &&
	    _IOC_TYPE(cmd) == CODECTL_TEST_IOC_MAGIC &&
	    _IOC_NR(cmd) == _IOC_NR(CODECTL_TEST_IOC_UNWIND) &&
	    _IOC_SIZE(cmd) >= CODECTL_UNWIND_ARGS_SIZE_VER0 &&
	    _IOC_SIZE(cmd) <= CODECTL_INFO_SIZE_MAX)
		return codectl_test_unwind((void __user *)arg, _IOC_SIZE(cmd));
	return -ENOTTY;
}

static const struct file_operations codectl_test_fops = {
	.owner		= THIS_MODULE,
	.open		= codectl_harness_open,
	.release	= codectl_harness_release,
	.read		= codectl_harness_read,
	.poll		= codectl_harness_poll,
	.unlocked_ioctl	= codectl_test_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* The tests run unprivileged too; the self-test checks CAP_SYS_ADMIN. */
static struct miscdevice codectl_test_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "codectl_test",
	.fops	= &codectl_test_fops,
	.mode	= 0666,
};

static int __init codectl_test_init(void)
{
	int ret;

	ret = codectl_test_canary();
	if (ret)
		return ret;
	ret = codectl_harness_init();
	if (ret)
		return ret;
	ret = misc_register(&codectl_test_misc);
	if (ret) {
		codectl_harness_exit();
		return ret;
	}
	codectl_test_debugfs = debugfs_create_dir("codectl_test", NULL);
	debugfs_create_file("stats", 0444, codectl_test_debugfs, NULL,
			    &codectl_test_stats_fops);
	return 0;
}

static void __exit codectl_test_exit(void)
{
	debugfs_remove_recursive(codectl_test_debugfs);
	misc_deregister(&codectl_test_misc);
	/* No new requests; the self-test disarmed, the consumer cancelled. */
	codectl_selftest_exit();
	codectl_harness_exit();
	WARN_ON(atomic_long_read(&codectl_test_trace_records));
}

module_init(codectl_test_init);
module_exit(codectl_test_exit);

CODECTL_IMPORT_TEST();
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("codectl's test facilities (tests only, not packaged)");
