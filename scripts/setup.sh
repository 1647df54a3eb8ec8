#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything codectl's build, tests and demo need on a Debian 12
# (bookworm) machine, from Debian's archive only.  Idempotent; run as root.
#
#  - apt sources for bookworm-backports (6.12 kernel), trixie/sid (newer
#    binutils, used by later test fixtures; sid's 7.2), trixie-backports
#    (7.3, 7.3-rt, 7.3-arm64) and bullseye, bullseye-security (5.10),
#    pinned so that nothing installed from bookworm is ever upgraded from
#    them: bullseye, trixie, trixie-backports and sid get priority 1, so
#    only an explicit "pkg/trixie" request takes anything from there;
#  - build tools, cmocka, sparse, dkms, qemu and busybox for the VM runner;
#  - debhelper, dh-dkms, lintian, rpm, rpmlint, devscripts and debootstrap
#    for the packages and their test (make packages, make check-packages);
#  - the stock Debian kernels (6.1 bookworm, 6.12 backports, 7.2 sid, and
#    those the module is only compiled for by default: 5.10, 7.3, 6.12-rt,
#    7.3-rt, 7.3-arm64), images and headers unpacked into .cache/kernels
#    by scripts/kernels.sh.
#    7.2's modules need gcc-16, which is not installed here: `make
#    toolchain-7.2` (scripts/sid-root.sh) builds a sid root with it, and
#    installs debootstrap for that itself; without it tests skip 7.2.
#
#   scripts/setup.sh [arm64]
#
# arm64 (6.12-arm64 is in the default run: docs/testing.md): dpkg's arm64
# architecture (for apt-get download of busybox-static:arm64, the arm64
# kernels and scripts/stage-arm64-root.sh's perf and libraries; arm64
# packages installed into this root: only the build dependencies at the end), qemu-system-arm
# (qemu-system-aarch64), the arm64 cross libc (libc6-dev-arm64-cross: the
# guest's test programs) and the 6.12-arm64 kernel.  The argument "arm64"
# is still taken, and changes nothing.
set -euo pipefail
case ${1:-} in
arm64 | "") ;;
*) echo "usage: scripts/setup.sh [arm64]" >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || { echo "setup.sh: run as root" >&2; exit 1; }

export DEBIAN_FRONTEND=noninteractive

# The suites besides bookworm's: bookworm-backports (6.12), trixie and sid
# (newer binutils for the fixtures; sid's 7.2), trixie-backports (7.3),
# bullseye and its security suite (5.10).  Rewritten when it differs (a
# machine set up before a suite was added gets it).
src=/etc/apt/sources.list.d/codectl.sources
want_src=$(cat <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports bullseye trixie trixie-backports sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bullseye-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
)
[ "$(cat "$src" 2>/dev/null)" = "$want_src" ] || printf '%s\n' "$want_src" >"$src"
# Nothing is taken from another release unless asked for by name: apt
# only downloads from them (scripts/kernels.sh, the roots of
# scripts/sid-root.sh are debootstrapped from the archive itself).
{
	echo "# codectl: never take anything from bullseye, trixie or sid unless asked by name."
	for pin in "n=trixie" "n=trixie-backports" "n=bullseye" "n=bullseye-security" \
		"a=unstable 1" "n=bookworm-backports 100"; do
		read -r rel prio <<<"$pin"
		printf '%sPackage: *\nPin: release %s\nPin-Priority: %s\n' \
			"${sep:-}" "$rel" "${prio:-1}"
		sep=$'\n'
	done
} >/etc/apt/preferences.d/codectl

# apt's binary cache of its package lists: this machine's image turns it
# off (docker-clean), and then every apt-cache or apt-get call re-reads all
# the lists, 5-18 s each, some 90 times in a run of the tests.  A file
# that sorts after docker-clean turns it back on (apt rebuilds it when the
# lists change; about 190 MB).
cat >/etc/apt/apt.conf.d/zz-codectl-pkgcache <<'CONF'
// codectl (scripts/setup.sh): keep apt's package cache.
Dir::Cache::pkgcache "pkgcache.bin";
Dir::Cache::srcpkgcache "srcpkgcache.bin";
CONF

# apt_install PKG...: install what is not installed yet (dpkg-query costs
# nothing; apt-get install resolves every package, even when all are).
apt_install() {
	local have
	have=$(dpkg-query -W -f='${db:Status-Abbrev}\n' "$@" 2>/dev/null | grep -c '^ii' || true)
	[ "$have" = $# ] || apt-get install -y -q --no-install-recommends "$@"
}

stamp=/var/lib/apt/codectl-updated
if ! dpkg --print-foreign-architectures | grep -x arm64 >/dev/null; then
	dpkg --add-architecture arm64
	rm -f "$stamp"
fi
if [ ! -f "$stamp" ] || [ -n "$(find /etc/apt/sources.list.d/codectl.sources -newer "$stamp")" ]; then
	apt-get update -q
	touch "$stamp"
fi

pkgs=(build-essential make gcc pkg-config libcmocka-dev sparse dkms kmod
      qemu-system-x86 busybox-static cpio xz-utils zstd file
      python3 libelf-dev libdw-dev groff-base pahole
      libssl-dev		# the daemon's cache keys: SHA-256 (libcrypto)
      gcc-aarch64-linux-gnu gcc-s390x-linux-gnu
      clang-14 libclang-rt-14-dev	# clang: tests/sframe/fuzz (libFuzzer)
      linux-perf trace-cmd bpftrace	# the tracer tests (tests/vm/tracers.sh)
      tcl8.6	# stage-arm64-real.sh: sqlite3's amalgamation (tclsh)
      python3.11 perl sqlite3	# the on-demand tests' programs (tests/vm/ondemand.sh)
      # JIT runtimes (tests/vm/runtimes.sh): OpenJDK, and the libraries of
      # Debian's node, which scripts/stage-node.sh unpacks beside them
      openjdk-17-jre-headless openjdk-17-jdk-headless libuv1 libicu72
      libc-ares2 libnghttp2-14
      libbrotli1 libssl3 zlib1g
      # make packages / check-packages (scripts/pkg-*.sh): .debs, RPMs,
      # their linters, the scratch bookworm root, signature checks
      debhelper dh-dkms lintian devscripts rpm rpmlint debootstrap openssl)
apt_install "${pkgs[@]}"

# Stock kernels (images and headers) are unpacked into the project's cache,
# never installed on the host: installing the 6.12 headers would pull the
# image, initramfs-tools and a backported systemd with them.
"$(dirname "$0")/kernels.sh" fetch all

apt_install qemu-system-arm libc6-dev-arm64-cross
"$(dirname "$0")/kernels.sh" fetch 6.12-arm64
# The kernels the default run compiles the module for (5.10, 7.3, 6.12-rt,
# 7.3-rt, 7.3-arm64: scripts/kernels.sh list compile); their roots (gcc-10,
# gcc-14) are scripts/sid-root.sh's, which scripts/test.sh builds.
"$(dirname "$0")/kernels.sh" fetch compile

# The arm64 packages' build dependencies (scripts/pkg-build.sh --arch
# arm64: dpkg-buildpackage -a arm64 checks and links against them),
# installed beside the host's own (Multi-Arch: same; libc6:arm64 and the
# libraries they depend on come with them): arm64 packages installed
# into this root, unlike the above.
apt_install libdw-dev:arm64 libelf-dev:arm64 libssl-dev:arm64

echo "setup.sh: done"
