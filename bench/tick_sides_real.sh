#!/usr/bin/env bash
# tick_sides_real.sh — computing ahead per side with REAL compute (not the
# virtual clock): alternating rounds of the inner region (TESS_TICK_SIDES=off)
# and per side (TESS_TICK_SIDES=on, the default), both refining a version
# computed ahead only when it is next (TESS_TICK_REFINE=next), and per side
# refining on every arrival (TESS_TICK_REFINE=every, the default since
# 2026-11-29), the same seed for every mode of a round and the mode order
# rotated per round, since the machine is shared and noisy.
# Prints, per configuration and mode, the median ticks/s, the median of each
# round's ratio to the inner region's, and the median CPU seconds and ratio
# (tick_real_lib.bash).
#
#   bench/tick_sides_real.sh [BIN] [ROUNDS] [WORKERS]
set -euo pipefail
# shellcheck source=bench/tick_real_lib.bash
. "$(dirname "$0")/tick_real_lib.bash"
real_args 5 4 "$@"

configs=(
    "jacobi-sched-d4|jacobi --rows 800 --cols 800 --ticks 300 --alg sched --depth 4"
    "fish-sched-d2|fish --fish 8000 --informed 0.1 --ticks 150 --alg sched --depth 2"
    "fish-combined|fish --fish 8000 --informed 0.1 --ticks 150 --alg combined --depth 2 --period 2 --layers 3"
)
modes=(inner sides every)
mode_env() { # inner: SIDES=off; sides and every per side; every refines on every arrival
    local sides=on refine=next
    [ "$1" = inner ] && sides=off
    [ "$1" = every ] && refine=every
    echo "TESS_TICK_SIDES=$sides TESS_TICK_REFINE=$refine"
}

real_rounds
real_summary inner
