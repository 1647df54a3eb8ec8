#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The "what watching costs" tables of docs/performance.md, made from the
# logs of make bench-fork:
#
#   scripts/bench-fork-figures.sh [LOGDIR [DOC]]
#
# Reads LOGDIR/bench-fork-SERIES.log for 6.1, 6.12 and 7.2 (those there
# are; default: where bench-fork.sh writes them, .cache/logs, or
# .cache/logs/WORKTREE when CODECTL_CACHE is another tree's cache): each
# one's command, commit and date, its rows (the loop's guest time, best
# of 3, and its ratio to perf -a -g), its goals, the import case's excess
# per process, and its breakdown ("part" lines: function_graph's calls
# and inclusive time per process, in a traced run).  Two tables, the
# goals and the logs' commands replace what stands between
# <!-- bench-fork:begin --> and <!-- bench-fork:end --> in DOC (default
# docs/performance.md; "-" prints them).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
logs=$(log_dir "${1:-}")
doc=${2:-$top/docs/performance.md}
files=()
for s in 6.1 6.12 7.2; do
	f=$logs/bench-fork-$s.log
	[ -f "$f" ] || continue
	grep -q '^# commit: ' "$f" || die "$f names no commit: run make bench-fork again"
	grep -q '^goal codectl+import ' "$f" || die "$f: the run did not finish"
	files+=("$f")
done
[ ${#files[@]} -gt 0 ] || die "no bench-fork log in $logs (run make bench-fork SERIES=\"6.1 6.12 7.2\")"

text=$(awk '
	FNR == 1 { k = FILENAME; sub(/.*bench-fork-/, "", k); sub(/\.log$/, "", k); ks[++nk] = k }
	/^# command: / { c = $0; sub(/^# command: /, "", c); sub(/ \(.*/, "", c); cmd[k] = c }
	/^# commit: / { commit[k] = $3 }
	/^# date: / { date[k] = $3 }
	/^# workload: / { w = $0; sub(/^# workload: /, "", w) }
	/^(unprofiled|perf -a -g|codectl|codectl\+import) +[0-9]+ +[0-9.]+x$/ {
		r = $1 == "perf" ? "perf" : $1
		ns[k, r] = $(NF - 1); ratio[k, r] = $NF
	}
	/^goal codectl\+import / { g = $0; sub(/^goal codectl\+import within 5% of perf -a -g: /, "", g); goal[k] = g }
	/^goal codectl within / { g = $0; sub(/^goal codectl within 5% of perf -a -g: /, "", g); goal0[k] = g }
	/^excess codectl\+import per process: / { excess[k] = $5 }
	/^part / { f = $2; if (!(f in seen)) { seen[f] = 1; fn[++nf] = f }
		   calls[k, f] = $3; pns[k, f] = $5 }
	END {
		same = 1
		for (i = 2; i <= nk; i++) if (commit[ks[i]] != commit[ks[1]]) same = 0
		printf "From `make bench-fork SERIES=\"%s", ks[1]
		for (i = 2; i <= nk; i++) printf " %s", ks[i]
		printf "\"`"
		if (same) printf " at commit %s, %s", commit[ks[1]], date[ks[1]]
		else for (i = 1; i <= nk; i++) printf "; %s at commit %s, %s", ks[i], commit[ks[i]], date[ks[i]]
		printf ".  Workload: %s, under `perf record -a -g -F 1000`; each row the loop'"'"'s guest time (`-icount shift=0`: instructions, and the time the guest waits), the best of 3 runs, and its ratio to perf -a -g.\n\n", w
		print "| kernel | unprofiled | perf -a -g | codectl | codectl + libc imported | import case: excess per process |"
		print "|---|---:|---:|---:|---:|---:|"
		for (i = 1; i <= nk; i++) {
			k = ks[i]
			printf "| %s | %s | %s (%.1f ms) | %s | %s | %.1f us |\n", k, ratio[k, "unprofiled"],
				ratio[k, "perf"], ns[k, "perf"] / 1e6, ratio[k, "codectl"],
				ratio[k, "codectl+import"], excess[k] / 1000
		}
		print ""
		for (i = 1; i <= nk; i++)
			printf "- %s: goal codectl within 5%% of perf -a -g: %s; with libc imported: %s\n", ks[i], goal0[ks[i]], goal[ks[i]]
		print ""
		print "Where the import case'"'"'s time goes: the same loop once more under function_graph on the functions a process'"'"'s registry costs (calls and inclusive time per process of the loop; traced functions nest, and tracing adds its own cost, so these are shares of a traced run, not of the timed one), the 12 largest:"
		print ""
		printf "| function |"
		for (i = 1; i <= nk; i++) printf " %s calls | %s us |", ks[i], ks[i]
		print ""
		printf "|---|"
		for (i = 1; i <= nk; i++) printf "---:|---:|"
		print ""
		# By the last kernel'"'"'s time, largest first.
		last = ks[nk]
		for (a = 1; a <= nf; a++) o[a] = fn[a]
		for (a = 2; a <= nf; a++)
			for (b = a; b > 1 && pns[last, o[b]] + 0 > pns[last, o[b - 1]] + 0; b--) {
				t = o[b]; o[b] = o[b - 1]; o[b - 1] = t
			}
		for (a = 1; a <= nf && a <= 12; a++) {
			printf "| `%s` |", o[a]
			for (i = 1; i <= nk; i++) {
				k = ks[i]
				if ((k, o[a]) in calls) printf " %s | %.1f |", calls[k, o[a]], pns[k, o[a]] / 1000
				else printf " - | - |"
			}
			print ""
		}
	}' "${files[@]}")
doc_replace "$doc" bench-fork "$text" || exit 0
[ "$doc" = - ] || echo "bench-fork-figures.sh: $doc: the tables of ${files[*]}"
