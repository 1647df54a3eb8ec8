#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fuzzers at length, one guest per kernel: the ioctl fuzzer run many
# times with fresh seeds (issue 23, finding 10: one run died of SIGSEGV),
# then the decoder fuzzer (tests/vm/decoder-fuzz.c: the module's SFrame
# decoder against the user-space one on mutated sections of the corpus
# tests/sframe/fuzz/kept/ and hand/).  `make soak-fuzz`; on the debug
# kernel the fuzz stage of `make check-debug` (scripts/check.sh).
#
#   SERIES="6.1 6.12 7.2" tests/vm/fuzz-soak.sh [RUNS [CALLS [EXECS]]]
#
# RUNS runs of codectl-ioctl-fuzz -n CALLS (4 threads, default 20 runs of
# 100000 calls), then decoder-fuzz -n EXECS (default 10000000; 0: none).
# A failed run prints its seed (redo with -s SEED) and, for a SIGSEGV or
# SIGBUS, the fuzzer's report of what every thread was doing.
# SOAK_TMUL multiplies the guest's time limit and the fuzzer's bounds
# (CODECTL_TIME_SCALE), SOAK_MEM is its memory (MB).
#
# Output: "soak SERIES: R runs, F failed, N calls; decoder: ..." per
# kernel, then "N passed, N failed" (a run or the decoder fuzzer is one
# test); exit status 1 if any failed or a guest did not finish.  Full
# output: .cache/logs/soak-fuzz-SERIES.log (and .console).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
logs=${CODECTL_CACHE:-$top/.cache}/logs
mkdir -p "$logs"
read -r -a series <<<"${SERIES:-6.1 6.12 7.2}"
runs=${1:-20} calls=${2:-100000} execs=${3:-10000000}
tmul=${SOAK_TMUL:-1} mem=${SOAK_MEM:-1024}
make -s -C "$here" codectl-ioctl-fuzz decoder-fuzz >/dev/null
corpus=$top/tests/sframe/fuzz
rc=0 pass=0 fail=0
for s in "${series[@]}"; do
	ko=$("$top/scripts/build-module.sh" "$s")
	log=$logs/soak-fuzz-$s.log
	echo "=== soak-fuzz on $s: $runs runs of $calls calls, $execs decoder executions"
	# Guest time: 240 s a run of 100000 calls, 60 s a million executions.
	if ! "$top/scripts/vm-run.sh" -k "$s" -m "$mem" -l "$log.console" \
		-t $(((runs * calls / 400 + execs / 16000 + 120) * tmul)) \
		-a "$ko:/codectl.ko" -a "$here/codectl-ioctl-fuzz:/tests/fuzz" \
		-a "$here/decoder-fuzz:/tests/decoder-fuzz" \
		-a "$corpus/kept:/corpus/kept" -a "$corpus/hand:/corpus/hand" -- \
		env CODECTL_TIME_SCALE="$tmul" sh -c 'insmod /codectl.ko || exit 1
			runs=$1 calls=$2 execs=$3 fail=0 i=0
			while [ $i -lt "$runs" ]; do
				i=$((i + 1))
				/tests/fuzz -n "$calls" >/tmp/out 2>&1
				st=$?
				grep -E "^# codectl-ioctl-fuzz: seed|^# FAULT|^#   (thread|pc|map)|^not ok" /tmp/out
				echo "run $i: exit status $st, $(tail -n 1 /tmp/out)"
				[ $st = 0 ] || fail=$((fail + 1))
			done
			echo "soak: $runs runs, $fail failed, $((runs * calls)) calls"
			if [ "$execs" -gt 0 ]; then
				/tests/decoder-fuzz -n "$execs" /corpus/kept /corpus/hand >/tmp/out 2>&1
				st=$?
				cat /tmp/out
				echo "decoder: exit status $st, $(grep -E "^# [0-9]+ executions" /tmp/out)"
			fi
			rmmod codectl && [ $fail = 0 ]' sh "$runs" "$calls" "$execs" >"$log" 2>&1; then
		rc=1
	fi
	line=$(grep -a '^soak: ' "$log" | tail -n 1)
	dline=$(grep -a '^decoder: ' "$log" | tail -n 1)
	grep -aE '^(run [0-9]+: exit status [^0]|# FAULT|#   (thread|pc)|# MISMATCH|not ok)' "$log" || true
	echo "soak $s: ${line#soak: }${line:+; }${dline:+$dline; }vm-run: $(grep -a '^vm-run:' "$log" | tail -n 1)"
	# Each run and the decoder fuzzer count as one test.
	ok_runs=$(grep -ac '^run [0-9]*: exit status 0,' "$log" || true)
	pass=$((pass + ok_runs)) fail=$((fail + runs - ok_runs))
	if [ "$execs" -gt 0 ]; then
		if grep -aq '^decoder: exit status 0,' "$log"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "not ok - decoder fuzzer on $s"
		fi
	fi
	[ -n "$line" ] || rc=1
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] || rc=1
exit $rc
