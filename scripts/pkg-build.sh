#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build codectl's packages from the files git tracks (a clean clone's
# tree, with any uncommitted edits of tracked files), in a scratch copy:
# the working tree is never written to.
#
#   scripts/pkg-build.sh [--deb|--rpm] [--arch arm64] [--deb-version VERSION] [--rpm-dist D] OUTDIR
#
#   --deb, --rpm       only that format (default: both)
#   --arch arm64       cross-build for arm64 on this x86-64 host: the .debs
#                      with dpkg-buildpackage -a arm64 (gcc-aarch64-linux-gnu,
#                      and libdw-dev, libelf-dev, libssl-dev of arm64
#                      installed beside the host's: scripts/setup.sh), the
#                      RPMs with rpmbuild --target aarch64 and the aarch64-
#                      linux-gnu- tools; the arch-all codectl-dkms and the
#                      noarch one are built too, identical to the host's
#   --deb-version V    give the .debs version V with a changelog entry
#                      (dch --newversion, in the copy), as an upgrade would
#   --rpm-dist D       rpmbuild --define "dist D": release 1D, a newer
#                      release of the same version (e.g. .pkgtest1)
#
# OUTDIR gets deb/*.deb (+ .changes, .buildinfo, lintian.txt) and
# rpm/{RPMS,SRPMS}/... (+ rpmlint.txt); build logs go to OUTDIR/*.log.
# lintian and rpmlint run on the results; their findings are written to
# OUTDIR and printed.  Needs dpkg-dev, debhelper, dh-dkms, lintian, rpm,
# rpmlint and devscripts (installed by scripts/setup.sh, or by this
# script when missing and run as root).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

deb=1 rpm=1 deb_version="" rpm_dist="" arch=""
while [ $# -gt 0 ]; do
	case $1 in
	--deb) rpm=0 ;;
	--rpm) deb=0 ;;
	--arch) arch=${2:?}; shift ;;
	--deb-version) deb_version=${2:?}; shift ;;
	--rpm-dist) rpm_dist=${2:?}; shift ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
out=${1:?usage: pkg-build.sh [--deb|--rpm] [--arch arm64] [--deb-version V] OUTDIR}
# Cross building: dpkg-buildpackage's -a and rpmbuild's --target, and the
# host tools' prefix (the RPM build takes them from the environment).
deb_arch=() rpm_target=() cross=""
case $arch in
"" | "$(dpkg --print-architecture)") ;;
arm64) deb_arch=(-a arm64) rpm_target=(--target aarch64) cross=aarch64-linux-gnu- ;;
*) die "--arch $arch: only arm64 is cross-built" ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The tools, from Debian's archive (also in scripts/setup.sh's list).
need=()
command -v dpkg-buildpackage >/dev/null || need+=(dpkg-dev)
[ -e /usr/share/perl5/Debian/Debhelper/Sequence/dkms.pm ] || need+=(dh-dkms)
command -v dh >/dev/null || need+=(debhelper)
command -v lintian >/dev/null || need+=(lintian)
command -v dch >/dev/null || need+=(devscripts)
command -v rpmbuild >/dev/null || need+=(rpm)
command -v rpmlint >/dev/null || need+=(rpmlint)
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing ${need[*]}: run scripts/setup.sh as root"
	echo "pkg-build.sh: installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
work=$(mktemp -d /tmp/codectl-pkg.XXXXXX)
trap 'rm -rf "$work"' EXIT

# export DIR: the tracked files of the working tree into DIR.
export_tree() {
	mkdir -p "$1"
	(cd "$top" && git ls-files -z | xargs -0 cp -a --parents -t "$1" 2>/dev/null) ||
		die "cannot copy the tracked files (not a git checkout?)"
}

rc=0
if [ $deb -eq 1 ]; then
	src=$work/deb/codectl
	export_tree "$src"
	if [ -n "$deb_version" ]; then
		(cd "$src" && DEBEMAIL="codectl@example.org" DEBFULLNAME="codectl pkg-build" \
			dch -b --newversion "$deb_version" --distribution unstable --force-distribution \
			"Rebuild as $deb_version (scripts/pkg-build.sh --deb-version).") >/dev/null
	fi
	echo "pkg-build.sh: dpkg-buildpackage ${deb_arch[*]:+${deb_arch[*]} }-us -uc -b ($(cd "$src" && dpkg-parsechangelog -S Version))"
	if (cd "$src" && dpkg-buildpackage "${deb_arch[@]}" -us -uc -b) >"$out/deb-build.log" 2>&1; then
		mkdir -p "$out/deb"
		rm -f "$out"/deb/*
		mv "$work"/deb/*.deb "$work"/deb/*.changes "$work"/deb/*.buildinfo "$out/deb/"
		(cd "$out/deb" && ls *.deb)
		# Default level (errors and warnings); overrides are in debian/.
		(cd "$out/deb" && lintian --fail-on error,warning ./*.changes) >"$out/deb/lintian.txt" 2>&1 || {
			echo "pkg-build.sh: lintian:"; cat "$out/deb/lintian.txt"; rc=1; }
		[ $rc -ne 0 ] || echo "pkg-build.sh: lintian clean (default level)"
	else
		tail -n 40 "$out/deb-build.log"
		echo "pkg-build.sh: dpkg-buildpackage failed (log: $out/deb-build.log)"
		rc=1
	fi
fi

if [ $rpm -eq 1 ]; then
	rtop=$work/rpmbuild
	mkdir -p "$rtop"/{SOURCES,SPECS}
	export_tree "$work/rpm/codectl-$version"
	tar -C "$work/rpm" -czf "$rtop/SOURCES/codectl-$version.tar.gz" "codectl-$version"
	cp "$top/packaging/rpm/codectl.spec" "$rtop/SPECS/"
	echo "pkg-build.sh: rpmbuild -ba ${rpm_target[*]:+${rpm_target[*]} }codectl.spec ($version)"
	# Debian's rpm has no distribution macros and no dependency
	# database: --nodeps skips the BuildRequires check (what they name
	# is installed here under Debian's names).  Cross: the make in
	# %build takes CC, LD, OBJCOPY and AR from the environment, and rpm
	# strips with the target's strip.
	cross_env=() cross_def=()
	if [ -n "$cross" ]; then
		cross_env=(CC="${cross}gcc" LD="${cross}ld" OBJCOPY="${cross}objcopy" AR="${cross}ar")
		cross_def=(--define "__strip ${cross}strip" --define "__objdump ${cross}objdump")
	fi
	if env "${cross_env[@]}" rpmbuild -ba --nodeps "${rpm_target[@]}" "${cross_def[@]}" \
		--define "_topdir $rtop" ${rpm_dist:+--define "dist $rpm_dist"} \
		"$rtop/SPECS/codectl.spec" \
		>"$out/rpm-build.log" 2>&1; then
		rm -rf "$out/rpm"
		mkdir -p "$out/rpm"
		cp -a "$rtop/RPMS" "$rtop/SRPMS" "$out/rpm/"
		(cd "$out/rpm" && find . -name '*.rpm' | sort)
		# rpmlint judges a package's dependency on its library by the
		# host's %_isa (x86-64): a cross build's is the target's,
		# given in a .rpmmacros of a HOME of its own.
		lint_env=()
		if [ -n "$cross" ]; then
			mkdir -p "$work/lint-home"
			echo "%_isa $(rpm "${rpm_target[@]}" --eval '%{_isa}')" >"$work/lint-home/.rpmmacros"
			lint_env=(HOME="$work/lint-home")
		fi
		if env "${lint_env[@]}" rpmlint -c "$top/packaging/rpm/rpmlint.toml" $(find "$out/rpm" -name '*.rpm') "$top/packaging/rpm/codectl.spec" \
			>"$out/rpm/rpmlint.txt" 2>&1; then
			echo "pkg-build.sh: rpmlint: $(tail -n 1 "$out/rpm/rpmlint.txt")"
		else
			echo "pkg-build.sh: rpmlint:"; cat "$out/rpm/rpmlint.txt"; rc=1
		fi
	else
		tail -n 40 "$out/rpm-build.log"
		echo "pkg-build.sh: rpmbuild failed (log: $out/rpm-build.log)"
		rc=1
	fi
fi
exit $rc
