#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo of the README: boot Debian's stock kernel (6.12 from
# bookworm-backports by default, or the series given) under QEMU, load
# codectl.ko built for it, and show what the module does:
#   - /dev/codectl and what it offers (codectl version);
#   - a program registering all its loaded objects through libcodectl,
#     its own SFrame section among them, and the kernel's answer (codectl
#     self, which queries every registration back);
#   - a program built without frame pointers (codectl-stackdemo) getting
#     its stack from the kernel deep in a recursion: complete with the
#     module's SFrame unwinder, broken with frame pointers only, which is
#     all stock kernels have; then the unwinder's counters;
#   - the module's live objects returning to zero once that process exits,
#     and a clean unload.
# Run as root; installs what it needs first (scripts/setup.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
series=${1:-6.12}

"$top/scripts/setup.sh" >/dev/null
make -s -C "$top" lib tools >/dev/null
ko=$("$top/scripts/build-module.sh" "$series")

cat >"${TMPDIR:-/tmp}/codectl-demo.sh" <<'GUEST'
set -e
step() { printf '\n### %s\n' "$*"; }
step "uname -r"; uname -r
step "insmod codectl.ko"; insmod /codectl.ko; ls -l /dev/codectl
step "codectl version"; codectl version
step "codectl self: register every loaded object, then query them back"
codectl self
step "codectl-stackdemo 4: a -O2 -fomit-frame-pointer --gsframe program asks for its own stack"
codectl-stackdemo 4
step "codectl unwind: the unwinder's counters"; codectl unwind
step "live objects after that process exited"; codectl stats
step "rmmod codectl"; rmmod codectl; echo "unloaded"
GUEST
trap 'rm -f "${TMPDIR:-/tmp}/codectl-demo.sh"' EXIT

"$top/scripts/vm-run.sh" -k "$series" \
	-a "$ko:/codectl.ko" \
	-a "$top/tools/codectl:/usr/bin/codectl" \
	-a "$top/tools/codectl-stackdemo:/usr/bin/codectl-stackdemo" \
	-a "$top/lib/libcodectl.so.1:/lib/libcodectl.so.1" \
	-a "${TMPDIR:-/tmp}/codectl-demo.sh:/demo.sh" \
	-- sh /demo.sh |
	sed -n '/^CODECTL-VM-COMMAND-BEGIN/,/^CODECTL-VM-COMMAND-END/{//!p}'
