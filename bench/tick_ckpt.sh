#!/usr/bin/env bash
# tick_ckpt.sh — what checkpoints cost the tick face (docs/checkpoints.md,
# "Ticks", issue 38 item 4): Jacobi with 1000 x 1000 cells per worker, runs
# without checkpoints and with one every EVERY ticks alternating (the order
# flips every round, so drift in the machine's load hits both alike).  Per
# round: the cost of one checkpoint, (tick_seconds with - without) /
# checkpoints taken; the median over rounds gives the overhead at one
# checkpoint a minute, cost / 60 s (goal <= 2%).  Then a restore from the
# last run's checkpoint: its restore_seconds.
#
# usage: bench/tick_ckpt.sh [ROUNDS=5] [WORKERS=2] [TICKS=300] [EVERY=50] [ALG=local]
# Environment: TESSERA (default build/tessera), TMPDIR.
set -euo pipefail
ROUNDS=${1:-5} W=${2:-2} TICKS=${3:-300} EVERY=${4:-50} ALG=${5:-local}
TESSERA=${TESSERA:-build/tessera}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(jacobi --rows 1000 --cols $((1000 * W)) --workers "$W" --ticks "$TICKS" --alg "$ALG" --quiet)

# run KIND ROUND: one run, its metrics in $dir/KIND.ROUND.json.
run() {
    local extra=()
    [ "$1" = ckpt ] && rm -rf "$dir/ck" &&
        extra=(--checkpoint-dir "$dir/ck" --checkpoint-every "$EVERY")
    "$TESSERA" run "${args[@]}" "${extra[@]}" --metrics "$dir/$1.$2.json"
}

echo "jacobi ${args[*]:1}: $ROUNDS rounds, a checkpoint every $EVERY ticks vs none"
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then run plain "$r" && run ckpt "$r"; else run ckpt "$r" && run plain "$r"; fi
done
"$TESSERA" run "${args[@]}" --checkpoint-dir "$dir/ck" --checkpoint-every "$EVERY" --restore \
    --metrics "$dir/restore.json" 2> "$dir/restore.err"

python3 - "$dir" "$ROUNDS" << 'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
load = lambda name: json.load(open(f"{d}/{name}.json"))
costs, ratios = [], []
for r in range(1, rounds + 1):
    p, c = load(f"plain.{r}"), load(f"ckpt.{r}")
    n = max(c["checkpoints"], 1)
    costs.append((c["tick_seconds"] - p["tick_seconds"]) / n)
    ratios.append(c["tick_seconds"] / p["tick_seconds"])
    print(f"  round {r}: without {p['tick_seconds']:.3f} s, with {c['tick_seconds']:.3f} s "
          f"({c['checkpoints']} checkpoints): {costs[-1] * 1e3:+.1f} ms each")
cost = statistics.median(costs)
print(f"median run-time ratio with/without: {statistics.median(ratios):.4f}")
print(f"median cost of one checkpoint: {cost * 1e3:.1f} ms; at one a minute: "
      f"{100 * cost / 60:.3f}% overhead (goal <= 2%)")
rs = load("restore")
print(f"restore: tick {rs['restored_tick']} read, verified and loaded in "
      f"{rs['restore_seconds'] * 1e3:.1f} ms")
PY
