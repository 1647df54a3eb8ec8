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
#   scripts/debug-kernel.sh build [SERIES]   fetch, configure, build,
#                                     install (idempotent: nothing to do if
#                                     the stamp matches)
#   scripts/debug-kernel.sh config [SERIES]  fetch and write the .config only
#   scripts/debug-kernel.sh status [SERIES]  print the stamp and build figures
#
# SERIES (default debug-6.12):
#   debug-6.12     Debian's 6.12 amd64 configuration and the checkers
#   debug-6.12-rt  Debian's 6.12 rt-amd64 configuration (PREEMPT_RT), the
#                  same checkers and PROVE_RAW_LOCK_NESTING: lockdep then
#                  reports a lock that sleeps on PREEMPT_RT (spinlock_t,
#                  a sleeping lock there) taken under a raw one, or in
#                  hard interrupt or NMI context; DEBUG_ATOMIC_SLEEP
#                  reports a sleep where preemption is off (issue 39)
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
# and installed into $CACHE/kernels/debug-6.12 in the layout of
# scripts/kernels.sh (scripts/kernel-build-lib.sh, which this script shares
# with scripts/distro-kernel.sh, lists it), with build-figures (build time
# and sizes).  CACHE is <repo>/.cache unless CODECTL_CACHE is set.
set -euo pipefail

cmd=${1:-build}
SERIES=${2:-debug-6.12}
# BASE: the stock series whose source and config are used.
case $SERIES in
debug-6.12)
	BASE=6.12 LOCALVERSION=-codectl-debug RT_OPTIONS=()
	LOCK_DEBUG=(-e DEBUG_MUTEXES -e DEBUG_RWSEMS)
	;;
debug-6.12-rt)
	# On PREEMPT_RT mutexes and rwsems are rtmutexes: their checks
	# are DEBUG_RT_MUTEXES' (DEBUG_MUTEXES and DEBUG_RWSEMS depend on
	# !PREEMPT_RT).
	BASE=6.12-rt LOCALVERSION=-codectl-debug-rt
	RT_OPTIONS=(-e PREEMPT_RT -e PROVE_RAW_LOCK_NESTING)
	LOCK_DEBUG=(-e DEBUG_RT_MUTEXES)
	;;
*) echo "debug-kernel.sh: no debug series $SERIES (debug-6.12, debug-6.12-rt)" >&2; exit 2 ;;
esac
JOBS=${JOBS:-2}
NICE=10

# Bump when the options or the layout change: the stamp then no longer
# matches and the next build reconfigures and rebuilds.
LAYOUT=1

# Options set on top of Debian's config (scripts/config syntax:
# -e enable, -d disable, --set-val/--set-str).
DEBUG_OPTIONS=(
	# the checkers
	-e DEBUG_KERNEL -e PROVE_LOCKING -e PROVE_RCU -e DEBUG_ATOMIC_SLEEP
	-e DEBUG_LOCK_ALLOC -e DEBUG_SPINLOCK "${LOCK_DEBUG[@]}"
	-e DEBUG_WW_MUTEX_SLOWPATH
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
	"${RT_OPTIONS[@]}"
)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CODECTL_CACHE:-$repo/.cache}
work=$CACHE/$SERIES
final=$CACHE/kernels/$SERIES

. "$repo/scripts/lib.sh"
. "$repo/scripts/kernel-build-lib.sh"

# What a QEMU guest of vm-run.sh does without: GUEST_TRIM
# (kernel-build-lib.sh), all of it.
TRIM=("${GUEST_TRIM[@]}")

# configure: Debian's config, trimmed, with DEBUG_OPTIONS, in $obj/.config.
configure() {
	local base_kver config t off=() kept
	base_kver=$(cat "$CACHE/kernels/$BASE/kver")
	config=$CACHE/kernels/$BASE/root/boot/config-$base_kver
	[ -f "$config" ] || die "no $config: run scripts/kernels.sh fetch $BASE"
	mkdir -p "$obj"
	cp "$config" "$obj/.config"
	set_options "${DEBUG_OPTIONS[@]}"
	trim_modules
	# localmodconfig may turn off what the options above want as =y
	# only if they were modules; apply them again and resolve.
	for t in "${TRIM[@]}"; do off+=(-d "$t"); done
	set_options "${off[@]}" "${DEBUG_OPTIONS[@]}"
	check_options "${DEBUG_OPTIONS[@]}"
	kept=$(still_set "${TRIM[@]}")
	[ -z "$kept" ] || say "config: kept (selected by others): ${kept//$'\n'/ }"
}

case $cmd in
build | config)
	mkdir -p "$CACHE/kernels" "$work"
	exec 9>"$work/.lock"
	flock 9
	ver=$(stock_version "$BASE")
	[ -n "$ver" ] || die "no version in $CACHE/kernels/$BASE/stamp"
	want="layout=$LAYOUT linux=$ver $(printf '%q ' "${DEBUG_OPTIONS[@]}" "${TRIM[@]}")"
	build_series "$cmd" "$ver" "$want" "linux $ver (Debian, bookworm-backports)"
	;;
status)
	[ -f "$final/stamp" ] || die "$SERIES not built: scripts/debug-kernel.sh build $SERIES"
	cat "$final/kver"
	figures
	;;
*)
	sed -n '/^#   scripts\/debug-kernel.sh build/,/^#   scripts\/debug-kernel.sh status/p' "$0" >&2
	exit 2
	;;
esac
