#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The first guest tests of an arm64 guest (scripts/check.sh 6.12-arm64),
# run by busybox's sh there: what of guest-suite.sh needs no x86-64
# program and no other binary yet.
#
#   arm64-suite.sh MODULE.ko CONSUMER.ko TESTMOD.ko
#
#   1. codectl.ko, the consumer module (its exported API) and the test
#      module (codectl_test.ko) load; /dev/codectl appears
#   2. codectl-abi-test (cross-built, static), every test but those that
#      need files of the x86-64 suite (ARM64_LEAVE_OUT), as root
#   3. guest-suite.sh's unprivileged subset again as uid/gid 65534
#   4. the modules unload, /dev/codectl goes
# The kernel log must stay clean (scripts/vm-run.sh checks it).  Ends with
# "N passed, N failed" (codectl-abi-test's counts and ours).
here=$(cd "$(dirname "$0")" && pwd)
ko=$1 consumer_ko=$2 testmod_ko=$3
abi_test=$here/codectl-abi-test
dev=/dev/codectl
tmp=${TMPDIR:-/tmp}/codectl-arm64.$$
mkdir -p "$tmp"

# demand_queue: tests/vm/unwind's libraries (x86-64 builds).
ARM64_LEAVE_OUT="demand_queue"

. "$here/tap.sh"

# run_abi LABEL ARGS...: codectl-abi-test; its counts are added to ours.
run_abi() {
	label=$1
	shift
	echo "# === codectl-abi-test $* ($label)"
	{ "$abi_test" "$@"; echo $? >"$tmp/rc"; } 2>&1 | tee "$tmp/out"
	rc=$(cat "$tmp/rc")
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -n 1)
	if [ -z "$last" ]; then
		not_ok "codectl-abi-test ($label)" "no summary line (exit status $rc)"
		return
	fi
	p=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	pass=$((pass + p)) fail=$((fail + f)) n=$((n + p + f))
	echo "# codectl-abi-test ($label): $last, exit status $rc"
	[ "$rc" -eq 0 ] || [ "$f" -ne 0 ] ||
		not_ok "codectl-abi-test ($label)" "exit status $rc without a failed test"
}

echo "# codectl arm64 guest tests on $(uname -r) ($(uname -m))"
grep -q -w paca /proc/cpuinfo && echo "# the CPU has pointer authentication (paca)"

# --- 1. load -----------------------------------------------------------------
check "codectl.ko loads" "insmod failed" insmod "$ko"
check "$dev is a character device" "missing" test -c "$dev"
check "the consumer module (exported deferred-unwind API) loads" \
	"insmod failed" insmod "$consumer_ko"
check "the test module loads" "insmod failed" insmod "$testmod_ko"

# --- 2, 3. the ABI tests -----------------------------------------------------
tests=$("$abi_test" -l | awk '{ print $1 }' | grep -v -x -F "$(echo $ARM64_LEAVE_OUT | tr ' ' '\n')")
echo "# left out: $ARM64_LEAVE_OUT"
# shellcheck disable=SC2086 # word splitting wanted
run_abi root $tests
unpriv=$(sed -n '/^UNPRIV_TESTS="/,/"$/p' "$here/guest-suite.sh" |
	sed 's/^UNPRIV_TESTS="//; s/"$//' | tr -s ' \n' '\n\n' |
	grep -v -x -F "$(echo $ARM64_LEAVE_OUT | tr ' ' '\n')")
# shellcheck disable=SC2086 # word splitting wanted
run_abi "uid 65534" -u 65534 $unpriv

# --- 4. unload ---------------------------------------------------------------
check "the test module unloads" "rmmod failed" rmmod codectl_test
check "the consumer module unloads" "rmmod failed" rmmod codectl_consumer
check "codectl unloads" "rmmod failed" rmmod codectl
check "$dev is gone" "still there" test ! -e "$dev"

rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
