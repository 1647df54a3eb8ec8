#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 tracer figures of docs/testing.md, made from the FIGURE lines
# tests/vm/arm64-perf.sh (with arm64-ftrace.sh and arm64-bpftrace.sh)
# printed in each arm64 kernel's tracer stage:
#
#   scripts/arm64-figures.sh [LOGDIR [DOC]]
#
# LOGDIR (default scripts/check.sh's log directory) holds
# tracers-SERIES-arm64.log and the run's summary.log (its "date ...
# commit ..." line).  One table, a column per kernel, replaces what
# stands between <!-- arm64-tracers:begin --> and <!-- arm64-tracers:end -->
# in DOC (default docs/testing.md; "-" prints it).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
logs=$(log_dir "${1:-}")
doc=${2:-$top/docs/testing.md}
shopt -s nullglob
files=("$logs"/tracers-*-arm64.log)
[ ${#files[@]} -gt 0 ] || die "no tracers-*-arm64.log in $logs"
run=$(grep -a -h '^date .* commit ' "$logs/summary.log" 2>/dev/null | tail -n 1 |
	awk '{ printf "%s, commit %s", $2, $4 }')

text=$(awk -v run="${run:-date unknown}" '
	FNR == 1 {
		k = FILENAME
		sub(/.*tracers-/, "", k)
		sub(/\.log$/, "", k)
		ks[++nk] = k
	}
	/^FIGURE arm64 / {
		l = $0
		sub(/^FIGURE arm64 /, "", l)
		i = index(l, ": ")
		what = substr(l, 1, i - 1)
		if (!(what in seen)) {
			seen[what] = 1
			ws[++nw] = what
		}
		v[what, k] = substr(l, i + 2)
	}
	/^[0-9]+ passed, [0-9]+ failed$/ { res[k] = $0 }
	END {
		printf "From `scripts/check.sh`'"'"'s tracer stages of the arm64 kernels (%s):\n\n", run
		h = "| |"
		s = "|---|"
		for (j = 1; j <= nk; j++) {
			h = h " " ks[j] " |"
			s = s "---|"
		}
		print h
		print s
		for (i = 1; i <= nw; i++) {
			r = "| " ws[i] " |"
			for (j = 1; j <= nk; j++)
				r = r " " ((ws[i], ks[j]) in v ? v[ws[i], ks[j]] : "-") " |"
			print r
		}
		r = "| the stage |"
		for (j = 1; j <= nk; j++)
			r = r " " (ks[j] in res ? res[ks[j]] : "did not end") " |"
		print r
	}' "${files[@]}")
doc_replace "$doc" arm64-tracers "$text" || exit 0
[ "$doc" = - ] || say "$doc: the figures of ${files[*]}"
