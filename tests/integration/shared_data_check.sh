#!/bin/bash
# shared_data_check.sh — PageRank on the real graphs in the shared data
# directory (SHARED_DATA, else ../shared/data relative to TESS_SRC): for every
# *.gz edge list there, `tessera run pagerank` with 1 and 2 workers must agree
# with the sequential reference ref_pagerank.py within 1e-12 relative.
# Exits 77 (skipped) when the directory or the CLI is missing.
#
# Environment: TESSERA (default TESS_SRC/build/tessera), TESS_SRC, SHARED_DATA.
set -u
: "${TESS_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TESSERA:=$TESS_SRC/build/tessera}"
. "$(dirname "$0")/lib.sh"
DATA="${SHARED_DATA:-$TESS_SRC/../shared/data}"
if [ ! -d "$DATA" ]; then
    echo "SKIP: no shared data directory at $DATA" >&2
    exit 77
fi
shopt -s nullglob
graphs=("$DATA"/*.gz)
if [ ${#graphs[@]} = 0 ]; then
    echo "SKIP: no .gz graphs in $DATA" >&2
    exit 77
fi
for g in "${graphs[@]}"; do
    name=$(basename "$g" .gz)
    echo "-- $name: python reference"
    python3 "$REF" "$g" --output "$tmp/$name.ref" || die "ref_pagerank.py failed on $g"
    for w in 1 2; do
        echo "-- $name: tessera run pagerank --workers $w"
        "$TESSERA" run pagerank --graph "$g" --workers "$w" --quiet \
            --output "$tmp/$name.w$w" >"$tmp/stdout" 2>"$tmp/stderr" ||
            die "$name, $w workers: exit $? -- stderr: $(head -c 600 "$tmp/stderr")"
        msg=$(python3 "$CMP" --tol 1e-12 "$tmp/$name.w$w" "$tmp/$name.ref" 2>&1) ||
            die "$name, $w workers: $msg"
        echo "   $msg"
    done
done
echo "shared_data_check.sh: all checks passed"
