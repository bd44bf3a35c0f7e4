#!/usr/bin/env bash
# Iterators read a partition a chunk at a time (tests/integration/iter_stream.c):
# with 4 KiB chunks, partitions hundreds of chunks long, dense and hash, read
# whole and while written, embedded and under mpirun -np 2 (another rank's
# partition).  The time against the whole-copy iterator is measured with
#   mpirun -np 2 build/tests/integration/iter_stream --bench 25000000
set -euo pipefail
prog="$TESS_BUILD/tests/integration/iter_stream"
export TESS_ITER_CHUNK=4096
echo "== embedded, 2 workers"; "$prog" --workers 2
. "$(dirname "$0")/mpi_lib.bash"
mpi_case 2 '^0 passed' "$prog" --workers 1
