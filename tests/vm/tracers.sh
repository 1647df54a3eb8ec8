#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The tracer tests, run inside a QEMU guest (scripts/vm-run.sh) as root:
# the real perf and trace-cmd from Debian, unchanged, get complete user
# stacks of a -fomit-frame-pointer program once codectl.ko is loaded (its
# kprobes on perf_callchain_user and arch_stack_walk_user), and the
# kernel's own frame-pointer stacks otherwise.
#
#   tracers.sh MODULE.ko [TESTMOD.ko]
#
# The traced program is unwind/VARIANT/tracee (tests/vm/unwind/tracee.c),
# looked for next to this script: nine frames, main -> tr_f1 .. tr_f7 ->
# tr_leaf.  A sample is "complete" when its user stack starts with those
# nine in order (ftrace keeps 8 user entries: tr_leaf .. tr_f1).  Each
# comparison is made both ways in the same boot, so a test that passes
# without the mechanism it tests fails here:
#   - v3 (SFrame, no frame pointers), registered, hooks on: >= 95% of the
#     samples in tr_leaf complete, and the hook counted its walks; with
#     perf_event_max_stack=5, stacks of the 5 innermost frames;
#   - the same with the hooks off (module parameter hooks=0), and with
#     hooks on but the program neither registered nor discovered
#     (discover=0: the hook declines): <= 5%; not registered but
#     discovered (the default): >= 95%;
#   - fp (frame pointers, no SFrame), registered, hooks on: >= 95%, found
#     by codectl's frame-pointer fallback, as with the hooks off;
#   - where the kernel has deferred unwinding (7.2, 7.3), its release's
#     perf (sid's 7.2, trixie-backports' 7.3) with
#     --call-graph fp,defer (unwind_user, in a task_work): the same >= 95%
#     with the hooks, <= 5% without;
#   - trace-cmd -O userstacktrace on sched_switch, v3 sleeping in tr_leaf:
#     the same >= 95% with the hooks, <= 5% without;
#   - bpftrace's ustack (profile probe);
#   - libc-tracee, whose hot paths run inside Debian's libc (qsort with a
#     callback, memcpy, read on a pipe): registered with libc's rules
#     synthesised from .eh_frame (codectl_register_all), >= 99% of the
#     samples through libc complete to main; without them <= 50%;
#   - the same system-wide: libc's rules imported (codectl import),
#     libc-tracee registers nothing, >= 99%; after codectl import --clear
#     <= 50%; and per process, LD_AUDIT=libcodectl-audit.so or
#     LD_PRELOAD=libcodectl-preload.so: >= 99%;
#   - imports keyed on the content: after codectl import --system, perf
#     sessions of two programs, each adding libc to a fresh build-id
#     cache (which moves libc's ctime), and sessions after ln, chmod and
#     touch -a of libc: >= 99% each; a copy of libc imported, then
#     rewritten in place with its size and mtime put back: <= 50%, its
#     import dropped;
#   - objects of any size: codectl import --system exits 0 and imports
#     bpftrace's libLLVM, whose section is larger than sframe_flat_max;
#     libc imported with sframe_flat_max below its section's size
#     (decoded in a kernel copy): >= 99%;
#   - jit-tracee, an example JIT whose generated code (no frame pointers)
#     calls back into C, its rules registered with libcodectl's JIT
#     table builder: >= 99% of the samples in the callback complete
#     through the generated code to main; tables not registered, or hooks
#     off: <= 5%; the module's own unwind from the callback (faulting and
#     NOFAULT) finds the JIT frame and main, and does not without the
#     tables;
#   - switching the hooks off and on 20 times, then rmmod, while perf
#     samples every CPU with callchains and a registered tracee runs: perf
#     ends cleanly and (vm-run's verdict) the kernel log stays clean;
#   - a process started before the module is loaded: discovered, >= 95%;
#   - no frame that is not code: frames-tracee (a v3 program calling
#     libnocode.so, no frame pointers, no SFrame, no CFI, its rbp a heap
#     pointer, a stack pointer, 5) under perf -g, bpftrace ustack,
#     trace-cmd userstacktrace (and perf fp,defer): every frame in an
#     executable mapping; with check_callers=0 some are not (the test can
#     fail); those walks end cut (no_rule and not_code), <= 5% complete;
#     a thread's stack through libc's imported rules ends outermost
#     (>= 95% of the walks), without the import <= 5%; the main thread's
#     ends complete (end, at _start's cleared rbp), >= 95%; libc-tracee
#     through Debian's libc without its rules (a real program sampled in
#     a library without rules): every frame in an object perf knows.
#   - no harm: the module is loaded with check_harm=1, and no walk of
#     any of the workloads above gave fewer frames than the kernel's own
#     frame-pointer walk finds in code (codectl_walk_reference());
#     harm-tracee, a frame-pointer program whose SFrame row in its hot
#     loop is wrong (a return address that is not code, a CFA misaligned,
#     not above the stack pointer, or past the stack), under perf -g, one
#     run per kind: >= 95% of its stacks complete by the frame-pointer
#     fallback (the hook's fallbacks counted), no walk shorter; without
#     the fallback, none; and a recursion in a gap of its table (no
#     rows: frame-pointer steps at one return address), complete, no
#     walk shorter (a repeated "no rule" once ended the walk with a stop
#     reason out of bounds: an oops);
#   - what watching costs: a process without SFrame (dash, libc, nothing
#     imported) under perf -g gets no registry (an mmu notifier's exit
#     waits for an SRCU grace period), its files a negative entry each;
#     a second such process is looked up, not examined again.
# Output is TAP-like; the last line is "N passed, N failed".

ko=$1
# The test module (codectl_test.ko) for the NOFAULT walk of the JIT check,
# loaded after codectl and removed before it.
testmod_ko=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
v3=$here/unwind/v3/tracee
fp=$here/unwind/fp/tracee
libc=$here/unwind/v3/libc-tracee
params=/sys/module/codectl/parameters
hooks=/sys/kernel/debug/codectl/hooks
tmp=${TMPDIR:-/tmp}/tracers.$$
chain="tr_leaf tr_f7 tr_f6 tr_f5 tr_f4 tr_f3 tr_f2 tr_f1 main"
mkdir -p "$tmp"

# ok, not_ok, check NAME WHY COMMAND...; $n, $pass, $fail
. "$here/tap.sh"

# A hook's counter from debugfs: hook_counter FUNCTION NAME
hook_counter() {
	awk -v f="$1" -v k="$2" '$1 == f {
		for (i = 2; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$hooks"
}

# Each tool's stacks are turned into one line per stack, "COUNT SYM
# SYM ...", innermost first; share_complete counts those that start in
# tr_leaf and those of them whose first N symbols are the chain: prints
# "TOTAL COMPLETE".
share_complete() {
	awk -v n="$1" -v chain="$chain" '
	BEGIN { split(chain, want, " ") }
	$2 == "tr_leaf" {
		total += $1
		for (i = 1; i <= n && want[i] == $(i + 1); i++)
			;
		if (i > n) complete += $1
	}
	END { printf "%d %d\n", total, complete }'
}

# perf script: a line with the comm, then one "  IP SYM" line per frame.
perf_stacks() {
	${perf:-perf} script -i "$1" --no-inline -F comm,ip,sym 2>/dev/null |
	awk '/^[^ \t]/ { if (s != "") print "1" s; s = ""; next }
	     /^[ \t]+[0-9a-f]+ / { s = s " " $2 }
	     END { if (s != "") print "1" s }'
}

# perf_run NAME TRACEE ARGS...: record the tracee for 3 s, print "TOTAL
# COMPLETE"; $perf is the perf command (default perf), $callgraph its
# --call-graph (default fp)
perf_run() {
	name=$1
	shift
	${perf:-perf} record -q -e cpu-clock:u -F 499 \
		--call-graph "${callgraph:-fp}" -o "$tmp/$name.data" -- \
		"$@" 3 2>"$tmp/$name.err" >/dev/null
	perf_stacks "$tmp/$name.data" | share_complete 9
}

# The kernel's release's perf (scripts/sid-perf.sh: sid's 7.2 on 7.2,
# trixie-backports' 7.3 on 7.3), with its own loader and libraries.
sid_perf() {
	/sid-perf/ld-linux-x86-64.so.2 --library-path /sid-perf /sid-perf/perf "$@"
}

# Its name and version in the test names ("perf 7.3.4").
defer_perf=perf
[ ! -x /sid-perf/perf ] || defer_perf="perf $(sid_perf --version | awk '{ print $3 }')"

# expect_share NAME "TOTAL COMPLETE" OP PERCENT: OP is ge or le
expect_share() {
	name=$1 op=$3 pct=$4
	set -- $2
	total=$1 complete=$2
	echo "# $name: $complete of $total samples complete"
	if [ "$total" -lt 20 ]; then
		not_ok "$name" "only $total samples in tr_leaf (want >= 20)"
		return
	fi
	if [ "$op" = ge ]; then
		check "$name" "$complete of $total complete, want >= $pct%" \
			[ $((complete * 100)) -ge $((pct * total)) ]
	else
		check "$name" "$complete of $total complete, want <= $pct%" \
			[ $((complete * 100)) -le $((pct * total)) ]
	fi
}

# both_ways LABEL HOOK RUN TAG ARGS...: RUN TAG-on ARGS (prints "TOTAL
# COMPLETE") with the hooks on: >= 95% complete, and HOOK redirected
# calls; then RUN TAG-off ARGS with hooks=0: <= 5%, the kernel's stacks.
both_ways() {
	label=$1 hook=$2 run=$3 tag=$4
	shift 4
	before=$(hook_counter "$hook" redirected)
	expect_share "$label, hooks on" "$("$run" "$tag-on" "$@")" ge 95
	after=$(hook_counter "$hook" redirected)
	echo "# $label: $hook redirected $before -> $after"
	check "$label: $hook redirected" "redirected $before -> $after" \
		[ "${after:-0}" -gt "${before:-0}" ]
	echo 0 >$params/hooks
	expect_share "$label, hooks off" "$("$run" "$tag-off" "$@")" le 5
	echo 1 >$params/hooks
}

# perf_defer NAME ARGS...: perf_run with sid's perf and deferred callchains
perf_defer() {
	perf=sid_perf callgraph=fp,defer perf_run "$@"
}

# Wait (30 s at most) for a tracee's "ready" line in FILE.
wait_ready() {
	i=0
	while ! grep -q ready "$1" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

setup() {
	echo 0 >/proc/sys/kernel/randomize_va_space
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	[ -d /sys/kernel/tracing/events ] ||
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	insmod "$ko" check_harm=1 || return
	[ -z "$testmod_ko" ] || insmod "$testmod_ko"
}

# The no-harm check (check_harm=1): no redirected walk since insmod gave
# fewer frames than the kernel's frame-pointer walk finds in code.
harm_check() {
	what=$1
	# shellcheck disable=SC2046 # two words
	set -- $(harm_counts)
	# Every run's counts, for the one shorter walk ever seen (issue 42).
	echo "FIGURE harm $what: walks_compared $1 shorter $2"
	check "$what: no walk shorter than the kernel's frame-pointer walk" \
		"$2 of $1 walks shorter: $(grep harm "$hooks" | tr '\n' ';')" \
		[ "$1" -gt 0 -a "$2" -eq 0 ]
}

# rmmod codectl, the test module first.
rmmod_codectl() {
	if grep -q '^codectl_test ' /proc/modules; then
		rmmod codectl_test || return
	fi
	rmmod codectl
}

check "module loads" "insmod failed" setup
for f in perf_callchain_user arch_stack_walk_user; do
	check "hook on $f attached" "$(grep "^$f attached" "$hooks")" \
		[ "$(hook_counter $f attached)" = 1 ]
done
echo "# $(grep attached "$hooks" | tr '\n' ';')"

# --- perf -------------------------------------------------------------------
before=$(hook_counter perf_callchain_user redirected)
r=$(perf_run v3-hooks "$v3" -r)
expect_share "perf -g: v3 registered, hooks on: complete" "$r" ge 95
after=$(hook_counter perf_callchain_user redirected)
check "perf -g: the hook did those walks" "redirected $before -> $after" \
	[ "$after" -gt "$before" ]
sframe=$(awk '$1 == "perf_callchain_user" && $2 == "frames" {
	for (i = 3; i < NF; i++) if ($i == "sframe") print $(i + 1) }' "$hooks")
check "perf -g: frames found by SFrame" "sframe frames: $sframe" \
	[ "${sframe:-0}" -gt 0 ]
codectl unwind >"$tmp/unwind.txt" 2>&1
check "codectl unwind shows the hooks and their counters" \
	"$(grep -A1 '^hook perf' "$tmp/unwind.txt" | tr '\n' ' ')" \
	grep -q "^hook perf_callchain_user: attached" "$tmp/unwind.txt"

# perf_event_max_stack bounds perf_callchain_store(): the hook must stop
# there, with the innermost frames.
max=$(cat /proc/sys/kernel/perf_event_max_stack)
echo 5 >/proc/sys/kernel/perf_event_max_stack
perf record -q -e cpu-clock:u -F 499 -g -o "$tmp/max5.data" -- "$v3" -r 3 \
	2>"$tmp/max5.err" >/dev/null
echo "$max" >/proc/sys/kernel/perf_event_max_stack
perf_stacks "$tmp/max5.data" >"$tmp/max5.txt"
deepest=$(awk '{ if (NF - 1 > d) d = NF - 1 } END { print d + 0 }' "$tmp/max5.txt")
check "perf_event_max_stack=5: no stack deeper than 5" "deepest $deepest" \
	[ "$deepest" -le 5 ]
expect_share "perf_event_max_stack=5: the 5 innermost frames" \
	"$(share_complete 5 <"$tmp/max5.txt")" ge 95

echo 0 >$params/hooks
check "hooks=0 detaches" "$(grep attached "$hooks" | head -1)" \
	[ "$(hook_counter perf_callchain_user attached)" = 0 ]
r=$(perf_run v3-nohooks "$v3" -r)
expect_share "perf -g: v3 registered, hooks off: the kernel's broken stacks" "$r" le 5
echo 1 >$params/hooks
check "hooks=1 attaches again" "$(grep attached "$hooks" | head -1)" \
	[ "$(hook_counter perf_callchain_user attached)" = 1 ]

# Not registered: without discovery the hook declines (the kernel's
# stacks); with it, the first sample's request has the module find the
# program's SFrame, and the rest are complete.
echo 0 >$params/discover
before=$(hook_counter perf_callchain_user declined)
r=$(perf_run v3-unregistered "$v3")
expect_share "perf -g: v3 not registered, discover=0: declined, the kernel's stacks" "$r" le 5
after=$(hook_counter perf_callchain_user declined)
check "perf -g: the hook declined those calls" "declined $before -> $after" \
	[ "$after" -gt "$before" ]
echo 1 >$params/discover
r=$(perf_run v3-discovered "$v3")
expect_share "perf -g: v3 not registered, discovered: complete" "$r" ge 95

r=$(perf_run fp-hooks "$fp" -r)
expect_share "perf -g: fp registered, hooks on: codectl's FP fallback complete" "$r" ge 95
echo 0 >$params/hooks
r=$(perf_run fp-nohooks "$fp" -r)
expect_share "perf -g: fp registered, hooks off: the kernel's FP walk complete" "$r" ge 95
echo 1 >$params/hooks

# --- perf's deferred callchains (7.2: unwind_user) ---------------------------
# perf's --call-graph fp,defer (7.2 on) asks the deferred unwinder for the user
# stack, which walks it in a task_work through unwind_user(): faulting
# reads there.
if [ -n "$(hook_counter unwind_user attached)" ]; then
	if [ -x /sid-perf/perf ]; then
		both_ways "$defer_perf fp,defer: v3 registered" unwind_user \
			perf_defer defer "$v3" -r
	else
		not_ok "perf fp,defer" "this kernel has unwind_user, but no /sid-perf (scripts/sid-perf.sh)"
	fi
fi

# --- ftrace (trace-cmd) ------------------------------------------------------
# trace-cmd report prints each user stack as a "user_stack:" event with
# one "=> 0xADDRESS" per entry (8 of them, 0x0 for none), the first on the
# event's line; tracee resolve names the addresses.
ftrace_run() {
	name=$1
	shift
	trace-cmd record -q -e sched:sched_switch -O userstacktrace \
		-o "$tmp/$name.dat" -F "$@" 2 >"$tmp/$name.out" 2>&1
	trace-cmd report -i "$tmp/$name.dat" 2>/dev/null | "$v3" resolve |
	awk '/ user_stack: / { if (s != "") print "1" s; s = ""; us = 1 }
	     us && /(^[ \t]*| user_stack: .*)=> / { sub(/.*=> */, ""); s = s " " $1; next }
	     { us = 0 }
	     END { if (s != "") print "1" s }' | share_complete 8
}

if command -v trace-cmd >/dev/null; then
	both_ways "trace-cmd userstacktrace: v3 registered" arch_stack_walk_user \
		ftrace_run ft "$v3" -r -s
else
	not_ok "trace-cmd" "not in the guest"
fi

# --- bpftrace ---------------------------------------------------------------
# @[ustack] prints each stack as one symbol+offset per line, outermost last,
# or as bare addresses when the process has exited before bpftrace prints
# (0.17 resolves then): tracee resolve names them.
bpf_run() {
	name=$1
	shift
	timeout 120 bpftrace -q -c "$* 4" \
		-e 'profile:hz:99 /pid == cpid/ { @[ustack] = count(); }' \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	"$v3" resolve <"$tmp/$name.out" |
	awk '/^@\[/ { s = ""; next }
	     /^\]: / { print $2 s; next }
	     /^[ \t]+[A-Za-z_0-9]/ { sub(/\+.*/, ""); s = s " " $1 }' |
	share_complete 9
}

if command -v bpftrace >/dev/null; then
	both_ways "bpftrace ustack: v3 registered" perf_callchain_user \
		bpf_run bpf "$v3" -r
else
	not_ok "bpftrace" "not in the guest"
fi

# --- no frame that is not code; stop reasons ---------------------------------
# frames-tracee (unwind/frames-tracee.c) lib: a v3 program whose time goes
# to libnocode.so's nc_spin (nocode.S: no frame pointers, no SFrame, no
# CFI), whose rbp holds in turn a heap pointer, a pointer to a fake frame
# record on its stack ({0, a heap address}) and 5.  Every address each
# tracer gives must be in an executable mapping of the process
# (frames-tracee check, against a copy of its maps); with the caller check
# off (module parameter check_callers=0) the fake record's heap address
# appears, so each of these tests can fail.  Stop reasons: the walks of
# such samples are cut (no_rule, not_code), never "complete" (outermost,
# end); a thread's stack through libc's imported rules ends outermost (at
# clone3's CFI), and does not without them; the main thread's ends "end"
# (_start, which has no SFrame, clears rbp).
ftr=$here/unwind/v3/frames-tracee

# stops_of HOOK: the hook's stop counters, "REASON COUNT ..."
stops_of() {
	awk -v f="$1" '$1 == f && $2 == "stops" { $1 = $2 = ""; print }' "$hooks"
}

# stops_delta "BEFORE" "AFTER": "WALKS COMPLETE CUT NOT_CODE NO_RULE"
stops_delta() {
	echo "$1|$2" | awk -F'|' '{
		n = split($1, a, " "); split($2, b, " ")
		for (i = 1; i < n; i += 2) d[a[i]] = b[i + 1] - a[i + 1]
		for (k in d) w += d[k]
		c = d["outermost"] + d["end"]
		printf "%d %d %d %d %d\n", w, c, w - c, d["not_code"], d["no_rule"]
	}'
}

# expect_code LABEL "TOTAL NONCODE" [MIN]: MIN (20) frames or more, none
# that is not code
expect_code() {
	set -- "$1" $2 "${3:-20}"
	echo "# $1: $3 of $2 frames not code"
	if [ "$2" -lt "$4" ]; then
		not_ok "$1" "only $2 frames (want >= $4)"
	else
		check "$1" "$3 of $2 frames are not code" [ "$3" -eq 0 ]
	fi
}

# expect_noncode LABEL "TOTAL NONCODE": some frames that are not code
expect_noncode() {
	set -- "$1" $2
	echo "# $1: $3 of $2 frames not code"
	check "$1" "$3 of $2 frames are not code, want > 0" [ "$3" -gt 0 ]
}

# frames_perf NAME MODE: perf -g on frames-tracee MODE for 3 s (or
# $frames_secs); prints
# "TOTAL NONCODE" over every frame of every sample ($perf, $callgraph as
# for perf_run).  perf prints the address of a frame in an object it
# knows (an executable mapping) relative to the object: such frames are
# code, the others (absolute) are looked up in the maps.  --no-inline:
# perf 7.2's script otherwise runs addr2line (the guest has none) for a
# caller's frame in frames-tracee and prints nothing more (29 of 2505
# samples' frames seen, none in CI at 37d60da); a perf script that
# fails says so on stderr, and no frame is counted.
frames_perf() {
	${perf:-perf} record -q -e cpu-clock:u -F 499 \
		--call-graph "${callgraph:-fp}" -o "$tmp/$1.data" -- \
		"$ftr" "$2" "${frames_secs:-3}" "$tmp/$1.maps" 2>"$tmp/$1.err" \
		>/dev/null
	if ! ${perf:-perf} script -i "$tmp/$1.data" --no-inline -F ip,dso \
		>"$tmp/$1.script" 2>"$tmp/$1.script.err"; then
		echo "# $1: perf script failed: $(tail -n 2 "$tmp/$1.script.err")" >&2
		: >"$tmp/$1.script"
	fi
	awk '/^[ \t]+[0-9a-f]+ / { print ($NF == "([unknown])" ? $1 : "code") }' \
		"$tmp/$1.script" | "$ftr" check "$tmp/$1.maps"
}

# frames_bpf NAME: bpftrace ustack (perf mode: absolute addresses) on
# frames-tracee lib, each stack's frames counted as often as the stack was
# seen; only once it is frames-tracee (bpftrace's child before its exec
# is bpftrace)
frames_bpf() {
	timeout 120 bpftrace -q -c "$ftr lib 4 $tmp/$1.maps" \
		-e 'profile:hz:99 /pid == cpid && comm == "frames-tracee"/ {
			@[ustack(perf)] = count(); }' \
		>"$tmp/$1.out" 2>"$tmp/$1.err"
	awk '/^@\[/ { n = 0; next }
	     /^\]: / { for (i = 1; i <= n; i++) for (j = 0; j < $2; j++) print f[i]; next }
	     /^[ \t]+[0-9a-fA-Fx]+/ { f[++n] = $1 }' "$tmp/$1.out" |
		"$ftr" check "$tmp/$1.maps"
}

# frames_ftrace NAME: trace-cmd userstacktrace on sched_switch, frames-tracee
# lib (which sleeps in nc_spin); only the stacks of frames-tracee after its
# exec (trace-cmd's child is trace-cmd before, under the same pid and, in
# the report, name).  With -F, sched_switch is recorded when either side is
# the child, and the user stack is the current task's: when another
# process switches to the child, that process's stack is recorded (its
# addresses are not the child's).  Those are left out by pid, and counted
# in $tmp/NAME.other; the last frame of each of the child's stacks (not
# the 0x0 entries that pad every stack to 8) goes to $tmp/NAME.last.
frames_ftrace() {
	trace-cmd record -q -e sched:sched_switch -e sched:sched_process_exec \
		-O userstacktrace -o "$tmp/$1.dat" -F "$ftr" lib 2 "$tmp/$1.maps" \
		>"$tmp/$1.out" 2>&1
	trace-cmd report -i "$tmp/$1.dat" 2>/dev/null |
	awk -v other="$tmp/$1.other" -v lastf="$tmp/$1.last" '
	     # the task of an event line, "COMM-PID [CPU]": its pid
	     function task(l) {
		if (!match(l, /-[0-9]+ +\[[0-9]+\]/))
			return ""
		l = substr(l, RSTART + 1)
		return substr(l, 1, index(l, " ") - 1)
	     }
	     function flush() {
		if (last != "")
			print last >lastf
		last = ""
	     }
	     BEGIN { printf "" >lastf }
	     / sched_process_exec: / && pid == "" && match($0, /[ \t]pid=[0-9]+/) {
		pid = substr($0, RSTART + 5, RLENGTH - 5)
	     }
	     # its first entry is on the event line, each other on a line
	     # of its own
	     / user_stack: / {
		flush()
		us = pid != "" && task($0) == pid
		n += pid != "" && !us
	     }
	     us && /(^[ \t]*| user_stack: .*)=> / {
		sub(/.*=> */, ""); gsub(/[<>]/, ""); print $1
		# trace-cmd pads a stack with "=> 0x0" entries to 8
		if ($1 !~ /^0x0*$/)
			last = $1
		next
	     }
	     { us = 0; flush() }
	     END { flush(); print n + 0 >other }' |
		"$ftr" check "$tmp/$1.maps"
}

# frames_stops LABEL HOOK "BEFORE": the walks since BEFORE were cut, not
# complete, with both cut reasons nc_spin's registers give
frames_stops() {
	set -- "$1" "$2" $(stops_delta "$3" "$(stops_of "$2")")
	echo "# $1: $3 walks, $4 complete, $5 cut ($6 not_code, $7 no_rule)"
	check "$1: cut at the library, never complete" \
		"$3 walks: $4 complete, $6 not_code, $7 no_rule" \
		[ "$3" -ge 20 -a $(($4 * 100)) -le $((5 * $3)) -a "$6" -gt 0 -a "$7" -gt 0 ]
}

# frames_stops_tracee LABEL HOOK "BEFORE" NAME: as frames_stops, for a
# hook whose walks since BEFORE include other tasks' (trace-cmd's, the
# tasks that switch to the child: complete or not as their objects
# allow): both cut reasons among the hook's walks, and of the child's own
# stacks (frames_ftrace NAME's last frames) at least 20, none complete,
# that is none ending in frames-tracee's own text (its _start) rather
# than in libnocode.so (frames-tracee check against its own mappings
# alone: the stacks it finds "not code" there are the cut ones)
frames_stops_tracee() {
	grep '/frames-tracee$' "$tmp/$4.maps" >"$tmp/$4.own.maps"
	# shellcheck disable=SC2046 # two words: stacks, cut ones
	set -- "$1" "$2" "$3" $("$ftr" check "$tmp/$4.own.maps" <"$tmp/$4.last" 2>/dev/null)
	stacks=${4:-0} done=$((${4:-0} - ${5:-0}))
	# shellcheck disable=SC2046 # five words
	set -- "$1" $(stops_delta "$3" "$(stops_of "$2")")
	echo "# $1: $2 walks, $3 complete, $4 cut ($5 not_code, $6 no_rule); the child's $stacks stacks, $done complete"
	check "$1: the child's stacks cut at the library, never complete" \
		"$2 walks: $5 not_code, $6 no_rule; the child's $stacks stacks, $done complete" \
		[ "$stacks" -ge 20 -a $((done * 100)) -le $((5 * stacks)) -a "$5" -gt 0 -a "$6" -gt 0 ]
}

b=$(stops_of perf_callchain_user)
expect_code "perf -g: no frame that is not code" "$(frames_perf fr-perf lib)"
frames_stops "perf -g: stop reasons" perf_callchain_user "$b"
if command -v bpftrace >/dev/null; then
	expect_code "bpftrace ustack: no frame that is not code" \
		"$(frames_bpf fr-bpf)" 5
fi
if command -v trace-cmd >/dev/null; then
	b=$(stops_of arch_stack_walk_user)
	expect_code "trace-cmd userstacktrace: no frame that is not code" \
		"$(frames_ftrace fr-ft)"
	echo "# trace-cmd userstacktrace: $(cat "$tmp/fr-ft.other") user stacks of other tasks left out"
	frames_stops_tracee "trace-cmd userstacktrace: stop reasons" arch_stack_walk_user "$b" fr-ft
fi
if [ -n "$(hook_counter unwind_user attached)" ] && [ -x /sid-perf/perf ]; then
	perf=sid_perf callgraph=fp,defer
	expect_code "$defer_perf fp,defer: no frame that is not code" \
		"$(frames_perf fr-defer lib)"
	perf= callgraph=
fi
echo 0 >$params/check_callers
b=$(stops_of perf_callchain_user)
expect_noncode "perf -g, check_callers=0: frames that are not code" \
	"$(frames_perf fr-perf-nocheck lib)"
echo "# perf -g, check_callers=0: walks complete cut not_code no_rule:" \
	"$(stops_delta "$b" "$(stops_of perf_callchain_user)")"
if command -v bpftrace >/dev/null; then
	expect_noncode "bpftrace ustack, check_callers=0: frames that are not code" \
		"$(frames_bpf fr-bpf-nocheck)"
fi
if command -v trace-cmd >/dev/null; then
	expect_noncode "trace-cmd userstacktrace, check_callers=0: frames that are not code" \
		"$(frames_ftrace fr-ft-nocheck)"
fi
echo 1 >$params/check_callers

# stop_count HOOK REASON: the hook's walks that ended for REASON
stop_count() {
	awk -v f="$1" -v k="$2" '$1 == f && $2 == "stops" {
		for (i = 3; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$hooks"
}

# frames_outer LABEL OP PCT: frames-tracee outer (a thread in ft_leaf)
# under perf -g: no frame that is not code, and OP (ge, le) PCT% of the
# walks end outermost
frames_outer() {
	b=$(stops_of perf_callchain_user)
	o=$(stop_count perf_callchain_user outermost)
	expect_code "$1: no frame that is not code" "$(frames_perf "fr-outer-$2" outer)"
	set -- "$1" "$2" "$3" $(stops_delta "$b" "$(stops_of perf_callchain_user)")
	echo "# $1: $4 walks, $5 complete, $6 cut ($7 not_code, $8 no_rule)"
	expect_share "$1: walks ending outermost" \
		"$4 $(($(stop_count perf_callchain_user outermost) - o))" "$2" "$3"
}

# --- through libc: rules synthesised from .eh_frame ---------------------------
# libc-tracee's hot paths run inside Debian's libc (no SFrame, no frame
# pointers).  perf script with the dso, the main thread's samples: a
# sample "through libc" starts in libc (or in lt_cmp, which libc's qsort
# calls); it is complete when the frames after those are lt_work lt_f2
# lt_f1 main.  Registered with codectl_register_all(), libc's rules
# synthesised: >= 99%; without them (CODECTL_ALL_NO_SYNTH) <= 50%: the
# frame-pointer fallback through libc's code gets some right by chance,
# how many moving with where the samples land (seen: qsort 7 to 8%,
# memcpy 0% on 6.12 and 21% on 6.1, when the bound was 20%).
libc_share() {
	perf script -i "$1" --no-inline -F comm,tid,ip,sym,dso 2>/dev/null |
	awk -v pid="$2" '
	function done() {
		if (tid == pid && nf > 0 && (f[1] == "libc" || f[1] == "lt_cmp")) {
			for (i = 1; i <= nf && (f[i] == "libc" || f[i] == "lt_cmp"); i++)
				;
			total++
			# f[] past nf holds an earlier, longer sample: not this one
			if (i + 3 <= nf && f[i] == "lt_work" && f[i + 1] == "lt_f2" &&
			    f[i + 2] == "lt_f1" && f[i + 3] == "main")
				complete++
			else if (shown++ < 3) {
				# the first incomplete ones, to tell why
				s = ""
				for (i = 1; i <= nf; i++)
					s = s " " f[i]
				printf "# incomplete sample %d:%s\n", total, s >"/dev/stderr"
			}
		}
		nf = 0
	}
	/^[^ \t]/ { done(); tid = $2; next }
	/^[ \t]+[0-9a-f]+ .*\[kernel/ { next }
	/^[ \t]+[0-9a-f]+ / { f[++nf] = $NF ~ /libc\.so/ ? "libc" : $2 }
	END { done(); printf "%d %d\n", total, complete }'
}

# libc_run NAME MODE REG: start libc-tracee ($LIBC_PROG if set; with
# $LIBC_ENV, VAR=VALUE, in its environment when set), and once it has registered
# (its "ready" line) record it for 3 s (context switches for MODE read,
# else cpu-clock); print "TOTAL COMPLETE"
libc_run() {
	name=$1 mode=$2 reg=$3
	${LIBC_ENV:+env "$LIBC_ENV"} "${LIBC_PROG:-$libc}" "$reg" "$mode" 60 \
		2>"$tmp/$name.err" &
	pid=$!
	wait_ready "$tmp/$name.err"
	if [ "$mode" = read ]; then
		set -- -e sched:sched_switch
	else
		set -- -e cpu-clock:u -F 499
	fi
	perf record -q "$@" -g -p $pid -o "$tmp/$name.data" -- sleep 3 \
		>/dev/null 2>&1
	kill $pid
	wait $pid
	libc_share "$tmp/$name.data" $pid
}

# unknown_frames DATA: "TOTAL NONCODE" over libc-tracee's user frames, a
# frame being not code when perf knows no object for it (libc-tracee has
# no anonymous code)
unknown_frames() {
	perf script -i "$1" --no-inline -F comm,tid,ip,sym,dso 2>/dev/null |
	awk '/^[^ \t]/ { ours = $1 == "libc-tracee"; next }
	     /^[ \t]+[0-9a-f]+ / && ours && !/\[kernel/ {
		n++; if ($NF == "([unknown])") u++ }
	     END { printf "%d %d\n", n, u }'
}

for mode in qsort memcpy read; do
	r=$(libc_run "libc-$mode-synth" $mode -a)
	expect_share "through libc ($mode): libc's rules synthesised" "$r" ge 99
	r=$(libc_run "libc-$mode-nosynth" $mode -s)
	expect_share "through libc ($mode): without libc's rules" "$r" le 50
	expect_code "through libc ($mode) without its rules: no frame that is not code" \
		"$(unknown_frames "$tmp/libc-$mode-nosynth.data")"
done

# libc_modes TAG LABEL: libc-tracee -n in each mode, >= 99% complete.
libc_modes() {
	for mode in qsort memcpy read; do
		r=$(libc_run "libc-$mode-$1" $mode -n)
		expect_share "through libc ($mode): $2" "$r" ge 99
	done
}

# --- through libc, system-wide: codectl import, no registration ---------------
# libc's rules imported once (CODECTL_IOC_IMPORT); libc-tracee -n registers
# nothing, discovery finds its own SFrame and libc's imported section.
libc_so=/lib/x86_64-linux-gnu/libc.so.6
if out=$(codectl import "$libc_so" 2>&1); then
	ok "codectl import $libc_so"
	echo "# $out"
	libc_modes import "libc's rules imported, nothing registered"
	frames_outer "perf -g: a thread through imported libc" ge 95
	b=$(stops_of perf_callchain_user)
	expect_code "perf -g: the main thread through imported libc: no frame that is not code" \
		"$(frames_perf fr-main main)"
	set -- $(stops_delta "$b" "$(stops_of perf_callchain_user)")
	expect_share "perf -g: the main thread through imported libc: walks complete (end at _start)" \
		"$1 $2" ge 95
else
	not_ok "codectl import $libc_so" "$out"
fi
codectl import --clear
r=$(libc_run "libc-qsort-noimport" qsort -n)
# The same chance share as the control above: half the samples at most.
expect_share "through libc (qsort): nothing registered, nothing imported" "$r" le 50
expect_code "through libc (qsort), nothing imported: no frame that is not code" \
	"$(unknown_frames "$tmp/libc-qsort-noimport.data")"
frames_outer "perf -g: a thread through libc, nothing imported" le 5

# --- imports keyed on the content: perf's build-id cache, ln, chmod ------------
# perf record adds every object it sampled to its build-id cache
# (~/.debug) with link(), which moves the object's ctime; so do ln, chmod
# and touch -a.  The content is the same, and libc's import must keep
# applying: each perf session below uses a fresh cache (on the root file
# system, where libc is, so that link() works as on a real machine) and
# must be >= 99% complete through libc.  A copy of libc, imported, then
# rewritten in place with its size and mtime put back (only the ctime
# says so) must not be unwound with the old rules.
impf=/sys/kernel/debug/codectl/imports
import_counter() { sed -n "s/^$1 //p" "$impf"; }
# import_run NAME PROG MODE: libc_run with PROG and a fresh build-id cache
import_run() {
	rm -rf "/perf-home-$1"
	mkdir "/perf-home-$1"
	HOME=/perf-home-$1 LIBC_PROG=$2 libc_run "libc-$1" "$3" -n
}
# The guest's /etc/ld.so.cache, from its libraries, for --system.
ldconfig 2>"$tmp/ldconfig.err" ||
	echo "# ldconfig: $(cat "$tmp/ldconfig.err")"
# bpftrace's libLLVM gets a section larger than sframe_flat_max (5.3 MiB
# for libLLVM-14): imported all the same (decoded in a kernel copy), and
# the boot service must not fail for it.
codectl import --system >"$tmp/import-system.txt" 2>&1
isys=$?
echo "# $(tail -n 1 "$tmp/import-system.txt")"
check "codectl import --system: exit 0" \
	"exit $isys: $(grep -v '^imported ' "$tmp/import-system.txt" | tr '\n' ' ')" \
	[ "$isys" = 0 ]
# import_size PATTERN: the size of the import whose path matches, or 0
# (debugfs imports: ... SIZE REGTAB-BYTES PATH)
import_size() {
	awk -v p="$1" '$NF ~ p { s = $(NF - 2) } END { print s + 0 }' "$impf"
}
lsz=$(import_size '/libLLVM[^/]*$')
echo "# $(grep "libLLVM" "$tmp/import-system.txt"); in the module: $lsz bytes, sframe_flat_max $(cat $params/sframe_flat_max)"
check "codectl import --system imports libLLVM, larger than sframe_flat_max" \
	"$(grep "libLLVM" "$tmp/import-system.txt" || echo "no libLLVM in ld.so.cache"); import $lsz bytes" \
	[ "$lsz" -gt "$(cat $params/sframe_flat_max)" ]
if grep -q "^imported $libc_so:" "$tmp/import-system.txt"; then
	ok "codectl import --system imports libc"
	c0=$(stat -c %Z "$libc_so") rechecked=$(import_counter rechecked)
	sleep 1
	r=$(import_run first "$libc" qsort)
	expect_share "imports: first perf session through libc (qsort)" "$r" ge 99
	check "imports: perf's build-id cache moved libc's ctime" \
		"ctime $c0 -> $(stat -c %Z "$libc_so")" \
		[ "$(stat -c %Z "$libc_so")" != "$c0" ]
	r=$(import_run second "$here/unwind/v2/libc-tracee" memcpy)
	expect_share "imports: second perf session, another program (memcpy)" "$r" ge 99
	check "imports: libc's content checked again, found the same" \
		"rechecked $rechecked -> $(import_counter rechecked)" \
		[ "$(import_counter rechecked)" -gt "$rechecked" ]
	ln "$libc_so" /libc-hardlink
	r=$(import_run ln "$libc" qsort)
	expect_share "imports: after ln of libc" "$r" ge 99
	rm -f /libc-hardlink
	chmod "$(stat -c %a "$libc_so")" "$libc_so"
	r=$(import_run chmod "$here/unwind/v2/libc-tracee" qsort)
	expect_share "imports: after chmod of libc" "$r" ge 99
	touch -a "$libc_so"
	r=$(import_run touch "$libc" qsort)
	expect_share "imports: after touch -a of libc" "$r" ge 99
	check "imports: libc's import still there, never found changed" \
		"$(grep "libc.so.6$" "$impf"); changed $(import_counter changed)" \
		sh -c 'grep -q "libc.so.6$" "$1" && [ "$2" = 0 ]' sh "$impf" \
		"$(import_counter changed)"
else
	not_ok "codectl import --system imports libc" "$(cat "$tmp/import-system.txt")"
fi

# An import larger than sframe_flat_max, unwound: libc's, with
# sframe_flat_max lowered below its size (libLLVM's size, with a program
# of ours spending its time in libc).  Without a flat table it is decoded
# in each registration's kernel copy; before that it was refused (EFBIG).
flat0=$(cat $params/sframe_flat_max)
csz=$(import_size '/libc[.]so[.]6$')
echo $((csz > 1 ? csz - 1 : 1)) >$params/sframe_flat_max
codectl import "$libc_so" >"$tmp/import-large.txt" 2>&1
ilarge=$?
lsz=$(import_size '/libc[.]so[.]6$')
check "imports: libc's section larger than sframe_flat_max imported" \
	"exit $ilarge: $(cat "$tmp/import-large.txt"); import $lsz bytes, sframe_flat_max $(cat $params/sframe_flat_max)" \
	sh -c '[ "$1" = 0 ] && [ "$2" -gt "$3" ] && grep -q "^imported " "$4"' sh \
	"$ilarge" "$lsz" "$(cat $params/sframe_flat_max)" "$tmp/import-large.txt"
r=$(import_run large "$libc" qsort)
expect_share "imports: a section larger than sframe_flat_max, decoded in the kernel (qsort)" "$r" ge 99
echo "$flat0" >$params/sframe_flat_max
codectl import "$libc_so" >/dev/null 2>&1

# A copy of libc in its own directory, imported, found through
# LD_LIBRARY_PATH: complete; then its last byte (in the section headers,
# which nothing loads) changed in place and its mtime put back.
rw=/tmp/rewrite
mkdir -p "$rw"
cp "$libc_so" "$rw/libc.so.6"
if codectl import "$rw/libc.so.6" >"$tmp/import-rw.txt" 2>&1; then
	r=$(LIBC_ENV=LD_LIBRARY_PATH=$rw libc_run libc-rw-before qsort -n)
	expect_share "imports: a copy of libc, imported" "$r" ge 99
	check "imports: the tracee ran with the copy" "$(perf script \
		-i "$tmp/libc-rw-before.data" --no-inline -F ip,dso 2>&1 | tail -n 3)" \
		sh -c 'perf script -i "$1" --no-inline -F ip,dso 2>/dev/null | grep -q "$2"' \
		sh "$tmp/libc-rw-before.data" "$rw/libc.so.6"
	touch -r "$rw/libc.so.6" "$rw/ref"
	before=$(stat -c '%s %Y' "$rw/libc.so.6") changed=$(import_counter changed)
	sleep 1
	size=$(stat -c %s "$rw/libc.so.6")
	last=$(dd if="$rw/libc.so.6" bs=1 skip=$((size - 1)) count=1 2>/dev/null |
		od -An -tu1 | tr -d ' ')
	printf "\\$(printf %o $(((last + 1) % 256)))" |
		dd of="$rw/libc.so.6" bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
	touch -r "$rw/ref" "$rw/libc.so.6"
	check "imports: rewritten with the same size and mtime" \
		"$before -> $(stat -c '%s %Y' "$rw/libc.so.6")" \
		[ "$(stat -c '%s %Y' "$rw/libc.so.6")" = "$before" ]
	r=$(LIBC_ENV=LD_LIBRARY_PATH=$rw libc_run libc-rw-after qsort -n)
	expect_share "imports: the copy rewritten: not unwound with the old rules" "$r" le 50
	check "imports: the rewrite was found, the import dropped" \
		"changed $changed -> $(import_counter changed); $(grep rewrite "$impf")" \
		sh -c '[ "$1" -gt "$2" ] && ! grep -q rewrite "$3"' sh \
		"$(import_counter changed)" "$changed" "$impf"
else
	not_ok "codectl import $rw/libc.so.6" "$(cat "$tmp/import-rw.txt")"
fi
codectl import --clear

# --- through libc, per process: LD_AUDIT=libcodectl-audit.so -----------------
# The rtld audit module registers every object as it is loaded, libc with
# its synthesised rules; libc-tracee -n itself registers nothing (without
# the audit module that is the run just above).
# libc_under VAR SO TAG: libc_modes with VAR=SO in libc-tracee's environment.
libc_under() {
	if [ -e "$2" ]; then
		LIBC_ENV="$1=$2"
		libc_modes "$3" "$1=${2##*/}"
		LIBC_ENV=
	else
		not_ok "${2##*/} in the guest" "$2 is missing"
	fi
}
libc_under LD_AUDIT /lib/codectl/libcodectl-audit.so audit
# The same with the preload variant.
libc_under LD_PRELOAD /lib/codectl/libcodectl-preload.so preload

# --- JIT code: the example JIT's tables (libcodectl's codectl_jit_*) ---------
# jit-tracee compiles expressions to x86-64 code without frame pointers at
# run time and registers their rules with codectl_jit_create/add (12
# chained tables of 4 entries); -n builds the tables without registering
# them.  A sample starting in jt_leaf (C, called by the generated code) is
# complete when its next frame is in the generated code (perf names it
# from jit-tracee's /tmp/perf-PID.map, else by its address) and the rest
# start jt_f2 jt_f1 main.  Registered: >= 99%; not registered, or with
# the hooks off: <= 5% (the frame-pointer walk cannot leave the JIT code).
jit=$here/unwind/v3/jit-tracee
jit_share() {
	perf script -i "$1" --no-inline -F comm,ip,sym 2>/dev/null |
	awk -v lo="$(printf '%16s' "$2")" -v hi="$(printf '%16s' "$3")" '
	function in_jit(i) {
		return sym[i] ~ /^jit_expr/ ||
		       (sprintf("%16s", ip[i]) >= lo && sprintf("%16s", ip[i]) < hi)
	}
	function done() {
		if (nf > 0 && sym[1] == "jt_leaf") {
			total++
			if (in_jit(2) && sym[3] == "jt_f2" && sym[4] == "jt_f1" &&
			    sym[5] == "main")
				complete++
			named += sym[2] ~ /^jit_expr/
		}
		nf = 0
	}
	/^[^ \t]/ { done(); next }
	/^[ \t]+[0-9a-f]+ / { nf++; ip[nf] = $1; sym[nf] = $2 }
	END { done(); printf "%d %d %d\n", total, complete, named }'
}

# jit_share DATA LO HI: "TOTAL COMPLETE NAMED" (NAMED: second frames
# that perf named jit_exprN)
# jit_run NAME ARGS...: perf -g on jit-tracee ARGS spin 3; "TOTAL COMPLETE"
jit_run() {
	name=$1
	shift
	perf record -q -e cpu-clock:u -F 499 -g -o "$tmp/$name.data" -- \
		"$jit" "$@" spin 3 2>"$tmp/$name.err" >/dev/null
	echo "# $name: $(grep ready "$tmp/$name.err")" >&2
	set -- $(sed -n 's/.* jit \([0-9a-f]*\) \([0-9a-f]*\) .*/\1 \2/p' "$tmp/$name.err")
	set -- $(jit_share "$tmp/$name.data" "${1:-0}" "${2:-0}")
	echo "# $name: second frame named from the perf map in $3 of $1" >&2
	echo "$1 $2"
}

jit_frames() {
	awk '$1 == "perf_callchain_user" && $2 == "frames" {
		for (i = 3; i < NF; i++) if ($i == "jit") print $(i + 1) }' "$hooks"
}

before=$(jit_frames)
r=$(jit_run jit-reg)
expect_share "JIT (perf -g): tables registered, through the generated code complete" "$r" ge 99
after=$(jit_frames)
check "JIT (perf -g): the hook's frames found by JIT tables" \
	"jit frames $before -> $after" [ "${after:-0}" -gt "${before:-0}" ]
r=$(jit_run jit-noreg -n)
expect_share "JIT (perf -g): tables not registered (-n): broken" "$r" le 5
echo 0 >$params/hooks
r=$(jit_run jit-nohooks)
expect_share "JIT (perf -g): registered, hooks off: the kernel's broken stacks" "$r" le 5
echo 1 >$params/hooks

# The module's synchronous unwinder from inside jt_leaf, faulting and
# NOFAULT (the hooks' walk): jt_f2's frame found by the JIT table, to main.
"$jit" check >"$tmp/jit-check.out" 2>&1
rc=$?
nok=$(grep -c '^jit-check: ok (' "$tmp/jit-check.out")
grep '^# unwind' "$tmp/jit-check.out" | head -1
check "JIT: codectl_unwind_self in the callback: JIT frames, main reached ($nok of 12 walks)" \
	"exit $rc: $(grep -v '^#' "$tmp/jit-check.out" | tail -2 | tr '\n' ' ')" \
	test $rc -eq 0 -a "$nok" -eq 12
"$jit" -n check >"$tmp/jit-check-n.out" 2>&1
rc=$?
nok=$(grep -c '^jit-check: ok (' "$tmp/jit-check-n.out")
grep '^# unwind' "$tmp/jit-check-n.out" | head -1 | sed 's/^# /# -n: /'
check "JIT: tables not registered (-n): no walk gets through ($nok of 12)" \
	"exit $rc: $(grep -v '^#' "$tmp/jit-check-n.out" | tail -2 | tr '\n' ' ')" \
	test $rc -ne 0 -a "$nok" -eq 0
rm -f /tmp/perf-*.map

# --- what watching costs: no registry for a process without SFrame ----------
# A process with no SFrame anywhere (the shell, dash, and Debian's libc,
# nothing imported) sampled by perf -g: discovery examines its objects
# once and makes it no registry (whose mmu notifier would cost its exit an
# SRCU grace period, and each fork mm_take_all_locks()); the files are
# remembered instead, so a second process of them is looked up, not read.
# Before, each object was registered without SFrame: a registry (mms + 1).
stat_of() { sed -n "s/^$1 //p" /sys/kernel/debug/codectl/stats; }
disc_of() { sed -n "s/^$1 //p" /sys/kernel/debug/codectl/discover; }
spin_perf() {
	sh -c 'while :; do :; done' &
	spin=$!
	perf record -q -e cpu-clock -F 499 -g -p $spin -o "$tmp/spin.data" \
		-- sleep 2 >/dev/null 2>&1
}
codectl import --clear >/dev/null 2>&1
# Registries of processes gone are freed in batches (every 250 ms, then
# an SRCU grace period): wait until the count holds still.
i=0 m0=$(stat_of mms)
while [ $i -lt 30 ]; do
	sleep 1
	m=$(stat_of mms)
	[ "$m" = "$m0" ] && break
	m0=$m i=$((i + 1))
done
u0=$(disc_of unregistered) w0=$(disc_of without_sframe)
spin_perf
spin1=$spin
m1=$(stat_of mms) u1=$(disc_of unregistered) w1=$(disc_of without_sframe)
h1=$(disc_of file_negative_hits)
spin_perf
h2=$(disc_of file_negative_hits) u2=$(disc_of unregistered)
m2=$(stat_of mms)
kill $spin1 $spin
wait $spin1 $spin 2>/dev/null
echo "# registries $m0 -> $m1 -> $m2; unregistered $u0 -> $u1 -> $u2; without_sframe $w0 -> $w1; file_negatives $(disc_of file_negatives); file_negative_hits $h1 -> $h2"
no_registry() {
	[ "$m1" -le "$m0" ] && [ "${u1:-0}" -gt "${u0:-0}" ] && [ "$w1" = "$w0" ]
}
looked_up() {
	[ "${h2:-0}" -gt "${h1:-0}" ] && [ "$u2" = "$u1" ] && [ "$m2" -le "$m0" ]
}
check "perf -g of a process without SFrame: discovery makes it no registry" \
	"registries $m0 -> $m1, unregistered ${u0:-?} -> ${u1:-?}" no_registry
check "a second process of the same files: looked up, not examined again" \
	"file_negative_hits ${h1:-?} -> ${h2:-?}, unregistered $u1 -> $u2, registries $m2" \
	looked_up

# --- no harm from a wrong table (issue 42) ----------------------------------
# harm-tracee (unwind/harm-tracee.c, harm-spin.S) keeps frame pointers, but
# the SFrame row of the loop where it spends its time is wrong, one function
# per way a table's step can fail there: its return address a stack
# address, not code (hm_spin, not_code), its CFA misaligned (hm_spin_align,
# align), not above the stack pointer (hm_spin_sp, sp), or past the stack's
# top (hm_spin_fault, fault).  Each ends the walk by the table after 1 frame
# where the kernel's frame-pointer walk goes on; codectl_walk_step() makes
# the step again by the frame pointer.  Without that fallback: none of its
# stacks complete, and every walk shorter than the kernel's.  Its SFrame is
# discovered.  One perf record -g per function.
harm=$here/unwind/v3/harm-tracee

# harm_profile KIND FN CALLERS...: harm-tracee KIND under perf -g for 3 s;
# sets hc0 hs0 fb0 and hc1 hs1 fb1 (the no-harm counts and the hook's
# fallbacks before and after) and r, "TOTAL COMPLETE": the stacks in FN,
# and those whose callers are CALLERS..., in order.
harm_profile() {
	kind=$1 fn=$2
	shift 2
	# shellcheck disable=SC2046 # two words
	set -- $(harm_counts) "$@"
	hc0=$1 hs0=$2
	shift 2
	fb0=$(hook_counter perf_callchain_user fallbacks)
	perf record -q -e cpu-clock:u -F 499 -g -o "$tmp/harm-$kind.data" -- \
		"$harm" "$kind" 3 >/dev/null 2>"$tmp/harm-$kind.err"
	fb1=$(hook_counter perf_callchain_user fallbacks)
	r=$(perf_stacks "$tmp/harm-$kind.data" | awk -v fn="$fn" -v callers="$*" '
		BEGIN { n = split(callers, want, " ") }
		$2 == fn { t += $1
			for (i = 1; i <= n && $(i + 2) == want[i]; i++)
				;
			if (i > n) c += $1 }
		END { printf "%d %d\n", t, c }')
	# shellcheck disable=SC2046 # two words
	set -- $(harm_counts)
	hc1=$1 hs1=$2
}

# harm_no_shorter WHAT: no walk of harm_profile's run shorter than the
# kernel's frame-pointer walk.
harm_no_shorter() {
	check "$1: no walk shorter than the kernel's frame-pointer walk" \
		"$((hs1 - hs0)) of $((hc1 - hc0)) walks shorter: $(grep harm "$hooks" | tr '\n' ';')" \
		[ $((hc1 - hc0)) -gt 0 -a "$hs1" -eq "$hs0" ]
}

for kind in not_code align sp fault; do
	case $kind in
	not_code) fn=hm_spin ;;
	*) fn=hm_spin_$kind ;;
	esac
	harm_profile $kind $fn hm_outer main
	echo "# harm-tracee $kind: ${r% *} stacks in $fn, ${r#* } complete;" \
		"fallbacks $fb0 -> $fb1; harm checked $hc0 -> $hc1," \
		"shorter $hs0 -> $hs1; $(grep harm "$hooks" | tr '\n' ';')"
	echo "FIGURE harm wrong table $kind: walks_compared $((hc1 - hc0))" \
		"shorter $((hs1 - hs0)) stacks ${r% *} complete ${r#* }" \
		"fallbacks $((fb1 - fb0))"
	# shellcheck disable=SC2086 # two words
	set -- $r
	check "a wrong SFrame row ($kind) in a frame-pointer program: the walk falls back to the frame pointer" \
		"$2 of $1 stacks in $fn complete (want >= 95%), fallbacks $fb0 -> $fb1 (want >= half of them): $(perf_stacks "$tmp/harm-$kind.data" | cut -d' ' -f2- | sort | uniq -c | sort -rn | head -3 | tr '\n' ';')" \
		[ "$1" -ge 20 -a $(($2 * 100)) -ge $((95 * $1)) \
		  -a $(((fb1 - fb0) * 2)) -ge "$1" ]
	harm_no_shorter "a wrong SFrame row ($kind)"
done

# A recursion in a gap of the table (hm_norow: no CFI, no SFrame row, a
# frame pointer), 4 frames at one return address: the walk steps each by
# the frame pointer.  A walk that remembered the lookup's "no rule" for a
# repeated return address ended there with a stop reason no walk has (-1)
# and counted it out of bounds (an oops in the sampling interrupt).
harm_profile norow hm_norow hm_norow hm_norow hm_norow hm_norow \
	hm_spin_norow hm_outer main
echo "FIGURE harm norow: walks_compared $((hc1 - hc0)) shorter $((hs1 - hs0))" \
	"stacks ${r% *} complete ${r#* }"
# shellcheck disable=SC2086 # two words
set -- $r
check "a recursion without SFrame rows in an SFrame program: complete by the frame pointer, frame after frame" \
	"$2 of $1 stacks in hm_norow complete (want >= 95%): $(perf_stacks "$tmp/harm-norow.data" | cut -d' ' -f2- | sort | uniq -c | sort -rn | head -3 | tr '\n' ';')" \
	[ "$1" -ge 20 -a $(($2 * 100)) -ge $((95 * $1)) ]
harm_no_shorter "a recursion without SFrame rows"

# --- attach, detach and rmmod under system-wide sampling --------------------
# perf samples until a second after the rmmod (stop file; 30 s at most).
"$v3" -r 60 2>/dev/null &
tracee=$!
rm -f "$tmp/all.stop"
perf record -q -a -g -e cpu-clock -F 999 -o "$tmp/all.data" -- \
	sh -c 'i=0; while [ ! -e "$1" ] && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done' \
	stop "$tmp/all.stop" >/dev/null 2>"$tmp/all.err" &
perf_pid=$!
sleep 2
i=0
while [ $i -lt 20 ]; do
	echo 0 >$params/hooks
	echo 1 >$params/hooks
	i=$((i + 1))
done
echo "# toggled 20 times: $(grep '^perf_callchain_user calls' "$hooks")"
sleep 1
harm_check "every workload above"
check "rmmod while perf samples every CPU" "rmmod failed" rmmod_codectl
sleep 1
touch "$tmp/all.stop"
wait $perf_pid
prc=$?
check "perf ends cleanly after rmmod" "perf exit $prc: $(tail -3 "$tmp/all.err")" \
	[ $prc -eq 0 ]
kill $tracee 2>/dev/null
wait $tracee

# A process already running when the module is loaded: discovered.
"$v3" 30 2>"$tmp/running.out" &
tracee=$!
wait_ready "$tmp/running.out"
check "insmod again, a tracee running" "insmod failed" insmod "$ko" check_harm=1
perf record -q -e cpu-clock:u -F 499 -g -p $tracee -o "$tmp/running.data" \
	-- sleep 4 >/dev/null 2>"$tmp/running.err"
r=$(perf_stacks "$tmp/running.data" | share_complete 9)
[ "${r%% *}" -ge 20 ] || echo "# perf: $(tail -n 3 "$tmp/running.err" | tr '\n' ' ')" \
	"tracee: $(tail -n 2 "$tmp/running.out" | tr '\n' ' ')" \
	"stacks: $(perf_stacks "$tmp/running.data" | head -n 3 | tr '\n' ';')"
expect_share "perf -g -p: a process running before insmod, discovered" "$r" ge 95
kill $tracee 2>/dev/null
wait $tracee
harm_check "a process running before insmod"
rmmod codectl

rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
