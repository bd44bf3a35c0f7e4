# lib.sh — what the integration scripts share; source it after `set`:
#   . "$(dirname "$0")/lib.sh"
# Gives: TESS_SRC, REF/CMP (the PageRank reference and comparator), a
# temporary directory $tmp removed on exit, die/step, and MPI=1 when mpirun
# can be used (with OpenMPI's settings for root and containers), mpi NP CMD...
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

SANITIZED=0
[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] && SANITIZED=1

MPI=0
if [ "${TESS_HAVE_MPI:-0}" = 1 ] && command -v mpirun > /dev/null 2>&1; then
    MPI=1
    export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}"
        export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
    fi
fi
mpi() { mpirun -np "$1" --oversubscribe --bind-to none "${@:2}"; }
