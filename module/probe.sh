#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Feature probes for the kernel codectl is built against.  Kbuild runs
#   probe.sh SRCTREE OBJTREE
# and adds what it prints (-DHAVE_* flags) to the module's ccflags; compat.h
# turns them into shims.  Probes test the headers themselves, never version
# numbers: distributions backport features (see docs/compatibility.md).
#
# Each probe is one line: NAME FILE REGEX.  FILE is looked up under
# include/ of the source tree, then of the build tree (Debian splits the
# two); the flag is printed when the extended REGEX matches.

probe() {
	name=$1 file=$2 regex=$3
	for dir in "$SRCTREE/include" "$OBJTREE/include"; do
		if [ -f "$dir/$file" ] && grep -Eq "$regex" "$dir/$file"; then
			echo "-D$name"
			return
		fi
	done
}

SRCTREE=$1
OBJTREE=${2:-$1}

# task_work_add(current, w, TWA_NMI_CURRENT) from NMI (6.12+).
probe HAVE_TWA_NMI_CURRENT	linux/task_work.h	'TWA_NMI_CURRENT'
# hrtimer_setup() replaced hrtimer_init() (6.13+, 7.2 has only setup).
probe HAVE_HRTIMER_SETUP	linux/hrtimer.h		'void hrtimer_setup\('
# <linux/unaligned.h> (6.12+); before, <asm/unaligned.h>.
probe HAVE_LINUX_UNALIGNED_H	linux/unaligned.h	'get_unaligned'
# The deferred unwinder's user-stack walker, unwind_user() (6.17+, 7.2).
probe HAVE_UNWIND_USER		linux/unwind_user.h	'int unwind_user\(struct unwind_stacktrace'
# inode_get_ctime() (6.6+); before, inode->i_ctime.
probe HAVE_INODE_GET_CTIME	linux/fs.h		'timespec64 inode_get_ctime\('
# inode_get_mtime() (6.7+); before, inode->i_mtime.
probe HAVE_INODE_GET_MTIME	linux/fs.h		'timespec64 inode_get_mtime\('
# Symbol namespaces are string literals (6.13+): EXPORT_SYMBOL_NS_GPL(sym,
# "NS"); before, bare words that the macros stringify.
probe HAVE_NS_STRING		linux/export.h		'define EXPORT_SYMBOL_NS_GPL\(sym, ns\)[[:space:]]+__EXPORT_SYMBOL\(sym, "GPL", ns\)'
# file_open_root() takes the root as a struct path (5.12+); before, its
# dentry and vfsmount apart.
probe HAVE_FILE_OPEN_ROOT_PATH	linux/fs.h		'file_open_root\(const struct path \*'
# ptep_get_lockless() (5.12+, a function: no macro to test for).
probe HAVE_PTEP_GET_LOCKLESS	linux/pgtable.h		'pte_t ptep_get_lockless\('
# task_struct.perf_event_ctxp is an array of perf_nr_task_contexts (up
# to 6.1); one pointer from 6.2.
probe HAVE_PERF_EVENT_CTXP_ARRAY	linux/sched.h		'perf_event_ctxp\[perf_nr_task_contexts\]'
