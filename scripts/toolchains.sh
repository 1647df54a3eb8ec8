#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Binutils releases (one per SFrame version) and their libsframe, unpacked
# into the project cache for the SFrame test fixtures and oracles -- never
# installed on the host.
#
#   scripts/toolchains.sh fetch             download and unpack (idempotent)
#   scripts/toolchains.sh list              the toolchain names
#   scripts/toolchains.sh dir NAME          print $CACHE/toolchains/binutils-NAME
#   scripts/toolchains.sh env NAME          print shell assignments for NAME:
#                                           TC_DIR TC_BIN TC_CFLAGS (the gcc -B)
#                                           TC_READELF TC_OBJDUMP TC_SFRAME_VER
#                                           SFRAME_INC SFRAME_LIB (x86-64 only)
#   scripts/toolchains.sh check             print as/ld versions through gcc -B
#                                           and the SFrame version they emit
#
# Toolchains (NAME):
#   2.40          bookworm's own binutils (/usr/bin), emits SFrame v1
#   2.44          trixie binutils, SFrame v2 (flags 0x1, no FUNC_START_PCREL)
#   2.47          sid binutils (2.47.50 snapshot), SFrame v3
#   2.47-aarch64  sid's aarch64-linux-gnu cross binutils (SFrame v3)
#   2.47-s390x    sid's s390x-linux-gnu cross binutils (SFrame v3)
#
# Layout, under $CACHE/toolchains/ (CACHE is <repo>/.cache unless
# CODECTL_CACHE is set):
#   debs/SUITE/*.deb            what `apt-get download PKG/SUITE` fetched
#   root-SUITE/                 those debs unpacked with dpkg-deb -x
#   binutils-NAME/bin/          one-line wrappers as, ld, ld.bfd, objdump,
#                               readelf, objcopy, nm, strip, ar, size,
#                               addr2line: each runs the tool through its own
#                               release's ld.so with --library-path, so that
#                               trixie/sid programs run on bookworm's glibc
#                               host.  `gcc -B binutils-NAME/bin/` then uses
#                               this as (gcc's driver) and this ld (collect2
#                               searches the -B dirs for "ld").
#   binutils-NAME/sframe/       include/{sframe.h,sframe-api.h,ansidecl.h} and
#                               lib/libsframe.a: that release's libsframe, the
#                               oracle (static: the .a needs only GLIBC_2.14)
#   binutils-NAME/stamp         layout + the debs unpacked (idempotency)
#
# Where the libsframe of each release comes from:
#   2.40  bookworm binutils-dev (libsframe.a and headers; libsframe.so.0 is
#         inside libbinutils)
#   2.44  trixie binutils-dev (libsframe.a and headers); libsframe1 is the .so
#   2.47  sid libsframe-dev (libsframe.a and headers; sframe.h includes
#         "ansidecl.h", which sid no longer ships there: a stub is written)
#
# The cross gcc (bookworm's gcc-aarch64-linux-gnu / gcc-s390x-linux-gnu,
# gcc 12) comes from scripts/setup.sh; pair it with the sid assembler and
# linker through `-B binutils-2.47-ARCH/bin/`.
set -euo pipefail

# Bump when the layout changes: stamps then no longer match.
LAYOUT=2

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
TC=$CACHE/toolchains

. "$repo/scripts/lib.sh"

NAMES=(2.40 2.44 2.47 2.47-aarch64 2.47-s390x)

# pkgs_of SUITE: the packages to unpack for SUITE: the binutils, their
# shared libraries and the libc whose ld.so runs them; binutils-dev /
# libsframe-dev for the oracle.
pkgs_of() {
	case "$1" in
	bookworm) echo binutils-dev ;;
	trixie)
		echo binutils-x86-64-linux-gnu libbinutils libctf0 libctf-nobfd0 \
			libsframe1 binutils-common libjansson4 libzstd1 zlib1g libc6 \
			libgcc-s1 binutils-dev
		;;
	sid)
		echo binutils-x86-64-linux-gnu libbinutils libctf0 libctf-nobfd0 \
			libsframe3 libsframe-dev binutils-common libjansson4 libzstd1 \
			zlib1g libc6 libgcc-s1 binutils-aarch64-linux-gnu \
			binutils-s390x-linux-gnu
		;;
	esac
}

TOOLS=(as ld ld.bfd objdump readelf objcopy nm strip ar size addr2line)

suite_of() {
	case "$1" in
	2.40) echo bookworm ;;
	2.44) echo trixie ;;
	2.47|2.47-*) echo sid ;;
	*) die "unknown toolchain '$1' (known: ${NAMES[*]})" ;;
	esac
}

triplet_of() {
	case "$1" in
	*-aarch64) echo aarch64-linux-gnu ;;
	*-s390x) echo s390x-linux-gnu ;;
	*) echo x86_64-linux-gnu ;;
	esac
}

sframe_ver_of() {
	case "$1" in
	2.40) echo 1 ;;
	2.44) echo 2 ;;
	*) echo 3 ;;
	esac
}

# fetch_suite SUITE: download (if needed) and unpack the suite's debs into
# root-SUITE.  The stamp lists the deb files; a present stamp of the same
# layout means done.
fetch_suite() {
	local suite=$1 dl=$TC/debs/$1 root=$TC/root-$1 stamp=$TC/root-$1.stamp
	local pkgs
	read -r -a pkgs <<<"$(pkgs_of "$suite")"
	if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "layout $LAYOUT" ]; then
		return 0
	fi
	mkdir -p "$dl"
	local p want=()
	for p in "${pkgs[@]}"; do
		compgen -G "$dl/${p}_*.deb" >/dev/null || want+=("$p/$suite")
	done
	if [ ${#want[@]} -gt 0 ]; then
		echo "toolchains.sh: downloading ${want[*]}" >&2
		# apt's _apt sandbox user cannot write to the cache; run unsandboxed.
		(cd "$dl" && apt-get download -q -o APT::Sandbox::User=root \
			"${want[@]}" >/dev/null) ||
			die "apt-get download failed (run scripts/setup.sh for the apt sources, then apt-get update)"
	fi
	rm -rf "$root"
	mkdir -p "$root"
	local f
	for f in "$dl"/*.deb; do
		dpkg-deb -x "$f" "$root"
	done
	{ echo "layout $LAYOUT"; (cd "$dl" && ls ./*.deb); } >"$stamp"
}

# make_wrappers NAME: binutils-NAME/bin/ wrappers around that release's
# tools.
make_wrappers() {
	local name=$1 suite dir bin triplet root ldso t target
	suite=$(suite_of "$name")
	triplet=$(triplet_of "$name")
	dir=$TC/binutils-$name
	bin=$dir/bin
	rm -rf "$bin"
	mkdir -p "$bin"
	for t in "${TOOLS[@]}"; do
		if [ "$name" = 2.40 ]; then
			target=/usr/bin/$t
			[ -x "$target" ] || continue
			printf '#!/bin/sh\nexec %q "$@"\n' "$target" >"$bin/$t"
		else
			root=$TC/root-$suite
			ldso=$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
			[ -e "$ldso" ] || ldso=$root/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
			[ -e "$ldso" ] || die "no ld.so in $root"
			target=$root/usr/bin/$triplet-$t
			[ -e "$target" ] || continue
			printf '#!/bin/sh\nexec %q --library-path %q %q "$@"\n' \
				"$ldso" "$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu" \
				"$target" >"$bin/$t"
		fi
		chmod +x "$bin/$t"
	done
	# Cross gcc also looks for TRIPLET-as in its -B dirs on some paths.
	if [ "$triplet" != x86_64-linux-gnu ]; then
		for t in as ld; do ln -sf "$t" "$bin/$triplet-$t"; done
	fi
}

# make_sframe NAME: binutils-NAME/sframe/{include,lib} (x86-64 names only).
make_sframe() {
	local name=$1 suite root dir
	suite=$(suite_of "$name")
	root=$TC/root-$suite
	dir=$TC/binutils-$name/sframe
	rm -rf "$dir"
	mkdir -p "$dir/include" "$dir/lib"
	cp "$root/usr/include/sframe.h" "$root/usr/include/sframe-api.h" "$dir/include/"
	cp "$root/usr/lib/x86_64-linux-gnu/libsframe.a" "$dir/lib/"
	if [ -f "$root/usr/include/ansidecl.h" ]; then
		cp "$root/usr/include/ansidecl.h" "$dir/include/"
	else
		cat >"$dir/include/ansidecl.h" <<'EOF'
/* Stub: libsframe-dev's sframe.h needs only these two.  */
#define ATTRIBUTE_PACKED __attribute__ ((packed))
#define ATTRIBUTE_UNUSED __attribute__ ((unused))
EOF
	fi
}

fetch() {
	mkdir -p "$TC"
	exec 9>"$TC/.lock"
	flock 9
	local suite name stamp want
	for suite in bookworm trixie sid; do
		fetch_suite "$suite"
	done
	for name in "${NAMES[@]}"; do
		stamp=$TC/binutils-$name/stamp
		suite=$(suite_of "$name")
		want="layout $LAYOUT $(md5sum <"$TC/root-$suite.stamp" | cut -d' ' -f1)"
		if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
			continue
		fi
		make_wrappers "$name"
		case "$name" in *-*) ;; *) make_sframe "$name" ;; esac
		echo "$want" >"$stamp"
	done
}

print_env() {
	local name=$1 dir
	suite_of "$name" >/dev/null
	dir=$TC/binutils-$name
	[ -f "$dir/stamp" ] || die "toolchain $name not fetched (run: $0 fetch)"
	echo "TC_DIR=$dir"
	echo "TC_BIN=$dir/bin"
	echo "TC_CFLAGS=-B$dir/bin/"
	echo "TC_READELF=$dir/bin/readelf"
	echo "TC_OBJDUMP=$dir/bin/objdump"
	echo "TC_SFRAME_VER=$(sframe_ver_of "$name")"
	case "$name" in
	*-*) echo "TC_CC=$(triplet_of "$name")-gcc" ;;
	*)
		echo "TC_CC=gcc"
		echo "SFRAME_INC=$dir/sframe/include"
		echo "SFRAME_LIB=$dir/sframe/lib/libsframe.a"
		;;
	esac
}

check_versions() {
	local name cc tmp v
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	for name in "${NAMES[@]}"; do
		eval "$(print_env "$name")"
		cc=$TC_CC
		echo "== $name ($cc -B $TC_BIN/)"
		echo 'int f(int x){return x+1;} int g(int x){return f(x)*2;}' >"$tmp/t.c"
		v=$("$cc" -B"$TC_BIN/" -Wa,--version -c -x c /dev/null -o "$tmp/n.o" 2>&1 </dev/null)
		echo "  as: $(grep -m1 'GNU assembler' <<<"$v")"
		v=$("$cc" -B"$TC_BIN/" -nostdlib -shared -Wl,--version -o "$tmp/n.so" 2>&1)
		echo "  ld: $(grep -m1 'GNU ld' <<<"$v")"
		"$cc" -B"$TC_BIN/" -O2 -fPIC -Wa,--gsframe -c "$tmp/t.c" -o "$tmp/t.o"
		"$cc" -B"$TC_BIN/" -nostdlib -shared "$tmp/t.o" -o "$tmp/t.so"
		v=$("$TC_READELF" --sframe "$tmp/t.so" | sed -n 's/^ *Version: *//p' | sed -n 1p)
		echo "  sframe: $v (expected v$TC_SFRAME_VER)"
	done
}

cmd=${1:-}
case "$cmd" in
fetch) fetch ;;
list) printf '%s\n' "${NAMES[@]}" ;;
dir) [ $# = 2 ] || die "usage: $0 dir NAME"; suite_of "$2" >/dev/null; echo "$TC/binutils-$2" ;;
env) [ $# = 2 ] || die "usage: $0 env NAME"; print_env "$2" ;;
check) check_versions ;;
*) die "usage: $0 fetch|list|dir NAME|env NAME|check" ;;
esac
