# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# TAP helpers of the guest-side scripts (guest-suite.sh, rmmod-sleepers.sh,
# tracers.sh, ondemand.sh, runtimes.sh, daemon-fuzz.sh, lockdown-signing.sh),
# for busybox sh; scripts/check.sh ships this file beside
# them as /tests/tap.sh, and they source it from their own directory.
#   ok NAME                      "ok N - NAME"
#   not_ok NAME WHY              "not ok N - NAME: WHY"
#   check NAME WHY COMMAND...    ok or not_ok by COMMAND's exit status
# $n counts the tests, $pass and $fail the results.

n=0 pass=0 fail=0

ok() {
	n=$((n + 1)) pass=$((pass + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1)) fail=$((fail + 1))
	echo "not ok $n - $1: $2"
}

check() {
	name=$1 why=$2
	shift 2
	if "$@"; then ok "$name"; else not_ok "$name" "$why"; fi
}

# harm_counts: the tracer hooks' no-harm check (codectl.ko check_harm=1),
# "checked shorter" summed over the hooks (debugfs codectl/hooks)
harm_counts() {
	awk '$2 == "harm" { c += $4; s += $6 } END { print c + 0, s + 0 }' \
		/sys/kernel/debug/codectl/hooks
}

# wait_daemon_ready LOG [SECONDS]: until the `codectl daemon` whose output
# goes to LOG says its first look at the processes is done; 1 after
# SECONDS (60).
wait_daemon_ready() {
	i=0
	while ! grep -q "looked at every process" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt $((${2:-60} * 10)) ] || return 1
		sleep 0.1
	done
}

# start_daemon LOG [WRAPPER...]: `codectl daemon` in the background (run
# by WRAPPER, e.g. setpriv, if given), its output appended to LOG, its pid
# in daemon_pid; returns once its first look at the processes is done, or
# 1 after 60 s (LOG then printed as comments).
start_daemon() {
	daemon_log=$1
	shift
	"$@" codectl daemon >>"$daemon_log" 2>&1 &
	daemon_pid=$!
	wait_daemon_ready "$daemon_log" 60 || { sed 's/^/# /' "$daemon_log"; return 1; }
}
