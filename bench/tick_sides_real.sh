#!/usr/bin/env bash
# tick_sides_real.sh — computing ahead per side with REAL compute (not the
# virtual clock): alternating rounds of the inner region (TESS_TICK_SIDES=off)
# and per side (TESS_TICK_SIDES=on, the default), both refining a version
# computed ahead only when it is next (TESS_TICK_REFINE=next), and per side
# refining on every arrival (TESS_TICK_REFINE=every, the default since
# 2026-11-29), the same seed for every mode of a round and the mode order
# rotated per round, since the machine is shared and noisy.
# Prints, per configuration and mode, the median ticks/s, the median of each
# round's ratio to the inner region's, and the median CPU seconds.
#
#   bench/tick_sides_real.sh [BIN] [ROUNDS] [WORKERS]
set -euo pipefail
bin=${1:-build/tessera}
rounds=${2:-5}
workers=${3:-4}
[ -x "$bin" ] || { echo "tick_sides_real.sh: $bin: no such executable" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

configs=(
    "jacobi-sched-d4|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 4"
    "fish-sched-d2|fish --fish 8000 --informed 0.1 --ticks 150 --alg sched --depth 2"
    "fish-combined|fish --fish 8000 --informed 0.1 --ticks 150 --alg combined --depth 2 --period 2 --layers 3"
)
modes=(inner sides every)

run_one() { # mode config-args seed -> "ticks/s cpu-s"
    local mode=$1 args=$2 seed=$3 sides=off refine=next
    [ "$mode" = inner ] || sides=on
    [ "$mode" = every ] && refine=every
    local line
    # shellcheck disable=SC2086
    line=$(TESS_TICK_SIDES=$sides TESS_TICK_REFINE=$refine /usr/bin/env time -f "cpu %U %S" \
        "$bin" run $args --workers "$workers" --jitter cloud --seed "$seed" 2>&1 |
        grep -E "ticks of|^cpu " | tr '\n' ' ')
    local tps cpu
    tps=$(sed -n 's/.*: \([0-9.]*\) ticks\/s (.*/\1/p' <<<"$line")
    cpu=$(sed -n 's/.*cpu \([0-9.]*\) \([0-9.]*\).*/\1 \2/p' <<<"$line" | awk '{print $1+$2}')
    echo "$tps $cpu"
}

for ((r = 1; r <= rounds; r++)); do
    for c in "${configs[@]}"; do
        name=${c%%|*} args=${c#*|}
        for ((k = 0; k < ${#modes[@]}; k++)); do
            mode=${modes[$(((k + r) % ${#modes[@]}))]}
            read -r tps cpu < <(run_one "$mode" "$args" "$r")
            echo "$r $name $mode $tps $cpu" | tee -a "$tmp/rows" >&2
        done
    done
done

python3 - "$tmp/rows" "$workers" "$rounds" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
d = {}
for r, name, mode, tps, cpu in rows:
    d.setdefault(name, {}).setdefault(mode, {})[int(r)] = (float(tps), float(cpu))
print(f"# REAL compute, {sys.argv[2]} workers, cloud jitter, {sys.argv[3]} alternating rounds (seed = round)")
print(f"{'config':16} {'mode':6} {'ticks/s':>8} {'/inner':>7} {'cpu s':>6}")
for name, m in d.items():
    for mode in ("inner", "sides", "every"):
        if mode not in m: continue
        tps = st.median(v[0] for v in m[mode].values())
        cpu = st.median(v[1] for v in m[mode].values())
        ratio = st.median(m[mode][r][0] / m["inner"][r][0] for r in m[mode] if r in m["inner"])
        print(f"{name:16} {mode:6} {tps:8.1f} {ratio:7.3f} {cpu:6.2f}")
PY
