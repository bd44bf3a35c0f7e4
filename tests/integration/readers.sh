#!/usr/bin/env bash
# The text readers against hostile inputs (issue 44, items 4, 5 and 9):
# NUL and control bytes are a one-line error naming file and line, non-regular
# inputs are refused at once, a long load stops on SIGTERM, and a metrics file
# that cannot be written fails the run.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# expect_error WHAT PATTERN CMD...: exit non-zero within 20 s, PATTERN on stderr
expect_error() {
    local what=$1 pattern=$2
    shift 2
    local rc=0
    timeout 20 "$@" > "$tmp/out.txt" 2> "$tmp/err.txt" || rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || die "$what: exit $rc"
    grep -q -- "$pattern" "$tmp/err.txt" || die "$what: stderr lacks '$pattern': $(cat "$tmp/err.txt")"
    [ "$(wc -l < "$tmp/err.txt")" -le 2 ] || die "$what: more than a line: $(cat "$tmp/err.txt")"
    echo "ok: $what -> exit $rc: $(head -n 1 "$tmp/err.txt")"
}

NB=(run nbody --box 10 --cutoff 1 --steps 1 --workers 1)
KM=(run kmeans --k 1 --iterations 1 --workers 1)

step "n-body: a NUL byte is an error naming the line, not a dropped particle"
printf '0 1 1 1 0 0 0\n1 2 2 2 0 0 0\n' > "$tmp/p.txt"
printf '0 1 1 1 0 0 0\n\0001 2 2 2 0 0 0\n' > "$tmp/nul.txt"
"$TESSERA" "${NB[@]}" --input "$tmp/p.txt" > /dev/null || die "a valid particle file fails"
expect_error "nbody NUL-first line" "nul.txt:2: NUL byte" "$TESSERA" "${NB[@]}" --input "$tmp/nul.txt"
{ printf '0 1 1 1 0 0 0\n\000'; head -c 3000 /dev/zero | tr '\0' 'x'; printf ' 2 2 2 0 0 0\n'; } \
    > "$tmp/nul_long.txt"
expect_error "nbody NUL then a long line" "nul_long.txt:2: NUL byte" \
    "$TESSERA" "${NB[@]}" --input "$tmp/nul_long.txt"
printf '0 1 1 1 0 0 0\n1 2\0332 2 0 0 0\n' > "$tmp/esc.txt"
expect_error "nbody control byte" "esc.txt:2: control character" \
    "$TESSERA" "${NB[@]}" --input "$tmp/esc.txt"

step "non-regular inputs are refused at once"
mkfifo "$tmp/fifo"
expect_error "kmeans --points /dev/zero" "not a regular file" "$TESSERA" "${KM[@]}" --points /dev/zero
expect_error "kmeans --points FIFO" "not a regular file" "$TESSERA" "${KM[@]}" --points "$tmp/fifo"
expect_error "nbody --input /dev/zero" "not a regular file" "$TESSERA" "${NB[@]}" --input /dev/zero
expect_error "nbody --input DIR" "not a regular file" "$TESSERA" "${NB[@]}" --input "$tmp"
expect_error "crawl --seeds FIFO" "not a regular file" \
    "$TESSERA" run crawl --seeds "$tmp/fifo" --output "$tmp/crawl"

step "a long load stops on SIGTERM"
python3 - "$tmp/big.txt" << 'PY'
import sys
with open(sys.argv[1], "w") as f:
    line = "1.5 2.5 3.5\n" * 1000
    for _ in range(8000):  # 8M points: 3-8 s to load on the test machines
        f.write(line)
PY
"$TESSERA" "${KM[@]}" --points "$tmp/big.txt" > /dev/null 2> "$tmp/err.txt" &
pid=$!
sleep 0.5
kill -TERM $pid
start=$(date +%s.%N)
wait $pid
rc=$?
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
[ "$rc" -ne 0 ] || die "kmeans load: exit 0 after SIGTERM"
awk -v t="$took" 'BEGIN { exit !(t < 1.5) }' || die "kmeans load: took ${took} s to stop after SIGTERM"
echo "ok: kmeans loading 8M points stops on SIGTERM (exit $rc, ${took} s)"

step "sar: a huge but finite wavenumber is refused (it made an all-NaN image)"
"$TESSERA" run sar --gen 4:16:8:8 --save-scene "$tmp/s.tsar" --output "$tmp/s.out" > /dev/null 2>&1 ||
    die "sar --gen --save-scene fails"
python3 -c "
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[32:40] = struct.pack('<d', 1e300)
open(sys.argv[2], 'wb').write(b)" "$tmp/s.tsar" "$tmp/ku.tsar"
expect_error "sar ku=1e300" "wavenumber ku" "$TESSERA" run sar --input "$tmp/ku.tsar" --output "$tmp/ku.out"
[ ! -e "$tmp/ku.out" ] || die "sar ku=1e300 left an output"

step "nbody: a box of far more cells than particles is refused (20 s a step)"
expect_error "nbody --box 1e3 --cutoff 1" "cells of side R for 50 particles" \
    "$TESSERA" run nbody --particles 50 --box 1e3 --cutoff 1 --steps 1 --workers 1

step "Ctrl-C in tessera gen leaves no temporary behind"
mkdir "$tmp/gen"
"$TESSERA" gen rmat:20 "$tmp/gen/g.txt" &
pid=$!
for _ in $(seq 1 1200); do
    ls "$tmp/gen" | grep -q "\.tmp\." && break
    sleep 0.05
done
ls "$tmp/gen" | grep -q "\.tmp\." || { kill $pid; die "gen never started writing"; }
kill -INT $pid
rc=0
wait $pid || rc=$?
[ "$rc" -ne 0 ] || die "gen: exit 0 after SIGINT"
[ -z "$(ls -A "$tmp/gen")" ] || die "gen left $(ls -A "$tmp/gen") after SIGINT"
echo "ok: gen interrupted while writing -> exit $rc, nothing left"

step "tiles knobs: cpu@F below 0.001 refused, TESS_TILE_PIN and TESS_TILE_TRACE garbage said"
BS=(run blackscholes --options 1000 --iterations 1 --quiet)
expect_error "cpu@1e-300" "F in \[0.001, 1\]" "$TESSERA" "${BS[@]}" --processors cpu@1e-300
TESS_TILE_PIN=maybe "$TESSERA" "${BS[@]}" --processors cpu 2> "$tmp/err.txt" > /dev/null ||
    die "TESS_TILE_PIN=maybe fails the run"
grep -q "TESS_TILE_PIN: expected 0 or 1, got 'maybe'" "$tmp/err.txt" || die "TESS_TILE_PIN=maybe: silent"
TESS_TILE_TRACE="$tmp/none/t" "$TESSERA" "${BS[@]}" --processors cpu 2> "$tmp/err.txt" > /dev/null ||
    die "an unwritable TESS_TILE_TRACE fails the run"
grep -q "TESS_TILE_TRACE: cannot open" "$tmp/err.txt" || die "TESS_TILE_TRACE unwritable: silent"
echo "ok: tiles knobs"

step "workqueue: metrics that cannot be written fail the run"
expect_error "workqueue --metrics in a missing directory" "metrics" \
    "$TESSERA" run workqueue --items 100 --workers 1 --metrics "$tmp/none/m.json"
mkdir -p "$tmp/isdir/x" # the run writes its metrics, then cannot put them in place
rc=0
"$TESSERA" run workqueue --items 100 --workers 1 --metrics "$tmp/isdir" > /dev/null 2> "$tmp/err.txt" ||
    rc=$?
[ "$rc" -ne 0 ] || die "workqueue: exit 0 when --metrics names a directory"
echo "ok: workqueue with --metrics naming a directory -> exit $rc: $(head -n 1 "$tmp/err.txt")"
echo "readers: all passed"
