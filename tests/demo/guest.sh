#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The demo's guest half (scripts/demo.sh boots a stock kernel under QEMU
# with this script, Debian's python3.11, perf and the module): the same
# pure-Python workload under `perf record -g` twice, first with the
# kernel's own unwinder only (the control), then with codectl loaded and
# the objects python maps covered.  For each run: perf report --stdio
# --children, the share of samples whose user stack reaches the bottom
# of the process (python's _start, __libc_start_main or main), and a
# flame graph from perf's own `perf script report flamegraph` with the
# d3-flame-graph template.  The files are sent to the host on the
# console, gzipped and base64-encoded between marker lines.
#
#   guest.sh MODULE.ko WORKLOAD.py TEMPLATE.html SECONDS [nocodectl]
#
# nocodectl: the second run without the module too (the negative case of
# the demo's test: both flame graphs shallow).

set -e
ko=$1 workload=$2 template=$3 seconds=$4 mode=${5:-}
py=/usr/bin/python3.11
out=/tmp/demo
mkdir -p "$out"

# The kernel's messages stay in its log (vm-run prints it afterwards),
# not on the console between the file markers.
dmesg -n 1

say() { echo "demo-guest: $*"; }

# Cover the objects python maps: start `codectl daemon`, as the package's
# codectl-daemon.service does, which synthesises SFrame from the
# .eh_frame of every object an unwind meets without one and imports it.
# A first, short profile of python makes it meet them (a program's first
# half second of samples is cut while the daemon synthesises).
cover_objects() {
	say "codectl daemon (the package's codectl-daemon.service)"
	codectl daemon >/tmp/daemon.log 2>&1 &
	daemon=$!
	while ! grep -q "looked at every process" /tmp/daemon.log; do sleep 0.1; done
	say "a first, 1 s profile of python3.11: the daemon covers what it meets"
	perf record -q -g -e cpu-clock:u -F 499 -o /tmp/warmup.data -- \
		"$py" -I "$workload" 1 >/dev/null 2>&1
	sleep 1
	grep "imported" /tmp/daemon.log | sed 's/^codectl-daemon: /demo-guest:   daemon: /'
}

# record NAME: the workload under perf record -g; cpu-clock because the
# TCG guest has no PMU, user space only (the stacks in question).
record() {
	mkdir -p "$out/$1"
	cd "$out/$1"
	say "$1: perf record -g -e cpu-clock:u -F 499 -- python3.11 workload.py $seconds"
	perf record -q -g -e cpu-clock:u -F 499 -o perf.data -- \
		"$py" -I "$workload" "$seconds" 2>perf.err || { cat perf.err; exit 1; }
	cd /
}

# report NAME: perf's report, the share of complete stacks, the flame graph.
report() {
	cd "$out/$1"
	perf report --stdio --children --no-inline -g none --sort sym -i perf.data \
		--percent-limit 2 2>/dev/null >report.txt
	# One line per sample, outermost frame last: "SYM@DSO ...".  A stack
	# is complete when it reaches the process's bottom: python's _start
	# (its binary is stripped: the outermost frame is then an unknown
	# symbol in python3.11 called from libc's __libc_start_call_main),
	# __libc_start_main or main.
	perf script -i perf.data --no-inline -F ip,sym,dso 2>/dev/null | awk '
	function flush() {
		if (n == 0) return
		total++
		depth += n
		if (last ~ /^(_start|__libc_start_main|__libc_start_call_main|main|Py_BytesMain)@/ ||
		    (last ~ /python3\.11\)$/ && prev ~ /libc\.so\.6\)$/))
			complete++
		n = 0
	}
	/^[ \t]*$/ { flush(); next }
	{ n++; prev = last; last = $2 "@" $3 }
	END {
		flush()
		printf "%d %d %.1f\n", total, complete, total ? depth / total : 0
	}' >share.txt
	read -r total complete depth <share.txt
	say "$1: $complete of $total samples reach python's _start/__libc_start_main, mean depth $depth frames"
	say "$1: perf script report flamegraph"
	perf script report flamegraph --template "$template" -o flamegraph.html \
		>flamegraph.log 2>&1 || { cat flamegraph.log; exit 1; }
	cd /
}

emit() {
	echo "CODECTL-DEMO-FILE $1"
	gzip -c "$2" | base64
	echo "CODECTL-DEMO-FILE-END"
}

say "kernel $(uname -r), $(nproc) CPUs"
record control
if [ "$mode" != nocodectl ]; then
	say "insmod codectl.ko"
	insmod "$ko"
	cover_objects
fi
record codectl
report control
report codectl
if [ "$mode" != nocodectl ]; then
	codectl unwind >"$out/codectl/unwind.txt" 2>&1 || true
	codectl status >"$out/codectl/status.txt" 2>&1 || true
	kill "$daemon"
	wait "$daemon"
	rmmod codectl
fi
for run in control codectl; do
	for f in report.txt share.txt flamegraph.html perf.err; do
		emit "$run/$f" "$out/$run/$f"
	done
done
[ "$mode" = nocodectl ] || emit codectl/unwind.txt "$out/codectl/unwind.txt"
[ "$mode" = nocodectl ] || emit codectl/status.txt "$out/codectl/status.txt"
say "done"
