#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian bookworm's own Node.js (nodejs and libnode108, and the modules
# it loads its externalized builtins from: acorn, cjs-module-lexer and
# undici's fetch, in /usr/share/nodejs), unpacked into
# DIR for a guest (tests/vm/runtimes.sh), never installed on the host: a
# machine may have another node in /usr/bin.  Its libraries' own
# dependencies (libuv1, libicu72, ...) are installed by scripts/setup.sh.
# Idempotent.
#
#   scripts/stage-node.sh DIR      prints DIR/usr/bin/node
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=$1
stage_lock "$dir"
# bookworm's newest: whatever is newest there today, for an older one
# leaves the archive.
ver=$(bookworm_version nodejs)
stamp="$ver acorn cjs-module-lexer undici"
node=$dir/usr/bin/node
if [ ! -x "$node" ] || [ "$(cat "$dir/.version" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	(cd "$dir/debs" && apt-get download -q "nodejs=$ver" "libnode108=$ver" \
		node-acorn node-cjs-module-lexer node-undici) >&2
	for d in "$dir"/debs/*.deb; do
		dpkg-deb -x "$d" "$dir"
	done
	echo "$stamp" >"$dir/.version"
fi
echo "$node"
