#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-unwind: boot each stock kernel under QEMU (scripts/vm-run.sh),
# load codectl.ko and run bench-unwind of every SFrame version (v1, v2, v3:
# binaries built -fno-omit-frame-pointer AND --gsframe, so that the SFrame
# walk and the FP walk give the same frames), then v3 again with
# sframe_flat_max=0 ("v3-user": SFrame decoded in user memory at each
# unwind, the path of sections too large for a flat table), and v3 with
# CODECTL_UNWIND_NOFAULT ("v3-nofault": both walks as the tracer hooks
# walk, reading without faulting).  A benchmark: it prints
# figures measured side by side in one run and asserts nothing about time
# (it fails only if the build, the boot, or the frame comparison fails).
#
#   SERIES="6.1 6.12" tests/vm/unwind/bench-unwind.sh [bench-unwind ARGS...]
#
# An arm64 series (e.g. 6.12-arm64) runs the same in an arm64 guest, with
# bench-unwind cross-built static for aarch64 (tests/vm/unwind/Makefile's
# bench-arm64: every SFrame version its aarch64 assemblers emit) and the
# modules cross-built for that kernel (scripts/build-module.sh).
#
# The guest runs with QEMU's -icount shift=0 (unless CODECTL_VM_QEMU_ARGS
# says otherwise): its clock counts executed instructions, one per "ns",
# so the figures are instruction counts, the same from run to run whatever
# else the host is doing (single-threaded TCG), on one CPU (6.1 does not
# bring up a second one under -icount).  Full output:
# .cache/logs/bench-unwind-SERIES.log (under .cache/logs/WORKTREE/ when
# CODECTL_CACHE is another tree's cache), which begins with the command,
# the commit and the guest clock; scripts/bench-unwind-figures.sh makes
# docs/performance.md's arm64 table from it.
set -euo pipefail

bench_default_series="6.1 6.12"
# shellcheck source=bench-guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench-guest.sh"
args=$*
rc=0
for s in "${series[@]}"; do
	# The programs: x86-64's from build/ (v1, v2, v3), an arm64 series'
	# cross-built static into build/arm64/ (the Makefile's ARM64_VARIANTS:
	# the SFrame versions its aarch64 assemblers emit).
	case $s in
	*-arm64)
		make -s -C "$here" bench-arm64 >/dev/null
		dir=$here/build/arm64
		variants=$(make -s --no-print-directory -C "$here" arm64-variants)
		;;
	*)
		dir=$here/build
		variants="v1 v2 v3"
		;;
	esac
	# The NOFAULT walk is the test module's (codectl_test.ko).
	consumer=$("$top/scripts/build-module.sh" --consumer "$s")
	ko=$(dirname "$consumer")/../module/codectl.ko
	testmod=$(dirname "$consumer")/../testmod/codectl_test.ko
	log=$logs/bench-unwind-$s.log
	echo "=== bench-unwind on $s"
	{
		echo "# command: make bench-unwind SERIES=\"$s\"${args:+ (bench-unwind $args)}"
		echo "# commit: $commit"
		echo "# date: $(date -u +%Y-%m-%d)"
		echo "# guest clock: ${CODECTL_VM_QEMU_ARGS:-real time}"
	} >"$log"
	if ! "$top/scripts/vm-run.sh" -k "$s" -t 1200 -a "$ko:/codectl.ko" \
		-a "$testmod:/codectl_test.ko" \
		-a "$dir:/tests/unwind" -- \
		"insmod /codectl.ko && insmod /codectl_test.ko && r=0 && for v in $variants; do /tests/unwind/\$v/bench-unwind $args || r=1; done && { UW_EXTRA_FLAGS=8 /tests/unwind/v3/bench-unwind -l v3-nofault $args || r=1; } && echo 0 >/sys/module/codectl/parameters/sframe_flat_max && { /tests/unwind/v3/bench-unwind -l v3-user $args || r=1; }; rmmod codectl_test; rmmod codectl; exit \$r" \
		>>"$log" 2>&1; then
		echo "bench-unwind: $s failed, see $log" >&2
		rc=1
	fi
	# The program's lines only (not the kernel's, not vm-run's).
	grep -aE '^(# (bench-unwind|commit)|variant|v[0-9](-user|-nofault)? |# marginal|sframe/fp:|# depth)' "$log" || true
done
exit $rc
