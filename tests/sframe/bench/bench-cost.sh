#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-decoder's second part: what one lookup costs each side of
# bench-decoder, counted instead of timed, so that the ratios it times
# can be explained.  Each side runs one pass over the same PCS shuffled
# pcs under valgrind's cachegrind, and so does a run of no side; a
# side's figure per lookup is the difference of the two runs' totals
# over PCS: instructions, data reads, simulated data-cache misses
# (L1: 32 KiB 8-way; "L2": cachegrind's last level set to 512 KiB
# 8-way, the L2 of the EPYC hosts the figures come from) and simulated
# conditional-branch mispredictions.  A model, not the hardware's
# counters (perf stat has none on this VM host), but the same for every
# side.
#
#   bench-cost.sh BENCH-DECODER ELF [PCS]
set -euo pipefail

bin=$1 elf=$2 pcs=${3:-262144}
if ! command -v valgrind >/dev/null; then
	echo "bench-cost: no valgrind (apt install valgrind): no counts"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sides="none indexed noindex flat plain-bsearch bucket-bsearch libsframe"
for s in $sides; do
	valgrind -q --tool=cachegrind --cache-sim=yes --branch-sim=yes \
		--I1=32768,8,64 --D1=32768,8,64 --LL=524288,8,64 \
		--cachegrind-out-file="$tmp/$s" "$bin" "$elf" 0 "$pcs" "$s" \
		>"$tmp/$s.out" 2>&1 || { cat "$tmp/$s.out" >&2; exit 1; }
done
echo "cost per lookup (cachegrind, one pass of $pcs pcs; L1 32 KiB, L2 512 KiB):"
awk -v pcs="$pcs" -v sides="$sides" -v dir="$tmp" '
function load(side,   f, line, ev, v, i, n) {
	f = dir "/" side
	while ((getline line < f) > 0) {
		if (line ~ /^events: /) { sub(/^events: /, "", line); n = split(line, ev, " ") }
		if (line ~ /^summary: /) {
			sub(/^summary: /, "", line); split(line, v, " ")
			for (i = 1; i <= n; i++) tot[side, ev[i]] = v[i]
		}
	}
	close(f)
}
function per(side, e) { return (tot[side, e] - tot["none", e]) / pcs }
BEGIN {
	ns = split(sides, s, " ")
	for (i = 1; i <= ns; i++) load(s[i])
	printf "%-16s %13s %11s %10s %10s %13s %14s\n", "side", "instructions",
		"data reads", "L1 misses", "L2 misses", "branches", "mispredicted"
	for (i = 2; i <= ns; i++)
		printf "%-16s %13.1f %11.1f %10.2f %10.2f %13.1f %14.2f\n", s[i],
			per(s[i], "Ir"), per(s[i], "Dr"), per(s[i], "D1mr"),
			per(s[i], "DLmr"), per(s[i], "Bc"), per(s[i], "Bcm")
	printf "instructions, libsframe / flat: %.1f\n", per("libsframe", "Ir") / per("flat", "Ir")
	printf "instructions, libsframe / indexed: %.1f\n", per("libsframe", "Ir") / per("indexed", "Ir")
}'
