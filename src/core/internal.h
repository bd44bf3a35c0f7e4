/*
 * internal.h — the context object and what the modules of the library share.
 * Private: nothing here is part of the published API.
 *
 * Threads of a rank: the main thread (runs the control function on rank 0,
 * waits for shutdown elsewhere), W worker threads running kernel instances,
 * and in MPI mode one progress thread that owns every MPI call.  Each
 * runtime thread that may touch tables has a "slot": its write buffers and
 * its mailbox for replies to remote requests.
 */
#ifndef TESS_SRC_CORE_INTERNAL_H
#define TESS_SRC_CORE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera/tessera.h"

#define TESS_HIDDEN __attribute__((visibility("hidden")))

typedef struct tess__comm tess__comm;
typedef struct tess__slot_buffers tess__slot_buffers;
typedef struct tess__task_queue tess__task_queue;
typedef struct tess__ckpt_rt tess__ckpt_rt;

/* ---- registry ---- */
typedef struct tess__named {
    char *name;
    void *fn;                 /* kernel or partitioner */
    tess_accum_ops accum;     /* accumulators */
} tess__named;

typedef struct tess__registry {
    tess__named *kernels, *accums, *partitioners;
    int nkernels, naccums, npartitioners;
} tess__registry;

/* ---- a thread's slot ---- */
typedef struct tess__slot {
    int index;                /* 0..W-1 workers, W main thread */
    tess_ctx *ctx;
    tess__slot_buffers **bufs;/* per table, created lazily */
    int nbufs;
    /* mailbox for the reply to this slot's one outstanding request */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t req_id;          /* id of the request awaiting a reply */
    int replied;
    int reply_status;
    void *reply;              /* malloc'd payload, owned by the waiter */
    size_t reply_len;
} tess__slot;

/* ---- per-rank control state (rank 0 keeps the view of all ranks) ---- */
typedef struct tess__rank_view {
    uint64_t done_seq;        /* last run sequence this rank finished entirely */
    int error;                /* first kernel error reported by it */
    uint64_t fingerprint;     /* of its registrations, from READY */
} tess__rank_view;

struct tess_ctx {
    tess_config cfg;
    int rank, nranks;
    int workers;              /* on this rank */
    int workers_total;
    int *worker_base;         /* global id of each rank's first worker (nranks+1) */
    int mpi;
    int started;              /* tess_main entered: configuration is frozen */
    char last_error[512];
    pthread_mutex_t error_mu;

    tess__registry reg;
    tess_table **tables;
    int ntables;

    tess__slot *slots;        /* workers + 1 (main) */
    pthread_t *threads;
    tess__task_queue *queue;
    void *app;

    struct tess__tick_reg *tick; /* tick-face applications (src/tick), or NULL */
    struct tess__steal *steal;   /* work stealing and the throttle (src/sched/steal.c) */
    struct tess__migrate *mig;   /* partition migration (src/table/migrate.c) */
    tess__ckpt_rt *ckpt;      /* checkpoint state (src/ckpt/snapshot.c), or NULL */

    tess__comm *comm;         /* NULL in embedded mode */
    struct tess__inbox *inboxes; /* one per local worker */

    /* control state, guarded by ctl_mu */
    pthread_mutex_t ctl_mu;
    pthread_cond_t ctl_cv;
    uint64_t run_seq;         /* rank 0: runs launched; others: runs received */
    tess__rank_view *views;   /* rank 0: per rank */
    int ready_ranks;          /* rank 0: ranks that reported READY */
    int setup_mismatch;       /* rank 0: a rank registered differently */
    int shutdown;             /* set on every rank when rank 0's control returned */
    int ckpt_active;          /* rank 0: checkpoint epochs in progress (no steals while > 0) */
    int shutdown_rc;
    char kernel_error[256];

    /* message counting for barrier termination: writes to other ranks */
    _Atomic uint64_t writes_sent;
    _Atomic uint64_t writes_applied;

    /* statistics */
    _Atomic uint64_t st_msgs_sent, st_bytes_sent, st_msgs_recv, st_bytes_recv, st_batches;
    _Atomic uint64_t st_updates_local, st_updates_remote;
    _Atomic uint64_t st_progress_cpu_ns;
    _Atomic uint64_t st_steals, st_mig_in, st_mig_out;
    double wait_seconds;

    _Atomic int interrupted;
};

/* ---- errors and logging (errors.c) ---- */
/* Record a detailed message as the context's last error; returns code. */
int tess__fail(tess_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tess__log(const tess_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Always printed: "tessera[rank R]: ..." on stderr. */
void tess__warn(const tess_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define TESS_RETURN_IF(ctx, cond, code, ...)                                                  \
    do {                                                                                       \
        if (cond) return tess__fail((ctx), (code), __VA_ARGS__);                               \
    } while (0)

/* CLOCK_REALTIME deadline `seconds` from now, for pthread_cond_timedwait. */
struct timespec;
void tess__deadline_after(struct timespec *ts, double seconds);

/* ---- tick face (src/tick/run.c) ---- */
void tess__tick_free(tess_ctx *ctx);

/* ---- config.c ---- */
int tess__default_workers(void);
int tess__launched_by_mpi(void);

/* ---- registry (registry.c) ---- */
int tess__registry_find(const tess__named *list, int n, const char *name);
void tess__registry_free(tess__registry *reg);

/* ---- slots ---- */
/* The slot of the calling thread in ctx: a worker's own, otherwise the main slot. */
tess__slot *tess__current_slot(tess_ctx *ctx);
void tess__set_current_slot(tess__slot *slot);
void tess__slot_init(tess__slot *s, tess_ctx *ctx, int index);
void tess__slot_destroy(tess__slot *s);

/* ---- signals (signals.c) ---- */
void tess__signals_install(void);
int tess__signal_pending(void);

/* ---- scheduler hooks (sched/) ---- */
/* The `locality` of a RUN whose instance i runs on the rank of global worker i. */
#define TESS__EVERY_WORKER_PLACEMENT (-2)
int tess__queue_create(tess_ctx *ctx);
void tess__queue_destroy(tess_ctx *ctx);
int tess__workers_start(tess_ctx *ctx);
void tess__workers_stop(tess_ctx *ctx);
/* A RUN message arrived on this rank. */
void tess__sched_on_run(tess_ctx *ctx, const void *payload, size_t len);
/* Rank 0: a rank reported all its tasks of run `seq` done. */
void tess__sched_on_done(tess_ctx *ctx, int src, const void *payload, size_t len);
void tess__sched_on_shutdown(tess_ctx *ctx, const void *payload, size_t len);
void tess__sched_on_abort(tess_ctx *ctx);
void tess__sched_on_ready(tess_ctx *ctx, int src, const void *payload, size_t len);
void tess__sched_on_count_req(tess_ctx *ctx, int src, const void *payload, size_t len);
/* Fingerprint of registered names and table shapes: equal on every rank. */
uint64_t tess__setup_fingerprint(const tess_ctx *ctx);
/* Flush every table buffer of a slot (end of a kernel instance, barrier). */
int tess__slot_flush_all(tess__slot *slot);
/* A short description of what this rank is still running (for barrier warnings). */
void tess__sched_describe_busy(tess_ctx *ctx, char *buf, size_t len);

/* ---- work stealing (sched/steal.c) and migration (table/migrate.c) ---- */
int tess__steal_create(tess_ctx *ctx);
void tess__steal_destroy(tess_ctx *ctx);
/* Rank 0, from the barrier's wait loop (ctl_mu not held): start a steal if worth it. */
void tess__steal_balance(tess_ctx *ctx);
/* Rank 0, ctl_mu held: a stolen task has not yet reached its new rank's queue. */
int tess__steal_pending(const tess_ctx *ctx);
/* The --slow-worker throttle: on the slowed rank, stretch the work that
 * began at tess_now() `started` (a kernel instance, a worker's flush, the
 * handling of a batch of incoming messages) to slow_factor x its length, so
 * that the whole rank runs as if on a slower machine.  Any thread. */
void tess__throttle(tess_ctx *ctx, double started);
/* After each kernel instance, which started at tess_now() `started`: throttle
 * and the rank's speed estimate. */
void tess__steal_after_task(tess_ctx *ctx, uint64_t size, double started);
/* After a worker's flush once its queue ran dry: throttle and the estimate. */
void tess__steal_after_flush(tess_ctx *ctx, double started);
void tess__steal_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
int tess__migrate_create(tess_ctx *ctx);
void tess__migrate_destroy(tess_ctx *ctx);
void tess__migrate_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p,
                              size_t len);
/* Old owner: start moving partition p of table group `group` to rank `to`;
 * `task` (the stolen tasks, steal.c's encoding) travels with the data. */
int tess__migrate_begin(tess_ctx *ctx, int group, int p, int to, const uint8_t *task,
                        size_t task_len);
/* Bytes of memory partition p of a table group holds here. */
uint64_t tess__migrate_group_bytes(tess_ctx *ctx, int group, int p);
/* What a rank's queue holds that another rank could take (queue.c). */
typedef struct tess__queue_load {
    uint64_t seq;             /* last run this rank received */
    int32_t queued;           /* not-started tasks that may be stolen */
    int32_t biggest_instance; /* the biggest of them, -1 if none */
    int32_t biggest_group;    /* the table group of its locality table */
    int32_t running;          /* tasks running now */
    uint64_t queued_size;     /* keys in their locality partitions */
    uint64_t biggest_size;
    double running_seconds;   /* the running tasks' estimated time left, summed */
} tess__queue_load;
/* seconds_per_key (0 = unknown) estimates how long the running tasks still take. */
void tess__queue_load_of(tess_ctx *ctx, double seconds_per_key, tess__queue_load *out);
/* Workers of this rank with nothing to do (all of them once the queue stops). */
int tess__queue_idle_workers(tess_ctx *ctx);
/* Remove the biggest stealable task of at most max_size keys and every
 * queued task on the same locality partition; *blob_out (malloc'd) encodes
 * them.  0 if none. */
int tess__queue_take(tess_ctx *ctx, uint64_t max_size, uint8_t **blob_out, size_t *len_out,
                     int *group_out, int *instance_out, int *tasks_out);
/* Queue tasks taken on another rank; returns this rank's run sequence. */
uint64_t tess__queue_add_stolen(tess_ctx *ctx, const uint8_t *blob, size_t len);
/* New owner: queue the stolen tasks that came with a partition, tell rank 0. */
void tess__steal_install_tasks(tess_ctx *ctx, int from, const uint8_t *task, size_t len);
/* A table message for this rank: held or passed on while partitions move
 * (migrate.c), else handled by tess__table_on_message. */
void tess__table_deliver(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);

/* ---- tables (table/) ---- */
void tess__tables_free(tess_ctx *ctx);
void tess__slot_buffers_free(tess__slot *slot);
/* Message handlers for table traffic from other ranks. */
void tess__table_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
/* The same without the checkpoint's interception (src/ckpt calls it). */
void tess__table_apply_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p,
                               size_t len);

/* ---- tables as checkpoint data (table/table_ckpt.c) ---- */
/* 1 for the messages that change a table: logged as channel state. */
int tess__table_msg_is_write(uint32_t type);
/* Encoded bytes of local partition p (malloc'd), taken under its lock. */
int tess__table_encode_partition(tess_table *t, int p, uint8_t **buf_out, size_t *len_out);
/* Put the entries of encoded bytes whose keys are stored on this rank. */
int tess__table_restore_encoded(tess_table *t, const uint8_t *buf, size_t len);
/* Apply, in order, the logged table messages whose keys are stored here.
 * The log is records of u32 type, u32 length, message bytes. */
int tess__table_replay_log(tess_ctx *ctx, const uint8_t *log, size_t len);
/* Empty every local partition of every table. */
void tess__tables_clear_local(tess_ctx *ctx);
/* What a checkpoint must match: table names, shapes and accumulators. */
uint64_t tess__tables_ckpt_fingerprint(const tess_ctx *ctx);
int tess__table_is_static(const tess_table *t);

/* ---- checkpoints (ckpt/snapshot.c) ---- */
/* A table message on a context with checkpoints: held, logged and applied. */
void tess__ckpt_table_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p,
                              size_t len);
/* Checkpoint protocol messages (markers, files, restore). */
void tess__ckpt_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
/* Rank 0, ctl_mu held: partition moves started and not yet finished. */
int tess__steal_moves_in_flight(const tess_ctx *ctx);
/* Stop taking checkpoints and let the one in progress finish. */
void tess__ckpt_quiesce(tess_ctx *ctx);
/* Wait for the writer threads and free the checkpoint state.  Accepts none. */
void tess__ckpt_free(tess_ctx *ctx);
/* Perform this rank's cut for `epoch` (called by the queue once its workers
 * are at rest).  `tasks` describes the run in flight (see queue.c). */
void tess__ckpt_cut(tess_ctx *ctx, uint64_t epoch, const void *tasks, size_t tasks_len);

#endif
