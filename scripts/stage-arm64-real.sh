#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real programs for the arm64 tracer stage (tests/vm/arm64-real.sh): Lua
# 5.4 and SQLite's sqlite3 shell, from Debian bookworm's source packages
# (lua5.4, sqlite3: their upstream .orig tarballs, fetched from Debian's
# pool by the file names and SHA-256 of dists/bookworm/main/source/Sources.xz),
# cross-built for aarch64 as `make -C tests/vm arm64` builds tracee-v3:
# aarch64-linux-gnu-gcc -B binutils-2.47-aarch64/bin/ (scripts/toolchains.sh)
# -O2 -fomit-frame-pointer -Wa,--gsframe (SFrame v3, no frame records),
# dynamic against Debian's arm64 libc (the guest's: scripts/stage-arm64-root.sh),
# and each again with -mbranch-protection=standard (PAC).  Idempotent.
#
#   scripts/stage-arm64-real.sh DIR      prints DIR
#
# DIR/bin/lua, lua-pac, sqlite3, sqlite3-pac.  Lua: src/*.c but luac.c,
# -DLUA_USE_LINUX (the upstream Makefile's linux-noreadline).  sqlite3:
# the amalgamation (sqlite3.c, shell.c), made on the host by the source's
# own `configure && make sqlite3.c shell.c` (tclsh), then cross-built
# with -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION.  Debian's own
# patches (build system, manual pages) are not applied.  The four builds
# run two at a time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=$1
stage_lock "$dir"
mkdir -p "$dir"
top=$(cd "$(dirname "$0")/.." && pwd)
tc=$("$top/scripts/toolchains.sh" dir 2.47-aarch64)
[ -x "$tc/bin/readelf" ] || "$top/scripts/toolchains.sh" fetch >&2
mirror=${CODECTL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
LAYOUT=1
cflags="-B$tc/bin/ -O2 -fomit-frame-pointer -Wa,--gsframe"

mkdir -p "$dir/src"
# Sources.xz once per day at most: its versions are the stamp.
if [ -z "$(find "$dir/src/Sources.xz" -mmin -1440 2>/dev/null)" ]; then
	curl -sSf -o "$dir/src/Sources.xz.new" "$mirror/dists/bookworm/main/source/Sources.xz"
	mv "$dir/src/Sources.xz.new" "$dir/src/Sources.xz"
fi
# orig PKG: "VERSION DIRECTORY SHA256 FILE" of PKG's .orig tarball
orig() {
	xz -dc "$dir/src/Sources.xz" | awk -v p="$1" '
	/^Package: / { on = $2 == p }
	on && /^Version: / { v = $2 }
	on && /^Directory: / { d = $2 }
	on && /^Checksums-Sha256:/ { s = 1; next }
	on && s && /^ / { if ($3 ~ /\.orig\.tar\./) { h = $1; f = $3 } next }
	{ s = 0 }
	on && /^$/ && !done { print v, d, h, f; done = 1 }
	END { if (on && f && !done) print v, d, h, f }'
}
read -r lver ldir lsum lfile <<<"$(orig lua5.4)"
read -r sver sdir ssum sfile <<<"$(orig sqlite3)"
if [ -z "${lfile:-}" ] || [ -z "${sfile:-}" ]; then
	echo "stage-arm64-real.sh: lua5.4 or sqlite3 not in bookworm's Sources" >&2
	exit 1
fi
stamp="lua5.4 $lver sqlite3 $sver layout $LAYOUT $(aarch64-linux-gnu-gcc -dumpfullversion)"
if [ "$(cat "$dir/.version" 2>/dev/null)" = "$stamp" ] &&
   [ -x "$dir/bin/lua-pac" ] && [ -x "$dir/bin/sqlite3-pac" ]; then
	echo "$dir"
	exit 0
fi

# fetch DIRECTORY SHA256 FILE
fetch() {
	if ! echo "$2  $dir/src/$3" | sha256sum -c --status 2>/dev/null; then
		curl -sSf -o "$dir/src/$3" "$mirror/$1/$3"
		echo "$2  $dir/src/$3" | sha256sum -c --status ||
			{ echo "stage-arm64-real.sh: $3: SHA-256 mismatch" >&2; exit 1; }
	fi
}
fetch "$ldir" "$lsum" "$lfile"
fetch "$sdir" "$ssum" "$sfile"

start=$(date +%s)
rm -rf "${dir:?}/build" "${dir:?}/bin"
mkdir -p "$dir/build/lua" "$dir/build/sqlite3" "$dir/bin"
tar -xf "$dir/src/$lfile" -C "$dir/build/lua" --strip-components=1
tar -xf "$dir/src/$sfile" -C "$dir/build/sqlite3" --strip-components=1
# The amalgamation, made by the host's tools (lemon, mkkeywordhash, tclsh).
mkdir -p "$dir/build/sqlite3/bld"
(cd "$dir/build/sqlite3/bld" && ../configure --disable-tcl >configure.log 2>&1 &&
	make -s sqlite3.c shell.c >make.log 2>&1) ||
	{ echo "stage-arm64-real.sh: sqlite3's amalgamation failed: $dir/build/sqlite3/bld" >&2; exit 1; }
amal=$(date +%s)

# build NAME EXTRA-CFLAGS
build() {
	local b=$dir/build/sqlite3/bld
	case $1 in
	lua*)
		# shellcheck disable=SC2046,SC2086 # word lists
		aarch64-linux-gnu-gcc $cflags $2 -DLUA_USE_LINUX -o "$dir/bin/$1" \
			$(find "$dir/build/lua/src" -name '*.c' ! -name luac.c | sort) \
			-Wl,-E -lm -ldl ;;
	sqlite3*)
		# shellcheck disable=SC2086 # word lists
		aarch64-linux-gnu-gcc $cflags $2 -DSQLITE_THREADSAFE=0 \
			-DSQLITE_OMIT_LOAD_EXTENSION -I"$b" -o "$dir/bin/$1" \
			"$b/shell.c" "$b/sqlite3.c" -lm ;;
	esac >"$dir/build/$1.log" 2>&1 ||
		{ echo "stage-arm64-real.sh: $1 failed: $dir/build/$1.log" >&2; return 1; }
	"$tc/bin/readelf" -lW "$dir/bin/$1" | grep GNU_SFRAME >/dev/null ||
		{ echo "stage-arm64-real.sh: $1 has no PT_GNU_SFRAME" >&2; return 1; }
}
pac=-mbranch-protection=standard
build sqlite3 "" & p1=$!
build lua "" & p2=$!
wait $p2 || { wait $p1; exit 1; }
build lua-pac $pac & p2=$!
wait $p1 || { wait $p2; exit 1; }
build sqlite3-pac $pac & p1=$!
wait $p2 && wait $p1 || exit 1
echo "stage-arm64-real.sh: sqlite3's amalgamation $((amal - start)) s," \
	"the four builds $(($(date +%s) - amal)) s" >&2
rm -rf "$dir/build/lua" "$dir/build/sqlite3"
echo "$stamp" >"$dir/.version"
echo "$dir"
