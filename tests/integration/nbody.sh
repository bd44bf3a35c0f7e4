#!/bin/bash
# nbody.sh (fast tier) — `tessera run nbody`:
#   1. against nbody_ref, an independent direct O(N^2) loop with the cutoff:
#      byte for byte, for boxes of 1, 2, 3 and 5 cells per side (where the 27
#      neighbour cells wrap onto each other);
#   2. the same bytes for 1, 2 and 4 workers, other partition counts, and
#      2 and 3 ranks under mpirun;
#   3. total momentum conserved to round-off (metrics' momentum_drift);
#   4. checkpoints: a run restored from an older epoch, with another worker
#      and partition count, and a run killed with SIGKILL after its first
#      checkpoint (leaving no temporary output) and restored, end with the
#      failure-free bytes;
#   5. bad input: one line on stderr naming the file:line or the option, a
#      non-zero exit, no output left behind.
#
# Environment: TESSERA, TESS_SRC, TESS_BUILD, TESS_HAVE_MPI=0|1.
set -u
. "$(dirname "$0")/lib.sh"
REFBIN="${TESS_BUILD:-$(dirname "$TESSERA")}/tests/integration/nbody_ref"
[ -x "$REFBIN" ] || { echo "SKIP: $REFBIN not built" >&2; exit 77; }

nb() { "$TESSERA" run nbody --quiet "$@"; }

# check_ref LABEL N BOX CUTOFF STEPS — tessera against the reference.
check_ref() {
    local label=$1 n=$2 box=$3 cut=$4 steps=$5 d="$tmp/$1"
    mkdir -p "$d"
    nb --particles "$n" --box "$box" --cutoff "$cut" --steps 0 --seed 7 --output "$d/init.txt" ||
        die "$label: generating"
    "$REFBIN" "$box" "$cut" 0.05 0.001 "$steps" < "$d/init.txt" > "$d/ref.txt" || die "$label: reference"
    nb --input "$d/init.txt" --box "$box" --cutoff "$cut" --steps "$steps" --workers 2 \
        --output "$d/got.txt" --metrics "$d/m.json" || die "$label: tessera failed"
    cmp -s "$d/got.txt" "$d/ref.txt" || die "$label: differs from the O(N^2) reference"
    python3 - "$d/m.json" "$label" <<'PY' || die "$label: momentum not conserved"
import json, sys
m = json.load(open(sys.argv[1]))
drift = m["momentum_drift"]
if not drift < 1e-11:
    sys.exit("%s: momentum drift %g" % (sys.argv[2], drift))
PY
    echo "   $label: $n particles, $(python3 -c "import json;print(json.load(open('$d/m.json'))['cells_per_side'])") cells per side, $steps steps: identical"
}

step "against the O(N^2) reference"
check_ref c5 700 5.5 1 12
check_ref c3 200 3.5 1 8
check_ref c2 150 2.5 1 8
check_ref c1 80 2 1 8

step "the same bytes for any worker, partition and rank count"
W="$tmp/w"
mkdir -p "$W"
common=(--particles 1500 --cutoff 1 --steps 8 --seed 3)
nb "${common[@]}" --workers 1 --output "$W/base.txt" || die "1 worker failed"
for args in "--workers 2" "--workers 4" "--workers 3 --partitions 2" "--workers 2 --partitions 1"; do
    # shellcheck disable=SC2086
    nb "${common[@]}" $args --output "$W/x.txt" || die "$args failed"
    cmp -s "$W/x.txt" "$W/base.txt" || die "$args: differs from 1 worker"
done
if [ "$MPI" = 1 ]; then
    for np in 2 3; do
        mpi "$np" "$TESSERA" run nbody --quiet "${common[@]}" --workers 1 --output "$W/m$np.txt" \
            2> "$W/err" || die "mpirun -np $np failed: $(head -c 500 "$W/err")"
        cmp -s "$W/m$np.txt" "$W/base.txt" || die "mpirun -np $np: differs from 1 worker"
    done
    echo "   1, 2, 3, 4 workers, 1, 2, 4 and 5 partitions, 2 and 3 ranks: identical"
else
    echo "   1, 2, 3, 4 workers, 1, 2, 4 and 5 partitions: identical (no MPI: ranks skipped)"
fi

step "checkpoints: an older epoch, and a kill -9"
C="$tmp/ck"
nb "${common[@]}" --checkpoint-dir "$C/d" --checkpoint-every 3 --output "$C/a.txt" ||
    die "checkpointed run failed"
cmp -s "$C/a.txt" "$W/base.txt" || die "checkpointing changed the result"
newest=$(ls -d "$C"/d/epoch-*[0-9] | tail -n 1)
rm -rf "$newest"
nb "${common[@]}" --checkpoint-dir "$C/d" --restore --workers 3 --partitions 5 \
    --output "$C/b.txt" 2> "$C/err" || die "restore failed: $(cat "$C/err")"
grep -q "restored checkpoint epoch" "$C/err" || die "no restore reported: $(cat "$C/err")"
cmp -s "$C/b.txt" "$W/base.txt" || die "restored run differs"
big=(--particles 6000 --cutoff 1 --steps 30 --seed 5 --workers 2)
nb "${big[@]}" --output "$C/big.txt" || die "plain run failed"
"$TESSERA" run nbody --quiet "${big[@]}" --checkpoint-dir "$C/k" --checkpoint-every 3 \
    --output "$C/k.txt" 2> /dev/null &
pid=$!
for _ in $(seq 1 300); do
    ls -d "$C"/k/epoch-*[0-9] > /dev/null 2>&1 && break
    sleep 0.02
done
kill -9 $pid 2> /dev/null
wait $pid 2> /dev/null
killed=yes
[ -e "$C/k.txt" ] && killed="no (it had finished)"
# outputs are created only to write the results: a kill mid-run leaves none
[ -z "$(ls -A "$C" | grep '^\.k\.txt\.tmp\.')" ] || [ "$killed" != yes ] ||
    die "kill -9 left a temporary output: $(ls -A "$C")"
nb "${big[@]}" --checkpoint-dir "$C/k" --restore --output "$C/k.txt" 2> "$C/err" ||
    die "restore after kill failed: $(cat "$C/err")"
cmp -s "$C/k.txt" "$C/big.txt" || die "restore after kill -9 differs"
from=$(sed -n 's/.*restored checkpoint \(epoch [0-9]* (step [0-9]*\).*/\1)/p' "$C/err")
echo "   older epoch with 3 workers and 5 partitions: identical"
echo "   killed: $killed, restored ${from:-nothing (started afresh)}: identical"

step "bad input"
B="$tmp/bad"
mkdir -p "$B/in"
printf '0 1 1 1 0 0 0\n1 2 2 2 0 0 0\n' > "$B/in/ok.txt"
printf '0 1 1 1 0 0 0\n1 2 2 x 0 0 0\n' > "$B/in/malformed.txt"
printf '0 1 1 1 0 0 0\n# comment\n\n1 2 2 2 0 0\n' > "$B/in/short.txt"
printf '0 1 1 1 0 0 0\n1 9 2 2 0 0 0\n' > "$B/in/outside.txt"
printf '0 1 1 1 0 0 0\n0 2 2 2 0 0 0\n' > "$B/in/dup.txt"
printf '0 1 1 1 0 0 0\n1 2 2 2 nan 0 0\n' > "$B/in/nan.txt"
printf '0 1 1 1 0 0 0 8\n' > "$B/in/long.txt"
printf '\n# nothing\n' > "$B/in/empty.txt"
printf -- '-1 1 1 1 0 0 0\n' > "$B/in/negid.txt"
# expect_fail RC PATTERN ARGS... — one line, the pattern, no output left.
expect_fail() { expect_fail_of nbody --output p.txt "$@"; }
in="$B/in"
run=(--box 4 --cutoff 1 --steps 2)
expect_fail 1 "$in/missing.txt:" --input "$in/missing.txt" "${run[@]}"
expect_fail 1 "$in/malformed.txt:2:" --input "$in/malformed.txt" "${run[@]}"
expect_fail 1 "$in/short.txt:4:" --input "$in/short.txt" "${run[@]}"
expect_fail 1 "$in/outside.txt:2: position outside the box" --input "$in/outside.txt" "${run[@]}"
expect_fail 1 "$in/dup.txt: particle id 0 appears twice" --input "$in/dup.txt" "${run[@]}"
expect_fail 1 "$in/nan.txt:2: a value is not finite" --input "$in/nan.txt" "${run[@]}"
expect_fail 1 "$in/long.txt:1: more than 7 fields" --input "$in/long.txt" "${run[@]}"
expect_fail 1 "$in/empty.txt: no particles" --input "$in/empty.txt" "${run[@]}"
expect_fail 1 "$in/negid.txt:1: the id" --input "$in/negid.txt" "${run[@]}"
expect_fail 2 "option --box is required" --input "$in/ok.txt" --cutoff 1 --steps 2
expect_fail 2 "option --cutoff: 3 is more than half the box" --input "$in/ok.txt" --box 4 --cutoff 3 --steps 2
expect_fail 2 "give exactly one of --particles" --input "$in/ok.txt" --particles 5 "${run[@]}"
expect_fail 2 "give exactly one of --particles" "${run[@]}"
expect_fail 2 "option --steps is required" --particles 10 --cutoff 1
expect_fail 2 "option --cutoff is required" --particles 10 --steps 1
expect_fail 2 "option --particles" --particles 0 "${run[@]}"
expect_fail 2 "option --dt" --particles 10 --dt -1 "${run[@]}"
expect_fail 2 "--bogus" --particles 10 "${run[@]}" --bogus
expect_fail 1 "option --partitions: 9 is more than the 3 planes" --particles 10 "${run[@]}" --partitions 9
expect_fail 2 "option --restore needs --checkpoint-dir" --particles 10 "${run[@]}" --restore
expect_fail 1 "would move" --particles 100 --cutoff 1 --steps 3 --vmax 1e6
expect_fail 1 "cannot write $B/nodir/x.txt" --particles 10 "${run[@]}" --metrics "$B/nodir/x.txt"
echo "   $cases cases: the right exit, one line, nothing left behind"
echo "ok: nbody"
