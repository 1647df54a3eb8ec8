#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-fork: what codectl costs the processes perf record -a -g only
# watches, in one guest run per kernel: a fork+exec shell loop with no
# module, with codectl loaded, and with libc imported (see
# bench-fork-guest.sh for the rows and the goal).  A benchmark: it prints
# figures and asserts nothing about them (it fails only if the build or
# the boot fails).
#
#   SERIES="6.12" tests/vm/unwind/bench-fork.sh [N]
#
# Under QEMU's -icount shift=0 (bench-guest.sh) times are guest
# instructions.  Full output: .cache/logs/bench-fork-SERIES.log (under
# .cache/logs/WORKTREE/ when CODECTL_CACHE is another tree's cache),
# which begins with the command and the commit that ran;
# scripts/bench-fork-figures.sh makes docs/performance.md's table from
# these logs.
set -euo pipefail

bench_default_series=6.12
# shellcheck source=bench-guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench-guest.sh"
n=${1:-100}
rc=0
for s in "${series[@]}"; do
	ko=$("$top/scripts/build-module.sh" "$s")
	log=$logs/bench-fork-$s.log
	echo "=== bench-fork on $s"
	{
		echo "# command: make bench-fork SERIES=\"$s\" (tests/vm/unwind/bench-fork.sh $n)"
		echo "# commit: $commit"
		echo "# date: $(date -u +%Y-%m-%d)"
		echo "# kernel: $("$top/scripts/kernels.sh" kver "$s")"
	} >"$log"
	if ! "$top/scripts/vm-run.sh" -k "$s" -t 1800 -m 2048 \
		-a "$ko:/codectl.ko" -a /usr/bin/perf \
		-a /usr/lib/x86_64-linux-gnu/traceevent \
		-a "$top/tools/codectl:/usr/bin/codectl" \
		-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
		-a /usr/bin/true:/tests/true \
		-a "$here/build/bench-fork:/tests/bench-fork" \
		-a "$here/bench-fork-guest.sh:/tests/bench-fork-guest.sh" -- \
		sh /tests/bench-fork-guest.sh /codectl.ko /tests/bench-fork "$n" /tests/true \
		>>"$log" 2>&1; then
		echo "bench-fork: $s failed, see $log" >&2
		rc=1
	fi
	grep -aE '^(# (command|commit|workload)|row |unprofiled |perf -a -g |codectl|goal |excess |part )' "$log" || true
done
exit $rc
