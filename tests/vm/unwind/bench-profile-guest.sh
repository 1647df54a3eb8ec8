#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench-profile, the guest's side (bench-profile.sh boots it).  Two
# builds of bench-profile.c: NOFP (no frame pointers, its own SFrame,
# nothing registered) and FP (-fno-omit-frame-pointer
# -mno-omit-leaf-frame-pointer, no SFrame: what a distribution built
# with frame pointers runs), each running two workloads: "deep" (stacks
# 5, 50 and 500 deep, few calls) and "calls" (call-heavy, stacks 28 to
# 39 deep).  Per workload, both builds run unprofiled, then sampled by
# perf record -e cpu-clock:u at 1000 Hz:
#   perf-fp     NOFP, --call-graph fp, codectl's hooks off (the kernel's
#               frame-pointer walk: what perf gives without us)
#   codectl     NOFP, the same with the hooks on (discovery finds the SFrame)
#   perf-dwarf  NOFP, --call-graph dwarf (8 KiB of stack per sample,
#               unwound by perf afterwards)
#   fp-build    FP, --call-graph fp, the hooks off (the kernel's walk of a
#               frame-pointer build)
# and where the kernel has deferred unwinding (unwind_user, hooked) and
# sid's perf is in /sid-perf, codectl and fp-build again with sid's perf,
# --call-graph fp and fp,defer, at 1000 Hz and, for "deep", at HZ_HIGH.
#
# One row each: share of the samples whose stack reaches main, bytes per
# sample (perf.data size / samples), the mean frames per sample (which
# sets the bytes: where samples fall decides it), samples lost, the slowdown against
# the one baseline users start from, NOFP unprofiled (so a row of the FP
# build carries the frame pointers' own cost), and for codectl the
# hook's mean time per sample (debugfs hooks: ns / walks).  Then the
# goals and by how much each is met or missed, and what deferring saves.
# A benchmark: nothing is asserted about the figures.
#
#   bench-profile-guest.sh MODULE.ko NOFP FP ROUNDS [HZ_HIGH]
#
# ROUNDS is the deep workload's; the calls workload runs ROUNDS / 2 (about
# the same number of instructions).
set -u
ko=$1 nofp=$2 fp=$3 rounds=$4 hz_high=${5:-5000}
params=/sys/module/codectl/parameters
hooks=/sys/kernel/debug/codectl/hooks
tmp=${TMPDIR:-/tmp}/bench-profile
mkdir -p "$tmp"

echo -1 >/proc/sys/kernel/perf_event_paranoid
echo 1024 >/proc/sys/kernel/perf_event_max_stack
# The same sampling rate for every row: no throttling by the time the
# sampling interrupt takes (a deep walk at HZ_HIGH would be).
# (The rate first: the kernel refuses it once the limit is off.)
echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
insmod "$ko" || exit 1

# sid's perf 7.2 (scripts/sid-perf.sh), with its own loader and libraries.
sid_perf() {
	/sid-perf/ld-linux-x86-64.so.2 --library-path /sid-perf /sid-perf/perf "$@"
}
perf_version() {
	"$1" --version 2>/dev/null | awk '{ split($3, v, "."); print v[1] "." v[2] }'
}

# hook_counter HOOK NAME: HOOK's counter NAME in debugfs
hook_counter() {
	awk -v h="$1" -v k="$2" '$1 == h {
		for (i = 2; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$hooks"
}

# The workload's run time in ns and its calls, from its output.
run_ns() {
	sed -n 's/^bench-profile: \([0-9]*\) ns$/\1/p' "$1"
}
run_calls() {
	sed -n 's/^bench-profile: \([0-9]*\) calls$/\1/p' "$1"
}

# stacks PERF DATA: samples, those reaching main and the frames of all:
# "TOTAL COMPLETE FRAMES".
stacks() {
	"$1" script -i "$2" --max-stack 1024 --no-inline -F comm,ip,sym 2>/dev/null |
	awk '/^[^ \t]/ { if (s != "") emit(); s = ""; next }
	     /^[ \t]+[0-9a-f]+ / { s = s " " $2; n++ }
	     function emit() {
		total++
		if (s ~ / main( |$)/) complete++
	     }
	     END { if (s != "") emit(); printf "%d %d %d\n", total, complete, n }'
}

pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * (a / b - 1) }'
}

# unprofiled WORKLOAD ROUNDS: sets $plain and $plain_fp, the fastest of
# three runs of each build after three to warm up (the first runs after
# boot take twice the instructions: measured 339 M against 169 M for 3000
# rounds on 6.12), the builds alternating.
unprofiled() {
	plain= plain_fp=
	for i in 1 2 3 4 5 6; do
		"$nofp" "$2" "$1" >"$tmp/plain.out"
		"$fp" "$2" "$1" >"$tmp/plain-fp.out"
		a=$(run_ns "$tmp/plain.out") b=$(run_ns "$tmp/plain-fp.out")
		echo "# $1: unprofiled run $i: no-fp $a ns, fp $b ns" >&2
		[ "$i" -gt 3 ] || continue
		if [ -z "$plain" ] || [ "$a" -lt "$plain" ]; then plain=$a; fi
		if [ -z "$plain_fp" ] || [ "$b" -lt "$plain_fp" ]; then plain_fp=$b; fi
	done
	calls=$(run_calls "$tmp/plain.out")
}

header() {
	printf '%-5s %-6s %-10s %-4s %-8s %5s %9s %13s %7s %5s %9s %15s\n' row \
		workld name perf callgraph Hz complete bytes/sample frames lost \
		slowdown hook-ns/sample
}

# row WORKLOAD NAME PROG HOOKS PERF CALLGRAPH HZ: print its row; sets
# complete_pct, bps, slow, hns, and ipf: the profiling instructions per
# frame (the run's less its build's unprofiled run's, over the frames of
# all samples; scripts/bench-profile-figures.sh computes the same)
row() {
	wl=$1 name=$2 prog=$3 perf=$5 cg=$6 hz=$7
	base=$plain
	[ "$prog" = "$fp" ] && base=$plain_fp
	case $cg in *defer*) hook=unwind_user ;; *) hook=perf_callchain_user ;; esac
	echo "$4" >$params/hooks
	tag=$wl-$name-$cg-$hz-$(perf_version "$perf")
	w0=$(hook_counter $hook walks) n0=$(hook_counter $hook ns)
	"$perf" record -q -e cpu-clock:u -F "$hz" --call-graph "$cg" \
		-o "$tmp/$tag.data" -- "$prog" "$r" "$wl" \
		>"$tmp/$tag.out" 2>"$tmp/$tag.err"
	w1=$(hook_counter $hook walks) n1=$(hook_counter $hook ns)
	set -- $(stacks "$perf" "$tmp/$tag.data")
	total=$1 complete=$2 frames=$3
	size=$(wc -c <"$tmp/$tag.data")
	lost=$("$perf" report -i "$tmp/$tag.data" --stats 2>/dev/null |
		awk '/LOST events:/ { print $3; exit }')
	ns=$(run_ns "$tmp/$tag.out")
	hns=-
	if [ "${w1:-0}" -gt "${w0:-0}" ]; then
		hns=$(((n1 - n0) / (w1 - w0)))
	fi
	complete_pct=$(awk -v c="$complete" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * c / t : 0 }')
	bps=$(awk -v s="$size" -v t="$total" 'BEGIN { printf "%.0f", t ? s / t : 0 }')
	fps=$(awk -v f="$frames" -v t="$total" 'BEGIN { printf "%.0f", t ? f / t : 0 }')
	slow=$(pct "${ns:-0}" "$plain")
	ipf=$(awk -v n="${ns:-0}" -v b="$base" -v f="$frames" \
		'BEGIN { printf "%.0f", f ? (n - b) / f : 0 }')
	printf 'row   %-6s %-10s %-4s %-8s %5s %8s%% %13s %7s %5s %8s%% %15s\n' "$wl" \
		"$name" "$(perf_version "$perf")" "$cg" "$hz" "$complete_pct" \
		"$bps" "$fps" "${lost:-0}" "$slow" "$hns"
	echo "# $tag: $complete of $total samples reach main, $size bytes, $ns ns" >&2
	[ -s "$tmp/$tag.err" ] && sed "s/^/# $tag: perf: /" "$tmp/$tag.err" | head -n 5 >&2
	"$perf" script -i "$tmp/$tag.data" --max-stack 1024 --no-inline \
		-F comm,ip,sym 2>/dev/null |
	awk '/^[^ \t]/ { if (n) d[n]++; n = 0; next } /^[ \t]+[0-9a-f]+ / { n++ }
	     END { if (n) d[n]++; for (k in d) printf "%d:%d ", k, d[k]; print "" }' |
		sed "s/^/# $tag: frames:samples /" >&2
	rm -f "$tmp/$tag.data"
}

# goal WORKLOAD LABEL: codectl's row (cc_*) against the FP build's
# (fb_*) of the same perf, call graph and rate: profiling instructions
# per frame within 1.5x, total slowdown, completeness, bytes per sample.
goal() {
	awk -v wl="$1" -v l="$2" -v cs="$cc_slow" -v fs="$fb_slow" \
	    -v ci="$cc_ipf" -v fi="$fb_ipf" \
	    -v cp="$cc_pct" -v fp="$fb_pct" -v cb="$cc_bps" -v fb="$fb_bps" 'BEGIN {
		r = fi > 0 ? ci / fi : 0
		if (r <= 1.5) v = sprintf("met (%.2fx)", r)
		else v = sprintf("missed by %.2f (%.2fx)", r - 1.5, r)
		printf "goal  %s %s: codectl instructions/frame <= 1.5x fp-build: %s (%s vs %s)", wl, l, v, ci, fi
		d = cs - fs
		if (d <= 0) v = sprintf("met by %.1f points", -d)
		else v = sprintf("missed by %.1f points", d)
		printf "; codectl total <= fp-build total: %s (%s%% vs %s%%)", v, cs, fs
		c = (cp >= fp - 0.5) ? "same" : sprintf("%.1f points fewer", fp - cp)
		printf "; complete %s%% vs %s%% (%s)", cp, fp, c
		r = fb ? cb / fb : 0
		w = (r >= 0.95 && r <= 1.05) ? "within 5%" : "not within 5%"
		printf "; bytes/sample %s vs %s (%.2fx, %s)\n", cb, fb, r, w
	}'
}

perf61=$(command -v perf)
sid=
if [ -x /sid-perf/perf ] && [ "$(hook_counter unwind_user attached)" = 1 ]; then
	sid=sid_perf
fi
echo "# kernel $(uname -r), perf $(perf_version perf)${sid:+, sid perf $(perf_version sid_perf) (fp,defer rows)}"

for wl in deep calls; do
	r=$rounds
	[ "$wl" = calls ] && r=$((rounds / 2))
	unprofiled "$wl" "$r"
	echo "# workload $wl: $nofp $r $wl: no-fp unprofiled $plain ns (the baseline), fp unprofiled $plain_fp ns, $calls calls, $((plain / calls)) instructions per call"
	header
	printf 'row   %-6s %-10s %-4s %-8s %5s %9s %13s %7s %5s %8s%% %15s\n' "$wl" \
		no-fp - - - - - - - 0.0 -
	printf 'row   %-6s %-10s %-4s %-8s %5s %9s %13s %7s %5s %8s%% %15s\n' "$wl" \
		fp-build - - - - - - - "$(pct "$plain_fp" "$plain")" -
	row "$wl" perf-fp "$nofp" 0 "$perf61" fp 1000
	row "$wl" codectl "$nofp" 1 "$perf61" fp 1000
	grep '^perf_callchain_user' "$hooks" | sed "s/^/# $wl: /" >&2
	cc_pct=$complete_pct cc_bps=$bps cc_slow=$slow cc_ipf=$ipf
	row "$wl" perf-dwarf "$nofp" 0 "$perf61" dwarf 1000
	row "$wl" fp-build "$fp" 0 "$perf61" fp 1000
	fb_pct=$complete_pct fb_bps=$bps fb_slow=$slow fb_ipf=$ipf
	goal "$wl" "perf $(perf_version perf) fp 1000 Hz"
	[ -n "$sid" ] || continue
	hzs=1000
	[ "$wl" = deep ] && hzs="1000 $hz_high"
	for hz in $hzs; do
		row "$wl" codectl "$nofp" 1 sid_perf fp "$hz"
		c_fp=$slow c_pct=$complete_pct c_bps=$bps c_ipf=$ipf
		row "$wl" codectl "$nofp" 1 sid_perf fp,defer "$hz"
		cc_pct=$complete_pct cc_bps=$bps cc_slow=$slow cc_ipf=$ipf
		grep '^unwind_user' "$hooks" | sed "s/^/# $wl: /" >&2
		row "$wl" fp-build "$fp" 0 sid_perf fp "$hz"
		f_fp=$slow f_pct=$complete_pct f_bps=$bps f_ipf=$ipf
		row "$wl" fp-build "$fp" 0 sid_perf fp,defer "$hz"
		fb_pct=$complete_pct fb_bps=$bps fb_slow=$slow fb_ipf=$ipf
		goal "$wl" "perf $(perf_version sid_perf) fp,defer $hz Hz"
		cd_slow=$cc_slow fd_slow=$fb_slow
		cc_pct=$c_pct cc_bps=$c_bps cc_slow=$c_fp cc_ipf=$c_ipf
		fb_pct=$f_pct fb_bps=$f_bps fb_slow=$f_fp fb_ipf=$f_ipf
		goal "$wl" "perf $(perf_version sid_perf) fp $hz Hz"
		awk -v wl="$wl" -v hz="$hz" -v c="$c_fp" -v cd="$cd_slow" \
		    -v f="$f_fp" -v fd="$fd_slow" 'BEGIN {
			printf "defer %s %s Hz: deferring saves codectl %.1f points (%s%% -> %s%%), fp-build %.1f points (%s%% -> %s%%)\n",
				wl, hz, c - cd, c, cd, f - fd, f, fd
		}'
	done
done
rmmod codectl
