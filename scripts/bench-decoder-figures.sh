#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lookup table of docs/performance.md, made from the log of make
# bench-decoder:
#
#   scripts/bench-decoder-figures.sh [LOGDIR [DOC]]
#
# Reads LOGDIR/bench-decoder.log (default: where bench-decoder.sh writes
# it, .cache/logs, or .cache/logs/WORKTREE when CODECTL_CACHE is another
# tree's cache): its command, commit and host, each side's lookups per
# second and, from bench-cost.sh, its instructions, data reads, L1 and
# L2 misses, branches and mispredictions per lookup.  One table naming
# the command, commit and date, then the goals (flat ratio >= 10,
# indexed >= 5) met or missed, replace what stands between
# <!-- bench-decoder:begin --> and <!-- bench-decoder:end --> in DOC
# (default docs/performance.md; "-" prints them).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
logs=$(log_dir "${1:-}")
doc=${2:-$top/docs/performance.md}
f=$logs/bench-decoder.log
[ -f "$f" ] || die "no $f (run make bench-decoder)"
grep -q '^# command: ' "$f" || die "$f names no command: run make bench-decoder again"
grep -q '^instructions, libsframe / flat: ' "$f" ||
	die "$f has no counts: the run did not finish (or had no valgrind)"

text=$(awk '
	/^# command: / { cmd = $0; sub(/^# command: /, "", cmd) }
	/^# commit: / { commit = $3 }
	/^# date: / { date = $3 }
	/^# host: / { host = $0; sub(/^# host: /, "", host); sub(/, load.*/, "", host) }
	/: SFrame v[0-9]/ { what = $0; sub(/^[^:]*: /, "", what) }
	# "NAME: RATE lookups/s (...)"
	/ lookups\/s / {
		l = $0; sub(/:[ ]+[0-9]+ lookups\/s.*/, "", l)
		for (i = 1; i <= NF; i++) if ($(i + 1) == "lookups/s") r = $i
		key = l == "ours, indexed" ? "indexed" : l == "ours, no index" ? "noindex" : \
		      l == "ours, flat" ? "flat" : l == "flat arrays, plain binary search" ? "plain-bsearch" : \
		      l == "flat arrays, buckets + branching search" ? "bucket-bsearch" : \
		      l == "libsframe" ? "libsframe" : ""
		if (key != "") { rate[key] = r; label[key] = l; order[++n] = key }
	}
	/^cost per lookup/ { cost = 1; costhdr = $0; next }
	cost && NF == 7 && $1 != "side" { for (i = 2; i <= 7; i++) c[$1, i] = $i }
	/^flat ratio: / { flat = $3 }
	/^ratio: / { idx = $2 }
	END {
		printf "From `%s` at commit %s, %s, on %s (host, user space; rates timed side by side in one run, ", cmd, commit, date, host
		printf "counts from cachegrind, one pass of the same pcs per side): %s.\n\n", what
		print "| lookup | lookups/s | vs libsframe | instructions/lookup | data reads | L1 misses | L2 misses (512 KiB) | branches | mispredicted |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= n; i++) {
			k = order[i]
			printf "| %s | %.0f | %.2f | %s | %s | %s | %s | %s | %s |\n", label[k], rate[k],
				rate[k] / rate["libsframe"], c[k, 2], c[k, 3], c[k, 4], c[k, 5], c[k, 6], c[k, 7]
		}
		print ""
		if (flat >= 10) printf "- goal, flat ratio >= 10: met (%.2f)\n", flat
		else printf "- goal, flat ratio >= 10: missed by %.2f (%.2f)\n", 10 - flat, flat
		if (idx >= 5) printf "- goal, indexed ratio >= 5: met (%.2f)\n", idx
		else printf "- goal, indexed ratio >= 5: missed by %.2f (%.2f); libsframe executes %.1fx the indexed decoder'"'"'s instructions per lookup\n", 5 - idx, idx, c["libsframe", 2] / c["indexed", 2]
	}' "$f")
doc_replace "$doc" bench-decoder "$text" || exit 0
[ "$doc" = - ] || echo "bench-decoder-figures.sh: $doc: the table of $f"
