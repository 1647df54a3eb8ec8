#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build codectl.ko for one of the stock kernels in the cache, in a copy of
# the sources of its own (.cache/build/SERIES, or $CODECTL_BUILD_DIR/SERIES),
# so that builds for several kernels (or several work trees) never share
# objects.  Prints the path of the built module.
#
#   scripts/build-module.sh SERIES [extra kbuild arguments, e.g. C=2]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
series=${1:?usage: build-module.sh SERIES [kbuild args]}
shift
cache=${CODECTL_CACHE:-$top/.cache}
kdir=$("$top/scripts/kernels.sh" kdir "$series")
out=${CODECTL_BUILD_DIR:-$cache/build}/$series

mkdir -p "$out"
# Mirror the module's sources (and only them); stale copies are removed.
rm -rf "$out/module" "$out/uapi"
cp -a "$top/Kbuild" "$out/"
cp -a "$top/module" "$top/uapi" "$out/"
find "$out/module" -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' | xargs rm -f

make -s -C "$kdir" M="$out" "$@" modules >&2
echo "$out/module/codectl.ko"
