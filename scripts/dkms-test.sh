#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS install test for one stock kernel, as a packager would do it:
#
#  1. on the host, "dkms add / build / install" of this tree for the cached
#     kernel, in scratch trees and a private mount namespace where
#     /etc/dkms and /var/lib/dkms are scratch copies, so the host's dkms
#     state is untouched (checked before and after);
#  2. in a guest booted on that kernel, the installed module tree is put
#     at /lib/modules/KVER, "depmod -a" and "modprobe codectl" are run as
#     on a real machine, and /dev/codectl must appear with mode 0666 and
#     answer CODECTL_VERSION; "modprobe -r" must remove it.
#
#   scripts/dkms-test.sh SERIES
# Ends with "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
series=${1:?usage: dkms-test.sh SERIES}
kver=$("$top/scripts/kernels.sh" kver "$series") || exit 1
kdir=$(readlink -f "$("$top/scripts/kernels.sh" kdir "$series")") || exit 1
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")

passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
notok() { echo "not ok - $*"; failed=$((failed + 1)); }
finish() {
	echo "dkms $series: $passed passed, $failed failed"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The version in dkms.conf and the module's MODULE_VERSION must agree.
if grep -q "CODECTL_MODULE_VERSION \"$version\"" "$top/module/version.h"; then
	ok "dkms.conf PACKAGE_VERSION $version matches module/version.h"
else
	notok "dkms.conf PACKAGE_VERSION $version differs from module/version.h"
fi

# The source tree dkms sees: what a source package would ship.
src=$tmp/src/codectl-$version
mkdir -p "$src" "$tmp/tree" "$tmp/inst/$kver" "$tmp/etc" "$tmp/var"
(cd "$top" && git ls-files -z Makefile Kbuild dkms.conf module uapi 2>/dev/null |
	xargs -0 cp --parents -t "$src") ||
	cp -a "$top/Makefile" "$top/Kbuild" "$top/dkms.conf" "$top/module" \
		"$top/uapi" "$src/"
cp -a /etc/dkms/. "$tmp/etc/"

host_state() { ls -lR /var/lib/dkms /etc/dkms 2>/dev/null | md5sum; }
before=$(host_state)

dkms_args=(-m codectl -v "$version" --dkmstree "$tmp/tree"
	   --sourcetree "$tmp/src" --installtree "$tmp/inst")
# shellcheck disable=SC2016
unshare -m bash -euc '
	tmp=$1; shift
	mount --bind "$tmp/etc" /etc/dkms
	mount --bind "$tmp/var" /var/lib/dkms
	dkms add "$@"
	dkms build "$@"
	dkms install --no-depmod "$@"
' dkms-test "$tmp" "${dkms_args[@]}" -k "$kver" --kernelsourcedir "$kdir" \
	>"$tmp/dkms.log" 2>&1
rc=$?
sed 's/^/    dkms: /' "$tmp/dkms.log"
if [ $rc -eq 0 ]; then
	ok "dkms add/build/install for $kver"
else
	notok "dkms add/build/install for $kver (exit $rc)"
fi

if [ "$(host_state)" = "$before" ]; then
	ok "host dkms state untouched"
else
	notok "host dkms state changed"
fi

installed=$(find "$tmp/inst/$kver" -name 'codectl.ko*' | head -n 1)
if [ -n "$installed" ]; then
	ok "module installed at ${installed#"$tmp/inst/"}"
else
	notok "no codectl.ko under the install tree"
	finish
fi

# The guest: modprobe the installed module as a user would.
cat >"$tmp/guest.sh" <<'GUEST'
set -u
kver=$(uname -r)
n=0 f=0
t() { if "$@"; then echo "ok - $desc"; n=$((n + 1)); else echo "not ok - $desc"; f=$((f + 1)); fi; }
desc="depmod -a"; t depmod -a
desc="modprobe codectl"; t modprobe codectl
desc="/dev/codectl is a character device"; t test -c /dev/codectl
mode=$(stat -c %a /dev/codectl 2>/dev/null)
desc="/dev/codectl mode 0666 (got $mode)"; t test "$mode" = 666
desc="modinfo reports version $1"; t sh -c "modinfo -F version codectl | grep -qx '$1'"
desc="codectl version answers"; t sh -c 'codectl version | grep -q "^abi_version"'
desc="modprobe -r codectl"; t modprobe -r codectl
desc="module gone after modprobe -r"; t sh -c '! grep -q "^codectl " /proc/modules'
echo "guest: $n passed, $f failed"
[ "$f" -eq 0 ]
GUEST

make -s -C "$top" lib tools >/dev/null || { notok "building lib and tools"; finish; }
"$top/scripts/vm-run.sh" -k "$series" \
	-a "$tmp/inst/$kver:/lib/modules/$kver" \
	-a "$top/tools/codectl:/usr/bin/codectl" \
	-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
	-a "$tmp/guest.sh:/guest.sh" \
	-l "$tmp/vm.log" -- sh /guest.sh "$version" >"$tmp/vm.out" 2>&1
rc=$?
# Each guest check counts; then the run itself (exit 0, clean kernel log).
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "guest: ${line#ok - }" ;;
	"not ok - "*) notok "guest: ${line#not ok - }" ;;
	esac
done < <(sed -n '/^CODECTL-VM-COMMAND-BEGIN/,/^CODECTL-VM-COMMAND-END/p' "$tmp/vm.out")
if [ $rc -eq 0 ]; then
	ok "guest run on $kver: exit 0, kernel log clean"
else
	notok "guest run on $kver: vm-run exit $rc"
	tail -n 40 "$tmp/vm.out" | sed 's/^/    vm: /'
fi
finish
