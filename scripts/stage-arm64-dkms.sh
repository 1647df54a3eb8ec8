#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 root a guest builds codectl with DKMS in (scripts/dkms-test.sh
# SERIES-arm64): Debian's own arm64 compiler, make, kmod and dkms, from
# the release the kernel comes from (bookworm for 6.1-arm64 and 6.12-arm64,
# sid for 7.2-arm64, trixie for 7.3-arm64: scripts/kernels.sh release), and the kernel's headers package of the same version
# as the kernel the guest boots (scripts/kernels.sh), with its arm64
# linux-kbuild: what `apt install dkms linux-headers-$(uname -r)` gives
# on an arm64 machine.  Never installed on the host: the packages are
# downloaded (debootstrap --download-only, which resolves the Depends, and
# apt-get download for the headers) and unpacked with dpkg-deb -x; their
# maintainer scripts do not run (none of these need theirs to work).
# Documentation, manual pages and locales are left out (the guest's
# initramfs holds the root: scripts/vm-run.sh -R).  Idempotent.
#
#   scripts/stage-arm64-dkms.sh SERIES-arm64 DIR     prints DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
series=${1:?usage: stage-arm64-dkms.sh SERIES-arm64 DIR} dir=${2:?usage: stage-arm64-dkms.sh SERIES-arm64 DIR}
[[ $series == *-arm64 ]] || die "$series is not an arm64 series"
MIRROR=http://deb.debian.org/debian
LAYOUT=1

kernels=$top/scripts/kernels.sh
"$kernels" fetch "$series" >&2
kver=$("$kernels" kver "$series")
kdir=$("$kernels" kdir "$series")
cache=${CODECTL_CACHE:-$top/.cache}
# The headers' packages and versions, as kernels.sh fetched them.
hdrs=$(tr ' ' '\n' <"$cache/kernels/$series/stamp" |
	grep -E '^linux-(headers|kbuild)-' ) || die "no headers in $series's stamp"
gcc_major=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' \
	"$kdir/include/config/auto.conf")
[ -n "$gcc_major" ] || die "$series: no CONFIG_GCC_VERSION (not a gcc-built kernel?)"
suite=$("$kernels" release "$series")
# What dkms builds with (sid-root.sh's list, for arm64's own kernel):
# the kernel's compiler, make, libc6-dev for kbuild's compiler tests,
# pahole (BTF), kmod, dkms, xz-utils and zstd (module compression),
# openssl (dkms signs modules).
pkgs="gcc-$gcc_major make libc6-dev dwarves kmod dkms xz-utils zstd openssl"
stamp="layout=$LAYOUT suite=$suite $pkgs $(tr '\n' ' ' <<<"$hdrs")"

stage_lock "$dir"
if [ -x "$dir/usr/sbin/dkms" ] && [ "$(cat "$dir/.codectl-stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$dir"
	exit 0
fi
new=$dir.new
rm -rf "$new"
mkdir -p "$new"
say "debootstrap --download-only --arch arm64 $suite: $pkgs" >&2
debootstrap --download-only --arch=arm64 --variant=minbase --components=main \
	--include="${pkgs// /,}" "$suite" "$new" "$MIRROR" >&2 ||
	die "debootstrap failed (see $new/debootstrap/debootstrap.log)"
debs=$new/var/cache/apt/archives
# shellcheck disable=SC2046 # package names have no blanks
debs_unpack "$debs" "$new" \
	$(sed -E 's/^(linux-headers-.*-arm64|linux-kbuild-[^=]*)=/\1:arm64=/' <<<"$hdrs")
rm -rf "$new/debootstrap" "$debs" "$new"/usr/share/{doc,man,info,locale,i18n,lintian}
# Merged /usr, as on the guests' initramfs (scripts/vm-run.sh) and a
# Debian system of today: /bin, /sbin and /lib links into /usr.
for d in bin sbin lib; do
	if [ ! -d "$new/$d" ] || [ -L "$new/$d" ]; then continue; fi
	mkdir -p "$new/usr/$d"
	cp -a "$new/$d/." "$new/usr/$d/"
	rm -rf "${new:?}/$d"
	ln -s "usr/$d" "$new/$d"
done
# Relative links only: vm-run.sh copies files into the staged tree, and
# an absolute link there would lead a copy into the host's own files.
while IFS= read -r -d '' l; do
	ln -sfn "$(realpath -m -s --relative-to="$(dirname "$l")" "$new$(readlink "$l")")" "$l"
done < <(find "$new" -type l -lname '/*' -print0)
# The links a package's maintainer scripts or dpkg's alternatives make:
# cc, gcc (gcc's own package has them), awk (mawk's postinst).
[ -e "$new/usr/bin/awk" ] || ln -s mawk "$new/usr/bin/awk"
[ -e "$new/usr/bin/cc" ] || ln -s "gcc-$gcc_major" "$new/usr/bin/cc"
[ -e "$new/lib/modules/$kver/build" ] ||
	die "no lib/modules/$kver/build in the headers' packages"
[ -x "$new/usr/sbin/dkms" ] || die "no dkms in $new"
echo "$stamp" >"$new/.codectl-stamp"
rm -rf "$dir"
mv "$new" "$dir"
say "$dir: $(du -sh "$dir" | cut -f1)" >&2
echo "$dir"
