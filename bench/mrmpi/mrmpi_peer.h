/*
 * mrmpi_peer.h — what the MR-MPI peers of `tessera bench mapreduce`
 * (mrmpi_pagerank.cpp, mrmpi_kmeans.cpp) share: starting MPI with this
 * rank's place, reading `--name VALUE` from the command line (the peers
 * are run only by the bench, which passes well-formed arguments), and the
 * line of times the bench reads.
 * Header-only: each peer is one source file.
 */
#ifndef TESS_BENCH_MRMPI_PEER_H
#define TESS_BENCH_MRMPI_PEER_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include <vector>

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

/* Rank 0 of a run that succeeded: "iteration_seconds S1 S2 ...". */
static inline void mrmpi_report(int rank, int rc, const std::vector<double> &secs)
{
    if (rank != 0 || rc != 0) return;
    printf("iteration_seconds");
    for (double x : secs) printf(" %.6f", x);
    printf("\n");
}

#endif
