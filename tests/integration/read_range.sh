#!/usr/bin/env bash
# Dense range reads and the gather (tess_table_read_range, tess_table_gather;
# tests/integration/read_range.c), embedded with 1 and 2 workers and under
# mpirun -np 3, where ranges cross ranks.  The speed against tess_table_get
# per key is printed, not asserted (a shared machine):
#   build/tests/integration/read_range --workers 1 --bench 1000000
set -euo pipefail
prog="$TESS_BUILD/tests/integration/read_range"
. "$(dirname "$0")/mpi_lib.bash"
embedded_cases "$prog"
mpi_case 3 '^0 passed' "$prog" --workers 2
