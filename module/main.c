// SPDX-License-Identifier: GPL-2.0
/*
 * codectl: the module's entry points, the /dev/codectl misc device and its
 * debugfs directory.  Each module parameter is defined beside the code it
 * tunes (registry.c, register.c, deferred.c, discover.c, ...).
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "internal.h"
#include "compat.h"

static int codectl_release(struct inode *inode, struct file *file)
{
	codectl_demand_release(file);
	return 0;
}

static const struct file_operations codectl_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= codectl_ioctl,
	.read		= codectl_demand_read,
	.poll		= codectl_demand_poll,
	.release	= codectl_release,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* Registering affects only the caller's own address space: 0666. */
static struct miscdevice codectl_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "codectl",
	.fops	= &codectl_fops,
	.mode	= 0666,
};

DEFINE_SHOW_ATTRIBUTE(codectl_unwind);
DEFINE_SHOW_ATTRIBUTE(codectl_hooks);
DEFINE_SHOW_ATTRIBUTE(codectl_discover);
DEFINE_SHOW_ATTRIBUTE(codectl_imports);
DEFINE_SHOW_ATTRIBUTE(codectl_demand);
DEFINE_SHOW_ATTRIBUTE(codectl_mapped);

static struct dentry *codectl_debugfs;

static int __init codectl_init(void)
{
	int ret;

	ret = codectl_discover_init();
	if (ret)
		return ret;
	ret = codectl_deferred_init();
	if (ret)
		goto err_discover;
	ret = codectl_fork_init();
	if (ret) {
		pr_err("codectl: cannot hook fork (%d)\n", ret);
		goto err_deferred;
	}
	ret = misc_register(&codectl_misc);
	if (ret)
		goto err_fork;
	codectl_debugfs = debugfs_create_dir("codectl", NULL);
	codectl_stats_debugfs(codectl_debugfs);
	debugfs_create_file("unwind", 0444, codectl_debugfs, NULL,
			    &codectl_unwind_fops);
	debugfs_create_file("discover", 0444, codectl_debugfs, NULL,
			    &codectl_discover_fops);
	debugfs_create_file("imports", 0444, codectl_debugfs, NULL,
			    &codectl_imports_fops);
	debugfs_create_file("hooks", 0444, codectl_debugfs, NULL,
			    &codectl_hooks_fops);
	debugfs_create_file("demand", 0444, codectl_debugfs, NULL,
			    &codectl_demand_fops);
	debugfs_create_file("mapped", 0444, codectl_debugfs, NULL,
			    &codectl_mapped_fops);
	codectl_mapped_init();
	/* Last: from here on perf, BPF and ftrace see our stacks. */
	codectl_hooks_init();
	pr_info("codectl: /dev/codectl ready (ABI %d)\n", CODECTL_ABI_VERSION);
	return 0;

err_fork:
	codectl_fork_exit();
err_deferred:
	codectl_deferred_exit();
err_discover:
	codectl_discover_exit();
	return ret;
}

static void __exit codectl_exit(void)
{
	/* First: no tracer may walk with the registrations torn down below. */
	codectl_hooks_exit();
	codectl_mapped_exit();
	debugfs_remove_recursive(codectl_debugfs);
	misc_deregister(&codectl_misc);
	/* No new requests; wait for the deferred unwinds still queued. */
	codectl_deferred_exit();
	/* No unwinder left to ask: wait for the discoveries queued. */
	codectl_discover_exit();
	codectl_import_exit();
	/* No new snapshots, and the queued ones have been adopted or dropped. */
	codectl_fork_exit();
	codectl_registry_exit();
	/* Wait for the subscriptions put above and by ->release to be freed, */
	mmu_notifier_synchronize();
	/* then for the arrays they dropped. */
	rcu_barrier();
	WARN_ON(atomic_long_read(&codectl_stats.mms) ||
		atomic_long_read(&codectl_stats.mm_objects) ||
		atomic_long_read(&codectl_stats.registrations) ||
		atomic_long_read(&codectl_stats.bytes) ||
		atomic_long_read(&codectl_stats.sets) ||
		atomic_long_read(&codectl_stats.unwind_tasks) ||
		atomic_long_read(&codectl_stats.unwind_works) ||
		atomic_long_read(&codectl_stats.negatives) ||
		atomic_long_read(&codectl_stats.discover_works) ||
		atomic_long_read(&codectl_stats.shared_tables) ||
		atomic_long_read(&codectl_stats.shared_bytes));
}

module_init(codectl_init);
module_exit(codectl_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The codectl authors");
MODULE_DESCRIPTION("Register code and its SFrame/JIT unwind tables: /dev/codectl");
MODULE_VERSION(CODECTL_MODULE_VERSION);
