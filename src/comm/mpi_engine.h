/*
 * mpi_engine.h — what the progress engine offers the other MPI modules of
 * the message layer (mpi_share.c).  MPI is initialised MPI_THREAD_FUNNELED:
 * every MPI call is made on the progress thread, so another thread that
 * needs one asks that thread to make it.  Private to src/comm.
 */
#ifndef TESS_SRC_COMM_MPI_ENGINE_H
#define TESS_SRC_COMM_MPI_ENGINE_H

#include "comm.h"

typedef int tess__progress_fn(tess__comm *c, void *arg);

/* Run fn(c, arg) on the progress thread and return its result; the
 * calling thread waits.  Not from the progress thread itself. */
int tess__comm_call(tess_ctx *ctx, tess__progress_fn *fn, void *arg);

/* Progress thread: wait until every rank has come here (MPI_Ibarrier),
 * receiving and dispatching meanwhile, so that no rank waiting for a
 * message from this one is left hanging. */
void tess__comm_meet(tess__comm *c);

/* Progress thread: where mpi_share.c keeps its state, and its release,
 * called before MPI_Finalize on every rank. */
void **tess__comm_share_state(tess__comm *c);
void tess__comm_share_release(tess__comm *c);

#endif
