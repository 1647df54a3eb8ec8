#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl --strict over the module's sources.
# Debian ships checkpatch.pl only inside linux-source-*; the first run
# extracts it (and the data files it reads) into the cache.
#
#   scripts/checkpatch.sh [FILES...]     (default: module/, shared/, uapi/)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${CODECTL_CACHE:-$top/.cache}
dir=$cache/checkpatch

if [ ! -x "$dir/scripts/checkpatch.pl" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -q linux-source-6.1 >&2)
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.1_*.deb |
		tar -x -C "$tmp" --wildcards '*/linux-source-6.1.tar.xz'
	mkdir -p "$dir"
	tar -xJf "$tmp"/usr/src/linux-source-6.1.tar.xz -C "$dir" \
		--strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
fi

cd "$top"
cp=("$dir/scripts/checkpatch.pl" --strict --no-tree --terse --show-types
    --ignore FILE_PATH_CHANGES -f)
if [ $# -gt 0 ]; then
	exec "${cp[@]}" "$@"
fi
# The SFrame decoder is freestanding and compiled into user space too, so
# it uses <stdint.h> names rather than the kernel's u8/u32, and defines
# noinline itself where the kernel's headers are absent.
rc=0
"${cp[@]}" --ignore PREFER_KERNEL_TYPES,PREFER_DEFINED_ATTRIBUTE_MACRO \
	shared/sframe.[ch] || rc=1
"${cp[@]}" module/*.[ch] shared/names.h uapi/linux/codectl.h || rc=1
exit $rc
