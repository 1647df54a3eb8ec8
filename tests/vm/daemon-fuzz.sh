#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The daemon fuzzed, in a guest (the ondemand stage with a few rounds;
# the daemonfuzz stage of `make check-debug` with many): hostile ELF
# objects (tests/vm/ondemand/elfmut.c: bytes flipped, truncated,
# .eh_frame garbage, huge CIE/FDE lengths, huge counts and sizes,
# overlapping sections and segments, a bogus .eh_frame_hdr, endless
# LEB128s) through the daemon's synthesis children and its cache, and
# through the module, which reads each file when a process maps it.
#
#   daemon-fuzz.sh ROUNDS FILES [SEED]
#
# Needs the module loaded and no daemon attached (the queue has one
# reader); DFZ_RUN, if set, is put before each "codectl daemon" (the
# unit's sandbox: setpriv ...).  Per round, FILES new hostile copies of
# the guest's libz, liblzma and libc (seed SEED + round), then:
#   prime  codectl daemon --prime over them, while a symlink among its
#          arguments is swapped between two of them and another file is
#          rewritten in place with one and the other, as fast as the
#          shell can: the daemon must exit 0;
#   cache  every entry it wrote for a content this round made must be
#          byte for byte the entry a fresh cache gets for that content
#          alone (no rules under another content's name); entries of
#          contents no file had (the rewritten file caught torn) are
#          counted;
#   live   the daemon reading the queue while a process maps them all
#          for execution and perf samples it (the module discovers the
#          process and queues every hostile mapping); in odd rounds the
#          process is killed at once and half the paths are replaced by
#          symlinks to others (the daemon falls back on the path and
#          must find them replaced); the daemon must still run, drain
#          the queue within 300 s and exit 0 on SIGTERM.
# Output: "daemon-fuzz: ..." (the figures: executions, crashes, time)
# and "ok"/"not ok" lines of its own; exit status 1 if anything failed.
here=$(cd "$(dirname "$0")" && pwd)
# wait_daemon_ready
. "$here/tap.sh"
rounds=${1:-2} per=${2:-16} seed=${3:-$(date +%s)}
tmp=/tmp/daemon-fuzz
rm -rf "$tmp"
mkdir -p "$tmp/swap"
t0=$(date +%s)
fails=0 primed=0 handled=0 crashes=0 checked=0 differ=0 torn=0 childfail=0
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

seeds=
for f in /lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/liblzma.so.5 \
	 /lib/x86_64-linux-gnu/libc.so.6; do
	[ -f "$f" ] && seeds="$seeds $f"
done
[ -n "$seeds" ] || { echo "not ok - daemon-fuzz: no seed object"; exit 1; }
echo "# daemon-fuzz: seed $seed, $rounds rounds of $per files from$seeds"

# A background loop, until its stop file appears.
loop() {
	stopf=$1
	shift
	while [ ! -e "$stopf" ]; do
		"$@"
	done
}

r=0
while [ "$r" -lt "$rounds" ]; do
	s=$((seed + r))
	dir=$tmp/r$r
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # the seed objects, one word each
	"$here/ondemand/elfmut" "$s" "$per" "$dir" $seeds >"$tmp/kinds" ||
		{ bad "elfmut $s"; break; }
	a=$dir/m-$s-0.so b=$dir/m-$s-1.so
	cp "$a" "$tmp/swap/rewritten"
	ln -sfn "$a" "$tmp/swap/link"
	rm -f "$tmp/stop"
	loop "$tmp/stop" sh -c 'ln -sfn "$1" "$3"; ln -sfn "$2" "$3"' sh "$a" "$b" "$tmp/swap/link" &
	l1=$!
	loop "$tmp/stop" sh -c 'cat "$1" >"$3"; cat "$2" >"$3"' sh "$a" "$b" "$tmp/swap/rewritten" &
	l2=$!

	# prime: synthesis children and the cache.
	$DFZ_RUN codectl daemon --cache "$tmp/cache" --prime "$dir" "$tmp/swap/link" \
		"$tmp/swap/rewritten" >"$tmp/prime.out" 2>&1
	st=$?
	: >"$tmp/stop"
	wait $l1 $l2
	primed=$((primed + per + 2))
	f=$(awk '$1 == "failed" { print $2 }' "$tmp/prime.out")
	childfail=$((childfail + ${f:-0}))
	if [ "$st" -ne 0 ]; then
		crashes=$((crashes + 1))
		bad "round $r (seed $s): codectl daemon --prime exited $st: $(tail -n 3 "$tmp/prime.out" | tr '\n' ' ')"
	fi

	# cache: each entry of a content of this round is what that content
	# alone gives.
	rm -rf "$tmp/fresh"
	$DFZ_RUN codectl daemon --cache "$tmp/fresh" --prime "$dir" >/dev/null 2>&1 ||
		bad "round $r: the fresh --prime failed"
	for e in "$tmp/fresh"/*.sframe; do
		[ -e "$e" ] || continue
		name=${e##*/}
		[ -e "$tmp/cache/$name" ] || continue
		checked=$((checked + 1))
		if ! cmp -s "$e" "$tmp/cache/$name"; then
			differ=$((differ + 1))
			bad "round $r (seed $s): cache entry $name differs from a fresh synthesis of its content"
		fi
	done
	# Contents of no file of this round: the rewritten file caught torn.
	codectl daemon --hash "$dir"/*.so "$tmp/swap/rewritten" 2>/dev/null |
		awk '{ print $1 ".sframe" }' | sort -u >"$tmp/known"
	for e in "$tmp/cache"/*.sframe; do
		[ -e "$e" ] || continue
		grep -qx "${e##*/}" "$tmp/known" || torn=$((torn + 1))
	done
	rm -rf "$tmp/cache"

	# live: the queue, the module reading the files, imports.
	: >"$tmp/live.log"
	$DFZ_RUN codectl daemon --cache "$tmp/live-cache" --state "$tmp/state" \
		>>"$tmp/live.log" 2>&1 &
	dpid=$!
	wait_daemon_ready "$tmp/live.log" 120 ||
		echo "# daemon-fuzz: round $r: the daemon not ready after 120 s"
	"$here/ondemand/mapper" "$dir"/*.so >"$tmp/mapper.out" &
	mpid=$!
	i=0
	while ! grep -q mapped "$tmp/mapper.out" && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	perf record -q -e cpu-clock:u -F 499 -g -p $mpid -o "$tmp/perf.data" -- sleep 1 >/dev/null 2>&1
	if [ $((r % 2)) -eq 1 ]; then
		kill -KILL $mpid
		for m in "$dir"/m-$s-*[13579].so; do
			ln -sfn "$a" "$m"
		done
	fi
	# Drained: nothing pending, no synthesis child, twice in a row.
	i=0 quiet=0
	while [ $quiet -lt 2 ] && [ $i -lt 3000 ]; do
		if [ "$(awk '$1 == "pending" { print $2 }' /sys/kernel/debug/codectl/demand)" = 0 ] &&
		   [ -z "$(cat "/proc/$dpid/task/$dpid/children" 2>/dev/null)" ]; then
			quiet=$((quiet + 1))
		else
			quiet=0
		fi
		i=$((i + 1))
		sleep 0.1
	done
	[ $quiet -ge 2 ] || bad "round $r (seed $s): the queue not drained in 300 s"
	kill -KILL $mpid 2>/dev/null
	wait $mpid 2>/dev/null
	# Files of this round the daemon took from the queue (each once).
	n=$(grep -o "$dir/m-[0-9]*-[0-9]*\.so" "$tmp/live.log" | sort -u | wc -l)
	handled=$((handled + n))
	if kill -0 $dpid 2>/dev/null; then
		kill $dpid
		wait $dpid
		st=$?
		[ $st -eq 0 ] || { crashes=$((crashes + 1)); bad "round $r (seed $s): the daemon exited $st on SIGTERM"; }
	else
		wait $dpid
		st=$?
		crashes=$((crashes + 1))
		bad "round $r (seed $s): the daemon died (exit status $st): $(tail -n 3 "$tmp/live.log" | tr '\n' ' ')"
	fi
	grep -E "killed by signal|cannot|replaced" "$tmp/live.log" | sort | uniq -c | sort -rn | head -n 5 |
		sed "s/^/# round $r: /"
	rm -rf "$dir"
	r=$((r + 1))
done
secs=$(($(date +%s) - t0))
echo "daemon-fuzz: seed $seed rounds $r files $((r * per)) prime_executions $primed" \
	"live_handled $handled crashes $crashes synthesis_failures $childfail" \
	"entries_checked $checked differing $differ torn $torn seconds $secs"
[ "$r" -eq "$rounds" ] || bad "only $r of $rounds rounds"
[ "$checked" -gt 0 ] || bad "no cache entry compared: the check did not run"
[ "$handled" -gt 0 ] || bad "the daemon handled no queued file: the live phase did not run"
[ "$fails" -eq 0 ] && echo "ok - daemon-fuzz: $r rounds, $primed prime executions, $handled queued files, 0 crashes"
[ "$fails" -eq 0 ]
