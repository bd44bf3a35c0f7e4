#!/usr/bin/env bash
# jacobi.sh — `tessera run jacobi` against the independent sequential loop
# jacobi_ref.c: the dump must be bitwise identical for every algorithm and
# parameter set, worker count, rank count, latency profile, seed, and with and
# without re-partitioning.  The fast tier covers these spaces pairwise
# (every algorithm setting with every other factor's values); jacobi_long.sh
# runs the full cross-product.  Then bad input: one line, non-zero exit, no
# output file.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tick_lib.bash"
tick_ref jacobi_ref

R=26 C=19 T=24
"$REFBIN" $R $C $T "$tmp/ref.bin" || die "reference failed"
TICK_OUT="$tmp/out.bin" TICK_DIFFERS="state differs from the sequential loop"

# check DESCRIPTION CMD... — CMD writes $tmp/out.bin; compare bitwise.
check() { same_as "$tmp/ref.bin" "$@"; }

jac() { "$TESSERA" run jacobi --rows $R --cols $C --ticks $T --quiet --dump "$tmp/out.bin" "$@"; }

ALGS=(
    "${TICK_ALGS_BASIC[@]}"
    "--alg repl --period 1 --layers 0"
    "${TICK_ALGS_REPL[@]}"
    "--alg combined --depth 2 --period 3 --layers 5"
    "--alg combined --depth 10 --period 5 --layers 9"
    "--alg combined --depth 1 --period 1 --layers 0"
    "--alg repl --period 2 --layers 7"
    "--alg combined --depth 3 --period 2 --layers 6"
    "--alg auto"
)
JITTERS=("none" "cloud --seed 1" "cloud --seed 2" "modern --seed 3"
         "lognormal:median=200,sigma=1.2,stall_rate=50,stall_mean=2000 --seed 4"
         "fixed:3000")

step "every algorithm x workers 1, 2, 4 (no jitter)"
for a in "${ALGS[@]}"; do
    for w in 1 2 4; do check "$a --workers $w" jac $a --workers $w; done
done

step "every algorithm x every latency profile (4 workers, 2 with re-partitioning)"
i=0
for a in "${ALGS[@]}"; do
    for ji in "${!JITTERS[@]}"; do
        j=${JITTERS[$ji]}
        # Sanitized: every algorithm with two profiles, every profile still met.
        if [ $SANITIZED = 1 ] && [ $(((ji + i / ${#JITTERS[@]}) % 3)) != 0 ]; then
            i=$((i + 1))
            continue
        fi
        w=$((i % 2 == 0 ? 4 : 3))
        rp=""
        # --repart-every must be a multiple of the period (12 is for all k here but 5).
        case "$a" in *"--period 5"*) rp="--repart-every 10" ;; *) rp="--repart-every 6" ;; esac
        [ $((i % 3)) = 0 ] || rp=""
        check "$a --jitter $j --workers $w $rp" jac $a --jitter $j --workers $w $rp
        i=$((i + 1))
    done
done

step "refinement only when next (TESS_TICK_REFINE=next), checked, with jitter"
# The variant that refines a version computed ahead only once it is the
# oldest open tick: a version it leaves as it was stops the window, and a
# tuple left out would be read by the next tick (the checking mode) or change
# the state.
for a in "--alg sched --depth 4" "--alg combined --depth 2 --period 2 --layers 3"; do
    for j in "cloud --seed 5" "lognormal:median=200,sigma=1.2,stall_rate=50,stall_mean=2000 --seed 6"; do
        check "TESS_TICK_REFINE=next $a --jitter $j" env TESS_TICK_REFINE=next TESS_TICK_CHECK=1 \
            "$TESSERA" run jacobi --rows $R --cols $C --ticks $T --quiet --dump "$tmp/out.bin" \
            $a --workers 4 --jitter $j --repart-every 6
    done
done

step "rounds sent only when full (TESS_TICK_SEND=full), checked, with jitter"
# The default sends a round's parts that no late neighbour reaches before the
# version is full; the variant waits for the whole version.  Both checked.
for a in "--alg sched --depth 1" "--alg combined --depth 3 --period 2 --layers 3"; do
    for e in full early; do
        check "TESS_TICK_SEND=$e $a --jitter cloud" env TESS_TICK_SEND=$e TESS_TICK_CHECK=1 \
            "$TESSERA" run jacobi --rows $R --cols $C --ticks $T --quiet --dump "$tmp/out.bin" \
            $a --workers 9 --jitter cloud --seed 8 --repart-every 6
    done
done

if [ "$MPI" = 1 ]; then
    step "mpirun -np 2 and -np 4"
    i=0
    for a in "${ALGS[@]}"; do
        [ $SANITIZED = 1 ] && [ $((i % 2)) = 1 ] && { i=$((i + 1)); continue; }
        np=$((i % 2 == 0 ? 2 : 4))
        w=$((i % 3 == 0 ? 2 : 1))
        j="${JITTERS[$((i % ${#JITTERS[@]}))]}"
        check "mpirun -np $np $a --workers $w --jitter $j" mpi $np "$TESSERA" run jacobi \
            --rows $R --cols $C --ticks $T --quiet --dump "$tmp/out.bin" $a --workers $w --jitter $j
        i=$((i + 1))
    done
else
    echo "-- mpirun not available: MPI cases skipped"
fi

step "virtual clock: every algorithm x latency profiles, 16 workers, bitwise"
i=0
for a in "${ALGS[@]}"; do
    j="${JITTERS[$((i % ${#JITTERS[@]}))]}"
    w=$((i % 2 == 0 ? 16 : 3))
    check "--clock virtual $a --jitter $j --workers $w" jac $a --jitter $j --workers $w \
        --clock virtual --step-cost 500
    i=$((i + 1))
done

step "virtual clock: the same figures twice, and the real clock's where both fit"
# Simulated time depends only on the step-cost and latency models, never on
# this machine's speed: two runs report the same times to the bit.  With
# fewer processes than cores, a sleep-emulated run measures nearly what the
# simulation computes (real overheads only lower it).
vrun() { jac --workers 2 --step-cost 2000 --jitter fixed:3000 --seed 5 "$@"; }
for a in "--alg local" "--alg repl --period 2 --layers 3"; do
    vrun $a --clock virtual --metrics "$tmp/v1.json" || die "virtual run failed"
    vrun $a --clock virtual --metrics "$tmp/v2.json" || die "virtual run failed"
    vrun $a --metrics "$tmp/r.json" || die "real run failed"
    python3 - "$tmp/v1.json" "$tmp/v2.json" "$tmp/r.json" "$a" <<'PY' || die "virtual clock figures ($a)"
import json, sys
v1, v2, r = (json.load(open(f)) for f in sys.argv[1:4])
assert v1["clock"] == "virtual" and r["clock"] == "real", (v1["clock"], r["clock"])
for k in ["tick_seconds", "wait_seconds", "step_seconds", "messages"]:
    assert v1[k] == v2[k], (k, v1[k], v2[k])
ratio = r["ticks_per_second"] / v1["ticks_per_second"]
print("   %s: virtual %.1f ticks/s, real %.1f: real/virtual %.2f"
      % (sys.argv[4], v1["ticks_per_second"], r["ticks_per_second"], ratio))
# real overheads and a busy machine (ctest -j2 beside other tests) only
# lower the real figure: 0.53 was seen in a loaded CI run.  The bound
# catches a simulation that is off by a factor, not the machine's load.
assert 0.3 <= ratio <= 1.15, ratio
PY
done

step "metrics: the DESIGN §6 keys, emulated when --step-cost is used"
jac --workers 2 --step-cost 50 --metrics "$tmp/m.json" || die "metrics run failed"
python3 - "$tmp/m.json" <<'PY' || die "metrics keys"
import json, sys
m = json.load(open(sys.argv[1]))
for k in ["app", "ranks", "workers_per_rank", "workers_total", "wall_seconds", "jitter", "seed",
          "emulated", "ticks", "ticks_per_second", "tuple_ticks_per_second", "step_seconds",
          "wait_seconds", "runtime_seconds", "messages", "bytes", "per_worker"]:
    assert k in m, k
assert m["emulated"] is True and m["app"] == "jacobi" and len(m["per_worker"]) == 2
assert m["ticks"] == 24 and m["ticks_per_second"] > 0
PY

step "bad input: one line, exit code, no output"
bad() {
    local what=$1
    shift
    rm -f "$tmp/out.bin"
    "$TESSERA" run jacobi --dump "$tmp/out.bin" "$@" > /dev/null 2> "$tmp/err"
    local rc=$?
    if [ $rc = 0 ]; then fail "$what: exit 0"; return; fi
    [ "$(wc -l < "$tmp/err")" = 1 ] || fail "$what: expected one line on stderr, got: $(cat "$tmp/err")"
    if [ -e "$tmp/out.bin" ] || ls "$tmp"/.out.bin.tmp.* > /dev/null 2>&1; then
        fail "$what: left an output file"
    fi
}
bad "k > m+1" --rows 9 --cols 9 --ticks 3 --alg repl --period 3 --layers 1
bad "auto chooses the layers" --rows 9 --cols 9 --ticks 3 --alg auto --layers 3
bad "negative depth" --rows 9 --cols 9 --ticks 3 --alg sched --depth -1
bad "zero depth" --rows 9 --cols 9 --ticks 3 --alg sched --depth 0
bad "grid smaller than the layout" --rows 1 --cols 1 --ticks 3 --workers 2
bad "malformed jitter" --rows 9 --cols 9 --ticks 3 --jitter "lognormal:median=-1"
bad "unknown jitter" --rows 9 --cols 9 --ticks 3 --jitter weather
bad "unknown algorithm" --rows 9 --cols 9 --ticks 3 --alg fastest
bad "missing ticks" --rows 9 --cols 9
bad "depth without sched" --rows 9 --cols 9 --ticks 3 --depth 2
bad "repart not a multiple of the period" --rows 9 --cols 9 --ticks 3 --alg repl --period 2 --layers 1 --repart-every 3
bad "repeated option" --rows 9 --rows 9 --cols 9 --ticks 3
bad "bad number" --rows 9x --cols 9 --ticks 3
bad "unwritable dump" --rows 9 --cols 9 --ticks 3 --dump /nonexistent/dir/x.bin
bad "virtual clock without a step cost" --rows 9 --cols 9 --ticks 3 --clock virtual
bad "unknown clock" --rows 9 --cols 9 --ticks 3 --clock wall --step-cost 10
if [ "$MPI" = 1 ]; then
    rm -f "$tmp/out.bin"
    if mpi 2 "$TESSERA" run jacobi --rows 9 --cols 9 --ticks 3 --clock virtual --step-cost 10 \
        --dump "$tmp/out.bin" > /dev/null 2> "$tmp/err" || [ -e "$tmp/out.bin" ]; then
        fail "virtual clock under mpirun -np 2: accepted"
    fi
    grep -q "virtual runs in one process" "$tmp/err" || fail "virtual clock under mpirun: $(cat "$tmp/err")"
fi

echo "jacobi: $runs runs compared bitwise, $failures failure(s)"
[ $failures = 0 ]
