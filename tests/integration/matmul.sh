#!/bin/bash
# matmul.sh (fast tier) — `tessera run matmul`:
#   1. against matmul_ref, an independent triple loop, for N = 301 with
#      64 x 64 blocks (the last block row and column padded): every element
#      within the rounding-error bound 2 N eps (|A||B|)_ij;
#   2. the same bytes for 1, 2 and 3 workers, 1 and 3 partitions, and 2 and
#      3 ranks under mpirun;
#   3. --check on generated matrices (rank 0's dgemm of the whole matrices)
#      and the metrics;
#   4. bad input: one line on stderr naming the file or the option, a
#      non-zero exit, no output left behind.
#
# Environment: TESSERA, TESS_SRC, TESS_BUILD, TESS_HAVE_MPI=0|1.
set -u
. "$(dirname "$0")/lib.sh"
REFBIN="${TESS_BUILD:-$(dirname "$TESSERA")}/tests/integration/matmul_ref"
[ -x "$REFBIN" ] || { echo "SKIP: $REFBIN not built" >&2; exit 77; }

# write_matrix FILE N SEED [SPECIAL] — raw float64, row-major; SPECIAL nan
# puts a NaN at (1, 2).
write_matrix() {
    python3 - "$@" << 'PY'
import array, random, sys
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
m = array.array("d", (rnd.uniform(-1, 1) * (1 + (i % 7)) for i in range(n * n)))
if len(sys.argv) > 4 and sys.argv[4] == "nan":
    m[1 * n + 2] = float("nan")
m.tofile(open(path, "wb"))
PY
}

# within_bound GOT REF BOUND N — |got - ref| <= 2 N eps bound + tiny, everywhere.
within_bound() {
    python3 - "$@" << 'PY'
import array, sys
def load(p):
    a = array.array("d")
    a.frombytes(open(p, "rb").read())
    return a
got, ref, bound, n = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3]), int(sys.argv[4])
if len(got) != n * n:
    sys.exit("C has %d values, expected %d" % (len(got), n * n))
eps = 2.0 ** -52
worst = 0.0
for i in range(n * n):
    tol = 2 * n * eps * bound[i] + 1e-300
    worst = max(worst, abs(got[i] - ref[i]) / tol)
    if abs(got[i] - ref[i]) > tol:
        sys.exit("C(%d, %d) = %r, reference %r, beyond the bound %g" % (i // n, i % n, got[i], ref[i], tol))
print("%.3g" % worst)
PY
}

D="$tmp/m"
mkdir -p "$D"
N=301
step "against the triple-loop reference (N=$N, 64 x 64 blocks)"
write_matrix "$D/a.bin" $N 1
write_matrix "$D/b.bin" $N 2
"$REFBIN" $N "$D/a.bin" "$D/b.bin" "$D/ref.bin" "$D/bound.bin" || die "reference failed"
mm=(run matmul --quiet --n $N --block 64 --input-a "$D/a.bin" --input-b "$D/b.bin")
"$TESSERA" "${mm[@]}" --workers 2 --output "$D/c.bin" || die "tessera run matmul failed"
frac=$(within_bound "$D/c.bin" "$D/ref.bin" "$D/bound.bin" $N) || die "C differs from the reference"
echo "   largest difference: $frac of the bound"

step "the same bytes for any worker, partition and rank count"
for args in "--workers 1" "--workers 3" "--workers 2 --partitions 1" "--workers 1 --partitions 3"; do
    # shellcheck disable=SC2086
    "$TESSERA" "${mm[@]}" $args --output "$D/x.bin" || die "$args failed"
    cmp -s "$D/x.bin" "$D/c.bin" || die "$args: C differs from 2 workers"
done
if [ "$MPI" = 1 ]; then
    for np in 2 3; do
        mpi "$np" "$TESSERA" "${mm[@]}" --workers 1 --output "$D/m$np.bin" 2> "$D/err" ||
            die "mpirun -np $np failed: $(head -c 500 "$D/err")"
        cmp -s "$D/m$np.bin" "$D/c.bin" || die "mpirun -np $np: C differs from embedded"
    done
    # stealing is off by default (docs/matmul.md); on, with tasks and their
    # partitions forced to move every 2 ms, C must not change, and the log
    # must show a move.  N=1500: at N=1000 the multiply took 25 ms under
    # ASan, one move takes about 20, and CI once saw none (here: 1-3 moves
    # in 8 runs, and none in 1 of 6); N=1500 moved 4-5 times in 8 of 8.
    big=(run matmul --quiet --n 1500 --block 64 --seed 3)
    "$TESSERA" "${big[@]}" --output "$D/e.bin" || die "N=1500 embedded failed"
    TESS_VERBOSE=1 TESS_STEAL=1 TESS_STEAL_FORCE=7:2 mpi 2 -x TESS_VERBOSE -x TESS_STEAL \
        -x TESS_STEAL_FORCE "$TESSERA" "${big[@]}" --workers 1 --output "$D/s.bin" 2> "$D/err" ||
        die "stealing forced: $(head -c 500 "$D/err")"
    grep -q "steal: task" "$D/err" || die "stealing forced: no task moved"
    cmp -s "$D/s.bin" "$D/e.bin" || die "stealing forced: C differs from embedded"
    echo "   1, 2, 3 workers, 1, 3, 5 partitions, 2 and 3 ranks, forced stealing: identical"
else
    echo "   1, 2, 3 workers, 1, 3, 5 partitions: identical (no MPI: ranks skipped)"
fi

step "--check and the metrics"
"$TESSERA" run matmul --n 700 --check --quiet --metrics "$D/m.json" || die "--check failed"
python3 - "$D/m.json" << 'PY' || die "metrics"
import json, sys
m = json.load(open(sys.argv[1]))
for k in ("n", "block", "partitions", "load_seconds", "replicate_seconds", "multiply_seconds",
          "product_seconds", "gflops", "checksum", "check_max_abs_error", "check_bound_fraction"):
    if k not in m:
        sys.exit("metrics lack %s" % k)
if not (m["n"] == 700 and m["block"] == 350 and 0 <= m["check_bound_fraction"] <= 1):
    sys.exit("unexpected metrics: %s" % m)
print("   N=700, blocks of %d: %.1f GFLOP/s, %.3g of the check's bound" % (m["block"], m["gflops"], m["check_bound_fraction"]))
PY

step "bad input"
B="$tmp/bad"
mkdir -p "$B"
head -c 1000 "$D/a.bin" > "$B/short.bin"
write_matrix "$B/nan.bin" $N 3 nan
expect_fail() { expect_fail_of matmul --output c.bin "$@"; } # RC PATTERN ARGS...
expect_fail 1 "$B/missing.bin: No such file" --n $N --input-a "$B/missing.bin" --input-b "$D/b.bin"
expect_fail 1 "$B/short.bin: 1000 bytes, but an N x N matrix" --n $N --input-a "$B/short.bin" --input-b "$D/b.bin"
expect_fail 1 "$D/a.bin: 724808 bytes" --n 300 --input-a "$D/a.bin" --input-b "$D/b.bin"
expect_fail 1 "$B/nan.bin: element (1, 2) is not finite" --n $N --input-a "$D/a.bin" --input-b "$B/nan.bin"
expect_fail 1 "$B: not a regular file" --n $N --input-a "$B" --input-b "$D/b.bin"
expect_fail 2 "give both --input-a and --input-b" --n $N --input-a "$D/a.bin"
expect_fail 2 "option --n is required" --block 4
expect_fail 2 "option --n" --n 0
expect_fail 2 "option --block: 400 is larger than --n 301" --n $N --block 400
expect_fail 1 "option --partitions: 9 is more than the 5 block rows" --n $N --block 64 --partitions 9
expect_fail 2 "--bogus" --n 10 --bogus
expect_fail 1 "cannot write $B/nodir/c.bin" --n 10 --output "$B/nodir/c.bin"
echo "   $cases cases: the right exit, one line, nothing left behind"
echo "ok: matmul"
