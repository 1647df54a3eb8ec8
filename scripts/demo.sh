#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo of the README: Debian's unmodified python3.11 running a small
# pure-Python program (tests/demo/workload.py) under Debian's unmodified
# `perf record -g`, on Debian's stock kernel (6.12 from bookworm-backports
# by default, or the series given) under QEMU, twice in one boot:
#   - control: the kernel's own unwinder (frame pointers; Debian builds
#     python3.11 and libc without them): broken stacks;
#   - codectl: the module loaded and `codectl daemon` running (as the
#     package's codectl-daemon.service): the objects python maps get SFrame
#     synthesised from their .eh_frame the first time an unwind meets them
#     (tests/demo/guest.sh, cover_objects): complete stacks, down to
#     python's _start.
# Then `perf report --stdio --children` of both runs, the share of
# samples whose stack reaches python's _start/__libc_start_main, and a
# flame graph of each (perf's own `perf script report flamegraph`, run in
# the guest, with the d3-flame-graph template from the npm registry).
# Why in the guest: perf there has the guest kernel's symbols and the very
# files it sampled, and the console only has to carry the reports and the
# HTML (100 KB), not perf.data; the guest needs bash (perf's report
# script) and the part of python's library that flamegraph.py imports.
#
#   scripts/demo.sh [SERIES] [nocodectl]
#
# nocodectl: the second run without the module too (what the demo's test,
# tests/demo/check.sh, must reject).  Results in $CODECTL_CACHE/demo (or
# .cache/demo), printed at the end.  Run as root; installs what it needs
# first (scripts/setup.sh, and npm from Debian's archive if missing).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
series=${1:-6.12}
mode=${2:-}
cache=${CODECTL_CACHE:-$top/.cache}
out=$cache/demo${mode:+-$mode}
seconds=${DEMO_SECONDS:-4}

# d3-flame-graph 4.1.3: the last release with the self-contained template
# perf's flamegraph.py fills in (dist/templates/d3-flamegraph-base.html;
# 5.x ships none).  Pinned by the tarball's sha256.
d3_version=4.1.3
d3_sha256=5b9fd58798daad7515db6e1a2224c1d939c11584f79da108706dbde3942363c4

start=$EPOCHREALTIME
progress() {
	awk -v a="$start" -v b="$EPOCHREALTIME" -v m="$*" \
		'BEGIN { printf "[%5.1fs] %s\n", b - a, m }'
}

# Setup once: scripts/setup.sh (2 to 3 minutes even when all is there:
# apt and every series' kernel checked) runs again only when it changed
# since it last succeeded here, or with DEMO_SETUP=1.
stamp=$cache/demo-setup.stamp
if [ "${DEMO_SETUP:-0}" = 1 ] || [ ! -f "$stamp" ] ||
   [ "$(cat "$stamp")" != "$(sha256sum <"$top/scripts/setup.sh")" ] ||
   ! "$top/scripts/kernels.sh" kver "$series" >/dev/null 2>&1; then
	progress "setup: scripts/setup.sh (Debian's packages, the stock kernels), npm"
	"$top/scripts/setup.sh" >/dev/null
	command -v npm >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm >/dev/null
	mkdir -p "$cache"
	sha256sum <"$top/scripts/setup.sh" >"$stamp"
else
	progress "setup: done before (scripts/setup.sh; DEMO_SETUP=1 runs it again)"
fi
progress "building libcodectl, the codectl tool and codectl.ko for $series"
make -s -C "$top" lib tools >/dev/null
# The module is built again only when its sources are newer than the
# last build (where scripts/build-module.sh puts it).
if [ -n "${CODECTL_BUILD_DIR:-}" ]; then
	ko=$CODECTL_BUILD_DIR/$series/module/codectl.ko
elif [ "$cache" = "$top/.cache" ]; then
	ko=$cache/build/$series/module/codectl.ko
else
	ko=$cache/build/${top##*/}/$series/module/codectl.ko
fi
[ -f "$ko" ] && [ -z "$(find "$top/module" "$top/uapi" "$top/Kbuild" \
	-newer "$ko" -print -quit)" ] || ko=
[ -n "$ko" ] || ko=$("$top/scripts/build-module.sh" "$series")

# The flame graph template, from the npm registry (npm pack), checked.
d3=$cache/d3-flame-graph-$d3_version
template=$d3/package/dist/templates/d3-flamegraph-base.html
if [ ! -f "$template" ]; then
	progress "npm pack d3-flame-graph@$d3_version (the flame graph template)"
	rm -rf "$d3" && mkdir -p "$d3"
	(cd "$d3" && npm pack -q "d3-flame-graph@$d3_version" >/dev/null)
	echo "$d3_sha256  $d3/d3-flame-graph-$d3_version.tgz" | sha256sum -c --quiet
	tar -xzf "$d3/d3-flame-graph-$d3_version.tgz" -C "$d3"
fi
# Self-contained: no script, style or image fetched from elsewhere.
if grep -Eiq '<(script|link|img)[^>]*(src|href)=' "$template"; then
	echo "demo: $template loads something from elsewhere" >&2
	exit 1
fi

rm -rf "$out" && mkdir -p "$out/guest"

progress "staging python3.11's standard library for the guest"
stdlib=$out/guest/python3.11
"$top/scripts/stage-python.sh" "$stdlib"

progress "booting Debian's $series under QEMU (TCG, 2 vCPUs); the guest's steps follow"
set +e
"$top/scripts/vm-run.sh" -k "$series" -t 600 -m 2048 -l "$out/console.log" \
	-a "$ko:/demo/codectl.ko" \
	-a "$top/tools/codectl:/usr/bin/codectl" \
	-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
	-a "$top/tests/demo/guest.sh:/demo/guest.sh" \
	-a "$top/tests/demo/workload.py:/demo/workload.py" \
	-a "$template:/demo/d3-flamegraph-base.html" \
	-a /usr/bin/python3.11 -A "$stdlib:/usr/lib/python3.11" \
	-a /usr/bin/perf -A /usr/lib/perf-core -a /usr/bin/bash \
	-a /lib64/ld-linux-x86-64.so.2 \
	-- sh /demo/guest.sh /demo/codectl.ko /demo/workload.py \
		/demo/d3-flamegraph-base.html "$seconds" "$mode" 2>&1 |
	while IFS= read -r line; do
		case $line in
		demo-guest:*) progress "  guest: ${line#demo-guest: }" ;;
		vm-run:*) echo "$line" ;;
		esac
	done
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || { echo "demo: the guest failed (exit $rc), see $out/console.log" >&2; exit 1; }

# The files the guest sent on the console.
awk -v dir="$out" '
	/^CODECTL-DEMO-FILE-END$/ { close(cmd); cmd = ""; next }
	/^CODECTL-DEMO-FILE / {
		f = dir "/" $2
		sub(/\/[^\/]*$/, "", f)
		system("mkdir -p \"" f "\"")
		cmd = "base64 -d | gzip -dc >\"" dir "/" $2 "\""
		next
	}
	cmd != "" { print | cmd }' "$out/console.log"

# The table of perf report: its rows, without the comments.
table() {
	grep -v -e '^#' -e '^$' "$out/$1/report.txt" | sed -n "1,${2:-14}p"
}
share() {
	local total complete depth
	read -r total complete depth <"$out/$1/share.txt"
	awk -v t="$total" -v c="$complete" -v d="$depth" -v r="$1" 'BEGIN {
		printf "%-8s %5d samples, %5d reach python'"'"'s _start/__libc_start_main (%5.1f%%), mean depth %4.1f frames\n",
			r, t, c, t ? 100 * c / t : 0, d }'
}

echo
echo "=== perf report --stdio --children --sort sym (top rows): control, without codectl"
table control
echo
echo "=== the same with codectl loaded${mode:+ ($mode: NOT loaded)}"
table codectl
echo
echo "=== complete stacks"
share control
share codectl
if [ -f "$out/codectl/unwind.txt" ]; then
	echo
	echo "=== codectl's hook on perf_callchain_user (codectl unwind): its walks and how they ended"
	sed -n '/^hook perf_callchain_user/,/^hook /{/^hook [^p]/d;p}' "$out/codectl/unwind.txt"
fi
if [ -f "$out/codectl/status.txt" ]; then
	echo
	echo "=== codectl status, in the guest before the module was unloaded"
	cat "$out/codectl/status.txt"
fi
echo
progress "done"
[ -z "$mode" ] || echo "($mode: the second run had no codectl either; make check-demo fails on such graphs)"
cat <<EOF

What to look at: the two flame graphs, in a browser (click a frame to zoom)
  $out/control/flamegraph.html
      without codectl: two or three levels shared by most samples, then
      [unknown] frames, and narrow towers of garbage (rbp followed as if
      it were a frame pointer)
  $out/codectl/flamegraph.html
      with codectl: one tower from _start through __libc_start_main,
      Py_BytesMain, Py_RunMain to the evaluation loop, and a new level of
      _PyEval_EvalFrameDefault for each call that workload.py makes
      through a builtin (sorted -> score, map -> weigh, max -> leaf_hash);
      python 3.11 names no Python function to perf
and in $out: */report.txt (perf report --stdio --children), */share.txt
(samples, complete, mean depth), codectl/unwind.txt (codectl unwind),
codectl/status.txt (codectl status),
console.log (the guest's console).  make check-demo compares the flame
graphs in headless Chromium (screenshots: */flamegraph.png).
EOF
