#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The figures of docs/ondemand.md, made from what measured them:
#
#   scripts/ondemand-figures.sh [LOGDIR [DOC]]     the guests' figures
#   scripts/ondemand-figures.sh --usr [DIR [DOC]]  a system's objects
#   scripts/ondemand-figures.sh --hash [DOC]       the cache key's cost
#
# The first reads the FIGURE lines tests/vm/ondemand.sh printed in each
# kernel's console (LOGDIR/ondemand-SERIES.console, as scripts/check.sh
# keeps them; default its log directory) and puts the tables between the
# ondemand markers of DOC (default docs/ondemand.md; "-" prints them);
# and those of tests/vm/arm64-ondemand.sh (ondemand-SERIES-arm64.console)
# between the ondemand-arm64 markers.
# The second fills a scratch cache with every ELF object under DIR
# (default /usr; `codectl daemon --prime`, no module needed) and puts
# what it took between the usr markers.  The third times the SHA-256
# that keys the cache (`codectl daemon --hash`: the daemon's own code) on
# python3.11, node and libLLVM-14 where installed, 7 runs each, files in
# the page cache (the daemon hashes files processes map), and puts the
# figures between the hash markers.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

if [ "${1:-}" = --usr ]; then
	dir=${2:-/usr} doc=${3:-$top/docs/ondemand.md}
	make -s -C "$top" lib tools >/dev/null
	scratch=$(mktemp -d)
	trap 'rm -rf "$scratch"' EXIT
	out=$("$top/tools/codectl" daemon --cache "$scratch" --prime "$dir")
	get() { awk -v k="$1" '$1 == k { print $2 }' <<<"$out"; }
	table=$(cat <<EOF
On $(. /etc/os-release && echo "$PRETTY_NAME") ($(date -u +%Y-%m-%d), this
machine's \`$dir\`, $(nproc) CPUs; \`codectl daemon --prime $dir\`):

| what | figure |
|---|---|
| ELF objects (x86-64 executables and libraries) | $(get objects) |
| with a section synthesised | $(get sections) |
| without CFI (remembered as such) | $(get no_cfi) |
| with their own SFrame | $(get own_sframe) |
| failed | $(get failed) |
| SFrame bytes: the kernel's imports if every one were in use | $(awk -v b="$(get section_bytes)" 'BEGIN { printf "%.1f MiB", b / 1048576 }') |
| cache on disk | $(du -sh "$scratch" | cut -f1) |
| time, all of them, one at a time | $(get seconds) s |
| the daemon's peak memory (RSS) | $(get daemon_maxrss_kb) KiB |
| the largest synthesis child's peak memory | $(get child_maxrss_kb) KiB |
EOF
)
	doc_replace "$doc" usr "$table" || true
	exit 0
fi

if [ "${1:-}" = --hash ]; then
	doc=${2:-$top/docs/ondemand.md}
	make -s -C "$top" lib tools >/dev/null
	files=()
	for f in /usr/bin/python3.11 /usr/lib/x86_64-linux-gnu/libnode.so.* \
		 /usr/bin/node /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1; do
		[ -f "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || die "none of python3.11, node, libLLVM-14 is installed"
	load=$(cut -d' ' -f1 /proc/loadavg)
	out=$(for i in 1 2 3 4 5 6 7; do "$top/tools/codectl" daemon --hash "${files[@]}"; done)
	table=$(
		cat <<EOF
On $(. /etc/os-release && echo "$PRETTY_NAME") ($(date -u +%Y-%m-%d), $(nproc) CPUs,
$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(openssl version | cut -d' ' -f1-2);
load average $load before the runs; \`scripts/ondemand-figures.sh --hash\`,
7 runs each, the file in the page cache):

| file | size | SHA-256: median | fastest | slowest |
|---|---|---|---|---|
EOF
		for f in "${files[@]}"; do
			awk -v f="$f" '$2 == f { print $6, $4 }' <<<"$out" | sort -n |
			awk -v f="$f" '{ t[NR] = $1; b = $2 }
				END { printf "| %s | %.1f MiB | %.0f ms (%.0f MiB/s) | %.0f ms | %.0f ms |\n",
					f, b / 1048576, t[int((NR + 1) / 2)],
					b / 1048576 / (t[int((NR + 1) / 2)] / 1000), t[1], t[NR] }'
		done
	)
	doc_replace "$doc" hash "$table" || true
	exit 0
fi

logs=$(log_dir "${1:-}")
doc=${2:-$top/docs/ondemand.md}
consoles=() arm64=()
for s in 6.1 6.12 7.2; do
	[ -f "$logs/ondemand-$s.console" ] && consoles+=("$logs/ondemand-$s.console")
done
for s in 6.12-arm64 6.1-arm64; do
	[ -f "$logs/ondemand-$s.console" ] && arm64+=("$logs/ondemand-$s.console")
done
[ ${#consoles[@]} -gt 0 ] || [ ${#arm64[@]} -gt 0 ] ||
	die "no $logs/ondemand-*.console (scripts/check.sh runs the ondemand stages)"

# arm64 (tests/vm/arm64-ondemand.sh): python3.11's shares, between the
# ondemand-arm64 markers.
if [ ${#arm64[@]} -gt 0 ]; then
	table=$(awk '
	FNR == 1 { k = FILENAME; sub(/.*ondemand-/, "", k); sub(/\.console$/, "", k)
		   ks[++nk] = k }
	/^# on demand, arm64: / { kver[k] = $5 }
	/^FIGURE arm64 python3 / && $5 == "samples" {
		sub(/\r$/, "")
		v[k, $4] = $8 " of " $6 " " $9
		nc[k, $4] = $13
		sub(/;$/, "", nc[k, $4])
		by[k, $4] = $19
		sub(/^\(/, "", by[k, $4])
	}
	/^FIGURE arm64 daemon rss_kb / { rss[k] = $5 " KiB" }
	/^FIGURE arm64 startup samples / {
		su[k] = $7 " of " $5 " " $8 "; cut at a CFA in a register " $10 \
			", elsewhere " $12 "; DWARF " $14 " of " $16 " " $17 \
			"; without discovery when mapped, cut elsewhere " $25 " of " $21
	}
	END {
		printf "| python3.11 | what |"
		for (i = 1; i <= nk; i++) printf " %s |", ks[i]
		printf "\n|---|---|"
		for (i = 1; i <= nk; i++) printf "---|"
		printf "\n"
		split("daemon control cold", modes, " ")
		names["daemon"] = "the daemon running (its second run)"
		names["control"] = "codectl.ko alone, no daemon"
		names["cold"] = "its first run (the daemon synthesising)"
		for (m = 1; m <= 3; m++) {
			printf "| %s | complete |", names[modes[m]]
			for (i = 1; i <= nk; i++) printf " %s |", v[ks[i], modes[m]]
			printf "\n| %s | frames found by SFrame (not frame records) |", names[modes[m]]
			for (i = 1; i <= nk; i++) printf " %s |", by[ks[i], modes[m]]
			printf "\n| %s | frames not code |", names[modes[m]]
			for (i = 1; i <= nk; i++) printf " %s |", nc[ks[i], modes[m]]
			printf "\n"
		}
		printf "| startup | a program that is all startup (tests/vm/startup.sh), 40 runs, warm: complete |"
		for (i = 1; i <= nk; i++) printf " %s |", su[ks[i]]
		printf "\n| all | daemon memory (RSS) |"
		for (i = 1; i <= nk; i++) printf " %s |", rss[ks[i]]
		printf "\n\nKernels: "
		for (i = 1; i <= nk; i++) printf "%s%s", (i > 1 ? ", " : ""), kver[ks[i]]
		printf ".\n"
	}' "${arm64[@]}")
	doc_replace "$doc" ondemand-arm64 "$table" || true
fi
[ ${#consoles[@]} -gt 0 ] || exit 0

table=$(awk '
	FNR == 1 { k = FILENAME; sub(/.*ondemand-/, "", k); sub(/\.console$/, "", k)
		   ks[++nk] = k }
	/^# kernel / { kver[k] = $3 }
	# One row a key of GROUP: its name, then each kernel'"'"'s
	# ARR[kernel, PREFIX key].
	function rows(group, n, keys, names, arr, prefix,   i, j) {
		for (j = 1; j <= n; j++) {
			printf "\n| %s | %s |", group, names[keys[j]]
			for (i = 1; i <= nk; i++)
				printf " %s |", arr[ks[i], prefix keys[j]]
		}
	}
	/^FIGURE / {
		sub(/\r$/, "")
		if ($3 ~ /^(control|cold|daemon|dwarf)$/ && $4 == "samples") {
			v[k, $2, $3] = $7 " of " $5 " " $8
			if ($11 == "not_code") nc[k, $2, $3] = $12
		}
		if ($3 == "cold" && $4 == "first_complete_after_s") {
			t[k, $2] = $5 " s"
			c[k, $2] = $7
		}
		if ($2 == "daemon" && $3 == "rss_kb") rss[k] = $4 " KiB"
		if ($2 == "imports") imp[k] = $3 " objects, " int($5 / 1024) " KiB"
		if ($2 == "daemon" && $3 ~ /^cpu_ticks/) cpu[k] = $4 " ticks of 10 ms"
		if ($2 == "overflow") ov[k] = $7 " of " $5
		if ($2 == "first-look" && $4 == "samples")
			fl[k] = $7 " of " $5 sprintf(" (%.1f%%)", $5 ? 100 * $7 / $5 : 0) \
				", covered after " $9 " s; " $13 " of the look'"'"'s 300 objects after it"
		if ($2 == "primed" && $4 == "samples")
			pr[k] = $7 " of " $5 sprintf(" (%.1f%%)", $5 ? 100 * $7 / $5 : 0) \
				", covered after " $9 " s"
		if ($2 == "timeline" && ($3 == "primed" || $3 == "first-look"))
			tl[k, $3] = "served after " $8 " s, imported after " $10 \
				" s, its last object after " $12 " s; cut samples: " \
				$16 " before its import, " $18 " before the last, " $20 " after"
		# FIGURE container MODE python3.13 samples N complete C (P%) ...
		if ($2 == "container" && $4 == "python3.13" && $5 == "samples")
			ctr[k, $3] = $8 " of " $6 " " $9
		if ($2 == "python3" && $3 == "reloaded" && $4 == "first_complete_after_s")
			rel[k] = $5 " s"
		if ($2 == "python3" && $3 ~ /^poison-/ && $4 == "samples")
			poi[k, $3] = $7 " of " $5 " " $8
		# FIGURE startup samples N complete C (P%) cut_reg R cut_other O
		#   dwarf D of T (P%) control C of N cut_reg R cut_other O
		if ($2 == "startup" && $3 == "samples")
			su[k] = $6 " of " $4 " " $7 "; cut at a CFA in a register " $9 \
				", elsewhere " $11 "; DWARF " $13 " of " $15 " " $16 \
				"; without discovery when mapped, cut elsewhere " $24 " of " $20
		if ($2 == "daemon-fuzz:")
			fz[k] = $8 " hostile files: " $10 " primed, " $12 " queued; " \
				$14 " crashes; " $20 " of " $18 " cache entries differing; " $24 " s"
	}
	END {
		printf "| program | what |"
		for (i = 1; i <= nk; i++) printf " %s |", ks[i]
		printf "\n|---|---|"
		for (i = 1; i <= nk; i++) printf "---|"
		printf "\n"
		split("python3 perl sqlite3 xz", progs, " ")
		split("daemon dwarf control cold", modes, " ")
		names["daemon"] = "complete, the daemon running (its second run)"
		names["dwarf"] = "complete, perf --call-graph dwarf"
		names["control"] = "complete, no daemon"
		names["cold"] = "complete, its first run (the daemon synthesising)"
		for (p = 1; p <= 4; p++) {
			for (m = 1; m <= 4; m++) {
				printf "| %s | %s |", progs[p], names[modes[m]]
				for (i = 1; i <= nk; i++)
					printf " %s |", v[ks[i], progs[p], modes[m]]
				printf "\n"
			}
			printf "| %s | frames not code: daemon, cold, dwarf |", progs[p]
			for (i = 1; i <= nk; i++)
				printf " %s, %s, %s |", nc[ks[i], progs[p], "daemon"],
					nc[ks[i], progs[p], "cold"], nc[ks[i], progs[p], "dwarf"]
			printf "\n| %s | first run: first complete sample after; %% complete per half second |", progs[p]
			for (i = 1; i <= nk; i++)
				printf " %s; %s |", t[ks[i], progs[p]], c[ks[i], progs[p]]
			printf "\n"
		}
		printf "| all | daemon memory (RSS) after the four |"
		for (i = 1; i <= nk; i++) printf " %s |", rss[ks[i]]
		printf "\n| all | imports (kernel memory for their sections) |"
		for (i = 1; i <= nk; i++) printf " %s |", imp[ks[i]]
		printf "\n| all | daemon CPU during a 3 s profile of a covered python3 |"
		for (i = 1; i <= nk; i++) printf " %s |", cpu[ks[i]]
		printf "\n| overflow | 300 plug-ins: complete once the daemon caught up |"
		for (i = 1; i <= nk; i++) printf " %s |", ov[ks[i]]
		printf "\n| demand first | python3 started 1 s after the daemon, during its first look: first profile |"
		for (i = 1; i <= nk; i++) printf " %s |", fl[ks[i]]
		printf "\n| demand first | the same: from its first sample, python3.11 (and its objects) |"
		for (i = 1; i <= nk; i++) printf " %s |", tl[ks[i], "first-look"]
		printf "\n| primed | python3 first met after --prime-share synthesised its objects: first profile |"
		for (i = 1; i <= nk; i++) printf " %s |", pr[ks[i]]
		printf "\n| primed | the same: from its first sample, python3.11 (and its objects) |"
		for (i = 1; i <= nk; i++) printf " %s |", tl[ks[i], "primed"]
		split("first-met warm second rebooted", cm, " ")
		cn["first-met"] = "Debian 13'"'"'s python3.13 in a container, the image'"'"'s first: first profile"
		cn["warm"] = "the same, warm"
		cn["second"] = "a new container of the image: first profile"
		cn["rebooted"] = "a new container after a reboot (the cache kept): first profile"
		rows("container", 4, cm, cn, ctr, "")
		printf "\n| startup | a program that is all startup (tests/vm/startup.sh), 40 runs, warm: complete |"
		for (i = 1; i <= nk; i++) printf " %s |", su[ks[i]]
		printf "\n| reload | python3 after a module reload: first complete sample after |"
		for (i = 1; i <= nk; i++) printf " %s |", rel[ks[i]]
		split("nocfi wrongcfi namespace", pk, " ")
		pn["nocfi"] = "root'"'"'s python3.11 after a user'"'"'s look-alike without CFI"
		pn["wrongcfi"] = "the same, the look-alike with wrong CFI"
		pn["namespace"] = "the same, the look-alike by its path in a namespace"
		rows("poisoning", 3, pk, pn, poi, "poison-")
		printf "\n| fuzzing | the daemon fuzzed (tests/vm/daemon-fuzz.sh) |"
		for (i = 1; i <= nk; i++) printf " %s |", fz[ks[i]]
		printf "\n\nKernels: "
		for (i = 1; i <= nk; i++) printf "%s%s", (i > 1 ? ", " : ""), kver[ks[i]]
		printf ".\n"
	}' "${consoles[@]}")
doc_replace "$doc" ondemand "$table" || true
