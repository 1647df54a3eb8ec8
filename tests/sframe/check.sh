#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The SFrame decoder's tests, one stage of make check:
#   1. toolchains, fixtures and libsframe oracles (cached after the first
#      run), then selfcheck.sh with our decoder plugged in: for every
#      fixture, every pc, our dump equals its own release's libsframe;
#   2. sframe_validate() accepts every real fixture, and the flat lookup
#      table the module unwinds with (sframe_flat_build/find) answers as
#      sframe_find() at every pc of every fixture (built with ASan/UBSan);
#   3. the malformed-section corpus, plain and under ASan/UBSan;
#   4. a bounded fuzzing run (FUZZ_SECONDS, default 60; 0 skips it and
#      says so);
#   5. SFrame synthesised from .eh_frame by libcodectl, on the x86-64
#      fixtures and Debian's libc, libstdc++ and ld.so: equal to libdw's
#      CFI at every pc, and read by libsframe 2.47 as by our decoder
#      (synth-check.sh).
# Ends with "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${CODECTL_CACHE:-$top/.cache}
export CODECTL_CACHE=$cache
passed=0 failed=0
count() {
	local line p f
	line=$(grep -E '(^|: )[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	p=$(sed -E 's/^(.*: )?([0-9]+) passed.*/\2/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	if [ -z "$line" ]; then
		echo "not ok - $2: no result line"
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + p)) failed=$((failed + f))
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

make -s -C "$here" fixtures oracles >"$log" 2>&1 ||
	{ cat "$log"; echo "not ok - building toolchains, fixtures, oracles"; failed=$((failed + 1)); }

# Per-run binary: in $CODECTL_BUILD_DIR when set (concurrent work trees).
dump=${CODECTL_BUILD_DIR:-$cache/sframe-bench}/sframe-dump
mkdir -p "$(dirname "$dump")"
gcc -O2 -Wall -Wextra -Werror -I"$here" -I"$top/shared" -o "$dump" \
	"$here/sframe-dump.c" "$here/elfsec.c" "$top/shared/sframe.c" ||
	{ echo "not ok - building sframe-dump"; failed=$((failed + 1)); }

# 1. differential: ours == libsframe on every pc of every fixture
(cd "$here" && DECODER=$dump ./selfcheck.sh 2.40 2.44 2.47 2.47-aarch64 2.47-s390x) |
	tee "$log" | grep -v '^PASS'
count "$log" "selfcheck"

# 2. every real fixture passes the full validation walk
for f in "$cache"/sframe-fixtures/2.4*/*; do
	case $f in *.flags|*/MANIFEST|*.d) continue ;; esac
	if res=$("$dump" --validate "$f" 2>&1 | tail -n 1) &&
	   [ "$res" = "# validate: valid" ]; then
		passed=$((passed + 1))
	else
		echo "not ok - validate ${f#"$cache"/sframe-fixtures/}: $res"
		failed=$((failed + 1))
	fi
done
echo "validated real fixtures: $passed passed so far"

# 2b. flat lookup table == the decoder, every pc of every real fixture
flat=${CODECTL_BUILD_DIR:-$cache/sframe-bench}/flat-check
if gcc -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined \
	-fno-sanitize-recover=all -I"$here" -I"$top/shared" -o "$flat" \
	"$here/flat-check.c" "$here/elfsec.c" "$top/shared/sframe.c"; then
	fixtures=()
	for f in "$cache"/sframe-fixtures/2.4*/*; do
		case $f in *.flags|*/MANIFEST|*.d) continue ;; esac
		fixtures+=("$f")
	done
	"$flat" "${fixtures[@]}" >"$log" 2>&1
	grep -v '^ok' "$log"
	count "$log" "flat-check"
else
	echo "not ok - building flat-check"
	failed=$((failed + 1))
fi

# 3. malformed corpus
if [ -f "$here/malformed/Makefile" ]; then
	make -s -C "$here/malformed" check 2>&1 | tee "$log" | grep -E '^not ok|passed,'
	count "$log" "malformed"
fi

# 4. fuzzing, bounded
if [ -f "$here/fuzz/Makefile" ]; then
	if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
		make -s -C "$here/fuzz" check SECONDS="${FUZZ_SECONDS:-60}" 2>&1 |
			tee "$log" | tail -n 5
		count "$log" "fuzz"
	else
		echo "# fuzzing skipped (FUZZ_SECONDS=0): not counted"
	fi
fi

# 5. synthesised sections
"$here/synth-check.sh" >"$log" 2>&1
grep -E '^not ok|^#|passed,' "$log"
count "$log" "synth"

echo "sframe: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
