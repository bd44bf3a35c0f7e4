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

/* Where a rank meets the others: every rank must meet at the same place.
 * A rank that leaves (tess_finalize) while the others start (tess_main) is
 * a rank that failed on its own: the job must end, not wait forever. */
enum { TESS__PHASE_SETUP = 0, TESS__PHASE_RUN = 1, TESS__PHASE_END = 2 };

/* Progress thread: wait until every rank has come to a meet (a
 * non-blocking reduction), receiving and dispatching meanwhile, so that no
 * rank waiting for a message from this one is left hanging.  1 when every
 * rank came to `where` (TESS__PHASE_RUN or TESS__PHASE_END), 0 when some
 * came to the other one. */
int tess__comm_meet(tess__comm *c, int where);

/* End the job on every rank now (MPI_Abort with `code`); from the
 * progress thread only.  Does not return. */
void tess__comm_abort_now(tess_ctx *ctx, int code) __attribute__((noreturn));

/* The liveness watchdog (mpi_watch.c), driven by the progress thread. */
typedef struct tess__watch tess__watch;
int tess__watch_create(tess_ctx *ctx, tess__watch **out);
void tess__watch_turn(tess__watch *w);
void tess__watch_set_phase(tess__watch *w, int phase);
void tess__watch_note_wait(tess__watch *w, int where, double since);
void tess__watch_free(tess__watch *w);

/* Progress thread: where mpi_share.c keeps its state, and its release,
 * called before MPI_Finalize on every rank. */
void **tess__comm_share_state(tess__comm *c);
void tess__comm_share_release(tess__comm *c);

#endif
