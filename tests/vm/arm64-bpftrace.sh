# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# shellcheck disable=SC2154 # $dir, $tmp, $chain, $hooks, $params: arm64-perf.sh
#
# bpftrace on arm64, sourced by tests/vm/arm64-perf.sh (busybox sh, in
# the arm64 guest) while codectl.ko is loaded.  Debian bookworm's arm64
# bpftrace, unchanged (scripts/stage-arm64-root.sh), counts
# ustack(perf) in a profile probe (99 Hz) on tracee-v3 (nothing
# registered: discovery).  bpftrace's ustack is bpf_get_stackid(), whose
# callchain is the kernel's get_perf_callchain(): perf_callchain_user(),
# which codectl's kprobe redirects to its own walk.
#   - hooks on: >= 99% of the stacks in tr_leaf complete (their first
#     nine frames tr_leaf, tr_f7 .. tr_f1, main), and the hook on
#     perf_callchain_user counted redirected calls;
#   - hooks off (module parameter hooks=0: the kernel's frame-record
#     walk): <= 5% complete, so that the share above is codectl's.
# The addresses are resolved once the tracee is gone, by tracee-v3
# resolve (ASLR off: the same load addresses).

# bpf_run NAME: 3 s of tracee-v3 under bpftrace; prints "TOTAL COMPLETE":
# the samples whose stack starts in tr_leaf, and those complete.
bpf_run() {
	timeout 120 bpftrace -q -c "$dir/tracee-v3 3" -e 'profile:hz:99
		/pid == cpid && comm == "tracee-v3"/ { @[ustack(perf)] = count(); }' \
		>"$tmp/$1.out" 2>"$tmp/$1.err"
	"$dir/tracee-v3" resolve <"$tmp/$1.out" |
	awk '/^@\[$/ { s = ""; next }
	     /^\]: / { print $2 s; next }
	     /^[ \t]+[^ \t]/ { s = s " " $1 }' | chain_share "$1"
}

if ! command -v bpftrace >/dev/null; then
	not_ok "bpftrace" "not in the guest"
else
	echo "# $(bpftrace --version 2>&1)"
	before=$(hook_counter perf_callchain_user redirected)
	r=$(bpf_run bpf-on)
	after=$(hook_counter perf_callchain_user redirected)
	# shellcheck disable=SC2086 # two words
	expect_share "bpftrace ustack, tracee-v3, hooks on" samples $r ge 99
	check "bpftrace ustack: perf_callchain_user redirected" \
		"redirected $before -> $after" [ "${after:-0}" -gt "${before:-0}" ]
	fig "arm64 bpftrace tracee-v3 hooks on: $(echo "$r" | awk '{ printf "%d/%d complete", $2, $1 }')"
	echo 0 >"$params/hooks"
	r=$(bpf_run bpf-off)
	echo 1 >"$params/hooks"
	# shellcheck disable=SC2086 # two words
	expect_share "bpftrace ustack, tracee-v3, hooks off" samples $r le 5
	fig "arm64 bpftrace tracee-v3 hooks off: $(echo "$r" | awk '{ printf "%d/%d complete", $2, $1 }')"
fi
