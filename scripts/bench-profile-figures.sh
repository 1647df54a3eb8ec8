#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tables "What a profile costs" of docs/performance.md, made from the
# logs of make bench-profile:
#
#   scripts/bench-profile-figures.sh [LOGDIR [DOC]]
#
# Reads LOGDIR/bench-profile-SERIES.log for each kernel that has one
# (default: the logs directory tests/vm/unwind/bench-profile.sh writes,
# .cache/logs, or .cache/logs/WORKTREE when CODECTL_CACHE is another
# tree's cache): the command and commit it begins with, the guest's
# "row", "goal" and "defer" lines.  One table per kernel, naming its
# command, commit and date, then its goal and defer lines, replace what
# stands between <!-- bench-profile:begin --> and <!-- bench-profile:end -->
# in DOC (default docs/performance.md; "-" prints them).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cache=${CODECTL_CACHE:-$top/.cache}
logs=${1:-$cache/logs}
[ -n "${1:-}" ] || [ "$cache" -ef "$top/.cache" ] || logs=$cache/logs/${top##*/}
doc=${2:-$top/docs/performance.md}
files=()
for s in 6.1 6.12 7.2; do
	[ -f "$logs/bench-profile-$s.log" ] && files+=("$logs/bench-profile-$s.log")
done
[ ${#files[@]} -gt 0 ] || die "no $logs/bench-profile-*.log (run make bench-profile)"

text=$(for f in "${files[@]}"; do
	grep -q '^# command: ' "$f" ||
		die "$f names no command: a log older than this script, run make bench-profile again"
	grep -aq '^goal  ' "$f" || die "$f has no goal line: the run did not finish"
	awk '
	FNR == 1 { k = FILENAME; sub(/.*bench-profile-/, "", k); sub(/\.log$/, "", k) }
	{ sub(/\r$/, "") }
	/^# command: / { cmd = $0; sub(/^# command: /, "", cmd); sub(/ \(.*$/, "", cmd) }
	/^# commit: / { commit = $3 }
	/^# date: / { date = $3 }
	/^# kernel / { kver = $3; sub(/,$/, "", kver) }
	/^# workload / { wl = $3; sub(/:$/, "", wl)
		for (i = 1; i <= NF; i++) if ($i == "instructions" && $(i + 1) == "per") ipc[wl] = $(i - 1)
	}
	/^row   / && $2 != "workld" {
		rows[++n] = sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
			$2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
	}
	/^goal  / { l = $0; sub(/^goal  /, "", l); goals[++ng] = l }
	/^defer / { l = $0; sub(/^defer /, "", l); defers[++nd] = l }
	END {
		printf "**%s** (`%s`), from `%s` at commit %s, %s", k, kver, cmd, commit, date
		printf "; instructions per call: deep %s, calls %s.\n\n", ipc["deep"], ipc["calls"]
		print "| workload | row | perf | call graph | Hz | stacks reaching `main` | bytes/sample | frames/sample | lost | slowdown against no-fp unprofiled | hook instructions/sample |"
		print "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= n; i++) print rows[i]
		print ""
		for (i = 1; i <= ng; i++) print "- goal, " goals[i]
		for (i = 1; i <= nd; i++) print "- what deferring saves, " defers[i]
		print ""
	}' "$f"
done)
text=${text%$'\n'}
doc_replace "$doc" bench-profile "$text" || exit 0
[ "$doc" = - ] || echo "bench-profile-figures.sh: $doc: the tables of ${files[*]}"
