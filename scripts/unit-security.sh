#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The systemd units' sandboxes, measured:
#
#   scripts/unit-security.sh [DOC]          exposure before and after
#   scripts/unit-security.sh --syscalls UNIT  the system calls UNIT allows
#
# The first runs `systemd-analyze security --offline=true` (no running
# systemd needed) on each unit of packaging/ as it is and as it was before
# its sandbox (the unit at the parent of the commit that first gave it a
# CapabilityBoundingSet; the last commit's while none did), and puts the
# table between the unit-security markers of DOC (default
# docs/install.md; "-" prints it).  The second expands the unit's
# SystemCallFilter lines (an allow list, then ~ lists taken out) into
# system call names, one a line, with systemd-analyze syscall-filter's
# groups: tests/vm/ondemand.sh checks what the daemon calls against it.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
command -v systemd-analyze >/dev/null || die "no systemd-analyze (apt install systemd)"

# syscalls UNIT: the names its SystemCallFilter allows.
syscalls() {
	local unit=$1 filters
	[ -r "$unit" ] || die "$unit: cannot read it"
	filters=$(sed -n 's/^SystemCallFilter=//p' "$unit")
	[ -n "$filters" ] || die "$unit: no SystemCallFilter"
	[[ $(head -n 1 <<<"$filters") != "~"* ]] ||
		die "$unit: its first SystemCallFilter is a deny list, not an allow list"
	systemd-analyze syscall-filter --no-pager 2>/dev/null | awk -v filters="$filters" '
		/^@/ { g = $1; next }
		/^ +[@a-z0-9_]/ { m[g] = m[g] " " $1 }
		function add(x, on,   n, i, w) {
			if (x !~ /^@/) { allow[x] = on; return }
			if (!(x in m)) { print "unknown group " x > "/dev/stderr"; bad = 1; return }
			n = split(m[x], w, " ")
			for (i = 1; i <= n; i++) add(w[i], on)
		}
		END {
			nl = split(filters, l, "\n")
			for (i = 1; i <= nl; i++) {
				on = l[i] !~ /^~/
				sub(/^~/, "", l[i])
				nw = split(l[i], w, " ")
				for (j = 1; j <= nw; j++) add(w[j], on)
			}
			for (x in allow) if (allow[x]) print x
			exit bad
		}' | sort
}

if [ "${1:-}" = --syscalls ]; then
	[ $# -eq 2 ] || die "usage: $0 --syscalls UNIT"
	syscalls "$2"
	exit 0
fi

doc=${1:-$top/docs/install.md}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# exposure FILE: "2.4 OK" and the number of checks it fails.
exposure() {
	local out
	out=$(systemd-analyze security --offline=true "$1" 2>&1) ||
		die "systemd-analyze security $1: $out"
	printf '%s, %s checks failed' \
		"$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]* [A-Z]*\).*/\1/p' <<<"$out")" \
		"$(grep -c '^✗' <<<"$out" || true)"
}
rows=
for path in packaging/*.service; do
	u=${path##*/}
	base=$(git -C "$top" log --reverse --format=%H -S CapabilityBoundingSet -- "$path" | sed -n 1p)
	rev=${base:+$base^}
	mkdir -p "$scratch/before" "$scratch/after"
	git -C "$top" show "${rev:-HEAD}:$path" >"$scratch/before/$u" ||
		die "$path: not in git at ${rev:-HEAD}"
	cp "$top/$path" "$scratch/after/$u"
	rows+="| \`$u\` | $(exposure "$scratch/before/$u") | $(exposure "$scratch/after/$u") |"$'\n'
	before_rev=$(git -C "$top" rev-parse --short "${rev:-HEAD}")
	rows=${rows/"| \`$u\` |"/"| \`$u\` (before: $before_rev) |"}
done
table="\`systemd-analyze security --offline=true UNIT\` ($(systemd-analyze --version | sed -n 1p);
0 is best, 10 worst; \`scripts/unit-security.sh\`):

| unit | exposure before the sandbox | with it |
|---|---|---|
${rows%$'\n'}"
doc_replace "$doc" unit-security "$table" || true
