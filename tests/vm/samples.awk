# SPDX-License-Identifier: GPL-2.0
#
# The samples of `perf script --no-inline -F comm,time,ip,sym,dso` (and
# uregs on arm64), one line each: "time complete frames notcode mine plt
# perf_lr" (the on-demand tests, tests/vm/ondemand.sh and
# arm64-ondemand.sh).
#   mine      1 when the sample is COMM's
#   complete  1 when it is COMM's and its outermost frame is EXE's,
#             called from libc, or it is at the dynamic loader's entry
#             (within 64 bytes of ENTRY, in a file whose name ends in LD)
#   frames    its frames
#   notcode   its frames not in code (perf knows no object there),
#             whoever's the sample is, but perf_lr's
#   plt       1 when its innermost frame is a PLT stub (no CFI)
#   perf_lr   1 when its second frame is not in code and is perf's own:
#             on arm64 perf record -g records the link register, and
#             perf script puts the leaf's caller it finds from it, less
#             1, after the leaf; from a return address signed by pac-ret
#             (Debian 13's objects) it does not strip the pointer
#             authentication code.  Seen as the sampled lr (uregs,
#             " ABI:2 lr:0x...") less 1: not a frame of the kernel's
#             callchain, which codectl's walk gives.
# Variables: comm, exe ("(PATH)" as perf prints a dso; "(*PATH)": any
# file whose name ends in PATH, a container's, which perf may name from
# outside it), entry (the loader's e_entry, hex), ld (its file name);
# diag=1: the first of COMM's samples that is incomplete, and the first
# with a frame not in code, to stderr.

function hex(s,   i, v) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}

function ends(s, t) {
	return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t
}

# The hex string S (perf's, without 0x or leading zeros) less 1.
function dec1(s,   i, d, out) {
	s = tolower(s)
	sub(/^0x/, "", s)
	for (i = length(s); i > 0; i--) {
		d = index("0123456789abcdef", substr(s, i, 1)) - 1
		if (d > 0) {
			out = substr(s, 1, i - 1) substr("0123456789abcdef", d, 1) out
			break
		}
		out = "f" out
	}
	sub(/^0+/, "", out)
	return out
}

function isexe(d) {
	return sfx == "" ? d == exe : ends(d, sfx)
}

function flush(   c, plr) {
	c = on && ((isexe(lastd) && ends(prevd, "/libc.so.6)")) ||
		   (ends(lastd, "/" ld ")") &&
		    hex(lastip) >= e && hex(lastip) < e + 64))
	plr = n >= 2 && d2 == "([unknown])" && lr != "" && ip2 == dec1(lr)
	nc -= plr
	if (n)
		print t, c, n, nc, on, leaf ~ /@plt$/, plr
	if (diag && on && n && !c && !shown++)
		print "# first incomplete:" stack >"/dev/stderr"
	if (diag && on && nc && !ncshown++)
		print "# first with a frame not in code:" stack >"/dev/stderr"
	n = nc = 0
	lastd = prevd = stack = lr = ip2 = d2 = ""
	on = 0
}

BEGIN {
	e = hex(entry)
	sfx = substr(exe, 1, 2) == "(*" ? substr(exe, 3) : ""
}

/^[^ \t]/ {
	flush()
	on = $1 == comm
	t = $2
	sub(/:$/, "", t)
	next
}

/^[ \t]*$/ { flush(); next }

# perf script's uregs, after the frames: the sampled link register.
/^[ \t]+ABI:/ {
	for (i = 2; i <= NF; i++)
		if ($i ~ /^lr:/)
			lr = tolower(substr($i, 4))
	next
}

{
	if (!n++)
		leaf = $2
	if (n == 2) {
		ip2 = tolower($1)
		d2 = $NF
	}
	prevd = lastd
	lastd = $NF
	lastip = $1
	nc += $NF == "([unknown])"
	if (diag)
		stack = stack " " $1 " " $2 $NF
}

END { flush() }
