#!/bin/bash
# bench_tables.sh (fast tier) — smoke tests of the tables face's benches,
# `tessera bench matmul`, `bench mapreduce`, `bench scaling` and
# `bench kmeans`, not
# benchmarks: one tiny round each, the report lines, and bad options.  The peers (tessera-scalapack-mm,
# tessera-mrmpi-pagerank, tessera-mrmpi-kmeans) are built only where
# ScaLAPACK and MR-MPI are installed (scripts/deps.sh bench); without them
# the benches must say so in one line.
#
# Environment: TESSERA, TESS_SRC, TESS_HAVE_MPI=0|1.
set -u
. "$(dirname "$0")/lib.sh"
BIN=$(dirname "$TESSERA")

step "bench matmul: one tiny round"
ranks=1
# Two ranks under a sanitizer cost a minute for the same driver code.
[ "$MPI" = 1 ] && [ $SANITIZED = 0 ] && ranks=1,2
"$TESSERA" bench matmul --sizes 200 --ranks $ranks --rounds 1 --nb 64 --tmpdir "$tmp" \
    --json "$tmp/mm.jsonl" > "$tmp/mm.out" 2> "$tmp/mm.err" ||
    die "bench matmul: exit $?: $(head -c 600 "$tmp/mm.err")"
grep -q "^   200   1 " "$tmp/mm.out" || die "bench matmul: no report line: $(cat "$tmp/mm.out")"
if [ -x "$BIN/tessera-scalapack-mm" ]; then
    grep -q "^   200   1 .*x .*\(met\|MISS\)" "$tmp/mm.out" ||
        die "bench matmul: no ratio against pdgemm: $(cat "$tmp/mm.out")"
    grep -q '"system":"pdgemm nb=64"' "$tmp/mm.jsonl" || die "no pdgemm record in the JSON lines"
    echo "   against pdgemm and dgemm: report and JSON lines"
else
    grep -q "ScaLAPACK peer: skipped" "$tmp/mm.out" || die "bench matmul: no 'skipped' line"
    echo "   ScaLAPACK not installed: the peer is reported as skipped"
fi
[ -z "$(ls -A "$tmp" | grep bench-matmul)" ] || die "bench matmul left its temporary directory"

step "bench mapreduce: one tiny round"
if [ "$MPI" = 1 ] && [ -x "$BIN/tessera-mrmpi-pagerank" ]; then
    "$TESSERA" bench mapreduce --ranks 1,2 --rounds 1 --iterations 2 --pagerank-gen web:3000 \
        --kmeans-gen 3000:2:4 --tmpdir "$tmp" > "$tmp/mr.out" 2> "$tmp/mr.err" ||
        die "bench mapreduce: exit $?: $(head -c 600 "$tmp/mr.err")"
    for app in pagerank kmeans; do
        grep -q "^   $app  *2 .*x .*\(met\|MISSED\)" "$tmp/mr.out" ||
            die "bench mapreduce: no $app line: $(cat "$tmp/mr.out")"
    done
    echo "   PageRank and k-means against MR-MPI at 1 and 2 ranks: report lines"
else
    rc=0
    "$TESSERA" bench mapreduce --rounds 1 --tmpdir "$tmp" > /dev/null 2> "$tmp/mr.err" || rc=$?
    [ "$rc" = 1 ] && [ "$(wc -l < "$tmp/mr.err")" = 1 ] ||
        die "bench mapreduce without its peers: exit $rc, stderr: $(cat "$tmp/mr.err")"
    echo "   MR-MPI or MPI missing: one line, exit 1 ($(cat "$tmp/mr.err"))"
fi

step "bench scaling: one tiny round"
ranks=1
# Two ranks under a sanitizer cost a minute for the same driver code.
[ "$MPI" = 1 ] && [ $SANITIZED = 0 ] && ranks=1,2
# Two of the four applications, to spare the fast tier's time: the other two
# go through the same driver code (argument lists and the metric each reports
# are the only per-application parts).
"$TESSERA" bench scaling --apps nbody,matmul --ranks $ranks --rounds 1 --iterations 2 \
    --scale 0.01 --tmpdir "$tmp" --json "$tmp/sc.jsonl" > "$tmp/sc.out" 2> "$tmp/sc.err" ||
    die "bench scaling: exit $?: $(head -c 600 "$tmp/sc.err")"
for app in nbody matmul; do
    grep -q "^   $app  *strong  *1 .*1.00x" "$tmp/sc.out" && grep -q "^   $app  *weak  *1 " "$tmp/sc.out" ||
        die "bench scaling: no $app lines: $(cat "$tmp/sc.out")"
done
# one record per application at R = 1 (strong and weak share it), and one
# per application and mode at R = 2
want=2
[ "$ranks" = 1,2 ] && want=6
[ "$(grep -c '"bench":"scaling"' "$tmp/sc.jsonl")" -ge $want ] || die "bench scaling: JSON lines missing"
echo "   n-body and matmul, strong and weak: report and JSON lines"

# Not under a sanitizer: the plain loop's OpenMP threads meet at libgomp's
# own barriers, which ThreadSanitizer cannot see (the tessera side of it is
# kmeans.sh's).
if [ $SANITIZED = 0 ]; then
    step "bench kmeans: one tiny round (exit 1 if tessera's centres differ from the plain loop's)"
    "$TESSERA" bench kmeans --points 20000 --k 4 --iterations 3 --rounds 1 --tmpdir "$tmp" \
        --json "$tmp/km.jsonl" > "$tmp/km.out" 2> "$tmp/km.err" ||
        die "bench kmeans: exit $?: $(head -c 600 "$tmp/km.err")"
    grep -q "^tessera/plain throughput: " "$tmp/km.out" || die "bench kmeans: no ratio: $(cat "$tmp/km.out")"
    grep -q "^max relative difference of the centres: " "$tmp/km.out" ||
        die "bench kmeans: no centres check: $(cat "$tmp/km.out")"
    grep -q '"bench":"kmeans"' "$tmp/km.jsonl" || die "bench kmeans: no JSON line"
    echo "   report, centres compared, JSON line"
fi

step "bad options"
for cmd in "kmeans --k 0" "kmeans --bogus" "kmeans --points 10 --k 20" "matmul --sizes 0" "matmul --ranks" "matmul --bogus" "mapreduce --apps nothing" \
    "mapreduce --iterations 1" "mapreduce --bogus" "scaling --apps bogus" "scaling --ranks 2,4" \
    "scaling --scale 0" "kmeans --json $tmp/none/k.jsonl" "pagerank --json $tmp/none/p.jsonl"; do
    rc=0
    # shellcheck disable=SC2086
    "$TESSERA" bench $cmd --tmpdir "$tmp" > /dev/null 2> "$tmp/err" || rc=$?
    [ "$rc" = 2 ] || die "bench $cmd: exit $rc, wanted 2"
    [ "$(wc -l < "$tmp/err")" = 1 ] || die "bench $cmd: stderr: $(cat "$tmp/err")"
done
echo "ok: bench_tables"
