#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The rtld audit module, in TAP: a program that dlopen()s and dlclose()s
# two_text.so (two executable segments) runs under
# LD_AUDIT=libcodectl-audit.so unchanged without the device, silent unless
# CODECTL_DEBUG is set; under libcodectl-audit-fake.so (the same module
# with the fake device, logging to $CODECTL_FAKE_LOG) every object is
# registered, libc with a synthesised section valid in its text, and
# two_text.so's segments are registered at dlopen and unregistered at
# dlclose.  Run from tests/unit after make.

AUDIT=$(cd ../../lib && pwd)/libcodectl-audit.so
FAKE=$(pwd)/libcodectl-audit-fake.so
SO=$(pwd)/two_text.so
PROG=./audit_prog
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "1..7"
. ./tap.sh

$PROG "$SO" >"$tmp/plain.out" 2>"$tmp/plain.err"
echo $? >"$tmp/plain.rc"

unchanged() {
	[ ! -e /dev/codectl ] || { echo "/dev/codectl exists here"; return 1; }
	LD_AUDIT=$AUDIT $PROG "$SO" >"$tmp/a.out" 2>"$tmp/a.err"
	[ "$?" = "$(cat "$tmp/plain.rc")" ] && [ "$(cat "$tmp/plain.rc")" = 3 ] &&
	cmp "$tmp/plain.out" "$tmp/a.out" && [ ! -s "$tmp/a.err" ]
}
check "no device: the program runs unchanged, nothing on stderr" unchanged

debug() {
	CODECTL_DEBUG=1 LD_AUDIT=$AUDIT $PROG "$SO" >"$tmp/d.out" 2>"$tmp/d.err"
	[ "$?" = 3 ] && cmp "$tmp/plain.out" "$tmp/d.out" &&
	grep -q '^codectl-audit: (main program): not registered: No such device$' "$tmp/d.err"
}
check "CODECTL_DEBUG: the reason on stderr, stdout unchanged" debug

CODECTL_FAKE_LOG=$tmp/log LD_AUDIT=$FAKE $PROG "$SO" >"$tmp/f.out" 2>"$tmp/f.err"
echo $? >"$tmp/f.rc"
log=$tmp/log

fake_runs() {
	[ "$(cat "$tmp/f.rc")" = 3 ] && cmp "$tmp/plain.out" "$tmp/f.out" &&
	[ ! -s "$tmp/f.err" ]
}
check "fake device: the program runs unchanged, silently" fake_runs

libc_synth() {
	grep -E '^register 88 1 0x[0-9a-f]+ 0x[0-9a-f]+ 1 /.*/libc\.so\.6$' "$log" ||
	{ cat "$log"; return 1; }
}
check "libc registered with a synthesised section, valid in its text" libc_synth

main_and_ldso() {
	prog=$(readlink -f $PROG)
	grep -qE "^register [0-9]+ [01] .* $prog\$" "$log" &&
	grep -qE '^register [0-9]+ [01] .* /.*ld-linux-x86-64\.so\.2$' "$log" ||
	{ cat "$log"; return 1; }
}
check "the main program and ld.so are registered" main_and_ldso

vdso_synth() {
	grep -qE '^register 88 1 0x[0-9a-f]+ 0x[0-9a-f]+ 1 linux-vdso\.so\.1$' "$log" ||
	{ cat "$log"; return 1; }
}
check "the vdso registered with a section synthesised from memory" vdso_synth

dlopen_dlclose() {
	grep -E "^register 88 1 .* 1 $SO\$" "$log" >"$tmp/reg" &&
	[ "$(wc -l <"$tmp/reg")" = 2 ] || { cat "$log"; return 1; }
	# each segment's range is unregistered (at dlclose, before exit's)
	while read -r _ _ _ start end _ _; do
		grep -qx "unregister $start $end" "$log" ||
		{ echo "$start-$end not unregistered"; cat "$log"; return 1; }
	done <"$tmp/reg"
}
check "dlopen registers both segments of two_text.so, dlclose unregisters them" dlopen_dlclose

[ "$failed" -eq 0 ]
