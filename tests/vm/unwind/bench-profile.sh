#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-profile: what a profile costs, side by side in one guest run
# per kernel: the workload of bench-profile.c (no frame pointers, its own
# SFrame) unprofiled, and under perf record at 1000 Hz with frame
# pointers and codectl's hooks off ("perf-fp"), with the hooks on
# ("codectl"), and with --call-graph dwarf ("perf-dwarf"); see
# bench-profile-guest.sh for the rows and the goals.  A benchmark: it
# prints figures and asserts nothing about them (it fails only if the
# build or the boot fails).
#
#   SERIES="6.12" tests/vm/unwind/bench-profile.sh [ROUNDS]
#
# The guest runs with QEMU's -icount shift=0 (unless CODECTL_VM_QEMU_ARGS
# says otherwise), as bench-unwind: its clock counts executed
# instructions, so times and slowdowns are instruction counts, the same
# whatever else the host does.  Full output:
# .cache/logs/bench-profile-SERIES.log.
set -euo pipefail

bench_default_series=6.12
# shellcheck source=bench-guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench-guest.sh"
rounds=${1:-20000}
rc=0
for s in "${series[@]}"; do
	ko=$("$top/scripts/build-module.sh" "$s")
	log=$logs/bench-profile-$s.log
	echo "=== bench-profile on $s"
	if ! "$top/scripts/vm-run.sh" -k "$s" -t 1800 -m 2048 \
		-a "$ko:/codectl.ko" -a /usr/bin/perf \
		-a /usr/lib/x86_64-linux-gnu/traceevent \
		-a "$here/build/v3/bench-profile:/tests/bench-profile" \
		-a "$here/bench-profile-guest.sh:/tests/bench-profile-guest.sh" -- \
		sh /tests/bench-profile-guest.sh /codectl.ko /tests/bench-profile "$rounds" \
		>"$log" 2>&1; then
		echo "bench-profile: $s failed, see $log" >&2
		rc=1
	fi
	# The script's lines only (not the kernel's, not vm-run's).
	grep -aE '^(# workload|# (perf-fp|codectl|perf-dwarf): [0-9]|row |unprofiled |perf-fp |codectl |perf-dwarf |goal )' "$log" || true
done
exit $rc
