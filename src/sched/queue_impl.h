/*
 * queue_impl.h — the task queue's state, shared by the queue and its
 * workers (queue.c) and the checkpoint cuts made at rest (cut.c).  Private
 * to src/sched.
 */
#ifndef TESS_SRC_SCHED_QUEUE_IMPL_H
#define TESS_SRC_SCHED_QUEUE_IMPL_H

#include <pthread.h>
#include "sched/sched.h"

typedef struct shared_args {
    _Atomic int refs;
    size_t len;
    uint8_t data[];
} shared_args;

struct tess_task {
    tess_ctx *ctx;
    int kernel;
    int instance, instances;
    int worker; /* global id of the worker running it */
    uint64_t size;
    int locality; /* table index, or < 0 without a locality table */
    shared_args *args;
    const uint8_t *restored; /* saved position (in args' buffer), or NULL */
    uint32_t restored_len;
};

struct tess__task_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tess_task *tasks;       /* pending, sorted by size descending from `next` */
    _Atomic unsigned added; /* bumped whenever tasks are added or stop is set */
    int ntasks, next, cap;
    int running;
    int stop;
    uint64_t seq;               /* last run received */
    _Atomic uint64_t run_taken; /* the same, for a look without q->mu (board.c) */
    uint64_t reported_seq;
    int error; /* first kernel error since the last report */
    char error_msg[480];
    const char **busy; /* per worker: kernel name being run, or NULL */
    int *busy_instance;
    int *busy_locality;   /* per worker: locality table of the running task */
    uint64_t *busy_size;  /* per worker: size of the running task */
    double *busy_started; /* per worker: when it started (tess_now) */
    uint32_t stolen;      /* stolen tasks received since the last report */

    /* checkpoint cuts (cut.c) */
    uint64_t cut_want, cut_done; /* epochs asked for and cut */
    uint64_t cut_after_seq;      /* rank 0's latest run when the epoch started: its RUN first */
    int cut_sync;                /* CpBarrier: cut when idle; else when all at rest */
    int cutting;
    int at_rest;           /* workers parked at a point or idle without buffers */
    _Atomic int cut_async; /* a CpPeriodic cut is pending: kernels park at points */
    int *assigned;         /* instances of the latest run placed on this rank */
    int nassigned;
    int run_kernel;
    uint8_t **pos; /* per worker: position saved at its point */
    size_t *pos_len;
    int *pos_instance;                 /* per worker: instance parked at a point, or -1 */
    tess__cut_fn *cut;                 /* makes the cut: the checkpoint layer's */
    tess__sched_ckpt_hooks ckpt_hooks; /* set when checkpoints are enabled */
};

/* RUN: this header, the kernel's args, then restore_len bytes of restored
 * task records (u32 count, then u32 instance, u32 state, u32 len, bytes). */
typedef struct run_msg {
    uint64_t seq;
    int32_t kernel, instances, locality;
    uint32_t restore_len;
} run_msg;

enum { TASK_FINISHED = 0, TASK_AT_POSITION = 1 };

/* ---- launches on rank 0's node-shared board (board.c) ---- */
typedef struct tess__run_board tess__run_board;
/* Rank 0: post run r (body: args then restored records) on the board, before
 * its messages, and ring the bells beside it; 1 if every other rank is
 * beside it (none then needs the message to start). */
int tess__board_post(tess_ctx *ctx, const run_msg *r, const void *body, size_t blen);
/* An idle worker: take the board's run if due here; 1 if taken. */
int tess__board_take(tess_ctx *ctx);
/* Do this rank's workers watch rank 0's board and sleep on their bell (a
 * rank beside rank 0 on its node)? */
int tess__board_sleeps(tess_ctx *ctx);
/* The bell's count, read before the last look at the queue; then sleep
 * until it rings past it (or the board has a run). */
uint32_t tess__board_bell(tess_ctx *ctx);
void tess__board_sleep(tess_ctx *ctx, uint32_t seen);
/* Wake rank r's sleeping workers (a rank on this node beside rank 0). */
void tess__board_ring(tess_ctx *ctx, int r);
/* Wake this rank's workers, wherever they sleep (q->mu held). */
void tess__queue_wake(tess_ctx *ctx, tess__task_queue *q);

/* q->mu held: a CpPeriodic cut is asked for and not made yet. */
static inline int tess__queue_cut_pending_async(const tess__task_queue *q)
{
    return q->cut_want > q->cut_done && !q->cut_sync;
}

/* q->mu held (released while the cut copies): make the cut asked for if
 * this rank is ready for it. */
void tess__queue_try_cut(tess_ctx *ctx, tess__task_queue *q);
/* q->mu held, the caller's writes flushed: wait at rest for the cut. */
void tess__queue_park(tess_ctx *ctx, tess__task_queue *q);

#endif
