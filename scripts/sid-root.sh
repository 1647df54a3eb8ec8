#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The toolchain of kernels that bookworm cannot build for: a minimal root
# of the Debian release the kernel is of (debootstrap; sid for 7.2, trixie
# for trixie-backports' 7.3, bullseye for 5.10: scripts/kernels.sh
# release SERIES), with the compiler the kernel was built with, make,
# what that release's linux-kbuild Depends on (pahole, libelf, libssl,
# zlib), sparse (make sparse, check.sh's build stage) and dkms.  Builds
# for such a kernel run in it with chroot, so the module is compiled by
# the kernel's own gcc, and kbuild's tools run with the libc they were
# built for -- as on a machine of that release with linux-headers
# installed.  Nothing is installed on the host but debootstrap; the roots
# live in the project cache.  (The script keeps the name of its first
# root, sid's.)
#
#   scripts/sid-root.sh build [SERIES]   create the root of SERIES's
#                                        release (idempotent) with the gcc
#                                        of SERIES (default 7.2, fetched
#                                        first; SERIES-arm64: also its
#                                        aarch64 cross gcc); installs
#                                        debootstrap on the host if missing
#   scripts/sid-root.sh [-s RELEASE] path
#                                        print the root of RELEASE (default
#                                        sid); exit 1 (and say how to build
#                                        it) if it is absent
#   scripts/sid-root.sh [-s RELEASE] has-cc COMMAND
#                                        exit 0 if the root has COMMAND
#   scripts/sid-root.sh [-s RELEASE] run [-b DIR[:IN]]... [-r DIR[:IN]]... [-C DIR] -- CMD...
#                                        run CMD in the root, as root, in a
#                                        private mount namespace: each -b
#                                        DIR is bind-mounted read-write at
#                                        IN (default: the same path), each
#                                        -r read-only; cwd DIR (default /)
#
# Where: $CACHE/RELEASE-root ($CODECTL_SID_ROOT for sid if set; CACHE is
# <repo>/.cache unless CODECTL_CACHE is set).  A root is made in ROOT.new
# and renamed when complete, under a lock; runs never write into it
# (scratch state is bind-mounted by the caller), so concurrent runs share
# it safely.  One takes about 500 MB and under a minute to build (sid's:
# 39 s here).  Needs root (chroot, mount).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
MIRROR=http://deb.debian.org/debian

# set_release RELEASE: the root of RELEASE in ROOT.
set_release() {
	RELEASE=$1
	case $RELEASE in
	sid) ROOT=${CODECTL_SID_ROOT:-$CACHE/sid-root} ;;
	bullseye | trixie) ROOT=$CACHE/$RELEASE-root ;;
	*) echo "sid-root.sh: no root for release '$RELEASE' (sid, trixie, bullseye)" >&2; exit 2 ;;
	esac
}
set_release sid

# Bump when the package list or the layout changes: the stamp then no
# longer matches and the next build redoes the root.
LAYOUT=1

. "$repo/scripts/lib.sh"

# packages GCC_MAJOR [ARCH]: what the root of $RELEASE holds besides
# debootstrap's minbase, for a kernel of ARCH (default amd64).
packages() {
	# gcc-N: the kernel's compiler (x86_64-linux-gnu-gcc-N); make;
	# libc6-dev for kbuild's compiler tests; linux-kbuild's Depends
	# (pahole, libelf, libssl, zlib1g: bullseye's are dwarves, libelf1 and
	# libssl1.1, the others' pahole, libelf1t64 and libssl3t64); kmod,
	# dkms (with its Depends), xz-utils and zstd (module compression),
	# openssl (dkms signs modules as on a real machine), sparse.
	# trixie's sparse (0.6.4) does not know __typeof_unqual__, which
	# 7.3's headers use: kbuild then refuses it (checker-valid.sh) and
	# C=2 checks nothing.  Its root gets sid's sparse instead
	# (sparse-from-sid, below: one binary needing only libc >= 2.38).
	case $RELEASE in
	bullseye) echo "gcc-$1 make libc6-dev dwarves libelf1 libssl1.1 zlib1g kmod dkms xz-utils zstd openssl sparse" ;;
	trixie) echo "gcc-$1 make libc6-dev pahole libelf1t64 libssl3t64 zlib1g kmod dkms xz-utils zstd openssl sparse-from-sid" ;;
	*) echo "gcc-$1 make libc6-dev pahole libelf1t64 libssl3t64 zlib1g kmod dkms xz-utils zstd openssl sparse" ;;
	esac
	# An arm64 kernel (7.2-arm64, 7.3-arm64): Debian builds it natively
	# with aarch64-linux-gnu-gcc-N; build-module.sh cross-builds with
	# the cross compiler of the same name and version.
	[ "${2:-amd64}" != arm64 ] || echo "gcc-$1-aarch64-linux-gnu"
}

# The packages of the root's stamp, one per line (none if it has none).
have_packages() {
	sed -n "s/^layout=$LAYOUT suite=$RELEASE packages=//p" "$ROOT/.codectl-stamp" 2>/dev/null |
		tr ',' '\n'
}

complete() {
	[ -f "$ROOT/.codectl-stamp" ] && [ -x "$ROOT/usr/bin/make" ] &&
		[ -x "$ROOT/usr/sbin/dkms" ]
}

how_to_build() {
	local series=SERIES
	[ "$RELEASE" != sid ] || series=7.2
	echo "build it with 'make toolchain-$series' (scripts/sid-root.sh build $series, for a" \
		"SERIES of $RELEASE: scripts/kernels.sh release SERIES; as root, needs Debian's archive, ~500 MB)"
}

cmd_build() {
	local series=${1:-7.2} auto gcc_major want arch pkgs missing
	"$repo/scripts/kernels.sh" fetch "$series"
	auto=$("$repo/scripts/kernels.sh" kdir "$series")/include/config/auto.conf
	gcc_major=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' "$auto")
	[ -n "$gcc_major" ] || die "$series: no CONFIG_GCC_VERSION in $auto (not a gcc-built kernel?)"
	case $series in *-arm64) arch=arm64 ;; *) arch=amd64 ;; esac
	set_release "$("$repo/scripts/kernels.sh" release "$series")"
	[ "$RELEASE" != bookworm ] || die "$series: a bookworm kernel, built on the host (no root)"

	stage_lock "$ROOT"
	# A root made for another series too (7.2 and 7.2-arm64) serves both:
	# up to date when it has every package wanted; else made again with
	# its packages and these.
	pkgs=$(packages "$gcc_major" "$arch" | tr ' ' '\n' | sort -u)
	missing=$(comm -23 <(echo "$pkgs") <(have_packages | sort -u))
	if complete && [ -z "$missing" ]; then
		echo "sid-root.sh: $ROOT up to date ($(cat "$ROOT/.codectl-stamp"))"
		return 0
	fi
	! complete || pkgs=$( (echo "$pkgs"; have_packages) | sort -u)
	pkgs=$(tr '\n' ' ' <<<"$pkgs")
	pkgs=${pkgs% }
	want="layout=$LAYOUT suite=$RELEASE packages=${pkgs// /,}"
	[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot)"
	if ! command -v debootstrap >/dev/null; then
		echo "sid-root.sh: installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
	fi
	local new=$ROOT.new
	rm -rf "$new" "$new.sparse"
	local include=${pkgs/sparse-from-sid/}
	include=$(tr -s ' ' <<<"$include")
	include=${include# }
	include=${include% }
	echo "sid-root.sh: debootstrap $RELEASE into $new with: $include"
	debootstrap --variant=minbase --components=main \
		--include="${include// /,}" \
		"$RELEASE" "$new" "$MIRROR" ||
		die "debootstrap failed (see $new/debootstrap/debootstrap.log)"
	if [[ " $pkgs " == *" sparse-from-sid "* ]]; then
		# sid's sparse binary as /usr/local/bin/sparse (first in the
		# runs' PATH); apt-get download needs the sid suite of
		# scripts/setup.sh's sources.
		debs_unpack "$new.sparse/debs" "$new.sparse/root" sparse/sid ||
			die "apt-get download sparse/sid failed"
		install -D -m 755 "$new.sparse/root/usr/bin/sparse" "$new/usr/local/bin/sparse"
		rm -rf "$new.sparse"
		chroot "$new" sparse --version
	fi
	# Sanity: the compilers run and have the kernel's version.
	chroot "$new" "x86_64-linux-gnu-gcc-$gcc_major" --version | sed -n 1p
	[ $arch != arm64 ] ||
		chroot "$new" "aarch64-linux-gnu-gcc-$gcc_major" --version | sed -n 1p
	rm -rf "$new"/var/cache/apt/archives/*.deb
	echo "$want" >"$new/.codectl-stamp"
	rm -rf "$ROOT.old"
	[ ! -e "$ROOT" ] || mv "$ROOT" "$ROOT.old"
	mv "$new" "$ROOT"
	rm -rf "$ROOT.old"
	echo "sid-root.sh: $ROOT ready ($(du -sh "$ROOT" | cut -f1))"
}

cmd_path() {
	complete || { echo "sid-root.sh: no $RELEASE root at $ROOT: $(how_to_build)" >&2; exit 1; }
	echo "$ROOT"
}

cmd_run() {
	local binds=() ro=() cwd=/ opt spec
	OPTIND=1
	while getopts "b:r:C:" opt; do
		case $opt in
		b) binds+=("$OPTARG") ;;
		r) ro+=("$OPTARG") ;;
		C) cwd=$OPTARG ;;
		*) die "usage: sid-root.sh run [-b DIR[:IN]]... [-r DIR[:IN]]... [-C DIR] -- CMD..." ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -gt 0 ] || die "run: no command"
	cmd_path >/dev/null
	[ "$(id -u)" = 0 ] || die "run as root (chroot, mount)"
	# In a private mount namespace (unshare -m makes every mount private):
	# nothing mounted here is seen by the host, and all of it goes away
	# with the command.  Mount points are created in the root (empty
	# directories, harmless to share).
	# shellcheck disable=SC2016
	unshare -m --propagation private bash -euc '
		root=$1 cwd=$2 nb=$3 nr=$4
		shift 4
		bind() { # HOST[:IN] ro|rw
			local host=${1%%:*} in=${1#*:}
			[ "$in" != "$1" ] || in=$host
			[ -d "$host" ] || { echo "sid-root.sh: $host is not a directory" >&2; exit 1; }
			mkdir -p "$root$in"
			mount --bind "$host" "$root$in"
			[ "$2" = rw ] || mount -o remount,bind,ro "$root$in"
		}
		mount --rbind /dev "$root/dev"
		mount -t proc proc "$root/proc"
		mount -t sysfs sysfs "$root/sys"
		mount -t tmpfs tmpfs "$root/tmp"
		while [ "$nb" -gt 0 ]; do bind "$1" rw; shift; nb=$((nb - 1)); done
		while [ "$nr" -gt 0 ]; do bind "$1" ro; shift; nr=$((nr - 1)); done
		exec chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			/bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
	' sid-root "$ROOT" "$cwd" "${#binds[@]}" "${#ro[@]}" "${binds[@]}" "${ro[@]}" "$@"
}

if [ "${1:-}" = -s ]; then
	set_release "${2:?usage: sid-root.sh -s RELEASE COMMAND}"
	shift 2
fi
case ${1:-} in
build) shift; cmd_build "$@" ;;
path) cmd_path ;;
has-cc) complete && [ -n "${2:-}" ] && [ -x "$ROOT/usr/bin/$2" ] ;;
run) shift; cmd_run "$@" ;;
*)
	sed -n '/^#   scripts\/sid-root.sh build/,/^#   *-r read-only; cwd DIR/{s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac
