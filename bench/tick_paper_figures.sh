#!/bin/bash
# tick_paper_figures.sh — the runs behind the paper's Figures 6 (sched against
# the depth d), 8-10 (repl against the layers m, k = 1, 2, 5) and the scale-up
# figure (local and combined against the processes), at the paper's settings
# on the VIRTUAL clock: 49 processes (scale-up: 4 .. 100), 800 fish or 100x100
# Jacobi cells per process, 1 ms modelled step, 100 ticks.  Virtual-clock
# figures are what tessera's models predict, not measurements of a cluster.
#
#   bench/tick_paper_figures.sh TESSERA OUT_DIR [FIGURE ...] [-- PLOT_DIR]
#
# FIGURE: fig6, fig8, fig12 (default all three).  Under `cloud` every seed
# of SEEDS; under a fixed latency (fixed:1000, fixed:5000) and without jitter
# only the first, as every seed runs the same there (the seed drives only the
# latency model).  SEEDS (default "1 2") and
# PARALLEL (default 2) in the environment.  Runs every job with
# bench/bench_tick_matrix.sh (OUT_DIR keeps one .job/.json per run), then
# draws PLOT_DIR (default docs/figures)/tick-{depth,layers,scaleup}-APP-virtual.png
# and writes the numbers to OUT_DIR/table.txt with scripts/plot_tick_paper.py.
# About 25 minutes on this 2-core machine with both seeds.
set -eu
exe=$1 out=$2
shift 2
figs=() plots=docs/figures
while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then
        plots=$2
        break
    fi
    figs+=("$1")
    shift
done
[ ${#figs[@]} -gt 0 ] || figs=(fig6 fig8 fig12)
seeds=${SEEDS:-1 2}
here=$(cd "$(dirname "$0")" && pwd)
jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT

job() { # LABEL APP ARGS SEED
    printf '%s s%s|-|%s|%s --seed %s\n' "$1" "$4" "$2" "$3" "$4" >>"$jobs"
}
fig6() { # APP PROFILE SEED
    job "fig6 $1 $2 local" "$1" "--alg local --jitter $2" "$3"
    for d in 1 2 4 8; do
        job "fig6 $1 $2 sched d$d" "$1" "--alg sched --depth $d --jitter $2" "$3"
    done
}
fig8() { # APP PROFILE SEED K:M ...
    local app=$1 prof=$2 seed=$3 km
    shift 3
    job "fig8 $app $prof local" "$app" "--alg local --jitter $prof" "$seed"
    for km in "$@"; do
        job "fig8 $app $prof repl k${km%:*}m${km#*:}" "$app" \
            "--alg repl --period ${km%:*} --layers ${km#*:} --jitter $prof" "$seed"
    done
}
fig12() { # APP PROFILE SEED WORKERS ...
    local app=$1 prof=$2 seed=$3 w comb="--depth 8 --period 8 --layers 14"
    shift 3
    [ "$app" = fish ] && comb="--depth 4 --period 2 --layers 3"
    for w in "$@"; do
        job "fig12 $app $prof local w$w" "$app:$w" "--alg local --jitter $prof" "$seed"
        job "fig12 $app $prof combined w$w" "$app:$w" "--alg combined $comb --jitter $prof" "$seed"
    done
}
layers_jacobi="1:0 1:1 1:2 1:3 1:5 1:7 2:1 2:3 2:5 2:7 2:9 2:14 5:4 5:5 5:7 5:9 5:14"
layers_fish="1:1 1:2 1:3 1:4 2:1 2:2 2:3 2:5 5:4 5:5 5:7"
first=${seeds%% *}
for f in "${figs[@]}"; do
    for s in $seeds; do
        case $f in
        fig6)
            for app in jacobi fish; do
                fig6 "$app" cloud "$s"
                [ "$s" = "$first" ] && fig6 "$app" fixed:1000 "$s"
            done
            ;;
        fig8)
            # shellcheck disable=SC2086
            fig8 jacobi cloud "$s" $layers_jacobi
            # shellcheck disable=SC2086
            fig8 fish cloud "$s" $layers_fish
            if [ "$s" = "$first" ]; then
                # shellcheck disable=SC2086
                fig8 jacobi fixed:5000 "$s" $layers_jacobi
                # shellcheck disable=SC2086
                fig8 fish fixed:5000 "$s" $layers_fish
            fi
            ;;
        fig12)
            fig12 jacobi cloud "$s" 4 9 16 25 36 49 64 81 100
            fig12 fish cloud "$s" 4 16 36 49 64 100
            if [ "$s" = "$first" ]; then
                fig12 jacobi none "$s" 4 9 16 25 36 49 64 81 100
                fig12 fish none "$s" 4 16 36 49 64 100
            fi
            ;;
        *)
            echo "tick_paper_figures.sh: unknown figure $f (fig6, fig8, fig12)" >&2
            exit 2
            ;;
        esac
    done
done
"$here/bench_tick_matrix.sh" "$exe" "$jobs" "$out" "${PARALLEL:-2}" 1
python3=python3
[ -x /usr/bin/python3 ] && python3=/usr/bin/python3
"$python3" "$here/../scripts/plot_tick_paper.py" --runs "$out" --out "$plots" --table "$out/table.txt"
