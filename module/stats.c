// SPDX-License-Identifier: GPL-2.0
/*
 * The module's global live-object counters (struct codectl_stats), the
 * helper that prints a table of counters as debugfs "name value" lines,
 * and debugfs codectl/stats.  Every subsystem counts here; nothing here
 * calls up into them.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>

#include "internal.h"

struct codectl_stats codectl_stats;

/**
 * codectl_show_counters() - print counters, one "name value" line each
 * @m:		the seq_file
 * @rows:	the counters
 * @n:		how many
 */
void codectl_show_counters(struct seq_file *m,
			   const struct codectl_counter *rows, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		seq_printf(m, "%s %ld\n", rows[i].name,
			   atomic_long_read(rows[i].val));
}

static int codectl_stats_show(struct seq_file *m, void *v)
{
	static const struct codectl_counter rows[] = {
		{ "mms", &codectl_stats.mms },
		{ "registrations", &codectl_stats.registrations },
		{ "bytes", &codectl_stats.bytes },
		{ "sets", &codectl_stats.sets },
		{ "works", &codectl_stats.works },
		{ "fork_failures", &codectl_stats.fork_failures },
		{ "unmap_drops", &codectl_stats.unmap_drops },
		{ "unmap_nomem", &codectl_stats.unmap_nomem },
		{ "unwind_tasks", &codectl_stats.unwind_tasks },
		{ "unwind_works", &codectl_stats.unwind_works },
		{ "negatives", &codectl_stats.negatives },
		{ "discover_works", &codectl_stats.discover_works },
		{ "shared_tables", &codectl_stats.shared_tables },
		{ "shared_bytes", &codectl_stats.shared_bytes },
	};

	codectl_show_counters(m, rows, ARRAY_SIZE(rows));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(codectl_stats);

/**
 * codectl_stats_debugfs() - create debugfs codectl/stats
 * @dir:	the module's debugfs directory
 */
void codectl_stats_debugfs(struct dentry *dir)
{
	debugfs_create_file("stats", 0444, dir, NULL, &codectl_stats_fops);
}
