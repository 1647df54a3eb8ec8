#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fedora's and Ubuntu's kernels as far as they can be had here: Debian's
# kernel source of the nearest version built with the distribution's own
# configuration file, for booting codectl's tests on them (issue 40).
# Installed into the project cache as the series "fedora" and "ubuntu",
# laid out like the stock series of scripts/kernels.sh, so that
# `scripts/vm-run.sh -k fedora` boots it and `scripts/build-module.sh
# fedora` builds codectl against it.
#
#   scripts/distro-kernel.sh build fedora|ubuntu    fetch, configure, build,
#                                     install (idempotent: nothing to do
#                                     if the stamp matches)
#   scripts/distro-kernel.sh config fedora|ubuntu   write the .config only
#   scripts/distro-kernel.sh status [fedora|ubuntu] the build figures,
#                                     codectl's options (the distribution's
#                                     file, after olddefconfig, built) and
#                                     every option that differs after
#                                     olddefconfig (before the build: the
#                                     configuration written)
#   scripts/distro-kernel.sh doc      status of both, written into
#                                     docs/distro-configs.md (between its
#                                     distro-kernels markers)
#   scripts/distro-kernel.sh key      make the test key (done by build)
#
# The series (where each configuration comes from, its SHA-256:
# docs/distro-configs.md):
#   fedora  Fedora dist-git's rawhide input configuration of 7.2.0-rc6
#           (FD) on Debian's 7.2 source (from sid; see below for the
#           version): the same upstream release.
#   ubuntu  Ubuntu 25.04's generic 6.14.0-15 configuration (U25) on
#           Debian's 6.12 source (the stock 6.12 series' version, from
#           bookworm-backports).  U25 rather than 24.04's 6.8 (U24): it is
#           the newest Ubuntu generic x86-64 configuration found, and the
#           nearer to 6.12 (two releases ahead rather than four behind,
#           so fewer options olddefconfig must drop or default); it is the
#           one docs/compatibility.md's Ubuntu column reads.  Both lock
#           down and sign alike (LOCK_DOWN_IN_SECURE_BOOT, MODULE_SIG_ALL,
#           SHA-512, Canonical's certificates in SYSTEM_TRUSTED_KEYS).
#
# The configuration file is $CACHE/distro-configs/NAME (NAME in the
# table below), or the file CODECTL_DISTRO_CONFIG names; its SHA-256
# must be the table's.  It is not in the tree (brought in from a public
# repository): without it the script says where to get it and exits 2.
#
# Configuration: the distribution's file, `make olddefconfig` (what both
# distributions' builds do with it; options Debian's source lacks are
# dropped), then only these changes (OPTIONS below, each with its reason):
#   - `make localmodconfig` with an empty module list: every =m option
#     goes (the guests load no module of the image);
#   - what the guests do without, built in (kernel-build-lib.sh's
#     GUEST_TRIM, as debug-kernel.sh trims it: devices, file systems,
#     the network's protocols), less what the distributions' Secure Boot,
#     signing and LSM setup is made of (KEEP below);
#   - no debug info, hence no BTF; no Rust;
#   - SYSTEM_TRUSTED_KEYS: the test certificate (below), as the machine
#     owner's key (MOK) that shim hands to the kernel on a real machine;
#     Ubuntu's SYSTEM_TRUSTED_KEYS and SYSTEM_REVOCATION_KEYS name files
#     of Ubuntu's tree only;
#   - Ubuntu: Debian's name of its Secure Boot lockdown option.
# Module signing (MODULE_SIG, MODULE_SIG_ALL, the SHA-512 hash, the build's
# own key certs/signing_key.pem) and lockdown (SECURITY_LOCKDOWN_LSM,
# LOCK_DOWN_KERNEL_FORCE_NONE: the tests ask for lockdown on the kernel
# command line) stay as the distribution sets them.  What codectl needs
# is checked (NEED below) but not set.  `status` lists every difference
# from the distribution's file after olddefconfig (scripts/diffconfig).
#
# The test key: $CACHE/distro-keys/test-mok.{key,crt} (PEM, RSA 2048,
# self-signed, code signing), and test-mok.der (the DER form DKMS's
# mok_certificate takes), made once with openssl and used by both series:
# modules signed with it (the kernel's scripts/sign-file, as DKMS does)
# load under module.sig_enforce=1.  Never use it on a real machine.
#
# Debian's source: the stock series' version (scripts/kernels.sh's stamp)
# if the archive serves it, else the newest of the same upstream release
# that it serves (kernel-build-lib.sh's source_version: here sid's 7.2.13-1
# is listed but gone, 7.2.8-1 is built).
#
# Build: `nice -n 19 make -j$JOBS` (JOBS defaults to 2) in
#   $CACHE/SERIES/src/linux-VERSION     the unpacked source
#   $CACHE/SERIES/obj                   the object tree (O=)
# and installed into $CACHE/kernels/SERIES as scripts/debug-kernel.sh does
# (scripts/kernel-build-lib.sh), with config-distro (the distribution's
# file after olddefconfig) and config-diff (scripts/diffconfig of it and
# the built .config) beside the stamp.  CACHE is <repo>/.cache unless
# CODECTL_CACHE is set.
set -euo pipefail

JOBS=${JOBS:-2}
NICE=${NICE:-19} # guests of the tests keep their priority

# Bump when the options or the layout change: the stamp then no longer
# matches and the next build reconfigures and rebuilds.
LAYOUT=1

# name | Debian series whose source is used | file | SHA-256 | repository
# path commit it comes from (docs/distro-configs.md: FD, U25)
DISTROS=(
	"fedora|7.2|fedora-dist-git-7.2.0-0.rc6.x86_64.config|3591d620b54fb574b655ba14b2ddffdad66ca49d7cb730a3a1077bc50c5501a1|ClangBuiltLinux/rpms_kernel kernel-x86_64-fedora.config f914af26b6639ad41be1cb3b4c711304ed188904"
	"ubuntu|6.12|ubuntu-25.04-6.14.0-15-generic.config|66293a96fabca0e35daf77758f5feed4d19400362cccdb27bd402b28825d78a8|a13xp0p0v/kernel-hardening-checker kernel_hardening_checker/config_files/distros/Ubuntu_25.04_Plucky_x86_64.config 6d9270cda2e3a6ffb361a62aa77c870f1f7acb18"
)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
keys=$CACHE/distro-keys
cert=$keys/test-mok.crt

. "$repo/scripts/lib.sh"
. "$repo/scripts/kernel-build-lib.sh"

# What codectl and its tests need, checked in the built configuration,
# not set: every one is in both distributions' files.
NEED=(
	-e MODULES -e MODULE_UNLOAD -e MODULE_SIG -e KPROBES -e KRETPROBES
	-e KPROBES_ON_FTRACE -e PERF_EVENTS -e BPF_SYSCALL -e BPF_EVENTS
	-e UPROBE_EVENTS -e KPROBE_EVENTS -e FTRACE -e FUNCTION_TRACER
	-e USER_STACKTRACE_SUPPORT -e DEBUG_FS -e MMU_NOTIFIER
	-e SECURITY_LOCKDOWN_LSM -e SECURITY_LOCKDOWN_LSM_EARLY
	-e LOCK_DOWN_KERNEL_FORCE_NONE -e LOCK_DOWN_IN_EFI_SECURE_BOOT
	-d MODULE_SIG_FORCE
	# the guests of vm-run.sh: PVH boot, initramfs (zstd), serial console
	-e PVH -e DEVTMPFS -e BLK_DEV_INITRD -e RD_ZSTD -e SERIAL_8250_CONSOLE
)

# Of GUEST_TRIM, what stays as the distribution sets it: the LSMs (and the
# network, which SELinux and AppArmor depend on), EFI (its Secure Boot
# lockdown depends on it), integrity, IMA and EVM (the platform and
# machine keyrings a MOK goes into on a real machine) and the TPM.
KEEP=(
	NET EFI SECURITY_SELINUX SECURITY_APPARMOR SECURITY_TOMOYO
	SECURITY_IPE SECURITY_LANDLOCK SECURITY_LOADPIN SECURITY_SAFESETID
	INTEGRITY IMA EVM TCG_TPM
)
TRIM=()
for t in "${GUEST_TRIM[@]}"; do
	[[ " ${KEEP[*]} " == *" $t "* ]] || TRIM+=("$t")
done

# distro NAME: set distro, base, config_name, config_sha, origin.
distro() {
	local line
	for line in "${DISTROS[@]}"; do
		IFS='|' read -r distro base config_name config_sha origin <<<"$line"
		[ "$distro" != "$1" ] || return 0
	done
	die "unknown distribution '$1' (fedora, ubuntu)"
}

# options: the changes to the distribution's configuration, in OPTIONS.
options() {
	OPTIONS=(
		# Debug info is most of the build's time and size, and
		# nothing of the tests needs it; BTF goes with it (the
		# tracer tests' bpftrace uses kprobes, profile probes and
		# ustack, none of which needs BTF).
		-d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT
		-d DEBUG_INFO_DWARF4 -d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE
		-d DEBUG_INFO_BTF -d DEBUG_INFO_BTF_MODULES
		# Rust needs a bindgen and a rustc of the kernel's choosing,
		# which are not here; no part of codectl is Rust.
		-d RUST
		# The test key is trusted as a MOK is (see above); Ubuntu's
		# files of Canonical's certificates are not in Debian's tree.
		--set-str SYSTEM_TRUSTED_KEYS "$cert" --set-str SYSTEM_REVOCATION_KEYS ''
		# The release names the series (7.2.13-codectl-fedora).
		--set-str LOCALVERSION "-codectl-$distro" -d LOCALVERSION_AUTO
	)
	# Ubuntu's LOCK_DOWN_IN_SECURE_BOOT=y (its own patch) is
	# LOCK_DOWN_IN_EFI_SECURE_BOOT in Debian's (and Fedora's) source.
	[ "$distro" != ubuntu ] || OPTIONS+=(-e LOCK_DOWN_IN_EFI_SECURE_BOOT)
	# IBT: Fedora's has it, Ubuntu's generic kernels not.
	need=("${NEED[@]}")
	[ "$distro" != fedora ] || need+=(-e X86_KERNEL_IBT)
}

# distro_config: the distribution's file, checked, in $config.
distro_config() {
	local path file commit got
	config=${CODECTL_DISTRO_CONFIG:-$CACHE/distro-configs/$config_name}
	if [ ! -f "$config" ]; then
		read -r path file commit <<<"$origin"
		cat >&2 <<-EOF
		${0##*/}: no $config: the $distro configuration is not in the tree.
		  Get it from the public repository $path, file $file at commit
		  $commit (for instance \`git show $commit:$file\` in a clone), save it
		  as $CACHE/distro-configs/$config_name (or name it in
		  CODECTL_DISTRO_CONFIG); SHA-256 $config_sha.
		  docs/distro-configs.md says more.
		EOF
		exit 2
	fi
	got=$(sha256sum "$config" | cut -d' ' -f1)
	[ "$got" = "$config_sha" ] || die "$config: SHA-256 $got, not $config_sha (docs/distro-configs.md)"
}

# make_key: the test key and certificate, once.
make_key() {
	[ -f "$cert" ] && [ -f "$keys/test-mok.key" ] && [ -f "$keys/test-mok.der" ] && return 0
	mkdir -p "$keys"
	# Code signing and the kernel module signing OID, as the MOKs that
	# Ubuntu's update-secureboot-policy and shim's tools make.
	openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 36500 \
		-subj "/CN=codectl test MOK (tests only)/" \
		-addext "basicConstraints=critical,CA:FALSE" \
		-addext "keyUsage=digitalSignature" \
		-addext "extendedKeyUsage=codeSigning,1.3.6.1.4.1.2312.16.1.2" \
		-keyout "$keys/test-mok.key.new" -out "$cert.new" 2>/dev/null ||
		die "openssl could not make the test key"
	openssl x509 -in "$cert.new" -outform DER -out "$keys/test-mok.der"
	mv "$keys/test-mok.key.new" "$keys/test-mok.key"
	mv "$cert.new" "$cert"
	say "test key made: $cert ($(openssl x509 -in "$cert" -noout -fingerprint -sha256))"
}

# configure: the distribution's file, olddefconfig (kept in
# $work/config-distro), then OPTIONS and the trimming, in $obj/.config.
configure() {
	mkdir -p "$obj"
	cp "$config" "$obj/.config"
	make -s -C "$srcdir" O="$obj" olddefconfig >/dev/null
	cp "$obj/.config" "$work/config-distro"
	set_options "${OPTIONS[@]}"
	trim_modules
	# localmodconfig may undo what OPTIONS asks only for modules;
	# apply them again, with TRIM, and resolve.
	local t off=() kept
	for t in "${TRIM[@]}"; do off+=(-d "$t"); done
	set_options "${off[@]}" "${OPTIONS[@]}"
	check_options "${OPTIONS[@]}" "${need[@]}"
	kept=$(still_set "${TRIM[@]}")
	[ -z "$kept" ] || say "config: kept (selected by others): ${kept//$'\n'/ }"
	grep -qxF "CONFIG_SYSTEM_TRUSTED_KEYS=\"$cert\"" "$obj/.config" ||
		die "config: SYSTEM_TRUSTED_KEYS is not the test certificate"
	"$srcdir/scripts/diffconfig" "$work/config-distro" "$obj/.config" >"$work/config-diff"
}

# The options status shows in each configuration (codectl's, and those
# the issue asks about: kprobes, ftrace, IBT, lockdown, signing, BTF).
SHOW=(
	MODULES MMU_NOTIFIER TRACEPOINTS KPROBES KRETPROBES KPROBES_ON_FTRACE
	FTRACE FUNCTION_TRACER DYNAMIC_FTRACE UPROBES UPROBE_EVENTS
	KPROBE_EVENTS PERF_EVENTS BPF_SYSCALL BPF_EVENTS USER_STACKTRACE_SUPPORT
	UNWIND_USER X86_KERNEL_IBT PREEMPT_DYNAMIC PREEMPT_VOLUNTARY PREEMPT_LAZY
	MODULE_SIG MODULE_SIG_FORCE MODULE_SIG_ALL MODULE_SIG_HASH MODULE_SIG_KEY
	MODVERSIONS MODULE_COMPRESS_XZ MODULE_COMPRESS_ZSTD
	SYSTEM_TRUSTED_KEYS SYSTEM_REVOCATION_KEYS INTEGRITY_PLATFORM_KEYRING
	INTEGRITY_MACHINE_KEYRING LOAD_UEFI_KEYS
	SECURITY_LOCKDOWN_LSM SECURITY_LOCKDOWN_LSM_EARLY
	LOCK_DOWN_KERNEL_FORCE_NONE LOCK_DOWN_KERNEL_FORCE_INTEGRITY
	LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY LOCK_DOWN_IN_EFI_SECURE_BOOT
	LOCK_DOWN_IN_SECURE_BOOT LSM DEBUG_INFO DEBUG_INFO_BTF RUST
)

# value FILE OPT: OPT's value in FILE: y, m, a string, "n" (is not set)
# or "-" (absent).
value() {
	sed -n -e "s/^CONFIG_$2=\(.*\)/\1/p" -e "s/^# CONFIG_$2 is not set/n/p" "$1" |
		head -n 1 | grep . || echo -
}

# show_config DIR CONFIG: the options of SHOW in the distribution's file,
# after olddefconfig (DIR/config-distro) and in CONFIG (as built); the
# differences after olddefconfig (DIR/config-diff, scripts/diffconfig:
# changed and added in full, removed counted).
show_config() {
	local o diff=$1/config-diff
	distro_config
	echo "options: distribution's file | after olddefconfig | built"
	for o in "${SHOW[@]}"; do
		printf '  %-40s %s | %s | %s\n' "$o" "$(value "$config" "$o")" \
			"$(value "$1/config-distro" "$o")" "$(value "$2" "$o")"
	done
	local off=() kept=()
	for o in "${TRIM[@]}"; do
		[[ $(value "$1/config-distro" "$o") == [ym] ]] || continue
		if [[ $(value "$2" "$o") == [ym] ]]; then kept+=("$o"); else off+=("$o"); fi
	done
	echo "trimmed (GUEST_TRIM less KEEP, of what the distribution sets): ${off[*]}"
	echo "  kept, selected by what stays: ${kept[*]}"
	echo "differences from the distribution's file after olddefconfig (${diff#"$CACHE"/}):"
	grep -vE '^-| [ym] -> n$' "$diff" | sed 's/^ *//; s/^/  /'
	echo "  turned off: $(grep -cE '^-.* m$| m -> n$' "$diff") =m options (localmodconfig)," \
		"$(grep -cE '^-.* y$| y -> n$' "$diff") =y (GUEST_TRIM less KEEP, what depends on"
	echo "  it, on debug info or on what was =m: the codectl options above are all"
	echo "  those that matter); $(grep -cvE '^-.* [ym]$|^[^-]' "$diff") other values gone with them"
}

cmd=${1:-}
# After install_series (build_series): the distribution's configuration
# file and what olddefconfig changed in it, kept with the series.
post_install() {
	cp "$work/config-distro" "$work/config-diff" "$final/"
}

case $cmd in
build | config)
	distro "${2:-}"
	SERIES=$distro
	work=$CACHE/$SERIES
	final=$CACHE/kernels/$SERIES
	mkdir -p "$CACHE/kernels" "$work"
	exec 9>"$work/.lock"
	flock 9
	distro_config
	make_key
	options
	ver=$(source_version "$base")
	want="layout=$LAYOUT linux=$ver config=$config_sha cert=$(sha256sum <"$cert" | cut -d' ' -f1) $(printf '%q ' "${OPTIONS[@]}" "${TRIM[@]}")"
	build_series "$cmd" "$ver" "$want" "linux $ver (Debian), $config_name ($origin)"
	;;
status)
	for d in ${2:-fedora ubuntu}; do
		distro "$d"
		final=$CACHE/kernels/$distro
		echo "== $distro"
		if [ -f "$final/stamp" ]; then
			figures
			show_config "$final" "$final/root/boot/config-$(cat "$final/kver")"
		elif [ -f "$CACHE/$distro/config-diff" ]; then
			echo "not built (scripts/distro-kernel.sh build $distro), configured:"
			show_config "$CACHE/$distro" "$CACHE/$distro/obj/.config"
		else
			echo "not built: scripts/distro-kernel.sh build $distro"
		fi
	done
	;;
doc)
	text=$("$0" status | sed "s#$CACHE/#\$CACHE/#g")
	fence='```'
	doc_replace "$repo/docs/distro-configs.md" distro-kernels \
		"$fence"$'\n'"$text"$'\n'"$fence" >/dev/null ||
		die "docs/distro-configs.md has no distro-kernels markers"
	say "docs/distro-configs.md: status written"
	;;
key)
	make_key
	echo "$cert"
	;;
*)
	sed -n '/^#   scripts\/distro-kernel.sh build/,/^#   scripts\/distro-kernel.sh key/p' "$0" >&2
	exit 2
	;;
esac
