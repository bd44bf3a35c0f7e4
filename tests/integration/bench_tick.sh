#!/bin/bash
# bench_tick.sh (fast tier) — a smoke test of the `tessera bench tick` driver,
# not a benchmark: with a fake child (TESS_BENCH_TICK_CHILD, a script that
# writes a metrics file) it checks the command lines, the report and goal
# lines, that every measurement lands in the JSON Lines file with its
# parameters and figures, that a second run resumes (takes only what is
# missing, survives a line cut short), that --fresh starts over, that a
# failing technique is reported and makes the command fail without stopping
# the others, that bad options are rejected, and that plot_tick.py draws the
# figures when matplotlib is there.  Then, when `tessera run jacobi` exists,
# one tiny real measurement.  Takes a few seconds.
#
# Environment: TESSERA (the CLI), TESS_SRC, TESS_HAVE_MPI=0|1.  Exits 77
# (skipped) without TESSERA, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"

# run LABEL COMMAND... — must succeed; stdout in $tmp/LABEL.out.
run() {
    local label=$1
    shift
    "$@" >"$tmp/$label.out" 2>"$tmp/$label.err" ||
        die "$label: exit $? from: $* -- stderr: $(head -c 600 "$tmp/$label.err")"
}

# The fake child: logs its arguments, fails for FAKE_FAIL=ALG, and reports
# ticks/s that depend on the technique, the jitter and the seed.
fake=$tmp/fake-tessera
cat >"$fake" <<'EOF'
#!/bin/bash
echo "$*" >>"$FAKE_LOG"
app=$2 alg= jit= seed=0 metrics= workers=1
while [ $# -gt 0 ]; do
    case $1 in
        --alg) alg=$2; shift ;;
        --jitter) jit=$2; shift ;;
        --seed) seed=$2; shift ;;
        --metrics) metrics=$2; shift ;;
        --workers) workers=$2; shift ;;
    esac
    shift
done
if [ "${FAKE_FAIL:-}" = "$alg" ]; then echo "fake: $alg refused" >&2; exit 3; fi
case $alg in local) f=20 ;; sched) f=45 ;; repl) f=55 ;; combined) f=80 ;; *) f=15 ;; esac
[ "$jit" = none ] && f=100
cat >"$metrics" <<JSON
{"app": "$app", "ranks": 1, "workers_per_rank": $workers, "workers_total": $workers,
 "wall_seconds": 2.0, "jitter": "$jit", "seed": $seed, "emulated": true, "ticks": 10,
 "ticks_per_second": $(( (1000 + seed * 10) * f / 100 )), "tuple_ticks_per_second": 1e6,
 "step_seconds": 1.5, "wait_seconds": 0.4, "runtime_seconds": 0.004, "messages": 10,
 "bytes": 1000, "per_worker": [{"ticks_per_second": 1, "runtime_seconds": 9}], "alg": "$alg"}
JSON
EOF
chmod +x "$fake"
export FAKE_LOG=$tmp/fake.log
: >"$FAKE_LOG"
J=$tmp/results.jsonl
# 2 apps x 2 worker counts x 5 techniques x 2 (jitter, none) per round
common=(bench tick --regime paper --workers 4,9 --ticks 10 --json "$J" --no-plots)
calls() { wc -l <"$FAKE_LOG" | tr -d ' '; }
lines() { wc -l <"$J" | tr -d ' '; }

step "options"
run help "$TESSERA" bench tick --help
grep -q -- '--regime' "$tmp/help.out" || die "--help does not describe --regime"
bad() {
    local want=$1
    shift
    "$TESSERA" bench tick "$@" --dry-run >"$tmp/bad.out" 2>"$tmp/bad.err"
    local rc=$?
    [ $rc = 2 ] || die "bench tick $* exited $rc, expected 2"
    grep -q "^tessera bench tick: .*$want" "$tmp/bad.err" ||
        die "bench tick $*: message '$(head -c 300 "$tmp/bad.err")' does not mention '$want'"
}
bad rounds --rounds 0
bad regime --regime cloudy
bad techniques --techniques local,fast
bad "layers >= 4" --period 5 --layers 2
bad "unknown option" --frobnicate
bad workers --workers 4,x
bad jitter --jitter none
bad "nothing to measure" --regime scaleup --apps fish
"$TESSERA" bench tick --json "$tmp/no/such/dir.jsonl" >"$tmp/nodir.out" 2>"$tmp/nodir.err" &&
    die "an unwritable --json file was accepted"
grep -q "option --json: cannot write $tmp/no/such/dir.jsonl" "$tmp/nodir.err" ||
    die "unwritable --json: $(head -c 300 "$tmp/nodir.err")"

step "dry run prints the commands and takes nothing"
run dry env TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" "${common[@]}" --rounds 2 --dry-run
[ "$(grep -c -- ' run jacobi ' "$tmp/dry.out")" = 40 ] || die "dry run: expected 40 jacobi commands"
[ "$(grep -c -- ' run fish ' "$tmp/dry.out")" = 40 ] || die "dry run: expected 40 fish commands"
grep -q -- "run jacobi --rows 300 --cols 300 --ticks 10 --alg combined --depth 8 --period 8 --layers 14 --workers 9 --jitter cloud --seed 2 --step-cost 1000 --quiet --metrics" "$tmp/dry.out" ||
    die "dry run: no combined jacobi command for 9 workers, round 2"
grep -q -- "run fish --fish 200 --informed 0.1 --repart-every 60 --ticks 10 --alg repl --period 2 --layers 3 --workers 4 --jitter none --seed 1" "$tmp/dry.out" ||
    die "dry run: no repl fish command without jitter"
[ "$(calls)" = 0 ] && [ ! -e "$J" ] || die "dry run ran something or wrote $J"

step "dry run: the virtual clock and pagerank-tick in the depth sweep"
run dryv "$TESSERA" bench tick --regime paper,scaleup,depth --clock virtual --rounds 1 --ticks 10 \
    --json "$J" --dry-run
grep -q -- "run fish --fish 39200 --informed 0.1 --repart-every 60 --ticks 10 --alg local --workers 49 --jitter cloud --seed 1 --step-cost 1000 --clock virtual" "$tmp/dryv.out" ||
    die "dry run: no paper-scale fish on the virtual clock"
grep -q -- "run fish --fish 80000 .* --workers 100 .* --clock virtual" "$tmp/dryv.out" ||
    die "dry run: no 100-worker fish scale-up on the virtual clock"
grep -q -- "run pagerank-tick --gen web:200000 --ticks 10 --alg sched --depth 16 --workers 4" "$tmp/dryv.out" ||
    die "dry run: no pagerank-tick in the depth sweep"
if grep -- "--depth" "$tmp/dryv.out" | grep -q -- "--clock virtual.*sched\|pagerank-tick.*--clock"; then
    die "dry run: the depth regime (real compute) got --clock virtual"
fi
"$TESSERA" bench tick --clock virtual --mpirun 2 --dry-run > /dev/null 2> "$tmp/vm.err" &&
    die "--clock virtual with --mpirun was accepted"
grep -q "virtual runs in one process" "$tmp/vm.err" || die "--clock virtual --mpirun: $(cat "$tmp/vm.err")"
[ ! -e "$J" ] || die "dry run wrote $J"

step "two rounds with the fake child"
run r2 env TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" "${common[@]}" --rounds 2
[ "$(calls)" = 80 ] || die "expected 80 runs, got $(calls)"
[ "$(lines)" = 80 ] || die "expected 80 lines in $J, got $(lines)"
grep -q 'paper jacobi w9: combined >= 3.0x local under cloud *4.00x  met' "$tmp/r2.out" ||
    die "no met goal line for jacobi: $(grep goal -A3 "$tmp/r2.out")"
grep -q 'paper fish w4: combined keeps >= 70% without jitter *80.0%  met' "$tmp/r2.out" ||
    die "no efficiency goal line for fish"
grep -q 'real: .*not measured' "$tmp/r2.out" || die "the real-regime goals are not said to be unmeasured"
grep -Eq '^  local +203.0 ± 1.4 +203.0  1.00x  1015.0 ± 7.1 +1015.0  1.00x +0.200' "$tmp/r2.out" ||
    die "report line for local: $(grep '^  local' "$tmp/r2.out" | head -1)"
python3 - "$J" <<'PY' || die "JSON lines (see above)"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
need = {"bench", "config", "regime", "app", "technique", "round", "seed", "with_jitter", "jitter",
        "workers", "ticks", "step_cost_us", "emulated", "depth", "period", "layers",
        "ticks_per_second", "wall_seconds", "step_seconds", "wait_seconds", "runtime_seconds",
        "messages", "bytes"}
for r in recs:
    missing = need - r.keys()
    assert not missing, f"missing keys {missing} in {r}"
    assert r["seed"] == 1 + r["round"], r
    assert r["jitter"] == ("cloud" if r["with_jitter"] else "none"), r
    assert r["ticks_per_second"] != 1, "per_worker's figure taken for the top-level one"
c = [r for r in recs if r["technique"] == "combined"][0]
assert (c["depth"], c["period"], c["layers"]) == (8, 8, 14), c
assert len({(r["config"], r["technique"], r["round"], r["with_jitter"]) for r in recs}) == 80
PY

step "resume: a third round takes only what is missing"
echo '{"bench":"tick","config":"jacobi/w4' >>"$J" # a line cut short by a crash
run r3 env TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" "${common[@]}" --rounds 3
[ "$(calls)" = 120 ] || die "resume: expected 40 more runs, got $(( $(calls) - 80 ))"
grep -q '40 measurements to take, 80 already in' "$tmp/r3.out" || die "resume: no resume note"
grep -q 'malformed line' "$tmp/r3.err" || die "resume: the cut line went unnoticed"
grep -q '(3+3 runs)' "$tmp/r3.out" || die "resume: report is not over 3 rounds"
run r3again env TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" "${common[@]}" --rounds 3
[ "$(calls)" = 120 ] || die "resume: a complete series ran again"

step "--fresh starts over"
run fresh env TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" "${common[@]}" --rounds 1 --apps jacobi --fresh
[ "$(calls)" = 140 ] || die "--fresh: expected 20 more runs, got $(( $(calls) - 120 ))"
[ "$(grep -c '"reset":true' "$J")" = 2 ] || die "--fresh: expected two reset lines"
run after_fresh env TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" "${common[@]}" --rounds 2 --apps jacobi
[ "$(calls)" = 160 ] || die "after --fresh: round 2 should be taken again"

step "a failing technique"
: >"$FAKE_LOG"
env FAKE_FAIL=repl TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" "${common[@]}" --rounds 2 \
    --json "$tmp/fail.jsonl" --apps jacobi >"$tmp/fail.out" 2>"$tmp/fail.err"
rc=$?
[ $rc = 1 ] || die "a failing technique: exit $rc, expected 1"
grep -q 'repl.*run failed (exit 3): fake: repl refused' "$tmp/fail.err" ||
    die "failure message: $(head -c 400 "$tmp/fail.err")"
grep -q 'command: .* run jacobi .* --alg repl' "$tmp/fail.err" || die "the failed command is not shown"
# repl fails once per configuration and is not retried; the others all run
[ "$(calls)" = 34 ] || die "a failing technique: expected 34 runs, got $(calls)"
[ "$(wc -l <"$tmp/fail.jsonl")" = 32 ] || die "a failing technique: expected 32 records"

step "--mpirun in the command lines"
if [ "$MPI" = 1 ]; then
    run mpi env TESS_BENCH_TICK_CHILD="$fake" "$TESSERA" bench tick --regime paper --apps jacobi \
        --workers 4,9 --rounds 1 --mpirun 2 --dry-run --json "$tmp/none.jsonl"
    grep -q 'not divisible into 2 ranks' "$tmp/mpi.out" || die "--mpirun 2: 9 workers not skipped"
    grep -q "mpirun -np 2 --oversubscribe --bind-to none $fake run jacobi .* --workers 2 " \
        "$tmp/mpi.out" || die "--mpirun 2: $(grep run "$tmp/mpi.out" | head -1)"
else
    echo "   (no MPI: skipped)"
fi

step "figures"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if "$py" -c 'import matplotlib' 2>/dev/null; then
    run plot "$py" "$TESS_SRC/scripts/plot_tick.py" --json "$J" --out "$tmp/fig"
    for f in tick-jacobi-w4-emulated tick-jacobi-w9-emulated tick-fish-w9-emulated; do
        [ -s "$tmp/fig/$f.png" ] || die "plot_tick.py did not write $f.png"
    done
else
    echo "   (matplotlib missing: skipped)"
fi

step "a tiny real measurement"
if "$TESSERA" run jacobi --help >/dev/null 2>&1; then
    run real "$TESSERA" bench tick --regime paper --apps jacobi --workers 4 --techniques \
        local,combined --rounds 1 --ticks 12 --step-cost 200 --json "$tmp/real.jsonl" \
        --no-plots --timeout 60
    python3 - "$tmp/real.jsonl" <<'PY' || die "real run: JSON lines (see above)"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 4, len(recs)
for r in recs:
    assert r["ticks_per_second"] > 0 and r["emulated"] is True, r
PY
    grep -q 'paper jacobi w4: combined' "$tmp/real.out" || die "real run: no goal lines"
else
    echo "   (tessera run jacobi not available: skipped)"
fi
echo "PASS bench_tick"
