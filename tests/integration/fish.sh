#!/bin/bash
# fish.sh (fast tier) — `tessera run fish` (docs/fish.md):
#   1. against the independent O(N^2) reference fish_ref over a few ticks,
#      within 1e-9 (rounding differs and the model is chaotic, but a 1%
#      change of any parameter moves some fish by more than 1e-4 in 10
#      ticks), for the default model, other parameter sets, and at tick 0;
#   2. bitwise equality of the dumps (cmp) with the sequential baseline
#      (bsp, 1 worker) over a pairwise cover of algorithm (bsp, local, sched
#      d = 1, 2, 10, repl (k, m) = (1,2) (2,3) (3,5) (5,9), combined),
#      workers 1/2/4, jitter (none, cloud with two seeds) and
#      --repart-every; with --step-cost; under `mpirun -np 2` with MPI;
#   3. the --metrics JSON and --help;
#   4. bad options: exit 2, one line "tessera fish: ... --NAME ...", and no
#      output file left behind.
# FISH_TIER=long (fish_long.sh) replaces the pairwise cover by the full cross
# product (and adds workers 3, the `modern` profile, more MPI layouts and
# longer reference runs).
#
# Environment: TESSERA (the CLI), TESS_SRC, TESS_BUILD, TESS_HAVE_MPI=0|1.
# Exits 77 (skipped) without TESSERA or fish_ref, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"
TIER=${FISH_TIER:-fast}
REFBIN="${TESS_BUILD:-$(dirname "$TESSERA")}/tests/integration/fish_ref"
if [ ! -x "$REFBIN" ]; then
    echo "SKIP: $REFBIN not built" >&2
    exit 77
fi
TOL=1e-9
BASE_MODEL="--fish 400 --informed 0.1 --ticks 30"
ALGS=("--alg bsp" "--alg local" "--alg sched --depth 1" "--alg sched --depth 2"
      "--alg sched --depth 10" "--alg repl --period 1 --layers 2"
      "--alg repl --period 2 --layers 3" "--alg repl --period 3 --layers 5"
      "--alg repl --period 5 --layers 9" "--alg combined --depth 2 --period 2 --layers 3"
      "--alg combined --depth 10 --period 3 --layers 5" "--alg repl --period 2 --layers 7"
      "--alg combined --depth 3 --period 2 --layers 6" "--alg auto")
# The last, fixed:3000, makes every message later than many ticks of
# compute, so replication runs ahead of it (the lazy path of Algorithm 3);
# the fast tier runs it once per algorithm.
JITTERS=("" "--jitter cloud --seed 1" "--jitter cloud --seed 2" "--jitter fixed:3000")
WORKERS=(1 2 4)
if [ "$TIER" = long ]; then
    JITTERS+=("--jitter modern --seed 3")
    WORKERS=(1 2 3 4)
fi

# fish_run LABEL OUTDIR [PREFIX... --] ARGS... — run fish writing
# OUTDIR/fish.bin and OUTDIR/metrics.json (lib.sh's run_into).
fish_run() { run_into "$1" "$2" fish --dump fish.bin "${@:3}"; }

# ref_check LABEL "MODEL OPTIONS" RUN OPTIONS... — the app's dump within TOL
# of fish_ref with the same model options.
ref_check() {
    local label=$1 model=$2
    shift 2
    fish_run "ref_$label" "$tmp/ref_$label" $model "$@"
    local msg
    msg=$("$REFBIN" $model --tol "$TOL" --check "$tmp/ref_$label/fish.bin" 2>&1) ||
        die "reference $label: $msg"
    echo "   $label: $msg"
}

# same_as_base LABEL [PREFIX... --] ARGS... — the dump of BASE_MODEL with ARGS
# is bitwise the baseline's.
same_as_base() {
    local label=$1
    shift
    fish_run "$label" "$tmp/$label" "$@" $BASE_MODEL
    cmp -s "$tmp/base/fish.bin" "$tmp/$label/fish.bin" ||
        die "$label ($*): dump differs from the baseline ($BASE_MODEL --alg bsp --workers 1)"
    rm -rf "$tmp/$label"
}

# --repart-every for an algorithm: a multiple of its period, several times per run.
repart_for() {
    local k=1
    [[ $1 =~ --period\ ([0-9]+) ]] && k=${BASH_REMATCH[1]}
    echo $((k * ((6 + k - 1) / k)))
}

# one_run A W J R — algorithm index, worker count, jitter index, repartition 0/1.
one_run() {
    local args=(${ALGS[$1]} --workers "$2" ${JITTERS[$3]})
    [ "$4" = 1 ] && args+=(--repart-every "$(repart_for "${ALGS[$1]}")")
    same_as_base "run_$1_$2_$3_$4" "${args[@]}"
}

# check_metrics FILE TICKS RANKS WORKERS_PER_RANK EMULATED(true|false) FISH
check_metrics() {
    python3 - "$@" <<'PY' || die "metrics $1 (see above)"
import json, sys
path, ticks, ranks, wpr, emulated, fish = sys.argv[1:]
ticks, ranks, wpr, fish = int(ticks), int(ranks), int(wpr), int(fish)
m = json.load(open(path))
want = ["app", "ranks", "workers_per_rank", "workers_total", "wall_seconds", "jitter", "seed",
        "emulated", "ticks", "ticks_per_second", "tuple_ticks_per_second", "step_seconds",
        "wait_seconds", "runtime_seconds", "messages", "bytes", "per_worker", "fish",
        "informed", "alpha", "rho", "speed", "theta", "sigma", "omega", "dt"]
missing = [k for k in want if k not in m]
if missing:
    sys.exit("%s: missing keys %s" % (path, missing))
problems = []
def expect(key, value):
    if m[key] != value:
        problems.append("%s %r, want %r" % (key, m[key], value))
expect("app", "fish"); expect("ranks", ranks); expect("workers_per_rank", wpr)
expect("workers_total", ranks * wpr); expect("ticks", ticks); expect("fish", fish)
expect("emulated", emulated == "true")
if len(m["per_worker"]) != ranks * wpr:
    problems.append("per_worker has %d entries" % len(m["per_worker"]))
for k in ["wall_seconds", "ticks_per_second", "step_seconds", "wait_seconds"]:
    if not isinstance(m[k], (int, float)) or isinstance(m[k], bool) or m[k] < 0:
        problems.append("%s %r" % (k, m[k]))
if problems:
    sys.exit("%s: %s" % (path, "; ".join(problems)))
PY
}

bad_cases=0
# bad_option NAME "ARGS" — exit 2, one line naming --NAME, nothing written.
bad_option() {
    local name=$1 out="$tmp/bad"
    rm -rf "$out" && mkdir -p "$out"
    bad_cases=$((bad_cases + 1))
    "$TESSERA" run fish $2 --dump "$out/fish.bin" --metrics "$out/m.json" \
        >"$tmp/bad.stdout" 2>"$tmp/bad.stderr" </dev/null
    local rc=$? line
    line=$(head -n 1 "$tmp/bad.stderr")
    [ "$rc" = 2 ] || die "'$2': exit $rc, expected 2 ($line)"
    [ "$(wc -l <"$tmp/bad.stderr")" = 1 ] || die "'$2': not one line on stderr: $(cat "$tmp/bad.stderr")"
    [[ $line == "tessera fish: "*"--$name"* ]] || die "'$2': message does not name --$name: $line"
    [ -z "$(ls -A "$out")" ] || die "'$2': left behind: $(ls -A "$out")"
}

# ---------------------------------------------------------------- reference
step "reference (fish_ref, tolerance $TOL)"
ref_check tick0 "--fish 300 --informed 0.2 --ticks 0" --workers 2
ref_check default "--fish 300 --informed 0.2 --ticks 12" --alg bsp --workers 1
ref_check params "--fish 200 --informed 0.5 --ticks 15 --alpha 2 --rho 5 --speed 1.5 \
--theta 1 --sigma 0.1 --omega 1 --dt 0.3" --alg sched --depth 2 --workers 3
ref_check sparse "--fish 60 --informed 0 --ticks 10 --rho 3 --sigma 0.5 --theta 20" --workers 4
if [ "$TIER" = long ]; then
    ref_check long "--fish 800 --informed 0.3 --ticks 25" --alg combined --depth 2 --period 2 \
        --layers 3 --workers 4 --repart-every 4
    ref_check crowded "--fish 400 --informed 1 --ticks 20 --alpha 3 --rho 4 --omega 3" \
        --alg local --workers 2 --jitter cloud --seed 9
fi

# ---------------------------------------------------------------- bitwise
step "bitwise equality with $BASE_MODEL --alg bsp --workers 1"
fish_run base "$tmp/base" $BASE_MODEL --alg bsp --workers 1
runs=0
if [ "$TIER" = long ]; then
    for a in "${!ALGS[@]}"; do
        for w in "${WORKERS[@]}"; do
            for j in "${!JITTERS[@]}"; do
                for r in 0 1; do
                    one_run "$a" "$w" "$j" "$r"
                    runs=$((runs + 1))
                done
            done
        done
    done
else
    # Run (a, w) for every algorithm a and worker count w, with jitter (a+w)
    # mod 3 and repartitioning (a+w) mod 2: every pair of values of any two
    # factors occurs (jitter x repart by the Chinese remainder theorem over
    # the 13 consecutive sums a+w).
    for a in "${!ALGS[@]}"; do
        for wi in "${!WORKERS[@]}"; do
            s=$((a + wi))
            one_run "$a" "${WORKERS[$wi]}" $((s % 3)) $((s % 2))
            runs=$((runs + 1))
        done
        one_run "$a" 4 3 0
        runs=$((runs + 1))
    done
fi
echo "   $runs runs bitwise equal to the baseline"
fish_run step_cost "$tmp/step_cost" $BASE_MODEL --alg local --workers 4 --step-cost 200
cmp -s "$tmp/base/fish.bin" "$tmp/step_cost/fish.bin" || die "--step-cost: dump differs"
echo "   --step-cost 200: bitwise equal"
same_as_base virtual_local --alg local --workers 16 --clock virtual --step-cost 500 --jitter cloud
same_as_base virtual_combined --alg combined --depth 2 --period 2 --layers 3 --workers 9 \
    --clock virtual --step-cost 500 --jitter fixed:3000 --repart-every 6
echo "   --clock virtual (16 and 9 workers): bitwise equal"
# The checking mode (docs/ticks.md) finds nothing wrong and changes nothing.
same_as_base check_mode env TESS_TICK_CHECK=1 -- --alg combined --depth 2 --period 2 \
    --layers 3 --workers 4 --jitter cloud --seed 1 --repart-every 6
echo "   TESS_TICK_CHECK=1 (combined, cloud, re-partitioning): bitwise equal"
same_as_base inner env TESS_TICK_SIDES=off TESS_TICK_CHECK=1 -- --alg combined --depth 2 \
    --period 2 --layers 3 --workers 4 --jitter cloud --seed 3 --repart-every 6
echo "   TESS_TICK_SIDES=off (computing ahead the inner region alone, checked): bitwise equal"
# TESS_TICK_REFINE=next refines a version computed ahead only once it is
# the oldest open tick (the default refines on every arrival, Algorithm 2).
same_as_base next_sched env TESS_TICK_REFINE=next TESS_TICK_CHECK=1 -- --alg sched --depth 3 \
    --workers 4 --jitter cloud --seed 2 --repart-every 6
same_as_base next_combined env TESS_TICK_REFINE=next TESS_TICK_CHECK=1 -- --alg combined \
    --depth 2 --period 2 --layers 3 --workers 9 --clock virtual --step-cost 500 --jitter cloud \
    --seed 4 --repart-every 6
echo "   TESS_TICK_REFINE=next (sched d=3, combined; checked): bitwise equal"
# variant_tps LABEL VAR=VALUE DEPTH [WORKERS]: sched on the virtual clock
# (deterministic) under cloud, 400 fish per process, with one variant of
# docs/ticks.md's "Variants"; prints the simulated ticks/s, the state in
# $tmp/LABEL.
variant_tps() {
    local w=${4:-9}
    fish_run "$1" "$tmp/$1" env "$2" -- --fish $((400 * w)) --informed 0.1 --ticks 40 \
        --alg sched --depth "$3" --workers "$w" --clock virtual --step-cost 1000 --jitter cloud \
        --seed 1
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ticks_per_second"])' \
        "$tmp/$1/metrics.json"
}
# faster WHAT SLOW_LABEL SLOW_TPS FAST_LABEL FAST_TPS: the same state, more ticks/s.
faster() {
    cmp -s "$tmp/$2/fish.bin" "$tmp/$4/fish.bin" || die "$1: the state differs"
    python3 -c 'import sys; sys.exit(not float(sys.argv[2]) > float(sys.argv[1]))' "$3" "$5" ||
        die "$1: $5 ticks/s, not above $3 (virtual clock)"
}
# Refining on every arrival (the default) lets a version computed ahead
# follow the rounds that come while it waits: sched d=2 reaches the same
# state in fewer simulated seconds than refining only the next tick.
tps_next=$(variant_tps refine_next TESS_TICK_REFINE=next 2)
tps_every=$(variant_tps refine_every TESS_TICK_REFINE=every 2)
faster "refining on every arrival" refine_next "$tps_next" refine_every "$tps_every"
echo "   every arrival: $tps_every simulated ticks/s against $tps_next refining the next tick, same state"
# Lazy replication costs nothing while messages are on time: without latency
# on the virtual clock (deterministic), spare replica layers (k=2, m=3) step
# exactly the tuples of none (m=1).  A grace wait ended by another
# neighbour's message once widened layers anyway (+63% tuples here).
lazy_tuples() {
    fish_run "lazy_m$1" "$tmp/lazy_m$1" --fish 3600 --informed 0.1 --ticks 20 --alg repl \
        --period 2 --layers "$1" --workers 9 --clock virtual --step-cost 500
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tuple_ticks"])' \
        "$tmp/lazy_m$1/metrics.json"
}
lazy1=$(lazy_tuples 1) lazy3=$(lazy_tuples 3)
[ "$lazy1" = "$lazy3" ] ||
    die "virtual clock, no latency: k=2 m=3 stepped $lazy3 tuples, m=1 $lazy1 (want equal)"
echo "   no latency: spare replica layers step no extra tuples ($lazy3)"
# Computing ahead per side (the default, fish gives IX; TESS_TICK_SIDES=off
# turns it off; docs/ticks.md, "Algorithms"): under cloud, sched d=1 steps
# the sides whose messages came while another is late, so it reaches the
# same state in fewer simulated seconds than with the process's own inner
# region alone.
tps_off=$(variant_tps sides_off TESS_TICK_SIDES=off 1)
tps_on=$(variant_tps sides_on TESS_TICK_SIDES=on 1)
faster "per side" sides_off "$tps_off" sides_on "$tps_on"
echo "   per side: $tps_on simulated ticks/s against $tps_off with the inner region alone, same state"
# Per side, a round's parts that no late neighbour reaches leave at once
# (the default; TESS_TICK_SEND=full sends a round only once the version is
# full): a late message no longer holds up every neighbour of the process
# it delays.  Checked in the checking mode, and faster on the virtual clock
# (4 x 4 processes: on 3 x 3 only the middle one has a far side).
same_as_base send_full env TESS_TICK_SEND=full TESS_TICK_CHECK=1 -- --alg combined --depth 2 \
    --period 2 --layers 3 --workers 9 --jitter cloud --seed 6 --repart-every 6
same_as_base send_early_checked env TESS_TICK_CHECK=1 -- --alg sched --depth 3 --workers 9 \
    --clock virtual --step-cost 500 --jitter cloud --seed 7 --repart-every 6
tps_full=$(variant_tps send_full_vc TESS_TICK_SEND=full 1 16)
tps_early=$(variant_tps send_early_vc TESS_TICK_SEND=early 1 16)
faster "early sends" send_full_vc "$tps_full" send_early_vc "$tps_early"
echo "   early sends: $tps_early simulated ticks/s against $tps_full sending full rounds, same state"
# Per side, combined widens its lazy replica layers only toward the
# neighbours whose round is late: the same state from fewer tuples stepped.
side_tuples() {
    fish_run "side_repl_$1" "$tmp/side_repl_$1" env TESS_TICK_SIDES="$1" -- --fish 3600 \
        --informed 0.1 --ticks 40 --alg combined --depth 2 --period 2 --layers 3 --workers 9 \
        --clock virtual --step-cost 1000 --jitter cloud --seed 1
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tuple_ticks"])' \
        "$tmp/side_repl_$1/metrics.json"
}
tt_off=$(side_tuples off) tt_on=$(side_tuples on)
cmp -s "$tmp/side_repl_off/fish.bin" "$tmp/side_repl_on/fish.bin" ||
    die "per side, combined: the state differs"
[ "$tt_on" -lt "$tt_off" ] || die "per side, combined: $tt_on tuples stepped, not below $tt_off"
echo "   per side, combined: $tt_on tuples stepped against $tt_off widening every side, same state"

if [ $MPI = 1 ]; then
    step "mpirun"
    same_as_base np2_local mpi 2 -- --alg local --workers 1
    same_as_base np2_combined mpi 2 -- --alg combined --depth 2 --period 2 --layers 3 \
        --workers 2 --jitter cloud --seed 5 --repart-every 6
    if [ "$TIER" = long ]; then
        same_as_base np3_sched mpi 3 -- --alg sched --depth 10 --workers 1 --repart-every 6
        same_as_base np2_repl mpi 2 -- --alg repl --period 5 --layers 9 --workers 2 \
            --jitter cloud --seed 2
        same_as_base np4_bsp mpi 4 -- --alg bsp --workers 1 --repart-every 5
    fi
    echo "   bitwise equal to the baseline"
else
    step "MPI runs skipped (TESS_HAVE_MPI=${TESS_HAVE_MPI:-unset} or no mpirun)"
fi

# ---------------------------------------------------------------- metrics, help
step "metrics and help"
check_metrics "$tmp/base/metrics.json" 30 1 1 false 400
check_metrics "$tmp/step_cost/metrics.json" 30 1 4 true 400
"$TESSERA" run fish --help >"$tmp/help.txt" 2>&1 || die "--help failed"
grep -q -- "--informed" "$tmp/help.txt" || die "--help does not mention --informed"
grep -q -- "--alg" "$tmp/help.txt" || die "--help does not list the shared tick options"
echo "   ok"

# ---------------------------------------------------------------- bad options
step "bad options"
M="--informed 0.1 --ticks 3"
bad_option fish "--fish 0 $M"
bad_option fish "--fish abc $M"
bad_option fish "$M"
bad_option fish "--fish 10 --fish 20 $M"
bad_option informed "--fish 10 --informed 1.5 --ticks 3"
bad_option informed "--fish 10 --informed -0.1 --ticks 3"
bad_option informed "--fish 10 --informed x --ticks 3"
bad_option informed "--fish 10 --ticks 3"
bad_option ticks "--fish 10 --informed 0.1"
bad_option period "--fish 10 $M --alg repl --period 3 --layers 1"
bad_option depth "--fish 10 $M --alg sched --depth -1"
bad_option depth "--fish 10 $M --alg local --depth 2"
bad_option jitter "--fish 10 $M --jitter lognormal:median=abc"
bad_option jitter "--fish 10 $M --jitter bogus"
bad_option repart-every "--fish 10 $M --alg repl --period 2 --layers 1 --repart-every 3"
bad_option alpha "--fish 10 $M --alpha 7"
bad_option speed "--fish 10 $M --speed 0"
bad_option sigma "--fish 10 $M --sigma -1"
bad_option dt "--fish 10 $M --dt nan"
bad_option bogus "--fish 10 $M --bogus 1"
echo "   $bad_cases cases: exit 2, one line, nothing left behind"

echo "PASS: fish ($TIER)"
