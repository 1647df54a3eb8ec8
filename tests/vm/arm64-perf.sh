#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perf on arm64 (scripts/check.sh's tracers-SERIES-arm64), run by
# busybox's sh in an arm64 guest: Debian bookworm's arm64 perf, unchanged
# (scripts/stage-arm64-root.sh), samples programs built for aarch64 with
# --gsframe and without frame records, and gets their whole user stacks
# once codectl.ko is loaded (its kprobe on perf_callchain_user).
#
#   arm64-perf.sh MODULE.ko DIR REAL
#
# DIR holds the tracees (tests/vm/unwind/tracee.c, make -C tests/vm
# arm64): tracee-v3 (-O2 -fomit-frame-pointer -Wa,--gsframe, binutils
# 2.47's aarch64 assembler: SFrame v3) and tracee-pac (the same with
# -mbranch-protection=standard: its return addresses are signed with
# paciasp before they are saved, so that each saved x30 carries a pointer
# authentication code in its top bits).  Each runs main -> tr_f1 .. tr_f7
# -> tr_leaf; a sample in tr_leaf is complete when its stack starts with
# those nine frames in order.  Each is made both ways in the same boot:
#   - without the module (the kernel's frame-record walk): <= 5% complete,
#     so that the figures below come from codectl, not from the kernel;
#   - with codectl.ko (discovery: nothing registered): >= 99% complete,
#     the hook counted its walks and SFrame found frames, and no frame
#     outside code: every frame of every sample in an object perf knows
#     (perf script's dso is not "[unknown]"), signed return addresses
#     included (a PAC left in an address puts it outside every mapping).
# REAL holds real programs (lua, sqlite3 and their PAC builds:
# scripts/stage-arm64-real.sh), sampled without and with the module too,
# then with libc's rules imported (codectl import; tests/vm/arm64-real.sh,
# sourced here).
# Then, the module still loaded, trace-cmd (tests/vm/arm64-ftrace.sh,
# sourced here): ftrace's userstacktrace with the hooks on and off.
# FIGURE lines: the shares.  The last line is "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
ko=$1 dir=$2 real=$3
hooks=/sys/kernel/debug/codectl/hooks
params=/sys/module/codectl/parameters
tmp=${TMPDIR:-/tmp}/arm64-perf.$$
chain="tr_leaf tr_f7 tr_f6 tr_f5 tr_f4 tr_f3 tr_f2 tr_f1 main"
mkdir -p "$tmp"

. "$here/tap.sh"

fig() { echo "FIGURE $*"; }

hook_counter() {
	awk -v f="$1" -v k="$2" '$1 == f {
		for (i = 2; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$hooks"
}

# perf_run NAME TRACEE: 3 s of perf record -g; prints "TOTAL COMPLETE
# FRAMES UNKNOWN": the samples in tr_leaf, those complete, every frame of
# every sample and those perf knows no object for.
perf_run() {
	perf record -q -e cpu-clock:u -F 499 -g -o "$tmp/$1.data" -- \
		"$2" 3 2>"$tmp/$1.err" >/dev/null
	perf script -i "$tmp/$1.data" --no-inline -F comm,ip,sym,dso \
		2>"$tmp/$1.script.err" | awk -v chain="$chain" '
	BEGIN { nw = split(chain, want, " ") }
	function num(h,   i, v) {
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	function done() {
		if (k == 0 || sym[1] != "tr_leaf")
			return
		# perf (not the kernel) adds the leaf'"'"'s caller from the
		# sampled x30, as its DWARF unwinder reports a caller: the
		# return address less 1, before the callchain'"'"'s own frame 1.
		if (k >= 3 && num(ip[2]) + 1 == num(ip[3])) {
			for (i = 2; i < k; i++) {
				sym[i] = sym[i + 1]
				ip[i] = ip[i + 1]
			}
			k--
			frames--
			added++
		}
		total++
		for (i = 1; i <= nw && i <= k && want[i] == sym[i]; i++)
			;
		if (i > nw)
			complete++
		else if (!shown++) {
			printf "#" >"/dev/stderr"
			for (i = 1; i <= k; i++)
				printf " %s", sym[i] >"/dev/stderr"
			printf "\n" >"/dev/stderr"
		}
	}
	/^[^ \t]/ { done(); k = 0; next }
	/^[ \t]+[0-9a-f]+ / {
		sym[++k] = $2
		ip[k] = $1
		frames++
		if ($NF == "([unknown])")
			unknown++
	}
	END {
		done()
		printf "# %d samples: perf added x30 less 1\n", added >"/dev/stderr"
		printf "%d %d %d %d\n", total, complete, frames, unknown
	}' \
		2>"$tmp/$1.incomplete"
	# The first incomplete stack, for the log.
	sed 's/^#/# '"$1"':/' "$tmp/$1.incomplete" >&2
}

# chain_share NAME [N]: stacks on stdin, one "COUNT SYM SYM ..." line
# each, innermost first; prints "TOTAL COMPLETE": the count of those that
# start in tr_leaf, and of them those whose first N (default 9) symbols
# are $chain.  The first incomplete one goes to the log.
chain_share() {
	awk -v name="$1" -v n="${2:-9}" -v chain="$chain" '
	BEGIN { split(chain, want, " ") }
	$2 == "tr_leaf" {
		total += $1
		for (i = 1; i <= n && want[i] == $(i + 1); i++)
			;
		if (i > n)
			complete += $1
		else if (!shown++)
			print "# " name ":" substr($0, index($0, " ")) >"/dev/stderr"
	}
	END { printf "%d %d\n", total, complete }'
}

# expect_share NAME WHAT TOTAL COMPLETE OP PERCENT: at least 20 WHAT (samples,
# stacks) in tr_leaf, and COMPLETE of them OP (ge or le) PERCENT%
expect_share() {
	if [ "${3:-0}" -lt 20 ]; then
		not_ok "$1" "only ${3:-0} $2 in tr_leaf (want >= 20)"
	elif [ "$5" = ge ]; then
		check "$1: >= $6% complete" "$4 of $3 complete" \
			[ $(($4 * 100)) -ge $(($6 * $3)) ]
	else
		check "$1: <= $6% complete" "$4 of $3 complete" \
			[ $(($4 * 100)) -le $(($6 * $3)) ]
	fi
}

# expect NAME "TOTAL COMPLETE FRAMES UNKNOWN" OP PERCENT: OP ge or le
expect() {
	name=$1 op=$3 pct=$4
	# shellcheck disable=SC2086 # four words
	set -- $2
	echo "# $name: $2 of $1 samples in tr_leaf complete; $4 of $3 frames outside code"
	expect_share "$name" samples "$1" "$2" "$op" "$pct"
}

echo "# perf on arm64: $(uname -r) ($(uname -m)), $(perf version)"
echo 0 >/proc/sys/kernel/randomize_va_space
echo -1 >/proc/sys/kernel/perf_event_paranoid
check "the CPU has pointer authentication" "no paca in /proc/cpuinfo" \
	grep -q -w paca /proc/cpuinfo
# The PAC build signs its return addresses: paciasp (0xd503233f) in it.
# shellcheck disable=SC2016 # sh -c's script
check "tracee-pac is PAC-signed, tracee-v3 is not" "paciasp count" \
	sh -c '[ "$(od -An -tx4 -v "$1/tracee-pac" | grep -c d503233f)" -gt 0 ] &&
	       [ "$(od -An -tx4 -v "$1/tracee-v3" | grep -c d503233f)" -eq 0 ]' \
	sh "$dir"

for v in v3 pac; do
	r=$(perf_run "$v-without" "$dir/tracee-$v")
	expect "perf -g, tracee-$v, without the module" "$r" le 5
	fig "arm64 perf tracee-$v without codectl: $(echo "$r" | awk '{ printf "%d/%d complete", $2, $1 }')"
done

# Real programs (arm64-real.sh): lua, sqlite3, their PAC builds.
. "$here/arm64-real.sh"
# shellcheck disable=SC2016 # sh -c's script
check "lua-pac and sqlite3-pac are PAC-signed, lua and sqlite3 not" "paciasp count" \
	sh -c 'for p in lua sqlite3; do
		[ "$(od -An -tx4 -v "$1/$p-pac" | grep -c d503233f)" -gt 0 ] &&
		[ "$(od -An -tx4 -v "$1/$p" | grep -c d503233f)" -eq 0 ] || exit 1
	done' sh "$real"
real_phase without

check "codectl.ko loads" "insmod failed" insmod "$ko"
check "hook on perf_callchain_user attached" "$(head -n 3 "$hooks" 2>&1)" \
	[ "$(hook_counter perf_callchain_user attached)" = 1 ]
for v in v3 pac; do
	before=$(hook_counter perf_callchain_user redirected)
	r=$(perf_run "$v-with" "$dir/tracee-$v")
	after=$(hook_counter perf_callchain_user redirected)
	expect "perf -g, tracee-$v, with codectl" "$r" ge 99
	# shellcheck disable=SC2086 # four words
	set -- $r
	check "perf -g, tracee-$v, with codectl: no frame outside code" \
		"$4 of $3 frames in no object perf knows" \
		[ "${3:-0}" -gt 0 -a "${4:-1}" -eq 0 ]
	check "perf -g, tracee-$v: the hook did those walks" \
		"redirected $before -> $after" [ "${after:-0}" -gt "${before:-0}" ]
	fig "arm64 perf tracee-$v with codectl: $2/$1 complete, $4/$3 frames outside code"
done
sframe=$(awk '$1 == "perf_callchain_user" && $2 == "frames" {
	for (i = 3; i < NF; i++) if ($i == "sframe") print $(i + 1) }' "$hooks")
check "perf -g: frames found by SFrame" "sframe frames: $sframe" \
	[ "${sframe:-0}" -gt 0 ]
echo "# $(grep perf_callchain_user "$hooks" | tr '\n' ';')"
real_phase with
real_import
# trace-cmd's userstacktrace, hooks on and off (arm64-ftrace.sh), and
# bpftrace's ustack (arm64-bpftrace.sh)
. "$here/arm64-ftrace.sh"
. "$here/arm64-bpftrace.sh"
check "codectl unloads" "rmmod failed" rmmod codectl

rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
