#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command of the README: install what the tests need from
# Debian's archive (scripts/setup.sh, idempotent), then run every test
# (make check): host unit tests, and for each stock kernel the build and
# static checks, the guest suite under QEMU and the DKMS install test.
# Extra arguments are kernel series (default: 6.1 6.12, and 7.2 when its
# toolchain is built with `make toolchain-7.2`; otherwise the run says that
# 7.2 was skipped).  Run as root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
if [ $# -gt 0 ]; then
	exec make -C "$top" check SERIES="$*"
fi
exec make -C "$top" check
