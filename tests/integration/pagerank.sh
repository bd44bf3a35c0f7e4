#!/bin/bash
# pagerank.sh (fast tier) — `tessera run pagerank` against the independent
# sequential reference ref_pagerank.py on small generated graphs and a
# hand-written one: 1, 2 and 4 workers embedded and, with MPI, 2 and 4 ranks
# of one worker and 2 ranks of two; every output within 1e-12 relative of the
# reference.  Then: --gen SPEC equals --graph of the generated file; gzip
# input, `gen --cache` and `convert` caches give the same ranks; the default
# top-ten on stdout; the --metrics JSON; no stray files in the output
# directory; a tiny `tessera bench pagerank` run (which checks tessera against
# the CSR reference at 1e-9 and must clean up its temporary directory).
#
# Environment: TESSERA (the CLI), TESS_SRC, TESS_HAVE_MPI=0|1.  Exits 77
# (skipped) without TESSERA, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"
HERE="$TESS_SRC/tests/integration"
TOL=1e-12

# pr LABEL OUTDIR PREFIX... -- ARGS... — run pagerank (PREFIX: e.g. mpirun
# -np 2 …) writing OUTDIR/ranks.txt and OUTDIR/metrics.json (lib.sh's
# run_into).
pr() { run_into "$1" "$2" pagerank --output ranks.txt "${@:3}"; }

# same LABEL GOT REF — ranks within TOL.
same() {
    local msg
    msg=$(python3 "$CMP" --tol "$TOL" "$2" "$3" 2>&1) || die "$1: $msg"
    echo "   $1: $msg"
}

# check_metrics FILE ITERATIONS RANKS WORKERS_PER_RANK VERTICES EDGES
check_metrics() {
    python3 - "$@" <<'PY' || die "metrics $1 (see above)"
import json, sys
path, iters, ranks, wpr, nv, ne = sys.argv[1], *map(int, sys.argv[2:])
try:
    m = json.load(open(path))
except ValueError as e:
    sys.exit("%s: not valid JSON: %s" % (path, e))
want = ["app", "ranks", "workers_per_rank", "workers_total", "wall_seconds", "jitter",
        "seed", "emulated", "load_seconds", "iteration_seconds", "vertices", "edges"]
missing = [k for k in want if k not in m]
if missing:
    sys.exit("%s: missing keys %s" % (path, missing))
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
its = m["iteration_seconds"]
problems = []
if m["app"] != "pagerank": problems.append("app %r" % m["app"])
if m["ranks"] != ranks: problems.append("ranks %r, want %d" % (m["ranks"], ranks))
if m["workers_per_rank"] != wpr: problems.append("workers_per_rank %r" % m["workers_per_rank"])
if m["workers_total"] != ranks * wpr: problems.append("workers_total %r" % m["workers_total"])
if m["vertices"] != nv: problems.append("vertices %r, want %d" % (m["vertices"], nv))
if m["edges"] != ne: problems.append("edges %r, want %d" % (m["edges"], ne))
if m["emulated"] is not False: problems.append("emulated %r" % m["emulated"])
if not (isinstance(its, list) and len(its) == iters and all(num(t) and t >= 0 for t in its)):
    problems.append("iteration_seconds should be %d non-negative numbers: %r" % (iters, its))
for k in ("wall_seconds", "load_seconds", "seed"):
    if not num(m[k]): problems.append("%s is not a number" % k)
if problems:
    sys.exit("%s: %s" % (path, "; ".join(problems)))
PY
}

count_edges() { grep -cv '^[[:space:]]*\(#\|$\)' "$1"; }

# ---------------------------------------------------------------- graphs
G="$tmp/graphs"
mkdir -p "$G"
# Hand-written: comments, a blank line, tabs, CRLF, a duplicate edge, a
# self-loop, a dangling vertex (7), and ids near 2^64 (renumbering).
printf '# tiny test graph\n# src dst\n1 2\n2\t3\r\n3 1\n1 3\n1 3\n\n4 4\n4 1\n2 7\n18446744073709551615 1\n3 18446744073709551614\n' >"$G/tiny.txt"

check_graph() { # NAME FILE — reference, then every topology
    local name=$1 file=$2
    step "$name: python reference"
    run "ref_$name" python3 "$REF" "$file" --output "$G/$name.ref"
    local ws="1 2 4"
    [ $SANITIZED = 1 ] && ws="1 2" # more workers than cores under a sanitizer: slow, same paths
    for w in $ws; do
        step "$name: embedded, --workers $w"
        pr "${name}_w$w" "$tmp/${name}_w$w" -- --graph "$file" --workers "$w"
        same "${name} workers=$w" "$tmp/${name}_w$w/ranks.txt" "$G/$name.ref"
    done
    [ $MPI = 1 ] || return 0
    local nps="2 4"
    [ $SANITIZED = 1 ] && nps=2 # 4 ranks on 2 cores under a sanitizer: slow, same paths
    for np in $nps; do
        step "$name: mpirun -np $np, --workers 1"
        pr "${name}_np$np" "$tmp/${name}_np$np" mpi "$np" -- --graph "$file" --workers 1
        same "${name} np=$np" "$tmp/${name}_np$np/ranks.txt" "$G/$name.ref"
    done
    step "$name: mpirun -np 2, --workers 2"
    pr "${name}_np2w2" "$tmp/${name}_np2w2" mpi 2 -- --graph "$file" --workers 2
    same "${name} np=2 workers=2" "$tmp/${name}_np2w2/ranks.txt" "$G/$name.ref"
    bitwise "$name" "$tmp/${name}_w1/ranks.txt" "$tmp/${name}"_w[24]/ranks.txt \
        "$tmp/${name}"_np*/ranks.txt
}

# Pull-style PageRank sums each vertex's in-edges in one order and the
# dangling rank in vertex order: the ranks must be the same bits for any
# worker, partition and rank count.
bitwise() { # NAME FIRST OTHERS...
    local name=$1 first=$2 f
    shift 2
    for f in "$@"; do
        [ -f "$f" ] || continue
        cmp -s "$first" "$f" || die "$name: $f differs bitwise from $first"
    done
    echo "   $name: bitwise equal across workers, partitions and ranks ($(($# + 1)) runs)"
}

[ $MPI = 1 ] || step "MPI runs skipped (TESS_HAVE_MPI=${TESS_HAVE_MPI:-unset} or no mpirun)"
check_graph tiny "$G/tiny.txt"
for spec in rmat:10 uniform:500:4000 web:2000; do
    name=${spec%%:*}
    step "tessera gen $spec"
    run "gen_$name" "$TESSERA" gen "$spec" "$G/$name.txt"
    check_graph "$name" "$G/$name.txt"
done

# ------------------------------------------------ same graph, other inputs
step "--gen rmat:10 gives the ranks of --graph of the generated file"
pr gen_direct "$tmp/gen_direct" -- --gen rmat:10 --workers 2
same "--gen vs --graph" "$tmp/gen_direct/ranks.txt" "$tmp/rmat_w2/ranks.txt"

step "gzip input"
gzip -c "$G/web.txt" >"$G/web.txt.gz"
pr gz "$tmp/gz" -- --graph "$G/web.txt.gz" --workers 2
same "gzip" "$tmp/gz/ranks.txt" "$G/web.ref"

step "binary cache from 'tessera gen --cache'"
run gen_cache "$TESSERA" gen web:2000 "$G/web_gen.cache" --cache
pr cache_gen "$tmp/cache_gen" -- --graph "$G/web_gen.cache" --workers 2
same "gen --cache" "$tmp/cache_gen/ranks.txt" "$G/web.ref"

step "binary cache from 'tessera convert' of the text and of the gzip file"
run convert_txt "$TESSERA" convert "$G/web.txt" "$G/web_txt.cache"
run convert_gz "$TESSERA" convert "$G/web.txt.gz" "$G/web_gz.cache"
pr cache_txt "$tmp/cache_txt" -- --graph "$G/web_txt.cache" --workers 1
same "convert (text)" "$tmp/cache_txt/ranks.txt" "$G/web.ref"
pr cache_gz "$tmp/cache_gz" -- --graph "$G/web_gz.cache" --workers 4
same "convert (gzip)" "$tmp/cache_gz/ranks.txt" "$G/web.ref"
if [ $MPI = 1 ]; then
    step "binary cache under mpirun -np 2"
    pr cache_np2 "$tmp/cache_np2" mpi 2 -- --graph "$G/web_gz.cache" --workers 1
    same "cache np=2" "$tmp/cache_np2/ranks.txt" "$G/web.ref"
fi

# ------------------------------------------------------------- stdout top ten
step "without --output: the ten highest-ranked vertices on stdout"
run top "$TESSERA" run pagerank --graph "$G/rmat.txt" --workers 2
python3 - "$tmp/top.stdout" "$G/rmat.ref" <<'PY' || die "top ten on stdout (see above)"
import sys
lines = [l for l in open(sys.argv[1]).read().split("\n") if l]
ref = {}
for l in open(sys.argv[2]):
    i, r = l.split("\t")
    ref[int(i)] = float(r)
if len(lines) != 10:
    sys.exit("expected 10 lines on stdout, got %d: %r" % (len(lines), lines[:12]))
got = []
for l in lines:
    f = l.split("\t")
    if len(f) != 2 or not f[0].isdigit():
        sys.exit("stdout line %r is not 'id<TAB>rank'" % l)
    got.append((int(f[0]), float(f[1])))
ranks = [r for _, r in got]
if ranks != sorted(ranks, reverse=True):
    sys.exit("stdout ranks are not in descending order: %r" % ranks)
for i, r in got:
    if i not in ref or abs(r - ref[i]) > 1e-12 * ref[i]:
        sys.exit("vertex %d: rank %r, reference %r" % (i, r, ref.get(i)))
eleventh = sorted(ref.values(), reverse=True)[10]
if min(ranks) < eleventh * (1 - 1e-12):
    sys.exit("stdout misses a top-ten vertex: lowest printed %r < 11th best %r"
             % (min(ranks), eleventh))
print("   top ten: ok (best %d %.6g)" % got[0])
PY

# ------------------------------------------------------------------ metrics
nv=$(wc -l <"$G/rmat.ref")
ne=$(count_edges "$G/rmat.txt")
step "--metrics JSON (embedded, 2 workers, 7 iterations)"
pr metrics "$tmp/metrics" -- --graph "$G/rmat.txt" --workers 2 --iterations 7
check_metrics "$tmp/metrics/metrics.json" 7 1 2 "$nv" "$ne"
step "--iterations 7 --damping 0.5 against the reference"
run ref_d5 python3 "$REF" "$G/rmat.txt" --iterations 7 --damping 0.5 --output "$G/rmat_d5.ref"
pr d5 "$tmp/d5" -- --graph "$G/rmat.txt" --workers 2 --iterations 7 --damping 0.5
same "iterations=7 damping=0.5" "$tmp/d5/ranks.txt" "$G/rmat_d5.ref"
if [ $MPI = 1 ]; then
    step "--metrics JSON under mpirun -np 2 --workers 2"
    pr metrics_np2 "$tmp/metrics_np2" mpi 2 -- --graph "$G/rmat.txt" --workers 2 --iterations 7
    check_metrics "$tmp/metrics_np2/metrics.json" 7 2 2 "$nv" "$ne"
fi

# ------------------------------------------------------------ bench smoke
step "tessera bench pagerank --scale 10 (ranks vs the CSR reference; temp dir removed)"
mkdir -p "$tmp/benchtmp"
run bench "$TESSERA" bench pagerank --scale 10 --rounds 1 --iterations 5 --no-mpi \
    --tmpdir "$tmp/benchtmp" --json "$tmp/bench.jsonl"
grep -q "max relative error" "$tmp/bench.stdout" || die "bench: no error report on stdout"
[ -z "$(ls -A "$tmp/benchtmp")" ] || die "bench left files behind: $(ls -A "$tmp/benchtmp")"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/bench.jsonl" ||
    die "bench --json: not one JSON object per line"

echo "pagerank.sh: all checks passed"
