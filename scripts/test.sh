#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command of the README: install what the tests need from
# Debian's archive (scripts/setup.sh, idempotent), build the 7.2 toolchain
# (the sid root of `make toolchain-7.2`, idempotent, about a minute the
# first time) and the trixie and bullseye roots of the compile-only
# kernels (7.3, 5.10; as long each), then run every test (make check):
# host unit tests, and for each stock kernel the build and static
# checks, the guest suite and the tracer tests under QEMU and the DKMS
# install test.  Extra arguments are
# kernel series (default: 6.1 6.12 7.2).  Run as root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
"$top/scripts/sid-root.sh" build 7.2
# The roots of the compile-only kernels (check.sh's compile stages):
# trixie's with gcc-14 and its aarch64 cross gcc (7.3, 7.3-rt, 7.3-arm64),
# bullseye's with gcc-10 (5.10).
"$top/scripts/sid-root.sh" build 7.3-arm64
"$top/scripts/sid-root.sh" build 5.10
if [ $# -gt 0 ]; then
	exec make -C "$top" check SERIES="$*"
fi
exec make -C "$top" check
