#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian bookworm's own arm64 Node.js for the arm64 runtimes stage
# (scripts/check.sh's runtimes-SERIES-arm64, tests/vm/runtimes.sh):
# nodejs:arm64 and libnode108:arm64 (bookworm's newest), the modules it
# loads its externalized builtins from (acorn, cjs-module-lexer, undici:
# architecture all) and the libraries libnode links (libuv1, libicu72,
# ...), apt-get download of the .debs unpacked into DIR, never installed
# on the host.  Idempotent.
#
#   scripts/stage-arm64-node.sh DIR      prints DIR
#
# DIR/usr/bin/node, DIR/usr/share/nodejs, and in DIR/lib one file per
# soname: libnode.so.108 and what it needs, closed over DT_NEEDED
# (scripts/lib.sh's so_closure), libc6's left out (stage-arm64-root.sh
# has them), for a guest's /usr/lib/aarch64-linux-gnu.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=$1
stage_lock "$dir"
ver=$(bookworm_version nodejs)
stamp="$ver layout 1"
if [ -x "$dir/usr/bin/node" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$stamp" ]; then
	echo "$dir"
	exit 0
fi
# libnode108's library Depends, by hand (a short, fixed list).
pkgs=("nodejs:arm64=$ver" "libnode108:arm64=$ver" libbrotli1:arm64
      libc-ares2:arm64 libicu72:arm64 libnghttp2-14:arm64 libssl3:arm64
      libstdc++6:arm64 libgcc-s1:arm64 libuv1:arm64 zlib1g:arm64
      node-acorn node-cjs-module-lexer node-undici)
rm -rf "$dir"
mkdir -p "$dir/lib"
debs_unpack "$dir/debs" "$dir/root" "${pkgs[@]}"
mkdir -p "$dir/usr/bin" "$dir/usr/share"
cp -L "$dir/root/usr/bin/node" "$dir/usr/bin/node"
cp -a "$dir/root/usr/share/nodejs" "$dir/usr/share/nodejs"
libc6='^(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-aarch64)\.so'
# shellcheck disable=SC2046 # sonames, one word each
missing=$(so_closure "$dir/root" "$dir/lib" "$libc6" \
	$(so_needed "$dir/usr/bin/node")) ||
	{ echo "stage-arm64-node.sh: no package here provides $missing" >&2; exit 1; }
rm -rf "$dir/debs" "$dir/root"
echo "$stamp" >"$dir/.version"
echo "$dir"
