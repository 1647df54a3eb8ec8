#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Dump every SFrame fixture with its own release's oracle and check the
# oracles (run by `make selfcheck` / `make oracle-dumps` in tests/sframe).
#
#   selfcheck.sh [--dumps-only] TOOLCHAIN...
#
# For each fixture F of toolchain TC ($CACHE/sframe-fixtures/TC/F), writes
# $CACHE/sframe-dumps/TC/:
#   F.oracle   oracle-R F       R = the release of TC (2.47 for the cross ones)
#   F.pyref    sframe-info.py --dump F   (independent raw reader)
#   F.ehframe  ehframe-rules.py --readelf <TC's readelf> F
#   F.cmp      compare.py F.oracle F.ehframe
# and checks (unless --dumps-only):
#   1. the oracle exits 0 (no unexplained find_fre/raw-FRE disagreement);
#   2. F.oracle and F.pyref are identical, comment lines aside;
#   3. compare.py finds no unexplained difference with .eh_frame.
#   4. with DECODER=CMD in the environment (e.g. our sframe-dump):
#      `CMD F` > F.decoder is identical to F.oracle, comment lines aside.
# Ends with "N passed, M failed"; exit status 1 if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CACHE=${CODECTL_CACHE:-$top/.cache}
DECODER=${DECODER:-}
export CACHE here DECODER

dumps_only=0
if [ "${1:-}" = --dumps-only ]; then
	dumps_only=1
	shift
fi
export dumps_only
[ $# -gt 0 ] || set -- 2.40 2.44 2.47 2.47-aarch64 2.47-s390x

# check_one TC FIXTURE: one line "PASS|FAIL TC/FIXTURE details".
check_one() {
	local tc=$1 f=$2 rel=${1%%-*}
	local elf=$CACHE/sframe-fixtures/$tc/$f out=$CACHE/sframe-dumps/$tc
	local oracle=$CACHE/sframe-oracle/oracle-$rel
	local readelf=$CACHE/toolchains/binutils-$tc/bin/readelf
	local ok=1 msg="" rc=0

	mkdir -p "$out"
	"$oracle" -q "$elf" >"$out/$f.oracle" 2>"$out/$f.oracle.err" || rc=$?
	if [ $rc != 0 ]; then
		ok=0
		msg+=" oracle-exit-$rc($(head -c 200 "$out/$f.oracle.err"))"
	fi
	python3 "$here/sframe-info.py" --dump "$elf" >"$out/$f.pyref" || { ok=0; msg+=" pyref-failed"; }
	if [ $dumps_only = 0 ]; then
		if cmp -s <(grep -v '^#' "$out/$f.oracle") <(grep -v '^#' "$out/$f.pyref"); then
			msg+=" oracle==pyref"
		else
			ok=0
			msg+=" oracle!=pyref($(diff <(grep -v '^#' "$out/$f.oracle") \
				<(grep -v '^#' "$out/$f.pyref") | grep -c '^[<>]') lines)"
		fi
	fi
	{
		python3 "$here/ehframe-rules.py" --readelf "$readelf" "$elf" >"$out/$f.ehframe" ||
			{ ok=0; msg+=" ehframe-failed"; }
		if [ $dumps_only = 0 ]; then
			if python3 "$here/compare.py" "$out/$f.oracle" "$out/$f.ehframe" >"$out/$f.cmp"; then
				:
			else
				ok=0
			fi
			msg+=" | $(head -n1 "$out/$f.cmp" | sed 's/^compare [^:]*: //')"
			local k
			k=$(sed -n 's/^  known \([^ ]*\) *\([0-9]*\) pcs$/\1=\2/p' "$out/$f.cmp" | tr '\n' ' ')
			[ -z "$k" ] || msg+=" [${k% }]"
		fi
	}
	if [ -n "$DECODER" ] && [ $dumps_only = 0 ]; then
		if $DECODER "$elf" >"$out/$f.decoder" 2>"$out/$f.decoder.err" &&
			cmp -s <(grep -v '^#' "$out/$f.oracle") <(grep -v '^#' "$out/$f.decoder"); then
			msg+=" decoder==oracle"
		else
			ok=0
			msg+=" DECODER!=oracle(see $out/$f.decoder)"
		fi
	fi
	local known
	known=$(grep -c '^# oracle: known' "$out/$f.oracle" || true)
	[ "$known" = 0 ] || msg+=" (oracle used raw FREs in $known FDEs: known libsframe bug)"
	if [ $ok = 1 ]; then
		echo "PASS $tc/$f$msg"
	else
		echo "FAIL $tc/$f$msg"
	fi
}
export -f check_one

jobs=()
for tc in "$@"; do
	for f in $(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
			make --no-print-directory -s -C "$here" -f fixtures/Makefile TC="$tc" list); do
		[ -f "$CACHE/sframe-fixtures/$tc/$f" ] || { echo "selfcheck: missing fixture $tc/$f (make fixtures)" >&2; exit 1; }
		jobs+=("$tc $f")
	done
done

# shellcheck disable=SC2016
results=$(printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -n 2 bash -c 'check_one "$0" "$1"' | sort -k2)
echo "$results"
pass=$(grep -c '^PASS' <<<"$results" || true)
fail=$(grep -c '^FAIL' <<<"$results" || true)
if [ $dumps_only = 1 ]; then
	echo "dumps written to $CACHE/sframe-dumps/"
	exit 0
fi
for tc in "$@"; do
	{ grep "^FAIL $tc/" <<<"$results" || true; } | awk '{print $2}' | sed 's|.*/||' |
		while read -r f; do
			[ -f "$CACHE/sframe-dumps/$tc/$f.cmp" ] || continue
			sed 's/^/    /' "$CACHE/sframe-dumps/$tc/$f.cmp" | sed -n 1,30p
		done
done
echo "sframe selfcheck: $pass passed, $fail failed"
[ "$fail" = 0 ]
