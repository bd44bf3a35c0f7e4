#!/usr/bin/env bash
# tick_send_real.sh — per side, a round's parts that no late neighbour
# reaches sent at once (the default) against sending a round only once its
# version is full (TESS_TICK_SEND=full), with REAL compute (not the virtual
# clock), in alternating rounds (tick_real_lib.bash).  Prints, per
# configuration and mode, the median ticks/s, the median of each round's
# ratio to "full", the median CPU seconds and the median CPU ratio.
#
#   bench/tick_send_real.sh [BIN] [ROUNDS] [WORKERS]
set -euo pipefail
# shellcheck source=bench/tick_real_lib.bash
. "$(dirname "$0")/tick_real_lib.bash"
real_args 9 9 "$@"

configs=(
    "jacobi-sched-d1|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 1"
    "jacobi-sched-d4|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 4"
    "jacobi-comb|jacobi --rows 800 --cols 800 --ticks 300 --alg combined --depth 2 --period 2 --layers 3"
    "fish-sched-d1|fish --fish 8000 --informed 0.1 --ticks 150 --alg sched --depth 1"
    "fish-sched-d4|fish --fish 8000 --informed 0.1 --ticks 150 --alg sched --depth 4"
    "fish-combined|fish --fish 8000 --informed 0.1 --ticks 150 --alg combined --depth 2 --period 2 --layers 3"
)
modes=(full early)
mode_env() { echo "TESS_TICK_SEND=$1"; }

real_rounds
real_summary full
