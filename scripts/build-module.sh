#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build codectl.ko for one of the stock kernels in the cache, in a copy of
# the sources of its own (.cache/build/SERIES, $CODECTL_BUILD_DIR/SERIES,
# or with a cache elsewhere ($CODECTL_CACHE) $CODECTL_CACHE/build/TREE/SERIES),
# so that builds for several kernels (or several work trees) never share
# objects.  Prints the path of the built module.
#
#   scripts/build-module.sh SERIES [extra kbuild arguments, e.g. C=2]
#   scripts/build-module.sh --consumer SERIES [...]   also build the test
#       modules tests/vm/consumer and tests/vm/testmod (codectl_test.ko, at
#       consumer/../testmod/) against codectl's symbols; print the
#       consumer's path
#   scripts/build-module.sh --toolchain SERIES
#                   print where SERIES is built: "host", or "RELEASE-root"
#                   (sid-root, trixie-root, bullseye-root: the root of
#                   scripts/sid-root.sh for the Debian release the kernel
#                   is of); exit 1 saying what is missing if it cannot be
#                   built here
#
# A module must be built by the compiler its kernel was built with (the
# first word of CONFIG_CC_VERSION_TEXT in the headers' auto.conf, e.g.
# x86_64-linux-gnu-gcc-16, of the major version of CONFIG_GCC_VERSION).
# When the host has it, the build runs on the host; otherwise, with chroot,
# in the root of the kernel's Debian release (scripts/kernels.sh release:
# sid for 7.2, trixie for 7.3, bullseye for 5.10; make toolchain-SERIES)
# if that has it.  An arm64
# series (SERIES-arm64) is cross-built: make ARCH=arm64
# CROSS_COMPILE=aarch64-linux-gnu-, with the gcc of that name (a kernel
# Debian built natively names its gcc without the prefix).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

# toolchain SERIES: set kdir and where (host|RELEASE-root), or fail with why.
toolchain() {
	local auto cc major have release
	kdir=$(readlink -f "$("$top/scripts/kernels.sh" kdir "$1")") || exit 1
	auto=$kdir/include/config/auto.conf
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\{0,1\}\([^ "]*\).*/\1/p' "$auto")
	major=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' "$auto")
	[ -n "$cc" ] && [ -n "$major" ] ||
		{ echo "build-module.sh: $1: no gcc named in $auto (CONFIG_CC_VERSION_TEXT, CONFIG_GCC_VERSION)" >&2; return 1; }
	cross=()
	case $1 in
	*-arm64)
		cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
		[[ $cc == aarch64-linux-gnu-* ]] || cc=aarch64-linux-gnu-$cc
		;;
	esac
	if command -v "$cc" >/dev/null &&
	   have=$("$cc" -dumpversion 2>/dev/null) && [ "${have%%.*}" = "$major" ]; then
		where=host
	elif release=$("$top/scripts/kernels.sh" release "$1" 2>/dev/null) &&
	     [ "$release" != bookworm ] &&
	     "$top/scripts/sid-root.sh" -s "$release" has-cc "$cc"; then
		where=$release-root
	else
		echo "build-module.sh: $1: the kernel was built with '$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$auto")';" \
			"this machine has no $cc, and no ${release:-sid} root with it: build that toolchain with" \
			"'make toolchain-$1' (scripts/sid-root.sh build $1)" >&2
		return 1
	fi
}

if [ "${1:-}" = --toolchain ]; then
	toolchain "${2:?usage: build-module.sh --toolchain SERIES}" || exit 1
	echo "$where"
	exit 0
fi

consumer=
if [ "${1:-}" = --consumer ]; then
	consumer=1
	shift
fi
series=${1:?usage: build-module.sh [--consumer] SERIES [kbuild args]}
shift
cache=${CODECTL_CACHE:-$top/.cache}
toolchain "$series" || exit 1
# A cache shared by several work trees (CODECTL_CACHE) gets a build
# directory per tree.
if [ -n "${CODECTL_BUILD_DIR:-}" ]; then
	out=$CODECTL_BUILD_DIR/$series
elif [ "$cache" = "$top/.cache" ]; then
	out=$cache/build/$series
else
	out=$cache/build/${top##*/}/$series
fi

# A build with extra arguments (C=2 W=1) always runs, for its output, in
# a directory of its own: the modules a guest of another stage may be
# copying are never removed under it.
[ $# -eq 0 ] || out=$out-args
mkdir -p "$out"
out=$(readlink -f "$out")
# One build at a time in a directory (the stages of scripts/check.sh run
# in two lanes), and none when the same sources were built there already:
# the second caller gets the path of the modules the first built.
exec 8>"$out.lock"
flock 8
# sources_hash DIR...: what a build of these depends on, the kernel's
# configuration included.
sources_hash() {
	find "$@" "$kdir/include/config/auto.conf" "$kdir/include/config/kernel.release" \
		-type f -print0 | sort -z | xargs -0 sha1sum | sha1sum
}
module_srcs=("$top/Kbuild" "$top/module" "$top/shared" "$top/uapi")
want_module=$(sources_hash "${module_srcs[@]}")
want=$want_module stamp=$out/.stamp ko=$out/module/codectl.ko
if [ -n "$consumer" ]; then
	want=$(sources_hash "${module_srcs[@]}" "$top/tests/vm/consumer" "$top/tests/vm/testmod")
	stamp=$out/.stamp-consumer ko=$out/consumer/codectl-consumer.ko
fi
if [ $# -eq 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$ko" ]; then
	echo "$ko"
	exit 0
fi
# codectl.ko is rebuilt only when its sources changed: --consumer after a
# plain build adds the test modules and leaves codectl.ko in place.
rebuild_module=1
if [ $# -eq 0 ] && [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$want_module" ] &&
   [ -f "$out/module/codectl.ko" ] && [ -f "$out/Module.symvers" ]; then
	rebuild_module=0
fi
rm -f "$out/.stamp-consumer"
if [ $rebuild_module -eq 1 ]; then
	rm -f "$out/.stamp"
	# Mirror the module's sources (and only them); stale copies are removed.
	rm -rf "$out/module" "$out/shared" "$out/uapi"
	cp -a "$top/Kbuild" "$out/"
	cp -a "$top/module" "$top/shared" "$top/uapi" "$out/"
	find "$out/module" "$out/shared" -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' | xargs rm -f
fi

# The host's sparse (Debian 12's 0.6.4) knows no __typeof_unqual__, which
# 7.x's kernels need: their scripts/checker-valid.sh says so, and kbuild
# then checks nothing.  For such a kernel built on the host (fedora's, of
# 7.2's source), C= gets sid's sparse from scripts/sid-root.sh's root,
# run by that root's dynamic loader (one binary needing only its libc).
host_check=()
sid=$cache/sid-root
if [ "$where" = host ] && [ -x "$kdir/scripts/checker-valid.sh" ] &&
   [ "$(sh "$kdir/scripts/checker-valid.sh" sparse 2>/dev/null)" != 1 ] &&
   [ -x "$sid/usr/bin/sparse" ]; then
	printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' \
		"$sid/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
		"$sid/usr/lib/x86_64-linux-gnu" "$sid/usr/bin/sparse" >"$out/sparse.tmp"
	chmod +x "$out/sparse.tmp"
	mv "$out/sparse.tmp" "$out/sparse"
	host_check=(CHECK="$out/sparse")
fi

# kbuild M=DIR [args]: with the kernel's own compiler.
kbuild() {
	local dir=$1
	shift
	if [ "$where" = host ]; then
		make -s -C "$kdir" M="$dir" "${cross[@]}" "${host_check[@]}" "$@" modules >&2
	else
		# The kernel's tree read-only and the build directory, each at
		# its own path inside the root, so every absolute path stays valid.
		"$top/scripts/sid-root.sh" -s "${where%-root}" run -r "$(readlink -f "$cache/kernels/$series")" \
			-b "$out" -- make -s -C "$kdir" M="$dir" "${cross[@]}" "$@" modules >&2
	fi
}

[ $rebuild_module -eq 0 ] || kbuild "$out" "$@"
if [ -z "$consumer" ]; then
	[ $# -gt 0 ] || echo "$want" >"$stamp"
	echo "$ko"
	exit 0
fi
# --consumer: the test module of tests/vm/consumer, a user of codectl's
# exported API, built against codectl's Module.symvers; its path is printed.
rm -rf "$out/consumer"
cp -a "$top/tests/vm/consumer" "$out/consumer"
find "$out/consumer" -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' | xargs rm -f
kbuild "$out/consumer" KBUILD_EXTRA_SYMBOLS="$out/Module.symvers" "$@"
# ... and the test module of tests/vm/testmod (codectl_test.ko, the test
# facilities: UNWIND_REQUEST, read/poll, SELFTEST, the NOFAULT walk), at
# consumer/../testmod/codectl_test.ko.
rm -rf "$out/testmod"
cp -a "$top/tests/vm/testmod" "$out/testmod"
find "$out/testmod" -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' | xargs rm -f
kbuild "$out/testmod" KBUILD_EXTRA_SYMBOLS="$out/Module.symvers" "$@"
if [ $# -eq 0 ]; then
	echo "$want" >"$stamp"
	echo "$want_module" >"$out/.stamp"	# codectl.ko was built too
fi
echo "$ko"
