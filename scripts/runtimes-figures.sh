#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The figures of docs/runtimes.md, made from what measured them:
#
#   scripts/runtimes-figures.sh [LOGDIR [DOC]]
#
# Reads the FIGURE lines tests/vm/runtimes.sh printed in each kernel's
# console (LOGDIR/runtimes-SERIES.console, as scripts/check.sh keeps
# them; default its log directory) and puts the table between the
# runtimes markers of DOC (default docs/runtimes.md; "-" prints it).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
logs=$(log_dir "${1:-}")
doc=${2:-$top/docs/runtimes.md}
consoles=()
for s in 6.1 6.12 7.2; do
	[ -f "$logs/runtimes-$s.console" ] && consoles+=("$logs/runtimes-$s.console")
done
[ ${#consoles[@]} -gt 0 ] || die "no $logs/runtimes-*.console (scripts/check.sh runs the runtimes stages)"

table=$(awk '
	FNR == 1 { k = FILENAME; sub(/.*runtimes-/, "", k); sub(/\.console$/, "", k)
		   ks[++nk] = k }
	/^# kernel / {
		kver[k] = $3; sub(/,$/, "", kver[k])
		ver["node"] = $5; sub(/,$/, "", ver["node"]); ver["java"] = $7
	}
	/^FIGURE / {
		sub(/\r$/, "")
		if ($4 == "samples") {
			jit[k, $2, $3] = $10
			deep[k, $2, $3] = $12
			own[k, $2, $3] = $14
			comp[k, $2, $3] = $7 " of " $5 " " $8
			nc[k, $2, $3] = $18
		}
		if ($4 == "harm_checked")
			harm[k, $2, $3] = $7 " of " $5
	}
	END {
		split("none module daemon dwarf", modes, " ")
		names["none"] = "no module (the kernel'"'"'s walk)"
		names["module"] = "`insmod codectl.ko` alone"
		names["daemon"] = "module and `codectl daemon`"
		names["dwarf"] = "perf `--call-graph dwarf`"
		split("node java", rts, " ")
		title["node"] = "Node.js " ver["node"] " (Debian bookworm), `tests/vm/runtimes/work.js`, the main thread'"'"'s samples; complete: to node'"'"'s `_start`"
		title["java"] = "OpenJDK " ver["java"] " (Debian bookworm, `-XX:+PreserveFramePointer`), `tests/vm/runtimes/Work.java`, the samples of the thread running `main`; complete: to the thread'"'"'s entry"
		for (r = 1; r <= 2; r++) {
			rt = rts[r]
			printf "%s%s; 3 s of `perf record -g -e cpu-clock:u -F 499` once its start-up is over.  JIT frames: frames in the runtime'"'"'s perf map.\n\n", (r > 1 ? "\n" : ""), title[rt]
			printf "| setup | what |"
			for (i = 1; i <= nk; i++) printf " %s |", ks[i]
			printf "\n|---|---|"
			for (i = 1; i <= nk; i++) printf "---|"
			printf "\n"
			for (m = 1; m <= 4; m++) {
				md = modes[m]
				printf "| %s | JIT frames per sample |", names[md]
				for (i = 1; i <= nk; i++) printf " %s |", jit[ks[i], rt, md]
				printf "\n| %s | samples with >= 10 JIT frames |", names[md]
				for (i = 1; i <= nk; i++) printf " %s |", deep[ks[i], rt, md]
				printf "\n| %s | samples with a frame of the program'"'"'s own functions |", names[md]
				for (i = 1; i <= nk; i++) printf " %s |", own[ks[i], rt, md]
				printf "\n| %s | complete |", names[md]
				for (i = 1; i <= nk; i++) printf " %s |", comp[ks[i], rt, md]
				printf "\n| %s | frames not code |", names[md]
				for (i = 1; i <= nk; i++) printf " %s |", nc[ks[i], rt, md]
				printf "\n"
				if (md == "module" || md == "daemon") {
					printf "| %s | walks shorter than the kernel'"'"'s (no-harm check; walks compared) |", names[md]
					for (i = 1; i <= nk; i++) printf " %s |", harm[ks[i], rt, md]
					printf "\n"
				}
			}
		}
		printf "\nKernels: "
		for (i = 1; i <= nk; i++) printf "%s%s", (i > 1 ? ", " : ""), kver[ks[i]]
		printf ".  The no-harm check compares only walks that did not reach the outermost frame.\n"
	}' "${consoles[@]}")
doc_replace "$doc" runtimes "$table" || true
