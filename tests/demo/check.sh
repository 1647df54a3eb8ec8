#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's test: runs scripts/demo.sh (SERIES, default 6.12), then opens
# both flame graphs it wrote in headless Chromium (Debian's chromium,
# installed here if missing), takes a screenshot of each and compares the
# painted areas (tests/demo/pixels.py).  Frame levels are counted as bands
# of pixel rows at least half as wide as the root frame: the levels most
# samples share.  Total painted height would not do: without codectl,
# perf's frame-pointer walk follows garbage rbp chains into narrow towers
# up to 127 frames high.
#
#   tests/demo/check.sh [SERIES [nocodectl]]
#   DEMO_RESULTS=DIR tests/demo/check.sh --no-demo   only the comparison,
#                                                    of an earlier run
#
# Passes when the flame graph with codectl has at least 15 such levels,
# at least 10 more than the control's, and the share of samples that
# reach python's _start is >= 90% with codectl and <= 20% without.  With
# nocodectl (the second run without the module) it must fail: both
# flame graphs are shallow.  Output is TAP-like; the last line is
# "N passed, N failed".
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CODECTL_CACHE:-$top/.cache}

if [ "${1:-}" = --no-demo ]; then
	results=${DEMO_RESULTS:-$cache/demo}
else
	series=${1:-6.12}
	mode=${2:-}
	results=$cache/demo${mode:+-$mode}
	"$top/scripts/demo.sh" "$series" "$mode"
	echo
fi

command -v chromium >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		chromium fonts-dejavu-core >/dev/null

tmp=$(mktemp -d /tmp/codectl-demo-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0 pass=0 fail=0
ok() { n=$((n + 1)) pass=$((pass + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)) fail=$((fail + 1)); echo "not ok $n - $1"; }

# shot RUN: a screenshot of RUN's flame graph, tall enough for perf's
# deepest stack (127 frames); prints pixels.py's figures.
shot() {
	local png=$results/$1/flamegraph.png
	rm -f "$png"
	timeout 180 chromium --headless=new --no-sandbox --disable-gpu \
		--hide-scrollbars --user-data-dir="$tmp/profile" \
		--window-size=1200,2600 --virtual-time-budget=5000 \
		--screenshot="$png" "file://$results/$1/flamegraph.html" \
		>"$tmp/chromium-$1.log" 2>&1 || true
	[ -s "$png" ] || { cat "$tmp/chromium-$1.log" >&2; echo "none"; return; }
	python3 "$top/tests/demo/pixels.py" "$png"
}

# fig FIGURES NAME: one figure of pixels.py's line
fig() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

declare -A px levels share
for run in control codectl; do
	px[$run]=$(shot "$run")
	echo "# $run: $results/$run/flamegraph.png: ${px[$run]}"
	levels[$run]=$(fig "${px[$run]}" levels)
	read -r total complete _ <"$results/$run/share.txt"
	share[$run]=$((total ? 100 * complete / total : 0))
	echo "# $run: $complete of $total samples reach python's _start (${share[$run]}%)"
done

if [ -n "${levels[control]}" ]; then ok "control: screenshot"; else not_ok "control: screenshot"; fi
if [ -n "${levels[codectl]}" ]; then ok "codectl: screenshot"; else not_ok "codectl: screenshot"; fi
c=${levels[codectl]:-0} f=${levels[control]:-0}
if [ "$c" -ge 15 ]; then
	ok "codectl: the flame graph has $c levels shared by most samples (>= 15)"
else
	not_ok "codectl: the flame graph has $c levels shared by most samples, want >= 15"
fi
if [ "$c" -ge $((f + 10)) ]; then
	ok "codectl: $c levels, the control $f (>= 10 more)"
else
	not_ok "codectl: $c levels, the control $f: want >= 10 more"
fi
if [ "${share[codectl]}" -ge 90 ]; then
	ok "codectl: ${share[codectl]}% of the samples reach _start (>= 90%)"
else
	not_ok "codectl: ${share[codectl]}% of the samples reach _start, want >= 90%"
fi
if [ "${share[control]}" -le 20 ]; then
	ok "control: ${share[control]}% of the samples reach _start (<= 20%)"
else
	not_ok "control: ${share[control]}% of the samples reach _start, want <= 20%"
fi
echo "# screenshots: $results/control/flamegraph.png $results/codectl/flamegraph.png"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
