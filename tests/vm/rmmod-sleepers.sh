#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rmmod with discoveries queued on tasks asleep in the kernel (issue 23,
# finding 6), run by guest-suite.sh as root with codectl loaded:
#
#   rmmod-sleepers.sh ABI_TEST
#
# `perf record -e sched:sched_switch -a -g` (here ABI_TEST --sched-sample,
# the same perf events without perf) has the module's perf hook unwind
# every task that goes to sleep, and queue a discovery task_work on it;
# a task that sleeps on (sleep 100000) does not run it.  rmmod must not
# wait for it: the module leaves queued works to their tasks (twork.c)
# and rmmod returns within seconds (the bound here, 30 s, is for TCG).
# Then the sleepers are killed: their exits free the works left to them,
# with the module gone, and the kernel log must stay clean.
#
# Output is TAP-like; the last line "N passed, N failed".  The module is
# left unloaded (the caller loads it again).

abi_test=$1
discf=/sys/kernel/debug/codectl/discover
# ok, not_ok; $n, $pass, $fail
. "$(dirname "$0")/tap.sh"

problems() {
	dmesg | grep -E 'BUG:|WARNING:|Oops|Call Trace:|general protection|UBSAN:|KASAN:|KFENCE:|ODEBUG:|refcount_t:|list_(add|del) corruption' | head -n 20
}

# running PID: is PID alive (and not a zombie)?
running() {
	[ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

before=$(problems | wc -l)
tmp=$(mktemp -d)
"$abi_test" --sched-sample 3000 >"$tmp/sample.out" 2>&1 &
sampler=$!
# The sleepers go to sleep while it samples, however slow the host.
i=0
while ! grep -q '^# sampling' "$tmp/sample.out" && running $sampler &&
      [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 100000 &
s1=$!
sleep 100000 &
s2=$!
wait $sampler
rc=$?
pending=$(sed -n 's/^pending \([0-9]*\)$/\1/p' "$discf" 2>/dev/null)
echo "# $(tr '\n' ' ' <"$tmp/sample.out"); discoveries queued: ${pending:-?}"
if [ "$rc" = 0 ] && [ "${pending:-0}" -gt 0 ]; then
	ok "sched_switch sampling leaves discoveries queued on sleeping tasks"
else
	not_ok "sched_switch sampling leaves discoveries queued on sleeping tasks" \
		"sampler exit status $rc, ${pending:-no} discoveries queued"
fi

t0=$(date +%s)
# The test module uses codectl: out of the way first.
if grep -q '^codectl_test ' /proc/modules; then
	rmmod codectl_test
fi
rmmod codectl >"$tmp/rmmod.out" 2>&1 &
r=$!
while running $r && [ $(($(date +%s) - t0)) -lt 30 ]; do
	sleep 0.2
done
if running $r; then
	not_ok "rmmod within 30 s with discoveries queued on sleeping tasks" \
		"still waiting after $(($(date +%s) - t0)) s"
	# Let it finish, if the sleepers were what it waited for.
	kill -9 $s1 $s2 2>/dev/null
	t1=$(date +%s)
	while running $r && [ $(($(date +%s) - t1)) -lt 10 ]; do
		sleep 0.2
	done
	running $r && echo "# rmmod still waits with the sleepers gone"
else
	wait $r
	rc=$?
	if [ "$rc" = 0 ]; then
		ok "rmmod within 30 s with discoveries queued on sleeping tasks"
	else
		not_ok "rmmod within 30 s with discoveries queued on sleeping tasks" \
			"exit status $rc: $(cat "$tmp/rmmod.out")"
	fi
fi
echo "# rmmod took $(($(date +%s) - t0)) s; $(dmesg | grep 'codectl: unload leaves' | tail -n 3 | tr '\n' ' ')"
# Their exits run the works left to them, the module gone.
kill -9 $s1 $s2 2>/dev/null
wait $s1 $s2 2>/dev/null
sleep 1
after=$(problems | wc -l)
if [ "$after" = "$before" ]; then
	ok "kernel log clean after the sleepers ran the works left to them"
else
	not_ok "kernel log clean after the sleepers ran the works left to them" \
		"$(problems | tail -n 1)"
fi
rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
