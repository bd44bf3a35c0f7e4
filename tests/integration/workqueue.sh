#!/usr/bin/env bash
# workqueue.sh (fast tier) — `tessera run workqueue`, the asynchronous
# checkpoint's end-to-end check: every item processed exactly once and every
# bucket checksum equal to the generator's, embedded and under mpirun -np 3;
# the same report with periodic checkpoints every 0.05 s as without; restore
# from nothing, from a finished run, from another job (refused); a failed
# epoch (TESS_CKPT_FAIL_EPOCH) that the job survives; the check itself
# catching a lost and a repeated item (TESS_WQ_FAULT); bad options; and a
# rank of mpirun -np 3 killed with SIGKILL after a checkpoint, restarted by
# `tessera supervise`, then a killed run restored onto another rank count.
# workqueue_long.sh kills at ten seeded moments.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workqueue_lib.bash"

step "plain runs verify and agree (embedded 1 and 3 workers)"
wq --workers 1 --output "$tmp/ref.txt" || die "1 worker: exit $?"
report_ok "$tmp/ref.txt" || die "1 worker: $(cat "$tmp/ref.txt")"
wq --workers 3 --partitions 7 --output "$tmp/w3.txt" --metrics "$tmp/w3.json" || die "3 workers: exit $?"
cmp -s "$tmp/ref.txt" "$tmp/w3.txt" || die "3 workers, 7 partitions: report differs"
grep -q '"verified": true' "$tmp/w3.json" || die "metrics: $(cat "$tmp/w3.json")"
wq --workers 2 > "$tmp/stdout.txt" || die "stdout report: exit $?"
cmp -s "$tmp/ref.txt" "$tmp/stdout.txt" || die "the report on stdout differs from --output's"

if [ "$MPI" = 1 ]; then
    step "mpirun -np 3"
    mpi 3 "$TESSERA" run workqueue --items "$WQ_ITEMS" --seed "$WQ_SEED" --work "$WQ_WORK" \
        --quiet --workers 1 --output "$tmp/np3.txt" || die "np 3: exit $?"
    cmp -s "$tmp/ref.txt" "$tmp/np3.txt" || die "np 3: report differs: $(cat "$tmp/np3.txt")"
fi

step "the check catches a lost and a repeated item (TESS_WQ_FAULT)"
for fault in skip:0 twice:29999; do
    rc=0
    TESS_WQ_FAULT=$fault wq --workers 2 --output "$tmp/fault.txt" 2> "$tmp/err" || rc=$?
    [ "$rc" = 1 ] || die "$fault: exit $rc, wanted 1"
    grep -qx "verdict: FAILED" "$tmp/fault.txt" || die "$fault: $(cat "$tmp/fault.txt")"
    grep -q "verification FAILED" "$tmp/err" || die "$fault: stderr: $(cat "$tmp/err")"
done

step "bad options: one line naming the option, exit 2, no output"
# bad NAME ARGS...: the message must name NAME.
bad() {
    local name=$1
    shift
    rc=0
    "$TESSERA" run workqueue --output "$tmp/bad.txt" "$@" > /dev/null 2> "$tmp/err" || rc=$?
    [ "$rc" = 2 ] || die "'$*': exit $rc, wanted 2"
    [ "$(wc -l < "$tmp/err")" = 1 ] || die "'$*': stderr: $(cat "$tmp/err")"
    grep -q -- "$name" "$tmp/err" || die "'$*': message does not name $name: $(cat "$tmp/err")"
    [ ! -e "$tmp/bad.txt" ] || die "'$*': left $tmp/bad.txt"
}
bad --items --items 0
bad --items --items 12x
bad --work --work -1
bad --item-us --item-us
bad --buckets --buckets 0
bad --partitions --partitions 0
bad --checkpoint-seconds --checkpoint-seconds 0.1
bad --keep --keep 3
bad --restore --restore
bad --checkpoint-seconds --checkpoint-dir "$tmp/ck" --checkpoint-seconds -1
bad --point-every --point-every 0
bad --bogus --bogus
bad --seed --seed 1 --seed 2
bad extra-argument extra-argument

step "periodic checkpoints every 0.05 s: the same report as without"
wq --workers 2 --item-us 50 --checkpoint-dir "$tmp/ck1" --checkpoint-seconds 0.05 \
    --output "$tmp/ck1.txt" --metrics "$tmp/ck1.json" 2> "$tmp/err" || die "checkpointing: exit $?: $(cat "$tmp/err")"
cmp -s "$tmp/ref.txt" "$tmp/ck1.txt" || die "checkpointing: report differs: $(cat "$tmp/ck1.txt")"
committed=$(sed -n 's/^ *"checkpoints_committed": \([0-9]*\).*/\1/p' "$tmp/ck1.json")
[ "${committed:-0}" -ge 4 ] || die "checkpointing: $committed checkpoints committed, wanted >= 4"
[ "$(ls -d "$tmp/ck1"/epoch-* | wc -l)" -le 2 ] || die "--keep 2 left: $(ls "$tmp/ck1")"
if [ "$MPI" = 1 ]; then
    mpi 3 "$TESSERA" run workqueue --items "$WQ_ITEMS" --seed "$WQ_SEED" --work "$WQ_WORK" \
        --quiet --workers 1 --item-us 50 --checkpoint-dir "$tmp/ck3" --checkpoint-seconds 0.05 \
        --point-every 3 --output "$tmp/ck3.txt" 2> "$tmp/err" || die "np 3 checkpointing: exit $?: $(head -c 600 "$tmp/err")"
    cmp -s "$tmp/ref.txt" "$tmp/ck3.txt" || die "np 3 checkpointing: report differs"
fi

step "restore: nothing to restore, a finished run, another job"
wq --workers 2 --checkpoint-dir "$tmp/empty" --restore --output "$tmp/r0.txt" 2> "$tmp/err" ||
    die "restore from nothing: exit $?: $(cat "$tmp/err")"
grep -qx "workqueue: no checkpoint in $tmp/empty; starting afresh" "$tmp/err" || die "restore from nothing: $(cat "$tmp/err")"
cmp -s "$tmp/ref.txt" "$tmp/r0.txt" || die "restore from nothing: report differs"
wq --workers 2 --checkpoint-dir "$tmp/ck1" --restore --output "$tmp/r1.txt" 2> "$tmp/err" ||
    die "restore of a finished run: exit $?: $(cat "$tmp/err")"
grep -q "workqueue: restored epoch [0-9]* (every item processed)" "$tmp/err" || die "restore of a finished run: $(cat "$tmp/err")"
cmp -s "$tmp/ref.txt" "$tmp/r1.txt" || die "restore of a finished run: report differs"
rc=0
"$TESSERA" run workqueue --items "$WQ_ITEMS" --seed "$WQ_SEED" --work $((WQ_WORK + 1)) --quiet \
    --checkpoint-dir "$tmp/ck1" --restore --output "$tmp/r2.txt" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] || die "another job's checkpoint: exit $rc, wanted 1: $(cat "$tmp/err")"
[ ! -e "$tmp/r2.txt" ] || die "another job's checkpoint: wrote a report"
grep -q "checkpoint directory $tmp/ck1 belongs to another job" "$tmp/err" || die "another job's checkpoint: $(cat "$tmp/err")"

step "TESS_CKPT_FAIL_EPOCH=2: that epoch fails and is removed, the job goes on"
TESS_CKPT_FAIL_EPOCH=2 wq --workers 2 --item-us 50 --checkpoint-dir "$tmp/fail" --checkpoint-seconds 0.05 \
    --keep 1000 --output "$tmp/fail.txt" 2> "$tmp/err" || die "failing epoch: exit $?: $(cat "$tmp/err")"
cmp -s "$tmp/ref.txt" "$tmp/fail.txt" || die "failing epoch: report differs"
[ -e "$tmp/fail/epoch-00000001" ] || die "failing epoch: epoch 1 is gone: $(ls "$tmp/fail" | head)"
ls -d "$tmp/fail"/epoch-00000002* > /dev/null 2>&1 && die "failing epoch: left $(ls "$tmp/fail" | head)"
[ "$(newest_epoch "$tmp/fail")" -ge 3 ] || die "failing epoch: no epoch after it: $(ls "$tmp/fail" | head)"
grep -q "a checkpoint failed" "$tmp/err" || die "failing epoch: not reported: $(cat "$tmp/err")"
grep -q "epoch 2" "$tmp/err" || die "failing epoch: the report does not name epoch 2: $(cat "$tmp/err")"
wq --workers 2 --checkpoint-dir "$tmp/fail" --restore --output "$tmp/fail2.txt" 2> "$tmp/err" ||
    die "restore after a failed epoch: exit $?: $(cat "$tmp/err")"
cmp -s "$tmp/ref.txt" "$tmp/fail2.txt" || die "restore after a failed epoch: report differs"

step "restore of the checkpoint taken after loading (the one after processing failed)"
TESS_CKPT_FAIL_EPOCH=2 wq --workers 2 --checkpoint-dir "$tmp/loaded" --checkpoint-seconds 0 \
    --output "$tmp/loaded0.txt" 2> "$tmp/err" || die "loaded: first run: exit $?: $(cat "$tmp/err")"
[ "$(newest_epoch "$tmp/loaded")" = 1 ] || die "loaded: epochs: $(ls "$tmp/loaded")"
wq --workers 3 --checkpoint-dir "$tmp/loaded" --restore --output "$tmp/loaded1.txt" 2> "$tmp/err" ||
    die "loaded: restore: exit $?: $(cat "$tmp/err")"
grep -q "workqueue: restored epoch 1 (items loaded, none processed)" "$tmp/err" || die "loaded: $(cat "$tmp/err")"
cmp -s "$tmp/ref.txt" "$tmp/loaded1.txt" || die "loaded: report differs"

step "SIGKILL after a checkpoint, restarted by tessera supervise"
failures=0
if [ "$MPI" = 1 ]; then
    kill_run 11 3 || failures=$((failures + 1))
fi
kill_run 12 0 || failures=$((failures + 1))
[ "$failures" = 0 ] || die "$failures killed run(s) did not recover"

if [ "$MPI" = 1 ]; then
    step "a killed mpirun -np 3 run restored embedded and on 2 ranks"
    dir="$tmp/moved"
    mpi 3 "$TESSERA" run workqueue --items "$WQ_ITEMS" --seed "$WQ_SEED" --work "$WQ_WORK" \
        --quiet --workers 1 --item-us 100 --checkpoint-dir "$dir" --checkpoint-seconds 0.1 \
        --output "$tmp/moved0.txt" > /dev/null 2> "$tmp/moved.err" &
    job=$!
    wait_epoch "$dir" 2 60 "$job" || die "moved: no checkpoint while processing"
    pid=$(rank_pid "$dir" 1)
    if [ -z "$pid" ]; then # seen once under ASan on a loaded machine: say what was running
        alive=no
        kill -0 "$job" 2> /dev/null && alive=yes
        die "moved: rank 1 not found after epoch $(newest_epoch "$dir") (mpirun alive: $alive;" \
            "its processes: $(pgrep -af -- "--checkpoint-dir $dir" | cut -c1-120 | tr '\n' ';');" \
            "stderr: $(head -c 600 "$tmp/moved.err"))"
    fi
    kill -9 "$pid"
    wait "$job" && die "moved: mpirun exited 0 after a rank was killed"
    [ ! -e "$tmp/moved0.txt" ] || die "moved: the killed run wrote a report"
    cp -r "$dir" "$dir.copy"
    wq --workers 2 --checkpoint-dir "$dir" --restore --output "$tmp/moved1.txt" 2> "$tmp/err" ||
        die "moved to embedded: exit $?: $(cat "$tmp/err")"
    grep -q "restored epoch" "$tmp/err" || die "moved to embedded: $(cat "$tmp/err")"
    cmp -s "$tmp/ref.txt" "$tmp/moved1.txt" || die "moved to embedded: report differs"
    mpi 2 "$TESSERA" run workqueue --items "$WQ_ITEMS" --seed "$WQ_SEED" --work "$WQ_WORK" \
        --quiet --workers 1 --checkpoint-dir "$dir.copy" --restore --output "$tmp/moved2.txt" 2> "$tmp/err" ||
        die "moved to 2 ranks: exit $?: $(head -c 600 "$tmp/err")"
    cmp -s "$tmp/ref.txt" "$tmp/moved2.txt" || die "moved to 2 ranks: report differs"
fi

echo "workqueue: all checks passed"
