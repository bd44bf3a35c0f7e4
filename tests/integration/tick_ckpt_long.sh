#!/usr/bin/env bash
# tick_ckpt_long.sh (long tier) — tick_ckpt.sh's kill-and-restore at many
# moments: Jacobi and fish under every algorithm (cloud latency), each killed
# with SIGKILL at 4 seeded moments after its first checkpoint and restored
# under the next algorithm in the list with another worker count;
# pagerank-tick the same under two algorithms; fish under `mpirun -np 2` and
# `-np 3` when MPI is usable.  Every
# --dump must be bitwise the uninterrupted run's.
#
# Environment: TESSERA, TESS_SRC; CKPT_KILL_SEED (default 1).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_lib.bash"
. "$(dirname "$0")/tick_ckpt_lib.bash"
tick_ckpt_setup

ALGS=("--alg bsp" "--alg local" "--alg sched --depth 3" "--alg repl --period 3 --layers 4"
    "--alg combined --depth 2 --period 2 --layers 3" "--alg auto")

# sweep NAME EVERY BASE... — BASE under every algorithm, restored under the next.
sweep() {
    local name=$1 every=$2 i alg next w m delay
    shift 2
    for i in "${!ALGS[@]}"; do
        alg=${ALGS[i]}
        next=${ALGS[$(((i + 1) % ${#ALGS[@]}))]}
        w=$((2 + i % 2))
        step "$name: $alg, 2 workers; restored with $next, $w workers"
        # shellcheck disable=SC2086 # the algorithm settings are word lists
        tick_reference "$@" --workers 2 $alg
        for m in 1 2 3 4; do
            RANDOM=$((SEED * 1000 + i * 10 + m))
            delay=$(printf '0.%03d' $((150 * (m - 1) + RANDOM % 150)))
            # shellcheck disable=SC2086
            tick_kill_restore "$tmp/$name$i.$m" "$every" "" "$delay" "$@" --workers 2 $alg \
                -- "$@" --workers "$w" $next
        done
    done
}

sweep jacobi 100 jacobi --rows 200 --cols 200 --ticks 2000 --jitter cloud --quiet
sweep fish 10 fish --fish 600 --informed 0.1 --ticks 60 --jitter cloud --quiet --repart-every 12
ALGS=("--alg local" "--alg combined --depth 2 --period 2 --layers 3")
TICK_OUTOPT=--output sweep pagerank-tick 20 pagerank-tick --gen rmat:12 --ticks 300 --quiet

if [ "$MPI" = 1 ]; then
    FISH=(fish --fish 600 --informed 0.1 --ticks 60 --alg sched --depth 2 --quiet)
    step "fish: mpirun -np 2 and -np 3, a rank killed, then --restore"
    tick_reference "${FISH[@]}" --workers 3
    for m in 1 2 3; do
        tick_kill_restore "$tmp/fmpi2.$m" 10 "mpi 2" "0.$((m * 15))" "${FISH[@]}" --workers 1
        tick_kill_restore "$tmp/fmpi3.$m" 10 "mpi 3" "0.$((m * 15))" "${FISH[@]}" --workers 1
    done
fi
echo "PASS"
