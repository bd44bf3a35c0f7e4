#!/usr/bin/env bash
# Tables created and dropped at run time (tests/integration/runtime_tables.c):
# embedded and under mpirun -np 2 and 3, then through a checkpoint: written
# by -np 2, restored embedded and by -np 3.
set -euo pipefail
prog="$TESS_BUILD/tests/integration/runtime_tables"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== embedded, 2 workers"; timeout 60 "$prog" --workers 2
echo "== checkpoint written and restored embedded"
timeout 60 "$prog" --ckpt "$tmp/a" write --workers 2
timeout 60 "$prog" --ckpt "$tmp/a" restore --workers 2
. "$(dirname "$0")/mpi_lib.bash"
mpi_case 2 '^0 passed' "$prog" --workers 2
mpi_case 3 '^0 passed' "$prog" --workers 1
mpi_case 2 '^0 passed' "$prog" --ckpt "$tmp/b" write --workers 1
mpi_case 3 '^0 passed' "$prog" --ckpt "$tmp/b" restore --workers 1
