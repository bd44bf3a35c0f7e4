#!/usr/bin/env bash
# Work stealing and live partition migration (docs/stealing.md): kernels
# write to partitions while they move between ranks; sums must be conserved
# key by key and each writer's per-key order kept.  Embedded (stealing is
# moot with one rank; the throttle still applies) and mpirun -np 3 with
# migrations forced at seeded random moments (TESS_STEAL_FORCE) and with a
# slowed rank that makes stealing pay (TESS_SLOW_WORKER).
set -euo pipefail
prog="$TESS_BUILD/tests/integration/migrate"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

run() {
    if ! "$@" > "$out" 2>&1; then cat "$out" >&2; echo "FAIL: $*" >&2; exit 1; fi
    grep -E "sum of all|steals:|passed" "$out" | tr '\n' ' '; echo
}

need_steals() {
    local n
    n=$(sed -n 's/^steals: //p' "$out")
    if [ "${n:-0}" -lt 1 ]; then echo "FAIL: no task was stolen" >&2; cat "$out" >&2; exit 1; fi
}

echo "== embedded, 4 workers"; run "$prog" --workers 4 --rounds 40
echo "== embedded, 2 workers, worker throttle on rank 0"
TESS_SLOW_WORKER=0:2 run "$prog" --workers 2 --rounds 40
. "$(dirname "$0")/mpi_lib.bash"
if ! mpi_usable; then
    echo "== mpirun not available: multi-rank cases skipped"
    exit 0
fi
mpi() { timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$@"; }
seeds="1 2"
# Under ASan/TSan one seed of forced migrations: the same paths, half the time.
[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] && seeds=1
for seed in $seeds; do
    for w in 1 2; do
        echo "== mpirun -np 3, $w worker(s), forced migrations (seed $seed)"
        TESS_STEAL_FORCE=$seed:2 run mpi "$prog" --workers "$w"
        need_steals
    done
done
echo "== mpirun -np 3, rank 1 at a quarter speed: stealing by gain"
TESS_SLOW_WORKER=1:4 run mpi "$prog" --workers 1
need_steals
echo "== mpirun -np 3, --no-steal equivalent (TESS_STEAL=0): nothing moves"
TESS_STEAL=0 TESS_SLOW_WORKER=1:4 run mpi "$prog" --workers 1 --rounds 40
if [ "$(sed -n 's/^steals: //p' "$out")" != 0 ]; then echo "FAIL: stole with TESS_STEAL=0" >&2; exit 1; fi
