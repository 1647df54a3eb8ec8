#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 package test (scripts/check.sh's packages-SERIES-arm64 stage):
# codectl's packages cross-built for arm64 on this x86-64 host, and their
# files run in an arm64 guest of a stock Debian kernel.
#
#  1. the packages are built: scripts/pkg-build.sh --arch arm64 (.debs with
#     dpkg-buildpackage -a arm64, RPMs with rpmbuild --target aarch64;
#     lintian and rpmlint clean) and, to compare with, the host's
#     (scripts/pkg-build.sh), both at once;
#  2. the .debs: the same packages as the host's (amd64 -> arm64, all
#     stays all); each one's Architecture; every ELF file in each arm64
#     package (and every member of libcodectl.a) is AArch64 (readelf -h),
#     and there is at least one; the file lists (path, mode, link target)
#     are the host packages', the multiarch triplet and the -dbgsym
#     packages' build ids aside; the arch-all codectl-dkms has the host
#     build's md5sums;
#  3. the RPMs: the same packages as the host's (x86_64 -> aarch64, noarch
#     stays), each one's ARCH, their payloads (rpm2cpio) list the host
#     RPMs' files, and every ELF file in them is AArch64;
#  4. an arm64 guest (scripts/vm-run.sh -k SERIES) with the files the
#     .debs install (dpkg-deb -x): codectl, codectl-stackdemo and
#     libcodectl.so.1 at their packaged paths, with Debian's arm64
#     libraries that the packages' Depends name (and theirs in turn,
#     apt-get download, cached), the module cross-built for SERIES
#     (scripts/build-module.sh) and the RPMs' codectl and libcodectl.so.1
#     in /rpm: the tool runs and finds the packaged library; without the
#     module `codectl version` and `codectl status` fail and say so; with
#     it, `codectl version`, `codectl status` (the module, its hooks),
#     `codectl self` (registrations through the packaged libcodectl),
#     `codectl-stackdemo` (its stack unwound by the kernel with SFrame),
#     `codectl unwind`, and the RPM's codectl version and self; rmmod.
#
#   scripts/pkg-test-arm64.sh [--debs DIR] [--rpms DIR] [--host-debs DIR]
#                             [--host-rpms DIR] [SERIES]   (default 6.12-arm64)
#
#   --debs, --rpms   the arm64 packages to test (a pkg-build.sh OUTDIR's
#                    deb/ and rpm/RPMS/) instead of building them
#   --host-debs, --host-rpms   the host's packages to compare with
#
# Ends with "N passed, N failed"; exits non-zero on any failure.  Needs
# scripts/setup.sh's arm64 build dependencies; the guest's libraries are
# downloaded once into $CODECTL_CACHE/arm64-pkg-libs.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export CODECTL_CACHE=${CODECTL_CACHE:-$top/.cache}
cache=$CODECTL_CACHE

passed=0 failed=0
. "$top/scripts/lib.sh"
t0=$(date +%s) tp=$t0
# phase NAME: how long the part of the test that ends here took.
phase() { echo "info: $1: $(($(date +%s) - tp))s"; tp=$(date +%s); }
finish() {
	echo "packages $series: $passed passed, $failed failed ($(($(date +%s) - t0))s)"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

debs="" rpms="" hdebs="" hrpms=""
while [ $# -gt 0 ]; do
	case $1 in
	--debs) debs=$(readlink -f "$2"); shift 2 ;;
	--rpms) rpms=$(readlink -f "$2"); shift 2 ;;
	--host-debs) hdebs=$(readlink -f "$2"); shift 2 ;;
	--host-rpms) hrpms=$(readlink -f "$2"); shift 2 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
series=${1:-6.12-arm64}
case $series in *-arm64) ;; *) die "$series: not an arm64 series" ;; esac
harch=$(dpkg --print-architecture) hrpm_arch=$(uname -m)

tmp=$(mktemp -d /tmp/codectl-pkgtest-arm64.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# --- 1. the packages --------------------------------------------------------
pids=()
if [ -z "$debs" ] || [ -z "$rpms" ]; then
	"$top/scripts/pkg-build.sh" --arch arm64 "$tmp/a64" >"$tmp/a64.log" 2>&1 &
	pids+=("$!:a64:pkg-build.sh --arch arm64 (dpkg-buildpackage -a arm64, rpmbuild --target aarch64)")
fi
if [ -z "$hdebs" ] || [ -z "$hrpms" ]; then
	"$top/scripts/pkg-build.sh" "$tmp/host" >"$tmp/host.log" 2>&1 &
	pids+=("$!:host:pkg-build.sh (the host's $harch packages, to compare with)")
fi
for p in "${pids[@]}"; do
	pid=${p%%:*} rest=${p#*:}
	name=${rest%%:*} what=${rest#*:}
	if wait "$pid"; then
		ok "$what: lintian and rpmlint clean ($(grep -h -o 'dpkg-buildpackage.*)$\|rpmbuild.*)$' "$tmp/$name.log" | tr '\n' ' '))"
	else
		sed 's/^/    /' "$tmp/$name.log"; notok "$what"; finish
	fi
done
phase "building the packages"
[ -n "$debs" ] || debs=$tmp/a64/deb
[ -n "$rpms" ] || rpms=$tmp/a64/rpm/RPMS
[ -n "$hdebs" ] || hdebs=$tmp/host/deb
[ -n "$hrpms" ] || hrpms=$tmp/host/rpm/RPMS

# elf_machines DIR: "PATH MACHINE" for every ELF file under DIR (each
# member of an ar archive: one line per member, readelf -h's "Machine:").
elf_machines() {
	local f m
	while IFS= read -r -d '' f; do
		case $(head -c 8 "$f" | od -An -c | tr -d ' ') in
		177ELF*) ;;
		'!<arch>\n') ;;
		*) continue ;;
		esac
		readelf -h "$f" 2>/dev/null | sed -n 's/^ *Machine: *//p' | while IFS= read -r m; do
			echo "${f#"$1"} $m"
		done
	done < <(find "$1" -type f -print0)
}

# build_ids: paths under a .build-id directory with the build id read as
# ID, its two-digit directories left out (ids that share them are as many
# files, fewer directories).
build_ids() {
	sed -E -e '\,\.build-id/[0-9a-f]{2}/?$,d' \
		-e 's,\.build-id/[0-9a-f]{2}/[0-9a-f]+,.build-id/ID,g'
}

# --- 2. the .debs --------------------------------------------------------------
# name_arch of each .deb, the host's with amd64 read as arm64.
list_debs() { for d in "$1"/*.deb; do echo "$(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Architecture)"; done | sort; }
list_debs "$debs" >"$tmp/debs.txt"
list_debs "$hdebs" | sed "s/ $harch\$/ arm64/" >"$tmp/hdebs.txt"
n=$(wc -l <"$tmp/debs.txt")
if [ "$n" -gt 0 ] && diff -u "$tmp/hdebs.txt" "$tmp/debs.txt" >"$tmp/debs.diff"; then
	ok "the same $n .debs as the host's, arm64 for $harch: $(awk '{ printf "%s%s:%s", s, $1, $2; s = " " }' "$tmp/debs.txt")"
else
	sed 's/^/    /' "$tmp/debs.diff"; notok "the .debs and their Architecture (host's: $harch as arm64, all as all)"
fi
while read -r pkg arch; do
	deb=$(ls "$debs/${pkg}_"*"_$arch.deb" 2>/dev/null | sed -n 1p)
	hdeb=$(ls "$hdebs/${pkg}_"*"_$( [ "$arch" = arm64 ] && echo "$harch" || echo "$arch").deb" 2>/dev/null | sed -n 1p)
	[ -n "$deb" ] || { notok "$pkg: no ${pkg}_*_$arch.deb in $debs"; continue; }
	[ -n "$hdeb" ] || { notok "$pkg: no host .deb to compare with in $hdebs"; continue; }
	x=$tmp/x/$pkg hx=$tmp/hx/$pkg
	mkdir -p "$x" "$hx"
	dpkg-deb -x "$deb" "$x" && dpkg-deb -x "$hdeb" "$hx"
	check "$pkg: Architecture $(dpkg-deb -f "$deb" Architecture)" [ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ]
	elf_machines "$x" >"$tmp/elf-$pkg.txt"
	nelf=$(wc -l <"$tmp/elf-$pkg.txt")
	if [ "$arch" = all ]; then
		check "$pkg: no ELF file in an arch-all package" [ "$nelf" -eq 0 ]
		check "$pkg: the same md5sums as the host build's" \
			cmp -s <(dpkg-deb -I "$deb" md5sums) <(dpkg-deb -I "$hdeb" md5sums)
	else
		other=$(grep -v ' AArch64$' "$tmp/elf-$pkg.txt")
		check "$pkg: all $nelf ELF files (archive members counted) AArch64 (readelf -h)${other:+; not:$(echo "$other" | sed -n 1,5p | tr '\n' ';')}" \
			eval '[ "$nelf" -gt 0 ] && [ -z "$other" ]'
	fi
	# The file lists: type and mode, path, link target; the triplet and
	# the build ids (-dbgsym) read alike.
	norm() {
		dpkg-deb -c "$1" | awk '{ $2 = ""; $3 = ""; $4 = ""; $5 = ""; print }' |
			sed -E -e "s/aarch64-linux-gnu|$(dpkg-architecture -a"$harch" -qDEB_HOST_MULTIARCH 2>/dev/null)/TRIPLET/g" \
				-e 's/ +/ /g' | build_ids | sort
	}
	norm "$deb" >"$tmp/files-$pkg.txt"
	norm "$hdeb" >"$tmp/hfiles-$pkg.txt"
	if [ -s "$tmp/files-$pkg.txt" ] && diff -u "$tmp/hfiles-$pkg.txt" "$tmp/files-$pkg.txt" >"$tmp/files.diff"; then
		ok "$pkg: the host package's $(wc -l <"$tmp/files-$pkg.txt") paths, modes and links (triplet aside)"
	else
		sed 's/^/    /' "$tmp/files.diff" | sed -n 1,30p
		notok "$pkg: the file list differs from the host package's"
	fi
done <"$tmp/debs.txt"

phase "checking the .debs"

# --- 3. the RPMs -----------------------------------------------------------------
list_rpms() { find "$1" -name '*.rpm' ! -name '*.src.rpm' -exec rpm -qp --qf '%{NAME} %{ARCH}\n' {} + 2>/dev/null | sort; }
list_rpms "$rpms" >"$tmp/rpms.txt"
list_rpms "$hrpms" | sed "s/ $hrpm_arch\$/ aarch64/" >"$tmp/hrpms.txt"
n=$(wc -l <"$tmp/rpms.txt")
if [ "$n" -gt 0 ] && diff -u "$tmp/hrpms.txt" "$tmp/rpms.txt" >"$tmp/rpms.diff"; then
	ok "the same $n RPMs as the host's, aarch64 for $hrpm_arch: $(awk '{ printf "%s%s.%s", s, $1, $2; s = " " }' "$tmp/rpms.txt")"
else
	sed 's/^/    /' "$tmp/rpms.diff"; notok "the RPMs and their ARCH (host's: $hrpm_arch as aarch64, noarch as noarch)"
fi
while read -r pkg arch; do
	rpm=$(find "$rpms" -name "$pkg-[0-9]*.$arch.rpm" | sed -n 1p)
	harch_r=$arch; [ "$arch" != aarch64 ] || harch_r=$hrpm_arch
	hrpm=$(find "$hrpms" -name "$pkg-[0-9]*.$harch_r.rpm" | sed -n 1p)
	[ -n "$rpm" ] && [ -n "$hrpm" ] || { notok "rpm $pkg: no $pkg-*.$arch.rpm here or no host one"; continue; }
	x=$tmp/rx/$pkg
	mkdir -p "$x"
	(cd "$x" && rpm2cpio "$rpm" | cpio -idm --quiet) || { notok "rpm $pkg: rpm2cpio | cpio"; continue; }
	(rpm2cpio "$rpm" | cpio -it --quiet | build_ids | sort) >"$tmp/rfiles-$pkg.txt"
	(rpm2cpio "$hrpm" | cpio -it --quiet | build_ids | sort) >"$tmp/hrfiles-$pkg.txt"
	if [ -s "$tmp/rfiles-$pkg.txt" ] && diff -u "$tmp/hrfiles-$pkg.txt" "$tmp/rfiles-$pkg.txt" >"$tmp/rfiles.diff"; then
		ok "rpm $pkg: ARCH $arch, its payload (rpm2cpio) has the host RPM's $(wc -l <"$tmp/rfiles-$pkg.txt") paths"
	else
		sed 's/^/    /' "$tmp/rfiles.diff" | sed -n 1,30p
		notok "rpm $pkg: the payload's paths differ from the host RPM's"
	fi
	elf_machines "$x" >"$tmp/relf-$pkg.txt"
	nelf=$(wc -l <"$tmp/relf-$pkg.txt")
	if [ "$arch" = noarch ]; then
		check "rpm $pkg: no ELF file in a noarch package" [ "$nelf" -eq 0 ]
	else
		other=$(grep -v ' AArch64$' "$tmp/relf-$pkg.txt")
		check "rpm $pkg: all $nelf ELF files in the payload AArch64${other:+; not:$(echo "$other" | sed -n 1,5p | tr '\n' ';')}" \
			eval '[ "$nelf" -gt 0 ] && [ -z "$other" ]'
	fi
done <"$tmp/rpms.txt"

phase "checking the RPMs"

# --- 4. the guest ------------------------------------------------------------------
# Debian's arm64 libraries: the packages codectl's and libcodectl1's
# Depends name, and theirs (library packages), downloaded once; from
# them, the files that codectl, codectl-stackdemo and libcodectl.so.1
# need (DT_NEEDED, closed), one per soname.  A soname they do not
# provide fails the test: the Depends would not be enough.
x=$tmp/x
[ -x "$x/codectl/usr/bin/codectl" ] && [ -e "$x/libcodectl1/usr/lib/aarch64-linux-gnu/libcodectl.so.1" ] ||
	{ notok "no codectl or libcodectl.so.1 at their arm64 paths in the .debs"; finish; }
# show PKG...: "P NAME VERSION" for each candidate, and "D DEP" for each
# library package its Depends and Pre-Depends name (first alternative):
# one apt-cache for them all (each reads the whole cache).
show() {
	apt-cache show --no-all-versions "${@/%/:arm64}" | awk '
		/^Package: / { p = $2 }
		/^Version: / { print "P", p, $2 }
		/^(Pre-)?Depends: / {
			sub(/^[^:]*: /, ""); n = split($0, d, ",")
			for (i = 1; i <= n; i++) {
				sub(/\|.*/, "", d[i]); sub(/\(.*/, "", d[i]); gsub(/[ \t]/, "", d[i]); sub(/:any$/, "", d[i])
				if (d[i] ~ /^(lib|zlib1g)/) print "D", d[i]
			}
		}'
}
first=$(for p in codectl libcodectl1; do dpkg-deb -f "$(ls "$debs/${p}_"*_arm64.deb)" Depends; done |
	tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | grep -v '^libcodectl' | sort -u)
declare -A seen=()
level=($first) pkgs=()
while [ ${#level[@]} -gt 0 ]; do
	for d in "${level[@]}"; do seen[$d]=1; done
	next=()
	while read -r kind a b; do
		case $kind in
		P) pkgs+=("$a:arm64=$b") ;;
		D) [ -n "${seen[$a]:-}" ] || { seen[$a]=1; next+=("$a"); } ;;
		esac
	done < <(show "${level[@]}")
	level=("${next[@]}")
done
libs=$cache/arm64-pkg-libs
stamp=$(printf '%s\n' "${pkgs[@]}" | sort | tr '\n' ' ')
(
	flock 9
	if [ "$(cat "$libs/.stamp" 2>/dev/null)" != "$stamp" ]; then
		rm -rf "$libs" && debs_unpack "$libs/debs" "$libs/root" "${pkgs[@]}" &&
		echo "$stamp" >"$libs/.stamp"
	fi
) 9>"$libs.lock" || { notok "apt-get download of ${pkgs[*]}"; finish; }
glib=$tmp/guest-lib
mkdir -p "$glib"
# shellcheck disable=SC2046 # sonames, one word each
missing=$(so_closure "$libs/root" "$glib" '^libcodectl\.so\.1$' \
	$(so_needed "$x/codectl/usr/bin/codectl") $(so_needed "$x/codectl/usr/bin/codectl-stackdemo") \
	$(so_needed "$x/libcodectl1/usr/lib/aarch64-linux-gnu/libcodectl.so.1") ld-linux-aarch64.so.1)
check "Debian's arm64 libraries for the packaged files, from the packages' Depends (${first//$'\n'/ }) and theirs: $(ls "$glib" | wc -l) sonames${missing:+; none provides: $missing}" \
	[ -z "$missing" ]

phase "the guest's libraries"
ko=$("$top/scripts/build-module.sh" "$series" 2>"$tmp/ko.log") ||
	{ sed 's/^/    /' "$tmp/ko.log"; notok "the module cross-built for $series"; finish; }
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
rx=$tmp/rx
cat >"$tmp/guest.sh" <<'GUEST'
set -u
version=$1
n=0 f=0
t() { if "$@"; then echo "ok - $desc"; n=$((n + 1)); else echo "not ok - $desc"; f=$((f + 1)); fi; }
lib=/usr/lib/aarch64-linux-gnu/libcodectl.so.1
desc="codectl runs and loads the packaged $lib (ld.so's list)"
# (/lib is /usr/lib: ld.so may name either.)
t sh -c "LD_TRACE_LOADED_OBJECTS=1 codectl | tee /tmp/ldd; grep -Eq 'libcodectl.so.1 => (/usr)?/lib/aarch64-linux-gnu/libcodectl.so.1 ' /tmp/ldd && ! grep -q 'not found' /tmp/ldd"
desc="codectl --help: exit 0"; t sh -c 'codectl --help >/dev/null'
desc="without the module: codectl version fails"; t sh -c '! codectl version'
desc="without the module: codectl status says not loaded, exit 1"
t sh -c 'codectl status >/tmp/st0; rc=$?; cat /tmp/st0; [ $rc -eq 1 ] && grep -q "^! module  *not loaded" /tmp/st0'
desc="insmod codectl.ko (cross-built)"; t insmod /codectl.ko
desc="codectl version: abi_version"; t sh -c 'codectl version | tee /tmp/v; grep -q "^abi_version  *[1-9]" /tmp/v'
desc="codectl status: module codectl $version, perf's hook attached"
t sh -c 'codectl status >/tmp/st; cat /tmp/st; grep -q "^  module  *codectl $0, ABI [1-9]" /tmp/st &&
	grep -q "^  hooks  *.*perf_callchain_user attached" /tmp/st' "$version"
desc="codectl self: the tool's objects registered through the packaged libcodectl"
t sh -c 'codectl self | tee /tmp/self; grep -Eq "^[1-9][0-9]* registrations$" /tmp/self &&
	grep -q "libcodectl.so.1" /tmp/self'
echo "info: codectl status on arm64: $(grep -c 'not an x86-64 ELF object' /tmp/st) objects 'not an x86-64 ELF object' (the tool's coverage check)"
# Not the x86-64 test's "main and 4 eval frames": the unwind starts in
# libc's ioctl, a leaf without SFrame, and libc cannot be imported on
# arm64 yet (codectl import: Exec format error), so frame pointers take
# over there and skip the program's frames.  What is checked: the demo
# runs, and the kernel's unwinder returns the stack it can.
desc="codectl-stackdemo 3: runs, the kernel unwinder returns frames"
t sh -c 'codectl-stackdemo 3 >/tmp/demo; rc=$?; cat /tmp/demo; [ $rc -eq 0 ] &&
	grep -Eq "^kernel unwinder .*: [1-9][0-9]* frames" /tmp/demo'
echo "info: codectl-stackdemo's main and eval frames found by the kernel unwinder: $(awk '/^$/ { exit } { print }' /tmp/demo | grep -c -E ' (main|eval) \(codectl-stackdemo\)')"
desc="codectl unwind: the unwinds counted"; t sh -c 'codectl unwind | tee /tmp/u; grep -Eq "^unwinds +[1-9]" /tmp/u'
desc="the RPM's codectl version, with the RPM's libcodectl.so.1"
t sh -c 'LD_LIBRARY_PATH=/rpm/usr/lib64 /rpm/usr/bin/codectl version | grep -q "^abi_version  *[1-9]" &&
	LD_LIBRARY_PATH=/rpm/usr/lib64 LD_TRACE_LOADED_OBJECTS=1 /rpm/usr/bin/codectl | grep -q "libcodectl.so.1 => /rpm/usr/lib64/libcodectl.so.1 "'
desc="the RPM's codectl self"
t sh -c 'LD_LIBRARY_PATH=/rpm/usr/lib64 /rpm/usr/bin/codectl self | grep -Eq "^[1-9][0-9]* registrations$"'
desc="rmmod codectl"; t rmmod codectl
echo "guest: $n passed, $f failed"
[ "$f" -eq 0 ]
GUEST
"$top/scripts/vm-run.sh" -k "$series" -t 600 -l "$tmp/vm.log" \
	-a "$ko:/codectl.ko" \
	-A "$glib:/usr/lib/aarch64-linux-gnu" \
	-A "$glib/ld-linux-aarch64.so.1:/usr/lib/ld-linux-aarch64.so.1" \
	-A "$x/libcodectl1/usr/lib/aarch64-linux-gnu/libcodectl.so.1:/usr/lib/aarch64-linux-gnu/libcodectl.so.1" \
	-A "$x/codectl/usr/bin/codectl:/usr/bin/codectl" \
	-A "$x/codectl/usr/bin/codectl-stackdemo:/usr/bin/codectl-stackdemo" \
	-A "$rx/codectl/usr/bin/codectl:/rpm/usr/bin/codectl" \
	-A "$rx/libcodectl/usr/lib64/libcodectl.so.1:/rpm/usr/lib64/libcodectl.so.1" \
	-a "$tmp/guest.sh:/guest.sh" -- sh /guest.sh "$version" >"$tmp/vm.out" 2>&1
rc=$?
phase "the guest"
kver=$(sed -n 's/^vm-run: [^ ]* (\([^)]*\)).*/\1/p' "$tmp/vm.out" | tail -n 1)
guest_results "" "$tmp/vm.out" $rc "$series ${kver:-?}"
sed -n '/^CODECTL-VM-COMMAND-BEGIN/,/^CODECTL-VM-COMMAND-END/{/^info: /p}' "$tmp/vm.out"
logs=$(log_dir)
mkdir -p "$logs" && cp "$tmp/vm.out" "$logs/pkg-$series-vm.out" &&
	echo "guest output: $logs/pkg-$series-vm.out"
finish
