#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian sid's perf (7.2), for the tracer tests' deferred callchains
# (perf record --call-graph fp,defer), which bookworm's perf 6.1 lacks.
# perf is installed with apt into a copy of the sid root (scripts/sid-root.sh;
# the root itself stays as the builds use it), and gathered with every
# library it needs and sid's dynamic loader into one directory that a
# guest runs it from:
#
#   DIR/ld-linux-x86-64.so.2 --library-path DIR DIR/perf ...
#
#   scripts/sid-perf.sh build    make the bundle (idempotent; needs the
#                                sid root and Debian's archive, as root)
#   scripts/sid-perf.sh path     print DIR; exit 1 saying why if it is absent
#
# Where: $CACHE/sid-perf (the root copy: $CACHE/sid-perf-root, removed
# once the bundle is made).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
OUT=$CACHE/sid-perf
. "$repo/scripts/lib.sh"

cmd_build() {
	local root tmp lib
	if [ -x "$OUT/perf" ] && [ -f "$OUT/.complete" ]; then
		echo "sid-perf.sh: $OUT up to date ($(cat "$OUT/.complete"))"
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "run as root (chroot)"
	root=$("$repo/scripts/sid-root.sh" path)
	tmp=$CACHE/sid-perf-root
	rm -rf "$tmp" "$OUT.new"
	cp -a "$root" "$tmp"
	cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
	# The copy is scratch: a private mount namespace for /proc, /dev.
	# The archive may be a snapshot older than its Release's Valid-Until.
	unshare -m --propagation private bash -euc '
		t=$1
		mount -t proc proc "$t/proc"
		mount --rbind /dev "$t/dev"
		chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Check-Valid-Until=false update -q
		chroot "$t" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends linux-perf
	' sid-perf "$tmp" >&2
	mkdir -p "$OUT.new"
	cp -L "$tmp/usr/bin/perf" "$OUT.new/perf"
	# The libraries, as sid's own loader resolves them in the copy.
	for lib in $(chroot "$tmp" ldd /usr/bin/perf | grep -o '/[^ ]*'); do
		cp -L "$tmp$lib" "$OUT.new/$(basename "$lib")"
	done
	[ -x "$OUT.new/ld-linux-x86-64.so.2" ] || die "no loader among perf's libraries"
	chroot "$tmp" perf --version >"$OUT.new/.complete"
	rm -rf "$tmp" "$OUT"
	mv "$OUT.new" "$OUT"
	echo "sid-perf.sh: $OUT ready: $(cat "$OUT/.complete") ($(du -sh "$OUT" | cut -f1))"
}

cmd_path() {
	[ -x "$OUT/perf" ] && [ -f "$OUT/.complete" ] ||
		die "no sid perf at $OUT: run scripts/sid-perf.sh build (needs make toolchain-7.2)"
	echo "$OUT"
}

case ${1:-} in
build) cmd_build ;;
path) cmd_path ;;
*) die "usage: sid-perf.sh build | path" ;;
esac
