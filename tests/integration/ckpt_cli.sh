#!/bin/bash
# ckpt_cli.sh (fast tier) — the checkpoint options of `tessera run pagerank`
# and `tessera run kmeans` (--checkpoint-dir, --checkpoint-every, --restore),
# each app in turn, every output compared with a plain run of the same job
# (PageRank within 1e-12 relative, k-means byte for byte):
#   - option errors: one line naming the option, exit 2;
#   - --restore with no checkpoint: "starting afresh", same output;
#   - checkpoints every 2 of 9 iterations, then --restore from the newest:
#     "restored checkpoint epoch E (iteration 8 of 9)", same output;
#   - with MPI: written by mpirun -np 3, restored by -np 2 and embedded;
#   - the newest epoch damaged (a partition file with a flipped byte,
#     truncated, missing, a FIFO or a symlink to /dev/urandom; the MANIFEST
#     with a flipped byte): the damaged
#     file is named on stderr and the previous epoch restored;
#   - another job's checkpoint (other --gen seed; PageRank: other damping):
#     one line, exit 1;
#   - every write of the last epoch failing (TESS_CKPT_FAIL_EPOCH, EIO): the
#     run reports it and still succeeds; --restore takes the epoch before;
#   - a real ENOSPC: the checkpoint directory on a tmpfs with room for two
#     epochs only, in a private mount namespace (skipped, with a message,
#     where mounting is not permitted).
#
# Environment: TESSERA, TESS_SRC, TESS_HAVE_MPI=0|1.  Exits 77 (skipped)
# without TESSERA, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_lib.bash"

# ok LABEL APP OUT — the run succeeded and gave the reference output.
ok() {
    [ "$rc" = 0 ] || die "$1: exit $rc -- stderr: $(head -c 800 "$3/err")"
    local msg
    msg=$(same_output "$2" "$3" "$R/ref" 2>&1) || die "$1: output differs from a plain run: $msg"
}

# one_line LABEL WANT_RC PATTERN OUT — exit WANT_RC, exactly one line on
# stderr, containing PATTERN.
one_line() {
    [ "$rc" = "$2" ] || die "$1: exit $rc, wanted $2 -- stderr: $(head -c 800 "$4/err")"
    [ "$(wc -l < "$4/err")" = 1 ] || die "$1: stderr is not one line: $(cat "$4/err")"
    grep -qF -- "$3" "$4/err" || die "$1: stderr lacks '$3': $(cat "$4/err")"
}

# want_restored LABEL OUT EPOCH ITERATION — the restore line of epoch EPOCH.
want_restored() {
    grep -q "^$APP: restored checkpoint epoch $3 (iteration $4 of $ITERS) from " "$2/err" ||
        die "$1: wanted 'restored checkpoint epoch $3 (iteration $4 of $ITERS)', stderr: $(cat "$2/err")"
}

ITERS=9
# run_app_checks APP JOB OTHER_JOB... — JOB and each OTHER_JOB are the
# options that name the computation (one word list each).
run_app_checks() {
    APP=$1
    local job=$2
    shift 2
    local others=("$@")
    local common=(--iterations "$ITERS" --partitions 6 --quiet)
    # shellcheck disable=SC2206 # JOB is a word list
    local args=($job "${common[@]}")
    R="$tmp/$APP"
    mkdir -p "$R"
    step "$APP: option errors"
    local bad named
    for bad in "--restore" "--checkpoint-every 3" "--checkpoint-dir $R/x --checkpoint-every 0" \
        "--checkpoint-dir $R/x --checkpoint-every x"; do
        named=--checkpoint-every
        [ "$bad" = --restore ] && named=--restore
        # shellcheck disable=SC2086 # word splitting of $bad is intended
        app_run "$APP" "$R/bad" "${args[@]}" $bad
        one_line "$APP $bad" 2 "option $named" "$R/bad"
        [ ! -e "$R/x" ] || die "$APP $bad: created the checkpoint directory"
    done
    touch "$R/file"
    app_run "$APP" "$R/bad" "${args[@]}" --checkpoint-dir "$R/file/ck"
    one_line "$APP --checkpoint-dir under a file" 1 "option --checkpoint-dir: cannot create" "$R/bad"

    step "$APP: plain run; --restore without a checkpoint starts afresh"
    app_run "$APP" "$R/ref" "${args[@]}" --workers 2
    [ "$rc" = 0 ] || die "$APP plain run: exit $rc: $(cat "$R/ref/err")"
    app_run "$APP" "$R/afresh" "${args[@]}" --workers 2 --checkpoint-dir "$R/none/ck" --restore
    ok "$APP afresh" "$APP" "$R/afresh"
    grep -qx "$APP: no checkpoint in $R/none/ck; starting afresh" "$R/afresh/err" ||
        die "$APP afresh: stderr: $(cat "$R/afresh/err")"

    step "$APP: a checkpoint every 2 iterations, then --restore from the newest"
    local D="$R/ck"
    app_run "$APP" "$R/ck_run" "${args[@]}" --workers 2 --checkpoint-dir "$D" --checkpoint-every 2
    ok "$APP checkpointing run" "$APP" "$R/ck_run"
    [ ! -s "$R/ck_run/err" ] || die "$APP checkpointing run: stderr: $(cat "$R/ck_run/err")"
    local n newest prev
    n=$(epochs "$D" | wc -l)
    newest=$(newest_epoch "$D")
    prev=$(prev_epoch "$D")
    [ "$n" -ge 2 ] && [ "$prev" -lt "$newest" ] ||
        die "$APP: wanted at least 2 committed epochs in $D, found: $(ls "$D")"
    [ -f "$(epoch_dir "$D" "$newest")/MANIFEST" ] || die "$APP: epoch $newest has no MANIFEST"
    echo "   epochs kept: $(epochs "$D" | tr '\n' ' ')"
    cp -a "$D" "$R/ck_pristine"

    step "$APP: TESS_CKPT_WRITER=normal (one competing writer) and a bad value (warned)"
    TESS_CKPT_WRITER=normal app_run "$APP" "$R/wr_normal" "${args[@]}" --workers 2 \
        --checkpoint-dir "$R/ck_normal" --checkpoint-every 2
    ok "$APP TESS_CKPT_WRITER=normal" "$APP" "$R/wr_normal"
    [ "$(newest_epoch "$R/ck_normal")" = "$newest" ] ||
        die "$APP TESS_CKPT_WRITER=normal: newest epoch $(newest_epoch "$R/ck_normal"), wanted $newest"
    TESS_CKPT_WRITER=bogus app_run "$APP" "$R/wr_bad" "${args[@]}" --workers 2 \
        --checkpoint-dir "$R/ck_bad" --checkpoint-every 2
    ok "$APP TESS_CKPT_WRITER=bogus" "$APP" "$R/wr_bad"
    grep -q "TESS_CKPT_WRITER=bogus: expected 'paced' or 'normal'" "$R/wr_bad/err" ||
        die "$APP TESS_CKPT_WRITER=bogus: no warning: $(cat "$R/wr_bad/err")"

    app_run "$APP" "$R/restored" "${args[@]}" --workers 2 --checkpoint-dir "$D" --checkpoint-every 2 \
        --restore
    ok "$APP restore" "$APP" "$R/restored"
    want_restored "$APP restore" "$R/restored" "$newest" 8

    step "$APP: --iterations below the newest epoch: it is refused, the previous one restored"
    # shellcheck disable=SC2206 # JOB is a word list
    local short=($job --iterations 7 --partitions 6 --quiet)
    cp -a "$R/ck_pristine" "$R/ck_short"
    app_run "$APP" "$R/ref7" "${short[@]}" --workers 2
    [ "$rc" = 0 ] || die "$APP 7 iterations: exit $rc: $(cat "$R/ref7/err")"
    app_run "$APP" "$R/short" "${short[@]}" --workers 2 --checkpoint-dir "$R/ck_short" --restore
    [ "$rc" = 0 ] || die "$APP restore, 7 iterations: exit $rc: $(cat "$R/short/err")"
    grep -q "epoch-0*$newest: refused by the application: after iteration 8, beyond --iterations 7" \
        "$R/short/err" || die "$APP restore, 7 iterations: no refusal: $(cat "$R/short/err")"
    grep -q "^$APP: restored checkpoint epoch $prev (iteration 6 of 7) from " "$R/short/err" ||
        die "$APP restore, 7 iterations: epoch $prev not restored: $(cat "$R/short/err")"
    same_output "$APP" "$R/short" "$R/ref7" > /dev/null 2>&1 ||
        die "$APP restore, 7 iterations: output differs from a plain 7-iteration run"

    if [ "$MPI" = 1 ]; then
        step "$APP: written by mpirun -np 3, restored by -np 2 and embedded"
        local M="$R/ck_mpi"
        app_run "$APP" "$R/np3" -np 3 "${args[@]}" --workers 1 --checkpoint-dir "$M" \
            --checkpoint-every 3
        ok "$APP -np 3" "$APP" "$R/np3"
        local e3
        e3=$(newest_epoch "$M")
        cp -a "$M" "$R/ck_mpi2"
        app_run "$APP" "$R/np2" -np 2 "${args[@]}" --workers 1 --checkpoint-dir "$M" --restore
        ok "$APP restore -np 2" "$APP" "$R/np2"
        want_restored "$APP restore -np 2" "$R/np2" "$e3" 6
        app_run "$APP" "$R/emb" "${args[@]}" --workers 3 --checkpoint-dir "$R/ck_mpi2" --restore
        ok "$APP restore embedded" "$APP" "$R/emb"
        want_restored "$APP restore embedded" "$R/emb" "$e3" 6
    fi

    step "$APP: the newest epoch damaged; the previous one is restored"
    local kind C ed victim
    for kind in corrupt truncated missing manifest fifo device; do
        C="$R/ck_$kind"
        cp -a "$R/ck_pristine" "$C"
        ed=$(epoch_dir "$C" "$newest")
        victim=$(ls -S "$ed"/t*-p*.zst | head -n 1) # the largest partition
        [ -n "$victim" ] || die "$APP: no partition file in $ed: $(ls "$ed")"
        case $kind in
        corrupt) flip_byte "$victim" ;;
        truncated) truncate -s $(($(stat -c %s "$victim") / 2)) "$victim" ;;
        missing) rm "$victim" ;;
        manifest) victim="$ed/MANIFEST" && flip_byte "$victim" ;;
        fifo) rm "$victim" && mkfifo "$victim" ;;           # read forever before
        device) ln -sf /dev/urandom "$victim" ;;            # likewise (issue 15)
        esac
        app_run "$APP" "$R/dmg" "${args[@]}" --workers 2 --checkpoint-dir "$C" --restore
        ok "$APP $kind" "$APP" "$R/dmg"
        grep -qF "$victim" "$R/dmg/err" ||
            die "$APP $kind: stderr does not name $victim: $(cat "$R/dmg/err")"
        want_restored "$APP $kind" "$R/dmg" "$prev" 6
        echo "   $kind: $(grep -F "$victim" "$R/dmg/err" | head -n 1)"
    done

    step "$APP: another job's checkpoint is refused"
    local other
    for other in "${others[@]}"; do
        # shellcheck disable=SC2086 # OTHER is a word list
        app_run "$APP" "$R/other" $other "${common[@]}" --workers 2 \
            --checkpoint-dir "$R/ck_pristine" --restore
        one_line "$APP $other" 1 "$R/ck_pristine" "$R/other"
        echo "   $other: $(cat "$R/other/err")"
    done

    step "$APP: every write of epoch $newest fails (TESS_CKPT_FAIL_EPOCH=$newest)"
    local F="$R/ck_fail"
    rc=0
    TESS_CKPT_FAIL_EPOCH=$newest app_run "$APP" "$R/fail" "${args[@]}" --workers 2 \
        --checkpoint-dir "$F" --checkpoint-every 2
    ok "$APP injected failure" "$APP" "$R/fail"
    grep -qi "checkpoint" "$R/fail/err" || die "$APP injected failure: not reported on stderr"
    echo "   reported: $(head -n 2 "$R/fail/err" | tr '\n' ' ')"
    [ "$(newest_epoch "$F")" = "$prev" ] ||
        die "$APP injected failure: newest committed epoch is $(newest_epoch "$F"), wanted $prev"
    app_run "$APP" "$R/fail_restored" "${args[@]}" --workers 2 --checkpoint-dir "$F" --restore
    ok "$APP restore after the failure" "$APP" "$R/fail_restored"
    want_restored "$APP restore after the failure" "$R/fail_restored" "$prev" 6

    enospc_check
}

# A tmpfs with room for the static tables and two and a half epochs: the
# third epoch runs out of space while the first two still exist, and so does
# every later one.  Run in a private mount namespace (no cleanup needed).
enospc_check() {
    local ed static_kb epoch_kb size_kb
    ed=$(epoch_dir "$R/ck_pristine" "$newest")
    static_kb=$(tmpfs_kb "$R/ck_pristine/static")
    epoch_kb=$(tmpfs_kb "$ed")
    size_kb=$((static_kb + epoch_kb * 5 / 2))
    step "$APP: ENOSPC on a ${size_kb} KiB tmpfs (static ${static_kb} KiB, epoch ${epoch_kb} KiB)"
    local ns=(unshare -m)
    [ "$(id -u)" = 0 ] || ns=(unshare -rm)
    local T="$R/tmpfs" tess_args
    mkdir -p "$T"
    tess_args=$(printf ' %q' "${args[@]}" --workers 2 --checkpoint-dir "$T/ck")
    rm -rf "$R/nospc" "$R/nospc_restored" && mkdir -p "$R/nospc" "$R/nospc_restored"
    rc=0
    "${ns[@]}" bash -c "mount -t tmpfs -o size=${size_kb}k tmpfs '$T' 2> '$R/mount.err' || exit 99
        '$TESSERA' run $APP $tess_args --checkpoint-every 2 $(outputs_of "$R/nospc") \
            > '$R/nospc/stdout' 2> '$R/nospc/err' || exit 98
        ls '$T/ck' > '$R/nospc/ls'
        '$TESSERA' run $APP $tess_args --restore $(outputs_of "$R/nospc_restored") \
            > '$R/nospc_restored/stdout' 2> '$R/nospc_restored/err' || exit 97" \
        2> "$R/unshare.err" || rc=$?
    if [ "$rc" = 99 ] || { [ "$rc" != 0 ] && [ ! -s "$R/nospc/err" ] && [ ! -s "$R/nospc/ls" ]; }; then
        echo "   SKIPPED: cannot mount a tmpfs here: $(cat "$R/mount.err" "$R/unshare.err" 2> /dev/null | head -n 1)"
        return 0
    fi
    [ "$rc" = 0 ] || die "$APP ENOSPC: step $((100 - rc)) failed; stderr: $(cat "$R/nospc/err" "$R/nospc_restored/err" 2> /dev/null)"
    ok "$APP ENOSPC run" "$APP" "$R/nospc"
    ok "$APP ENOSPC restore" "$APP" "$R/nospc_restored"
    grep -qi "no space" "$R/nospc/err" ||
        die "$APP ENOSPC: no checkpoint failed for lack of space; stderr: $(cat "$R/nospc/err"), left: $(cat "$R/nospc/ls")"
    local left
    left=$(grep -Eo '^epoch-[0-9]+$' "$R/nospc/ls" | sort | tail -n 1)
    [ -n "$left" ] || die "$APP ENOSPC: no committed epoch left: $(cat "$R/nospc/ls")"
    want_restored "$APP ENOSPC restore" "$R/nospc_restored" $((10#${left#epoch-})) \
        "$(grep -Eo 'iteration [0-9]+ of' "$R/nospc_restored/err" | cut -d' ' -f2)"
    echo "   reported: $(grep -i "no space" "$R/nospc/err" | head -n 1)"
    echo "   restored: $(grep "restored checkpoint" "$R/nospc_restored/err")"
}

# tmpfs_kb DIR — KiB that DIR's files take on a tmpfs (whole pages each;
# directories take none).
tmpfs_kb() {
    find "$1" -type f -printf '%s\n' | awk '{ kb += int(($1 + 4095) / 4096) * 4 } END { print kb + 0 }'
}

outputs_of() {
    if [ "$APP" = kmeans ]; then
        printf -- "--output %q --assignments %q" "$1/centres.txt" "$1/assign.txt"
    else
        printf -- "--output %q" "$1/ranks.txt"
    fi
}

run_app_checks pagerank "--gen web:30000" "--gen web:30000:2" "--gen web:30000 --damping 0.9"
run_app_checks kmeans "--gen 50000:3:6" "--gen 50000:3:6:2" "--gen 50000:3:6 --k 5"

echo "ok: ckpt_cli"
