#!/usr/bin/env bash
# tick_refine_real.sh — Algorithm 2's refinement on every arrival (the
# default) against refining a version computed ahead only once it is the
# oldest open tick (TESS_TICK_REFINE=next), with REAL compute (not the
# virtual clock): alternating rounds, the same seed for both modes of a round
# and the order swapped every round, since the machine is shared and noisy.
# Prints, per configuration and mode, the median ticks/s, the median of each
# round's ratio to "next", the median CPU seconds and the median CPU ratio.
#
#   bench/tick_refine_real.sh [BIN] [ROUNDS] [WORKERS]
set -euo pipefail
bin=${1:-build/tessera}
rounds=${2:-9}
workers=${3:-4}
[ -x "$bin" ] || { echo "tick_refine_real.sh: $bin: no such executable" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "tick_refine_real.sh: ROUNDS must be a positive integer" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

configs=(
    "jacobi-sched-d1|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 1"
    "jacobi-sched-d4|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 4"
    "jacobi-sched-d8|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 8"
    "jacobi1600-d4|jacobi --rows 1600 --cols 1600 --ticks 150 --alg sched --depth 4"
    "jacobi-comb|jacobi --rows 800 --cols 800 --ticks 300 --alg combined --depth 2 --period 2 --layers 3"
    "fish-sched-d4|fish --fish 8000 --informed 0.1 --ticks 150 --alg sched --depth 4"
    "fish-combined|fish --fish 8000 --informed 0.1 --ticks 150 --alg combined --depth 2 --period 2 --layers 3"
)
modes=(next every)

run_one() { # mode config-args seed -> "ticks/s cpu-s"
    local line tps cpu
    # shellcheck disable=SC2086
    line=$(TESS_TICK_REFINE=$1 /usr/bin/env time -f "cpu %U %S" \
        "$bin" run $2 --workers "$workers" --jitter cloud --seed "$3" 2>&1 |
        grep -E "ticks of|^cpu " | tr '\n' ' ')
    tps=$(sed -n 's/.*: \([0-9.]*\) ticks\/s (.*/\1/p' <<<"$line")
    cpu=$(sed -n 's/.*cpu \([0-9.]*\) \([0-9.]*\).*/\1 \2/p' <<<"$line" | awk '{print $1+$2}')
    if [ -z "$tps" ] || [ -z "$cpu" ]; then
        echo "tick_refine_real.sh: run failed: $2" >&2
        exit 1
    fi
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
d = {}
for r, name, mode, tps, cpu in (l.split() for l in open(sys.argv[1])):
    d.setdefault(name, {}).setdefault(mode, {})[int(r)] = (float(tps), float(cpu))
print(f"# REAL compute, {sys.argv[2]} workers, cloud jitter, {sys.argv[3]} alternating rounds (seed = round)")
print(f"{'config':16} {'mode':6} {'ticks/s':>8} {'/next':>7} {'cpu s':>6} {'cpu/next':>8}  per-round ticks/s ratios")
for name, m in d.items():
    base = m["next"]
    for mode in ("next", "every"):
        rs = [r for r in m[mode] if r in base]
        ratios = [m[mode][r][0] / base[r][0] for r in rs]
        print(f"{name:16} {mode:6} {st.median(v[0] for v in m[mode].values()):8.1f} {st.median(ratios):7.3f} "
              f"{st.median(v[1] for v in m[mode].values()):6.2f} "
              f"{st.median(m[mode][r][1] / base[r][1] for r in rs):8.3f}  " + " ".join(f"{x:.2f}" for x in ratios))
PY
