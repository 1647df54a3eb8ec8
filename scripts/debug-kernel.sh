#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A debug build of Debian's own 6.12 kernel, for running codectl's tests
# under the kernel's checkers (lockdep, KASAN, KFENCE, UBSAN, kmemleak,
# atomic-sleep and RCU checks).  Built from source here, installed into the
# project cache as the series "debug-6.12", laid out like the stock series of
# scripts/kernels.sh, so that `scripts/vm-run.sh -k debug-6.12` boots it and
# `scripts/build-module.sh debug-6.12` builds codectl against it.
#
#   scripts/debug-kernel.sh build     fetch, configure, build, install
#                                     (idempotent: nothing to do if the
#                                     stamp matches)
#   scripts/debug-kernel.sh config    fetch and write the .config only
#   scripts/debug-kernel.sh status    print the stamp and build figures
#
# Source: `apt-get source linux=VERSION` from bookworm-backports, VERSION
# being the one of the stock 6.12 series (scripts/kernels.sh fetch 6.12, its
# stamp), through a deb-src entry added to /etc/apt/sources.list.d (as root,
# the way scripts/setup.sh adds its sources).  Configuration: Debian's
# config of that kernel (the stock series' boot/config-KVER), then
#
#   - `make localmodconfig` with an empty module list: the guests of
#     vm-run.sh never load a module of the image (kernels.sh deletes them),
#     so every =m option goes, which is most of the build;
#   - no debug info (so no BTF: the tracer tests' bpftrace uses kprobes,
#     profile probes and ustack, none of which needs BTF), no module
#     signing, no trusted keys of Debian's;
#   - the checkers (DEBUG_OPTIONS below).
#
# Build: `nice -n 10 make -j$JOBS` (JOBS defaults to 2) in
#   $CACHE/debug-6.12/src/linux-VERSION     the unpacked source
#   $CACHE/debug-6.12/obj                   the object tree (O=)
# and installed into
#   $CACHE/kernels/debug-6.12/root/         boot/{vmlinuz,System.map,config}-KVER,
#                                           lib/modules/KVER/modules.{order,
#                                           builtin,builtin.modinfo},
#                                           usr/src/linux-headers-KVER (the
#                                           kernel's install-extmod-build)
#   $CACHE/kernels/debug-6.12/{kver,kdir,vmlinux,stamp}
#   $CACHE/kernels/debug-6.12/build-figures  build time and sizes
# CACHE is <repo>/.cache unless CODECTL_CACHE is set.
set -euo pipefail

SERIES=debug-6.12
BASE=6.12 # the stock series whose source and config are used
LOCALVERSION=-codectl-debug
JOBS=${JOBS:-2}

# Bump when the options or the layout change: the stamp then no longer
# matches and the next build reconfigures and rebuilds.
LAYOUT=1

# Options set on top of Debian's config (scripts/config syntax:
# -e enable, -d disable, --set-val/--set-str).
DEBUG_OPTIONS=(
	# the checkers
	-e DEBUG_KERNEL -e PROVE_LOCKING -e PROVE_RCU -e DEBUG_ATOMIC_SLEEP
	-e DEBUG_LOCK_ALLOC -e DEBUG_SPINLOCK -e DEBUG_MUTEXES
	-e DEBUG_RWSEMS -e DEBUG_WW_MUTEX_SLOWPATH
	-e KASAN -e KASAN_GENERIC -e KASAN_INLINE -e KASAN_VMALLOC
	-e KFENCE --set-val KFENCE_SAMPLE_INTERVAL 100
	-e UBSAN -e UBSAN_BOUNDS -e UBSAN_SHIFT -e UBSAN_BOOL -e UBSAN_ENUM
	-d UBSAN_ALIGNMENT -d UBSAN_TRAP
	-e DEBUG_OBJECTS -e DEBUG_OBJECTS_RCU_HEAD -e DEBUG_OBJECTS_FREE
	-e DEBUG_OBJECTS_TIMERS -e DEBUG_OBJECTS_WORK
	-e DEBUG_KMEMLEAK --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 65536
	-d DEBUG_KMEMLEAK_DEFAULT_OFF -d DEBUG_KMEMLEAK_AUTO_SCAN
	-e DETECT_HUNG_TASK -e SOFTLOCKUP_DETECTOR -e WQ_WATCHDOG
	# what codectl and its tests use (most are in Debian's config)
	-e MODULES -e MODULE_UNLOAD -e KPROBES -e KRETPROBES -e PERF_EVENTS
	-e BPF_SYSCALL -e BPF_EVENTS -e UPROBE_EVENTS -e KPROBE_EVENTS
	-e FTRACE -e FUNCTION_TRACER -e DEBUG_FS -e MMU_NOTIFIER -e PVH
	-e DEVTMPFS -e BLK_DEV_INITRD -e RD_ZSTD -e SERIAL_8250_CONSOLE
	# build time: no debug info, no BTF, no signing, no Debian keys
	-d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_NONE
	-d DEBUG_INFO_BTF -d DEBUG_INFO_BTF_MODULES
	-d LOCK_DOWN_IN_EFI_SECURE_BOOT -d MODULE_SIG_ALL # unsigned modules load, as on stock
	--set-str SYSTEM_TRUSTED_KEYS '' --set-str SYSTEM_REVOCATION_KEYS ''
	--set-str MODULE_SIG_KEY ''
	--set-str LOCALVERSION "$LOCALVERSION" -d LOCALVERSION_AUTO
	--set-str BUILD_SALT ''
)

# What a QEMU guest of vm-run.sh does without (no network, no block
# device, no firmware, no graphics, no LSM but lockdown, no TPM): built-in
# in Debian's config, so localmodconfig keeps them.  Disabled where nothing
# selects them (what is still selected is only reported).  X86_SGX stays:
# it is the smallest of what selects MMU_NOTIFIER, which codectl needs.
# The guests need no socket (busybox, dash, kmod, perf, trace-cmd,
# bpftrace and the tests run without one).
TRIM=(
	NET BLOCK VIRTIO_MENU VIRTIO FUSE_FS VIRTIO_FS FS_VERITY FS_ENCRYPTION
	SECURITY_IPE SECURITY_LANDLOCK SECURITY_LOADPIN SECURITY_SAFESETID
	TCG_TPM HW_RANDOM DMADEVICES EDAC CPU_FREQ NVMEM NEW_LEDS MMC MEMSTICK
	VFIO IOMMU_SUPPORT STAGING X86_PLATFORM_DEVICES CHROME_PLATFORMS
	SURFACE_PLATFORMS MAILBOX RAS LIBNVDIMM DAX GPIOLIB REGULATOR POWERCAP
	ZSWAP ZSMALLOC ZRAM KSM ACCESSIBILITY AUXDISPLAY RTC_CLASS
	XEN EFI IPV6 NETFILTER XFRM WIRELESS NET_SCHED NETLABEL ISDN NETDEVICES
	SECURITY_SELINUX SECURITY_APPARMOR SECURITY_TOMOYO IMA EVM INTEGRITY
	FB USB_SUPPORT SPI I2C AGP PINCTRL MD HWMON THERMAL WATCHDOG
	INPUT_MOUSE INPUT_JOYSTICK INPUT_TOUCHSCREEN INPUT_TABLET INPUT_MISC
	INTEL_IOMMU AMD_IOMMU X86_MCE ACPI_APEI PCI_IOV
	KEXEC CRASH_DUMP HIBERNATION SUSPEND MEMORY_HOTPLUG DAMON LIVEPATCH
)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
work=$CACHE/$SERIES
final=$CACHE/kernels/$SERIES

. "$repo/scripts/lib.sh"

# base_version: the Debian source version of the stock 6.12 series, read
# from its stamp ("linux-image-amd64=6.12.95-1~bpo12+1 ...").
base_version() {
	local stamp=$CACHE/kernels/$BASE/stamp
	[ -f "$stamp" ] || "$repo/scripts/kernels.sh" fetch "$BASE" >&2
	grep -o 'linux-image-amd64=[^ ]*' "$stamp" | cut -d= -f2
}

# fetch_source VERSION: unpack Debian's linux source VERSION into $work/src.
fetch_source() {
	local ver=$1 up=${1%%-*}
	srcdir=$work/src/linux-$up
	[ -f "$srcdir/.codectl-unpacked" ] && return 0
	local list=/etc/apt/sources.list.d/codectl-src.sources
	if ! apt-cache showsrc "linux=$ver" 2>/dev/null | grep -q "^Version: $ver\$"; then
		[ "$(id -u)" = 0 ] || die "no deb-src for linux $ver: run as root once (adds $list)"
		cat >"$list" <<-'SRC'
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		SRC
		apt-get update -q
	fi
	mkdir -p "$work/src"
	rm -rf "$srcdir"
	# As root, apt would drop to user _apt, who cannot write here.
	(cd "$work/src" &&
		apt-get source -q --download-only -o APT::Sandbox::User="$(id -un)" "linux=$ver" &&
		dpkg-source -x "linux_${ver#*:}.dsc" "linux-$up")
	touch "$srcdir/.codectl-unpacked"
}

# configure: Debian's config, trimmed, with DEBUG_OPTIONS, in $obj/.config.
configure() {
	local base_kver config empty
	base_kver=$(cat "$CACHE/kernels/$BASE/kver")
	config=$CACHE/kernels/$BASE/root/boot/config-$base_kver
	[ -f "$config" ] || die "no $config: run scripts/kernels.sh fetch $BASE"
	mkdir -p "$obj"
	cp "$config" "$obj/.config"
	"$srcdir/scripts/config" --file "$obj/.config" "${DEBUG_OPTIONS[@]}"
	make -s -C "$srcdir" O="$obj" olddefconfig >/dev/null
	empty=$work/lsmod-empty
	echo "Module                  Size  Used by" >"$empty"
	# localmodconfig asks nothing for options it leaves alone (yes
	# ends by SIGPIPE: not a failure).
	{ yes '' || true; } | make -s -C "$srcdir" O="$obj" LSMOD="$empty" localmodconfig >/dev/null 2>&1 ||
		die "localmodconfig failed"
	# localmodconfig may turn off what the options above want as =y
	# only if they were modules; apply them again and resolve.
	local t off=() kept=()
	for t in "${TRIM[@]}"; do off+=(-d "$t"); done
	"$srcdir/scripts/config" --file "$obj/.config" "${off[@]}" "${DEBUG_OPTIONS[@]}"
	make -s -C "$srcdir" O="$obj" olddefconfig >/dev/null
	check_config
	for t in "${TRIM[@]}"; do
		! grep -q "^CONFIG_$t=" "$obj/.config" || kept+=("$t")
	done
	[ ${#kept[@]} -eq 0 ] || say "config: kept (selected by others): ${kept[*]}"
}

# check_config: every option DEBUG_OPTIONS enables or disables is so in
# the final config (Kconfig silently drops what a dependency forbids).
check_config() {
	local i=0 opt bad=()
	while [ $i -lt ${#DEBUG_OPTIONS[@]} ]; do
		opt=${DEBUG_OPTIONS[$i]}
		case $opt in
		-e) grep -qx "CONFIG_${DEBUG_OPTIONS[$((i + 1))]}=y" "$obj/.config" ||
			bad+=("${DEBUG_OPTIONS[$((i + 1))]}=y") ;;
		-d) ! grep -q "^CONFIG_${DEBUG_OPTIONS[$((i + 1))]}=" "$obj/.config" ||
			bad+=("${DEBUG_OPTIONS[$((i + 1))]}=n") ;;
		--set-val | --set-str) i=$((i + 1)) ;;
		esac
		i=$((i + 2))
	done
	[ ${#bad[@]} -eq 0 ] || die "config: not as asked: ${bad[*]}"
}

# install_series: the layout of scripts/kernels.sh, in $final.new, then
# renamed into place.
install_series() {
	local kver dir root hdr
	kver=$(cat "$obj/include/config/kernel.release")
	dir=$final.new
	root=$dir/root
	rm -rf "$dir"
	mkdir -p "$root/boot" "$root/lib/modules/$kver" "$root/usr/src"
	cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$kver"
	cp "$obj/System.map" "$root/boot/System.map-$kver"
	cp "$obj/.config" "$root/boot/config-$kver"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		cp "$obj/$f" "$root/lib/modules/$kver/$f"
	done
	hdr=$root/usr/src/linux-headers-$kver
	(cd "$obj" && srctree=$srcdir SRCARCH=x86 CC=gcc HOSTCC=gcc MAKE=make \
		sh "$srcdir/scripts/package/install-extmod-build" "$hdr")
	cp "$obj/.config" "$hdr/.config"
	ln -s ../../../usr/src/linux-headers-$kver "$root/lib/modules/$kver/build"
	cp "$obj/vmlinux" "$dir/vmlinux"
	strip --strip-debug "$dir/vmlinux" 2>/dev/null || true
	echo "$kver" >"$dir/kver"
	ln -sfn "root/usr/src/linux-headers-$kver" "$dir/kdir"
	rm -rf "$final.old"
	[ ! -e "$final" ] || mv "$final" "$final.old"
	mv "$dir" "$final"
	rm -rf "$final.old"
}

figures() {
	local f=$final/build-figures
	[ -f "$f" ] && cat "$f"
}

# need_tools: what building a kernel takes beyond scripts/setup.sh's list.
need_tools() {
	local t missing=()
	for t in flex bison bc dpkg-source; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	[ -e /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing ${missing[*]}: apt-get install flex bison bc dpkg-dev libssl-dev"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		flex bison bc dpkg-dev libssl-dev
}

cmd=${1:-build}
case $cmd in
build | config)
	mkdir -p "$CACHE/kernels" "$work"
	exec 9>"$work/.lock"
	flock 9
	ver=$(base_version)
	[ -n "$ver" ] || die "no version in $CACHE/kernels/$BASE/stamp"
	want="layout=$LAYOUT linux=$ver $(printf '%q ' "${DEBUG_OPTIONS[@]}" "${TRIM[@]}")"
	if [ "$cmd" = build ] && [ -f "$final/stamp" ] && [ "$(cat "$final/stamp")" = "$want" ]; then
		say "$SERIES up to date (linux $ver, $(cat "$final/kver"))"
		figures
		exit 0
	fi
	need_tools
	fetch_source "$ver"
	obj=$work/obj
	configure
	say "config written: $obj/.config"
	[ "$cmd" = build ] || exit 0
	say "building linux $ver as $SERIES: nice -n 10 make -j$JOBS (long: see README)"
	start=$(date +%s)
	nice -n 10 make -s -C "$srcdir" O="$obj" -j"$JOBS" bzImage modules >"$work/build.log" 2>&1 ||
		{ tail -n 40 "$work/build.log" >&2; die "build failed, see $work/build.log"; }
	end=$(date +%s)
	install_series
	{
		echo "source: linux $ver (Debian, bookworm-backports)"
		echo "kernel release: $(cat "$final/kver")"
		echo "build: $((end - start)) s (nice -n 10 make -j$JOBS on $(nproc) CPUs), $(date -u -d @"$end" +%FT%TZ)"
		echo "bzImage: $(du -h "$final/root/boot/vmlinuz-$(cat "$final/kver")" | cut -f1)"
		echo "vmlinux (stripped): $(du -h "$final/vmlinux" | cut -f1)"
		echo "headers tree: $(du -sh "$final/root/usr/src" | cut -f1)"
		echo "object tree: $(du -sh "$obj" | cut -f1), source: $(du -sh "$srcdir" | cut -f1)"
	} >"$final/build-figures"
	echo "$want" >"$final/stamp"
	say "$SERIES installed in $final"
	figures
	;;
status)
	[ -f "$final/stamp" ] || die "$SERIES not built: scripts/debug-kernel.sh build"
	cat "$final/kver"
	figures
	;;
*)
	sed -n '/^#   scripts\/debug-kernel.sh build/,/^#   scripts\/debug-kernel.sh status/p' "$0" >&2
	exit 2
	;;
esac
