#!/bin/bash
# pagerank_long.sh (long tier) — `tessera run pagerank` on larger generated
# graphs (rmat:14, web:20000) with 1, 2 and 4 workers embedded and, with MPI,
# mpirun -np 2, 3 and 4 (one worker each) plus -np 2 with two workers, each
# within 1e-12 relative of the sequential reference ref_pagerank.py.
#
# Environment: TESSERA (the CLI), TESS_SRC, TESS_HAVE_MPI=0|1.  Exits 77
# (skipped) without TESSERA, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"
[ "$MPI" = 1 ] || echo "-- MPI runs skipped (TESS_HAVE_MPI=${TESS_HAVE_MPI:-unset} or no mpirun)"

# check LABEL REFFILE COMMAND-PREFIX... -- PAGERANK-ARGS...
check() {
    local label=$1 ref=$2 prefix=()
    shift 2
    while [ "$1" != -- ]; do
        prefix+=("$1")
        shift
    done
    shift
    local out="$tmp/out_$label.txt"
    echo "-- $label"
    ${prefix[@]+"${prefix[@]}"} "$TESSERA" run pagerank "$@" --quiet --output "$out" \
        >"$tmp/stdout" 2>"$tmp/stderr" ||
        die "$label: exit $? -- stderr: $(head -c 600 "$tmp/stderr")"
    local msg
    msg=$(python3 "$CMP" --tol 1e-12 "$out" "$ref" 2>&1) || die "$label: $msg"
    echo "   $msg"
    rm -f "$out"
}

for spec in rmat:14 web:20000; do
    name=${spec%%:*}
    g="$tmp/$name.txt"
    echo "-- tessera gen $spec; python reference"
    "$TESSERA" gen "$spec" "$g" || die "tessera gen $spec failed"
    python3 "$REF" "$g" --output "$tmp/$name.ref" || die "ref_pagerank.py on $spec failed"
    for w in 1 2 4; do
        check "${name}_w$w" "$tmp/$name.ref" -- --graph "$g" --workers "$w"
    done
    check "${name}_gen_w2" "$tmp/$name.ref" -- --gen "$spec" --workers 2
    [ $MPI = 1 ] || continue
    for np in 2 3 4; do
        check "${name}_np$np" "$tmp/$name.ref" \
            mpirun -np "$np" --oversubscribe --bind-to none -- --graph "$g" --workers 1
    done
    check "${name}_np2_w2" "$tmp/$name.ref" \
        mpirun -np 2 --oversubscribe --bind-to none -- --gen "$spec" --workers 2
done
echo "pagerank_long.sh: all checks passed"
