#!/usr/bin/env bash
# The table guarantees (DESIGN §2) on a real runtime: 1 rank x 4 workers,
# 1 rank x 1 worker, and mpirun -np 3 (1 and 2 workers per rank).
set -euo pipefail
prog="$TESS_BUILD/tests/integration/guarantees"
echo "== embedded, 4 workers"; "$prog" --workers 4
echo "== embedded, 1 worker"; "$prog" --workers 1
if [ "${TESS_HAVE_MPI:-0}" = 1 ] && command -v mpirun >/dev/null; then
    for w in 1 2; do
        echo "== mpirun -np 3, $w worker(s) per rank"
        timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$prog" --workers "$w"
    done
else
    echo "== mpirun not available: multi-rank cases skipped"
fi
