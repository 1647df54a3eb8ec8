#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stock Debian kernels for building and booting codectl, unpacked into the
# project cache -- never installed on the host.
#
#   scripts/kernels.sh fetch SERIES|all   download and unpack (idempotent);
#                                         "all" is the default run's x86-64
#                                         series (6.1, 6.12, 7.2), any
#                                         other is fetched by name
#   scripts/kernels.sh kver SERIES        print the kernel release (uname -r)
#   scripts/kernels.sh kdir SERIES        print the headers dir (make -C KDIR)
#   scripts/kernels.sh vmlinuz SERIES     print the kernel image path
#   scripts/kernels.sh vmlinux SERIES     print the uncompressed ELF kernel
#                                         (for QEMU's faster PVH boot)
#   scripts/kernels.sh root SERIES        print the unpacked package root
#   scripts/kernels.sh release SERIES     print the Debian release the
#                                         kernel is of (its first suite
#                                         less -security, -backports,
#                                         -updates): bookworm, the host's,
#                                         or the root of scripts/sid-root.sh
#                                         its modules are built in; of a
#                                         local series, its source's
#   scripts/kernels.sh list [compile]     print the supported series (or
#                                         the default run's compile-only
#                                         ones)
#   scripts/kernels.sh fetch compile      fetch those
#
# debug-6.12 is not downloaded: scripts/debug-kernel.sh builds it from
# Debian's 6.12 source in the same layout (`fetch debug-6.12` runs it);
# every other command treats it as a series.  So are fedora and ubuntu,
# Debian's 7.2 and 6.12 sources built with Fedora's and Ubuntu's
# configurations by scripts/distro-kernel.sh.
#
# A series is resolved to the newest linux-image-amd64 / linux-headers-amd64
# meta package version found in its archives (`apt-cache madison`); a
# series named SERIES-rt to Debian's PREEMPT_RT flavour, linux-image-rt-amd64
# / linux-headers-rt-amd64; a
# series named SERIES-arm64 to linux-image-arm64 / linux-headers-arm64
# (`dpkg --add-architecture arm64` first: scripts/setup.sh does it).  Its
# headers use the host's (amd64) linux-kbuild-* tools (Multi-Arch: foreign),
# so that `make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-` builds modules
# for it (the headers' .kernelvariables set both).  The
# concrete packages (linux-image-KVER, linux-headers-KVER, -common and
# linux-kbuild-*) are read from the metas' Depends, downloaded with
# `apt-get download PKG=VERSION` and unpacked with `dpkg-deb -x` into
#
#   $CACHE/kernels/SERIES/root/      boot/{vmlinuz,System.map,config}-KVER
#                                    (7.x: links to lib/modules/KVER/*),
#                                    lib/modules/KVER/modules.{order,builtin,
#                                    builtin.modinfo} (the image's .ko files
#                                    are deleted), usr/src/linux-headers-*,
#                                    usr/lib/linux-kbuild-*
#                                    bin/busybox (SERIES-arm64: the guests'
#                                    userland, from busybox-static:arm64)
#   $CACHE/kernels/SERIES/kver       kernel release, e.g. 6.1.0-57-amd64
#   $CACHE/kernels/SERIES/kdir       symlink to root/usr/src/linux-headers-KVER
#   $CACHE/kernels/SERIES/vmlinux    the ELF kernel inside vmlinuz (CONFIG_PVH)
#   $CACHE/kernels/SERIES/stamp      what was unpacked (meta version + packages)
#
# CACHE is <repo>/.cache unless CODECTL_CACHE is set.  The headers' Makefile
# includes the -common Makefile by absolute path; it is rewritten to point
# into the cache, so moving the cache needs a re-fetch (delete the stamp).
set -euo pipefail

# Series table: name, then the archives (as `apt-cache madison` prints the
# suite, before "/main") whose linux-image-amd64 may be used.  The newest
# version among them wins.  Adding a series is one line here.  The headers
# of another release than bookworm (bullseye's 5.10: gcc-10, trixie's
# backports 7.3: gcc-14, sid's 7.2: gcc-16) are built with another gcc
# than bookworm's, and their linux-kbuild with another libc:
# build-module.sh builds for them in a root of that release
# (scripts/sid-root.sh build SERIES; `release` below names it).  The
# series "all" fetches are the first three (the default run's); the
# others are fetched by name.
SERIES_TABLE=(
	"6.1   bookworm bookworm-security"
	"6.12  bookworm-backports"
	"7.2   sid"
	"5.10  bullseye bullseye-security"
	"7.3   trixie-backports"
	"6.12-rt  bookworm-backports"
	"7.3-rt   trixie-backports"
	"6.1-arm64   bookworm bookworm-security"
	"6.12-arm64  bookworm-backports"
	"7.2-arm64   sid"
	"7.3-arm64   trixie-backports"
)

# The series of "fetch all": the default run's x86-64 kernels.
DEFAULT_SERIES=(6.1 6.12 7.2)
# The series of "fetch compile", "list compile": those the default run
# (scripts/check.sh) only compiles the module for, sparse-clean; their
# guest stages are in the longer target (make check-kernels).
COMPILE_SERIES=(5.10 7.3 6.12-rt 7.3-rt 7.3-arm64)

# Series built here from Debian's source rather than downloaded, each with
# the command that builds it into the same layout (not part of "all", and
# not fetched: `fetch` runs that command).
LOCAL_SERIES=(
	"debug-6.12 scripts/debug-kernel.sh build"
	"debug-6.12-rt scripts/debug-kernel.sh build debug-6.12-rt"
	"fedora scripts/distro-kernel.sh build fedora"
	"ubuntu scripts/distro-kernel.sh build ubuntu"
)
# The Debian series whose source each local series is built from: its
# archives are theirs (`release`: the perf its tracer stage takes).
LOCAL_BASE=("debug-6.12 6.12" "debug-6.12-rt 6.12-rt" "fedora 7.2" "ubuntu 6.12")

# Bump when the cache layout below changes: stamps then no longer match and
# the next fetch redoes the unpack.
LAYOUT=2

# Meta packages resolved per series (they pull the concrete ABI packages):
# linux-image-FLAVOUR / linux-headers-FLAVOUR, FLAVOUR from the series'
# name: its architecture, with rt- for Debian's PREEMPT_RT kernels.
series_arch() {
	case $series in
	*-arm64) echo arm64 ;;
	*) echo amd64 ;;
	esac
}

series_flavour() {
	case $series in
	*-rt) echo "rt-$(series_arch)" ;;
	*) series_arch ;;
	esac
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}

. "$repo/scripts/lib.sh"

# series_names [all]: the series of "fetch all" (DEFAULT_SERIES), or with
# "all" every series of the table.
series_names() {
	local line words
	if [ "${1:-}" != all ]; then
		printf '%s\n' "${DEFAULT_SERIES[@]}"
		return 0
	fi
	for line in "${SERIES_TABLE[@]}"; do
		read -r -a words <<<"$line"
		echo "${words[0]}"
	done
}

# local_builder: the command that builds $series, if it is a local series.
local_builder() {
	local line words
	for line in "${LOCAL_SERIES[@]}"; do
		read -r -a words <<<"$line"
		if [ "${words[0]}" = "$series" ]; then
			echo "${words[*]:1}"
			return 0
		fi
	done
	return 1
}

# series_suites SERIES: the archives of SERIES (of a local series: its
# base's), one per line.
series_suites() {
	local line words s=$series
	for line in "${LOCAL_BASE[@]}"; do
		read -r -a words <<<"$line"
		[ "${words[0]}" != "$s" ] || s=${words[1]}
	done
	for line in "${SERIES_TABLE[@]}"; do
		read -r -a words <<<"$line"
		if [ "${words[0]}" = "$s" ]; then
			printf '%s\n' "${words[@]:1}"
			return 0
		fi
	done
	die "unknown series '$series' (known: $(series_names all | tr '\n' ' '))"
}

# newest_version PKG: the newest version of PKG in one of the series' suites.
# madison lines look like
#   linux-image-amd64 | 6.1.192-3 | http://... bookworm-security/main amd64 Packages
newest_version() {
	local pkg=$1 suites best="" ver where suite
	suites=$(series_suites)
	while IFS='|' read -r _ ver where; do
		ver=${ver// /}
		# Binary packages only: with deb-src lines (debug-kernel.sh
		# adds one), madison lists source packages too.
		[[ $where == *" Packages" ]] || continue
		suite=$(awk '{ split($2, a, "/"); print a[1] }' <<<"$where")
		grep -qxF "$suite" <<<"$suites" || continue
		if [ -z "$best" ] || dpkg --compare-versions "$ver" gt "$best"; then
			best=$ver
		fi
	done < <(apt-cache madison "$pkg")
	[ -n "$best" ] || die "no $pkg for series $series in: ${suites//$'\n'/ }"
	echo "$best"
}

# depends PKG VERSION: "name version" for each Depends entry of PKG=VERSION
# (first alternative only; version from an "=" or ">=" constraint, else "-").
depends() {
	apt-cache show "$1=$2" |
		awk '/^Depends:/ && !seen++ { sub(/^Depends: */, ""); print }' |
		tr ',' '\n' |
		sed -E 's/\|.*//; s/^ *//; s/ *$//' |
		sed -E 's/^([^ ]+) \((=|>=) ([^)]+)\)$/\1 \3/; t; s/^([^ ]+).*/\1 -/'
}

# pick REGEX: first "name version" line (from stdin) whose name matches.
pick() {
	awk -v re="$1" '!found && $1 ~ re { print; found = 1 } END { exit !found }'
}

# resolve: set meta_ver and pkgs=("name=version" ...) for $series.
resolve() {
	local img hdr common kbuild hdr_name hdr_ver
	IMAGE_META=linux-image-$(series_flavour)
	HEADERS_META=linux-headers-$(series_flavour)
	meta_ver=$(newest_version "$IMAGE_META")
	img=$(depends "$IMAGE_META" "$meta_ver" | pick '^linux-image-') ||
		die "$IMAGE_META=$meta_ver: no linux-image-* in Depends"
	hdr=$(depends "$HEADERS_META" "$meta_ver" | pick '^linux-headers-') ||
		die "$HEADERS_META=$meta_ver: no linux-headers-* in Depends"
	read -r hdr_name hdr_ver <<<"$hdr"
	[ "$hdr_ver" != - ] || hdr_ver=$meta_ver
	# The rt flavour's headers of 6.12 have their own -common-rt.
	common=$(depends "$hdr_name" "$hdr_ver" | pick '^linux-headers-.*-common(-rt)?$') ||
		die "$hdr_name: no linux-headers-*-common in Depends"
	kbuild=$(depends "$hdr_name" "$hdr_ver" | pick '^linux-kbuild-') ||
		die "$hdr_name: no linux-kbuild-* in Depends"
	# From 7.x (sid) linux-image-KVER is empty: the kernel is in
	# linux-binary-KVER (usr/lib/modules/KVER/vmlinuz) and System.map,
	# config and modules.* in linux-base-KVER; the modules themselves
	# (linux-modules-KVER, 110 MB) are not needed.
	local img_name img_ver split=()
	read -r img_name img_ver <<<"$img"
	[ "$img_ver" != - ] || img_ver=$meta_ver
	split=($(depends "$img_name" "$img_ver" | grep -E '^linux-(base-[0-9]|binary-)' |
		tr ' ' '=' || true))
	# All come from the same source package: an unversioned
	# dependency means the headers' own version.
	pkgs=()
	local p name ver
	for p in "$img" "${split[@]/=/ }" "$hdr" "$common" "$kbuild"; do
		read -r name ver <<<"$p"
		[ "$ver" != - ] || ver=$hdr_ver
		pkgs+=("$name=$ver")
	done
	# Another architecture's guests cannot run the host's programs: its
	# busybox-static (bin/busybox in root) is their userland
	# (scripts/vm-run.sh).
	if [ "$(series_arch)" != amd64 ]; then
		local bb=busybox-static:$(series_arch)
		ver=$(apt-cache policy "$bb" | awk '/Candidate:/ { print $2 }')
		[ -n "$ver" ] && [ "$ver" != "(none)" ] ||
			die "no $bb (dpkg --add-architecture $(series_arch); apt-get update)"
		pkgs+=("$bb=$ver")
	fi
}

# extract_vmlinux BZIMAGE OUT: write the ELF kernel compressed inside
# BZIMAGE to OUT.  QEMU boots such an ELF through its PVH entry point, which
# skips the decompressor: under TCG that saves ~2.5 s per boot of the
# xz-compressed 6.1 image.  Tries each compressor's magic, like the kernel's
# scripts/extract-vmlinux; decompressors may complain about the trailing
# bytes, so success is judged by the ELF magic of the result.
extract_vmlinux() {
	local img=$1 out=$2 z off
	local -A magic=([xz]=$'\xfd7zXZ' [zstd]=$'(\xb5/\xfd' [gzip]=$'\x1f\x8b\x08')
	for z in xz zstd gzip; do
		off=$(LC_ALL=C grep -abo -F "${magic[$z]}" "$img" | sed -n 1p | cut -d: -f1)
		[ -n "$off" ] || continue
		tail -c +$((off + 1)) "$img" | "$z" -dc >"$out" 2>/dev/null || true
		[ "$(head -c 4 "$out" | od -An -c | tr -d ' ')" = '177ELF' ] && return 0
	done
	rm -f "$out"
	return 1
}

# fetch_series: download and unpack $series unless the stamp says it's done.
# The unpack happens in SERIES.new, which then replaces SERIES in one rename,
# so builds and VMs using the old tree are not pulled from under their feet.
fetch_series() {
	local final=$CACHE/kernels/$series meta_ver pkgs want
	resolve
	want="layout=$LAYOUT $IMAGE_META=$meta_ver ${pkgs[*]}"
	if [ -f "$final/stamp" ] && [ "$(cat "$final/stamp")" = "$want" ] && complete; then
		echo "kernels.sh: $series up to date ($want)"
		return 0
	fi
	echo "kernels.sh: $series: fetching ${pkgs[*]}"

	local dir=$final.new
	rm -rf "$dir"
	debs_unpack "$dir/debs" "$dir/root" "${pkgs[@]}" ||
		die "$series: apt-get download or unpacking failed"
	rm -rf "$dir/debs"

	local root=$dir/root kver moddir f link target
	# The kernel release is the one directory under lib/modules that the
	# image filled (boot/vmlinuz-KVER, or from 7.x lib/modules/KVER/vmlinuz,
	# must exist for it).
	for moddir in "$root"/lib/modules/* "$root"/usr/lib/modules/*; do
		kver=${moddir##*/}
		[ -f "$root/boot/vmlinuz-$kver" ] && break
		if [ -f "$moddir/vmlinuz" ]; then
			# 7.x layout: offer the classic boot/ names as well.
			mkdir -p "$root/boot"
			for f in vmlinuz System.map config; do
				[ -f "$moddir/$f" ] || die "$series: no $f in ${moddir#"$root"/}"
				ln -sfn "$(realpath -m --relative-to="$root/boot" "$moddir/$f")" \
					"$root/boot/$f-$kver"
			done
			break
		fi
		kver=
	done
	[ -n "${kver:-}" ] || die "$series: no boot/vmlinuz-* matching lib/modules/*"
	# Newer (usrmerged) packages use usr/lib/modules: offer lib/modules too.
	[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"

	# Drop the image's modules (~400 MB); keep only the metadata that
	# modprobe/depmod need to know what is built in.
	for f in "$moddir"/*; do
		case ${f##*/} in
		modules.order | modules.builtin | modules.builtin.modinfo | build | source) ;;
		vmlinuz | System.map | config) ;; # the 7.x layout
		*) rm -rf "$f" ;;
		esac
	done

	# Absolute symlinks (lib/modules/KVER/{build,source}) would point into
	# the host: make them relative inside root.
	while IFS= read -r link; do
		target=$(readlink "$link")
		ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
	done < <(find "$root" -type l -lname '/*')

	# The arch headers' Makefile is one line including the -common one by
	# absolute path (from 7.x after a KBUILD_OUTPUT= line with its own
	# absolute path): point them at the final place of root.
	local kdir=$root/usr/src/linux-headers-$kver
	[ -f "$kdir/Makefile" ] || die "$series: no headers dir $kdir"
	sed -i -E "s#^include /usr/src/#include $final/root/usr/src/#" "$kdir/Makefile"
	grep -Eq "^include $final/root/usr/src/linux-headers-.*-common(-rt)?/Makefile" "$kdir/Makefile" ||
		die "$series: unexpected $kdir/Makefile: $(cat "$kdir/Makefile")"
	# From 7.x it also names itself as the output directory.
	sed -i -E "s#^KBUILD_OUTPUT=/usr/src/#KBUILD_OUTPUT=$final/root/usr/src/#" "$kdir/Makefile"

	# Debian's 7.2 linux-kbuild lacks scripts/checker-valid.sh, which the
	# Makefile runs for C=1/C=2: without it kbuild says sparse "is not
	# available" and checks nothing.  Its contract: print 1 if the checker
	# (with CHECKFLAGS) parses __typeof_unqual__ without an error, else 0.
	# (-common is the one the headers' Makefile includes: the rt
	# flavour's is not named after the kernel release less its flavour.)
	local common
	common=$(sed -n -E "s#^include $final/(root/usr/src/[^/]+)/Makefile\$#$dir/\1#p" "$kdir/Makefile")
	if grep -q 'scripts/checker-valid.sh' "$common/Makefile" 2>/dev/null &&
	   [ ! -e "$common/scripts/checker-valid.sh" ] && [ -d "$common/scripts" ]; then
		cat >"$common/scripts/checker-valid.sh" <<-'CHECKER'
		#!/bin/sh
		# Written by codectl's kernels.sh: the kernel's own script is
		# missing from this linux-kbuild package.  Prints 1 if the checker
		# "$@" knows __typeof_unqual__, else 0.
		command -v "$1" >/dev/null 2>&1 || { echo 0; exit 0; }
		t=$(mktemp --suffix=.c) || { echo 0; exit 0; }
		printf 'int f(const int *p) { __typeof_unqual__(*p) x = *p; return x; }\n' >"$t"
		if "$@" "$t" 2>&1 | grep error >/dev/null; then echo 0; else echo 1; fi
		rm -f "$t"
		CHECKER
		chmod 755 "$common/scripts/checker-valid.sh"
	fi

	# Uncompressed kernel for QEMU's PVH entry (see extract_vmlinux).
	if grep -q '^CONFIG_PVH=y' "$root/boot/config-$kver"; then
		extract_vmlinux "$root/boot/vmlinuz-$kver" "$dir/vmlinux" ||
			echo "kernels.sh: $series: no vmlinux extracted, VMs boot the bzImage" >&2
	fi

	echo "$kver" >"$dir/kver"
	ln -sfn "root/usr/src/linux-headers-$kver" "$dir/kdir"
	echo "$want" >"$dir/stamp"

	rm -rf "$final.old"
	[ ! -e "$final" ] || mv "$final" "$final.old"
	mv "$dir" "$final"
	rm -rf "$final.old"
	echo "kernels.sh: $series: $kver unpacked in $final/root"
}

# complete: true if every file the other commands hand out is in place
# (a stamp alone is not trusted: cleanups have deleted modules.order before).
complete() {
	local dir=$CACHE/kernels/$series kver f
	[ -f "$dir/stamp" ] && [ -f "$dir/kver" ] || return 1
	kver=$(cat "$dir/kver")
	for f in boot/vmlinuz-$kver boot/System.map-$kver boot/config-$kver \
		lib/modules/$kver/modules.order lib/modules/$kver/modules.builtin \
		lib/modules/$kver/modules.builtin.modinfo \
		usr/src/linux-headers-$kver/Makefile \
		$([ "$(series_arch)" = amd64 ] || echo bin/busybox); do
		[ -f "$dir/root/$f" ] || { echo "kernels.sh: $series: missing $f" >&2; return 1; }
	done
}

# need_fetched: fail unless $series was fetched completely.
need_fetched() {
	local builder
	if builder=$(local_builder); then
		[ -f "$CACHE/kernels/$series/stamp" ] && complete ||
			die "series $series not built: run $builder"
		return 0
	fi
	series_suites >/dev/null # validates the name
	[ -f "$CACHE/kernels/$series/stamp" ] ||
		die "series $series not fetched: run scripts/kernels.sh fetch $series"
	complete || die "series $series incomplete: run scripts/kernels.sh fetch $series"
}

usage() {
	cat >&2 <<-EOF
	usage: scripts/kernels.sh fetch SERIES|all
	       scripts/kernels.sh kver|kdir|vmlinuz|vmlinux|root|release SERIES
	       scripts/kernels.sh list
	series: $(series_names all | tr '\n' ' ')
	EOF
	exit 2
}

[ $# -ge 1 ] || usage
cmd=$1
series=${2:-}
case $cmd in
list)
	if [ "$series" = compile ]; then
		printf '%s\n' "${COMPILE_SERIES[@]}"
	else
		series_names all
	fi
	;;
release)
	[ -n "$series" ] || usage
	series_suites | sed -n 1p | sed -E 's/-(security|backports|updates)$//'
	;;
fetch)
	[ -n "$series" ] || usage
	# One fetch at a time (setup.sh and test runs may overlap).
	mkdir -p "$CACHE/kernels"
	exec 9>"$CACHE/kernels/.lock"
	flock 9
	if builder=$(local_builder); then
		flock -u 9
		read -r -a builder <<<"$builder"
		exec "$repo/${builder[0]}" "${builder[@]:1}"
	elif [ "$series" = all ]; then
		for series in $(series_names); do fetch_series; done
	elif [ "$series" = compile ]; then
		for series in "${COMPILE_SERIES[@]}"; do fetch_series; done
	else
		fetch_series
	fi
	;;
kver | kdir | vmlinuz | vmlinux | root)
	[ -n "$series" ] || usage
	need_fetched
	dir=$CACHE/kernels/$series
	kver=$(cat "$dir/kver")
	case $cmd in
	kver) echo "$kver" ;;
	kdir) readlink -f "$dir/kdir" ;;
	vmlinuz) echo "$dir/root/boot/vmlinuz-$kver" ;;
	vmlinux)
		[ -f "$dir/vmlinux" ] || die "$series: no uncompressed vmlinux (kernel without CONFIG_PVH?)"
		echo "$dir/vmlinux"
		;;
	root) echo "$dir/root" ;;
	esac
	;;
*)
	usage
	;;
esac
