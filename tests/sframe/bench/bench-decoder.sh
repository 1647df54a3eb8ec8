#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-decoder (tests/sframe/bench/Makefile runs it): the timed
# run of bench-decoder, then bench-cost.sh's counts, into a log that
# begins with the command and the commit that ran:
# .cache/logs/bench-decoder.log (under .cache/logs/WORKTREE/ when
# CODECTL_CACHE is another tree's cache), from which
# scripts/bench-decoder-figures.sh makes docs/performance.md's table.
# A benchmark: it fails only if our lookups disagree.
#
#   bench-decoder.sh BENCH-DECODER ELF SECONDS COST_PCS
set -euo pipefail

bin=$1 elf=$2 secs=$3 pcs=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
logs=${CODECTL_CACHE:-$top/.cache}/logs
[ -z "${CODECTL_CACHE:-}" ] || [ "$CODECTL_CACHE" -ef "$top/.cache" ] ||
	logs=$logs/${top##*/}
mkdir -p "$logs"
log=$logs/bench-decoder.log
commit=$(git -C "$top" rev-parse --short HEAD)
git -C "$top" diff --quiet HEAD -- . 2>/dev/null || commit="$commit+changes"
{
	echo "# command: make bench-decoder SECONDS=$secs COST_PCS=$pcs"
	echo "# commit: $commit"
	echo "# date: $(date -u +%Y-%m-%d)"
	echo "# host: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sed -n 1p), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	"$bin" "$elf" "$secs"
	"$here/bench-cost.sh" "$bin" "$elf" "$pcs"
} 2>&1 | tee "$log"
