# lib.sh — what the integration scripts share; source it after `set`:
#   . "$(dirname "$0")/lib.sh"
# Gives: TESS_SRC, REF/CMP (the PageRank reference and comparator), a
# temporary directory $tmp removed on exit, die/step, fail (counting
# $failures), run, run_into, expect_fail_of, wait_for, opencl_probe, and MPI=1 when mpirun can be
# used (mpi_lib.bash: OpenMPI's settings for root and containers), mpi NP CMD...
# SANITIZED=1 under ASan or TSan (make test-asan, make test-tsan): scripts
# then run a lighter cover — the sanitizers look for memory and thread bugs,
# which the same code paths show at fewer sizes and pairings; the plain fast
# tier keeps the full cover.
# Exits 77 (skipped) when TESSERA is not an executable.
: "${TESS_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
if [ -z "${TESSERA:-}" ] || [ ! -x "$TESSERA" ]; then
    echo "SKIP: TESSERA is not set to an executable" >&2
    exit 77
fi
REF="$TESS_SRC/tests/integration/ref_pagerank.py"
CMP="$TESS_SRC/tests/integration/compare_ranks.py"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

step() { echo "-- $*"; }
die() {
    echo "FAIL: $*" >&2
    exit 1
}

# fail WHAT — report and count a failure, for scripts that go on after one
# and end with [ $failures = 0 ].
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# run LABEL COMMAND... — run quietly (stdout in $tmp/LABEL.stdout); die with
# its stderr on failure.
run() {
    local label=$1
    shift
    "$@" >"$tmp/$label.stdout" 2>"$tmp/$label.stderr" ||
        die "$label: exit $? from: $* -- stderr: $(head -c 600 "$tmp/$label.stderr")"
}

# expect_fail_of APP OUT_OPTION OUT_FILE RC PATTERN ARGS... — `tessera run
# APP ARGS` writing into an empty directory: exit RC, one line on stderr
# holding PATTERN, and nothing left behind; counts $cases.
cases=0
expect_fail_of() {
    local app=$1 opt=$2 file=$3 want=$4 pattern=$5 out="$tmp/expect_fail"
    shift 5
    rm -rf "$out" && mkdir -p "$out"
    "$TESSERA" run "$app" "$opt" "$out/$file" --metrics "$out/m.json" "$@" > /dev/null 2> "$tmp/err"
    local rc=$?
    [ $rc -eq "$want" ] || die "$app $*: exit $rc, expected $want ($(cat "$tmp/err"))"
    [ "$(wc -l < "$tmp/err")" -eq 1 ] || die "$app $*: stderr is not one line: $(cat "$tmp/err")"
    grep -qF -- "$pattern" "$tmp/err" || die "$app $*: stderr lacks '$pattern': $(cat "$tmp/err")"
    [ -z "$(ls -A "$out")" ] || die "$app $*: left files behind: $(ls -A "$out")"
    cases=$((cases + 1))
}

# run_into LABEL OUTDIR APP OUT_OPTION OUT_FILE [PREFIX... --] ARGS... — run
# `PREFIX tessera run APP ARGS` (PREFIX: e.g. `mpi 2`) writing OUTDIR/OUT_FILE
# and OUTDIR/metrics.json; afterwards OUTDIR must hold exactly those two
# files (no temporaries left).
run_into() {
    local label=$1 out=$2 app=$3 opt=$4 file=$5 prefix=()
    shift 5
    if [[ " $* " == *" -- "* ]]; then
        while [ "$1" != -- ]; do
            prefix+=("$1")
            shift
        done
        shift
    fi
    rm -rf "$out" && mkdir -p "$out"
    run "$label" ${prefix[@]+"${prefix[@]}"} "$TESSERA" run "$app" "$@" --quiet \
        "$opt" "$out/$file" --metrics "$out/metrics.json"
    local left want
    left=$(cd "$out" && ls -A | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$file" metrics.json | sort | tr '\n' ' ')
    [ "$left" = "$want" ] || die "$label: output directory holds '$left', expected only $want"
}

# wait_for TRIES COMMAND... — run COMMAND every 0.05 s until it succeeds,
# TRIES times at most, then once more: 0 when it succeeded.
wait_for() {
    local tries=$1 i
    shift
    for ((i = 0; i < tries; i++)); do
        "$@" && return 0
        sleep 0.05
    done
    "$@"
}

SANITIZED=0
[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] && SANITIZED=1

# opencl_probe ERR COMMAND... — the first OpenCL run of a tiles script, its
# stderr in ERR: 0 when it ran; 1, with a "skipped" line, where OpenCL cannot
# be checked (no platform, or under a sanitizer: none is used there); dies
# when it failed otherwise.  The scripts' OpenCL checks go on only after 0.
opencl_probe() {
    local err=$1
    shift
    if [ $SANITIZED = 0 ]; then
        "$@" 2> "$err" && return 0
    else
        echo "under a sanitizer: no OpenCL platform used" > "$err"
    fi
    grep -q "no OpenCL platform\|has no OpenCL\|under a sanitizer" "$err" || {
        cat "$err" >&2
        die "opencl run failed"
    }
    echo "   (skipped: $(cat "$err"))"
    return 1
}

. "$(dirname "${BASH_SOURCE[0]}")/mpi_lib.bash"
MPI=0
if mpi_usable; then MPI=1; fi
