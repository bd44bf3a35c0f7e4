#!/usr/bin/env bash
# Error text names what the user knows (tests/integration/errors.c): the
# table and key of a get that found nothing, tess_tile_run() rather than the
# tess_run() behind it; and a failing tick or tiles run names a tick process
# or the tiles run, never the face's internal kernel (tess.tick, tess.tile).
# A tile job with in_bytes but no input is refused naming the fields.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
prog="$TESS_BUILD/tests/integration/errors"
step "embedded"
"$prog" | tail -n 1 | grep -q '^[0-9]* passed, 0 failed' || { "$prog"; die "errors"; }
if [ "${MPI:-0}" = 1 ]; then
    step "mpirun -np 2 (remote keys)"
    out=$(timeout 120 mpirun -np 2 --oversubscribe --bind-to none "$prog")
    grep -q '^[1-9][0-9]* passed, 0 failed' <<< "$out" || { echo "$out"; die "errors under mpirun"; }
fi
step "a failing tick process and tiles run, through the CLI"
TESS_FAULT=kernel@0 timeout 60 "$TESSERA" run jacobi --rows 100 --cols 100 --ticks 10 \
    --workers 2 --dump "$tmp/j.out" 2> "$tmp/tick.err" > /dev/null
TESS_FAULT=kernel@0 timeout 60 "$TESSERA" run blackscholes --options 10000 --iterations 1 \
    --processors cpu --output "$tmp/b.out" 2> "$tmp/tile.err" > /dev/null
# kernel@0 fails the first kernel to start on rank 0: either tick process
# (TSan's timing in CI started process 1 first).
grep -Eq "tick process [01] on rank 0: injected fault" "$tmp/tick.err" ||
    die "tick: $(cat "$tmp/tick.err")"
grep -q "tiles run, rank 0 worker 0: injected fault" "$tmp/tile.err" ||
    die "tiles: $(cat "$tmp/tile.err")"
if grep -q 'tess\.tick\|tess\.tile\|tess_run()' "$tmp/tick.err" "$tmp/tile.err"; then
    die "internal names reach the user: $(cat "$tmp/tick.err" "$tmp/tile.err")"
fi
echo "ok: errors name tables, keys, tick processes and the tiles run"
