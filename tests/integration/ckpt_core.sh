#!/usr/bin/env bash
# Checkpoints on the runtime (tests/integration/ckpt_core.c): CpBarrier and
# CpPeriodic, a rank killed with SIGKILL after a committed checkpoint, then
# --restore; the result must equal the failure-free run exactly (integer
# workload).  Embedded, mpirun -np 3, and a restore onto -np 2.
set -euo pipefail
prog="$TESS_BUILD/tests/integration/ckpt_core"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CKPT_COMMITTED_FLAG="$tmp/flag"

fail() { echo "FAIL: $*" >&2; exit 1; }

# case NAME MODE DIE_AT LAUNCH...: clean run, killed run, restore; compare.
case_run() {
    local name=$1 mode=$2 die=$3; shift 3
    local d="$tmp/$name" out
    rm -f "$CKPT_COMMITTED_FLAG"
    want=$(timeout 120 "$@" "$prog" "$mode" "$d.clean")
    [ -n "$want" ] || fail "$name: no output from the clean run"
    if timeout 120 "$@" "$prog" "$mode" "$d" --die-at "$die" > "$tmp/out" 2> "$tmp/err"; then
        fail "$name: the run meant to die exited 0"
    fi
    ls "$d" | grep -q '^epoch-' || fail "$name: no committed epoch before the kill"
    out=$(timeout 120 "$@" "$prog" "$mode" "$d" --restore 2> "$tmp/err") ||
        { cat "$tmp/err" >&2; fail "$name: restore run failed"; }
    grep -q "restored epoch" "$tmp/err" || fail "$name: nothing restored"
    [ "$out" = "$want" ] || fail "$name: '$out' after restore, '$want' without failure"
    echo "$name: $(grep -o 'restored epoch [0-9]* at [0-9]*' "$tmp/err"); $out"
}

case_run sync-embedded sync 4 env
case_run async-embedded async 2500 env
if [ "${TESS_HAVE_MPI:-0}" = 1 ] && command -v mpirun > /dev/null; then
    mpi=(mpirun -np 3 --oversubscribe --bind-to none)
    case_run sync-np3 sync 4 "${mpi[@]}"
    case_run async-np3 async 3000 "${mpi[@]}"
    # the -np 3 checkpoints restored onto two ranks and onto one
    out=$(timeout 120 mpirun -np 2 --oversubscribe --bind-to none "$prog" sync "$tmp/sync-np3" \
          --restore 2> "$tmp/err") || { cat "$tmp/err" >&2; fail "restore onto -np 2"; }
    [ "$out" = "$(timeout 60 "$prog" sync "$tmp/sync-np3.clean2")" ] || fail "restore onto -np 2: $out"
    echo "sync -np 3 -> -np 2: $out"
    out=$(timeout 120 "$prog" async "$tmp/async-np3" --restore 2> "$tmp/err") ||
        { cat "$tmp/err" >&2; fail "restore onto embedded"; }
    echo "async -np 3 -> embedded: $out"
else
    echo "mpirun not available: multi-rank cases skipped"
fi

# no checkpoint at all: restore starts afresh and says so
out=$(timeout 60 "$prog" sync "$tmp/empty" --restore 2> "$tmp/err")
grep -q "starting afresh: no usable checkpoint in $tmp/empty" "$tmp/err" || fail "no afresh message"
echo "empty directory: starts afresh"
