#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole test run ("make check"):
#   unit           libcodectl's host unit tests (cmocka)
#   checkpatch     checkpatch.pl --strict over the module and uapi
#   sframe         the SFrame decoder: equal to libsframe on every pc of
#                  48 fixtures built by real toolchains, validation,
#                  malformed corpus, bounded fuzzing (tests/sframe)
#   build-SERIES   the module builds for the stock kernel, clean under
#                  sparse (C=2 W=1)
#   compile-SERIES (default run only) the module for a kernel booted only
#                  by make check-kernels (5.10, 7.3, 6.12-rt, 7.3-rt,
#                  7.3-arm64: scripts/kernels.sh list compile), one make,
#                  clean under sparse (C=2 W=1), at the head of a lane;
#                  skipped, as 7.2, without its root (make
#                  toolchain-SERIES)
#   vm-SERIES      the guest suite on that kernel under QEMU (tests/vm),
#                  the unwinding tests of tests/vm/unwind included
#   tracers-SERIES perf, trace-cmd and bpftrace from Debian get complete
#                  user stacks through the module's hooks (tests/vm/tracers.sh)
#   ondemand-SERIES Debian's python3.11, perl, sqlite3 and xz under perf
#                  record -g with `codectl daemon` (SFrame synthesised on
#                  demand), against perf's dwarf unwinding; the daemon's
#                  faults (tests/vm/ondemand.sh)
#   runtimes-SERIES Debian's node and java under perf record -g without the
#                  module, with it alone and with the daemon: JIT frames
#                  kept, complete stacks, the no-harm check
#                  (tests/vm/runtimes.sh)
#   files-SERIES   the kernel's SFrame verdict on every fixture, in a guest
#   dkms-SERIES    DKMS add/build/install and modprobe in a guest (for
#                  an arm64 kernel dkms builds in the arm64 guest); not
#                  for 6.1 and 7.2, whose DKMS build the package test
#                  does (codectl-dkms installed with apt, dkms called by
#                  its postinst, the module loaded in a guest)
#   packages       the .debs built, installed with apt into scratch roots
#                  with 6.1's and 7.2's headers, dkms building the module,
#                  signed; loaded in a guest; upgraded; purged (and the
#                  RPMs' scriptlets) (scripts/pkg-test.sh)
#   packages-SERIES-arm64  the packages cross-built for arm64 (.debs and
#                  RPMs): architectures, AArch64 ELF files, the host
#                  packages' file lists; in an arm64 guest the packaged
#                  codectl and libcodectl.so.1 with the module
#                  (scripts/pkg-test-arm64.sh)
#
#   build-SERIES-arm64, vm-SERIES-arm64, tracers-SERIES-arm64,
#   files-SERIES-arm64,
#   ondemand-SERIES-arm64 (6.12-arm64 by default, 6.1-arm64 and
#                  7.2-arm64 when named: make check-arm64) the module
#                  cross-built for Debian's arm64 kernel, clean under
#                  sparse; in an arm64 guest (qemu-system-aarch64) the
#                  guest suite (tests/vm/guest-suite.sh, its programs
#                  cross-built; tests/vm/unwind's, x86-64 only, skipped
#                  and counted),
#                  Debian's arm64 perf (tests/vm/arm64-perf.sh),
#                  ondemand-SERIES-arm64: Debian's arm64 python3.11 under
#                  that perf with the codectl daemon cross-built
#                  (tests/vm/arm64-ondemand.sh), the fixtures' verdicts
#                  (check-files cross-built), and packages-SERIES-arm64
#                  (above), runtimes-SERIES-arm64: Debian's arm64 node
#                  (no java: not staged for arm64) as runtimes-SERIES
#
#   scripts/check.sh [--vm-only] [SERIES...]
#   CODECTL_STAGES="tracers ondemand" scripts/check.sh 6.12   (only those)
#   CODECTL_LANES=1 scripts/check.sh      (no two guests side by side)
#   scripts/check.sh --debug           ("make check-debug", not in "make check")
#   scripts/check.sh --distros         ("make check-distros", not in "make check")
#
# --debug [debug-6.12 | debug-6.12-rt]: the debug kernels, both unless one
# is named (scripts/debug-kernel.sh builds each first if it is not cached;
# long, see README; debug-6.12-rt is the PREEMPT_RT one, with
# PROVE_RAW_LOCK_NESTING), then on each build-debug-6.12,
# checkers-debug-6.12 (each checker's canary must be caught),
# vm-debug-6.12 (the guest suite, with the safety tests: codectl-abi-test's
# bounds_* and query_pid_* tests, rmmod-sleepers.sh), tracers-debug-6.12,
# fuzz-debug-6.12 (tests/vm/fuzz-soak.sh: 10 runs of the ioctl fuzzer
# of 100000 calls each, and 10000000 executions of the decoder fuzzer)
# and daemonfuzz-debug-6.12 (tests/vm/daemon-fuzz.sh: 20 rounds of 32
# hostile ELF objects through the daemon and the module's file reading,
# or DFZ_ROUNDS of DFZ_FILES; CODECTL_STAGES=daemonfuzz runs it on stock
# kernels, 2 rounds of 16);
# the tracer tests run beside the other two (two guests, two TCG threads),
# with the guests' time limits quadrupled.  Any lockdep, KASAN, KFENCE,
# UBSAN, debugobjects, atomic-sleep or kmemleak report in a guest's log
# fails its stage (scripts/vm-run.sh, KERNEL_PROBLEMS).
#
# --distros: the series fedora and ubuntu (scripts/distro-kernel.sh builds
# them first if they are not cached; long: see docs/distro-configs.md),
# Debian's kernel source built with Fedora's and Ubuntu's configurations,
# each trusting a test key as a machine owner's key (MOK).  On each, the
# stages of a stock kernel (build, vm, tracers, runtimes, ondemand, files,
# dkms: dkms-test.sh signs with the test key there, and the guest enforces
# signatures), and the lockdown stages (also when fedora or ubuntu is
# named):
#   signing-SERIES under module.sig_enforce=1 lockdown=integrity, only
#                  codectl.ko signed with the test key loads (unsigned, or
#                  signed by another key: refused) (tests/vm/lockdown-signing.sh)
#                  and codectl status names the mode; raised to
#                  confidentiality, status names tracefs, which is refused
#   vm-integrity-SERIES, tracers-integrity-SERIES, ondemand-integrity-SERIES
#                  the guest suite, the tracer tests and the on-demand
#                  daemon's booted with module.sig_enforce=1
#                  lockdown=integrity (what Fedora's and Ubuntu's kernels
#                  enforce under Secure Boot), every module signed with
#                  the test key
#   vm-confidentiality-SERIES, tracers-confidentiality-SERIES
#                  the same with lockdown=confidentiality: reported, not
#                  counted (what that mode forbids is measured, not
#                  required)
#
# Default series: 6.1, 6.12 and 6.12-arm64, and 7.2 when its toolchain (the sid root
# with gcc-16, `make toolchain-7.2`) is built; without it 7.2 is skipped,
# which the summary and the last line say ("SKIPPED"), and which counts as
# neither passed nor failed.  The default run also compiles the module
# for 5.10, 7.3, 6.12-rt, 7.3-rt and 7.3-arm64 (compile-SERIES), each
# skipped so without its root; `make check-kernels` runs all their
# stages.  A series named on the command line is run whatever it lacks (a
# missing toolchain then fails its stages).
#
# Every stage ends with "N passed, N failed"; a stage that exits non-zero
# without counting a failure (a kernel warning in the guest, a crash, a
# build error) counts as one failure.  Logs go to .cache/logs/ (or
# $CODECTL_LOG_DIR).  The last line is the sum: "total: N passed, N
# failed", followed by "; SKIPPED: ..." when a kernel was skipped.  The
# summary (stage counts, "time STAGE SECONDS" lines, the date and commit)
# is kept in $logs/summary.log.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${CODECTL_CACHE:-$top/.cache}
logs=${CODECTL_LOG_DIR:-$cache/logs}
# A cache shared by several work trees: logs per tree.
[ -n "${CODECTL_LOG_DIR:-}" ] || [ "$cache" = "$top/.cache" ] ||
	logs=$cache/logs/${top##*/}
mkdir -p "$logs"

args="$*"
vm_only=0 debug=0
# The guest stages' lockdown mode ("" for none; the lockdown stages set
# it): guests boot with module.sig_enforce=1 lockdown=$lock and every
# module is signed with the test key (test_modules).
lock=
# Guest time limits are multiplied by this, and the guest suite's memory
# (MB) is this (the debug kernel is slower, KASAN's shadow and kmemleak's
# metadata take memory).
tmul=1 vm_mem=1024
if [ "${1:-}" = --vm-only ]; then
	vm_only=1
	shift
elif [ "${1:-}" = --debug ]; then
	debug=1 tmul=4 vm_mem=2048
	shift
	[ $# -gt 0 ] || set -- debug-6.12 debug-6.12-rt
	for s in "$@"; do
		case $s in
		debug-6.12 | debug-6.12-rt) ;;
		*) echo "check: --debug takes debug-6.12, debug-6.12-rt" >&2; exit 2 ;;
		esac
		"$top/scripts/debug-kernel.sh" build "$s" || { echo "check: building the debug kernel $s failed"; exit 1; }
	done
elif [ "${1:-}" = --distros ]; then
	shift
	[ $# -eq 0 ] || { echo "check: --distros takes no series" >&2; exit 2; }
	for s in fedora ubuntu; do
		"$top/scripts/distro-kernel.sh" build $s || { echo "check: building the $s kernel failed"; exit 1; }
	done
	set -- fedora ubuntu
fi
total_p=0 total_f=0
summary=() failures=() times=()
skipped=() skip_lines=() compile_series=() later=()
arm64_dkms_lane=a
if [ $# -eq 0 ]; then
	set -- 6.1 6.12
	arm64_dkms_lane=b
	# CI's time (within 75 minutes): these stages are make
	# check-kernels' (the arm64 ones make check-arm64's; arm64's DKMS
	# and on-demand stages are in check-kernels on 7.3-arm64 too):
	# the on-demand stages of 6.1, 6.12 and 6.12-arm64 (7.2's stays;
	# CI at 37d60da: 4557 s with 6.1's and 6.12's in), 6.1's runtimes
	# and tracers (6.12's and 7.2's stay) and 6.12-arm64's DKMS, an
	# arm64 guest building the module (11 min; CI at 5dca458: 5048 s
	# with it and 6.1's runtimes in; at 449860d 4780 s with 6.1's
	# tracers and arm64's on-demand stage in, each lane about 12
	# minutes longer than these two leave it: the wrong-row fixtures
	# and the startup and first-profile checks had grown them).
	later=(ondemand-6.1 ondemand-6.12 runtimes-6.1 tracers-6.1
		dkms-6.12-arm64 ondemand-6.12-arm64)
	for s in "${later[@]}"; do
		t=check-kernels
		[[ $s != *-arm64 ]] || t=check-arm64
		skipped+=("$s")
		skip_lines+=("$(printf '%-12s SKIPPED: %s' "$s" "in make $t (CI's time)")")
	done
	if why=$("$top/scripts/build-module.sh" --toolchain 7.2 2>&1 >/dev/null); then
		set -- "$@" 7.2
	else
		skipped+=("7.2")
		skip_lines+=("$(printf '%-12s SKIPPED: %s' "7.2" "$why")")
		echo "check: 7.2 SKIPPED (not run, not counted as passed): $why"
	fi
	set -- "$@" 6.12-arm64
	# The kernels only compiled for (sparse-clean; their guest stages
	# are make check-kernels'), skipped as 7.2 without their root.
	for s in $("$top/scripts/kernels.sh" list compile); do
		if why=$("$top/scripts/build-module.sh" --toolchain "$s" 2>&1 >/dev/null); then
			compile_series+=("$s")
		else
			skipped+=("compile-$s")
			skip_lines+=("$(printf '%-12s SKIPPED: %s' "compile-$s" "$why")")
			echo "check: compile-$s SKIPPED (not run, not counted as passed): $why"
		fi
	done
fi

# counts FILE: "P F", the counts of FILE's last "[NAME: ]P passed, F
# failed" line (a stage's tests end with one), or nothing without one.
counts() {
	grep -E '^([A-Za-z0-9_.-]+: )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 |
		sed -E 's/^([^ ]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2 \3/'
}

# run_stage NAME COMMAND...: run, tee the log, add up its counts.  With
# CODECTL_STAGES set (words such as "vm tracers vm-integrity"), only the
# stages whose name, less its -SERIES, is one of them run; the others are
# not counted.  A *-confidentiality-* stage is reported, not counted.
run_stage() {
	local name=$1 log=$logs/$1.log start rc line p f secs kind
	shift
	kind=${name%%-[0-9]*}
	kind=${kind%-debug} kind=${kind%-fedora} kind=${kind%-ubuntu}
	if [ -n "${CODECTL_STAGES:-}" ] && [[ " $CODECTL_STAGES " != *" $kind "* ]]; then
		return 0
	fi
	# The default run's stages left to the longer targets (above).
	[[ " ${later[*]} " != *" $name "* ]] || return 0
	echo "=== $name"
	start=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	line=$(counts "$log")
	read -r p f <<<"${line:-0 0}"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "check: stage $name exited $rc without a counted failure: 1 failed"
	fi
	if [ -z "$line" ] && [ "$rc" -eq 0 ]; then
		f=1
		echo "check: stage $name ran no counted test: 1 failed"
	fi
	if [[ $kind == *-confidentiality ]]; then
		summary+=("$(printf '%-12s %4d passed, %d failed  (%ds; reported, not counted)' "$name" "$p" "$f" "$secs")")
		times+=("time $name $secs")
		return 0
	fi
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	# The failures again at the end, with the lines before each, so that
	# the tail of a long run (all that CI keeps) says what failed.
	[ "$f" -eq 0 ] || failures+=("--- $name" "$(grep -B 4 -E '^(not ok|check: )' "$log" | tail -n 60)")
	summary+=("$(printf '%-12s %4d passed, %d failed  (%ds)' "$name" "$p" "$f" "$secs")")
	times+=("time $name $secs")
}

# Build and static checks of the module for one kernel.
build_stage() {
	local series=$1 p=0 f=0 out
	if out=$("$top/scripts/build-module.sh" --consumer "$series" 2>&1); then
		echo "ok - module builds for $series"; p=$((p + 1))
	else
		echo "$out"; echo "not ok - module builds for $series"; f=$((f + 1))
	fi
	sparse_build "$series"
	echo "$p passed, $f failed"
	[ "$f" -eq 0 ]
}

# The compile stage of a kernel the default run boots no guest of
# (scripts/kernels.sh list compile: 5.10, 7.3, 6.12-rt, 7.3-rt,
# 7.3-arm64): codectl.ko built once, under sparse and W=1 (one make:
# that it builds is its first check).
compile_stage() {
	local series=$1 p=0 f=0
	sparse_build "$series"
	echo "$p passed, $f failed"
	[ "$f" -eq 0 ]
}

# sparse_build SERIES: the module built with C=2 W=1, no warning or error
# (the caller's p and f counted), and sparse having run.
sparse_build() {
	local series=$1 out
	local noise='^$'
	# arm64: sparse's one false report in the kernel's own cmpxchg.h
	# (every user of cmpxchg() gets it) is not ours.
	[[ $series != *-arm64 ]] ||
		noise='/arch/arm64/include/asm/cmpxchg\.h:[0-9]+:[0-9]+: warning: cast truncates bits from constant value'
	if out=$("$top/scripts/build-module.sh" "$series" C=2 W=1 2>&1) &&
	   ! grep -v -E "$noise" <<<"$out" | grep -E 'warning:|error:'; then
		echo "ok - sparse and W=1 clean for $series"; p=$((p + 1))
	else
		echo "$out"; echo "not ok - sparse and W=1 clean for $series"; f=$((f + 1))
	fi
	# kbuild skips sparse, saying only this, when it cannot run it.
	if grep -q 'is not available or not up to date' <<<"$out"; then
		echo "not ok - sparse ran for $series"; f=$((f + 1))
	fi
}

# test_modules SERIES: build codectl.ko and the test modules for SERIES
# (build-module.sh --consumer) and set ko, consumer and testmod to them;
# under lockdown ($lock), to copies signed with the test key.
test_modules() {
	consumer=$("$top/scripts/build-module.sh" --consumer "$1") || return 1
	ko=$(dirname "$consumer")/../module/codectl.ko
	testmod=$(dirname "$consumer")/../testmod/codectl_test.ko
	[ -z "$lock" ] || sign_modules "$1" "$(dirname "$consumer")/../signed" ko consumer testmod
}

# sign_modules SERIES DIR VAR...: the modules the variables VAR... name,
# copied into DIR and signed there with the test key of
# scripts/distro-kernel.sh by the kernel's scripts/sign-file and hash, as
# DKMS signs with a machine owner's key; each VAR then names its copy.
# With SIGN_KEY set (a key and certificate, KEY.key and KEY.crt), with
# that key instead.
sign_modules() {
	local kdir dir=$2 key=${SIGN_KEY:-$cache/distro-keys/test-mok} hash v m
	kdir=$(readlink -f "$("$top/scripts/kernels.sh" kdir "$1")") || return 1
	hash=$(sed -n 's/^CONFIG_MODULE_SIG_HASH="\(.*\)"$/\1/p' "$kdir/.config")
	[ -n "$hash" ] && [ -x "$kdir/scripts/sign-file" ] && [ -f "$key.key" ] ||
		{ echo "not ok - signing for $1: no CONFIG_MODULE_SIG_HASH, $kdir/scripts/sign-file or $key.key"; return 1; }
	mkdir -p "$dir"
	shift 2
	for v in "$@"; do
		m=$dir/${!v##*/}
		cp "${!v}" "$m" && "$kdir/scripts/sign-file" "$hash" "$key.key" "$key.crt" "$m" || return 1
		printf -v "$v" '%s' "$m"
	done
}

# lockdown MODE STAGE SERIES: STAGE (vm_stage, tracers_stage,
# ondemand_stage) in guests booted with module.sig_enforce=1
# lockdown=MODE, its modules signed; one check more, counted with the
# stage's: every guest of it said the kernel was locked down as asked
# (the kernel's "Kernel is locked down from command line" after a
# command line with lockdown=MODE), lest a guest booted without it pass.
lockdown() {
	local out line p f boots locked rc
	out=$(mktemp)
	(
		lock=$1
		export CODECTL_VM_APPEND="${CODECTL_VM_APPEND:-} module.sig_enforce=1 lockdown=$1"
		"$2" "$3"
	) | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(counts "$out")
	read -r p f <<<"${line:-0 0}"
	boots=$(grep -c "^\[ *0\.0*\] Command line: .* lockdown=$1\b" "$out")
	locked=$(grep -c "Kernel is locked down from command line" "$out")
	if [ "$boots" -gt 0 ] && [ "$locked" -eq "$boots" ]; then
		echo "ok - lockdown=$1: every guest of the stage locked down ($boots)"
		p=$((p + 1))
	else
		echo "not ok - lockdown=$1: guests booted with it $boots, locked down $locked"
		f=$((f + 1)) rc=1
	fi
	rm -f "$out"
	# A stage that counted nothing stays so (run_stage fails it).
	[ -z "$line" ] || echo "$p passed, $f failed"
	return "$rc"
}

# The signing checks under lockdown=integrity (tests/vm/lockdown-signing.sh):
# codectl.ko signed with the test key, as built, and signed with a key
# made for the run, which the kernel does not trust.
signing_stage() {
	local series=$1 ko signed unsigned other dir
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	dir=$(dirname "$ko")/../signing
	rm -rf "$dir"
	mkdir -p "$dir/other"
	openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=codectl untrusted/" \
		-keyout "$dir/other/key.key" -out "$dir/other/key.crt" 2>/dev/null || return 1
	signed=$ko other=$ko
	sign_modules "$series" "$dir/signed" signed || return 1
	SIGN_KEY=$dir/other/key sign_modules "$series" "$dir/other" other || return 1
	unsigned=$ko
	CODECTL_VM_APPEND="${CODECTL_VM_APPEND:-} module.sig_enforce=1 lockdown=integrity" \
		"$top/scripts/vm-run.sh" -k "$series" -t 600 \
		-l "$logs/signing-$series.console" \
		-a "$signed:/signed/codectl.ko" -a "$unsigned:/unsigned/codectl.ko" \
		-a "$other:/other/codectl.ko" \
		-a "$top/tests/vm/lockdown-signing.sh:/tests/lockdown-signing.sh" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-a "$top/tools/codectl:/usr/bin/codectl" \
		-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
		-- sh /tests/lockdown-signing.sh integrity /signed/codectl.ko \
		/unsigned/codectl.ko /other/codectl.ko
}

# The guest suite for one kernel.
vm_stage() {
	local series=$1 ko consumer testmod prog a=()
	# codectl.ko, the test module using its exported API, and the test
	# facilities' module (codectl_test.ko, never packaged).
	test_modules "$series" || return 1
	for prog in codectl-abi-test codectl-ioctl-fuzz codectl-storm decoder-fuzz; do
		a+=(-a "$top/tests/vm/$prog:/tests/$prog")
	done
	a+=(-a "$top/tests/sframe/fuzz/kept:/tests/decoder-corpus/kept")
	a+=(-a "$top/tests/sframe/fuzz/hand:/tests/decoder-corpus/hand")
	a+=(-a "$top/tests/vm/unwind/build:/tests/unwind")
	"$top/scripts/vm-run.sh" -k "$series" -t $((1200 * tmul)) -m $vm_mem \
		-l "$logs/vm${lock:+-$lock}-$series.console" \
		-a "$ko:/codectl.ko" -a "$consumer:/codectl-consumer.ko" \
		-a "$testmod:/codectl_test.ko" "${a[@]}" \
		-a "$top/tests/vm/guest-suite.sh:/tests/guest-suite.sh" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-a "$top/tests/vm/rmmod-sleepers.sh:/tests/rmmod-sleepers.sh" \
		-a "$top/tools/codectl:/usr/bin/codectl" \
		-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
		-a "$top/lib/libcodectl-preload.so:/lib/codectl/libcodectl-preload.so" \
		-a /sbin/ldconfig \
		-- env CODECTL_TIME_SCALE=$tmul \
		sh /tests/guest-suite.sh /codectl.ko /codectl-consumer.ko /codectl_test.ko
}

# arm64_userland OUT [LIB...]: what an arm64 guest runs codectl's tools
# with, as scripts/vm-run.sh arguments in $userland (the caller's local,
# with $root and $od): Debian's arm64 libc6 and the libraries of perf and
# the tracers (scripts/stage-arm64-root.sh, $root), the whole directory
# or only LIB... (names in $root/lib); libdw, libelf, libcrypto and theirs
# (scripts/stage-arm64-ondemand.sh, $od; after the root's directory,
# which would replace them); ld.so; the codectl tool and libcodectl.so.1
# cross-built into OUT (make -C tests/vm arm64-tools, against $od's
# sysroot).
arm64_userland() {
	local out=$1 f
	shift
	root=$("$top/scripts/stage-arm64-root.sh" "$cache/arm64-root") || return 1
	od=$("$top/scripts/stage-arm64-ondemand.sh" "$cache/arm64-ondemand") || return 1
	make -s -C "$top/tests/vm" arm64-tools ARM64_OUT="$out" \
		ARM64_SYSROOT="$od/sysroot" || return 1
	userland=()
	[ $# -gt 0 ] || userland+=(-A "$root/lib:/usr/lib/aarch64-linux-gnu")
	for f in "$od"/lib/* "${@/#/$root/lib/}"; do
		userland+=(-A "$f:/usr/lib/aarch64-linux-gnu/${f##*/}")
	done
	userland+=(-A "$root/lib/ld-linux-aarch64.so.1:/usr/lib/ld-linux-aarch64.so.1"
		   -A "$out/src/tools/codectl:/usr/bin/codectl"
		   -A "$out/src/lib/libcodectl.so.1:/usr/lib/libcodectl.so.1")
}

# The guest suite on an arm64 kernel (tests/vm/guest-suite.sh, as
# vm_stage): codectl.ko and the test modules cross-built; codectl-abi-test,
# codectl-ioctl-fuzz, codectl-storm and decoder-fuzz cross-built static
# (make -C tests/vm arm64), the decoder fuzzer's corpus; the codectl tool
# and libcodectl.so.1 cross-built (make -C tests/vm arm64-tools, against
# scripts/stage-arm64-ondemand.sh's sysroot) with the arm64 libraries they
# load: Debian's arm64 libc6 (scripts/stage-arm64-root.sh: libc, its
# ld.so; libc also for codectl-abi-test's import_errors) and the staged
# libdw, libelf, libcrypto and theirs.  tests/vm/unwind is built for
# x86-64 only: what needs it is skipped, counted, with the reason
# (CODECTL_UNWIND_SKIP; demand_queue of codectl-abi-test left out).
vm_arm64_stage() {
	local series=$1 ko consumer testmod out root od userland prog a=()
	test_modules "$series" || return 1
	out=$(dirname "$consumer")/../tests-arm64
	make -s -C "$top/tests/vm" arm64 ARM64_OUT="$out" || return 1
	arm64_userland "$out" libc.so.6 || return 1
	for prog in codectl-abi-test codectl-ioctl-fuzz codectl-storm decoder-fuzz; do
		a+=(-a "$out/$prog:/tests/$prog")
	done
	"$top/scripts/vm-run.sh" -k "$series" -t $((1200 * tmul)) -m $vm_mem \
		-l "$logs/vm-$series.console" \
		-a "$ko:/codectl.ko" -a "$consumer:/codectl-consumer.ko" \
		-a "$testmod:/codectl_test.ko" "${a[@]}" "${userland[@]}" \
		-a "$top/tests/sframe/fuzz/kept:/tests/decoder-corpus/kept" \
		-a "$top/tests/sframe/fuzz/hand:/tests/decoder-corpus/hand" \
		-a "$top/tests/vm/guest-suite.sh:/tests/guest-suite.sh" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-a "$top/tests/vm/rmmod-sleepers.sh:/tests/rmmod-sleepers.sh" \
		-- env CODECTL_TIME_SCALE=$tmul \
		CODECTL_UNWIND_SKIP="tests/vm/unwind is built for x86-64 only" \
		CODECTL_ABI_LEAVE_OUT=demand_queue \
		sh /tests/guest-suite.sh /codectl.ko /codectl-consumer.ko /codectl_test.ko
}

# perf on arm64: Debian's arm64 perf (scripts/stage-arm64-root.sh, with
# its libraries) samples the cross-built tracees (SFrame, and SFrame with
# PAC-signed return addresses) without the module and with it
# (tests/vm/arm64-perf.sh); then Debian's arm64 trace-cmd records their
# user stacks at sched_switch, the module's hooks on and off
# (tests/vm/arm64-ftrace.sh), and Debian's arm64 bpftrace their ustack
# (tests/vm/arm64-bpftrace.sh; its LLVM: 2 GB of guest memory), and real
# programs, lua and sqlite3 (scripts/stage-arm64-real.sh) under perf,
# with the module alone and with libc's rules imported by the codectl
# tool cross-built for aarch64 (tests/vm/arm64-real.sh).
tracers_arm64_stage() {
	local series=$1 ko out root real od userland p a=()
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	out=$(dirname "$ko")/../tests-arm64
	make -s -C "$top/tests/vm" arm64 ARM64_OUT="$out" || return 1
	real=$("$top/scripts/stage-arm64-real.sh" "$cache/arm64-real") || return 1
	# codectl import of libc (its libdw): as ondemand_arm64_stage.
	arm64_userland "$out" || return 1
	for p in lua lua-pac sqlite3 sqlite3-pac; do
		a+=(-a "$real/bin/$p:/tests/arm64/real/$p")
	done
	"$top/scripts/vm-run.sh" -k "$series" -t $((900 * tmul)) -m 2048 \
		-l "$logs/tracers-$series.console" -a "$ko:/codectl.ko" "${a[@]}" \
		-A "$root/usr/bin/perf:/usr/bin/perf" \
		-A "$root/usr/bin/trace-cmd:/usr/bin/trace-cmd" \
		-A "$root/usr/bin/bpftrace:/usr/bin/bpftrace" \
		"${userland[@]}" \
		-a "$out/tracee-v3:/tests/arm64/tracee-v3" \
		-a "$out/tracee-pac:/tests/arm64/tracee-pac" \
		-a "$top/tests/vm/arm64-perf.sh:/tests/arm64-perf.sh" \
		-a "$top/tests/vm/arm64-ftrace.sh:/tests/arm64-ftrace.sh" \
		-a "$top/tests/vm/arm64-bpftrace.sh:/tests/arm64-bpftrace.sh" \
		-a "$top/tests/vm/arm64-real.sh:/tests/arm64-real.sh" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-- sh /tests/arm64-perf.sh /codectl.ko /tests/arm64 /tests/arm64/real
}

# On demand on arm64: Debian's arm64 python3.11 (scripts/stage-arm64-ondemand.sh)
# under Debian's arm64 perf record -g, with codectl.ko alone and with the
# codectl daemon cross-built for aarch64 (make -C tests/vm arm64-tools)
# (tests/vm/arm64-ondemand.sh).  CODECTL_OD_NODAEMON=1: the test's
# negative control, the daemon not started (its checks must then fail).
ondemand_arm64_stage() {
	local series=$1 ko out root od userland p ctr=$cache/container-trixie-arm64
	local ovl=$cache/overlay-$series
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	out=$(dirname "$ko")/../tests-arm64
	arm64_userland "$out" || return 1
	# The startup check's program (tests/vm/startup.sh).
	make -s -C "$top/tests/vm" arm64-startup ARM64_OUT="$out" || return 1
	userland+=(-A "$out/ondemand:/tests/ondemand"
		   -a "$top/tests/vm/startup.sh:/tests/startup.sh")
	# The container (tests/vm/container.sh): arm64's image and overlay.ko.
	"$top/scripts/stage-container.sh" image "$ctr" arm64 || return 1
	"$top/scripts/stage-container.sh" overlay "$series" "$ovl" || return 1
	userland+=(-a "$ctr/image.tar:/tests/container.tar"
		   -a "$top/tests/vm/container.sh:/tests/container.sh")
	[ ! -s "$ovl/overlay.ko" ] || userland+=(-a "$ovl/overlay.ko:/tests/overlay.ko")
	# 2 GB: the staged libraries include bpftrace's LLVM (tracers).
	# The guest's limit: CI's longest on-demand stage took 711 s (7.2,
	# 65e33e2) before the first-look and primed checks (about 70 s).
	"$top/scripts/vm-run.sh" -k "$series" -t $((1200 * tmul)) -m 2048 \
		-l "$logs/ondemand-$series.console" -a "$ko:/codectl.ko" \
		-A "$root/usr/bin/perf:/usr/bin/perf" "${userland[@]}" \
		-A "$od/usr/bin/python3.11:/usr/bin/python3.11" \
		-A "$od/python3.11:/usr/lib/python3.11" \
		-a "$top/tests/demo/workload.py:/tests/workload.py" \
		-a "$top/tests/vm/arm64-ondemand.sh:/tests/arm64-ondemand.sh" \
		-a "$top/tests/vm/samples.awk:/tests/samples.awk" \
		-a "$top/tests/vm/perf-lr.awk:/tests/perf-lr.awk" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-- sh /tests/arm64-ondemand.sh /codectl.ko /tests/workload.py 3 \
		"${CODECTL_OD_NODAEMON:+nodaemon}"
}

# perf, trace-cmd and bpftrace from Debian, unchanged, in a guest with the
# module's tracer hooks (tests/vm/tracers.sh).  bpftrace's LLVM wants 3 GB.
# The audit module's namespace looks ld.so up by its soname where Debian
# has it (the guest has only /lib64's): it is copied there too.
tracers_stage() {
	local series=$1 ko consumer testmod t a=()
	test_modules "$series" || return 1
	for t in /usr/bin/perf /usr/bin/trace-cmd /usr/bin/bpftrace \
		 /usr/lib/x86_64-linux-gnu/traceevent; do
		[ -e "$t" ] || { echo "not ok - $t is missing (scripts/setup.sh)"; return 1; }
		a+=(-a "$t")
	done
	# Kernels with deferred unwinding: their release's perf for its
	# callchains (sid's 7.2, trixie-backports' 7.3), at /sid-perf.
	if grep -q '^CONFIG_UNWIND_USER=y' \
		"$("$top/scripts/kernels.sh" kdir "$series")/include/config/auto.conf"; then
		"$top/scripts/sid-perf.sh" build "$series" >/dev/null || return 1
		a+=(-A "$("$top/scripts/sid-perf.sh" path "$series"):/sid-perf")
	fi
	# The guest's limit: tracers-7.2 took 743 s in CI at 65e33e2, and
	# 1200 s (killed at its 96th check of 102) at da8db39 with the
	# wrong-table fixture's four profiles, beside two other guests.
	"$top/scripts/vm-run.sh" -k "$series" -t $((1800 * tmul)) -m 3072 \
		-l "$logs/tracers${lock:+-$lock}-$series.console" -a "$ko:/codectl.ko" \
		-a "$testmod:/codectl_test.ko" "${a[@]}" \
		-a "$top/tests/vm/unwind/build:/tests/unwind" \
		-a "$top/tests/vm/tracers.sh:/tests/tracers.sh" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-a "$top/tools/codectl:/usr/bin/codectl" \
		-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
		-a "$top/lib/libcodectl-audit.so:/lib/codectl/libcodectl-audit.so" \
		-a "$top/lib/libcodectl-preload.so:/lib/codectl/libcodectl-preload.so" \
		-a /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 -a /sbin/ldconfig \
		-- sh /tests/tracers.sh /codectl.ko /codectl_test.ko
}

# Debian's own programs, nothing registered, under perf with the daemon
# (tests/vm/ondemand.sh).  Its FIGURE lines are the figures of
# docs/ondemand.md.
ondemand_stage() {
	local series=$1 ko stdlib=$cache/ondemand-python3.11 p a=() syscalls
	local ctr=$cache/container-trixie ovl=$cache/overlay-$series
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	# Under lockdown (lockdown integrity ondemand_stage): signed with
	# the test key, as DKMS signs with the machine owner's key.
	[ -z "$lock" ] || sign_modules "$series" "$(dirname "$ko")/../signed" ko || return 1
	[ -d "$stdlib" ] || "$top/scripts/stage-python.sh" "$stdlib" || return 1
	# The container: its image, and the kernel's overlayfs module
	# (none for a kernel built without modules: the test says so).
	"$top/scripts/stage-container.sh" image "$ctr" || return 1
	"$top/scripts/stage-container.sh" overlay "$series" "$ovl" || return 1
	a+=(-a "$ctr/image.tar:/tests/container.tar")
	[ ! -s "$ovl/overlay.ko" ] || a+=(-a "$ovl/overlay.ko:/tests/overlay.ko")
	# The system calls the daemon's unit allows, for its sandbox checks.
	syscalls=$logs/unit-syscalls-$series
	"$top/scripts/unit-security.sh" --syscalls "$top/packaging/codectl-daemon.service" \
		>"$syscalls" || return 1
	for p in /usr/bin/perf /usr/bin/python3.11 /usr/bin/perl /usr/bin/sqlite3 \
		 /usr/bin/xz /usr/bin/setpriv /usr/bin/strace /usr/bin/unshare \
		 /usr/lib/x86_64-linux-gnu/libisl.so.23; do
		[ -e "$p" ] || { echo "not ok - $p is missing (scripts/setup.sh)"; return 1; }
		a+=(-a "$p")
	done
	# The guest's limit: CI's longest on-demand stage took 711 s (7.2,
	# 65e33e2) before the first-look, primed and container checks; with
	# them, 1126 s (6.12 at f747198 beside two other guests and a kernel
	# build); with the startup checks 1737 s (7.3-rt at b697aba beside
	# two other guests), too near 1800.
	"$top/scripts/vm-run.sh" -k "$series" -t $((2700 * tmul)) -m 2048 \
		-l "$logs/ondemand${lock:+-$lock}-$series.console" -a "$ko:/codectl.ko" "${a[@]}" \
		-A /usr/lib/perf-core -A "$stdlib:/usr/lib/python3.11" \
		-a "$top/tests/vm/ondemand.sh:/tests/ondemand.sh" \
		-a "$top/tests/vm/samples.awk:/tests/samples.awk" \
		-a "$top/tests/vm/perf-lr.awk:/tests/perf-lr.awk" \
		-a "$top/tests/vm/container.sh:/tests/container.sh" \
		-a "$top/tests/vm/startup.sh:/tests/startup.sh" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-a "$top/tests/vm/ondemand:/tests/ondemand" \
		-a "$top/tests/vm/daemon-fuzz.sh:/tests/daemon-fuzz.sh" \
		-a "$top/packaging/codectl-daemon.service:/tests/codectl-daemon.service" \
		-a "$syscalls:/tests/unit-syscalls" \
		-a "$top/tests/demo/workload.py:/tests/workload.py" \
		-a "$top/tools/codectl:/usr/bin/codectl" \
		-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
		-- sh /tests/ondemand.sh /codectl.ko /tests/workload.py 3
}

# The daemon fuzzed at length (tests/vm/daemon-fuzz.sh ROUNDS FILES):
# the debug kernel's daemonfuzz stage; on a stock kernel only when
# CODECTL_STAGES names it (the ondemand stage runs a few rounds anyway).
# Guest time: 150 s a round of 32 files under TCG, times tmul.
daemonfuzz_stage() {
	local series=$1 rounds=$2 files=$3 ko
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	"$top/scripts/vm-run.sh" -k "$series" -m $vm_mem \
		-t $(((300 + rounds * files * 5) * tmul)) \
		-l "$logs/daemonfuzz-$series.console" -a "$ko:/codectl.ko" \
		-a /usr/bin/perf -A /usr/lib/perf-core \
		-a "$top/tests/vm/ondemand:/tests/ondemand" \
		-a "$top/tests/vm/daemon-fuzz.sh:/tests/daemon-fuzz.sh" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-a "$top/tools/codectl:/usr/bin/codectl" \
		-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
		-- sh -c 'insmod /codectl.ko || exit 1
			sh /tests/daemon-fuzz.sh "$1" "$2"
			st=$?
			rmmod codectl || st=1
			if [ $st = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
			exit $st' sh "$rounds" "$files"
}

# JIT runtimes: Debian's node (scripts/stage-node.sh) and OpenJDK 17
# (scripts/stage-java.sh) under perf, without the module, with it alone
# and with the daemon (tests/vm/runtimes.sh).
runtimes_stage() {
	local series=$1 ko node java lib=/usr/lib/x86_64-linux-gnu
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	node=$("$top/scripts/stage-node.sh" "$cache/nodejs") || return 1
	java=$("$top/scripts/stage-java.sh" "$cache/java") || return 1
	"$top/scripts/vm-run.sh" -k "$series" -t $((900 * tmul)) -m 3072 \
		-a "$java:/usr/lib/jvm/java-17-openjdk-amd64" \
		-l "$logs/runtimes-$series.console" -a "$ko:/codectl.ko" \
		-a /usr/bin/perf -A /usr/lib/perf-core \
		-A "$node:/usr/bin/node" -A "${node%/bin/node}/share/nodejs:/usr/share/nodejs" \
		-a "${node%/bin/node}/lib/x86_64-linux-gnu/libnode.so.108:$lib/libnode.so.108" \
		-a "$top/tests/vm/runtimes.sh:/tests/runtimes.sh" \
		-a "$top/tests/vm/perf-lr.awk:/tests/perf-lr.awk" \
		-a "$top/tests/vm/runtimes:/tests/runtimes" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-a "$top/tools/codectl:/usr/bin/codectl" \
		-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
		-- sh /tests/runtimes.sh /codectl.ko 3
}

# JIT runtimes on arm64: tests/vm/runtimes.sh with Debian bookworm's arm64
# node (scripts/stage-arm64-node.sh), arm64 perf (stage-arm64-root.sh)
# and the daemon cross-built (as ondemand_arm64_stage).  Node only: a
# gap, OpenJDK 17 is not staged for arm64 and its time under TCG arm64
# not measured yet; the guest says java is skipped, and why.
runtimes_arm64_stage() {
	local series=$1 ko out root od userland node f a=()
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	out=$(dirname "$ko")/../tests-arm64
	arm64_userland "$out" || return 1
	node=$("$top/scripts/stage-arm64-node.sh" "$cache/arm64-node") || return 1
	for f in "$node"/lib/*; do
		[ -e "$od/lib/${f##*/}" ] ||
			a+=(-A "$f:/usr/lib/aarch64-linux-gnu/${f##*/}")
	done
	"$top/scripts/vm-run.sh" -k "$series" -t $((900 * tmul)) -m 2048 \
		-l "$logs/runtimes-$series.console" -a "$ko:/codectl.ko" \
		-A "$root/usr/bin/perf:/usr/bin/perf" "${userland[@]}" "${a[@]}" \
		-A "$node/usr/bin/node:/usr/bin/node" \
		-A "$node/usr/share/nodejs:/usr/share/nodejs" \
		-a "$top/tests/vm/runtimes.sh:/tests/runtimes.sh" \
		-a "$top/tests/vm/perf-lr.awk:/tests/perf-lr.awk" \
		-a "$top/tests/vm/runtimes:/tests/runtimes" \
		-a "$top/tests/vm/tap.sh:/tests/tap.sh" \
		-- sh /tests/runtimes.sh /codectl.ko 3 node
}

# --debug: each checker's canary (tests/vm/testmod/canary.c: insmod
# codectl_test.ko canary=NAME) in a guest of its own must give that
# checker's report and vm-run's verdict on it (exit status 125): a clean
# log of the other stages then means the checkers ran and found nothing.
checkers_stage() {
	local series=$1 consumer ko testmod c name want log rc p=0 f=0
	test_modules "$series" || return 1
	for c in 'kasan:BUG: KASAN: slab-out-of-bounds' \
		 'sleep:BUG: sleeping function called from invalid context' \
		 'lockdep:WARNING: possible circular locking dependency detected' \
		 'leak:unreferenced object 0x'; do
		name=${c%%:*} want=${c#*:}
		log=$logs/checkers-$series-$name.log
		# The leak is reported by the scans after the command, once
		# the object is 5 s old.
		"$top/scripts/vm-run.sh" -k "$series" -t $((300 * tmul)) -m $vm_mem \
			-a "$ko:/codectl.ko" -a "$testmod:/codectl_test.ko" -- \
			"insmod /codectl.ko && ! insmod /codectl_test.ko canary=$name && sleep 6 && rmmod codectl" \
			>"$log" 2>&1
		rc=$?
		if [ $rc -eq 125 ] && grep -aq "$want" "$log"; then
			echo "ok - canary $name: \"$want\" reported, the guest failed"
			p=$((p + 1))
		else
			echo "not ok - canary $name: vm-run exit $rc, \"$want\" $(grep -aq "$want" "$log" && echo found || echo missing) ($log)"
			f=$((f + 1))
		fi
	done
	echo "$p passed, $f failed"
	[ "$f" -eq 0 ]
}

# The kernel's verdict (CHECK_SFRAME) on every real fixture; on an arm64
# kernel by check-files cross-built static (make -C tests/vm arm64),
# aarch64's fixtures then the native ones.
files_stage() {
	local series=$1 ko fx=$cache/sframe-fixtures a=() t files out
	local prog=$top/tests/vm/check-files
	ko=$("$top/scripts/build-module.sh" "$series") || return 1
	if [[ $series == *-arm64 ]]; then
		out=$(dirname "$ko")/../tests-arm64
		make -s -C "$top/tests/vm" arm64 ARM64_OUT="$out" || return 1
		prog=$out/check-files
	fi
	for t in 2.40 2.44 2.47 2.47-aarch64 2.47-s390x; do
		a+=(-a "$fx/$t:/fixtures/$t")
	done
	files='$(find /fixtures -mindepth 2 -maxdepth 2 -type f ! -name "*.flags" ! -name MANIFEST ! -name "*.o")'
	"$top/scripts/vm-run.sh" -k "$series" -t 600 \
		-a "$ko:/codectl.ko" -a "$prog:/tests/check-files" \
		"${a[@]}" -- "insmod /codectl.ko && /tests/check-files $files && rmmod codectl"
}

start=$(date +%s)
commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
make -s -C "$top" lib tools >/dev/null || { echo "check: building lib/tools failed"; exit 1; }
make -s -C "$top/tests/vm" >/dev/null || { echo "check: building tests/vm failed"; exit 1; }

# The host's stages: the unit tests, the decoder's tests (tests/sframe)
# and checkpatch.  With two lanes (below), sframe and checkpatch run in
# them, one at the head of each, beside the other lane's guest.
host_stages=0
[ $vm_only -eq 1 ] || [ $debug -eq 1 ] || host_stages=1
lanes=${CODECTL_LANES:-$(($(nproc) >= 2 ? 2 : 1))}

sframe_stage() {
	[ $host_stages -eq 1 ] || return 0
	run_stage sframe "$top/tests/sframe/check.sh"
}

checkpatch_stage() {
	[ $host_stages -eq 1 ] || return 0
	if [ -x "$cache/checkpatch/scripts/checkpatch.pl" ] ||
	   apt-cache show linux-source-6.1 >/dev/null 2>&1; then
		run_stage checkpatch bash -c '"$1" && echo "ok - checkpatch --strict clean" &&
			echo "1 passed, 0 failed"' checkpatch "$top/scripts/checkpatch.sh"
	fi
}

[ $host_stages -eq 0 ] || run_stage unit make -s -C "$top/tests/unit" check
if [ "$lanes" -eq 1 ]; then
	sframe_stage
	checkpatch_stage
fi
# run_bg NAME COMMAND...: COMMAND (a run_stage, or a function running
# several) in the background, its output and results kept until
# wait_stages prints and adds them.  A guest is one TCG thread: two run
# side by side (the debug kernel's stages; the kernels' lanes below).
bg=() bg_dir=$logs/.stages
run_bg() {
	local name=$1
	shift
	mkdir -p "$bg_dir"
	rm -f "$bg_dir/$name".*
	(
		total_p=0 total_f=0 summary=() failures=() times=()
		"$@" >"$bg_dir/$name.out" 2>&1
		echo "$total_p $total_f" >"$bg_dir/$name.res"
		printf '%s\n' "${summary[@]}" >"$bg_dir/$name.sum"
		printf '%s\n' "${times[@]}" >"$bg_dir/$name.times"
		[ ${#failures[@]} -eq 0 ] || printf '%s\n' "${failures[@]}" >"$bg_dir/$name.fail"
	) &
	bg+=("$name")
	echo "=== $name (in the background: its output follows when it ends)"
}

run_stage_bg() {
	run_bg "$1" run_stage "$@"
}

wait_stages() {
	local n p f line
	wait
	for n in "${bg[@]}"; do
		cat "$bg_dir/$n.out"
		read -r p f <"$bg_dir/$n.res"
		total_p=$((total_p + p)) total_f=$((total_f + f))
		while IFS= read -r line; do
			[ -z "$line" ] || summary+=("$line")
		done <"$bg_dir/$n.sum"
		while IFS= read -r line; do
			[ -z "$line" ] || times+=("$line")
		done <"$bg_dir/$n.times"
		[ ! -s "$bg_dir/$n.fail" ] || failures+=("$(cat "$bg_dir/$n.fail")")
	done
	bg=()
}

# The stages of the kernels named: the guest suite, the tracer and the
# runtime tests and DKMS (stages_a); the on-demand tests and the
# fixtures' verdicts (stages_b); an arm64 kernel's guest suite, tracer,
# runtime, on-demand and fixture stages in stages_b, its DKMS stage in
# the lane $arm64_dkms_lane names: a, beside the others, unless the
# default run set b.  There, with checkpatch, the compile stages and
# the packages in lane b too, the two lanes take about as long: by CI's
# times of 37d60da, without 6.12's on-demand stage, lane a about
# 3450 s, lane b about 3410 s.
stages_a() {
	local s
	for s in "$@"; do
		if [[ $s == *-arm64 ]]; then
			[ $vm_only -eq 1 ] || [ "$arm64_dkms_lane" != a ] ||
				run_stage "dkms-$s" "$top/scripts/dkms-test.sh" "$s"
			continue
		fi
		run_stage "vm-$s" vm_stage "$s"
		run_stage "tracers-$s" tracers_stage "$s"
		run_stage "runtimes-$s" runtimes_stage "$s"
		# DKMS: the package test's, with apt, for the kernels it
		# covers (packages_stage: 6.1, 7.2); this one for the others.
		case $s in
		6.1 | 7.2) ;;
		*) [ $vm_only -eq 1 ] || run_stage "dkms-$s" "$top/scripts/dkms-test.sh" "$s" ;;
		esac
		# The kernels that trust the test key: under lockdown too
		# (the lockdown stages split between the lanes so that they
		# take about as long: this one's about 75 minutes a kernel,
		# stages_b's about 78).
		case $s in
		fedora | ubuntu)
			run_stage "tracers-integrity-$s" lockdown integrity tracers_stage "$s"
			run_stage "tracers-confidentiality-$s" lockdown confidentiality tracers_stage "$s"
			;;
		esac
	done
}

stages_b() {
	local s
	for s in "$@"; do
		if [[ $s == *-arm64 ]]; then
			# arm64: the guest suite, the tracers, the runtimes
			# (node), the on-demand tests, the fixtures, DKMS.
			run_stage "vm-$s" vm_arm64_stage "$s"
			run_stage "tracers-$s" tracers_arm64_stage "$s"
			run_stage "runtimes-$s" runtimes_arm64_stage "$s"
			run_stage "ondemand-$s" ondemand_arm64_stage "$s"
			[ $vm_only -eq 1 ] || run_stage "files-$s" files_stage "$s"
			[ $vm_only -eq 1 ] || [ "$arm64_dkms_lane" != b ] ||
				run_stage "dkms-$s" "$top/scripts/dkms-test.sh" "$s"
			continue
		fi
		run_stage "ondemand-$s" ondemand_stage "$s"
		[ $vm_only -eq 1 ] || run_stage "files-$s" files_stage "$s"
		case $s in
		fedora | ubuntu)
			run_stage "signing-$s" signing_stage "$s"
			run_stage "vm-integrity-$s" lockdown integrity vm_stage "$s"
			run_stage "ondemand-integrity-$s" lockdown integrity ondemand_stage "$s"
			run_stage "vm-confidentiality-$s" lockdown confidentiality vm_stage "$s"
			;;
		esac
		# Opt-in on stock kernels: CODECTL_STAGES=daemonfuzz.
		case " ${CODECTL_STAGES:-} " in
		*" daemonfuzz "*)
			run_stage "daemonfuzz-$s" daemonfuzz_stage "$s" \
				"${DFZ_ROUNDS:-2}" "${DFZ_FILES:-16}" ;;
		esac
	done
}

# compile_stages: the compile stages (compile_series), at the head of
# lane b, each beside lane a's guest (a make on the core the guest
# leaves), as sframe and checkpatch are: before the lanes the two cores
# are the builds'.  Their 131 s in CI's run of 37d60da are part of
# lane b's 3410 s (stages_a's comment).
compile_stages() {
	local s
	for s in "${compile_series[@]}"; do
		run_stage "compile-$s" compile_stage "$s"
	done
}

lane_a() {
	stages_a "$@"
}

lane_b() {
	sframe_stage
	checkpatch_stage
	[ $vm_only -eq 1 ] || compile_stages
	stages_b "$@"
	packages_stage "$@"
}

# The .debs built, installed with apt, upgraded and purged, for the
# kernels the package test has roots for (scripts/pkg-test.sh); for an
# arm64 kernel, the packages cross-built for arm64, compared with the
# host's, their files run in an arm64 guest (scripts/pkg-test-arm64.sh:
# packages-SERIES-arm64).
packages_stage() {
	local s pkg_series=() arm64_series=()
	[ $vm_only -eq 0 ] && [ $debug -eq 0 ] || return 0
	for s in "$@"; do
		case $s in
		6.1 | 7.2) pkg_series+=("$s") ;;
		*-arm64) arm64_series+=("$s") ;;
		esac
	done
	# The host's packages that the arm64 ones are compared with: the
	# package test's, when it ran (else pkg-test-arm64.sh builds them).
	local host=$logs/.pkg-host host_args=()
	rm -rf "$host"
	[ ${#pkg_series[@]} -eq 0 ] ||
		run_stage packages "$top/scripts/pkg-test.sh" --keep "$host" "${pkg_series[@]}"
	[ ! -d "$host/deb" ] || [ ! -d "$host/rpm/RPMS" ] ||
		host_args=(--host-debs "$host/deb" --host-rpms "$host/rpm/RPMS")
	for s in "${arm64_series[@]}"; do
		run_stage "packages-$s" "$top/scripts/pkg-test-arm64.sh" "${host_args[@]}" "$s"
	done
	rm -rf "$host"
}

for s in "$@"; do
	if [ $debug -eq 1 ]; then
		# PREEMPT_RT's locks are rtmutexes, and lockdep's checks of
		# them (raw nesting too) cost more: the faulting walk through
		# 64 JIT tables (t_bounds.c) took 174-312 ms there against
		# 13 ms on the stock kernel, its nofault walk 39-87 ms.
		tmul=4
		[ "$s" != debug-6.12-rt ] || tmul=8
		run_stage "build-$s" build_stage "$s"
		# The tracer tests beside the guest suite, then the fuzzers
		# at length (1M ioctls, 10M decoder executions).
		run_stage_bg "tracers-$s" tracers_stage "$s"
		run_stage "checkers-$s" checkers_stage "$s"
		run_stage "vm-$s" vm_stage "$s"
		run_stage "fuzz-$s" env SERIES="$s" SOAK_TMUL=$tmul \
			SOAK_MEM=$vm_mem "$top/tests/vm/fuzz-soak.sh" 10 100000 10000000
		run_stage "daemonfuzz-$s" daemonfuzz_stage "$s" \
			"${DFZ_ROUNDS:-20}" "${DFZ_FILES:-32}"
		wait_stages
	fi
done
# The guest stages in two lanes side by side (CODECTL_LANES=2, the
# default on a machine with two cores or more: a guest is one TCG
# thread): stages_a in one; sframe, checkpatch, the compile stages,
# stages_b and the packages in the other, which take about as long.  CODECTL_LANES=1: each
# kernel's stages one after the other.  The builds (a make each, one core:
# as many side by side as there are lanes) and what the lanes share are
# made first.
if [ $debug -eq 0 ] && [ "$lanes" -gt 1 ]; then
	if [ $vm_only -eq 0 ]; then
		n=0
		for s in "$@"; do
			run_stage_bg "build-$s" build_stage "$s"
			n=$((n + 1))
			[ $((n % lanes)) -ne 0 ] || wait_stages
		done
		wait_stages
	fi
	[ -d "$cache/ondemand-python3.11" ] ||
		"$top/scripts/stage-python.sh" "$cache/ondemand-python3.11"
	[[ " $* " != *-arm64\ * ]] ||
		"$top/scripts/stage-arm64-ondemand.sh" "$cache/arm64-ondemand" >/dev/null
	"$top/scripts/stage-node.sh" "$cache/nodejs" >/dev/null
	"$top/scripts/stage-java.sh" "$cache/java" >/dev/null
	run_bg lane-a lane_a "$@"
	run_bg lane-b lane_b "$@"
	wait_stages
elif [ $debug -eq 0 ]; then
	[ $vm_only -eq 1 ] || compile_stages
	for s in "$@"; do
		[ $vm_only -eq 1 ] || run_stage "build-$s" build_stage "$s"
		stages_a "$s"
		stages_b "$s"
	done
	packages_stage "$@"
fi


# The summary, also kept as $logs/summary.log and, for
# scripts/compat-figures.sh (docs/compatibility.md's tables: each stage's
# latest run), as $logs/summary-DATE.log: scripts/test-times.sh makes
# docs/testing.md's table of stage times from its "time STAGE SECONDS"
# lines.
echo
{
	echo "=== summary ($(($(date +%s) - start))s)"
	[ ${#failures[@]} -eq 0 ] || printf '%s\n' "=== failures" "${failures[@]}" "=== counts"
	printf '%s\n' "${summary[@]}" "${skip_lines[@]}"
	echo "date $(date -u -d "@$start" +%Y-%m-%dT%H:%MZ)" \
		"commit $commit" \
		"args ${args:-default}"
	printf '%s\n' "${times[@]}"
	if [ ${#skipped[@]} -gt 0 ]; then
		echo "total: $total_p passed, $total_f failed; SKIPPED: ${skipped[*]} (why: above)"
	else
		echo "total: $total_p passed, $total_f failed"
	fi
} | tee "$logs/summary.log"
cp "$logs/summary.log" "$logs/summary-$(date -u -d "@$start" +%Y%m%dT%H%M%SZ).log"
[ "$total_f" -eq 0 ]
