#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The daemon fuzzer's figures in docs/testing.md, made from the output of
# a scripts/check.sh run with a daemonfuzz stage (make check-debug, or
# CODECTL_STAGES=daemonfuzz scripts/check.sh --debug):
#
#   scripts/daemonfuzz-figures.sh LOG [DOC]
#
# LOG holds the stage's "daemon-fuzz: seed ... seconds N" line
# (tests/vm/daemon-fuzz.sh), its "daemonfuzz-SERIES N passed, N failed"
# line and the run's "date ... commit ..." line.  One table replaces what
# stands between <!-- daemonfuzz:begin --> and <!-- daemonfuzz:end --> in
# DOC (default docs/testing.md; "-" prints it).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
log=${1:?usage: daemonfuzz-figures.sh LOG [DOC]}
doc=${2:-$top/docs/testing.md}
[ -r "$log" ] || die "no log $log"
grep -aq '^daemon-fuzz: seed ' "$log" || die "$log has no daemon-fuzz figures"
grep -aq '^date .* commit ' "$log" || die "$log has no summary (the run did not end)"

text=$(awk '
	/^daemon-fuzz: seed / { for (i = 2; i < NF; i += 2) v[$i] = $(i + 1) }
	/^daemonfuzz-[^ ]+ +[0-9]+ passed, [0-9]+ failed/ { stage = $1; res = $2 " passed, " $4 " failed" }
	/^date .* commit / { date = $2; commit = $4; args = $0; sub(/.* args /, "", args) }
	END {
		printf "Stage `%s` of `scripts/check.sh %s` (%s, commit %s): %s.\n\n", stage, args, date, commit, res
		print "| rounds | hostile files | `--prime` runs | files through the queue | crashes | synthesis failures | cache entries compared | differing | torn | guest seconds |"
		print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v["rounds"], v["files"],
			v["prime_executions"], v["live_handled"], v["crashes"], v["synthesis_failures"],
			v["entries_checked"], v["differing"], v["torn"], v["seconds"]
	}' "$log")
doc_replace "$doc" daemonfuzz "$text" || exit 0
[ "$doc" = - ] || echo "daemonfuzz-figures.sh: $doc: the figures of $log"
