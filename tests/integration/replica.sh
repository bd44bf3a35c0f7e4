#!/usr/bin/env bash
# The pull-style table API (put_range, replicated tables, tess_table_replicate,
# scan_dense) on a real runtime: 1 rank x 2 workers, 1 rank x 1 worker, and
# mpirun -np 3 with 1 and 2 workers per rank, ranges through the node-shared
# segments and, with TESS_NODE_SHARE=0, as messages (tests/integration/replica.c).
set -euo pipefail
prog="$TESS_BUILD/tests/integration/replica"
. "$(dirname "$0")/mpi_lib.bash"
embedded_cases "$prog"
if mpi_usable; then
    for w in 1 2; do
        echo "== mpirun -np 3, $w worker(s) per rank"
        timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$prog" --workers "$w" | tail -n 1
    done
    # ranks on other nodes get ranges as messages: the same test on that path
    echo "== mpirun -np 3, 2 workers per rank, TESS_NODE_SHARE=0 (messages only)"
    timeout 120 mpirun -np 3 --oversubscribe --bind-to none -x TESS_NODE_SHARE=0 \
        "$prog" --workers 2 | tail -n 1
    # "nodes" of 2 ranks (TESS_NODE_RANKS): shared within, messages between
    echo "== mpirun -np 4, 2 workers per rank, nodes of 2 ranks (TESS_NODE_RANKS=2)"
    timeout 120 mpirun -np 4 --oversubscribe --bind-to none -x TESS_NODE_RANKS=2 \
        "$prog" --workers 2 | tail -n 1
    # malformed knobs: one warning each on rank 0, then the defaults
    echo "== TESS_NODE_RANKS=2x, TESS_NODE_SHARE=yes: warnings, the defaults"
    err=$(timeout 120 mpirun -np 2 --oversubscribe --bind-to none -x TESS_NODE_RANKS=2x \
        -x TESS_NODE_SHARE=yes "$prog" --workers 1 2>&1 > /dev/null)
    [ "$(grep -c "TESS_NODE_RANKS: expected a rank count >= 1, got '2x'" <<< "$err")" = 1 ] &&
        [ "$(grep -c "TESS_NODE_SHARE: expected 0 or 1, got 'yes'" <<< "$err")" = 1 ] ||
        { echo "$err" >&2; echo "FAIL: not one warning per malformed knob" >&2; exit 1; }
    # a /dev/shm too small for the images (a container's): messages, one
    # warning, the same ranks; in a mount namespace of its own (root only)
    if [ "$(id -u)" = 0 ] && unshare -m true 2> /dev/null; then
        echo "== /dev/shm of 24 MB, images of 16 MB: messages and a warning"
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
        "$TESSERA" run pagerank --quiet --workers 1 --gen web:1000000 --iterations 3 \
            --output "$tmp/one.out"
        unshare -m bash -c "mount -t tmpfs -o size=24m tmpfs /dev/shm &&
            timeout 120 mpirun -np 2 --oversubscribe --bind-to none '$TESSERA' run pagerank \
            --quiet --workers 1 --gen web:1000000 --iterations 3 --output '$tmp/two.out' \
            --metrics '$tmp/m.json'" 2> "$tmp/err"
        grep -q "node-shared memory needs .* travel as messages" "$tmp/err" ||
            { cat "$tmp/err" >&2; echo "FAIL: no warning about /dev/shm" >&2; exit 1; }
        grep -q '"replica_bytes_shared": *0\b' "$tmp/m.json" ||
            { echo "FAIL: ranges were shared in a /dev/shm without room" >&2; exit 1; }
        cmp "$tmp/one.out" "$tmp/two.out" || { echo "FAIL: ranks differ" >&2; exit 1; }
        echo "messages, one warning, the same ranks"
    fi
else
    echo "== mpirun not available: multi-rank cases skipped"
fi
