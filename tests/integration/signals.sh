#!/usr/bin/env bash
# SIGTERM/SIGINT during a run: every rank stops through the normal path, the
# exit status is non-zero, and no output file (nor temporary) is left behind.
set -uo pipefail
: "${TESSERA:?}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

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
    for _ in $(seq 1 200); do
        grep -q "iteration" "$dir/err" 2> /dev/null && break
        sleep 0.05
    done
    grep -q "iteration" "$dir/err" || { kill -9 $pid; fail "$* never started iterating"; }
    kill -"$sig" $pid
    local rc=0
    timeout 30 tail --pid=$pid -f /dev/null || { kill -9 $pid; fail "$* did not stop after SIG$sig"; }
    wait $pid || rc=$?
    [ "$rc" -ne 0 ] || fail "$*: exit 0 after SIG$sig"
    [ -z "$(ls -A "$dir/out")" ] || fail "$*: left files behind: $(ls -A "$dir/out")"
    # mpirun may drop a rank's last stderr line when it tears the job down
    if [ "$1" != mpirun ] && ! grep -q "interrupted" "$dir/err"; then
        cat "$dir/err" >&2
        fail "$*: no 'interrupted' message"
    fi
    echo "ok: SIG$sig -> exit $rc, nothing left behind: $*"
}

interrupt TERM "$TESSERA" run pagerank --workers 2
interrupt INT "$TESSERA" run pagerank --workers 1
. "$(dirname "$0")/mpi_lib.bash"
if mpi_usable; then
    interrupt TERM mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run pagerank --workers 1
fi
