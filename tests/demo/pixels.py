#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# The painted area of a flame graph's screenshot (tests/demo/check.sh):
# reads a PNG (8-bit RGB or RGBA, not interlaced: what headless Chromium
# writes; the standard library only), and prints, for the coloured
# pixels (the frames; not the white page, the grey buttons or black
# text):
#
#   painted=N   pixel rows with any coloured pixel (towers of garbage
#               frames count too, however narrow)
#   wide=N      pixel rows at least half as wide as the widest one (the
#               root frame "all"): the stack levels most samples share
#   levels=N    bands of such rows, one per frame level
#   area=N      coloured pixels in all
#
#   pixels.py FILE.png

import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, width = 8, [], 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                sys.exit(f"{path}: PNG of depth {depth}, colour type {ctype}, interlace {interlace}")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = read_png(sys.argv[1])
    counts = []
    for line in rows:
        n = 0
        for x in range(0, width * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if max(r, g, b) - min(r, g, b) > 40:
                n += 1
        counts.append(n)
    widest = max(counts)
    painted = sum(1 for n in counts if n)
    wide = [widest and n * 2 >= widest for n in counts]
    levels = sum(1 for y, w in enumerate(wide) if w and (y == 0 or not wide[y - 1]))
    print(f"painted={painted} wide={sum(wide)} levels={levels} area={sum(counts)} "
          f"widest={widest} size={width}x{height}")


if __name__ == "__main__":
    main()
