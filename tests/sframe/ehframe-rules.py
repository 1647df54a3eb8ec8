#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The unwind rules of an ELF file's .eh_frame, in the canonical dump format.

    ehframe-rules.py [--readelf READELF] ELF

Runs `READELF --debug-dump=frames-interp` (the table readelf computes from
the CFA programs; use the readelf of the toolchain that built ELF) and prints,
for each .eh_frame FDE, the pcs whose rule SFrame can express
(tests/sframe/FORMAT.md):

  CFA   reg+N: rsp/rbp print as sp/fp, any other DWARF register as rK
        (v3 FLEX can hold it); an expression "DW_OP_bregK N[; DW_OP_deref]"
        prints as rK+N / *(rK+N) (sp/fp for rsp/rbp).
  RA    c-8 (the x86-64 fixed RA offset) -> *(cfa-8); c+N -> *(cfa+N);
        in register K -> rK+0; undefined -> the outermost-frame rule
        "cfa=undef ra=undef fp=same".
  FP    (rbp) not saved ("u" in readelf's table: unreferenced, or "s") -> same;
        c+N -> *(cfa+N); an expression as for the CFA (saved at that address:
        *(...)), a val_expression without the deref.
  signal  when the FDE's CIE augmentation has "S".

        The expression ld writes for lazy PLT entries,
        "DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and;
        DW_OP_litK; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus"
        (CFA = rsp + 8 + ((rip & 15) >= K ? 8 : 0)), is evaluated per pc.
readelf's table shows "exp" for expression rules without saying which
expression; the expressions come from the raw `--debug-dump=frames` of the
same FDE: when a column (CFA, rbp, ra) uses exactly one distinct expression
in an FDE, "exp" means that one; with several, those rows are skipped.
pcs with any other rule (val_offset, an unparsed expression, CFA undefined)
are skipped: the dump then has a gap there, which compare.py counts as
"covered by one side only".

Comment lines: "# restore_state 0xS-0xE" marks the rows that directly follow
a DW_CFA_restore_state (up to the next CFA change), for compare.py's
known-pitfall list.

AArch64 and s390x are handled too, with their DWARF numbers (sp/fp =
x31/x29, r15/r11): there RA "u" (not saved) means "same" (still in x30 /
r14), and on AArch64 "mangled" follows DW_CFA_AARCH64_negate_ra_state
(toggled, and saved/restored by remember/restore_state), from the raw
dump.  Other machines: exit 2.
"""
import argparse
import re
import subprocess
import sys


class Abi:
    def __init__(self, name, sp, fp, ra, fp_col, regnames, ra_u):
        self.name, self.sp, self.fp, self.ra = name, sp, fp, ra
        self.fp_col = fp_col        # readelf's column name of the FP
        self.regnames = regnames
        self.ra_u = ra_u            # what RA "u" means: "undef" or "same"


X86_NAMES = {"rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5,
             "rbp": 6, "rsp": 7, "rip": 16}
for _i in range(8, 16):
    X86_NAMES["r%d" % _i] = _i
A64_NAMES = {"sp": 31}
for _i in range(31):
    A64_NAMES["x%d" % _i] = _i
ABIS = {
    62: Abi("x86-64", 7, 6, 16, "rbp", X86_NAMES, "undef"),
    183: Abi("aarch64", 31, 29, 30, "x29", A64_NAMES, "same"),
    22: Abi("s390x", 15, 11, 14, "r11", {}, "same"),
}
ABI = ABIS[62]
SP, FP, RA = 7, 6, 16

HDR = re.compile(r"^([0-9a-f]{8}) [0-9a-f]+ ([0-9a-f]+) (CIE|FDE)(.*)$")
FDE_RANGE = re.compile(r"cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)")
CIE_AUG = re.compile(r'^\s*CIE "([^"]*)"')
AUG_RAW = re.compile(r'^\s*Augmentation:\s*"([^"]*)"')
EXPR = re.compile(r"^DW_OP_breg(\d+) \([^)]*\): (-?\d+)(; DW_OP_deref)?$")
PLT_EXPR = re.compile(r"^DW_OP_breg7 \(rsp\): 8; DW_OP_breg16 \(rip\): 0; DW_OP_lit15; "
                      r"DW_OP_and; DW_OP_lit(\d+); DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus$")


def regnum(name):
    name = name.split(" (")[0]      # s390x: "r17 (f2)"
    if name in ABI.regnames:
        return ABI.regnames[name]
    m = re.match(r"^r(\d+)$", name)
    if m:
        return int(m.group(1))
    return None


def reg_str(k):
    return "sp" if k == ABI.sp else "fp" if k == ABI.fp else "r%d" % k


def val(base, off, deref):
    s = "%s%+d" % (base, off)
    return "*(%s)" % s if deref else s


def run(readelf, what, path):
    p = subprocess.run([readelf, "--wide", "--debug-dump=" + what, path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit("ehframe-rules: %s failed on %s" % (readelf, path))
    return p.stdout


def eh_frame_block(text):
    """The lines of the .eh_frame part of readelf's output."""
    out, on = [], False
    for ln in text.splitlines():
        if ln.startswith("Contents of the "):
            on = ln.startswith("Contents of the .eh_frame section")
            continue
        if on:
            out.append(ln)
    return out


def split_entries(lines):
    """{offset: (kind, header_rest, [body lines])} in file order."""
    entries, order, cur = {}, [], None
    for ln in lines:
        m = HDR.match(ln)
        if m:
            cur = m.group(1)
            entries[cur] = (m.group(3), m.group(4), [])
            order.append(cur)
        elif "ZERO terminator" in ln:
            cur = None
        elif cur is not None and ln.strip():
            entries[cur][2].append(ln)
    return entries, order


def parse_raw(lines):
    """Per entry: expressions per column, restore_state pcs, augmentation."""
    entries, _ = split_entries(lines)
    info = {}
    for off, (kind, rest, body) in entries.items():
        exprs = {"cfa": set(), FP: set(), RA: set()}
        vexprs = {FP: set(), RA: set()}
        restores, aug = [], None
        loc = None
        mangled, mstack, mevents = False, [], []
        m = FDE_RANGE.search(rest)
        if m:
            loc = int(m.group(2), 16)
        for ln in body:
            s = ln.strip()
            if s == "DW_CFA_AARCH64_negate_ra_state":
                mangled = not mangled
                mevents.append((loc, mangled))
            elif s == "DW_CFA_remember_state":
                mstack.append(mangled)
            elif s == "DW_CFA_restore_state" and mstack:
                mangled = mstack.pop()
                mevents.append((loc, mangled))
            m = AUG_RAW.match(ln)
            if m:
                aug = m.group(1)
            m = re.match(r"^DW_CFA_advance_loc\d?: \d+ to ([0-9a-f]+)$", s)
            if m:
                loc = int(m.group(1), 16)
                continue
            m = re.match(r"^DW_CFA_set_loc: ([0-9a-f]+)$", s)
            if m:
                loc = int(m.group(1), 16)
                continue
            if s == "DW_CFA_restore_state" and loc is not None:
                restores.append(loc)
            m = re.match(r"^DW_CFA_def_cfa_expression \((.*)\)$", s)
            if m:
                exprs["cfa"].add(m.group(1))
            m = re.match(r"^DW_CFA_(val_)?expression: r(\d+) \([^)]*\) \((.*)\)$", s)
            if m:
                r = int(m.group(2))
                if r in (FP, RA):
                    (vexprs if m.group(1) else exprs)[r].add(m.group(3))
        info[off] = {"kind": kind, "exprs": exprs, "vexprs": vexprs,
                     "restores": restores, "aug": aug, "mangled": mevents}
    return info


def expr_val(text, deref_outer):
    """'DW_OP_breg6 (rbp): -8; DW_OP_deref' -> '*(fp-8)' etc, or None."""
    m = EXPR.match(text)
    if not m:
        return None
    k, off, deref = int(m.group(1)), int(m.group(2)), bool(m.group(3))
    v = val(reg_str(k), off, deref)
    if deref_outer:
        if deref:
            return None     # *(*(...)): not expressible
        return "*(%s)" % v
    return v


def one(s):
    return next(iter(s)) if len(s) == 1 else None


def cfa_rule(cell, raw):
    """The CFA rule: a string, a function of the pc (PLT), or None."""
    if cell == "exp":
        e = one(raw["exprs"]["cfa"])
        if not e:
            return None
        m = PLT_EXPR.match(e)
        if m:
            k = int(m.group(1))
            return lambda pc: "sp+16" if (pc & 15) >= k else "sp+8"
        return expr_val(e, False)
    m = re.match(r"^([a-z0-9]+)([+-]\d+)$", cell)
    if not m:
        return None
    k = regnum(m.group(1))
    if k is None:
        return None
    return val(reg_str(k), int(m.group(2)), False)


def reg_rule(cell, col, raw):
    """Rule of register column col (FP or RA) from a readelf table cell."""
    if cell is None or cell in ("u", "s"):
        if col == RA:
            return ABI.ra_u if cell == "u" else "same"
        return "same"
    m = re.match(r"^c([+-]\d+)$", cell)
    if m:
        return val("cfa", int(m.group(1)), True)
    if cell == "exp":
        e = one(raw["exprs"][col])
        return expr_val(e, True) if e else None
    if cell == "vexp":
        e = one(raw["vexprs"][col])
        return expr_val(e, False) if e else None
    k = regnum(cell)
    if k is not None:
        return val(reg_str(k), 0, False)
    return None     # v+N (val_offset), n/a ...


def table(body):
    """readelf's rows: [(loc, {column: cell})]."""
    cols, rows = None, []
    for ln in body:
        f = []
        for tok in ln.split():
            if tok.startswith("(") and f:
                f[-1] += " " + tok      # s390x: "r17 (f2)"
            else:
                f.append(tok)
        if f and f[0] == "LOC":
            cols = f[1:]
            continue
        if cols and f and re.match(r"^[0-9a-f]{8,16}$", f[0]):
            rows.append((int(f[0], 16), dict(zip(cols, f[1:]))))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readelf", default="readelf")
    ap.add_argument("elf")
    a = ap.parse_args()

    global ABI, SP, FP, RA
    with open(a.elf, "rb") as f:
        ident = f.read(20)
    machine = int.from_bytes(ident[18:20], "big" if ident[5] == 2 else "little")
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or machine not in ABIS:
        print("ehframe-rules: %s: only x86-64, aarch64 and s390x ELF64 files are handled"
              % a.elf, file=sys.stderr)
        return 2
    ABI = ABIS[machine]
    SP, FP, RA = ABI.sp, ABI.fp, ABI.ra

    interp = eh_frame_block(run(a.readelf, "frames-interp", a.elf))
    raw = parse_raw(eh_frame_block(run(a.readelf, "frames", a.elf)))
    entries, order = split_entries(interp)

    print("# ehframe-rules.py (%s --debug-dump=frames-interp): %s" % (a.readelf, a.elf))
    cie_rows, cie_sig = {}, {}
    out = []
    notes = []
    for off in order:
        kind, rest, body = entries[off]
        if kind == "CIE":
            m = CIE_AUG.match(rest)
            aug = m.group(1) if m else (raw.get(off, {}).get("aug") or "")
            cie_sig[off] = "S" in aug
            rows = table(body)
            cie_rows[off] = rows[0][1] if rows else {}
            continue
        m = FDE_RANGE.search(rest)
        if not m:
            continue
        cie, lo, hi = m.group(1), int(m.group(2), 16), int(m.group(3), 16)
        if hi <= lo:
            continue
        r = raw.get(off, {"exprs": {"cfa": set(), FP: set(), RA: set()},
                          "vexprs": {FP: set(), RA: set()}, "restores": [],
                          "mangled": []})
        rows = table(body)
        if not rows or rows[0][0] > lo:
            # No CFA instructions (readelf prints no table) or none at the
            # start: the CIE's initial rules apply.
            rows.insert(0, (lo, cie_rows.get(cie, {})))
        sig = " signal" if cie_sig.get(cie) else ""
        fde_lines = []
        # split the rows where the AArch64 RA signing state changes
        mev = r["mangled"]
        cuts = sorted({loc for loc, _ in rows} | {loc for loc, _ in mev if loc is not None})
        split_rows = []
        for c in cuts:
            cells = [cl for loc, cl in rows if loc <= c]
            split_rows.append((c, cells[-1] if cells else {}))
        rows = split_rows
        for i, (loc, cells) in enumerate(rows):
            end = rows[i + 1][0] if i + 1 < len(rows) else hi
            loc, end = max(loc, lo), min(end, hi)
            if end <= loc:
                continue
            ra = reg_rule(cells.get("ra"), RA, r)
            cfa = cfa_rule(cells.get("CFA", ""), r)
            fp = reg_rule(cells.get(ABI.fp_col), FP, r)
            mstate = [mg for ml, mg in mev if ml is not None and ml <= loc]
            mg = " mangled" if mstate and mstate[-1] else ""
            if callable(cfa):
                pieces = [(pc, pc + 1, cfa(pc)) for pc in range(loc, end)]
            else:
                pieces = [(loc, end, cfa)]
            for ploc, pend, pcfa in pieces:
                if ra == "undef":
                    rule = "cfa=undef ra=undef fp=same"
                elif ra is None or pcfa is None or fp is None:
                    rule = None
                else:
                    rule = "cfa=%s ra=%s fp=%s" % (pcfa, ra, fp)
                if rule is not None:
                    rule += mg + sig
                if fde_lines and fde_lines[-1][2] == rule and fde_lines[-1][1] == ploc:
                    fde_lines[-1] = (fde_lines[-1][0], pend, rule)
                else:
                    fde_lines.append((ploc, pend, rule))
        out.extend(x for x in fde_lines if x[2] is not None)
        # rows right after a DW_CFA_restore_state, while the CFA stays
        for rs in r["restores"]:
            for i, (loc, cells) in enumerate(rows):
                if loc != rs:
                    continue
                cfa = cells.get("CFA")
                j = i
                while j + 1 < len(rows) and rows[j + 1][1].get("CFA") == cfa:
                    j += 1
                end = rows[j + 1][0] if j + 1 < len(rows) else hi
                notes.append("# restore_state 0x%x-0x%x" % (loc, end))
    for n in notes:
        print(n)
    for s, e, rule in sorted(out):
        print("0x%x-0x%x %s" % (s, e, rule))
    return 0


if __name__ == "__main__":
    sys.exit(main())
