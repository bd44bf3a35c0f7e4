#!/usr/bin/env bash
# pagerank_tick_long.sh (long tier) — the full cross-product behind
# pagerank_tick.sh's pairwise cover: every algorithm setting x workers 1..4 x
# latency profiles x re-partitioning on/off, all bitwise equal (cmp) to the
# first run, which is checked against the sequential reference
# pagerank_tick_ref.c within 1e-12; with MPI, -np 2 and 4 x every algorithm
# x 1 and 2 workers x two latency profiles; and the larger real graph of the
# shared data directory (p2p-Gnutella31) when present.
#
# Environment: TESSERA, TESS_SRC, TESS_BUILD, TESS_HAVE_MPI=0|1, SHARED_DATA.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tick_lib.bash"
tick_ref pagerank_tick_ref
T=20


ALGS=(
    "${TICK_ALGS_BASIC[@]}"
    "--alg repl --period 1 --layers 0"
    "${TICK_ALGS_REPL[@]}"
    "--alg combined --depth 1 --period 1 --layers 0"
    "--alg combined --depth 2 --period 3 --layers 5"
    "--alg combined --depth 10 --period 5 --layers 9"
)
JITTERS=("none" "cloud --seed 1" "cloud --seed 2" "modern --seed 3")

repart_for() { # ALG -> a --repart-every value that is a multiple of its period
    case "$1" in
        *"--period 5"*) echo 5 ;;
        *"--period 3"*) echo 6 ;;
        *) echo 4 ;;
    esac
}

G="$tmp/rmat.txt"
step "tessera gen rmat:10; the sequential reference, $T ticks"
"$TESSERA" gen rmat:10 "$G" > /dev/null || die "tessera gen failed"
"$REFBIN" "$G" $T 0.85 "$tmp/ref.txt" || die "reference failed"
"$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T --workers 1 \
    --output "$tmp/base.txt" 2> "$tmp/stderr" || die "first run: $(head -c 300 "$tmp/stderr")"
close_to "local, 1 worker vs reference" "$tmp/base.txt" "$tmp/ref.txt"

run() { "$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T --output "$tmp/out.txt" "$@"; }

step "cross-product: ${#ALGS[@]} algorithm settings x workers 1-4 x ${#JITTERS[@]} latency" \
    "profiles x re-partitioning"
for a in "${ALGS[@]}"; do
    for w in 1 2 3 4; do
        for j in "${JITTERS[@]}"; do
            same_as "$tmp/base.txt" "$a --workers $w --jitter $j" run $a --workers $w --jitter $j
            rp=$(repart_for "$a")
            same_as "$tmp/base.txt" "$a --workers $w --jitter $j --repart-every $rp" \
                run $a --workers $w --jitter $j --repart-every "$rp"
        done
    done
    echo "   $a: done ($runs runs, $failures failure(s) so far)"
done

if [ "$MPI" = 1 ]; then
    step "mpirun -np 2 and 4 x every algorithm x workers 1, 2 x none/cloud"
    for np in 2 4; do
        for a in "${ALGS[@]}"; do
            for w in 1 2; do
                for j in "none" "cloud --seed 9"; do
                    same_as "$tmp/base.txt" "mpirun -np $np $a --workers $w --jitter $j" \
                        mpi $np "$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T \
                        --output "$tmp/out.txt" $a --workers $w --jitter $j
                done
            done
        done
    done
else
    echo "-- mpirun not available: MPI cases skipped"
fi

GNU="$DATA/p2p-Gnutella31.txt.gz"
if [ -r "$GNU" ]; then
    step "p2p-Gnutella31 (shared data): reference, then several algorithms"
    gzip -dc "$GNU" > "$tmp/gnu.txt" || die "cannot decompress $GNU"
    "$REFBIN" "$tmp/gnu.txt" 30 0.85 "$tmp/gnu.ref" || die "reference failed"
    "$TESSERA" run pagerank-tick --quiet --graph "$GNU" --ticks 30 --workers 4 \
        --output "$tmp/gnu.txt.out" 2> "$tmp/stderr" || die "gnutella: $(head -c 300 "$tmp/stderr")"
    close_to "p2p-Gnutella31, 4 workers" "$tmp/gnu.txt.out" "$tmp/gnu.ref"
    for a in "--alg sched --depth 10" "--alg repl --period 3 --layers 5" \
        "--alg combined --depth 2 --period 2 --layers 3"; do
        same_as "$tmp/gnu.txt.out" "p2p-Gnutella31 $a --workers 3 --jitter cloud" \
            "$TESSERA" run pagerank-tick --quiet --graph "$GNU" --ticks 30 --workers 3 $a \
            --jitter cloud --seed 4 --output "$tmp/out.txt"
    done
else
    echo "-- $GNU not found: real-graph case skipped"
fi

echo "pagerank-tick (long): $runs runs compared bitwise, $failures failure(s)"
[ $failures = 0 ]
