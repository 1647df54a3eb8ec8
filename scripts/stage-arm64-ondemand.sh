#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the arm64 on-demand stage needs besides scripts/stage-arm64-root.sh's
# perf and libc (scripts/check.sh's ondemand-SERIES-arm64,
# tests/vm/arm64-ondemand.sh), from Debian bookworm's archive (apt-get
# download of arm64 .debs, unpacked into DIR, never installed on the
# host).  Idempotent.
#
#   scripts/stage-arm64-ondemand.sh DIR      prints DIR
#
# DIR/sysroot   the unpacked packages: elfutils' libdw-dev and libelf-dev,
#               libssl-dev, zlib1g-dev and the libraries they link, for
#               cross-building libcodectl and codectl (aarch64-linux-gnu-gcc
#               --sysroot is not used: the cross libc is the host's
#               /usr/aarch64-linux-gnu; -I and -L name DIR/sysroot's
#               directories)
# DIR/usr/bin/python3.11   Debian's arm64 python3.11 (python3.11-minimal),
#               unchanged
# DIR/python3.11 the part of its standard library (libpython3.11-minimal,
#               -stdlib) that tests/demo/workload.py imports: the files
#               the host's python3.11 (the same version) loads for it, the
#               arm64 package's, for a guest's /usr/lib/python3.11
# DIR/lib       one file per soname: the libraries python3.11 and codectl
#               (libdw, libelf, libcrypto) need, closed over DT_NEEDED,
#               libc6's own left out (stage-arm64-root.sh has them), for a
#               guest's /usr/lib/aarch64-linux-gnu
set -euo pipefail
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
stage_lock "$dir"
ver=$(bookworm_version python3.11-minimal)
hostver=$(dpkg-query -W -f '${Version}' python3.11-minimal 2>/dev/null || true)
[ "$hostver" = "$ver" ] || {
	echo "stage-arm64-ondemand.sh: the host's python3.11 ($hostver) is not bookworm's $ver: its module list would not be arm64's (apt-get upgrade python3.11-minimal)" >&2
	exit 1
}
# awk reads to the end: its early exit would leave madison to die of
# SIGPIPE, which pipefail makes this script's status (more archives in
# the host's apt sources, more lines).
dwver=$(apt-cache madison libdw-dev | awk '!v && $6 ~ /^bookworm(-security|-updates)?\// && $NF == "Packages" { v = $3 } END { print v }')
stamp="python3.11 $ver libdw $dwver layout 1"
if [ -x "$dir/usr/bin/python3.11" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$stamp" ]; then
	echo "$dir"
	exit 0
fi

# The packages: python3.11's and the daemon's build and run time ones
# (their library Depends, by hand: the list is short and fixed).
pkgs=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libexpat1
      zlib1g zlib1g-dev libdw-dev libdw1 libelf-dev libelf1 libssl-dev libssl3
      liblzma5 libbz2-1.0 libzstd1)
rm -rf "$dir"
mkdir -p "$dir/lib" "$dir/usr/bin" "$dir/python3.11"
debs_unpack "$dir/debs" "$dir/sysroot" "${pkgs[@]/%/:arm64}"
cp -L "$dir/sysroot/usr/bin/python3.11" "$dir/usr/bin/python3.11"

# The standard library's files workload.py loads, by the host's python3.11
# of the same version (scripts/stage-python.sh's way), the arm64 ones
# copied: lib-dynload's extension modules by their aarch64 names.  Byte
# code is left out (python compiles what it imports).
/usr/bin/python3.11 -I -c '
import os, sys, runpy
sys.argv = ["workload.py", "0.01"]
out, sys.stdout = sys.stdout, open(os.devnull, "w")
runpy.run_path("'"$top"'/tests/demo/workload.py", run_name="__main__")
sys.stdout = out
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if f and f.startswith("/usr/lib/python3.11/") and os.path.isfile(f):
        print(f)
' | sort -u | sed 's|^/usr/lib/python3.11/||; s|x86_64-linux-gnu|aarch64-linux-gnu|g' >"$dir/python3.11.files"
# sitecustomize.py is a link to /etc/python3.11's: the package's copy.
grep -vx sitecustomize.py "$dir/python3.11.files" |
	(cd "$dir/sysroot/usr/lib/python3.11" && xargs cp -L --parents -t "$dir/python3.11")
cp "$dir/sysroot/etc/python3.11/sitecustomize.py" "$dir/python3.11/"

# The libraries, closed over DT_NEEDED (scripts/lib.sh); libc6's are the
# arm64 root's.
libc6='^(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-aarch64)\.so'
# shellcheck disable=SC2046 # sonames, one word each
missing=$(so_closure "$dir/sysroot" "$dir/lib" "$libc6" \
	$(so_needed "$dir/usr/bin/python3.11") libdw.so.1 libelf.so.1 libcrypto.so.3) ||
	{ echo "stage-arm64-ondemand.sh: no package here provides $missing" >&2; exit 1; }
rm -rf "$dir/debs"
echo "$stamp" >"$dir/.version"
echo "$dir"
