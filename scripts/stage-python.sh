#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The part of python3.11's standard library that tests/demo/workload.py
# and perf's flamegraph.py (embedded python) import, copied from the
# host's /usr/lib/python3.11 into DIR, for a guest (scripts/vm-run.sh -A
# DIR:/usr/lib/python3.11): the initramfs stays small.  Used by the demo
# and by the on-demand tests.
#
#   scripts/stage-python.sh DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
stdlib=$1
stage_lock "$stdlib"
mkdir -p "$stdlib/lib-dynload"
/usr/bin/python3.11 -I -c '
import os, sys, runpy
import __future__, argparse, io, json, subprocess  # perf flamegraph.py
import encodings.ascii, encodings.latin_1  # perf embeds python: no UTF-8 mode in the C locale
sys.argv = ["workload.py", "0.01"]
sys.argv.append("'"$top"'/tests/demo/workload.py")
out, sys.stdout = sys.stdout, open(os.devnull, "w")
runpy.run_path(sys.argv.pop(), run_name="__main__")
sys.stdout = out
for m in list(sys.modules.values()):
    for f in (getattr(m, "__file__", None), getattr(m, "__cached__", None)):
        if f and f.startswith("/usr/lib/python3.11/") and os.path.isfile(f):
            print(f)
' | sort -u | sed 's|^/usr/lib/python3.11/||' |
	(cd /usr/lib/python3.11 && xargs cp -L --parents -t "$stdlib")
