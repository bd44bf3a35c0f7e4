/*
 * mrmpi_args.h — what the MR-MPI peers of `tessera bench mapreduce`
 * (mrmpi_pagerank.cpp, mrmpi_kmeans.cpp) share: starting MPI with this
 * rank's place, and reading `--name VALUE` from the command line (the peers
 * are run only by the bench, which passes well-formed arguments).
 * Header-only: each peer is one source file.
 */
#ifndef TESS_BENCH_MRMPI_ARGS_H
#define TESS_BENCH_MRMPI_ARGS_H

#include <mpi.h>
#include <string.h>

/* MPI_Init, then this rank and the number of ranks. */
static inline void mrmpi_start(int *argc, char ***argv, int *rank, int *nranks)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
}

/* The word after `name`, or dflt when name is not given. */
static inline const char *mrmpi_arg(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return dflt;
}

#endif
