#!/usr/bin/env bash
# bench/flush_timeout.sh — what the timeout flush costs (docs/tables.md,
# "When other kernels see a write"): PageRank and k-means with the default
# timeout (A: TESS_FLUSH_MS unset, 5 ms) against none (B: TESS_FLUSH_MS=0),
# in alternating rounds A B, A B, ... so a slow phase of the shared machine
# hits both alike.  A run's time is the sum of its iteration_seconds
# (loading not counted).  Prints every round, the medians, A/B of the
# medians and the median of the rounds' ratios (> 1: the timeout is
# slower; the goal is at most 1.03), then what rank 0 sent in one run of
# each (messages_sent, updates_remote: equal counts mean the timeout left
# the batching as it was, whatever the noise of the machine's timings).  A
# benchmark: never fails on speed.
#
#   TESSERA=build/tessera bench/flush_timeout.sh [ROUNDS] [WORKERS] [NP]
#
# NP > 1 runs each variant under `mpirun -np NP --workers 1` as well (when
# mpirun is on PATH).  Environment: PR_GEN (default web:200000), PR_IT (20),
# KM_GEN (default 1000000:8:16), KM_IT (10).
set -euo pipefail
TESSERA=${TESSERA:-build/tessera}
rounds=${1:-7} workers=${2:-2} np=${3:-2}
pr_gen=${PR_GEN:-web:200000} pr_it=${PR_IT:-20}
km_gen=${KM_GEN:-1000000:8:16} km_it=${KM_IT:-10}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# seconds of one run: VARIANT LAUNCH... -- APP ARGS...
run_once() {
    local variant=$1
    shift
    local m="$tmp/m.json"
    rm -f "$m"
    if [ "$variant" = A ]; then env -u TESS_FLUSH_MS "$@" --quiet --metrics "$m" > /dev/null
    else TESS_FLUSH_MS=0 "$@" --quiet --metrics "$m" > /dev/null; fi
    python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["iteration_seconds"]))' "$m"
    cp "$m" "$tmp/last-$variant.json"
}

# rank 0's traffic in the last run of A and of B
traffic() {
    python3 - "$1" "$tmp/last-A.json" "$tmp/last-B.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[2:4])
keys = ("messages_sent", "bytes_sent", "updates_remote")
print(f"{sys.argv[1]}: rank 0 sent, A (5 ms) / B (off): " +
      ", ".join(f"{k} {a[k]} / {b[k]}" for k in keys))
PY
}

# ROUNDS alternating rounds of one case; prints its lines.
bench_case() {
    local name=$1
    shift
    : > "$tmp/rounds"
    for r in $(seq "$rounds"); do
        a=$(run_once A "$@")
        b=$(run_once B "$@")
        echo "$a $b" >> "$tmp/rounds"
        printf '  %-28s round %d: A %.4f s  B %.4f s\n' "$name" "$r" "$a" "$b"
    done
    python3 - "$name" "$tmp/rounds" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
a = statistics.median(r[0] for r in rows)
b = statistics.median(r[1] for r in rows)
ratio = statistics.median(r[0] / r[1] for r in rows)
print(f"{sys.argv[1]}: median A (5 ms) {a:.4f} s, B (off) {b:.4f} s, A/B {a / b:.4f}, "
      f"median of round ratios {ratio:.4f} ({len(rows)} rounds)")
PY
    traffic "$name"
}

echo "bench/flush_timeout.sh rounds=$rounds workers=$workers np=$np ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
bench_case "pagerank $pr_gen embedded" "$TESSERA" run pagerank --gen "$pr_gen" --iterations "$pr_it" --workers "$workers"
bench_case "kmeans $km_gen embedded" "$TESSERA" run kmeans --gen "$km_gen" --iterations "$km_it" --workers "$workers"
if [ "$np" -gt 1 ] && command -v mpirun > /dev/null 2>&1 && [ "${TESS_HAVE_MPI:-1}" = 1 ]; then
    mpi=(mpirun -np "$np" --oversubscribe --bind-to none)
    bench_case "pagerank $pr_gen np=$np" "${mpi[@]}" "$TESSERA" run pagerank --gen "$pr_gen" --iterations "$pr_it" --workers 1
    bench_case "kmeans $km_gen np=$np" "${mpi[@]}" "$TESSERA" run kmeans --gen "$km_gen" --iterations "$km_it" --workers 1
fi
