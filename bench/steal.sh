#!/usr/bin/env bash
# bench/steal.sh — work stealing against a slowed worker (docs/stealing.md).
#
# PageRank on an R-MAT graph (partitions of equal vertex ranges carry very
# unequal numbers of edges: skewed) under `mpirun -np N`, 1 worker per rank,
# in alternating rounds A B C D A B C D ...:
#   A  normal: no throttle, stealing on (the default)
#   B  normal, --no-steal
#   C  rank N-1 at half speed (--slow-worker N-1:2), --no-steal
#   D  rank N-1 at half speed, stealing on
# Each run's time is the sum of its iteration_seconds (graph loading not
# counted).  Prints the medians, and C and D against the bound
# A x N/(N-1/2): with one of N workers at half speed no schedule beats it.
# A benchmark, not a test: it prints ratios and never fails on them.
#
#   TESSERA=build/tessera bench/steal.sh [SCALE] [ITERATIONS] [ROUNDS] [RANKS] [PARTITIONS]
set -euo pipefail
tessera=${TESSERA:-build/tessera}
scale=${1:-19}; iters=${2:-20}; rounds=${3:-3}; ranks=${4:-2}; parts=${5:-32}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$tessera" gen "rmat:$scale" "$dir/graph.bin" > /dev/null
slow=$((ranks - 1))
variants=(A B C D)
declare -A flags=([A]="" [B]="--no-steal" [C]="--slow-worker $slow:2 --no-steal"
                  [D]="--slow-worker $slow:2")
echo "PageRank rmat:$scale, $iters iterations, $parts partitions, mpirun -np $ranks x 1 worker, $rounds rounds"
for ((r = 1; r <= rounds; r++)); do
    for v in "${variants[@]}"; do
        # shellcheck disable=SC2086
        mpirun -np "$ranks" --oversubscribe --bind-to none "$tessera" run pagerank \
            --graph "$dir/graph.bin" --workers 1 --partitions "$parts" --iterations "$iters" \
            --quiet --metrics "$dir/$v.$r.json" ${flags[$v]} > /dev/null
    done
done
python3 - "$dir" "$rounds" "$ranks" <<'PY'
import json, statistics, sys
d, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = {"A": "normal (stealing on)", "B": "normal, --no-steal",
         "C": "one rank at 1/2 speed, --no-steal", "D": "one rank at 1/2 speed, stealing"}
med, steals = {}, {}
for v in "ABCD":
    runs = [json.load(open(f"{d}/{v}.{r}.json")) for r in range(1, rounds + 1)]
    times = [sum(m["iteration_seconds"]) for m in runs]
    med[v] = statistics.median(times)
    steals[v] = statistics.median(m.get("steals", 0) for m in runs)
    print(f"{v}  {names[v]:36s} median {med[v]:7.3f} s  runs {' '.join(f'{t:.3f}' for t in times)}"
          f"  steals {steals[v]:g}")
bound = med["A"] * n / (n - 0.5)
print(f"bound = A x {n}/({n}-1/2) = {bound:.3f} s")
print(f"C / bound = {med['C'] / bound:.3f}   C / A = {med['C'] / med['A']:.3f}")
print(f"D / bound = {med['D'] / bound:.3f}   D / A = {med['D'] / med['A']:.3f}")
PY
