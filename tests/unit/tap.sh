# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers for the shell tests here, sourced after "echo 1..N":
#   check DESCRIPTION COMMAND...   run COMMAND; "ok N - ..." or "not ok N -
#                                  ..." with its output as # comments
# $failed counts the failures.

n=0
failed=0
check() {	# description, command...
	desc=$1
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		failed=$((failed + 1))
		[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
	fi
}
