# tick_ckpt_lib.bash — what tick_ckpt.sh and tick_ckpt_long.sh share; source
# it after lib.sh and ckpt_lib.bash (not named *.sh: every *.sh here is
# registered as a test).  A tick run with checkpoints is killed with SIGKILL
# a while after its first epoch committed, then run again with --restore;
# its --dump must be bitwise the uninterrupted run's ($tmp/ref.bin).

# tick_ckpt_setup — end every process the test started on exit, and SEED
# from CKPT_KILL_SEED (default 1).
tick_ckpt_setup() {
    trap 'kill_leftovers; rm -rf "$tmp"' EXIT
    SEED=${CKPT_KILL_SEED:-1}
}

# tick_reference ARGS... — `tessera run ARGS --dump $tmp/ref.bin` (TICK_OUTOPT:
# the output option instead of --dump, pagerank-tick's --output).
tick_reference() {
    "$TESSERA" run "$@" "${TICK_OUTOPT:---dump}" "$tmp/ref.bin" 2> "$tmp/ref.err" ||
        die "reference run $*: $(head -c 600 "$tmp/ref.err")"
}

# launch MPI ARGS... — `tessera run ARGS`, under `mpirun -np N` when MPI is
# "mpi N", with at most 60 s.
launch() {
    local np=${1#mpi }
    shift
    if [ -n "$np" ]; then
        timeout -k 5 60 mpirun -np "$np" --oversubscribe --bind-to none "$TESSERA" run "$@"
    else
        timeout -k 5 60 "$TESSERA" run "$@"
    fi
}

# tick_kill_restore DIR EVERY MPI DELAY ARGS... [-- OTHER...] — run ARGS with
# --checkpoint-every EVERY into DIR.ck (MPI: "" embedded, "mpi N" ranks),
# SIGKILL it (a rank under MPI) DELAY seconds after its first checkpoint,
# then run ARGS (or OTHER: another worker count or algorithm) with
# --restore: the dump must be $tmp/ref.bin.
tick_kill_restore() {
    local dir=$1 every=$2 mpi=$3 delay=$4 args=() more=() what=()
    shift 4
    while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1") && shift; done
    more=("${args[@]}")
    [ $# -gt 0 ] && shift && more=("$@")
    local ck="$dir.ck"
    rm -rf "$dir" "$ck" && mkdir -p "$dir"
    launch "$mpi" "${args[@]}" --checkpoint-dir "$ck" --checkpoint-every "$every" \
        "${TICK_OUTOPT:---dump}" "$dir/killed.bin" > /dev/null 2> "$dir/killed.err" &
    local pid=$! victim ended=0
    wait_commit "$ck" "$pid" || ended=1
    sleep "$delay"
    if [ -n "$mpi" ]; then
        kill_a_rank "$ck" "$pid" "${delay}s after the first checkpoint" || ended=1
    else
        victim=$(rank_pids "$ck" | head -n 1)
        { [ -n "$victim" ] && kill -9 "$victim" 2> /dev/null; } || ended=1
    fi
    wait "$pid"
    [ "$ended" = 1 ] && [ -n "$(newest_epoch "$ck")" ] && echo "   (the run had ended before the kill)"
    launch "$mpi" "${more[@]}" --checkpoint-dir "$ck" --checkpoint-every "$every" \
        --restore "${TICK_OUTOPT:---dump}" "$dir/out.bin" > /dev/null 2> "$dir/err" ||
        die "restore $mpi ${more[*]}: $(head -c 800 "$dir/err")"
    cmp -s "$dir/out.bin" "$tmp/ref.bin" ||
        die "restore $mpi ${more[*]}: the dump differs from the uninterrupted run's"
    echo "   ${what[*]:-killed ${delay}s after the first checkpoint}: $(grep -o "restored checkpoint.*(tick [0-9]* of [0-9]*)" "$dir/err" || echo "no restore"), same dump"
}

# tick_kill_moments N SEED EVERY MPI ARGS... — tick_kill_restore at N seeded
# moments, 0 to 0.6 s after the first checkpoint.
tick_kill_moments() {
    local n=$1 seed=$2 every=$3 mpi=$4 m delay
    shift 4
    for m in $(seq 1 "$n"); do
        RANDOM=$((seed * 100 + m))
        delay=$(printf '0.%03d' $((600 * (m - 1) / n + RANDOM % (600 / n))))
        tick_kill_restore "$tmp/moment$m" "$every" "$mpi" "$delay" "$@"
    done
}

# tick_supervised DIR EVERY DELAY ARGS... — `tessera supervise -- tessera run
# ARGS` with checkpoints, its run killed DELAY s after the first checkpoint:
# the supervisor restarts it with --restore, and the dump is $tmp/ref.bin.
tick_supervised() {
    local dir=$1 every=$2 delay=$3 ck="$1.ck"
    shift 3
    rm -rf "$dir" "$ck" && mkdir -p "$dir"
    timeout -k 5 60 "$TESSERA" supervise -- "$TESSERA" run "$@" --checkpoint-dir "$ck" \
        --checkpoint-every "$every" --dump "$dir/out.bin" > /dev/null 2> "$dir/err" &
    local sup=$!
    wait_commit "$ck" "$sup" || die "supervised: ended before its first checkpoint"
    sleep "$delay"
    kill -9 "$(rank_pids "$ck" | head -n 1)" 2> /dev/null || die "supervised: nothing to kill"
    wait "$sup" || die "supervised: exit $?: $(head -c 800 "$dir/err")"
    grep -q "restart 1/3 with --restore" "$dir/err" || die "supervised: no restart: $(cat "$dir/err")"
    cmp -s "$dir/out.bin" "$tmp/ref.bin" || die "supervised: the dump differs"
    echo "   supervised: $(grep -o "restored checkpoint.*(tick [0-9]* of [0-9]*)" "$dir/err"), same dump"
}
