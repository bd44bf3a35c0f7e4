#!/bin/sh
# kmeans.sh — `tessera run kmeans` against the independent sequential
# reference ref_kmeans.py, for 1, 2 and 4 workers and (with MPI) 2 and 3 ranks,
# plus bad-input cases: each must exit non-zero with one line on stderr naming
# the file:line or the option, and leave no output or temporary file behind.
#
# Comparison: assignments must be identical; centres may differ only by the
# order of floating-point additions (partial sums per partition, combined in
# arrival order), so each coordinate must satisfy
#   |got - ref| <= 1e-9 * max(1, |ref|).
#
# Environment: TESSERA (the CLI), TESS_SRC, TESS_HAVE_MPI=0|1.
set -u
. "$(dirname "$0")/lib.sh"
REF="$TESS_SRC/tests/integration/ref_kmeans.py"
ITERS=8

# same_centres GOT REF — the tolerance above, and the same K x DIM shape.
same_centres() {
    python3 - "$1" "$2" <<'PY'
import sys
def load(p):
    return [[float(v) for v in l.split()] for l in open(p) if l.strip()]
got, ref = load(sys.argv[1]), load(sys.argv[2])
if [len(r) for r in got] != [len(r) for r in ref]:
    sys.exit("shape differs: %s vs %s" % (sys.argv[1], sys.argv[2]))
for j, (g, r) in enumerate(zip(got, ref)):
    for d, (a, b) in enumerate(zip(g, r)):
        if abs(a - b) > 1e-9 * max(1.0, abs(b)):
            sys.exit("centre %d coordinate %d: %r vs %r" % (j, d, a, b))
PY
}

# check_metrics FILE POINTS K DIM
check_metrics() {
    python3 - "$@" <<'PY'
import json, sys
path, n, k, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
m = json.load(open(path))
want = ["app", "ranks", "workers_per_rank", "workers_total", "wall_seconds", "jitter",
        "seed", "emulated", "load_seconds", "iteration_seconds", "points", "k", "dim"]
missing = [key for key in want if key not in m]
if missing:
    sys.exit("%s: missing keys %s" % (path, missing))
checks = [m["app"] == "kmeans", m["points"] == n, m["k"] == k, m["dim"] == dim,
          m["jitter"] == "none", m["seed"] == 0, m["emulated"] is False,
          isinstance(m["iteration_seconds"], list) and len(m["iteration_seconds"]) == 8,
          all(isinstance(m[key], (int, float)) for key in
              ("ranks", "workers_per_rank", "workers_total", "wall_seconds", "load_seconds"))]
if not all(checks):
    sys.exit("%s: unexpected values (checks %s)" % (path, checks))
PY
}

# check_run LABEL OUTDIR REFDIR — compare a run's outputs with the reference.
check_run() {
    cmp -s "$2/a.txt" "$3/a.txt" || fail "$1: assignments differ from the reference"
    same_centres "$2/c.txt" "$3/c.txt" || fail "$1: centres differ from the reference"
}

run_kmeans() { # OUTDIR COMMAND... (the common arguments are appended)
    out=$1; shift
    mkdir -p "$out"
    "$@" --iterations $ITERS --output "$out/c.txt" --assignments "$out/a.txt" \
        --metrics "$out/m.json" --quiet 2>"$out/err.txt"
}

mpi_launch() { # NP COMMAND...
    timeout 300 mpirun -np "$1" --oversubscribe --bind-to none "${@:2}"
}

check_spec() { # SPEC N K DIM
    spec=$1; dir="$tmp/$(echo "$spec" | tr ':' '_')"
    mkdir -p "$dir/ref"
    "$TESSERA" gen-points "$spec" "$dir/points.txt" || { fail "gen-points $spec"; return; }
    python3 "$REF" "$dir/points.txt" "$3" $ITERS "$dir/ref/c.txt" "$dir/ref/a.txt" ||
        { fail "reference $spec"; return; }
    for w in 1 2 4; do
        if run_kmeans "$dir/w$w" "$TESSERA" run kmeans --points "$dir/points.txt" --k "$3" \
            --workers $w; then
            check_run "$spec workers=$w" "$dir/w$w" "$dir/ref"
            check_metrics "$dir/w$w/m.json" "$2" "$3" "$4" || fail "$spec workers=$w: metrics"
        else
            fail "$spec workers=$w: exit $? ($(cat "$dir/w$w/err.txt"))"
        fi
    done
    # --gen directly must cluster exactly the points gen-points wrote.
    if run_kmeans "$dir/gen" "$TESSERA" run kmeans --gen "$spec" --workers 2; then
        check_run "$spec --gen" "$dir/gen" "$dir/ref"
    else
        fail "$spec --gen: $(cat "$dir/gen/err.txt")"
    fi
    mpi_usable || return 0
    for np in 2 3; do
        if run_kmeans "$dir/np$np" mpi_launch $np "$TESSERA" run kmeans \
            --points "$dir/points.txt" --k "$3" --workers 1; then
            check_run "$spec mpirun -np $np" "$dir/np$np" "$dir/ref"
            check_metrics "$dir/np$np/m.json" "$2" "$3" "$4" || fail "$spec np=$np: metrics"
        else
            fail "$spec mpirun -np $np: $(cat "$dir/np$np/err.txt")"
        fi
    done
}

check_spec 2000:2:5 2000 5 2
check_spec 3000:3:8:7 3000 8 3

# Without --output the centres go to stdout.
"$TESSERA" run kmeans --gen 2000:2:5 --iterations $ITERS --workers 2 --quiet \
    >"$tmp/stdout.txt" 2>"$tmp/stdout.err" || fail "stdout run: $(cat "$tmp/stdout.err")"
same_centres "$tmp/stdout.txt" "$tmp/2000_2_5/ref/c.txt" || fail "centres on stdout"

# ---- bad input ---------------------------------------------------------
bad="$tmp/bad"
mkdir -p "$bad/in"
printf '# comment\n1 2\n3 x\n' >"$bad/in/malformed.txt"
printf '1 2\n3 4\n# comment\n5\n' >"$bad/in/count.txt"
printf '1 2\nnan 3\n' >"$bad/in/nan.txt"
printf '1 2\n3 4\n5 6\n' >"$bad/in/three.txt"

# expect_fail WANT_RC PATTERN KMEANS_ARGS... — the arguments come after the
# standard outputs, so a case can override one of them.
expect_fail() {
    want=$1 pattern=$2; shift 2
    out="$bad/out"
    rm -rf "$out"
    mkdir -p "$out"
    "$TESSERA" run kmeans --output "$out/c.txt" --assignments "$out/a.txt" \
        --metrics "$out/m.json" "$@" >/dev/null 2>"$bad/err.txt"
    rc=$?
    label="kmeans $*"
    [ $rc -ne 0 ] || fail "$label: exit 0"
    [ $rc -eq "$want" ] || fail "$label: exit $rc, expected $want"
    [ "$(wc -l <"$bad/err.txt")" -eq 1 ] || fail "$label: stderr is not one line: $(cat "$bad/err.txt")"
    grep -qF -- "$pattern" "$bad/err.txt" || fail "$label: stderr lacks '$pattern': $(cat "$bad/err.txt")"
    [ -z "$(ls -A "$out")" ] || fail "$label: left files behind: $(ls -A "$out")"
}

in="$bad/in"
expect_fail 1 "$in/missing.txt" --points "$in/missing.txt" --k 2 --iterations 2
expect_fail 1 "$in/malformed.txt:3:" --points "$in/malformed.txt" --k 1 --iterations 2
expect_fail 1 "$in/count.txt:4: expected 2 coordinates, got 1" \
    --points "$in/count.txt" --k 1 --iterations 2
expect_fail 1 "$in/nan.txt:2:" --points "$in/nan.txt" --k 1 --iterations 2
expect_fail 1 "--k" --points "$in/three.txt" --k 5 --iterations 2
expect_fail 2 "option --k" --points "$in/three.txt" --k 0 --iterations 2
expect_fail 2 "option --iterations" --points "$in/three.txt" --k 2 --iterations 0
expect_fail 2 "option --iterations" --points "$in/three.txt" --k 2 --iterations abc
expect_fail 2 "option --gen" --gen 100:2 --iterations 2
expect_fail 2 "option --gen" --gen 5:2:9 --iterations 2
expect_fail 2 "option --gen" --gen 10:0:2 --iterations 2
expect_fail 2 "--bogus" --gen 10:2:2 --iterations 2 --bogus
expect_fail 2 "--points" --k 2 --iterations 2
expect_fail 1 "cannot write $bad/nodir/x.txt" \
    --points "$in/three.txt" --k 2 --iterations 2 --metrics "$bad/nodir/x.txt"

# gen-points: a bad spec writes nothing.
"$TESSERA" gen-points 10:2:20 "$bad/g.txt" 2>"$bad/err.txt"
rc=$?
[ $rc -eq 2 ] || fail "gen-points with K > N: exit $rc"
[ "$(wc -l <"$bad/err.txt")" -eq 1 ] || fail "gen-points: stderr is not one line"
[ ! -e "$bad/g.txt" ] || fail "gen-points left $bad/g.txt"
leftovers=$(ls -A "$bad" | grep -v -e '^in$' -e '^out$' -e '^err.txt$')
[ -z "$leftovers" ] || fail "bad-input runs left: $leftovers"

if [ $failures -ne 0 ]; then
    echo "kmeans.sh: $failures failure(s)" >&2
    exit 1
fi
echo "kmeans.sh: ok"
