#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run test programs that speak TAP (cmocka with CMOCKA_MESSAGE_OUTPUT=TAP,
# or our shell scripts) and count their test cases.  A case passes only if
# it says "ok"; "not ok" (skips included), cases announced by the plan that
# never reported, and a non-zero exit without any failed case all count as
# failures.  The last line is "N passed, N failed"; the exit status is 1
# when anything failed.

total_pass=0
total_fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$@"; do
	CMOCKA_MESSAGE_OUTPUT=TAP "./$t" >"$log" 2>&1
	rc=$?
	sed 's/^/  /' "$log"
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	pass=$(grep -c '^ok [0-9]' "$log")
	fail=$(grep -c '^not ok [0-9]' "$log")
	if [ -n "$plan" ] && [ $((pass + fail)) -lt "$plan" ]; then
		fail=$((plan - pass))
	fi
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
	fi
	echo "$t: $pass passed, $fail failed (exit status $rc)"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
done

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
