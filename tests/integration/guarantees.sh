#!/usr/bin/env bash
# The table guarantees (DESIGN §2) on a real runtime: 1 rank x 4 workers,
# 1 rank x 1 worker, and mpirun -np 3 (1 and 2 workers per rank).  Also: a
# barrier that waits too long says whom it waits for.
set -euo pipefail
prog="$TESS_BUILD/tests/integration/guarantees"
err=$(mktemp)
trap 'rm -f "$err"' EXIT

run() {
    "$@" 2> "$err" || { cat "$err" >&2; exit 1; }
    if ! grep -q "barrier has waited .* for rank(s)" "$err"; then
        echo "FAIL: no barrier warning on stderr:" >&2
        cat "$err" >&2
        exit 1
    fi
    grep "barrier has waited" "$err" | head -n 1
}

echo "== embedded, 4 workers"; run "$prog" --workers 4
if ! grep -q "k_slow#1" "$err"; then echo "FAIL: the warning does not name k_slow#1" >&2; exit 1; fi
echo "== embedded, 1 worker"; run "$prog" --workers 1
. "$(dirname "$0")/mpi_lib.bash"
if mpi_usable; then
    for w in 1 2; do
        echo "== mpirun -np 3, $w worker(s) per rank"
        run timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$prog" --workers "$w"
        if ! grep -q "for rank(s) 1" "$err"; then echo "FAIL: rank 1 not named" >&2; exit 1; fi
    done
else
    echo "== mpirun not available: multi-rank cases skipped"
fi
