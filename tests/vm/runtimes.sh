#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# JIT runtimes in a QEMU guest (scripts/check.sh's runtimes stage):
# Debian's own Node.js (tests/vm/runtimes/work.js, named functions calling
# each other through V8's interpreter, its optimised code and its
# builtins) and OpenJDK 17 (tests/vm/runtimes/Work.java, the same through
# HotSpot's interpreter, compiled code and the JDK) under Debian's perf
# record -g, with the runtimes' symbol maps for perf (node
# --perf-basic-prof --interpreted-frames-native-stack; java
# -XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit), each of:
#   none      no module: the kernel's own frame-pointer walk, the anchor;
#   module    codectl.ko alone, no daemon: JIT code in anonymous memory is
#             code (its page is executable), walked by frame pointers;
#   daemon    the module and `codectl daemon` (node's and its libraries'
#             rules synthesised), after a first run that meets them;
#   dwarf     perf --call-graph dwarf, figures only.
# Checks: JIT frames per sample with the module alone at least 90% of
# the kernel's (runs differ by what the JIT compiled when; without the
# page-table check they fell to 1%); with the daemon >= 99% of the
# program thread's samples complete (node: to its _start, called from
# libc; java: to the thread's entry); no frame outside code (perf finds
# no object at it) with the module; the hooks' no-harm check
# (check_harm=1: every walk compared with the kernel's frame-pointer
# walk) finds no walk shorter than the kernel's, with and without the
# daemon; codectl list and status PID name node's anonymous code.
#
# On arm64 (check.sh's runtimes-SERIES-arm64) perf --call-graph dwarf
# takes the general registers by name (--user-regs), and perf -g's
# callchain has the leaf's caller from the link register (x30) as its
# second frame, inserted by perf itself (its DWARF unwinder, which gives
# a caller's pc less one): a second frame equal to the sample's lr (perf
# script -F uregs) less one is counted as "lr" in the figures, not as not
# code when perf finds no object at it.  Where x30 holds a return address
# signed with pointer authentication (6.1's vDSO signs it on entry),
# bookworm's perf leaves the PAC on it.  The kernel's frames are
# stripped: one equal to the lr itself is no such insertion.
#
#   runtimes.sh MODULE.ko SECONDS [RUNTIMES]   (RUNTIMES: "node java")

here=$(dirname "$0")
. "$here/tap.sh"
ko=$1 secs=${2:-3}
runtimes=${3:-node java}
arch=$(uname -m)
tmp=/tmp/rt
hooks=/sys/kernel/debug/codectl/hooks
dmesg -n 1
mkdir -p "$tmp"
daemon_pid=

fig() { echo "FIGURE $*"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# start RUNTIME: node (work.js) or java (Work.class) running in the
# background, its start-up over (seconds under TCG); $rpid is its pid.
start() {
	rm -f "$tmp/ready"
	case $1 in
	node)
		node --perf-basic-prof --interpreted-frames-native-stack \
			"$here/runtimes/work.js" $((secs + 120)) "$tmp/ready" ;;
	java)
		"$java" -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions \
			-XX:+DumpPerfMapAtExit -cp "$jclasses" Work $((secs + 120)) \
			"$tmp/ready" ;;
	esac >/dev/null 2>&1 &
	rpid=$!
	i=0
	while [ ! -e "$tmp/ready" ] && [ $i -lt 1200 ]; do
		i=$((i + 1))
		sleep 0.1
	done
}

# stop: the runtime ended; java writes its perf map as it exits (TERM)
stop() {
	kill -TERM $rpid 2>/dev/null
	wait $rpid 2>/dev/null
}

# warm: the runtime's first unwind made and its objects' rules in place
# (codectl status names libc and libnode, or libjvm, walked by SFrame),
# within 60 s.  A new process's objects are discovered at the first
# unwind that meets them, after it: its first samples are cut (the first
# profile, which the on-demand stage checks).  The daemon run measures
# the warm stacks.
warm() {
	perf record -q -e cpu-clock:u -F 499 -g -o "$tmp/warm.data" -p $rpid -- \
		sleep 0.3 >/dev/null 2>&1
	i=0
	while [ $i -lt 600 ]; do
		codectl status $rpid >"$tmp/warm" 2>&1
		[ "$(grep -Ec "^[0-9a-f-]+ SFrame.*/lib(c\.so\.6|node\.so\.108|jvm\.so)\$" "$tmp/warm")" -lt 2 ] ||
			break
		i=$((i + 1))
		sleep 0.1
	done
	echo "# warm: $(grep -Ec "^[0-9a-f-]+ SFrame" "$tmp/warm") objects walked by SFrame after $i tenths of a second"
}

# record RUNTIME OUT PERF-ARGS...: the runtime under perf record for $secs
# s once its workload runs, with perf -p (perf's own start is not
# sampled); in the daemon run, once it is warm.
record() {
	rt=$1 out=$2
	shift 2
	start "$rt"
	[ "$mode" != daemon ] || warm
	perf record -q -e cpu-clock:u -F 499 -o "$out" -p $rpid "$@" -- \
		sleep "$secs" >/dev/null 2>"$out.err"
	stop
	[ -s "$out" ] || { sed 's/^/# /' "$out.err"; return 1; }
}

# share RUNTIME DATA: the samples of the thread that runs the program
# (node: the main thread; java: the thread the launcher starts the JVM's
# main in, whose comm stays "java"), "samples complete frames jit_frames
# deep own notcode".  Complete: node's reach its _start from libc; java's
# reach the thread's entry (the launcher's ThreadJavaMain in libjli,
# called from libc's start_thread, itself from clone3).  A JIT frame is
# one perf found in the runtime's symbol map; deep: samples with >= 10 of
# them; own: samples with a frame of the program's own functions
# (work.js's, Work's); notcode: frames perf found no object for.
share() {
	f=comm,pid,tid,ip,sym,dso
	[ "$arch" != aarch64 ] || f=$f,uregs
	perf script -i "$2" --no-inline -F $f 2>/dev/null |
	awk -v rt="$1" "$(cat "$here/perf-lr.awk")"'
	function flush() {
		if (on && n) {
			total++
			frames += n
			jit += nj
			if (nj >= 10)
				deep++
			if (no)
				own++
			c = rt == "node" ? lastd == "(/usr/bin/node)" &&
					   prevd ~ /\/libc\.so\.6\)$/ :
			    lastd ~ /\/libc\.so\.6\)$/ &&
			    prevd ~ /\/libc\.so\.6\)$/ && prev2d ~ /\/libjli\.so\)$/
			if (c)
				complete++
			else if (shown++ < 3)
				print "# incomplete:" stack > "/dev/stderr"
			# The second frame: perf inserted it from the lr (which
			# perf script prints after the frames), or not code.
			if (n >= 2 && lr != "" && ip2 == minus1(lr))
				lrf++
			else if (unk2)
				nc++
			notcode += nc
			if (nc && shownc++ < 3)
				print "# not code (lr " lr "):" ips > "/dev/stderr"
		}
		n = nj = no = nc = unk2 = 0
		lr = ip2 = ""
		stack = ips = ""
		lastd = prevd = prev2d = ""
		on = 0
	}
	/^[^ \t]/ {
		flush()
		split($2, p, "/")
		on = rt == "node" ? $1 == "node" && p[1] == p[2] : $1 == "java" && p[1] != p[2]
		getlr()
		next
	}
	/^[ \t]*ABI:/ { getlr(); next }
	/^[ \t]*$/ { flush(); next }
	on {
		n++
		if (n <= 40) {
			stack = stack " " $2 $NF
			ips = ips " " $1 ($NF == "([unknown])" ? "?" : "")
		}
		prev2d = prevd
		prevd = lastd
		lastd = $NF
		if ($NF ~ /perf-[0-9]+\.map\)$/) {
			nj++
			if ($0 ~ /(Work\.|[ ~*^](leaf[A-Za-z]*|step|descend|round|main) \/)/)
				no = 1
		}
		ip = $1
		sub(/^0+/, "", ip)
		if (n == 2) {
			ip2 = ip
			unk2 = $NF == "([unknown])"
		} else if ($NF == "([unknown])") {
			nc++
		}
	}
	END {
		flush()
		printf "%d %d %d %d %d %d %d %d\n", total, complete, frames, jit, deep, own, notcode, lrf
	}'
}

# measure RUNTIME MODE [PERF-ARGS]: record and share into $total
# $complete $frames $jit $deep $own $notcode, and a FIGURE line.
measure() {
	rt=$1 mode=$2
	shift 2
	[ $# -gt 0 ] || set -- -g
	total=0 complete=0 frames=0 jit=0 deep=0 own=0 notcode=0 lrf=0
	if ! record "$rt" "$tmp/$rt-$mode.data" "$@"; then
		not_ok "$rt, $mode: perf record" "no samples"
		return 1
	fi
	# shellcheck disable=SC2046 # eight words
	set -- $(share "$rt" "$tmp/$rt-$mode.data" 2>"$tmp/incomplete")
	# The first stacks incomplete (cold and daemon runs) and with a
	# frame not in code (every run; "?" marks the frame).
	case $mode in
	cold | daemon) cat "$tmp/incomplete" ;;
	*) grep '^# not code' "$tmp/incomplete" || true ;;
	esac
	total=$1 complete=$2 frames=$3 jit=$4 deep=$5 own=$6 notcode=$7 lrf=$8
	fig "$rt $mode samples $total complete $complete ($(pct "$complete" "$total")%)" \
	    "jit_frames_per_sample $(awk -v a="$jit" -v b="$total" 'BEGIN { printf "%.2f", b ? a / b : 0 }')" \
	    "with_10_jit_frames $(pct "$deep" "$total")% with_own_frame $own frames $frames not_code $notcode lr $lrf"
}

java=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
jclasses=/usr/lib/jvm/java-17-openjdk-amd64/classes
case " $runtimes " in
*" java "*) jver=$("$java" -version 2>&1 | awk -F'"' 'NR == 1 { print $2 }') ;;
*) jver="not run" ;;
esac
echo "# kernel $(uname -r) ($arch), node $(node --version), java $jver"
case " $runtimes " in
*" java "*) ;;
*) echo "# SKIP java: not staged for this architecture (arm64: node only; OpenJDK 17 under TCG arm64 not staged nor timed yet)" ;;
esac

# checks RUNTIME MODE: what every setup with the module must give
checks() {
	# shellcheck disable=SC2046 # two words
	set -- $(harm_counts)
	set -- $(($1 - hc0)) $(($2 - hs0))
	fig "$rt $mode harm_checked $1 harm_shorter $2"
	check "$rt, $mode: no walk shorter than the kernel's frame-pointer walk" \
		"$2 of $1 walks shorter ($(grep harm "$hooks" | tr '\n' ';'))" [ "$2" -eq 0 ]
	check "$rt, $mode: no frame that is not code" "$notcode frames" \
		[ "$notcode" -eq 0 ]
}

# measure_checked RUNTIME MODE: measure, with the no-harm counts around it
measure_checked() {
	# shellcheck disable=SC2046 # two words
	set -- $1 $2 $(harm_counts)
	hc0=$3 hs0=$4
	measure "$1" "$2" && checks
}

# ---- without the module: the kernel's walk -----------------------------------

for rt in $runtimes; do
	measure $rt none
	eval "none_$rt=\"$jit $total\""
done

# ---- the module alone ------------------------------------------------------------

insmod "$ko" check_harm=1 || { echo "Bail out! insmod"; exit 1; }
for rt in $runtimes; do
	measure_checked $rt module
	# shellcheck disable=SC2046
	set -- $(eval echo \$none_$rt)
	check "$rt, module alone: JIT frames per sample >= 90% of the kernel's" \
		"$jit JIT frames in $total samples, without codectl $1 in $2" \
		ge "$(awk -v a="$jit" -v b="$total" 'BEGIN { print b ? a / b : 0 }')" \
		   "$(awk -v a="$1" -v b="$2" 'BEGIN { print b ? 0.9 * a / b : 1 }')"
done
# shellcheck disable=SC2046
set -- $(harm_counts)
check "module alone: the no-harm check compared walks" "none compared" [ "$1" -gt 0 ]

# codectl list and status name node's JIT code and how it is walked.
start node
codectl list $rpid >"$tmp/list" 2>&1
codectl status $rpid >"$tmp/status" 2>&1
stop
sed 's/^/# /' "$tmp/list"
check "codectl list PID: node's anonymous code, walked by frame pointers" \
	"$(tail -n 3 "$tmp/list" | tr '\n' ';')" \
	eval 'grep -q "frame pointers (no JIT table) *(anonymous)" "$tmp/list" &&
	      grep -Eq "^[1-9][0-9]* anonymous executable regions" "$tmp/list"'
sed 's/^/# /' "$tmp/status"
check "codectl status PID: node's objects without rules are named, marked !" \
	"$(grep -c . "$tmp/status") lines" \
	eval 'grep -q "no rules: frame pointers .*libnode.so.108" "$tmp/status" &&
	      grep -q "^! process" "$tmp/status" &&
	      grep -q "frame pointers (no JIT table) *(anonymous)" "$tmp/status"'

# ---- the module and the daemon ----------------------------------------------------

start_daemon "$tmp/daemon.log" || not_ok "daemon started" "no 'looked at every process'"
for rt in $runtimes; do
	measure $rt cold
	measure_checked $rt daemon
	check "$rt, daemon: >= 99% of the program thread's samples complete" \
		"$complete of $total ($(pct "$complete" "$total")%)" \
		ge "$(pct "$complete" "$total")" 99
done
# A process is discovered at the first unwind that meets it.
start node
perf record -q -e cpu-clock:u -F 499 -g -o "$tmp/discover.data" -p $rpid -- \
	sleep 1 >/dev/null 2>&1
codectl status $rpid >"$tmp/status" 2>&1
stop
sed 's/^/# /' "$tmp/status"
check "codectl status PID with the daemon: libnode.so.108 walked with its import's SFrame" \
	"$(grep libnode "$tmp/status")" \
	eval 'grep -q "^[0-9a-f-]* SFrame, imported, cache entry [0-9a-f]* .*libnode.so.108" "$tmp/status"'
# arm64's perf names the registers it needs for DWARF unwinding.
regs=
[ "$arch" != aarch64 ] ||
	regs=--user-regs=x19,x20,x21,x22,x23,x24,x25,x26,x27,x28,x29,lr,sp,pc
for rt in $runtimes; do
	# shellcheck disable=SC2086 # none or one word
	measure $rt dwarf --call-graph dwarf,16384 $regs
done

kill "$daemon_pid" 2>/dev/null
wait "$daemon_pid" 2>/dev/null
codectl import --clear
rmmod codectl || not_ok "rmmod" "failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
