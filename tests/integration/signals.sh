#!/usr/bin/env bash
# SIGTERM/SIGINT during a run: every rank stops through the normal path, the
# exit status is non-zero, and no output file (nor temporary) is left behind.
set -uo pipefail
: "${TESSERA:?}"
. "$(dirname "$0")/lib.sh"
dir=$tmp
fail() { echo "FAIL: $*" >&2; exit 1; } # the first failure ends the script

# Start a long run, wait until it is iterating, signal it, check the aftermath.
interrupt() {
    local sig=$1; shift
    rm -rf "$dir/out"; mkdir "$dir/out"
    # Empty the log before starting: the background child truncates it only
    # when it gets to run, and until then the previous run's "iteration"
    # lines would satisfy the wait below.
    : > "$dir/err"
    "$@" --gen rmat:14 --iterations 100000 --progress --output "$dir/out/ranks.txt" \
        --metrics "$dir/out/m.json" 2> "$dir/err" &
    local pid=$!
    wait_for 200 grep -q "iteration" "$dir/err" || { kill -9 $pid; fail "$* never started iterating"; }
    kill -"$sig" $pid
    local rc=0
    timeout 30 tail --pid=$pid -f /dev/null || { kill -9 $pid; fail "$* did not stop after SIG$sig"; }
    wait $pid || rc=$?
    [ "$rc" -ne 0 ] || fail "$*: exit 0 after SIG$sig"
    [ -z "$(ls -A "$dir/out")" ] || fail "$*: left files behind: $(ls -A "$dir/out")"
    # mpirun follows its SIGTERM with SIGKILL a second later, which may cut a
    # rank's last line: each rank says it stopped as soon as it is signalled
    local said=interrupted
    [ "$1" != mpirun ] || said="SIG$sig received: stopping"
    if ! grep -q "$said" "$dir/err"; then
        cat "$dir/err" >&2
        fail "$*: no '$said' message"
    fi
    echo "ok: SIG$sig -> exit $rc, nothing left behind: $*"
}

interrupt TERM "$TESSERA" run pagerank --workers 2
interrupt INT "$TESSERA" run pagerank --workers 1
. "$(dirname "$0")/mpi_lib.bash"
if mpi_usable; then
    interrupt TERM mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run pagerank --workers 1
    # a tiles run signalled in the middle of its tiles (the journal holds a
    # tile; slowed processors leave seconds of work): every rank says so
    rm -rf "$dir/out" "$dir/ck"; mkdir "$dir/out"
    mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run texture --gen 4096:4096 \
        --processors cpu@0.05 --checkpoint-dir "$dir/ck" --output "$dir/out/t.txt" \
        > /dev/null 2> "$dir/err" &
    pid=$!
    wait_for 600 test -s "$dir/ck/tiles.data" ||
        { kill -9 $pid; fail "texture under mpirun never finished a tile"; }
    kill -TERM $pid
    rc=0; wait $pid || rc=$?
    [ "$rc" -ne 0 ] || fail "texture under mpirun: exit 0 after SIGTERM"
    [ -z "$(ls -A "$dir/out")" ] || fail "texture under mpirun: left $(ls -A "$dir/out")"
    grep -q "SIGTERM received: stopping" "$dir/err" || { cat "$dir/err" >&2; fail "texture: no message"; }
    echo "ok: SIGTERM -> exit $rc, nothing left behind: mpirun texture in its tiles"
fi

# A signal while METIS partitions (it traps SIGTERM itself and used to turn
# it into "METIS failed", exit 1): the run still ends as interrupted, with
# nothing written, whichever phase the signal lands in.
partition_interrupt() {
    local after=$1
    rm -rf "$dir/out"; mkdir "$dir/out"
    "$TESSERA" run pagerank-tick --gen rmat:17 --ticks 1 --workers 2 \
        --output "$dir/out/ranks.txt" 2> "$dir/err" &
    local pid=$! rc=0
    sleep "$after"
    kill -TERM $pid 2> /dev/null || { wait $pid; echo "skip: finished before ${after}s"; return; }
    timeout 60 tail --pid=$pid -f /dev/null || { kill -9 $pid; fail "pagerank-tick did not stop"; }
    wait $pid || rc=$?
    if [ "$rc" -eq 0 ]; then
        # The signal came as the run ended: then its output must be whole
        # (as many ranks as the summary line's tuples), never a part.
        local want got
        want=$(sed -n 's/.* ticks of \([0-9]*\) tuples.*/\1/p' "$dir/err")
        got=$(wc -l < "$dir/out/ranks.txt" 2> /dev/null || echo 0)
        [ -n "$want" ] && [ "$got" -eq "$want" ] ||
            fail "pagerank-tick SIGTERM at ${after}s: exit 0 with $got of ${want:-?} ranks written"
        echo "skip: pagerank-tick ended before SIGTERM at ${after}s took effect (exit 0, all $got ranks)"
        return
    fi
    [ "$rc" -eq 130 ] || { cat "$dir/err" >&2; fail "pagerank-tick SIGTERM at ${after}s: exit $rc, not 130"; }
    grep -q "interrupted" "$dir/err" || { cat "$dir/err" >&2; fail "pagerank-tick: no 'interrupted' message"; }
    [ -z "$(ls -A "$dir/out")" ] || fail "pagerank-tick: left files behind: $(ls -A "$dir/out")"
    echo "ok: SIGTERM at ${after}s of pagerank-tick's partitioning -> exit 130, nothing left behind"
}
partition_interrupt 0.5
partition_interrupt 1.5
