#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS install test for one stock kernel, as a packager would do it:
#
#  1. "dkms add / build / install" of this tree for the cached kernel, in
#     scratch trees and a private mount namespace where /etc/dkms and
#     /var/lib/dkms are scratch copies, so no dkms state is touched
#     (checked before and after).  Where dkms runs is where the module can
#     be built (scripts/build-module.sh --toolchain): on the host with
#     bookworm's dkms for 6.1, 6.12 and 6.12-rt, in the sid root (make
#     toolchain-7.2) with sid's dkms and gcc-16 for 7.2, in the trixie
#     root with trixie's dkms and gcc-14 for 7.3 and 7.3-rt, in the
#     bullseye root with bullseye's dkms and gcc-10 for 5.10 -- the
#     machine each kernel comes with;
#  2. the installed module: vermagic, every parameter documented (docs/install.md,
#     packaging/modprobe.conf);
#  3. refusal: dkms must refuse (exit 77, and say which option) a copy of
#     the kernel's headers without CONFIG_MMU_NOTIFIER, and so must
#     "make module"; and both a copy named 5.4.0-99 (older than the
#     oldest supported, dkms.conf's BUILD_EXCLUSIVE_KERNEL_MIN), saying
#     so, before any compiler runs;
#  4. "make install-system DESTDIR=" (udev rule, modprobe.d, modules-load.d);
#  5. in a guest booted on that kernel: dkms's install tree under
#     /lib/modules/KVER/updates and the install-system files under /, then
#     as on a real machine "depmod -a", loading what modules-load.d lists
#     with modprobe (what systemd-modules-load does), options from
#     modprobe.d applied, /dev/codectl a character device of mode 0666
#     usable by uid 65534, "modprobe -r".
#
# What is simulated: dkms runs outside the guest (the busybox guest has no
# compiler, and TCG would make a guest build slow), with --kernelsourcedir
# pointing at the cached headers instead of /lib/modules/KVER/build;
# --no-depmod (depmod runs in the guest instead); there is no udev in the
# guest, so the node's mode is the one the module gives it (devtmpfs), the
# udev rule only being installed; systemd-modules-load is a loop of modprobe.
#
# A kernel that trusts the test key of scripts/distro-kernel.sh (fedora,
# ubuntu: SYSTEM_TRUSTED_KEYS is its certificate) gets the module signed
# as on a machine with Secure Boot: dkms signs it with that key, given as
# the machine owner's key (framework.conf's sign_file, the kernel's
# scripts/sign-file, mok_signing_key, mok_certificate); step 2 checks the
# signer, and the guest of step 5 boots with module.sig_enforce=1.
#
# An arm64 kernel (SERIES-arm64): steps 1 and 2 run in the guest, as on an
# arm64 machine: its root (scripts/stage-arm64-dkms.sh, vm-run.sh -R) has
# Debian's arm64 gcc, make, kmod and dkms and the kernel's headers
# package, and the source tree is in /usr/src/codectl-VERSION, where the
# codectl-dkms package puts it; dkms add, build, install (with its depmod)
# for the running kernel, then step 5, then dkms remove.  Steps 3 and 4
# run on the host as for x86-64 (dkms only reads the headers' .config to
# refuse).  The guest has no arm64 codectl tool: codectl-abi-test
# (cross-built static) asks the module's version instead.
#
#   scripts/dkms-test.sh SERIES
# Ends with "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
series=${1:?usage: dkms-test.sh SERIES}
cache=${CODECTL_CACHE:-$top/.cache}
kver=$("$top/scripts/kernels.sh" kver "$series") || exit 1
kdir=$(readlink -f "$("$top/scripts/kernels.sh" kdir "$series")") || exit 1
sdir=$(readlink -f "$cache/kernels/$series")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
arm64=0
[[ $series != *-arm64 ]] || arm64=1
mok=$cache/distro-keys/test-mok
sign=0
! grep -qxF "CONFIG_SYSTEM_TRUSTED_KEYS=\"$mok.crt\"" "$kdir/.config" 2>/dev/null || sign=1

passed=0 failed=0
. "$top/scripts/lib.sh"
finish() {
	echo "dkms $series: $passed passed, $failed failed"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

logs=$(log_dir)
mkdir -p "$logs"
tmp=$(mktemp -d /tmp/codectl-dkms.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The version in dkms.conf and the module's MODULE_VERSION must agree.
if grep -q "CODECTL_MODULE_VERSION \"$version\"" "$top/module/version.h"; then
	ok "dkms.conf PACKAGE_VERSION $version matches module/version.h"
else
	notok "dkms.conf PACKAGE_VERSION $version differs from module/version.h"
fi

if where=$("$top/scripts/build-module.sh" --toolchain "$series"); then
	ok "a toolchain for $kver: $where"
else
	notok "a toolchain for $kver"
	finish
fi

# The source tree dkms sees: what a source package would ship.
src=$tmp/src/codectl-$version
mkdir -p "$src" "$tmp/tree" "$tmp/inst/$kver" "$tmp/etc" "$tmp/var"
(cd "$top" && git ls-files -z Makefile Kbuild dkms.conf module shared uapi 2>/dev/null |
	xargs -0 cp --parents -t "$src") ||
	cp -a "$top/Makefile" "$top/Kbuild" "$top/dkms.conf" "$top/module" "$top/shared" \
		"$top/uapi" "$src/"

# in_ns CMD...: run CMD where dkms runs for this kernel, with /etc/dkms
# and /var/lib/dkms replaced by $tmp/etc and $tmp/var.
if [ "$where" = host ]; then
	cp -a /etc/dkms/. "$tmp/etc/"
	[ $sign -eq 0 ] || cat >>"$tmp/etc/framework.conf" <<-EOF
	sign_file="$kdir/scripts/sign-file"
	mok_signing_key="$mok.key"
	mok_certificate="$cache/distro-keys/test-mok.der"
	EOF
	state_dirs=(/var/lib/dkms /etc/dkms)
	in_ns() {
		# shellcheck disable=SC2016
		unshare -m bash -euc '
			mount --bind "$1/etc" /etc/dkms
			mount --bind "$1/var" /var/lib/dkms
			shift
			"$@"
		' in-ns "$tmp" "$@"
	}
else
	root=$("$top/scripts/sid-root.sh" -s "${where%-root}" path) || finish
	cp -a "$root/etc/dkms/." "$tmp/etc/"
	state_dirs=(/var/lib/dkms /etc/dkms "$root/var/lib/dkms" "$root/etc/dkms")
	in_ns() {
		"$top/scripts/sid-root.sh" -s "${where%-root}" run -b "$tmp" -b "$tmp/etc:/etc/dkms" \
			-b "$tmp/var:/var/lib/dkms" -r "$sdir" -- "$@"
	}
fi
dkms_version=$(in_ns dkms --version 2>&1 | sed -n 1p)
state() { ls -lR "${state_dirs[@]}" 2>/dev/null | md5sum; }
before=$(state)

# check_params PARM...: every module parameter is documented.
check_params() {
	local p undocumented=""
	for p in "$@"; do
		grep -q "^| \`$p\` |" "$top/docs/install.md" &&
			grep -q "^#options codectl $p=" "$top/packaging/modprobe.conf" ||
			undocumented+=" $p"
	done
	if [ -z "$undocumented" ] && [ $# -gt 0 ]; then
		ok "every module parameter is in docs/install.md and packaging/modprobe.conf"
	else
		notok "parameters missing from docs/install.md or packaging/modprobe.conf:${undocumented:- (none found)}"
	fi
}

# --- 1. add, build, install ---------------------------------------------------
if [ $arm64 -eq 0 ]; then
dkms_args=(-m codectl -v "$version" --dkmstree "$tmp/tree"
	   --sourcetree "$tmp/src" --installtree "$tmp/inst")
# shellcheck disable=SC2016
in_ns bash -euc '
	dkms add "$@"
	dkms build "$@"
	dkms install --no-depmod "$@"
' dkms "${dkms_args[@]}" -k "$kver" --kernelsourcedir "$kdir" >"$tmp/dkms.log" 2>&1
rc=$?
sed 's/^/    dkms: /' "$tmp/dkms.log"
if [ $rc -eq 0 ]; then
	ok "$dkms_version add/build/install for $kver ($where)"
else
	notok "$dkms_version add/build/install for $kver ($where, exit $rc)"
	find "$tmp/tree" -name make.log -exec sed 's/^/    make.log: /' {} + 2>/dev/null
fi

installed=$(find "$tmp/inst/$kver" -name 'codectl.ko*' | sed -n 1p)
if [ -n "$installed" ]; then
	ok "module installed at ${installed#"$tmp/inst/"}"
else
	notok "no codectl.ko under the install tree"
	finish
fi

# The test facilities' module (tests/vm/testmod) is not the product.
if [ -z "$(find "$tmp/inst/$kver" "$tmp/tree" -name 'codectl_test.ko*')" ] &&
   [ ! -e "$src/tests" ] && ! grep -rqs CODECTL_TEST_IOC "$src"; then
	ok "the test module (codectl_test) is neither in the DKMS source nor built nor installed"
else
	notok "the test module (codectl_test) ships with the DKMS source or module"
fi

# --- 2. the installed module ---------------------------------------------------
vermagic=$(modinfo -F vermagic "$installed" 2>/dev/null)
if [ "${vermagic%% *}" = "$kver" ]; then
	ok "vermagic of the installed module: $vermagic"
else
	notok "vermagic '$vermagic' is not for $kver"
fi
# shellcheck disable=SC2046 # parameter names have no blanks
check_params $(modinfo -F parm "$installed" | cut -d: -f1)
if [ $sign -eq 1 ]; then
	signer=$(modinfo -F signer "$installed" 2>/dev/null)
	want=$(openssl x509 -in "$mok.crt" -noout -subject -nameopt multiline | sed -n 's/^ *commonName *= //p')
	if [ -n "$signer" ] && [ "$signer" = "$want" ]; then
		ok "dkms signed the module with the test key (signer: $signer)"
	else
		notok "the module's signer is '$signer', not the test key's '$want'"
	fi
fi
else
	# arm64: in the guest (step 5); the source is what it gets.
	if [ ! -e "$src/tests" ] && ! grep -rqs CODECTL_TEST_IOC "$src"; then
		ok "the test module (codectl_test) is not in the DKMS source"
	else
		notok "the test module (codectl_test) ships with the DKMS source"
	fi
fi

# dkms_add_build N KVER HEADERS LOG: dkms add and build of the copy in
# $tmp/src for KVER against HEADERS, in trees of its own ($tmp/treeN,
# $tmp/instN), the output in LOG; dkms's exit status.
dkms_add_build() {
	mkdir -p "$tmp/tree$1"
	# shellcheck disable=SC2016
	in_ns bash -uc '
		dkms add "$@" >/dev/null && dkms build "$@"
	' dkms -m codectl -v "$version" --dkmstree "$tmp/tree$1" --sourcetree "$tmp/src" \
		--installtree "$tmp/inst$1" -k "$2" --kernelsourcedir "$3" \
		$([ $arm64 -eq 0 ] || echo "-a aarch64") >"$4" 2>&1
}

# --- 3. refusal of a kernel without a needed option ----------------------------
# dkms 2.x (bullseye's 2.8.4, for 5.10) has no BUILD_EXCLUSIVE_CONFIG nor
# _KERNEL_MIN, and exits 9, not 77, for a BUILD_EXCLUSIVE that does not
# match: the option's refusal is then make module's (in dkms's make.log),
# the old kernel's BUILD_EXCLUSIVE_KERNEL's.
dkms2=0 excl_rc=77
if [[ $dkms_version =~ ^dkms[-:]2\. ]]; then
	dkms2=1 excl_rc=9
fi
# fake_headers DIR: a copy of the headers (symlinks) in DIR but for .config,
# include/config/auto.conf and include/config/kernel.release, which the
# caller writes.
fake_headers() {
	local fake=$1 f
	mkdir -p "$fake/include/config"
	for f in "$kdir"/* "$kdir"/.[!.]*; do
		case ${f##*/} in include | .config) ;; *) ln -s "$f" "$fake/" ;; esac
	done
	for f in "$kdir"/include/*; do
		[ "${f##*/}" = config ] || ln -s "$f" "$fake/include/"
	done
	for f in "$kdir"/include/config/*; do
		case ${f##*/} in auto.conf | kernel.release) ;; *) ln -s "$f" "$fake/include/config/" ;; esac
	done
}
# The headers, less CONFIG_MMU_NOTIFIER.
fake=$tmp/headers-no-mmu-notifier
fake_headers "$fake"
grep -v '^CONFIG_MMU_NOTIFIER=' "$kdir/.config" >"$fake/.config"
grep -v '^CONFIG_MMU_NOTIFIER=' "$kdir/include/config/auto.conf" >"$fake/include/config/auto.conf"
cp "$kdir/include/config/kernel.release" "$fake/include/config/"
dkms_add_build 2 "$kver" "$fake" "$tmp/refuse.log"
rc=$?
sed 's/^/    dkms: /' "$tmp/refuse.log"
if [ $rc -eq 77 ] && grep -q 'BUILD_EXCLUSIVE' "$tmp/refuse.log" &&
   grep -q "codectl: kernel $kver has no CONFIG_MMU_NOTIFIER" "$tmp/refuse.log"; then
	ok "dkms refuses $kver without CONFIG_MMU_NOTIFIER (exit 77) and says why"
elif [ $dkms2 -eq 1 ] && [ $rc -ne 0 ] &&
     grep -q "has no CONFIG_MMU_NOTIFIER" "$tmp/tree2/codectl/$version/build/make.log" 2>/dev/null; then
	# dkms 2.x has no BUILD_EXCLUSIVE_CONFIG: make module refuses.
	ok "dkms ($dkms_version) build fails for $kver without CONFIG_MMU_NOTIFIER (exit $rc), make.log: $(grep -h "has no" "$tmp/tree2/codectl/$version/build/make.log")"
else
	notok "dkms refusal of $kver without CONFIG_MMU_NOTIFIER: exit $rc (want 77 and the reason)"
fi
if out=$(make -s -C "$src" module KVER="$kver" KDIR="$fake" 2>&1); then
	notok "make module refuses headers without CONFIG_MMU_NOTIFIER: it built"
elif grep -q 'has no CONFIG_MMU_NOTIFIER' <<<"$out"; then
	ok "make module refuses headers without CONFIG_MMU_NOTIFIER: $(grep "has no" <<<"$out")"
else
	notok "make module refuses headers without CONFIG_MMU_NOTIFIER, but says: $out"
fi

# An older kernel than dkms.conf's BUILD_EXCLUSIVE_KERNEL_MIN: the same
# headers as release 5.4.0-99-FLAVOUR (dkms matches the release it is
# given, make module reads include/config/kernel.release), every option
# there.  Refused before any compiler runs, naming the oldest supported.
min=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL_MIN="\(.*\)"/\1/p' "$top/dkms.conf")
oldk=5.4.0-99-${kver##*-}
fake=$tmp/headers-old
fake_headers "$fake"
cp "$kdir/.config" "$fake/.config"
cp "$kdir/include/config/auto.conf" "$fake/include/config/"
echo "$oldk" >"$fake/include/config/kernel.release"
dkms_add_build 3 "$oldk" "$fake" "$tmp/refuse-old.log"
rc=$?
sed 's/^/    dkms: /' "$tmp/refuse-old.log"
if [ -n "$min" ] && [ $rc -eq "$excl_rc" ] && grep -q 'BUILD_EXCLUSIVE' "$tmp/refuse-old.log" &&
   grep -q "codectl: kernel $oldk is older than $min, the oldest codectl supports" "$tmp/refuse-old.log"; then
	ok "dkms refuses $oldk (exit $rc): older than $min, it says"
else
	notok "dkms refusal of $oldk: exit $rc (want $excl_rc and \"older than ${min:-(no BUILD_EXCLUSIVE_KERNEL_MIN)}\")"
fi
if out=$(make -s -C "$src" module KVER="$oldk" KDIR="$fake" 2>&1); then
	notok "make module refuses $oldk: it built"
elif [ -n "$min" ] && grep -q "is $oldk, older than $min, the oldest codectl supports" <<<"$out" &&
     ! grep -q 'error:' <<<"$out"; then
	ok "make module refuses $oldk: $(grep "older than" <<<"$out")"
else
	notok "make module refuses $oldk, but says: $out"
fi

if [ "$(state)" = "$before" ]; then
	ok "dkms state untouched (${state_dirs[*]})"
else
	notok "dkms state changed (${state_dirs[*]})"
fi

# --- 4. the system files ---------------------------------------------------------
sysroot=$tmp/sysroot
if make -s -C "$top" install-system DESTDIR="$sysroot" >"$tmp/install.log" 2>&1; then
	ok "make install-system: $(cd "$sysroot" && find . -type f | sort | tr '\n' ' ')"
else
	notok "make install-system: $(cat "$tmp/install.log")"
fi
# The test's own option, to see that modprobe.d is applied.
echo "options codectl max_registrations=4242" >>"$sysroot/etc/modprobe.d/codectl.conf"

# --- 5. the guest: load the installed module as a machine would ----------------
{
guest_preamble
# arm64: dkms builds and installs it there first (steps 1 and 2).
[ $arm64 -eq 0 ] || cat <<'GUEST'
# /dev/fd, which udev makes on a machine: dkms reads from <(...).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# dkms_log ARGS...: dkms ARGS, its output indented, for the host's log.
dkms_log() {
	dkms "$@" -m codectl -v "$version" >/tmp/dkms.log 2>&1
	rc=$?
	sed 's/^/    dkms: /' /tmp/dkms.log
	return $rc
}
desc="$(dkms --version) add, build, install for $kver in the guest ($(gcc --version | sed -n 1p))"
dkms_install() { dkms_log add && dkms_log build && dkms_log install; }
t dkms_install
[ "$f" -eq 0 ] || find /var/lib/dkms -name make.log -exec sed 's/^/    make.log: /' {} +
file=$(modinfo -F filename codectl 2>/dev/null)
vermagic=$(modinfo -F vermagic codectl 2>/dev/null)
desc="vermagic of the installed module: $vermagic"; t test "${vermagic%% *}" = "$kver"
desc="the test module (codectl_test) neither built nor installed"
t sh -c '! find /var/lib/dkms /lib/modules -name "codectl_test.ko*" | grep -q .'
modinfo -F parm codectl | cut -d: -f1 | sed 's/^/PARM /'
GUEST
[ $sign -eq 0 ] || cat <<'GUEST'
desc="module signatures enforced (module.sig_enforce=1)"; t grep -qx Y /sys/module/module/parameters/sig_enforce
GUEST
cat <<'GUEST'
desc="modinfo finds codectl at $file"; t sh -c "case '$file' in /lib/modules/$kver/updates/dkms/codectl.ko*) true;; *) false;; esac"
# systemd-modules-load: modprobe each module named in modules-load.d.
for m in $(sed 's/#.*//' /etc/modules-load.d/*.conf); do
	desc="modprobe $m (from /etc/modules-load.d)"; t modprobe "$m"
done
desc="codectl loaded"; t grep -q '^codectl ' /proc/modules
desc="/dev/codectl is a character device"; t test -c /dev/codectl
mode=$(stat -c %a /dev/codectl 2>/dev/null)
desc="/dev/codectl mode 0666 (got $mode)"; t test "$mode" = 666
p=$(cat /sys/module/codectl/parameters/max_registrations 2>/dev/null)
desc="modprobe.d option applied: max_registrations=$p"; t test "$p" = 4242
desc="modinfo reports version $version"; t sh -c "modinfo -F version codectl | grep -qx '$version'"
GUEST
[ $arm64 -eq 1 ] || cat <<'GUEST'
desc="codectl version answers"; t sh -c 'codectl version | grep -q "^abi_version"'
GUEST
cat <<'GUEST'
desc="uid 65534 can use /dev/codectl (CODECTL_VERSION)"
t sh -c '/tests/codectl-abi-test -u 65534 version | grep -q "^1 passed, 0 failed"'
desc="udev rule installed"; t test -f /usr/lib/udev/rules.d/60-codectl.rules
desc="modprobe -r codectl"; t modprobe -r codectl
desc="module gone after modprobe -r"; t sh -c '! grep -q "^codectl " /proc/modules'
desc="/dev/codectl gone after modprobe -r"; t test ! -e /dev/codectl
GUEST
[ $arm64 -eq 0 ] || cat <<'GUEST'
desc="dkms remove --all"; t dkms_log remove --all
left=$(find /lib/modules/$kver -name 'codectl.ko*' | tr '\n' ' ')
desc="no codectl.ko left under /lib/modules/$kver${left:+: $left}"; t test -z "$left"
GUEST
cat <<'GUEST'
echo "guest: $n passed, $f failed"
[ "$f" -eq 0 ]
GUEST
} >"$tmp/guest.sh"

vm=()
if [ $arm64 -eq 0 ]; then
	make -s -C "$top" lib tools >/dev/null || { notok "building lib and tools"; finish; }
	make -s -C "$top/tests/vm" >/dev/null || { notok "building tests/vm"; finish; }
	vm=(-a "$tmp/inst/$kver/updates:/lib/modules/$kver/updates"
	    -a "$top/tools/codectl:/usr/bin/codectl"
	    -a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1"
	    -a "$top/tests/vm/codectl-abi-test:/tests/codectl-abi-test")
else
	# The guest's root, and codectl-abi-test cross-built static.
	a64=$(dirname "$(dirname "$("$top/scripts/build-module.sh" "$series")")")/tests-arm64
	make -s -C "$top/tests/vm" "$a64/codectl-abi-test" ARM64_OUT="$a64" ||
		{ notok "building tests/vm's arm64 codectl-abi-test"; finish; }
	root=$("$top/scripts/stage-arm64-dkms.sh" "$series" "$cache/arm64-dkms/$series") ||
		{ notok "staging the arm64 root with dkms (scripts/stage-arm64-dkms.sh)"; finish; }
	ok "an arm64 root for the guest: $(cat "$root/.codectl-stamp")"
	vm=(-R "$root" -t 1800 -m 3072
	    -a "$src:/usr/src/codectl-$version"
	    -a "$a64/codectl-abi-test:/tests/codectl-abi-test")
fi
# Signed: loaded as under Secure Boot, signatures enforced.
[ $sign -eq 0 ] || export CODECTL_VM_APPEND="${CODECTL_VM_APPEND:-} module.sig_enforce=1"
"$top/scripts/vm-run.sh" -k "$series" "${vm[@]}" \
	-a "$sysroot/etc/modprobe.d:/etc/modprobe.d" \
	-a "$sysroot/etc/modules-load.d:/etc/modules-load.d" \
	-a "$sysroot/usr/lib/udev:/usr/lib/udev" \
	-a "$tmp/guest.sh:/guest.sh" \
	-l "$logs/dkms-$series.console" -- sh /guest.sh "$version" >"$tmp/vm.out" 2>&1
rc=$?
# Each guest check counts; then the run itself (exit 0, clean kernel log).
guest_results "" "$tmp/vm.out" $rc "$kver"
# What the guest said of dkms and make (its lines indented by 4).
sed -n '/^CODECTL-VM-COMMAND-BEGIN/,/^CODECTL-VM-COMMAND-END/{/^    /p}' "$tmp/vm.out"
# shellcheck disable=SC2046 # parameter names have no blanks
[ $arm64 -eq 0 ] || check_params $(sed -n 's/^PARM //p' "$tmp/vm.out")
finish
