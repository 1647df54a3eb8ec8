#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# For the on-demand tests' container (tests/vm/ondemand.sh, "a
# container"):
#
#   scripts/stage-container.sh image DIR [ARCH]
#       the image (of ARCH: amd64, the default, or arm64): Debian 13's
#       python3.13 with its own glibc (not the
#       host's Debian 12 one), unpacked from the archive's packages into
#       DIR/root, with the merged-/usr links a Debian root has, and as
#       DIR/image.tar (scripts/vm-run.sh copies files, not links), for a
#       guest to unpack, mount under overlayfs and chroot into
#   scripts/stage-container.sh overlay SERIES DIR
#       the kernel's overlayfs module, uncompressed (DIR/overlay.ko), from
#       its Debian package (the
#       cached kernels keep no modules), into DIR; nothing when the
#       series is no Debian package's (fedora, ubuntu and the debug
#       kernels are built without modules)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)

image() {
	local dir=$1 arch=${2:-amd64} l p pkgs=()
	stage_lock "$dir"
	[ ! -s "$dir/image.tar" ] || return 0
	rm -rf "$dir/root" "$dir/debs"
	# python3.13-minimal's dependencies, all of trixie.
	for p in python3.13-minimal libpython3.13-minimal libc6 libexpat1 zlib1g; do
		pkgs+=("$p:$arch/trixie")
	done
	debs_unpack "$dir/debs" "$dir/root" "${pkgs[@]}"
	for l in bin lib lib64 sbin; do
		mkdir -p "$dir/root/usr/$l"
		[ -L "$dir/root/$l" ] || ln -s "usr/$l" "$dir/root/$l"
	done
	mkdir -p "$dir/root/proc" "$dir/root/tmp"
	rm -rf "$dir/debs"
	[ "$arch" != "$(dpkg --print-architecture)" ] ||
		chroot "$dir/root" /usr/bin/python3.13 -I -S -c pass ||
		die "$dir: python3.13 does not run in its root"
	tar -C "$dir/root" -cf "$dir/image.tar.tmp" .
	mv "$dir/image.tar.tmp" "$dir/image.tar"
}

overlay() {
	local series=$1 dir=$2 pkg pkgs=() deb
	stage_lock "$dir"
	[ ! -s "$dir/overlay.ko" ] || return 0
	# The package that holds the modules: linux-image-ABI (to 6.12), or
	# linux-modules-ABI (7.x, whose linux-image-ABI is a meta package).
	read -r -a pkgs <<<"$(tr ' ' '\n' <"$("$top/scripts/kernels.sh" root "$series")/../stamp" |
		sed -n 's/^linux-image-\([0-9]\)/&/p; s/^linux-image-\([0-9].*\)/linux-modules-\1/p' | tr '\n' ' ')"
	[ ${#pkgs[@]} -gt 0 ] || return 0
	rm -rf "$dir/deb" "$dir"/overlay.ko*
	for pkg in "${pkgs[@]}"; do
		# name=version: an arm64 kernel's package is named with its
		# architecture (the host's is amd64).
		case $series in *-arm64) pkg=${pkg%%=*}:arm64=${pkg#*=} ;; esac
		mkdir -p "$dir/deb"
		(cd "$dir/deb" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg") >&2 ||
			continue
		for deb in "$dir"/deb/*.deb; do
			dpkg-deb --fsys-tarfile "$deb" |
				tar -x -C "$dir/deb" --wildcards '*/fs/overlayfs/overlay.ko*' 2>/dev/null || true
		done
		find "$dir/deb" -name 'overlay.ko*' -exec mv {} "$dir/" \;
		rm -rf "$dir/deb"
		# Uncompressed: an arm64 guest's insmod is busybox's, which
		# reads no compressed module.
		if [ -e "$dir/overlay.ko.xz" ]; then
			xz -dc "$dir/overlay.ko.xz" >"$dir/overlay.ko" && rm "$dir/overlay.ko.xz"
		elif [ -e "$dir/overlay.ko.zst" ]; then
			zstd -dcq "$dir/overlay.ko.zst" >"$dir/overlay.ko" && rm "$dir/overlay.ko.zst"
		fi
		[ ! -s "$dir/overlay.ko" ] || return 0
	done
	die "${pkgs[*]}: no overlay.ko"
}

usage() { die "usage: $0 image DIR [ARCH] | overlay SERIES DIR"; }
case ${1:-} in
image) [ $# -eq 2 ] || [ $# -eq 3 ] || usage ;;
overlay) [ $# -eq 3 ] || usage ;;
*) usage ;;
esac
"$@"
