#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bench-unwind table of one kernel in docs/performance.md, made from
# the log of make bench-unwind:
#
#   scripts/bench-unwind-figures.sh [SERIES [LOGDIR [DOC]]]
#
# Reads LOGDIR/bench-unwind-SERIES.log (SERIES: 6.12-arm64 by default;
# LOGDIR: where bench-unwind.sh writes it, .cache/logs, or
# .cache/logs/WORKTREE when CODECTL_CACHE is another tree's cache): its
# command, commit, date, guest clock and kernel, and each run's rows
# (v1, v2, v3, v3-nofault, v3-user: per-frame cost of the SFrame and FP
# walks at each depth).  One table naming them, then each run's ratio at
# the deepest stack against the goal (SFrame within 1.10x of FP; not for
# v3-user, SFrame decoded in user memory), replace what stands between
# <!-- bench-unwind-SERIES:begin --> and <!-- bench-unwind-SERIES:end -->
# in DOC (default docs/performance.md; "-" prints them).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
series=${1:-6.12-arm64}
logs=$(log_dir "${2:-}")
doc=${3:-$top/docs/performance.md}
f=$logs/bench-unwind-$series.log
[ -f "$f" ] || die "no $f (run make bench-unwind SERIES=\"$series\")"
grep -q '^# command: ' "$f" || die "$f names no command: run make bench-unwind again"
grep -aq '^sframe/fp: ' "$f" || die "$f has no ratio: the run did not finish"
! grep -aqE '^v[0-9][^ ]* +[0-9]+ +failed|^# depth [0-9]+: ' "$f" ||
	die "$f: a run failed (see it)"

text=$(awk '
	/^# command: / { cmd = $0; sub(/^# command: /, "", cmd) }
	/^# commit: / { commit = $3 }
	/^# date: / { date = $3 }
	/^# guest clock: / { clock = $0; sub(/^# guest clock: /, "", clock) }
	/^vm-run: / { guest = $0; sub(/^vm-run: /, "", guest) }
	/^# bench-unwind / { kernel = $0; sub(/.*kernel /, "", kernel); sub(/,.*/, "", kernel)
		if (match($0, /[0-9]+ rounds of ~[0-9]+ ms, median/))
			rounds = substr($0, RSTART, RLENGTH) }
	# "LABEL DEPTH SF/FP ITERS SFUW FPUW SFFR FPFR sframe/fp R"
	$1 ~ /^v[0-9]/ && $2 ~ /^[0-9]+$/ && NF >= 10 {
		rows[++n] = sprintf("| %s | %s | %s | %s | %s | %s |", $1, $2, $3, $7, $8, $10)
	}
	/^# marginal cost/ { m = $0; sub(/.*\): /, "", m) }
	/^sframe\/fp: / {
		l = $3; sub(/^\(/, "", l); sub(/,$/, "", l)
		ratio[l] = $2; order[++k] = l; marg[l] = m; m = ""
	}
	END {
		printf "From `%s` at commit %s, %s: kernel %s, guest clock `%s` ", cmd, commit, date, kernel, clock
		printf "(with `-icount shift=0` the figures are instructions, one per guest ns), %s; vm-run: %s.\n\n", rounds, guest
		print "| run | depth | frames SFrame/FP | SFrame per frame | FP per frame | `sframe/fp` |"
		print "|---|---:|---:|---:|---:|---:|"
		for (i = 1; i <= n; i++)
			print rows[i]
		print ""
		for (i = 1; i <= k; i++) {
			l = order[i]
			if (l == "v3-user")
				printf "- %s (SFrame decoded in user memory; no goal): sframe/fp %s; marginal per frame %s\n", l, ratio[l], marg[l]
			else if (ratio[l] <= 1.10)
				printf "- %s, goal sframe/fp <= 1.10 at the deepest stack: met (%s); marginal per frame %s\n", l, ratio[l], marg[l]
			else
				printf "- %s, goal sframe/fp <= 1.10 at the deepest stack: missed by %.2f (%s); marginal per frame %s\n", l, ratio[l] - 1.10, ratio[l], marg[l]
		}
	}' "$f")
doc_replace "$doc" "bench-unwind-$series" "$text" || exit 0
[ "$doc" = - ] || echo "bench-unwind-figures.sh: $doc: the table of $f"
