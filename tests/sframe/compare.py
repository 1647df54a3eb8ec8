#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two canonical SFrame rule dumps (tests/sframe/FORMAT.md).

    compare.py [--exact] [--toolchain NAME] [--max N] A B

Usually A is an SFrame dump (an oracle's, or our decoder's) and B the rules
derived from .eh_frame (ehframe-rules.py).  Over the pcs both cover, the
rules are compared semantically: FLEX register numbers of the ABI's stack
and frame pointers equal sp/fp (x86-64 r7/r6, aarch64 r31/r29, s390x
r15/r11).  Every differing pc is either matched by one entry of the
KNOWN PITFALLS list below (reported as "known", with its name and count) or
"unexplained".  pcs covered by one dump only are counted separately
(SFrame drops what it cannot describe; .eh_frame rules that SFrame cannot
express are not in B); they are not errors.

--exact: textual comparison, no pitfalls, and coverage differences count
too (for two dumps that must be identical, e.g. decoder vs oracle).

The toolchain (for the pitfalls that belong to one binutils release) is
read from A's "# oracle libsframe X" comment, else --toolchain, else
guessed from the "# sframe vN" comment (v1: 2.40, v2: 2.44, v3: 2.47).

Exit status: 0 when no pc is unexplained, 1 otherwise, 2 on bad input.
"""
import argparse
import re
import sys

LINE = re.compile(r"^0x([0-9a-f]+)-0x([0-9a-f]+) (.+)$")
SP_FP = {3: (7, 6), 1: (31, 29), 2: (31, 29), 4: (15, 11)}


class Dump:
    def __init__(self, path):
        self.path = path
        self.lines = []
        self.sections = []          # (name, start, end)
        self.restore_state = []     # (start, end)
        self.empty_fdes = []        # (start, end)
        self.release = None
        self.version = None
        self.abi = None
        with open(path) as f:
            for n, ln in enumerate(f, 1):
                ln = ln.rstrip("\n")
                if not ln:
                    continue
                if ln.startswith("#"):
                    self.comment(ln)
                    continue
                m = LINE.match(ln)
                if not m:
                    raise SystemExit("compare: %s:%d: bad line: %s" % (path, n, ln))
                s, e = int(m.group(1), 16), int(m.group(2), 16)
                if e <= s:
                    raise SystemExit("compare: %s:%d: empty range" % (path, n))
                self.lines.append((s, e, m.group(3)))
        self.lines.sort()
        for a, b in zip(self.lines, self.lines[1:]):
            if b[0] < a[1]:
                raise SystemExit("compare: %s: overlapping lines 0x%x-0x%x and 0x%x-0x%x"
                                 % (path, a[0], a[1], b[0], b[1]))

    def comment(self, ln):
        m = re.match(r"^# oracle libsframe (\S+):", ln)
        if m:
            self.release = m.group(1)
        m = re.match(r"^# sframe v(\d+) abi (\d+)", ln)
        if m:
            self.version, self.abi = int(m.group(1)), int(m.group(2))
        m = re.match(r"^# section (\S+) 0x([0-9a-f]+)-0x([0-9a-f]+)$", ln)
        if m:
            self.sections.append((m.group(1), int(m.group(2), 16), int(m.group(3), 16)))
        m = re.match(r"^# restore_state 0x([0-9a-f]+)-0x([0-9a-f]+)$", ln)
        if m:
            self.restore_state.append((int(m.group(1), 16), int(m.group(2), 16)))
        m = re.match(r"^# empty-fde 0x([0-9a-f]+)-0x([0-9a-f]+)", ln)
        if m:
            self.empty_fdes.append((int(m.group(1), 16), int(m.group(2), 16)))


def inside(ranges, s, e):
    return any(a <= s and e <= b for a, b in ranges)


class Rule:
    """A rule line split into fields, FLEX sp/fp registers normalised."""

    def __init__(self, text, abi):
        self.text = text
        self.none = text == "none"
        f = text.split()
        self.kv, self.flags = {}, set()
        for x in f:
            if "=" in x:
                k, v = x.split("=", 1)
                self.kv[k] = self.norm(v, abi)
            else:
                self.flags.add(x)

    @staticmethod
    def norm(v, abi):
        sp, fp = SP_FP.get(abi, SP_FP[3])
        v = re.sub(r"\br%d(?=[+-])" % sp, "sp", v)
        v = re.sub(r"\br%d(?=[+-])" % fp, "fp", v)
        return v

    def key(self):
        return (self.none, tuple(sorted(self.kv.items())), tuple(sorted(self.flags)))

    def get(self, k):
        return self.kv.get(k)

    def same_except(self, other, *keys):
        ks = set(self.kv) | set(other.kv)
        return (self.flags == other.flags and not self.none and not other.none and
                all(self.kv.get(k) == other.kv.get(k) for k in ks if k not in keys))


def cfa_parts(v):
    m = re.match(r"^(sp|fp|r\d+)([+-]\d+)$", v or "")
    return (m.group(1), int(m.group(2))) if m else (None, None)


# ---------------------------------------------------------------------------
# KNOWN PITFALLS: (name, releases it applies to or None for any, predicate,
# reason).  A predicate gets (ctx, a, b, s, e) for the pc range [s, e) where
# A's rule a and B's rule b differ.  Each is a real defect of a binutils
# release (not of the decoder or the oracle), described in
# tests/sframe/KNOWN-DIFFERENCES.md.  Keep
# them narrow: a pitfall must never match a difference of another kind.
# ---------------------------------------------------------------------------

def p_plt_got(ctx, a, b, s, e):
    # ld's SFrame FDE for .plt.got says CFA = sp+16 all through the 8-byte
    # entries (jmp *GOT(%rip); xchg %ax,%ax), where the stack still holds
    # only the return address (.eh_frame: sp+8).
    return (in_section(ctx, ".plt.got", s, e) and a.get("cfa") == "sp+16" and b.get("cfa") == "sp+8"
            and a.same_except(b, "cfa"))


def p_restore_state(ctx, a, b, s, e):
    # gas 2.40/2.44: after .cfi_restore_state of a frame whose CFA was on
    # rbp, the SFrame rows keep the base register of the epilogue (sp) with
    # the restored offset: sp+16 where .eh_frame says rbp+16.  Fixed in 2.47.
    ra, oa = cfa_parts(a.get("cfa"))
    rb, ob = cfa_parts(b.get("cfa"))
    return (inside(ctx.restore_state, s, e) and ra == "sp" and rb == "fp"
            and oa == ob and a.same_except(b, "cfa"))


def in_section(ctx, name, s, e):
    return any(n == name and lo <= s and e <= hi for n, lo, hi in ctx.sections)


def p_ibt_plt_240(ctx, a, b, s, e):
    # ld 2.40 describes an IBT PLT (-z ibtplt / -fcf-protection objects)
    # with its non-IBT templates: in .plt (endbr64; push; jmp) the push
    # ends at entry offset 9, not 0xb, so offsets 9-10 say sp+8 where
    # .eh_frame says sp+16; and .plt.sec gets a PLT0-like FDE (sp+16, sp+24)
    # on its first 16 bytes where .eh_frame says sp+8.  Fixed in 2.44.
    if not a.same_except(b, "cfa"):
        return False
    if in_section(ctx, ".plt", s, e):
        return (all((pc & 15) in (9, 10) for pc in range(s, e))
                and a.get("cfa") == "sp+8" and b.get("cfa") == "sp+16")
    if in_section(ctx, ".plt.sec", s, e):
        return a.get("cfa") in ("sp+16", "sp+24") and b.get("cfa") == "sp+8"
    return False


def p_cfa_reg_as_sp(ctx, a, b, s, e):
    # gas 2.40 does not check the CFA register: a CFA in another register
    # (.cfi_def_cfa_register %rbx) is encoded as sp with the same offset.
    # 2.44 drops such functions (with a warning); 2.47 encodes FLEX.
    ra, oa = cfa_parts(a.get("cfa"))
    rb, ob = cfa_parts(b.get("cfa"))
    return (ra == "sp" and rb not in (None, "sp", "fp") and oa == ob
            and a.same_except(b, "cfa"))


def p_ra_in_register(ctx, a, b, s, e):
    # gas 2.44 ignores .cfi_register %rip, REG (RA in a register) and keeps
    # the default RA rule (*(cfa-8)); 2.40 drops the function; 2.47 FLEX.
    return (re.match(r"^r\d+\+0$", b.get("ra") or "") is not None
            and a.get("ra") == "*(cfa-8)" and a.same_except(b, "ra"))


def p_outermost(ctx, a, b, s, e):
    # SFrame v1/v2 have no outermost-frame FRE: gas 2.40/2.44 encode a
    # function with .cfi_undefined rip (RA undefined) as an ordinary frame.
    return ctx.version in (1, 2) and b.text.startswith("cfa=undef ra=undef") and not a.none


def p_signal(ctx, a, b, s, e):
    # The signal-frame FDE bit exists from v3 on: in v1/v2 a
    # .cfi_signal_frame function has no mark.
    return (ctx.version in (1, 2) and "signal" in b.flags and "signal" not in a.flags
            and a.kv == b.kv and a.flags | {"signal"} == b.flags)


def p_empty_fde(ctx, a, b, s, e):
    # gas 2.47 emits an FDE with no FREs for a .cfi_signal_frame function
    # whose CFA is a DW_CFA_def_cfa_expression (a __restore_rt-like
    # trampoline): no rule at any pc, the decoder says "none".
    return a.none and inside(ctx.empty_fdes, s, e)


PITFALLS = [
    ("plt-got-sp16", None, p_plt_got),
    ("restore-state-sp", ("2.40", "2.44"), p_restore_state),
    ("ld-2.40-ibt-plt", ("2.40",), p_ibt_plt_240),
    ("gas-2.40-cfa-reg-as-sp", ("2.40",), p_cfa_reg_as_sp),
    ("gas-2.44-ra-register-ignored", ("2.44",), p_ra_in_register),
    ("no-outermost-before-v3", ("2.40", "2.44"), p_outermost),
    ("no-signal-bit-before-v3", ("2.40", "2.44"), p_signal),
    ("empty-fde-no-fres", None, p_empty_fde),
]


class Ctx:
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--toolchain")
    ap.add_argument("--max", type=int, default=10, help="examples to print")
    ap.add_argument("a")
    ap.add_argument("b")
    o = ap.parse_args()
    A, B = Dump(o.a), Dump(o.b)

    ctx = Ctx()
    ctx.version = A.version or B.version
    ctx.abi = A.abi or B.abi or 3
    ctx.release = A.release or B.release or o.toolchain or {1: "2.40", 2: "2.44", 3: "2.47"}.get(ctx.version)
    if o.toolchain:
        ctx.release = o.toolchain
    ctx.sections = A.sections or B.sections
    ctx.restore_state = A.restore_state + B.restore_state
    ctx.empty_fdes = A.empty_fdes + B.empty_fdes

    bounds = sorted({x for s, e, _ in A.lines + B.lines for x in (s, e)})
    ia = ib = 0
    agree = only_a = only_b = unexplained = 0
    known = {}
    examples = []
    cache = {}

    def rule(text):
        r = cache.get(text)
        if r is None:
            r = cache[text] = Rule(text, ctx.abi)
        return r

    for s, e in zip(bounds, bounds[1:]):
        while ia < len(A.lines) and A.lines[ia][1] <= s:
            ia += 1
        while ib < len(B.lines) and B.lines[ib][1] <= s:
            ib += 1
        ra = A.lines[ia][2] if ia < len(A.lines) and A.lines[ia][0] <= s else None
        rb = B.lines[ib][2] if ib < len(B.lines) and B.lines[ib][0] <= s else None
        n = e - s
        if ra is None and rb is None:
            continue
        if ra is None or rb is None:
            if ra is None:
                only_b += n
            else:
                only_a += n
            if o.exact:
                unexplained += n
                if len(examples) < o.max:
                    examples.append((s, e, ra, rb))
            continue
        if o.exact:
            if ra == rb:
                agree += n
            else:
                unexplained += n
                if len(examples) < o.max:
                    examples.append((s, e, ra, rb))
            continue
        a, b = rule(ra), rule(rb)
        if a.key() == b.key():
            agree += n
            continue
        for name, rels, pred in PITFALLS:
            if (rels is None or ctx.release in rels) and pred(ctx, a, b, s, e):
                known[name] = known.get(name, 0) + n
                break
        else:
            unexplained += n
            if len(examples) < o.max:
                examples.append((s, e, ra, rb))

    print("compare %s (%s) vs %s: agree %d pcs, known %d, unexplained %d; only A %d, only B %d"
          % (o.a, ctx.release, o.b, agree, sum(known.values()), unexplained, only_a, only_b))
    for name in sorted(known):
        print("  known %-30s %d pcs" % (name, known[name]))
    for s, e, x, y in examples:
        print("  DIFF 0x%x-0x%x\n    A: %s\n    B: %s" % (s, e, x, y))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
