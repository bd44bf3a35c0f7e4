#!/usr/bin/env bash
# A tiles job with any worker count (tests/integration/tile_workers.c): the
# rank's first worker is the controller, and a TESS_EVERY_WORKER run gives
# every worker one instance even when the others return at once (before, 3
# workers on 2 cores lost the controller in about one run in four: TESS_OK
# and no output).  Also the frees that accept NULL, and that a tiles run,
# one barrier however long it takes, prints no "barrier has waited" warning
# (before, a texture run over a large slide printed one every 10 s).
set -euo pipefail
prog="$TESS_BUILD/tests/integration/tile_workers"
err="$TESS_BUILD/tile_workers.err"
for w in 1 3 4 0; do
    for i in 1 2 3 4 5; do
        "$prog" "$w" > "$TESS_BUILD/tile_workers.out" 2> "$err" ||
            { cat "$TESS_BUILD/tile_workers.out" "$err"; echo "FAIL: $w workers, run $i" >&2; exit 1; }
        if grep -q "barrier has waited" "$err"; then
            cat "$err" >&2
            echo "FAIL: a tiles run warned of its own barrier ($w workers, run $i)" >&2
            exit 1
        fi
    done
    echo "== $w workers (0: one per core): 5 runs, $(tail -n 1 "$TESS_BUILD/tile_workers.out")"
done
. "$(dirname "$0")/mpi_lib.bash"
mpi_case 2 '^1 passed, 0' "$prog" 3
