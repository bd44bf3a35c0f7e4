#!/bin/bash
# pagerank_long.sh (long tier) — `tessera run pagerank` on larger generated
# graphs (rmat:14, web:20000) with 1, 2 and 4 workers embedded and, with MPI,
# mpirun -np 2, 3 and 4 (one worker each) plus -np 2 with two workers, each
# within 1e-12 relative of the sequential reference ref_pagerank.py.
#
# Environment: TESSERA (the CLI), TESS_SRC, TESS_HAVE_MPI=0|1.  Exits 77
# (skipped) without TESSERA, 1 at the first failure.
set -u
: "${TESS_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
if [ -z "${TESSERA:-}" ] || [ ! -x "$TESSERA" ]; then
    echo "SKIP: TESSERA is not set to an executable" >&2
    exit 77
fi
REF="$TESS_SRC/tests/integration/ref_pagerank.py"
CMP="$TESS_SRC/tests/integration/compare_ranks.py"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

die() {
    echo "FAIL: $*" >&2
    exit 1
}

MPI=0
if [ "${TESS_HAVE_MPI:-0}" = 1 ] && command -v mpirun >/dev/null 2>&1; then
    MPI=1
    export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}"
        export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
    fi
else
    echo "-- MPI runs skipped (TESS_HAVE_MPI=${TESS_HAVE_MPI:-unset} or no mpirun)"
fi

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
