# shellcheck shell=bash disable=SC2154 # bin, rounds, workers, tmp, configs, modes: the caller's
# tick_real_lib.bash — the alternating-rounds loop of the tick benches with
# REAL compute (tick_sides_real.sh, tick_refine_real.sh), sourced by them.
# The caller calls real_args with its defaults and arguments (bin, rounds,
# workers, tmp), sets the arrays configs ("NAME|tessera run ARGS") and modes,
# and a function mode_env MODE that prints the VAR=VALUE words of that
# mode's environment.  The machine is
# shared and noisy, so every mode of a round runs with the same seed (the
# round) and the order of the modes is rotated every round.

# real_args DEFAULT_ROUNDS DEFAULT_WORKERS [BIN] [ROUNDS] [WORKERS]: the
# caller's arguments into bin, rounds and workers, refused with one line and
# exit 2 when wrong; a temporary directory in tmp, removed at exit.
real_args() {
    local me=${0##*/}
    bin=${3:-build/tessera}
    rounds=${4:-$1}
    workers=${5:-$2}
    [ -x "$bin" ] || { echo "$me: $bin: no such executable" >&2; exit 2; }
    [[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$me: ROUNDS must be a positive integer" >&2; exit 2; }
    [[ $workers =~ ^[1-9][0-9]*$ ]] || { echo "$me: WORKERS must be a positive integer" >&2; exit 2; }
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
}

# real_run MODE ARGS SEED -> "ticks/s cpu-seconds" (exits on a failed run)
real_run() {
    local line tps cpu env_words
    read -ra env_words <<<"$(mode_env "$1")"
    # shellcheck disable=SC2086 # ARGS are words
    line=$(env "${env_words[@]}" /usr/bin/time -f "cpu %U %S" \
        "$bin" run $2 --workers "$workers" --jitter cloud --seed "$3" 2>&1 |
        grep -E "ticks of|^cpu " | tr '\n' ' ')
    tps=$(sed -n 's/.*: \([0-9.]*\) ticks\/s (.*/\1/p' <<<"$line")
    cpu=$(sed -n 's/.*cpu \([0-9.]*\) \([0-9.]*\).*/\1 \2/p' <<<"$line" | awk '{print $1+$2}')
    if [ -z "$tps" ] || [ -z "$cpu" ]; then
        echo "${0##*/}: run failed: $2 ($1)" >&2
        exit 1
    fi
    echo "$tps $cpu"
}

# real_rounds: every config in every mode, ROUNDS times; rows to $tmp/rows
# (round config mode ticks/s cpu) and stderr.
real_rounds() {
    local r c name args k mode tps cpu
    for ((r = 1; r <= rounds; r++)); do
        for c in "${configs[@]}"; do
            name=${c%%|*} args=${c#*|}
            for ((k = 0; k < ${#modes[@]}; k++)); do
                mode=${modes[$(((k + r) % ${#modes[@]}))]}
                read -r tps cpu < <(real_run "$mode" "$args" "$r")
                echo "$r $name $mode $tps $cpu" | tee -a "$tmp/rows" >&2
            done
        done
    done
}

# real_summary BASE_MODE: per config and mode the median ticks/s, the median
# of each round's ratio to BASE_MODE's, the median CPU seconds and CPU ratio,
# and each round's ticks/s ratio.
real_summary() {
    python3 - "$tmp/rows" "$workers" "$rounds" "$1" "${modes[@]}" <<'PY'
import sys, statistics as st
rows, workers, rounds, base, modes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
d = {}
for r, name, mode, tps, cpu in (l.split() for l in open(rows)):
    d.setdefault(name, {}).setdefault(mode, {})[int(r)] = (float(tps), float(cpu))
print(f"# REAL compute, {workers} workers, cloud jitter, {rounds} alternating rounds (seed = round)")
print(f"{'config':16} {'mode':6} {'ticks/s':>8} {'/' + base:>7} {'cpu s':>6} {'cpu/' + base:>9}  per-round ticks/s ratios")
for name, m in d.items():
    b = m[base]
    for mode in modes:
        rs = [r for r in m.get(mode, {}) if r in b]
        if not rs:
            continue
        ratios = [m[mode][r][0] / b[r][0] for r in rs]
        print(f"{name:16} {mode:6} {st.median(v[0] for v in m[mode].values()):8.1f} {st.median(ratios):7.3f} "
              f"{st.median(v[1] for v in m[mode].values()):6.2f} "
              f"{st.median(m[mode][r][1] / b[r][1] for r in rs):9.3f}  " + " ".join(f"{x:.2f}" for x in ratios))
PY
}
