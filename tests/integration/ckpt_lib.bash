# ckpt_lib.bash — what ckpt_cli.sh, ckpt_kill.sh and ckpt_kill_long.sh share;
# source it after lib.sh (not named *.sh: every *.sh here is registered as a
# test).  Gives app_run (a pagerank or kmeans run writing its outputs to a
# directory), same_output, epochs/newest_epoch/prev_epoch of a checkpoint
# directory, flip_byte, and kill_setup/kill_moments for ckpt_kill*.sh.

# app_run APP OUTDIR [-np N] ARGS... — `tessera run APP ARGS` (under
# `mpirun -np N` when given) with its outputs in OUTDIR (pagerank: ranks.txt;
# kmeans: centres.txt and assign.txt; nbody: particles.txt), stderr in OUTDIR/err, the exit status
# in $rc.
app_run() {
    local app=$1 out=$2 launcher=()
    shift 2
    if [ "${1:-}" = -np ]; then
        launcher=(mpirun -np "$2" --oversubscribe --bind-to none)
        shift 2
    fi
    rm -rf "$out" && mkdir -p "$out"
    local outputs=(--output "$out/ranks.txt")
    [ "$app" = kmeans ] && outputs=(--output "$out/centres.txt" --assignments "$out/assign.txt")
    [ "$app" = nbody ] && outputs=(--output "$out/particles.txt")
    rc=0
    timeout -k 5 120 ${launcher[@]+"${launcher[@]}"} "$TESSERA" run "$app" "$@" "${outputs[@]}" \
        > "$out/stdout" 2> "$out/err" || rc=$?
}

# same_output APP GOT_DIR REF_DIR — PageRank: ranks within 1e-12 relative;
# k-means: centres and assignments, n-body: particles, byte for byte.  Prints what differs.
same_output() {
    if [ "$1" = pagerank ]; then
        python3 "$CMP" --tol 1e-12 "$2/ranks.txt" "$3/ranks.txt" > /dev/null
    elif [ "$1" = nbody ]; then
        cmp "$2/particles.txt" "$3/particles.txt"
    else
        cmp "$2/centres.txt" "$3/centres.txt" && cmp "$2/assign.txt" "$3/assign.txt"
    fi
}

# epochs DIR — the committed epoch numbers of a checkpoint directory, ascending.
epochs() {
    local d
    for d in "$1"/epoch-*; do
        [[ "$d" =~ /epoch-([0-9]+)$ ]] && echo $((10#${BASH_REMATCH[1]}))
    done | sort -n
}
newest_epoch() { epochs "$1" | tail -n 1; }
prev_epoch() { epochs "$1" | tail -n 2 | head -n 1; }

# epoch_dir DIR N — the directory of committed epoch N.
epoch_dir() {
    local d
    for d in "$1"/epoch-*; do
        [[ "$d" =~ /epoch-([0-9]+)$ ]] && [ $((10#${BASH_REMATCH[1]})) = "$2" ] && echo "$d"
    done
}

# flip_byte FILE — invert the bits of the byte in the middle of FILE.
flip_byte() {
    python3 - "$1" << 'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0xFF
open(p, "wb").write(bytes(b))
PY
}

# restored_epoch ERRFILE — E from "APP: restored checkpoint epoch E (...)", or
# "afresh" after "no checkpoint ...; starting afresh", or "none".
restored_epoch() {
    local line
    line=$(grep -Eo "restored checkpoint epoch [0-9]+" "$1" | tail -n 1)
    if [ -n "$line" ]; then
        echo "${line##* }"
    elif grep -q "starting afresh" "$1"; then
        echo afresh
    else
        echo none
    fi
}

# kill_setup — what ckpt_kill.sh and ckpt_kill_long.sh start with: skip
# (77) without MPI, end every process the test started on exit, and SEED
# from CKPT_KILL_SEED (default 1).
kill_setup() {
    [ "$MPI" = 1 ] || { echo "SKIP: needs mpirun (TESS_HAVE_MPI=${TESS_HAVE_MPI:-unset})" >&2; exit 77; }
    trap 'kill_leftovers; rm -rf "$tmp"' EXIT
    SEED=${CKPT_KILL_SEED:-1}
}

# ---------------------------------------------------------------- kill -9
# kill_moments APP MOMENTS KILLS SEED ARGS... — MOMENTS supervised runs of
#   tessera supervise --max-restarts 3 -- mpirun -np 3 ... tessera run APP ARGS
#       --checkpoint-dir D --checkpoint-every 2
# in each of which one rank, chosen by seed, is killed with SIGKILL at a
# seeded moment of the run; mpirun then fails the job and the supervisor
# reruns it with --restore.  With KILLS = 2 a rank of the restarted run is
# killed too, after another seeded delay.  Each job must exit 0 with the
# output of the failure-free run (PageRank within 1e-12, k-means exactly).
# Prints one line per moment: when each rank was killed, the restarts and
# the epochs restored.
#
# The moments are those of a failure-free run, measured first: its duration
# T (mpirun's start included) and the time F its first checkpoint committed.
# Moment m of M is at a seeded point of the m-th of M equal slices of
# [0.05 T, 0.8 T] (the last fifth is mostly mpirun's teardown), so that even
# 3 moments cover startup and loading, the iterations and the last
# checkpoints.  A moment before F is a delay from the start; one after F is
# a delay from the killed job's own first commit, so that a loaded machine
# does not push every kill before it.  A moment that finds the job already
# ended is retried with half the delay.  Needs MPI (the caller skips
# without it).
kill_moments() {
    local app=$1 moments=$2 kills=$3 seed=$4
    shift 4
    local args=("$@" --workers 1 --quiet) R="$tmp/kill_$app"
    rm -rf "$R" && mkdir -p "$R"
    local ms first
    time_reference_run "$app" "$R"
    app_run "$app" "$R/plain" -np 3 "${args[@]}"
    [ "$rc" = 0 ] || die "$app plain run: exit $rc: $(head -c 800 "$R/plain/err")"
    same_output "$app" "$R/ref" "$R/plain" ||
        die "$app: checkpointing changed the output of a failure-free run"
    echo "   failure-free run: $ms ms, first checkpoint at $first ms, epochs $(epochs "$R/ref_ck" | tr '\n' ' ')"
    local m k at kill_specs span=$((ms * 3 / 4))
    for m in $(seq 1 "$moments"); do
        RANDOM=$((seed * 1000 + kills * 100 + m))
        at=$((ms / 20 + span * (1000 * (m - 1) + RANDOM % 1000) / (1000 * moments)))
        if [ "$at" -lt "$first" ]; then kill_specs=("start:$at"); else kill_specs=("commit:$((at - first))"); fi
        for k in $(seq 2 "$kills"); do
            kill_specs+=("restart:$((ms / 20 + RANDOM % (span + 1)))")
        done
        for _ in 1 2 3; do
            kill_one_moment "$app" "$R" "$m" "${kill_specs[@]}" && break
            for k in "${!kill_specs[@]}"; do
                kill_specs[k]="${kill_specs[k]%%:*}:$((${kill_specs[k]#*:} / 2))"
            done
        done
    done
}

# time_reference_run APP R — the failure-free run with checkpoints (output in
# R/ref): sets ms (its duration) and first (when its first epoch committed).
time_reference_run() {
    local t0 now
    t0=$(date +%s%N)
    first=""
    app_run "$1" "$2/ref" -np 3 "${args[@]}" --checkpoint-dir "$2/ref_ck" --checkpoint-every 2 &
    local pid=$!
    while kill -0 "$pid" 2> /dev/null; do
        now=$(date +%s%N)
        if [ -z "$first" ] && [ -n "$(newest_epoch "$2/ref_ck")" ]; then
            first=$(((now - t0) / 1000000))
        fi
        sleep 0.01
    done
    rc=0
    wait "$pid" || rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$rc" = 0 ] || die "$1 failure-free run: exit $rc: $(head -c 800 "$2/ref/err")"
    [ -n "$first" ] || die "$1 failure-free run: no checkpoint committed"
}

# kill_one_moment APP R MOMENT KILL... — one supervised job; each KILL is
# ANCHOR:MS, a SIGKILL to one rank MS milliseconds after the ANCHOR: start
# (of the job), commit (the job's first committed epoch) or restart (the
# supervisor's next restart).  0, or 1 when the job had ended before a kill
# (then only its success was checked).
kill_one_moment() {
    local app=$1 R=$2 m=$3
    shift 3
    local out="$R/m$m" D="$R/m$m.ck"
    rm -rf "$out" "$D" && mkdir -p "$out"
    local outputs=(--output "$out/ranks.txt")
    [ "$app" = kmeans ] && outputs=(--output "$out/centres.txt" --assignments "$out/assign.txt")
    [ "$app" = nbody ] && outputs=(--output "$out/particles.txt")
    timeout -k 5 $((4 * ms / 1000 + 120)) "$TESSERA" supervise --max-restarts 3 -- \
        mpirun -np 3 --oversubscribe --bind-to none \
        "$TESSERA" run "$app" "${args[@]}" "${outputs[@]}" --checkpoint-dir "$D" \
        --checkpoint-every 2 > "$out/stdout" 2> "$out/err" &
    local sup=$! what=() missed=0 i=0 spec delay
    for spec in "$@"; do
        i=$((i + 1))
        delay=${spec#*:}
        case ${spec%%:*} in
        commit) wait_commit "$D" "$sup" || { missed=1 && break; } ;;
        restart) wait_restart "$out/err" $((i - 1)) "$sup" || { missed=1 && break; } ;;
        esac
        sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
        kill_a_rank "$D" "$sup" "${spec/:/ + } ms" || { missed=1 && break; }
    done
    rc=0
    wait "$sup" || rc=$?
    local restarts restored
    restarts=$(grep -c "restart [0-9]*/3 with --restore" "$out/err")
    restored=$(grep -Eo "(restored checkpoint epoch [0-9]+ \((iteration|step) [0-9]+ of [0-9]+\)|starting afresh)" \
        "$out/err" | sed 's/restored checkpoint //' | paste -sd, -)
    echo "   moment $m: $(IFS=,; echo "${what[*]}"); exit $rc, $restarts restart(s), restore: ${restored:-none}"
    [ "$rc" = 0 ] || die "$app moment $m: supervised job failed (exit $rc); stderr: $(grep -v '^\s*$' "$out/err" | head -c 1500)"
    [ "$restarts" -ge $((i - missed)) ] ||
        die "$app moment $m: $((i - missed)) rank(s) killed but $restarts restart(s); stderr: $(head -c 800 "$out/err")"
    local msg
    msg=$(same_output "$app" "$out" "$R/ref" 2>&1) ||
        die "$app moment $m: output differs from the failure-free run: $msg"
    rm -rf "$D"
    [ "$missed" = 0 ]
}

# wait_commit DIR SUP — until DIR holds a committed epoch (0), or the
# supervisor has ended (1).
wait_commit() {
    while [ -z "$(newest_epoch "$1")" ]; do
        kill -0 "$2" 2> /dev/null || return 1
        sleep 0.01
    done
}

# wait_restart ERRFILE N SUP — until the supervisor has reported restart N
# (0), or it has ended (1).
wait_restart() {
    while [ "$(grep -c "restart [0-9]*/3 with --restore" "$1")" -lt "$2" ]; do
        kill -0 "$3" 2> /dev/null || return 1
        sleep 0.02
    done
}

# wait_mpi_init PID — until process PID has finished MPI_Init: its progress
# thread names itself tess-progress just after (up to 20 s; then it is
# killed anyway).  Prints the milliseconds waited.
wait_mpi_init() {
    local waited=0
    while [ $waited -lt 20000 ] && [ -d "/proc/$1" ] &&
        ! grep -qx tess-progress /proc/"$1"/task/*/comm 2> /dev/null; do
        sleep 0.01
        waited=$((waited + 10))
    done
    echo $waited
}

# rank_young_ms PID — milliseconds until process PID is 300 ms old (0 if it
# is, or is gone).
rank_young_ms() {
    local start hz up age
    start=$(awk '{print $22}' "/proc/$1/stat" 2> /dev/null) || { echo 0; return; }
    [ -n "$start" ] || { echo 0; return; }
    hz=$(getconf CLK_TCK)
    up=$(awk '{print $1}' /proc/uptime)
    age=$(awk -v u="$up" -v s="$start" -v h="$hz" 'BEGIN { printf "%d", (u - s / h) * 1000 }')
    [ "$age" -lt 300 ] && echo $((300 - age)) || echo 0
}

# kill_a_rank DIR SUP WHEN — SIGKILL to a seeded one of the ranks of the
# job whose checkpoint directory is DIR (waiting up to 5 s for them to
# exist); appends what happened (at WHEN) to the caller's `what`.  1 if the
# job ended first.
kill_a_rank() {
    local pids=() tries victim rank
    for tries in $(seq 1 250); do
        mapfile -t pids < <(rank_pids "$1")
        [ "${#pids[@]}" -gt 0 ] && break
        kill -0 "$2" 2> /dev/null || break
        sleep 0.02
    done
    if [ "${#pids[@]}" = 0 ]; then
        what+=("no rank left to kill at $3 (the job had ended)")
        return 1
    fi
    victim=${pids[RANDOM % ${#pids[@]}]}
    # A rank killed inside MPI_Init can leave OpenMPI 4.1's mpirun hung
    # after it reports the abort ("PMIX ERROR: UNREACHABLE"; CI runs timed
    # out so), which no supervisor sees: kill ranks that have finished
    # starting.  Their age alone (300 ms) was not enough under ASan on a
    # loaded machine, so also wait for the progress thread's name.
    local young waited=""
    young=$(rank_young_ms "$victim")
    [ "$young" -gt 0 ] && sleep "$(printf '0.%03d' "$young")"
    young=$((young + $(wait_mpi_init "$victim")))
    [ "$young" -gt 0 ] && waited=" (+$young ms for MPI_Init)"
    rank=$(tr '\0' '\n' < "/proc/$victim/environ" 2> /dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    # No environment to read: the process is exiting (a zombie cannot be
    # killed), so this kill would not count as a failure of the job.
    if [ -z "$rank" ] || ! kill -9 "$victim" 2> /dev/null; then
        what+=("rank process $victim was already exiting at $3 (the job was ending)")
        return 1
    fi
    what+=("killed rank $rank at $3$([ "$tries" = 1 ] || echo " (+$(((tries - 1) * 20)) ms until a rank existed)")$waited")
}

# rank_pids DIR — PIDs of the `tessera run` processes (ranks, not mpirun or
# the supervisor) whose command line holds DIR.
rank_pids() {
    local pid argv
    for pid in $(pgrep -f -- "$1"); do
        mapfile -d '' -t argv < "/proc/$pid/cmdline" 2> /dev/null || continue
        [ "${argv[1]:-}" = run ] && [ "${argv[0]##*/}" = tessera ] && echo "$pid"
    done
}

# kill_leftovers — on exit: end every process this test started (their
# command lines hold $tmp), supervisor and mpirun first.
kill_leftovers() {
    local pids
    pids=$(pgrep -f -- "$tmp")
    [ -z "$pids" ] && return 0
    # shellcheck disable=SC2086 # a list of PIDs
    kill -TERM $pids 2> /dev/null
    sleep 1
    pids=$(pgrep -f -- "$tmp")
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2> /dev/null
}
