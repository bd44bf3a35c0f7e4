#!/usr/bin/env bash
# Pipelines of tile jobs (docs/tiles.md, "Pipelines"; tessera/tile_pipe.h).
# The API program (tile_pipeline.c): three stages at once through streams
# with a small window give the three functions composed, to the bit; a
# stage failing at the start, the middle or the end of the pipeline ends
# it with its own message and never hangs; wrong pipelines are refused.
# texture as two stages: `--stages 2` (both at once, a bounded stream
# between them) gives the single-stage output byte for byte, and so do
# the two stages run one after the other through a records file
# (`--stage 1 --output mid.bin`, then `--stage 2 --input mid.bin`), for a
# generated slide, a streamed PPM, a 1 MiB window and other block sizes
# and policies.  Bad stage options and a failing stage: one line, exit 1,
# nothing left behind.  Under mpirun, pipelines are refused with one line.
set -uo pipefail # not -e: expect_fail_of runs commands that fail; each check dies itself
. "$(dirname "$0")/lib.sh"
prog="$TESS_BUILD/tests/integration/tile_pipeline"

step "API: three stages, failures, refusals"
for mode in ok fail1 fail3 refuse; do
    timeout 60 "$prog" "$mode" > "$tmp/api.$mode" 2>&1 ||
        { cat "$tmp/api.$mode"; die "tile_pipeline $mode: exit $? (124: it hung)"; }
    echo "== $mode: $(tail -n 1 "$tmp/api.$mode")"
done

T=(tx)
tx() { timeout 60 "$TESSERA" run texture --quiet "$@" || die "texture $*: exit $?"; }
same() { cmp -s "$1" "$2" || die "$3: $2 differs from $1"; }

step "texture: --stages 2 and --stage 1 then 2 equal the single-stage run"
"${T[@]}" --gen 1024:768:3 --output "$tmp/one.tsv" --map "$tmp/one.png" --save-image "$tmp/s.pgm"
"${T[@]}" --gen 1024:768:3 --output "$tmp/pipe.tsv" --map "$tmp/pipe.png" --stages 2
same "$tmp/one.tsv" "$tmp/pipe.tsv" "--stages 2 --gen"
same "$tmp/one.png" "$tmp/pipe.png" "--stages 2 --map"
"${T[@]}" --gen 1024:768:3 --stage 1 --output "$tmp/mid.bin"
"${T[@]}" --stage 2 --input "$tmp/mid.bin" --output "$tmp/seq.tsv"
same "$tmp/one.tsv" "$tmp/seq.tsv" "--stage 1 then --stage 2"
"${T[@]}" --image "$tmp/s.pgm" --output "$tmp/img.tsv" --stages 2 --window 1
same "$tmp/one.tsv" "$tmp/img.tsv" "--stages 2 --image (streamed), 1 MiB window"
"${T[@]}" --image "$tmp/s.pgm" --stage 1 --output "$tmp/mid2.bin"
same "$tmp/mid.bin" "$tmp/mid2.bin" "--stage 1 from --image and from --gen"
# a PPM (grey conversion in stage 1), other blocks, policies, processors
python3 - "$tmp/s.pgm" "$tmp/s.ppm" << 'EOF' || die "making the PPM"
import sys
data = open(sys.argv[1], "rb").read()
head, w, h, mx, px = data.split(maxsplit=4)
out = bytearray()
for i, v in enumerate(px):
    out += bytes([v, (v * 7 + i) % 256 if v < 85 else v, v])
open(sys.argv[2], "wb").write(b"P6\n%s %s\n255\n" % (w, h) + bytes(out))
EOF
"${T[@]}" --image "$tmp/s.ppm" --block 16 --output "$tmp/ppm1.tsv"
"${T[@]}" --image "$tmp/s.ppm" --block 16 --output "$tmp/ppm2.tsv" --stages 2 --processors cpu*2
same "$tmp/ppm1.tsv" "$tmp/ppm2.tsv" "--stages 2 on a PPM, block 16, cpu*2 per stage"
"${T[@]}" --image "$tmp/s.ppm" --block 16 --output "$tmp/ppm5.tsv" --stages 2 \
    --stage-processors cpu*2,cpu@0.5+cpu
same "$tmp/ppm1.tsv" "$tmp/ppm5.tsv" "--stages 2 --stage-processors cpu*2,cpu@0.5+cpu"
"${T[@]}" --image "$tmp/s.ppm" --block 16 --output "$tmp/ppm3.tsv" --stages 2 --policy dd:64 \
    --in-memory
same "$tmp/ppm1.tsv" "$tmp/ppm3.tsv" "--stages 2 --policy dd:64 --in-memory"
"${T[@]}" --image "$tmp/s.ppm" --block 16 --stage 1 --output "$tmp/mid3.bin" --policy ws:100
"${T[@]}" --stage 2 --input "$tmp/mid3.bin" --output "$tmp/ppm4.tsv" --policy capc
same "$tmp/ppm1.tsv" "$tmp/ppm4.tsv" "--stage 1 then 2 on a PPM, ws and capc"
"$TESSERA" run texture --gen 512:512 --stages 2 --output "$tmp/x.tsv" 2> "$tmp/line"
grep -q "pipeline of 2 stages in .* stream: peak" "$tmp/line" || die "no pipeline line: $(cat "$tmp/line")"
"$TESSERA" run texture --help | grep -q -- "--stages 2" || die "--help does not name --stages"

# expect_fail RC PATTERN ARGS... — texture ARGS writing into an empty
# directory: exit RC, one line holding PATTERN, nothing left behind.
expect_fail() {
    local want=$1 pattern=$2 out="$tmp/fail"
    shift 2
    rm -rf "$out" && mkdir -p "$out"
    (cd "$out" && timeout 60 "$TESSERA" run texture "$@" > /dev/null 2> "$tmp/err0")
    local rc=$?
    grep -v "^tessera: TESS_FAULT: injected" "$tmp/err0" > "$tmp/err" # the fault's own notice
    [ $rc -eq "$want" ] || die "texture $*: exit $rc, expected $want ($(cat "$tmp/err"))"
    [ "$(wc -l < "$tmp/err")" -eq 1 ] || die "texture $*: stderr is not one line: $(cat "$tmp/err")"
    grep -qF -- "$pattern" "$tmp/err" || die "texture $*: stderr lacks '$pattern': $(cat "$tmp/err")"
    [ -z "$(ls -A "$out")" ] || die "texture $*: left files behind: $(ls -A "$out")"
    cases=$((cases + 1))
}

step "texture: bad stage options and failing stages"
G=(--gen 256:256)
expect_fail 2 "not both" --output f.tsv "${G[@]}" --stages 2 --stage 1
expect_fail 2 "--checkpoint-dir" --output f.tsv "${G[@]}" --stages 2 --checkpoint-dir "$tmp/ck"
expect_fail 2 "--window: needs --stages 2" --output f.tsv "${G[@]}" --window 4
expect_fail 2 "needs --stages 2" --output f.tsv "${G[@]}" --stage-processors cpu,cpu
expect_fail 2 "expected SPEC1,SPEC2" --output f.tsv "${G[@]}" --stages 2 --stage-processors cpu
expect_fail 2 "--input FILE" --output f.tsv "${G[@]}" --input "$tmp/mid.bin"
expect_fail 2 "not an image" --output f.tsv --stage 2 --input "$tmp/mid.bin" "${G[@]}"
expect_fail 2 "--stage 1 writes" --map f.png "${G[@]}" --stage 1
head -c 5000 "$tmp/mid.bin" > "$tmp/short.bin"
expect_fail 1 "expected 887832 bytes of records" --output f.tsv --stage 2 --input "$tmp/short.bin"
expect_fail 1 "not a texture records file" --output f.tsv --stage 2 --input "$tmp/s.pgm"
expect_fail 1 "'opencl'" --output f.tsv "${G[@]}" --stages 2 --processors opencl
TESS_FAULT=tile@0 expect_fail 1 "injected fault" --output f.tsv "${G[@]}" --stages 2
echo "== $cases refused with one line and nothing left behind"

if [ "$MPI" = 1 ] && [ "$SANITIZED" = 0 ]; then
    step "mpirun: pipelines refused"
    mpi_case 2 '^0 passed, 0' "$prog" mpi
    if out=$(timeout 120 mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run texture --gen 256:256 --stages 2 \
        --output "$tmp/m.tsv" 2>&1); then
        die "texture --stages 2 under mpirun succeeded"
    fi
    grep -q "embedded mode only" <<< "$out" || die "texture --stages 2 under mpirun: $out"
    [ ! -e "$tmp/m.tsv" ] || die "texture --stages 2 under mpirun left its output"
fi
echo "tile_pipeline: all passed"
