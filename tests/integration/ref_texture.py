#!/usr/bin/env python3
"""ref_texture.py IMAGE.pgm|ppm FEATURES.tsv BLOCK [TOL] — check the block
features of `tessera run texture` against a direct per-block computation
written here from the definitions (scikit-image's graycoprops for the
co-occurrence properties; rotation-invariant uniform LBP with P=8, R=1),
in double precision: every feature within TOL (default 1e-6) relative to
max(1, |value|)."""
import math
import sys


def read_pnm(path):
    d = open(path, "rb").read()
    tokens, at = [], 2
    while len(tokens) < 3:
        while d[at:at + 1].isspace():
            at += 1
        if d[at:at + 1] == b"#":
            while d[at:at + 1] not in (b"\n", b"\r"):
                at += 1
            continue
        start = at
        while d[at:at + 1].isdigit():
            at += 1
        tokens.append(int(d[start:at]))
    w, h, _ = tokens
    raster = d[at + 1:]
    if d[:2] == b"P5":
        return w, h, list(raster)
    return w, h, [(raster[3 * i] + raster[3 * i + 1] + raster[3 * i + 2]) // 3 for i in range(w * h)]


def glcm_props(blk, s):
    counts = {}
    for r in range(s):
        for c in range(s - 1):
            a, b = blk[r][c] // 8, blk[r][c + 1] // 8
            counts[(a, b)] = counts.get((a, b), 0) + 1
            counts[(b, a)] = counts.get((b, a), 0) + 1
    total = sum(counts.values())
    P = {k: v / total for k, v in counts.items()}
    contrast = sum(p * (i - j) ** 2 for (i, j), p in P.items())
    dissim = sum(p * abs(i - j) for (i, j), p in P.items())
    homog = sum(p / (1 + (i - j) ** 2) for (i, j), p in P.items())
    asm = sum(p * p for p in P.values())
    mi = sum(p * i for (i, j), p in P.items())
    mj = sum(p * j for (i, j), p in P.items())
    si = math.sqrt(sum(p * (i - mi) ** 2 for (i, j), p in P.items()))
    sj = math.sqrt(sum(p * (j - mj) ** 2 for (i, j), p in P.items()))
    cov = sum(p * (i - mi) * (j - mj) for (i, j), p in P.items())
    corr = 1.0 if si < 1e-15 or sj < 1e-15 else cov / (si * sj)
    return [contrast, dissim, homog, math.sqrt(asm), corr, asm]


RING = [(-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1)]


def lbp_hist(img, w, h, y0, x0, s):
    hist, n = [0] * 10, 0
    for y in range(y0, y0 + s):
        for x in range(x0, x0 + s):
            if not (1 <= y <= h - 2 and 1 <= x <= w - 2):
                continue
            c = img[y * w + x]
            bits = [int(img[(y + dy) * w + x + dx] >= c) for dy, dx in RING]
            turns = sum(bits[k] != bits[(k + 1) % 8] for k in range(8))
            hist[sum(bits) if turns <= 2 else 9] += 1
            n += 1
    return [v / n if n else 0.0 for v in hist]


def main():
    w, h, img = read_pnm(sys.argv[1])
    s = int(sys.argv[3])
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-6
    lines = open(sys.argv[2]).read().splitlines()
    gw, gh = w // s, h // s
    if len(lines) != gw * gh:
        sys.exit(f"{len(lines)} lines, expected {gw * gh} blocks")
    worst = 0.0
    for k, line in enumerate(lines):
        f = line.split("\t")
        by, bx = k // gw, k % gw
        if (int(f[0]), int(f[1])) != (by, bx) or len(f) != 18:
            sys.exit(f"line {k + 1}: expected block {by} {bx} and 16 features: {line}")
        blk = [img[(by * s + r) * w + bx * s: (by * s + r) * w + bx * s + s] for r in range(s)]
        want = glcm_props(blk, s) + lbp_hist(img, w, h, by * s, bx * s, s)
        for j, (g, e) in enumerate(zip(map(float, f[2:]), want)):
            err = abs(g - e) / max(1.0, abs(e))
            if not err <= tol:
                sys.exit(f"block {by} {bx} feature {j}: {g!r}, expected {e!r}")
            worst = max(worst, err)
    print(f"{len(lines)} blocks of {s}x{s}: worst relative difference {worst:.3g} (limit {tol:g})")


if __name__ == "__main__":
    main()
