#!/usr/bin/env bash
# bench/tile_pipeline.sh — texture as a two-stage pipeline (docs/tiles.md,
# "Pipelines") against the same two stages run one after the other through
# a records file, and against the single-stage job, on a generated slide
# of W x H pixels (default 8192 x 8192) read from a PGM file.  ROUNDS
# alternating rounds (default 3) of: single-stage; --stages 2 (both stages
# at once, each on half the cores by default); --stage 1 --output mid.bin
# then --stage 2 --input mid.bin (each on every core).  Prints each run's
# wall time (the whole command: start-up, reading, writing) and the
# median of each; every output is compared with the single-stage one.
#
#   TESSERA=build/tessera bench/tile_pipeline.sh [DIR] [W] [H] [ROUNDS]
set -euo pipefail
tessera=${TESSERA:-build/tessera}
dir=${1:-/tmp}; w=${2:-8192}; h=${3:-8192}; rounds=${4:-3}
slide="$dir/pipe_slide.pgm"
"$tessera" run texture --quiet --gen "$w:$h:11" --save-image "$slide" --output /dev/null
echo "texture pipeline bench: slide $w x $h ($(stat -c %s "$slide") bytes), $(nproc) cores," \
    "$(date -u +%Y-%m-%dT%H:%MZ)"
now() { date +%s.%N; }
# wall LABEL CMD...: run CMD, print and append its wall seconds to $tmp/LABEL
wall() {
    local label=$1 t0 t1
    shift
    t0=$(now)
    "$@"
    t1=$(now)
    local s
    s=$(echo "$t1 - $t0" | bc -l)
    printf '%-10s %.3f s\n' "$label" "$s"
    echo "$s" >> "$tmp/$label"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$slide" "$dir/pipe_mid.bin" "$dir"/pipe_*.tsv' EXIT
T=("$tessera" run texture --quiet)
seq_run() {
    "${T[@]}" --image "$slide" --stage 1 --output "$dir/pipe_mid.bin"
    "${T[@]}" --stage 2 --input "$dir/pipe_mid.bin" --output "$dir/pipe_seq.tsv"
}
for r in $(seq "$rounds"); do
    echo "round $r"
    wall single "${T[@]}" --image "$slide" --output "$dir/pipe_one.tsv"
    wall pipeline "${T[@]}" --image "$slide" --output "$dir/pipe_two.tsv" --stages 2
    wall sequential seq_run
    cmp "$dir/pipe_one.tsv" "$dir/pipe_two.tsv"
    cmp "$dir/pipe_one.tsv" "$dir/pipe_seq.tsv"
done
echo "outputs bitwise equal in every round"
median() { sort -g "$tmp/$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for l in single pipeline sequential; do printf 'median %-10s %.3f s\n' "$l" "$(median $l)"; done
printf 'pipeline / sequential: %.2f\n' "$(echo "$(median pipeline) / $(median sequential)" | bc -l)"
