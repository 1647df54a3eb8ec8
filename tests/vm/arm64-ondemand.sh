#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# On-demand synthesis on arm64 (scripts/check.sh's ondemand-SERIES-arm64),
# run by busybox's sh in an arm64 guest: Debian bookworm's arm64
# python3.11, unchanged (scripts/stage-arm64-ondemand.sh), runs a pure-
# Python workload with nothing registered, under Debian's arm64 perf
# record -g (scripts/stage-arm64-root.sh), codectl.ko loaded:
#   control   no daemon, nothing imported: python3.11 and libc have no
#             SFrame; the module walks them by their frame records (<= 5%
#             of the frames by SFrame), which Debian's arm64 objects
#             keep (GCC's aarch64 default): the share complete is a
#             figure only;
#   cold      `codectl daemon` (cross-built for aarch64) started on an empty
#             cache: the first run, during which the daemon synthesises
#             SFrame from the .eh_frame of the objects the unwinds meet
#             (python3.11, libc, ld.so) and imports it: >= 99% complete,
#             no frame outside code (the first profile); the time from
#             the first sample to the first complete one;
#   daemon    once python3.11 and libc are imported, the next run:
#             >= 99% complete, no frame outside code, and >= 90% of the
#             frames found by SFrame (the imports), not frame records
#             (a sample whose leaf is in code without CFI, a PLT stub, is
#             walked by frame records throughout: a few percent).
#
#   arm64-ondemand.sh MODULE.ko WORKLOAD.py SECONDS [nodaemon]
#
# "nodaemon": the negative control of this test (CODECTL_OD_NODAEMON=1
# scripts/check.sh 6.12-arm64): the daemon is not started, and the
# "daemon" run must then fail its checks (the frames by SFrame, the
# imports).
#
# Complete, as tests/vm/ondemand.sh has it on x86-64: the sample's user
# stack reaches the bottom of the process, the executable's _start
# (stripped: a frame of the executable) called from libc's
# __libc_start_main, or the dynamic loader's entry (a return address
# within 64 bytes of ld-linux-aarch64.so.1's e_entry, outermost).  A frame
# is outside code when perf finds no object at its address.
# FIGURE lines: the shares and times.  The last line is "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
ko=$1 pyload=$2 secs=${3:-3} mode=${4:-daemon}
tmp=/tmp/od
log=$tmp/daemon.log
exe=/usr/bin/python3.11
ld=/lib/ld-linux-aarch64.so.1
mkdir -p "$tmp"
daemon_pid=

. "$here/tap.sh"
. "$here/container.sh"
. "$here/startup.sh"

fig() { echo "FIGURE arm64 $*"; }

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# record OUT: python3.11 under perf record -g for $secs s from its exec
# (-p: perf's own start is not sampled).
record() {
	$exe -I "$pyload" $((secs + 30)) >/dev/null 2>&1 &
	rpid=$!
	i=0
	while [ "$(readlink "/proc/$rpid/exe")" != $exe ] && [ $i -lt 1000 ]; do
		i=$((i + 1))
	done
	perf record -q -e cpu-clock:u -F 499 -g -o "$1" -p $rpid -- \
		sleep "$secs" >/dev/null 2>"$1.err"
	# How codectl walks each of its mappings.
	codectl list $rpid 2>&1 | sed 's/^/# list: /'
	kill -KILL $rpid 2>/dev/null
	wait $rpid 2>/dev/null
	[ -s "$1" ] || { sed 's/^/# /' "$1.err"; return 1; }
}

# share DATA [COMM EXE]: "samples complete frames notcode first_s
# complete_s perf_lr" of COMM's samples (python3.11's, $exe;
# samples.awk): their frames not in code too (a system-wide profile has
# other processes'), but perf_lr, the frames perf script puts after the
# leaf from the sampled link register, signed (samples.awk); the times of
# the first sample and of the first complete one.  EXE "*PATH": any file
# whose name ends in PATH (a container's).  The first incomplete sample,
# the first with a frame not in code, and how many are in a PLT stub go
# to stderr.
ld_entry=$(od -An -tx8 -j24 -N8 $ld | tr -d ' ')
share() {
	perf script -i "$1" --no-inline -F comm,time,ip,sym,dso,uregs 2>/dev/null |
	awk -v comm="${2:-python3.11}" -v exe="(${3:-$exe})" \
		-v entry="$ld_entry" -v ld=ld-linux-aarch64.so.1 -v diag=1 \
		-f "$here/perf-lr.awk" -f "$here/samples.awk" |
	awk '$5 {
		total++
		frames += $3
		notcode += $4
		perf_lr += $7
		plt += $6
		if (t0 == "")
			t0 = $1
		if ($2) {
			complete++
			if (t1 == "")
				t1 = $1
		}
	}
	END {
		printf "# %d of %d samples in a PLT stub (no CFI)\n", plt, total >"/dev/stderr"
		printf "%d %d %d %d %s %s %d\n", total, complete, frames, notcode,
			t0 == "" ? "-" : t0, t1 == "" ? "-" : t1, perf_lr
	}'
}

# shared DATA COMM EXE: share() into $total $complete $frames $notcode
# $t0 $t1 (tests/vm/container.sh's)
shared() {
	# shellcheck disable=SC2046 # six words
	set -- $(share "$@")
	total=$1 complete=$2 frames=$3 notcode=$4 t0=$5 t1=$6 perf_lr=$7
}

# walked METHOD: the frames perf_callchain_user's walks found by METHOD
# (sframe, fp, ...) so far (debugfs codectl/hooks)
walked() {
	awk -v k="$1" '$1 == "perf_callchain_user" && $2 == "frames" {
		for (i = 3; i < NF; i++) if ($i == k) v = $(i + 1) }
		END { print v + 0 }' \
		/sys/kernel/debug/codectl/hooks
}

# measure MODE: record, then share into $total $complete $frames $notcode
# $t0 $t1, the frames the walks found by SFrame and by frame records
# meanwhile into $by_sframe $by_fp, and its FIGURE line.
measure() {
	data=$tmp/$1.data
	total=0 complete=0 frames=0 notcode=0 t0=- t1=- perf_lr=0
	s0=$(walked sframe) f0=$(($(walked fp) + $(walked fp_entry)))
	record "$data" || return 1
	by_sframe=$(($(walked sframe) - s0))
	by_fp=$(($(walked fp) + $(walked fp_entry) - f0))
	grep perf_callchain_user /sys/kernel/debug/codectl/hooks | sed 's/^/# hooks: /'
	# shellcheck disable=SC2046 # six words
	set -- "$1" $(share "$data")
	total=$2 complete=$3 frames=$4 notcode=$5 t0=$6 t1=$7 perf_lr=$8
	fig "python3 $1 samples $total complete $complete ($(pct "$complete" "$total")%) frames $frames not_code $notcode; walked: sframe $by_sframe fp $by_fp ($(pct "$by_sframe" $((by_sframe + by_fp)))% by SFrame)"
}

# wait_verdict FILE: until the daemon has said what it did with FILE
# (imported, no CFI, cannot), at most 300 s (TCG's SHA-256 and synthesis
# of python3.11's 7 MB).
wait_verdict() {
	[ -n "$daemon_pid" ] || return 0	# none to wait for
	i=0
	while ! grep -Eq "$1 has no CFI|imported $1|cannot .* $1" "$log" 2>/dev/null &&
	      [ $i -lt 3000 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	grep -E "$1 has no CFI|imported $1|cannot .* $1" "$log" 2>/dev/null | sed 's/^/# /'
}

echo "# on demand, arm64: $(uname -r) ($(uname -m)), $(perf version), $($exe -V)"
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo 0 >/proc/sys/kernel/randomize_va_space
libc=$(readlink -f /lib/aarch64-linux-gnu/libc.so.6)
check "codectl.ko loads" "insmod failed" insmod "$ko"

# The control: the module alone.  Debian's arm64 objects keep frame
# records (GCC's default on aarch64 omits only leaf functions'), so the
# module's fallback on them, as the kernel's own walk, may well give
# complete stacks here: the control's share is a figure, not a check.
# What the daemon changes is how the frames are found: by SFrame (its
# imports: python3.11 and libc have none of their own) instead of by
# frame records.
measure control
check "control: python3.11 sampled" "$total samples" [ "$total" -ge 100 ]
check "control: without the daemon python3.11 is walked by frame records (<= 5% of its frames by SFrame)" \
	"sframe $by_sframe, fp $by_fp" \
	ge 5 "$(pct "$by_sframe" $((by_sframe + by_fp)))"
control="$complete $total $by_sframe $by_fp"

# The daemon, on an empty cache; the cold run; the verdicts on python3.11
# and libc; the next run.
rm -rf /var/cache/codectl
if [ "$mode" = nodaemon ]; then
	echo "# nodaemon: the negative control, no daemon started"
	: >"$log"
else
	start_daemon "$log" ||
		not_ok "daemon started" "no 'looked at every process' in $log"
fi
measure cold
# The first profile (issue 42): python3.11 first met after the daemon
# started on an empty cache.  Complete from its start, as the control
# is: the module walks what is not yet imported by its frame records
# (on x86-64, where Debian's objects have none, ondemand.sh's first-look
# and primed checks are the ones that can fail).
check "cold: python3.11's first profile after the daemon's start on an empty cache >= 99% complete, no frame outside code" \
	"$complete of $total ($(pct "$complete" "$total")%), $notcode of $frames frames not code" \
	eval '[ "$total" -ge 100 ] && ge "$(pct "$complete" "$total")" 99 && [ "$notcode" -eq 0 ]'
if [ "$t1" != - ]; then
	fig "python3 cold first_complete_after_s $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
else
	fig "python3 cold first_complete_after_s never"
fi
wait_verdict $exe
wait_verdict "$libc"
measure daemon
check "python3.11 sampled with the daemon" "$total samples" [ "$total" -ge 100 ]
check "python3.11: >= 99% complete with the daemon" \
	"$(pct "$complete" "$total")% of $total" ge "$(pct "$complete" "$total")" 99
check "python3.11: no frame outside code with the daemon" \
	"$notcode of $frames frames" [ "$frames" -gt 0 -a "$notcode" -eq 0 ]
# A sample whose innermost frame has no rule (a PLT stub: no CFI) is
# walked by frame records from there to _start (after a frame-record
# step the stack pointer is unknown on arm64, and the imports' rules are
# on sp): a few percent of the frames.
check "python3.11: with the daemon >= 90% of the walks' frames by SFrame (its imports), not frame records" \
	"sframe $by_sframe, fp $by_fp" \
	ge "$(pct "$by_sframe" $((by_sframe + by_fp)))" 90
# shellcheck disable=SC2086 # four words
set -- $control
fig "python3 summary daemon $(pct "$complete" "$total")% of $total complete, $(pct "$by_sframe" $((by_sframe + by_fp)))% of frames by SFrame; control (module alone) $(pct "$1" "$2")% of $2 complete, $(pct "$3" $(($3 + $4)))% by SFrame; not_code $notcode of $frames frames"
check "imports: python3.11 and libc imported by the daemon" \
	"$(grep -E "python3.11|libc" /sys/kernel/debug/codectl/imports | head -n 4 | tr '\n' ' ')" \
	eval 'grep -q "$exe" /sys/kernel/debug/codectl/imports && grep -q "$libc" /sys/kernel/debug/codectl/imports'
# Startup: a program's samples before main and in lazy binding
# (tests/vm/startup.sh), with the daemon.
if [ -n "$daemon_pid" ]; then
	startup_checks "$here/ondemand/startup"
else
	echo "# startup: not run: no daemon"
fi
# A container (tests/vm/container.sh): Debian 13's arm64 python3.13 with
# its own glibc under overlayfs, in mount and pid namespaces of its own
# under chroot, profiled by perf record -a -g from before its start: the
# image's first container (figures), warm >= 99%, and a new container of
# the image, whose files underneath are imported, >= 99% from its start.
# No frame outside code: Debian 13's arm64 objects are built with
# pac-ret, and in about a third of the samples perf script puts a frame
# outside code after the leaf, the leaf's caller it takes from the
# sampled link register (perf record -g records it on arm64) with its
# pointer authentication code, less 1 (samples.awk's perf_lr): perf's,
# not a frame of the callchain codectl's walk gives, and counted apart
# (the FIGURE lines' perf_lr).
if [ -n "$daemon_pid" ] && container_image; then
	host_ld_entry=$ld_entry
	ld_entry=$(od -An -tx8 -j24 -N8 /container/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1 | tr -d ' ')
	container_profile 1 "$tmp/ctr1.data"
	check "container: Debian 13's python3.13 under overlayfs, pid 1 of its own pid namespace, its own libc" \
		"pid $cpid; $(grep NSpid "/proc/$cpid/status"); $(grep -m1 'libc\.so\.6' "/proc/$cpid/maps")" \
		eval 'grep -Eq "^NSpid:.*[[:space:]]1$" "/proc/$cpid/status" &&
			grep "libc\.so\.6" "/proc/$cpid/maps" | grep -vq " /usr/lib/aarch64-linux-gnu/libc\.so\.6$" &&
			[ "$(readlink "/proc/$cpid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]'
	fig "container first-met python3.13 samples $total complete $complete ($(pct "$complete" "$total")%) not_code $notcode perf_lr $perf_lr"
	wait_verdict /usr/bin/python3.13
	sleep 3
	perf record -q -e cpu-clock:u -F 499 -g -p "$cpid" -o "$tmp/ctr1w.data" -- sleep $((secs * 2)) >/dev/null 2>&1
	shared "$tmp/ctr1w.data" python3.13 "*/usr/bin/python3.13"
	fig "container warm python3.13 samples $total complete $complete ($(pct "$complete" "$total")%) not_code $notcode perf_lr $perf_lr"
	check "container: warm, python3.13 >= 99% complete, no frame outside code" \
		"$complete of $total, $notcode not code (and perf's $perf_lr)" \
		eval '[ "$total" -gt 0 ] && ge "$(pct "$complete" "$total")" 99 && [ "$notcode" -eq 0 ]'
	container_stop
	container_profile 2 "$tmp/ctr2.data"
	fig "container second python3.13 samples $total complete $complete ($(pct "$complete" "$total")%) not_code $notcode perf_lr $perf_lr"
	check "container: a new container of the same image, its first profile >= 99% complete, no frame outside code" \
		"$complete of $total, $notcode not code (and perf's $perf_lr)" \
		eval '[ "$total" -gt 0 ] && ge "$(pct "$complete" "$total")" 99 && [ "$notcode" -eq 0 ]'
	container_stop
	ld_entry=$host_ld_entry
else
	echo "# container: not run: no daemon, no image at /container, or no overlayfs in this kernel"
fi
if [ -n "$daemon_pid" ]; then
	fig "daemon rss_kb $(awk '/^VmRSS/ { print $2 }' /proc/"$daemon_pid"/status)"
	kill "$daemon_pid"
	wait "$daemon_pid" 2>/dev/null
fi
echo "# the daemon's log:"
sed 's/^/# /' "$log" | tail -n 30
check "codectl unloads" "rmmod failed" rmmod codectl
echo "1..$n"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
