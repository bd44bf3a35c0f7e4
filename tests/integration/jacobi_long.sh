#!/usr/bin/env bash
# jacobi_long.sh — the full cross-product of jacobi.sh (long tier): every
# algorithm setting x workers {1,2,4} x five latency profiles x with/without
# re-partitioning embedded, and every setting x {-np 2, -np 4} x two
# profiles x with/without re-partitioning under MPI (mpirun costs ~0.5 s a
# run); every dump bitwise equal to the sequential loop.
set -u
. "$(dirname "$0")/lib.sh"
REFBIN="${TESS_BUILD:-$TESS_SRC/build}/tests/integration/jacobi_ref"
R=31 C=23 T=30
"$REFBIN" $R $C $T "$tmp/ref.bin" || die "reference failed"
failures=0 runs=0
check() {
    rm -f "$tmp/out.bin"
    runs=$((runs + 1))
    if ! "$@" > /dev/null 2> "$tmp/stderr" || ! cmp -s "$tmp/out.bin" "$tmp/ref.bin"; then
        echo "FAIL: $*: $(head -c 200 "$tmp/stderr")" >&2
        failures=$((failures + 1))
    fi
}
ALGS=("--alg bsp" "--alg local")
for d in 1 2 10; do ALGS+=("--alg sched --depth $d"); done
for km in "1 0" "1 2" "2 3" "3 5" "5 9"; do
    set -- $km
    ALGS+=("--alg repl --period $1 --layers $2")
    for d in 1 2 10; do ALGS+=("--alg combined --depth $d --period $1 --layers $2"); done
done
JITTERS=("none" "cloud --seed 1" "cloud --seed 2" "modern --seed 3" "ec2-2011 --seed 9")
for a in "${ALGS[@]}"; do
    case "$a" in *"--period 5"*) rp="--repart-every 10" ;; *"--period 3"*) rp="--repart-every 6" ;;
        *) rp="--repart-every 4" ;; esac
    for j in "${JITTERS[@]}"; do
        for r in "" "$rp"; do
            for w in 1 2 4; do
                check "$TESSERA" run jacobi --rows $R --cols $C --ticks $T --quiet \
                    --dump "$tmp/out.bin" $a --jitter $j --workers $w $r
            done
            if [ "$MPI" = 1 ] && { [ "$j" = none ] || [ "$j" = "cloud --seed 1" ]; }; then
                for np in 2 4; do
                    for w in 1; do
                        check mpi $np "$TESSERA" run jacobi --rows $R --cols $C --ticks $T \
                            --quiet --dump "$tmp/out.bin" $a --jitter $j --workers $w $r
                    done
                done
            fi
        done
    done
done
echo "jacobi_long: $runs runs compared bitwise, $failures failure(s)"
[ $failures = 0 ]
