#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The perf of a kernel's own release, for the tracer tests' deferred
# callchains (perf record --call-graph fp,defer), which bookworm's perf
# 6.1 lacks: sid's perf 7.2 for 7.2, trixie-backports' perf 7.3 for 7.3
# and 7.3-rt (the release of scripts/kernels.sh release SERIES).  perf is
# installed with apt into a copy of that release's root
# (scripts/sid-root.sh; the root itself stays as the builds use it), and
# gathered with every library it needs and the release's dynamic loader
# into one directory that a guest runs it from:
#
#   DIR/ld-linux-x86-64.so.2 --library-path DIR DIR/perf ...
#
#   scripts/sid-perf.sh build [SERIES]   make the bundle (idempotent;
#                                        needs the root and Debian's
#                                        archive, as root); SERIES
#                                        defaults to 7.2
#   scripts/sid-perf.sh path [SERIES]    print DIR; exit 1 saying why if
#                                        it is absent
#
# Where: $CACHE/RELEASE-perf, sid-perf for 7.2 (the root copy:
# $CACHE/RELEASE-perf-root, removed once the bundle is made).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
. "$repo/scripts/lib.sh"

# set_series SERIES: RELEASE, OUT, and SUITE (where linux-perf is taken
# from: the release, or its backports for trixie's 7.3).
set_series() {
	RELEASE=$("$repo/scripts/kernels.sh" release "$1") || exit 1
	case $RELEASE in
	sid) SUITE=sid ;;
	trixie) SUITE=trixie-backports ;;
	*) die "$1: no perf bundle for a $RELEASE kernel (sid, trixie)" ;;
	esac
	OUT=$CACHE/$RELEASE-perf
}

cmd_build() {
	local root tmp lib
	if [ -x "$OUT/perf" ] && [ -f "$OUT/.complete" ]; then
		echo "sid-perf.sh: $OUT up to date ($(cat "$OUT/.complete"))"
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "run as root (chroot)"
	root=$("$repo/scripts/sid-root.sh" -s "$RELEASE" path)
	tmp=$OUT-root
	rm -rf "$tmp" "$OUT.new"
	cp -a "$root" "$tmp"
	cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
	# The copy is scratch: a private mount namespace for /proc, /dev.
	# The archive may be a snapshot older than its Release's Valid-Until.
	# A backports suite is added to the copy's sources first.
	[ "$SUITE" = "$RELEASE" ] ||
		echo "deb http://deb.debian.org/debian $SUITE main" >"$tmp/etc/apt/sources.list.d/$SUITE.list"
	unshare -m --propagation private bash -euc '
		t=$1 suite=$2
		mount -t proc proc "$t/proc"
		mount --rbind /dev "$t/dev"
		chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Check-Valid-Until=false update -q
		chroot "$t" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends -t "$suite" linux-perf
	' sid-perf "$tmp" "$SUITE" >&2
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
		die "no $RELEASE perf at $OUT: run scripts/sid-perf.sh build $SERIES (needs make toolchain-$SERIES)"
	echo "$OUT"
}

SERIES=${2:-7.2}
case ${1:-} in
build) set_series "$SERIES"; cmd_build ;;
path) set_series "$SERIES"; cmd_path ;;
*) die "usage: sid-perf.sh build|path [SERIES]" ;;
esac
