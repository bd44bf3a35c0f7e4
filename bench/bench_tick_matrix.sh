#!/bin/bash
# bench_tick_matrix.sh — many tick configurations on the VIRTUAL clock at the
# paper's scale (49 processes; fish 800 per process, Jacobi 100x100 per
# process; 1 ms modelled step), several runs at once, for the comparisons of
# docs/benchmarks.md ("Issue 40"): Algorithm 2's refinement variants
# (TESS_TICK_REFINE), depths, periods and layers.  Virtual-clock figures are
# what the models predict, not measurements of a cluster.
#
#   bench/bench_tick_matrix.sh TESSERA JOBS_FILE OUT_DIR [PARALLEL] [CORES_PER_RUN]
#
# JOBS_FILE: one run a line, `LABEL|ENV|APP|ARGS` (ENV: VAR=VALUE or -; APP:
# fish or jacobi, or fish:W / jacobi:W for W processes instead of 49, W a
# square for jacobi, at the same size per process; ARGS: --alg ... --jitter
# ... --seed ...).  TICKS=N in the environment runs N ticks (default 100).
# Each finished run leaves OUT_DIR/ID.job (its line and exit status),
# ID.json (its --metrics) and ID.err.
#
#   bench/bench_tick_matrix.sh --summary OUT_DIR
#
# prints one line per label (the seed cut off): ticks/s of every seed, their
# median, and the tuples stepped per tick.
set -u
if [ "${1:-}" = --summary ]; then
    python3 - "$2" <<'PY'
import glob, json, re, statistics, sys
rows = {}
for job in sorted(glob.glob(sys.argv[1] + "/*.job")):
    line = open(job).read().split("\n")[0]
    base, seed = re.match(r"(.*) s(\d+)$", line.split("|")[0]).groups()
    try:
        m = json.load(open(job[:-4] + ".json"))
        rows.setdefault(base, []).append((int(seed), m["ticks_per_second"], m["tuple_ticks"] / m["ticks"]))
    except (OSError, ValueError, KeyError):
        rows.setdefault(base, []).append((int(seed), None, None))
for base in sorted(rows):
    r = sorted(rows[base])
    ok = [x for x in r if x[1] is not None]
    seeds = " ".join("s%d=%s" % (x[0], "FAILED" if x[1] is None else "%.1f" % x[1]) for x in r)
    med = statistics.median(x[1] for x in ok) if ok else float("nan")
    tup = statistics.median(x[2] for x in ok) if ok else float("nan")
    print("%-36s median %7.1f ticks/s %8.0f tuples/tick  %s" % (base, med, tup, seeds))
PY
    exit 0
fi
exe=$1 jobs=$2 out=$3 par=${4:-1} per=${5:-2}
export exe out per
run_one() {
    IFS="|" read -r _ envs app args <<<"$1"
    local slot=${SLOT:-0} tmp
    tmp=$(mktemp)
    local lo=$((slot * per)) hi=$((slot * per + per - 1))
    local size w=49
    case $app in *:*) w=${app#*:} app=${app%%:*} ;; esac
    if [ "$app" = fish ]; then
        size="--fish $((800 * w)) --informed 0.1 --repart-every 60"
    else
        local side
        side=$(awk -v w="$w" 'BEGIN { printf "%d", sqrt(w) * 100 + 0.5 }')
        size="--rows $side --cols $side"
    fi
    [ "$envs" = - ] && envs=X_UNUSED=1
    # shellcheck disable=SC2086
    env $envs taskset -c "$lo-$hi" "$exe" run "$app" $size --ticks "${TICKS:-100}" --workers "$w" \
        --step-cost 1000 --clock virtual --quiet --metrics "$tmp" $args >/dev/null 2>"$tmp.err"
    local rc=$? id
    id=$(printf '%s' "$1" | md5sum | cut -c1-12)
    mkdir -p "$out"
    printf '%s\n%s\n' "$1" "$rc" >"$out/$id.job"
    cp "$tmp" "$out/$id.json" 2>/dev/null
    tail -3 "$tmp.err" >"$out/$id.err"
    rm -f "$tmp" "$tmp.err"
}
export -f run_one
grep -v '^#' "$jobs" | grep -v '^$' | tr '\n' '\0' |
    xargs -0 -P "$par" --process-slot-var=SLOT -I{} bash -c 'run_one "$@"' _ {}
