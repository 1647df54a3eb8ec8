#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check what the unwinding tests assume about a variant's binaries, after
# linking them (tests/vm/unwind/Makefile runs this; a failure fails the
# build):
#
#   check-build.sh VARIANT DIR READELF OBJDUMP NM
#
#   v1/v2/v3  unwind-test, libuwlib.so and bench-unwind have PT_GNU_SFRAME
#             and an .sframe section of that SFrame version (per the
#             toolchain's own readelf); every function on a tested chain has
#             an FDE; drap_fn has one exactly when the test expects it (v3:
#             gas 2.40/2.44 drop DRAP functions); the asm functions of
#             syscall_in_fp_frame have none
#   fp        no .sframe anywhere
#   all       plt_caller calls uwlib_entry through the PLT, and uwlib_entry
#             calls uwlib_mid through the library's PLT
set -euo pipefail

variant=$1 dir=$2 readelf=$3 objdump=$4 nm=$5
errors=0
err() {
	echo "check-build: $variant: $*" >&2
	errors=$((errors + 1))
}

# FDE start addresses (hex, no 0x) of FILE, from `readelf --sframe`.
fde_pcs() {
	"$readelf" --sframe "$1" | sed -n 's/.*func idx \[[0-9]*\]: pc = 0x\([0-9a-f]*\),.*/\1/p' |
		sed 's/^0*//'
}

# Address (hex, no leading zeros) of the global function SYM in FILE.
sym_addr() {
	"$nm" --defined-only "$1" | awk -v s="$2" '$3 == s && ($2 == "T" || $2 == "t") && !n++ { print $1 }' |
		sed 's/^0*//'
}

# covered FILE SYM: does an FDE start at SYM?
covered() {
	local a
	a=$(sym_addr "$1" "$2")
	[ -n "$a" ] || { err "$(basename "$1"): no symbol $2"; return 2; }
	grep -qx "$a" <<<"$pcs"
}

CHAINS="uw_unwind uw_unwind_fd uw_take chain_a chain_b chain_c chain_c_flags
rec rec_leaf plt_cb plt_caller realign_fn realign_leaf drap_leaf drap_caller
sig_handler sig_victim sig_caller spin_handler spin_fn spin_caller jit_cb
jit_caller asm_caller libc_ioctl_caller thr_leaf thr_rec thr_main run_one main
t_chain t_recursion_full t_recursion_depth t_plt t_realign t_drap t_signal
t_signal_async t_jit t_syscall_in_fp_frame t_libc_ioctl t_flags
t_only_own_method t_unregistered"

case $variant in
v1 | v2 | v3)
	ver=${variant#v}
	for f in unwind-test libuwlib.so bench-unwind; do
		file=$dir/$f
		[ -e "$file" ] || continue
		"$readelf" -lW "$file" | grep GNU_SFRAME >/dev/null || err "$f: no PT_GNU_SFRAME"
		got=$("$readelf" --sframe "$file" | sed -n 's/^ *Version: *//p' | sort -u | tr '\n' ' ')
		[ "$got" = "SFRAME_VERSION_$ver " ] ||
			err "$f: SFrame version '$got', expected SFRAME_VERSION_$ver"
	done
	file=$dir/unwind-test
	pcs=$(fde_pcs "$file")
	for s in $CHAINS; do
		covered "$file" "$s" || err "unwind-test: no SFrame FDE for $s"
	done
	if [ "$ver" -ge 3 ]; then
		covered "$file" drap_fn || err "unwind-test: no FDE for drap_fn (the test expects one from gas 2.47)"
	else
		! covered "$file" drap_fn || err "unwind-test: an FDE for drap_fn (the test expects gas to drop it)"
	fi
	for s in uw_asm_inner uw_asm_outer; do
		! covered "$file" "$s" || err "unwind-test: an FDE for $s (must have none)"
	done
	pcs=$(fde_pcs "$dir/libuwlib.so")
	for s in uwlib_entry uwlib_mid; do
		covered "$dir/libuwlib.so" "$s" || err "libuwlib.so: no SFrame FDE for $s"
	done
	;;
fp)
	for f in unwind-test libuwlib.so; do
		! "$readelf" -SW "$dir/$f" | grep '\.sframe' >/dev/null || err "$f: has .sframe"
	done
	;;
*)
	err "unknown variant"
	;;
esac

# The calls go through the PLTs.
"$objdump" -d --no-show-raw-insn "$dir/unwind-test" |
	awk '/^[0-9a-f]+ <plt_caller>:/ { p = 1; next } /^$/ { p = 0 } p' |
	grep 'call.*<uwlib_entry@plt>' >/dev/null || err "plt_caller does not call uwlib_entry@plt"
"$objdump" -d --no-show-raw-insn "$dir/libuwlib.so" |
	awk '/^[0-9a-f]+ <uwlib_entry>:/ { p = 1; next } /^$/ { p = 0 } p' |
	grep 'call.*<uwlib_mid@plt>' >/dev/null || err "uwlib_entry does not call uwlib_mid@plt"

[ "$errors" -eq 0 ] || exit 1
