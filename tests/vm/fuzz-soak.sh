#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak-fuzz: the ioctl fuzzer run many times with fresh seeds, one
# guest per kernel, to catch what one run a day does not (issue 23,
# finding 10: one run died of SIGSEGV).  Each run is the guest suite's
# (codectl-ioctl-fuzz -n CALLS, 4 threads); a failed run prints its seed
# (redo with -s SEED) and, for a SIGSEGV or SIGBUS, the fuzzer's report
# of what every thread was doing.
#
#   SERIES="6.1 6.12 7.2" tests/vm/fuzz-soak.sh [RUNS [CALLS]]
#
# Output: "soak SERIES: R runs, F failed, N calls" per kernel; exit status
# 1 if any run failed or a guest did not finish.  Full output:
# .cache/logs/soak-fuzz-SERIES.log.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
logs=${CODECTL_CACHE:-$top/.cache}/logs
mkdir -p "$logs"
read -r -a series <<<"${SERIES:-6.1 6.12 7.2}"
runs=${1:-20} calls=${2:-100000}
make -s -C "$here" codectl-ioctl-fuzz >/dev/null
rc=0
for s in "${series[@]}"; do
	ko=$("$top/scripts/build-module.sh" "$s")
	log=$logs/soak-fuzz-$s.log
	echo "=== soak-fuzz on $s: $runs runs of $calls calls"
	if ! "$top/scripts/vm-run.sh" -k "$s" -t $((runs * 240 + 120)) \
		-a "$ko:/codectl.ko" -a "$here/codectl-ioctl-fuzz:/tests/fuzz" -- \
		sh -c 'insmod /codectl.ko || exit 1
			runs=$1 calls=$2 fail=0 i=0
			while [ $i -lt "$runs" ]; do
				i=$((i + 1))
				/tests/fuzz -n "$calls" >/tmp/out 2>&1
				st=$?
				grep -E "^# codectl-ioctl-fuzz: seed|^# FAULT|^#   (thread|pc|map)|^not ok" /tmp/out
				echo "run $i: exit status $st, $(tail -n 1 /tmp/out)"
				[ $st = 0 ] || fail=$((fail + 1))
			done
			echo "soak: $runs runs, $fail failed, $((runs * calls)) calls"
			rmmod codectl && [ $fail = 0 ]' sh "$runs" "$calls" >"$log" 2>&1; then
		rc=1
	fi
	line=$(grep -a '^soak: ' "$log" | tail -n 1)
	grep -aE '^(run [0-9]+: exit status [^0]|# FAULT|#   (thread|pc)|not ok)' "$log" || true
	echo "soak $s: ${line#soak: }${line:+; }vm-run: $(grep -a '^vm-run:' "$log" | tail -n 1)"
	[ -n "$line" ] || rc=1
done
exit $rc
