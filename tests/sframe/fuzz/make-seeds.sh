#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Generate the seed corpus of fuzz-sframe (nothing here is committed).
#
#   make-seeds.sh [OUTDIR]      (default: tests/sframe/fuzz/seeds)
#
# Seeds are fuzz-sframe inputs: a 4-byte prefix (all zero: section at
# 0x400000, no text range, no faults) and an SFrame section's bytes, from
#   - the project's binaries built with --gsframe, when they exist:
#     tools/codectl, lib/libcodectl.so.1, tests/vm/codectl-abi-test;
#   - every ELF file under $CACHE/sframe-fixtures (CACHE is
#     ${CODECTL_CACHE:-<repo>/.cache});
#   - when the binutils of scripts/toolchains.sh are unpacked under
#     $CACHE/toolchains: tests/sframe/fixtures/*.c assembled by each of
#     them (v1, v2, v3; aarch64 and s390x with the cross compilers);
#   - every case of tests/sframe/malformed (valid sections and defects);
#   - the hand-made seeds in tests/sframe/fuzz/hand/.
# Identical sections are kept once (files are named by content hash).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
out=${1:-$here/seeds}
extract=$here/sframe-extract

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make -s -C "$here" sframe-extract >/dev/null

n_elf=0
add_elf() {	# ELF TAG
	local h
	if "$extract" "$1" "$tmp/seed" 2>/dev/null; then
		h=$(sha1sum "$tmp/seed" | cut -c1-16)
		mv "$tmp/seed" "$out/$2-$h"
		n_elf=$((n_elf + 1))
	fi
}

for f in tools/codectl lib/libcodectl.so.1 tests/vm/codectl-abi-test; do
	[ -f "$repo/$f" ] && add_elf "$repo/$f" "project"
done

if [ -d "$CACHE/sframe-fixtures" ]; then
	while IFS= read -r -d '' f; do
		[ "$(head -c4 "$f" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] ||
			continue
		add_elf "$f" "fixture"
	done < <(find "$CACHE/sframe-fixtures" -type f -print0)
fi

# Objects and shared libraries from each unpacked toolchain.
tc=$CACHE/toolchains
fixtures=$repo/tests/sframe/fixtures
if [ -d "$tc" ] && ls "$fixtures"/*.c >/dev/null 2>&1; then
	for name in 2.40 2.44 2.47 2.47-aarch64 2.47-s390x; do
		bin=$tc/binutils-$name/bin
		[ -x "$bin/as" ] || continue
		case $name in
		*aarch64) cc=aarch64-linux-gnu-gcc ;;
		*s390x) cc=s390x-linux-gnu-gcc ;;
		*) cc=gcc ;;
		esac
		command -v "$cc" >/dev/null || continue
		for src in "$fixtures"/*.c; do
			b=$tmp/$(basename "$src" .c)-$name
			for opt in -O0 -O2; do
				"$cc" -B"$bin/" $opt -fPIC -Wa,--gsframe -c \
					-o "$b$opt.o" "$src" 2>/dev/null ||
					continue
				add_elf "$b$opt.o" "tc$name"
				"$cc" -B"$bin/" -shared -nostdlib \
					-o "$b$opt.so" "$b$opt.o" 2>/dev/null &&
					add_elf "$b$opt.so" "tc$name"
			done
		done
	done
fi

# The malformed test's sections.
make -s -C "$repo/tests/sframe/malformed" malformed-test >/dev/null
mkdir -p "$tmp/malformed"
"$repo/tests/sframe/malformed/malformed-test" --seeds "$tmp/malformed" \
	>/dev/null || true	# a failing case is still a good seed
n_mal=0
for f in "$tmp/malformed"/*; do
	h=$(sha1sum "$f" | cut -c1-16)
	cp "$f" "$out/malformed-$h"
	n_mal=$((n_mal + 1))
done

n_hand=0
for f in "$here"/hand/*; do
	[ -f "$f" ] || continue
	cp "$f" "$out/hand-$(basename "$f")"
	n_hand=$((n_hand + 1))
done

echo "make-seeds: $n_elf from ELF files, $n_mal from malformed-test," \
	"$n_hand hand-made; $(ls "$out" | wc -l) files in $out"
