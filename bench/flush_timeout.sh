#!/usr/bin/env bash
# bench/flush_timeout.sh — what the timeout flush costs (docs/tables.md,
# "When other kernels see a write"): PageRank and k-means with the default
# timeout (A: TESS_FLUSH_MS unset, 5 ms) against none (B: TESS_FLUSH_MS=0),
# in alternating rounds A B, B A, A B, ... so a slow phase of the shared
# machine hits both alike and each goes first as often.  A run's time is the sum of its iteration_seconds
# (loading not counted).  Prints every round, the medians, A/B of the
# medians and the median of the rounds' ratios (> 1: the timeout is
# slower; the goal is at most 1.03), then what rank 0 sent in one run of
# each (messages_sent, updates_remote: equal counts mean the timeout left
# the batching as it was, whatever the noise of the machine's timings).  A
# benchmark: never fails on speed.
#
# Each round also shows the steals of each run: on a shared machine a rank
# that is descheduled falls behind and the other steals a partition of it
# (PageRank web:1000000: about 19 MB moved), which costs that run time
# whichever variant it is.  The summary gives the median of the ratios of
# the rounds where neither run stole, and the median over the rounds of
# each run's median iteration (x iterations: one iteration descheduled for
# long moves the sum, not this).
#
#   TESSERA=build/tessera bench/flush_timeout.sh [ROUNDS] [WORKERS] [NP]
#
# NP > 1 runs each variant under `mpirun -np NP --workers 1` as well (when
# mpirun is on PATH).  Environment: PR_GEN (default web:200000), PR_IT (20),
# KM_GEN (default 1000000:8:16), KM_IT (10); TESS_STEAL=0 runs both
# variants without stealing; CONTROL=1 runs A without the timeout too (A/A:
# how far apart two identical variants come out on this machine); CASES
# (default "pr km pr-np km-np") picks the cases.
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

control=${CONTROL:-0}
a_label="5 ms"
[ "$control" = 1 ] && a_label="off, A/A control"

# "seconds steals median-iteration-seconds" of one run: VARIANT LAUNCH...
run_once() {
    local variant=$1
    shift
    local m="$tmp/m.json"
    rm -f "$m"
    if [ "$variant" = A ] && [ "$control" != 1 ]; then
        env -u TESS_FLUSH_MS "$@" --quiet --metrics "$m" > /dev/null
    else TESS_FLUSH_MS=0 "$@" --quiet --metrics "$m" > /dev/null; fi
    python3 - "$m" <<'PY'
import json, statistics, sys
m = json.load(open(sys.argv[1]))
it = m["iteration_seconds"]
print(sum(it), m.get("steals", 0), statistics.median(it) * len(it))
PY
    cp "$m" "$tmp/last-$variant.json"
}

# rank 0's traffic in the last run of A and of B
traffic() {
    python3 - "$1" "$tmp/last-A.json" "$tmp/last-B.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[2:4])
keys = ("messages_sent", "bytes_sent", "updates_remote", "steals")
print(f"{sys.argv[1]}: rank 0 sent, A / B: " +
      ", ".join(f"{k} {a[k]} / {b[k]}" for k in keys))
PY
}

# ROUNDS alternating rounds of one case; prints its lines.
bench_case() {
    local name=$1
    shift
    : > "$tmp/rounds"
    for r in $(seq "$rounds"); do
        # A B, B A, A B, ...: an A/A control with A always first came out 1.06
        # here; each variant goes first in half the rounds, so an order effect
        # cancels.
        if [ $((r % 2)) = 1 ]; then
            read -r a as am <<< "$(run_once A "$@")"
            read -r b bs bm <<< "$(run_once B "$@")"
        else
            read -r b bs bm <<< "$(run_once B "$@")"
            read -r a as am <<< "$(run_once A "$@")"
        fi
        echo "$a $b $as $bs $am $bm" >> "$tmp/rounds"
        printf '  %-28s round %d: A %.4f s (%d steals)  B %.4f s (%d steals)\n' "$name" "$r" \
            "$a" "$as" "$b" "$bs"
    done
    python3 - "$name" "$tmp/rounds" "$a_label" <<'PY'
import statistics, sys
name, label = sys.argv[1], sys.argv[3]
rows = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
med = statistics.median
a = med(r[0] for r in rows)
b = med(r[1] for r in rows)
ratio = med(r[0] / r[1] for r in rows)
print(f"{name}: median A ({label}) {a:.4f} s, B (off) {b:.4f} s, A/B {a / b:.4f}, "
      f"median of round ratios {ratio:.4f} ({len(rows)} rounds)")
calm = [r for r in rows if r[2] == 0 and r[3] == 0]
stole = f"rounds with steals: A {sum(r[2] > 0 for r in rows)}, B {sum(r[3] > 0 for r in rows)}"
calm_ratio = f"{med(r[0] / r[1] for r in calm):.4f}" if calm else "-"
print(f"{name}: {stole}; median of round ratios without steals {calm_ratio} ({len(calm)} "
      f"rounds); median of ratios of median iterations {med(r[4] / r[5] for r in rows):.4f}")
PY
    traffic "$name"
}

echo "bench/flush_timeout.sh rounds=$rounds workers=$workers np=$np ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
cases=" ${CASES:-pr km pr-np km-np} "
pr=(run pagerank --gen "$pr_gen" --iterations "$pr_it")
km=(run kmeans --gen "$km_gen" --iterations "$km_it")
[[ $cases == *" pr "* ]] && bench_case "pagerank $pr_gen embedded" "$TESSERA" "${pr[@]}" --workers "$workers"
[[ $cases == *" km "* ]] && bench_case "kmeans $km_gen embedded" "$TESSERA" "${km[@]}" --workers "$workers"
if [ "$np" -gt 1 ] && command -v mpirun > /dev/null 2>&1 && [ "${TESS_HAVE_MPI:-1}" = 1 ]; then
    mpi=(mpirun -np "$np" --oversubscribe --bind-to none)
    [[ $cases == *" pr-np "* ]] && bench_case "pagerank $pr_gen np=$np" "${mpi[@]}" "$TESSERA" "${pr[@]}" --workers 1
    [[ $cases == *" km-np "* ]] && bench_case "kmeans $km_gen np=$np" "${mpi[@]}" "$TESSERA" "${km[@]}" --workers 1
fi
exit 0
