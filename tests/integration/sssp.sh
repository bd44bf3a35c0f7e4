#!/usr/bin/env bash
# A fixpoint on tables counted by the runtime (tess_table_changes): SSSP over
# a MIN table against a sequential Dijkstra (tests/integration/sssp.c),
# embedded with 1 and 2 workers and under mpirun -np 3.
set -euo pipefail
prog="$TESS_BUILD/tests/integration/sssp"
. "$(dirname "$0")/mpi_lib.bash"
embedded_cases "$prog" 2
mpi_case 3 '^0 passed' "$prog" --workers 2
