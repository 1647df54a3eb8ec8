#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The package test ("make check-packages"): codectl's .debs installed the
# way a user installs them, for each kernel SERIES (6.1, 7.2):
#
#  1. the packages are built (scripts/pkg-build.sh), twice: the .debs as
#     VERSION and VERSION+pkgtest1 (a changelog entry, as an upgrade
#     brings), the RPMs as release 1 and 1.pkgtest1;
#  2. in an overlay of a scratch Debian root with that kernel's headers
#     installed from Debian's packages (scripts/pkg-root.sh: a bookworm
#     debootstrap with linux-headers-6.1 for 6.1; the sid root of `make
#     toolchain-7.2` for 7.2, the 7.2 headers installed by apt in the
#     overlay), with a generated MOK key set in /etc/dkms/framework.conf
#     (mok_signing_key, mok_certificate): `apt-get install` of the four
#     .debs; dkms, called by codectl-dkms's postinst (dh_dkms's script),
#     must build, sign and install codectl.ko for the kernel;
#  3. the signature: modinfo's signer and sig_key are the generated key's,
#     and the PKCS#7 signature verifies with openssl against that
#     certificate (and fails on a module changed by one byte);
#  4. a guest booted on that kernel (scripts/vm-run.sh) with the module
#     that the package built and the package's files (modprobe.d,
#     modules-load.d, codectl, codectl-stackdemo, libcodectl.so.1):
#     depmod, modprobe of what modules-load.d lists, `codectl version`,
#     `codectl self` (registrations), `codectl-stackdemo` (its stack
#     unwound by the kernel with SFrame), `codectl unwind`, modprobe -r;
#     then a guest booted with module.sig_enforce=1, which must refuse the
#     module: the key is not trusted by a stock kernel (see README);
#  5. `apt-get install` of the +pkgtest1 .debs: the module is rebuilt
#     (a new make.log and a new installed codectl.ko) and installed;
#  6. `apt-get purge` of all four: nothing of codectl is left (no file
#     named *codectl* on the root's filesystem that was not there before,
#     no dkms state, no modules.dep entry, no package known to dpkg).  The
#     leftover check is checked too: it must see the installed files, and
#     a stray file left under /var/lib/dkms;
#  7. the RPMs' scriptlets, in a fresh overlay of the same root: the four
#     RPMs installed with Debian's rpm (`rpm --root ... -i --nodeps`: the
#     root is Debian, its packages are not in rpm's database), their
#     %posttrans must have dkms build and install the module; `rpm -U` to
#     release 1.pkgtest1 must leave it built and installed (the old
#     %preun runs after the new package's scriptlets); `rpm -e` must leave
#     nothing.  Debian's dkms and rpm stand in for Fedora's: this checks
#     the scriptlets' logic, not Fedora.
#
#   scripts/pkg-test.sh [--debs DIR --debs2 DIR] [--rpms DIR --rpms2 DIR]
#                       [--keep DIR] [SERIES...]           (default 6.1 7.2)
#
# --keep DIR: the first .debs and RPMs also go to DIR/deb and DIR/rpm/RPMS
# (scripts/check.sh gives them to scripts/pkg-test-arm64.sh, which
# compares the arm64 packages with them).
#
# Ends with "N passed, N failed"; exits non-zero on any failure.  Needs
# root (debootstrap, chroot, mounts) and Debian's archive for the first
# run (the roots and headers .debs are cached under .cache/, CODECTL_CACHE).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export CODECTL_CACHE=${CODECTL_CACHE:-$top/.cache}

passed=0 failed=0
. "$top/scripts/lib.sh"
finish() {
	echo "packages ${series_list:-}: $passed passed, $failed failed ($(($(date +%s) - t0))s)"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
t0=$(date +%s)

debs1="" debs2="" rpms1="" rpms2="" keep=""
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=$(readlink -f "$2"); shift 2 ;;
	--debs) debs1=$(readlink -f "$2"); shift 2 ;;
	--debs2) debs2=$(readlink -f "$2"); shift 2 ;;
	--rpms) rpms1=$(readlink -f "$2"); shift 2 ;;
	--rpms2) rpms2=$(readlink -f "$2"); shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- 6.1 7.2
series_list="$*"
[ "$(id -u)" = 0 ] || { notok "run as root (chroot, mounts)"; finish; }

tmp=$(mktemp -d /tmp/codectl-pkgtest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# --- 1. the packages ---------------------------------------------------------
v1=$(cd "$top" && dpkg-parsechangelog -S Version)
v2=$v1+pkgtest1
if [ -z "$debs1" ]; then
	if "$top/scripts/pkg-build.sh" --deb "$tmp/build1" >"$tmp/build1.log" 2>&1; then
		ok "pkg-build.sh --deb: $v1, lintian clean"
	else
		sed 's/^/    /' "$tmp/build1.log"; notok "pkg-build.sh --deb ($v1)"; finish
	fi
	debs1=$tmp/build1/deb
fi
if [ -z "$debs2" ]; then
	if "$top/scripts/pkg-build.sh" --deb --deb-version "$v2" "$tmp/build2" >"$tmp/build2.log" 2>&1; then
		ok "pkg-build.sh --deb --deb-version $v2"
	else
		sed 's/^/    /' "$tmp/build2.log"; notok "pkg-build.sh --deb --deb-version $v2"; finish
	fi
	debs2=$tmp/build2/deb
fi
if [ -z "$rpms1" ]; then
	if "$top/scripts/pkg-build.sh" --rpm "$tmp/rbuild1" >"$tmp/rbuild1.log" 2>&1; then
		ok "pkg-build.sh --rpm: rpmlint clean"
	else
		sed 's/^/    /' "$tmp/rbuild1.log"; notok "pkg-build.sh --rpm"; finish
	fi
	rpms1=$tmp/rbuild1/rpm/RPMS
fi
if [ -z "$rpms2" ]; then
	# rpmlint says the test release is not the changelog's: that one
	# warning is expected here (and only here).
	if "$top/scripts/pkg-build.sh" --rpm --rpm-dist .pkgtest1 "$tmp/rbuild2" >"$tmp/rbuild2.log" 2>&1 ||
	   grep -q 'incoherent-version-in-changelog' "$tmp/rbuild2/rpm/rpmlint.txt"; then
		ok "pkg-build.sh --rpm --rpm-dist .pkgtest1"
	else
		sed 's/^/    /' "$tmp/rbuild2.log"; notok "pkg-build.sh --rpm --rpm-dist .pkgtest1"; finish
	fi
	rpms2=$tmp/rbuild2/rpm/RPMS
fi
if [ -n "$keep" ]; then
	rm -rf "$keep" && mkdir -p "$keep/deb" "$keep/rpm" &&
		cp -a "$debs1"/*.deb "$keep/deb/" && cp -a "$rpms1" "$keep/rpm/RPMS" ||
		{ notok "--keep $keep: copying the packages"; finish; }
fi
mkdir -p "$tmp/r1" "$tmp/r2"
find "$rpms1" -name '*.rpm' -exec cp -t "$tmp/r1" {} +
find "$rpms2" -name '*.rpm' -exec cp -t "$tmp/r2" {} +
[ "$(ls "$tmp/r1" | wc -l)" = 4 ] && [ "$(ls "$tmp/r2" | wc -l)" = 4 ] ||
	{ notok "four binary RPMs in $rpms1 and $rpms2"; finish; }
r1=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$tmp"/r1/codectl-dkms-*.rpm)
r2=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$tmp"/r2/codectl-dkms-*.rpm)
v1=$(dpkg-deb -f "$(ls "$debs1"/codectl-dkms_*.deb)" Version)
v2=$(dpkg-deb -f "$(ls "$debs2"/codectl-dkms_*.deb)" Version)
dkms_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
mkdir -p "$tmp/share/v1" "$tmp/share/v2"
# The four packages (not the -dbgsym ones).
for p in codectl-dkms codectl libcodectl1 libcodectl-dev; do
	cp "$debs1"/"${p}"_*.deb "$tmp/share/v1/" && cp "$debs2"/"${p}"_*.deb "$tmp/share/v2/" ||
		{ notok "no $p .deb in $debs1 and $debs2"; finish; }
done

# In-root steps (run by chroot in the overlay; /pkgtest is $tmp/share).
cat >"$tmp/share/inroot.sh" <<'INROOT'
set -u
kver=$1 step=$2
say() { echo "inroot: $*"; }
# codectl's files: every path named *codectl* on the root's filesystem,
# the dkms state and the modules.dep entries.
leftovers() {
	find / -xdev \( -path /pkgtest -o -path /proc -o -path /sys -o -path /dev -o -path /tmp \) -prune \
		-o -name '*codectl*' -print 2>/dev/null | sort
	[ ! -e /var/lib/dkms/codectl ] || find /var/lib/dkms/codectl | sed 's/^/dkms-state: /'
	grep -l codectl /lib/modules/*/modules.dep 2>/dev/null | sed 's/^/modules.dep: /'
	dpkg-query -W -f '${binary:Package} ${db:Status-Status}\n' codectl-dkms codectl libcodectl1 \
		libcodectl-dev 2>/dev/null | grep -v ' not-installed$' | sed 's/^/dpkg: /'
}
case $step in
prepare)
	# The kernel's headers, if the root does not have them (7.2).
	if ls /pkgtest/headers/*.deb >/dev/null 2>&1; then
		apt-get install -y -q --no-install-recommends /pkgtest/headers/*.deb >/pkgtest/headers.log 2>&1 ||
			{ tail -n 20 /pkgtest/headers.log; exit 1; }
	fi
	test -f "/lib/modules/$kver/build/Makefile" || { say "no headers for $kver"; exit 1; }
	# A MOK key of our own, named in framework.conf (dkms would make one).
	mkdir -p /root/mok
	openssl req -new -x509 -nodes -days 36500 -subj "/CN=codectl pkg-test MOK/" \
		-newkey rsa:2048 -keyout /root/mok/mok.key -outform DER -out /root/mok/mok.der \
		>/dev/null 2>&1 || exit 1
	printf 'mok_signing_key="/root/mok/mok.key"\nmok_certificate="/root/mok/mok.der"\n' >>/etc/dkms/framework.conf
	cp /root/mok/mok.der /pkgtest/mok.der
	leftovers >/pkgtest/baseline.txt
	dkms --version | sed -n 1p >/pkgtest/dkms-version.txt
	;;
install | upgrade)
	apt-get install -y -q --no-install-recommends "$3"/*.deb >/pkgtest/apt-$step.log 2>&1
	rc=$?
	sed 's/^/    apt: /' /pkgtest/apt-$step.log
	[ $rc -eq 0 ] || exit 1
	;;
purge)
	apt-get purge -y -q codectl-dkms codectl libcodectl1 libcodectl-dev >/pkgtest/apt-purge.log 2>&1
	rc=$?
	sed 's/^/    apt: /' /pkgtest/apt-purge.log
	[ $rc -eq 0 ] || exit 1
	;;
state)
	# What the tests look at, into /pkgtest/state-$3.
	d=/pkgtest/state-$3
	mkdir -p "$d"
	leftovers >"$d/leftovers.txt"
	dkms status >"$d/dkms-status.txt" 2>&1
	dpkg-query -W -f '${binary:Package} ${Version} ${db:Status-Status}\n' codectl-dkms codectl \
		libcodectl1 libcodectl-dev >"$d/dpkg.txt" 2>/dev/null
	ko=$(ls /lib/modules/"$kver"/updates/dkms/codectl.ko* 2>/dev/null | sed -n 1p)
	if [ -n "$ko" ]; then
		cp "$ko" "$d/"
		stat -c '%i %Y.%y' "$ko" >"$d/ko-stat.txt"
	fi
	find /var/lib/dkms/codectl -name make.log -exec stat -c '%Y %n' {} + >"$d/make-log.txt" 2>/dev/null
	find /var/lib/dkms/codectl -name make.log -exec cat {} + >"$d/make.log" 2>/dev/null
	for f in /etc/modprobe.d/codectl.conf /etc/modules-load.d/codectl.conf \
		 /usr/lib/udev/rules.d/60-codectl.rules /usr/bin/codectl /usr/bin/codectl-stackdemo \
		 /usr/lib/x86_64-linux-gnu/libcodectl.so.1 \
		 /lib/systemd/system/codectl-import.service /lib/systemd/system/codectl-import.path \
		 /lib/systemd/system/codectl-daemon.service; do
		[ ! -e "$f" ] || { mkdir -p "$d/files$(dirname "$f")"; cp -L "$f" "$d/files$f"; }
	done
	# The units deb-systemd-helper enabled (no systemd runs in the root).
	ls -l /etc/systemd/system/*.wants/ >"$d/wants.txt" 2>/dev/null
	;;
stray)
	# The leftover check must see a file a purge would leave.
	mkdir -p /var/lib/dkms/codectl/stray && touch /var/lib/dkms/codectl/stray/x
	leftovers >/pkgtest/stray.txt
	rm -rf /var/lib/dkms/codectl
	;;
esac
INROOT

# sig_check KO CERT_DER: verify the module's appended PKCS#7 signature
# with openssl against CERT_DER (the kernel's format: the module, the
# signature, struct module_signature with sig_len at its end, the magic).
sig_check() {
	local ko=$1 cert=$2 d=$tmp/sig f size siglen body
	rm -rf "$d"; mkdir -p "$d"
	f=$d/m.ko
	case $ko in
	*.xz) xz -dc "$ko" >"$f" ;;
	*.zst) zstd -q -dc "$ko" >"$f" ;;
	*.gz) gzip -dc "$ko" >"$f" ;;
	*) cp "$ko" "$f" ;;
	esac
	[ "$(tail -c 28 "$f")" = "~Module signature appended~" ] || return 1
	size=$(stat -c %s "$f")
	siglen=$(tail -c 32 "$f" | head -c 4 | od -An -tu1 | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	body=$((size - 28 - 12 - siglen))
	head -c "$body" "$f" >"$d/body"
	tail -c $((28 + 12 + siglen)) "$f" | head -c "$siglen" >"$d/sig.p7"
	openssl x509 -inform DER -in "$cert" -out "$d/cert.pem" || return 1
	[ "${3:-}" != tamper ] || printf 'X' | dd of="$d/body" bs=1 seek=100 conv=notrunc 2>/dev/null
	openssl cms -verify -binary -inform DER -in "$d/sig.p7" -content "$d/body" \
		-certfile "$d/cert.pem" -CAfile "$d/cert.pem" -purpose any -out /dev/null 2>"$d/verify.log"
}

for series in "$@"; do
	echo "=== packages $series"
	if ! "$top/scripts/pkg-root.sh" build "$series" >"$tmp/root-$series.log" 2>&1; then
		sed 's/^/    /' "$tmp/root-$series.log"
		notok "$series: a scratch root with the headers ($(tail -n 1 "$tmp/root-$series.log"))"
		continue
	fi
	kver=$("$top/scripts/kernels.sh" kver "$series")
	ov=$tmp/ov-$series
	rm -rf "$ov" "$tmp/share/headers" "$tmp/share"/state-* "$tmp/share"/*.txt
	mkdir -p "$tmp/share/headers"
	if [ "$series" != 6.1 ]; then
		cp $("$top/scripts/pkg-root.sh" headers "$series") "$tmp/share/headers/"
	fi
	inroot() { "$top/scripts/pkg-root.sh" run "$series" "$ov" -b "$tmp/share:/pkgtest" -- \
		bash /pkgtest/inroot.sh "$kver" "$@"; }

	# --- 2. install -------------------------------------------------------
	if inroot prepare >"$tmp/prepare.log" 2>&1; then
		ok "$series: scratch root $(cat "$tmp/share/dkms-version.txt"), headers of $kver, a generated MOK key"
	else
		sed 's/^/    /' "$tmp/prepare.log"; notok "$series: preparing the scratch root"; continue
	fi
	s=$tmp/share
	start=$(date +%s)
	inroot install /pkgtest/v1 >"$tmp/install.log" 2>&1
	rc=$?
	grep -E 'Building|Done|Skipped|Error|error|Signing|codectl' "$tmp/install.log" | sed -n 1,30p
	check "$series: apt-get install of $v1 (dkms from the postinst; $(($(date +%s) - start))s)" [ $rc -eq 0 ]
	inroot state v1 >/dev/null 2>&1
	check "$series: dpkg: the four packages installed at $v1" \
		[ "$(grep -c " $v1 installed\$" "$s/state-v1/dpkg.txt" 2>/dev/null)" = 4 ]
	check "$series: dkms status: codectl/$dkms_version installed for $kver ($(grep codectl "$s/state-v1/dkms-status.txt" | sed -n 1p))" \
		grep -q "^codectl/$dkms_version, $kver, x86_64: installed" "$s/state-v1/dkms-status.txt"
	ko=$(ls "$s"/state-v1/codectl.ko* 2>/dev/null | sed -n 1p)
	if [ -n "$ko" ]; then
		ok "$series: the postinst's dkms installed /lib/modules/$kver/updates/dkms/${ko##*/}"
	else
		notok "$series: no codectl.ko under /lib/modules/$kver/updates/dkms"
		sed 's/^/    /' "$tmp/install.log" | tail -n 40
		continue
	fi
	vermagic=$(modinfo -F vermagic "$ko")
	check "$series: vermagic $vermagic" [ "${vermagic%% *}" = "$kver" ]
	check "$series: modinfo version $dkms_version" [ "$(modinfo -F version "$ko")" = "$dkms_version" ]
	missing=""
	for f in /etc/modprobe.d/codectl.conf /etc/modules-load.d/codectl.conf \
		/usr/lib/udev/rules.d/60-codectl.rules /usr/bin/codectl /usr/bin/codectl-stackdemo \
		/usr/lib/x86_64-linux-gnu/libcodectl.so.1 \
		/lib/systemd/system/codectl-import.service /lib/systemd/system/codectl-import.path \
		/lib/systemd/system/codectl-daemon.service; do
		[ -e "$s/state-v1/files$f" ] || missing+=" $f"
	done
	check "$series: the packages' files are installed (modprobe.d, modules-load.d, udev rule, tools, libcodectl.so.1, systemd units)${missing:+; missing:$missing}" \
		[ -z "$missing" ]
	check "$series: codectl-import.service and .path, codectl-daemon.service enabled (multi-user.target, paths.target)" \
		sh -c 'grep -q "codectl-import.service ->" "$1" && grep -q "codectl-import.path ->" "$1" &&
			grep -q "codectl-daemon.service ->" "$1"' \
		sh "$s/state-v1/wants.txt"
	if command -v systemd-analyze >/dev/null; then
		check "$series: systemd-analyze verify of the installed units" \
			sh -c 'cd "$1" && systemd-analyze verify --man=no codectl-import.service codectl-import.path codectl-daemon.service 2>&1 |
				grep -v "is not executable" | { ! grep .; }' sh "$s/state-v1/files/lib/systemd/system"
	fi

	# --- 3. the signature -------------------------------------------------
	signer=$(modinfo -F signer "$ko")
	sig_key=$(modinfo -F sig_key "$ko" | tr -d ':' | tr a-f A-F)
	serial=$(openssl x509 -inform DER -in "$s/mok.der" -noout -serial | sed 's/^serial=//' | tr a-f A-F)
	check "$series: modinfo signer '$signer', sig_hashalgo $(modinfo -F sig_hashalgo "$ko")" \
		[ "$signer" = "codectl pkg-test MOK" ]
	check "$series: modinfo sig_key is the generated certificate's serial ($serial)" \
		eval '[ -n "$serial" ] && [ "${sig_key#0}" = "${serial#0}" ]' 
	check "$series: the PKCS#7 signature verifies against the MOK certificate (openssl cms)" \
		sig_check "$ko" "$s/mok.der"
	if sig_check "$ko" "$s/mok.der" tamper; then
		notok "$series: a module changed by one byte still verifies"
	else
		ok "$series: a module changed by one byte does not verify"
	fi

	# --- 4. the guest ---------------------------------------------------------
	f=$s/state-v1/files
	{ guest_preamble; cat <<'GUEST'; } >"$tmp/guest.sh"
desc="modinfo finds the package-built module at $file"
t sh -c "case '$file' in /lib/modules/$kver/updates/dkms/codectl.ko*) true;; *) false;; esac"
for m in $(sed 's/#.*//' /etc/modules-load.d/*.conf); do
	desc="modprobe $m (from the package's modules-load.d)"; t modprobe "$m"
done
desc="codectl loaded, version $version"; t sh -c "grep -q '^codectl ' /proc/modules && test \"\$(cat /sys/module/codectl/version)\" = $version"
echo "info: kernel taint $(cat /proc/sys/kernel/tainted) (E, an unsigned or untrusted module, is 8192)"
desc="codectl version: abi_version"; t sh -c 'codectl version | tee /tmp/v | grep -q "^abi_version  *[1-9]"'
desc="codectl self: the tool's objects registered"
t sh -c 'codectl self | tee /tmp/self | grep -Eq "^[1-9][0-9]* registrations$"'
desc="codectl-stackdemo 3: main and 4 eval frames unwound by the kernel"
t sh -c 'codectl-stackdemo 3 >/tmp/demo; cat /tmp/demo; awk "/^\$/ { exit } { print }" /tmp/demo >/tmp/first;
	grep -q " main (codectl-stackdemo)" /tmp/first && [ "$(grep -c " eval (codectl-stackdemo)" /tmp/first)" -ge 4 ]'
desc="codectl unwind: the unwinds counted"; t sh -c 'codectl unwind | grep -Eq "^unwinds +[1-9]"'
# What codectl-import.service runs at boot, with the guest's ld.so.cache.
exec_start=$(sed -n 's/^ExecStart=//p' /codectl-import.service)
desc="codectl-import.service's ExecStart ($exec_start): libc imported"
t sh -c "ldconfig && $exec_start | tail -n 1 && grep -q 'libc.so.6\$' /sys/kernel/debug/codectl/imports"
# What codectl-daemon.service runs: it reads the demand queue and, first,
# covers what runs already (xz: no SFrame, not in ld.so.cache).
exec_start=$(sed -n 's/^ExecStart=//p' /codectl-daemon.service)
# xz waits on a fifo this shell holds open: no busybox sleep feeding it,
# which has no CFI (codectl status names every object in use that
# nothing covers, and says stacks will be cut).
mkfifo /tmp/xz.in && exec 3<>/tmp/xz.in
xz -c </tmp/xz.in >/dev/null &
xz=$!
$exec_start >/tmp/daemon.log 2>&1 &
daemon=$!
desc="codectl-daemon.service's ExecStart ($exec_start): the running xz imported"
t sh -c 'i=0; while ! grep -q "looked at every process" /tmp/daemon.log && [ $i -lt 600 ]; do
		i=$((i + 1)); sleep 0.1; done; cat /tmp/daemon.log; grep -q "imported /usr/bin/xz" /tmp/daemon.log'
desc="codectl status with the daemon running: all well"; t codectl status
kill $daemon; wait $daemon
desc="codectl status without the daemon: something is off (exit 1)"; t sh -c '! codectl status'
exec 3>&-
kill $xz
desc="modprobe -r codectl"; t modprobe -r codectl
desc="module gone"; t sh -c '! grep -q "^codectl " /proc/modules'
echo "guest: $n passed, $f failed"
[ "$f" -eq 0 ]
GUEST
	vm_args=(-k "$series" -t 600
		-a "$ko:/lib/modules/$kver/updates/dkms/${ko##*/}"
		-a "$f/etc/modprobe.d:/etc/modprobe.d" -a "$f/etc/modules-load.d:/etc/modules-load.d"
		-a "$f/usr/bin/codectl:/usr/bin/codectl"
		-a "$f/usr/bin/codectl-stackdemo:/usr/bin/codectl-stackdemo"
		-a "$f/usr/lib/x86_64-linux-gnu/libcodectl.so.1:/usr/lib/x86_64-linux-gnu/libcodectl.so.1"
		-a "$f/lib/systemd/system/codectl-import.service:/codectl-import.service"
		-a "$f/lib/systemd/system/codectl-daemon.service:/codectl-daemon.service"
		-a /usr/bin/xz
		-a /sbin/ldconfig
		-a "$tmp/guest.sh:/guest.sh")
	"$top/scripts/vm-run.sh" "${vm_args[@]}" -l "$tmp/vm.log" -- sh /guest.sh "$dkms_version" \
		>"$tmp/vm.out" 2>&1
	rc=$?
	guest_results "$series: " "$tmp/vm.out" $rc "$kver"
	# Enforcement: a stock kernel does not trust the MOK key (no shim, no
	# MokList under QEMU's direct boot), so it must refuse the module.
	CODECTL_VM_APPEND="module.sig_enforce=1" "$top/scripts/vm-run.sh" -k "$series" -t 300 \
		-a "$ko:/codectl.ko${ko##*codectl.ko}" -- \
		'cat /sys/module/module/parameters/sig_enforce; insmod /codectl.ko* 2>&1; echo "insmod-exit=$?"' \
		>"$tmp/enforce.out" 2>&1
	refusal=$(sed -n '/^CODECTL-VM-COMMAND-BEGIN/,/^CODECTL-VM-COMMAND-END/p' "$tmp/enforce.out" |
		grep -E 'insmod|ERROR|Key|key' | tr '\n' ' ')
	check "$series: module.sig_enforce=1 refuses the MOK-signed module (key not trusted): $refusal" \
		grep -q 'insmod-exit=[1-9]' "$tmp/enforce.out"

	# --- 5. upgrade -------------------------------------------------------------
	sleep 1 # a rebuild's files get a later mtime
	start=$(date +%s)
	inroot upgrade /pkgtest/v2 >"$tmp/upgrade.log" 2>&1
	rc=$?
	grep -E 'Building|Done|Skipped|Removing|Error|error' "$tmp/upgrade.log" | sed -n 1,20p
	check "$series: apt-get install of $v2 over $v1 ($(($(date +%s) - start))s)" [ $rc -eq 0 ]
	inroot state v2 >/dev/null 2>&1
	check "$series: dpkg: the four packages at $v2" \
		[ "$(grep -c " $v2 installed\$" "$s/state-v2/dpkg.txt" 2>/dev/null)" = 4 ]
	m1=$(cut -d' ' -f1 "$s/state-v1/make-log.txt" 2>/dev/null)
	m2=$(cut -d' ' -f1 "$s/state-v2/make-log.txt" 2>/dev/null)
	check "$series: upgrade rebuilt the module (dkms make.log of $m1, then $m2)" \
		eval '[ -n "$m1" ] && [ -n "$m2" ] && [ "$m2" -gt "$m1" ]' 
	k1=$(cat "$s/state-v1/ko-stat.txt" 2>/dev/null) k2=$(cat "$s/state-v2/ko-stat.txt" 2>/dev/null)
	check "$series: upgrade installed a new codectl.ko (inode, mtime: $k1, then $k2)" \
		eval '[ -n "$k2" ] && [ "$k1" != "$k2" ]' 
	check "$series: dkms status after the upgrade: one codectl, installed for $kver" \
		eval '[ "$(grep -c "^codectl/" "$s/state-v2/dkms-status.txt")" = 1 ] &&
		grep -q "^codectl/$dkms_version, $kver, x86_64: installed" "$s/state-v2/dkms-status.txt"' 

	# --- 6. purge ---------------------------------------------------------------
	n_inst=$(wc -l <"$s/state-v2/leftovers.txt")
	check "$series: the leftover check sees the installed packages ($n_inst paths)" \
		[ "$n_inst" -gt "$(wc -l <"$s/baseline.txt")" ]
	inroot purge >"$tmp/purge.log" 2>&1
	rc=$?
	check "$series: apt-get purge of the four packages" [ $rc -eq 0 ]
	inroot state purged >/dev/null 2>&1
	if diff -u "$s/baseline.txt" "$s/state-purged/leftovers.txt" >"$tmp/leftovers.diff"; then
		ok "$series: nothing left after purge: /usr/src, /var/lib/dkms, /lib/modules/*/updates, /etc, dpkg"
	else
		sed 's/^/    /' "$tmp/leftovers.diff"
		notok "$series: purge left files behind"
	fi
	inroot stray >/dev/null 2>&1
	check "$series: the leftover check sees a stray file under /var/lib/dkms" \
		grep -q '^dkms-state: /var/lib/dkms/codectl/stray/x$' "$s/stray.txt"
	# --- 7. the RPMs' scriptlets ---------------------------------------------
	ovr=$tmp/ovr-$series
	rinroot() { "$top/scripts/pkg-root.sh" run "$series" "$ovr" -b "$tmp/share:/pkgtest" -- \
		bash /pkgtest/inroot.sh "$kver" "$@"; }
	rpmroot() { "$top/scripts/pkg-root.sh" run "$series" "$ovr" -H -- \
		bash -c 'rpm --root "$PKGROOT" "$@"' rpm "$@"; }
	rm -rf "$s"/state-* "$s/baseline.txt"
	if rinroot prepare >"$tmp/rprepare.log" 2>&1 && rpmroot --initdb >>"$tmp/rprepare.log" 2>&1; then
		ok "$series: rpm: a fresh overlay of the root, an rpm database in it"
	else
		sed 's/^/    /' "$tmp/rprepare.log"; notok "$series: rpm: preparing the root"; continue
	fi
	rpmroot -i --nodeps "$tmp"/r1/*.rpm >"$tmp/rpm-i.log" 2>&1
	rc=$?
	grep -E 'Building|Signing|Installing|rror|Skipped|skipped' "$tmp/rpm-i.log" | sed -n 1,10p | sed 's/^/    rpm: /'
	check "$series: rpm -i --nodeps of the four RPMs ($r1)" [ $rc -eq 0 ]
	rinroot state r1 >/dev/null 2>&1
	check "$series: rpm: %posttrans had dkms install codectl/$dkms_version for $kver" \
		grep -q "^codectl/$dkms_version, $kver, x86_64: installed" "$s/state-r1/dkms-status.txt"
	check "$series: rpm: the module installed is signed by the MOK key" \
		eval 'ko=$(ls "$s"/state-r1/codectl.ko* 2>/dev/null | sed -n 1p); [ -n "$ko" ] &&
		[ "$(modinfo -F signer "$ko")" = "codectl pkg-test MOK" ]'
	sleep 1
	rpmroot -U --nodeps "$tmp"/r2/*.rpm >"$tmp/rpm-U.log" 2>&1
	rc=$?
	check "$series: rpm -U to $r2" \
		eval '[ $rc -eq 0 ] && [ "$(rpmroot -q --qf "%{RELEASE}\n" codectl-dkms codectl libcodectl libcodectl-devel |
			grep -c "^${r2#*-}\$")" = 4 ]'
	rinroot state r2 >/dev/null 2>&1
	m1=$(cut -d' ' -f1 "$s/state-r1/make-log.txt" 2>/dev/null)
	m2=$(cut -d' ' -f1 "$s/state-r2/make-log.txt" 2>/dev/null)
	check "$series: rpm: after the upgrade (old %preun last) codectl/$dkms_version is installed for $kver, rebuilt" \
		eval 'grep -q "^codectl/$dkms_version, $kver, x86_64: installed" "$s/state-r2/dkms-status.txt" &&
		[ -n "$m1" ] && [ -n "$m2" ] && [ "$m2" -gt "$m1" ] && ls "$s"/state-r2/codectl.ko* >/dev/null 2>&1'
	rpmroot -e --nodeps codectl-dkms codectl libcodectl libcodectl-devel >"$tmp/rpm-e.log" 2>&1
	rc=$?
	check "$series: rpm -e of the four" [ $rc -eq 0 ]
	rinroot state rpm-erased >/dev/null 2>&1
	if diff -u "$s/baseline.txt" "$s/state-rpm-erased/leftovers.txt" >"$tmp/rleftovers.diff"; then
		ok "$series: rpm: nothing left after rpm -e (dkms state, module, files)"
	else
		sed 's/^/    /' "$tmp/rleftovers.diff"
		notok "$series: rpm: rpm -e left files behind"
	fi

	if [ -n "${CODECTL_LOG_DIR:-}" ] && mkdir -p "$CODECTL_LOG_DIR"; then
		for l in install.log upgrade.log purge.log vm.out enforce.out rpm-i.log rpm-U.log rpm-e.log; do
			cp "$tmp/$l" "$CODECTL_LOG_DIR/pkg-$series-$l" 2>/dev/null
		done
	fi
done
finish
