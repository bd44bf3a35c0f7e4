#!/usr/bin/env bash
# workqueue_long.sh (long tier) — the work queue killed with SIGKILL at ten
# seeded moments after a checkpoint taken while processing, each rerun by
# `tessera supervise` with --restore: every item must be processed exactly
# once, with the report of an undisturbed run.  The seed picks the delay
# (0-399 ms after the first such checkpoint) and the rank killed; the runs
# alternate between mpirun -np 3, mpirun -np 2 and embedded (without MPI:
# embedded only), and vary the checkpoint points (every item, every 7).
# A failure prints the seed: `kill_run SEED NP` in workqueue_lib.bash
# reproduces it.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
WQ_ITEMS=40000
. "$(dirname "$0")/workqueue_lib.bash"

wq --workers 2 --output "$tmp/ref.txt" || die "reference run: exit $?"
report_ok "$tmp/ref.txt" || die "reference run: $(cat "$tmp/ref.txt")"

failures=0
for seed in 101 102 103 104 105 106 107 108 109 110; do
    case $((seed % 3)) in
        0) np=3 ;;
        1) np=2 ;;
        *) np=0 ;;
    esac
    [ "$MPI" = 1 ] || np=0
    extra=()
    [ $((seed % 2)) = 0 ] && extra=(--point-every 7)
    kill_run "$seed" "$np" "${extra[@]}" || failures=$((failures + 1))
done
[ "$failures" = 0 ] || die "$failures of 10 killed runs did not recover"
echo "workqueue_long: 10 killed runs recovered"
