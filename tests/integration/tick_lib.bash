# tick_lib.bash — what the tick-face scripts (jacobi.sh, pagerank_tick.sh,
# pagerank_tick_long.sh) share; source it after lib.sh (not named *.sh: every
# *.sh here is registered as a test).  Gives the counter runs, DATA,
# tick_ref, same_as, close_to, and the algorithm settings every one covers.

runs=0
# The shared data directory of the real graphs (may be missing).
DATA="${SHARED_DATA:-$TESS_SRC/../shared/data}"

# tick_ref NAME — REFBIN: the sequential reference program NAME of this
# build (tests/integration/NAME.c); dies when it was not built.
tick_ref() {
    REFBIN="${TESS_BUILD:-$TESS_SRC/build}/tests/integration/$1"
    [ -x "$REFBIN" ] || die "missing $REFBIN"
}

# same_as REF WHAT CMD... — CMD writes $TICK_OUT (default $tmp/out.txt),
# which must equal REF byte for byte.
same_as() {
    local ref=$1 what=$2 out=${TICK_OUT:-$tmp/out.txt}
    shift 2
    runs=$((runs + 1))
    rm -f "$out"
    if ! "$@" > "$tmp/stdout" 2> "$tmp/stderr"; then
        fail "$what: exit $?: $(head -c 300 "$tmp/stderr")"
    elif ! cmp -s "$out" "$ref"; then
        fail "$what: ${TICK_DIFFERS:-ranks differ from the first run (not bitwise equal)}"
    fi
}

# close_to WHAT GOT REF — PageRank outputs within 1e-12 relative.
close_to() {
    local msg
    msg=$(python3 "$CMP" --tol 1e-12 "$2" "$3" 2>&1) || { fail "$1: $msg"; return; }
    echo "   $1: $msg"
}

# The settings every script covers, in this order, before its own: every
# algorithm's plain forms and replication at growing periods.
TICK_ALGS_BASIC=(
    "--alg bsp"
    "--alg local"
    "--alg sched --depth 1"
    "--alg sched --depth 2"
    "--alg sched --depth 10"
)
TICK_ALGS_REPL=(
    "--alg repl --period 1 --layers 2"
    "--alg repl --period 2 --layers 3"
    "--alg repl --period 3 --layers 5"
    "--alg repl --period 5 --layers 9"
)
