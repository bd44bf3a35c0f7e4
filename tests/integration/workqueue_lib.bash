# workqueue_lib.bash — what workqueue.sh and workqueue_long.sh share; source
# it after lib.sh (not named *.sh: every *.sh here is registered as a test).
# Gives wq (a run with the test's item set), report_ok FILE, newest_epoch
# DIR, wait_epoch, rank_pid DIR RANK, kill_run (a supervised run in which one
# rank is killed with SIGKILL at a seeded moment after a checkpoint), and an
# EXIT trap that also kills what a failed check left running.

WQ_ITEMS=${WQ_ITEMS:-30000}
WQ_SEED=${WQ_SEED:-7}
WQ_WORK=${WQ_WORK:-50}

wq() { "$TESSERA" run workqueue --items "$WQ_ITEMS" --seed "$WQ_SEED" --work "$WQ_WORK" --quiet "$@"; }

# report_ok FILE: every item exactly once, every bucket's checksum right.
report_ok() {
    grep -qx "processed exactly once: $WQ_ITEMS/$WQ_ITEMS (never: 0, more than once: 0)" "$1" &&
        grep -qx "verdict: OK" "$1"
}

# The highest N of a committed DIR/epoch-N (not .tmp/.old/.del), or -1.
newest_epoch() {
    local n=-1 d
    for d in "$1"/epoch-*; do
        [[ "$d" =~ /epoch-([0-9]+)$ ]] || continue
        local e=$((10#${BASH_REMATCH[1]}))
        [ "$e" -gt "$n" ] && n=$e
    done
    echo "$n"
}

# wait_epoch DIR MIN SECONDS [PID]: until a committed epoch >= MIN exists
# (0), or the time is up or process PID has ended (1).
wait_epoch() {
    local deadline=$((SECONDS + $3))
    while [ "$SECONDS" -lt "$deadline" ]; do
        [ "$(newest_epoch "$1")" -ge "$2" ] && return 0
        [ -n "${4:-}" ] && ! kill -0 "$4" 2> /dev/null && return 1
        sleep 0.02
    done
    return 1
}

# The pid of MPI rank RANK (or, RANK = -1, the embedded process) of the
# workqueue run writing checkpoints to DIR; empty if none.  The command lines
# of mpirun and the supervisor match too: only the app has "run" as argv[1],
# and only ranks carry OMPI_COMM_WORLD_RANK.
rank_pid() {
    local dir=$1 rank=$2 pid
    for pid in $(pgrep -f -- "run workqueue .*--checkpoint-dir $dir( |$)"); do
        # argv[1] is "run" for the app, "supervise" for its supervisor
        local argv1
        argv1=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2> /dev/null | sed -n 2p)
        [ "$argv1" = run ] || continue
        # grep reads the file itself: under pipefail `tr | grep -q` fails
        # when grep quits on its match before tr's last write (SIGPIPE: 25
        # of 500 with a 100 KB environment; with a few KB, when tr is
        # preempted between writes).  The likely cause of "rank 1 not found"
        # seen twice under ASan on a loaded machine, its 3 ranks alive.
        if [ "$rank" -lt 0 ] ||
            grep -qxz "OMPI_COMM_WORLD_RANK=$rank" "/proc/$pid/environ" 2> /dev/null; then
            echo "$pid"
            return 0
        fi
    done
}

# kill_run SEED NP [EXTRA...]: under `tessera supervise`, run the work queue
# on NP ranks (NP = 0: embedded, 2 workers) with periodic checkpoints; once a
# checkpoint taken while processing has committed (epoch >= 2; epoch 1 is the
# barrier after loading), wait a seeded 0-399 ms and kill -9 a seeded rank.
# The supervised rerun with --restore must finish with every item exactly
# once and the report of an undisturbed run ($tmp/ref.txt).  Returns 0 or 1
# after a FAIL line.
kill_run() {
    local seed=$1 np=$2
    shift 2
    local dir="$tmp/kill-$seed-$np" out="$tmp/kill-$seed-$np.txt" log="$tmp/kill-$seed-$np.err"
    RANDOM=$seed
    local delay_ms=$((RANDOM % 400)) victim=-1
    [ "$np" -gt 0 ] && victim=$((RANDOM % np))
    local launch=()
    [ "$np" -gt 0 ] && launch=(mpirun -np "$np" --oversubscribe --bind-to none)
    local workers=1
    [ "$np" = 0 ] && workers=2
    rm -rf "$dir" "$out"
    timeout 120 "$TESSERA" supervise --max-restarts 2 -- "${launch[@]}" "$TESSERA" run workqueue \
        --items "$WQ_ITEMS" --seed "$WQ_SEED" --work "$WQ_WORK" --quiet --workers "$workers" \
        --item-us "${WQ_ITEM_US:-100}" --checkpoint-seconds 0.1 "$@" --output "$out" \
        --checkpoint-dir "$dir" > /dev/null 2> "$log" &
    local sup=$! what="seed $seed, np $np, rank $victim after ${delay_ms} ms $*"
    if ! wait_epoch "$dir" 2 60 "$sup"; then
        kill "$sup" 2> /dev/null
        wait "$sup"
        echo "FAIL: kill_run $what: no checkpoint while processing; stderr: $(head -c 600 "$log")" >&2
        return 1
    fi
    sleep "$(printf '0.%03d' "$delay_ms")"
    local pid
    pid=$(rank_pid "$dir" "$victim")
    if [ -z "$pid" ]; then
        wait "$sup"
        echo "FAIL: kill_run $what: the run ended before the kill (make it longer)" >&2
        return 1
    fi
    local epoch
    epoch=$(newest_epoch "$dir")
    kill -9 "$pid"
    local rc=0
    wait "$sup" || rc=$?
    local restarts
    restarts=$(grep -c "restart [0-9]*/2 with --restore" "$log")
    if [ "$rc" != 0 ] || ! report_ok "$out" || ! cmp -s "$out" "$tmp/ref.txt"; then
        echo "FAIL: kill_run $what: exit $rc; report: $(cat "$out" 2> /dev/null)" >&2
        echo "  stderr: $(head -c 1500 "$log")" >&2
        return 1
    fi
    # The kill falls within 0.4 s of the first periodic checkpoint, in a
    # processing phase of more than a second: the restore must resume kernels.
    if [ "$restarts" != 1 ] || ! grep -q "workqueue: restored epoch [0-9]* (taken while processing)" "$log"; then
        echo "FAIL: kill_run $what: $restarts restarts, wanted 1 from a checkpoint taken while processing" >&2
        echo "  stderr: $(head -c 1500 "$log")" >&2
        return 1
    fi
    echo "ok: $what (killed at epoch $epoch; $(grep -o 'restored epoch [0-9]*' "$log"))"
}

# Processes this script started and left running (a failed check between a
# start and its wait): every process whose command line names $tmp, which
# is unique to this script.
wq_kill_leftovers() {
    local pids
    pids=$(pgrep -f -- "$tmp/" 2> /dev/null | grep -vx "$$")
    [ -n "$pids" ] && kill -9 $pids 2> /dev/null
    return 0
}
trap 'wq_kill_leftovers; rm -rf "$tmp"' EXIT
