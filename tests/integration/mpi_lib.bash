# mpi_lib.bash — the one place the integration scripts decide whether they
# can launch MPI ranks; lib.sh sources it, and so do the scripts that run a
# test program instead of TESSERA (they cannot use lib.sh's TESSERA check).
# Not named *.sh: every *.sh here is registered as a test.
#   . "$(dirname "$0")/mpi_lib.bash"
# Gives mpi_usable, mpi NP CMD..., mpi_case and embedded_cases.

# mpi_usable: true when this build has MPI (TESS_HAVE_MPI=1) and mpirun is
# on PATH; then also exports OpenMPI's settings for containers and root
# (without overriding the caller's).
mpi_usable() {
    [ "${TESS_HAVE_MPI:-0}" = 1 ] && command -v mpirun > /dev/null 2>&1 || return 1
    export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}"
        export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
    fi
}

# mpi NP CMD...: CMD as NP ranks, oversubscribed, unbound.
mpi() { mpirun -np "$1" --oversubscribe --bind-to none "${@:2}"; }

# mpi_case NP FILTER CMD...: CMD as NP ranks (120 s at most), its output
# without the lines matching FILTER (the ranks beside rank 0 that report
# nothing); says so and succeeds when MPI cannot be used here.
mpi_case() {
    local np=$1 filter=$2
    shift 2
    if ! mpi_usable; then
        echo "== mpirun not available: multi-rank case skipped"
        return 0
    fi
    echo "== mpirun -np $np: $*"
    timeout 120 mpirun -np "$np" --oversubscribe --bind-to none "$@" | grep -v "$filter"
}

# embedded_cases PROG [LINES]: the test program PROG in one process with 2
# workers, then with 1, each followed by the last lines of its output (LINES
# with 2 workers, default 1; 1 line with 1).
embedded_cases() {
    echo "== embedded, 2 workers"
    "$1" --workers 2 | tail -n "${2:-1}"
    echo "== embedded, 1 worker"
    "$1" --workers 1 | tail -n 1
}
