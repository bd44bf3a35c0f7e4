/*
 * internal.h — the context object and what the modules of the library share.
 * Private: nothing here is part of the published API.
 *
 * Threads of a rank: the main thread (runs the control function on rank 0,
 * waits for shutdown elsewhere), W worker threads running kernel instances,
 * and in MPI mode one progress thread that owns every MPI call.  Each
 * runtime thread that may touch tables has a "slot": its write buffers and
 * its mailbox for replies to remote requests.
 *
 * This is the bottom layer (DESIGN §5: core < comm < table < sched < ckpt;
 * tick and tile beside ckpt; src/runtime.c wires them).  The context holds
 * every layer's state, most of it behind pointers whose types only their
 * own layer defines; core itself calls no function of a layer above it.
 */
#ifndef TESS_SRC_CORE_INTERNAL_H
#define TESS_SRC_CORE_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"

#define TESS_HIDDEN __attribute__((visibility("hidden")))

typedef struct tess__comm tess__comm;

/* A message handler: runs on the progress thread for a message from another
 * rank, on the sender's thread for one to its own rank (comm/comm.h). */
typedef void tess__msg_handler(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
/* Message types are small integers; each layer owns a block of them. */
#define TESS__MSG_TYPES 128
typedef struct tess__slot_buffers tess__slot_buffers;
typedef struct tess__task_queue tess__task_queue;
typedef struct tess__ckpt_rt tess__ckpt_rt;

/* ---- registry ---- */
typedef struct tess__named {
    char *name;
    void *fn;             /* kernel or partitioner */
    tess_accum_ops accum; /* accumulators */
} tess__named;

typedef struct tess__registry {
    tess__named *kernels, *accums, *partitioners;
    int nkernels, naccums, npartitioners;
} tess__registry;

/* ---- a thread's slot ---- */
typedef struct tess__slot {
    int index; /* 0..W-1 workers, W main thread */
    tess_ctx *ctx;
    tess__slot_buffers **bufs; /* per table, created lazily */
    int nbufs;
    /* mailbox for the reply to this slot's one outstanding request */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t req_id; /* id of the request awaiting a reply */
    int replied;
    int reply_status;
    void *reply; /* malloc'd payload, owned by the waiter */
    size_t reply_len;
    const struct tess__reply_sink *sink; /* where a fitting payload lands, or NULL */
} tess__slot;

/* ---- per-rank control state (rank 0 keeps the view of all ranks) ---- */
typedef struct tess__rank_view {
    uint64_t done_seq;                /* last run sequence this rank finished entirely */
    uint64_t done_sent, done_applied; /* its write counters in that DONE */
    uint64_t applied_reports;         /* its APPLIED messages handled here */
    int error;                        /* first kernel error reported by it */
    uint64_t fingerprint;             /* of its registrations, from READY */
} tess__rank_view;

/* A failure point armed by TESS_FAULT (core/fault.c). */
enum { TESS__FAULT_FAIL = 1, TESS__FAULT_STOP = 2, TESS__FAULT_EXIT = 3 };
typedef struct tess__fault_state {
    char point[16];
    int rank, action, armed;
} tess__fault_state;

struct tess_ctx {
    tess_config cfg;
    int rank, nranks;
    int workers; /* on this rank */
    int workers_total;
    int *worker_base; /* global id of each rank's first worker (nranks+1) */
    int mpi;
    int started; /* tess_main entered: configuration is frozen */
    char last_error[512];
    pthread_mutex_t error_mu;

    tess__registry reg;
    tess_table **tables;
    int ntables;

    tess__slot *slots; /* workers + 1 (main) */
    pthread_t *threads;
    tess__task_queue *queue;
    void *app;

    struct tess__tick_reg *tick;    /* tick-face applications (src/tick), or NULL */
    struct tess__tile_reg *tile;    /* tiles-face jobs (src/tile), or NULL */
    struct tess__steal *steal;      /* work stealing and the throttle (src/sched/steal.c) */
    struct tess__sched_rank *sched; /* the scheduler's own control state (src/sched/control.c) */
    struct tess__migrate *mig;      /* partition migration (src/table/migrate.c) */
    struct tess__table_rank *tabs;  /* the table layer's rank-wide state (src/table/table.c) */
    tess__ckpt_rt *ckpt;            /* checkpoint state (src/ckpt/snapshot.c), or NULL */

    tess__comm *comm;                   /* NULL in embedded mode */
    struct tess__share_req *share_reqs; /* node-shared memory asked for (src/comm/share.c) */
    int nshare_reqs;
    /* handler of each message type, registered by the layers (comm/message.c) */
    tess__msg_handler *handlers[TESS__MSG_TYPES];
    /* set while checkpoints are enabled: sees each table message before it
     * is applied (table/table_remote.c calls it, ckpt/snapshot.c sets it) */
    tess__msg_handler *table_intercept;
    struct tess__inbox *inboxes; /* one per local worker */

    /* control state shared by the layers, guarded by ctl_mu (the
     * scheduler's own is in ctx->sched, under the same lock) */
    pthread_mutex_t ctl_mu;
    pthread_cond_t ctl_cv;
    uint64_t run_seq;       /* rank 0: runs launched; others: runs received */
    uint64_t rest_seq;      /* rank 0: run_seq when the last barrier saw every task done */
    tess__rank_view *views; /* rank 0: per rank */
    int ckpt_active;        /* rank 0: checkpoint epochs in progress (no steals while > 0) */
    /* rank 0: while run_seq equals this, the write counters in the ranks'
     * DONE reports may be stale and a barrier asks for them
     * (sched/control.c): a steal was ordered in this run (its tasks write
     * after the thief's DONE, and its partitions move) or a replica
     * refresh came after the last run (ranks send ranges at rest) */
    uint64_t counts_stale_seq;

    /* message counting for barrier termination: writes to other ranks */
    _Atomic uint64_t writes_sent;
    _Atomic uint64_t writes_applied;
    /* called with the new count after writes were applied (set by sched,
     * called by the table layer through tess__count_applied) */
    void (*applied_hook)(tess_ctx *ctx, uint64_t applied);
    /* rank 0's control thread: a tess_run since the last tess_barrier that
     * succeeded (sched/control.c); tables are created and dropped at run
     * time only while it is 0 (table/table_runtime.c) */
    int run_open;
    /* set while checkpoints are enabled (ckpt/snapshot.c): before a table is
     * created or dropped at run time, wait until no epoch is being written,
     * or refuse (a negative status) while periodic checkpoints are on */
    int (*tables_change_hook)(tess_ctx *ctx, const char *what);
    /* node-shared copies of the ranks' reports, where the ranks of a node
     * share memory (sched/control.c): rank r's at node_counts[r], NULL off
     * this node or when nothing is shared; rank 0 reads them in a barrier
     * instead of waiting for the DONE and APPLIED messages */
    struct tess__node_counts **node_counts;
    /* threads of this rank blocked on a reply (tess__request): while any
     * is, the progress engine polls instead of sleeping, since a reply's
     * latency is then all the waiting thread's time */
    _Atomic int requests_waiting;
    /* workers of this rank idle at rest, and since when (tess_now(), in
     * microseconds) all of them are: the progress engine polls for the next
     * step's messages for a while then (mpi_engine.c) */
    _Atomic int workers_resting;
    _Atomic uint64_t all_resting_since_us;

    _Atomic int interrupted;
    int signals_blocked;     /* tess_init blocked SIGINT/SIGTERM for the waiter (signals.c) */
    tess__fault_state fault; /* TESS_FAULT (fault.c) */
    /* a kernel of the current run failed on this rank: the run's other
     * kernels that wait for each other (tick processes, tile controllers)
     * give up instead of waiting forever (sched/queue.c sets, a new run
     * clears) */
    _Atomic int run_failed;
};

/* ---- errors and logging (errors.c) ---- */
/* Record a detailed message as the context's last error; returns code.
 * A NULL ctx records nothing (a caller that only wants the code).  The
 * runtime's name for tess_set_error, which does exactly this. */
#define tess__fail(ctx, code, ...) tess_set_error((ctx), (code), __VA_ARGS__)
int tess__vfail(tess_ctx *ctx, int code, const char *fmt, va_list ap);
/* A copy of ctx's last error (empty if none), taken under its lock: a
 * kernel on another worker may be writing it (tess_set_error). */
void tess__last_error_copy(tess_ctx *ctx, char *buf, size_t len);
void tess__log(const tess_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Always printed: "tessera[rank R]: ..." on stderr. */
void tess__warn(const tess_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define TESS_RETURN_IF(ctx, cond, code, ...)                     \
    do {                                                         \
        if (cond) return tess__fail((ctx), (code), __VA_ARGS__); \
    } while (0)

/* Frees each of n blocks (a NULL one too, as free() does).  Through
 * TESS_FREE_ALL(a, b, ...), a destroy function names the blocks it owns in
 * one list rather than one free() a line. */
static inline void tess__free_each(void *const *blocks, size_t n)
{
    for (size_t i = 0; i < n; i++) free(blocks[i]);
}
#define TESS_FREE_ALL(...)                        \
    tess__free_each((void *const[]){__VA_ARGS__}, \
                    sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* Makes the byte buffer *buf (capacity *cap) hold at least `need` bytes,
 * doubling from *cap (from `first` when it is empty) so that appends cost
 * amortised O(1).  On TESS_ERR_NOMEM the buffer is left as it was. */
static inline int tess__grow_bytes(uint8_t **buf, size_t *cap, size_t need, size_t first)
{
    if (need <= *cap) return TESS_OK;
    size_t grown_cap = *cap ? *cap : first;
    while (grown_cap < need) grown_cap *= 2;
    uint8_t *grown = realloc(*buf, grown_cap);
    if (grown == NULL) return TESS_ERR_NOMEM;
    *buf = grown;
    *cap = grown_cap;
    return TESS_OK;
}

/* Makes room for one more item in an array of `n` items of `size` bytes
 * (capacity *cap), doubling from *cap (to `first` when it is empty), for
 * the append-one-at-a-time queues of the faces.  `items` is the address of
 * the array's pointer (a T **, passed untyped so that one helper serves
 * every item type; memcpy reads and writes it without breaking aliasing
 * rules).  On TESS_ERR_NOMEM the array is left as it was. */
static inline int tess__grow_items(void *items, int *cap, int n, size_t size, int first)
{
    if (n < *cap) return TESS_OK;
    void *old;
    memcpy(&old, items, sizeof old);
    int grown_cap = *cap ? 2 * *cap : first;
    void *grown = realloc(old, (size_t)grown_cap * size);
    if (grown == NULL) return TESS_ERR_NOMEM;
    memcpy(items, &grown, sizeof grown);
    *cap = grown_cap;
    return TESS_OK;
}

/* CLOCK_REALTIME deadline `seconds` from now, for pthread_cond_timedwait. */
struct timespec;
void tess__deadline_after(struct timespec *ts, double seconds);
/* A read-write lock that prefers `kind` (PTHREAD_RWLOCK_PREFER_*_NP). */
void tess__rwlock_init(pthread_rwlock_t *rw, int kind);

/* ---- config.c ---- */
int tess__default_workers(void);
int tess__launched_by_mpi(void);

/* ---- registry (registry.c) ---- */
int tess__registry_find(const tess__named *list, int n, const char *name);
void tess__registry_free(tess__registry *reg);

/* ---- slots ---- */
/* The slot of the calling thread in ctx: a worker's own, otherwise the main slot. */
tess__slot *tess__current_slot(tess_ctx *ctx);
/* TESS_OK on rank 0's control function; else TESS_ERR_MISUSE with "WHAT
 * outside the control function" or "WHAT called from a kernel" (the
 * functions only the control function may call). */
int tess__check_control(tess_ctx *ctx, const char *what);
/* TESS_OK where no kernel can be running: before tess_main, or in the
 * control function with no run launched since the last barrier; else
 * TESS_ERR_MISUSE naming `what` (a whole-table call that would race with
 * the kernels' writes). */
int tess__check_at_rest(tess_ctx *ctx, const char *what);
void tess__set_current_slot(tess__slot *slot);

/* ---- the context (context.c) ---- */
/* A context with cfg (defaults if NULL) and one rank; NULL without memory. */
tess_ctx *tess__ctx_alloc(const tess_config *cfg);
/* The slots of ctx->workers workers and the main thread. */
int tess__slots_create(tess_ctx *ctx);
/* Free what tess__ctx_alloc and core made (every layer already stopped). */
void tess__ctx_free(tess_ctx *ctx);

/* ---- signals (signals.c) ---- */
/* Block SIGINT/SIGTERM in the calling thread before any thread starts (all
 * inherit it); install the flag handler and start the waiter that takes
 * them; release the block when the last context ends. */
int tess__signals_block(void);
void tess__signals_install(int rank, int nranks);
void tess__signals_release(void);

/* Fault injection (fault.c): parse TESS_FAULT at tess_init; tess__fault()
 * is true once, on the armed rank, at the named point, where the caller
 * then fails as a real failure there would ("stop" and "exit" actions act
 * inside and return 0). */
int tess__fault_init(tess_ctx *ctx);
int tess__fault(tess_ctx *ctx, const char *point);

/* A kernel of this rank's current run failed (ctx->run_failed). */
static inline int tess__run_failed(tess_ctx *ctx) { return atomic_load(&ctx->run_failed); }
int tess__signal_pending(void);

/* ---- the --slow-worker throttle (throttle.c) ---- */
/* On the slowed rank, stretch the work that began at tess_now() `started`
 * (a kernel instance, a worker's flush, the handling of a batch of incoming
 * messages) to slow_factor x its length, so that the whole rank runs as if
 * on a slower machine.  Any thread; does nothing on other ranks. */
void tess__throttle(tess_ctx *ctx, double started);

/* s is, whole, a decimal count in [lo, hi]: 1 and *out set, else 0
 * (config.c; for environment knobs, which warn and keep their default). */
int tess__parse_count(const char *s, long lo, long hi, long *out);

/* Cores this process may run on (its affinity mask), at least 1 (config.c). */
int tess__usable_cores(void);
/* Cores this rank's threads have to themselves: its affinity mask when the
 * launcher bound it to fewer cores than the machine has (mpirun's default
 * for as many ranks as cores), else the usable cores shared out among the
 * job's ranks on this node (0 when oversubscribed) (config.c). */
int tess__rank_cores(void);
/* Is this rank's affinity mask its own: bound there by the launcher, or the
 * only rank of the job on its node?  (Other ranks beside it with the same
 * whole-machine mask would pin their threads to the same cores.) */
int tess__rank_owns_cores(void);
/* The k-th CPU (from 0) of this process's affinity mask, or -1. */
int tess__nth_usable_cpu(int k);

/* A rank's reports in node-shared memory (a cache line; sched/control.c). */
typedef struct tess__node_counts {
    _Atomic uint64_t applied;                 /* writes applied, as in APPLIED */
    _Atomic uint64_t done_seq;                /* the run of the last DONE written here */
    _Atomic uint64_t done_sent, done_applied; /* that DONE's counters */
    _Atomic uint64_t done_after;              /* messages posted to rank 0 before it, not
                                                 counting APPLIED reports */
    _Atomic uint64_t switches;                /* replica switches made (table_replica.c) */
    _Atomic uint32_t sleeping;                /* workers asleep on `bell` (board.c) */
    _Atomic uint32_t bell;                    /* a futex word: rung when they have work */
} tess__node_counts;

/* *slot = max(*slot, value), releasing what this thread did before: two
 * threads that applied writes may publish their counts in either order. */
static inline void tess__publish_max(_Atomic uint64_t *slot, uint64_t value)
{
    uint64_t cur = atomic_load_explicit(slot, memory_order_relaxed);
    while (cur < value && !atomic_compare_exchange_weak_explicit(
                              slot, &cur, value, memory_order_release, memory_order_relaxed)) {
    }
}

/* n write messages applied on this rank (the table layer's handlers):
 * counted for barriers, and passed on to the scheduler's hook. */
static inline void tess__count_applied(tess_ctx *ctx, uint64_t n)
{
    uint64_t applied = atomic_fetch_add(&ctx->writes_applied, n) + n;
    tess__node_counts *mine = ctx->node_counts ? ctx->node_counts[ctx->rank] : NULL;
    if (mine != NULL) tess__publish_max(&mine->applied, applied);
    if (ctx->applied_hook != NULL) ctx->applied_hook(ctx, applied);
}

/* Watch *counter for up to `seconds` (yielding the core between looks) while
 * it still equals `seen`: 1 if it changed.  What a thread does before it
 * sleeps on a condition variable, whose wake-up costs 10-30 us on a VM. */
static inline int tess__spin_until_changed(_Atomic unsigned *counter, unsigned seen, double seconds)
{
    double until = tess_now() + seconds;
    while (atomic_load(counter) == seen && tess_now() < until) sched_yield();
    return atomic_load(counter) != seen;
}

#endif
