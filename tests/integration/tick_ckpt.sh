#!/usr/bin/env bash
# tick_ckpt.sh (fast tier) — checkpoints of the tick face (docs/checkpoints.md,
# "Ticks"): Jacobi (combined, cloud latency, 2 workers) killed with SIGKILL at
# a few moments after its first checkpoint, then run with --restore: the
# --dump is bitwise the uninterrupted run's, also restored onto 3 workers
# and another algorithm, and under `tessera supervise`.  Fish (sched) the
# same under `mpirun -np 2` (a rank killed; embedded workers without MPI).
# A damaged newest epoch falls back to the previous one; every epoch damaged,
# another app's or other options' checkpoint, and bad option values are
# refused with one line and no output.  tick_ckpt_long.sh sweeps more
# moments and every algorithm.
#
# Environment: TESSERA, TESS_SRC; CKPT_KILL_SEED (default 1).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_lib.bash"
. "$(dirname "$0")/tick_ckpt_lib.bash"
tick_ckpt_setup

# Under ASan/TSan (SANITIZED=1) a third of the ticks and one kill moment:
# the same code paths, at the sanitizers' pace.
TICKS=2000 EVERY=100 MOMENTS=2
[ "${SANITIZED:-0}" = 1 ] && TICKS=600 EVERY=50 MOMENTS=1
JACOBI=(jacobi --rows 200 --cols 200 --ticks "$TICKS" --jitter cloud --quiet --workers 2 --alg combined
    --depth 2 --period 2 --layers 3)
FISH=(fish --fish 600 --informed 0.1 --ticks 60 --alg sched --depth 2 --quiet)

step "jacobi: the uninterrupted run; killed at $MOMENTS moment(s) after a checkpoint, then --restore"
tick_reference "${JACOBI[@]}"
tick_kill_moments "$MOMENTS" "$SEED" "$EVERY" "" "${JACOBI[@]}"

step "jacobi: restored onto 3 workers and --alg sched, and under tessera supervise"
tick_kill_restore "$tmp/j_w3" "$EVERY" "" 0.1 "${JACOBI[@]}" -- "${JACOBI[@]:0:10}" --workers 3 --alg sched
tick_supervised "$tmp/j_sup" "$EVERY" 0.1 "${JACOBI[@]}"

if [ "$MPI" = 1 ]; then
    step "fish: mpirun -np 2, a rank killed after a checkpoint, then --restore"
    tick_reference "${FISH[@]}" --workers 2
    tick_kill_restore "$tmp/f_mpi" 10 "mpi 2" 0.2 "${FISH[@]}" --workers 1
else
    step "fish: no MPI here; 2 workers killed after a checkpoint, then --restore"
    tick_reference "${FISH[@]}" --workers 2
    tick_kill_restore "$tmp/f_emb" 10 "" 0.2 "${FISH[@]}" --workers 2
fi

step "jacobi: damaged checkpoints"
C="$tmp/ck_pristine"
rm -rf "$C"
"$TESSERA" run jacobi --rows 40 --cols 40 --ticks 30 --workers 2 --quiet --checkpoint-dir "$C" \
    --checkpoint-every 10 || die "jacobi with checkpoints failed"
"$TESSERA" run jacobi --rows 40 --cols 40 --ticks 30 --workers 2 --quiet --dump "$tmp/small.bin" ||
    die "jacobi small reference failed"
newest=$(newest_epoch "$C")
cp -a "$C" "$tmp/ck_newest"
flip_byte "$(ls -S "$(epoch_dir "$tmp/ck_newest" "$newest")"/t0-p*.zst | head -n 1)"
"$TESSERA" run jacobi --rows 40 --cols 40 --ticks 30 --workers 3 --quiet --dump "$tmp/dmg.bin" \
    --checkpoint-dir "$tmp/ck_newest" --restore 2> "$tmp/dmg.err" ||
    die "jacobi, newest epoch damaged: $(cat "$tmp/dmg.err")"
grep -q "checkpoint skipped: .*epoch-0*$newest/t0-p.*checksum" "$tmp/dmg.err" ||
    die "jacobi, newest epoch damaged: not reported: $(cat "$tmp/dmg.err")"
grep -q "restored checkpoint epoch $(prev_epoch "$C") (tick 10 of 30)" "$tmp/dmg.err" ||
    die "jacobi, newest epoch damaged: the previous one not restored: $(cat "$tmp/dmg.err")"
cmp -s "$tmp/dmg.bin" "$tmp/small.bin" || die "jacobi, newest epoch damaged: dump differs"
echo "   newest damaged: $(head -n 1 "$tmp/dmg.err")"
cp -a "$C" "$tmp/ck_all"
for e in $(epochs "$tmp/ck_all"); do flip_byte "$(epoch_dir "$tmp/ck_all" "$e")/t0-p0.zst"; done
expect_fail_of jacobi --dump d.bin 1 "cannot restore from $tmp/ck_all: " --rows 40 --cols 40 \
    --ticks 30 --checkpoint-dir "$tmp/ck_all" --restore
echo "   all damaged: $(cat "$tmp/err")"

step "another job's checkpoint is refused"
expect_fail_of jacobi --dump d.bin 1 "its checkpoints are of another job ('cols=40'; this run: cols=41)" \
    --rows 40 --cols 41 --ticks 30 --checkpoint-dir "$C" --restore
echo "   other options: $(cat "$tmp/err")"
expect_fail_of fish --dump d.bin 1 "its checkpoints are of jacobi, this run is fish" --fish 50 \
    --informed 0.1 --ticks 30 --checkpoint-dir "$C" --restore
echo "   other app: $(cat "$tmp/err")"
"$TESSERA" run jacobi --rows 40 --cols 40 --ticks 15 --quiet --checkpoint-dir "$C" --restore \
    2> "$tmp/short.err" || die "jacobi --ticks 15 restore: $(cat "$tmp/short.err")"
grep -q "epoch-0*$newest: after tick 20, beyond --ticks 15" "$tmp/short.err" &&
    grep -q "restored checkpoint epoch $(prev_epoch "$C") (tick 10 of 15)" "$tmp/short.err" ||
    die "jacobi --ticks 15: the epoch of tick 20 not passed over: $(cat "$tmp/short.err")"
echo "   a longer run's: $(head -n 1 "$tmp/short.err")"

step "bad option values"
expect_fail_of jacobi --dump d.bin 2 "option --checkpoint-every: expected an integer" --rows 8 \
    --cols 8 --ticks 3 --checkpoint-dir "$tmp/b" --checkpoint-every 0
expect_fail_of jacobi --dump d.bin 2 "option --checkpoint-every: expected an integer" --rows 8 \
    --cols 8 --ticks 3 --checkpoint-dir "$tmp/b" --checkpoint-every 30s
expect_fail_of fish --dump d.bin 2 "option --restore needs --checkpoint-dir" --fish 9 \
    --informed 0.1 --ticks 3 --restore
expect_fail_of pagerank-tick --output o.txt 2 "option --checkpoint-dir: empty" --gen rmat:6 \
    --ticks 3 --checkpoint-dir ""
[ -e "$tmp/b" ] && die "a refused run created its checkpoint directory"
"$TESSERA" run pagerank-tick --help | grep -q -- "--checkpoint-every" ||
    die "pagerank-tick --help does not list --checkpoint-every"
echo "PASS"
