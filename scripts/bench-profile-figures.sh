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
# "row", "goal" and "defer" lines, and per profiled row the
# profiling instructions per frame: (its run's instructions - its
# build's unprofiled run's) / samples / frames per sample, the whole
# cost of a sample (walk, record, perf's writing) over its depth, so
# that rows whose samples fell at different depths compare; and of it,
# for codectl's rows, the walk's share: the hook's instructions per
# sample over the frames per sample (the rest is the sampling interrupt,
# the kprobe's redirection, perf's record and its writing out).  One table per kernel, naming its
# command, commit and date, then its goal and defer lines, replace what
# stands between <!-- bench-profile:begin --> and <!-- bench-profile:end -->
# in DOC (default docs/performance.md; "-" prints them).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
logs=$(log_dir "${1:-}")
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
		for (i = 1; i <= NF; i++) {
			if ($i == "instructions" && $(i + 1) == "per") ipc[wl] = $(i - 1)
			if ($i == "unprofiled" && $(i - 1) == "no-fp") base[wl, "no"] = $(i + 1)
			if ($i == "unprofiled" && $(i - 1) == "fp") base[wl, "fp"] = $(i + 1)
		}
	}
	/^row   / && $2 != "workld" {
		rows[++n] = sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
			$2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		tag[n] = $2 "-" $3 "-" $5 "-" $6 "-" $4
		b[n] = base[$2, $3 == "fp-build" ? "fp" : "no"]
		fr[n] = $9
		hk[n] = $12
	}
	# "# TAG: COMPLETE of TOTAL samples reach main, SIZE bytes, NS ns"
	/^# [^ ]+: [0-9]+ of [0-9]+ samples reach main/ {
		t = $2; sub(/:$/, "", t); samples[t] = $5; ns[t] = $(NF - 1)
	}
	/^goal  / { l = $0; sub(/^goal  /, "", l); goals[++ng] = l }
	/^defer / { l = $0; sub(/^defer /, "", l); defers[++nd] = l }
	END {
		printf "**%s** (`%s`), from `%s` at commit %s, %s", k, kver, cmd, commit, date
		printf "; instructions per call: deep %s, calls %s.\n\n", ipc["deep"], ipc["calls"]
		print "| workload | row | perf | call graph | Hz | stacks reaching `main` | bytes/sample | frames/sample | lost | slowdown against no-fp unprofiled | hook instructions/sample | profiling instructions/frame | of which the walk |"
		print "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= n; i++) {
			t = tag[i]; c = "-"; h = "-"
			if ((t in samples) && samples[t] > 0 && fr[i] > 0)
				c = sprintf("%.0f", (ns[t] - b[i]) / samples[t] / fr[i])
			if (hk[i] ~ /^[0-9]+$/ && fr[i] > 0)
				h = sprintf("%.0f", hk[i] / fr[i])
			print rows[i] " " c " | " h " |"
		}
		print ""
		for (i = 1; i <= ng; i++) print "- goal, " goals[i]
		for (i = 1; i <= nd; i++) print "- what deferring saves, " defers[i]
		print ""
	}' "$f"
done)
text=${text%$'\n'}
doc_replace "$doc" bench-profile "$text" || exit 0
[ "$doc" = - ] || echo "bench-profile-figures.sh: $doc: the tables of ${files[*]}"
