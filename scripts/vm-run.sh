#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a stock Debian kernel (scripts/kernels.sh) under QEMU/TCG with a
# throw-away busybox initramfs, run one command in it and report how it went.
#
# usage: scripts/vm-run.sh -k SERIES [-a HOST_PATH[:GUEST_PATH]]... [-A ...]... [-t TIMEOUT_S]
#                          [-l LOGFILE] [-m MEM_MB] [-R ROOT] -- COMMAND [ARGS...]
#
#   -k SERIES    kernel series, see `scripts/kernels.sh list` (must be fetched);
#                SERIES-arm64 boots an arm64 guest (see "arm64" below)
#   -a H[:G]     copy host file or directory H into the guest at G (default:
#                the same path; split at the first ':'). Shared libraries of
#                dynamically linked ELF files among them are added too.
#   -A H[:G]     the same without those libraries: for a bundle that brings
#                its own (another distribution's, which the host's ldd
#                cannot resolve)
#   -t SECONDS   wall-clock limit for the whole VM run (default 600)
#   -l LOGFILE   also write the serial console (and the verdict) to LOGFILE
#   -m MEM_MB    guest memory (default 1024)
#   -R ROOT      an unpacked Debian root of the series' architecture, with
#                merged /usr and relative links only, under everything
#                else: its programs replace busybox's applets of the same
#                name (scripts/stage-arm64-dkms.sh: a compiler and dkms
#                for an arm64 guest); the initramfs, held in the guest's
#                memory, then holds it all
#   COMMAND      one word: a shell command line, run with `sh -c` in the
#                guest; several words: a command and its arguments, quoted
#                so that the guest sees exactly these words.
#
# The guest runs COMMAND as root with cwd /, stdin /dev/null, PATH set, and
# proc, sysfs, devtmpfs, debugfs, /tmp and /dev/shm mounted; modules.dep is
# generated (depmod -a) first so `modprobe` finds modules added under
# /lib/modules/$(uname -r)/.  The shell is the host's dash, most utilities
# are busybox's, insmod/rmmod/modprobe/lsmod/depmod/modinfo are the host's
# kmod.  Afterwards the guest prints its full kernel log and an exit marker,
# then powers off.  Serial output is copied to stdout as it comes.
#
# Exit status:
#   0..255  COMMAND's exit status, if the kernel log is clean
#   124     no exit marker: timeout, hang, or the VM died without a
#           recognisable kernel error (see the console output)
#   125     the kernel log shows a problem (see KERNEL_PROBLEMS below), or
#           the kernel crashed/panicked; takes precedence over 124
#   126     vm-run itself failed (usage, kernel not fetched, ...)
# COMMAND's own status can of course also be 124..126: the "vm-run: ..."
# lines on stderr (and at the end of LOGFILE) say which it was.
#
# arm64: a series named SERIES-arm64 boots under qemu-system-aarch64 (-M
# virt, -cpu max: pointer authentication included, TCG), console ttyAMA0.
# Its userland is the series' busybox-static:arm64 (kernels.sh unpacks it)
# and nothing of the host's: no dash, no kmod (busybox's sh, insmod,
# modprobe, depmod), and -a copies no libraries (the host's ldd cannot
# resolve an arm64 program's): give it static programs.
#
# Environment (all optional):
#   CODECTL_VM_APPEND     extra kernel command line words
#   CODECTL_VM_ACCEL      QEMU -accel (default tcg,thread=single: every vCPU
#                         in one host thread; multi-threaded TCG can run a
#                         stale translation of kernel text the guest has
#                         just patched, an int3 Oops no real CPU gives,
#                         seen at boot and when kprobes are attached;
#                         "tcg" is faster)
#   CODECTL_VM_CPU        QEMU -cpu model (default max: SMEP, SMAP, PKU, ...;
#                         arm64: max,pauth-impdef=on, PAuth with QEMU's
#                         faster implementation-defined algorithm)
#   CODECTL_VM_PVH=0      boot the bzImage instead of the extracted vmlinux
#   CODECTL_VM_QEMU_ARGS  extra QEMU arguments (split at spaces)
#   CODECTL_VM_SLOTS=N    at most N guests at once on this machine, whoever
#                         starts them (several work trees, check.sh's lanes):
#                         a guest waits for a free slot before it boots
#                         (locks in /tmp/codectl-vm-slots); its timeout
#                         counts from then
set -euo pipefail

# Kernel log lines that fail the run (fixed strings, case-sensitive).  Only
# kernel output is scanned: the dmesg dump printed after COMMAND, and console
# lines from a printk timestamp "[    1.234567]" on (printk.time=1), so that
# COMMAND's own output cannot trigger them.
KERNEL_PROBLEMS=(
	'BUG:'                          # BUG: unable to handle..., sleeping in atomic, KASAN/KFENCE
	'kernel BUG'                    # BUG_ON()
	'WARNING:'                      # WARN_ON() and friends, lockdep splats
	'Oops'                          # Oops: general protection fault, page fault oops
	'general protection fault'
	'Kernel panic'
	'Call Trace:'                   # any stack dump
	'Call trace:'                   # any stack dump (arm64)
	'soft lockup'                   # watchdog: BUG: soft lockup - CPU#0 stuck
	'hard LOCKUP'
	'rcu_sched self-detected stall' # RCU stall warnings
	'rcu: INFO:'
	'hung_task'                     # hung task detector
	'blocked for more than'
	'UBSAN:'
	'KASAN:'
	# the checkers of the debug kernel (scripts/debug-kernel.sh); lockdep's
	# and debugobjects' splats are WARNINGs, KASAN's and KFENCE's and
	# atomic-sleep's BUGs, these are the rest:
	'KFENCE:'                       # BUG: KFENCE: use-after-free ...
	'ODEBUG:'                       # debugobjects (RCU heads, timers, works)
	'INFO: trying to register non-static key' # lockdep on an uninitialised lock
	'suspected memory leak'         # kmemleak: N new suspected memory leaks
	'unreferenced object 0x'        # kmemleak's report (printed after dmesg)
)

VM_MARK=CODECTL-VM
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
	echo "vm-run: $*" >&2
	exit 126
}

usage() {
	# The comment block at the top, from "usage:" to the COMMAND words.
	sed -n '/^# usage:/,/exactly these words/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
	exit 126
}

# --- options -----------------------------------------------------------------
series="" timeout_s=600 logfile="" mem=1024 adds=() base=""
while getopts "k:a:A:t:l:m:R:h" opt; do
	case $opt in
	k) series=$OPTARG ;;
	a) adds+=("+$OPTARG") ;;
	A) adds+=("-$OPTARG") ;;
	t) timeout_s=$OPTARG ;;
	l) logfile=$OPTARG ;;
	m) mem=$OPTARG ;;
	R) base=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$series" ] || [ $# -eq 0 ]; then usage; fi
[[ $timeout_s =~ ^[0-9]+$ ]] || die "-t wants seconds, got '$timeout_s'"

if [ $# -eq 1 ]; then
	command_line=$1
else
	# Quote each word for sh: 'a'\''b' style.
	command_line=""
	for w in "$@"; do
		command_line+="'${w//\'/\'\\\'\'}' "
	done
fi

kernels=$repo/scripts/kernels.sh
kver=$("$kernels" kver "$series") || die "kernel series '$series' not available"
case $series in
*-arm64) arch=arm64 ;;
*) arch=x86_64 ;;
esac
# Prefer the uncompressed ELF kernel, booted through QEMU's PVH entry: it
# skips the in-guest decompression (~2.5 s of xz under TCG for 6.1).  PVH
# boots without KASLR; CODECTL_VM_PVH=0 boots the bzImage instead.
if [ "${CODECTL_VM_PVH:-1}" != 0 ] && kernel=$("$kernels" vmlinux "$series" 2>/dev/null); then
	:
else
	kernel=$("$kernels" vmlinuz "$series")
fi
kroot=$("$kernels" root "$series")

tmp=$(mktemp -d /tmp/codectl-vm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 126' HUP INT PIPE TERM # so that the EXIT trap runs
stage=$tmp/root

# --- initramfs ---------------------------------------------------------------
# Host paths of everything copied in, so that ELF dependencies are copied once.
declare -A copied=()

# add_file HOST GUEST: copy one file (following symlinks) to GUEST in stage.
add_file() {
	mkdir -p "$stage$(dirname "$2")"
	rm -f "$stage$2" # may be a busybox applet link
	cp -L --preserve=mode,timestamps "$1" "$stage$2"
}

# add_libs FILE: copy the shared libraries (and the dynamic loader) FILE
# needs, at their host paths, if FILE is a dynamically linked ELF file.
add_libs() {
	local lib magic
	[ "$arch" = x86_64 ] || return 0 # the host's ldd: not for arm64 files
	LC_ALL=C read -r -N 4 magic <"$1" 2>/dev/null && [ "$magic" = $'\x7fELF' ] || return 0
	case $(file -bL "$1") in
	ELF*dynamically\ linked* | ELF*shared\ object*) ;;
	*) return 0 ;;
	esac
	# "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and
	# "/lib64/ld-linux-x86-64.so.2 (0x...)": take the absolute paths.
	if ldd "$1" 2>/dev/null | grep 'not found' >/dev/null; then
		echo "vm-run: warning: missing libraries for $1:" >&2
		ldd "$1" | grep 'not found' >&2
	fi
	for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' || true); do
		[ -z "${copied[$lib]:-}" ] || continue
		copied[$lib]=1
		add_file "$lib" "$lib"
	done
}

# Same usrmerged layout as the Debian 12 host, so that host paths (ldd's
# /lib/..., /lib64/ld-linux...) and guest paths agree.  All links in the
# tree are relative: an absolute one would point into the host while
# staging, and a copy through it would overwrite a host file.
mkdir -p "$stage"
if [ -n "$base" ]; then
	[ -x "$base/usr/bin/sh" ] || die "-R $base: not a root (no usr/bin/sh)"
	cp -a "$base/." "$stage/"
fi
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,tmp,root}
for d in bin sbin lib lib64; do
	[ -L "$stage/$d" ] || ln -s "usr/$d" "$stage/$d"
done

# Busybox with one symlink per applet (bin/sh, sbin/poweroff, ...).  An
# arm64 guest gets the series' busybox-static:arm64, the same Debian
# release and configuration as the host's (whose list of applets is used:
# the arm64 one cannot run here).
if [ "$arch" = x86_64 ]; then
	cp /bin/busybox "$stage/bin/busybox"
else
	cp "$kroot/bin/busybox" "$stage/bin/busybox"
fi
/bin/busybox --list-full | while read -r applet; do
	[ "$applet" != bin/busybox ] || continue
	# -R: the root's own program, if it has one.
	[ -z "$base" ] || [ ! -e "$stage/$applet" ] || continue
	ln -sfr "$stage/bin/busybox" "$stage/$applet"
done

# Host programs that replace busybox applets.  Debian's busybox-static runs
# its own applet for any applet name, ignoring PATH, in its shell and when
# timeout/env/xargs start a program, so `modprobe` there would be busybox's.
# Hence dash (Debian's /bin/sh) as the shell, the real kmod tools, and the
# coreutils/findutils programs that run other programs.
# (Not in an arm64 guest: these are x86-64 programs.)
if [ "$arch" = x86_64 ]; then
	for tool in /usr/bin/dash /usr/bin/kmod /usr/bin/timeout /usr/bin/env /usr/bin/xargs; do
		add_file "$tool" "$tool"
		add_libs "$tool"
	done
	ln -sfr "$stage/usr/bin/dash" "$stage/bin/sh"
	for tool in insmod rmmod modprobe lsmod depmod modinfo; do
		ln -sfr "$stage/usr/bin/kmod" "$stage/sbin/$tool"
	done
fi

# The kernel's module metadata (built-in modules, for modprobe/depmod).
for f in modules.order modules.builtin modules.builtin.modinfo; do
	add_file "$kroot/lib/modules/$kver/$f" "/lib/modules/$kver/$f"
done

# The caller's files and directories (plus libraries of ELF files in them).
for spec in "${adds[@]}"; do
	libs=${spec:0:1} spec=${spec:1}
	host=${spec%%:*}
	guest=${spec#*:}
	[ "$guest" != "$spec" ] || guest=$host
	[ -e "$host" ] || die "-a $spec: $host does not exist"
	case $guest in /?*) ;; *) die "-a $spec: guest path must be absolute, not /" ;; esac
	if [ -d "$host" ]; then
		mkdir -p "$stage$(dirname "$guest")"
		rm -rf "${stage:?}$guest"
		cp -RL --preserve=mode,timestamps "$host" "$stage$guest"
	else
		add_file "$host" "$guest"
	fi
	[ "$libs" = + ] || continue
	while IFS= read -r -d '' f; do
		add_libs "$f"
	done < <(find -L "$host" -type f -print0)
done

# /dev/console must exist before /init runs, or init gets no stdio (the
# /init below also re-opens it from devtmpfs, for unprivileged runs).
mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true

printf '%s\n' "$command_line" >"$stage/codectl-vm-cmd"

cat >"$stage/init" <<EOF
#!/bin/sh
# codectl vm-run init: mount, run the command, dump the kernel log, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t devpts devpts /dev/pts
# /tmp becomes a tmpfs, keeping whatever -a put there.
mv /tmp /.tmp-initramfs && mkdir /tmp && mount -t tmpfs tmpfs /tmp &&
	cp -a /.tmp-initramfs/. /tmp/ && rm -rf /.tmp-initramfs
chmod 1777 /tmp
depmod -a
cd /
echo "$VM_MARK-COMMAND-BEGIN"
sh -c "\$(cat /codectl-vm-cmd)" </dev/null
rc=\$?
echo "$VM_MARK-COMMAND-END"
dmesg -n 1 # no more console printk: it would interleave with the markers
# Kernels with kmemleak (the debug kernel): a scan now, and another past
# its minimum age of 5 s (an object is reported once it was unreferenced
# in two scans with the same contents); the leaks go into the kernel log,
# and kmemleak's report after it.
kmemleak=/sys/kernel/debug/kmemleak
if [ -w \$kmemleak ] && echo scan 2>/dev/null >\$kmemleak; then
	sleep 6
	echo scan >\$kmemleak
fi
echo "$VM_MARK-DMESG-BEGIN"
dmesg
[ ! -r \$kmemleak ] || cat \$kmemleak 2>/dev/null
echo "$VM_MARK-DMESG-END"
echo "$VM_MARK-EXIT=\$rc"
sync
poweroff -f
EOF
chmod 755 "$stage/init"

initrd=$tmp/initrd.cpio.zst
(cd "$stage" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) |
	zstd -q -3 -T0 >"$initrd"

# --- boot --------------------------------------------------------------------
console=$tmp/console
read -r -a qemu_extra <<<"${CODECTL_VM_QEMU_ARGS:-}"
# RCU's stall warnings are off until the kernel's boot ends (init is
# run, before any of codectl's code): with single-threaded TCG on a loaded
# host a distribution's configuration (ubuntu: a minute and more of
# drivers built in) boots so slowly that the switch to the TSC clock
# source looked like an 86 s stall (t=86067 jiffies) to RCU, in
# tsc_refine_calibration_work.  From init on they are reported and fail
# the stage, as before.
boot_quiet=rcupdate.rcu_cpu_stall_suppress_at_boot=1
if [ "$arch" = x86_64 ]; then
	append="console=ttyS0 panic=-1 loglevel=7 printk.time=1 $boot_quiet ${CODECTL_VM_APPEND:-}"
	qemu=(qemu-system-x86_64 -accel "${CODECTL_VM_ACCEL:-tcg,thread=single}"
	      -cpu "${CODECTL_VM_CPU:-max}" -smp 2 -m "$mem")
else
	append="console=ttyAMA0 panic=-1 loglevel=7 printk.time=1 $boot_quiet ${CODECTL_VM_APPEND:-}"
	qemu=(qemu-system-aarch64 -M virt -accel "${CODECTL_VM_ACCEL:-tcg,thread=single}"
	      -cpu "${CODECTL_VM_CPU:-max,pauth-impdef=on}" -smp 2 -m "$mem")
fi
qemu+=(-nographic -no-reboot -nic none
       -kernel "$kernel" -initrd "$initrd" -append "$append"
       "${qemu_extra[@]}")

if [ -n "${CODECTL_VM_SLOTS:-}" ]; then
	[[ $CODECTL_VM_SLOTS =~ ^[1-9][0-9]*$ ]] || die "CODECTL_VM_SLOTS wants a number, got '$CODECTL_VM_SLOTS'"
	mkdir -p /tmp/codectl-vm-slots
	while :; do
		for ((slot = 0; slot < CODECTL_VM_SLOTS; slot++)); do
			exec 9>"/tmp/codectl-vm-slots/$slot.lock"
			! flock -n 9 || break 2
		done
		exec 9>&-
		sleep 1
	done
fi
start=$EPOCHREALTIME
set +e
# Serial output goes to stdout, the console file and LOGFILE (CRs stripped).
# A guest that dies by itself before the command begins has run nothing of
# ours (no module is loaded before it): that is a QEMU/TCG or boot flake,
# seen about once in fifty boots of 6.12 (an int3 Oops while the kernel
# patches its own text), so it is booted again, at most twice, and said so.
[ -z "$logfile" ] || : >"$logfile"
for attempt in 1 2 3; do
	# The console holds this attempt's output alone (tee's -a, for
	# LOGFILE, appends to every file it names): a retried boot's panic
	# is in LOGFILE, not in the verdict.
	: >"$console"
	timeout --foreground -k 10 "$timeout_s" "${qemu[@]}" </dev/null 2>&1 |
		sed -u 's/\r$//' | tee -p "$console" ${logfile:+-a "$logfile"}
	qemu_rc=${PIPESTATUS[0]}
	if grep -a -q "^$VM_MARK-COMMAND-BEGIN\$" "$console" ||
	   [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ] || [ $attempt = 3 ]; then
		break
	fi
	msg="vm-run: attempt $attempt: the guest died before the command began (qemu exit $qemu_rc); booting again"
	echo "$msg" >&2
	[ -z "$logfile" ] || echo "$msg" >>"$logfile"
done
set -e
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')

# --- verdict -----------------------------------------------------------------
verdict=()
note() {
	verdict+=("vm-run: $*")
}

# Kernel lines: the dmesg dump, and console text from a printk timestamp on.
kernel_lines() {
	awk -v b="$VM_MARK-DMESG-BEGIN" -v e="$VM_MARK-DMESG-END" '
		$0 == b { dump = 1; next }
		$0 == e { dump = 0; next }
		dump { print; next }
		match($0, /\[ *[0-9]+\.[0-9]+\] /) { print substr($0, RSTART) }
	' "$console"
}
problems=$(kernel_lines | grep -a -F "${KERNEL_PROBLEMS[@]/#/-e}" | awk '!seen[$0]++' || true)

exit_code=$(grep -a -o "^$VM_MARK-EXIT=[0-9]*\$" "$console" | tail -n 1 | cut -d= -f2 || true)

if [ -n "$problems" ]; then
	rc=125
	note "kernel log problem:"
	while IFS= read -r line; do note "    $line"; done <<<"$problems"
	[ -n "$exit_code" ] || note "and no exit marker: the guest did not finish"
elif [ -z "$exit_code" ]; then
	rc=124
	if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
		note "timeout after ${timeout_s}s: no exit marker from the guest"
	else
		note "no exit marker from the guest (qemu exit status $qemu_rc)"
	fi
else
	rc=$exit_code
fi
[ -z "$exit_code" ] || [ "$rc" = "$exit_code" ] ||
	note "guest command exited $exit_code, vm-run exits $rc"
note "$series ($kver): exit $rc after ${elapsed}s"

printf '%s\n' "${verdict[@]}" >&2
[ -z "$logfile" ] || printf '%s\n' "${verdict[@]}" >>"$logfile"
exit "$rc"
