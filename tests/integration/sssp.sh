#!/usr/bin/env bash
# A fixpoint on tables counted by the runtime (tess_table_changes): SSSP over
# a MIN table against a sequential Dijkstra (tests/integration/sssp.c),
# embedded with 1 and 2 workers and under mpirun -np 3.
set -euo pipefail
prog="$TESS_BUILD/tests/integration/sssp"
echo "== embedded, 2 workers"; "$prog" --workers 2 | tail -n 2
echo "== embedded, 1 worker"; "$prog" --workers 1 | tail -n 1
. "$(dirname "$0")/mpi_lib.bash"
mpi_case 3 '^0 passed' "$prog" --workers 2
