#!/usr/bin/env bash
# bench/steal.sh — work stealing against a slowed worker (docs/stealing.md).
#
# PageRank on a graph with skewed partitions (default web:700000: partitions
# end on site boundaries and site sizes are heavy-tailed, so partitions
# carry very unequal numbers of edges) under `mpirun -np N`, 1 worker per
# rank, in alternating rounds A B C D E A B C D E ...:
#   A  normal: no throttle, stealing on (the default)
#   B  normal, --no-steal
#   C  rank N-1 at half speed (--slow-worker N-1:2:spin), --no-steal
#   D  rank N-1 at half speed, stealing on
#   E  rank N-1 at half speed with the sleeping throttle
#      (--slow-worker N-1:2:sleep), --no-steal, for comparison
# The throttle of C and D spins on the clock for the extra time, so the
# slowed rank's threads keep their cores like slower cores would; a
# sleeping throttle hands the cores to the other ranks' threads, and each
# of its sleeps lasts at least the kernel's timer slack.
# Each run's time is the sum of its iteration_seconds (graph loading not
# counted).  Prints the skew of the partitions, each run with the CPU share
# other processes took from the machine meanwhile, the medians, and C and D
# against the bound A x N/(N-1/2): with one of N workers at half speed no
# schedule beats it, if half speed doubles the run.  When C/A is below 2
# (part of an iteration is not slowed), it also prints the bound that the
# measured slowdown allows, A + (C - A)/(2N - 1) (docs/stealing.md).  A
# benchmark, not a test: it prints ratios and never fails on them.
#
#   TESSERA=build/tessera bench/steal.sh [GRAPH] [ITERATIONS] [ROUNDS] [RANKS] [PARTITIONS]
#
# GRAPH is a --gen spec or a graph file.  Environment: VARIANTS (default
# "A B C D E"), QUIET_WAIT=S (before each run wait up to S seconds for the
# machine to be nearly idle; default 0), MAX_OTHERS=F (a run during which
# other processes used more than F of the machine's CPU is run again, at
# most RETRIES times, default 0.1 and 3; the medians use the last try),
# RAW=FILE (append one JSON line per run, retried ones included).
set -euo pipefail
tessera=${TESSERA:-build/tessera}
graph=${1:-web:700000}; iters=${2:-20}; rounds=${3:-5}; ranks=${4:-2}; parts=${5:-32}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ -f "$graph" ]; then
    ln -s "$(cd "$(dirname "$graph")" && pwd)/$(basename "$graph")" "$dir/graph.bin"
else
    "$tessera" gen "$graph" "$dir/graph.bin" --cache > /dev/null
fi
python3 - "$tessera" "$dir" "$graph" "$iters" "$rounds" "$ranks" "$parts" \
    "${VARIANTS:-A B C D E}" "${QUIET_WAIT:-0}" "${RAW:-}" "${MAX_OTHERS:-0.1}" \
    "${RETRIES:-3}" <<'PY'
import json, os, resource, statistics, subprocess, sys, time

tessera, d, graph, iters, rounds, n, parts = sys.argv[1:8]
iters, rounds, n, parts = int(iters), int(rounds), int(n), int(parts)
variants, quiet_wait, raw = sys.argv[8].split(), float(sys.argv[9]), sys.argv[10]
max_others, retries = float(sys.argv[11]), int(sys.argv[12])
slow = n - 1
flags = {"A": [], "B": ["--no-steal"], "C": ["--slow-worker", f"{slow}:2:spin", "--no-steal"],
         "D": ["--slow-worker", f"{slow}:2:spin"],
         "E": ["--slow-worker", f"{slow}:2:sleep", "--no-steal"]}
names = {"A": "normal (stealing on)", "B": "normal, --no-steal",
         "C": "rank %d at 1/2 speed, --no-steal" % slow, "D": "rank %d at 1/2 speed, stealing" % slow,
         "E": "rank %d at 1/2 speed asleep, --no-steal" % slow}
hz, ncpu = os.sysconf("SC_CLK_TCK"), os.cpu_count()


def cpu_busy():
    """Seconds of CPU every process on the machine has used, and a timestamp."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / hz, time.monotonic()


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def wait_quiet():
    """Up to quiet_wait seconds until others use under 1/4 of a core for 2 s."""
    start, calm = time.monotonic(), 0
    while quiet_wait > 0 and time.monotonic() - start < quiet_wait and calm < 4:
        b0, t0 = cpu_busy()
        time.sleep(0.5)
        b1, t1 = cpu_busy()
        calm = calm + 1 if (b1 - b0) / (t1 - t0) < 0.25 else 0
    return time.monotonic() - start


def run_once(v, r, attempt):
    waited = wait_quiet()
    out = f"{d}/{v}.{r}.json"
    b0, t0 = cpu_busy()
    c0 = children_cpu()
    subprocess.run(["mpirun", "-np", str(n), "--oversubscribe", "--bind-to", "none", tessera,
                    "run", "pagerank", "--graph", f"{d}/graph.bin", "--workers", "1",
                    "--partitions", str(parts), "--iterations", str(iters), "--quiet",
                    "--metrics", out] + flags[v], check=True, stdout=subprocess.DEVNULL)
    b1, t1 = cpu_busy()
    ours = children_cpu() - c0
    m = json.load(open(out))
    rec = {"variant": v, "round": r, "attempt": attempt, "seconds": sum(m["iteration_seconds"]),
           "steals": m.get("steals", 0), "ours_cpu": ours, "wall": t1 - t0,
           "others": max(0.0, (b1 - b0 - ours) / (t1 - t0) / ncpu), "waited": waited,
           "progress_cpu_rank0": m.get("progress_cpu_seconds", 0),
           "iteration_seconds": m["iteration_seconds"]}
    if raw:
        with open(raw, "a") as f:
            f.write(json.dumps(rec) + "\n")
    return rec, m


def run(v, r):
    """Run again while other processes took more than max_others of the machine."""
    for attempt in range(retries + 1):
        rec, m = run_once(v, r, attempt)
        if rec["others"] <= max_others:
            break
    return rec, m


runs, first = {v: [] for v in variants}, None
for r in range(1, rounds + 1):
    for v in variants:
        rec, m = run(v, r)
        runs[v].append(rec)
        first = first or m

edges = first["partition_edges"]
total = sum(edges)
share = [sum(edges[q::n]) / total for q in range(n)]
print(f"PageRank {graph}: {first['vertices']} vertices, {first['edges']} edges, "
      f"{iters} iterations, {parts} partitions, mpirun -np {n} x 1 worker, {rounds} rounds")
print(f"skew: partition edges / mean  max {max(edges) * parts / total:.2f}  "
      f"min {min(edges) * parts / total:.2f}; ranks' shares of the edges (partition p on rank "
      f"p mod {n}): " + " ".join(f"{s:.3f}" for s in share) + f"; slowed rank {slow}")
print(f"others = CPU share of the machine other processes used during the run (runs above "
      f"{max_others} were repeated, at most {retries} times)")
med = {}
for v in variants:
    ts = [x["seconds"] for x in runs[v]]
    med[v] = statistics.median(ts)
    print(f"{v}  {names[v]:38s} median {med[v]:7.3f} s  runs "
          + " ".join(f"{t:.3f}" for t in ts)
          + "  steals " + " ".join(str(x["steals"]) for x in runs[v])
          + "  others " + " ".join(f"{x['others']:.2f}" for x in runs[v]))
if "A" in med:
    bound = med["A"] * n / (n - 0.5)
    print(f"bound = A x {n}/({n}-1/2) = {bound:.3f} s; goal D <= 1.05 x bound = {1.05 * bound:.3f} s")
    for v in "BCDE":
        if v not in med:
            continue
        per_round = [y["seconds"] / x["seconds"] for x, y in zip(runs["A"], runs[v])]
        print(f"{v} / A = {med[v] / med['A']:.3f} (per round: median {statistics.median(per_round):.3f})"
              + (f"   {v} / bound = {med[v] / bound:.3f}" if v in "CD" else ""))
if "A" in med and "C" in med:
    # The bound assumes that half speed doubles the run (C = 2A).  If it
    # does not, part of an iteration is not slowed; with O that part and w
    # a rank's slowed work, A = O + w and C = O + 2w, and the best schedule
    # takes O + N w/(N-1/2) = A + (C - A)/(2N - 1).
    fit = med["A"] + (med["C"] - med["A"]) / (2 * n - 1)
    print(f"bound from the measured slowdown = A + (C - A)/{2 * n - 1} = {fit:.3f} s"
          + (f"   D / it = {med['D'] / fit:.3f}" if "D" in med else ""))
PY
