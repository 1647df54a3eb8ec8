#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read an ELF file's .sframe section directly (python3 stdlib only).

    sframe-info.py --dump ELF
        The canonical rule dump (FORMAT.md) from the raw bytes: a decoder
        written from the format notes, independent of libsframe.  The
        self-check diffs it against each release's oracle.
    sframe-info.py [--manifest] [--toolchain NAME] ELF...
        One summary block per file: SFrame version, flags, ABI, FDE and FRE
        counts, and which features appear (PCMASK, FLEX, signal, outermost
        FREs, FRE start sizes, data word sizes, mangled RA, pauth key B),
        plus NAME.flags (how the fixture was built) when present.

Semantics (tests/sframe/FORMAT.md and its Decisions):
  - function start: v1/v2 without FDE_FUNC_START_PCREL: section address +
    field; with PCREL (v2 from ld 2.45, all v3): address of the field + field.
  - PCINC: the last FRE with start <= pc - func (stopping at the first
    larger start); PCMASK: the last FRE with start <= (pc - func) % rep_size,
    rep_size 16 for v1 (which has no rep_size field).
  - pcs before the first FRE, or an FDE without FREs: "none".
"""
import argparse
import os
import struct
import sys

SHT_GNU_SFRAME = 0x6ffffff4
PT_GNU_SFRAME = 0x6474e554
SHF_EXECINSTR = 0x4
ABI_NAMES = {1: "aarch64-be", 2: "aarch64-le", 3: "amd64", 4: "s390x"}


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.b = f.read()
        b = self.b
        if b[:4] != b"\x7fELF":
            raise ValueError("not ELF")
        self.is64 = b[4] == 2
        self.e = ">" if b[5] == 2 else "<"
        if self.is64:
            (self.phoff, self.shoff) = struct.unpack_from(self.e + "QQ", b, 0x20)
            (self.phentsize, self.phnum, self.shentsize, self.shnum,
             self.shstrndx) = struct.unpack_from(self.e + "HHHHH", b, 0x36)
        else:
            (self.phoff, self.shoff) = struct.unpack_from(self.e + "II", b, 0x1c)
            (self.phentsize, self.phnum, self.shentsize, self.shnum,
             self.shstrndx) = struct.unpack_from(self.e + "HHHHH", b, 0x2a)
        self.sections = []
        for i in range(self.shnum):
            o = self.shoff + i * self.shentsize
            if self.is64:
                name, typ, flags, addr, off, size = struct.unpack_from(self.e + "IIQQQQ", b, o)
            else:
                name, typ, flags, addr, off, size = struct.unpack_from(self.e + "IIIIII", b, o)
            self.sections.append([name, typ, flags, addr, off, size])
        if self.sections and self.shstrndx < len(self.sections):
            stro = self.sections[self.shstrndx][4]
            for s in self.sections:
                end = b.index(b"\0", stro + s[0])
                s[0] = b[stro + s[0]:end].decode("latin-1")
        self.segments = []
        for i in range(self.phnum):
            o = self.phoff + i * self.phentsize
            if self.is64:
                typ = struct.unpack_from(self.e + "I", b, o)[0]
            else:
                typ = struct.unpack_from(self.e + "I", b, o)[0]
            self.segments.append(typ)

    def sframe(self):
        for s in self.sections:
            if s[1] == SHT_GNU_SFRAME or s[0] == ".sframe":
                return s
        return None


class FDE:
    pass


class SFrame:
    def __init__(self, data, sec_addr):
        self.d = data
        self.addr = sec_addr
        magic_le = struct.unpack_from("<H", data, 0)[0]
        self.e = "<" if magic_le == 0xdee2 else ">"
        if struct.unpack_from(self.e + "H", data, 0)[0] != 0xdee2:
            raise ValueError("bad SFrame magic")
        (_, self.ver, self.flags, self.abi, self.fixed_fp, self.fixed_ra,
         self.auxlen, self.num_fdes, self.num_fres, self.fre_len, self.fdeoff,
         self.freoff) = struct.unpack_from(self.e + "HBBBbbBIIIII", data, 0)
        self.hdr = 28 + self.auxlen
        self.fdes = []
        fdes_at = self.hdr + self.fdeoff
        fres_at = self.hdr + self.freoff
        self.fres_at = fres_at
        pcrel = self.ver >= 3 or (self.flags & 4)
        for i in range(self.num_fdes):
            f = FDE()
            f.idx = i
            if self.ver == 3:
                o = fdes_at + i * 16
                start, f.size, f.fre_off = struct.unpack_from(self.e + "qII", data, o)
                f.num_fres, f.info, f.info2, f.rep = struct.unpack_from(
                    self.e + "HBBB", data, fres_at + f.fre_off)
                f.fres = fres_at + f.fre_off + 5
            else:
                fsz = 17 if self.ver == 1 else 20
                o = fdes_at + i * fsz
                start, f.size, f.fre_off, f.num_fres, f.info = struct.unpack_from(
                    self.e + "iIIIB", data, o)
                f.info2 = 0
                f.rep = data[o + 17] if self.ver == 2 else 16
                f.fres = fres_at + f.fre_off
            f.start = (self.addr + o + start) if pcrel else (self.addr + start)
            f.fre_type = f.info & 0xf
            f.mask = (f.info >> 4) & 1
            f.pauth_b = (f.info >> 5) & 1
            f.signal = (f.info >> 7) & 1 if self.ver >= 3 else 0
            f.fde_type = f.info2 & 0x1f
            f.fre_list = self.read_fres(f)
            self.fdes.append(f)

    def read_fres(self, f):
        out = []
        o = f.fres
        asz = {0: 1, 1: 2, 2: 4}[f.fre_type]
        afmt = {1: "B", 2: "H", 4: "I"}[asz]
        for _ in range(f.num_fres):
            start = struct.unpack_from(self.e + afmt, self.d, o)[0]
            info = self.d[o + asz]
            o += asz + 1
            n = (info >> 1) & 0xf
            wsz = {0: 1, 1: 2, 2: 4}.get((info >> 5) & 3)
            if wsz is None:
                raise ValueError("bad FRE data word size")
            sf = {1: "b", 2: "h", 4: "i"}[wsz]
            uf = sf.upper()
            sv = list(struct.unpack_from(self.e + sf * n, self.d, o))
            uv = list(struct.unpack_from(self.e + uf * n, self.d, o))
            o += n * wsz
            out.append((start, info, sv, uv, wsz))
        return out

    # --- rules -------------------------------------------------------------

    def is_aarch64(self):
        return self.abi in (1, 2)

    def is_s390x(self):
        return self.abi == 4

    def cfa_off(self, v):
        return v * 8 + 160 if self.is_s390x() else v

    @staticmethod
    def val(base, off, deref):
        s = "%s%+d" % (base, off)
        return "*(%s)" % s if deref else s

    def ra_default(self):
        return self.val("cfa", self.fixed_ra, True) if self.fixed_ra else "same"

    def fp_default(self):
        return self.val("cfa", self.fixed_fp, True) if self.fixed_fp else "same"

    def flex(self, ctl, off, is_cfa=False):
        base = "r%d" % (ctl >> 3) if ctl & 1 else "cfa"
        return self.val(base, off, (ctl >> 1) & 1)

    def rule(self, f, fre):
        start, info, sv, uv, wsz = fre
        n = len(sv)
        if n == 0:
            r = "cfa=undef ra=undef fp=same"
        elif f.fde_type == 1:
            if n < 2:
                return None
            cfa = self.flex(uv[0], self.cfa_off(sv[1]))
            fp_idx = 4
            if n < 3 or uv[2] == 0:
                ra = self.ra_default()
                if n >= 3:
                    fp_idx = 3
            else:
                if n < 4:
                    return None
                ra = self.flex(uv[2], sv[3])
            if n <= fp_idx or uv[fp_idx] == 0:
                fp = self.fp_default()
            else:
                if n <= fp_idx + 1:
                    return None
                fp = self.flex(uv[fp_idx], sv[fp_idx + 1])
            r = "cfa=%s ra=%s fp=%s" % (cfa, ra, fp)
        elif f.fde_type == 0:
            cfa = self.val("sp" if info & 1 else "fp", self.cfa_off(sv[0]), False)
            if self.fixed_ra:
                ra = self.ra_default()
                fpi = 1
            else:
                fpi = 2
                if n >= 2 and sv[1] != 0:
                    if self.is_s390x() and self.ver == 2 and sv[1] & 1:
                        ra = "r%d+0" % (sv[1] >> 1)
                    else:
                        ra = self.val("cfa", sv[1], True)
                else:
                    ra = "same"
            if self.fixed_fp:
                fp = self.fp_default()
            elif n > fpi:
                if self.is_s390x() and self.ver == 2 and sv[fpi] & 1:
                    fp = "r%d+0" % (sv[fpi] >> 1)
                else:
                    fp = self.val("cfa", sv[fpi], True)
            else:
                fp = "same"
            r = "cfa=%s ra=%s fp=%s" % (cfa, ra, fp)
        else:
            return None
        if self.is_aarch64() and info & 0x80:
            r += " mangled"
        if f.signal:
            r += " signal"
        return r

    def lookup(self, f, off):
        """Index of the FRE for offset off into the function, or None."""
        found = None
        if f.mask:
            if not f.rep:
                return None
            m = off % f.rep
            for j, fre in enumerate(f.fre_list):
                if fre[0] <= m:
                    found = j
            return found
        for j, fre in enumerate(f.fre_list):
            if fre[0] <= off:
                found = j
            else:
                break
        return found

    def dump_fde(self, f):
        """[(start, end, rule)] for one FDE, merged."""
        out = []
        if f.size == 0:
            return out
        starts = [fre[0] for fre in f.fre_list]
        if f.mask or starts != sorted(starts):
            # per pc (PLT stubs are small)
            pieces = []
            for off in range(f.size):
                j = self.lookup(f, off)
                pieces.append((off, off + 1, "none" if j is None else
                               (self.rule(f, f.fre_list[j]) or "none")))
        else:
            pieces = []
            bounds = [0] + [s for s in starts if 0 < s < f.size] + [f.size]
            bounds = sorted(set(bounds))
            for a, b in zip(bounds, bounds[1:]):
                j = self.lookup(f, a)
                pieces.append((a, b, "none" if j is None else
                               (self.rule(f, f.fre_list[j]) or "none")))
        for a, b, r in pieces:
            if out and out[-1][2] == r and out[-1][1] == f.start + a:
                out[-1] = (out[-1][0], f.start + b, r)
            else:
                out.append((f.start + a, f.start + b, r))
        return out


def do_dump(path):
    elf = Elf(path)
    s = elf.sframe()
    if s is None:
        print("sframe-info: %s: no .sframe section" % path, file=sys.stderr)
        return 2
    sf = SFrame(elf.b[s[4]:s[4] + s[5]], s[3])
    print("# sframe-info.py: %s" % path)
    print("# sframe v%d abi %d flags 0x%x fdes %d section 0x%x+0x%x" %
          (sf.ver, sf.abi, sf.flags, sf.num_fdes, s[3], s[5]))
    for sec in elf.sections:
        if sec[2] & SHF_EXECINSTR and sec[5]:
            print("# section %s 0x%x-0x%x" % (sec[0], sec[3], sec[3] + sec[5]))
    w = sys.stdout.write
    for f in sorted(sf.fdes, key=lambda f: (f.start, f.idx)):
        for a, b, r in sf.dump_fde(f):
            w("0x%x-0x%x %s\n" % (a, b, r))
        if not f.fre_list:
            w("# empty-fde 0x%x-0x%x\n" % (f.start, f.start + f.size))
    return 0


def summary(path, toolchain):
    lines = []
    name = os.path.basename(path)
    lines.append("%s:" % name)
    fl = path + ".flags"
    if os.path.exists(fl):
        with open(fl) as f:
            for ln in f.read().strip().splitlines():
                lines.append("  built: %s" % ln)
    try:
        elf = Elf(path)
    except (OSError, ValueError) as e:
        lines.append("  error: %s" % e)
        return lines
    s = elf.sframe()
    if s is None:
        lines.append("  sframe: none")
        return lines
    sf = SFrame(elf.b[s[4]:s[4] + s[5]], s[3])
    pt = "yes" if PT_GNU_SFRAME in elf.segments else "no"
    lines.append("  sframe: v%d flags 0x%x abi %d (%s) section %s type 0x%x size %d PT_GNU_SFRAME %s" %
                 (sf.ver, sf.flags, sf.abi, ABI_NAMES.get(sf.abi, "?"), s[0], s[1], s[5], pt))
    fdes = sf.fdes
    fres = [fre for f in fdes for fre in f.fre_list]
    cnt = lambda p: sum(1 for f in fdes if p(f))
    lines.append("  fdes: %d (pcinc %d, pcmask %d; default %d, flex %d; signal %d; pauth-b %d)" %
                 (len(fdes), cnt(lambda f: not f.mask), cnt(lambda f: f.mask),
                  cnt(lambda f: f.fde_type == 0), cnt(lambda f: f.fde_type == 1),
                  cnt(lambda f: f.signal), cnt(lambda f: f.pauth_b)))
    lines.append("  fres: %d (start 1B %d, 2B %d, 4B %d FDEs; data words 1B %d, 2B %d, 4B %d; outermost %d; mangled-ra %d; fp-based cfa %d)" %
                 (len(fres), cnt(lambda f: f.fre_type == 0), cnt(lambda f: f.fre_type == 1),
                  cnt(lambda f: f.fre_type == 2),
                  sum(1 for x in fres if x[4] == 1), sum(1 for x in fres if x[4] == 2),
                  sum(1 for x in fres if x[4] == 4), sum(1 for x in fres if not x[2]),
                  sum(1 for x in fres if x[1] & 0x80 and sf.is_aarch64()),
                  sum(1 for f in fdes for x in f.fre_list if f.fde_type == 0 and x[2] and not x[1] & 1)))
    feats = []
    if cnt(lambda f: f.mask):
        feats.append("PCMASK")
    if cnt(lambda f: f.fde_type == 1):
        feats.append("FLEX")
    if cnt(lambda f: f.signal):
        feats.append("signal")
    if any(not x[2] for x in fres):
        feats.append("outermost")
    if cnt(lambda f: f.fre_type == 1):
        feats.append("fre-start-2B")
    if cnt(lambda f: f.fre_type == 2):
        feats.append("fre-start-4B")
    if any(x[1] & 0x80 for x in fres) and sf.is_aarch64():
        feats.append("mangled-RA")
    if cnt(lambda f: f.pauth_b):
        feats.append("pauth-key-B")
    lines.append("  features: %s" % (" ".join(feats) or "-"))
    text = sum(sec[5] for sec in elf.sections if sec[2] & SHF_EXECINSTR)
    covered = sum(f.size for f in fdes)
    lines.append("  text bytes %d, bytes covered by FDEs %d" % (text, covered))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", action="store_true")
    ap.add_argument("--manifest", action="store_true")
    ap.add_argument("--toolchain", default="")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.dump:
        rc = 0
        for p in a.files:
            rc = max(rc, do_dump(p))
        return rc
    if a.manifest:
        print("# SFrame fixtures of toolchain %s (tests/sframe/fixtures; generated by sframe-info.py --manifest)" % a.toolchain)
    for p in a.files:
        print("\n".join(summary(p, a.toolchain)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
