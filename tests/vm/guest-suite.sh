#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The codectl guest suite, run inside a QEMU guest (scripts/vm-run.sh) as
# root.  POSIX sh (dash or busybox ash) with busybox utilities and kmod.
#
#   guest-suite.sh [MODULE.ko [CONSUMER.ko [TESTMOD.ko]]]
#
# MODULE.ko is insmod'ed; without it `modprobe codectl` is used; if the
# module is already loaded it is used as it is.  TESTMOD.ko, the test
# module of tests/vm/testmod (codectl_test.ko: codectl's test facilities,
# /dev/codectl_test: deferred trace requests and records, the self-test,
# the NOFAULT walk), is loaded whenever codectl is, and unloaded before
# it (rmmod_codectl; refused while a process holds /dev/codectl_test
# open).  CONSUMER.ko, the test
# module of tests/vm/consumer (another module using codectl's exported
# deferred-unwind API), is loaded for the ABI tests as root (step 1b: rmmod
# codectl must be refused meanwhile) and unloaded after them.  codectl-abi-test,
# codectl-ioctl-fuzz and codectl-storm are looked for next to this script
# (or named by $CODECTL_ABI_TEST, $CODECTL_FUZZ, $CODECTL_STORM).  Steps:
#   1. load the module; /dev/codectl must be a character device, mode 0666;
#      its parameters and debugfs stats must exist
#   2. codectl-abi-test, all tests, as root
#   3. a subset again as uid/gid 65534 (codectl-abi-test -u)
#   3a. codectl-ioctl-fuzz: $CODECTL_FUZZ_CALLS calls (default 100000; the
#      full run is 1000000) from 4 threads, seed $CODECTL_FUZZ_SEED or new
#   3a'. decoder-fuzz: $CODECTL_DECODER_EXECS mutated SFrame sections
#      (default 300000) from the corpus in decoder-corpus/ next to this
#      script: the module's verdict (CHECK_SFRAME) equal to user space's
#   3b. codectl-storm: the lifecycle race storm for $CODECTL_STORM_SECONDS
#      (default 10)
#   3b'. the tracer hooks' walk in real NMIs (the self-test's REMOTE mode
#      runs it in each NMI that interrupts user code, and compares it with
#      the task-context walk) while a storm (with JIT tables appended)
#      and a loop of imports run beside it
#   3c. the unwinding tests: unwind/VARIANT/unwind-test for the variants
#      $CODECTL_UNWIND_VARIANTS (default "v1 v2 v3 fp": SFrame v1/v2/v3 from
#      binutils 2.40/2.44/2.47, and frame pointers), looked for under
#      $CODECTL_UNWIND_DIR (default: unwind/ next to this script); then
#      v1-v3 again with sframe_flat_max=0 (SFrame decoded in user memory),
#      and every variant again with CODECTL_UNWIND_NOFAULT (the tracer
#      hooks' walk: no faults, registrations under RCU)
#   4. no live object (registrations, mms, bytes, sets, works,
#      unwind_tasks, unwind_works; the test module's trace_records) left once
#      the test processes are gone; no fork failure, no unmap_nomem
#   4a. rmmod during a storm whose processes hold registrations with their
#      fds closed: rmmod works, the processes carry on, the kernel log
#      stays clean; insmod again and a short storm and test run work
#   4b. rmmod against storms of synchronous unwinds: refused while threads
#      unwind with their fds open; done between the calls of threads that
#      open the device for each call (they stop cleanly); kernel log clean;
#      insmod again
#   4c. rmmod with deferred unwinds in flight: refused while 8 threads
#      request (UNWIND_REQUEST) with their fd open and the self-test's
#      hrtimer and NMI request on the process; done once the process has
#      closed its fd, the self-test still armed on it (codectl_selftest_exit
#      disarms it, codectl_deferred_exit waits for the task_works queued);
#      the process carries on; kernel log clean; insmod again
#   4d. rmmod with discoveries queued on tasks asleep in the kernel
#      (rmmod-sleepers.sh: sched_switch sampled with call chains on every
#      CPU, as perf record -e sched:sched_switch -a -g, then sleep 100000):
#      rmmod returns within 30 s, leaving the works to their tasks; the
#      kernel log stays clean after they exit; insmod again
#   5. rmmod refused while a process holds /dev/codectl open; rmmod works
#      while a live process holds registrations (with its fd closed): the
#      process carries on and sees none from the reloaded module; rmmod
#      after the tests removes the device; insmod again; a short run; rmmod
#   6. no kernel warnings in dmesg
# An arm64 guest (scripts/check.sh vm-SERIES-arm64) runs it too, with its
# programs cross-built and CODECTL_UNWIND_SKIP set: tests/vm/unwind's
# programs are x86-64's, and what needs them (3c, most of 3b', 3d-3g, 4b,
# one check of 5) is counted as skipped, with the reason.
# Output is TAP-like; the last line adds up every check and test:
# "N passed, N failed" (", N skipped" when any).  Exit status 1 on failure.

ko=${1:-}
consumer_ko=${2:-}
testmod_ko=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
abi_test=${CODECTL_ABI_TEST:-$here/codectl-abi-test}
fuzz=${CODECTL_FUZZ:-$here/codectl-ioctl-fuzz}
decoder_fuzz=$here/decoder-fuzz
storm=${CODECTL_STORM:-$here/codectl-storm}
unwind_dir=${CODECTL_UNWIND_DIR:-$here/unwind}
unwind_variants=${CODECTL_UNWIND_VARIANTS:-v1 v2 v3 fp}
dev=/dev/codectl
stats=/sys/kernel/debug/codectl/stats
params=/sys/module/codectl/parameters
tmp=${TMPDIR:-/tmp}/codectl-guest.$$
mkdir -p "$tmp"

# Tests that make sense without root (the others need to write module
# parameters or read debugfs, and would only skip; bounds_memcg_charge
# sets up a cgroup as root and registers as uid 65534 itself).
UNPRIV_TESTS="version version_counts params_access elf_register_query
elf_no_sframe elf_sframe_versions query_cursor query_buffers common_einval
common_e2big common_efault info_at_page_end elf_einval elf_efault_text
elf_efault_sframe elf_efault_pointers elf_strings elf_build_id elf_enoexec
sframe_validation check_sframe eexist unregister enotty jit_register jit_einval jit_efault import_errors abi_version_options abi_import_sizes abi_ioctl_sizes abi_no_test_facilities fd_independence
fork_isolation concurrent_same_range vfork_exec fork_inherits fork_independent
fork_grandchild fork_signal_pending vfork_shares clone_vm_shares munmap_text
munmap_sframe munmap_jit_table munmap_partial mremap_move mremap_shrink
map_fixed_over mprotect_keeps madvise_keeps munmap_unrelated_keeps
register_munmap_race unregister_after_drop_enoent deferred_request deferred_cookies
deferred_read deferred_blocking_read deferred_overflow deferred_threads
deferred_selftest_errors hook_stats synth_register query_origin query_summary
query_pid_self query_pid_child query_pid_esrch query_pid_perm query_pid_maps_fd
bounds_flat_expansion bounds_sframe_walk bounds_jit_chain bounds_jit_torn"

# debugfs counters of events, not of live objects: they only grow.
# fork_failures and unmap_nomem must stay 0 all the same.
EVENT_COUNTERS="unmap_drops fork_failures unmap_nomem"

# ok, not_ok, check NAME REASON-IF-FALSE COMMAND...; $n, $pass, $fail
. "$here/tap.sh"
skip=0

# CODECTL_UNWIND_SKIP=REASON: this guest has no tests/vm/unwind programs
# (disc-test, unwind-test, the tracee and their libraries: an arm64 guest,
# for they are built for x86-64 only); every check that needs them is not
# run, and counted as skipped with REASON.
uw_skip=${CODECTL_UNWIND_SKIP:-}
# CODECTL_ABI_LEAVE_OUT="TEST...": codectl-abi-test's tests left out of
# the run as root (arm64: demand_queue, which maps tests/vm/unwind's
# libdiscnosf.so), each counted as skipped with CODECTL_UNWIND_SKIP.
abi_leave_out=${CODECTL_ABI_LEAVE_OUT:-}

# skipped N WHAT: N checks of WHAT not run: counted, and said with why.
skipped() {
	skip=$((skip + $1))
	echo "# SKIP $1: $2 (${uw_skip:-no reason given})"
}

loaded() {
	grep -q '^codectl ' /proc/modules
}

tloaded() {
	grep -q '^codectl_test ' /proc/modules
}

# The test module, when given and not loaded (codectl must be).
tload() {
	[ -z "$testmod_ko" ] || tloaded || insmod "$testmod_ko"
}

load() {
	if [ -n "$ko" ]; then
		insmod "$ko" || return
	else
		modprobe codectl || return
	fi
	tload
}

# rmmod codectl, the test module (which uses it) first: that one is
# refused while a process holds /dev/codectl_test open, and then codectl's
# rmmod is not tried.
rmmod_codectl() {
	if tloaded; then
		rmmod codectl_test || return
	fi
	rmmod codectl
}

# After an rmmod step: load the module again unless it is loaded, with
# ok / not ok "module loads again after LABEL".  Returns 0 when it was
# loaded here, for the caller's short checks after reloading.
reload_after() {
	if loaded; then
		tload
		return 1
	fi
	if out=$(load 2>&1) && wait_dev; then
		ok "module loads again after $1"
		return 0
	fi
	not_ok "module loads again after $1" "$out"
	return 1
}

# Wait up to 5 s for the device node (devtmpfs).
wait_dev() {
	i=0
	while [ ! -c "$dev" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -c "$dev" ]
}

dev_mode() {
	stat -c %A "$dev" 2>/dev/null || ls -l "$dev" | cut -c1-10
}

stat_value() {
	sed -n "s/^$1[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p" "$stats" 2>/dev/null
}

is_event() {
	case " $EVENT_COUNTERS " in *" $1 "*) return 0 ;; esac
	return 1
}

# Every live-object counter (all lines of the file but EVENT_COUNTERS) is 0,
# but the shared tables the imports keep (debugfs imports: tables_kept,
# table_bytes).
live_zero() {
	[ -r "$stats" ] || return 1
	kt=$(sed -n 's/^tables_kept //p' /sys/kernel/debug/codectl/imports 2>/dev/null)
	kb=$(sed -n 's/^table_bytes //p' /sys/kernel/debug/codectl/imports 2>/dev/null)
	while read -r cname cvalue; do
		is_event "$cname" && continue
		case $cname in
		shared_tables) [ "$cvalue" = "${kt:-0}" ] || return 1 ;;
		shared_bytes) [ "$cvalue" = "${kb:-0}" ] || return 1 ;;
		*) [ "$cvalue" = 0 ] || return 1 ;;
		esac
	done <"$stats"
	[ -n "$(stat_value mms)" ]
}

# Wait up to 10 s until every live-object counter is 0 (teardown may wait
# for an RCU grace period).
stats_zero() {
	i=0
	while [ $i -lt 100 ]; do
		live_zero && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "# $stats after 10 s:"
	sed 's/^/#   /' "$stats"
	return 1
}

# The event counters that must not have counted anything since loading.
no_failure_events() {
	ff=$(stat_value fork_failures) un=$(stat_value unmap_nomem)
	[ "${ff:-0}" = 0 ] && [ "${un:-0}" = 0 ] && return 0
	echo "# fork_failures ${ff:-?}, unmap_nomem ${un:-?}"
	return 1
}

# run_prog LABEL PROGRAM ARGS...: run a TAP-like test program, add the
# counts of its last "N passed, N failed" line to ours.
run_prog() {
	label=$1 prog=$2
	shift 2
	pname=$(basename "$prog")
	echo "# === $pname $* ($label)"
	{ "$prog" "$@"; echo $? >"$tmp/rc"; } 2>&1 | tee "$tmp/out"
	rc=$(cat "$tmp/rc")
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -n 1)
	if [ -z "$last" ]; then
		not_ok "$pname ($label)" "no summary line (exit status $rc)"
		return
	fi
	p=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$last" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + ${s:-0}))
	echo "# $pname ($label): $last, exit status $rc"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		not_ok "$pname ($label)" "exit status $rc without a failed test"
	elif [ "$rc" -eq 0 ] && [ "$f" -ne 0 ]; then
		not_ok "$pname ($label)" "exit status 0 with $f failed tests"
	fi
}

# run_suite LABEL ARGS...: run codectl-abi-test, add its counts to ours.
run_suite() {
	label=$1
	shift
	run_prog "$label" "$abi_test" "$@"
}

# Seconds since the epoch, for the timings.
now() {
	date +%s
}
t_start=$(now)

echo "# codectl guest suite on $(uname -r)"

# --- 1. load ---------------------------------------------------------------
if loaded; then
	echo "# codectl already loaded: using it"
	ok "module loaded"
elif out=$(load 2>&1); then
	ok "module loads (${ko:-modprobe codectl})"
else
	not_ok "module loads (${ko:-modprobe codectl})" "$out"
fi
if [ -n "$testmod_ko" ]; then
	out=$(tload 2>&1)
	check "the test module codectl_test loads (${testmod_ko##*/})" "$out" tloaded
fi
check "$dev is a character device" "missing" wait_dev
mode=$(dev_mode)
check "$dev mode crw-rw-rw-" "mode is '$mode'" [ "$mode" = crw-rw-rw- ]
check "parameters max_registrations, max_bytes, validate_sframe exist" \
	"missing in $params" [ -f "$params/max_registrations" -a \
	-f "$params/max_bytes" -a -f "$params/validate_sframe" ]
check "debugfs stats list mms, registrations, bytes, sets, works" "missing or incomplete: $stats" \
	[ -n "$(stat_value mms)" -a -n "$(stat_value registrations)" -a -n "$(stat_value bytes)" \
	  -a -n "$(stat_value sets)" -a -n "$(stat_value works)" ]
echo "# $stats: $(tr '\n' ' ' <"$stats" 2>/dev/null)"

# --- 1b. another module using codectl's exported API ---------------------------
if [ -n "$consumer_ko" ]; then
	if out=$(insmod "$consumer_ko" 2>&1); then
		ok "the consumer module (exported deferred-unwind API) loads"
		check "rmmod codectl refused while the consumer module uses it" \
			"rmmod succeeded" sh -c '! rmmod codectl 2>/dev/null'
	else
		not_ok "the consumer module (exported deferred-unwind API) loads" "$out"
	fi
fi

# --- 2, 3. the ABI tests -----------------------------------------------------
if [ ! -x "$abi_test" ]; then
	not_ok "codectl-abi-test present" "$abi_test not found"
else
	if [ -n "$abi_leave_out" ]; then
		lo=$(echo "$abi_leave_out" | tr -s ' ' '\n')
		tests=$("$abi_test" -l | awk '{ print $1 }' | grep -v -x -F "$lo")
		# shellcheck disable=SC2086 # word splitting wanted
		run_suite root $tests
		skipped "$(echo "$lo" | wc -l)" "codectl-abi-test $(echo "$lo" | tr '\n' ' ')as root"
	else
		run_suite root
	fi
	# shellcheck disable=SC2086 # word splitting wanted
	run_suite "uid 65534" -u 65534 $UNPRIV_TESTS
fi
if [ -n "$consumer_ko" ] && grep -q '^codectl_consumer ' /proc/modules; then
	check "the consumer module unloads (cancel: no callback after)" \
		"rmmod codectl_consumer failed" rmmod codectl_consumer
fi
echo "# time: ABI tests done after $(($(now) - t_start)) s"

# --- 3a, 3b. the ioctl fuzzer and the race storm ------------------------------
if [ -x "$fuzz" ]; then
	run_prog "ioctl fuzzer" "$fuzz" -n "${CODECTL_FUZZ_CALLS:-100000}" \
		${CODECTL_FUZZ_SEED:+-s "$CODECTL_FUZZ_SEED"}
else
	not_ok "codectl-ioctl-fuzz present" "$fuzz not found"
fi
if [ -x "$decoder_fuzz" ]; then
	run_prog "decoder fuzzer" "$decoder_fuzz" -n "${CODECTL_DECODER_EXECS:-300000}" \
		"$here/decoder-corpus"/*
else
	not_ok "decoder-fuzz present" "$decoder_fuzz not found"
fi
echo "# time: fuzzers done after $(($(now) - t_start)) s"
if [ -x "$storm" ]; then
	run_prog "race storm" "$storm" -t "${CODECTL_STORM_SECONDS:-10}"
else
	not_ok "codectl-storm present" "$storm not found"
fi
echo "# time: storm done after $(($(now) - t_start)) s"

# --- 3b'. the tracer hooks' walk in real NMIs, beside a storm ------------------
# The self-test's REMOTE mode sends NMIs that interrupt the test's user
# code; each runs a tracer hook's own walk there (perf_callchain_user's and
# arch_stack_walk_user's replacements in turn) and its callers are
# compared with the task-context walk's, while the race storm (-B: its
# counters are shared with the self-test) registers, forks, execs,
# appends to JIT tables and unmaps registered memory in other processes,
# and a loop imports an object (libdiscnosf.so, synthesised by the codectl
# tool) and removes the import again.  Lockdep and atomic-sleep reports
# would fail the run (vm-run's verdict on the kernel log).
if [ -x "$abi_test" ] && [ -x "$storm" ]; then
	"$storm" -B -t 8 >"$tmp/nmi-storm.out" 2>&1 &
	storm_pid=$!
	rm -f "$tmp/imports.stop"
	[ -z "$uw_skip" ] || touch "$tmp/imports.stop"
	(
		i=0 ok=0 so=$unwind_dir/disc/libdiscnosf.so
		while [ ! -e "$tmp/imports.stop" ] && [ $i -lt 1000 ]; do
			i=$((i + 1))
			codectl import "$so" >/dev/null 2>&1 &&
				codectl import --remove "$so" >/dev/null 2>&1 &&
				ok=$((ok + 1))
		done
		echo "$ok of $i"
	) >"$tmp/imports.out" 2>&1 &
	imports_pid=$!
	run_prog "hooks' walk in NMIs beside a storm" "$abi_test" \
		deferred_selftest_remote
	touch "$tmp/imports.stop"
	wait $imports_pid
	if [ -n "$uw_skip" ]; then
		skipped 1 "imports of libdiscnosf.so made and removed beside the NMI walks"
	else
		check "imports made and removed beside the NMI walks" \
			"$(cat "$tmp/imports.out")" \
			sh -c '[ "${1%% of *}" -gt 0 ] && [ "${1%% of *}" = "${1##* of }" ]' \
			sh "$(cat "$tmp/imports.out")"
	fi
	wait $storm_pid
	rc=$?
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/nmi-storm.out" | tail -n 1)
	check "the storm beside the NMI walks passed" \
		"exit status $rc, '$last': $(grep '^not ok' "$tmp/nmi-storm.out")" \
		[ "$rc" = 0 -a -n "$last" ]
	grep -E '^(perf_callchain_user|arch_stack_walk_user) (calls|stops)' \
		/sys/kernel/debug/codectl/hooks | sed 's/^/# /'
fi

# --- 3c. the unwinding tests --------------------------------------------------
if [ -n "$uw_skip" ]; then
	nv=$(echo "$unwind_variants" | wc -w)
	skipped $((2 * nv + 3)) "runs of unwind-test (each a set of tests): $unwind_variants; v1-v3 decoded in user memory; $unwind_variants without faulting"
	unwind_variants=
fi
for v in $unwind_variants; do
	if [ -x "$unwind_dir/$v/unwind-test" ]; then
		run_prog "unwind $v" "$unwind_dir/$v/unwind-test"
	else
		not_ok "unwind $v: unwind-test present" "$unwind_dir/$v/unwind-test not found"
	fi
done
# Again with every SFrame section decoded in user memory at each unwind,
# the path of sections larger than sframe_flat_max (no flat table).
if [ -w "$params/sframe_flat_max" ]; then
	flat_max=$(cat "$params/sframe_flat_max")
	echo 0 >"$params/sframe_flat_max"
	for v in v1 v2 v3; do
		[ -z "$uw_skip" ] && [ -x "$unwind_dir/$v/unwind-test" ] &&
			run_prog "unwind $v, SFrame decoded in user memory" \
				"$unwind_dir/$v/unwind-test"
	done
	echo "$flat_max" >"$params/sframe_flat_max"
else
	not_ok "sframe_flat_max writable" "$params/sframe_flat_max"
fi
# Again walked as the tracer hooks walk from NMI and interrupts: without
# faulting, the registrations under RCU (CODECTL_UNWIND_NOFAULT = 8).
export UW_EXTRA_FLAGS=8
for v in $unwind_variants; do
	[ -x "$unwind_dir/$v/unwind-test" ] &&
		run_prog "unwind $v, walked without faulting" \
			"$unwind_dir/$v/unwind-test"
done
unset UW_EXTRA_FLAGS
echo "# time: unwinding tests done after $(($(now) - t_start)) s"

# --- 3d. discovery --------------------------------------------------------------
# disc/disc-test registers nothing itself: the module finds its SFrame.
discf=/sys/kernel/debug/codectl/discover
disc=$unwind_dir/disc/disc-test
disc_value() {
	sed -n "s/^$1 \([0-9]*\)$/\1/p" "$discf" 2>/dev/null
}
if [ -n "$uw_skip" ]; then
	skipped 8 "discovery tests (disc-test: discovery, its negative control, its fuzzer, hostile files for codectl import, shared tables and their negative control)"
elif [ -x "$disc" ] && [ -w "$params/discover" ]; then
	check "discovery on by default" "discover is $(cat "$params/discover")" \
		[ "$(cat "$params/discover")" = Y ]
	ex0=$(disc_value examined) ns0=$(disc_value ns)
	run_prog "discovery" "$disc"
	ex1=$(disc_value examined) ns1=$(disc_value ns)
	[ "$ex1" -gt "$ex0" ] &&
		echo "# discovery cost: $((ex1 - ex0)) objects examined in $(((ns1 - ns0) / 1000)) us, $(((ns1 - ns0) / (ex1 - ex0) / 1000)) us per object"
	# The same tests without the mechanism must fail.
	echo N >"$params/discover"
	if "$disc" first_then_complete dlclose_dlopen exec >"$tmp/disc0.out" 2>&1; then
		not_ok "disc-test fails with discover=N (negative control)" "it passed"
	else
		ok "disc-test fails with discover=N (negative control)"
	fi
	echo Y >"$params/discover"
	ex0=$(disc_value examined)
	t0=$(now)
	run_prog "discovery fuzzer (corrupted ELF files mapped executable)" \
		"$disc" --fuzz "${CODECTL_DISC_FUZZ:-300}" "${CODECTL_DISC_SEED:-$(date +%s)}"
	echo "# discovery fuzzer: $(( $(disc_value examined) - ex0 )) objects examined in $(($(now) - t0)) s"
	echo "# $discf: $(tr '\n' ' ' <"$discf")"

	# Hostile object files for codectl import: corrupted copies of
	# libdiscnosf.so (headers, segments, .eh_frame's CIEs and FDEs,
	# truncation) synthesised by libdw and read by the module's import;
	# each is imported or refused, the tool never dies of a signal (and
	# the kernel log stays clean: vm-run's verdict).
	if command -v codectl >/dev/null; then
		rm -rf "$tmp/corrupt"
		mkdir -p "$tmp/corrupt"
		seed=${CODECTL_IMPORT_SEED:-$(date +%s)}
		"$disc" --corrupt "${CODECTL_IMPORT_FUZZ:-200}" "$seed" "$tmp/corrupt"
		imp_ok=0 imp_no=0 imp_bad=0 t0=$(now)
		for f in "$tmp/corrupt"/*; do
			codectl import "$f" >/dev/null 2>"$tmp/corrupt.err"
			case $? in
			0) imp_ok=$((imp_ok + 1)) ;;
			1) imp_no=$((imp_no + 1)) ;;
			*) imp_bad=$((imp_bad + 1))
			   echo "# $f (seed $seed): $(tail -n 1 "$tmp/corrupt.err")" ;;
			esac
		done
		codectl import --clear
		rm -rf "$tmp/corrupt"
		echo "# hostile files: $imp_ok imported, $imp_no refused, $imp_bad crashed, in $(($(now) - t0)) s"
		check "codectl import of hostile object files: imported or refused, never a crash" \
			"$imp_bad crashed (seed $seed)" [ "$imp_bad" = 0 -a "$((imp_ok + imp_no))" -gt 0 ]
	fi

	# Shared tables: N processes of one binary (fresh address spaces).
	# hold_run N: start them, wait for all to be ready; leaves $dh running.
	hold_run() {
		rm -f "$tmp/dhold"
		# Made here: the child opens it only once the fifo has a
		# writer, and the wait below reads it from the start.
		: >"$tmp/dhold.out"
		mkfifo "$tmp/dhold"
		"$disc" --hold "$1" <"$tmp/dhold" >"$tmp/dhold.out" 2>&1 &
		dh=$!
		exec 8>"$tmp/dhold"
		i=0
		while [ "$(grep -c '^# held' "$tmp/dhold.out")" -lt "$1" ] && [ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		[ "$(grep -c '^# held' "$tmp/dhold.out")" -eq "$1" ]
	}
	hold_end() {
		exec 8>&-
		wait $dh
	}
	nh=${CODECTL_SHARE_PROCS:-8}
	h0=$(disc_value shared_hits)
	if hold_run "$nh"; then
		st=$(stat_value shared_tables) sb=$(stat_value shared_bytes)
		by=$(stat_value bytes) h1=$(disc_value shared_hits)
		echo "# $nh processes: shared_tables $st shared_bytes $sb, bytes charged $by in all ($((by / nh)) per process), shared_hits +$((h1 - h0))"
		echo "# memory: $by bytes charged (what $nh unshared copies would hold), $((by - (nh - 1) * sb)) held with sharing"
		check "$nh processes of one binary share its 2 tables (program, plugin)" \
			"shared_tables $st, shared_hits +$((h1 - h0))" \
			[ "$st" -eq 2 -a $((h1 - h0)) -ge $((2 * (nh - 1))) ]
	else
		not_ok "$nh disc-test --hold processes get ready" "$(tail -n 3 "$tmp/dhold.out" | tr '\n' ' ')"
	fi
	hold_end
	check "shared tables freed after the last of them exited" \
		"shared_tables $(stat_value shared_tables)" stats_zero
	# Without the mechanism (share=N) the same processes share nothing.
	echo N >"$params/share"
	h0=$(disc_value shared_hits)
	hold_run 2
	st=$(stat_value shared_tables) h1=$(disc_value shared_hits)
	hold_end
	echo Y >"$params/share"
	check "with share=N, 2 processes share no table (negative control)" \
		"shared_tables $st, shared_hits +$((h1 - h0))" [ "$st" -eq 0 -a "$h1" = "$h0" ]
elif [ -x "$disc" ]; then
	not_ok "parameter discover writable" "$params/discover"
else
	not_ok "disc-test present" "$disc not found"
fi
echo "# time: discovery tests done after $(($(now) - t_start)) s"

# --- 3e. codectl list: another process's registrations ---------------------
# A program that dlopen()ed two libraries (one with SFrame, one without)
# and registered every loaded object: `codectl list PID` must show exactly
# its executable mappings of /proc/PID/maps (the vdso's included): one
# registration starting at each (page-rounded) and ending inside it, all
# registered, the SFrame library with its section.
tracee=$unwind_dir/v3/tracee
uwlib=$unwind_dir/v3/libuwlib.so nosf=$unwind_dir/disc/libdiscnosf.so
# list_ranges FILE: "start end" of the registrations of a `codectl list`,
# the start rounded down to its page, the end up.
list_ranges() {
	sed -n 's/^\([0-9a-f]\{16\}\)-\([0-9a-f]\{16\}\) .*/\1 \2/p' "$1" |
	while read -r s e; do
		printf '%x %x\n' $((0x$s & ~4095)) $(((0x$e + 4095) & ~4095))
	done | sort
}
# maps_ranges PID: "start end" of its r-xp mappings with a name (files,
# [vdso]).
maps_ranges() {
	awk '$2 == "r-xp" && $6 != "" { print $1 }' "/proc/$1/maps" |
	while IFS=- read -r s e; do
		printf '%x %x\n' $((0x$s)) $((0x$e))
	done | sort
}
# list_within LIST MAPS: every registration ends inside the mapping that
# starts where it does (both sorted, the same starts).
list_within() {
	while read -r ls le <&3; do
		read -r ms me <&4 && [ "$ls" = "$ms" ] &&
			[ $((0x$le)) -le $((0x$me)) ] || return 1
	done 3<"$1" 4<"$2"
}
if [ -n "$uw_skip" ]; then
	skipped 4 "codectl list PID of the tracee with libuwlib.so and libdiscnosf.so"
elif ! command -v codectl >/dev/null 2>&1 || [ ! -x "$tracee" ]; then
	not_ok "codectl and $tracee present" "missing"
else
	"$tracee" -r -s -d "$uwlib" -d "$nosf" 120 2>"$tmp/tracee.err" &
	tp=$!
	i=0
	while ! grep -q '^tracee: ready' "$tmp/tracee.err" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "# $(head -n 1 "$tmp/tracee.err")"
	codectl list "$tp" >"$tmp/list" 2>&1
	lrc=$?
	sed 's/^/#   /' "$tmp/list"
	list_ranges "$tmp/list" >"$tmp/list.r"
	maps_ranges "$tp" >"$tmp/maps.r"
	nl=$(wc -l <"$tmp/list.r") nm=$(wc -l <"$tmp/maps.r")
	list_same() {
		[ "$lrc" = 0 ] && [ "$nm" -ge 6 ] && [ "$nl" = "$nm" ] &&
		list_within "$tmp/list.r" "$tmp/maps.r"
	}
	check "codectl list PID: exactly the $nm executable mappings of /proc/PID/maps" \
		"exit status $lrc, $nl registrations; maps: $(tr '\n' ' ' <"$tmp/maps.r")" \
		list_same
	list_fields() {
		! grep '^[0-9a-f]\{16\}-' "$tmp/list" | grep -qv ' registered ' &&
		grep -q ' v3 .* flat .*libuwlib\.so$' "$tmp/list" &&
		grep -q ' - .*libdiscnosf\.so$' "$tmp/list"
	}
	check "codectl list PID: all registered, the dlopen()ed libraries with (v3, flat) and without SFrame" \
		"see the list above" list_fields
	kill "$tp"
	wait "$tp" 2>/dev/null
	# The process is gone: no such process, exit status 1.
	codectl list "$tp" >"$tmp/list" 2>&1
	lrc=$?
	list_esrch() {
		[ "$lrc" = 1 ] && grep -q 'no such process' "$tmp/list"
	}
	check "codectl list of a process that exited: 'no such process', exit status 1" \
		"exit status $lrc: $(cat "$tmp/list")" list_esrch
	codectl list 2 >"$tmp/list" 2>&1
	lrc=$?
	check "codectl list 2 (kthreadd, a kernel thread): 'no such process'" \
		"exit status $lrc: $(cat "$tmp/list")" list_esrch
fi

# --- 3f. imports ----------------------------------------------------------------
# codectl import synthesises an object's SFrame from its .eh_frame and hands
# it to the module (CODECTL_IOC_IMPORT); discovery then uses it in every
# process (disc-test imported; without the import that test fails).
impf=/sys/kernel/debug/codectl/imports
nosf=$unwind_dir/disc/libdiscnosf.so
imports_n() {
	sed -n 's/^imports \([0-9]*\)$/\1/p' "$impf"
}
if [ -n "$uw_skip" ] && command -v codectl >/dev/null; then
	# What needs no disc-test: libc (Debian's, without SFrame) imported,
	# listed and removed; a non-ELF file refused.
	libc=$(for d in /lib/aarch64-linux-gnu /lib/x86_64-linux-gnu; do
		[ -e "$d/libc.so.6" ] && echo "$d/libc.so.6"; done | head -n 1)
	out=$(codectl import "$libc" 2>&1)
	echo "# $out"
	check "codectl import of libc (no SFrame), listed in debugfs imports" \
		"$out; $(cat "$impf")" sh -c 'echo "$1" | grep -q "^imported " &&
			grep -q "libc.so.6$" "$2"' sh "$out" "$impf"
	out=$(codectl import /dev/null 2>&1)
	check "codectl import of a non-ELF file fails, saying why" "$out" \
		sh -c '! codectl import /dev/null 2>/dev/null && echo "$1" | grep -q "Exec format"' sh "$out"
	check "codectl import --remove drops libc's import" "imports $(imports_n)" \
		sh -c 'codectl import --remove "$1" && [ "$(sed -n "s/^imports //p" "$2")" = 0 ]' sh "$libc" "$impf"
	skipped 12 "codectl import of libdiscnosf.so used by disc-test, and codectl import --system with disc-test's shared tables"
elif [ -n "$uw_skip" ]; then
	not_ok "codectl present" "missing"
elif [ -x "$disc" ] && [ -e "$nosf" ] && command -v codectl >/dev/null; then
	out=$(codectl import "$nosf" 2>&1)
	check "codectl import of an object without SFrame" "$out" \
		sh -c 'echo "$1" | grep -q "^imported "' sh "$out"
	echo "# $out"
	check "debugfs imports lists it" "$(cat "$impf")" grep -q "libdiscnosf.so$" "$impf"
	im0=$(disc_value imported)
	run_prog "discovery uses the imported section" "$disc" imported
	check "discover counts the registration with an imported section" \
		"imported $im0 -> $(disc_value imported)" [ "$(disc_value imported)" -gt "$im0" ]
	out=$(codectl import "$nosf" 2>&1)
	check "a second import of the file replaces the first" \
		"$out; imports $(imports_n)" [ "$(imports_n)" = 1 ]
	out=$(codectl import "$disc" 2>&1)
	check "an object with its own SFrame is skipped, not imported" \
		"$out; imports $(imports_n)" sh -c '[ "$(sed -n "s/^imports //p" "$1")" = 1 ] &&
			echo "$2" | grep -q "own SFrame"' sh "$impf" "$out"
	out=$(codectl import /dev/null 2>&1)
	check "codectl import of a non-ELF file fails, saying why" "$out" \
		sh -c '! codectl import /dev/null 2>/dev/null && echo "$1" | grep -q "Exec format"' sh "$out"
	check "codectl import --remove drops it" "imports $(imports_n)" \
		sh -c 'codectl import --remove "$1" && [ "$(sed -n "s/^imports //p" "$2")" = 0 ]' sh "$nosf" "$impf"
	if "$disc" imported >"$tmp/imp0.out" 2>&1; then
		not_ok "disc-test imported fails without the import (negative control)" "it passed"
	else
		ok "disc-test imported fails without the import (negative control)"
	fi
	# A process that discovered the object before the import gets it.
	rm -f "$tmp/late" "$tmp/late.out"
	mkfifo "$tmp/late"
	"$disc" --late-import <"$tmp/late" >"$tmp/late.out" 2>&1 &
	lp=$!
	exec 9>"$tmp/late"
	i=0
	while ! grep -q '^# ready' "$tmp/late.out" && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	up0=$(disc_value upgraded)
	codectl import "$nosf" >/dev/null 2>&1
	echo go >&9
	exec 9>&-
	wait $lp
	cat "$tmp/late.out"
	last=$(grep -E '^[0-9]+ passed' "$tmp/late.out" | tail -n 1)
	check "an import after discovery: the running process's registration replaced" \
		"${last:-no summary}; upgraded $up0 -> $(disc_value upgraded)" \
		[ "$last" = "1 passed, 0 failed" -a "$(disc_value upgraded)" -gt "$up0" ]
	codectl import --remove "$nosf"
	# Every library of ld.so.cache (ldconfig builds it from the guest's).
	if command -v ldconfig >/dev/null && ldconfig 2>/dev/null; then
		t0=$(now)
		out=$(codectl import --system 2>&1)
		echo "# $(echo "$out" | tail -n 1) ($(($(now) - t0)) s in the guest)"
		check "codectl import --system: libc imported, no failure" "$out" \
			sh -c 'echo "$1" | grep -q " 0 failed" && grep -q "libc.so.6$" "$2"' sh "$out" "$impf"
		echo "# $impf: $(tail -n 2 "$impf" | tr '\n' ' ')"
		codectl import --clear
		check "codectl import --clear drops every import" "imports $(imports_n)" \
			[ "$(imports_n)" = 0 ]
		# Kept for the unload tests below: rmmod with imports held.
		codectl import --system >/dev/null 2>&1
		# Imported sections are shared across processes like the
		# files' own: the program, its plugin, libc and the others.
		if command -v hold_run >/dev/null; then
			im0=$(disc_value imported) h0=$(disc_value shared_hits)
			hold_run 2
			st=$(stat_value shared_tables) im1=$(disc_value imported)
			h1=$(disc_value shared_hits)
			hold_end
			check "2 processes with imported libraries share their tables" \
				"shared_tables $st, imported +$((im1 - im0)), shared_hits +$((h1 - h0))" \
				[ "$st" -ge 3 -a $((im1 - im0)) -ge 2 -a $((h1 - h0)) -ge 3 ]
			# Each import keeps the table built from it: with the
			# processes gone, the tables stay, and a new process
			# attaches to them (before: freed with the last
			# process, built again by the next; bench-fork's
			# short processes each paid for libc's).
			stats_zero || :
			st0=$(stat_value shared_tables) h0=$(disc_value shared_hits)
			hold_run 1
			h1=$(disc_value shared_hits)
			hold_end
			check "imports keep their tables: kept with no process left, a new process attaches" \
				"mms $(stat_value mms), shared_tables $st0; a new process: shared_hits +$((h1 - h0)); $(grep -E '^(tables_kept|table_bytes|tables_unkept) ' "$impf" | tr '\n' ' ')" \
				[ "$st0" -ge 2 -a $((h1 - h0)) -ge 2 ]
			# The same with every imported section larger than
			# sframe_flat_max: kernel copies, shared (before:
			# refused, EFBIG, the libraries without rules).
			fm=$(cat "$params/sframe_flat_max")
			echo 4096 >"$params/sframe_flat_max"
			im0=$(disc_value imported) h0=$(disc_value shared_hits)
			hold_run 2
			st=$(stat_value shared_tables) im1=$(disc_value imported)
			h1=$(disc_value shared_hits)
			kc=$(codectl list "$dh" 2>&1 | grep -c ' kernel ')
			hold_end
			echo "$fm" >"$params/sframe_flat_max"
			check "imported sections over sframe_flat_max: kernel copies, shared by 2 processes" \
				"shared_tables $st, imported +$((im1 - im0)), shared_hits +$((h1 - h0)), $kc registrations of the first decoded in a kernel copy" \
				[ "$st" -ge 3 -a $((im1 - im0)) -ge 2 -a $((h1 - h0)) -ge 3 -a "$kc" -ge 2 ]
		fi
	else
		not_ok "ldconfig builds /etc/ld.so.cache in the guest" "no ldconfig"
	fi
else
	not_ok "codectl import tests can run" "disc-test, $nosf or codectl missing"
fi
echo "# time: import tests done after $(($(now) - t_start)) s"

# --- 3g. LD_PRELOAD=libcodectl-preload.so --------------------------------------
# With discover=N nothing else registers: preload-test sees what the
# preload module registered at start and at dlopen; its CODECTL_DEBUG
# lines show it unregistering at the last dlclose.  Without the preload
# module every check fails.
preload=/lib/codectl/libcodectl-preload.so
ptest=$unwind_dir/disc/preload-test
if [ -n "$uw_skip" ]; then
	skipped 3 "LD_PRELOAD=libcodectl-preload.so with preload-test"
elif [ -e "$preload" ] && [ -x "$ptest" ]; then
	echo N >"$params/discover"
	CODECTL_DEBUG=1 LD_PRELOAD=$preload "$ptest" 2>"$tmp/preload.err" >"$tmp/preload.out"
	cat "$tmp/preload.out"
	last=$(grep -E '^[0-9]+ passed' "$tmp/preload.out" | tail -n 1)
	check "LD_PRELOAD=libcodectl-preload.so: registered at start and at dlopen" \
		"${last:-no summary}" [ "$last" = "5 passed, 0 failed" ]
	check "libcodectl-preload.so unregisters at the last dlclose" \
		"$(grep -c unregistered "$tmp/preload.err") unregistrations" \
		sh -c '[ "$(grep -c "libdiscnosf.so: unregistered" "$1")" = 1 ] &&
			[ "$(grep -c "libdiscplug.so: unregistered" "$1")" = 1 ]' sh "$tmp/preload.err"
	if "$ptest" >"$tmp/preload0.out" 2>&1; then
		not_ok "preload-test fails without the preload module (negative control)" "it passed"
	else
		ok "preload-test fails without the preload module (negative control)"
	fi
	echo Y >"$params/discover"
else
	not_ok "the preload tests can run" "$preload or $ptest missing"
fi

# --- 4. nothing left behind -------------------------------------------------
check "no live registrations, mms, bytes, sets, works, unwind_tasks, unwind_works or trace_records left after the test processes exited" \
	"counters not back to 0" stats_zero
check "no fork failures and no unmap_nomem events since the module was loaded" \
	"see the counters above" no_failure_events

# wait_for FILE PATTERN: up to 10 s for a line matching PATTERN in FILE.
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "$2" "$1" 2>/dev/null
}


# --- 4a. rmmod during a storm --------------------------------------------------
# What in the kernel log is a problem: splats, and stalls and lockups
# (an RCU stall report, rcu: INFO: ..., may come without a trace).
kernel_problems='BUG:|WARNING:|Oops|Call Trace:|Call trace:|general protection|UBSAN:|KASAN:|KFENCE:|ODEBUG:|refcount_t:|list_(add|del) corruption|rcu: INFO:|self-detected stall|soft lockup|hard LOCKUP|hung_task|blocked for more than'

problems() {
	dmesg | grep -E "$kernel_problems|codectl.*(leak|still)" | head -n 20
}

if [ -x "$storm" ] && loaded; then
	before=$(problems | wc -l)
	rm -f "$tmp/storm-r.out"
	"$storm" -r -t 6 >"$tmp/storm-r.out" 2>&1 &
	stormer=$!
	if wait_for "$tmp/storm-r.out" '^# ready'; then
		ok "storm in rmmod mode holds registrations with its fds closed"
		sleep 1
		if out=$(rmmod_codectl 2>&1); then
			ok "rmmod while the storm forks, unmaps, execs and exits"
		else
			not_ok "rmmod while the storm forks, unmaps, execs and exits" "$out"
		fi
		# Its check at the end needs the rmmod done (not only begun).
		kill -USR1 $stormer
	else
		not_ok "storm in rmmod mode holds registrations with its fds closed" \
			"it says: $(tail -n 3 "$tmp/storm-r.out" | tr '\n' ' ')"
	fi
	wait $stormer
	rc=$?
	sed 's/^/#   storm: /' "$tmp/storm-r.out" | grep -Ev '^#   storm: (ok|TAP)'
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/storm-r.out" | tail -n 1)
	check "the storm carried on and ended cleanly after rmmod" \
		"exit status $rc, '$last'" [ "$rc" = 0 -a -n "$last" ]
	after=$(problems | wc -l)
	check "kernel log clean after rmmod during the storm" \
		"$(problems | tail -n 1)" [ "$after" = "$before" ]
	if reload_after "rmmod during the storm"; then
		run_prog "short storm after reloading" "$storm" -t 2
		[ -x "$abi_test" ] &&
			run_suite "after rmmod during the storm" version fork_inherits munmap_text
		check "counters 0 after the short runs" "counters not back to 0" stats_zero
	fi
fi
echo "# time: rmmod during the storm done after $(($(now) - t_start)) s"

# --- 4b. rmmod against storms of unwinds ----------------------------------------
ustorm=$unwind_dir/v3/unwind-test
if [ -n "$uw_skip" ]; then
	skipped 6 "rmmod against storms of unwinds (unwind-test --storm)"
elif [ -x "$ustorm" ] && loaded; then
	before=$(problems | wc -l)
	# Every thread keeps its descriptor open: rmmod is refused throughout.
	rm -f "$tmp/ustorm.out"
	"$ustorm" --storm 60 >"$tmp/ustorm.out" 2>&1 &
	ustormer=$!
	if wait_for "$tmp/ustorm.out" '^# ready'; then
		refused=0
		while [ $refused -lt 5 ] && ! rmmod_codectl 2>/dev/null; do
			refused=$((refused + 1))
			sleep 0.3
		done
		check "rmmod refused 5 times while 8 threads unwind with their fds open" \
			"rmmod succeeded after $refused refusals" [ $refused = 5 ]
		kill -USR1 $ustormer
	else
		not_ok "unwind storm starts" "it says: $(tail -n 3 "$tmp/ustorm.out" | tr '\n' ' ')"
	fi
	wait $ustormer
	rc=$?
	sed 's/^/#   unwind storm: /' "$tmp/ustorm.out" | grep -Ev '^#   unwind storm: (ok|[0-9]+ passed)'
	check "that unwind storm ended cleanly, every trace right" "exit status $rc" [ "$rc" = 0 ]
	loaded || { load >/dev/null 2>&1 && wait_dev; }

	# Threads open the device for each call: rmmod gets in between calls,
	# racing with the calls in flight; the threads stop at their next open.
	rm -f "$tmp/ustorm.out"
	"$ustorm" --storm 8 --reopen >"$tmp/ustorm.out" 2>&1 &
	ustormer=$!
	if wait_for "$tmp/ustorm.out" '^# ready'; then
		sleep 1
		i=0 refused=0
		while [ $i -lt 200 ]; do
			if rmmod_codectl 2>/dev/null; then break; fi
			refused=$((refused + 1))
			i=$((i + 1))
			sleep 0.05
		done
		check "rmmod between the calls of threads reopening the device per unwind" \
			"refused $refused times in 10 s" [ $i -lt 200 ]
		echo "# rmmod refused $refused times first"
	else
		not_ok "reopening unwind storm starts" "it says: $(tail -n 3 "$tmp/ustorm.out" | tr '\n' ' ')"
	fi
	wait $ustormer
	rc=$?
	sed 's/^/#   unwind storm: /' "$tmp/ustorm.out" | grep -Ev '^#   unwind storm: (ok|[0-9]+ passed)'
	check "those threads stopped cleanly when the device went, every trace right" \
		"exit status $rc" [ "$rc" = 0 ]
	after=$(problems | wc -l)
	check "kernel log clean after rmmod against the unwind storms" \
		"$(problems | tail -n 1)" [ "$after" = "$before" ]
	reload_after "the unwind storms"
fi
echo "# time: unwind storms done after $(($(now) - t_start)) s"

# --- 4c. rmmod with deferred unwinds in flight --------------------------------
if [ -x "$abi_test" ] && loaded; then
	before=$(problems | wc -l)
	rm -f "$tmp/dhammer.out"
	"$abi_test" --deferred-hammer 600 >"$tmp/dhammer.out" 2>&1 &
	hammer=$!
	if wait_for "$tmp/dhammer.out" '^# hammering'; then
		echo "# $(grep '^# hammering' "$tmp/dhammer.out")"
		sleep 1
		if rmmod_codectl 2>/dev/null; then
			not_ok "rmmod refused while 8 threads request deferred unwinds" \
				"rmmod succeeded"
		else
			ok "rmmod refused while 8 threads request deferred unwinds"
		fi
		kill -USR1 $hammer	# now close the fd
		if wait_for "$tmp/dhammer.out" '^# closed'; then
			sleep 0.5
			if out=$(rmmod_codectl 2>&1); then
				ok "rmmod while the self-test requests on a process that closed its fd"
			else
				not_ok "rmmod while the self-test requests on a process that closed its fd" "$out"
			fi
			kill -USR2 $hammer	# now finish
		else
			not_ok "the deferred hammer closes its fd" \
				"it says: $(tail -n 3 "$tmp/dhammer.out" | tr '\n' ' ')"
		fi
	else
		not_ok "the deferred hammer starts" \
			"it says: $(tail -n 3 "$tmp/dhammer.out" | tr '\n' ' ')"
	fi
	kill -USR2 $hammer 2>/dev/null
	wait $hammer
	rc=$?
	grep -q '^# done' "$tmp/dhammer.out" || rc="$rc, no '# done'"
	check "that process carried on and exited cleanly" \
		"exit status $rc, it says: $(tail -n 1 "$tmp/dhammer.out")" [ "$rc" = 0 ]
	after=$(problems | wc -l)
	check "kernel log clean after rmmod with deferred unwinds in flight" \
		"$(problems | tail -n 1)" [ "$after" = "$before" ]
	if reload_after "rmmod with deferred unwinds in flight"; then
		run_suite "after rmmod with deferred unwinds" deferred_request deferred_selftest
		check "counters 0 after the deferred runs" "counters not back to 0" stats_zero
	fi
fi
echo "# time: rmmod with deferred unwinds done after $(($(now) - t_start)) s"

# --- 4d. rmmod with discoveries queued on sleeping tasks -----------------------
sleepers=$here/rmmod-sleepers.sh
if [ -x "$abi_test" ] && [ -r "$sleepers" ] && loaded; then
	run_prog "rmmod with works queued on sleeping tasks" sh "$sleepers" "$abi_test"
	if reload_after "rmmod with works queued on sleeping tasks"; then
		run_suite "after rmmod with works left to sleeping tasks" discovery_sigkill
		check "counters 0 after the discovery run" "counters not back to 0" stats_zero
	fi
elif [ ! -r "$sleepers" ]; then
	not_ok "rmmod-sleepers.sh present" "$sleepers not found"
fi
echo "# time: rmmod with works on sleeping tasks done after $(($(now) - t_start)) s"

# --- 5. unload and reload ----------------------------------------------------

# A live process with registrations but no open fd does not pin the module.
if [ -x "$abi_test" ] && loaded; then
	rm -f "$tmp/hold" "$tmp/hold.out"
	mkfifo "$tmp/hold"
	"$abi_test" --hold 100 <"$tmp/hold" >"$tmp/hold.out" 2>&1 &
	holder=$!
	exec 9>"$tmp/hold"
	wait_for "$tmp/hold.out" '^held'
	held=$(sed -n 's/^held //p' "$tmp/hold.out")
	check "a live process holds 100 registrations, its fd closed" \
		"holder says '$(head -n 1 "$tmp/hold.out")'" [ "$held" = 100 ]
	if out=$(rmmod_codectl 2>&1); then
		ok "rmmod while that process lives"
		if out=$(load 2>&1) && wait_dev; then
			ok "module loads again with that process alive"
		else
			not_ok "module loads again with that process alive" "$out"
		fi
	else
		not_ok "rmmod while that process lives" "$out"
	fi
	exec 9>&-
	wait $holder
	rc=$?
	after=$(sed -n 's/^after: //p' "$tmp/hold.out")
	check "that process exits cleanly afterwards" "exit status $rc" [ "$rc" = 0 ]
	check "it sees no registrations in the reloaded module" "it says '$after'" \
		[ "$after" = nr=0 ]
	check "counters 0 after that process exited" "counters not back to 0" stats_zero
fi

sleep 60 <"$dev" &
holder=$!
sleep 0.5
if out=$(rmmod_codectl 2>&1); then
	not_ok "rmmod refused while $dev is open" "rmmod succeeded"
	load >/dev/null 2>&1
	wait_dev
else
	ok "rmmod refused while $dev is open"
fi
kill $holder 2>/dev/null
wait $holder 2>/dev/null

if out=$(rmmod_codectl 2>&1); then
	ok "rmmod codectl after the tests"
	i=0
	while [ -e "$dev" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	check "$dev gone after rmmod" "still there" [ ! -e "$dev" ]
	check "/sys/module/codectl gone after rmmod" "still there" [ ! -e /sys/module/codectl ]
	# A process already running (its plugin mapped) when the module loads.
	late=
	[ -z "$uw_skip" ] ||
		skipped 1 "a process running before the module loaded (disc-test --late)"
	if [ -z "$uw_skip" ] && [ -x "$disc" ]; then
		rm -f "$tmp/late" "$tmp/late.out"
		mkfifo "$tmp/late"
		"$disc" --late <"$tmp/late" >"$tmp/late.out" 2>&1 &
		late=$!
		exec 7>"$tmp/late"
		wait_for "$tmp/late.out" '^# waiting'
	fi
	if out=$(load 2>&1); then
		ok "module loads again"
		if [ -n "$late" ]; then
			wait_dev
			echo go >&7
			exec 7>&-
			wait $late
			rc=$?
			check "a process running before the module loaded gets complete stacks after one fallback" \
				"exit status $rc: $(tail -n 1 "$tmp/late.out")" [ "$rc" = 0 ]
			late=
		fi
		check "$dev back after reloading" "missing" wait_dev
		mode=$(dev_mode)
		check "$dev mode crw-rw-rw- after reloading" "mode is '$mode'" \
			[ "$mode" = crw-rw-rw- ]
		[ -x "$abi_test" ] &&
			run_suite reloaded version elf_register_query jit_register unregister
		check "counters 0 after the reloaded run" "counters not back to 0" stats_zero
		if out=$(rmmod_codectl 2>&1); then
			ok "rmmod codectl after reloading"
		else
			not_ok "rmmod codectl after reloading" "$out"
		fi
	else
		not_ok "module loads again" "$out"
	fi
	if [ -n "$late" ]; then
		exec 7>&-
		kill "$late" 2>/dev/null
		wait "$late" 2>/dev/null
	fi
else
	not_ok "rmmod codectl after the tests" "$out"
fi

# --- 6. kernel log -----------------------------------------------------------
problems=$(dmesg | grep -E "$kernel_problems" | head -n 20)
check "no kernel warnings in dmesg" "$(echo "$problems" | head -n 1)" [ -z "$problems" ]
[ -z "$problems" ] || echo "$problems" | sed 's/^/#   /'

rm -rf "$tmp"
echo "# time: guest suite $(($(now) - t_start)) s"
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
