# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# shellcheck disable=SC2154 # $dir, $tmp, $chain, $hooks: arm64-perf.sh
#
# trace-cmd on arm64, sourced by tests/vm/arm64-perf.sh (busybox sh, in
# the arm64 guest) while codectl.ko is loaded: its $dir (the tracees),
# $tmp, $hooks, $chain, hook_counter, fig and the TAP helpers.  Debian
# bookworm's arm64 trace-cmd, unchanged (scripts/stage-arm64-root.sh),
# records sched_switch with ftrace's userstacktrace option on tracee-v3
# -s (tr_leaf sleeps in its own svc, so that the pc at a switch is in
# tr_leaf; nothing registered: discovery).  The kernel saves each user
# stack with stack_trace_save_user(), that is arch_stack_walk_user(),
# which codectl's kprobe redirects to its own walk.
#   - hooks on: >= 99% of the tracee's stacks in tr_leaf complete, and
#     the hook on arch_stack_walk_user counted redirected calls;
#   - the same with the hooks off (module parameter hooks=0: the
#     kernel's frame-record walk): <= 5% complete, so that the share
#     above is codectl's.
# ftrace keeps 8 entries of a user stack (FTRACE_STACK_ENTRIES): a stack
# is complete when they are tr_leaf, tr_f7 .. tr_f1 in order (main, the
# ninth frame, has no slot).  Only the stacks of the tracee's own pid
# count: with -F, sched_switch is also recorded when another task
# switches to the tracee, and the user stack is then that task's (with
# ASLR off, another PIE's addresses would resolve to the tracee's
# symbols).  6.1's arm64 has no arch_stack_walk_user (no
# USER_STACKTRACE_SUPPORT): skipped there.

# ftrace_run NAME: 2 s of trace-cmd record; prints "TOTAL COMPLETE
# OTHER": the tracee's stacks that start in tr_leaf, those complete, and
# the user stacks of other tasks left out.
ftrace_run() {
	trace-cmd record -q -e sched:sched_switch -O userstacktrace \
		-o "$tmp/$1.dat" -F "$dir/tracee-v3" -s 2 >"$tmp/$1.out" 2>&1
	# "tracee: ready PID registered N", from the tracee itself
	pid=$(sed -n 's/^tracee: ready \([0-9]*\) .*/\1/p' "$tmp/$1.out")
	trace-cmd report -i "$tmp/$1.dat" 2>"$tmp/$1.report.err" |
		"$dir/tracee-v3" resolve >"$tmp/$1.report"
	awk -v pid="${pid:-none}" -v other="$tmp/$1.other" '
	# the task of an event line, "COMM-PID [CPU]": its pid
	function task(l) {
		if (!match(l, /-[0-9]+ +\[[0-9]+\]/))
			return ""
		l = substr(l, RSTART + 1)
		return substr(l, 1, index(l, " ") - 1)
	}
	function done() {
		if (s != "")
			print "1" s
		s = ""
	}
	# its first entry is on the event line, each other on a line of
	# its own
	/ user_stack: / {
		done()
		us = task($0) == pid
		others += !us
	}
	us && /(^[ \t]*| user_stack: .*)=> / {
		sub(/.*=> */, "")
		gsub(/[<>]/, "")
		s = s " " $1
		next
	}
	{ done(); us = 0 }
	END {
		done()
		print others + 0 >other
	}' "$tmp/$1.report" | chain_share "$1" 8 | tr '\n' ' '
	cat "$tmp/$1.other"
}

# ftrace_expect NAME "TOTAL COMPLETE OTHER" OP PERCENT: OP ge or le
ftrace_expect() {
	name=$1 op=$3 pct=$4
	# shellcheck disable=SC2086 # three words
	set -- $2
	echo "# $name: $2 of $1 stacks in tr_leaf complete; $3 stacks of other tasks left out"
	expect_share "$name" stacks "$1" "$2" "$op" "$pct"
}

if [ -z "$(hook_counter arch_stack_walk_user attached)" ]; then
	echo "# trace-cmd: no hook on arch_stack_walk_user on this kernel: skipped"
elif ! command -v trace-cmd >/dev/null; then
	not_ok "trace-cmd" "not in the guest"
else
	[ -d /sys/kernel/tracing/events ] ||
		mount -t tracefs nodev /sys/kernel/tracing
	echo "# $(trace-cmd --version 2>&1 | grep -m 1 version)"
	check "hook on arch_stack_walk_user attached" \
		"$(grep arch_stack_walk_user "$hooks")" \
		[ "$(hook_counter arch_stack_walk_user attached)" = 1 ]
	before=$(hook_counter arch_stack_walk_user redirected)
	r=$(ftrace_run ft-on)
	after=$(hook_counter arch_stack_walk_user redirected)
	ftrace_expect "trace-cmd userstacktrace, tracee-v3, hooks on" "$r" ge 99
	check "trace-cmd userstacktrace: arch_stack_walk_user redirected" \
		"redirected $before -> $after" [ "${after:-0}" -gt "${before:-0}" ]
	fig "arm64 trace-cmd tracee-v3 hooks on: $(echo "$r" | awk '{ printf "%d/%d complete", $2, $1 }')"
	echo 0 >$params/hooks
	r=$(ftrace_run ft-off)
	echo 1 >$params/hooks
	ftrace_expect "trace-cmd userstacktrace, tracee-v3, hooks off" "$r" le 5
	fig "arm64 trace-cmd tracee-v3 hooks off: $(echo "$r" | awk '{ printf "%d/%d complete", $2, $1 }')"
	echo "# $(grep arch_stack_walk_user "$hooks" | tr '\n' ';')"
fi
