#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scratch roots for the package test (scripts/pkg-test.sh): a Debian
# system, with a stock kernel's headers installed from Debian's own
# packages, into which the .debs are installed with apt as on a user's
# machine.  Patterns of scripts/sid-root.sh: made in ROOT.new and renamed
# when complete, under a lock, stamped; never written to by a test (tests
# mount an overlay over it, see "run").
#
#   scripts/pkg-root.sh build SERIES   make the root for SERIES (idempotent):
#                                      6.1: debootstrap bookworm (minbase,
#                                      with dkms) into $CACHE/pkg-bookworm-root
#                                      and install linux-headers-KVER there
#                                      with apt; 7.2: the sid root of
#                                      scripts/sid-root.sh (make
#                                      toolchain-7.2), whose headers are
#                                      installed by each run instead (the sid
#                                      root is shared: nothing is added to it)
#   scripts/pkg-root.sh path SERIES    print the root
#   scripts/pkg-root.sh headers SERIES print the headers .debs of SERIES
#                                      (downloaded once into
#                                      $CACHE/pkg-debs/SERIES with apt-get
#                                      download, the versions of
#                                      scripts/kernels.sh's cache)
#   scripts/pkg-root.sh run SERIES UPPER [-H] [-b DIR[:IN]]... -- CMD...
#                                      run CMD as root in an overlay of the
#                                      root (writes go to UPPER, a scratch
#                                      directory) in a private mount
#                                      namespace, with /dev, /proc, /sys, a
#                                      tmpfs /tmp and each -b DIR bound
#                                      read-write at IN (default: the same
#                                      path); -H runs CMD on the host
#                                      instead, with $PKGROOT the mounted
#                                      root (rpm --root $PKGROOT ...)
#
# CACHE is <repo>/.cache unless CODECTL_CACHE is set.  Needs root.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
MIRROR=http://deb.debian.org/debian
# Bump when the package list or the layout changes.
LAYOUT=1

. "$repo/scripts/lib.sh"

# bookworm root's packages besides minbase: dkms (pulls gcc, make, kmod
# and the rest dkms needs), openssl (module signing), xz-utils and zstd
# (module compression).
BOOKWORM_PKGS="dkms openssl xz-utils zstd kmod"

root_of() {
	case $1 in
	6.1) echo "$CACHE/pkg-bookworm-root" ;;
	7.2) "$repo/scripts/sid-root.sh" path ;;
	*) die "series $1: no package-test root (6.1 and 7.2 are done)" ;;
	esac
}

# headers SERIES: download (once) and list the headers packages of the
# cached kernel: linux-headers-KVER, its -common, linux-kbuild-* and the
# linux-compiler-* package, at the versions kernels.sh unpacked.
cmd_headers() {
	local series=$1 stamp dir p name ver want=()
	stamp=$CACHE/kernels/$series/stamp
	[ -f "$stamp" ] || die "no kernel cache for $series (scripts/kernels.sh fetch $series)"
	dir=$CACHE/pkg-debs/$series
	for p in $(cat "$stamp"); do
		case $p in linux-headers-* | linux-kbuild-*) want+=("$p") ;; esac
	done
	# The headers' compiler package (Debian 6.1: linux-compiler-gcc-12-x86).
	for p in "${want[@]}"; do
		case $p in linux-headers-*-common=*) continue ;; linux-headers-*)
			name=${p%%=*} ver=${p#*=}
			for c in $(apt-cache show "$name=$ver" | sed -n 's/^Depends: //p' | tr ',' '\n' |
				sed -n 's/^ *\(linux-compiler-[^ ]*\).*/\1/p'); do
				want+=("$c=$ver")
			done ;;
		esac
	done
	if [ ! -f "$dir/.complete" ] || [ "$(cat "$dir/.complete")" != "${want[*]}" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		(cd "$dir" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "${want[@]}") >&2 ||
			die "apt-get download ${want[*]} failed"
		echo "${want[*]}" >"$dir/.complete"
	fi
	ls "$dir"/*.deb
}

cmd_build() {
	local series=$1 root new kver want debs
	[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot)"
	case $series in
	7.2)
		"$repo/scripts/sid-root.sh" build 7.2 >&2
		cmd_headers 7.2 >/dev/null
		return 0 ;;
	6.1) ;;
	*) root_of "$series" ;;
	esac
	"$repo/scripts/kernels.sh" fetch "$series" >&2
	kver=$("$repo/scripts/kernels.sh" kver "$series")
	debs=$(cmd_headers "$series")
	root=$(root_of "$series")
	want="layout=$LAYOUT suite=bookworm packages=${BOOKWORM_PKGS// /,} headers=$(cat "$CACHE/pkg-debs/$series/.complete" | tr ' ' ,)"
	stage_lock "$root"
	if [ -f "$root/.codectl-stamp" ] && [ "$(cat "$root/.codectl-stamp")" = "$want" ]; then
		echo "pkg-root.sh: $root up to date" >&2
		return 0
	fi
	if ! command -v debootstrap >/dev/null; then
		echo "pkg-root.sh: installing debootstrap" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
	fi
	new=$root.new
	rm -rf "$new"
	echo "pkg-root.sh: debootstrap bookworm into $new with: $BOOKWORM_PKGS" >&2
	debootstrap --variant=minbase --components=main --include="${BOOKWORM_PKGS// /,}" \
		bookworm "$new" "$MIRROR" >&2 ||
		die "debootstrap failed (see $new/debootstrap/debootstrap.log)"
	# The headers, installed with apt as a user would (their Depends,
	# gcc-12 among them, come from bookworm).
	mkdir -p "$new/tmp/debs"
	cp $debs "$new/tmp/debs/"
	unshare -m --propagation private bash -euc '
		mount --rbind /dev "$1/dev"; mount -t proc proc "$1/proc"; mount -t sysfs sysfs "$1/sys"
		chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
			sh -c "apt-get install -y -q --no-install-recommends /tmp/debs/*.deb"
	' pkg-root "$new" >&2 || die "installing the $series headers in $new failed"
	rm -rf "$new/tmp/debs" "$new"/var/cache/apt/archives/*.deb
	chroot "$new" test -f "/lib/modules/$kver/build/Makefile" ||
		die "no /lib/modules/$kver/build/Makefile in $new"
	echo "$want" >"$new/.codectl-stamp"
	rm -rf "$root.old"
	[ ! -e "$root" ] || mv "$root" "$root.old"
	mv "$new" "$root"
	rm -rf "$root.old"
	echo "pkg-root.sh: $root ready ($(du -sh "$root" | cut -f1))" >&2
}

cmd_path() {
	local root
	root=$(root_of "$1") || exit 1
	case $1 in
	6.1) [ -f "$root/.codectl-stamp" ] ||
		die "no package-test root for 6.1 at $root: scripts/pkg-root.sh build 6.1" ;;
	esac
	echo "$root"
}

cmd_run() {
	local series=$1 upper=$2 root binds=() opt host=0
	shift 2
	root=$(cmd_path "$series")
	OPTIND=1
	while getopts "Hb:" opt; do
		case $opt in
		H) host=1 ;;
		b) binds+=("$OPTARG") ;;
		*) die "usage: pkg-root.sh run SERIES UPPER [-b DIR[:IN]]... -- CMD..." ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -gt 0 ] || die "run: no command"
	[ "$(id -u)" = 0 ] || die "run as root (chroot, mount)"
	mkdir -p "$upper/upper" "$upper/work" "$upper/merged"
	# shellcheck disable=SC2016
	unshare -m --propagation private bash -euc '
		lower=$1 up=$2 on_host=$3 nb=$4
		shift 4
		m=$up/merged
		mount -t overlay overlay -o "lowerdir=$lower,upperdir=$up/upper,workdir=$up/work" "$m"
		mount --rbind /dev "$m/dev"
		mount -t proc proc "$m/proc"
		mount -t sysfs sysfs "$m/sys"
		mount -t tmpfs tmpfs "$m/tmp"
		while [ "$nb" -gt 0 ]; do
			host=${1%%:*} in=${1#*:}
			[ "$in" != "$1" ] || in=$host
			mkdir -p "$m$in"
			mount --bind "$host" "$m$in"
			shift; nb=$((nb - 1))
		done
		[ "$on_host" = 0 ] || PKGROOT=$m exec "$@"
		exec chroot "$m" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
	' pkg-root "$root" "$upper" "$host" "${#binds[@]}" "${binds[@]}" "$@"
}

case ${1:-} in
build) cmd_build "${2:?series}" ;;
path) cmd_path "${2:?series}" ;;
headers) cmd_headers "${2:?series}" ;;
run) shift; cmd_run "$@" ;;
*) sed -n '/^#   scripts\/pkg-root.sh build/,/^#  *path)$/{s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
esac
