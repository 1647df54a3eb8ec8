#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The toolchain of kernels that bookworm cannot build for: a minimal Debian
# sid root (debootstrap) with the compiler the kernel was built with, make,
# what sid's linux-kbuild Depends on (pahole, libelf, libssl, zlib),
# sparse (make sparse, check.sh's build stage) and dkms.  Builds for such a kernel run in it
# with chroot, so the module is compiled by the kernel's own gcc -- as on a
# sid machine with linux-headers installed.  Nothing is installed on the
# host but debootstrap; the root lives in the project cache.
#
#   scripts/sid-root.sh build [SERIES]   create the root (idempotent) with
#                                        the gcc of SERIES (default 7.2,
#                                        fetched first; 7.2-arm64: also
#                                        its aarch64 cross gcc); installs
#                                        debootstrap on the host if missing
#   scripts/sid-root.sh path             print the root; exit 1 (and say
#                                        how to build it) if it is absent
#   scripts/sid-root.sh has-cc COMMAND   exit 0 if the root has COMMAND
#   scripts/sid-root.sh run [-b DIR[:IN]]... [-r DIR[:IN]]... [-C DIR] -- CMD...
#                                        run CMD in the root, as root, in a
#                                        private mount namespace: each -b
#                                        DIR is bind-mounted read-write at
#                                        IN (default: the same path), each
#                                        -r read-only; cwd DIR (default /)
#
# Where: $CODECTL_SID_ROOT, else $CACHE/sid-root (CACHE is <repo>/.cache
# unless CODECTL_CACHE is set).  The root is made in ROOT.new and renamed
# when complete, under a lock; runs never write into it (scratch state is
# bind-mounted by the caller), so concurrent runs share it safely.  It
# takes about 500 MB and under a minute to build (39 s here).  Needs root
# (chroot, mount).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
ROOT=${CODECTL_SID_ROOT:-$CACHE/sid-root}
MIRROR=http://deb.debian.org/debian

# Bump when the package list or the layout changes: the stamp then no
# longer matches and the next build redoes the root.
LAYOUT=1

. "$repo/scripts/lib.sh"

# packages GCC_MAJOR [ARCH]: what the root holds besides debootstrap's
# minbase, for a kernel of ARCH (default amd64).
packages() {
	# gcc-N: the kernel's compiler (x86_64-linux-gnu-gcc-N); make;
	# libc6-dev for kbuild's compiler tests; linux-kbuild's Depends
	# (pahole, libelf1t64, libssl3t64, zlib1g); kmod, dkms (with its
	# Depends), xz-utils and zstd (module compression), openssl (dkms
	# signs modules as on a real machine), sparse.
	echo "gcc-$1 make libc6-dev pahole libelf1t64 libssl3t64 zlib1g kmod dkms xz-utils zstd openssl sparse"
	# sid's arm64 kernel (7.2-arm64): Debian builds it natively with
	# aarch64-linux-gnu-gcc-N; build-module.sh cross-builds with the
	# cross compiler of the same name and version.
	[ "${2:-amd64}" != arm64 ] || echo "gcc-$1-aarch64-linux-gnu"
}

# The packages of the root's stamp, one per line (none if it has none).
have_packages() {
	sed -n "s/^layout=$LAYOUT suite=sid packages=//p" "$ROOT/.codectl-stamp" 2>/dev/null |
		tr ',' '\n'
}

complete() {
	[ -f "$ROOT/.codectl-stamp" ] && [ -x "$ROOT/usr/bin/make" ] &&
		[ -x "$ROOT/usr/sbin/dkms" ]
}

how_to_build() {
	echo "build it with 'make toolchain-7.2' (scripts/sid-root.sh build; as root, needs Debian's archive, ~500 MB)"
}

cmd_build() {
	local series=${1:-7.2} auto gcc_major want arch pkgs missing
	"$repo/scripts/kernels.sh" fetch "$series"
	auto=$("$repo/scripts/kernels.sh" kdir "$series")/include/config/auto.conf
	gcc_major=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' "$auto")
	[ -n "$gcc_major" ] || die "$series: no CONFIG_GCC_VERSION in $auto (not a gcc-built kernel?)"
	case $series in *-arm64) arch=arm64 ;; *) arch=amd64 ;; esac

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
	want="layout=$LAYOUT suite=sid packages=${pkgs// /,}"
	[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot)"
	if ! command -v debootstrap >/dev/null; then
		echo "sid-root.sh: installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
	fi
	local new=$ROOT.new
	rm -rf "$new"
	echo "sid-root.sh: debootstrap sid into $new with: $pkgs"
	debootstrap --variant=minbase --components=main \
		--include="${pkgs// /,}" \
		sid "$new" "$MIRROR" ||
		die "debootstrap failed (see $new/debootstrap/debootstrap.log)"
	# Sanity: the compilers run and have the kernel's version.
	chroot "$new" "x86_64-linux-gnu-gcc-$gcc_major" --version | head -n 1
	[ $arch != arm64 ] ||
		chroot "$new" "aarch64-linux-gnu-gcc-$gcc_major" --version | head -n 1
	rm -rf "$new"/var/cache/apt/archives/*.deb
	echo "$want" >"$new/.codectl-stamp"
	rm -rf "$ROOT.old"
	[ ! -e "$ROOT" ] || mv "$ROOT" "$ROOT.old"
	mv "$new" "$ROOT"
	rm -rf "$ROOT.old"
	echo "sid-root.sh: $ROOT ready ($(du -sh "$ROOT" | cut -f1))"
}

cmd_path() {
	complete || { echo "sid-root.sh: no sid root at $ROOT: $(how_to_build)" >&2; exit 1; }
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

case ${1:-} in
build) shift; cmd_build "$@" ;;
path) cmd_path ;;
has-cc) complete && [ -n "${2:-}" ] && [ -x "$ROOT/usr/bin/$2" ] ;;
run) shift; cmd_run "$@" ;;
*)
	sed -n '/^#   scripts\/sid-root.sh build/,/^#   *cwd DIR/{s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac
