#!/usr/bin/env python3
"""ref_sar.py SCENE.tsar IMAGE.tsim [TOL] — check a `tessera run sar` image
against a direct backprojection written here from the definition (all in
double precision, complex accumulation in double): max |diff| / max |pixel|
must stay below TOL (default 1e-4).  Also: scene.py-style helpers for tests.
"""
import cmath
import math
import struct
import sys


def read_scene(path):
    d = open(path, "rb").read()
    (magic, version, P, B, R0, dR, ku, W, H, x0, y0, dx, dy) = struct.unpack_from("<4sIIIdddIIdddd", d)
    assert magic == b"TSAR" and version == 1
    pos = struct.unpack_from(f"<{3 * P}d", d, 80)
    smp = struct.unpack_from(f"<{2 * P * B}f", d, 80 + 24 * P)
    return dict(P=P, B=B, R0=R0, dR=dR, ku=ku, W=W, H=H, x0=x0, y0=y0, dx=dx, dy=dy, pos=pos,
                smp=smp)


def read_image(path):
    d = open(path, "rb").read()
    magic, W, H = struct.unpack_from("<4sII", d)
    assert magic == b"TSIM", magic
    v = struct.unpack_from(f"<{2 * W * H}f", d, 12)
    return W, H, [complex(v[2 * i], v[2 * i + 1]) for i in range(W * H)]


def backproject(s):
    out = []
    for iy in range(s["H"]):
        for ix in range(s["W"]):
            px, py = s["x0"] + ix * s["dx"], s["y0"] + iy * s["dy"]
            acc = 0j
            for p in range(s["P"]):
                x, y, z = s["pos"][3 * p: 3 * p + 3]
                r = math.sqrt((x - px) ** 2 + (y - py) ** 2 + z * z)
                b = (r - s["R0"]) / s["dR"]
                if b < 0 or b >= s["B"] - 1:
                    continue
                i = int(b)
                w = b - i
                k = 2 * (p * s["B"] + i)
                a = complex(s["smp"][k], s["smp"][k + 1])
                c = complex(s["smp"][k + 2], s["smp"][k + 3])
                acc += ((1 - w) * a + w * c) * cmath.exp(2j * s["ku"] * r)
            out.append(acc)
    return out


def main():
    scene, image = read_scene(sys.argv[1]), read_image(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
    W, H, got = image
    assert (W, H) == (scene["W"], scene["H"]), ((W, H), scene["W"], scene["H"])
    want = backproject(scene)
    top = max(abs(v) for v in want)
    worst = max(abs(a - b) for a, b in zip(got, want)) / top
    if not worst < tol:
        sys.exit(f"max |diff| / max |pixel| = {worst:.3g} (limit {tol:g})")
    print(f"{W}x{H} pixels: max |diff| / max |pixel| = {worst:.3g} (limit {tol:g})")


if __name__ == "__main__":
    main()
