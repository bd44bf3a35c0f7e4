#!/usr/bin/env bash
# tile_apps.sh — the tiles applications sar and texture: images and
# features agree with direct computations written in the tests (python);
# a one-scatterer scene focuses on the scatterer; outputs are bitwise
# identical across policies, processor mixes, rank counts 1/2/3 and data
# placements; OpenCL within the stated tolerance; pictures are PNGs of the
# right size; bad input is refused with one line and no output, and the
# same failure exits the same way in blackscholes, sar and texture.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HERE="$TESS_SRC/tests/integration"
sar() { "$TESSERA" run sar --quiet "$@"; }
tex() { "$TESSERA" run texture --quiet "$@"; }

# ------------------------------------------------------------------ sar
step "sar: a generated scene against a direct double-precision backprojection"
sar --gen 48:200:24:16:3 --save-scene "$tmp/g.tsar" --output "$tmp/g.tsim" --processors cpu*2
python3 "$HERE/ref_sar.py" "$tmp/g.tsar" "$tmp/g.tsim"
sar --input "$tmp/g.tsar" --output "$tmp/g2.tsim" --processors cpu
cmp "$tmp/g.tsim" "$tmp/g2.tsim" || die "sar: --input of the saved scene gives another image"

step "sar: one scatterer, written here, focuses on its pixel"
python3 - "$tmp/one.tsar" << 'PY'
import cmath, math, struct, sys
P, B, W, H = 96, 256, 40, 28
ku = 2 * math.pi * 10e9 / 299792458.0
dx = dy = 0.5
x0, y0 = -10.0, -7.0
tx, ty = x0 + 29 * dx, y0 + 9 * dy           # the scatterer: pixel (29, 9)
L = 0.03 * math.hypot(800, 400) / (2 * dx)    # aperture for 0.5 m cross-range
pos = [((p / (P - 1) - 0.5) * L, -800.0, 400.0) for p in range(P)]
R0, dR = math.hypot(800 - 8, 400) - 2, 0.25
smp = []
for x, y, z in pos:
    rt = math.sqrt((x - tx) ** 2 + (y - ty) ** 2 + z * z)
    for b in range(B):
        u = (R0 + b * dR - rt) / 0.5
        a = 1.0 if abs(u) < 1e-12 else math.sin(math.pi * u) / (math.pi * u)
        v = a * cmath.exp(-2j * ku * rt)
        smp += [v.real, v.imag]
head = struct.pack("<4sIIIdddIIdddd", b"TSAR", 1, P, B, R0, dR, ku, W, H, x0, y0, dx, dy)
body = struct.pack(f"<{3 * P}d", *[c for q in pos for c in q]) + struct.pack(f"<{2 * P * B}f", *smp)
open(sys.argv[1], "wb").write(head + body)
PY
sar --input "$tmp/one.tsar" --output "$tmp/one.tsim" --image "$tmp/one.png"
python3 - "$tmp/one.tsim" "$tmp/one.png" << 'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
W, H = struct.unpack_from("<II", d, 4)
v = struct.unpack_from(f"<{2 * W * H}f", d, 12)
mag = [v[2 * i] ** 2 + v[2 * i + 1] ** 2 for i in range(W * H)]
k = mag.index(max(mag))
assert (k % W, k // W) == (29, 9), ("brightest pixel", k % W, k // W)
png = open(sys.argv[2], "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", "not a PNG"
assert struct.unpack(">II", png[16:24]) == (W, H), struct.unpack(">II", png[16:24])
print(f"brightest pixel (29, 9) of {W}x{H}; PNG {W}x{H}")
PY
python3 "$HERE/ref_sar.py" "$tmp/one.tsar" "$tmp/one.tsim"

step "sar: phases above 2^32 (ku 1e6 rad/m, ranges near 3000 km) against the reference"
python3 - "$tmp/g.tsar" "$tmp/far.tsar" << 'PY'
import math, struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
P, B = struct.unpack_from("<II", d, 8)
r0, dr = struct.unpack_from("<dd", d, 16)
struct.pack_into("<d", d, 32, 1e6)
for p in range(P):
    z = struct.unpack_from("<d", d, 104 + 24 * p)[0]
    struct.pack_into("<d", d, 104 + 24 * p, math.hypot(z, 3e6))
struct.pack_into("<d", d, 16, math.hypot(r0, 3e6) - 0.5 * dr * B)
open(sys.argv[2], "wb").write(d)
PY
sar --input "$tmp/far.tsar" --output "$tmp/far.tsim" --processors cpu
python3 "$HERE/ref_sar.py" "$tmp/far.tsar" "$tmp/far.tsim"

step "sar: policies, processor mixes and ranks give the same bits"
sar_same() { # sar_same NAME CMD...
    local name=$1
    shift
    "$@" --input "$tmp/g.tsar" --output "$tmp/$name.tsim"
    cmp "$tmp/g.tsim" "$tmp/$name.tsim" || die "sar $name: image differs"
}
sar_same dd sar --policy dd:5x3 --processors cpu*2
sar_same static sar --policy static:37 --processors cpu*3
sar_same ws sar --policy ws:11 --processors cpu*2
sar_same slowed sar --processors cpu+cpu@0.3
if [ "$MPI" = 1 ]; then
    sar_same np2 mpi 2 "$TESSERA" run sar --quiet --processors cpu
    sar_same np3 mpi 3 "$TESSERA" run sar --quiet --processors cpu --policy ws:7
    sar_same np3_dd mpi 3 "$TESSERA" run sar --quiet --processors cpu+cpu@0.5 --policy dd:20
    # outputs as messages (ranks on other nodes), not through rank 0's shared image
    TESS_NODE_SHARE=0 sar_same np3_msg mpi 3 "$TESSERA" run sar --quiet --processors cpu
    TESS_NODE_RANKS=2 sar_same np4_nodes mpi 4 "$TESSERA" run sar --quiet --processors cpu
fi

# ------------------------------------------------------------------ texture
step "texture: a generated slide against a direct per-block computation"
tex --gen 200:150:4 --block 16 --save-image "$tmp/s.pgm" --output "$tmp/s.tsv" \
    --map "$tmp/s.png" --feature lbp9 --processors cpu*2
python3 "$HERE/ref_texture.py" "$tmp/s.pgm" "$tmp/s.tsv" 16
python3 - "$tmp/s.png" << 'PY'
import struct, sys
png = open(sys.argv[1], "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h, depth, colour = struct.unpack(">IIBB", png[16:26])
assert (w % 12, h % 9, depth, colour) == (0, 0, 8, 2), (w, h, depth, colour)  # 12x9 blocks, RGB
PY

step "texture: a PPM with a comment, odd block size and partial edge blocks; its grey PGM"
python3 - "$tmp/c.ppm" "$tmp/c.pgm" << 'PY'
import random, sys
rnd = random.Random(5)
w, h = 61, 45
rgb = bytes(rnd.randrange(256) if i % 97 else 0 for i in range(3 * w * h))
flat = {3 * (y * w + x) + c for y in range(7, 14) for x in range(7, 14) for c in range(3)}
rgb = bytes(200 if i in flat else v for i, v in enumerate(rgb))  # block (1, 1) is flat
open(sys.argv[1], "wb").write(b"P6\n# a slide\n%d %d\n255\n" % (w, h) + rgb)
grey = bytes((rgb[3 * i] + rgb[3 * i + 1] + rgb[3 * i + 2]) // 3 for i in range(w * h))
open(sys.argv[2], "wb").write(b"P5 %d %d 255\n" % (w, h) + grey)
PY
tex --image "$tmp/c.ppm" --block 7 --output "$tmp/c.tsv" --processors cpu*2
python3 "$HERE/ref_texture.py" "$tmp/c.ppm" "$tmp/c.tsv" 7
tex --image "$tmp/c.pgm" --block 7 --output "$tmp/c2.tsv" --processors cpu
cmp "$tmp/c.tsv" "$tmp/c2.tsv" || die "texture: the PPM and its grey PGM differ"
# a constant block: contrast 0, dissimilarity 0, homogeneity, energy, correlation, asm 1
grep -q "^1	1	0	0	1	1	1	1	" "$tmp/c.tsv" || die "texture: flat block $(grep "^1	1	" "$tmp/c.tsv")"

step "texture: policies, processor mixes, ranks and placements give the same bits"
tex_same() { # tex_same NAME CMD...
    local name=$1
    shift
    "$@" --image "$tmp/s.pgm" --block 16 --output "$tmp/$name.tsv"
    cmp "$tmp/s.tsv" "$tmp/$name.tsv" || die "texture $name: features differ"
}
tex_same dd tex --policy dd:2x3 --processors cpu*2
tex_same static tex --policy static:5 --processors cpu*3
tex_same ws tex --policy ws:4 --processors cpu@0.5+cpu
if [ "$MPI" = 1 ]; then
    tex_same np2 mpi 2 "$TESSERA" run texture --quiet --processors cpu --tile-chunk 4096
    tex_same np3_on2 mpi 3 "$TESSERA" run texture --quiet --processors cpu --data-on 2 \
        --policy ws:3
    tex_same np3_dd mpi 3 "$TESSERA" run texture --quiet --processors cpu+cpu@0.5 --policy dd:4
    TESS_NODE_SHARE=0 tex_same np3_msg mpi 3 "$TESSERA" run texture --quiet --processors cpu \
        --policy dd:2x3
fi

# ------------------------------------------------------------------ OpenCL
step "OpenCL: sar equal to the CPU's to the bit, texture within 1e-6 (PoCL on the CPU)"
if opencl_probe "$tmp/cl.err" sar --input "$tmp/g.tsar" --output "$tmp/cl.tsim" \
    --processors opencl; then
    # The kernels share their cosine and sine (apps/sar/sar_trig.h).
    cmp "$tmp/g.tsim" "$tmp/cl.tsim" || die "sar: the OpenCL image differs from the CPU's"
    sar --input "$tmp/g.tsar" --output "$tmp/mix.tsim" --processors cpu+opencl
    cmp "$tmp/g.tsim" "$tmp/mix.tsim" || die "sar: the cpu+opencl image differs from the CPU's"
    # The far scene's phases (above 2^32) take sar_trig.h's other reduction.
    sar --input "$tmp/far.tsar" --output "$tmp/far_cl.tsim" --processors opencl
    cmp "$tmp/far.tsim" "$tmp/far_cl.tsim" || die "sar: far scene: the OpenCL image differs"
    tex --image "$tmp/s.pgm" --block 16 --output "$tmp/cl.tsv" --processors cpu+opencl
    python3 "$HERE/ref_texture.py" "$tmp/s.pgm" "$tmp/cl.tsv" 16 1e-6
fi

# ------------------------------------------------------------------ bad input
step "bad input: one line naming the cause, exit != 0, no output"
refuse() { # refuse APP PATTERN ARGS...
    local app=$1 pattern=$2
    shift 2
    rm -f "$tmp/bad.out"
    if "$TESSERA" run "$app" --quiet --output "$tmp/bad.out" "$@" 2> "$tmp/err"; then
        die "accepted: $app $*"
    fi
    grep -q -- "$pattern" "$tmp/err" || { cat "$tmp/err" >&2; die "no '$pattern' for: $*"; }
    [ "$(wc -l < "$tmp/err")" -le 2 ] || { cat "$tmp/err" >&2; die "more than one line: $*"; }
    [ ! -e "$tmp/bad.out" ] || die "partial output left by: $app $*"
}
python3 - "$tmp" << 'PY'
import struct, sys
t = sys.argv[1]
d = bytearray(open(t + "/g.tsar", "rb").read())
def put(name, data): open(f"{t}/{name}", "wb").write(data)
put("magic.tsar", b"XSAR" + d[4:])
put("version.tsar", d[:4] + struct.pack("<I", 2) + d[8:])
put("short.tsar", d[:-100])
put("long.tsar", d + b"\0" * 8)
put("w0.tsar", d[:40] + struct.pack("<I", 0) + d[44:])
put("nan.tsar", d[:-4] + struct.pack("<f", float("nan")))
put("header.tsar", d[:50])
put("maxval.pgm", b"P5 4 4 65535\n" + bytes(32))
put("trunc.pgm", b"P5 40 40 255\n" + bytes(1000))
put("zero.pgm", b"P5 0 40 255\n")
put("ascii.pgm", b"P2 4 4 255\n" + b"0 " * 16)
put("small.pgm", b"P5 20 20 255\n" + bytes(400))
PY
samples=$(( 48 * 200 * 8 ))
refuse sar "magic.tsar: not a TSAR scene" --input "$tmp/magic.tsar"
refuse sar "version.tsar: TSAR version 2" --input "$tmp/version.tsar"
refuse sar "short.tsar: expected $samples bytes of samples, found $((samples - 100))" \
    --input "$tmp/short.tsar"
refuse sar "long.tsar: expected $samples bytes of samples, found $((samples + 8))" \
    --input "$tmp/long.tsar"
refuse sar "w0.tsar: image 0 x 16" --input "$tmp/w0.tsar"
refuse sar "nan.tsar: sample value 19199 is not finite" --input "$tmp/nan.tsar"
refuse sar "header.tsar: expected a 80-byte header" --input "$tmp/header.tsar"
refuse sar "missing.tsar: No such file" --input "$tmp/missing.tsar"
refuse sar "not a regular file" --input "$tmp"
refuse sar "option --gen" --gen 10:1:5:5
refuse sar "option --gen: expected" --gen 10:10:5
refuse sar "option --gen: expected P:B:W:H\[:SEED\], got '10::10:5:5'" --gen 10::10:5:5
refuse sar "option --gen: expected" --gen 10:10:5:5:1:2
refuse sar "option --data-on" --gen 10:10:5:5 --data-on 0
refuse sar "either --gen" --gen 10:10:5:5 --input "$tmp/g.tsar"
refuse texture "maxval.pgm: maxval 65535" --image "$tmp/maxval.pgm"
refuse texture "trunc.pgm: expected 1600 bytes of pixels, found 1000" --image "$tmp/trunc.pgm"
refuse texture "zero.pgm: image 0 x 40 has no pixels" --image "$tmp/zero.pgm"
refuse texture "ascii.pgm: not a binary PGM" --image "$tmp/ascii.pgm"
refuse texture "option --block: 32 is larger than the image (20 x 20)" --image "$tmp/small.pgm"
refuse texture "option --block" --image "$tmp/small.pgm" --block 1
refuse texture "option --data-on: rank 3 is not one of the 1 ranks" --gen 64:64 --data-on 3
refuse texture "option --feature: unknown feature 'glcm'" --gen 64:64 --feature glcm
refuse texture "option --gen" --gen 64:0
refuse texture "option --gen: expected W:H\[:SEED\], got '64:'" --gen 64:
refuse texture "cannot write .*: Is a directory" --gen 64:64 --map "$tmp"

step "the same failure, the same exit code in blackscholes, sar and texture"
exits() { # exits CODE APP ARGS...
    local want=$1 app=$2 rc=0
    shift 2
    "$TESSERA" run "$app" --quiet "$@" 2> /dev/null || rc=$?
    [ "$rc" = "$want" ] || die "$app $*: exit $rc, expected $want"
}
exits 1 blackscholes --input "$tmp/missing.bin"
exits 1 sar --input "$tmp/missing.tsar"
exits 1 texture --image "$tmp/missing.pgm"
exits 1 texture --image "$tmp/trunc.pgm"
exits 1 texture --gen 64:64 --map "$tmp"
exits 2 blackscholes --options 100 --policy nonsense
exits 2 sar --gen 10:10:5:5 --policy nonsense
exits 2 texture --gen 64:64 --policy nonsense
exits 2 texture --gen 64:0
echo "tile_apps: all checks passed"
