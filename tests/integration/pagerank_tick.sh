#!/usr/bin/env bash
# pagerank_tick.sh (fast tier) — `tessera run pagerank-tick` against the
# independent sequential power iteration pagerank_tick_ref.c (within 1e-12
# relative), then bitwise equality (cmp) of the output across a pairwise
# cover of: every algorithm setting (bsp, local, sched d = 1, 2, 10, repl
# (k, m) = (1, 2), (2, 3), (3, 5), (5, 9), combined) x workers 1, 2, 4 x
# latency (none, cloud with two seeds) x re-partitioning on/off; and, with
# MPI, `mpirun -np 2`.  Also: --gen equals --graph of the generated file;
# --damping/--ticks against the reference; the real email-Eu-core graph of
# the shared data directory when present (gzip input); the top ten on
# stdout; the metrics JSON; bad input (METIS cannot partition, a missing
# file, a malformed line, k > m+1, ...): one line on stderr, non-zero exit,
# no output file.  pagerank_tick_long.sh runs the full cross-product.
#
# Environment: TESSERA, TESS_SRC, TESS_BUILD, TESS_HAVE_MPI=0|1, SHARED_DATA.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tick_lib.bash"
tick_ref pagerank_tick_ref
T=12

# prt OUT ARGS... — run quietly writing OUT; 0 or the exit status.
prt() {
    local out=$1
    shift
    rm -f "$out"
    "$TESSERA" run pagerank-tick --quiet --output "$out" "$@" > "$tmp/stdout" 2> "$tmp/stderr"
}


G="$tmp/rmat.txt"
step "tessera gen rmat:10; the sequential reference, $T ticks"
"$TESSERA" gen rmat:10 "$G" > /dev/null || die "tessera gen failed"
"$REFBIN" "$G" $T 0.85 "$tmp/ref.txt" || die "reference failed"
prt "$tmp/base.txt" --graph "$G" --ticks $T --workers 1 ||
    die "first run failed: $(head -c 300 "$tmp/stderr")"
close_to "local, 1 worker vs reference" "$tmp/base.txt" "$tmp/ref.txt"

run() { "$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T --output "$tmp/out.txt" "$@"; }

ALGS=(
    "${TICK_ALGS_BASIC[@]}"
    "${TICK_ALGS_REPL[@]}"
    "--alg combined --depth 2 --period 3 --layers 5"
    "--alg repl --period 2 --layers 7"
    "--alg combined --depth 3 --period 2 --layers 6"
    "--alg auto"
)
WORKERS=(1 2 4)
JITTERS=("none" "cloud --seed 1" "cloud --seed 2")

# Pairwise: run s = i + w covers, over i, every (workers, jitter, repart)
# pair, and every algorithm meets every value of each other factor.
step "pairwise: ${#ALGS[@]} algorithm settings x workers x jitter x re-partitioning"
for i in "${!ALGS[@]}"; do
    a=${ALGS[$i]}
    for w in 0 1 2; do
        s=$((i + w))
        j=${JITTERS[$((s % 3))]}
        rp=""
        if [ $((s % 2)) = 1 ]; then
            case "$a" in
                *"--period 5"*) rp="--repart-every 5" ;;
                *"--period 3"*) rp="--repart-every 6" ;;
                *) rp="--repart-every 4" ;;
            esac
        fi
        same_as "$tmp/base.txt" "$a --workers ${WORKERS[$w]} --jitter $j $rp" \
            run $a --workers "${WORKERS[$w]}" --jitter $j $rp
    done
done

# Every message later than many ticks of compute: replication runs ahead of
# it (the lazy path of Algorithm 3), scheduling works inside the waits.
step "messages late by many ticks (fixed:3000): every algorithm, 4 workers"
for a in "${ALGS[@]}"; do
    same_as "$tmp/base.txt" "$a --workers 4 --jitter fixed:3000" \
        run $a --workers 4 --jitter fixed:3000
done

step "the checking mode (TESS_TICK_CHECK=1) finds nothing wrong and changes nothing"
same_as "$tmp/base.txt" "TESS_TICK_CHECK=1 --alg combined --workers 4 --jitter cloud" \
    env TESS_TICK_CHECK=1 "$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T \
    --output "$tmp/out.txt" --alg combined --depth 2 --period 2 --layers 3 --workers 4 \
    --jitter cloud --seed 3 --repart-every 4

step "refinement only when next (TESS_TICK_REFINE=next; the default refines on every arrival)"
for a in "--alg sched --depth 3" "--alg combined --depth 2 --period 2 --layers 3"; do
    same_as "$tmp/base.txt" "TESS_TICK_REFINE=next $a --workers 4 --jitter cloud" \
        env TESS_TICK_REFINE=next TESS_TICK_CHECK=1 "$TESSERA" run pagerank-tick --quiet \
        --graph "$G" --ticks $T --output "$tmp/out.txt" $a --workers 4 --jitter cloud --seed 4 \
        --repart-every 4
done

step "virtual clock (simulated time): every algorithm, 8 workers, late messages"
for a in "${ALGS[@]}"; do
    same_as "$tmp/base.txt" "--clock virtual $a --workers 8 --jitter fixed:3000" \
        run $a --workers 8 --jitter fixed:3000 --clock virtual --step-cost 400
done

if [ "$MPI" = 1 ]; then
    step "mpirun -np 2"
    same_as "$tmp/base.txt" "mpirun -np 2 --alg local --workers 1" \
        mpi 2 "$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T \
        --output "$tmp/out.txt" --alg local --workers 1
    same_as "$tmp/base.txt" "mpirun -np 2 --alg combined --workers 2 --jitter cloud" \
        mpi 2 "$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T \
        --output "$tmp/out.txt" --alg combined --depth 2 --period 2 --layers 3 --workers 2 \
        --jitter cloud --seed 5 --repart-every 4
else
    echo "-- mpirun not available: MPI cases skipped"
fi

step "--gen rmat:10 gives the ranks of --graph of the generated file"
same_as "$tmp/base.txt" "--gen rmat:10" \
    "$TESSERA" run pagerank-tick --quiet --gen rmat:10 --ticks $T --workers 2 \
    --output "$tmp/out.txt"

step "--ticks 7 --damping 0.5 against the reference"
"$REFBIN" "$G" 7 0.5 "$tmp/ref_d5.txt" || die "reference failed"
if prt "$tmp/d5.txt" --graph "$G" --ticks 7 --damping 0.5 --workers 3 --alg sched --depth 2; then
    close_to "ticks=7 damping=0.5" "$tmp/d5.txt" "$tmp/ref_d5.txt"
else
    fail "--damping 0.5: $(head -c 300 "$tmp/stderr")"
fi

step "a web graph (sites) and a uniform graph: 2 workers, combined, cloud"
for spec in web:1500 uniform:600:3000; do
    "$TESSERA" gen "$spec" "$tmp/g.txt" > /dev/null || die "tessera gen $spec failed"
    "$REFBIN" "$tmp/g.txt" $T 0.85 "$tmp/g.ref" || die "reference failed"
    if prt "$tmp/g.out" --graph "$tmp/g.txt" --ticks $T --workers 2 --alg combined --depth 2 \
        --period 2 --layers 3 --jitter cloud; then
        close_to "$spec" "$tmp/g.out" "$tmp/g.ref"
    else
        fail "$spec: $(head -c 300 "$tmp/stderr")"
    fi
done

EMAIL="$DATA/email-Eu-core.txt.gz"
if [ -r "$EMAIL" ]; then
    step "email-Eu-core (shared data, gzip): reference, then 2 and 4 workers"
    gzip -dc "$EMAIL" > "$tmp/email.txt" || die "cannot decompress $EMAIL"
    "$REFBIN" "$tmp/email.txt" 20 0.85 "$tmp/email.ref" || die "reference failed"
    if prt "$tmp/email2.txt" --graph "$EMAIL" --ticks 20 --workers 2 --alg sched --depth 2; then
        close_to "email-Eu-core, 2 workers" "$tmp/email2.txt" "$tmp/email.ref"
        same_as "$tmp/email2.txt" "email-Eu-core, 4 workers, combined, cloud" \
            "$TESSERA" run pagerank-tick --quiet --graph "$EMAIL" --ticks 20 --workers 4 \
            --alg combined --depth 2 --period 3 --layers 5 --jitter cloud --seed 7 \
            --output "$tmp/out.txt"
    else
        fail "email-Eu-core: $(head -c 300 "$tmp/stderr")"
    fi
else
    echo "-- $EMAIL not found: real-graph case skipped"
fi

step "without --output: the ten highest-ranked vertices on stdout"
"$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T --workers 2 > "$tmp/top.txt" \
    2> "$tmp/stderr" || fail "top ten: $(head -c 300 "$tmp/stderr")"
python3 - "$tmp/top.txt" "$tmp/ref.txt" <<'PY' || fail "top ten on stdout (see above)"
import sys
got = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
ref = {int(i): float(r) for i, r in (l.split("\t") for l in open(sys.argv[2]))}
if len(got) != 10:
    sys.exit("expected 10 lines, got %d" % len(got))
best = sorted(ref.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
for (i, r), (bi, br) in zip(got, best):
    if int(i) != bi or abs(float(r) - br) > 1e-12 * br:
        sys.exit("got %s %s, want %d %r" % (i, r, bi, br))
print("   top ten: ok")
PY

step "--metrics JSON"
"$TESSERA" run pagerank-tick --quiet --graph "$G" --ticks $T --workers 2 --alg sched --depth 2 \
    --step-cost 20 --metrics "$tmp/m.json" > /dev/null 2> "$tmp/stderr" ||
    fail "metrics run: $(head -c 300 "$tmp/stderr")"
nv=$(wc -l < "$tmp/ref.txt")
ne=$(grep -cv '^[[:space:]]*\(#\|$\)' "$G")
python3 - "$tmp/m.json" "$nv" "$ne" <<'PY' || fail "metrics keys (see above)"
import json, sys
m = json.load(open(sys.argv[1]))
want = ["app", "ranks", "workers_per_rank", "workers_total", "wall_seconds", "jitter", "seed",
        "emulated", "ticks", "ticks_per_second", "tuple_ticks_per_second", "step_seconds",
        "wait_seconds", "runtime_seconds", "messages", "bytes", "per_worker", "vertices",
        "edges", "load_seconds", "partition_seconds"]
missing = [k for k in want if k not in m]
if missing:
    sys.exit("missing keys %s" % missing)
bad = []
if m["app"] != "pagerank-tick": bad.append("app %r" % m["app"])
if m["emulated"] is not True: bad.append("emulated %r" % m["emulated"])
if len(m["per_worker"]) != 2: bad.append("per_worker has %d entries" % len(m["per_worker"]))
if m["vertices"] != int(sys.argv[2]) or m["edges"] != int(sys.argv[3]):
    bad.append("vertices/edges %r/%r" % (m["vertices"], m["edges"]))
if m["ticks"] != 12 or not m["ticks_per_second"] > 0: bad.append("ticks")
if bad:
    sys.exit("; ".join(bad))
print("   metrics: ok")
PY

step "bad input: one line on stderr, non-zero exit, no output file"
printf '1 2\n2 3\n3 1\n3 4\n' > "$tmp/four.txt"
printf '# a comment\n1 2\n2 x3\n' > "$tmp/malformed.txt"
mkdir -p "$tmp/bad"
OUTS=(--output "$tmp/bad/ranks.txt" --metrics "$tmp/bad/m.json")
bad() {
    local what=$1 want=$2
    shift 2
    rm -rf "$tmp/bad" && mkdir -p "$tmp/bad"
    "$TESSERA" run pagerank-tick "${OUTS[@]}" "$@" > /dev/null 2> "$tmp/err"
    local rc=$?
    runs=$((runs + 1))
    echo "   $what -> exit $rc: $(head -n 1 "$tmp/err")"
    [ $rc != 0 ] || fail "$what: exit 0"
    [ "$(wc -l < "$tmp/err")" = 1 ] || fail "$what: expected one line on stderr: $(cat "$tmp/err")"
    grep -qF -- "$want" "$tmp/err" || fail "$what: the message does not say '$want'"
    [ -z "$(ls -A "$tmp/bad")" ] || fail "$what: left $(ls -A "$tmp/bad")"
}
bad "more workers than vertices" "cannot partition $tmp/four.txt into 5 parts" \
    --graph "$tmp/four.txt" --ticks 3 --workers 5
bad "missing file" "$tmp/none.txt" --graph "$tmp/none.txt" --ticks 3
bad "malformed line" "malformed.txt:3" --graph "$tmp/malformed.txt" --ticks 3
bad "k > m+1" "--period" --graph "$tmp/four.txt" --ticks 3 --alg repl --period 3 --layers 1
bad "damping out of range" "--damping" --graph "$tmp/four.txt" --ticks 3 --damping 1.5
bad "no --ticks" "--ticks" --graph "$tmp/four.txt"
bad "both --graph and --gen" "--gen" --graph "$tmp/four.txt" --gen rmat:4 --ticks 3
bad "bad generator" "--gen" --gen rmat:x --ticks 3
bad "unknown option" "--frobnicate" --graph "$tmp/four.txt" --ticks 3 --frobnicate
bad "repeated option" "--damping" --graph "$tmp/four.txt" --ticks 3 --damping 0.5 --damping 0.6
OUTS=(--output /nonexistent/dir/r.txt --metrics "$tmp/bad/m.json")
bad "unwritable output" "/nonexistent/dir" --graph "$tmp/four.txt" --ticks 3

echo "pagerank-tick: $runs runs, $failures failure(s)"
[ $failures = 0 ]
