#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-profile: what a profile costs, side by side in one guest run
# per kernel, against the baseline users start from: the workloads of
# bench-profile.c built without frame pointers (with their own SFrame),
# unprofiled.  Rows: the frame-pointer build (-fno-omit-frame-pointer
# -mno-omit-leaf-frame-pointer, no SFrame) unprofiled; perf record at
# 1000 Hz of the build without frame pointers with --call-graph fp and
# codectl's hooks off ("perf-fp"), with the hooks on ("codectl"), with
# --call-graph dwarf ("perf-dwarf"); of the frame-pointer build with
# --call-graph fp ("fp-build"); and on kernels with deferred unwinding
# (CONFIG_UNWIND_USER: 7.2), codectl and fp-build again with sid's perf
# 7.2 (scripts/sid-perf.sh), --call-graph fp and fp,defer.  See
# bench-profile-guest.sh for the rows and the goals.  A benchmark: it
# prints figures and asserts nothing about them (it fails only if the
# build or the boot fails).
#
#   SERIES="6.12 7.2" tests/vm/unwind/bench-profile.sh [ROUNDS [HZ_HIGH]]
#
# The guest runs with QEMU's -icount shift=0 (unless CODECTL_VM_QEMU_ARGS
# says otherwise), as bench-unwind: its clock counts executed
# instructions, so times and slowdowns are instruction counts, the same
# whatever else the host does.  Full output:
# .cache/logs/bench-profile-SERIES.log (under .cache/logs/WORKTREE/ when
# CODECTL_CACHE is another tree's cache), which begins with the command
# and the commit that ran; scripts/bench-profile-figures.sh makes
# docs/performance.md's tables from these logs.
set -euo pipefail

bench_default_series=6.12
# shellcheck source=bench-guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench-guest.sh"
rounds=${1:-20000}
hz_high=${2:-5000}
rc=0
for s in "${series[@]}"; do
	ko=$("$top/scripts/build-module.sh" "$s")
	log=$logs/bench-profile-$s.log
	a=()
	# Kernels with deferred unwinding: their release's perf for fp,defer.
	if grep -q '^CONFIG_UNWIND_USER=y' \
		"$("$top/scripts/kernels.sh" kdir "$s")/include/config/auto.conf"; then
		"$top/scripts/sid-perf.sh" build "$s" >/dev/null || exit 1
		a+=(-A "$("$top/scripts/sid-perf.sh" path "$s"):/sid-perf")
	fi
	echo "=== bench-profile on $s"
	{
		echo "# command: make bench-profile SERIES=\"$s\" PROFILE_ROUNDS=$rounds (tests/vm/unwind/bench-profile.sh $rounds $hz_high)"
		echo "# commit: $commit"
		echo "# date: $(date -u +%Y-%m-%d)"
		echo "# guest clock: ${CODECTL_VM_QEMU_ARGS:-real time}"
	} >"$log"
	if ! "$top/scripts/vm-run.sh" -k "$s" -t 3600 -m 2048 \
		-a "$ko:/codectl.ko" -a /usr/bin/perf \
		-a /usr/lib/x86_64-linux-gnu/traceevent "${a[@]}" \
		-a "$here/build/v3/bench-profile:/tests/bench-profile" \
		-a "$here/build/fp/bench-profile:/tests/bench-profile-fp" \
		-a "$here/bench-profile-guest.sh:/tests/bench-profile-guest.sh" -- \
		sh /tests/bench-profile-guest.sh /codectl.ko /tests/bench-profile \
		/tests/bench-profile-fp "$rounds" "$hz_high" >>"$log" 2>&1; then
		echo "bench-profile: $s failed, see $log" >&2
		rc=1
	fi
	# The script's lines only (not the kernel's, not vm-run's).
	grep -aE '^(# (command|commit|kernel|workload)|row |goal  |defer )' "$log" || true
done
exit $rc
