#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# codectl synth -r (tools/codectl.c), in TAP: the rules it prints for
# synth_plt.so, at link-time addresses read with nm and readelf: PLT0
# after its push, a PLT entry before and after its own push, reg_cfa with
# its CFA in rbx (DWARF register 3), and an address no rule covers.  Run
# from tests/unit after make.

CODECTL=../../tools/codectl
SO=./synth_plt.so

echo "1..5"
. ./tap.sh

plt=$(readelf -SW "$SO" | awk '{ for (i = 1; i < NF; i++) if ($i == ".plt") print $(i + 2) }')
reg=$(nm "$SO" | awk '$3 == "reg_cfa" { print $1 }')
hex() { printf '%x' "$(($1))"; }
# says ADDR WANT: codectl synth -r at ADDR (hex) prints "0xADDR: WANT"
says() {
	got=$("$CODECTL" synth -r "0x$1" "$SO" 2>&1)
	[ "$got" = "0x$1: $2" ] || { echo "got: $got"; return 1; }
}

check "PLT0 after its push: cfa sp+16" \
	says "$(hex "0x$plt")" "cfa sp+16 ra *(cfa-8) fp same"
check "a PLT entry before its push: cfa sp+8" \
	says "$(hex "0x$plt + 16")" "cfa sp+8 ra *(cfa-8) fp same"
check "a PLT entry after its push: cfa sp+16" \
	says "$(hex "0x$plt + 27")" "cfa sp+16 ra *(cfa-8) fp same"
check "a CFA in rbx: cfa r3+16" \
	says "$(hex "0x$reg + 4")" "cfa r3+16 ra *(cfa-8) fp same"
check "an address no rule covers: none" says 1 "none"
# shellcheck disable=SC2154 # tap.sh's
[ "$failed" -eq 0 ]
