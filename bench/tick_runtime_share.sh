#!/bin/bash
# tick_runtime_share.sh OLD NEW [ROUNDS] — the runtime's own CPU at the
# paper's settings (issue 40's third goal), two builds of tessera compared.
#
# VIRTUAL clock (simulated time, 1 ms EMULATED step, `cloud`): 49
# processes, Jacobi 100x100 cells and fish 800 each, 100 ticks, seed 1.
# The simulated figures depend only on the models and the seed; the CPU is
# this machine's real CPU, which is noisy (shared, 2 cores), so the modes
# of a round run one after another with their order rotated, ROUNDS times
# (default 5), and the medians are reported.  Modes: old (OLD), new-exact
# (NEW with TESS_TICK_METER=exact: the thread CPU clock read at every change
# of state, as OLD reads it), new (NEW as it runs).
#
# Prints, per configuration and mode: the median runtime CPU per
# process-tick (µs), the median runtime_cpu_fraction (%), the median
# ticks/s (simulated), and the median over rounds of the runtime CPU's
# ratio to old's.  Rows (round config mode us fraction% ticks/s) go to
# stderr.
set -eu
me=${0##*/}
old=${1:-} new=${2:-} rounds=${3:-5}
if [ -z "$old" ] || [ -z "$new" ]; then
    echo "usage: $me OLD_TESSERA NEW_TESSERA [ROUNDS]" >&2
    exit 2
fi
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "$me: $b: no such executable" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$me: ROUNDS must be a positive integer" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fish="fish --fish 39200 --informed 0.1 --repart-every 60"
configs=(
    "jacobi-local|jacobi --rows 700 --cols 700 --alg local"
    "jacobi-combined-d8k8m14|jacobi --rows 700 --cols 700 --alg combined --depth 8 --period 8 --layers 14"
    "fish-local|$fish --alg local"
    "fish-sched-d1|$fish --alg sched --depth 1"
    "fish-combined-d4k2m3|$fish --alg combined --depth 4 --period 2 --layers 3"
)
modes=(old new-exact new)

# one MODE ARGS -> "us fraction% ticks/s"
one() {
    local bin=$new envw=X_UNUSED=1
    [ "$1" = old ] && bin=$old
    [ "$1" = new-exact ] && envw=TESS_TICK_METER=exact
    # shellcheck disable=SC2086 # ARGS are words
    env "$envw" "$bin" run $2 --ticks 100 --workers 49 --step-cost 1000 --clock virtual \
        --jitter cloud --seed 1 --quiet --metrics "$tmp/m.json" >/dev/null ||
        { echo "$me: run failed: $2 ($1)" >&2; exit 1; }
    python3 - "$tmp/m.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
pt = m["ticks"] * m["workers_total"]
print("%.2f %.4f %.2f" % (m["runtime_cpu_seconds"] / pt * 1e6,
                          100 * m["runtime_cpu_fraction"], m["ticks_per_second"]))
EOF
}

for ((r = 1; r <= rounds; r++)); do
    for c in "${configs[@]}"; do
        name=${c%%|*} args=${c#*|}
        for ((k = 0; k < ${#modes[@]}; k++)); do
            mode=${modes[$(((k + r) % ${#modes[@]}))]}
            echo "$r $name $mode $(one "$mode" "$args")" | tee -a "$tmp/rows" >&2
        done
    done
done

python3 - "$tmp/rows" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for r, name, mode, us, frac, tps in rows:
    by.setdefault(name, {}).setdefault(mode, {})[int(r)] = (float(us), float(frac), float(tps))
print("# config mode | runtime us/process-tick (median) | runtime_cpu_fraction % (median)"
      " | ticks/s (median, simulated) | runtime CPU / old's (median over rounds)")
for name, modes in by.items():
    old = modes.get("old", {})
    for mode in ("old", "new-exact", "new"):
        got = modes.get(mode)
        if not got:
            continue
        med = lambda i: statistics.median(v[i] for v in got.values())
        ratio = [got[r][0] / old[r][0] for r in got if r in old and old[r][0] > 0]
        print("%-26s %-9s | %7.2f | %7.4f | %7.2f | %s" % (
            name, mode, med(0), med(1), med(2),
            "%.3f" % statistics.median(ratio) if ratio else "-"))
EOF
