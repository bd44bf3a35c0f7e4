#!/usr/bin/env bash
# soak_long.sh (long tier) — repeat the table guarantees many times, embedded
# and under mpirun with 2, 3 and 4 ranks, so that rare orderings of messages,
# barriers and shutdowns get their chance to go wrong.  SOAK_ROUNDS (default
# 10) rounds of each topology.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
prog="$TESS_BUILD/tests/integration/guarantees"
rounds="${SOAK_ROUNDS:-10}"
for i in $(seq 1 "$rounds"); do
    step "round $i/$rounds"
    for w in 1 2 4; do
        "$prog" --workers "$w" > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/out" "$tmp/err"; die "embedded, $w workers"; }
    done
    if [ "$MPI" = 1 ]; then
        for np in 2 3 4; do
            timeout 120 mpirun -np "$np" --oversubscribe --bind-to none "$prog" --workers $(( 1 + i % 2 )) \
                > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/out" "$tmp/err"; die "mpirun -np $np"; }
        done
    fi
done
echo "soak_long.sh: $rounds rounds passed"
