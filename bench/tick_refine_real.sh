#!/usr/bin/env bash
# tick_refine_real.sh — Algorithm 2's refinement on every arrival (the
# default) against refining a version computed ahead only once it is the
# oldest open tick (TESS_TICK_REFINE=next), with REAL compute (not the
# virtual clock), in alternating rounds (tick_real_lib.bash).  Prints, per
# configuration and mode, the median ticks/s, the median of each round's
# ratio to "next", the median CPU seconds and the median CPU ratio.
#
#   bench/tick_refine_real.sh [BIN] [ROUNDS] [WORKERS]
set -euo pipefail
# shellcheck source=bench/tick_real_lib.bash
. "$(dirname "$0")/tick_real_lib.bash"
real_args 9 4 "$@"

configs=(
    "jacobi-sched-d1|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 1"
    "jacobi-sched-d4|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 4"
    "jacobi-sched-d8|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 8"
    "jacobi1600-d4|jacobi --rows 1600 --cols 1600 --ticks 150 --alg sched --depth 4"
    "jacobi-comb|jacobi --rows 800 --cols 800 --ticks 300 --alg combined --depth 2 --period 2 --layers 3"
    "fish-sched-d4|fish --fish 8000 --informed 0.1 --ticks 150 --alg sched --depth 4"
    "fish-combined|fish --fish 8000 --informed 0.1 --ticks 150 --alg combined --depth 2 --period 2 --layers 3"
)
modes=(next every)
mode_env() { echo "TESS_TICK_REFINE=$1"; }

real_rounds
real_summary next
