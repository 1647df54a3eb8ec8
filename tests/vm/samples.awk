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
#   perf_lr   1 when its second frame is not in code and is perf's own,
#             the sampled lr less one with its pointer authentication
#             code (tests/vm/perf-lr.awk: Debian 13's pac-ret objects),
#             not a frame of the kernel's callchain, which codectl's
#             walk gives
# Variables: comm, exe ("(PATH)" as perf prints a dso; "(*PATH)": any
# file whose name ends in PATH, a container's, which perf may name from
# outside it), entry (the loader's e_entry, hex), ld (its file name);
# diag=1: the first of COMM's samples that is incomplete, and the first
# with a frame not in code, to stderr; stacks=1: each line followed by
# its frames, " ip sym(dso)" each.  Run after tests/vm/perf-lr.awk
# (awk -f perf-lr.awk -f samples.awk): minus1(), getlr().

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

function isexe(d) {
	return sfx == "" ? d == exe : ends(d, sfx)
}

function flush(   c, plr) {
	c = on && ((isexe(lastd) && ends(prevd, "/libc.so.6)")) ||
		   (ends(lastd, "/" ld ")") &&
		    hex(lastip) >= e && hex(lastip) < e + 64))
	plr = n >= 2 && d2 == "([unknown])" && lr != "" && ip2 == minus1(lr)
	nc -= plr
	if (n)
		print t, c, n, nc, on, leaf ~ /@plt$/, plr (stacks ? stack : "")
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
	getlr()
	on = $1 == comm
	t = $2
	sub(/:$/, "", t)
	next
}

/^[ \t]*$/ { flush(); next }

/^[ \t]*ABI:/ { getlr(); next }

{
	if (!n++)
		leaf = $2
	if (n == 2) {
		ip2 = $1
		sub(/^0+/, "", ip2)
		d2 = $NF
	}
	prevd = lastd
	lastd = $NF
	lastip = $1
	nc += $NF == "([unknown])"
	if (diag || stacks)
		stack = stack " " $1 " " $2 $NF
}

END { flush() }
