#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An arm64 userland for the arm64 guests' tracer tests (tests/vm/arm64-perf.sh):
# Debian bookworm's own perf (linux-perf:arm64, bookworm's newest) and
# trace-cmd (trace-cmd:arm64) and the shared libraries they load, from
# Debian's archive (apt-get download of the arm64 .debs: scripts/setup.sh
# adds dpkg's arm64 architecture), unpacked into DIR, never installed on
# the host.  Idempotent.
#
#   scripts/stage-arm64-root.sh DIR      prints DIR
#
# DIR/usr/bin/perf, DIR/usr/bin/trace-cmd, libtraceevent's plugins in
# DIR/lib/traceevent/plugins, and in DIR/lib one file per soname (the
# library it names, not a link): the objects perf, trace-cmd and the
# plugins need, closed over their own DT_NEEDED, and every shared object
# of libc6:arm64 (libc, libm, libdl, ld-linux-aarch64.so.1, ... for the
# programs the tests build).  A guest takes DIR/lib as
# /usr/lib/aarch64-linux-gnu, and ld-linux-aarch64.so.1 at
# /lib/ld-linux-aarch64.so.1.  A soname nothing here provides fails the
# staging.
#
# The packages are linux-perf's and trace-cmd's Depends and theirs in
# turn, library packages only (lib*, zlib1g): perl and python3 themselves,
# perl-modules-5.36 and the python3.11 standard library are left out
# (perf record and perf script -F do not start the interpreters whose
# libraries perf links).  Layout 2 added trace-cmd: a DIR of layout 1 is
# staged again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=$1
stage_lock "$dir"
readelf=$("$(dirname "$0")/toolchains.sh" dir 2.47-aarch64)/bin/readelf
[ -x "$readelf" ] || "$(dirname "$0")/toolchains.sh" fetch >&2
ver=$(bookworm_version linux-perf)
tver=$(bookworm_version trace-cmd)
bver=$(bookworm_version bpftrace)
stamp="linux-perf $ver trace-cmd $tver bpftrace $bver layout 3"
if [ -x "$dir/usr/bin/perf" ] && [ -x "$dir/usr/bin/trace-cmd" ] && [ -x "$dir/usr/bin/bpftrace" ] &&
   [ "$(cat "$dir/.version" 2>/dev/null)" = "$stamp" ]; then
	echo "$dir"
	exit 0
fi
apt-cache show linux-perf:arm64 trace-cmd:arm64 bpftrace:arm64 >/dev/null 2>&1 ||
	{ echo "stage-arm64-root.sh: no arm64 packages (scripts/setup.sh)" >&2; exit 1; }

# deps PKG...: the candidates' Depends and Pre-Depends, first
# alternative, library packages only (one apt-cache for them all: each
# reads the whole cache).
deps() {
	apt-cache show --no-all-versions "${@/%/:arm64}" |
	sed -n 's/^\(Pre-\)\{0,1\}Depends: //p' | tr ',' '\n' |
	sed 's/|.*//; s/(.*)//; s/[[:space:]]//g; s/:any$//' |
	grep -E '^(lib|zlib1g)' | grep -v -E -e '-(stdlib|minimal)$' -e '^perl-modules' |
	sort -u
}
declare -A seen=([linux-perf]=1 [trace-cmd]=1 [bpftrace]=1)
level=(linux-perf trace-cmd bpftrace)
pkgs=("linux-perf:arm64=$ver" "trace-cmd:arm64=$tver" "bpftrace:arm64=$bver")
while [ ${#level[@]} -gt 0 ]; do
	next=()
	for d in $(deps "${level[@]}"); do
		[ -z "${seen[$d]:-}" ] || continue
		seen[$d]=1 next+=("$d") pkgs+=("$d:arm64")
	done
	level=("${next[@]}")
done

rm -rf "$dir"
mkdir -p "$dir/lib" "$dir/usr/bin"
debs_unpack "$dir/debs" "$dir/root" "${pkgs[@]}"
cp -L "$dir/root/usr/bin/perf" "$dir/usr/bin/perf"
cp -L "$dir/root/usr/bin/trace-cmd" "$dir/usr/bin/trace-cmd"
cp -L "$dir/root/usr/bin/bpftrace" "$dir/usr/bin/bpftrace"
# libtraceevent's plugins (its event formats; trace-cmd loads them from
# /usr/lib/aarch64-linux-gnu/traceevent/plugins).
plugins=$dir/root/usr/lib/aarch64-linux-gnu/traceevent/plugins
[ -d "$plugins" ] ||
	{ echo "stage-arm64-root.sh: no libtraceevent plugins" >&2; exit 1; }
mkdir -p "$dir/lib/traceevent"
cp -rL "$plugins" "$dir/lib/traceevent/plugins"

# libc6's shared objects, then the closure of perf, trace-cmd, bpftrace
# and the plugins (scripts/lib.sh).
todo=($(dpkg-deb -c "$dir"/debs/libc6_*_arm64.deb |
	grep -o -E '[^/ ]+\.so(\.[0-9]+)+$' | sort -u))
for f in "$dir"/usr/bin/* "$dir"/lib/traceevent/plugins/*.so; do
	todo+=($(READELF=$readelf so_needed "$f"))
done
missing=$(READELF=$readelf so_closure "$dir/root" "$dir/lib" "" "${todo[@]}") ||
	{ echo "stage-arm64-root.sh: no package here provides $missing" >&2; exit 1; }
rm -rf "$dir/root"
echo "$stamp" >"$dir/.version"
echo "$dir"
