#!/usr/bin/env bash
# bench/tile_stream_big.sh — the big runs of streamed input and output
# (docs/tiles.md, "Streamed input and output"): Black-Scholes over an input
# of OPTIONS options (default 333333333: 4.0 GB) and texture over a slide of
# W x H pixels (default 94208 x 94208: 8.9 GB), each streamed and then
# --in-memory, with their wall time and max RSS (/usr/bin/time), and the
# outputs compared byte for byte.  The slide repeats a generated 4096 x 1024
# slide across and down (written by band, so any size fits in little
# memory); the features do not care.  Needs the disk for the input and
# two outputs (BS: 12 + 2 x 8 bytes per option; texture: the slide + 2 x
# about 190 bytes per block) and, for --in-memory, memory for the input and
# output (texture: the slide and 1.27 times it in records).
#
#   TESSERA=build/tessera bench/tile_stream_big.sh [DIR] [OPTIONS] [W] [H]
#
# OPTIONS 0 or W 0 skips that application; KEEP=1 keeps the files; NO_MEM=1
# skips the --in-memory runs (and the comparison).
set -euo pipefail
tessera=${TESSERA:-build/tessera}
dir=${1:-/tmp}; n=${2:-333333333}; w=${3:-94208}; h=${4:-94208}
timed() { /usr/bin/time -f "$1: %e s wall, max RSS %M KB" "${@:2}"; }
# both_ways APP INPUT_OPTION FILE PREFIX: the streamed run, then (unless
# NO_MEM=1) the --in-memory one, and their outputs compared.
both_ways() {
    local app=$1 opt=$2 file=$3 pre=$4
    timed "$app streamed" "$tessera" run "$app" "$opt" "$file" --output "$pre.out" \
        --stats "$pre.json"
    [ "${NO_MEM:-0}" != 1 ] || return 0
    timed "$app --in-memory" "$tessera" run "$app" "$opt" "$file" --output "$pre.mem" --in-memory
    cmp "$pre.out" "$pre.mem" && echo "$app: outputs bitwise equal"
}
if [ "$n" != 0 ]; then
    if ! [ -s "$dir/big_bs.in" ] || [ "$(stat -c %s "$dir/big_bs.in")" != $((n * 12)) ]; then
        "$tessera" run blackscholes --quiet --options "$n" --save-input "$dir/big_bs.in"
    fi
    echo "blackscholes: $n options, input $(stat -c %s "$dir/big_bs.in") bytes"
    both_ways blackscholes --input "$dir/big_bs.in" "$dir/big_bs"
    [ "${KEEP:-0}" = 1 ] || rm -f "$dir/big_bs.in" "$dir/big_bs.out" "$dir/big_bs.mem"
fi
if [ "$w" != 0 ]; then
    "$tessera" run texture --quiet --gen 4096:1024:9 --save-image "$dir/big_small.pgm" \
        --output /dev/null
    python3 - "$dir/big_small.pgm" "$dir/big_slide.pgm" "$w" "$h" << 'PY'
import sys
src, dst, W, H = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = open(src, "rb").read()
i = d.index(b"255\n") + 4
w0, h0 = map(int, d[2:i - 4].split())
rows = [(d[i + y * w0:i + (y + 1) * w0] * (W // w0 + 1))[:W] for y in range(h0)]
with open(dst, "wb", buffering=1 << 24) as f:
    f.write(b"P5\n%d %d\n255\n" % (W, H))
    for y in range(H):
        f.write(rows[y % h0])
PY
    echo "texture: slide $w x $h, $(stat -c %s "$dir/big_slide.pgm") bytes"
    both_ways texture --image "$dir/big_slide.pgm" "$dir/big_tex"
    [ "${KEEP:-0}" = 1 ] ||
        rm -f "$dir/big_small.pgm" "$dir/big_slide.pgm" "$dir/big_tex.out" "$dir/big_tex.mem"
fi
