# SPDX-License-Identifier: GPL-2.0
#
# perf's own frame from the link register, for the awk programs that read
# `perf script -F ...,uregs` on arm64 (tests/vm/samples.awk, the on-demand
# tests'; tests/vm/runtimes.sh's share()); minus1() also for
# tests/vm/startup.sh's return addresses.  perf record -g records the lr
# there, and perf script puts the leaf's caller its DWARF unwinder finds
# from it, less one, as the sample's second frame.  Where the lr holds a
# return address signed with pointer authentication (pac-ret objects, a
# vDSO that signs on entry) bookworm's perf leaves the PAC on it, and
# perf finds no object there.  The kernel's frames are stripped: a
# second frame equal to the lr less one is perf's, not the walk's.

# The hexadecimal H less one, without leading zeros (awk numbers are
# doubles: too narrow for a 64-bit address).
function minus1(h,   i, d, tail) {
	tail = ""
	for (i = length(h); i > 0; i--) {
		d = index("0123456789abcdef", substr(h, i, 1)) - 1
		if (d > 0) {
			h = substr(h, 1, i - 1) substr("0123456789abcdef", d, 1) tail
			sub(/^0+/, "", h)
			return h
		}
		tail = tail "f"
	}
	return ""
}

# The link register of the sample into lr (without leading zeros), from
# a sample's first line or the "ABI:" line of the user registers perf
# prints after the frames.
function getlr() {
	if (match($0, /lr:0x[0-9a-f]+/)) {
		lr = substr($0, RSTART + 5, RLENGTH - 5)
		sub(/^0+/, "", lr)
	}
}
