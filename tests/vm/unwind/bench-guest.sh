# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the guest benchmarks (bench-unwind.sh, bench-profile.sh) with
# bench_default_series set: where things are ($here, $top, $logs: this
# tree's logs, scripts/lib.sh's log_dir, where the figures scripts read
# them), the commit measured ($commit, "+changes" for a changed tree), the
# kernels ($series: $SERIES or the default), the guest clock (QEMU's
# -icount shift=0 unless CODECTL_VM_QEMU_ARGS says otherwise: one
# instruction per guest ns, whatever else the host does), and the test
# programs built.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
# shellcheck source=../../../scripts/lib.sh
. "$top/scripts/lib.sh"
logs=$(log_dir)
mkdir -p "$logs"
commit=$(git -C "$top" rev-parse --short HEAD)
git -C "$top" diff --quiet HEAD -- . 2>/dev/null || commit="$commit+changes"
read -r -a series <<<"${SERIES:-$bench_default_series}"
export CODECTL_VM_QEMU_ARGS=${CODECTL_VM_QEMU_ARGS-"-icount shift=0,align=off -smp 1"}
echo "# guest clock: ${CODECTL_VM_QEMU_ARGS:-real time} (with -icount shift=0, 1 ns = 1 instruction)"
make -s -C "$here" >/dev/null
