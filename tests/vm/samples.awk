# SPDX-License-Identifier: GPL-2.0
#
# The samples of `perf script --no-inline -F comm,time,ip,sym,dso`, one
# line each: "time complete frames notcode mine plt" (the on-demand
# tests, tests/vm/ondemand.sh and arm64-ondemand.sh).
#   mine      1 when the sample is COMM's
#   complete  1 when it is COMM's and its outermost frame is EXE's,
#             called from libc, or it is at the dynamic loader's entry
#             (within 64 bytes of ENTRY, in a file whose name ends in LD)
#   frames    its frames
#   notcode   its frames not in code (perf knows no object there),
#             whoever's the sample is
#   plt       1 when its innermost frame is a PLT stub (no CFI)
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

function isexe(d) {
	return sfx == "" ? d == exe : ends(d, sfx)
}

function flush(   c) {
	c = on && ((isexe(lastd) && ends(prevd, "/libc.so.6)")) ||
		   (ends(lastd, "/" ld ")") &&
		    hex(lastip) >= e && hex(lastip) < e + 64))
	if (n)
		print t, c, n, nc, on, leaf ~ /@plt$/
	if (diag && on && n && !c && !shown++)
		print "# first incomplete:" stack >"/dev/stderr"
	if (diag && on && nc && !ncshown++)
		print "# first with a frame not in code:" stack >"/dev/stderr"
	n = nc = 0
	lastd = prevd = stack = ""
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

{
	if (!n++)
		leaf = $2
	prevd = lastd
	lastd = $NF
	lastip = $1
	nc += $NF == "([unknown])"
	if (diag)
		stack = stack " " $1 " " $2 $NF
}

END { flush() }
