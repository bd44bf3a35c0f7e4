/*
 * sched.h — the scheduler layer's private interface: the task queue and its
 * workers (queue.c), the control function and barriers (control.c), the
 * checkpoint cuts the queue makes at rest (cut.c), and work stealing between
 * ranks (steal.c).  Used by the layers above sched (ckpt, tick, tile) and by
 * src/runtime.c.  Private.
 */
#ifndef TESS_SRC_SCHED_SCHED_H
#define TESS_SRC_SCHED_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include "comm/comm.h"

/* Message types of the scheduler (see the block list in comm/comm.h). */
enum tess__sched_msg_type {
    TESS_MSG_RUN = 1,           /* rank 0 -> all: launch a kernel */
    TESS_MSG_DONE = 2,          /* rank -> 0: all tasks of a run finished */
    TESS_MSG_SHUTDOWN = 3,      /* rank 0 -> all: control returned */
    TESS_MSG_COUNT_REQ = 5,     /* rank 0 -> all: report write counters (request) */
    TESS_MSG_APPLIED = 6,       /* rank -> 0: writes applied since its DONE, counted */
    TESS_MSG_READY = 17,        /* rank -> 0: tables created, registry fingerprint */
    TESS_MSG_STEAL_QUERY = 64,  /* rank 0 -> busy rank: its queued work (request) */
    TESS_MSG_STEAL_TAKE = 65,   /* rank 0 -> victim: give a queued task to a thief (request) */
    TESS_MSG_MIG_DONE = 66,     /* thief -> rank 0: stolen task is in the thief's queue */
    TESS_MSG_STEAL_COVERED = 72 /* thief -> rank 0: stolen tasks finished, DONE follows */
};

/* The body of TESS_MSG_DONE: the run's sequence, the rank's write counters
 * when it went idle (a barrier may end on them alone: control.c), the
 * first error of the rank's tasks and its message (sent by queue.c, read
 * by control.c). */
typedef struct tess__done_msg {
    uint64_t seq;
    uint64_t writes_sent, writes_applied;
    int32_t error, pad;
    char msg[480];
} tess__done_msg;

/* The `locality` of a RUN whose instance i runs on the rank of global worker i. */
#define TESS__EVERY_WORKER_PLACEMENT (-2)

/* The scheduler's rank-wide state (ctx->sched, control.c), its own rather
 * than the context's; the fields marked ctl_mu are guarded by ctx->ctl_mu. */
typedef struct tess__sched_rank {
    _Atomic unsigned done_events; /* bumped by every DONE report (control.c) */
    double idle_spin_seconds;     /* watch for work this long before sleeping (queue.c) */
    int ready_ranks;              /* ctl_mu; rank 0: ranks that reported READY */
    int setup_mismatch;           /* ctl_mu; rank 0: a rank registered differently */
    int shutdown;                 /* ctl_mu; set on every rank when rank 0's control returned */
    int shutdown_rc;              /* ctl_mu */
    char kernel_error[480];       /* ctl_mu */
    /* the run whose DONE this rank sent while nothing of it runs (0: some
     * task runs): writes applied meanwhile are reported (control.c) */
    _Atomic uint64_t resting_seq;
    /* APPLIED messages this rank posted to rank 0 (control.c) */
    _Atomic uint64_t applied_reports_posted;
    /* rank 0's board of launches in node-shared memory, where this rank
     * sees it (board.c), else NULL */
    struct tess__run_board *run_board;
    /* statistics (tess_stats) */
    _Atomic uint64_t steals;
    _Atomic uint64_t barriers, barriers_asked;
    double wait_seconds;
} tess__sched_rank;
int tess__sched_create(tess_ctx *ctx);
void tess__sched_destroy(tess_ctx *ctx);
/* The scheduler's fields of st (steals, barriers, waiting). */
void tess__sched_stats(const tess_ctx *ctx, tess_stats *st);

/* ---- queue and workers (queue.c) ---- */
int tess__queue_create(tess_ctx *ctx);
void tess__queue_destroy(tess_ctx *ctx);
int tess__workers_start(tess_ctx *ctx);
void tess__workers_stop(tess_ctx *ctx);
/* Rank 0: send RUN for kernel index `kernel` to every rank. */
int tess__sched_launch(tess_ctx *ctx, uint64_t seq, int kernel, int instances, int locality,
                       const void *args, size_t len, const void *restored, size_t rlen);
/* Run a face's kernel on every worker and wait for it as one barrier, without
 * the barrier's "has waited" warnings (control.c). */
int tess__sched_run_job(tess_ctx *ctx, const char *kernel, const void *args, size_t len);
/* A short description of what this rank is still running (for barrier warnings). */
void tess__sched_describe_busy(tess_ctx *ctx, char *buf, size_t len);
/* Workers of this rank with nothing to do (all of them once the queue stops). */
int tess__queue_idle_workers(tess_ctx *ctx);

/* ---- handlers of the scheduler's messages (control.c, queue.c) ---- */
int tess__sched_handlers_init(tess_ctx *ctx);
/* Ask for the node-shared copies of the ranks' reports (before tess_main). */
int tess__sched_share_counts(tess_ctx *ctx);
/* ... and for rank 0's board of launches (board.c). */
int tess__board_request(tess_ctx *ctx);
/* A rank's DONE, also written into its node-shared line (queue.c, when it
 * carries no error and no stolen tasks ran). */
void tess__sched_publish_done(tess_ctx *ctx, const tess__done_msg *d);
void tess__sched_on_run(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);

/* ---- what the checkpoint layer plugs into the scheduler ---- */
/* The checkpoint layer sits above sched; it hands these in when checkpoints
 * are enabled, so the scheduler calls it without depending on it. */
typedef struct tess__sched_ckpt_hooks {
    /* rank 0, once the control function returned, before SHUTDOWN */
    void (*quiesce)(tess_ctx *ctx);
    /* tess_run: positions of `kernel`'s instances at a restored checkpoint
     * (*recs_out malloc'd, or NULL); 1 if there were any */
    int (*take_restored)(tess_ctx *ctx, const char *kernel, uint8_t **recs_out, size_t *len_out);
    /* rank 0, once every rank is ready, before the control function: an
     * error ends the job without running it */
    int (*start)(tess_ctx *ctx);
} tess__sched_ckpt_hooks;
void tess__sched_set_ckpt_hooks(tess_ctx *ctx, const tess__sched_ckpt_hooks *hooks);
const tess__sched_ckpt_hooks *tess__sched_ckpt_hooks_of(tess_ctx *ctx);

/* ---- checkpoint cuts (cut.c) ---- */
/* Make this rank's cut for `epoch` (the copy of its tables); `tasks`
 * describes the run in flight (cut.c's encoding). */
typedef void tess__cut_fn(tess_ctx *ctx, uint64_t epoch, const void *tasks, size_t tasks_len);
/* Ask for a cut of `epoch` once this rank is at rest: for sync (CpBarrier)
 * when all its tasks of run run_seq are done and flushed, otherwise
 * (CpPeriodic) when every worker is parked at a checkpoint point or idle.
 * `cut` is called on some thread of this rank, without the queue's lock. */
void tess__sched_request_cut(tess_ctx *ctx, uint64_t epoch, int sync, uint64_t run_seq,
                             tess__cut_fn *cut);

/* ---- work stealing (steal.c) ---- */
int tess__steal_create(tess_ctx *ctx);
int tess__steal_handlers_init(tess_ctx *ctx);
void tess__steal_destroy(tess_ctx *ctx);
/* Rank 0, from the barrier's wait loop (ctl_mu not held): start a steal if worth it. */
void tess__steal_balance(tess_ctx *ctx);
/* How long the barrier may sleep before the next balance is due: `most`,
 * or less when the forced-move test hook wants a move sooner. */
double tess__steal_sleep_seconds(const tess_ctx *ctx, double most);
/* Rank 0, ctl_mu held: a stolen task has not yet reached its new rank's queue. */
int tess__steal_pending(const tess_ctx *ctx);
/* Rank 0, ctl_mu held: partition moves started and not yet finished. */
int tess__steal_moves_in_flight(const tess_ctx *ctx);
/* After each kernel instance, which started at tess_now() `started`: throttle
 * and the rank's speed estimate. */
void tess__steal_after_task(tess_ctx *ctx, uint64_t size, double started);
/* After a worker's flush once its queue ran dry: throttle and the estimate. */
void tess__steal_after_flush(tess_ctx *ctx, double started);

/* What a rank's queue holds that another rank could take (queue.c). */
typedef struct tess__queue_load {
    uint64_t seq;             /* last run this rank received */
    int32_t queued;           /* not-started tasks that may be stolen */
    int32_t biggest_instance; /* the biggest of them, -1 if none */
    int32_t biggest_group;    /* the table group of its locality table */
    int32_t running;          /* tasks running now */
    uint64_t queued_size;     /* keys in their locality partitions */
    uint64_t biggest_size;
    double running_seconds; /* the running tasks' estimated time left, summed */
} tess__queue_load;
/* seconds_per_key (0 = unknown) estimates how long the running tasks still take. */
void tess__queue_load_of(tess_ctx *ctx, double seconds_per_key, tess__queue_load *out);
/* Remove the biggest stealable task of at most max_size keys and every
 * queued task on the same locality partition; *blob_out (malloc'd) encodes
 * them.  0 if none. */
int tess__queue_take(tess_ctx *ctx, uint64_t max_size, uint8_t **blob_out, size_t *len_out,
                     int *group_out, int *instance_out, int *tasks_out);
/* Queue tasks taken on another rank; returns this rank's run sequence. */
uint64_t tess__queue_add_stolen(tess_ctx *ctx, const uint8_t *blob, size_t len);

#endif
