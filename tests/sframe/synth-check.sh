#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SFrame synthesised from .eh_frame (libcodectl's codectl_sframe_synth()),
# on the x86-64 fixtures (binutils 2.40, 2.44, 2.47 builds), on Debian's
# libc.so.6, libstdc++.so.6 and ld-linux-x86-64.so.2, and on the running
# kernel's vdso (its image written to a file).  Per object:
#   synth    synth-check: the decoder validates the section, and at every
#            pc it covers, the CFA, return address and rbp its rule gives
#            equal what libdw's CFI gives (evaluated on a made-up frame);
#   libsframe  binutils 2.47's libsframe (oracle-2.47) reads the section
#            (wrapped in an ELF object by objcopy) exactly as our decoder
#            (sframe-dump) does, pc by pc (compare.py --exact);
# and once:
#   perturb  synth-check --perturb (one FRE's CFA offset changed in each
#            section) must report disagreements: the test can fail.
# Ends with "N passed, N failed".
#
#   tests/sframe/synth-check.sh [ELF...]   (default: the objects above)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${CODECTL_CACHE:-$top/.cache}
build=${CODECTL_BUILD_DIR:-$cache/sframe-bench}/synth
oracle=$cache/sframe-oracle/oracle-2.47
passed=0 failed=0
pass() { echo "ok - $*"; passed=$((passed + 1)); }
fail() { echo "not ok - $*"; failed=$((failed + 1)); }

mkdir -p "$build"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! make -s -C "$top/lib" all >"$tmp/log" 2>&1 ||
   ! make -s -C "$top/tools" codectl >>"$tmp/log" 2>&1 ||
   ! gcc -O2 -g -Wall -Wextra -Werror -I"$top/lib/include" -I"$top/uapi" \
	-I"$here" -I"$top/shared" -o "$build/synth-check" \
	"$here/synth-check.c" "$top/shared/sframe.c" "$top/lib/libcodectl.a" \
	-ldw -lelf \
	>>"$tmp/log" 2>&1 ||
   ! gcc -O2 -Wall -Wextra -Werror -I"$here" -I"$top/shared" \
	-o "$build/sframe-dump" "$here/sframe-dump.c" "$here/elfsec.c" \
	"$top/shared/sframe.c" >>"$tmp/log" 2>&1; then
	cat "$tmp/log"
	fail "building synth-check, sframe-dump, libcodectl, codectl"
	echo "$passed passed, $failed failed"
	exit 1
fi

objs=("$@")
if [ ${#objs[@]} -eq 0 ]; then
	for tc in 2.40 2.44 2.47; do
		for f in "$cache/sframe-fixtures/$tc"/*; do
			case $f in *.flags|*/MANIFEST|*.d|*.o) continue ;; esac
			[ -f "$f" ] && objs+=("$f")
		done
	done
	for lib in libc.so.6 libstdc++.so.6 ld-linux-x86-64.so.2; do
		f=$(readlink -f "/lib/x86_64-linux-gnu/$lib")
		if [ -f "$f" ]; then
			objs+=("$f")
		else
			fail "system library $lib missing"
		fi
	done
	# the running kernel's vdso (no file: its image from memory)
	if "$build/synth-check" --dump-vdso "$build/vdso.so"; then
		objs+=("$build/vdso.so")
	else
		fail "dumping the vdso"
	fi
fi

for f in "${objs[@]}"; do
	name=${f#"$cache"/sframe-fixtures/}
	line=$("$build/synth-check" "$f" | grep -E '^(not )?ok - ')
	if [ "${line#ok - }" != "$line" ]; then
		pass "synth ${line#ok - }"
	else
		fail "synth ${line#not ok - }"
	fi

	if [ ! -x "$oracle" ]; then
		fail "libsframe $name: no $oracle (make -C tests/sframe oracles)"
		continue
	fi
	if ! "$top/tools/codectl" synth -o "$tmp/sec" "$f" >/dev/null ||
	   ! objcopy -I binary -O elf64-x86-64 \
		--rename-section .data=.sframe,contents,readonly \
		"$tmp/sec" "$tmp/sec.o" ||
	   ! "$oracle" "$tmp/sec.o" >"$tmp/oracle" 2>"$tmp/err" ||
	   ! "$build/sframe-dump" "$tmp/sec.o" >"$tmp/ours" 2>>"$tmp/err"; then
		cat "$tmp/err"
		fail "libsframe $name: synth, objcopy, oracle or dump failed"
		continue
	fi
	if res=$(python3 "$here/compare.py" --exact "$tmp/oracle" "$tmp/ours"); then
		pass "libsframe $name: ${res##*: }"
	else
		echo "$res"
		fail "libsframe $name: libsframe 2.47 and our decoder differ"
	fi
done

# The test must be able to fail: one corrupted FRE per section is seen.
if [ ${#objs[@]} -gt 0 ]; then
	"$build/synth-check" --perturb "${objs[@]}" >"$tmp/perturb"
	rc=$?
	n=$(grep -c '^not ok - ' "$tmp/perturb")
	if [ "$rc" -ne 0 ] && [ "$n" -eq ${#objs[@]} ]; then
		pass "perturb: a changed CFA offset is caught in all $n objects"
	else
		grep -v '^ok' "$tmp/perturb"
		fail "perturb: caught in $n of ${#objs[@]} objects (exit $rc)"
	fi
fi

echo "synth: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
