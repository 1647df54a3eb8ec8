# SPDX-License-Identifier: GPL-2.0
#
# The demo's workload (scripts/demo.sh): a small pure-Python program for
# Debian's unmodified python3.11, with a recognisable call tree.
#
#     main -> simulate -> rank -> score -> weigh -> leaf_hash
#
# Python 3.11 runs a Python-to-Python call in the same C frame of
# _PyEval_EvalFrameDefault, so a plain a -> b -> c chain is one native
# frame deep.  Here each level calls the next through a builtin written
# in C (sorted's key, map, sum, max's key), so each level is a new
# _PyEval_EvalFrameDefault under a builtin's frame: the native stack a
# profiler sees grows with the Python call tree, from leaf_hash down to
# python's main, __libc_start_main and _start.
#
#     python3.11 workload.py [SECONDS]     (default 4)

import sys
import time


def leaf_hash(x):
    # The hot leaf: integer arithmetic in a loop.
    h = x
    for _ in range(40):
        h = (h * 1103515245 + 12345) & 0x7FFFFFFF
    return h


def weigh(x):
    return max(range(x, x + 8), key=leaf_hash)


def score(x):
    return sum(map(weigh, range(x, x + 6)))


def rank(items):
    return sorted(items, key=score)


def simulate(seconds):
    rounds = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rank(range(rounds, rounds + 16))
        rounds += 1
    return rounds


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    rounds = simulate(seconds)
    print(f"workload: {rounds} rounds in {seconds:g} s")


if __name__ == "__main__":
    main()
